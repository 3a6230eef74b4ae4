"""What every pool costs (components/cost.py) and the preview's `cost` (tools/preview.py --json, --prices)."""

from __future__ import annotations

import io
import json
import os
from datetime import date

import pytest
from gpu_aks_policies.catalog import gpu_sku
from gpu_aks_policies.pools.model import Offer, Pool

from components.cost import cost_document, cost_lines, pool_cost
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.pricing import HOURS_PER_MONTH, read_answer_files, read_price_table, table_from_json, table_from_pages
from tests.conftest import ROOT
from tools import preview
from tools.stacks import settings_from_stack_file

PAGES = [ROOT / "tests" / "fixtures" / "prices" / "eastus2-page1.json",
         ROOT / "tests" / "fixtures" / "prices" / "eastus2-page2.json"]
ANSWER = table_from_pages(read_answer_files(PAGES), date(2026, 11, 26), "test answer")

#: A table for NAP ranges: two H100 sizes, Spot cheaper than on-demand.
NAP_TABLE = table_from_json({"currency": "USD", "pricesAsOf": "2026-11-01", "source": "test", "prices": {"eastus2": {
    "Standard_NC40ads_H100_v5": {"onDemand": 7.0, "spot": 2.8},
    "Standard_NC80adis_H100_v5": {"onDemand": 14.0, "spot": 5.6},
    "Standard_ND96isr_H100_v5": {"onDemand": 98.0, "spot": 39.2},
    "Standard_NC24ads_A100_v4": {"onDemand": 3.673, "spot": None},
}}}, "test")


def test_every_pool_of_a_stack_is_priced_from_the_shipped_table():
    settings = settings_from_stack_file(ROOT / "Pulumi.dev.yaml", "dev")
    table = read_price_table()
    document = cost_document(platform_pools(settings).pools, table, "eastus2")
    assert (document["currency"], document["pricesAsOf"], document["hoursPerMonth"]) == ("USD", "2026-06-18", 730)
    assert set(document["pools"]) == {"system", "cpu", "gput4"}
    t4 = table.hourly("eastus2", "Standard_NC4as_T4_v3", "onDemand")
    assert document["pools"]["gput4"] == {"kind": "agentPool", "hourlyPerNode": t4, "monthlyAtMin": 0.0,
                                          "monthlyAtMax": round(2 * t4 * HOURS_PER_MONTH, 2)}
    system = document["pools"]["system"]
    assert system["monthlyAtMin"] == round(system["hourlyPerNode"] * 1 * 730, 2)
    assert system["monthlyAtMax"] == round(system["hourlyPerNode"] * 2 * 730, 2)


def _pool(name: str, vm_size: str, capacity: str, min_count: int, max_count: int) -> Pool:
    """An AgentPool of one size bought at one capacity type."""
    return Pool(name=name, key=f"gpuPools[{name}]", backend="agentPool", role="gpu", azure_name=name,
                offers=(Offer.sized(vm_size, gpu_sku(vm_size), capacity_types=(capacity,)),),
                min_count=min_count, max_count=max_count, spot=capacity == "spot", zones=())


def test_spot_is_cheaper_than_on_demand_for_the_same_size():
    spot = pool_cost(_pool("s", "Standard_NC4as_T4_v3", "spot", 1, 4), ANSWER, "eastus2")
    regular = pool_cost(_pool("r", "Standard_NC4as_T4_v3", "onDemand", 1, 4), ANSWER, "eastus2")
    assert spot.hourly_per_node < regular.hourly_per_node
    assert spot.monthly_at_max < regular.monthly_at_max
    assert regular.monthly_at_max == round(4 * 0.526 * 730, 2)


def test_a_size_without_a_price_says_so_and_never_shows_zero():
    cost = pool_cost(_pool("s", "Standard_D2ds_v5", "spot", 2, 4), ANSWER, "eastus2")
    assert (cost.hourly_per_node, cost.monthly_at_min, cost.monthly_at_max) == (None, None, None)
    assert cost.missing == ("no Spot price for Standard_D2ds_v5 in eastus2 in the prices of 2026-11-26",)
    lines = cost_lines(cost_document([_pool("s", "Standard_D2ds_v5", "spot", 2, 4)], ANSWER,
                                     "eastus2"))
    assert "    s: no price per node; no price a month at the floor, no price at the ceiling" in lines


def test_a_spot_pool_without_a_spot_price_is_bounded_by_on_demand():
    """#38: Spot's default max price (-1) caps Spot at on-demand, so the ceiling is a number."""
    on_demand = ANSWER.hourly("eastus2", "Standard_D8ds_v5", "onDemand")
    assert on_demand is not None and ANSWER.hourly("eastus2", "Standard_D8ds_v5", "spot") is None
    cost = pool_cost(_pool("s", "Standard_D8ds_v5", "spot", 2, 4), ANSWER, "eastus2")
    assert (cost.hourly_per_node, cost.monthly_at_min) == (None, None)
    assert cost.monthly_at_max == round(4 * on_demand * HOURS_PER_MONTH, 2)
    [reason] = cost.missing
    assert reason.startswith("no Spot price for Standard_D8ds_v5 in eastus2") and \
        "its ceiling counts the on-demand price" in reason and "default max price (-1)" in reason


