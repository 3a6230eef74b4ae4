"""What every AgentPool-backed pool kind declares beside its own keys: `upgradeSettings` (with each
kind's defaults), the OS SKU check and the CPU size check. No Pulumi imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import Check, Key, Reader, describe

from components.aks_api import (
    DRAIN_TIMEOUT_RANGE,
    NODE_SOAK_RANGE,
    UNDRAINABLE_NODE_BEHAVIORS,
    os_sku_problem,
)
from components.azure_catalog import cpu_vm_size_problem
from components.settings.common import (
    POOL_MODEL,
    api_choice,
    count_or_percent_text,
    upgrade_nodes_problem,
    whole_in,
)

UPGRADE_KEYS = ("maxSurge", "maxUnavailable", "drainTimeoutInMinutes", "nodeSoakDurationInMinutes",
                "undrainableNodeBehavior")


@dataclass(frozen=True)
class PoolUpgradeSettings:
    """`upgradeSettings` of a pool; None leaves AKS's default."""

    max_surge: str | None = None
    max_unavailable: str | None = None
    drain_timeout_minutes: int | None = None
    node_soak_minutes: int | None = None
    undrainable_node_behavior: str | None = None

    def as_api(self) -> dict[str, Any]:
        return {key: value for key, value in (
            ("max_surge", self.max_surge), ("max_unavailable", self.max_unavailable),
            ("drain_timeout_in_minutes", self.drain_timeout_minutes),
            ("node_soak_duration_in_minutes", self.node_soak_minutes),
            ("undrainable_node_behavior", self.undrainable_node_behavior)) if value is not None}


#: GPU pools: let a drain wait an hour on PodDisruptionBudgets (AKS's default is 30 minutes), soak 5
#: minutes between nodes (AgentPoolUpgradeSettings; learn.microsoft.com/azure/aks/upgrade-aks-node-pools-rolling).
#: A node still undrainable after that fails the upgrade under either `undrainableNodeBehavior`
#: (Microsoft's enum text, azure-mgmt-containerservice 40.1.0 `UndrainableNodeBehavior`, API 2025-09-01).
#: `Cordon` (gpu-aks 0.3.1's GPU default) would also keep one surge GPU node per blocked node, billed,
#: beside the quarantined one until someone acts: two GPU VMs for one job. GPU pools therefore write
#: AKS's own default, `Schedule`, explicitly: the job keeps running on its node, the surge nodes go,
#: and the failed upgrade is retried once the job is done (docs/platform.md, "Pools during an upgrade").
GPU_POOL_UPGRADE = PoolUpgradeSettings(max_surge="33%", drain_timeout_minutes=60, node_soak_minutes=5,
                                       undrainable_node_behavior="Schedule")
CPU_POOL_UPGRADE = PoolUpgradeSettings(max_surge="33%")
#: "When you upgrade a Spot node pool, AKS internally issues a cordon and an eviction notice, but no
#: drain is applied. There are no surge nodes available for Spot node pool upgrades"
#: (learn.microsoft.com/azure/aks/spot-node-pool, "Upgrade a Spot node pool").
SPOT_UPGRADE_REASON = ("is not used on a Spot pool: AKS upgrades Spot pools without surge nodes or a drain (it "
                       "cordons and sends an eviction notice; learn.microsoft.com/azure/aks/spot-node-pool), so "
                       "remove it")


def upgrade_keys(default: PoolUpgradeSettings) -> tuple[Key, ...]:
    """`maxUnavailable`, `drainTimeoutInMinutes`, `nodeSoakDurationInMinutes`, `undrainableNodeBehavior` of a
    pool (its `maxSurge` is declared with the pool), with the pool kind's defaults."""
    return (
        Key("maxUnavailable", "Nodes that may be unavailable at once during an upgrade: a count or a percentage.",
            "string", default.max_unavailable, check=lambda value: upgrade_nodes_problem(
                value, 0, "must be a node count or a percentage, e.g. 0 or 1"),
            convert=count_or_percent_text,
            attr="max_unavailable", source=f"{POOL_MODEL} upgradeSettings.maxUnavailable"),
        Key("drainTimeoutInMinutes", "How long a drain waits on PodDisruptionBudgets before the upgrade gives up on "
            "the node.", "integer", default.drain_timeout_minutes, check=whole_in(DRAIN_TIMEOUT_RANGE), convert=int,
            attr="drain_timeout_minutes", source=f"{POOL_MODEL} upgradeSettings.drainTimeoutInMinutes"),
        Key("nodeSoakDurationInMinutes", "Minutes to wait after upgrading a node before the next.", "integer",
            default.node_soak_minutes, check=whole_in(NODE_SOAK_RANGE), convert=int, attr="node_soak_minutes",
            source=f"{POOL_MODEL} upgradeSettings.nodeSoakDurationInMinutes"),
        api_choice("undrainableNodeBehavior", "What AKS does with a node whose pods cannot be evicted; either way the "
                   "upgrade and the cluster end failed. `Schedule` (AKS's default): the node is made schedulable again, "
                   "not upgraded, and the surge nodes are deleted. `Cordon`: the node stays cordoned (label "
                   "`kubernetes.azure.com/upgrade-status: Quarantined`) and one surge node per blocked node stays, "
                   "billed, until you act (canceled, not failed, when too few surge nodes exist).",
                   UNDRAINABLE_NODE_BEHAVIORS,
                   default.undrainable_node_behavior, attr="undrainable_node_behavior",
                   source=f"{POOL_MODEL} upgradeSettings.undrainableNodeBehavior"),
    )


def refuse_upgrade_keys_on_spot(reader: Reader) -> None:
    """Upgrade keys on a Spot pool are refused (AKS does not use them there); runs only when
    `scaleSetPriority` parsed cleanly, so a typo there reports nothing more."""
    if reader.get("scaleSetPriority"):
        for name in UPGRADE_KEYS:
            if reader.raw.get(name) is not None:
                reader.problem(name, SPOT_UPGRADE_REASON)


SPOT_UPGRADE_CHECK = Check(refuse_upgrade_keys_on_spot, reads=("scaleSetPriority",),
                           doc="No upgrade settings on a Spot pool (AKS upgrades Spot pools without surge or drain).")


def os_sku_check(reader: Reader) -> None:
    problem = os_sku_problem(reader.get("osSKU"), reader.root.children["cluster"].get("kubernetesVersion"))
    if problem:
        reader.reject("osSKU", f"{describe(reader.get('osSKU'))}: {problem}")


OS_SKU_CHECK = Check(os_sku_check, reads=("osSKU",), doc="`osSKU` is offered at `cluster.kubernetesVersion` "
                     "(AzureLinux3 and Ubuntu2204 up to 1.36; CBLMariner never).")


def cpu_size_check(reader: Reader) -> None:
    unsold = cpu_vm_size_problem(reader.get("vmSize"))
    if unsold:
        reader.problem("vmSize", f"{describe(reader.get('vmSize'))}: {unsold}")


CPU_SIZE_CHECK = Check(cpu_size_check, reads=("vmSize",), doc="A D/E/F `vmSize` is a series and version Azure sells.")
