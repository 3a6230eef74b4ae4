"""Which GPU pools of a platform a pod lands on, and for every other pool, why not.

The platform is the outputs contract of a gpu-aks stack (`pulumi stack output --json`, the
`outputs` of `python -m tools.preview STACK --json`, or the `gpuPools` map alone). A pod is judged
as the scheduler will see it: after the API server's own checks (a pod it refuses lands nowhere),
after the admission plugins (ExtendedResourceToleration, namespace default tolerations and node
selectors), with what its controller adds. Shared by the explainer and the checker's
`gpu-pods-fit-a-pool`. No Pulumi imports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cached_property
from typing import Any

from .admission import WRITTEN, Admitted, admit, describe
from .catalog import (
    ACCELERATOR_LABEL,
    GPU_PARTITION_LABEL,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    RETIRED_ACCELERATORS,
    SPOT_LABEL,
    sharing_name,
    sharing_phrase,
)
from .contract import ContractError, PlatformContract
from .demand import GpuSharing, amount_of, amount_verdicts, gpu_demand
from .documents import DocumentError, Limits, load_json, read_file, safe_text
from .findings import Finding
from .limits import MAX_LISTED, MAX_SHOWN_CHARS, clipped
from .node_labels import SKU_GPU_MANUFACTURER_LABEL, NodeKind, every_node_carries, node_kinds
from .pod_requests import PodRequests, pod_requests
from .podspecs import (
    ABSENT,
    GpuAsk,
    PodSpec,
    UndecidableError,
    as_list,
    as_mapping,
    asks_by_container,
    is_gpu_resource,
)
from .pools.model import CapacityType, Offer, Pool, PoolClaims, PoolSharing, spot_first
from .quantities import format_amount
from .resource_fit import fitting, shortfall_reasons, sizes_note
from .rule_config import FIT_A_POOL, RuleConfig
from .scheduling import (
    HARD_TAINT_EFFECTS,
    TaintSyntaxError,
    Tolerating,
    parse_taint,
    placement_problems,
    required_node_terms,
    selector_verdict,
    shown_taint,
    spread_keys,
    spread_verdict,
    toleration_for,
)
from .terminal import escape_field, escape_line
from .workloads import Context


class PlatformError(ValueError):
    pass


@dataclass(frozen=True)
class Platform:
    """The platform's GPU pools, as its typed outputs contract gives them: every reader here reads the
    pool model (`Pool`, version 3's `pools`) and a pool's GPUs from its `offers`, whatever
    backs the pool and whichever contract version wrote it."""

    contract: PlatformContract
    #: Each pool's kinds of node (offer x capacity type, with their labels), built once per platform: a
    #: checker run asks them for every pod.
    _kinds: dict[str, tuple[NodeKind, ...]] = field(default_factory=dict, compare=False, repr=False)

    def node_kinds(self, name: str) -> tuple[NodeKind, ...]:
        if name not in self._kinds:
            self._kinds[name] = tuple(node_kinds(name, self.pools[name], self.contract.location))
        return self._kinds[name]

    @cached_property
    def pools(self) -> Mapping[str, Pool]:
        """The GPU pools, as the pool model (read once from a contract of any version)."""
        return self.contract.gpu_pool_models()

    @property
    def mig_strategy(self) -> str:
        return self.contract.mig_strategy

    @property
    def gpu_namespace(self) -> str:
        """Where gpu-aks runs NVIDIA's device plugin (the contract's `gpuNamespace`)."""
        return self.contract.gpu_namespace

    def gpu_sharing(self) -> GpuSharing:
        """What the platform offers to share a GPU: the resources its MIG offers advertise
        (`nvidia.com/mig-<partition>` under the mixed strategy, `nvidia.com/gpu` under single), and
        whether a pool shares each GPU between pods (its `sharing`: time-slicing or MPS)."""
        mig_resources: set[str] = set()
        for name, pool in self.pools.items():
            for offer in pool.offers:
                # A pool's offers here are its GPU offers (`gpu_pool_models`): each has its resource.
                resource = offer.resource or ""
                if offer.mig_partition:
                    # Under `single` a slice is advertised as nvidia.com/gpu: name the pool that makes it one.
                    mig_resources.add(resource if resource.startswith(MIG_RESOURCE_PREFIX) else
                                      f"{resource} on pool {_named(name)}, where each is a {offer.mig_partition} slice")
        shared_pools = tuple(f"{offer.resource}: 1 on pool {_named(name)} ({share_of(offer, pool.sharing)})"
                             for name, pool in self.pools.items() if shares(pool.sharing)
                             for offer in pool.offers[:1])
        return GpuSharing(mig_resources=tuple(sorted(mig_resources)), shared_pools=shared_pools)

    def gpu_node_label(self) -> dict[str, str] | None:
        """A label with one value on every node of every GPU pool, for the node-selection advice: AKS's
        and gpu-aks's `accelerator: nvidia` where every pool's nodes carry it, else the Azure provider's
        `karpenter.azure.com/sku-gpu-manufacturer: nvidia` (NAP nodes), else None."""
        common: dict[str, str] | None = None
        for name in self.pools:
            carried = every_node_carries(self.node_kinds(name))
            common = carried if common is None else {k: v for k, v in common.items() if carried.get(k) == v}
        for key in (ACCELERATOR_LABEL, SKU_GPU_MANUFACTURER_LABEL):
            if common and key in common:
                return {"key": key, "value": common[key]}
        return None

    def gpu_taints(self) -> tuple[Mapping[str, str], ...]:
        """The NoSchedule taints that mark the platform's GPU pools (the Spot taint is not one)."""
        return gpu_pool_taints(text for pool in self.pools.values() for text in pool.taints)


def shares(sharing: PoolSharing | None) -> bool:
    """Whether a pool's sharing makes each device several shares (a contract may say 1 replica)."""
    return sharing is not None and sharing.replicas > 1


def _a(model: str) -> str:
    # "an A100 80GB", "an H100" (aitch), "a T4".
    return f"a{'n' if model[:1] in 'AEFHILMNORSX' else ''} {model}"


def _model(name: str) -> str:
    """A contract's GPU model as a message names it: any text (`--platform`), so cut as every quoted value is."""
    return clipped(name, MAX_SHOWN_CHARS, MAX_SHOWN_CHARS)


