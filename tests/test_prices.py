"""The price table and the Retail Prices API reader (components/pricing.py, tools/prices.py)."""

from __future__ import annotations

import io
import json
import urllib.error
from datetime import date
from pathlib import Path

import pytest
from gpu_aks_policies.catalog import supported_vm_sizes

from components.pricing import (
    PRICE_TABLE,
    PriceError,
    read_answer_files,
    read_price_table,
    table_from_json,
    table_from_pages,
)
from tools import prices

FIXTURES = Path(__file__).parent / "fixtures" / "prices"
PAGES = [FIXTURES / "eastus2-page1.json", FIXTURES / "eastus2-page2.json"]
TODAY = date(2026, 11, 26)


def _answer() -> list[tuple[str, object]]:
    return read_answer_files(PAGES)


def test_a_two_page_answer_gives_linux_pay_as_you_go_and_spot_hours():
    table = table_from_pages(_answer(), TODAY, "test")
    assert table.currency == "USD" and table.as_of == TODAY
    t4 = ("eastus2", "Standard_NC4as_T4_v3")
    # Not the Windows row (0.71), the Low Priority meter (0.1052), the Reservation (2764) nor DevTest (0.41).
    assert table.hourly(*t4, "onDemand") == 0.526
    assert table.hourly(*t4, "spot") == 0.0789
    # The second page is read: its rows are there.
    assert table.hourly("eastus2", "Standard_NC40ads_H100_v5", "spot") == 2.792
    # Of an old (2023) and a new (2024) price of one meter, the new one counts.
    assert table.hourly("eastus2", "standard_nc24ads_a100_v4", "onDemand") == 3.673


def test_spot_is_cheaper_than_on_demand_for_every_size_the_answer_prices_both():
    table = table_from_pages(_answer(), TODAY, "test")
    both = [(size, price) for size, price in table.prices["eastus2"].items()
            if price.spot is not None and price.on_demand is not None]
    assert len(both) == 4
    assert all(price.spot < price.on_demand for _, price in both)


def test_a_size_without_a_price_says_so_and_is_never_zero():
    table = table_from_pages(_answer(), TODAY, "test")
    assert table.hourly("eastus2", "Standard_D8ds_v5", "spot") is None
    assert table.missing("eastus2", "Standard_D8ds_v5", "spot") == \
        "no Spot price for Standard_D8ds_v5 in eastus2 in the prices of 2026-11-26"
    assert table.hourly("westeurope", "Standard_D8ds_v5", "onDemand") is None
    assert "no prices for region westeurope" in table.missing("westeurope", "Standard_D8ds_v5", "onDemand")


def test_a_free_row_is_no_price():
    page = json.loads(PAGES[1].read_text())
    page["Items"] = [dict(page["Items"][0], retailPrice=0.0, armSkuName="Standard_NC8as_T4_v3"),
                     *page["Items"]]
    table = table_from_pages([("p", page)], TODAY, "test")
    assert table.hourly("eastus2", "Standard_NC8as_T4_v3", "spot") is None


def test_only_the_asked_sizes_are_kept():
    table = table_from_pages(_answer(), TODAY, "test", sizes=["standard_d4ds_v5"])
    assert list(table.prices["eastus2"]) == ["standard_d4ds_v5"]
    assert table.names["standard_d4ds_v5"] == "Standard_D4ds_v5"


def test_an_answer_cut_short_or_out_of_order_is_refused_unless_partial():
    with pytest.raises(PriceError, match="goes on at NextPageLink https://prices.azure.com:443/"):
        table_from_pages(read_answer_files(PAGES[:1]), TODAY, "test")
    with pytest.raises(PriceError, match="names no NextPageLink, yet 1 more page"):
        table_from_pages(read_answer_files(PAGES[::-1]), TODAY, "test")
    assert table_from_pages(read_answer_files(PAGES[:1]), TODAY, "test", complete=False).hourly(
        "eastus2", "Standard_NC4as_T4_v3", "onDemand") == 0.526


