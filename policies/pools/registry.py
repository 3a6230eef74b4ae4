"""Which pool backend recognises which resources: one module per backend (the resource a pool is
written as: an AKS AgentPool, a Karpenter NodePool) registers the resource types it reads and how it
turns one resource into the pools it declares, each read once into the one pool model
(`model.Pool`). The pool rules (`pool_rules.check_gpu_node_pool`, `check_device_plugin_coverage`)
ask `pools_of` and never read a backend's properties themselves; the pack asks `is_pool_resource`
which resources to hand them. Adding a backend is one module in this package plus its tests, as
kube-linter's `templates.Register` sits below its templates. Imports no backend."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..podspecs import UndecidableError

if TYPE_CHECKING:
    from .model import PoolFact, PoolReading

#: (resource type, resource properties) -> the pools the resource declares, each with its reading.
PoolsOf = Callable[[str, Mapping[str, Any]], "list[PoolReading]"]
_Fact = TypeVar("_Fact")
#: No text, and no texts with no problems: what a hidden size or taint list reads as.
NO_TEXTS: tuple[str, ...] = ()
NO_TAINTS: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


def read_fact(unknown: dict[PoolFact, str], fact: PoolFact, read: Callable[[], _Fact], default: _Fact) -> _Fact:
    """One fact of a pool, read on its own: `read()`, or `default` where a preview hides a value it
    needs. The fact is then unknown at that value's path, so a rule that needs it leaves this one pool
    undecided (`pool_rules.require`) and the rules that do not still judge it."""
    try:
        return read()
    except UndecidableError as error:
        unknown[fact] = error.path
        return default


def _no_hint(node_name: str, labels: Mapping[str, str]) -> str:
    return f"kubectl delete node {node_name}"


@dataclass(frozen=True)
class NodeFacts:
    """What a running cluster's nodes of one backend look like, for readers of nodes (the doctor): they
    read these facts through the backend and never name one themselves."""

    #: Taints the backend's own controller puts on its nodes while it starts or removes them; such a
    #: taint is not a misconfiguration.
    taint_prefixes: tuple[str, ...] = ()
    #: Labels (and values) that mark one of the backend's nodes as a GPU node.
    gpu_labels: Mapping[str, str] = field(default_factory=dict)
    #: A label only the backend's nodes carry; a node carrying it is of this backend whatever its pool says.
    node_label: str | None = None
    #: (node name, node labels) -> how a broken node of the backend is replaced.
    replace_hint: Callable[[str, Mapping[str, str]], str] = _no_hint


@dataclass(frozen=True)
class BackendRegistration:
    """One backend of pools as the pack meets it."""

    #: The contract's name of the backend ("agentPool", "nodePool"; contract v2 calls it `kind`).
    name: str
    #: Whether a resource of this type declares pools of this backend.
    recognizes: Callable[[str], bool]
    pools_of: PoolsOf
    #: The API the backend reads, for the docs (an Azure API or a Kubernetes CRD).
    source: str = ""
    #: What the backend's nodes look like in a running cluster.
    nodes: NodeFacts = NodeFacts()


#: The backends, in registration order: the resource shapes that declare pools (AKS AgentPools,
#: Karpenter NodePools). Not "kinds": the platform's pool kinds (`components.pools.KINDS`: system,
#: cpu, gpu, nap) are what a stack configures; a backend is the resource a kind's pools are written as.
BACKENDS: list[BackendRegistration] = []


def register(name: str, recognizes: Callable[[str], bool], source: str = "",
             nodes: NodeFacts | None = None) -> Callable[[PoolsOf], PoolsOf]:
    def decorate(pools_of: PoolsOf) -> PoolsOf:
        # One registration per backend, as kube-linter's registry refuses a second template of one key.
        if any(backend.name == name or backend.pools_of is pools_of for backend in BACKENDS):
            raise ValueError(f"pool backend {name!r} is registered twice")
        BACKENDS.append(BackendRegistration(name, recognizes, pools_of, source, nodes or NodeFacts()))
        return pools_of
    return decorate


def backend_of(resource_type: str) -> BackendRegistration | None:
    """The backend that reads resources of this type (None for the many types that declare no pool)."""
    return next((backend for backend in BACKENDS if backend.recognizes(resource_type)), None)


def is_pool_resource(resource_type: str) -> bool:
    """Whether a resource of this type declares node pools of a registered backend."""
    return backend_of(resource_type) is not None


def pools_of(resource_type: str, props: Mapping[str, Any]) -> list[PoolReading]:
    """The pools a resource declares, each as the pool model with what was read of the resource beside
    it (none for a resource no backend recognises). Raises UndecidableError when an unknown preview value
    hides which pools there are."""
    backend = backend_of(resource_type)
    return backend.pools_of(resource_type, props) if backend is not None else []


def backend_named(name: str) -> BackendRegistration | None:
    """The registered backend of this contract name (`gpuPools.<pool>.kind` in contract v2), or None."""
    return next((backend for backend in BACKENDS if backend.name == name), None)


def node_backend(labels: Mapping[str, str], pool_backend: str) -> BackendRegistration | None:
    """The backend of a running node: the backend whose own label it carries, else its pool's."""
    return next((backend for backend in BACKENDS if backend.nodes.node_label and backend.nodes.node_label in labels),
                backend_named(pool_backend))


def node_taint_prefixes() -> tuple[str, ...]:
    """Every backend's own node taints (a backend's controller taints only its own nodes)."""
    return tuple(prefix for backend in BACKENDS for prefix in backend.nodes.taint_prefixes)


def is_gpu_node(labels: Mapping[str, str]) -> bool:
    """Whether a node's labels mark it a GPU node in any backend's terms."""
    return any(labels.get(key) == value for backend in BACKENDS for key, value in backend.nodes.gpu_labels.items())
