"""What every pool kind answers, as plain values: `PoolFacts` (one per pool, computed once), its
`GpuOffer`s and its `CapacityNeed`s, and the `PoolKind` protocol each kind module implements. Pure,
no Pulumi.

The shape follows Karpenter's `cloudprovider.InstanceType{Requirements, Offerings, Capacity}`
(Azure/karpenter-provider-azure `pkg/providers/instancetype/instancetype.go`): one value per kind of
machine, which scheduling, provisioning, price and quota all read. Here the readers are the
device-plugin and exporter selectors, the admission policy, the smoke test, the outputs contract, the
preflight and the preview; none of them branches on the kind.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from gpu_aks_policies.catalog import GpuSku, vcpus_in_size_name
from gpu_aks_policies.contract import CapacityType, PoolSharing

if TYPE_CHECKING:
    from gpu_aks_policies.declarations import Check, ListOf, Reader, Section

    from components.pools.agentpool import AgentPoolSpec
    from components.settings.observability import ObservabilitySettings
    from components.settings.parsed_pools import ParsedPool

#: The contract's `kind` (INTERFACE.md): an AKS AgentPool (fixed size or cluster-autoscaled), or a
#: NAP / Karpenter `karpenter.sh/v1` NodePool.
PoolBackend = Literal["agentPool", "nodePool"]
#: Each backend as messages name it (a recorded pool that moved to another backend, ...).
BACKEND_NAMES: dict[str, str] = {"agentPool": "an AKS agent pool", "nodePool": "a NAP (Karpenter) NodePool"}
#: What the pool is for: the inline system pool, a CPU user pool, a GPU pool.
PoolRole = Literal["system", "cpu", "gpu"]
DevicePluginOwner = Literal["gpu-aks", "external"]


@dataclass(frozen=True)
class GpuOffer:
    """One VM size a GPU pool may bring (an AgentPool brings one; a NAP NodePool several)."""

    vm_size: str
    sku: GpuSku
    #: The extended resource a pod asks for: nvidia.com/gpu, or nvidia.com/mig-<partition> under mixed MIG.
    resource: str
    #: How many of `resource` one node advertises: GPUs, MIG instances (or GPUs x replicas when shared).
    per_node: int
    #: `gpuInstanceProfile` (MIG1g ...) and its partition name (1g.10gb ...), or None without MIG.
    gpu_instance_profile: str | None = None
    mig_partition: str | None = None
    capacity_types: tuple[CapacityType, ...] = ("onDemand",)

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
class PoolFacts:
    """One pool as every reader outside its kind module sees it. Computed once per pool
    (`components.pools.platform_pools`); nothing downstream re-derives it from settings."""

    name: str
    #: How the pool is named in the stack config (`gpuPools[gput4]`), for messages.
    key: str
    backend: PoolBackend
    role: PoolRole
    #: The pool's Azure name (AgentPools), or None where Azure names nothing (a NodePool).
    azure_name: str | None
    #: The VM sizes the pool's nodes may have (an AgentPool: one).
    vm_sizes: tuple[str, ...]
    min_count: int
    max_count: int
    spot: bool
    zones: tuple[str, ...]
    #: The taints and labels gpu-aks gives the nodes (the Spot taint included where AKS adds it).
    taints: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    #: The GPUs the pool may bring; () for CPU pools.
    offers: tuple[GpuOffer, ...] = ()
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

    @property
    def gpu(self) -> bool:
        return bool(self.offers)

    @property
    def served(self) -> bool:
        """gpu-aks's device plugin serves the pool's nodes."""
        return self.device_plugin == "gpu-aks"

    @property
    def mig(self) -> bool:
        """Some node of the pool is MIG-partitioned: NVIDIA's plugin needs SYS_ADMIN there, and DCGM
        reports engine activity instead of GPU_UTIL."""
        return any(offer.mig for offer in self.offers)

    @property
    def vm_size(self) -> str:
        """The first (an AgentPool's only) VM size."""
        return self.vm_sizes[0]


class PlatformView(Protocol):
    """What a kind reads of the whole platform's settings: `components.platform_settings.PlatformSettings`,
    which sits above the kinds (it lists them), seen from below."""

    @property
    def pools(self) -> Mapping[str, tuple[Any, ...]]:
        """Each kind's pools, by the kind's config key."""

    @property
    def observability(self) -> ObservabilitySettings:
        """Whether gpu-aks's DCGM exporter watches the GPU pools it serves."""


class PoolKind(Protocol):
    """One kind of pool: one module in components/pools/, listed once in `KINDS`."""

    #: The config key of the kind's pools (`systemPool`, `cpuPools`, `gpuPools`).
    config_key: str

    @property
    def section(self) -> Section | ListOf:
        """The kind's settings declaration (a Section or ListOf), in the kind's module."""
    #: The pool is part of the managed cluster's body (the system pool), not a resource of its own.
    inline: bool
    #: Its pools are AKS agent pools, so they count towards AKS's node pools per cluster (a Karpenter
    #: NodePool under NAP is a Kubernetes object in the cluster, not an agent pool).
    agent_pools: bool
    #: The Pulumi component each of the kind's pools is (unused for an inline kind), and the types it
    #: was created as by earlier releases (each an alias: a renamed type moves a deployed pool).
    component_type: str
    former_types: tuple[str, ...]
    #: Rules the kind adds across the document's sections (the root), beyond its own section: they run
    #: after every section is parsed, so they may read any (NAP: what AKS refuses under node
    #: auto-provisioning). `components/platform_settings.py` collects them from `KINDS`.
    root_checks: tuple[Check, ...]
    #: The config key each aspect of the pack's pool rule is about (`taints`, `scaling`), so the
    #: platform reports the rule's verdict on its own pools at the key (`components/pools/rules.py`).
    rule_keys: Mapping[str, str]

    def read(self, reader: Reader, built: Mapping[str, Any]) -> tuple[Any, ...]:
        """The kind's pools, built from the document's root reader once every section is parsed
        (`PlatformSettings.pools[config_key]`); `built`: the other sections' settings, by key."""

    def parsed(self, root: Reader) -> tuple[ParsedPool, ...]:
        """The kind's pools as the sections parsed after them read them (`components/settings/parsed_pools.py`):
        which bring GPUs, which gpu-aks's device plugin may serve, which use MIG."""

    def pools(self, settings: PlatformView) -> Sequence[Any]:
        """The kind's pools in `settings` (its settings objects), in config order."""

    def facts(self, pool: Any, settings: PlatformView) -> PoolFacts:
        """The kind-neutral value every other reader reads."""

    def resources(self, pool: Any) -> tuple[AgentPoolSpec | KubernetesObjectsSpec, ...]:
        """What the pool is made of, as pure specs (`components/node_pools.py` creates them; an inline
        pool is made of none)."""

    def cluster_properties(self, pools: Sequence[Any]) -> Mapping[str, Any]:
        """What the kind's pools need of the managed cluster itself, as `ManagedCluster` keyword
        arguments (NAP: `node_provisioning_profile`); empty for most kinds."""

    def reference_markdown(self) -> str:
        """What the configuration reference adds for the kind beyond its keys (the GPU kind: the sizes
        it accepts), or ""."""


def surge_nodes(max_surge: str | None, max_count: int) -> int:
    """Nodes AKS adds while upgrading a pool of `max_count` nodes (`maxSurge`: a count or a percentage)."""
    if not max_surge:
        return 0
    if max_surge.endswith("%"):
        # "For percentages, fractional nodes are rounded up" (AgentPoolUpgradeSettings.maxSurge).
        return math.ceil(max_count * int(max_surge[:-1]) / 100)
    return int(max_surge)


@dataclass(frozen=True)
class KubernetesObjectsSpec:
    """Kubernetes objects a pool is made of (a NAP pool: its Karpenter `NodePool` and `AKSNodeClass`),
    created in the cluster with its Kubernetes provider once the deployer may."""

    name: str
    manifests: tuple[Mapping[str, Any], ...]


class AgentPoolKind(PoolKind, Protocol):
    """A kind whose every pool is an `AgentPool` resource of its own."""

    def agent_pool(self, pool: Any) -> AgentPoolSpec:
        """The AgentPool the pool is (its body: `components.pools.agentpool`)."""
