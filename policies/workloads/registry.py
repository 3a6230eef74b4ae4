"""Which adapter turns which kind into pod specs: one small module per controller family registers
its (API group, kind) pairs here. A kind nobody registered falls back to the generic search."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..podspecs import PodSpec, api_group, find_pod_specs, object_namespace
from .context import Context

#: (object, objects checked together) -> the pod specs its controller will create.
Adapter = Callable[[Mapping[str, Any], Context], list[PodSpec]]

ADAPTERS: dict[tuple[str, str], Adapter] = {}


def register(group: str, *kinds: str) -> Callable[[Adapter], Adapter]:
    def decorate(adapter: Adapter) -> Adapter:
        for kind in kinds:
            ADAPTERS[(group, kind)] = adapter
        return adapter
    return decorate


def adapter_for(obj: Any) -> Adapter | None:
    if not isinstance(obj, Mapping):
        return None
    kind = obj.get("kind")
    return ADAPTERS.get((api_group(obj), kind)) if isinstance(kind, str) else None


def pod_specs_of(obj: Any, context: Context | None = None) -> list[PodSpec]:
    """The pod specs `obj` leads to: from its registered adapter, else from the generic search."""
    adapter = adapter_for(obj)
    if adapter is None:
        return find_pod_specs(obj, namespace=object_namespace(obj))
    return adapter(obj, context or Context())
