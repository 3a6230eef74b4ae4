"""A fifth hostile round (issue 41): the three attacks of round 4 still open, template-heavy
manifests, price answers, the component provider's numbers, secret pool sections, limits the owners
enforce, NodePools that select GPUs by other means, and memory.

The standard is `test_hostile_input.py`'s: no traceback, no secret printed, no terminal or CI-log
injection (`assert_inert`), nothing lost. Growth is checked by counting work (calls, bytes, nodes),
never by timing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.platform_settings import parse_settings
from components.settings import PROJECT, SettingsError
from tests.conftest import ROOT, TODAY
from tests.test_components import GPU, problems_of
from tests.test_hostile_round4 import GROUP, _stack_problems
from tests.test_hostile_surfaces import line_of

# --- Round 4's three open attacks ----------------------------------------------------------------------

def test_one_principal_as_group_and_as_user_is_refused_at_both_lines(tmp_path):
    # Two RoleAssignments with one name: `pulumi up` hit a duplicate URN after other creations had
    # started, and Azure allows one type per object anyway.
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    admins = ("      - objectId: 00000000-0000-0000-0000-00000000a001\n        principalType: Group\n"
              "      - objectId: 00000000-0000-0000-0000-00000000a002\n        principalType: User\n")
    assert admins in text
    text = text.replace(admins, admins.replace("a002", "A001"), 1)
    problems = _stack_problems(tmp_path, text)
    assert len(problems) == 2, problems
    first, second = sorted(problems, key=lambda problem: int(problem.split(":")[0]))
    assert first.startswith(f"{line_of(text, '00000000a001')}: {PROJECT}:access.clusterAdmins[0]: ")
    assert second.startswith(f"{line_of(text, '00000000A001')}: {PROJECT}:access.clusterAdmins[1]: ")
    assert "listed as Group here and as User at clusterAdmins[1]" in first
    assert "listed as User here and as Group at clusterAdmins[0]" in second


def test_one_principal_under_three_types_names_each_entry_once():
    admins = [{"objectId": GROUP, "principalType": kind} for kind in ("Group", "User", "ServicePrincipal")]
    problems = problems_of({**GPU, "access": {"clusterAdmins": admins}})
    assert [problem.split(": ")[0] for problem in problems] == [
        f"{PROJECT}:access.clusterAdmins[{index}]" for index in (0, 1, 2)], problems


@pytest.mark.parametrize("start", ["٢٢:٠٠", "２２:００", "2٢:00", "22:0０"])
def test_a_maintenance_start_time_in_other_digits_is_refused(start):
    # Python's `\d` and `int()` take Arabic-Indic and fullwidth digits; AKS takes ASCII ones.
    raw = {**GPU, "maintenance": {"autoUpgrade": {"startTime": start}}}
    [problem] = problems_of(raw)
    assert "autoUpgrade.startTime" in problem and "is not a time from" in problem


@pytest.mark.parametrize("ranges", [
    ["0.0.0.0/1", "128.0.0.0/1"],
    ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"],
    ["203.0.113.0/24", "0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/3"],
    [f"{block}.0.0.0/7" for block in range(0, 200, 2)] + ["200.0.0.0/5", "208.0.0.0/4", "224.0.0.0/3"],
])
def test_ranges_that_together_cover_every_address_are_no_restriction(ranges):
    raw = {**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ranges}}}
    [problem] = problems_of(raw)
    assert problem.startswith(f"{PROJECT}:cluster.apiServerAccessProfile.authorizedIPRanges: ")
    assert "together cover every IPv4 address" in problem


def test_ranges_that_leave_one_address_out_restrict():
    # 255.255.255.255 is left out: a restriction, however loose.
    ranges = ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4", "240.0.0.0/5", "248.0.0.0/6"]
    settings = parse_settings({**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ranges}}},
                              "unit", "eastus2", today=TODAY, environ={})
    assert settings.cluster.api_server.authorized_ip_ranges == tuple(ranges)


# --- Template-heavy manifests ------------------------------------------------------------------------

def _argo_workflow(aliases: int, padding: int) -> str:
    """An Argo Workflow whose `resource` template (a GPU Job with `padding` bytes of annotation) is
    anchored once and aliased `aliases` times."""
    manifest = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  annotations:\n"
                f"    pad: {'x' * padding}\nspec:\n  template:\n    spec:\n      containers:\n"
                "        - name: main\n          image: trainer:1\n          resources:\n            limits:\n"
                "              nvidia.com/gpu: 1\n")
    body = "".join(f"          {line}\n" for line in manifest.splitlines())
    return ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: w\n  namespace: ml\nspec:\n"
            "  templates:\n    - &make\n      name: make\n      resource:\n        action: create\n"
            f"        manifest: |\n{body}" + "    - *make\n" * aliases)


@pytest.mark.parametrize("aliases", [1, 300])
def test_an_aliased_resource_manifest_is_parsed_once(tmp_path, monkeypatch, aliases):
    # Each alias of the template parsed the manifest again: 300 aliases of a 200 kB manifest parsed
    # 60 MB of YAML.
    from gpu_aks_policies import check
    from gpu_aks_policies.rules import parse_rule_config
    from gpu_aks_policies.workloads import argo

    parsed: list[int] = []
    real = argo.load_yaml

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(argo, "load_yaml", counting)
    file = tmp_path / "wf.yaml"
    file.write_text(_argo_workflow(aliases, 200_000))
    report = check.check_paths([str(file)], parse_rule_config({}))
    assert not report.errors, report.errors
    assert len(parsed) == 1, len(parsed)
    # Each alias is still judged: every template gets the same findings under its own path.
    templates = {v.path.split(".resource.")[0] for v in report.violations}
    assert templates == {f"spec.templates[{index}]" for index in range(aliases + 1)}


class _CountingText(str):
    """A str that counts the characters its `find` calls examine."""

    examined = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        found = super().find(sub, start, end)
        begin = start or 0
        _CountingText.examined += (found + len(sub) if found != -1 else len(self)) - begin
        return found


@pytest.mark.parametrize("text", ["{{" * 50_000, "{{ a }}" * 20_000 + "{{" * 20_000, "}}{{x" * 30_000])
def test_expression_markers_are_found_in_one_pass(text):
    # `\{\{.*?\}\}` scanned to the end at every unclosed `{{`: 50,000 of them took minutes.
    from gpu_aks_policies.workloads import argo

    _CountingText.examined = 0
    argo._marked(_CountingText(text))
    assert _CountingText.examined <= 2 * len(text) + 4, (_CountingText.examined, len(text))


@pytest.mark.parametrize("text", ["", "{{", "}}", "{{}}", "a{{b}}c{{d", "{{{{x}}}}", "{{a}}}}{{b}}", "x{{\n}}y{{z}}",
                                  "{{ a }} {{ b }", "{}{{}{}}"])
def test_expression_markers_are_the_regex_s(text):
    import re

    from gpu_aks_policies.workloads import argo

    regex = re.compile(r"\{\{.*?\}\}", re.DOTALL)
    assert argo._marked(text) == regex.sub(argo.EXPRESSION_MARKER, text)
    assert argo._has_expression_in(text) == bool(regex.search(text))


# --- Price answers -----------------------------------------------------------------------------------

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


@pytest.mark.parametrize("digits", ["9" * 400, "-" + "9" * 400, "9" * 5000, "1" + "0" * 400 + ".5"])
def test_a_price_of_hundreds_of_digits_is_an_input_error(tmp_path, capsys, digits):
    # `math.isfinite` of a 400-digit int raised OverflowError: a traceback in both tools.
    import json

    from tools import prices
    from tools.preview import main as preview_main

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
    from tools.preview import main as preview_main

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


# --- The component provider: integers sent as floats ------------------------------------------------

def _floated(value: Any) -> Any:
    """`value` as every Pulumi SDK sends it to the component provider: each number a float (protobuf
    `Struct` holds only doubles)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, dict):
        return {key: _floated(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_floated(item) for item in value]
    return value


#: Every integer key of the AgentPool kinds and of NAP, with a whole number.
WHOLE_NUMBERS: dict[str, Any] = {
    "cluster": {"skuTier": "Standard", "securityProfile": {"imageCleaner": {"enabled": True, "intervalHours": 48}}},
    "access": {"rolePropagationSeconds": 60},
    "systemPool": {"minCount": 2, "maxCount": 3, "maxPods": 50, "availabilityZones": [1, 2, 3]},
    "cpuPools": [{"name": "batch", "vmSize": "Standard_D8ds_v5", "minCount": 0, "maxCount": 3, "maxPods": 40,
                  "maxSurge": 2, "maxUnavailable": 1, "drainTimeoutInMinutes": 20, "nodeSoakDurationInMinutes": 5}],
    "gpuPools": [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2,
                  "sharing": {"strategy": "timeSlicing", "replicas": 4}, "scaleSetPriority": "Spot",
                  "spotMaxPrice": 1, "nodeTaints": ["sku=gpu:NoSchedule"],
                  "availabilityZones": [1, 2]},
                 {"name": "b200", "vmSize": "Standard_ND128isr_B200_v7",
                  "gpu": {"model": "B200", "count": 8, "memoryGiB": 180}}],
    "maintenance": {"autoUpgrade": {"dayOfWeek": "Saturday", "startTime": "22:00", "durationHours": 4,
                                    "intervalWeeks": 1}},
    "observability": {"alerts": {"gpuTemperatureCelsius": 85}},
}
NAP_WHOLE_NUMBERS: dict[str, Any] = {
    "cluster": {"skuTier": "Standard", "nodeProvisioningProfile": {"mode": "Auto", "defaultNodePools": "Auto"}},
    "systemPool": {"minCount": 2, "maxCount": 2},
    "gpuNodePools": [{"name": "h100", "gpus": ["H100"], "gpuCount": [1, 2], "limits": {"gpu": 8, "cpu": 400},
                      "weight": 100, "osDiskSizeGB": 256}],
}


