"""BentoML's yatai-deployment (`serving.yatai.ai`): BentoDeployment.

Sources, bentoml/yatai-deployment at main (2024-03, 755faf2):
- `apis/serving/common/common.go`: `resources.limits` and `resources.requests` are ResourceItems
  `{cpu, memory, gpu, custom: {name: quantity}}`, for the deployment (`spec.resources`) and for each
  runner (`spec.runners[].resources`).
- `controllers/bentodeployment_controller.go` (`getResourcesConfig`): `limits.gpu` becomes a limit of
  `nvidia.com/gpu` (`commonconsts.KubeResourceGPUNvidia`, bentoml/yatai-common `consts/consts.go`);
  `requests.gpu` is ignored; every `custom` entry becomes a limit or request of that resource name,
  as written. The API server pod and each runner pod have one container, `main`, with them.
- `generatePodTemplateSpec`: a runner's pod takes `extraPodSpec` (tolerations, nodeSelector,
  affinity, extra `containers`) from its runner entry, replacing the deployment's, even when the
  runner sets none; the API server pod takes the deployment's. v1alpha3 spells it `extra_pod_spec`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalog import GPU_RESOURCE
from ..podspecs import (
    Container,
    PodSpec,
    as_mapping,
    as_str,
    containers_of_spec,
    iter_mappings,
    join,
    object_namespace,
    scheduling_fields,
)
from .context import Context
from .registry import register

MAIN = "main"
#: commonconsts.KubeResourceGPUNvidia (bentoml/yatai-common consts/consts.go) is the catalog's GPU_RESOURCE.


def _extra_pod_spec(owner: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], str]:
    for key in ("extraPodSpec", "extra_pod_spec"):
        if key in owner:
            return as_mapping(owner.get(key)), join(path, key)
    return {}, join(path, "extraPodSpec")


def _main_container(owner: Mapping[str, Any], path: str) -> Container:
    """`getResourcesConfig`: the `main` container's limits and requests from a ResourceItem pair."""
    resources_path = join(path, "resources")
    written = as_mapping(owner.get("resources"))
    resources: dict[str, dict[str, Any]] = {}
    written_at: dict[tuple[str, str], str] = {}
    for kind in ("limits", "requests"):
        item = as_mapping(written.get(kind))
        item_path = join(resources_path, kind)
        amounts: dict[str, Any] = {key: item[key] for key in ("cpu", "memory") if item.get(key)}
        if kind == "limits" and item.get("gpu"):
            amounts[GPU_RESOURCE] = item["gpu"]
            written_at[(kind, GPU_RESOURCE)] = join(item_path, "gpu")
        for name, amount in as_mapping(item.get("custom")).items():
            if isinstance(name, str):
                amounts[name] = amount
                written_at[(kind, name)] = join(join(item_path, "custom"), name)
        if amounts:
            resources[kind] = amounts
    return Container(path, MAIN, {"resources": resources}, resources_path=resources_path, written_at=written_at)


def _pod(owner: Mapping[str, Any], path: str, extra_owner: Mapping[str, Any], extra_owner_path: str,
         namespace: str, workload: str) -> PodSpec:
    extra, extra_path = _extra_pod_spec(extra_owner, extra_owner_path)
    fields = scheduling_fields(extra)
    containers = (_main_container(owner, path), *containers_of_spec({"containers": extra.get("containers")}, extra_path))
    return PodSpec(extra_path, fields, containers, namespace, workload)


@register("serving.yatai.ai", "BentoDeployment",
          gpus="`resources.limits.gpu` (as nvidia.com/gpu), `resources.{limits,requests}.custom`, for the API server "
          "(`spec`) and each of `spec.runners[]`; `extraPodSpec.containers`",
          tolerations="`spec.extraPodSpec` for the API server pod; each runner's own `extraPodSpec` (the "
          "deployment's does not reach runners)",
          source="bentoml/yatai-deployment `controllers/bentodeployment_controller.go` (`getResourcesConfig`, "
          "`generatePodTemplateSpec`)")
def bento_deployment(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    pods = [_pod(spec, "spec", spec, "spec", namespace, f"BentoDeployment '{name}' API server")]
    for index, runner in iter_mappings(spec.get("runners")):
        path = join("spec.runners", index)
        pods.append(_pod(runner, path, runner, path, namespace,
                         f"BentoDeployment '{name}' runner '{as_str(runner.get('name'), f'#{index}')}'"))
    return pods