def _named(text: str) -> str:
    """A name or value from the contract or a manifest as a message quotes it (a pool's name, a VM size, a
    currency, a date, an object's name): any text, so cut and on one line, as every quoted value is."""
    return escape_field(text, MAX_SHOWN_CHARS)


def _device(offer: Offer, count: int = 1) -> str:
    """One (or `count`) of what the offer advertises, in words: "a T4", "a MIG 2g.20gb slice of an A100 80GB"."""
    model = _model(offer.gpu_model or "GPU")
    if offer.mig_partition:
        return (f"a MIG {offer.mig_partition} slice of {_a(model)}" if count == 1 else
                f"{count} MIG {offer.mig_partition} slices of {model} GPUs")
    return _a(model) if count == 1 else f"{count} {model} GPUs"


def share_of(offer: Offer, sharing: PoolSharing | None, amount: Fraction = Fraction(1)) -> str:
    """What `amount` of the offer's resource gives a pod on its pool: "a whole T4", "a MIG 2g.20gb
    slice of an A100 80GB", "1/4 of a T4, time-sliced"."""
    count = int(amount) if amount.denominator == 1 else 1
    if shares(sharing):
        assert sharing is not None
        share = f"1/{sharing.replicas} of {_device(offer)}, {sharing_phrase(sharing.strategy)}"
        return share if count == 1 else f"{count} shares, each {share}"
    if offer.mig_partition:
        return _device(offer, count)
    model = _model(offer.gpu_model or "GPU")
    return f"a whole {model}" if count == 1 else f"{count} whole {model} GPUs"


def _sharing_why(sharing: PoolSharing) -> str:
    if sharing.strategy == "mps":
        return (f"the pool shares each GPU {sharing.replicas} ways through NVIDIA's MPS daemon: the pod's memory and "
                f"compute are capped at 1/{sharing.replicas}, and the pods on a GPU share one fault domain")
    return (f"the pool shares each GPU {sharing.replicas} ways by time-slicing: the pods take turns on the whole GPU, "
            "with no memory or fault isolation between them")


def gpu_pool_taints(texts: Iterable[Any]) -> tuple[Mapping[str, str], ...]:
    """The taints, among GPU pools' `key=value:Effect` taints, that a GPU pod must tolerate: the
    NoSchedule ones other than the Spot taint AKS puts on Spot nodes (a pod chooses Spot on its
    own), each once. Text that is not a taint is skipped. The rules' `gpuTaints` and the admission
    policy are built from this."""
    taints: dict[tuple[str, str, str], Mapping[str, str]] = {}  # a dict keeps the order and stays linear
    for text in texts:
        try:
            taint = parse_taint(text)
        except TaintSyntaxError:
            continue
        if taint["key"] != SPOT_LABEL and taint["effect"] == "NoSchedule":
            taints.setdefault((taint["key"], taint["value"], taint["effect"]), taint)
    return tuple(taints.values())


def platform_from_outputs(raw: Any) -> Platform:
    """Accepts `pulumi stack output --json`, the offline preview's `--json` (its `outputs`), or the
    `gpuPools` map alone. Raises PlatformError saying what was expected (the typed contract's
    `from_json` checks every type, the counts included, and the contract's version)."""
    try:
        contract = PlatformContract.from_json(raw)
    except ContractError as error:
        raise PlatformError(str(error)) from None
    return Platform(contract)


# A platform outputs file is a few kilobytes; 8 MiB leaves room for any real contract.
PLATFORM_FILE_LIMITS = Limits(max_bytes=8 * 1024 * 1024)


def read_platform(path: str, limits: Limits = PLATFORM_FILE_LIMITS) -> Platform:
    try:
        return platform_from_outputs(load_json(read_file(path, limits), limits))
    except DocumentError as problem:
        raise PlatformError(problem.at(escape_line(path))) from None
    except PlatformError as error:  # the file's name stays on the message's line, whatever it holds
        raise PlatformError(f"{escape_line(path)}: {error}") from None


@dataclass(frozen=True)
class PoolVerdict:
    pool: str
    fits: bool
    reasons: tuple[str, ...]
    #: How it fits when that rests on something the pod did not write (admission, its controller).
    notes: tuple[str, ...] = ()
    #: What the pod gets on the pool when it fits, and why: a whole GPU, a MIG slice, a share of a
    #: GPU; Spot eviction; the wait while the pool brings up a node.
    gets: tuple[str, ...] = ()
    #: The offers the pod may land on when it fits: the pool's VM sizes, each with the capacity types,
    #: that its node selection admits and whose nodes have the GPUs it asks for.
    offers: tuple[Offer, ...] = ()


@dataclass(frozen=True)
class PodExplanation:
    kind: str
    name: str
    pod: PodSpec
    gpu_asks: Mapping[str, Fraction]
    gpu_claims: tuple[str, ...]
    verdicts: tuple[PoolVerdict, ...]
    #: Why the API server would refuse the pod outright (then it lands nowhere).
    refusals: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()
    #: What else puts it on GPU nodes without a count of GPUs (`gpuMarkers`: KAI, Run:ai, Volcano vGPU, HAMi).
    gpu_markers: tuple[str, ...] = ()
    #: Pool -> what a node of it may be, for pools that may bring several sizes or capacity types
    #: (a NAP NodePool: "one of H100 x1, A100 x1, Spot or on-demand").
    choices: Mapping[str, str] = field(default_factory=dict)
    #: `file:line` of the pod's spec, when the explanation came from a file.
    location: str = field(default="", compare=False)
    #: Why where it runs is not judged: its queue never admits it, or the queue's objects are not known; or it
    #: asks for nothing but claims not among the objects checked, which may be GPUs (`Claims.unresolved`).
    unjudged: str = ""
    #: Those claims ("ResourceClaimTemplate 'x' (claim 'y')"), when they are all it asks for.
    unresolved_claims: tuple[str, ...] = ()

    @property
    def asks_for_gpus(self) -> bool:
        """It lands on GPU nodes: the rules' own answer (`demand.GpuDemand.any`)."""
        return bool(self.gpu_asks or self.gpu_claims or self.gpu_markers)

    @property
    def lands_on(self) -> list[str]:
        return [] if self.refusals else [v.pool for v in self.verdicts if v.fits]


