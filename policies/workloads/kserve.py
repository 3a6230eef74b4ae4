"""KServe (`serving.kserve.io`): InferenceService, ServingRuntime, ClusterServingRuntime,
LLMInferenceService and LLMInferenceServiceConfig.

Sources, kserve/kserve at main (2026-08):
- `pkg/apis/serving/v1beta1/predictor.go`: a predictor is a PodSpec (inline: containers,
  tolerations, nodeSelector, affinity, ...) plus one framework or `model` spec, each a Container
  inline; `GetImplementations` takes them in the order of `_FRAMEWORKS`, and the implementation
  becomes the container named `kserve-container` (`constants.InferenceServiceContainerName`).
- `pkg/controller/v1beta1/inferenceservice/components/predictor.go` (`multiNodeProcess`,
  `computeRayNodeAndGPUs`) and `reconcilers/deployment/deployment_reconciler.go`
  (`addGPUResourceToDeployment`): with a `workerSpec`, the controller computes the head's and each
  worker's GPU count from tensorParallelSize x pipelineParallelSize and the GPU *requests* the user
  wrote, then writes that count to both limits and requests of `kserve-container` and
  `worker-container`. What the user wrote there is not what reaches the API server.
- `pkg/apis/serving/v1alpha1/llm_inference_service_types.go`: `template`, `worker`, `prefill` and
  `router.scheduler.template` are PodSpecs.
The ServingRuntime a predictor resolves to can add containers and tolerations; it is checked as an
object of its own, not merged here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..catalog import GPU_RESOURCE
from ..limits import is_whole
from ..podspecs import (
    UNKNOWN,
    Container,
    PodSpec,
    as_mapping,
    containers_of_spec,
    join,
    object_namespace,
    pod_spec,
)
from ..quantities import QuantityError, parse_quantity
from .context import Context
from .registry import register

KSERVE_CONTAINER = "kserve-container"
WORKER_CONTAINER = "worker-container"
#: PredictorSpec.GetImplementations order, then `model`.
_FRAMEWORKS = ("xgboost", "pytorch", "triton", "sklearn", "tensorflow", "onnx", "pmml", "lightgbm", "paddle",
               "huggingface", "model")
#: constants.DefaultGPUResourceTypeList: the resources the multi-node logic counts as GPUs.
_GPU_TYPES = (GPU_RESOURCE, "amd.com/gpu", "intel.com/gpu", "habana.ai/gaudi")


def _component(spec: Mapping[str, Any], path: str, namespace: str, workload: str,
               implementations: tuple[str, ...]) -> PodSpec:
    """A predictor, transformer or explainer: its PodSpec fields plus the implementation container."""
    containers: list[Container] = []
    for key in implementations:
        implementation = spec.get(key)
        if implementation is UNKNOWN or isinstance(implementation, Mapping):
            containers.append(Container(join(path, key), KSERVE_CONTAINER, implementation))
            break
    for container in containers_of_spec(spec, path):
        # With an implementation, a `containers` entry named kserve-container is merged into it.
        if containers and container.role == "app" and container.name == KSERVE_CONTAINER:
            continue
        containers.append(container)
    return PodSpec(path, spec, tuple(containers), namespace, workload)


def _gpu_request(container_spec: Any) -> tuple[str, int]:
    """`utils.GetGPUResourceQtyByType(..., "Request")`: the first GPU type in requests, rounded up
    as `Quantity.Value()` rounds."""
    requests = as_mapping(as_mapping(as_mapping(container_spec).get("resources")).get("requests"))
    for name, value in requests.items():
        if name in _GPU_TYPES:
            try:
                return name, math.ceil(parse_quantity(value))
            except QuantityError:
                return name, 0
    return "", 0


def _gpu_type(container_spec: Any) -> str:
    """`addGPUResourceToDeployment`: the first GPU type with a non-zero limit or request, else nvidia."""
    resources = as_mapping(as_mapping(container_spec).get("resources"))
    for gpu_type in _GPU_TYPES:
        for kind in ("limits", "requests"):
            value = as_mapping(resources.get(kind)).get(gpu_type)
            try:
                if value is not None and parse_quantity(value) != 0:
                    return gpu_type
            except QuantityError:
                continue
    return GPU_RESOURCE


def ray_gpus(total: int, head: int, worker: int) -> tuple[int, int]:
    """`computeRayNodeAndGPUs`: (head GPUs, GPUs per worker) for the default ray backend."""
    if worker > 0:
        nodes = math.ceil(Fraction(total, worker))
        new_head = total - worker * (nodes - 1)
        if head > 0:
            if math.ceil(Fraction(total, head)) == 1:
                nodes = 1
        else:
            head = new_head
        if nodes == 1:
            return total, 0
        return head, worker
    if head > 0:
        return head, 1
    return 1, 1


def _positive_int(value: Any, default: int = 1) -> int:
    if not is_whole(value) or value < 1:
        return default
    return int(value)


def _with_gpus(container: Container, gpus: int) -> Container:
    spec = as_mapping(container.spec) if container.spec is not UNKNOWN else {}
    resources = dict(as_mapping(spec.get("resources")))
    gpu_type = _gpu_type(spec)
    resources["limits"] = {**as_mapping(resources.get("limits")), gpu_type: gpus}
    resources["requests"] = {**as_mapping(resources.get("requests")), gpu_type: gpus}
    return Container(container.path, container.name, {**spec, "resources": resources}, container.role,
                     container.resources_path, limits_set_by_controller=True)


def _multi_node(head: PodSpec, worker_spec: Mapping[str, Any], path: str, namespace: str) -> list[PodSpec]:
    """The head and worker pods of a multi-node predictor, with the GPU counts the controller sets."""
    total = _positive_int(worker_spec.get("tensorParallelSize")) * _positive_int(worker_spec.get("pipelineParallelSize"))
    head_main = next((c for c in head.containers if c.name == KSERVE_CONTAINER), None)
    worker_containers = containers_of_spec(worker_spec, path)
    worker_main = next((c for c in worker_containers if c.role == "app"), None)
    head_gpus, worker_gpus = ray_gpus(total, _gpu_request(head_main.spec if head_main else {})[1],
                                      _gpu_request(worker_main.spec if worker_main else {})[1])
    head_containers = tuple(_with_gpus(c, head_gpus) if c is head_main else c for c in head.containers)
    if worker_main is None:
        worker_main = Container(path, WORKER_CONTAINER, {})
        worker_containers = (worker_main,)
    worker_containers = tuple(
        _with_gpus(Container(c.path, WORKER_CONTAINER, c.spec, c.role, c.resources_path), worker_gpus)
        if c is worker_main else c for c in worker_containers)
    return [
        PodSpec(head.path, head.spec, head_containers, namespace, "KServe multi-node head"),
        PodSpec(path, worker_spec, worker_containers, namespace, "KServe multi-node worker"),
    ]


@register("serving.kserve.io", "InferenceService",
          gpus=("`predictor`, `transformer`, `explainer`: the framework or `model` container (`kserve-container`), "
                "`containers`; with `workerSpec` the controller sets the head's and workers' GPU counts"),
          tolerations="each component's `tolerations`, `nodeSelector`, `affinity` (and `workerSpec`'s)",
          source="kserve/kserve `pkg/apis/serving/v1beta1/predictor.go`, "
                 "`pkg/controller/v1beta1/inferenceservice/components/predictor.go`")
def inference_service(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    pods: list[PodSpec] = []
    predictor = spec.get("predictor")
    if isinstance(predictor, Mapping):
        head = _component(predictor, "spec.predictor", namespace, "KServe predictor", _FRAMEWORKS)
        worker_spec = predictor.get("workerSpec")
        if isinstance(worker_spec, Mapping):
            pods.extend(_multi_node(head, worker_spec, "spec.predictor.workerSpec", namespace))
        else:
            pods.append(head)
    transformer = spec.get("transformer")
    if isinstance(transformer, Mapping):
        pods.append(_component(transformer, "spec.transformer", namespace, "KServe transformer", ()))
    explainer = spec.get("explainer")
    if isinstance(explainer, Mapping):
        pods.append(_component(explainer, "spec.explainer", namespace, "KServe explainer", ("art",)))
    return pods


@register("serving.kserve.io", "ServingRuntime", "ClusterServingRuntime",
          gpus="`spec.containers`, `spec.workerSpec.containers`", tolerations="`spec`, `spec.workerSpec`",
          source="kserve/kserve `pkg/apis/serving/v1alpha1/servingruntime_types.go`")
def serving_runtime(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    pods = [pod_spec(spec, "spec", namespace, "ServingRuntime pod template")]
    worker = spec.get("workerSpec")
    if isinstance(worker, Mapping):
        pods.append(pod_spec(worker, "spec.workerSpec", namespace, "ServingRuntime worker template"))
    return pods


_LLM_TEMPLATES = (("template",), ("worker",), ("prefill", "template"), ("prefill", "worker"),
                  ("router", "scheduler", "template"))


@register("serving.kserve.io", "LLMInferenceService", "LLMInferenceServiceConfig",
          gpus="`template`, `worker`, `prefill.template`, `prefill.worker`, `router.scheduler.template` (PodSpecs)",
          tolerations="each of those PodSpecs", source="kserve/kserve `pkg/apis/serving/v1alpha1/llm_inference_service_types.go`")
def llm_inference_service(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    pods = []
    for keys in _LLM_TEMPLATES:
        value: Any = spec
        for key in keys:
            value = as_mapping(value).get(key)
        if isinstance(value, Mapping) or value is UNKNOWN:
            pods.append(pod_spec(value, "spec." + ".".join(keys), namespace, f"LLMInferenceService {'.'.join(keys)}"))
    return pods
