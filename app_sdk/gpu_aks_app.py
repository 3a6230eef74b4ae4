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

What it reads (each GPU pool's backend, Spot flag, node counts, taints or tolerations and node selector, labels,
sharing, and each offer's size, model, resource, count per node, MIG partition, capacity types and price) it
refuses as gpu-aks's own contract reader does, and a contract whose two versions say different things of it
is refused too: `place()` never pins a pod where `gpu-aks-explain --platform` refuses the contract. The rest
(keys it does not read: azureName, devicePlugin, exporter, gpuMemoryGiB, a price's currency and date, version
2's single-size fields where a pool has `offers`, the CPU and system pools; and keys left out, read as their
defaults) is the contract reader's alone.

One file, standard library only, so it can be vendored; or installed with
`pip install "gpu-aks-app @ git+https://github.com/<org>/gpu-aks@main#subdirectory=app_sdk"`
(a release tag `@v<version>` once one exists).
`gpu_aks_app_testing` (same package) mocks a platform for the app stack's own tests.
"""

from __future__ import annotations

import math
import re
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
POOL_KEYS = ("role", "backend", "offers", "spot", "taints", "labels", "sharing", "minCount", "maxCount")
OFFER_KEYS = ("vmSize", "capacityTypes", "gpuModel", "resource", "perNode", "migPartition", "hourlyPrice",
              "allocatable")
#: The contract reader's bounds on what this helper reads (`gpu_aks_policies.limits` MAX_POOL_COUNT,
#: MAX_CONTRACT_HOURLY_PRICE, MAX_SHOWN_CHARS; tests hold them equal): the helper refuses what the reader refuses
#: of the keys it reads, so `place()` never pins a pod on a contract the explainer and `--platform` refuse.
#: Keys it does not read (azureName, devicePlugin, exporter, gpuMemoryGiB, a price's currency and date) are the
#: reader's alone: a contract damaged only there is still placed (tests pin which).
_MAX_POOL_COUNT = 1_000_000
_MAX_HOURLY_PRICE = 10_000
_MAX_SHOWN_CHARS = 80
#: `gpu_aks_policies.limits.MAX_NODE_AMOUNT`: the most an `allocatable` figure may say.
_MAX_NODE_AMOUNT = 2**50
#: `gpu_aks_policies.limits.MAX_QUANTITY_CHARS`: a request's quantity longer than this (or a number of more
#: digits) is refused before any digit is converted (Python refuses ints of over 4300 digits).
_MAX_QUANTITY_CHARS = 64
SHARING_STRATEGIES = ("timeSlicing", "mps")
#: What backs a pool, and how its nodes are bought (`gpu_aks_policies.pools.model` PoolBackend, CapacityType).
BACKENDS = ("agentPool", "nodePool")
CAPACITY_TYPES = ("onDemand", "spot")
FLAGS = (True, False)
#: A key the contract leaves out, where that differs from null.
_ABSENT: Any = object()
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
    #: The list prices of one node an hour (on-demand, Spot), either None where unknown.
    hourly_price: tuple[float | None, float | None] = (None, None)
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
    #: The node-count range (None where the contract gives none), and whether every node is a Spot VM.
    counts: tuple[int | None, int | None] = (None, None)
    spot: bool = False
    #: The nodes' labels that gpu-aks sets (both versions write them; the accelerator ones select nodes).
    labels: tuple[tuple[str, str], ...] = ()

    def says(self) -> tuple[Any, ...]:
        """What the pool says of where a pod lands, whichever version wrote it: the tolerations, the node
        selector and the labels as sets (a writer may order them as it likes), the node counts and Spot too,
        which the contract reader compares as well; not the accelerator, which version 3 gives only where the
        nodes carry it."""
        return (self.backend, self.offers, frozenset(frozenset(t.items()) for t in self.tolerations),
                frozenset(self.node_selector.items()), self.replicas, self.strategy, self.counts, self.spot,
                frozenset(self.labels))


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


def _pool_named(name: str) -> str:
    """A pool's name as a message names it, as `gpu_aks_policies.pools.model.pool_named` does (tests hold the
    two equal): a contract may hold any text as a pool's name, so it is cut to _MAX_SHOWN_CHARS, the rest
    counted, and kept on one line with no control character or workflow command (`##[`, a leading `::`).
    Its own small copy because this file is standard library only, to be vendored alone."""
    text = name if len(name) <= _MAX_SHOWN_CHARS else f"{name[:_MAX_SHOWN_CHARS]}…({len(name)} characters)"
    if not text.isprintable():  # False for every control, separator and format character
        text = "".join(char if char.isprintable() else "\\n" if char == "\n" else
                       f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}" for char in text)
    if text.lstrip().startswith("::"):
        text = text.replace(":", "\\x3a", 1)
    return text.replace("##[", "##\\x5b")


def _quoted(value: Any) -> str:
    """A value from a request or a contract, quoted in a message: cut and escaped as a pool's name is."""
    if isinstance(value, int) and abs(value) >= 10**_MAX_QUANTITY_CHARS:  # never a bool: True is 1
        # repr() of an int of over 4300 digits raises; its size is what the message needs.
        return f"a{' negative' if value < 0 else ''} number of about {int(value.bit_length() * math.log10(2))} digits"
    return f"'{_pool_named(value)}'" if isinstance(value, str) else _pool_named(repr(value))


