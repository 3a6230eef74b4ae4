"""Rebuild the price table (`components/prices.json`) from Azure's public Retail Prices API.

    python -m tools.prices --online [--regions eastus2,westus3] [--out FILE]
    python -m tools.prices --from PAGE.json [PAGE2.json ...] [--as-of YYYY-MM-DD] [--out FILE]
    python -m tools.prices --check

`--online` asks https://prices.azure.com/api/retail/prices (no sign-in; public cloud only) for the
Linux pay-as-you-go and Spot hours of every size in the table (the GPU catalog's sizes and the CPU
sizes the stacks use), region by region, following `NextPageLink` to the end. `--from` reads answers
saved before (`curl -o page1.json '...'`; a file is one page or a JSON list of pages, in order), so
the table can be rebuilt where Azure cannot be reached. `--check` reads the table and says what it
holds. Exit codes: 0 done, 2 bad input (an unreadable or hostile answer, a network error), with the
file, page and item that could not be used. The table keeps its source and date; a size the answer
has no price for keeps none (gpu-aks never shows a price of 0).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from gpu_aks_policies.catalog import supported_vm_sizes
from gpu_aks_policies.documents import DocumentError, load_json
from gpu_aks_policies.limits import MAX_REGIONS
from gpu_aks_policies.terminal import escape_field, escape_line, escape_text, run_cli

from components.azure_catalog import REGION_NAME
from components.pricing import (
    FILE_LIMITS,
    MAX_PAGES,
    PRICE_TABLE,
    RETAIL_PRICES_API_VERSION,
    RETAIL_PRICES_URL,
    PriceError,
    PriceTable,
    read_answer_files,
    read_price_table,
    retail_prices_filter,
    table_from_pages,
)

#: One answer page is at most ~1 MB; a slow API gets this long per page.
FETCH_TIMEOUT_SECONDS = 60
#: The API's `$filter` is a URL query: ask for this many sizes at a time.
SIZES_PER_QUERY = 20

Fetch = Callable[[str], bytes]


def fetch_url(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "gpu-aks tools.prices"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_SECONDS) as response:
        data: bytes = response.read(FILE_LIMITS.max_bytes + 1)
        return data


def query_url(regions: Sequence[str], sizes: Sequence[str]) -> str:
    query = urllib.parse.urlencode({"api-version": RETAIL_PRICES_API_VERSION, "currencyCode": "USD",
                                    "$filter": retail_prices_filter(regions, sizes)})
    return f"{RETAIL_PRICES_URL}?{query}"


def _is_retail_prices_url(url: str) -> bool:
    """The API's own links only (its NextPageLink names the port: `https://prices.azure.com:443/...`)."""
    parts = urllib.parse.urlsplit(url)
    return parts.scheme == "https" and parts.hostname == "prices.azure.com" and parts.port in (None, 443) \
        and parts.path == "/api/retail/prices"


def fetch_pages(url: str, fetch: Fetch = fetch_url) -> list[tuple[str, Any]]:
    """Every page of one answer, following NextPageLink (bounded; a link seen twice is an error)."""
    pages: list[tuple[str, Any]] = []
    seen: set[str] = set()
    next_url: str | None = url
    while next_url:
        if next_url in seen:
            raise PriceError(f"page {len(pages)}: NextPageLink {next_url[:200]} was already fetched; the answer loops")
        if len(pages) >= MAX_PAGES:
            raise PriceError(f"more than {MAX_PAGES} pages; ask for fewer sizes or regions")
        if not _is_retail_prices_url(next_url):
            raise PriceError(f"page {len(pages)}: NextPageLink {next_url[:200]} leaves {RETAIL_PRICES_URL}")
        seen.add(next_url)
        where = f"{next_url[:160]} (page {len(pages) + 1})"
        try:
            data = fetch(next_url)
        except urllib.error.HTTPError as error:
            raise PriceError(f"{where}: the API answered HTTP {error.code} {error.reason}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise PriceError(f"{where}: cannot reach the Retail Prices API ({reason}); without network, rebuild "
                             "from saved answers with --from") from None
        if len(data) > FILE_LIMITS.max_bytes:
            raise PriceError(f"{where}: an answer page over {FILE_LIMITS.max_bytes} bytes")
        try:
            page = load_json(data.decode("utf-8"), FILE_LIMITS)
        except (DocumentError, UnicodeDecodeError) as error:
            raise PriceError(f"{where}: not a JSON answer: {getattr(error, 'message', error)}") from None
        pages.append((where, page))
        link = page.get("NextPageLink") if isinstance(page, dict) else None
        next_url = link if isinstance(link, str) and link else None
    return pages


def table_sizes(table: PriceTable | None) -> list[str]:
    """The sizes the table covers: the GPU catalog's and those the current table already prices."""
    sizes = {size.lower(): size for size in supported_vm_sizes()}
    if table is not None:
        sizes.update({key: name for key, name in table.names.items() if key not in sizes})
    return sorted(sizes.values())


def _batches(values: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), size):
        yield values[start:start + size]


