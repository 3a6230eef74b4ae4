"""vLLM production-stack operator (`production-stack.vllm.ai`): VLLMRuntime.

Sources, vllm-project/production-stack at a6c01db (2026-08-05), `operator/`:
- `api/v1alpha1/vllmruntime_types.go` (`DeploymentConfig`), `api/v1alpha1/common.go`
  (`ResourceRequirements`): the GPU ask is `deploymentConfig.resources.gpu`, a string quantity
  ("1", "0.5"), of the resource `gpuType` (default `nvidia.com/gpu`); the pod's tolerations are
  `deploymentConfig.toleration` (singular), its node selection `deploymentConfig.nodeSelectorTerms`.
- `internal/controller/vllmruntime_controller.go` (`deploymentForVLLMRuntime`): the container `vllm`
  gets `resources.Requests[gpuType] = resources.Limits[gpuType] = resource.MustParse(gpu)`, so a
  fraction reaches the API server, which refuses it; `Tolerations: DeploymentConfig.Toleration`;
  `nodeSelectorTerms` become the required node affinity. With `sidecarConfig.enabled` a sidecar
  container (`sidecarConfig.name`) joins the pod with its own `resources.gpu`/`gpuType` (0 when
  unset).
The main container reads as a declared shape (`shapes.py`); the optional sidecar is added here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..catalog import GPU_RESOURCE
from ..podspecs import Container, PodSpec, as_mapping, as_str
from .context import Context
from .registry import register
from .shapes import PodBlock, WorkloadShape, pods_of_shape

GROUP = "production-stack.vllm.ai"
_DEPLOYMENT = "spec.deploymentConfig"
SHAPE = WorkloadShape(GROUP, "VLLMRuntime", (PodBlock(
    _DEPLOYMENT, form="container", container_name="vllm", gpu=f"{_DEPLOYMENT}.resources.gpu",
    gpu_resource=GPU_RESOURCE, gpu_resource_field=f"{_DEPLOYMENT}.resources.gpuType",
    tolerations=f"{_DEPLOYMENT}.toleration", node_selector_terms=f"{_DEPLOYMENT}.nodeSelectorTerms"),),
    declared_by="vllm-project/production-stack `operator/internal/controller/vllmruntime_controller.go`")


def _sidecar(deployment: Mapping[str, Any]) -> Container | None:
    sidecar = as_mapping(deployment.get("sidecarConfig"))
    if sidecar.get("enabled") is not True:
        return None
    resources = as_mapping(sidecar.get("resources"))
    resource = as_str(resources.get("gpuType")) or GPU_RESOURCE
    path = f"{_DEPLOYMENT}.sidecarConfig"
    amount = resources.get("gpu") or 0
    return Container(path, as_str(sidecar.get("name"), "sidecar"), {"resources": {"limits": {resource: amount}}},
                     written_at={("limits", resource): f"{path}.resources.gpu"})


@register(GROUP, "VLLMRuntime", gpus="`deploymentConfig.resources.gpu` (a quantity, as `gpuType`, default "
          "nvidia.com/gpu) on the container `vllm`; `sidecarConfig.resources.gpu` on an enabled sidecar",
          tolerations="`deploymentConfig.toleration`; `deploymentConfig.nodeSelectorTerms` as required node affinity",
          source="vllm-project/production-stack `operator/internal/controller/vllmruntime_controller.go`, "
                 "`operator/api/v1alpha1/vllmruntime_types.go`")
def vllm_runtime(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    pods = pods_of_shape(SHAPE, obj, f"VLLMRuntime '{name}'")
    sidecar = _sidecar(as_mapping(as_mapping(obj.get("spec")).get("deploymentConfig")))
    if sidecar is None:
        return pods
    return [replace(pod, containers=(*pod.containers, sidecar)) for pod in pods]