def _count(value: Any, key: str, least: int = 0, most: int = _MAX_POOL_COUNT) -> int | None:
    """A count the contract reader reads (`fields.COUNT`, `REPLICAS`, `OPTIONAL_AMOUNT` with `most`
    _MAX_NODE_AMOUNT): null, or a whole number from `least` to `most` (a StackReference's 3.0 too)."""
    if value is None:
        return None
    count = _whole(value)
    if count is None or not least <= count <= most:
        raise ContractError(f"{key}: expected a whole number from {least} to {most}, or null; got "
                            f"{_kind(value) if count is None else count}")
    return count


def _price(value: Any, key: str) -> tuple[float | None, float | None]:
    """An offer's `hourlyPrice` as the contract reader reads it (`OfferPrice`): null, or prices from 0 to
    _MAX_HOURLY_PRICE or null, Spot at or below on-demand (Spot's default max price is the on-demand
    price: learn.microsoft.com/azure/virtual-machines/spot-vms, "Pricing")."""
    if value is None:
        return None, None
    price = _mapping(value, key)
    read = []
    for name in ("onDemand", "spot"):
        each, number = price.get(name), _finite(price.get(name))
        if each is not None and (number is None or not 0 <= number <= _MAX_HOURLY_PRICE):
            raise ContractError(f"{key}.{name}: expected a price from 0 to {_MAX_HOURLY_PRICE}, or null")
        read.append(None if number is None else float(number))
    on_demand, spot = read
    if spot is not None and on_demand is not None and spot > on_demand:
        raise ContractError(f"{key}.spot: {spot:g} is above onDemand {on_demand:g}; Spot never costs more than "
                            "on-demand (its default max price is the on-demand price)")
    return on_demand, spot


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


def _capacity(value: Any, spot: bool, key: str) -> tuple[str, ...]:
    """How an offer's nodes may be bought (`capacityTypes`: a non-empty list of distinct CAPACITY_TYPES, as
    the contract reader reads it); without them (a contract written before gpu-aks 0.4) as its pool's `spot`
    says."""
    if value is _ABSENT:
        return ("spot",) if spot else ("onDemand",)
    kinds = _list(value, key)
    if not kinds or len(set(map(str, kinds))) != len(kinds) or not all(kind in CAPACITY_TYPES for kind in kinds):
        raise ContractError(f"{key}: expected a non-empty list of {' and '.join(CAPACITY_TYPES)}, each once")
    return tuple(kinds)


def _choice(value: Any, key: str, choices: tuple[Any, ...]) -> Any:
    """One of `choices` (a backend, a flag: null is neither, as the contract reader reads them)."""
    # By type too: 1 == True in Python, but JSON's 1 is no flag and its true no backend.
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        raise ContractError(f"{key}: expected {' or '.join(map(str, choices))}")
    return value


