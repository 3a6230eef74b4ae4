"""What the AgentPool-backed user kinds (CPU and GPU pools) share: body, identity and capacity from
`UserAgentPoolSettings`. A kind adds only what is its own (pulumi-eks's `createNodeGroup` and
`createNodeGroupV2` are a warning: two ~450-line near-copies for two kinds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.declarations import Check
from gpu_aks_policies.pools.model import CapacityNeed, CapacityType

from components.pools.agentpool import AgentPoolBody, AgentPoolSpec
from components.pools.kind import surge_nodes
from components.settings.pools import UserAgentPoolSettings

if TYPE_CHECKING:

    from components.pools.kind import PlatformView


#: An AgentPool's taints are `nodeTaints`; the autoscaler's bounds `minCount`..`maxCount`.
AGENT_POOL_RULE_KEYS: Mapping[str, str] = {"taints": "nodeTaints", "scaling": "maxCount"}


class UserAgentPoolKind:
    """What the AgentPool-backed user kinds do alike: their pools are `PlatformSettings.pools[config_key]`,
    each one `AgentPool` (`agent_pool`, the kind's own), and they ask nothing of the cluster."""

    config_key: str
    inline = False
    agent_pools = True
    root_checks: tuple[Check, ...] = ()
    rule_keys: Mapping[str, str] = AGENT_POOL_RULE_KEYS

    def pools(self, settings: PlatformView) -> tuple[Any, ...]:
        return settings.pools[self.config_key]

    def agent_pool(self, pool: Any) -> AgentPoolSpec:
        raise NotImplementedError

    def resources(self, pool: Any) -> tuple[AgentPoolSpec, ...]:
        return (self.agent_pool(pool),)

    def cluster_properties(self, pools: Sequence[Any]) -> Mapping[str, Any]:
        return {}

    def reference_markdown(self) -> str:
        return ""


def user_pool_body(pool: UserAgentPoolSettings, **gpu: Any) -> AgentPoolBody:
    upgrade = pool.upgrade_settings()
    return AgentPoolBody(
        mode="User", vm_size=pool.vm_size, os_sku=pool.os_sku, min_count=pool.min_count, max_count=pool.max_count,
        zones=pool.availability_zones, node_taints=pool.taints, node_labels=pool.labels,
        upgrade_settings=upgrade.as_api() if upgrade is not None else None,
        priority="Spot" if pool.spot else "Regular", spot_max_price=pool.spot_max_price,
        baseline=pool.baseline.as_api(), **gpu)


def user_pool_spec(pool: UserAgentPoolSettings, body: AgentPoolBody) -> AgentPoolSpec:
    return AgentPoolSpec(pool.name, pool.azure_name, pool.keep_azure_name, body)


def user_pool_capacity(key: str, pool: UserAgentPoolSettings) -> tuple[CapacityNeed, ...]:
    upgrade = pool.upgrade_settings()
    return (CapacityNeed(key, pool.vm_size, pool.spot, pool.availability_zones, pool.max_count,
                         surge_nodes(upgrade.max_surge if upgrade else None, pool.max_count)),)


def capacity_types(pool: UserAgentPoolSettings) -> tuple[CapacityType, ...]:
    """An AgentPool's one capacity type: its scale set's priority."""
    return ("spot",) if pool.spot else ("onDemand",)