@pytest.mark.parametrize("raw", [WHOLE_NUMBERS, NAP_WHOLE_NUMBERS], ids=["agentPools", "nap"])
def test_whole_numbers_sent_as_floats_read_as_integers(raw):
    # `gpu.count: 8.0`, `availabilityZones: [1.0]`, `maxSurge: 1.0` and `maxUnavailable: 1.0` were refused:
    # what every SDK sends for 8, [1] and 1.
    as_ints = parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
    as_floats = parse_settings(_floated(raw), "unit", "eastus2", today=TODAY, environ={})
    assert as_floats == as_ints


@pytest.mark.parametrize("pool, key, message", [
    ({"gpu": {"model": "B200", "count": 2.5, "memoryGiB": 180}}, "gpu.count", "2.5 is not a GPU count per node"),
    ({"gpu": {"model": "B200", "count": 8, "memoryGiB": 180.5}}, "gpu.memoryGiB", "180.5 is not a GPU memory"),
    ({"availabilityZones": [1.5]}, "availabilityZones", "must be a list of zones"),
    ({"maxSurge": 1.5}, "maxSurge", "must be a node count"),
    ({"maxUnavailable": 0.5}, "maxUnavailable", "must be a node count or a percentage"),
    ({"availabilityZones": [True]}, "availabilityZones", "must be a list of zones"),
    ({"maxSurge": True}, "maxSurge", "must be a node count"),
])
def test_a_fraction_where_a_whole_number_goes_is_refused(pool, key, message):
    raw = {"gpuPools": [{"name": "b200", "vmSize": "Standard_ND128isr_B200_v7",
                         "gpu": {"model": "B200", "count": 8, "memoryGiB": 180}, **pool}]}
    problems = problems_of(raw)
    assert any(f"gpuPools[b200].{key}: " in problem and message in problem for problem in problems), problems


