"""The CPU pool kind: `gpu-aks:cpuPools`, each an autoscaled `AgentPool` of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.pools.agentpool import AgentPoolSpec
from components.pools.kind import PoolFacts
from components.pools.user import user_pool_body, user_pool_capacity, user_pool_spec
from components.settings.pools import CPU_POOLS, NodePoolSettings

if TYPE_CHECKING:
    from components.settings import PlatformSettings


class CpuPoolKind:
    config_key = "cpuPools"
    section = CPU_POOLS
    inline = False
    #: The Pulumi component each pool is, and the types it had before (aliases: deployed stacks keep
    #: their pools). Not "NodePool", which is Karpenter's word for what the NAP kind creates.
    component_type = "gpu-aks:index:CpuAgentPool"
    former_types: tuple[str, ...] = ("gpu-aks:index:NodePool",)

    def pools(self, settings: PlatformSettings) -> tuple[NodePoolSettings, ...]:
        return settings.cpu_pools

    def agent_pool(self, pool: NodePoolSettings) -> AgentPoolSpec:
        return user_pool_spec(pool, user_pool_body(pool))

    def facts(self, pool: NodePoolSettings, settings: PlatformSettings) -> PoolFacts:
        key = f"{self.config_key}[{pool.name}]"
        return PoolFacts(
            name=pool.name, key=key, backend="agentPool", role="cpu", azure_name=pool.azure_name,
            vm_sizes=(pool.vm_size,), min_count=pool.min_count, max_count=pool.max_count, spot=pool.spot,
            zones=pool.availability_zones, taints=pool.taints, labels=dict(pool.labels),
            capacity=user_pool_capacity(key, pool))


CPU = CpuPoolKind()