NAP_STACK = {
    "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
    "systemPool": {"minCount": 2, "maxCount": 2},
    "gpuNodePools": [
        {"name": "h100", "gpus": ["H100"], "gpuCount": [1, 2], "capacityTypes": ["spot", "on-demand"],
         "limits": {"gpu": 8}, "weight": 100},
        {"name": "a100", "gpus": ["A100"], "gpuCount": [1], "limits": {"cpu": 96}, "weight": 50},
    ],
}


def test_a_nap_pool_costs_the_range_over_its_candidates_and_its_ceiling_from_limits():
    settings = parse_settings(NAP_STACK, "nap", "eastus2", today=date(2026, 11, 26))
    pools = {pool.name: pool for pool in platform_pools(settings).pools}
    h100 = pool_cost(pools["h100"], NAP_TABLE, "eastus2")
    # Cheapest candidate at the capacity tried first (Spot), dearest at any allowed capacity.
    assert (h100.hourly_per_node, h100.hourly_per_node_max) == (2.8, 14.0)
    # At most 8 GPUs: 8 x NC40ads (1 GPU) at 7.0 or 4 x NC80adis (2 GPUs) at 14.0 -> 56/h either way.
    assert h100.monthly_at_min == 0.0 and h100.monthly_at_max == round(8 * 7.0 * 730, 2)
    assert [c["vmSize"] for c in h100.candidates] == ["Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"]
    # The vCPU ceiling: 96 vCPUs are 4 x NC24ads_A100_v4.
    a100 = pool_cost(pools["a100"], NAP_TABLE, "eastus2")
    assert a100.monthly_at_max == round(4 * 3.673 * 730, 2)
    assert a100.to_json("nodePool")["candidates"] == [
        {"vmSize": "Standard_NC24ads_A100_v4", "hourly": {"onDemand": 3.673}, "maxNodes": 4}]


def test_a_spot_first_nap_pool_without_spot_prices_is_bounded_by_on_demand():
    """#38: Spot-first pools showed "no price" although on-demand, their fallback, was priced."""
    settings = parse_settings({**NAP_STACK, "gpuNodePools": [
        {"name": "a100", "gpus": ["A100"], "gpuCount": [1], "capacityTypes": ["spot", "on-demand"],
         "limits": {"gpu": 4}}]}, "nap", "eastus2", today=date(2026, 11, 26))
    (pool,) = [p for p in platform_pools(settings).pools if p.backend == "nodePool"]
    cost = pool_cost(pool, NAP_TABLE, "eastus2")
    assert cost.hourly_per_node is None and cost.monthly_at_min == 0.0
    assert cost.monthly_at_max == round(4 * 3.673 * HOURS_PER_MONTH, 2)
    assert cost.missing[0].startswith("no Spot price for Standard_NC24ads_A100_v4 in eastus2 in the prices of 2026-11-01")


def test_a_nap_pool_that_may_bring_an_unpriced_size_has_no_ceiling():
    """An H200 NodePool without a count may bring ND96is_H200_v5, which the capture does not price: its
    ceiling is unknown, never the priced sizes' alone."""
    settings = parse_settings({**NAP_STACK, "gpuNodePools": [
        {"name": "h200", "gpus": ["H200"], "limits": {"gpu": 16}}]}, "nap", "eastus2", today=date(2026, 11, 26))
    (pool,) = [p for p in platform_pools(settings).pools if p.backend == "nodePool"]
    cost = pool_cost(pool, read_price_table(), "eastus2")
    assert cost.monthly_at_max is None
    assert any("Standard_ND96is_H200_v5" in reason for reason in cost.missing)


def test_a_nap_pool_with_a_gpu_the_catalog_lacks_has_no_ceiling():
    settings = parse_settings({**NAP_STACK, "gpuNodePools": [
        {"name": "gpu", "gpus": ["H100", "RTXPRO6000BSE"], "gpuCount": [1], "limits": {"gpu": 4}}]},
        "nap", "eastus2", today=date(2026, 11, 26))
    (pool,) = [p for p in platform_pools(settings).pools if p.backend == "nodePool"]
    cost = pool_cost(pool, NAP_TABLE, "eastus2")
    assert cost.monthly_at_max is None
    assert "gpu may bring RTXPRO6000BSE, which gpu-aks's catalog lacks: no price, so no ceiling" in cost.missing


