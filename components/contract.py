"""The outputs contract app stacks read through `StackReference`, built from the settings. Pure, no
Pulumi imports.

For each GPU pool it gives everything a pod needs to land there, already worked out: the exact
`tolerations` and `nodeSelector`, the resource name to ask for and how many fit on one node. The
contract's type, its reader and its JSON Schema live in `policies/contract.py`; `docs/contract.md`
documents each field.
"""

from __future__ import annotations

from typing import Any

from gpu_aks_policies.catalog import ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE, POOL_LABEL
from gpu_aks_policies.contract import (
    CONTRACT_VERSION,
    CpuPoolEntry,
    GpuOfferEntry,
    GpuPoolEntry,
    PlatformContract,
    PoolSharing,
)

from components.manifests import pool_tolerations
from components.settings import GpuNodePoolSettings, NodePoolSettings, PlatformSettings
from observability.rules import exporter_pools

__all__ = ["CONTRACT_VERSION", "contract_of", "cpu_pool_contract", "gpu_node_selector", "gpu_pool_contract",
           "platform_contract"]


def gpu_node_selector(pool: GpuNodePoolSettings) -> dict[str, str]:
    """Pins a pod to this pool (gpu-aks's pool label, stable across replacements) and to GPU nodes
    (the accelerator label the policy pack's `gpu-pods-select-gpu-nodes` looks for)."""
    return {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: pool.name}


def gpu_pool_contract(pool: GpuNodePoolSettings, exported: bool = False) -> GpuPoolEntry:
    """A GPU pool as the contract describes it; `exported`: gpu-aks's DCGM exporter runs on it."""
    # An AgentPool-backed pool brings one VM size: its one offer, which the single-size fields repeat.
    offer = GpuOfferEntry(vm_size=pool.vm_size, gpu_model=pool.gpu.model, gpu_memory_gib=pool.gpu.gpu_memory_gib,
                     gpus_per_vm=pool.gpu.gpus, resource=pool.gpu_resource, per_node=pool.advertised_per_node,
                     mig_partition=pool.mig_partition, capacity_types=("spot",) if pool.spot else ("onDemand",))
    return GpuPoolEntry(
        name=pool.name,
        kind="agentPool",
        azure_name=pool.azure_name,
        pool_label={POOL_LABEL: pool.name},
        vm_size=offer.vm_size,
        gpu_model=offer.gpu_model,
        gpu_memory_gib=offer.gpu_memory_gib,
        gpus_per_vm=offer.gpus_per_vm,
        gpus_per_node=offer.per_node,
        gpu_resource=offer.resource,
        gpu_instance_profile=pool.gpu_instance_profile,
        mig_partition=offer.mig_partition,
        accelerator=pool.gpu.accelerator,
        spot=pool.spot,
        min_count=pool.min_count,
        max_count=pool.max_count,
        taints=tuple(pool.taints),
        labels=dict(pool.labels),
        device_plugin="gpu-aks" if pool.device_plugin else "external",
        tolerations=tuple(pool_tolerations([pool])),
        node_selector=gpu_node_selector(pool),
        dcgm_exporter="gpu-aks" if exported else "none",
        offers=(offer,),
        sharing=PoolSharing(pool.sharing.strategy, pool.sharing.replicas) if pool.sharing else None,
    )


def cpu_pool_contract(pool: NodePoolSettings) -> CpuPoolEntry:
    return CpuPoolEntry(
        name=pool.name, azure_name=pool.azure_name, pool_label={POOL_LABEL: pool.name}, vm_size=pool.vm_size,
        min_count=pool.min_count, max_count=pool.max_count, taints=tuple(pool.taints), labels=dict(pool.labels),
        spot=pool.spot,
    )


def contract_of(settings: PlatformSettings) -> PlatformContract:
    """Everything in the contract that config alone decides (the cluster's own outputs are added by
    the Pulumi layer: cluster name, kubeconfig, OIDC issuer URL)."""
    exported = {pool.name for pool in exporter_pools(settings)} if settings.observability.enabled else set()
    return PlatformContract(
        contract_version=CONTRACT_VERSION,
        location=settings.cluster.location,
        kubernetes_version=settings.cluster.kubernetes_version,
        gpu_namespace=settings.device_plugin.namespace,
        mig_strategy=settings.device_plugin.mig_strategy,  # type: ignore[arg-type]  # settings checked it
        gpu_pools={pool.name: gpu_pool_contract(pool, exported=pool.name in exported) for pool in settings.gpu_pools},
        cpu_pools={pool.name: cpu_pool_contract(pool) for pool in settings.cpu_pools},
    )


def platform_contract(settings: PlatformSettings) -> dict[str, Any]:
    """The contract as the program exports it: each key one stack output."""
    return contract_of(settings).to_json()
