"""What each pool costs, before `pulumi up`: hourly per node and monthly at the pool's floor and ceiling.

Pure, no Pulumi. A month is 730 hours (`pricing.HOURS_PER_MONTH`). A fixed or autoscaled AgentPool costs
`minCount` to `maxCount` nodes of its size, at its Spot or on-demand price. A NAP GPU NodePool starts
at no node (Karpenter creates nodes only for pending pods) and may bring any of its candidate sizes:
its `hourlyPerNode` is the cheapest candidate at the capacity it tries first (Spot when allowed),
`hourlyPerNodeMax` the dearest at any allowed capacity, and `monthlyAtMax` the dearest way to fill its
`limits` (most nodes of one candidate the GPU or vCPU ceiling admits, at its dearest allowed price). A
price the table lacks is `null` with the reason in `missing`; it is never shown as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.pools import PlatformPools
from components.pricing import HOURS_PER_MONTH, Capacity, PriceTable


@dataclass(frozen=True)
class Offer:
    """One size a pool may run, with the capacity types it may get, in the order tried."""

    vm_size: str
    capacity: tuple[Capacity, ...] = ("onDemand",)
    #: GPUs per node (for a GPU ceiling); vCPUs come from the size name.
    gpus: int = 0


@dataclass(frozen=True)
class PricedPool:
    """What pricing needs of a pool, whatever its kind."""

    name: str
    offers: tuple[Offer, ...]
    min_nodes: int
    max_nodes: int
    #: The most nodes of each offer, by lower-cased VM size (a NodePool's limits admit fewer big nodes).
    ceilings: Mapping[str, int] = field(default_factory=dict)
    kind: str = "agentPool"

    def nodes_at_most(self, offer: Offer) -> int:
        return self.ceilings.get(offer.vm_size.lower(), self.max_nodes)


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


def pool_cost(pool: PricedPool, table: PriceTable, region: str) -> PoolCost:
    missing: list[str] = []
    first: list[float] = []
    dearest: list[float] = []
    ceilings: list[float] = []
    candidates: list[dict[str, Any]] = []
    for offer in pool.offers:
        prices = {capacity: table.hourly(region, offer.vm_size, capacity) for capacity in offer.capacity}
        for capacity, price in prices.items():
            if price is None:
                missing.append(table.missing(region, offer.vm_size, capacity))
        tried_first = prices[offer.capacity[0]]
        known = [price for price in prices.values() if price is not None]
        nodes = pool.nodes_at_most(offer)
        candidates.append({"vmSize": offer.vm_size, "hourly": {c: p for c, p in prices.items()},
                           "maxNodes": nodes})
        if tried_first is not None:
            first.append(tried_first)
        if known:
            dearest.append(max(known))
            if nodes is not None:
                ceilings.append(nodes * max(known) * HOURS_PER_MONTH)
    if not pool.offers:
        missing.append(f"{pool.name}: no size gpu-aks can price (its GPUs or sizes are not in the catalog)")
    hourly = min(first) if first else None
    # A pool that may shrink to no node costs nothing at its floor, priced or not.
    at_min = 0.0 if pool.min_nodes == 0 else hourly * pool.min_nodes * HOURS_PER_MONTH if hourly is not None else None
    # The ceiling is the dearest candidate's: unknown while any candidate's price is missing.
    at_max = max(ceilings) if ceilings and not missing else None
    return PoolCost(
        _money(hourly, 4) if hourly is not None else None,
        _money(at_min, 2) if at_min is not None else None,
        _money(at_max, 2) if at_max is not None else None,
        _money(max(dearest), 4) if dearest else None,
        tuple(dict.fromkeys(missing)), tuple(candidates))


def cost_document(pools: Sequence[PricedPool], table: PriceTable, region: str) -> dict[str, Any]:
    """The preview's top-level `cost`: currency, the prices' date and source, and each pool's figures."""
    return {
        "currency": table.currency, "pricesAsOf": table.as_of.isoformat(), "source": table.source,
        "region": region, "hoursPerMonth": HOURS_PER_MONTH,
        "pools": {pool.name: {"kind": pool.kind, **pool_cost(pool, table, region).to_json(pool.kind)}
                  for pool in pools},
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
    lines.extend(f"    {note}" for note in document.get("notes", []))
    return lines


def priced_pools(pools: PlatformPools) -> list[PricedPool]:
    """Every pool of a stack as pricing needs it, from its facts (whatever its kind): its sizes, the
    capacity types they are bought at, and the most nodes of each (its capacity needs, else maxCount)."""
    priced = []
    for pool in pools.pools:
        ceilings = {need.vm_size.lower(): need.max_count for need in pool.capacity}
        if pool.offers:
            offers = tuple(Offer(offer.vm_size, offer.capacity_types, offer.sku.gpus) for offer in pool.offers)
        else:
            offers = tuple(Offer(size, ("spot",) if pool.spot else ("onDemand",)) for size in pool.vm_sizes)
        priced.append(PricedPool(pool.name, offers, pool.min_count, pool.max_count,
                                 {offer.vm_size.lower(): ceilings.get(offer.vm_size.lower(), pool.max_count)
                                  for offer in offers}, kind=pool.backend))
    return priced
