"""What a VM size costs per hour: the dated price table, and the reader of Azure's Retail Prices API.

Pure, no Pulumi and no network: `tools.prices` fetches, `tools.preview` prices pools with it.

Azure's public Retail Prices API (https://prices.azure.com/api/retail/prices, api-version
2023-01-01-preview; learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)
answers in JSON pages: `{"BillingCurrency", "Items": [...], "NextPageLink", "Count"}`. Each item has
`armSkuName`, `armRegionName`, `retailPrice`, `unitOfMeasure` ("1 Hour"), `type` (`Consumption`,
`Reservation`, `DevTestConsumption`), `skuName`, `meterName`, `productName`, `serviceName`,
`currencyCode` and `effectiveStartDate`. Which rows are a Linux pay-as-you-go or Spot price follows
Microsoft's own reader, Azure/karpenter-provider-azure `pkg/providers/pricing/pricing.go` (`processPage`,
`categorizePrices`): rows whose `productName` ends in " Windows" or whose `meterName` ends in
" Low Priority" are dropped, and a row is Spot when its `skuName` ends in " Spot".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, TypeGuard

from gpu_aks_policies.documents import DocumentError, Limits, load_json, read_file
from gpu_aks_policies.limits import (
    MAX_ITEMS,
    MAX_LISTED_HOURLY_PRICE,
    MAX_NAMED_CAPS,
    MAX_PAGES,
    MAX_SHOWN_CHARS,
    clipped,
    is_finite_number,
)
from gpu_aks_policies.pools.model import CapacityType, Offer, OfferPrice, Pool
from gpu_aks_policies.terminal import escape_line

#: A month of a node that runs all the time, as Azure's pricing calculator counts it.
HOURS_PER_MONTH = 730

RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
RETAIL_PRICES_API_VERSION = "2023-01-01-preview"

#: The table gpu-aks ships (`python -m tools.prices` rewrites it).
PRICE_TABLE = Path(__file__).resolve().parent / "prices.json"

#: A currency as the API writes it: an ISO 4217 code (`USD`); the summary prints it beside every figure.
CURRENCY_CODE = re.compile(r"[A-Z]{3}")
#: A file of captured pages, or the table: bounded like every file a tool is handed.
FILE_LIMITS = Limits(max_bytes=256 * 1024 * 1024, max_depth=32, max_nodes=20_000_000)

#: How a node is bought, as the outputs contract spells it.
Capacity = CapacityType


class PriceError(Exception):
    """A price table or a Retail Prices API answer that cannot be read; the message says where and why."""


@dataclass(frozen=True)
class SizePrice:
    """Hourly prices of one size in one region; None where the source had none (never 0)."""

    on_demand: float | None = None
    spot: float | None = None

    def of(self, capacity: Capacity) -> float | None:
        return self.spot if capacity == "spot" else self.on_demand


@dataclass(frozen=True)
class PriceTable:
    """Hourly Linux prices per region and VM size, with their currency, date and source."""

    currency: str
    as_of: date
    source: str
    #: region -> lower-cased VM size -> prices.
    prices: Mapping[str, Mapping[str, SizePrice]] = field(default_factory=dict)
    #: The sizes as Azure spells them, by their lower-cased name.
    names: Mapping[str, str] = field(default_factory=dict)
    #: What reading the prices changed, said wherever the table is used (a Spot price capped).
    notes: tuple[str, ...] = ()

    def hourly(self, region: str, vm_size: str, capacity: Capacity) -> float | None:
        """The hourly price, or None when the table has none for this size, region and capacity."""
        return self.prices.get(region.lower(), {}).get(vm_size.lower(), SizePrice()).of(capacity)

    def missing(self, region: str, vm_size: str, capacity: Capacity) -> str:
        """Why there is no price: said instead of showing a price of 0."""
        label = "Spot" if capacity == "spot" else "on-demand"
        if region.lower() not in self.prices:
            return f"no prices for region {region} in the prices of {self.as_of}"
        reason = f"no {label} price for {vm_size} in {region} in the prices of {self.as_of}"
        if capacity == "spot" and not self.has_spot:
            reason += ("; this table holds no Spot prices at all: rebuild it with `python -m tools.prices --online`, "
                       "or price from a saved Retail Prices API answer with `--prices FILE`")
        return reason

    @property
    def has_spot(self) -> bool:
        """The table holds a Spot price for some size (the shipped capture holds none)."""
        return any(price.spot is not None for sizes in self.prices.values() for price in sizes.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "currency": self.currency, "pricesAsOf": self.as_of.isoformat(), "source": self.source,
            "unit": "1 Hour",
            "prices": {region: {self.names.get(size, size): {"onDemand": price.on_demand, "spot": price.spot}
                                for size, price in sorted(sizes.items())}
                       for region, sizes in sorted(self.prices.items())},
        }


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


def priced(pool: Pool, prices: PriceTable | None, region: str | None) -> Pool:
    """The pool with each offer's list price (Karpenter's `Offering` carries its price: the platform's
    pricing fills it, as Karpenter's pricing provider fills its offerings)."""
    return replace(pool, offers=tuple(replace(offer, hourly_price=offer_price(offer, prices, region))
                                      for offer in pool.offers))


