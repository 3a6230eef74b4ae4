"""The outputs contract app stacks read through `StackReference`. Pure, no Pulumi imports.

For each GPU pool it gives everything a pod needs to land there, already worked out: the exact
`tolerations` and `nodeSelector`, the resource name to ask for and how many fit on one node. The
README documents this shape; `examples/` and `gpu_request.py` consume it.
"""

from __future__ import annotations

from typing import Any

from components.manifests import pool_tolerations
from components.settings import GpuNodePoolSettings, NodePoolSettings, PlatformSettings
from policies.catalog import ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE, POOL_LABEL

#: 2: pools carry `azureName` and `poolLabel`, and `nodeSelector` pins with gpu-aks's pool label
#: instead of AKS's agentpool label (whose value changes when a pool is replaced).
CONTRACT_VERSION = 2


def gpu_node_selector(pool: GpuNodePoolSettings) -> dict[str, str]:
    """Pins a pod to this pool (gpu-aks's pool label, stable across replacements) and to GPU nodes
    (the accelerator label the policy pack's `gpu-pods-select-gpu-nodes` looks for)."""
    return {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: pool.name}


def gpu_pool_contract(pool: GpuNodePoolSettings) -> dict[str, Any]:
    return {
        "name": pool.name,
        "azureName": pool.azure_name,
        "poolLabel": {POOL_LABEL: pool.name},
        "vmSize": pool.vm_size,
        "gpuModel": pool.gpu.model,
        "gpuMemoryGiB": pool.gpu.gpu_memory_gib,
        "gpusPerVm": pool.gpu.gpus,
        "gpusPerNode": pool.gpus_per_node,
        "gpuResource": pool.gpu_resource,
        "gpuInstanceProfile": pool.gpu_instance_profile,
        "migPartition": pool.mig_partition,
        "accelerator": pool.gpu.accelerator,
        "spot": pool.spot,
        "minCount": pool.min_count,
        "maxCount": pool.max_count,
        "taints": list(pool.taints),
        "labels": dict(pool.labels),
        "devicePlugin": "gpu-aks" if pool.device_plugin else "external",
        "tolerations": pool_tolerations([pool]),
        "nodeSelector": gpu_node_selector(pool),
    }


def cpu_pool_contract(pool: NodePoolSettings) -> dict[str, Any]:
    return {
        "name": pool.name, "azureName": pool.azure_name, "poolLabel": {POOL_LABEL: pool.name},
        "vmSize": pool.vm_size, "minCount": pool.min_count, "maxCount": pool.max_count,
        "taints": list(pool.taints), "labels": dict(pool.labels), "spot": pool.spot,
    }


def platform_contract(settings: PlatformSettings) -> dict[str, Any]:
    """Everything in the contract that config alone decides (the cluster's own outputs are added by
    the Pulumi layer: cluster name, kubeconfig, OIDC issuer URL)."""
    return {
        "contractVersion": CONTRACT_VERSION,
        "location": settings.cluster.location,
        "kubernetesVersion": settings.cluster.kubernetes_version,
        "gpuNamespace": settings.device_plugin.namespace,
        "migStrategy": settings.device_plugin.mig_strategy,
        "gpuPools": {pool.name: gpu_pool_contract(pool) for pool in settings.gpu_pools},
        "cpuPools": {pool.name: cpu_pool_contract(pool) for pool in settings.cpu_pools},
    }