def pod_gpu_asks(pod: PodSpec, config: RuleConfig) -> dict[str, Fraction]:
    """What the pod asks of one node, per GPU resource: its app containers together, or its largest
    init container if that is more (init containers run one at a time, before the app)."""
    app: dict[str, Fraction] = {}
    init: dict[str, Fraction] = {}
    for ask, amount in _gpu_counts(pod, config):
        target = init if ask.container.role == "init" else app
        target[ask.resource] = max(target.get(ask.resource, Fraction(0)), amount) if target is init else \
            target.get(ask.resource, Fraction(0)) + amount
    return {r: max(app.get(r, Fraction(0)), init.get(r, Fraction(0))) for r in {*app, *init}}


def container_gpu_asks(pod: PodSpec, config: RuleConfig) -> dict[str, Fraction]:
    """The most any one container of the pod asks for, per GPU resource: NVIDIA's plugin hands out
    a shared pool's shares per container (`Allocate`), and refuses a container more than one."""
    most: dict[str, Fraction] = {}
    for ask, amount in _gpu_counts(pod, config):
        most[ask.resource] = max(most.get(ask.resource, Fraction(0)), amount)
    return most


def _gpu_counts(pod: PodSpec, config: RuleConfig) -> Iterator[tuple[GpuAsk, Fraction]]:
    """Each container's positive count of a GPU resource (its request, else its limit); ephemeral
    containers, undecidable asks and shares (Volcano vGPU, HAMi memory or cores: not a count of GPUs)
    are left out."""
    for result in asks_by_container(pod, config.gpu_resources):
        if isinstance(result, UndecidableError):
            continue
        for ask in result:
            if ask.container.role == "ephemeral" or is_gpu_resource(ask.resource, config.gpu_markers.resources):
                continue
            amount = amount_of(ask.request if ask.request is not ABSENT else ask.limit)
            if amount is not None and amount > 0:
                yield ask, amount


def _wanted(pod: Mapping[str, Any]) -> str:
    """The pod's required node-affinity expressions as a reason quotes them: the first MAX_LISTED, each cut,
    and a count of the rest. Every pool's reason quotes them, so whole they made the output grow as pools
    times expressions (issue 50: 16 times the output at 4 times the input)."""
    wanted: list[str] = []
    more = 0
    for term in required_node_terms(pod) or ():
        for expression in as_list(as_mapping(term).get("matchExpressions")):
            if len(wanted) == MAX_LISTED:
                more += 1
                continue
            expression = as_mapping(expression)
            values = ",".join(str(v) for v in as_list(expression.get("values")))
            text = f"{expression.get('key')} {expression.get('operator')} [{values}]".replace(" []", "")
            wanted.append(_named(text))
    return "; ".join(wanted) + (f"; and {more} more" if more else "")


def _where_from(key: str, pool: Pool) -> str:
    """Why a node of this pool never carries `key`, when it is another kind of node's label."""
    if key.startswith(("karpenter.sh/", "karpenter.azure.com/")) and pool.backend != "nodePool":
        return " (Karpenter sets it on node auto-provisioning (NAP) nodes only; this pool is an AKS AgentPool)"
    if key.startswith("kubernetes.azure.com/") and pool.backend == "nodePool":
        return " (AKS sets it on AgentPool nodes; this pool is a NAP NodePool, whose nodes Karpenter labels)"
    return ""


def _selector_reasons(pod: Mapping[str, Any], node_selector: Mapping[str, str], kinds: Sequence[NodeKind],
                      pool: Pool) -> list[str]:
    """Why no node the pool may bring passes the pod's node selection (each nodeSelector entry no node
    has, then the affinity; or that no one node has them all)."""
    reasons = []
    for key, value in node_selector.items():
        if any(kind.labels.known.get(key) == str(value) or key in kind.labels.unknown for kind in kinds):
            continue
        values = sorted({kind.labels.known[key] for kind in kinds if key in kind.labels.known})
        have = f"{key}={' or '.join(values)}" if values else f"no {key} label{_where_from(key, pool)}"
        reasons.append(f"its nodeSelector needs {key}={value}, but the pool's nodes have {have}")
    terms = required_node_terms(pod)
    if terms and not any(selector_verdict(pod, {}, kind.labels.known, kind.labels.unknown) is not False
                         for kind in kinds):
        # An expression's key may be anything a manifest holds (a map, a list): only strings name labels.
        where = "".join(dict.fromkeys(_where_from(key, pool) for key in sorted(_selected_keys(pod, {}))))
        reasons.append(f"its required node affinity ({_wanted(pod)}) matches no label of the pool's nodes{where}")
    if not reasons:
        reasons.append("no one node this pool may bring has every label its nodeSelector and node affinity ask for "
                       f"(it may bring {_node_kinds_text(kinds)})")
    return reasons


def _node_kinds_text(kinds: Sequence[NodeKind]) -> str:
    return ", ".join(dict.fromkeys(f"{_named(kind.offer.vm_size)} {_CAPACITY_WORDS.get(kind.capacity_type)}"
                                   for kind in kinds))


def _spread_reasons(pod: Mapping[str, Any], kinds: Sequence[NodeKind]) -> list[str]:
    """Why the nodes the pod's node selection admits still take it not: a `DoNotSchedule` topology spread over
    a label none of them carries (`scheduling.spread_keys`), which kube-scheduler's podtopologyspread filter
    answers "missing required label" on every such node, so the pod stays Pending."""
    carried = [key for key in dict.fromkeys(spread_keys(pod))
               if not any(key in kind.labels.known or key in kind.labels.unknown for kind in kinds)]
    reasons = [f"its topology spread over {_named(key)} is DoNotSchedule, and no node this pool may bring carries that "
               "label: kube-scheduler keeps the pod off every such node (podtopologyspread: \"missing required label\")"
               for key in carried[:MAX_LISTED]]
    if len(carried) > MAX_LISTED:
        reasons.append(f"and {len(carried) - MAX_LISTED} more DoNotSchedule spreads over labels its nodes lack")
    return reasons or ["no one node this pool may bring has both the labels its node selection asks for and every "
                       "label its DoNotSchedule topology spread is over"]


def _unplaced_reasons(pod: Mapping[str, Any], node_selector: Mapping[str, str], kinds: Sequence[NodeKind],
                      pool: Pool) -> list[str]:
    """Why no node the pool may bring takes the pod: its node selection admits none, or the ones it admits lack
    a label its topology spread needs."""
    admitted = [kind for kind in kinds
                if selector_verdict(pod, node_selector, kind.labels.known, kind.labels.unknown) is not False]
    return _spread_reasons(pod, admitted) if admitted else _selector_reasons(pod, node_selector, kinds, pool)


