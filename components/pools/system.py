"""The system pool kind: the one inline pool of the managed cluster (`agentPoolProfiles[0]`).

A cluster needs one pool at creation, and adding pools inline to an existing cluster is refused, so
the system pool is the only inline one and is never replaced (its name has no hash suffix). Settings:
`gpu-aks:systemPool` (`SYSTEM_POOL` below; the keys it shares with other pools are in `components/settings/pools.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.declarations import Check, Key, Reader, Section, boolean, choice, text
from gpu_aks_policies.pools.model import CapacityNeed, Offer, Pool

from components.aks_api import OS_SKUS
from components.pools.agentpool import AgentPoolBody, AgentPoolSpec
from components.pools.kind import surge_nodes
from components.pools.room import with_room
from components.pools.user import AGENT_POOL_RULE_KEYS
from components.settings.common import POOL_MODEL, count_key, surge_key, zones_key
from components.settings.node_baseline import NODE_BASELINE_KEYS, node_baseline, node_baseline_items
from components.settings.pool_upgrade import (
    CPU_SIZE_CHECK,
    OS_SKU_CHECK,
)
from components.settings.pools import (
    SystemPoolSettings,
    counts_in_order,
    not_a_gpu_size,
    pool_name_parser,
)

if TYPE_CHECKING:
    from components.pools.kind import PlatformView

#: Keeps app pods off the system pool (`onlyCriticalAddonsEnabled`), as AKS's own flag does.
CRITICAL_ADDONS_TAINT = "CriticalAddonsOnly=true:NoSchedule"


SYSTEM_POOL = Section("systemPool", "The inline system (CPU) pool; never replaced, so its name has no suffix.", (
    text("vmSize", "The VM size of the system nodes.", "Standard_D4ds_v5", attr="vm_size", source=f"{POOL_MODEL} vmSize"),
    not_a_gpu_size("the system pool runs CPU add-ons, use a D-series size"),
    CPU_SIZE_CHECK,
    *node_baseline_items(),
    count_key("minCount", "Fewest nodes (at least 1).", 1, f"{POOL_MODEL} minCount"),
    count_key("maxCount", "Most nodes.", 3, f"{POOL_MODEL} maxCount"),
    counts_in_order(1),
    Key("name", "The pool's name (at most 12 characters).", "string", "system", parse=pool_name_parser("system", False),
        attr="name", source=f"{POOL_MODEL} name pattern"),
    zones_key(f"{POOL_MODEL} availabilityZones", create_only=False),
    choice("osSKU", "The node OS image.", OS_SKUS, "AzureLinux", attr="os_sku", source=f"{POOL_MODEL} osSKU"),
    OS_SKU_CHECK,
    surge_key(f"{POOL_MODEL} upgradeSettings.maxSurge"),
    boolean("onlyCriticalAddonsEnabled", "Taint the pool `CriticalAddonsOnly=true:NoSchedule` so app pods stay off.",
            True, attr="only_critical_addons", source="ManagedClusterAgentPoolProfile onlyCriticalAddonsEnabled"),
), build=lambda reader: SystemPoolSettings(**reader.section.attrs(reader), baseline=node_baseline(reader)),
   listed=("name", "vmSize", "minCount", "maxCount", "availabilityZones", "osSKU", "maxSurge",
           "onlyCriticalAddonsEnabled", *NODE_BASELINE_KEYS))


class SystemPoolKind:
    config_key = "systemPool"
    section = SYSTEM_POOL
    #: The pool is part of the managed cluster's body, not a resource of its own: no component.
    inline = True
    agent_pools = True
    component_type = ""
    former_types: tuple[str, ...] = ()
    root_checks: tuple[Check, ...] = ()
    rule_keys: Mapping[str, str] = AGENT_POOL_RULE_KEYS

    def read(self, reader: Reader, built: Mapping[str, Any]) -> SystemPoolSettings:
        pool: SystemPoolSettings = reader.build()
        return pool

    def pools(self, settings: PlatformView) -> tuple[SystemPoolSettings, ...]:
        return settings.pools[self.config_key]

    def resources(self, pool: SystemPoolSettings) -> tuple[AgentPoolSpec, ...]:
        return ()  # the managed cluster's own body carries it (components/cluster.py)

    def cluster_properties(self, pools: Sequence[SystemPoolSettings]) -> Mapping[str, Any]:
        return {}

    def reference_markdown(self) -> str:
        return ""

    def body(self, pool: SystemPoolSettings) -> AgentPoolBody:
        return AgentPoolBody(
            mode="System", vm_size=pool.vm_size, os_sku=pool.os_sku, min_count=pool.min_count,
            max_count=pool.max_count, zones=pool.availability_zones,
            node_taints=[CRITICAL_ADDONS_TAINT] if pool.only_critical_addons else None, node_labels=None,
            upgrade_settings={"max_surge": pool.max_surge}, baseline=pool.baseline.as_api())

    def facts(self, pool: SystemPoolSettings, settings: PlatformView) -> Pool:
        return with_room(Pool(
            name=pool.name, key=self.config_key, backend="agentPool", role="system", azure_name=pool.name,
            offers=(Offer.sized(pool.vm_size),), min_count=pool.min_count, max_count=pool.max_count, spot=False,
            zones=pool.availability_zones, taints=(CRITICAL_ADDONS_TAINT,) if pool.only_critical_addons else (),
            subnets=pool.baseline.subnets(),
            node_subnet=pool.baseline.vnet_subnet_id,
            capacity=(CapacityNeed(self.config_key, pool.vm_size, False, pool.availability_zones, pool.max_count,
                                   surge_nodes(pool.max_surge, pool.max_count)),)), settings, pool.baseline.max_pods)


SYSTEM = SystemPoolKind()
