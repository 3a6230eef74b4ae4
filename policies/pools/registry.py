"""Which pool kind recognises which resources: one module per kind registers the resource types it
reads and how it turns one resource into the pools it declares (`PoolView`s). The pool rules
(`pool_rules.check_gpu_node_pool`, `check_device_plugin_coverage`) ask `pools_of` and never read a
kind's properties themselves; the pack asks `is_pool_resource` which resources to hand them. Adding a
kind (a karpenter.sh NodePool for NAP, say) is one module in this package plus its tests, as
kube-linter's `templates.Register` sits below its templates. Imports no kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .view import PoolView

#: (resource type, resource properties) -> the pools the resource declares.
PoolsOf = Callable[[str, Mapping[str, Any]], list[PoolView]]


def _no_hint(node_name: str, labels: Mapping[str, str]) -> str:
    return f"kubectl delete node {node_name}"


@dataclass(frozen=True)
class NodeFacts:
    """What a running cluster's nodes of one kind look like, for readers of nodes (the doctor): they
    read these facts through the kind and never name a kind themselves."""

    #: Taints the kind's own controller puts on its nodes while it starts or removes them; such a
    #: taint is not a misconfiguration.
    taint_prefixes: tuple[str, ...] = ()
    #: Labels (and values) that mark one of the kind's nodes as a GPU node.
    gpu_labels: Mapping[str, str] = field(default_factory=dict)
    #: A label only the kind's nodes carry; a node carrying it is of this kind whatever its pool says.
    node_label: str | None = None
    #: (node name, node labels) -> how a broken node of the kind is replaced.
    replace_hint: Callable[[str, Mapping[str, str]], str] = _no_hint


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
    #: What the kind's nodes look like in a running cluster.
    nodes: NodeFacts = NodeFacts()


KINDS: list[PoolRegistration] = []
#: resource type -> the kind that recognises it: the pack asks for every resource it is sent (most are
#: not pools) and a stack has a few dozen types. Valid for the KINDS it was filled from (`_KINDS_SEEN`:
#: that list and its length; a kind registering, or a test replacing the list, starts it afresh).
_KIND_OF_TYPE: dict[str, PoolRegistration | None] = {}
_KINDS_SEEN: list[tuple[list[PoolRegistration], int]] = []


def register(name: str, recognizes: Callable[[str], bool], source: str = "",
             nodes: NodeFacts | None = None) -> Callable[[PoolsOf], PoolsOf]:
    def decorate(pools_of: PoolsOf) -> PoolsOf:
        # One registration per kind, as kube-linter's registry refuses a second template of one key.
        if any(kind.name == name or kind.pools_of is pools_of for kind in KINDS):
            raise ValueError(f"pool kind {name!r} is registered twice")
        KINDS.append(PoolRegistration(name, recognizes, pools_of, source, nodes or NodeFacts()))
        return pools_of
    return decorate


def kind_of(resource_type: str) -> PoolRegistration | None:
    if not _KINDS_SEEN or _KINDS_SEEN[0][0] is not KINDS or _KINDS_SEEN[0][1] != len(KINDS):
        _KIND_OF_TYPE.clear()
        _KINDS_SEEN[:] = [(KINDS, len(KINDS))]
    try:
        return _KIND_OF_TYPE[resource_type]
    except KeyError:  # not asked yet
        kind = next((kind for kind in KINDS if kind.recognizes(resource_type)), None)
    if type(resource_type) is str and len(_KIND_OF_TYPE) < _MAX_REMEMBERED_TYPES:
        _KIND_OF_TYPE[resource_type] = kind
    return kind


#: A bound on the types remembered: a hostile stream of distinct types must not grow the table.
_MAX_REMEMBERED_TYPES = 4096


def is_pool_resource(resource_type: str) -> bool:
    """Whether a resource of this type declares node pools of a registered kind."""
    return kind_of(resource_type) is not None


def pools_of(resource_type: str, props: Mapping[str, Any]) -> list[PoolView]:
    """The pools a resource declares (none for a resource no kind recognises). Raises
    UndecidableError when an unknown preview value hides which pools there are."""
    kind = kind_of(resource_type)
    return kind.pools_of(resource_type, props) if kind is not None else []


def kind_named(name: str) -> PoolRegistration | None:
    """The registered kind of this contract name (`gpuPools.<pool>.kind`), or None."""
    return next((kind for kind in KINDS if kind.name == name), None)


def node_kind(labels: Mapping[str, str], pool_kind: str) -> PoolRegistration | None:
    """The kind of a running node: the kind whose own label it carries, else its pool's kind."""
    return next((kind for kind in KINDS if kind.nodes.node_label and kind.nodes.node_label in labels),
                kind_named(pool_kind))


def node_taint_prefixes() -> tuple[str, ...]:
    """Every kind's own node taints (a kind's controller taints only its own nodes)."""
    return tuple(prefix for kind in KINDS for prefix in kind.nodes.taint_prefixes)


def is_gpu_node(labels: Mapping[str, str]) -> bool:
    """Whether a node's labels mark it a GPU node in any kind's terms."""
    return any(labels.get(key) == value for kind in KINDS for key, value in kind.nodes.gpu_labels.items())