# --- Secret pool sections ----------------------------------------------------------------------------

POOL_SECRET = "s3cret-pool-value"


@pytest.mark.parametrize("key, raw", [
    ("gpuPools", {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3",
                                "nodeLabels": {"team": POOL_SECRET}}]}),
    ("cpuPools", {**GPU, "cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "nodeLabels": {"t": POOL_SECRET}}]}),
    ("systemPool", {**GPU, "systemPool": {"vmSize": "Standard_D4ds_v5", "nodeLabels": {"t": POOL_SECRET}}}),
    ("gpuNodePools", {**NAP_WHOLE_NUMBERS, "gpuNodePools": [{**NAP_WHOLE_NUMBERS["gpuNodePools"][0],
                                                            "nodeLabels": {"team": POOL_SECRET}}]}),
])
def test_a_secret_pool_section_is_refused_without_being_printed(key, raw):
    # A secret gpuPools reached the AgentPools, the device plugin and the outputs contract in plain text.
    with pytest.raises(SettingsError) as refused:
        parse_settings(raw, "unit", "eastus2", secret_keys={key}, today=TODAY, environ={})
    [problem] = [p for p in refused.value.problems if p.startswith(f"{PROJECT}:{key}: ")]
    assert "is a secret" in problem and "set it in plain text" in problem
    assert not [p for p in refused.value.problems if POOL_SECRET in p]


