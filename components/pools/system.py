"""The system pool kind: the one inline pool of the managed cluster (`agentPoolProfiles[0]`).

A cluster needs one pool at creation, and adding pools inline to an existing cluster is refused, so
the system pool is the only inline one and is never replaced (its name has no hash suffix). Settings:
`gpu-aks:systemPool` (`components/settings/pools.py` `SYSTEM_POOL`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.pools.agentpool import AgentPoolBody
from components.pools.kind import CapacityNeed, PoolFacts, surge_nodes
from components.settings.pools import SYSTEM_POOL, SystemPoolSettings

if TYPE_CHECKING:
    from components.settings import PlatformSettings

#: Keeps app pods off the system pool (`onlyCriticalAddonsEnabled`), as AKS's own flag does.
CRITICAL_ADDONS_TAINT = "CriticalAddonsOnly=true:NoSchedule"


class SystemPoolKind:
    config_key = "systemPool"
    section = SYSTEM_POOL
    #: The pool is part of the managed cluster's body, not a resource of its own.
    inline = True

    def pools(self, settings: PlatformSettings) -> tuple[SystemPoolSettings, ...]:
        return (settings.system_pool,)

    def body(self, pool: SystemPoolSettings) -> AgentPoolBody:
        return AgentPoolBody(
            mode="System", vm_size=pool.vm_size, os_sku=pool.os_sku, min_count=pool.min_count,
            max_count=pool.max_count, zones=pool.availability_zones,
            node_taints=[CRITICAL_ADDONS_TAINT] if pool.only_critical_addons else None, node_labels=None,
            upgrade_settings={"max_surge": pool.max_surge})

    def facts(self, pool: SystemPoolSettings, settings: PlatformSettings) -> PoolFacts:
        return PoolFacts(
            name=pool.name, key=self.config_key, backend="agentPool", role="system", azure_name=pool.name,
            vm_sizes=(pool.vm_size,), min_count=pool.min_count, max_count=pool.max_count, spot=False,
            zones=pool.availability_zones, taints=(CRITICAL_ADDONS_TAINT,) if pool.only_critical_addons else (),
            capacity=(CapacityNeed(self.config_key, pool.vm_size, False, pool.availability_zones, pool.max_count,
                                   surge_nodes(pool.max_surge, pool.max_count)),))


SYSTEM = SystemPoolKind()