def _retired_requests(pod: Mapping[str, Any], node_selector: Mapping[str, str]) -> list[str]:
    """Accelerator values the pod selects that no Azure size has any more."""
    wanted: list[str] = [str(v) for v in node_selector.values()]
    for term in required_node_terms(pod) or []:
        for expression in as_list(as_mapping(term).get("matchExpressions")):
            expression = as_mapping(expression)
            if expression.get("operator") == "In":
                wanted += [str(v) for v in as_list(expression.get("values"))]
    return [f"no pool offers {value}: {RETIRED_ACCELERATORS[value]}" for value in dict.fromkeys(wanted)
            if value in RETIRED_ACCELERATORS]


def _tolerating(admitted: Admitted) -> Tolerating:
    return Tolerating((item.toleration, item.source == WRITTEN) for item in admitted.tolerations)


def _offered(offer: Offer) -> str:
    return f"MIG {offer.mig_partition} slices as {offer.resource}" if offer.mig_partition else \
        f"whole GPUs as {offer.resource}"


def _fitting_offers(asks: Mapping[str, Fraction], offers: Sequence[Offer]) -> list[Offer]:
    return [offer for offer in offers
            if all(offer.resource == resource and amount <= offer.per_node for resource, amount in asks.items())]


def _sharing_reasons(per_container: Mapping[str, Fraction], pool: Pool) -> list[str]:
    """A container asking for more than one share of a shared pool: NVIDIA's plugin, configured with
    `failRequestsGreaterThanOne` (gpu-aks always sets it), fails it at the kubelet (`internal/rm/rm.go`,
    "maximum request size for shared resources is 1"), since two shares may be one GPU's worth."""
    if not shares(pool.sharing):
        return []
    assert pool.sharing is not None
    shared = {offer.resource for offer in pool.offers}
    return [f"a container asks for {format_amount(amount)} {resource}, but this pool shares each GPU "
            f"{pool.sharing.replicas} ways ({sharing_name(pool.sharing.strategy)}) and gives a container at most one "
            "share: NVIDIA's device plugin refuses more (failRequestsGreaterThanOne), so the kubelet fails the pod; "
            "ask for 1 here, or for whole GPUs on an unshared pool"
            for resource, amount in per_container.items() if resource in shared and amount > 1]


def _what_it_gets(asks: Mapping[str, Fraction], pool: Pool, offers: Sequence[Offer]) -> list[str]:
    """What the pod gets on a pool it fits, from the `offers` it may land on, and why; then what may
    happen to it there."""
    gets: list[str] = []
    fitting = _fitting_offers(asks, offers) if asks else []
    if fitting:
        amount = sum(asks.values(), Fraction(0))
        what = [share_of(offer, pool.sharing, amount) + (f" on {_named(offer.vm_size)}" if len(fitting) > 1 else "")
                for offer in fitting]
        why = ""
        if shares(pool.sharing):
            assert pool.sharing is not None
            why = f" ({_sharing_why(pool.sharing)})"
        elif any(offer.mig_partition for offer in fitting):
            why = " (the pool's GPUs are split into MIG instances; each is isolated in hardware)"
        gets.append(f"gets {' or '.join(dict.fromkeys(what))}{why}")
    amount = sum(asks.values(), Fraction(0))
    priced = [offer for offer in dict.fromkeys(fitting or offers) if _dearest_rate(offer) is not None]
    if len(priced) > 2:
        # A NodePool of many sizes: its cheapest and its dearest node, not a line per size.
        def rate(offer: Offer) -> float:
            return _dearest_rate(offer) or 0.0

        priced = [min(priced, key=rate), max(priced, key=rate)]
        gets.append(f"its node is one of {len(dict.fromkeys(fitting or offers))} sizes; the cheapest and the dearest:")
    gets.extend(line for offer in priced for line in [_price_line(offer, amount)] if line)
    capacity = {kind for offer in (fitting or offers) for kind in offer.capacity_types}
    if "spot" in capacity:
        may = "may run" if "onDemand" in capacity else "runs"
        gets.append(f"{may} on Spot VMs: Azure can evict the node with 30 seconds' notice, stopping the pod mid-run")
    if pool.backend == "nodePool":
        gets.append(_provisioning_wait(asks, pool, fitting or offers))
    elif pool.min_count == 0:
        wait = "waits while the pool scales up from zero when no node has room: a new GPU node takes minutes"
        if any(offer.mig_partition for offer in pool.offers):
            # Azure/AKS#5161 (open): the autoscaler assumes nvidia.com/gpu and one GPU per node for MIG pools.
            wait += ", and the cluster autoscaler may not scale a MIG pool up from zero at all (Azure/AKS#5161)"
        elif shares(pool.sharing):
            wait += (", and the cluster autoscaler sizes a new node by its physical GPUs, not its shares, so it may "
                     "bring up more nodes than the pods need")
        gets.append(wait)
    return gets


def _provisioning_wait(asks: Mapping[str, Fraction], pool: Pool, offers: Sequence[Offer]) -> str:
    """How a NAP NodePool brings a node for the pod. Karpenter sizes a new node by its size's physical GPUs
    (karpenter-provider-azure pkg/providers/instancetype/instancetype.go, `computeCapacity`: `nvidia.com/gpu`
    is `gpuNvidiaCount(sku)`), not by the shares a time-sliced or MPS node advertises: a pod asking for more
    shares than any size has GPUs fits a node that is up, but Karpenter never launches one for it."""
    if shares(pool.sharing):
        shared = {offer.resource for offer in offers}
        asked = max((amount for resource, amount in asks.items() if resource in shared), default=Fraction(0))
        most = max((offer.gpus for offer in offers), default=0)
        if asked > most:
            return (f"lands only where a node already up has {format_amount(asked)} free shares: Karpenter sizes a new "
                    f"node by its physical GPUs, not its shares, and no size this pool may bring has {format_amount(asked)} "
                    f"(the most is {most}), so it never launches one for this pod; ask for at most {most} here")
    return "waits for node auto-provisioning when no node has room: a new GPU node takes minutes"


def _money(value: float) -> str:
    return f"{value:,.4f}".rstrip("0").rstrip(".") if value < 100 else f"{value:,.2f}"


