"""No silent pass: a kind nobody knows that names a GPU.

The generic search reads every `containers` list of a kind no adapter registers. An operator that
states its GPU ask in its own fields (`spec.resources` of a NIMService, `gpu: "1"`) has none there,
so the search would find nothing, or only a sidecar, and the object would pass unjudged. Where such
an object names a GPU resource, a GPU vendor's label or a GPU DRA device class outside every pod spec
the search found, its pods are not evaluated at all: the rules give it one advisory that says to
declare the kind's shape (`workloadShapes`) and no verdict, since any verdict would rest on a guess.

What counts as naming a GPU: a key or a string value `nvidia.com/...` (the device plugin's resources,
GPU feature discovery's `nvidia.com/gpu.product` labels), `amd.com/gpu` (ROCm/k8s-device-plugin),
`gpu.intel.com/...` (intel/intel-device-plugins-for-kubernetes), or a GPU DRA device class
(`gpu.nvidia.com`, `mig.nvidia.com`: kubernetes-sigs/dra-driver-nvidia-gpu; `gpu.amd.com`:
ROCm/k8s-gpu-dra-driver). The walk is iterative, visits each node once and stops at the first name.
"""

from __future__ import annotations

from collections import abc
from collections.abc import Iterable
from typing import Any

from ..limits import MAX_NODES

GPU_NAME_PREFIXES = ("nvidia.com/", "amd.com/gpu", "gpu.intel.com/")
GPU_DEVICE_CLASS_NAMES = frozenset({"gpu.nvidia.com", "mig.nvidia.com", "gpu.amd.com"})
_SKIPPED = frozenset({"metadata", "status"})


def names_gpu(text: str) -> bool:
    return text.startswith(GPU_NAME_PREFIXES) or text in GPU_DEVICE_CLASS_NAMES


def gpu_mention(obj: Any, covered: Iterable[int] = ()) -> tuple[str, str] | None:
    """(path, the name) of the first GPU name in `obj` outside `metadata`, `status` and the nodes
    whose ids are in `covered` (the pod specs the rules read anyway), or None."""
    skip = set(covered)
    visited: set[int] = set()
    stack: list[tuple[Any, str]] = [(obj, "")]
    budget = MAX_NODES
    while stack and budget:
        budget -= 1
        node, path = stack.pop()
        if isinstance(node, str):
            if names_gpu(node):
                return path or "<root>", node
            continue
        if id(node) in visited or id(node) in skip:
            continue
        visited.add(id(node))
        if isinstance(node, abc.Mapping):
            for key, value in node.items():
                if not isinstance(key, str) or (not path and key in _SKIPPED):
                    continue
                child = f"{path}.{key}" if path else key
                if names_gpu(key):
                    return child, key
                if isinstance(value, (str, abc.Mapping)) or (isinstance(value, abc.Sequence) and not isinstance(value, bytes)):
                    stack.append((value, child))
        elif isinstance(node, abc.Sequence) and not isinstance(node, bytes):
            stack.extend((item, f"{path}[{index}]") for index, item in enumerate(node)
                         if isinstance(item, (str, abc.Mapping, abc.Sequence)) and not isinstance(item, bytes))
    return None
