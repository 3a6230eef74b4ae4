"""The preflight's `az` answers under hostile input.

The module they pin: `tools/preflight.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.inputs import GROWTH_LIMIT, HOSTILE_KEY, assert_no_injection, growth
from tests.test_preflight import ROOMY, SKUS, restriction, sku
from tests.test_preflight import run as run_preflight
from tests.test_preflight import usage as usage_entry
from tools import preflight


def changed(document: list[dict[str, Any]], index: int, **changes: Any) -> list[dict[str, Any]]:
    changed = json.loads(json.dumps(document))
    changed[index].update(changes)
    return changed


A100 = 4  # the position of Standard_NC24ads_A100_v4 in SKUS, and of its family in ROOMY


@pytest.mark.parametrize("capability", ["vCPUs", "GPUs"])
def test_a_capability_listed_twice_with_other_values_is_bad_input(tmp_path, capsys, capability):
    # The first value was taken and the other dropped without a word.
    from tests.test_preflight import ROOMY, SKUS
    from tests.test_preflight import run as run_preflight
    skus = json.loads(json.dumps(SKUS))
    a100 = next(i for i, item in enumerate(skus) if item["name"] == "Standard_NC24ads_A100_v4")
    skus[a100]["capabilities"] += [{"name": capability, "value": "2"}, {"name": capability, "value": HOSTILE_KEY}]
    code, out = run_preflight(tmp_path, "prod", ROOMY, skus)
    err = capsys.readouterr().err
    assert (code, out) == (2, ""), err
    assert f"skus[{a100}].capabilities[{capability}]: listed " in err and "times with other values" in err
    assert_no_injection(err.replace("\n", "")) and len(err) < 400


def test_a_capability_repeated_with_the_same_value_is_read_once(tmp_path):
    from tests.test_preflight import ROOMY, SKUS
    from tests.test_preflight import run as run_preflight
    skus = json.loads(json.dumps(SKUS))
    for item in skus:
        item["capabilities"] = item.get("capabilities", []) * 3
    assert run_preflight(tmp_path, "prod", ROOMY, skus)[0] == 0


@pytest.mark.parametrize("case, usage_doc, skus_doc, expected", [
    ("a negative count in use inflates the headroom", changed(ROOMY, A100, currentValue=-500), SKUS,
     "usage[4].currentValue: -500 is not a whole number from 0"),
    ("a negative limit", changed(ROOMY, A100, limit=-1), SKUS, "usage[4].limit: -1 is not a whole number"),
    ("an implausible integer", changed(ROOMY, A100, limit=10**30), SKUS, "usage[4].limit: a huge number"),
    ("digits Python cannot convert", changed(ROOMY, A100, limit="1" * 5000), SKUS, "usage[4].limit: \"1111"),
    ("NaN", changed(ROOMY, A100, limit=float("nan")), SKUS, "usage[4].limit: \"NaN\" is not a whole number"),
    ("true is no count (Python's bool is an int)", changed(ROOMY, A100, limit=True), SKUS,
     "usage[4].limit: true is not a whole number"),
    ("a vCPU count Python cannot convert", ROOMY, changed(SKUS, A100, capabilities=[{"name": "vCPUs", "value": "9" * 5000}]),
     "skus[4].capabilities[vCPUs]"),
    ("locationInfo a number", ROOMY, changed(SKUS, A100, locationInfo=5), "skus[4].locationInfo: expected a list"),
    ("locations a number", ROOMY, changed(SKUS, A100, locationInfo=None, locations=5), "skus[4].locations: expected a list"),
    ("capabilities a number", ROOMY, changed(SKUS, A100, capabilities=5), "skus[4].capabilities: expected a list"),
    ("zones a number", ROOMY, changed(SKUS, A100, locationInfo=[{"location": "eastus2", "zones": 7}]),
     "skus[4].locationInfo.zones: expected a list"),
    ("restrictions a number", ROOMY, changed(SKUS, A100, restrictions=5), "skus[4].restrictions: expected a list"),
    ("restrictionInfo a list", ROOMY, changed(SKUS, A100, restrictions=[{"type": "Zone", "restrictionInfo": [1]}]),
     "restrictionInfo: expected an object"),
    ("restricted zones a number", ROOMY,
     changed(SKUS, A100, restrictions=[{"type": "Zone", "restrictionInfo": {"zones": 5}}]), "zones: expected a list"),
    # A second entry for a size would hide the first one's restriction: nothing may be lost quietly.
    ("a restricted size listed again without its restriction", ROOMY,
     [*SKUS[:A100], sku("Standard_NC24ads_A100_v4", "standardNCADSA100v4Family", 24, ["1", "2", "3"],
                        [restriction("Location")]), *SKUS[A100:]],
     "skus[5]: \"Standard_NC24ads_A100_v4\" is listed twice for eastus2 with another offer (also skus[4])"),
    ("a quota listed again with more room", [*ROOMY[:A100], usage_entry("standardNCADSA100v4Family", 399, 400),
                                             *ROOMY[A100:]], SKUS,
     "usage[5]: the quota \"standardNCADSA100v4Family\" is listed twice with other numbers (also usage[4])"),
])
def test_hostile_az_answers_are_input_errors_naming_the_field(tmp_path, capsys, case, usage_doc, skus_doc, expected):
    code, out = run_preflight(tmp_path, "prod", usage_doc, skus_doc)
    err = capsys.readouterr().err
    assert (code, out) == (2, ""), case
    assert expected in err and len(err) < 300, err


def test_the_same_answer_twice_is_read_once(tmp_path):
    code, out = run_preflight(tmp_path, "prod", ROOMY + ROOMY, SKUS + SKUS)
    assert code == 0 and out.count("gpuPools[a100mig]") == 1


@pytest.mark.slow
def test_long_az_answers_are_read_in_linear_time(tmp_path):
    def prepare(n: int) -> Callable[[], object]:
        usage_doc = ROOMY + [usage_entry(f"family{i}", i, i + 1) for i in range(n)]
        skus_doc = SKUS + [sku(f"Standard_X{i}", f"family{i}", 4, ["1"]) for i in range(n)]
        return lambda: (preflight.parse_usage(usage_doc), preflight.parse_skus(skus_doc, "eastus2"))
    assert growth(prepare, 2000) < GROWTH_LIMIT
