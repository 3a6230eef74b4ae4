"""Land a pod on the right GPUs of a gpu-aks platform.

App stacks read the platform's outputs through `pulumi.StackReference` and ask for what they need:

    platform = pulumi.StackReference("my-org/gpu-aks/dev")
    placement = platform.require_output("pools").apply(
        lambda pools: place(pools, GpuRequest(gpus=1, model="T4")))
    # placement.tolerations, placement.node_selector, placement.limits -> the pod spec

`place` takes the whole outputs document, version 3's `pools` map (the pool model's JSON: read first), or
version 2's `gpuPools` map (written until gpu-aks 0.7.0), and returns the pod-spec fragment (tolerations,
nodeSelector, resource limits) that lands the pod there, or raises `PlacementError` naming what the
platform lacks (`ContractError`, a `PlacementError`, naming the key of a damaged contract). The fragment comes straight from the
platform's outputs contract, so it passes the gpu-aks policy pack by construction.

One file, standard library only, so it can be vendored; or installed with
`pip install "gpu-aks-app @ git+https://github.com/<org>/gpu-aks@main#subdirectory=app_sdk"`
(a release tag `@v<version>` once one exists).
`gpu_aks_app_testing` (same package) mocks a platform for the app stack's own tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
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
    `cpu` and `memory`: what the pod asks of the node beside its GPUs, as Kubernetes quantities ("10",
    "500m"; "64Gi"); a pool whose node gives pods less (its allocatable less gpu-aks's DaemonSets there, the
    contract's `allocatable`) does not serve the request, as kube-scheduler's NodeResourcesFit would leave
    the pod Pending there.
    A pool that may bring several sizes (a NAP NodePool's `offers`) serves a request from the sizes
    that fit it, and pins the pod to the size chosen where others would not.
    """

    gpus: int = 1
    model: str | None = None
    pool: str | None = None
    mig_partition: str | None = None
    spot: bool | None = None
    shared: bool | None = None
    cpu: str | int | None = None
    memory: str | int | None = None


#: How long a GPU node may take to come up before AKS gives up on it: the cluster autoscaler's
#: `max-node-provision-time`, 15 minutes unless the platform sets it (azure-mgmt-containerservice 40.1.0,
#: `ManagedClusterPropertiesAutoScalerProfile.max_node_provision_time`: "The default is '15m'"), and Karpenter's
#: for a NAP node (sigs.k8s.io/karpenter v1.15.0 `pkg/controllers/nodeclaim/lifecycle/liveness.go`,
#: `registrationTimeout = time.Minute * 15`). A pool that idles at zero nodes makes every pod wait that long at worst.
NODE_PROVISION_SECONDS = 15 * 60
#: What pulumi-kubernetes gives a Deployment or a Job to become ready when nothing says otherwise
#: (provider/v4 `pkg/await/deployment.go` DefaultDeploymentTimeoutMins, `pkg/await/job.go` DefaultJobTimeoutMins).
PROVIDER_AWAIT_SECONDS = 10 * 60
#: The annotation on a Kubernetes object that sets how long pulumi-kubernetes awaits it, read when the resource
#: has no customTimeouts (provider/v4 `pkg/metadata/overrides.go` TimeoutDuration; `pkg/metadata/annotations.go`).
TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds"


