"""The `PoolKind` protocol each kind module implements: it reads its section of the stack settings
once and fills the one pool model (`gpu_aks_policies.pools.model.Pool`, with its `Offer`s and
`CapacityNeed`s) that every other reader takes. Pure, no Pulumi.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpu_aks_policies.pools.model import Pool

from components.settings.common import count_or_percent

if TYPE_CHECKING:
    from gpu_aks_policies.declarations import Check, ListOf, Reader, Section

    from components.pools.agentpool import AgentPoolSpec
    from components.settings.cluster import ClusterSettings
    from components.settings.device_plugin import DevicePluginSettings
    from components.settings.dra import DraSettings
    from components.settings.observability import ObservabilitySettings

class PlatformView(Protocol):
    """What a kind reads of the whole platform's settings: `components.platform_settings.PlatformSettings`,
    which sits above the kinds (it lists them), seen from below."""

    @property
    def pools(self) -> Mapping[str, tuple[Any, ...]]:
        """Each kind's pools, by the kind's config key."""

    @property
    def cluster(self) -> ClusterSettings:
        """The cluster: its network decides the pools' default maxPods."""

    @property
    def observability(self) -> ObservabilitySettings:
        """Whether gpu-aks's DCGM exporter watches the GPU pools it serves."""

    @property
    def device_plugin(self) -> DevicePluginSettings:
        """gpu-aks's device-plugin DaemonSets: which pools they serve, and how."""

    @property
    def dra(self) -> DraSettings:
        """The pools NVIDIA's DRA driver serves instead (`gpu-aks:dra`)."""


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

    def read(self, reader: Reader, built: Mapping[str, Any]) -> Any:
        """One of the kind's pools (its settings object), built from its section's reader (`reader.key`:
        `gpuPools[gput4]`); `built`: the other sections' settings, by key (`devicePlugin`)."""

    def pools(self, settings: PlatformView) -> Sequence[Any]:
        """The kind's pools in `settings` (its settings objects), in config order."""

    def facts(self, pool: Any, settings: PlatformView) -> Pool:
        """The pool model every other reader reads."""

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
    # Read as the settings checked it (`count_or_percent`: leading zeros aside, which `int()` counts).
    parsed = count_or_percent(max_surge) if max_surge else None
    if parsed is None:
        return 0
    number, percent = parsed
    if percent:
        # "For percentages, fractional nodes are rounded up" (AgentPoolUpgradeSettings.maxSurge).
        return math.ceil(max_count * number / 100)
    # AKS surges at most the pool's nodes (learn.microsoft.com/azure/aks/upgrade-cluster).
    return min(number, max_count)


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