def test_the_cost_has_a_total_the_tier_fee_and_what_it_leaves_out():
    settings = parse_settings({**NAP_STACK, "cluster": {**NAP_STACK["cluster"], "skuTier": "Standard"}}, "nap",
                              "eastus2", today=date(2026, 11, 26))
    table = table_from_json({"currency": "USD", "pricesAsOf": "2026-11-01", "source": "test", "prices": {"eastus2": {
        **{size: {"onDemand": price.on_demand, "spot": price.spot} for size, price in NAP_TABLE.prices["eastus2"].items()},
        "Standard_D4ds_v5": {"onDemand": 0.226, "spot": None}}}}, "test")
    document = cost_document(platform_pools(settings).pools, table, "eastus2", settings.cluster.sku_tier)
    assert document["clusterTier"] == {"tier": "Standard", "hourly": 0.10, "monthly": 73.0}
    pools = document["pools"].values()
    assert all(isinstance(pool["monthlyAtMax"], float) for pool in pools), document["pools"]
    assert document["total"]["monthlyAtMax"] == round(sum(pool["monthlyAtMax"] for pool in pools) + 73.0, 2)
    assert any("Managed Prometheus" in item or "managed Prometheus" in item for item in document["excluded"])
    assert any("disks" in item for item in document["excluded"])
    assert any("firewall" in item for item in document["excluded"])
    lines = cost_lines(document)
    assert any(line.startswith("    total: ") and "(list prices)" in line for line in lines)
    assert "    control plane (Standard tier): 73.00 USD a month" in lines


@pytest.mark.parametrize("default_node_pools, unbounded", [("Auto", True), ("None", False)])
def test_a_total_with_aks_s_own_default_nodepool_has_no_ceiling_and_names_it(tmp_path, default_node_pools, unbounded):
    # Under defaultNodePools: Auto, AKS adds its `default` NodePool with no limits: the stack's own pools'
    # ceilings do not bound the bill (issue 50: the total's ceiling was a figure).
    stack_file = tmp_path / "Pulumi.nap.yaml"
    stack_file.write_text((ROOT / "Pulumi.nap.yaml").read_text().replace(
        "defaultNodePools: Auto", f"defaultNodePools: {default_node_pools}"))
    document = preview.stack_cost("nap", read_price_table(), stack_file=stack_file)
    total = document["total"]
    assert all(isinstance(pool["monthlyAtMax"], float) for pool in document["pools"].values())
    if unbounded:
        assert total["monthlyAtMax"] is None and isinstance(total["monthlyAtMin"], float)
        assert total["unbounded"] == ["default: AKS's own NodePool under nodeProvisioningProfile.defaultNodePools: Auto, "
                                      "which has no limits (set defaultNodePools: None to leave it out)"]
        [line] = [line for line in cost_lines(document) if line.startswith("    total: ")]
        assert line.endswith("a month at the floor, no ceiling: " + total["unbounded"][0])
    else:
        assert isinstance(total["monthlyAtMax"], float) and "unbounded" not in total


def test_the_summary_prints_the_same_figures_as_the_json():
    settings = parse_settings(NAP_STACK, "nap", "eastus2", today=date(2026, 11, 26))
    document = cost_document(platform_pools(settings).pools, NAP_TABLE, "eastus2")
    lines = cost_lines(document)
    h100 = document["pools"]["h100"]
    assert f"    h100: 2.8000-14.0000 USD/h per node; 0.00 USD a month at the floor, {h100['monthlyAtMax']:,.2f} USD at " \
           "the ceiling" in lines


# --- The preview ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_with_answer(tmp_path_factory) -> dict:
    answer = tmp_path_factory.mktemp("prices") / "answer.json"
    answer.write_text(json.dumps([json.loads(path.read_text()) for path in PAGES]))
    saved = 1_764_115_200  # 2025-11-26T00:00:00Z
    os.utime(answer, (saved, saved))
    out = io.StringIO()
    assert preview.main(["dev", "--json", "--prices", str(answer)], stdout=out) == 0
    document: dict = json.loads(out.getvalue())
    return document


@pytest.mark.slow
def test_preview_json_has_a_top_level_cost_priced_from_the_given_answer(dev_with_answer):
    cost = dev_with_answer["cost"]
    assert cost["pricesAsOf"] == "2025-11-26" and "answer.json" in cost["source"]
    assert cost["pools"]["gput4"]["hourlyPerNode"] == 0.526  # the answer's price, not the table's
    assert cost["pools"]["cpu"]["monthlyAtMax"] == round(3 * 0.452 * 730, 2)
    assert set(cost["pools"]) == {"system", "cpu", "gput4"}


def test_preview_refuses_a_bad_prices_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"Items": "x"}')
    assert preview.main(["dev", "--json", "--prices", str(bad)]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: --prices: {bad}: Items is str, not a list") and "Traceback" not in error
    assert preview.main(["dev", "--prices", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err
