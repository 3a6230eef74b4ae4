"""What each pool costs, before `pulumi up`: hourly per node and monthly at the pool's floor and ceiling,
the stack's total, and what is left out.

Pure, no Pulumi. A month is 730 hours (`pricing.HOURS_PER_MONTH`). A fixed or autoscaled AgentPool costs
`minCount` to `maxCount` nodes of its size, at its Spot or on-demand price. A NAP GPU NodePool starts
at no node (Karpenter creates nodes only for pending pods) and may bring any of its candidate sizes:
its `hourlyPerNode` is the cheapest candidate at the capacity it tries first (Spot when allowed),
`hourlyPerNodeMax` the dearest at any allowed capacity, and `monthlyAtMax` the dearest way to fill its
`limits` (most nodes of one candidate the GPU or vCPU ceiling admits, at its dearest allowed price).

A Spot hour never costs more than the on-demand hour: Spot's default max price, -1, caps it there (AKS
`spotMaxPrice`, Karpenter's Spot offerings), so a Spot pool whose Spot price the table lacks is bounded
by its on-demand price, and its ceiling is a number. A price the table lacks otherwise is `null` with
the reason in `missing`, never 0; a pool that may bring a size gpu-aks cannot price has no ceiling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_aks_policies.pools.model import Pool

from components.pricing import HOURS_PER_MONTH, Capacity, PriceTable


@dataclass(frozen=True)
class PoolCost:
    hourly_per_node: float | None
    monthly_at_min: float | None
    monthly_at_max: float | None
    hourly_per_node_max: float | None = None
    missing: tuple[str, ...] = ()
    candidates: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def to_json(self, kind: str) -> dict[str, Any]:
        document: dict[str, Any] = {"hourlyPerNode": self.hourly_per_node, "monthlyAtMin": self.monthly_at_min,
                                    "monthlyAtMax": self.monthly_at_max}
        if kind == "nodePool":
            document["hourlyPerNodeMax"] = self.hourly_per_node_max
            document["candidates"] = list(self.candidates)
        if self.missing:
            document["missing"] = list(self.missing)
        return document


def _money(value: float, digits: int) -> float:
    return round(value, digits)


def _bound(capacity: Capacity, price: float | None, on_demand: float | None) -> float | None:
    """The most an hour at this capacity can cost: its price, or for Spot without one, the on-demand
    price its default max price (-1) caps it at."""
    return price if price is not None else on_demand if capacity == "spot" else None


def pool_cost(pool: Pool, table: PriceTable, region: str) -> PoolCost:
    """A pool's prices, from its offers (each size at the capacity types it is bought at: the price key)
    and the most nodes of each (`Pool.nodes_at_most`)."""
    missing: list[str] = []
    first: list[float] = []
    dearest: list[float] = []
    ceilings: list[float] = []
    candidates: list[dict[str, Any]] = []
    unbounded = False
    for offer in pool.offers:
        prices = {capacity: table.hourly(region, offer.vm_size, capacity) for capacity in offer.capacity_types}
        on_demand = table.hourly(region, offer.vm_size, "onDemand")
        bounds = {capacity: _bound(capacity, price, on_demand) for capacity, price in prices.items()}
        for capacity, price in prices.items():
            if price is None:
                reason = table.missing(region, offer.vm_size, capacity)
                if bounds[capacity] is not None:
                    reason += (f"; its ceiling counts the on-demand price, {bounds[capacity]:,} {table.currency}/h, "
                               "which Spot's default max price (-1) never passes")
                missing.append(reason)
        tried_first = prices[offer.capacity_types[0]]
        nodes = pool.nodes_at_most(offer)
        candidates.append({"vmSize": offer.vm_size, "hourly": {c: p for c, p in prices.items()},
                           "maxNodes": nodes})
        if tried_first is not None:
            first.append(tried_first)
        known = [bound for bound in bounds.values() if bound is not None]
        if len(known) < len(bounds):
            unbounded = True
            continue
        dearest.append(max(known))
        ceilings.append(nodes * max(known) * HOURS_PER_MONTH)
    if not pool.offers:
        missing.append(f"{pool.name}: no size gpu-aks can price (its GPUs or sizes are not in the catalog)")
    if pool.uncatalogued:
        missing.append(f"{pool.name} may bring {', '.join(pool.uncatalogued)}, which gpu-aks's catalog lacks: no price, "
                       "so no ceiling")
    hourly = min(first) if first else None
    # A pool that may shrink to no node costs nothing at its floor, priced or not.
    floor = pool.min_count or 0  # the platform's pools always have their counts
    at_min = 0.0 if floor == 0 else hourly * floor * HOURS_PER_MONTH if hourly is not None else None
    # The ceiling is the dearest candidate's: unknown while any size it may bring has no bound.
    at_max = max(ceilings) if ceilings and not unbounded and not pool.uncatalogued else None
    return PoolCost(
        _money(hourly, 4) if hourly is not None else None,
        _money(at_min, 2) if at_min is not None else None,
        _money(at_max, 2) if at_max is not None else None,
        _money(max(dearest), 4) if dearest else None,
        tuple(dict.fromkeys(missing)), tuple(candidates))


#: The control plane's hourly fee per cluster, by `cluster.skuTier`, in USD (Microsoft's AKS pricing page,
#: azure.microsoft.com/pricing/details/kubernetes-service: Free tier no charge, Standard 0.10, Premium 0.60
#: per cluster hour; one list price in every public region).
CLUSTER_TIER_HOURLY: Mapping[str, float] = {"Free": 0.0, "Standard": 0.10, "Premium": 0.60}

#: What the figures leave out: each costs money, and none has a price gpu-aks can know before `up`.
EXCLUDED = (
    "OS and data disks (each node's managed OS disk; ephemeral OS disks are in the VM price), and persistent volumes",
    "Azure Monitor: managed Prometheus ingestion and queries, Container Insights logs, Managed Grafana "
    "(`observability`)",
    "network egress and data processing: the load balancer's outbound rules, a NAT gateway, or your firewall "
    "under userDefinedRouting; public IP addresses",
    "reservations, savings plans and negotiated discounts (these are list prices), taxes",
    "Spot evictions' rework, and capacity reservations' unused hours",
)


def cost_document(pools: Sequence[Pool], table: PriceTable, region: str, sku_tier: str = "Free",
                  unbounded: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The preview's top-level `cost`: currency, the prices' date and source, each pool's figures, the
    cluster's tier fee, the stack's total, and what is not priced. `unbounded`: pools beside the stack's own
    that may grow without bound (AKS's `default` NodePool under `defaultNodePools: Auto`), by name with
    why: the total has no ceiling while one is there, and says which."""
    figures = {pool.name: {"kind": pool.backend, **pool_cost(pool, table, region).to_json(pool.backend)}
               for pool in pools}
    tier_hourly = CLUSTER_TIER_HOURLY.get(sku_tier, 0.0) if table.currency == "USD" else None
    tier = {"tier": sku_tier, "hourly": tier_hourly,
            "monthly": _money(tier_hourly * HOURS_PER_MONTH, 2) if tier_hourly is not None else None}

    def total(key: str) -> float | None:
        values = [pool[key] for pool in figures.values()] + [tier["monthly"]]
        return _money(sum(values), 2) if all(value is not None for value in values) else None

    # Karpenter starts every NodePool at no node, so an unbounded one adds nothing at the floor.
    ceiling = total("monthlyAtMax") if not unbounded else None
    return {
        "currency": table.currency, "pricesAsOf": table.as_of.isoformat(), "source": table.source,
        "region": region, "hoursPerMonth": HOURS_PER_MONTH, "pools": figures, "clusterTier": tier,
        "total": {"monthlyAtMin": total("monthlyAtMin"), "monthlyAtMax": ceiling,
                  **({"unbounded": [f"{name}: {why}" for name, why in unbounded.items()]} if unbounded else {})},
        "excluded": list(EXCLUDED),
        **({"notes": list(table.notes)} if table.notes else {}),
    }


