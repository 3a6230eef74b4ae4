"""The GPU pool kind: `gpu-aks:gpuPools`, each an autoscaled `AgentPool` of one NVIDIA GPU size.

One size per pool, so one offer: the size's GPUs (or MIG instances under `gpuInstanceProfile`), asked
for as `nvidia.com/gpu` or, under the device plugin's mixed MIG strategy, `nvidia.com/mig-<partition>`.
Tainted so only pods that tolerate the GPU taint land on it; labelled for Kubeflow
(`accelerator=nvidia`) and Flyte (`nvidia.com/gpu.accelerator`, and for MIG
`nvidia.com/gpu.partition-size`) by the settings layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.pools.agentpool import AgentPoolSpec
from components.pools.kind import GpuOffer, PoolFacts
from components.pools.user import user_pool_body, user_pool_capacity, user_pool_spec
from components.settings.pools import GPU_POOLS, GpuNodePoolSettings

if TYPE_CHECKING:
    from components.settings import PlatformSettings


class GpuPoolKind:
    config_key = "gpuPools"
    section = GPU_POOLS
    inline = False
    component_type = "gpu-aks:index:GpuAgentPool"
    former_types: tuple[str, ...] = ("gpu-aks:index:GpuNodePool",)

    def pools(self, settings: PlatformSettings) -> tuple[GpuNodePoolSettings, ...]:
        return settings.gpu_pools

    def agent_pool(self, pool: GpuNodePoolSettings) -> AgentPoolSpec:
        return user_pool_spec(pool, user_pool_body(pool, gpu_driver=pool.gpu_driver,
                                                   gpu_instance_profile=pool.gpu_instance_profile))

    def offers(self, pool: GpuNodePoolSettings) -> tuple[GpuOffer, ...]:
        return (GpuOffer(pool.vm_size, pool.gpu, pool.gpu_resource, pool.gpus_per_node, pool.gpu_instance_profile,
                         pool.mig_partition, ("spot",) if pool.spot else ("onDemand",)),)

    def facts(self, pool: GpuNodePoolSettings, settings: PlatformSettings) -> PoolFacts:
        key = f"{self.config_key}[{pool.name}]"
        return PoolFacts(
            name=pool.name, key=key, backend="agentPool", role="gpu", azure_name=pool.azure_name,
            vm_sizes=(pool.vm_size,), min_count=pool.min_count, max_count=pool.max_count, spot=pool.spot,
            zones=pool.availability_zones, taints=pool.taints, labels=dict(pool.labels), offers=self.offers(pool),
            device_plugin="gpu-aks" if pool.device_plugin else "external",
            exporter=pool.device_plugin and settings.observability.exporter_enabled,
            capacity=user_pool_capacity(key, pool))


GPU = GpuPoolKind()
