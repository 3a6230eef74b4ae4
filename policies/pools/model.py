"""The one pool model: a node pool as every reader sees it, whatever kind of pool it is and whichever
half of gpu-aks read it. Pure values, standard library only, so the light package has it.

Modelled on Karpenter's `cloudprovider.InstanceType{Requirements, Offerings, Capacity}`
(kubernetes-sigs/karpenter `pkg/cloudprovider/types.go`; Azure/karpenter-provider-azure
`pkg/providers/instancetype/`): one value per pool, computed once where the pool is read, that
scheduling, provisioning, price and quota all ask. A `Pool` carries its name and kind, its `Offer`s
(each a VM size with the GPUs it brings, the resource and how many of it a node advertises, MIG, the
capacity types it is bought at: what prices it), its node-count range, its taints and labels, its
subnets, whether gpu-aks's device plugin and exporter serve it, and what it asks of Azure's quota
(`CapacityNeed`).

`Pool` and `Offer` are also contract version 3's `pools.<name>` and `offers[]`, field for field: each
field carries its JSON name, kind and documentation (`gpu_aks_policies.fields`), as Karpenter's API types
carry theirs (`pkg/apis/v1/nodepool.go`); a field without a JSON name is the platform's own. The
platform's pool kinds (`components/pools/<kind>.py`) fill it from the stack settings, the pack's backend
readers from a resource (returning a `PoolReading` beside it), the outputs contract's reader from the
JSON; the contract, the device-plugin and exporter selectors, the admission policy, the smoke test,
cost, the preflight, the preview, `--platform`, the explainer and the doctor read only it. No reader
branches on the kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import MISSING, dataclass, field
from typing import Any, Literal, get_args

from ..catalog import GpuSku, SharingStrategy, vcpus_in_size_name
from ..fields import (
    COUNT,
    FLAG,
    LABELS,
    NAMES,
    OPTIONAL_AMOUNT,
    OPTIONAL_COUNT,
    OPTIONAL_TEXT,
    PRICE,
    REPLICAS,
    TAINTS,
    TEXT,
    ZONES,
    Choices,
    Kind,
    Object,
    Objects,
    Written,
    choice,
    json_field,
    one_of,
)
from ..limits import MAX_SHOWN_CHARS
from ..node_capacity import NodeResources
from ..terminal import escape_field

__all__ = ["Allocatable", "BACKEND_NAMES", "CAPACITY_TYPES", "OFFER_FIELDS", "POOL_FIELDS", "AsWritten", "CapacityNeed",
           "CapacityType", "DevicePluginOwner", "Offer", "OfferPrice", "Pool", "PoolBackend", "PoolClaims", "PoolReading",
           "PoolRole", "PoolSharing", "offer_field", "pool_field", "pool_named", "spot_first"]


def pool_named(name: object) -> str:
    """A pool's name as every message names it: a contract or a file may hold any text as a pool's name
    (megabytes, a line break that forges an output line, an escape sequence), so it is cut to
    MAX_SHOWN_CHARS, the rest counted, and kept on one line with no control (`terminal.escape_field`)."""
    return escape_field(str(name), MAX_SHOWN_CHARS)


#: Who runs the device plugin on a GPU pool's nodes: gpu-aks's DaemonSet, or something else.
DevicePluginOwner = Literal["gpu-aks", "external"]
#: What backs a pool (its backend; version 2 calls it `kind`): an AKS AgentPool (fixed size or
#: cluster-autoscaled), or a NAP / Karpenter `karpenter.sh/v1` NodePool, which may bring several VM sizes.
PoolBackend = Literal["agentPool", "nodePool"]
#: What the pool is for: the inline system pool, a CPU user pool, a GPU pool.
PoolRole = Literal["system", "cpu", "gpu"]
#: How a node's VMs are bought: Azure's on-demand or Spot priority (Karpenter's
#: `karpenter.sh/capacity-type` values `on-demand` and `spot`, spelled as the contract spells keys).
CapacityType = Literal["onDemand", "spot"]

#: Each backend (the resource a pool is written as; contract v2 calls it the pool's `kind`) as
#: messages name it (a recorded pool that moved to another backend, ...).
BACKEND_NAMES: dict[str, str] = {"agentPool": "an AKS agent pool", "nodePool": "a NAP (Karpenter) NodePool"}


def spot_first(capacity_types: Iterable[Any]) -> tuple[CapacityType, ...]:
    """Capacity types in the order Karpenter tries them: Spot before on-demand, whatever the list's
    order (kubernetes-sigs/karpenter: a NodePool's `capacity-type` requirement is a set, and Azure's
    provider orders offerings by price, Spot first)."""
    return tuple(sorted(dict.fromkeys(capacity_types), key=lambda kind: kind != "spot"))


CAPACITY_TYPES = Choices({"type": "array", "minItems": 1, "uniqueItems": True,
                          "items": {"type": "string", "enum": list(get_args(CapacityType))}},
                         "a non-empty list of " + " and ".join(get_args(CapacityType)))

#: The fields every pool shape shares (the model's `Pool`, contract version 2's `gpuPools` and
#: `cpuPools` entries): (kind, documentation, default).
POOL_FIELDS: Mapping[str, tuple[Kind, str, Any]] = {
    "name": (TEXT, "The pool's name in the stack config.", MISSING),
    "azureName": (OPTIONAL_TEXT, "The pool's name in Azure (the config name plus a hash of its create-only "
                                 "properties). Version 2.", None),
    "poolLabel": (LABELS, "The label every node of the pool carries (gpu-aks.io/pool), stable across replacements. "
                          "Version 2.", {}),
    "vmSize": (OPTIONAL_TEXT, "The VM size of the nodes.", None),
    "minCount": (COUNT, "Fewest nodes the autoscaler keeps.", None),
    "maxCount": (COUNT, "Most nodes the autoscaler adds.", None),
    "taints": (TAINTS, "The nodes' taints, as key=value:Effect.", ()),
    "labels": (LABELS, "The nodes' labels that gpu-aks sets.", {}),
    "spot": (FLAG, "Spot VMs (AKS adds the Spot label and taint).", False),
}


def pool_field(json_name: str, reader_needs: bool = False, **options: Any) -> Any:
    """A field of `POOL_FIELDS`. `options`: `default=MISSING` for a field the model always has, with
    what a reader takes when the JSON lacks it (`absent`)."""
    kind, doc, default = POOL_FIELDS[json_name]
    return json_field(json_name, kind, doc, options.pop("default", default), reader_needs=reader_needs, **options)


#: The fields of an offer, in version 2's GPU offers and the model's `Offer` alike: (kind, documentation, default).
OFFER_FIELDS: Mapping[str, tuple[Kind, str, Any]] = {
    "gpuModel": (OPTIONAL_TEXT, "The GPU model (\"T4\", \"A100 80GB\", \"H100\").", None),
    "gpuMemoryGiB": (COUNT, "Memory of one GPU in GiB.", None),
    "gpusPerVm": (COUNT, "Physical GPUs per VM.", None),
    "migPartition": (OPTIONAL_TEXT, "The MIG partition (1g.10gb ...), or null.", None),
    "capacityTypes": (CAPACITY_TYPES, "How the nodes are bought: onDemand, spot, or both (a NodePool with both "
                                      "tries Spot first and falls back to on-demand).", ("onDemand",)),
}


def offer_field(json_name: str) -> Any:
    kind, doc, default = OFFER_FIELDS[json_name]
    return json_field(json_name, kind, doc, default)


@dataclass(frozen=True)
class OfferPrice(Written):
    """The list price of one node of the offer, per hour, as the platform's price table gave it when the
    contract was written (Azure Retail Prices: pay-as-you-go, Linux; no discount)."""

    on_demand: float | None = json_field("onDemand", PRICE, "On-demand (pay-as-you-go) price of one node an hour, "
                                         "or null.", None)
    spot: float | None = json_field("spot", PRICE, "Spot price of one node an hour, or null (never above on-demand: "
                                    "Spot's default max price is the on-demand price).", None)
    currency: str = json_field("currency", TEXT, "The prices' currency (USD).", "USD")
    as_of: str = json_field("asOf", TEXT, "The date of the prices (YYYY-MM-DD).", "")

    def problems(self, key: str) -> list[str]:
        """A Spot price above the on-demand one is no price Azure charges: Spot's default max price (-1) is
        the on-demand price (learn.microsoft.com/azure/virtual-machines/spot-vms, "Pricing")."""
        if self.spot is not None and self.on_demand is not None and self.spot > self.on_demand:
            return [f"{key}.spot: {self.spot:g} is above onDemand {self.on_demand:g}; Spot never costs more than "
                    "on-demand (its default max price is the on-demand price)"]
        return []


@dataclass(frozen=True)
class PoolSharing(Written):
    """How the device plugin shares each GPU of the pool between pods."""

    strategy: SharingStrategy = json_field("strategy", one_of(SharingStrategy), "timeSlicing or mps.", "timeSlicing",
                                           reader_needs=True)
    replicas: int = json_field("replicas", REPLICAS, "How many pods share one GPU (or one MIG instance).", 1,
                               reader_needs=True)


@dataclass(frozen=True)
class Allocatable(Written):
    """What one node of the offer gives pods: its allocatable (the VM's vCPUs and memory less what AKS reserves on
    an AgentPool node, or what Karpenter plans a NAP node to keep; `node_capacity`), and what gpu-aks's own
    DaemonSets on the pool ask of it. A null figure is not known (a size gpu-aks's list lacks)."""

    cpu_millicores: int | None = json_field("cpuMillicores", OPTIONAL_AMOUNT, "The node's allocatable CPU, in "
                                            "millicores.", None)
    memory_bytes: int | None = json_field("memoryBytes", OPTIONAL_AMOUNT, "The node's allocatable memory, in bytes.",
                                          None)
    ephemeral_storage_bytes: int | None = json_field("ephemeralStorageBytes", OPTIONAL_AMOUNT, "The node's "
                                                     "allocatable ephemeral storage, in bytes; null when not known.",
                                                     None)
    pods: int | None = json_field("pods", OPTIONAL_COUNT, "How many pods the node runs at most (maxPods).", None)
    daemon_set_cpu_millicores: int = json_field("daemonSetCpuMillicores", COUNT, "What gpu-aks's DaemonSets on the "
                                                "pool ask of each node's CPU, in millicores.", 0)
    daemon_set_memory_bytes: int = json_field("daemonSetMemoryBytes", OPTIONAL_AMOUNT, "What they ask of its memory, "
                                              "in bytes.", 0)
    daemon_set_pods: int = json_field("daemonSetPods", COUNT, "How many of its pod slots they take.", 0)

    @property
    def node(self) -> NodeResources:
        return NodeResources(self.cpu_millicores, self.memory_bytes, self.ephemeral_storage_bytes, self.pods)

    @property
    def for_pods(self) -> NodeResources:
        """What the node has left for other pods once gpu-aks's DaemonSets run on it."""
        return self.node.less(NodeResources(self.daemon_set_cpu_millicores, self.daemon_set_memory_bytes or 0, 0,
                                            self.daemon_set_pods))

    @classmethod
    def of(cls, node: NodeResources, daemon_sets: NodeResources) -> Allocatable:
        return cls(node.cpu_milli, node.memory, node.ephemeral_storage, node.pods, daemon_sets.cpu_milli or 0,
                   daemon_sets.memory or 0, daemon_sets.pods or 0)


@dataclass(frozen=True)
class Offer(Written):
    """One VM size a pool may bring (version 3; Karpenter's `Offering`): how its nodes are bought (with the
    size, what prices it) and, on a GPU size, its GPUs and what one node advertises."""

    vm_size: str = json_field("vmSize", TEXT, "The VM size.", reader_needs=True, absent="")
    #: In the order tried (Spot first where both).
    capacity_types: tuple[CapacityType, ...] = offer_field("capacityTypes")
    gpu_model: str | None = offer_field("gpuModel")
    gpu_memory_gib: int | None = json_field("gpuMemoryGiB", OPTIONAL_COUNT, "Memory of one GPU in GiB; null on a CPU "
                                            "size.", None)
    gpus_per_vm: int | None = json_field("gpusPerVm", OPTIONAL_COUNT, "Physical GPUs per VM; null on a CPU size.", None)
    resource: str | None = json_field("resource", OPTIONAL_TEXT, "The extended resource a pod asks for (nvidia.com/gpu, "
                                      "or nvidia.com/mig-<profile> under migStrategy mixed); null on a CPU size.", None)
    per_node: int = json_field("perNode", COUNT, "How many of `resource` one node advertises (GPUs, MIG instances, or "
                               "GPUs times the sharing replicas); 0 on a CPU size.", 0)
    gpu_instance_profile: str | None = json_field("gpuInstanceProfile", OPTIONAL_TEXT, "The MIG profile (MIG1g ...), "
                                                  "or null.", None)
    mig_partition: str | None = offer_field("migPartition")
    # Karpenter's `Offering` carries its price (kubernetes-sigs/karpenter `pkg/cloudprovider/types.go`); the
    # platform's pricing fills it (`components.pricing.priced`).
    hourly_price: OfferPrice | None = json_field("hourlyPrice", Object(OfferPrice), "The list price of one node an hour "
                                                 "(on-demand and Spot), or null when the platform had none.", None)
    # What kube-scheduler's NodeResourcesFit compares a pod's requests with (`node_capacity`); the platform's
    # pool kinds fill it (`components/pools/room.py`).
    allocatable: Allocatable | None = json_field("allocatable", Object(Allocatable), "What one node gives pods: its "
                                                 "allocatable CPU, memory, storage and pods, and what gpu-aks's "
                                                 "DaemonSets there ask; absent when not known. Version 3 of 0.5.",
                                                 None, since=3)

    @classmethod
    def sized(cls, vm_size: str, sku: GpuSku | None = None, **facts: Any) -> Offer:
        """An offer of `vm_size`, with the GPUs of its `sku` (the catalog's, or the stack's declaration of a
        size the catalog lacks; None: a CPU size, or one gpu-aks does not know)."""
        if sku is not None:
            facts = {"gpu_model": sku.model, "gpu_memory_gib": sku.gpu_memory_gib, "gpus_per_vm": sku.gpus, **facts}
        return cls(vm_size, **facts)

    @property
    def gpu(self) -> bool:
        """The size brings GPUs: their count is known, or a pod asks for its `resource`."""
        return self.gpus_per_vm is not None or bool(self.resource)

    @property
    def gpus(self) -> int:
        """GPUs per node (for a GPU ceiling); 0 on a CPU size."""
        return self.gpus_per_vm or 0

    @property
    def mig(self) -> bool:
        return self.gpu_instance_profile is not None


@dataclass(frozen=True)
class CapacityNeed:
    """What a pool asks of Azure's quota at its largest: `nodes` of `vm_size` at maxCount plus the
    nodes AKS adds while upgrading (`maxSurge`; none on Spot pools), counted against the size's
    family quota or, for Spot, the regional low-priority quota."""

    key: str
    vm_size: str
    spot: bool
    zones: tuple[str, ...]
    max_count: int
    surge: int

    @property
    def nodes(self) -> int:
        return self.max_count + self.surge

    @property
    def vcpus_per_node(self) -> int | None:
        """From the size's name; the live preflight uses the SKU list's `vCPUs` capability instead."""
        return vcpus_in_size_name(self.vm_size)

    def vcpus(self, per_node: int | None = None) -> int | None:
        per_node = per_node or self.vcpus_per_node
        return None if per_node is None else per_node * self.nodes


@dataclass(frozen=True)
class PoolClaims(Written):
    """How a GPU pool hands out its GPUs through Dynamic Resource Allocation (NVIDIA's DRA driver for GPUs,
    `gpu-aks:dra`) instead of a device plugin: the DeviceClasses its GPUs are claimed by, and the extended
    resource a pod may still ask for there (KEP-5004: kube-scheduler makes the claim itself)."""

    device_classes: tuple[str, ...] = json_field("deviceClasses", NAMES, "The DeviceClasses whose claims the pool's GPUs "
                                                 "serve: gpu.nvidia.com, or mig.nvidia.com on a MIG pool (its GPUs "
                                                 "are published as MIG devices only).", ())
    extended_resource: str | None = json_field("extendedResource", OPTIONAL_TEXT, "The extended resource served through "
                                               "DRA on the pool (nvidia.com/gpu), or null: pods there ask through "
                                               "claims only.", None)


# One pool as every reader sees it, whatever kind of pool it is, and the contract's `pools.<name>` field
# for field. Computed once per pool: from the settings by the platform's kinds
# (`components.pools.platform_pools`), from an AgentPool or NodePool resource by the pack's backend
# readers (`gpu_aks_policies.pools.pools_of`), or from the outputs contract
# (`contract.PlatformContract.from_json`); nothing downstream re-derives it. The fields without a JSON
# name are the platform's own facts and stay out of the contract.
@dataclass(frozen=True)
class Pool(Written):
    """Every pool of the platform, system and CPU pools included (version 3): the one pool model,
    whatever backs the pool. Version 2's `gpuPools` and `cpuPools` are written from the same model."""

    name: str = pool_field("name")
    #: How the pool is named in the stack config (`gpuPools[gput4]`), for messages.
    key: str = json_field("key", TEXT, "How the stack config names the pool (gpuPools[t4], systemPool).", absent="")
    role: PoolRole = json_field("role", one_of(PoolRole), "What the pool is for: system, cpu or gpu.",
                                reader_needs=True, absent="cpu")
    backend: PoolBackend = json_field("backend", one_of(PoolBackend), "What backs the pool: an AKS AgentPool "
                                      "(agentPool) or a NAP Karpenter NodePool (nodePool).", absent="agentPool")
    #: The pool's Azure name (AgentPools), or None where Azure names nothing (a NodePool).
    azure_name: str | None = pool_field("azureName", default=MISSING, absent=None)
    #: Every size its nodes may have, CPU sizes included (an AgentPool: one).
    offers: tuple[Offer, ...] = json_field("offers", Objects(Offer), "Every VM size the pool may bring.",
                                           reader_needs=True, absent=())
    #: None only where a contract wrote none.
    min_count: int | None = pool_field("minCount", default=MISSING, absent=None)
    max_count: int | None = pool_field("maxCount", default=MISSING, absent=None)
    #: Every node is a Spot VM (a NodePool that may fall back to on-demand is not a Spot pool, #38).
    spot: bool = pool_field("spot", default=MISSING, absent=False)
    capacity_types: tuple[CapacityType, ...] = json_field(
        "capacityTypes", CAPACITY_TYPES, "How the pool's nodes may be bought, over its offers, Spot first as Karpenter "
        "tries them; `spot` is true only when every node is a Spot VM. Derived from the offers when absent.",
        ("onDemand",), init=False)
    zones: tuple[str, ...] = json_field("zones", ZONES, "The availability zones of the pool's nodes; [] for any.", ())
    #: The taints and labels gpu-aks gives the nodes (the Spot taint included where AKS adds it).
    taints: tuple[str, ...] = pool_field("taints")
    labels: Mapping[str, str] = pool_field("labels")
    #: How pods share each GPU (time-slicing or MPS), or None: each pod gets whole GPUs or MIG instances.
    sharing: PoolSharing | None = json_field("sharing", Object(PoolSharing), "How pods share a GPU (time-slicing or "
                                             "MPS), or null.", None)
    device_plugin: DevicePluginOwner | None = json_field(
        "devicePlugin", choice(get_args(DevicePluginOwner), " or ".join(get_args(DevicePluginOwner)) + " or null",
                               nullable=True),
        "Who runs the device plugin on a GPU pool: gpu-aks's DaemonSet, or something else; null on CPU pools.", None)
    #: gpu-aks's DCGM exporter runs on the pool (observability on, the pool served by gpu-aks's plugin).
    exporter: bool = json_field("exporter", FLAG, "gpu-aks's DCGM exporter runs on the pool's nodes.", False)
    #: The pool hands out its GPUs through DRA claims (`gpu-aks:dra`), or None: through a device plugin.
    dra: PoolClaims | None = json_field("dra", Object(PoolClaims), "How the pool hands out its GPUs through DRA claims "
                                        "(NVIDIA's DRA driver), or absent: through a device plugin. Version 3 of 0.5.",
                                        None, since=3)
    # The platform's own facts, which the contract does not carry.
    capacity: tuple[CapacityNeed, ...] = ()
    #: Your subnets the pool's nodes and pods join (`vnetSubnetID`, `podSubnetID`); () in AKS's VNet.
    subnets: tuple[str, ...] = ()
    #: Your subnet the pool's nodes join (a user pool without one joins the system pool's, as AKS places
    #: it), or None: the VNet AKS manages.
    node_subnet: str | None = None
    #: The properties Azure fixes at creation, as hashed into the Azure name (`create_only_identity`): a
    #: change to one replaces the pool. Empty where Azure names nothing (a NodePool).
    create_only: Mapping[str, Any] = field(default_factory=dict)
    #: A replacement deletes the old pool before it creates the new one (keepAzureName: the two would
    #: share a name), so the pool has no nodes in between.
    deletes_before_replace: bool = False
    #: GPU names or sizes the pool may bring that gpu-aks's catalog lacks (a NodePool's): neither
    #: offered nor priced, so the pool's cost has no ceiling.
    uncatalogued: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "capacity_types",
                           spot_first(kind for offer in self.offers for kind in offer.capacity_types))

    @property
    def gpu_offers(self) -> tuple[Offer, ...]:
        """The offers that bring GPUs; () on CPU pools."""
        return tuple(offer for offer in self.offers if offer.gpu)

    @property
    def gpu(self) -> bool:
        return bool(self.gpu_offers)

    @property
    def vm_sizes(self) -> tuple[str, ...]:
        """The VM sizes the pool's nodes may have (an AgentPool: one)."""
        return tuple(offer.vm_size for offer in self.offers)

    @property
    def vm_size(self) -> str:
        """The first (an AgentPool's only) VM size."""
        return self.offers[0].vm_size

    @property
    def pod_subnets(self) -> tuple[str, ...]:
        """Your subnets the pool's pods join apart from its nodes (`podSubnetID`: Azure CNI's dynamic pod-IP
        allocation)."""
        return tuple(subnet for subnet in self.subnets if subnet != self.node_subnet)

    @property
    def served(self) -> bool:
        """gpu-aks's device plugin serves the pool's nodes."""
        return self.device_plugin == "gpu-aks"

    @property
    def mig(self) -> bool:
        """Some node of the pool is MIG-partitioned: NVIDIA's plugin needs SYS_ADMIN there, and DCGM
        reports engine activity instead of GPU_UTIL."""
        return any(offer.mig for offer in self.offers)

    def nodes_at_most(self, offer: Offer) -> int:
        """The most nodes of one offer: its capacity need's (a NodePool's limits admit fewer big nodes),
        else maxCount."""
        size = offer.vm_size.lower()
        return next((need.max_count for need in self.capacity if need.vm_size.lower() == size), self.max_count or 0)