def _dearest_rate(offer: Offer) -> float | None:
    """The most one node of the offer lists at an hour (Spot never above on-demand), or None."""
    price = offer.hourly_price
    if price is None:
        return None
    rates = [value for value in (price.on_demand, price.spot) if value is not None]
    return max(rates) if rates else None


def _price_line(offer: Offer, amount: Fraction) -> str:
    """What one node of the offer lists at an hour, at each capacity type the pod may get, and the pod's
    part of it (the share of the node's `resource` it asks for: GPUs, MIG slices or shares)."""
    price = offer.hourly_price
    if price is None:
        return ""
    rates = []
    for capacity in offer.capacity_types:
        value = price.spot if capacity == "spot" else price.on_demand
        if value is not None:
            rates.append((capacity, value))
        elif capacity == "spot" and price.on_demand is not None:
            rates.append((capacity, price.on_demand))  # Spot's default max price (-1): never above on-demand
    if not rates:
        return ""
    words = {"spot": "on Spot", "onDemand": "on-demand"}
    # The contract's text is input: one line each, whatever it holds.
    currency = _named(price.currency)

    def rate(capacity: str, value: float) -> str:
        bound = "at most " if capacity == "spot" and price.spot is None else ""
        return f"{bound}{_money(value)} {currency} an hour {words[capacity]}"

    listed = " or ".join(rate(capacity, value) for capacity, value in rates)
    if price.spot is None and "spot" in offer.capacity_types:
        listed += " (no Spot price known: Spot never costs more than on-demand)"
    line = f"its node ({_named(offer.vm_size or 'of unknown size')}) costs {listed}"
    if amount > 0 and offer.per_node:
        part = amount / offer.per_node
        shares = " or ".join(rate(capacity, float(part) * value) for capacity, value in rates)
        line += (f"; the pod asks for {format_amount(amount)} of the node's {offer.per_node} {offer.resource}, so its "
                 f"part is {part.numerator}/{part.denominator} of that: {shares}"
                 if part < 1 else "; the pod takes the whole node")
    return line + f" (list prices of {_named(price.as_of)}, before discounts; disks and egress not counted)"


def _gpu_reasons(asks: Mapping[str, Fraction], offers: Sequence[Offer]) -> list[str]:
    """Why no node the pool may bring has the GPUs the pod asks for (nothing when one has)."""
    if not asks or _fitting_offers(asks, offers):
        return []
    reasons = []
    for resource, amount in asks.items():
        serving = [offer for offer in offers if offer.resource == resource]
        if not serving:
            what = " or ".join(dict.fromkeys(map(_offered, offers))) or "no GPUs"
            reasons.append(f"it asks for {resource}, which this pool does not offer (it offers {what})")
            continue
        largest = max(serving, key=lambda offer: offer.per_node)
        if amount > largest.per_node:
            has = f"a node of this pool has {largest.per_node}" if len(offers) == 1 else \
                f"the largest node this pool may bring has {largest.per_node}"
            reasons.append(f"it asks for {format_amount(amount)} {resource} but {has} ({_named(largest.vm_size)})")
    if not reasons:
        reasons.append("no one VM size this pool may bring offers all of " +
                       ", ".join(f"{format_amount(amount)} {resource}" for resource, amount in sorted(asks.items())))
    return reasons


def _landing(pod: PodSpec, admitted: Admitted, asks: Mapping[str, Fraction],
             kinds: Sequence[NodeKind]) -> tuple[list[NodeKind], bool]:
    """The kinds of node the pool may bring (offer x capacity type, Spot first) that the pod's node
    selection does not rule out; and whether one of those surely passes it and has the GPUs asked for
    (False: only the live node's labels, a zone or a hostname, can tell)."""
    selected, certain = [], False
    for kind in kinds:
        verdict = selector_verdict(pod.spec, admitted.node_selector, kind.labels.known, kind.labels.unknown)
        if verdict is not False and spread_verdict(pod.spec, kind.labels.known, kind.labels.unknown):
            selected.append(kind)
            certain = certain or (verdict is True and (not asks or bool(_fitting_offers(asks, (kind.offer,)))))
    return selected, certain


def _offers_of(kinds: Sequence[NodeKind]) -> tuple[Offer, ...]:
    """The kinds' offers, each with the capacity types among the kinds (in the pool's offer order)."""
    capacities: dict[int, list[CapacityType]] = {}
    offers: dict[int, Offer] = {}
    for kind in kinds:
        offers.setdefault(id(kind.offer), kind.offer)
        capacities.setdefault(id(kind.offer), []).append(kind.capacity_type)
    return tuple(replace(offer, capacity_types=tuple(capacities[key])) for key, offer in offers.items())


