"""The outputs contract app stacks read through `StackReference`, written from the pools' facts
(`components/pools/`). Pure, no Pulumi, and no pool-kind code: every pool entry comes from its
`Pool`.

For each GPU pool it gives everything a pod needs to land there, already worked out: the exact
`tolerations` and `nodeSelector`, the resource name to ask for and how many fit on one node. The
contract's type, its reader and its JSON Schema live in `policies/contract.py`; `docs/contract.md`
documents each field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gpu_aks_policies.catalog import ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE, POOL_LABEL
from gpu_aks_policies.contract import (
    CONTRACT_VERSION,
    CpuPoolEntry,
    GpuOfferEntry,
    GpuPoolEntry,
    OfferPrice,
    PlatformContract,
    PoolEntry,
    spot_first,
)
from gpu_aks_policies.pools.model import Offer, Pool

from components.manifests import pool_tolerations
from components.platform_settings import PlatformSettings
from components.pools import PlatformPools, platform_pools
from components.pricing import PriceError, PriceTable, read_price_table

__all__ = ["CONTRACT_VERSION", "contract_of", "cpu_pool_contract", "gpu_node_selector", "gpu_pool_contract",
           "platform_contract", "pool_entry"]


def gpu_node_selector(pool: Pool) -> dict[str, str]:
    """Pins a pod to this pool (gpu-aks's pool label, stable across replacements) and to GPU nodes
    (the accelerator label the policy pack's `gpu-pods-select-gpu-nodes` looks for), where the pool's
    nodes carry it: a NAP NodePool's cannot (Azure's NodePool CRD refuses the `accelerator` label)."""
    wanted = {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: pool.name}
    return {key: value for key, value in wanted.items() if key == POOL_LABEL or pool.labels.get(key) == value}


def offer_price(offer: Offer, prices: PriceTable | None, region: str | None) -> OfferPrice | None:
    """The list price of one node of the offer an hour, from the price table (the explainer tells a pod
    what its node costs and its part of it); None without a table or a region."""
    if prices is None or not region:
        return None
    on_demand = prices.hourly(region, offer.vm_size, "onDemand")
    spot = prices.hourly(region, offer.vm_size, "spot")
    if on_demand is None and spot is None:
        return None
    return OfferPrice(on_demand=on_demand, spot=spot, currency=prices.currency, as_of=prices.as_of.isoformat())


def offer_contract(offer: Offer, prices: PriceTable | None = None, region: str | None = None) -> GpuOfferEntry:
    """One of the pool's GPU offers as the contract writes it."""
    return GpuOfferEntry(vm_size=offer.vm_size, gpu_model=offer.gpu_sku.model, gpu_memory_gib=offer.gpu_sku.gpu_memory_gib,
                    gpus_per_vm=offer.gpu_sku.gpus, resource=offer.resource, per_node=offer.per_node,
                    mig_partition=offer.mig_partition, capacity_types=offer.capacity_types,
                    hourly_price=offer_price(offer, prices, region))


def gpu_pool_contract(pool: Pool, exported: bool = False, prices: PriceTable | None = None,
                      region: str | None = None) -> GpuPoolEntry:
    """A GPU pool as the contract describes it; `exported`: gpu-aks's DCGM exporter runs on it. The
    single-size fields describe the pool's first offer (an AgentPool's only one)."""
    offer = pool.gpu_offers[0]
    capacity = spot_first(kind for each in pool.gpu_offers for kind in each.capacity_types)
    return GpuPoolEntry(
        name=pool.name,
        kind=pool.backend,
        azure_name=pool.azure_name,
        pool_label={POOL_LABEL: pool.name},
        vm_size=offer.vm_size,
        gpu_model=offer.gpu_sku.model,
        gpu_memory_gib=offer.gpu_sku.gpu_memory_gib,
        gpus_per_vm=offer.gpu_sku.gpus,
        gpus_per_node=offer.per_node,
        gpu_resource=offer.resource,
        gpu_instance_profile=offer.gpu_instance_profile,
        mig_partition=offer.mig_partition,
        accelerator=offer.gpu_sku.accelerator,
        # Every node a Spot VM; a NodePool that falls back to on-demand says so in capacityTypes.
        spot=capacity == ("spot",),
        min_count=pool.min_count,
        max_count=pool.max_count,
        taints=tuple(pool.taints),
        labels=dict(pool.labels),
        device_plugin=pool.device_plugin,
        tolerations=tuple(pool_tolerations([pool])),
        node_selector=gpu_node_selector(pool),
        dcgm_exporter="gpu-aks" if exported else "none",
        offers=tuple(offer_contract(each, prices, region) for each in pool.gpu_offers),
        sharing=pool.sharing,
        capacity_types=capacity,
    )


def pool_entry(pool: Pool, exported: bool = False, prices: PriceTable | None = None,
               region: str | None = None) -> PoolEntry:
    """A pool as version 3 writes it: the model serialized, each offer with its list price (the
    explainer tells a pod what its node costs) and `exporter` where gpu-aks's DCGM exporter runs."""
    entry = pool.to_entry()
    offers = tuple(replace(written, hourly_price=offer_price(offer, prices, region))
                   for written, offer in zip(entry.offers, pool.offers, strict=True))
    return replace(entry, offers=offers, exporter=exported)


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
    pools = pools or platform_pools(settings)
    prices = shipped_prices()
    return PlatformContract(
        contract_version=CONTRACT_VERSION,
        location=settings.cluster.location,
        kubernetes_version=settings.cluster.kubernetes_version,
        gpu_namespace=settings.device_plugin.namespace,
        mig_strategy=settings.device_plugin.mig_strategy,  # type: ignore[arg-type]  # settings checked it
        gpu_pools={pool.name: gpu_pool_contract(pool, exported=settings.observability.enabled and pool.exporter,
                                                prices=prices, region=settings.cluster.location)
                   for pool in pools.gpu},
        cpu_pools={pool.name: cpu_pool_contract(pool) for pool in pools.user},
        # The model says where the exporter would run; the contract says where it runs (observability on).
        pools={pool.name: pool_entry(pool, settings.observability.enabled and pool.exporter, prices,
                                     settings.cluster.location)
               for pool in pools.pools},
    )


def platform_contract(settings: PlatformSettings, pools: PlatformPools | None = None) -> dict[str, Any]:
    """The contract as the program exports it: each key one stack output."""
    return contract_of(settings, pools).to_json()