def test_the_program_registers_nothing_for_a_secret_pool_section():
    from tools.mockrun import run_program
    from tools.stacks import config_from_stack_file
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", PROJECT)
    run = run_program(ROOT, "dev", config, [f"{PROJECT}:gpuPools"])
    assert run.error is not None and "gpu-aks:gpuPools: is a secret" in str(run.error)
    assert run.resources == [] or {resource.type for resource in run.resources} == {"pulumi:pulumi:Stack"}
    assert not run.stack_outputs


def test_the_preview_refuses_a_pool_section_holding_a_secure_value(tmp_path, capsys):
    from tools.preview import main as preview_main
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    written = "      vmSize: Standard_NC4as_T4_v3\n"
    assert written in text
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(text.replace(written, written + "      nodeLabels:\n        team:\n"
                                       "          secure: v1:AAAAs3cretcipher\n", 1))
    assert preview_main(["dev", "--config-file", str(stack_file)]) == 2
    captured = capsys.readouterr()
    assert "gpu-aks:gpuPools: is a secret" in captured.err
    assert "AAAAs3cretcipher" not in captured.out + captured.err


# --- Limits the owners enforce ------------------------------------------------------------------------

def _nap_pool(**changes: Any) -> dict[str, Any]:
    return {**NAP_WHOLE_NUMBERS, "gpuNodePools": [{**NAP_WHOLE_NUMBERS["gpuNodePools"][0], **changes}]}


def test_the_nodepool_crd_s_label_count_is_the_preview_s():
    # Azure's NodePool CRD: `spec.template.metadata.labels` `maxProperties: 100`; gpu-aks adds its pool label.
    import yaml

    crd = yaml.safe_load((ROOT / "tests/fixtures/karpenter/karpenter.sh_nodepools.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    labels = schema["template"]["properties"]["metadata"]["properties"]["labels"]
    from gpu_aks_policies.limits import NODEPOOL_MAX_LABELS
    assert labels["maxProperties"] == NODEPOOL_MAX_LABELS
    parse_settings(_nap_pool(nodeLabels={f"l{i}": "x" for i in range(NODEPOOL_MAX_LABELS - 1)}), "unit", "eastus2",
                   today=TODAY, environ={})
    [problem] = problems_of(_nap_pool(nodeLabels={f"l{i}": "x" for i in range(NODEPOOL_MAX_LABELS)}))
    assert problem.startswith(f"{PROJECT}:gpuNodePools[h100].nodeLabels: has 100 labels;")
    assert "at most 100" in problem


@pytest.mark.parametrize("duration, taken", [
    ("2562047h", True), ("2562047h47m16s", True), ("153722867m", True), ("9223372036s", True),
    ("2562048h", False), ("2562047h47m17s", False), ("9223372037s", False), ("1" + "0" * 400 + "s", False),
    ("1h" * 2562047 + "1h", False),
])
def test_consolidate_after_is_a_duration_go_can_hold(duration, taken):
    # `time.ParseDuration` refuses past 1<<63-1 ns; the pattern `([0-9]+(s|m|h))+` alone took 10^400 s.
    raw = _nap_pool(consolidateAfter=duration)
    if taken:
        parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
        return
    [problem] = problems_of(raw)
    assert ".consolidateAfter: " in problem and "longer than a Go duration can be" in problem
    assert len(problem) < 400


def test_go_durations_are_read_as_go_reads_them():
    from gpu_aks_policies.limits import GO_MAX_DURATION_NS, go_duration_ns
    assert go_duration_ns("1h30m") == 5400 * 10**9
    assert go_duration_ns("2562047h47m16s854ms775us807ns") == GO_MAX_DURATION_NS
    for text in ("", "10", "h", "1h 2m", "-1h", "1.5h", "1d"):
        assert go_duration_ns(text) is None, text


@pytest.mark.parametrize("key", ["scale-down-unneeded-time", "new-pod-scale-up-delay", "max-node-provision-time"])
def test_an_autoscaler_duration_go_cannot_hold_is_refused(key):
    # The cluster autoscaler reads these with Go's duration flags.
    raw = {**GPU, "cluster": {"autoScalerProfile": {key: "153722868m"}}}
    [problem] = problems_of(raw)
    assert key in problem
    parse_settings({**GPU, "cluster": {"autoScalerProfile": {key: "153722867m"}}}, "unit", "eastus2",
                   today=TODAY, environ={})


# --- The pack: NodePools that select GPUs by other operators or keys -----------------------------------

def _requirement_pool(*requirements: dict[str, Any], taints: list[Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"requirements": list(requirements), "taints": taints or []}},
                     "limits": {"nvidia.com/gpu": "8"}}}


