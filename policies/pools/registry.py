"""Which pool kind recognises which resources: one module per kind registers the resource types it
reads and how it turns one resource into the pools it declares (`PoolView`s). The pool rules
(`pool_rules.check_gpu_node_pool`, `check_device_plugin_coverage`) ask `pools_of` and never read a
kind's properties themselves; the pack asks `is_pool_resource` which resources to hand them. Adding a
kind (a karpenter.sh NodePool for NAP, say) is one module in this package plus its tests, as
kube-linter's `templates.Register` sits below its templates. Imports no kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .view import PoolView

#: (resource type, resource properties) -> the pools the resource declares.
PoolsOf = Callable[[str, Mapping[str, Any]], list[PoolView]]


@dataclass(frozen=True)
class PoolRegistration:
    """One kind of pool as the pack meets it."""

    #: The contract's name of the kind ("agentPool", "nodePool").
    name: str
    #: Whether a resource of this type declares pools of this kind.
    recognizes: Callable[[str], bool]
    pools_of: PoolsOf
    #: The API the kind reads, for the docs (an Azure API or a Kubernetes CRD).
    source: str = ""


KINDS: list[PoolRegistration] = []


def register(name: str, recognizes: Callable[[str], bool], source: str = "") -> Callable[[PoolsOf], PoolsOf]:
    def decorate(pools_of: PoolsOf) -> PoolsOf:
        # One registration per kind, as kube-linter's registry refuses a second template of one key.
        if any(kind.name == name or kind.pools_of is pools_of for kind in KINDS):
            raise ValueError(f"pool kind {name!r} is registered twice")
        KINDS.append(PoolRegistration(name, recognizes, pools_of, source))
        return pools_of
    return decorate


def kind_of(resource_type: str) -> PoolRegistration | None:
    return next((kind for kind in KINDS if kind.recognizes(resource_type)), None)


def is_pool_resource(resource_type: str) -> bool:
    """Whether a resource of this type declares node pools of a registered kind."""
    return kind_of(resource_type) is not None


def pools_of(resource_type: str, props: Mapping[str, Any]) -> list[PoolView]:
    """The pools a resource declares (none for a resource no kind recognises). Raises
    UndecidableError when an unknown preview value hides which pools there are."""
    kind = kind_of(resource_type)
    return kind.pools_of(resource_type, props) if kind is not None else []
