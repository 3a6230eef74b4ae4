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

The platform's pool kinds (`components/pools/<kind>.py`) fill it from the stack settings; the outputs
contract, the device-plugin and exporter selectors, the admission policy, the smoke test, cost,
the preflight and the preview read only it. No reader branches on the kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..catalog import GpuSku, vcpus_in_size_name
from ..contract import (
    CapacityType,
    DevicePluginOwner,
    OfferEntry,
    PoolBackend,
    PoolEntry,
    PoolRole,
    PoolSharing,
    spot_first,
)

__all__ = ["BACKEND_NAMES", "CapacityNeed", "CapacityType", "DevicePluginOwner", "Offer", "Pool", "PoolBackend",
           "PoolRole", "PoolSharing"]

#: Each backend (the resource a pool is written as; contract v2 calls it the pool's `kind`) as
#: messages name it (a recorded pool that moved to another backend, ...).
BACKEND_NAMES: dict[str, str] = {"agentPool": "an AKS agent pool", "nodePool": "a NAP (Karpenter) NodePool"}


@dataclass(frozen=True)
class Offer:
    """One VM size a pool may bring (an AgentPool brings one; a NAP NodePool several), as Karpenter's
    `Offering`: the size, the capacity types it is bought at (in the order tried; with the size, what
    prices it), and on a GPU size the GPUs and what a node advertises of them."""

    vm_size: str
    #: The size's GPUs, or None for a CPU size.
    sku: GpuSku | None = None
    #: The extended resource a pod asks for: nvidia.com/gpu, or nvidia.com/mig-<partition> under mixed MIG
    #: ("" on a CPU size).
    resource: str = ""
    #: How many of `resource` one node advertises: GPUs, MIG instances (or GPUs x replicas when shared).
    per_node: int = 0
    #: `gpuInstanceProfile` (MIG1g ...) and its partition name (1g.10gb ...), or None without MIG.
    gpu_instance_profile: str | None = None
    mig_partition: str | None = None
    capacity_types: tuple[CapacityType, ...] = ("onDemand",)

    @property
    def gpu(self) -> bool:
        return self.sku is not None

    @property
    def gpu_sku(self) -> GpuSku:
        """The GPUs of an offer of `Pool.gpu_offers` (a CPU offer has none: ValueError)."""
        if self.sku is None:
            raise ValueError(f"{self.vm_size} brings no GPU")
        return self.sku

    @property
    def gpus(self) -> int:
        """GPUs per node (for a GPU ceiling); 0 on a CPU size."""
        return self.sku.gpus if self.sku is not None else 0

    @property
    def mig(self) -> bool:
        return self.gpu_instance_profile is not None

    def to_entry(self) -> OfferEntry:
        """The offer as contract version 3 writes it."""
        sku = self.sku
        return OfferEntry(vm_size=self.vm_size, capacity_types=self.capacity_types,
                          gpu_model=sku.model if sku else None, gpu_memory_gib=sku.gpu_memory_gib if sku else None,
                          gpus_per_vm=sku.gpus if sku else None, resource=self.resource or None, per_node=self.per_node,
                          gpu_instance_profile=self.gpu_instance_profile, mig_partition=self.mig_partition)


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
class Pool:
    """One pool as every reader outside its kind module sees it. Computed once per pool: from the
    settings by the platform's kinds (`components.pools.platform_pools`), or from an AgentPool or
    NodePool resource by the pack's backend readers (`gpu_aks_policies.pools.pools_of`); nothing
    downstream re-derives it."""

    name: str
    #: How the pool is named in the stack config (`gpuPools[gput4]`), for messages.
    key: str
    backend: PoolBackend
    role: PoolRole
    #: The pool's Azure name (AgentPools), or None where Azure names nothing (a NodePool).
    azure_name: str | None
    #: Every size its nodes may have, CPU sizes included (an AgentPool: one).
    offers: tuple[Offer, ...]
    min_count: int
    max_count: int
    spot: bool
    zones: tuple[str, ...]
    #: The taints and labels gpu-aks gives the nodes (the Spot taint included where AKS adds it).
    taints: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    #: How pods share each GPU (time-slicing or MPS), or None: each pod gets whole GPUs or MIG instances.
    sharing: PoolSharing | None = None
    #: Who runs the device plugin on a GPU pool's nodes; None on CPU pools.
    device_plugin: DevicePluginOwner | None = None
    #: gpu-aks's DCGM exporter runs on the pool (observability on, the pool served by gpu-aks's plugin).
    exporter: bool = False
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
    # What a backend reader (`gpu_aks_policies.pools.pools_of`) keeps of the resource it read the pool
    # from, for the pool rules; the platform's kinds, which fill the model from settings, leave it out.
    #: Where each fact is written: a resource path (`agentPoolProfiles[0].nodeTaints`, `spec.limits`) or a
    #: config key. "pool" is where a finding about the whole pool points.
    source: Mapping[PoolFact, str] = field(default_factory=dict)
    #: The facts a preview hides, each with the path of the value not known yet: a rule that needs one
    #: leaves this pool undecided and judges the others (`pool_rules.require`).
    unknown: Mapping[PoolFact, str] = field(default_factory=dict)
    #: The node-count bounds and taints as the resource writes them, in the backend's own field names.
    written: AsWritten | None = None
    #: A device plugin the stack installs itself must serve the nodes: NVIDIA GPUs whose driver AKS (or
    #: NAP) installs and whose plugin nothing else manages. (`device_plugin` says who runs it, where the
    #: platform knows.)
    needs_device_plugin: bool = False

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
    def served(self) -> bool:
        """gpu-aks's device plugin serves the pool's nodes."""
        return self.device_plugin == "gpu-aks"

    @property
    def mig(self) -> bool:
        """Some node of the pool is MIG-partitioned: NVIDIA's plugin needs SYS_ADMIN there, and DCGM
        reports engine activity instead of GPU_UTIL."""
        return any(offer.mig for offer in self.offers)

    def to_entry(self) -> PoolEntry:
        """The pool as contract version 3 writes it (`pools.<name>`): the model serialized."""
        # A NodePool that may fall back to on-demand is not a Spot pool (#38): `spot` is every node a Spot VM.
        capacity = spot_first(kind for offer in self.offers for kind in offer.capacity_types)
        return PoolEntry(name=self.name, key=self.key, role=self.role, backend=self.backend, azure_name=self.azure_name,
                         offers=tuple(offer.to_entry() for offer in self.offers), min_count=self.min_count,
                         max_count=self.max_count, spot=capacity == ("spot",), capacity_types=capacity,
                         zones=tuple(self.zones), taints=tuple(self.taints),
                         labels=dict(self.labels), sharing=self.sharing, device_plugin=self.device_plugin,
                         exporter=self.exporter)

    def nodes_at_most(self, offer: Offer) -> int:
        """The most nodes of one offer: its capacity need's (a NodePool's limits admit fewer big nodes),
        else maxCount."""
        size = offer.vm_size.lower()
        return next((need.max_count for need in self.capacity if need.vm_size.lower() == size), self.max_count)


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
