"""Land a pod on the right GPUs of a gpu-aks platform.

App stacks read the platform's outputs through `pulumi.StackReference` and ask for what they need:

    platform = pulumi.StackReference("my-org/gpu-aks/dev")
    placement = platform.require_output("gpuPools").apply(
        lambda pools: place(pools, GpuRequest(gpus=1, model="T4")))
    # placement.tolerations, placement.node_selector, placement.limits -> the pod spec

`place` returns the pod-spec fragment (tolerations, nodeSelector, resource limits) that lands the pod
there, or raises `PlacementError` naming what the platform lacks. The fragment comes straight from the
platform's outputs contract, so it passes the gpu-aks policy pack by construction.

One file, standard library only, so it can be vendored; or installed with
`pip install "gpu-aks-app @ git+https://github.com/<org>/gpu-aks@main#subdirectory=app_sdk"`
(a release tag `@v<version>` once one exists).
`gpu_aks_app_testing` (same package) mocks a platform for the app stack's own tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The outputs-contract versions this helper understands.
SUPPORTED_CONTRACT_VERSIONS = (1, 2, 3)


class PlacementError(ValueError):
    """The platform has no pool that can satisfy the request; the message says what is missing."""


@dataclass(frozen=True)
class GpuRequest:
    """What a pod needs: how many GPUs, and optionally which model, pool or MIG partition.

    `model` matches a GPU model the pool offers ("T4", "A100 80GB", "H100") or its accelerator label value
    ("nvidia-tesla-t4"). `spot`: None takes on-demand pools first and Spot ones if nothing else fits,
    True asks for Spot, False refuses it. On a NAP NodePool that buys both (Spot first, on-demand when
    Spot has none), True or False pins the pod to that capacity type (`karpenter.sh/capacity-type`).
    `shared`: True asks for one share of a pool that shares its GPUs (time-slicing or MPS: "1/4 of a
    T4"); otherwise a request gets whole GPUs, unless `pool`
    names a shared pool. A share is one per container: `gpus` must then be 1.
    A pool that may bring several sizes (a NAP NodePool's `offers`) serves a request from the sizes
    that fit it, and pins the pod to the size chosen where others would not.
    """

    gpus: int = 1
    model: str | None = None
    pool: str | None = None
    mig_partition: str | None = None
    spot: bool | None = None
    shared: bool | None = None


@dataclass(frozen=True)
class Placement:
    pool: str
    resource: str
    gpus: int
    tolerations: list[dict[str, str]] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    #: On a shared pool, what the pod gets: "1/4 of a T4, time-sliced"; None for whole GPUs or MIG slices.
    share: str | None = None

    @property
    def limits(self) -> dict[str, int]:
        # A limit alone also sets the request: GPUs cannot be overcommitted.
        return {self.resource: self.gpus}

    def pod_spec(self, containers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """A pod spec with the placement applied: tolerations, nodeSelector, and the GPU limit on the
        first container (merged with any limits it already has)."""
        first, *rest = containers
        resources = dict(first.get("resources") or {})
        resources["limits"] = {**(resources.get("limits") or {}), **self.limits}
        return {**extra, "containers": [{**first, "resources": resources}, *rest],
                "tolerations": [*extra.get("tolerations", []), *self.tolerations],
                "nodeSelector": {**extra.get("nodeSelector", {}), **self.node_selector}}


def _pools(platform: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Accepts the whole outputs document or the `gpuPools` map alone."""
    version = platform.get("contractVersion")
    if version is not None and version not in SUPPORTED_CONTRACT_VERSIONS:
        raise PlacementError(f"the platform's outputs contract is version {version}; this helper reads "
                             f"{SUPPORTED_CONTRACT_VERSIONS}: upgrade gpu-aks-app")
    pools = platform.get("gpuPools", platform)
    return {name: pool for name, pool in pools.items() if isinstance(pool, Mapping)}


#: The well-known label every node carries with its VM size, on AgentPool and NAP (Karpenter) nodes alike
#: (Kubernetes `LabelInstanceTypeStable`): it pins a pod to one of a pool's sizes.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
#: The label Karpenter puts on every NAP node with how it was bought (kubernetes-sigs/karpenter
#: `pkg/apis/v1/labels.go` `CapacityTypeLabelKey`: `spot` or `on-demand`); AgentPool nodes lack it.
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
_KARPENTER_CAPACITY = {"spot": "spot", "onDemand": "on-demand"}


def _offers(pool: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The GPUs the pool may bring, one offer per VM size (the contract's `offers`: an AgentPool-backed
    pool has one, a NAP NodePool one per size it may choose). A contract without `offers` (before
    gpu-aks 0.4) describes its one offer in the single-size fields."""
    offers = pool.get("offers")
    if isinstance(offers, (list, tuple)) and any(isinstance(offer, Mapping) for offer in offers):
        return [offer for offer in offers if isinstance(offer, Mapping)]
    return [{"vmSize": pool.get("vmSize"), "gpuModel": pool.get("gpuModel"), "resource": pool.get("gpuResource"),
             "perNode": pool.get("gpusPerNode"), "migPartition": pool.get("migPartition")}]


def _capacity_types(pool: Mapping[str, Any], offer: Mapping[str, Any]) -> list[str]:
    """How the offer's nodes may be bought (the contract's `capacityTypes`); an offer without them (a
    contract written before gpu-aks 0.4) is bought as its pool's `spot` says."""
    kinds = offer.get("capacityTypes")
    if isinstance(kinds, (list, tuple)) and kinds:
        return [str(kind) for kind in kinds]
    return ["spot"] if pool.get("spot") else ["onDemand"]


def _spot_only(pool: Mapping[str, Any], offers: list[Mapping[str, Any]]) -> bool:
    return all(_capacity_types(pool, offer) == ["spot"] for offer in offers)


def _matches_model(pool: Mapping[str, Any], offer: Mapping[str, Any], model: str) -> bool:
    wanted, offered = model.lower(), str(offer.get("gpuModel") or "").lower()
    # The accelerator label value names the pool's (first) model: it matches the offers of that model.
    accelerator = str(pool.get("accelerator") or "").lower() if offered == str(pool.get("gpuModel") or "").lower() else ""
    return wanted in (offered, accelerator) or offered.startswith(wanted + " ")


def _whole(value: Any) -> int | None:
    """A count read from the contract as an int, or None where it is none: numbers read through a
    StackReference arrive as floats (1 -> 1.0), and a damaged contract may hold NaN, an infinity or
    text, which `int()` would raise on. (This package stands alone, so it does not import
    `gpu_aks_policies.limits.is_whole`; this is the same test.)"""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return None
    return int(value)


def _offer_per_node(offer: Mapping[str, Any]) -> int:
    return max(_whole(offer.get("perNode")) or 0, 0)


def _per_node(pool: Mapping[str, Any]) -> int:
    """The most one node of the pool advertises, over its offers."""
    return max((_offer_per_node(offer) for offer in _offers(pool)), default=0)


def _describe_offers(pool: Mapping[str, Any]) -> str:
    offers = _offers(pool)
    if len(offers) == 1:
        return str(offers[0].get("gpuModel"))
    return " or ".join(f"{offer.get('gpuModel')} x{_offer_per_node(offer)}" for offer in offers)


def _replicas(pool: Mapping[str, Any]) -> int:
    """How many pods share one GPU of the pool (the contract's `sharing`, null when none); 1: no sharing."""
    sharing = pool.get("sharing")
    replicas = _whole(sharing.get("replicas")) if isinstance(sharing, Mapping) else None
    return replicas if replicas is not None and replicas > 1 else 1


def _share(pool: Mapping[str, Any]) -> str | None:
    """What one share of a shared pool is: "1/4 of a T4, time-sliced"."""
    replicas = _replicas(pool)
    if replicas == 1:
        return None
    how = "shared through MPS" if pool["sharing"].get("strategy") == "mps" else "time-sliced"
    model = str(pool.get("gpuModel") or "GPU")
    device = f"a MIG {pool['migPartition']} slice of {_a(model)}" if pool.get("migPartition") else _a(model)
    return f"1/{replicas} of {device}, {how}"


def _a(model: str) -> str:
    return f"a{'n' if model[:1] in 'AEFHILMNORSX' else ''} {model}"


def _capacity(pool: Mapping[str, Any]) -> str:
    share = _share(pool)
    return f"{_per_node(pool)} shares per node, each {share}" if share else f"{_per_node(pool)} per node"


def _describe(pools: Mapping[str, Mapping[str, Any]]) -> str:
    return ", ".join(f"{name} ({_describe_offers(pool)}{', MIG ' + str(pool['migPartition']) if pool.get('migPartition') else ''}"
                     f"{_buying(pool)}, {_capacity(pool)})"
                     for name, pool in pools.items()) or "none"


def _buying(pool: Mapping[str, Any]) -> str:
    kinds = {kind for offer in _offers(pool) for kind in _capacity_types(pool, offer)}
    return ", Spot or on-demand" if len(kinds) > 1 else ", Spot" if kinds == {"spot"} else ""


def _keep(candidates: dict[str, tuple[Mapping[str, Any], list[Mapping[str, Any]]]],
          wanted: Any) -> dict[str, tuple[Mapping[str, Any], list[Mapping[str, Any]]]]:
    """The candidates with the offers `wanted(pool, offer)` keeps; a pool with none left is dropped."""
    kept = {name: (pool, [offer for offer in offers if wanted(pool, offer)]) for name, (pool, offers) in candidates.items()}
    return {name: (pool, offers) for name, (pool, offers) in kept.items() if offers}


def place(platform: Mapping[str, Any], request: GpuRequest) -> Placement:
    """The pool a request lands on, and the pod-spec fragment that lands it there."""
    if isinstance(request.gpus, bool) or not isinstance(request.gpus, int) or request.gpus < 1:
        raise PlacementError(f"gpus must be a whole number of at least 1, got {request.gpus!r}: GPUs are whole "
                             "devices (ask for a MIG partition to share one)")
    pools = _pools(platform)
    if not pools:
        raise PlacementError("the platform has no GPU pools")
    # Each pool with the offers (VM sizes) that can still serve the request.
    candidates = {name: (pool, _offers(pool)) for name, pool in pools.items()}
    if request.pool is not None:
        if request.pool not in pools:
            raise PlacementError(f"the platform has no GPU pool {request.pool!r}; GPU pools: {_describe(pools)}")
        candidates = {request.pool: candidates[request.pool]}
    if request.model is not None:
        model = request.model
        candidates = _keep(candidates, lambda pool, offer: _matches_model(pool, offer, model))
        if not candidates:
            raise PlacementError(f"the platform has no pool with {request.model} GPUs; GPU pools: {_describe(pools)}")
    if request.shared:
        candidates = {n: c for n, c in candidates.items() if _share(c[0])}
        if not candidates:
            raise PlacementError(f"the platform has no pool that shares its GPUs for this request; GPU pools: "
                                 f"{_describe(pools)}")
    elif request.pool is None:
        # A plain GPU request should get whole GPUs, not a share of one.
        candidates = {n: c for n, c in candidates.items() if not _share(c[0])}
        if not candidates:
            raise PlacementError(f"the platform has only shared pools for this request; ask with shared=True. GPU "
                                 f"pools: {_describe(pools)}")
    if request.gpus > 1 and all(_share(pool) for pool, _ in candidates.values()):
        raise PlacementError(f"{request.gpus} GPUs from a shared pool: a container gets at most one share (NVIDIA's "
                             "device plugin refuses more, as two shares may be one GPU's worth); ask for gpus=1, or "
                             f"for whole GPUs from an unshared pool. GPU pools: {_describe(pools)}")
    if request.mig_partition is not None:
        candidates = _keep(candidates, lambda pool, offer: offer.get("migPartition") == request.mig_partition)
        if not candidates:
            raise PlacementError(f"the platform has no MIG pool with {request.mig_partition} partitions; GPU pools: "
                                 f"{_describe(pools)}")
    elif request.pool is None:
        # A plain GPU request should get a whole GPU, not a MIG slice.
        candidates = _keep(candidates, lambda pool, offer: not offer.get("migPartition"))
        if not candidates:
            raise PlacementError(f"the platform has only MIG pools for this request; ask for a mig_partition. GPU "
                                 f"pools: {_describe(pools)}")
    if request.spot is not None:
        wanted_capacity = "spot" if request.spot else "onDemand"
        candidates = _keep(candidates, lambda pool, offer: wanted_capacity in _capacity_types(pool, offer))
        if not candidates:
            raise PlacementError(f"the platform has no {'Spot' if request.spot else 'on-demand'} pool for this "
                                 f"request; GPU pools: {_describe(pools)}")
    fitting = _keep(candidates, lambda pool, offer: request.gpus <= _offer_per_node(offer))
    if not fitting:
        largest = max(_offer_per_node(offer) for _, offers in candidates.values() for offer in offers)
        raise PlacementError(f"{request.gpus} GPUs is more than any matching node has (at most {largest} per node); "
                             f"GPU pools: {_describe(pools)}")
    # On-demand before Spot, then the tightest fit, then by name: the same answer every time.
    chosen = {name: (pool, min(offers, key=_offer_per_node)) for name, (pool, offers) in fitting.items()}
    name, (pool, offer) = min(chosen.items(), key=lambda item: (_spot_only(item[1][0], [item[1][1]]),
                                                                _offer_per_node(item[1][1]), item[0]))
    node_selector = dict(pool["nodeSelector"])
    if any(other not in fitting[name][1] for other in _offers(pool)) and offer.get("vmSize"):
        # The pool may bring sizes that cannot serve the request (another GPU, too few per node): pin
        # the pod to the size chosen, so a NAP NodePool provisions that one for it.
        node_selector[INSTANCE_TYPE_LABEL] = str(offer["vmSize"])
    if request.spot is not None and len(_capacity_types(pool, offer)) > 1 and pool.get("kind") == "nodePool":
        # A NodePool that buys both takes Spot first: pin the capacity type the request asks for.
        node_selector[CAPACITY_TYPE_LABEL] = _KARPENTER_CAPACITY["spot" if request.spot else "onDemand"]
    return Placement(pool=name, resource=str(offer.get("resource") or pool["gpuResource"]), gpus=request.gpus,
                     tolerations=[dict(t) for t in pool["tolerations"]], node_selector=node_selector,
                     share=_share(pool))
