"""The CPU pool kind: `gpu-aks:cpuPools`, each an autoscaled `AgentPool` of its own: its settings
section (`CPU_POOL`), its AgentPool body and its facts (no GPU offers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.declarations import Key, ListOf, Reader, Section, text
from gpu_aks_policies.pools.model import Offer, Pool

from components.pools.agentpool import AgentPoolSpec
from components.pools.room import with_room
from components.pools.user import UserAgentPoolKind, capacity_types, user_pool_body, user_pool_capacity, user_pool_spec
from components.settings.common import POOL_MODEL, count_key
from components.settings.node_baseline import node_baseline_items
from components.settings.pool_upgrade import (
    CPU_POOL_UPGRADE,
    CPU_SIZE_CHECK,
    OS_SKU_CHECK,
    SPOT_UPGRADE_CHECK,
    upgrade_keys,
)
from components.settings.pools import (
    KEEP_AZURE_NAME,
    NODE_LABELS,
    NODE_TAINTS_DOC,
    POOL_KEYS_LISTED,
    POOL_NAME,
    POOL_OS_SKU,
    POOL_SURGE,
    POOL_ZONES,
    SCALE_SET_PRIORITY,
    SPOT_MAX_PRICE,
    SPOT_PRICE_NEEDS_SPOT,
    UserAgentPoolSettings,
    counts_in_order,
    not_a_gpu_size,
    pool_fields,
    pool_key,
    taints_parser,
)

if TYPE_CHECKING:
    from components.pools.kind import PlatformView


def _cpu_pool(reader: Reader) -> UserAgentPoolSettings:
    attrs = pool_fields(reader)
    attrs["labels"] = {**reader.get("nodeLabels"), POOL_LABEL: attrs["name"]}
    return UserAgentPoolSettings(**attrs)


CPU_POOL = Section("cpuPools[]", "One CPU user pool.", (
    POOL_NAME,
    text("vmSize", "The VM size of the pool's nodes.", "Standard_D8ds_v5", attr="vm_size", source=f"{POOL_MODEL} vmSize",
         create_only=True),
    not_a_gpu_size("declare GPU pools under gpuPools so they get the GPU taint, labels and the device plugin"),
    CPU_SIZE_CHECK,
    *node_baseline_items(),
    count_key("minCount", "Fewest nodes the autoscaler keeps.", 0, f"{POOL_MODEL} minCount"),
    count_key("maxCount", "Most nodes the autoscaler adds.", 3, f"{POOL_MODEL} maxCount"),
    counts_in_order(0),
    SCALE_SET_PRIORITY, SPOT_MAX_PRICE, SPOT_PRICE_NEEDS_SPOT, POOL_ZONES, POOL_OS_SKU, OS_SKU_CHECK, POOL_SURGE,
    *upgrade_keys(CPU_POOL_UPGRADE), SPOT_UPGRADE_CHECK, KEEP_AZURE_NAME,
    Key("nodeTaints", NODE_TAINTS_DOC, "list of strings", [], parse=taints_parser(()), source=f"{POOL_MODEL} nodeTaints"),
    NODE_LABELS,
), build=_cpu_pool, listed=POOL_KEYS_LISTED)


CPU_POOLS = ListOf("cpuPools", "CPU user pools, each an AgentPool of its own.", CPU_POOL, pool_key, noun="pools")


class CpuPoolKind(UserAgentPoolKind):
    config_key = "cpuPools"
    section = CPU_POOLS
    #: The Pulumi component each pool is, and the types it had before (aliases: deployed stacks keep
    #: their pools). Not "NodePool", which is Karpenter's word for what the NAP kind creates.
    component_type = "gpu-aks:index:CpuAgentPool"
    former_types: tuple[str, ...] = ("gpu-aks:index:NodePool",)

    def read(self, reader: Reader, built: Mapping[str, Any]) -> UserAgentPoolSettings:
        pool: UserAgentPoolSettings = reader.build()
        return pool

    def agent_pool(self, pool: UserAgentPoolSettings) -> AgentPoolSpec:
        return user_pool_spec(pool, user_pool_body(pool))

    def facts(self, pool: UserAgentPoolSettings, settings: PlatformView) -> Pool:
        key = f"{self.config_key}[{pool.name}]"
        return with_room(Pool(
            name=pool.name, key=key, backend="agentPool", role="cpu", azure_name=pool.azure_name,
            offers=(Offer.sized(pool.vm_size, capacity_types=capacity_types(pool)),), min_count=pool.min_count,
            max_count=pool.max_count, spot=pool.spot,
            zones=pool.availability_zones, taints=pool.taints, labels=dict(pool.labels),
            capacity=user_pool_capacity(key, pool), subnets=pool.baseline.subnets(),
            node_subnet=pool.baseline.vnet_subnet_id, create_only=pool.create_only(),
            deletes_before_replace=pool.keep_azure_name), settings, pool.baseline.max_pods)


CPU = CpuPoolKind()