@dataclass(frozen=True)
class Placement:
    pool: str
    resource: str
    gpus: int
    tolerations: list[dict[str, str]] = field(default_factory=list)
    node_selector: dict[str, str] = field(default_factory=dict)
    #: On a shared pool, what the pod gets: "1/4 of a T4, time-sliced"; None for whole GPUs or MIG slices.
    share: str | None = None
    #: The CPU and memory the request asked for, as the pod's first container requests them.
    requests: dict[str, str] = field(default_factory=dict)
    #: The GPU model of the node it lands on ("T4", "A100 80GB"), where the contract names it.
    gpu_model: str | None = None

    @property
    def limits(self) -> dict[str, int]:
        # A limit alone also sets the request: GPUs cannot be overcommitted.
        return {self.resource: self.gpus}

    def await_annotations(self, workload_seconds: int = PROVIDER_AWAIT_SECONDS) -> dict[str, str]:
        """Annotations for the workload's own metadata (the Deployment's or the Job's, not its pod template's)
        so that `pulumi up` awaits it as long as a GPU node may take to come up, plus `workload_seconds` for the
        workload itself once its node is there (its image pull and start; a Job's run): by default the
        provider's own allowance. Without them the provider's 10 minutes must cover a scale-up from zero too,
        and `pulumi up` can fail while AKS is still bringing the node up."""
        return {TIMEOUT_ANNOTATION: str(NODE_PROVISION_SECONDS + workload_seconds)}

    def pod_spec(self, containers: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        """A pod spec with the placement applied: tolerations, nodeSelector, and the GPU limit on the
        first container (merged with any limits it already has)."""
        first, *rest = containers
        resources = dict(first.get("resources") or {})
        resources["limits"] = {**(resources.get("limits") or {}), **self.limits}
        if self.requests:
            resources["requests"] = {**self.requests, **(resources.get("requests") or {})}
        return {**extra, "containers": [{**first, "resources": resources}, *rest],
                "tolerations": [*extra.get("tolerations", []), *self.tolerations],
                "nodeSelector": {**extra.get("nodeSelector", {}), **self.node_selector}}


class ContractError(PlacementError):
    """The platform's outputs are not a contract this helper reads; the message names the key."""


#: The labels gpu-aks pins a pod to a pool with (`gpu_aks_policies.catalog`: POOL_LABEL, ACCELERATOR_LABEL; the
#: GPU-model label AKS-pool nodes carry): the same node selector the platform writes in version 2's
#: `gpuPools.<name>.nodeSelector`.
POOL_LABEL = "gpu-aks.io/pool"
ACCELERATOR_LABEL = "accelerator"
GPU_MODEL_LABEL = "nvidia.com/gpu.accelerator"
#: Kubernetes' taint effects (k8s.io/api core/v1 `TaintEffect`).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: The keys this helper reads of a version 3 pool and of each of its offers (tests hold them to the pool
#: model's JSON names, `gpu_aks_policies.pools.model.Pool` and `Offer`).
POOL_KEYS = ("role", "backend", "offers", "spot", "taints", "labels", "sharing")
OFFER_KEYS = ("vmSize", "capacityTypes", "gpuModel", "resource", "perNode", "migPartition", "allocatable")
#: The keys read of an offer's `allocatable` (`gpu_aks_policies.pools.model.Allocatable`).
ALLOCATABLE_KEYS = ("cpuMillicores", "memoryBytes", "daemonSetCpuMillicores", "daemonSetMemoryBytes")


@dataclass(frozen=True)
class _Offer:
    vm_size: str | None
    gpu_model: str | None
    resource: str | None
    per_node: int
    mig_partition: str | None
    capacity_types: tuple[str, ...]
    #: What one node gives pods: (CPU millicores, memory bytes), each None when not known (version 3 only, so
    #: not part of what version 2 must say the same of).
    room: tuple[int | None, int | None] = field(default=(None, None), compare=False)


@dataclass(frozen=True)
class _Pool:
    """A GPU pool as this helper reads it, from version 3's `pools` or version 2's `gpuPools` alike."""

    backend: str
    offers: tuple[_Offer, ...]
    tolerations: tuple[dict[str, str], ...]
    node_selector: dict[str, str]
    #: How many pods share one GPU (1: no sharing), and how (timeSlicing, mps).
    replicas: int
    strategy: str | None
    #: The `nvidia.com/gpu.accelerator` label value of the pool's (first) model, which a request's model may name.
    accelerator: str | None = None

    def says(self) -> tuple[Any, ...]:
        """What the pool says of where a pod lands, whichever version wrote it: the tolerations and the node
        selector as sets (a writer may order them as it likes); not the accelerator, which version 3 gives
        only where the nodes carry it."""
        return (self.backend, self.offers, frozenset(frozenset(t.items()) for t in self.tolerations),
                frozenset(self.node_selector.items()), self.replicas, self.strategy)


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ContractError(f"{key}: expected an object, got {_kind(value)}")
    return value


def _text(value: Any, key: str, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ContractError(f"{key}: expected a string, got {_kind(value)}")
    return value


def _texts(value: Any, key: str) -> dict[str, str]:
    """A map of strings to strings (labels, a node selector, a toleration)."""
    mapping = _mapping(value, key)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise ContractError(f"{key}: expected a map of strings to strings")
    return dict(mapping)


def _list(value: Any, key: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise ContractError(f"{key}: expected a list, got {_kind(value)}")
    return list(value)


def _kind(value: Any) -> str:
    """What a value is, for a message: never the value itself (a contract may hold anything)."""
    return "null" if value is None else type(value).__name__


def _toleration(text: Any, key: str) -> dict[str, str]:
    """The narrowest toleration of one `key=value:Effect` taint, as the platform writes it in version 2's
    `tolerations` (gpu_aks_policies.scheduling `toleration_for`)."""
    head, _, effect = _text(text, key, optional=False).rpartition(":")  # type: ignore[union-attr]
    taint_key, _, value = head.partition("=")
    if not taint_key or effect not in TAINT_EFFECTS:
        raise ContractError(f"{key}: expected a taint key=value:Effect (effect {', '.join(TAINT_EFFECTS)})")
    if value:
        return {"key": taint_key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": taint_key, "operator": "Exists", "effect": effect}


def _capacity(value: Any, spot: Any) -> tuple[str, ...]:
    """How an offer's nodes may be bought (`capacityTypes`); without them (a contract written before
    gpu-aks 0.4) as its pool's `spot` says."""
    if isinstance(value, (list, tuple)) and value:
        return tuple(str(kind) for kind in value)
    return ("spot",) if spot is True else ("onDemand",)


def _sharing(value: Any) -> tuple[int, str | None]:
    """(replicas, strategy) of the contract's `sharing`: a count that is no whole number above 1 (a
    damaged contract's NaN, infinity or text) is no sharing."""
    if not isinstance(value, Mapping):
        return 1, None
    replicas = _whole(value.get("replicas"))
    strategy = value.get("strategy")
    return (replicas, strategy if isinstance(strategy, str) else None) if replicas is not None and replicas > 1 \
        else (1, None)


def _v3_pool(name: str, raw: Any) -> _Pool | None:
    """A version 3 pool (`pools.<name>`, the pool model's JSON), or None for a pool that is not a GPU pool."""
    key = f"pools.{name}"
    pool = _mapping(raw, key)
    if pool.get("role") not in ("system", "cpu", "gpu"):
        raise ContractError(f"{key}.role: expected system, cpu or gpu")
    if pool.get("role") != "gpu":
        return None
    spot = pool.get("spot")
    offers = []
    for index, item in enumerate(_list(pool.get("offers"), f"{key}.offers")):
        offer = _mapping(item, f"{key}.offers[{index}]")
        resource = _text(offer.get("resource"), f"{key}.offers[{index}].resource")
        if not resource:
            continue  # a CPU size of the pool: no GPU to ask for
        offers.append(_Offer(_text(offer.get("vmSize"), f"{key}.offers[{index}].vmSize"),
                             _text(offer.get("gpuModel"), f"{key}.offers[{index}].gpuModel"), resource,
                             max(_whole(offer.get("perNode")) or 0, 0),
                             _text(offer.get("migPartition"), f"{key}.offers[{index}].migPartition"),
                             _capacity(offer.get("capacityTypes"), spot),
                             _room(offer.get("allocatable"), f"{key}.offers[{index}].allocatable")))
    if not offers:
        raise ContractError(f"{key}.offers: a GPU pool needs an offer with a resource (a GPU size); none has one")
    labels = _texts(pool.get("labels", {}), f"{key}.labels")
    # One toleration per distinct taint, as the platform writes them (components/manifests.py `pool_tolerations`).
    tolerations: list[dict[str, str]] = []
    for index, text in enumerate(_list(pool.get("taints", []), f"{key}.taints")):
        toleration = _toleration(text, f"{key}.taints[{index}]")
        if toleration not in tolerations:
            tolerations.append(toleration)
    # The node selector the platform writes (components/contract.py `gpu_node_selector`): the pool label,
    # and the accelerator label where the pool's nodes carry it (a NAP NodePool's cannot).
    selector = {ACCELERATOR_LABEL: "nvidia"} if labels.get(ACCELERATOR_LABEL) == "nvidia" else {}
    replicas, strategy = _sharing(pool.get("sharing"))
    return _Pool("nodePool" if pool.get("backend") == "nodePool" else "agentPool", tuple(offers), tuple(tolerations),
                 {**selector, POOL_LABEL: name}, replicas, strategy, labels.get(GPU_MODEL_LABEL))


def _room(value: Any, key: str) -> tuple[int | None, int | None]:
    """(CPU millicores, memory bytes) one node gives pods: its allocatable less gpu-aks's DaemonSets there."""
    if value is None:
        return None, None
    allocatable = _mapping(value, key)
    cpu, memory = _whole(allocatable.get("cpuMillicores")), _whole(allocatable.get("memoryBytes"))
    return (None if cpu is None else max(0, cpu - (_whole(allocatable.get("daemonSetCpuMillicores")) or 0)),
            None if memory is None else max(0, memory - (_whole(allocatable.get("daemonSetMemoryBytes")) or 0)))


#: Kubernetes quantity suffixes (apimachinery `resource.Quantity`): binary and decimal.
_SUFFIXES: dict[str, int | Fraction] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}


def _amount(value: Any, what: str) -> Fraction:
    """A request's quantity ("500m", "0.5", "64Gi", or a whole number such as 10) exactly; PlacementError naming
    `what` when it is none."""
    whole = _whole(value)
    if whole is not None and whole >= 0:
        return Fraction(whole)
    if isinstance(value, str):
        text = value.strip()
        suffix = next((s for s in ("Ki", "Mi", "Gi", "Ti", "Pi", "m", "k", "M", "G", "T", "P") if text.endswith(s)), "")
        number = text[:len(text) - len(suffix)]
        if number and all(c.isdigit() or c == "." for c in number) and number.count(".") <= 1 and number != ".":
            return Fraction(number) * _SUFFIXES[suffix]
    raise PlacementError(f"{what} must be a Kubernetes quantity such as 10, \"500m\" or \"64Gi\", got {value!r}")


def _cpus(milli: int) -> str:
    """Millicores as the pack writes them ("3.86"): `gpu_aks_policies.pod_requests.cpus`, copied to keep this file
    standard library only (tests/test_app_helper.py holds the two equal)."""
    whole, part = divmod(milli, 1000)
    return f"{whole}.{part:03d}".rstrip("0") if part else str(whole)


def _gib(amount: int) -> str:
    """Bytes as the pack writes them ("22.97 GiB", rounded down): `gpu_aks_policies.pod_requests.gib`'s copy."""
    hundredths = amount * 100 // 2**30
    return f"{hundredths // 100}.{hundredths % 100:02d}".rstrip("0").rstrip(".") + " GiB"


def _v2_offers(pool: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The GPUs the pool may bring, one offer per VM size (the contract's `offers`: an AgentPool-backed
    pool has one, a NAP NodePool one per size it may choose). A contract without `offers` (before
    gpu-aks 0.4) describes its one offer in the single-size fields."""
    offers = pool.get("offers")
    if isinstance(offers, (list, tuple)) and any(isinstance(offer, Mapping) for offer in offers):
        return [offer for offer in offers if isinstance(offer, Mapping)]
    return [{"vmSize": pool.get("vmSize"), "gpuModel": pool.get("gpuModel"), "resource": pool.get("gpuResource"),
             "perNode": pool.get("gpusPerNode"), "migPartition": pool.get("migPartition")}]


def _v2_pool(name: str, raw: Any) -> _Pool:
    """A version 2 GPU pool (`gpuPools.<name>`)."""
    key = f"gpuPools.{name}"
    pool = _mapping(raw, key)
    offers = []
    for index, offer in enumerate(_v2_offers(pool)):
        at = f"{key}.offers[{index}]"
        resource = offer.get("resource") or pool.get("gpuResource")
        offers.append(_Offer(_text(offer.get("vmSize"), f"{at}.vmSize"), _text(offer.get("gpuModel"), f"{at}.gpuModel"),
                             _text(resource, f"{at}.resource", optional=False),
                             max(_whole(offer.get("perNode")) or 0, 0), _text(offer.get("migPartition"), f"{at}.migPartition"),
                             _capacity(offer.get("capacityTypes"), pool.get("spot"))))
    tolerations = tuple(_texts(item, f"{key}.tolerations[{index}]")
                        for index, item in enumerate(_list(pool.get("tolerations"), f"{key}.tolerations")))
    replicas, strategy = _sharing(pool.get("sharing"))
    accelerator = pool.get("accelerator")
    return _Pool("nodePool" if pool.get("kind") == "nodePool" else "agentPool", tuple(offers), tolerations,
                 _texts(pool.get("nodeSelector"), f"{key}.nodeSelector"), replicas, strategy,
                 accelerator if isinstance(accelerator, str) else None)


def _read_map(platform: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    found = platform.get(key)
    return None if found is None else _mapping(found, key)


def _pools(platform: Any) -> dict[str, _Pool]:
    """The GPU pools of the whole outputs document (version 3's `pools` first; a contract that has it also
    has version 2's `gpuPools`, which must say the same), of version 3's `pools` map alone, or of the
    `gpuPools` map alone."""
    if not isinstance(platform, Mapping):
        raise ContractError(f"expected the platform's outputs (an object), got {_kind(platform)}")
    version = platform.get("contractVersion")
    # A whole number (a StackReference's 3.0 too); JSON's true is none, though Python counts it as 1.
    if version is not None and _whole(version) not in SUPPORTED_CONTRACT_VERSIONS:
        shown = version if _whole(version) is not None else _kind(version)
        raise ContractError(f"the platform's outputs contract is version {shown}; this helper reads "
                            f"{SUPPORTED_CONTRACT_VERSIONS}: upgrade gpu-aks-app")
    v3, v2 = _read_map(platform, "pools"), _read_map(platform, "gpuPools")
    if v3 is None and v2 is None and version is None:
        # A map alone: version 3's pools carry their role, version 2's GPU pools do not.
        whole = all(isinstance(pool, Mapping) and "role" in pool for pool in platform.values()) and bool(platform)
        v3, v2 = (platform, None) if whole else (None, platform)
    read3 = None if v3 is None else {str(name): pool for name, raw in v3.items()
                                     if (pool := _v3_pool(str(name), raw)) is not None}
    read2 = None if v2 is None else {str(name): _v2_pool(str(name), raw) for name, raw in v2.items()}
    if read3 is not None and read2 is not None:
        for name in dict.fromkeys([*read3, *read2]):
            if name not in read3 or name not in read2 or read3[name].says() != read2[name].says():
                raise ContractError(f"pools.{name} and gpuPools.{name} disagree: the contract's version 3 and version 2 "
                                    "must say the same of a pool; write the contract again from the platform's outputs")
    return read3 if read3 is not None else read2 or {}


#: The well-known label every node carries with its VM size, on AgentPool and NAP (Karpenter) nodes alike
#: (Kubernetes `LabelInstanceTypeStable`): it pins a pod to one of a pool's sizes.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
#: The label Karpenter puts on every NAP node with how it was bought (kubernetes-sigs/karpenter
#: `pkg/apis/v1/labels.go` `CapacityTypeLabelKey`: `spot` or `on-demand`); AgentPool nodes lack it.
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
_KARPENTER_CAPACITY = {"spot": "spot", "onDemand": "on-demand"}


def _spot_only(offers: Sequence[_Offer]) -> bool:
    return all(offer.capacity_types == ("spot",) for offer in offers)


def _matches_model(pool: _Pool, offer: _Offer, model: str) -> bool:
    wanted, offered = model.lower(), (offer.gpu_model or "").lower()
    # The accelerator label value names the pool's (first) model: it matches the offers of that model.
    first = (pool.offers[0].gpu_model or "").lower()
    accelerator = (pool.accelerator or "").lower() if offered == first else ""
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


def _per_node(pool: _Pool) -> int:
    """The most one node of the pool advertises, over its offers."""
    return max((offer.per_node for offer in pool.offers), default=0)


def _describe_offers(pool: _Pool) -> str:
    if len(pool.offers) == 1:
        return str(pool.offers[0].gpu_model)
    return " or ".join(f"{offer.gpu_model} x{offer.per_node}" for offer in pool.offers)


def _share(pool: _Pool) -> str | None:
    """What one share of a shared pool is: "1/4 of a T4, time-sliced"."""
    if pool.replicas == 1:
        return None
    how = "shared through MPS" if pool.strategy == "mps" else "time-sliced"
    first = pool.offers[0]
    model = first.gpu_model or "GPU"
    device = f"a MIG {first.mig_partition} slice of {_a(model)}" if first.mig_partition else _a(model)
    return f"1/{pool.replicas} of {device}, {how}"


def _a(model: str) -> str:
    return f"a{'n' if model[:1] in 'AEFHILMNORSX' else ''} {model}"


def _capacity_text(pool: _Pool) -> str:
    share = _share(pool)
    return f"{_per_node(pool)} shares per node, each {share}" if share else f"{_per_node(pool)} per node"


def _describe(pools: Mapping[str, _Pool]) -> str:
    def mig(pool: _Pool) -> str:
        partition = pool.offers[0].mig_partition
        return f", MIG {partition}" if partition else ""
    return ", ".join(f"{name} ({_describe_offers(pool)}{mig(pool)}{_buying(pool)}, {_capacity_text(pool)})"
                     for name, pool in pools.items()) or "none"


def _buying(pool: _Pool) -> str:
    kinds = {kind for offer in pool.offers for kind in offer.capacity_types}
    return ", Spot or on-demand" if len(kinds) > 1 else ", Spot" if kinds == {"spot"} else ""


Candidates = dict[str, tuple[_Pool, list[_Offer]]]


def _keep(candidates: Candidates, wanted: Any) -> Candidates:
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
    candidates: Candidates = {name: (pool, list(pool.offers)) for name, pool in pools.items()}
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
        candidates = _keep(candidates, lambda pool, offer: offer.mig_partition == request.mig_partition)
        if not candidates:
            raise PlacementError(f"the platform has no MIG pool with {request.mig_partition} partitions; GPU pools: "
                                 f"{_describe(pools)}")
    elif request.pool is None:
        # A plain GPU request should get a whole GPU, not a MIG slice.
        candidates = _keep(candidates, lambda pool, offer: not offer.mig_partition)
        if not candidates:
            raise PlacementError(f"the platform has only MIG pools for this request; ask for a mig_partition. GPU "
                                 f"pools: {_describe(pools)}")
    if request.spot is not None:
        wanted_capacity = "spot" if request.spot else "onDemand"
        candidates = _keep(candidates, lambda pool, offer: wanted_capacity in offer.capacity_types)
        if not candidates:
            raise PlacementError(f"the platform has no {'Spot' if request.spot else 'on-demand'} pool for this "
                                 f"request; GPU pools: {_describe(pools)}")
    fitting = _keep(candidates, lambda pool, offer: request.gpus <= offer.per_node)
    if not fitting:
        largest = max(offer.per_node for _, offers in candidates.values() for offer in offers)
        raise PlacementError(f"{request.gpus} GPUs is more than any matching node has (at most {largest} per node); "
                             f"GPU pools: {_describe(pools)}")
    requests: dict[str, str] = {}
    if request.cpu is not None or request.memory is not None:
        cpu = math.ceil(_amount(request.cpu, "cpu") * 1000) if request.cpu is not None else 0
        memory = math.ceil(_amount(request.memory, "memory")) if request.memory is not None else 0
        requests = {name: str(value) for name, value in (("cpu", request.cpu), ("memory", request.memory))
                    if value is not None}
        roomy = _keep(fitting, lambda pool, offer: _has_room(offer, cpu, memory))
        if not roomy:
            sizes = [offer for _, offers in fitting.values() for offer in offers]
            best = max(sizes, key=lambda offer: (offer.room[0] or 0, offer.room[1] or 0))
            raise PlacementError(f"{_cpus(cpu)} CPUs and {_gib(memory)} of memory is more than any matching node gives "
                                 f"pods (the most: {best.vm_size} gives {_cpus(best.room[0] or 0)} CPUs and "
                                 f"{_gib(best.room[1] or 0)}, after what AKS reserves and gpu-aks's DaemonSets ask); GPU "
                                 f"pools: {_describe(pools)}")
        fitting = roomy
    # On-demand before Spot, then the tightest fit, then by name: the same answer every time.
    chosen = {name: (pool, min(offers, key=lambda offer: offer.per_node)) for name, (pool, offers) in fitting.items()}
    name, (pool, offer) = min(chosen.items(), key=lambda item: (_spot_only([item[1][1]]), item[1][1].per_node,
                                                                item[0]))
    node_selector = dict(pool.node_selector)
    if any(other not in fitting[name][1] for other in pool.offers) and offer.vm_size:
        # The pool may bring sizes that cannot serve the request (another GPU, too few per node): pin
        # the pod to the size chosen, so a NAP NodePool provisions that one for it.
        node_selector[INSTANCE_TYPE_LABEL] = offer.vm_size
    if request.spot is not None and len(offer.capacity_types) > 1 and pool.backend == "nodePool":
        # A NodePool that buys both takes Spot first: pin the capacity type the request asks for.
        node_selector[CAPACITY_TYPE_LABEL] = _KARPENTER_CAPACITY["spot" if request.spot else "onDemand"]
    return Placement(pool=name, resource=str(offer.resource), gpus=request.gpus,
                     tolerations=[dict(t) for t in pool.tolerations], node_selector=node_selector,
                     share=_share(pool), requests=requests, gpu_model=offer.gpu_model)


def _has_room(offer: _Offer, cpu_milli: int, memory: int) -> bool:
    """Whether one node of the offer gives pods that much (a figure the contract does not know is not judged)."""
    cpu_room, memory_room = offer.room
    return (cpu_room is None or cpu_milli <= cpu_room) and (memory_room is None or memory <= memory_room)