def _sharing(value: Any, key: str) -> tuple[int, str | None]:
    """(replicas, strategy) of the contract's `sharing` (null: no sharing), refused as the contract reader
    refuses it (`PoolSharing`): replicas a whole number from 1 to _MAX_POOL_COUNT, strategy timeSlicing or mps."""
    if value is None:
        return 1, None
    sharing = _mapping(value, key)
    if "replicas" not in sharing or "strategy" not in sharing:
        raise ContractError(f"{key}: expected an object with strategy and replicas")
    replicas = _count(sharing["replicas"], f"{key}.replicas", least=1) or 1
    strategy = sharing["strategy"]
    if strategy not in SHARING_STRATEGIES:
        raise ContractError(f"{key}.strategy: expected {' or '.join(SHARING_STRATEGIES)}")
    return (replicas, strategy) if replicas > 1 else (1, None)


def _v3_pool(name: str, raw: Any) -> _Pool | None:
    """A version 3 pool (`pools.<name>`, the pool model's JSON), or None for a pool that is not a GPU pool."""
    key = f"pools.{_pool_named(name)}"
    pool = _mapping(raw, key)
    if pool.get("role") not in ("system", "cpu", "gpu"):
        raise ContractError(f"{key}.role: expected system, cpu or gpu")
    if pool.get("role") != "gpu":
        return None
    spot = _choice(pool.get("spot", False), f"{key}.spot", FLAGS)
    offers = []
    for index, item in enumerate(_list(pool.get("offers"), f"{key}.offers")):
        offer = _mapping(item, f"{key}.offers[{index}]")
        resource = _text(offer.get("resource"), f"{key}.offers[{index}].resource")
        if not resource:
            continue  # a CPU size of the pool: no GPU to ask for
        offers.append(_Offer(_text(offer.get("vmSize"), f"{key}.offers[{index}].vmSize"),
                             _text(offer.get("gpuModel"), f"{key}.offers[{index}].gpuModel"), resource,
                             _count(offer.get("perNode"), f"{key}.offers[{index}].perNode") or 0,
                             _text(offer.get("migPartition"), f"{key}.offers[{index}].migPartition"),
                             _capacity(offer.get("capacityTypes", _ABSENT), spot, f"{key}.offers[{index}].capacityTypes"),
                             _price(offer.get("hourlyPrice"), f"{key}.offers[{index}].hourlyPrice"),
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
    replicas, strategy = _sharing(pool.get("sharing"), f"{key}.sharing")
    counts = (_count(pool.get("minCount"), f"{key}.minCount"), _count(pool.get("maxCount"), f"{key}.maxCount"))
    return _Pool(_choice(pool.get("backend", "agentPool"), f"{key}.backend", BACKENDS), tuple(offers), tuple(tolerations),
                 {**selector, POOL_LABEL: name}, replicas, strategy, labels.get(GPU_MODEL_LABEL), counts, spot,
                 tuple(labels.items()))


def _room(value: Any, key: str) -> tuple[int | None, int | None]:
    """(CPU millicores, memory bytes) one node gives pods: its allocatable less gpu-aks's DaemonSets there."""
    if value is None:
        return None, None
    allocatable = _mapping(value, key)
    def amount(name: str, value: Any) -> int | None:
        return _count(value, f"{key}.{name}", most=_MAX_NODE_AMOUNT)
    cpu, memory = (amount("cpuMillicores", allocatable.get("cpuMillicores")),
                   amount("memoryBytes", allocatable.get("memoryBytes")))
    daemon_cpu = amount("daemonSetCpuMillicores", allocatable.get("daemonSetCpuMillicores"))
    daemon_memory = amount("daemonSetMemoryBytes", allocatable.get("daemonSetMemoryBytes"))
    return (None if cpu is None else max(0, cpu - (daemon_cpu or 0)),
            None if memory is None else max(0, memory - (daemon_memory or 0)))


#: apimachinery's quantity grammar (`pkg/api/resource/quantity.go`, `ParseQuantity`), read as
#: `gpu_aks_policies.quantities` reads it: `<sign><number><suffix>`, the suffix binary SI, decimal SI or a
#: decimal exponent. A copy, since this file is the standard library only; tests/test_app_helper.py holds
#: the two readers to the same amounts and refusals.
_QUANTITY = re.compile(
    r"(?P<sign>[+-])?(?P<number>[0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_SCALES: dict[str, int | Fraction] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
#: `gpu_aks_policies.quantities`: what Go's `strings.TrimSpace` trims, and the exponents read exactly.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"
_MAX_EXPONENT = 60


def _amount(value: Any, what: str) -> Fraction:
    """A request's quantity ("500m", "0.5", "64Gi", "1e3", or a number such as 10) exactly, as the pack reads it;
    PlacementError naming `what` when it is none, negative, or longer than any quantity (checked before a digit
    is converted)."""
    text = value.strip(_GO_SPACE) if isinstance(value, str) else None  # as the API server trims, before all else
    if (text is not None and len(text) > _MAX_QUANTITY_CHARS
            or isinstance(value, int) and abs(value) >= 10**_MAX_QUANTITY_CHARS):
        raise PlacementError(f"{what} must be a Kubernetes quantity of at most {_MAX_QUANTITY_CHARS} characters, got "
                             f"{_quoted(value)}")
    number = _finite(value)
    if number is not None and number >= 0:
        return Fraction(number)
    match = _QUANTITY.fullmatch(text) if text is not None else None
    if match:
        amount = Fraction(match["number"].rstrip(".") or "0")
        exponent = int(match["exponent"]) if match["exponent"] is not None else None
        if (match["sign"] != "-" or not amount) and (exponent is None or abs(exponent) <= _MAX_EXPONENT):
            return amount * (Fraction(10) ** exponent if exponent is not None
                             else _SCALES[match["binary"] or match["decimal"] or ""])
    raise PlacementError(f"{what} must be a Kubernetes quantity such as 10, \"500m\" or \"64Gi\", got {_quoted(value)}")


def _cpus(milli: int) -> str:
    """Millicores as the pack writes them ("3.86"): `gpu_aks_policies.pod_requests.cpus`, copied to keep this file
    standard library only (tests/test_app_helper.py holds the two equal)."""
    whole, part = divmod(milli, 1000)
    cut = _whole_part(whole)
    if cut is not None:
        return cut
    return f"{whole}.{part:03d}".rstrip("0") if part else str(whole)


def _gib(amount: int) -> str:
    """Bytes as the pack writes them ("22.97 GiB", rounded down): `gpu_aks_policies.pod_requests.gib`'s copy."""
    hundredths = amount * 100 // 2**30
    cut = _whole_part(hundredths // 100)
    if cut is not None:
        return f"{cut} GiB"
    return f"{hundredths // 100}.{hundredths % 100:02d}".rstrip("0").rstrip(".") + " GiB"


def _whole_part(whole: int) -> str | None:
    """`gpu_aks_policies.pod_requests._whole_part`'s copy: a whole part of 24 digits or more, cut."""
    if whole < 10**24:
        return None
    text = str(whole)
    return f"{text[:8]}…({len(text)} digits)"


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
    key = f"gpuPools.{_pool_named(name)}"
    pool = _mapping(raw, key)
    spot = _choice(pool.get("spot", False), f"{key}.spot", FLAGS)
    offers = []
    for index, offer in enumerate(_v2_offers(pool)):
        at = f"{key}.offers[{index}]"
        resource = offer.get("resource") if "resource" in offer else pool.get("gpuResource")
        offers.append(_Offer(_text(offer.get("vmSize"), f"{at}.vmSize"), _text(offer.get("gpuModel"), f"{at}.gpuModel"),
                             _text(resource, f"{at}.resource", optional=False),
                             _count(offer.get("perNode"), f"{at}.perNode") or 0,
                             _text(offer.get("migPartition"), f"{at}.migPartition"),
                             _capacity(offer.get("capacityTypes", _ABSENT), spot, f"{at}.capacityTypes"),
                             _price(offer.get("hourlyPrice"), f"{at}.hourlyPrice")))
    tolerations = tuple(_texts(item, f"{key}.tolerations[{index}]")
                        for index, item in enumerate(_list(pool.get("tolerations"), f"{key}.tolerations")))
    replicas, strategy = _sharing(pool.get("sharing"), f"{key}.sharing")
    accelerator = pool.get("accelerator")
    counts = (_count(pool.get("minCount"), f"{key}.minCount"), _count(pool.get("maxCount"), f"{key}.maxCount"))
    return _Pool(_choice(pool.get("kind", "agentPool"), f"{key}.kind", BACKENDS), tuple(offers), tolerations,
                 _texts(pool.get("nodeSelector"), f"{key}.nodeSelector"), replicas, strategy,
                 accelerator if isinstance(accelerator, str) else None, counts, spot,
                 tuple(_texts(pool.get("labels", {}), f"{key}.labels").items()))


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
                shown = _pool_named(name)
                raise ContractError(f"pools.{shown} and gpuPools.{shown} disagree: the contract's version 3 and version 2 "
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


def _finite(value: Any) -> int | float | None:
    """A number read from the contract, or None where it is none: JSON's true is no number (though Python
    counts it as 1), nor are NaN and the infinities. (This package stands alone, so it does not import
    `gpu_aks_policies.limits.is_finite_number`; this is the same test.)"""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if isinstance(value, int) or math.isfinite(value) else None


def _whole(value: Any) -> int | None:
    """A count read from the contract as an int, or None where it is none: numbers read through a
    StackReference arrive as floats (1 -> 1.0), and a damaged contract may hold NaN, an infinity or
    text, which `int()` would raise on (the same test as `gpu_aks_policies.limits.is_whole`)."""
    number = _finite(value)
    if number is None or isinstance(number, float) and not number.is_integer():
        return None
    return int(number)


def _per_node(pool: _Pool) -> int:
    """The most one node of the pool advertises, over its offers."""
    return max((offer.per_node for offer in pool.offers), default=0)


def _describe_offers(pool: _Pool) -> str:
    if len(pool.offers) == 1:
        return _pool_named(str(pool.offers[0].gpu_model))
    return " or ".join(f"{_pool_named(str(offer.gpu_model))} x{offer.per_node}" for offer in pool.offers)


def _share(pool: _Pool) -> str | None:
    """What one share of a shared pool is: "1/4 of a T4, time-sliced"."""
    if pool.replicas == 1:
        return None
    how = "shared through MPS" if pool.strategy == "mps" else "time-sliced"
    first = pool.offers[0]
    model = _pool_named(first.gpu_model or "GPU")
    device = f"a MIG {_pool_named(first.mig_partition or '')} slice of {_a(model)}" if first.mig_partition else _a(model)
    return f"1/{pool.replicas} of {device}, {how}"


def _a(model: str) -> str:
    return f"a{'n' if model[:1] in 'AEFHILMNORSX' else ''} {model}"


def _capacity_text(pool: _Pool) -> str:
    share = _share(pool)
    return f"{_per_node(pool)} shares per node, each {share}" if share else f"{_per_node(pool)} per node"


def _describe(pools: Mapping[str, _Pool]) -> str:
    def mig(pool: _Pool) -> str:
        partition = pool.offers[0].mig_partition
        return f", MIG {_pool_named(partition)}" if partition else ""
    return ", ".join(f"{_pool_named(name)} ({_describe_offers(pool)}{mig(pool)}{_buying(pool)}, {_capacity_text(pool)})"
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
        raise PlacementError(f"gpus must be a whole number of at least 1, got {_quoted(request.gpus)}: GPUs are whole "
                             "devices (ask for a MIG partition to share one)")
    pools = _pools(platform)
    if not pools:
        raise PlacementError("the platform has no GPU pools")
    # Each pool with the offers (VM sizes) that can still serve the request.
    candidates: Candidates = {name: (pool, list(pool.offers)) for name, pool in pools.items()}
    if request.pool is not None:
        if request.pool not in pools:
            raise PlacementError(f"the platform has no GPU pool {_quoted(request.pool)}; GPU pools: {_describe(pools)}")
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