def explain_pool(pod: PodSpec, admitted: Admitted, asks: Mapping[str, Fraction], claims: Sequence[str],
                 name: str, pool: Pool, tolerating: Tolerating | None = None,
                 per_container: Mapping[str, Fraction] | None = None, region: str | None = None,
                 kinds: Sequence[NodeKind] | None = None, requests: PodRequests | None = None,
                 claim_classes: Sequence[str] = ()) -> PoolVerdict:
    """`region`: the platform's location, which every node carries as topology.kubernetes.io/region;
    `kinds`: the pool's kinds of node, when the caller has them already (`Platform.node_kinds`); `requests`:
    what the pod asks of a node's CPU, memory and storage (`pod_requests`), judged against each offer's room."""
    reasons, notes = [], []
    taints = []
    for text in pool.taints:
        try:
            taints.append(parse_taint(text))
        except TaintSyntaxError:
            continue
    tolerating = tolerating or _tolerating(admitted)
    matches = [tolerating.first(taint) for taint in taints]
    untolerated = [taint for taint, (first, _) in zip(taints, matches, strict=True)
                   if first is None and taint.get("effect") in HARD_TAINT_EFFECTS]
    for taint in untolerated:
        fix = json.dumps(toleration_for(taint))
        if taint["key"] == SPOT_LABEL:
            reasons.append(f"it does not tolerate the Spot taint {shown_taint(taint)} that AKS puts on every Spot "
                           f"node; add the toleration {fix} if the pod may be evicted")
        else:
            reasons.append(f"it does not tolerate the taint {shown_taint(taint)}; add the toleration {fix}")
    for taint, (first, written) in zip(taints, matches, strict=True):
        if first is not None and not written:
            by = admitted.tolerations[first]
            notes.append(f"tolerates {shown_taint(taint)} through {by.source} ({describe(by.toleration)})")
    kinds = list(node_kinds(name, pool, region)) if kinds is None else kinds
    selected, certain = _landing(pod, admitted, asks, kinds)
    if not selected:
        reasons += _unplaced_reasons(pod.spec, admitted.node_selector, kinds, pool)
    offers = _offers_of(selected) if selected else pool.offers
    reasons += _extended_through_dra(asks, pool) or _gpu_reasons(asks, offers)
    gpu_fitting = [offer for offer in offers if not asks or _fitting_offers(asks, (offer,))]
    reasons += _room_reasons(requests, gpu_fitting or offers)
    reasons += _sharing_reasons(asks if per_container is None else per_container, pool)
    reasons += _claim_reasons(claims, claim_classes, pool)
    if reasons:
        return PoolVerdict(name, False, tuple(reasons), tuple(notes))
    if not certain:
        unseen = sorted({key for key in _selected_keys(pod.spec, admitted.node_selector)
                         if any(key in kind.labels.unknown for kind in selected)})
        notes.append(f"cannot tell offline: it selects {', '.join(unseen) or 'node fields'}, whose value only the "
                     "live node shows (the checker does not count this pool out)")
    if requests is not None and requests.unknown:
        notes.append(f"cannot tell offline whether its node has room: {escape_line(requests.unknown)} is not read (a "
                     "value not known yet, or a quantity past what the checker reads), so its CPU, memory and storage "
                     "are judged without it")
    landing = tuple(_with_room(requests, gpu_fitting))
    note = sizes_note(requests, gpu_fitting, landing) if requests is not None else ""
    if note:
        notes.append(note)
    if pool.dra is not None and (claims or asks):
        notes.append(_through_dra(pool.dra, claim_classes, asks))
    return PoolVerdict(name, True, (), tuple(notes), tuple(_what_it_gets(asks, pool, landing)), landing)


def _claim_reasons(claims: Sequence[str], classes: Sequence[str], pool: Pool) -> list[str]:
    """Whether the pool's GPUs serve the pod's DRA claims: a DRA pool (`Pool.dra`) serves its DeviceClasses'
    claims; a device-plugin pool publishes no devices, so a claim there is never allocated."""
    if not claims:
        return []
    if pool.dra is None:
        return ["it asks for GPUs through DRA claims, but this pool hands out its GPUs through NVIDIA's device plugin "
                "(nvidia.com/gpu) and publishes no devices to claims, so the claims are never allocated"]
    missing = [name for name in classes if name not in pool.dra.device_classes]
    if missing:
        return [f"its claims ask for the DeviceClass {', '.join(missing)}, which this pool's GPUs do not serve (it "
                f"serves {', '.join(pool.dra.device_classes) or 'none'})"]
    return []


def _extended_through_dra(asks: Mapping[str, Fraction], pool: Pool) -> list[str]:
    """On a DRA pool, a pod asking for an extended GPU resource is served only where the pool maps that resource
    to DRA (KEP-5004): no device plugin advertises it on the pool's nodes."""
    if pool.dra is None or not asks:
        return []
    unmapped = [resource for resource in asks if resource != pool.dra.extended_resource]
    if not unmapped:
        return []
    return [f"it asks for {', '.join(unmapped)}, but this pool hands out its GPUs through DRA claims (DeviceClasses "
            f"{', '.join(pool.dra.device_classes)}) and no device plugin advertises {unmapped[0]} there"
            + ("" if pool.dra.extended_resource else "; map it with gpu-aks:dra.extendedResource, or ask through a "
               "claim")]


def _through_dra(dra: PoolClaims, classes: Sequence[str], asks: Mapping[str, Fraction]) -> str:
    if classes:
        return (f"gets its GPUs through its claims ({', '.join(classes)}), which NVIDIA's DRA driver allocates from the "
                "GPUs it publishes for each node")
    return (f"its {', '.join(asks)} is served through DRA (KEP-5004): kube-scheduler makes a claim of the DeviceClass "
            f"whose extendedResourceName is {dra.extended_resource} and allocates the node's GPUs to it")


def _room_reasons(requests: PodRequests | None, offers: Sequence[Offer]) -> list[str]:
    """Why no node the pool may bring has room for the pod's CPU, memory and storage (`resource_fit`)."""
    return shortfall_reasons(requests, offers) if requests is not None and requests.any else []


def _with_room(requests: PodRequests | None, offers: Sequence[Offer]) -> list[Offer]:
    """The offers whose node has room for the pod (all of them when it asks nothing of CPU or memory)."""
    return list(offers) if requests is None or not requests.any else fitting(requests, offers)


def _selected_keys(pod: Mapping[str, Any], node_selector: Mapping[str, Any]) -> set[str]:
    """The label keys the pod's nodeSelector and required node affinity name."""
    keys = {key for key in node_selector if isinstance(key, str)}
    keys.update(key for term in required_node_terms(pod) or () for e in as_list(as_mapping(term).get("matchExpressions"))
                for key in [as_mapping(e).get("key")] if isinstance(key, str))
    return keys


def _hints(pod: PodSpec, config: RuleConfig, platform: Platform, refusals: Sequence[str]) -> list[str]:
    """For a fractional GPU: what serves it on this platform (a MIG slice, in the strategy's terms,
    or one share of a shared pool), the same offers the refusal's advice names."""
    if not any("fractions" in r for r in refusals):
        return []
    hints = []
    for name, pool in platform.pools.items():
        if shares(pool.sharing):
            assert pool.sharing is not None
            for offer in pool.offers[:1]:
                hints.append(f"pool {_named(name)} shares each GPU {pool.sharing.replicas} ways "
                             f"({sharing_name(pool.sharing.strategy)}): ask for {offer.resource}: 1 and get "
                             f"{share_of(offer, pool.sharing)}")
    for name, pool in platform.pools.items():
        for partition in dict.fromkeys(offer.mig_partition for offer in pool.offers if offer.mig_partition):
            if platform.mig_strategy == "mixed":
                hints.append(f"pool {_named(name)} offers MIG {partition} slices: ask for {MIG_RESOURCE_PREFIX}{partition}: 1")
            else:
                hints.append(f"pool {_named(name)} offers MIG {partition} slices under migStrategy single: ask for "
                             f"{GPU_RESOURCE}: 1 with nodeSelector {GPU_PARTITION_LABEL}: {partition}")
    return hints or ["this platform has no MIG or shared pools; ask for a whole GPU"]