def _figure(value: float | None, currency: str) -> str:
    return f"{value:,.2f} {currency}" if value is not None else "no price"


def cost_lines(document: dict[str, Any]) -> list[str]:
    """The summary's lines: the same figures as `cost` in the JSON document."""
    currency = document["currency"]
    lines = [f"  Cost ({currency}, {document['hoursPerMonth']} h a month; prices as of {document['pricesAsOf']}, "
             f"{document['region']}):"]
    for name, pool in document["pools"].items():
        hourly = pool["hourlyPerNode"]
        per_node = f"{hourly:,.4f} {currency}/h per node" if hourly is not None else "no price per node"
        if pool["kind"] == "nodePool" and pool.get("hourlyPerNodeMax") not in (None, hourly):
            per_node = f"{hourly:,.4f}-{pool['hourlyPerNodeMax']:,.4f} {currency}/h per node" \
                if hourly is not None else per_node
        lines.append(f"    {name}: {per_node}; {_figure(pool['monthlyAtMin'], currency)} a month at the floor, "
                     f"{_figure(pool['monthlyAtMax'], currency)} at the ceiling")
        lines.extend(f"      {reason}" for reason in pool.get("missing", []))
    tier = document["clusterTier"]
    lines.append(f"    control plane ({tier['tier']} tier): {_figure(tier['monthly'], currency)} a month")
    total = document["total"]
    ceiling = f"{_figure(total['monthlyAtMax'], currency)} at the ceiling (list prices)" if "unbounded" not in total else \
        "no ceiling: " + "; ".join(total["unbounded"])
    lines.append(f"    total: {_figure(total['monthlyAtMin'], currency)} a month at the floor, {ceiling}")
    lines.append(f"    not priced: {'; '.join(document['excluded'])}")
    lines.extend(f"    {note}" for note in document.get("notes", []))
    return lines