def fetch_table(regions: Sequence[str], sizes: Sequence[str], today: date, fetch: Fetch = fetch_url) -> PriceTable:
    pages: list[tuple[str, Any]] = []
    for region in regions:
        for batch in _batches(sizes, SIZES_PER_QUERY):
            pages += fetch_pages(query_url([region], batch), fetch)
    # Each query is its own complete answer (fetch_pages followed it to the end): merge them as one.
    merged = [(where, {**page, "NextPageLink": None} if isinstance(page, dict) else page) for where, page in pages]
    return table_from_pages(merged, today, f"Azure Retail Prices API ({RETAIL_PRICES_URL}, api-version "
                            f"{RETAIL_PRICES_API_VERSION}), fetched {today.isoformat()}", sizes, complete=False)


def format_table(table: PriceTable) -> str:
    """The table as JSON with one line per size, so a rebuild's diff reads price by price."""
    document = table.to_json()
    head = {key: value for key, value in document.items() if key != "prices"}
    lines = ["{", *(f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()), '  "prices": {']
    regions = list(document["prices"].items())
    for region_index, (region, sizes) in enumerate(regions):
        lines.append(f"    {json.dumps(region)}: {{")
        entries = list(sizes.items())
        for index, (size, price) in enumerate(entries):
            lines.append(f"      {json.dumps(size)}: {json.dumps(price)}{',' if index < len(entries) - 1 else ''}")
        lines.append(f"    }}{',' if region_index < len(regions) - 1 else ''}")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def summary(table: PriceTable) -> str:
    on_demand = sum(1 for sizes in table.prices.values() for price in sizes.values() if price.on_demand is not None)
    spot = sum(1 for sizes in table.prices.values() for price in sizes.values() if price.spot is not None)
    return (f"{len(table.prices)} regions, {len(table.names)} sizes: {on_demand} on-demand and {spot} Spot prices in "
            f"{table.currency}, as of {table.as_of} ({table.source})" + "".join(f"; {note}" for note in table.notes))




def _regions(text: str) -> list[str]:
    """`--regions`: Azure region names, each once. They go into the query's OData `$filter` as quoted
    values, so anything else (a quote) would change what the query asks for."""
    regions = list(dict.fromkeys(region.strip() for region in text.split(",")))
    bad = [region for region in regions if not REGION_NAME.fullmatch(region)]
    if bad or not regions or len(regions) > MAX_REGIONS:
        shown = escape_field(bad[0] if bad else text, 60)
        raise PriceError(f"--regions: '{shown}' is not a comma-separated list of at most {MAX_REGIONS} Azure region "
                         "names (lower-case letters and digits, e.g. eastus2,westus3)")
    return regions


def main(argv: Sequence[str] | None = None, fetch: Fetch = fetch_url, out: Any = None,
         today: date | None = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="python -m tools.prices", description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--online", action="store_true", help="ask the Retail Prices API (needs network)")
    source.add_argument("--from", dest="answers", nargs="+", type=Path, metavar="FILE",
                        help="saved Retail Prices API answers (one page, or a JSON list of pages, per file)")
    source.add_argument("--check", action="store_true", help="read the table and say what it holds")
    parser.add_argument("--regions", help="comma-separated regions (default: the table's)")
    parser.add_argument("--as-of", help="the date the saved answers were fetched (default: today)")
    parser.add_argument("--partial", action="store_true",
                        help="accept saved pages that are not a whole answer (a page still naming a NextPageLink)")
    parser.add_argument("--out", type=Path, default=PRICE_TABLE, help=f"where to write (default {PRICE_TABLE.name})")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 2 if exit_.code else 0
    today = today or datetime.now(UTC).date()
    try:
        current = read_price_table() if PRICE_TABLE.is_file() else None
        if args.check:
            table = read_price_table(args.out)
            print(escape_text(f"{escape_line(str(args.out))}: {summary(table)}"), file=out)
            return 0
        sizes = table_sizes(current)
        if args.online:
            regions = _regions(args.regions) if args.regions is not None else \
                sorted(current.prices) if current else ["eastus2"]
            table = fetch_table(regions, sizes, today, fetch)
        else:
            try:
                as_of = date.fromisoformat(args.as_of) if args.as_of else today
            except ValueError:
                raise PriceError(f"--as-of {args.as_of!r} is not a date like 2026-11-26") from None
            pages = read_answer_files(args.answers)
            table = table_from_pages(pages, as_of, f"Azure Retail Prices API answers saved as "
                                     f"{', '.join(escape_line(path.name) for path in args.answers)}", sizes,
                                     complete=not args.partial)
        try:
            args.out.write_text(format_table(table), encoding="utf-8")
        except OSError as error:
            raise PriceError(f"--out {escape_line(str(args.out))}: cannot write the table: {error.strerror}") from None
    except PriceError as error:
        print(escape_text(f"error: {error}"), file=sys.stderr)
        return 2
    print(escape_text(f"wrote {escape_line(str(args.out))}: {summary(table)}"), file=out)
    return 0


if __name__ == "__main__":
    run_cli(main)
