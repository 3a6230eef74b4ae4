"""NVIDIA Dynamo (`nvidia.com`): DynamoGraphDeployment and DynamoComponentDeployment.

Sources, ai-dynamo/dynamo at main (2026-08), `deploy/operator/`:
- `api/v1alpha1/dynamocomponentdeployment_types.go`, `api/v1alpha1/common.go`: in v1alpha1 a graph's
  `spec.services` maps a name to a component with `resources: {requests, limits}` whose `gpu` is a
  shorthand count (resource `gpuType`, default `nvidia.com/gpu`), and `extraPodSpec`: a PodSpec
  (tolerations, nodeSelector, affinity, sidecar containers) plus `mainContainer`.
- `internal/controller_common/resource.go` (`GetResourcesConfig`, `getGPUResourceName`): `limits.gpu`
  and `requests.gpu` become limits and requests of that resource on the main container, as written.
- `api/v1beta1/dynamocomponentdeployment_types.go`: in v1beta1 a component (`spec.components[]` of a
  graph, or a DCD's `spec`) has a `podTemplate` whose container `main` is the workload.
`multinode.nodeCount` repeats the same pod on several nodes; the pod spec is what matters here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalog import GPU_RESOURCE
from ..podspecs import Container, PodSpec, as_mapping, as_str, containers_of_spec, iter_mappings, join, object_namespace, pod_spec
from .context import Context
from .registry import register

MAIN = "main"
DEFAULT_GPU_TYPE = GPU_RESOURCE


def _resource_list(item: Mapping[str, Any]) -> dict[str, Any]:
    resources: dict[str, Any] = {key: item[key] for key in ("cpu", "memory") if item.get(key)}
    if item.get("gpu"):
        resources[as_str(item.get("gpuType")) or DEFAULT_GPU_TYPE] = item["gpu"]
    resources.update(as_mapping(item.get("custom")))
    return resources


def _v1alpha1_component(component: Mapping[str, Any], path: str, namespace: str, name: str) -> PodSpec:
    resources = as_mapping(component.get("resources"))
    written = {kind: _resource_list(as_mapping(resources.get(kind))) for kind in ("limits", "requests")
               if isinstance(resources.get(kind), Mapping)}
    extra = as_mapping(component.get("extraPodSpec"))
    main_override = as_mapping(extra.get("mainContainer"))
    override_resources = as_mapping(main_override.get("resources"))
    merged = {kind: {**written.get(kind, {}), **as_mapping(override_resources.get(kind))}
              for kind in ("limits", "requests") if kind in written or kind in override_resources}
    written_at = {(kind, as_str(as_mapping(resources.get(kind)).get("gpuType")) or DEFAULT_GPU_TYPE):
                  join(join(join(path, "resources"), kind), "gpu")
                  for kind in ("limits", "requests") if as_mapping(resources.get(kind)).get("gpu")}
    main = Container(path, MAIN, {**main_override, "resources": merged}, written_at=written_at)
    sidecars = containers_of_spec(extra, join(path, "extraPodSpec"))
    return PodSpec(join(path, "extraPodSpec"), extra, (main, *sidecars), namespace, f"Dynamo component '{name}'")


def _v1beta1_component(component: Mapping[str, Any], path: str, namespace: str, name: str) -> PodSpec:
    template_path = join(path, "podTemplate.spec")
    return pod_spec(as_mapping(component.get("podTemplate")).get("spec"), template_path, namespace,
                    f"Dynamo component '{name}'")


def _component(component: Mapping[str, Any], path: str, namespace: str, name: str) -> PodSpec:
    if "podTemplate" in component:
        return _v1beta1_component(component, path, namespace, name)
    return _v1alpha1_component(component, path, namespace, name)


@register("nvidia.com", "DynamoGraphDeployment")
def graph_deployment(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    pods = [_component(component, join(join("spec", "services"), name), namespace, str(name))
            for name, component in as_mapping(spec.get("services")).items() if isinstance(component, Mapping)]
    pods += [_component(component, join(join("spec", "components"), index), namespace,
                        as_str(component.get("name"), f"#{index}"))
             for index, component in iter_mappings(spec.get("components"))]
    return pods


@register("nvidia.com", "DynamoComponentDeployment")
def component_deployment(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    name = as_str(spec.get("name")) or as_str(spec.get("serviceName")) or as_str(as_mapping(obj.get("metadata")).get("name"))
    return [_component(spec, "spec", object_namespace(obj), name)]
