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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The outputs-contract versions this helper understands.
SUPPORTED_CONTRACT_VERSIONS = (1, 2)


class PlacementError(ValueError):
    """The platform has no pool that can satisfy the request; the message says what is missing."""


@dataclass(frozen=True)
class GpuRequest:
    """What a pod needs: how many GPUs, and optionally which model, pool or MIG partition.

    `model` matches the pool's GPU model ("T4", "A100 80GB", "H100") or its accelerator label value
    ("nvidia-tesla-t4"). `spot`: None takes on-demand pools first and Spot ones if nothing else fits,
    True asks for Spot, False refuses it. `shared`: True asks for one share of a pool that shares its
    GPUs (time-slicing or MPS: "1/4 of a T4"); otherwise a request gets whole GPUs, unless `pool`
    names a shared pool. A share is one per container: `gpus` must then be 1.
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


def _matches_model(pool: Mapping[str, Any], model: str) -> bool:
    wanted = model.lower()
    return wanted in (str(pool.get("gpuModel", "")).lower(), str(pool.get("accelerator", "")).lower()) or \
        str(pool.get("gpuModel", "")).lower().startswith(wanted + " ")


def _per_node(pool: Mapping[str, Any]) -> int:
    # Numbers read through a StackReference arrive as floats (1 -> 1.0).
    return int(pool.get("gpusPerNode") or 0)


def _replicas(pool: Mapping[str, Any]) -> int:
    """How many pods share one GPU of the pool (the contract's `sharing`, null when none); 1: no sharing."""
    sharing = pool.get("sharing")
    replicas = sharing.get("replicas") if isinstance(sharing, Mapping) else None
    return int(replicas) if isinstance(replicas, (int, float)) and not isinstance(replicas, bool) and replicas > 1 else 1


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
    return ", ".join(f"{name} ({pool.get('gpuModel')}{', MIG ' + str(pool['migPartition']) if pool.get('migPartition') else ''}"
                     f"{', Spot' if pool.get('spot') else ''}, {_capacity(pool)})"
                     for name, pool in pools.items()) or "none"


def place(platform: Mapping[str, Any], request: GpuRequest) -> Placement:
    """The pool a request lands on, and the pod-spec fragment that lands it there."""
    if isinstance(request.gpus, bool) or not isinstance(request.gpus, int) or request.gpus < 1:
        raise PlacementError(f"gpus must be a whole number of at least 1, got {request.gpus!r}: GPUs are whole "
                             "devices (ask for a MIG partition to share one)")
    pools = _pools(platform)
    if not pools:
        raise PlacementError("the platform has no GPU pools")
    candidates = dict(pools)
    if request.pool is not None:
        if request.pool not in pools:
            raise PlacementError(f"the platform has no GPU pool {request.pool!r}; GPU pools: {_describe(pools)}")
        candidates = {request.pool: pools[request.pool]}
    if request.model is not None:
        candidates = {n: p for n, p in candidates.items() if _matches_model(p, request.model)}
        if not candidates:
            raise PlacementError(f"the platform has no pool with {request.model} GPUs; GPU pools: {_describe(pools)}")
    if request.shared:
        candidates = {n: p for n, p in candidates.items() if _share(p)}
        if not candidates:
            raise PlacementError(f"the platform has no pool that shares its GPUs for this request; GPU pools: "
                                 f"{_describe(pools)}")
    elif request.pool is None:
        # A plain GPU request should get whole GPUs, not a share of one.
        candidates = {n: p for n, p in candidates.items() if not _share(p)}
        if not candidates:
            raise PlacementError(f"the platform has only shared pools for this request; ask with shared=True. GPU "
                                 f"pools: {_describe(pools)}")
    if request.gpus > 1 and all(_share(p) for p in candidates.values()):
        raise PlacementError(f"{request.gpus} GPUs from a shared pool: a container gets at most one share (NVIDIA's "
                             "device plugin refuses more, as two shares may be one GPU's worth); ask for gpus=1, or "
                             f"for whole GPUs from an unshared pool. GPU pools: {_describe(pools)}")
    if request.mig_partition is not None:
        candidates = {n: p for n, p in candidates.items() if p.get("migPartition") == request.mig_partition}
        if not candidates:
            raise PlacementError(f"the platform has no MIG pool with {request.mig_partition} partitions; GPU pools: "
                                 f"{_describe(pools)}")
    elif request.pool is None:
        # A plain GPU request should get a whole GPU, not a MIG slice.
        candidates = {n: p for n, p in candidates.items() if not p.get("migPartition")}
        if not candidates:
            raise PlacementError(f"the platform has only MIG pools for this request; ask for a mig_partition. GPU "
                                 f"pools: {_describe(pools)}")
    if request.spot is not None:
        candidates = {n: p for n, p in candidates.items() if bool(p.get("spot")) is request.spot}
        if not candidates:
            raise PlacementError(f"the platform has no {'Spot' if request.spot else 'on-demand'} pool for this "
                                 f"request; GPU pools: {_describe(pools)}")
    fitting = {n: p for n, p in candidates.items() if request.gpus <= _per_node(p)}
    if not fitting:
        largest = max(_per_node(p) for p in candidates.values())
        raise PlacementError(f"{request.gpus} GPUs is more than any matching node has (at most {largest} per node); "
                             f"GPU pools: {_describe(pools)}")
    # On-demand before Spot, then the tightest fit, then by name: the same answer every time.
    name, pool = min(fitting.items(), key=lambda item: (bool(item[1].get("spot")), _per_node(item[1]), item[0]))
    return Placement(pool=name, resource=str(pool["gpuResource"]), gpus=request.gpus,
                     tolerations=[dict(t) for t in pool["tolerations"]], node_selector=dict(pool["nodeSelector"]),
                     share=_share(pool))