def test_one_file_may_hold_the_pages_as_a_list(tmp_path):
    both = tmp_path / "answer.json"
    both.write_text(json.dumps([json.loads(path.read_text()) for path in PAGES]))
    table = table_from_pages(read_answer_files([both]), TODAY, "test")
    assert table.hourly("eastus2", "Standard_D4ds_v5", "spot") == 0.0452


def _page(items: list[object], **extra: object) -> dict[str, object]:
    return {"BillingCurrency": "USD", "Items": items, "NextPageLink": None, "Count": len(items), **extra}


_ROW = json.loads(PAGES[1].read_text())["Items"][0]


@pytest.mark.parametrize("document, message", [
    ("not json {", "invalid JSON"),
    ("[]", "an empty list holds no Retail Prices API page"),
    ('"a string"', "a Retail Prices API page is a JSON object"),
    (json.dumps({"error": {"code": "BadRequest", "message": "Invalid OData"}}), 'no Items in this page (the API said: '
                                                                                '{"code": "BadRequest"'),
    (json.dumps({"Items": {"a": 1}, "NextPageLink": None}), "Items is dict, not a list"),
    (json.dumps(_page([1])), "Items[0]: an item is a JSON object, not int"),
    (json.dumps(_page([dict(_ROW, retailPrice="0.5")])), "retailPrice '0.5' is not a price"),
    (json.dumps(_page([dict(_ROW, retailPrice=-1)])), "retailPrice -1 is not a price"),
    (json.dumps(_page([dict(_ROW, retailPrice=True)])), "retailPrice True is not a price"),
    (json.dumps(_page([dict(_ROW, unitOfMeasure="10 Hours")])), "unitOfMeasure '10 Hours' is not '1 Hour'"),
    (json.dumps(_page([dict(_ROW, armSkuName=None)])), "needs armSkuName and armRegionName"),
    (json.dumps(_page([_ROW, dict(_ROW, currencyCode="EUR")])), "currency EUR differs from USD"),
    (json.dumps(_page([dict(_ROW, currencyCode=None)], BillingCurrency=None)), "no currencyCode"),
    (json.dumps(_page([dict(_ROW, type="Reservation")])), "holds no Linux pay-as-you-go or Spot VM hour"),
    (json.dumps(_page([_ROW], NextPageLink=7)), "NextPageLink 7 is not a link"),
    ("[" * 100 + "]" * 100, "nested more than 32 levels deep"),
])
def test_hostile_answers_are_clear_errors_with_exit_2(tmp_path, capsys, document, message):
    answer = tmp_path / "answer.json"
    answer.write_text(document)
    assert prices.main(["--from", str(answer), "--out", str(tmp_path / "out.json")], today=TODAY) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {answer}") and message in error, error
    assert "Traceback" not in error
    assert not (tmp_path / "out.json").exists()


