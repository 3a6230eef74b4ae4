"""`python -m tools.preflight`: quota and VM offers per pool, from recorded `az` answers.

The recorded answers are built from azure-mgmt-compute's `Usage` and `ResourceSku` models (the REST
models `az vm list-usage` and `az vm list-skus` print), so their shape is Azure's, not a guess.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from components.pools.kind import surge_nodes
from tests.conftest import ROOT
from tools import preflight

compute = pytest.importorskip("azure.mgmt.compute.models", reason="azure-mgmt-compute is the test oracle")


def usage(name: str, current: int, limit: int) -> dict:
    return compute.Usage(current_value=current, limit=limit,
                         name=compute.UsageName(value=name, localized_value=name)).as_dict()


def sku(name: str, family: str, vcpus: int, zones: list[str], restrictions: list | None = None,
        location: str = "eastus2") -> dict:
    return compute.ResourceSku(
        resource_type="virtualMachines", name=name, tier="Standard", family=family, locations=[location],
        location_info=[compute.ResourceSkuLocationInfo(location=location, zones=zones)],
        capabilities=[compute.ResourceSkuCapabilities(name="vCPUs", value=str(vcpus)),
                      compute.ResourceSkuCapabilities(name="LowPriorityCapable", value="True")],
        restrictions=restrictions or []).as_dict()


def restriction(kind: str, zones: list[str] | None = None) -> dict:
    return compute.ResourceSkuRestrictions(
        type=kind, values_property=["eastus2"], reason_code="NotAvailableForSubscription",
        restriction_info=compute.ResourceSkuRestrictionInfo(locations=["eastus2"], zones=zones or [])).as_dict()


SKUS = [
    sku("Standard_D4ds_v5", "standardDDSv5Family", 4, ["1", "2", "3"]),
    sku("Standard_D8ds_v5", "standardDDSv5Family", 8, ["1", "2", "3"]),
    sku("Standard_D16ds_v5", "standardDDSv5Family", 16, ["1", "2", "3"]),
    sku("Standard_NC4as_T4_v3", "standardNCASv3_T4Family", 4, ["1", "2", "3"]),
    sku("Standard_NC24ads_A100_v4", "standardNCADSA100v4Family", 24, ["1", "2", "3"]),
]
ROOMY = [usage("cores", 10, 1000), usage("lowPriorityCores", 0, 500), usage("standardDDSv5Family", 10, 500),
         usage("standardNCASv3_T4Family", 0, 100), usage("standardNCADSA100v4Family", 0, 400)]


def run(tmp_path: Path, stack: str, usage_doc: object, skus_doc: object) -> tuple[int, str]:
    usage_file, skus_file = tmp_path / "usage.json", tmp_path / "skus.json"
    usage_file.write_text(json.dumps(usage_doc))
    skus_file.write_text(json.dumps(skus_doc))
    out = io.StringIO()
    code = preflight.main([stack, "--usage", str(usage_file), "--skus", str(skus_file)], out=out)
    return code, out.getvalue()


def test_recorded_shapes_are_azures():
    assert usage("cores", 1, 2) == {"unit": "Count", "currentValue": 1, "limit": 2,
                                    "name": {"value": "cores", "localizedValue": "cores"}}
    assert {"name", "family", "locationInfo", "capabilities", "restrictions"} <= set(SKUS[0])


def test_prod_fits_a_roomy_subscription(tmp_path):
    code, out = run(tmp_path, "prod", ROOMY, SKUS)
    assert code == 0, out
    # a100mig: maxCount 8 + maxSurge 1 = 9 nodes x 24 vCPUs.
    assert "ok      gpuPools[a100mig]: Standard_NC24ads_A100_v4 x 9 = 216 vCPUs of standardNCADSA100v4Family" in out
    # Spot: no surge, counted against the regional low-priority quota.
    assert "gpuPools[t4spot]: Standard_NC4as_T4_v3 x 10 = 40 vCPUs of lowPriorityCores (Spot)" in out


@pytest.mark.parametrize("case, usage_doc, skus_doc, expected", [
    ("family quota too small", [*ROOMY[:4], usage("standardNCADSA100v4Family", 24, 96)], SKUS,
     "problem: gpuPools[a100mig]: standardNCADSA100v4Family needs 216 vCPUs (Standard_NC24ads_A100_v4 x 9), 72 "
     f"available (limit 96, in use 24); ask for more at {preflight.QUOTA_PAGE}"),
    ("no Spot quota", [ROOMY[0], *ROOMY[2:]], SKUS,
     f"problem: Spot pools: no lowPriorityCores quota in the usage list, so no Spot vCPUs in eastus2; ask at "
     f"{preflight.QUOTA_PAGE}"),
    ("Spot quota too small", [ROOMY[0], usage("lowPriorityCores", 30, 40), *ROOMY[2:]], SKUS,
     "problem: Spot pools: Total Regional Low-priority vCPUs (Spot) needed 40, 10 available (limit 40, in use 30)"),
    ("regional quota too small", [usage("cores", 100, 200), *ROOMY[1:]], SKUS,
     "problem: all on-demand pools: Total Regional vCPUs needed"),
    ("size not offered in the region", ROOMY, SKUS[:4],
     "problem: gpuPools[a100mig]: Standard_NC24ads_A100_v4 is not offered in eastus2"),
    ("restricted for the subscription", ROOMY,
     [*SKUS[:4], sku("Standard_NC24ads_A100_v4", "standardNCADSA100v4Family", 24, ["1", "2", "3"],
                     [restriction("Location")])],
     "problem: gpuPools[a100mig]: Standard_NC24ads_A100_v4 is restricted for this subscription in eastus2 "
     "(NotAvailableForSubscription in eastus2)"),
    ("a zone not offered", ROOMY,
     [*SKUS[:2], sku("Standard_D16ds_v5", "standardDDSv5Family", 16, ["1", "2", "3"], [restriction("Zone", ["3"])]),
      *SKUS[3:]],
     "problem: cpuPools[cpu]: Standard_D16ds_v5 is not available in zone(s) 3 of eastus2 (offered: 1,2)"),
])
def test_each_capacity_problem_names_pool_family_and_numbers(tmp_path, case, usage_doc, skus_doc, expected):
    code, out = run(tmp_path, "prod", usage_doc, skus_doc)
    assert code == 1, out
    assert expected in out, out


@pytest.mark.parametrize("case, usage_doc, skus_doc, expected", [
    ("usage not a list", {"value": []}, SKUS, "usage: expected the JSON list"),
    ("usage number as text", [{"name": {"value": "cores"}, "currentValue": "x", "limit": 1}], SKUS,
     "usage[0].currentValue"),
    ("skus not a list", ROOMY, "nope", "skus: expected the JSON list"),
])
def test_bad_recorded_answers_exit_2(tmp_path, capsys, case, usage_doc, skus_doc, expected):
    code, _ = run(tmp_path, "prod", usage_doc, skus_doc)
    assert code == 2
    assert expected in capsys.readouterr().err


def test_hostile_files_exit_2_without_hanging_or_a_traceback(tmp_path, capsys):
    fifo = tmp_path / "usage.fifo"
    os.mkfifo(fifo)
    assert preflight.main(["prod", "--usage", str(fifo), "--skus", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"[\x1b[31m")
    assert preflight.main(["prod", "--usage", str(bad), "--skus", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "Traceback" not in err
    assert preflight.main(["../etc/passwd"]) == 2
    assert preflight.main(["nosuchstack", "--usage", str(bad), "--skus", str(bad)]) == 2


def test_an_invalid_stack_config_lists_each_problem_on_its_own_line(tmp_path, capsys, monkeypatch):
    # The preflight reads the stack as the program does (tools.stacks.settings_from_stack_file).
    monkeypatch.setenv("GPU_AKS_TODAY", "the 5th\x1b[2J")
    assert preflight.main(["prod", "--usage", "/dev/null", "--skus", "/dev/null"]) == 2
    err = capsys.readouterr().err
    assert "\n  - GPU_AKS_TODAY='the 5th\\x1b[2J' is not an ISO date like 2026-11-22" in err
    assert "\x1b" not in err


def test_without_files_it_asks_az(tmp_path):
    asked = []

    def az(arguments):
        asked.append(list(arguments))
        return ROOMY if arguments[1] == "list-usage" else SKUS

    assert preflight.main(["dev"], az=az, out=io.StringIO()) == 0
    assert asked == [["vm", "list-usage", "--location", "eastus2"],
                     ["vm", "list-skus", "--location", "eastus2", "--resource-type", "virtualMachines"]]


def test_the_offline_summary_needs_no_azure():
    settings = preflight.load_stack("prod", ROOT)
    lines = preflight.capacity_lines(settings)
    assert ("gpuPools[a100mig]: Standard_NC24ads_A100_v4 x 9 (8 at maxCount + 1 upgrade surge) = 216 vCPUs of its VM "
            "family's vCPUs in eastus2") in lines
    assert any(line.startswith("gpuPools[t4spot]: Standard_NC4as_T4_v3 x 10 (10 at maxCount + 0 upgrade surge) = 40 "
                               "vCPUs of regional low-priority (Spot) vCPUs") for line in lines)
    assert lines[-1] == "check them against the subscription's quota: python -m tools.preflight prod"


def test_a_stack_read_from_a_config_file_is_checked_by_the_command_the_preview_prints(tmp_path):
    """The landing-zone example previews with `--config-file`; the preflight line it prints must run as written."""
    config_file = Path("examples/landing-zone/Pulumi.landing-zone.yaml")
    settings = preflight.load_stack("landing-zone", ROOT, config_file=ROOT / config_file)
    assert preflight.capacity_lines(settings, config_file)[-1] == (
        "check them against the subscription's quota: python -m tools.preflight landing-zone --config-file "
        "examples/landing-zone/Pulumi.landing-zone.yaml")
    assert preflight.main(["landing-zone", "--usage", str(tmp_path / "none.json")], out=io.StringIO()) == 2
    usage_file, skus_file = tmp_path / "usage.json", tmp_path / "skus.json"
    usage_file.write_text(json.dumps(ROOMY))
    skus_file.write_text(json.dumps(SKUS))
    out = io.StringIO()
    preflight.main(["landing-zone", "--config-file", str(ROOT / config_file), "--usage", str(usage_file),
                    "--skus", str(skus_file)], out=out)
    assert out.getvalue().startswith("capacity for stack landing-zone in ")


@pytest.mark.parametrize("surge, count, nodes", [("33%", 8, 3), ("1", 8, 1), ("100%", 3, 3), (None, 5, 0), ("10%", 1, 1)])
def test_surge_rounds_up_as_aks_does(surge, count, nodes):
    assert surge_nodes(surge, count) == nodes


def test_names_from_azures_answers_cannot_steer_the_report(tmp_path):
    # A family name from `az vm list-skus` (or a recorded file) is input: a newline, an ESC sequence or a
    # GitHub Actions workflow command in it is printed escaped, never acted on.
    hostile = "standardNCADSA100v4Family\n::error::ALL CLEAN\x1b[2J##[warning]x"
    skus = [*SKUS[:4], sku("Standard_NC24ads_A100_v4", hostile, 24, ["1", "2", "3"])]
    code, out = run(tmp_path, "prod", [*ROOMY, usage(hostile, 0, 400)], skus)
    assert code == 0, out
    assert "\x1b" not in out and "##[" not in out
    assert not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert "standardNCADSA100v4Family\\n" in out


def test_the_tools_that_read_a_stack_file_do_not_load_the_mock_runtime():
    """The preflight and the observability files read the stack file with `tools.stacks`, as the program
    reads its config, without the preview's mock runtime (`offline.mockrun`); the preflight, a real-Azure
    tool, loads no Pulumi at all."""
    import subprocess
    import sys

    script = ("import sys\nimport tools.preflight\nfirst = 'pulumi' in sys.modules\nimport tools.observability\n"
              "print(first, 'offline.mockrun' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.stdout.split() == ["False", "False"], result.stderr
