"""The built-in kinds.

- Workloads: each has its pod spec at a fixed place (Kubernetes API reference, `core/v1` Pod and
  PodTemplate, `apps/v1`, `batch/v1`). Reading that place, and only it, is exact and cheap, and a
  decoy `containers` list elsewhere in the object changes nothing.
- Namespaces: collected for the admission plugins AKS runs (PodTolerationRestriction and
  PodNodeSelector read a Namespace's annotations; `policies/admission.py`).
- Secrets and ConfigMaps: no controller creates pods from them, whatever their `data` or
  `stringData` holds, so nothing looks inside them (a Secret's contents must never reach a report).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from ..podspecs import PodSpec, as_mapping
from .context import NAMESPACES, Context, collects
from .registry import register, register_shape
from .shapes import PodBlock, WorkloadShape

#: Where each built-in kind keeps its pod spec: a shape each, as a user would declare it.
TEMPLATE_PATHS: dict[tuple[str, str], str] = {
    ("", "Pod"): "spec",
    ("", "PodTemplate"): "template.spec",
    ("", "ReplicationController"): "spec.template.spec",
    ("apps", "ReplicaSet"): "spec.template.spec",
    ("apps", "Deployment"): "spec.template.spec",
    ("apps", "StatefulSet"): "spec.template.spec",
    ("apps", "DaemonSet"): "spec.template.spec",
    ("batch", "Job"): "spec.template.spec",
    ("batch", "CronJob"): "spec.jobTemplate.spec.template.spec",
}

_SOURCE = "Kubernetes API reference (`core/v1`, `apps/v1`, `batch/v1`)"
_GPUS = "`resources` of `containers`, `initContainers`, `ephemeralContainers` of the pod template"
_TOLERATIONS = "the pod template's `tolerations`, `nodeSelector`, `affinity`, plus what AKS admission adds"
_SAME_PLACE: dict[tuple[str, str], list[str]] = {}
for (_group, _kind), _path in TEMPLATE_PATHS.items():
    _SAME_PLACE.setdefault((_group, _path), []).append(_kind)
for (_group, _path), (_first, *_rest) in _SAME_PLACE.items():
    register_shape(WorkloadShape(_group, _first, (PodBlock(_path, created="once" if _first == "Pod" else "perReplica"),),
                                 declared_by=_SOURCE),
                   *_rest, gpus=_GPUS if _path == "spec.template.spec" else f"{_GPUS} (`{_path}`)",
                   tolerations=_TOLERATIONS, source=_SOURCE, workload="")


@register("", "Secret", "ConfigMap", gpus="never (no controller creates pods from them)", tolerations="never",
          source="Kubernetes API reference (`core/v1` Secret, ConfigMap)")
def never_pods(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    """Secrets and ConfigMaps hold data, not workloads: a pod-shaped object in `stringData` or
    `data` is never created, and a Secret's contents must not appear in any report."""
    return []


@collects(NAMESPACES, "", "Namespace")
def _namespace(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield name, as_mapping(as_mapping(obj.get("metadata")).get("annotations"))