def _req(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": f"karpenter.azure.com/{key}" if "/" not in key else key, "operator": operator,
            **({"values": list(values)} if values else {})}


def _tainted_pool_messages(props: dict[str, Any]) -> list[str]:
    from gpu_aks_policies.pool_rules import check_gpu_node_pool
    from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS
    from gpu_aks_policies.rules import parse_rule_config
    config = parse_rule_config({})[TAINTED_GPU_POOLS]
    return [finding.message for finding in
            check_gpu_node_pool("kubernetes:karpenter.sh/v1:NodePool", props, config)]


@pytest.mark.parametrize("requirements", [
    [_req("sku-gpu-name", "In", "H100")],
    [_req("sku-gpu-name", "Exists")],
    [_req("sku-gpu-manufacturer", "In", "nvidia")],
    [_req("sku-gpu-manufacturer", "In", "nvidia", "amd")],
    [_req("sku-gpu-manufacturer", "Exists")],
    [_req("sku-gpu-count", "Gt", "0")],
    [_req("sku-gpu-count", "Gt", "4")],
    [_req("sku-gpu-count", "Lt", "2")],
    [_req("sku-gpu-count", "In", "8")],
    [_req("sku-gpu-name", "NotIn", "T4")],
    [_req("sku-family", "In", "N")],
    [_req("sku-name", "In", "Standard_NC40ads_H100_v5")],
    [_req("beta.kubernetes.io/instance-type", "In", "Standard_NC40ads_H100_v5")],
    [_req("sku-gpu-name", "In", "H100"), _req("sku-gpu-count", "Gt", "1")],
    [_req("kubernetes.io/arch", "In", "amd64")],
    [_req("sku-cpu", "Gt", "16")],
    [],
])
def test_a_nodepool_that_can_launch_gpu_nodes_is_judged(requirements):
    # Only `sku-gpu-name In [...]`, `sku-gpu-manufacturer In [nvidia]` alone and instance types were read:
    # `Exists`, `Gt`, a manufacturer list, a family or no requirement at all got no verdict.
    messages = _tainted_pool_messages(_requirement_pool(*requirements))
    assert messages and all(message.startswith("GPU node pool 'gpu' (") for message in messages), messages
    assert any("taint" in message for message in messages), messages


@pytest.mark.parametrize("requirements", [
    [_req("sku-family", "In", "D")],
    [_req("sku-gpu-count", "DoesNotExist")],
    [_req("sku-gpu-manufacturer", "NotIn", "nvidia")],
    [_req("sku-gpu-manufacturer", "DoesNotExist")],
    [_req("sku-gpu-count", "Lt", "1")],
    [_req("sku-gpu-count", "Gt", "16")],
    [_req("sku-gpu-name", "In", "H100"), _req("sku-gpu-name", "In", "T4")],
    [_req("sku-gpu-count", "Gt", "not-a-number")],
    [_req("node.kubernetes.io/instance-type", "In", "Standard_D8ds_v5")],
    [_req("sku-name", "NotIn", "x"), _req("kubernetes.io/os", "In", "windows")],
])
def test_a_nodepool_that_cannot_launch_gpu_nodes_gets_no_gpu_verdict(requirements):
    assert _tainted_pool_messages(_requirement_pool(*requirements)) == []


def test_a_tainted_nodepool_selected_by_gt_passes():
    taint = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}  # the rule's default taint
    assert _tainted_pool_messages(_requirement_pool(_req("sku-gpu-count", "Gt", "0"), taints=[taint])) == []


