"""NVIDIA NIM operator (`apps.nvidia.com`): NIMService and NIMPipeline.

Sources, NVIDIA/k8s-nim-operator at f63f74d (2026-08-19):
- `api/apps/v1alpha1/nimservice_types.go` (`NIMServiceSpec`): the GPU ask is `spec.resources`, a
  ResourceRequirements the operator puts on the NIM container (`GetResources`), named
  `<name>-ctr` (`GetContainerName`); the pod's `tolerations`, `nodeSelector` and `affinity` are the
  spec's own (`GetTolerations`, `GetNodeSelector`, `GetAffinity`), nothing added. `initContainers`
  and `sidecarContainers` join the pod. `multiNode` runs a LeaderWorkerSet whose leader and workers
  get the same resources, tolerations and node selection.
- `api/apps/v1alpha1/dra_types.go`, `internal/shared/resourceclaims.go`: `draResources[]` names a
  ResourceClaim (`resourceClaimName`), a ResourceClaimTemplate (`resourceClaimTemplateName`) or
  asks the operator to create a template (`claimCreationSpec.devices[]`, `deviceClassName` default
  `gpu.nvidia.com`); each becomes one of the pod's `resourceClaims`.
- `internal/controller/platform/standalone/nimservice.go` (`addGPUResources`): with no DRA
  resources and no `nvidia.com/gpu` in `spec.resources`, the operator assigns `nvidia.com/gpu`
  itself (the NIMCache profile's tensor parallelism, or `multiNode.parallelism.tensor`), but only for
  an optimized NIM whose profile is cached: the rules cannot see that, and say so.
- `api/apps/v1alpha1/nimpipeline_types.go`, `internal/controller/nimpipeline_controller.go`
  (`reconcileNIMPipeline`: `enabled := service.Enabled != nil && *service.Enabled`): a NIMPipeline's
  `spec.services[]` each run a NIMService from `spec` only when `enabled: true`; a service that
  leaves `enabled` out (the CRD has no default) runs nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from ..catalog import GPU_RESOURCE
from ..podspecs import Container, PodSpec, as_list, as_mapping, as_str, iter_mappings, join, object_namespace
from .context import Context, collects, scoped_name
from .dra import CLAIM_TEMPLATES, DeviceRequest
from .mentions import names_gpu
from .registry import register

GROUP = "apps.nvidia.com"
#: `DRADeviceSpec.DeviceClassName`'s `+kubebuilder:default=gpu.nvidia.com`.
DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"


def _generated_template(service: str, index: int) -> str:
    """The name this module gives the template the operator creates from `claimCreationSpec` (the
    operator's own name has a random suffix: `generateUniqueDRAResourceName`)."""
    return f"{service}-draresources-{index}-generated"


def _claim_creation_requests(dra_resource: Mapping[str, Any]) -> tuple[DeviceRequest, ...]:
    devices = as_list(as_mapping(dra_resource.get("claimCreationSpec")).get("devices"))
    return tuple(DeviceRequest(as_str(as_mapping(device).get("name")),
                               (as_str(as_mapping(device).get("deviceClassName")) or DEFAULT_DEVICE_CLASS,))
                 for device in devices)


def _services(obj: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """(name, path of its spec, spec) of each NIMService the object runs."""
    if obj.get("kind") == "NIMService":
        yield as_str(as_mapping(obj.get("metadata")).get("name")), "spec", as_mapping(obj.get("spec"))
        return
    for index, service in iter_mappings(as_mapping(obj.get("spec")).get("services")):
        if service.get("enabled") is not True:
            continue
        yield (as_str(service.get("name"), f"#{index}"), join(join("spec.services", index), "spec"),
               as_mapping(service.get("spec")))


@collects(CLAIM_TEMPLATES, GROUP, "NIMService", "NIMPipeline")
def _created_templates(obj: Mapping[str, Any], _: str) -> Iterator[tuple[Hashable, Any]]:
    """The ResourceClaimTemplates the operator creates from `claimCreationSpec`: the pods' claims
    resolve to them as to any template checked together."""
    for service, _path, spec in _services(obj):
        for index, dra_resource in iter_mappings(spec.get("draResources")):
            if isinstance(dra_resource.get("claimCreationSpec"), Mapping):
                yield scoped_name(obj, _generated_template(service, index)), _claim_creation_requests(dra_resource)


def _resource_claims(service: str, spec: Mapping[str, Any]) -> list[dict[str, str]]:
    claims = []
    for index, dra_resource in iter_mappings(spec.get("draResources")):
        name = f"draresources-{index}"
        if as_str(dra_resource.get("resourceClaimName")):
            claims.append({"name": name, "resourceClaimName": as_str(dra_resource.get("resourceClaimName"))})
        elif as_str(dra_resource.get("resourceClaimTemplateName")):
            claims.append({"name": name,
                           "resourceClaimTemplateName": as_str(dra_resource.get("resourceClaimTemplateName"))})
        elif isinstance(dra_resource.get("claimCreationSpec"), Mapping):
            claims.append({"name": name, "resourceClaimTemplateName": _generated_template(service, index)})
    return claims


def _extra_containers(spec: Mapping[str, Any], path: str) -> list[Container]:
    """`initContainers` and `sidecarContainers` (`NIMContainerSpec`: name, image, resources, ...)."""
    return [Container(join(join(path, key), index), as_str(container.get("name"), f"#{index}"), container, role)
            for key, role in (("initContainers", "init"), ("sidecarContainers", "app"))
            for index, container in iter_mappings(spec.get(key))]


def service_pod(service: str, path: str, spec: Mapping[str, Any], namespace: str, workload: str) -> PodSpec:
    resources = as_mapping(spec.get("resources"))
    main = Container(path, f"{service}-ctr", {"resources": resources})
    pod: dict[str, Any] = {key: spec[key] for key in ("tolerations", "nodeSelector", "affinity")
                           if spec.get(key) is not None}
    claims = _resource_claims(service, spec)
    if claims:
        pod["resourceClaims"] = claims
    notes: tuple[str, ...] = ()
    written = {*as_mapping(resources.get("limits")), *as_mapping(resources.get("requests"))}
    if not claims and not any(isinstance(name, str) and names_gpu(name) for name in written):
        notes = (f"{join(path, 'resources')} names no {GPU_RESOURCE}: the NIM operator assigns it itself for an "
                 "optimized NIM whose NIMCache profile is cached (its tensor parallelism, or multiNode.parallelism."
                 "tensor), which the rules cannot see. Write resources.limits and the GPU tolerations to have them "
                 "judged",)
    if spec.get("multiNode") is not None:
        workload += " (LeaderWorkerSet leader and workers)"
    return PodSpec(path, pod, (main, *_extra_containers(spec, path)), namespace, workload, notes=notes)


_GPUS = "`spec.resources` on the NIM container `<name>-ctr`; `spec.draResources` as the pod's resource claims"
_TOLERATIONS = "`spec.tolerations`, `spec.nodeSelector`, `spec.affinity` (leader and workers alike when `multiNode`)"
_SOURCE = ("NVIDIA/k8s-nim-operator `api/apps/v1alpha1/nimservice_types.go`, `internal/shared/resourceclaims.go`, "
           "`internal/controller/platform/standalone/nimservice.go`")


@register(GROUP, "NIMService", gpus=_GPUS, tolerations=_TOLERATIONS, source=_SOURCE)
def nim_service(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return [service_pod(name, path, spec, object_namespace(obj), f"NIMService '{name}'")
            for name, path, spec in _services(obj)]


@register(GROUP, "NIMPipeline", gpus=f"each `spec.services[].spec` with `enabled: true` as a NIMService's: {_GPUS}",
          tolerations=f"each service's {_TOLERATIONS}",
          source="NVIDIA/k8s-nim-operator `api/apps/v1alpha1/nimpipeline_types.go`, "
                 "`internal/controller/nimpipeline_controller.go`")
def nim_pipeline(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return [service_pod(name, path, spec, object_namespace(obj), f"NIMPipeline service '{name}'")
            for name, path, spec in _services(obj)]


@register(GROUP, "NIMCache", gpus="none: its caching Job downloads the model (`spec.resources` is cpu and memory)",
          tolerations="`spec.tolerations`, `spec.nodeSelector`",
          source="NVIDIA/k8s-nim-operator `api/apps/v1alpha1/nimcache_types.go`, `internal/controller/nimcache_controller.go`")
def nim_cache(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    """The caching Job's pod: no GPU, so no GPU verdict, but read where the operator reads it (a
    `nodeSelector` of GPU feature-discovery labels is not a GPU ask)."""
    spec = as_mapping(obj.get("spec"))
    pod = {key: spec[key] for key in ("tolerations", "nodeSelector") if spec.get(key) is not None}
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return [PodSpec("spec", pod, (Container("spec", "nim-cache", {}),), object_namespace(obj), f"NIMCache '{name}' job")]