def _shown(value: Any) -> str:
    """A value from an answer, for a message: short, on one line, no control character (an answer may
    hold megabytes in one field, or terminal escapes)."""
    return _name(repr(value))


def _name(text: str) -> str:
    """A size or region name from an answer, as written, bounded and on one line."""
    return escape_line(clipped(text, MAX_SHOWN_CHARS, 60, f"... ({len(text)} characters)"))


# --- Reading the shipped table -----------------------------------------------------------------




def _spot_capped(prices: dict[str, dict[str, SizePrice]], names: Mapping[str, str],
                 currency: str) -> tuple[str, ...]:
    """Spot prices above their size's on-demand price, capped at it, in place, and said. A Spot VM's
    default max price, -1, bills "the current Spot price or the price for a standard VM, whichever is
    less" (learn.microsoft.com/azure/virtual-machines/spot-vms, "Pricing"; Karpenter's Azure provider
    creates its Spot VMs with it: Azure/karpenter-provider-azure pkg/providers/instance,
    `setVMPropertiesBillingProfile`, `MaxPrice: -1`; an AKS Spot pool's `spotMaxPrice` defaults to it),
    so Spot never costs more than on-demand."""
    capped: list[str] = []
    for region, sizes in sorted(prices.items()):
        for size, price in sorted(sizes.items()):
            if price.spot is not None and price.on_demand is not None and price.spot > price.on_demand:
                capped.append(f"{_name(names.get(size, size))} in {_name(region)} (Spot {price.spot:g}, on-demand "
                              f"{price.on_demand:g} {currency}/h)")
                sizes[size] = SizePrice(price.on_demand, price.on_demand)
    if not capped:
        return ()
    named = "; ".join(capped[:MAX_NAMED_CAPS]) + (f"; and {len(capped) - MAX_NAMED_CAPS} more"
                                                   if len(capped) > MAX_NAMED_CAPS else "")
    return (f"{len(capped)} Spot price(s) above on-demand, priced at on-demand (Spot's default max price, -1, never "
            f"bills more): {named}",)


def _is_price(value: Any) -> TypeGuard[int | float]:
    """A number from 0 to MAX_LISTED_HOURLY_PRICE (NaN, inf, booleans and strings are not)."""
    return is_finite_number(value) and 0 <= value <= MAX_LISTED_HOURLY_PRICE


def _currency(value: Any, where: str) -> str:
    if not isinstance(value, str) or not CURRENCY_CODE.fullmatch(value):
        raise PriceError(f"{where}: currency {_shown(value)} is not a currency code such as USD (three capital letters)")
    return value


