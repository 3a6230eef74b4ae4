"""Kubeflow Trainer v2 (`trainer.kubeflow.org`): TrainJob, TrainingRuntime, ClusterTrainingRuntime.

Sources, kubeflow/trainer at master (2026-08):
- `pkg/apis/trainer/v1alpha1/trainjob_types.go`: `spec.runtimeRef` names the runtime (kind
  ClusterTrainingRuntime by default); `spec.trainer.resourcesPerNode`; pod changes per replicated
  job come as `spec.podTemplateOverrides[]` (`targetJobs[].name`, `spec`: tolerations, nodeSelector,
  affinity, ...; v2.1-v2.2) or, since commit 38d8243 (v2.3), as `spec.runtimePatches[]`
  (`trainingRuntimeSpec.template.spec.replicatedJobs[]`).
- `pkg/runtime/core/trainingruntime.go`: both are strategic-merge patches over the runtime's JobSet
  template (so a patch's `tolerations` list replaces the runtime's, its `nodeSelector` merges, and
  containers merge by name), and `resourcesPerNode` is merged into the container named `node`
  (`constants.Node`) of the trainer's replicated job.
A TrainJob's pods are the runtime's replicated jobs. When the runtime is among the objects checked
it is resolved; otherwise the trainer node is judged from the TrainJob alone, and the pod says so.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from ..podspecs import (
    Container,
    PodSpec,
    as_list,
    as_mapping,
    as_str,
    containers_of_spec,
    iter_mappings,
    object_namespace,
    pod_spec,
)
from .context import Context, collects, namespace_of
from .registry import register

#: (kind, namespace or "" for cluster-scoped, name) -> the runtime object.
RUNTIMES = "trainer.runtimes"

NODE = "node"
_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


def _replicated_jobs(runtime: Mapping[str, Any]) -> list[tuple[int, Mapping[str, Any]]]:
    return list(iter_mappings(as_mapping(as_mapping(as_mapping(runtime.get("spec")).get("template")).get("spec"))
                              .get("replicatedJobs")))


def _job_pod_spec(job: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(as_mapping(as_mapping(as_mapping(job.get("template")).get("spec")).get("template")).get("spec"))


def _is_trainer(job: Mapping[str, Any]) -> bool:
    labels = as_mapping(as_mapping(as_mapping(job.get("template")).get("metadata")).get("labels"))
    return labels.get(_ANCESTOR_LABEL) == "trainer" or job.get("name") == NODE


def _merge_containers(base: list[Any], patch: list[Any]) -> list[Any]:
    merged = [dict(as_mapping(c)) for c in base]
    for container in patch:
        container = as_mapping(container)
        target = next((c for c in merged if c.get("name") == container.get("name")), None)
        if target is None:
            merged.append(dict(container))
        else:
            target.update(container)
    return merged


def strategic_merge(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """The strategic-merge semantics of core/v1 PodSpec that matter here: nodeSelector merges,
    containers merge by name, everything else (tolerations included) is replaced."""
    merged = dict(base)
    for key, value in patch.items():
        if key == "nodeSelector":
            merged[key] = {**as_mapping(base.get(key)), **as_mapping(value)}
        elif key in ("containers", "initContainers"):
            merged[key] = _merge_containers(as_list(base.get(key)), as_list(value))
        else:
            merged[key] = value
    return merged


def _patches_for(train_job: Mapping[str, Any], job_name: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, pod spec patch) of every override or runtime patch aimed at one replicated job."""
    spec = as_mapping(train_job.get("spec"))
    patches = []
    for index, override in iter_mappings(spec.get("podTemplateOverrides")):
        if any(as_mapping(target).get("name") == job_name for target in as_list(override.get("targetJobs"))):
            patches.append((f"spec.podTemplateOverrides[{index}].spec", as_mapping(override.get("spec"))))
    for index, patch in iter_mappings(spec.get("runtimePatches")):
        jobs = as_mapping(as_mapping(as_mapping(patch.get("trainingRuntimeSpec")).get("template")).get("spec"))
        for job_index, job in iter_mappings(jobs.get("replicatedJobs")):
            if job.get("name") == job_name:
                patches.append((f"spec.runtimePatches[{index}].trainingRuntimeSpec.template.spec."
                                f"replicatedJobs[{job_index}].template.spec.template.spec", _job_pod_spec(job)))
    return patches