def test_an_unreadable_answer_names_the_file(tmp_path, capsys):
    assert prices.main(["--from", str(tmp_path / "missing.json"), "--out", str(tmp_path / "o.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert prices.main(["--from", str(tmp_path), "--out", str(tmp_path / "o.json")]) == 2
    assert "directory" in capsys.readouterr().err


def test_tools_prices_rebuilds_the_table_from_saved_answers(tmp_path):
    out, stdout = tmp_path / "prices.json", io.StringIO()
    assert prices.main(["--from", *map(str, PAGES), "--as-of", "2026-11-20", "--out", str(out)], out=stdout) == 0
    table = read_price_table(out)
    assert table.as_of == date(2026, 11, 20)
    assert "eastus2-page1.json" in table.source
    assert table.hourly("eastus2", "Standard_NC40ads_H100_v5", "onDemand") == 6.98
    assert "1 regions, 6 sizes: 6 on-demand and 4 Spot prices in USD" in stdout.getvalue()


def test_online_fetch_follows_next_page_links(tmp_path):
    answers = [PAGES[0].read_bytes(), PAGES[1].read_bytes()] * 100
    asked: list[str] = []

    def fetch(url: str) -> bytes:
        asked.append(url)
        # The first page of every query, then the page its NextPageLink names.
        return answers[len(asked) - 1]

    table = prices.fetch_table(["eastus2"], ["Standard_NC4as_T4_v3", "Standard_NC40ads_H100_v5"], TODAY, fetch)
    assert asked[0].startswith("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview")
    assert "armSkuName+eq+%27Standard_NC4as_T4_v3%27" in asked[0]
    assert asked[1].startswith("https://prices.azure.com:443/api/retail/prices?") and len(asked) == 2
    assert table.hourly("eastus2", "Standard_NC40ads_H100_v5", "spot") == 2.792
    assert table.as_of == TODAY and "fetched 2026-11-26" in table.source


@pytest.mark.parametrize("link, message", [
    ("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview", "was already fetched; the answer loops"),
    ("https://evil.example.com/api/retail/prices", "leaves https://prices.azure.com/api/retail/prices"),
    ("http://prices.azure.com/api/retail/prices", "leaves"),
])
def test_online_fetch_refuses_loops_and_foreign_links(link, message):
    page = json.dumps(_page([_ROW], NextPageLink=link)).encode()
    with pytest.raises(PriceError, match=message):
        prices.fetch_pages("https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview",
                           lambda url: page)


def test_online_fetch_errors_are_one_line(capsys, tmp_path):
    def refused(url: str) -> bytes:
        raise urllib.error.HTTPError(url, 429, "Too Many Requests", {}, None)  # type: ignore[arg-type]

    assert prices.main(["--online", "--regions", "eastus2", "--out", str(tmp_path / "o.json")], fetch=refused) == 2
    error = capsys.readouterr().err
    assert "HTTP 429 Too Many Requests" in error and "Traceback" not in error

    def offline(url: str) -> bytes:
        raise urllib.error.URLError("Name or service not known")

    assert prices.main(["--online", "--regions", "eastus2", "--out", str(tmp_path / "o.json")], fetch=offline) == 2
    assert "cannot reach the Retail Prices API" in capsys.readouterr().err


# --- The shipped table ---------------------------------------------------------------------------


def test_the_shipped_table_is_dated_sourced_and_has_no_zero_price():
    table = read_price_table()
    assert table.currency == "USD" and table.as_of == date(2026, 6, 18)
    assert "karpenter-provider-azure" in table.source and "Retail Prices API" in table.source
    values = [price for sizes in table.prices.values() for entry in sizes.values()
              for price in (entry.on_demand, entry.spot) if price is not None]
    assert values and all(value > 0 for value in values)


def test_the_shipped_table_prices_the_catalog_and_the_stacks_sizes():
    table = read_price_table()
    priced = {size for sizes in table.prices.values() for size, entry in sizes.items() if entry.on_demand}
    # Every catalog size is priced in some region, but GB300 and the is/isf/isrf H200 variants: the 2026-06
    # capture (karpenter-provider-azure zz_generated.pricing.go, commit 352646f) has no row for them.
    unpriced = [size for size in supported_vm_sizes() if size.lower() not in priced]
    assert unpriced == ["Standard_ND96is_H200_v5", "Standard_ND96isf_H200_v5", "Standard_ND96isrf_H200_v5",
                        "Standard_ND128isr_GB300_v6"], unpriced
    for size in ("Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_D4ds_v5", "Standard_D8ds_v5",
                 "Standard_D16ds_v5"):
        assert table.hourly("eastus2", size, "onDemand"), size


def test_the_shipped_table_is_in_the_format_tools_prices_writes():
    assert prices.format_table(read_price_table()) == PRICE_TABLE.read_text()


@pytest.mark.parametrize("document, message", [
    ({"currency": "USD", "source": "s", "prices": {}}, "has no pricesAsOf"),
    ({"currency": "USD", "pricesAsOf": "June", "source": "s", "prices": {}}, "'June' is not a date"),
    ({"currency": "USD", "pricesAsOf": "2026-06-18", "source": "s", "prices": {"eastus2": {"X": {"onDemand": 0}}}},
     "0 is not a price"),
    ({"currency": "", "pricesAsOf": "2026-06-18", "source": "s", "prices": {}}, "is not a currency code"),
])
def test_a_broken_table_is_refused(document, message):
    with pytest.raises(PriceError, match=message):
        table_from_json(document, "prices.json")


def test_the_shipped_table_has_spot_below_on_demand_or_says_it_holds_no_spot():
    """Spot is never dearer than on-demand for a size the shipped table prices both ways (Spot's default max
    price, -1, caps it there; Azure lists ND96isr_H200_v5's Spot hour at its on-demand price in three EU
    regions, azure-pricing-radar cf741f2), and cheaper for most; a table without any Spot price says so in
    its source, and a Spot pool's "no price" says how to get one."""
    table = read_price_table()
    both = [(region, size, entry) for region, sizes in table.prices.items() for size, entry in sizes.items()
            if entry.spot is not None and entry.on_demand is not None]
    assert all(entry.spot <= entry.on_demand for _, _, entry in both), \
        [(region, size) for region, size, entry in both if not entry.spot <= entry.on_demand]
    assert sum(entry.spot < entry.on_demand for _, _, entry in both) > len(both) * 0.9
    if not table.has_spot:
        assert "no Spot prices" in table.source
        assert table.missing("eastus2", "Standard_NC24ads_A100_v4", "spot").endswith(
            "this table holds no Spot prices at all: rebuild it with `python -m tools.prices --online`, or price "
            "from a saved Retail Prices API answer with `--prices FILE`")
    spot_and_on_demand = table_from_pages(_answer(), TODAY, "test")
    assert spot_and_on_demand.has_spot
    assert not spot_and_on_demand.missing("eastus2", "Standard_D8ds_v5", "spot").endswith("`--prices FILE`")


def test_the_shipped_table_holds_spot_prices_for_four_eu_regions_and_says_where_from():
    """#38: the Spot rows of andy-diericks/azure-pricing-radar (MIT), which drop armSkuName: a row's size is
    its skuName without " Spot", matched by letters and digits ("NC16asT4 v3" is Standard_NC16as_T4_v3)."""
    table = read_price_table()
    assert table.has_spot
    for region in ("westeurope", "northeurope", "swedencentral", "francecentral"):
        assert table.hourly(region, "Standard_NC24ads_A100_v4", "spot") is not None, region
    assert table.hourly("westeurope", "Standard_NC16as_T4_v3", "spot") == 1.045524
    assert table.hourly("eastus2", "Standard_NC24ads_A100_v4", "spot") is None
    assert "andy-diericks/azure-pricing-radar (MIT)" in table.source and "cf741f2" in table.source
    assert "matched to a size of this table by letters and digits alone" in table.source


def test_cloud_services_rows_are_not_vm_prices_even_when_dearer():
    """#38: "the dearer of two rows wins" preferred a Cloud Services row (productName "Dasv5 Series Cloud
    Services", as Azure's answer lists them) over the VM's own row."""
    def item(product: str, price: float, **extra: str) -> dict:
        return {"type": "Consumption", "armSkuName": "Standard_D4ds_v5", "armRegionName": "westeurope",
                "unitOfMeasure": "1 Hour", "retailPrice": price, "currencyCode": "USD", "skuName": "D4ds v5",
                "meterName": "D4ds v5", "productName": product, "effectiveStartDate": "2026-01-01T00:00:00Z", **extra}
    page = {"Items": [item("Virtual Machines Ddsv5 Series", 0.272),
                      item("Ddsv5 Series Cloud Services", 0.392),
                      item("Virtual Machines Ddsv5 Series", 9.9, serviceFamily="Storage")], "NextPageLink": None}
    table = table_from_pages([("page", page)], TODAY, "test")
    assert table.hourly("westeurope", "Standard_D4ds_v5", "onDemand") == 0.272
