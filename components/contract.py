"""The outputs contract app stacks read through `StackReference`, written from the pools' facts
(`components/pools/`). Pure, no Pulumi, and no pool-kind code: version 3's `pools` are the platform's
`Pool`s themselves, each offer priced by the platform's pricing; version 2's `gpuPools` and
`cpuPools` are written from the same `Pool`s, for the window the CHANGELOG states.

For each GPU pool version 2 gives everything a pod needs to land there, already worked out: the exact
`tolerations` and `nodeSelector`, the resource name to ask for and how many fit on one node. The
contract's type, its reader and its JSON Schema live in `policies/contract.py` (version 2's entries in
`policies/contract_v2.py`); `docs/contract.md` documents each field.
"""

from __future__ import annotations

from typing import Any

from gpu_aks_policies.catalog import ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE, GPU_MODEL_LABEL, POOL_LABEL, gpu_sku
from gpu_aks_policies.contract import CONTRACT_VERSION, PlatformContract
from gpu_aks_policies.contract_v2 import CpuPoolEntry, GpuOfferEntry, GpuPoolEntry
from gpu_aks_policies.pools.model import Offer, Pool, spot_first

from components.manifests import pool_tolerations
from components.platform_settings import PlatformSettings
from components.pools import PlatformPools, platform_pools
from components.pricing import PriceError, PriceTable, priced, read_price_table

__all__ = ["CONTRACT_VERSION", "contract_of", "cpu_pool_contract", "gpu_node_selector", "gpu_pool_contract",
           "platform_contract"]


def gpu_node_selector(pool: Pool) -> dict[str, str]:
    """Pins a pod to this pool (gpu-aks's pool label, stable across replacements) and to GPU nodes
    (the accelerator label the policy pack's `gpu-pods-select-gpu-nodes` looks for), where the pool's
    nodes carry it: a NAP NodePool's cannot (Azure's NodePool CRD refuses the `accelerator` label)."""
    wanted = {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: pool.name}
    return {key: value for key, value in wanted.items() if key == POOL_LABEL or pool.labels.get(key) == value}


def offer_contract(offer: Offer) -> GpuOfferEntry:
    """One of the pool's GPU offers as version 2 writes it."""
    return GpuOfferEntry(vm_size=offer.vm_size, gpu_model=offer.gpu_model, gpu_memory_gib=offer.gpu_memory_gib,
                         gpus_per_vm=offer.gpus_per_vm, resource=offer.resource or "", per_node=offer.per_node,
                         mig_partition=offer.mig_partition, capacity_types=offer.capacity_types,
                         hourly_price=offer.hourly_price)


def gpu_pool_contract(pool: Pool) -> GpuPoolEntry:
    """A GPU pool as version 2 describes it. The single-size fields describe the pool's first offer (an
    AgentPool's only one)."""
    offer = pool.gpu_offers[0]
    capacity = spot_first(kind for each in pool.gpu_offers for kind in each.capacity_types)
    # The nvidia.com/gpu.accelerator value: the catalog's, else the stack's declared GPU's, on the pool's labels.
    sku = gpu_sku(offer.vm_size)
    return GpuPoolEntry(
        name=pool.name,
        kind=pool.backend,
        azure_name=pool.azure_name,
        pool_label={POOL_LABEL: pool.name},
        vm_size=offer.vm_size,
        gpu_model=offer.gpu_model,
        gpu_memory_gib=offer.gpu_memory_gib,
        gpus_per_vm=offer.gpus_per_vm,
        gpus_per_node=offer.per_node,
        gpu_resource=offer.resource or "",
        gpu_instance_profile=offer.gpu_instance_profile,
        mig_partition=offer.mig_partition,
        accelerator=sku.accelerator if sku is not None else pool.labels.get(GPU_MODEL_LABEL),
        # Every node a Spot VM; a NodePool that falls back to on-demand says so in capacityTypes.
        spot=capacity == ("spot",),
        min_count=pool.min_count,
        max_count=pool.max_count,
        taints=tuple(pool.taints),
        labels=dict(pool.labels),
        device_plugin=pool.device_plugin,
        tolerations=tuple(pool_tolerations([pool])),
        node_selector=gpu_node_selector(pool),
        dcgm_exporter="gpu-aks" if pool.exporter else "none",
        offers=tuple(offer_contract(each) for each in pool.gpu_offers),
        sharing=pool.sharing,
        capacity_types=capacity,
    )


def cpu_pool_contract(pool: Pool) -> CpuPoolEntry:
    return CpuPoolEntry(
        name=pool.name, azure_name=pool.azure_name, pool_label={POOL_LABEL: pool.name}, vm_size=pool.vm_size,
        min_count=pool.min_count, max_count=pool.max_count, taints=tuple(pool.taints), labels=dict(pool.labels),
        spot=pool.spot,
    )


def shipped_prices() -> PriceTable | None:
    """The price table gpu-aks ships (`components/prices.json`), or None if it cannot be read (the
    contract then carries no prices, and nothing else changes)."""
    try:
        return read_price_table()
    except PriceError:
        return None


def contract_of(settings: PlatformSettings, pools: PlatformPools | None = None) -> PlatformContract:
    """Everything in the contract that config alone decides (the cluster's own outputs are added by
    the Pulumi layer: cluster name, kubeconfig, OIDC issuer URL). `pools`: the settings' pool facts,
    when the caller has them already."""
    prices, region = shipped_prices(), settings.cluster.location
    every = [priced(pool, prices, region) for pool in (pools or platform_pools(settings)).pools]
    return PlatformContract(
        contract_version=CONTRACT_VERSION,
        location=settings.cluster.location,
        kubernetes_version=settings.cluster.kubernetes_version,
        gpu_namespace=settings.device_plugin.namespace,
        mig_strategy=settings.device_plugin.mig_strategy,  # type: ignore[arg-type]  # settings checked it
        gpu_pools={pool.name: gpu_pool_contract(pool) for pool in every if pool.gpu},
        cpu_pools={pool.name: cpu_pool_contract(pool) for pool in every if pool.role == "cpu"},
        pools={pool.name: pool for pool in every},
    )


def platform_contract(settings: PlatformSettings, pools: PlatformPools | None = None) -> dict[str, Any]:
    """The contract as the program exports it: each key one stack output."""
    return contract_of(settings, pools).to_json()