def _node_resources(base: Mapping[str, Any], per_node: Mapping[str, Any]) -> dict[str, Any]:
    return {kind: {**as_mapping(base.get(kind)), **as_mapping(per_node.get(kind))} for kind in ("limits", "requests")
            if base.get(kind) is not None or per_node.get(kind) is not None}


@collects(RUNTIMES, "trainer.kubeflow.org", "TrainingRuntime", "ClusterTrainingRuntime")
def _runtime(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    kind = obj["kind"]
    yield (kind, namespace_of(object_namespace(obj)) if kind == "TrainingRuntime" else "", name), obj


@register("trainer.kubeflow.org", "TrainJob",
          gpus="`trainer.resourcesPerNode`, merged into the `node` container of its runtime (when checked together)",
          tolerations="its runtime's replicated jobs, patched by `podTemplateOverrides` or `runtimePatches`",
          source="kubeflow/trainer `pkg/runtime/core/trainingruntime.go`, `pkg/apis/trainer/v1alpha1/trainjob_types.go`")
def train_job(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    runtime_ref = as_mapping(spec.get("runtimeRef"))
    kind = as_str(runtime_ref.get("kind"), "ClusterTrainingRuntime")
    runtime_name = as_str(runtime_ref.get("name"))
    scope = "" if kind == "ClusterTrainingRuntime" else namespace_of(namespace)
    runtime = context.table(RUNTIMES).get((kind, scope, runtime_name))
    jobs = _replicated_jobs(runtime) if runtime else [(0, {"name": NODE})]
    trainer = as_mapping(spec.get("trainer"))
    per_node = trainer.get("resourcesPerNode")
    unseen = "" if runtime else f" (its {kind} '{runtime_name}' was not among the objects checked)"
    pods = []
    for _, job in jobs:
        job_name = as_str(job.get("name"))
        pod = dict(_job_pod_spec(job))
        patches = list(_patches_for(obj, job_name))
        for _, patch in patches:
            pod = strategic_merge(pod, patch)
        # Containers are reported where the last override that touched them was written.
        patch_path = patches[-1][0] if patches else ""
        base_containers = containers_of_spec(pod, patch_path or "spec")
        containers: list[Container] = []
        is_trainer = _is_trainer(job)
        for container in base_containers:
            if is_trainer and container.role == "app" and container.name == NODE and isinstance(per_node, Mapping):
                spec_ = {**as_mapping(container.spec),
                         "resources": _node_resources(as_mapping(as_mapping(container.spec).get("resources")), per_node)}
                container = Container("spec.trainer", NODE, spec_, resources_path="spec.trainer.resourcesPerNode")
            containers.append(container)
        if is_trainer and isinstance(per_node, Mapping) and not any(c.name == NODE for c in containers):
            containers.append(Container("spec.trainer", NODE, {"resources": dict(per_node)},
                                        resources_path="spec.trainer.resourcesPerNode"))
        fix_path = patch_path or ("spec.runtimePatches" if "runtimePatches" in spec or "podTemplateOverrides" not in spec
                                  else "spec.podTemplateOverrides")
        pods.append(PodSpec(fix_path, pod, tuple(containers), namespace, f"TrainJob replicated job '{job_name}'{unseen}"))
    return pods


@register("trainer.kubeflow.org", "TrainingRuntime", "ClusterTrainingRuntime",
          gpus="each replicated job's pod template", tolerations="each replicated job's pod template",
          source="kubeflow/trainer `pkg/apis/trainer/v1alpha1/trainingruntime_types.go`")
def training_runtime(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    namespace = object_namespace(obj)
    return [pod_spec(_job_pod_spec(job), f"spec.template.spec.replicatedJobs[{index}].template.spec.template.spec",
                     namespace, f"{obj.get('kind')} replicated job '{as_str(job.get('name'))}'")
            for index, job in _replicated_jobs(obj)]
