"""KAITO (`kaito.sh`): Workspace and InferenceSet.

KAITO provisions GPU nodes for a workspace and builds its pods itself, so a Workspace is not flagged
for what KAITO adds. Sources, kaito-project/kaito at main (2026-08):
- `api/v1beta1/workspace_types.go`: a Workspace's `resource` (instanceType, labelSelector),
  `inference` (`preset` or a pod `template`) and `tuning` sit at the top level, not under `spec`;
  an InferenceSet's workspace template is `spec.template`.
- `pkg/workspace/inference/preset_inferences.go` (`defaultTolerations`): inference pods tolerate
  `nvidia.com/gpu` (Exists, NoSchedule), `sku=gpu` (NoSchedule), on Azure the Spot taint
  `kubernetes.azure.com/scalesetpriority=spot`, and for a MIG partition `nvidia.com/mig-<profile>`;
  `pkg/workspace/manifests/manifests.go` appends the same tolerations to a custom `template`.
- `pkg/workspace/tuning/preset_tuning.go` (`defaultTolerations`): tuning pods tolerate the key `gpu`
  (Equal, no value), `sku=gpu` and, on Azure, the Spot taint.
KAITO computes the GPU count of preset pods from the instance type and sets their limits itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalog import GPU_RESOURCE, MIG_RESOURCE_PREFIX, gpu_sku
from ..podspecs import Container, PodSpec, Toleration, as_mapping, as_str, containers_of_spec, join, object_namespace
from .context import Context
from .registry import register

_SOURCE = "added by KAITO"
_SPOT = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
INFERENCE_TOLERATIONS = (
    {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
    {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    _SPOT,
)
TUNING_TOLERATIONS = (
    {"key": "gpu", "operator": "Equal", "effect": "NoSchedule"},
    {"key": "sku", "value": "gpu", "effect": "NoSchedule"},
    _SPOT,
)


def _gpus(resource: Mapping[str, Any]) -> int:
    sku = gpu_sku(as_str(resource.get("instanceType")))
    return sku.gpus if sku else 1


def _selector_affinity(resource: Mapping[str, Any]) -> dict[str, Any]:
    labels = as_mapping(as_mapping(resource.get("labelSelector")).get("matchLabels"))
    expressions = [{"key": key, "operator": "In", "values": [value]} for key, value in labels.items()
                   if isinstance(key, str) and isinstance(value, str)]
    if not expressions:
        return {}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}}


def _tolerations(base: tuple[Mapping[str, Any], ...], partition: Mapping[str, Any]) -> tuple[Toleration, ...]:
    added = list(base)
    profile = as_str(partition.get("profile"))
    if partition.get("mode") == "MIG" and profile:
        added.append({"key": f"{MIG_RESOURCE_PREFIX}{profile}", "operator": "Exists", "effect": "NoSchedule"})
    return tuple(Toleration(t, _SOURCE) for t in added)


def _workspace_pods(workspace: Mapping[str, Any], path: str, namespace: str, name: str) -> list[PodSpec]:
    resource = as_mapping(workspace.get("resource"))
    partition = as_mapping(resource.get("partition"))
    pod_fields = _selector_affinity(resource)
    preset_container = Container(join(path, "resource"), name or "workspace",
                                 {"resources": {"limits": {GPU_RESOURCE: _gpus(resource)},
                                                "requests": {GPU_RESOURCE: _gpus(resource)}}},
                                 limits_set_by_controller=True)
    pods = []
    inference = as_mapping(workspace.get("inference"))
    template = as_mapping(as_mapping(inference.get("template")).get("spec"))
    if template:
        template_path = join(path, "inference.template.spec")
        pods.append(PodSpec(template_path, {**pod_fields, **template}, containers_of_spec(template, template_path),
                            namespace, "KAITO inference template", _tolerations(INFERENCE_TOLERATIONS, partition),
                            own_nodes="KAITO"))
    elif inference:
        pods.append(PodSpec(join(path, "inference"), pod_fields, (preset_container,), namespace,
                            "KAITO inference preset", _tolerations(INFERENCE_TOLERATIONS, partition), own_nodes="KAITO"))
    if workspace.get("tuning"):
        pods.append(PodSpec(join(path, "tuning"), pod_fields, (preset_container,), namespace, "KAITO tuning job",
                            _tolerations(TUNING_TOLERATIONS, {}), own_nodes="KAITO"))
    return pods


@register("kaito.sh", "Workspace")
def workspace(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return _workspace_pods(obj, "", object_namespace(obj), name)


@register("kaito.sh", "InferenceSet")
def inference_set(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    template = as_mapping(as_mapping(obj.get("spec")).get("template"))
    return _workspace_pods(template, "spec.template", object_namespace(obj), name)
