"""`NodePool` (CPU user pools) and `GpuNodePool`: each an AKS `AgentPool` of its own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import containerservice

from components.cluster import ClusterTarget
from components.settings import GpuNodePoolSettings, NodePoolSettings, create_only_properties

#: Properties Azure sets at creation and refuses to change in place. `vmSize`, `gpuInstanceProfile`
#: and `nodePublicIPTags` already force replacement in the provider; the rest would fail the update
#: ("PropertyChangeNotAllowed"), so a change to any of them replaces the pool. With suffixed Azure
#: names a change to them also changes the name, so the replacement is a new pool. Declared once, on
#: the pool keys (`create_only`), in the settings layer.
CREATE_ONLY_PROPERTIES = create_only_properties()


@dataclass(frozen=True)
class NodePoolArgs:
    pool: NodePoolSettings
    cluster: ClusterTarget


@dataclass(frozen=True)
class GpuNodePoolArgs:
    pool: GpuNodePoolSettings
    cluster: ClusterTarget


class NodePool(pulumi.ComponentResource):
    """An autoscaled user pool with its taints and labels.

    Its Azure name is the config name plus 4 hex characters of a hash of its create-only properties
    (the Azure Verified Module's pattern). A change to one of them is a new Azure name, so Pulumi
    creates the new pool before it deletes the old one and GPU capacity never drops to zero; pods pin
    themselves with the `gpu-aks.io/pool` label, which both pools carry. With `keepAzureName: true`
    the Azure name is the config name (gpu-aks 0.1 naming) and a replacement must delete first.
    """

    TYPE = "gpu-aks:index:NodePool"

    def __init__(self, name: str, args: NodePoolArgs | GpuNodePoolArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)
        pool = args.pool
        self.settings = pool
        self.agent_pool = containerservice.AgentPool(
            f"{name}-pool",
            agent_pool_name=pool.azure_name,
            resource_group_name=args.cluster.resource_group_name,
            resource_name_=args.cluster.cluster_name,
            # pulumi-azure-native#2094: re-sending a pinned orchestratorVersion after AKS's auto-upgrade
            # moved the pool asks AKS for a downgrade, which it refuses. When the channel moves versions
            # the pool sends none: it is created at the control plane's version and AKS moves it after.
            **self.agent_pool_properties(pool, None if args.cluster.aks_moves_version else args.cluster.kubernetes_version),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[args.cluster.cluster],
                # The autoscaler owns the node count once the pool exists.
                ignore_changes=["count"],
                replace_on_changes=CREATE_ONLY_PROPERTIES,
                # Two pools cannot share an Azure name: only a kept name has to go first.
                delete_before_replace=pool.keep_azure_name,
            ),
        )
        self.register_outputs({"name": pool.name, "azureName": self.agent_pool.name, "vmSize": pool.vm_size})

    def agent_pool_properties(self, pool: NodePoolSettings, kubernetes_version: str | None) -> dict[str, Any]:
        properties: dict[str, Any] = {
            "mode": "User",
            "os_type": "Linux",
            "os_sku": pool.os_sku,
            "type": "VirtualMachineScaleSets",
            "vm_size": pool.vm_size,
            "orchestrator_version": kubernetes_version,
            "enable_auto_scaling": True,
            "count": pool.min_count,
            "min_count": pool.min_count,
            "max_count": pool.max_count,
            "node_taints": list(pool.taints),
            "node_labels": dict(pool.labels),
            "availability_zones": list(pool.availability_zones) or None,
            # Subnets, OS disk, pod density, host encryption: only what the config sets.
            **pool.baseline.as_api(),
        }
        upgrade = pool.upgrade_settings()
        if upgrade is None:
            # Spot pools are upgraded without surge nodes or a drain (the settings refuse upgrade keys
            # there), and their priority, price and eviction policy are fixed at creation.
            properties.update(scale_set_priority="Spot", scale_set_eviction_policy="Delete",
                              spot_max_price=pool.spot_max_price)
        else:
            properties.update(scale_set_priority="Regular", upgrade_settings=upgrade.as_api())
        return properties


class GpuNodePool(NodePool):
    """A GPU pool: a `NodePool` plus the GPU driver choice and, on A100/H100/H200, a MIG profile.

    Scales to zero by default; tainted so only pods that tolerate the GPU taint land on it; labelled
    for Kubeflow (`accelerator=nvidia`) and Flyte (`nvidia.com/gpu.accelerator`, and for MIG
    `nvidia.com/gpu.partition-size`).
    """

    TYPE = "gpu-aks:index:GpuNodePool"

    def agent_pool_properties(self, pool: NodePoolSettings, kubernetes_version: str | None) -> dict[str, Any]:
        assert isinstance(pool, GpuNodePoolSettings)
        properties = super().agent_pool_properties(pool, kubernetes_version)
        # `gpuProfile.driver` is set at creation and cannot be updated: `None` hands the driver (and
        # the device plugin) to something else, such as the NVIDIA GPU Operator.
        properties["gpu_profile"] = {"driver": pool.gpu_driver}
        if pool.gpu_instance_profile:
            properties["gpu_instance_profile"] = pool.gpu_instance_profile
        return properties