# --- Memory: a large but legal --previous-outputs --------------------------------------------------------

def _dev_outputs() -> dict[str, Any]:
    import json

    from tools.preview import run_stack_program
    return json.loads(json.dumps(run_stack_program("dev").stack_outputs))


def test_only_the_records_the_program_reads_reach_the_sdk(tmp_path, monkeypatch):
    # Every output went into the StackReference the program reads its records from: the SDK turned each
    # JSON value into futures (about 23 kB each), so a legal 1 MB gpuPools contract took gigabytes.
    import json

    from tools import preview
    outputs = _dev_outputs()
    outputs["gpuPools"]["gput4"]["extra"] = [{"k": index} for index in range(20_000)]
    path = tmp_path / "previous.json"
    path.write_text(json.dumps(outputs))
    handed: list[dict[str, Any]] = []
    real = preview.PlatformMocks

    def recording(*args: Any, **kwargs: Any) -> Any:
        handed.extend(kwargs.get("stack_references", {}).values())
        return real(*args, **kwargs)

    monkeypatch.setattr(preview, "PlatformMocks", recording)
    preview.run_stack_program("dev", previous_outputs=preview.load_previous_outputs(path))
    [values] = handed
    assert set(values) == set(preview.RECORDED_OUTPUTS)
    assert len(json.dumps(values)) < 4_000


def test_a_record_with_more_values_than_gpu_aks_writes_is_refused(tmp_path):
    import json

    from tools import preview
    outputs = _dev_outputs()
    outputs["clusterIdentity"]["gpuPools"]["gput4"]["extra"] = list(range(preview.MAX_RECORD_VALUES))
    path = tmp_path / "previous.json"
    path.write_text(json.dumps(outputs))
    with pytest.raises(preview.PreviewInputError) as refused:
        preview.load_previous_outputs(path)
    assert "clusterIdentity holds more than 20000 values" in str(refused.value)
    # A hundred pools' record is read.
    outputs = _dev_outputs()
    pools = outputs["clusterIdentity"]["gpuPools"]
    pools.update({f"g{index}": {**pools["gput4"], "key": f"gpuPools[g{index}]"} for index in range(100)})
    path.write_text(json.dumps(outputs))
    assert preview.load_previous_outputs(path) is not None


def test_the_preview_s_memory_does_not_grow_with_outputs_it_does_not_read(tmp_path):
    # Bytes, not time: tracemalloc's peak with 20,000 unread values against none.
    import json
    import tracemalloc

    from tools import preview
    outputs = _dev_outputs()
    peaks = []
    for extra in (0, 20_000):
        outputs["gpuPools"]["gput4"]["extra"] = list(range(extra))
        previous = json.loads(json.dumps(outputs))
        tracemalloc.start(1)
        try:
            preview.run_stack_program("dev", previous_outputs=previous)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < peaks[0] * 1.5, peaks


# --- Numbers of hundreds of digits (found in this round) -----------------------------------------------

HUGE = "1" + "0" * 400


@pytest.mark.parametrize("manifest", [
    "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: s, namespace: ml}\n"
    f"spec:\n  driver:\n    gpu: {{name: nvidia.com/gpu, quantity: {HUGE}}}\n",
    "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: s, namespace: ml}\nspec:\n"
    "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n      resources: {limits: {nvidia.com/gpu: 1}}\n"
    f"    workerSpec:\n      tensorParallelSize: {HUGE}\n      pipelineParallelSize: 2\n",
])
def test_an_integer_of_hundreds_of_digits_is_no_traceback_in_the_checker(tmp_path, capsys, manifest):
    # `math.isfinite` of a 400-digit int raised OverflowError in the Spark and KServe adapters.
    from gpu_aks_policies import check
    path = tmp_path / "m.yaml"
    path.write_text(manifest)
    assert check.main([str(path)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_finite_numbers_are_one_check():
    from gpu_aks_policies.limits import is_finite_number, is_whole
    assert is_finite_number(10**400) and is_whole(10**400) and is_whole(3.0)
    for value in (True, float("nan"), float("inf"), "3", None):
        assert not is_finite_number(value) and not is_whole(value)
    assert is_finite_number(2.5) and not is_whole(2.5)
