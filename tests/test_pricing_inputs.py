"""Azure Retail Prices answers and the price table (`components.pricing`, `tools.prices`) under hostile input.

The module they pin: `components/pricing.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.inputs import GROWTH_LIMIT, HANG_GUARD_S, T4, assert_inert, growth
from tools import prices
from tools.preview import main as preview_main


def _price_item(price: Any, spot: bool = False, size: str = "Standard_NC4as_T4_v3") -> dict[str, Any]:
    sku = "NC4as T4 v3" + (" Spot" if spot else "")
    return {"type": "Consumption", "serviceName": "Virtual Machines", "armSkuName": size,
            "armRegionName": "eastus2", "unitOfMeasure": "1 Hour", "retailPrice": price, "currencyCode": "USD",
            "skuName": sku, "meterName": sku, "productName": "NCasT4_v3 Series",
            "effectiveStartDate": "2024-01-01T00:00:00Z"}


def _answer_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "answer.json"
    path.write_text(text)
    return path


def _price_row(**changes: Any) -> dict[str, Any]:
    return {"currencyCode": "USD", "retailPrice": 0.526, "unitOfMeasure": "1 Hour", "armRegionName": "eastus2",
            "armSkuName": T4, "skuName": "NC4as T4 v3", "productName": "Virtual Machines NCasT4_v3 Series",
            "meterName": "NC4as T4 v3", "serviceName": "Virtual Machines", "type": "Consumption",
            "effectiveStartDate": "2024-01-01T00:00:00Z", **changes}


@pytest.mark.parametrize("regions, shown", [
    ("eastus2') or (serviceName eq 'x", "'eastus2') or (serviceName eq 'x'"),  # OData `$filter` injection
    ("eastus2,\x1b[2J::error::x", "'\\x1b[2J::error::x'"),
    (",", "''"), ("", "''"),
    (",".join(f"r{i}" for i in range(1000)), "(4889 characters)"),  # one query per region
])
def test_regions_that_are_not_azure_region_names_never_reach_the_query(capsys, regions, shown):
    # Each region went into the Retail Prices API's OData filter as written: a quote rewrote the query.
    asked: list[str] = []
    code = prices.main(["--online", "--regions", regions, "--out", "/dev/null"],
                       fetch=lambda url: asked.append(url) or b"{}")
    err = capsys.readouterr().err
    assert code == 2 and asked == [] and shown in err and "is not a comma-separated list" in err, err
    assert_inert(err.rstrip("\n")) and len(err) < 400


def test_regions_are_asked_once_each(monkeypatch):
    asked: list[list[str]] = []

    def fetch_table(regions: list[str], *_: Any) -> None:
        asked.append(regions)
        raise prices.PriceError("offline")
    monkeypatch.setattr(prices, "fetch_table", fetch_table)
    assert prices.main(["--online", "--regions", "eastus2, westus3,eastus2", "--out", "/dev/null"]) == 2
    assert asked == [["eastus2", "westus3"]]


@pytest.mark.parametrize("digits", ["9" * 400, "-" + "9" * 400, "9" * 5000, "1" + "0" * 400 + ".5"])
def test_a_price_of_hundreds_of_digits_is_an_input_error(tmp_path, capsys, digits):
    # `math.isfinite` of a 400-digit int raised OverflowError: a traceback in both tools.
    import json

    from tools import prices

    page = {"Items": [_price_item(0.5)], "NextPageLink": None}
    path = _answer_file(tmp_path, json.dumps(page).replace("0.5", digits, 1))
    assert prices.main(["--from", str(path), "--out", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert "retailPrice" in err and "is not a price" in err and "Traceback" not in err
    assert len(err) < 600
    assert preview_main(["dev", "--prices", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--prices: " in err and "is not a price" in err and "Traceback" not in err


def test_a_spot_price_above_on_demand_is_priced_at_on_demand_and_said(tmp_path, capsys):
    # Spot's default max price, -1, never bills more than on-demand; the answer's 5.0 was taken as is.
    import json

    from components.pricing import read_answer_files, table_from_pages
    from tools import prices

    items = [_price_item(1.0), _price_item(5.0, spot=True),
             _price_item(2.0, size="Standard_NC8as_T4_v3"), _price_item(0.5, spot=True, size="Standard_NC8as_T4_v3")]
    path = _answer_file(tmp_path, json.dumps({"Items": items, "NextPageLink": None}))
    from datetime import date
    table = table_from_pages(read_answer_files([path]), date(2026, 1, 1), "test")
    assert table.hourly("eastus2", "Standard_NC4as_T4_v3", "spot") == 1.0
    assert table.hourly("eastus2", "Standard_NC8as_T4_v3", "spot") == 0.5
    [note] = table.notes
    assert note.startswith("1 Spot price(s) above on-demand, priced at on-demand") and "Standard_NC4as_T4_v3" in note
    assert prices.main(["--from", str(path), "--out", str(tmp_path / "out.json")]) == 0
    assert "Spot 5, on-demand 1 USD/h" in capsys.readouterr().out
    # The written table holds the capped price, and reading it back says nothing more.
    written = json.loads((tmp_path / "out.json").read_text())
    assert written["prices"]["eastus2"]["Standard_NC4as_T4_v3"] == {"onDemand": 1.0, "spot": 1.0}
    preview_main(["prod", "--json", "--prices", str(path)])
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert cost["pools"]["t4spot"]["hourlyPerNode"] == 1.0
    assert cost["notes"] == [note]


def test_the_shipped_table_form_caps_spot_too():
    from datetime import date

    from components.pricing import table_from_json

    table = table_from_json({"currency": "USD", "pricesAsOf": date(2026, 1, 1).isoformat(), "source": "test",
                             "prices": {"eastus2": {"Standard_NC4as_T4_v3": {"onDemand": 1.0, "spot": 3.0}}}}, "t")
    assert table.hourly("eastus2", "Standard_NC4as_T4_v3", "spot") == 1.0 and table.notes


@pytest.mark.slow
@pytest.mark.parametrize("changes", [
    {"armSkuName": "A" * 2_000_000, "unitOfMeasure": "1 Day"},  # megabytes in one field were echoed whole
    {"armRegionName": ["x"] * 100_000},
    {"armSkuName": "\x1b[2J\n::error::pwned", "unitOfMeasure": "\x1b]0;title\x07"},  # a newline split the line
    {"retailPrice": "NaN"},
])
def test_a_hostile_price_answer_is_one_short_escaped_line(tmp_path, changes):
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"BillingCurrency": "USD", "Items": [_price_row(**changes)], "NextPageLink": None}))
    result = subprocess.run([sys.executable, "-m", "tools.prices", "--from", str(answer), "--out", str(tmp_path / "t.json")],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: {answer}") and len(line) < 400 and "\x1b" not in line and "\x07" not in line


@pytest.mark.slow
@pytest.mark.parametrize("changes", [
    {"retailPrice": 1e308},  # finite, but the cost of a pool at its ceiling was inf, which JSON cannot hold
    {"retailPrice": 10_000_001},
    {"currencyCode": "US\nD ::error::x"},  # printed beside every figure of the summary
    {"currencyCode": "\x1b[31mUSD"},
    {"currencyCode": "X" * 1_000_000},
    {"currencyCode": 5},
])
def test_a_price_or_currency_no_table_can_hold_is_refused(tmp_path, changes):
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"BillingCurrency": "USD", "Items": [_price_row(**changes)], "NextPageLink": None}))
    for command in (["tools.prices", "--from", str(answer), "--out", str(tmp_path / "t.json")],
                    ["tools.preview", "dev", "--prices", str(answer)]):
        result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True,
                                timeout=HANG_GUARD_S)
        assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr, result.stderr
        [line] = result.stderr.splitlines()
        assert ("retailPrice" in line or "currency" in line) and len(line) < 400 and "\x1b" not in line


def test_two_rows_for_one_size_give_one_price_whatever_their_order():
    from datetime import date

    from components.pricing import table_from_pages
    rows = [_price_row(retailPrice=price, skuName=name) for price in (0.5, 0.9, 0.7)
            for name in ("NC4as T4 v3", "NC4as T4 v3 Spot")]
    tables = [table_from_pages([("answer", {"Items": items, "NextPageLink": None})], date(2026, 11, 26), "test")
              for items in (rows, rows[::-1], rows[2:] + rows[:2])]
    assert all(table == tables[0] for table in tables)
    assert tables[0].hourly("eastus2", T4, "onDemand") == tables[0].hourly("eastus2", T4, "spot") == 0.9


@pytest.mark.slow
def test_a_long_price_answer_is_read_in_linear_time():
    from datetime import date

    from components.pricing import table_from_pages

    def prepare(n: int) -> Callable[[], object]:
        items = [_price_row(armSkuName=f"Standard_X{i}", retailPrice=0.5 + i % 7) for i in range(n)]
        pages = [("answer", {"Items": items, "NextPageLink": None})]
        return lambda: table_from_pages(pages, date(2026, 11, 26), "test")
    assert growth(prepare, 25_000) < GROWTH_LIMIT


@pytest.mark.slow
def test_a_price_file_name_stays_on_its_line_and_an_unwritable_table_is_an_input_error(tmp_path):
    answer = tmp_path / "x\n::error::y\x1b[2J.json"
    answer.write_text('{"Items": 5}')
    for command in (["tools.prices", "--from", str(answer), "--out", str(tmp_path / "t.json")],
                    ["tools.preview", "dev", "--prices", str(answer)]):
        result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True,
                                timeout=HANG_GUARD_S)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        [line] = result.stderr.splitlines()
        assert "x\\n::error::y\\x1b[2J.json: Items is int, not a list" in line
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"BillingCurrency": "USD", "Items": [_price_row()], "NextPageLink": None}))
    result = subprocess.run([sys.executable, "-m", "tools.prices", "--from", str(good), "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: --out {tmp_path}: cannot write the table: Is a directory")
