"""Slinky slurm-operator (`slinky.slurm.net`): NodeSet.

Sources, SlinkyProject/slurm-operator at f2ed3fc (2026-08-20):
- `api/v1beta1/nodeset_types.go` (`NodeSetSpec`): the Slurm worker container is `spec.slurmd` (a
  Container: its `resources` carry the GPUs), the log container `spec.logfile`, and `spec.template`
  a pod template (`metadata`, `spec`) merged into the pod.
- `internal/builder/workerbuilder/worker_app.go` (`BuildWorkerPodTemplate`, `slurmdContainer`): the
  pod's containers are `slurmd` (from `spec.slurmd`) plus the template's; `logfile` is an init
  container; tolerations are `slurmtaints.TolerationWorkerNode` merged with the template's, and
  nodeSelector and affinity are the template's.
- `pkg/taints/taints.go`: `TolerationWorkerNode` is `nodeset.slinky.slurm.net/worker` (Equal,
  NoExecute), Slinky's own taint, which is not a GPU taint.
So the only `containers` list the generic search would see (the template's) has no GPU: the GPU is
in `spec.slurmd`. The shape below reads it; a NodeSet creates one pod per replica (or per node in
DaemonSet mode).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..podspecs import PodSpec, Toleration, as_mapping, as_str
from .context import Context
from .registry import register
from .shapes import PodBlock, WorkloadShape, pods_of_shape

GROUP = "slinky.slurm.net"
SHAPE = WorkloadShape(GROUP, "NodeSet", (
    PodBlock("spec.slurmd", form="container", container_name="slurmd", pod_spec="spec.template.spec"),),
    declared_by="SlinkyProject/slurm-operator `internal/builder/workerbuilder/worker_app.go`")
WORKER_TOLERATION = Toleration({"key": "nodeset.slinky.slurm.net/worker", "operator": "Equal", "effect": "NoExecute"},
                               "added by the Slinky slurm-operator (TolerationWorkerNode)")


@register(GROUP, "NodeSet", gpus="`spec.slurmd.resources` on the container `slurmd`, plus `spec.template.spec`'s "
          "containers", tolerations="`spec.template.spec` (`tolerations`, `nodeSelector`, `affinity`), plus Slinky's "
          "own worker toleration", source="SlinkyProject/slurm-operator `internal/builder/workerbuilder/worker_app.go`, "
          "`api/v1beta1/nodeset_types.go`")
def node_set(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return [PodSpec(pod.path, pod.spec, pod.containers, pod.namespace, pod.workload, (WORKER_TOLERATION,))
            for pod in pods_of_shape(SHAPE, obj, f"Slinky NodeSet '{name}' slurmd pods")]
