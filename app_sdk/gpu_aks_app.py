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
    True asks for Spot, False refuses it.
    """

    gpus: int = 1
    model: str | None = None
    pool: str | None = None
    mig_partition: str | None = None
    spot: bool | None = None


@dataclass(frozen=True)
class Placement:
    pool: str
    resource: str
    gpus: int
    tolerations: list[dict[str, str]] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)

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


def _describe(pools: Mapping[str, Mapping[str, Any]]) -> str:
    return ", ".join(f"{name} ({pool.get('gpuModel')}{', MIG ' + str(pool['migPartition']) if pool.get('migPartition') else ''}"
                     f"{', Spot' if pool.get('spot') else ''}, {_per_node(pool)} per node)"
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
                     tolerations=[dict(t) for t in pool["tolerations"]], node_selector=dict(pool["nodeSelector"]))