def explain_pod(kind: str, name: str, pod: PodSpec, platform: Platform, config: RuleConfig,
                context: Context) -> PodExplanation:
    """Where the pod lands, judged with the rules' own code: its GPU demand (`demand.gpu_demand`,
    markers included), the amounts the API server refuses (`demand.amount_verdicts`, as
    `gpu-limits-are-whole-numbers`) and admission with the config's Namespaces (`admit`)."""
    asks = pod_gpu_asks(pod, config)
    demand = gpu_demand(pod, config, context)
    shares = [f"container '{ask.container.name}' asking for {ask.resource}" for ask in demand.asks
              if is_gpu_resource(ask.resource, config.gpu_markers.resources)]
    refusals = [f"container '{verdict.container.name}' {verdict.problem.text}"
                # The refusal's advice names what this platform offers, as the hints below do.
                for verdict in amount_verdicts(pod, config, platform.gpu_sharing()) if verdict.problem is not None]
    try:
        admitted = admit(pod, context, config.admission_plugins, config.namespaces)
    except UndecidableError:
        admitted = Admitted((), {}, ())
    refusals += admitted.refusals
    # Node selection and topology spread the API server refuses: the pod is never created (and such a
    # requirement matches no node, so no pool takes it either).
    refusals += placement_problems(pod.spec, pod.path)
    # CPU, memory and storage amounts it refuses (a negative one, one that is no quantity).
    requests = pod_requests(pod)
    refusals += requests.refused
    tolerating = _tolerating(admitted)
    per_container = container_gpu_asks(pod, config)
    if pod.unjudged_queue:
        # Kueue never admits it, or its queue's objects are not known: where it would run is not guessed.
        return PodExplanation(kind, name, pod, asks, demand.claims.gpu, (), tuple(refusals),
                              gpu_markers=(*demand.markers, *shares), unjudged=_queue_unjudged(pod))
    verdicts = tuple(explain_pool(pod, admitted, asks, demand.claims.gpu, pool_name, pool, tolerating, per_container,
                                  platform.contract.location, platform.node_kinds(pool_name), requests,
                                  demand.claims.classes)
                     for pool_name, pool in platform.pools.items())
    retired = _retired_requests(pod.spec, admitted.node_selector)
    if retired:
        verdicts = tuple(PoolVerdict(v.pool, False, (*retired, *v.reasons), v.notes) for v in verdicts)
    warnings = []
    for verdict in verdicts:
        for offer in verdict.offers if verdict.fits else ():
            slices = asks.get(offer.resource or "", Fraction(0))
            if offer.mig_partition and slices > 1:
                warnings.append(f"on {_named(verdict.pool)} the pod gets {format_amount(slices)} MIG {offer.mig_partition} "
                                "slices: MIG instances have no peer-to-peer or NVLink between them, so multi-GPU work "
                                "across them is slow or fails; ask a pool of whole GPUs for more than one")
                break
    choices = {verdict.pool: choice for verdict in verdicts if verdict.fits
               for choice in [node_choice(verdict.offers)] if choice}
    return PodExplanation(kind, name, pod, asks, demand.claims.gpu, verdicts, tuple(refusals), tuple(warnings),
                          tuple(_hints(pod, config, platform, refusals)), (*demand.markers, *shares), choices=choices,
                          **_unresolved_claims(demand.claims.unresolved, config, platform, tolerating)
                          if not (asks or demand.claims.gpu or demand.markers or shares) else {})


def _unresolved_claims(unresolved: Sequence[str], config: RuleConfig, platform: Platform,
                       tolerating: Tolerating) -> dict[str, Any]:
    """Why a pod whose only device asks are claims not among the objects checked is not judged: such a claim may ask
    for a GPU device class, and then the pod lands on GPU nodes (what `gpu-pods-are-analyzable` advises, in the
    checker's words), as `PodExplanation` fields; none when it names no such claim."""
    if not unresolved:
        return {}
    taints = platform.gpu_taints()
    missing = [shown_taint(taint) for taint in taints if tolerating.first(taint)[0] is None]
    must = (f"must tolerate {' or '.join(missing)}, which it does not" if missing else
            "tolerates their taints" if taints else "needs nothing more")
    named = [clipped(text, MAX_SHOWN_CHARS, MAX_SHOWN_CHARS) for text in unresolved[:MAX_LISTED]]
    if len(unresolved) > MAX_LISTED:
        named.append(f"{len(unresolved) - MAX_LISTED} more")
    # `render` puts the reason on one line (escape_line): the names are cut here, not escaped twice.
    unjudged = (f"it uses {', '.join(named)}, which is not among the objects checked: if it asks for a GPU device "
                f"class ({', '.join(config.gpu_device_classes)}), the pod lands on GPU nodes and {must}; if not, on CPU "
                "nodes. Check it together with its claim")
    return {"unjudged": unjudged, "unresolved_claims": tuple(named)}


def _queue_unjudged(pod: PodSpec) -> str:
    queued = pod.queued
    assert queued is not None
    if queued.blocked:
        return f"Kueue queue '{queued.queue}' never admits it: " + "; ".join(queued.blocked)
    return (f"it waits in Kueue queue '{queued.queue}', and {queued.unknown} is not among the objects checked nor the "
            "platform's queues: the flavor Kueue admits it to decides its tolerations and node selection")


#: Qualifiers of a GPU model that say its memory or form, not what it is ("A100 80GB", "H100 NVL").
_MODEL_QUALIFIER = re.compile(r"\d+GB|NVL|SXM|PCIe", re.IGNORECASE)
_WORD = re.compile(r"\S+")


def _model_family(model: str) -> str:
    """`model` without its trailing qualifiers ("A100 80GB SXM" -> "A100"), in one pass over its words.
    The contract's `gpuModel` is any string (`--platform`): the regex `\\s+(...)$` searched again after
    each qualifier it removed, and backtracked over every run of spaces, so an 80 kB model took minutes
    (issue 41). A model of qualifiers alone keeps its first word rather than becoming empty."""
    if model[-1:].isspace():
        return model  # the qualifier must end the model, as `$` asked
    words = list(_WORD.finditer(model))
    kept = len(words)
    while kept > 1 and _MODEL_QUALIFIER.fullmatch(words[kept - 1].group()):
        kept -= 1
    return model if kept == len(words) else model[:words[kept - 1].end()]