def _price_value(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if not _is_price(value) or value <= 0:
        raise PriceError(f"{where}: {_shown(value)} is not a price; write a positive number of currency units per hour "
                         f"up to {MAX_LISTED_HOURLY_PRICE}, or null when there is none")
    return float(value)


def table_from_json(document: Any, where: str) -> PriceTable:
    """A price table from its JSON form (`PriceTable.to_json`)."""
    if not isinstance(document, Mapping):
        raise PriceError(f"{where}: a price table is a JSON object with currency, pricesAsOf, source and prices")
    missing = [key for key in ("currency", "pricesAsOf", "source", "prices") if key not in document]
    if missing:
        raise PriceError(f"{where}: the price table has no {', '.join(missing)}")
    currency, source, as_of = document["currency"], document["source"], document["pricesAsOf"]
    _currency(currency, where)
    if not isinstance(source, str) or not source:
        raise PriceError(f"{where}: source must say where the prices come from")
    try:
        as_of_date = date.fromisoformat(as_of) if isinstance(as_of, str) else None
    except ValueError:
        as_of_date = None
    if as_of_date is None:
        raise PriceError(f"{where}: pricesAsOf {_shown(as_of)} is not a date like 2026-06-18")
    regions = document["prices"]
    if not isinstance(regions, Mapping):
        raise PriceError(f"{where}: prices must map regions to sizes to {{onDemand, spot}}")
    prices: dict[str, dict[str, SizePrice]] = {}
    names: dict[str, str] = {}
    for region, sizes in regions.items():
        if not isinstance(sizes, Mapping):
            raise PriceError(f"{where}: prices.{_shown(region)} must map VM sizes to {{onDemand, spot}}")
        for size, entry in sizes.items():
            at = f"{where}: prices.{_shown(region)}.{_shown(size)}"
            if not isinstance(entry, Mapping):
                raise PriceError(f"{at} must be an object {{onDemand, spot}}")
            prices.setdefault(str(region).lower(), {})[str(size).lower()] = SizePrice(
                _price_value(entry.get("onDemand"), f"{at}.onDemand"), _price_value(entry.get("spot"), f"{at}.spot"))
            names[str(size).lower()] = str(size)
    return PriceTable(currency, as_of_date, source, prices, names, _spot_capped(prices, names, currency))


def read_json(path: Path, what: str) -> Any:
    """A JSON file, bounded (`read_file` refuses a FIFO or a device without blocking on it)."""
    try:
        return load_json(read_file(str(path), FILE_LIMITS), FILE_LIMITS)
    except DocumentError as error:
        shown = escape_line(str(path))  # a file name may hold a newline or a terminal escape
        where = f"{shown}:{error.line}" if error.line else shown
        raise PriceError(f"{where}: cannot read {what}: {error.message}") from None


def read_price_table(path: Path = PRICE_TABLE) -> PriceTable:
    return table_from_json(read_json(path, "the price table"), escape_line(str(path)))


# --- Reading Retail Prices API answers ---------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    region: str
    size: str
    capacity: Capacity
    price: float
    effective: str


def _text(item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""


def _row(item: Any, where: str) -> _Row | None:
    """The price an item gives, or None for rows that are not a Linux pay-as-you-go or Spot hour."""
    if not isinstance(item, Mapping):
        raise PriceError(f"{where}: an item is a JSON object, not {type(item).__name__}")
    # Only pay-as-you-go rows: not Reservation (a 1- or 3-year term) nor DevTestConsumption.
    if item.get("type") != "Consumption":
        return None
    service = item.get("serviceName")
    if service is not None and service != "Virtual Machines":
        return None
    # karpenter-provider-azure pricing.go processPage: Windows products and Low Priority meters are out.
    if _text(item, "productName").endswith(" Windows") or _text(item, "meterName").endswith(" Low Priority") \
            or _text(item, "skuName").endswith(" Low Priority"):
        return None
    # Cloud Services (classic) rows name VM sizes too ("Dasv5 Series Cloud Services", dearer than the VM's
    # row); Microsoft's reader asks for serviceName 'Virtual Machines' and serviceFamily 'Compute' (pricing.go
    # FetchPricing), which they are not. An answer that dropped serviceName still names them in productName.
    if "Cloud Services" in _text(item, "productName") or item.get("serviceFamily") not in (None, "Compute"):
        return None
    size, region = item.get("armSkuName"), item.get("armRegionName")
    if not isinstance(size, str) or not size or not isinstance(region, str) or not region:
        raise PriceError(f"{where}: a Consumption item needs armSkuName and armRegionName (strings), got "
                         f"{_shown(size)} and {_shown(region)}")
    unit = item.get("unitOfMeasure")
    if unit != "1 Hour":
        raise PriceError(f"{where} ({_name(size)}, {_name(region)}): unitOfMeasure {_shown(unit)} is not '1 Hour'; "
                         "gpu-aks prices VM hours")
    price = item.get("retailPrice")
    if not _is_price(price):
        raise PriceError(f"{where} ({_name(size)}, {_name(region)}): retailPrice {_shown(price)} is not a price (a "
                         f"number from 0 to {MAX_LISTED_HOURLY_PRICE})")
    if price == 0:
        # Azure lists some meters at 0 (free tiers, retired rows): that is no price for a GPU node.
        return None
    capacity: Capacity = "spot" if _text(item, "skuName").endswith(" Spot") else "onDemand"
    return _Row(region.lower(), size, capacity, float(price), _text(item, "effectiveStartDate"))


def _pages_of(document: Any, where: str) -> list[tuple[str, Any]]:
    """A captured answer: one page object, or a JSON list of the pages in the order they came."""
    if isinstance(document, list):
        if not document:
            raise PriceError(f"{where}: an empty list holds no Retail Prices API page")
        return [(f"{where}: page {index + 1}", page) for index, page in enumerate(document)]
    return [(where, document)]


def read_answer_files(paths: Iterable[Path]) -> list[tuple[str, Any]]:
    """The pages of captured answers (each file one page, or a list of pages), in order."""
    pages: list[tuple[str, Any]] = []
    for path in paths:
        pages += _pages_of(read_json(path, "a Retail Prices API answer"), escape_line(str(path)))
    return pages


def table_from_pages(pages: Iterable[tuple[str, Any]], as_of: date, source: str,
                     sizes: Iterable[str] | None = None, complete: bool = True) -> PriceTable:
    """A price table from the pages of one Retail Prices API answer, in order.

    `sizes`: keep only these VM sizes (case-insensitive). `complete`: the pages must be the whole
    answer: every page but the last names a NextPageLink, and the last names none. Where one size has
    several rows (an old and a new price), the one with the latest `effectiveStartDate` counts, and of
    rows as recent the dearest (whatever their order).
    """
    wanted = {size.lower() for size in sizes} if sizes is not None else None
    best: dict[tuple[str, str, Capacity], _Row] = {}
    names: dict[str, str] = {}
    currency: str | None = None
    listed = list(pages)
    if len(listed) > MAX_PAGES:
        raise PriceError(f"{listed[MAX_PAGES][0]}: more than {MAX_PAGES} pages; ask for fewer sizes or regions")
    if not listed:
        raise PriceError("no Retail Prices API page was given")
    items_seen = 0
    for number, (where, page) in enumerate(listed):
        if not isinstance(page, Mapping):
            raise PriceError(f"{where}: a Retail Prices API page is a JSON object with Items and NextPageLink, "
                             f"not {type(page).__name__}")
        if "Items" not in page:
            error = page.get("error") or page.get("Error")
            detail = f" (the API said: {json.dumps(error)[:300]})" if error is not None else ""
            raise PriceError(f"{where}: no Items in this page{detail}; is this a Retail Prices API answer?")
        items = page["Items"]
        if not isinstance(items, list):
            raise PriceError(f"{where}: Items is {type(items).__name__}, not a list")
        next_link = page.get("NextPageLink")
        if next_link is not None and not isinstance(next_link, str):
            raise PriceError(f"{where}: NextPageLink {_shown(next_link)} is not a link")
        if complete and number < len(listed) - 1 and not next_link:
            raise PriceError(f"{where}: this page names no NextPageLink, yet {len(listed) - number - 1} more "
                             "page(s) follow it; give the pages of one answer, in order")
        if complete and number == len(listed) - 1 and next_link:
            raise PriceError(f"{where}: the answer goes on at NextPageLink {escape_line(next_link[:200])}, but no further page "
                             "was given; fetch the rest (python -m tools.prices --online) or save every page")
        billing = page.get("BillingCurrency")
        for index, item in enumerate(items):
            items_seen += 1
            if items_seen > MAX_ITEMS:
                raise PriceError(f"{where}: more than {MAX_ITEMS} items")
            at = f"{where}: Items[{index}]"
            row = _row(item, at)
            if row is None:
                continue
            item_currency = item.get("currencyCode") or billing
            if item_currency is None or item_currency == "":
                raise PriceError(f"{at}: no currencyCode (nor a page BillingCurrency)")
            _currency(item_currency, at)
            if currency is None:
                currency = item_currency
            elif item_currency != currency:
                raise PriceError(f"{at}: currency {_name(item_currency)} differs from {_name(currency)} of the rows before it; "
                                 "ask the API for one currency (currencyCode='USD')")
            if wanted is not None and row.size.lower() not in wanted:
                continue
            key = (row.region, row.size.lower(), row.capacity)
            # The latest price counts; of two as recent (one size listed twice), the dearer, so the
            # table does not depend on the order of the rows.
            if key not in best or (row.effective, row.price) >= (best[key].effective, best[key].price):
                best[key] = row
            names[row.size.lower()] = row.size
    prices: dict[str, dict[str, SizePrice]] = {}
    for (region, size, capacity), row in sorted(best.items()):
        current = prices.setdefault(region, {}).get(size, SizePrice())
        prices[region][size] = (SizePrice(current.on_demand, row.price) if capacity == "spot"
                                else SizePrice(row.price, current.spot))
    if not prices:
        raise PriceError(f"{listed[0][0]}: the answer holds no Linux pay-as-you-go or Spot VM hour"
                         + (f" for {', '.join(sorted(wanted))}" if wanted else ""))
    return PriceTable(currency or "USD", as_of, source, prices, names, _spot_capped(prices, names, currency or "USD"))


def retail_prices_filter(regions: Iterable[str], sizes: Iterable[str]) -> str:
    """The OData `$filter` of one query: VM pay-as-you-go rows for these regions and sizes (values are
    case-sensitive in the API, so sizes are sent as Azure spells them)."""
    def any_of(field_name: str, values: Iterable[str]) -> str:
        return "(" + " or ".join(f"{field_name} eq '{value}'" for value in values) + ")"
    return " and ".join(["serviceName eq 'Virtual Machines'", "priceType eq 'Consumption'",
                         any_of("armRegionName", regions), any_of("armSkuName", sizes)])