#: The facts of a pool a backend reader reads one by one, each of which a preview may hide on its own:
#: "offers" (the sizes), "mig" (their MIG profile), "taints", "count" (min_count, max_count and how
#: they are written), "labels", "plugin" (`needs_device_plugin`); and "pool", where the pool is declared.
PoolFact = Literal["pool", "offers", "mig", "taints", "count", "labels", "plugin"]
#: One node-count bound as written: its field and its value, shown for a message ("minCount", "0").
Bound = tuple[str, str]


@dataclass(frozen=True)
class AsWritten:
    """A pool's node-count bounds and taints as its resource writes them, in the backend's own field
    names (an AgentPool's `enableAutoScaling`, `minCount`, `maxCount` and `nodeTaints`; a NodePool's
    `spec.limits` and `spec.template.spec.taints`): what the pool rules quote and how they say to fix
    it."""

    #: The autoscaler (a NodePool: its limits) keeps the node count within min_count..max_count.
    autoscaled: bool
    #: The bounds as written, with why one bounds nothing ("enableAutoScaling: false, minCount: None,
    #: maxCount: None").
    bounds: str
    #: How to bound the pool.
    bounds_fix: str
    lower: Bound = ("minCount", "")
    upper: Bound = ("maxCount", "")
    #: The taints' field, and whether it holds AKS's `key=value:Effect` text (else Kubernetes Taint objects).
    taints_field: str = "nodeTaints"
    taints_as_text: bool = True
    #: Why each taint written that is not among `Pool.taints` is no taint.
    taint_problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class PoolReading:
    """A pool as a backend reader (`gpu_aks_policies.pools.pools_of`) read it from one resource: the
    `Pool`, and beside it what the pool rules need of that resource. The platform's kinds, which fill
    the model from settings, have none of this."""

    pool: Pool
    #: Where each fact is written: a resource path (`agentPoolProfiles[0].nodeTaints`, `spec.limits`).
    #: "pool" is where a finding about the whole pool points.
    source: Mapping[PoolFact, str]
    #: The node-count bounds and taints as the resource writes them, in the backend's own field names.
    written: AsWritten
    #: The facts a preview hides, each with the path of the value not known yet: a rule that needs one
    #: leaves this pool undecided and judges the others (`pool_rules.require`).
    unknown: Mapping[PoolFact, str] = field(default_factory=dict)
    #: A device plugin the stack installs itself must serve the nodes: NVIDIA GPUs whose driver AKS (or
    #: NAP) installs and whose plugin nothing else manages.
    needs_device_plugin: bool = False
