"""NVIDIA Run:ai (`run.ai`): TrainingWorkload, InferenceWorkload, InteractiveWorkload,
DistributedWorkload.

Run:ai's controllers are closed source, so this adapter follows its documentation (Run:ai "GPU
fractions" and the `runai ... submit` flags `--gpu-devices-request`, `--gpu-portion-request`,
`--toleration`, read 2026-11) and decides the rest, as `docs/workloads.md` says:
- `spec.gpu` (a string, or Run:ai's `{value: ...}` wrapper) of 1 or more is whole GPUs: the pod asks
  for that many `nvidia.com/gpu`, so the whole-number rule judges it ("1.5" is refused).
- A `gpu` between 0 and 1 ("0.5") is a Run:ai GPU fraction: Run:ai's scheduler shares the device and
  marks the pod with the annotation `gpu-fraction` (KAI Scheduler `pkg/common/constants`,
  `GpuFraction`), not with an extended resource. It is a GPU pod (a `gpuMarkers` annotation), so it
  must tolerate the GPU taint, and its amount is never judged as a whole GPU.
- `spec.gpuMemory` ("4G"; `runai submit --gpu-memory`) is a GPU share by memory: Run:ai marks the
  pod with the annotation `gpu-memory` (KAI Scheduler `GpuMemory`), another `gpuMarkers`
  annotation, so the pod must tolerate the GPU taint as well.
- The pod's tolerations and nodeSelector are the workload's `spec.tolerations` and
  `spec.nodeSelector` (a list and a map, or Run:ai's `{items: {<name>: {value: ...}}}` and
  `{value: ...}` wrappers). Tolerations a Run:ai administrator's policy adds by default are not among
  the objects checked; write the toleration on the workload.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ..catalog import GPU_RESOURCE
from ..podspecs import Container, PodSpec, as_mapping, as_str, join, object_namespace
from ..quantities import QuantityError, parse_quantity
from .context import Context
from .registry import register

GROUP = "run.ai"
#: The pod annotations Run:ai and KAI Scheduler read a GPU share from (`gpuMarkers` defaults).
FRACTION_ANNOTATION = "gpu-fraction"
MEMORY_ANNOTATION = "gpu-memory"


def _value(field: Any) -> tuple[Any, str]:
    """A Run:ai field's value and the key under which it is written ("" or "value")."""
    if isinstance(field, Mapping) and "value" in field:
        return field["value"], "value"
    return field, ""


def _tolerations(spec: Mapping[str, Any]) -> list[Any]:
    raw = spec.get("tolerations")
    if isinstance(raw, list):
        return raw
    items = as_mapping(as_mapping(raw).get("items"))
    return [_value(item)[0] for item in items.values() if isinstance(_value(item)[0], Mapping)]


def _gpu(spec: Mapping[str, Any]) -> tuple[Any, str, Fraction | None]:
    amount, key = _value(spec.get("gpu"))
    path = join("spec.gpu", key) if key else "spec.gpu"
    try:
        return amount, path, parse_quantity(amount) if amount is not None else None
    except (QuantityError, TypeError, ValueError):
        return amount, path, None


@register(GROUP, "TrainingWorkload", "InferenceWorkload", "InteractiveWorkload", "DistributedWorkload",
          gpus="`spec.gpu` (or `spec.gpu.value`): 1 or more is whole nvidia.com/gpu; between 0 and 1 a Run:ai GPU "
               "fraction (the `gpu-fraction` pod annotation); `spec.gpuMemory` a share by memory (`gpu-memory`)",
          tolerations="`spec.tolerations`, `spec.nodeSelector` (plain or Run:ai's `items`/`value` wrappers)",
          source="Run:ai documentation (closed source): GPU fractions, `runai submit` flags; see the module docstring")
def runai_workload(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    amount, gpu_path, parsed = _gpu(spec)
    limits: dict[str, Any] = {}
    annotations: dict[str, Any] = {}
    if parsed is not None and 0 < parsed < 1:
        annotations[FRACTION_ANNOTATION] = str(amount)
    elif amount is not None and amount != "" and parsed != 0:
        limits[GPU_RESOURCE] = amount
    memory = _value(spec.get("gpuMemory"))[0]
    if memory is not None and memory != "" and not limits:
        annotations[MEMORY_ANNOTATION] = str(memory)
    container = Container("spec", name or "workload", {"resources": {"limits": limits}},
                          written_at={("limits", GPU_RESOURCE): gpu_path} if limits else {})
    pod: dict[str, Any] = {}
    tolerations = _tolerations(spec)
    if tolerations:
        pod["tolerations"] = tolerations
    node_selector = _value(spec.get("nodeSelector"))[0]
    if isinstance(node_selector, Mapping):
        pod["nodeSelector"] = node_selector
    return [PodSpec("spec", pod, (container,), object_namespace(obj), f"Run:ai {obj.get('kind')} '{name}'",
                    annotations=annotations)]
