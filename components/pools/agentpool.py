"""The one AgentPool body builder, for the inline system pool and every AgentPool-backed pool.

As the Azure Verified Module for AKS does it (Azure/terraform-azurerm-avm-res-containerservice-
managedcluster: `modules/agentpool` builds every pool's body, and `main.default_agent_pool.tf` uses
the same submodule with `output_data_only = true` for `agentPoolProfiles[0]`): the inline profile
(`ManagedClusterAgentPoolProfile`) and a child `AgentPool` share their properties, so one builder
serves both; only the inline profile adds its `name` and the child pool its identity (resource group,
cluster, Azure name). Pure: it returns the SDK's keyword arguments in the SDK's Python names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class AgentPoolBody:
    """What one AgentPool-backed pool asks AKS for, in the API's terms."""

    mode: Literal["System", "User"]
    vm_size: str
    os_sku: str
    min_count: int
    max_count: int
    zones: Sequence[str]
    #: `nodeTaints` / `nodeLabels` as sent; None sends none (the inline system pool without a taint).
    node_taints: Sequence[str] | None
    node_labels: Mapping[str, str] | None
    #: `upgradeSettings` in the SDK's names (`PoolUpgradeSettings.as_api()`); None on Spot pools.
    upgrade_settings: Mapping[str, Any] | None
    #: `scaleSetPriority`: None leaves it unset (the inline system pool), else Regular or Spot.
    priority: Literal["Regular", "Spot"] | None = None
    #: Spot's highest price per hour (-1: up to the on-demand price); fixed at creation.
    spot_max_price: float = -1.0
    #: `gpuProfile.driver` and `gpuInstanceProfile` of a GPU pool, both fixed at creation.
    gpu_driver: str | None = None
    gpu_instance_profile: str | None = None

    #: Subnets, OS disk, pod density, host encryption: only what the config sets
    #: (`components/settings/node_baseline.py` `NodeBaseline.as_api()`).
    baseline: Mapping[str, Any] = field(default_factory=dict)

    @property
    def autoscaled(self) -> bool:
        """The cluster autoscaler sizes the pool (its counts differ); otherwise it is fixed-size."""
        return self.min_count != self.max_count


@dataclass(frozen=True)
class AgentPoolSpec:
    """A pool that is its own `AgentPool` resource: its body and its identity in Azure."""

    #: The pool's config name (its Pulumi resource is named after it).
    name: str
    #: The AgentPool's name in Azure (`components.settings.pools.azure_pool_name`).
    azure_name: str
    #: The Azure name is the config name (keepAzureName): a replacement must delete the old pool first.
    keeps_azure_name: bool
    body: AgentPoolBody


def agent_pool_properties(body: AgentPoolBody, kubernetes_version: str | None) -> dict[str, Any]:
    """The pool's properties as keyword arguments of `containerservice.AgentPool` and
    `ManagedClusterAgentPoolProfileArgs`. `kubernetes_version` None sends no orchestratorVersion
    (pulumi-azure-native#2094: AKS's auto-upgrade moves pools, and re-sending the pin would ask it
    for a downgrade)."""
    properties: dict[str, Any] = {
        "mode": body.mode,
        "os_type": "Linux",
        "os_sku": body.os_sku,
        "type": "VirtualMachineScaleSets",
        "vm_size": body.vm_size,
        "orchestrator_version": kubernetes_version,
        # The autoscaler sizes a pool between its counts; `count` only seeds a new pool. A pool whose
        # counts are equal is fixed-size: under node auto-provisioning AKS refuses autoscaling pools
        # ("Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be",
        # NodeProvisioningMode.Auto).
        "enable_auto_scaling": body.autoscaled,
        "count": body.min_count,
        **({"min_count": body.min_count, "max_count": body.max_count} if body.autoscaled else {}),
        "availability_zones": list(body.zones) or None,
        **body.baseline,
    }
    if body.node_taints is not None:
        properties["node_taints"] = list(body.node_taints)
    if body.node_labels is not None:
        properties["node_labels"] = dict(body.node_labels)
    if body.priority == "Spot":
        # Spot pools are upgraded without surge nodes or a drain (the settings refuse upgrade keys
        # there), and their priority, price and eviction policy are fixed at creation.
        properties.update(scale_set_priority="Spot", scale_set_eviction_policy="Delete",
                          spot_max_price=body.spot_max_price)
    elif body.priority == "Regular":
        properties["scale_set_priority"] = "Regular"
    if body.upgrade_settings is not None:
        properties["upgrade_settings"] = dict(body.upgrade_settings)
    if body.gpu_driver is not None:
        # `gpuProfile.driver` is set at creation and cannot be updated: `None` hands the driver (and
        # the device plugin) to something else, such as the NVIDIA GPU Operator.
        properties["gpu_profile"] = {"driver": body.gpu_driver}
    if body.gpu_instance_profile:
        properties["gpu_instance_profile"] = body.gpu_instance_profile
    return properties