_CAPACITY_WORDS = {"spot": "Spot", "onDemand": "on-demand"}


def node_choice(offers: Sequence[Offer]) -> str:
    """What a node of a pool may be, when it may be more than one thing: "one of H100 x1, A100 x1,
    Spot or on-demand" (empty for a pool of one size and one capacity type)."""
    # Karpenter tries Spot first whatever order a contract lists them in.
    capacities = list(spot_first(capacity for offer in offers for capacity in offer.capacity_types))
    if len(offers) < 2 and len(capacities) < 2:
        return ""
    kinds = []
    for offer in offers:
        model = offer.gpu_model or offer.vm_size or "an unknown GPU"
        model = _model(_model_family(model))
        kinds.append(f"{model} x{offer.gpus_per_vm}" if offer.gpus_per_vm else model)
    words = " or ".join(_CAPACITY_WORDS.get(capacity, capacity) for capacity in capacities)
    sizes = list(dict.fromkeys(kinds))
    return f"{'one of ' if len(sizes) > 1 else ''}{', '.join(sizes)}, {words}"


def check_fit(pods: Sequence[PodSpec], kind: str, name: str, platform: Platform, config: RuleConfig,
              context: Context) -> list[Finding]:
    """`gpu-pods-fit-a-pool`: a GPU pod no pool of the platform would take, even once the API
    server accepts it. A pod the API server refuses (a request without a limit, say) is reported by
    the limits rules; whether it would fit a pool is told here too, so every problem of the pod is
    reported at once. The reasons read as the explainer's: per pool, one per line."""
    findings = []
    for pod in pods:
        if pod.own_nodes or pod.unjudged_queue:
            continue
        explanation = explain_pod(kind, name, pod, platform, config, context)
        # No other rule reads node selection, or CPU and memory amounts, as the API server does: its refusals
        # are said here, first, whether or not a pool would take the pod once accepted.
        refused = [*placement_problems(pod.spec, pod.path), *pod_requests(pod).refused]
        fits = any(verdict.fits for verdict in explanation.verdicts)
        if not explanation.asks_for_gpus or (fits and not refused):
            continue
        head = (f"{pod.where} fits no GPU pool of the platform, so it stays Pending forever"
                + (", even once the API server accepts it" if explanation.refusals and not refused else ""))
        lines = [f"{head}:"] if explanation.verdicts else [f"{head}: the platform has no GPU pools"]
        if refused:
            lines[0] = (f"{pod.where} is refused by the API server, so no pod is ever created"
                        + (":" if fits else ", and fits no GPU pool of the platform:"))
            lines.extend(f"refused: {problem}" for problem in refused)
        for verdict in explanation.verdicts if not fits else ():
            lines.append(f"not {_named(verdict.pool)}:")
            lines.extend(f"  - {reason}" for reason in verdict.reasons)
        findings.append(Finding(FIT_A_POOL, pod.path, "\n".join(lines)))
    return findings


def _landing_entry(verdict: PoolVerdict, choice: str) -> str:
    """A pool the pod lands on, with the VM sizes it can get there: "gput4 (Standard_NC4as_T4_v3)", "h100
    (Standard_NC40ads_H100_v5 or Standard_NC80adis_H100_v5): one of H100 x1, H100 x2, Spot or on-demand"."""
    sizes = " or ".join(dict.fromkeys(_named(offer.vm_size) for offer in verdict.offers))
    entry = f"{_named(verdict.pool)} ({sizes})" if sizes else _named(verdict.pool)
    return f"{entry}: {escape_line(choice)}" if choice else entry


def render(explanations: Sequence[PodExplanation]) -> str:
    lines = []
    for explanation in explanations:
        asks = ", ".join(f"{format_amount(a)} {r}" for r, a in explanation.gpu_asks.items())
        asks = ", ".join(filter(None, [asks, *explanation.gpu_claims])) or \
            ("no GPU count" if explanation.gpu_markers else
             f"what {escape_line(', '.join(explanation.unresolved_claims))} asks" if explanation.unresolved_claims else "no GPU")
        markers = explanation.gpu_markers
        marked = f"; {', '.join(markers)} put{'s' if len(markers) == 1 else ''} it on GPU nodes" if markers else ""
        where = f"{escape_line(explanation.location)}: " if explanation.location else ""
        lines.append(f"{where}{_named(explanation.kind)}/{_named(explanation.name)}: "
                     f"{escape_line(explanation.pod.where)} asks for {asks}{escape_line(marked)}")
        if explanation.refusals:
            lines.append("  lands on: nothing; the API server refuses this pod:")
            lines.extend(f"    - {refusal}" for refusal in explanation.refusals)
        elif explanation.unjudged:
            lines.append(f"  lands on: not judged: {escape_line(explanation.unjudged)}")
            lines.extend(f"  note: {note}" for note in explanation.pod.notes)
            continue
        elif not explanation.asks_for_gpus:
            # A CPU-only pod (a Ray head, a driver) belongs on CPU nodes: the GPU pools' taints keep it off
            # them, as they should, so there is nothing to tolerate.
            lines.append("  lands on: CPU nodes, not a GPU pool: it asks for no GPU, and the GPU pools' taints keep it "
                         "off their nodes (do not add the GPU toleration)")
            lines.extend(f"  note: {note}" for note in explanation.pod.notes)
            continue
        else:
            landing = [_landing_entry(verdict, explanation.choices.get(verdict.pool, ""))
                       for verdict in explanation.verdicts if verdict.fits]
            lines.append(f"  lands on: {'; '.join(landing) or 'no GPU pool'}")
        for verdict in explanation.verdicts:
            if verdict.fits and not explanation.refusals:
                lines.extend(f"  {_named(verdict.pool)}: {line}" for line in (*verdict.gets, *verdict.notes))
            elif not verdict.fits:
                lines.append(f"  not {_named(verdict.pool)}:")
                lines.extend(f"    - {reason}" for reason in verdict.reasons)
        lines.extend(f"  note: {note}" for note in explanation.pod.notes)
        lines.extend(f"  warning: {warning}" for warning in explanation.warnings)
        lines.extend(f"  hint: {hint}" for hint in explanation.hints)
    return safe_text("\n".join(lines))
