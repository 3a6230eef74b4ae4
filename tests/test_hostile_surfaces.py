"""Hostile input on the surfaces 0.3 added: JSON manifests, the component provider, the production
stack keys, the preflight's `az` answers, the clock override, the generated CEL, and names that
flow into Prometheus rules, the dashboard and the generated docs.

Every input is generated here. The standard is the one of `test_hostile_input.py`: no hang, no
traceback, no superlinear growth (the work at 4n against n, `growth`), no secret printed, no
terminal or CI-log injection, nothing lost. Speed itself is measured by `benchmarks/`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from gpu_aks_policies import check
from gpu_aks_policies.documents import DocumentError, SourceIndex, load_json
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pulumi.runtime.proto import provider_pb2

from components import stack_config
from components.settings import SettingsError
from tests.conftest import ROOT
from tests.test_hostile_input import GROWTH_LIMIT, HANG_GUARD_S, assert_inert, growth
from tools import preflight


def gpu_pod(limit: Any = 1, **container: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", **container,
                                     "resources": {"limits": {"nvidia.com/gpu": limit}}}]}}


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def checked(tmp_path: Path, name: str, text: str, *options: str) -> tuple[int, str, str]:
    """The checker as a command over one file: (exit code, stdout, stderr)."""
    path = tmp_path / name
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "gpu_aks_policies.check", *options, str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    return result.returncode, result.stdout, result.stderr


# --- JSON manifests ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_json_finding_names_the_line_of_its_field(tmp_path, fmt):
    text = json.dumps(gpu_pod("1500m"), indent=2)
    code, out, err = checked(tmp_path, "pod.json", text, "--format", fmt)
    assert code == 1 and "Traceback" not in err
    expected = line_of(text, '"nvidia.com/gpu"')
    if fmt == "text":
        assert f"pod.json:{expected} (document 0) Pod/p [mandatory] gpu-limits-are-whole-numbers" in out
    elif fmt == "json":
        lines = {v["policy"]: v["line"] for v in json.loads(out)["violations"]}
        assert lines["gpu-limits-are-whole-numbers"] == expected
        assert lines["gpu-pods-tolerate-gpu-taint"] == line_of(text, '"spec"')
    else:
        results = json.loads(out)["runs"][0]["results"]
        regions = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results}
        assert regions["gpu-limits-are-whole-numbers"] == expected


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_duplicate_json_key_is_reported_with_both_lines(tmp_path, fmt):
    # The API server's strict field validation refuses it; json.loads silently keeps the last value.
    text = json.dumps(gpu_pod(1), indent=2).replace('"name": "c",', '"name": "c",\n      "name": "d",')
    code, out, err = checked(tmp_path, "dup.json", text, "--format", fmt)
    assert code == 2 and "Traceback" not in err
    first, second = line_of(text, '"name": "c"'), line_of(text, '"name": "d"')
    assert f"duplicate key 'name' (first at line {first})" in out
    if fmt == "json":
        errors = json.loads(out)["errors"]
        assert [e["line"] for e in errors] == [second]
        assert json.loads(out)["violations"], "the object is still checked"
    elif fmt == "text":
        assert f"dup.json:{second}: error: duplicate key" in out


@pytest.mark.slow
@pytest.mark.parametrize("number", ["1e5000", "-1e5000", "1" + "0" * 5001, "1" + "0" * 5001 + ".5", "NaN", "Infinity",
                                    "1" + "0" * 100_000])
def test_json_numbers_past_the_float_range_get_a_short_violation(tmp_path, number):
    text = json.dumps(gpu_pod(0), indent=2).replace('"nvidia.com/gpu": 0', f'"nvidia.com/gpu": {number}')
    code, out, err = checked(tmp_path, "big.json", text, "--format", "json")
    assert code == 1 and err == ""
    [finding] = [v for v in json.loads(out)["violations"] if v["policy"] == "gpu-limits-are-whole-numbers"]
    assert finding["line"] == line_of(text, '"nvidia.com/gpu"')
    assert len(finding["message"]) < 400 and " inf " not in finding["message"] and " nan " not in finding["message"]


def test_json_numbers_past_the_float_range_stay_their_text():
    document = load_json('{"a": 1e5000, "b": -1E+400, "c": NaN, "d": 1.5, "e": -Infinity, "f": 2}')
    assert document == {"a": "1e5000", "b": "-1E+400", "c": "NaN", "d": 1.5, "e": "-Infinity", "f": 2}


def test_a_duplicate_key_in_a_json_file_read_without_an_index_is_an_error():
    # Policy config, platform outputs, az answers: the first value would be lost without a word.
    with pytest.raises(DocumentError) as raised:
        load_json('{\n "a": 1,\n "b": {"x": 1,\n "x": 2}}')
    assert raised.value.line == 4 and "duplicate key 'x' (first at line 3)" in raised.value.message


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                         st.text(alphabet=st.sampled_from('ab{}[]":,\\\n\t é'), max_size=8))
json_keys = st.text(alphabet=st.sampled_from('ab{}[]":,\\ .é/'), min_size=1, max_size=6)
json_values = st.recursive(json_scalars, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(json_keys, children, max_size=4), max_leaves=30)


def _every_key_path(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = []
    if isinstance(value, dict):
        for key, child in value.items():
            paths.append((*path, key))
            paths.extend(_every_key_path(child, (*path, key)))
    elif isinstance(value, list):
        for number, child in enumerate(value):
            paths.extend(_every_key_path(child, (*path, number)))
    return paths


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(document=st.dictionaries(json_keys, json_values, min_size=1, max_size=5), indent=st.sampled_from([None, 0, 1, 3]))
def test_every_json_key_is_recorded_at_the_line_it_was_written(document, indent):
    # Strings full of braces, quotes, colons and escapes must not shift any object or key.
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    index = SourceIndex()
    loaded = load_json(text, index=index)
    assert loaded == document and not index.duplicates
    # Written out key by key: each key of an object on its own line, in order (indent), or all on line 1.
    expected_line = 1
    for path in _every_key_path(document):
        node = loaded
        for step in path[:-1]:
            node = node[step]
        entry = index.mappings[id(node)]
        line = entry[2 + list(node).index(path[-1])]
        if indent is None:
            assert line == 1
        else:
            assert line > expected_line or line == expected_line == 1
            expected_line = line


@pytest.mark.slow
def test_json_locating_and_duplicate_keys_take_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        keys = ",\n".join(f'"k{i % (n // 2)}": "{{[\\"{i}"' for i in range(n))  # every key twice, braces in strings
        text = '{"items": [' + ",".join(f"{{\n{keys}}}" for _ in range(8)) + "]}"
        return lambda: load_json(text, index=SourceIndex())
    assert growth(prepare, 4000) < GROWTH_LIMIT
    index = SourceIndex()
    load_json('{"a": [{"x": 1,\n"x": 2}]}', index=index)
    assert [(problem.line, problem.message[:24]) for problem in index.duplicates] == [(2, "duplicate key 'x' (first")]


def test_a_json_list_gets_the_lines_of_its_items(tmp_path):
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [gpu_pod(1), gpu_pod("500m")]}, indent=1)
    (tmp_path / "list.json").write_text(text)
    report = check.check_paths([str(tmp_path / "list.json")], check.load_config(None))
    whole = [v.line for v in report.violations if v.policy == "gpu-limits-are-whole-numbers"]
    assert whole == [line_of(text, '"nvidia.com/gpu": "500m"')]


# --- The preflight's `az` answers --------------------------------------------------------------

from tests.test_preflight import ROOMY, SKUS, restriction, sku  # noqa: E402
from tests.test_preflight import run as run_preflight  # noqa: E402
from tests.test_preflight import usage as usage_entry  # noqa: E402


def _with(document: list[dict[str, Any]], index: int, **changes: Any) -> list[dict[str, Any]]:
    changed = json.loads(json.dumps(document))
    changed[index].update(changes)
    return changed


A100 = 4  # the position of Standard_NC24ads_A100_v4 in SKUS, and of its family in ROOMY


@pytest.mark.parametrize("case, usage_doc, skus_doc, expected", [
    ("a negative count in use inflates the headroom", _with(ROOMY, A100, currentValue=-500), SKUS,
     "usage[4].currentValue: -500 is not a whole number from 0"),
    ("a negative limit", _with(ROOMY, A100, limit=-1), SKUS, "usage[4].limit: -1 is not a whole number"),
    ("an implausible integer", _with(ROOMY, A100, limit=10**30), SKUS, "usage[4].limit: a huge number"),
    ("digits Python cannot convert", _with(ROOMY, A100, limit="1" * 5000), SKUS, "usage[4].limit: \"1111"),
    ("NaN", _with(ROOMY, A100, limit=float("nan")), SKUS, "usage[4].limit: \"NaN\" is not a whole number"),
    ("true is no count (Python's bool is an int)", _with(ROOMY, A100, limit=True), SKUS,
     "usage[4].limit: true is not a whole number"),
    ("a vCPU count Python cannot convert", ROOMY, _with(SKUS, A100, capabilities=[{"name": "vCPUs", "value": "9" * 5000}]),
     "skus[4].capabilities[vCPUs]"),
    ("locationInfo a number", ROOMY, _with(SKUS, A100, locationInfo=5), "skus[4].locationInfo: expected a list"),
    ("locations a number", ROOMY, _with(SKUS, A100, locationInfo=None, locations=5), "skus[4].locations: expected a list"),
    ("capabilities a number", ROOMY, _with(SKUS, A100, capabilities=5), "skus[4].capabilities: expected a list"),
    ("zones a number", ROOMY, _with(SKUS, A100, locationInfo=[{"location": "eastus2", "zones": 7}]),
     "skus[4].locationInfo.zones: expected a list"),
    ("restrictions a number", ROOMY, _with(SKUS, A100, restrictions=5), "skus[4].restrictions: expected a list"),
    ("restrictionInfo a list", ROOMY, _with(SKUS, A100, restrictions=[{"type": "Zone", "restrictionInfo": [1]}]),
     "restrictionInfo: expected an object"),
    ("restricted zones a number", ROOMY,
     _with(SKUS, A100, restrictions=[{"type": "Zone", "restrictionInfo": {"zones": 5}}]), "zones: expected a list"),
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


# --- GPU_AKS_TODAY ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["garbage", "2026-13-45", "\x1b[2J\n::error::pwned", "9" * 100_000, "２０２６-１１-２２"])
def test_a_garbage_clock_override_is_one_short_escaped_problem(value):
    with pytest.raises(SettingsError) as raised:
        stack_config.today({stack_config.TODAY_VARIABLE: value})
    [problem] = raised.value.problems
    assert len(problem) < 200 and "\x1b" not in problem and "\n" not in problem
    assert problem.startswith("GPU_AKS_TODAY=") and problem.endswith("is not an ISO date like 2026-11-22")


@pytest.mark.slow
@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
def test_a_clock_outside_the_calendar_says_so(tmp_path, day):
    result = subprocess.run([sys.executable, "-m", "tools.preview", "prod"], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_GUARD_S, env={**os.environ, stack_config.TODAY_VARIABLE: day})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"supported on {day}: none (that day is outside the AKS release calendar)" in result.stderr


# --- Construct and GetSchema of the component provider ----------------------------------------

from tests.test_component_package import _error_details, plugin  # noqa: E402, F401 (a fixture)

SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d"  # the engine's wire form of a secret
SECRET_TEXT = "hunter2-do-not-print"
UNKNOWN_WIRE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
T4 = "Standard_NC4as_T4_v3"


def _secret(value: Any) -> dict[str, Any]:
    return {SECRET_SIGNATURE: "1b47061264138c4ac30d75fd1eb44270", "value": value}


@pytest.mark.slow
@pytest.mark.parametrize("inputs, path, reason", [
    ({"location": 5}, "location", ""),
    ({"location": None}, "location", "is not set"),
    ({"location": "eastus2", "gpuPools": "x"}, "gpuPools", "expected a list"),
    ({"location": "eastus2", "gpuPools": [5, None]}, "gpuPools[0]", "expected an object"),
    ({"location": UNKNOWN_WIRE}, "location", "must be plain values known when the program runs"),
    ({"location": "eastus2", "gpuPools": [{"name": "gpu", "vmSize": UNKNOWN_WIRE}]}, "gpuPools[gpu].vmSize", "known"),
    ({"location": "eastus2", "gpuPools": [{"name": "gpu", "vmSize": _secret(SECRET_TEXT)}]}, "gpuPools", "a secret"),
    ({"location": "eastus2", "cluster": {"tags": {"k": _secret(SECRET_TEXT + "\x1b[2J")}}}, "cluster", "a secret"),
    # AKS's limit is 100 pools a cluster: 10,000 once kept the provider registering past its deadline.
    ({"location": "eastus2", "gpuPools": [{"name": f"g{i}", "vmSize": T4} for i in range(10_000)]}, "gpuPools",
     "AKS allows at most 100 per cluster"),
    ({"location": "eastus2", "gpuPools": [{"name": "gpu", "vmSize": T4}] * 2}, "gpuPools[1].name",
     "pool names must be unique"),
    ({"location": "eastus2", "gpuPools": [{"name": "system", "vmSize": T4}]}, "gpuPools[0].name",
     "is already the name of systemPool"),
    ({"location": "eastus2", "gpuPools": [{"name": "\x1b[31m::error::x\nfoo", "vmSize": T4}]}, "gpuPools", "name"),
    ({"location": "eastus2", "gpuPoolz": []}, "gpuPoolz", ""),
    # A map key is part of the path the engine prints: no control character may reach it.
    ({"location": "eastus2", "gpuPools": [{"name": "gpu", "vmSize": T4, "nodeLabels": {"\x1b[2J\n::error::x": "v"}}]},
     "gpuPools[gpu].nodeLabels.\\x1b[2J\\n::error::x", "label key"),
])
def test_construct_refuses_hostile_inputs_by_path_without_printing_them(plugin, inputs, path, reason):  # noqa: F811
    with pytest.raises(grpc.RpcError) as caught:
        plugin.construct(inputs)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    details = _error_details(caught.value)
    shown = repr(details) + caught.value.details()
    assert any(where.startswith(path) and reason in why for where, why in details), details
    assert SECRET_TEXT not in shown and "\x1b" not in shown and "\n::" not in shown
    assert len(shown) < 4000
    assert plugin.monitor.recording.registered == [], "a refused input registers nothing"


@pytest.mark.slow
def test_get_schema_answers_version_0_and_refuses_others_by_name(plugin):  # noqa: F811
    schema = plugin.stub.GetSchema(provider_pb2.GetSchemaRequest(version=0), timeout=30).schema
    assert json.loads(schema)["name"] == "gpu-aks"
    for version in (1, -1, 2**31 - 1):  # the engine asks for 0; the SDK's server refuses the rest
        with pytest.raises(grpc.RpcError) as caught:
            plugin.stub.GetSchema(provider_pb2.GetSchemaRequest(version=version), timeout=30)
        assert f"unsupported schema version {version}" in caught.value.details()
        assert "Traceback" not in caught.value.details()


# --- The generated CEL against the Python rule -------------------------------------------------

from functools import lru_cache  # noqa: E402

from gpu_aks_policies.pod_rules import check_gpu_tolerations  # noqa: E402
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT  # noqa: E402
from gpu_aks_policies.rules import parse_rule_config  # noqa: E402
from gpu_aks_policies.workloads import context_of, pod_specs_of  # noqa: E402

from tests.test_admission_policy import CompiledPolicy, pod_as_admitted  # noqa: E402

GPU_TAINT_CHOICES = ("sku=gpu:NoSchedule", "nvidia.com/gpu:NoSchedule", "team=ml-1:NoExecute", "a.b/c=d_e.f:NoSchedule")
GPU_RESOURCE_CHOICES = ("nvidia.com/gpu", "nvidia.com/mig-*", "nvidia.com/mig-?g.*", "amd.com/gpu", "example.com/g[pP]u",
                        "example.com/[!x]pu")
RESOURCE_NAMES = ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-12g.x", "amd.com/gpu", "example.com/gPu",
                  "example.com/xpu", "example.com/gpu", "cpu", "memory", "nvidia.com/gpux")
TOLERATION_KEYS = ("", "sku", "nvidia.com/gpu", "team", "a.b/c", "other")
TOLERATION_VALUES = ("", "gpu", "ml-1", "d_e.f", "cpu")


@lru_cache(maxsize=64)
def _compiled(taints: tuple[str, ...], resources: tuple[str, ...]) -> tuple[Any, CompiledPolicy]:
    from gpu_aks_policies.admission_policy import validating_admission_policy
    config = parse_rule_config({TOLERATE_GPU_TAINT: {"gpuTaints": list(taints),
                                                     "gpuResources": list(resources)}})[TOLERATE_GPU_TAINT]
    return config, CompiledPolicy(validating_admission_policy(config))


tolerations = st.lists(st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(TOLERATION_KEYS), "operator": st.sampled_from(("Exists", "Equal", "")),
    "value": st.sampled_from(TOLERATION_VALUES), "effect": st.sampled_from(("", "NoSchedule", "NoExecute", "PreferNoSchedule")),
}), max_size=3)
amounts = st.sampled_from((0, 1, 2, "1", "0", "2000m", "0m", 1.0))
containers = st.lists(st.builds(lambda limits, role: (role, {"name": "c", "image": "i", "resources": {"limits": limits}}),
                                st.dictionaries(st.sampled_from(RESOURCE_NAMES), amounts, max_size=3),
                                st.sampled_from(("containers", "initContainers"))), min_size=1, max_size=3)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(taints=st.lists(st.sampled_from(GPU_TAINT_CHOICES), min_size=1, max_size=2, unique=True),
       resources=st.lists(st.sampled_from(GPU_RESOURCE_CHOICES), min_size=1, max_size=3, unique=True),
       pod_tolerations=tolerations, pod_containers=containers)
def test_the_generated_cel_and_the_python_rule_agree_on_generated_pods(taints, resources, pod_tolerations, pod_containers):
    config, policy = _compiled(tuple(taints), tuple(resources))
    spec: dict[str, Any] = {"containers": [], "tolerations": pod_tolerations}
    for number, (role, container) in enumerate(pod_containers):
        spec.setdefault(role, []).append({**container, "name": f"c{number}"})
    if not spec["containers"]:
        spec["containers"].append({"name": "main", "image": "i"})
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"}, "spec": spec}
    context = context_of([obj])
    [pod] = pod_specs_of(obj, context)
    admitted_pod = pod_as_admitted(pod, context, config)
    assume(admitted_pod is not None)  # else the API server refuses it before validating admission runs
    python_admits = not [f for f in check_gpu_tolerations([pod], config, context) if f.decided]
    assert policy.admits(admitted_pod) == python_admits, (admitted_pod, python_admits)


# --- Names and settings that flow into PromQL, the dashboard and the docs ----------------------

from components.observability import exporter_pools, platform_alert_rules  # noqa: E402
from components.platform_settings import parse_settings  # noqa: E402
from components.pools import platform_pools  # noqa: E402
from observability.dashboard import grafana_dashboard  # noqa: E402
from tests.conftest import TODAY  # noqa: E402

PROMQL_BREAKERS = ('a"} or vector(1) #', "x'\n::error::pwned", "\x1b[2J|`md`|", "a\\\"b", "[x](javascript:y)")


def _observed(pools: list[dict[str, Any]], namespace: str = "gpu-resources", **alerts: Any) -> Any:
    raw = {"gpuPools": pools, "devicePlugin": {"namespace": namespace},
           "observability": {"enabled": True, "alerts": {"emails": ["oncall@example.com"], **alerts}}}
    return parse_settings(raw, "dev", "eastus2", today=TODAY)


@pytest.mark.parametrize("breaker", PROMQL_BREAKERS)
@pytest.mark.parametrize("where", ["pool name", "namespace", "label value", "label key", "email", "action group"])
def test_values_that_would_break_promql_or_markdown_are_refused_escaped(breaker, where):
    pool = {"name": "gput4", "vmSize": T4, "maxCount": 1}
    namespace, alerts = "gpu-resources", {}
    if where == "pool name":
        pool["name"] = breaker
    elif where == "namespace":
        namespace = breaker
    elif where == "label value":
        pool["nodeLabels"] = {"team": breaker}
    elif where == "label key":
        pool["nodeLabels"] = {breaker: "x"}
    elif where == "email":
        alerts = {"emails": [breaker]}
    else:
        alerts = {"emails": [], "actionGroupResourceId": breaker}
    with pytest.raises(SettingsError) as raised:
        _observed([pool], namespace, **alerts)
    for problem in raised.value.problems:
        assert "\x1b" not in problem and "\n" not in problem and len(problem) < 400, problem


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.from_regex(r"[a-z][a-z0-9]{0,11}", fullmatch=True), min_size=1, max_size=4, unique=True),
       namespace=st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True))
def test_every_valid_pool_name_and_namespace_stays_inside_its_promql_string(names, namespace):
    assume("system" not in names and namespace not in ("default",))
    try:
        platform = _observed([{"name": name, "vmSize": T4, "maxCount": 1} for name in names], namespace)
    except SettingsError:
        assume(False)  # a name the settings refuse for another reason (reserved words)
    expressions = [rule.expr for rule in platform_alert_rules(platform)]
    board = grafana_dashboard(list(exporter_pools(platform_pools(platform), platform.observability)),
                              platform.observability.alerts)
    queries = _dashboard_queries(board)
    expressions += queries
    for expr in expressions:
        # Balanced braces and an even number of quotes: no value ends its string or selector early.
        assert expr.count("{") == expr.count("}") and expr.count('"') % 2 == 0, expr
    for name in names:  # each pool is selected by its exact name on the dashboard
        assert any(f'pool="{name}"' in expr for expr in queries), name


def _dashboard_queries(board: Any) -> list[str]:
    """Every PromQL expression of a dashboard (its panels' targets)."""
    found, pending = [], [board]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            found += [value for key, value in node.items() if key == "expr" and isinstance(value, str)]
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return found


# --- Hostile Retail Prices API answers (`tools.prices --from`) ---------------------------------


def _price_item(**changes: Any) -> dict[str, Any]:
    return {"currencyCode": "USD", "retailPrice": 0.526, "unitOfMeasure": "1 Hour", "armRegionName": "eastus2",
            "armSkuName": T4, "skuName": "NC4as T4 v3", "productName": "Virtual Machines NCasT4_v3 Series",
            "meterName": "NC4as T4 v3", "serviceName": "Virtual Machines", "type": "Consumption",
            "effectiveStartDate": "2024-01-01T00:00:00Z", **changes}


@pytest.mark.slow
@pytest.mark.parametrize("changes", [
    {"armSkuName": "A" * 2_000_000, "unitOfMeasure": "1 Day"},  # megabytes in one field were echoed whole
    {"armRegionName": ["x"] * 100_000},
    {"armSkuName": "\x1b[2J\n::error::pwned", "unitOfMeasure": "\x1b]0;title\x07"},  # a newline split the line
    {"retailPrice": "NaN"},
])
def test_a_hostile_price_answer_is_one_short_escaped_line(tmp_path, changes):
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"BillingCurrency": "USD", "Items": [_price_item(**changes)], "NextPageLink": None}))
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
    answer.write_text(json.dumps({"BillingCurrency": "USD", "Items": [_price_item(**changes)], "NextPageLink": None}))
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
    rows = [_price_item(retailPrice=price, skuName=name) for price in (0.5, 0.9, 0.7)
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
        items = [_price_item(armSkuName=f"Standard_X{i}", retailPrice=0.5 + i % 7) for i in range(n)]
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
    good.write_text(json.dumps({"BillingCurrency": "USD", "Items": [_price_item()], "NextPageLink": None}))
    result = subprocess.run([sys.executable, "-m", "tools.prices", "--from", str(good), "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: --out {tmp_path}: cannot write the table: Is a directory")


# --- Stack files with the production keys: every problem at once, each with its file and line ----


def _production_stack_attacked() -> str:
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    for old, new in [
        ("        - 203.0.113.0/24\n        - 198.51.100.0/24",
         '        - 0.0.0.0/0\n        - ::/0\n        - 10.0.0.0/33\n        - "\\e[2J\\n::error::x"'),
        ("durationHours: 8", "durationHours: 25"), ("durationHours: 6", "durationHours: 0"),
        ('startTime: "22:00"\n      durationHours: 25', 'startTime: "25:00"\n      durationHours: 25'),
        ('utcOffset: "+00:00"\n      intervalWeeks', 'utcOffset: "+99:00"\n      intervalWeeks'),
        ("      - objectId: 00000000-0000-0000-0000-00000000a002\n        principalType: User",
         '      - objectId: "not-a-guid\\e]0;x\\a"\n        principalType: User\n'
         "      - objectId: 00000000-0000-0000-0000-00000000a001\n        principalType: Group"),
        ("    - name: a100mig\n      vmSize: Standard_NC24ads_A100_v4\n",
         "    - name: a100mig\n      vmSize: Standard_NC24ads_A100_v4\n      vnetSubnetID: \"/sub\\e[2J\\n::add-mask::x\"\n"),
    ]:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


@pytest.mark.slow
def test_hostile_production_keys_are_every_problem_at_once_with_file_and_line(tmp_path):
    text = _production_stack_attacked()
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    result = subprocess.run([sys.executable, "-m", "tools.preview", "prod", "--config-file", str(stack_file)],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert_inert(result.stderr)
    problems = result.stderr.splitlines()[1:]
    expected = {  # key -> the text on its line (a list's plain items their own: test_hostile_round4.py)
        "cluster.apiServerAccessProfile.authorizedIPRanges[0]": "- 0.0.0.0/0",
        "cluster.apiServerAccessProfile.authorizedIPRanges[1]": "- ::/0",
        "cluster.apiServerAccessProfile.authorizedIPRanges[2]": "- 10.0.0.0/33",
        "cluster.apiServerAccessProfile.authorizedIPRanges[3]": '- "\\e[2J',
        "access.clusterAdmins[1].objectId": "not-a-guid", "access.clusterAdmins[2]": "a001\n        principalType: G",
        "maintenance.autoUpgrade.startTime": '"25:00"', "maintenance.autoUpgrade.durationHours": "durationHours: 25",
        "maintenance.autoUpgrade.utcOffset": '"+99:00"', "maintenance.nodeOSUpgrade.durationHours": "durationHours: 0",
        "gpuPools[a100mig].vnetSubnetID": "vnetSubnetID:",
    }
    assert len(problems) == len(expected), problems
    for key, written in expected.items():
        [problem] = [p for p in problems if f": gpu-aks:{key}: " in p]
        needle = text.index(written) if "clusterAdmins[2]" not in key else text.rindex("- objectId: 00000000")
        assert problem.startswith(f"  - {stack_file}:{text[:needle].count(chr(10)) + 1}: "), (problem, written)
        assert len(problem) < 400


def test_ten_thousand_ranges_are_one_problem_on_the_line_of_the_key(tmp_path):
    from tools.stacks import settings_from_stack_file
    text = (ROOT / "Pulumi.prod.yaml").read_text().replace(
        "        - 203.0.113.0/24\n", "".join(f"        - 10.{i // 256}.{i % 256}.0/24\n" for i in range(10_000)))
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    with pytest.raises(SettingsError) as raised:
        settings_from_stack_file(stack_file, "prod", environ={})
    [problem] = raised.value.problems
    assert problem.startswith(f"{stack_file}:{line_of(text, 'authorizedIPRanges:')}: gpu-aks:cluster.apiServer")
    assert "has 10001 ranges; AKS allows at most 200" in problem


@pytest.mark.slow
@pytest.mark.parametrize("command, expected", [
    (["tools.preview", "prod", "--config-file", "{tmp}"], "error: --config-file {tmp}: not a regular file"),
    (["tools.preview", "x\n::error::y\x1b[2J"], "there is no Pulumi.x\\n::error::y\\x1b[2J.yaml"),
    (["tools.observability", "--out", "{tmp}/file", "prod"], "error: cannot write {tmp}/file/prod/"),
    (["tools.observability", "--out", "{tmp}", "x\n::error::y"], "error: 'x\\n::error::y' is not a stack name"),
    (["gpu_aks_policies.explain", "--platform", "{tmp}/x\n::error::y.json", "{tmp}/file"],
     "error: {tmp}/x\\n::error::y.json: expected the platform stack's outputs"),
])
def test_names_and_folders_a_tool_is_given_are_one_line_input_errors(tmp_path, command, expected):
    (tmp_path / "file").write_text("{}")
    (tmp_path / "x\n::error::y.json").write_text('{"Items": 5}')
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command]
    result = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(expected.replace("{tmp}", str(tmp_path))) or expected.replace("{tmp}", str(tmp_path)) in line
    assert_inert(result.stderr)


@pytest.mark.slow
def test_the_preview_s_json_shows_no_workflow_command_and_reads_back_the_same(tmp_path):
    # A tag value is free text: printed raw, `##[error]` in it was a workflow command in the CI log.
    text = (ROOT / "Pulumi.prod.yaml").read_text().replace("owner: platform-team", 'owner: "##[error]forged"')
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    result = subprocess.run([sys.executable, "-m", "tools.preview", "prod", "--json", "--config-file", str(stack_file)],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 0 and "##[" not in result.stdout
    [cluster] = [r for r in json.loads(result.stdout)["resources"] if r["type"].endswith(":ManagedCluster")]
    assert cluster["inputs"]["tags"]["owner"] == "##[error]forged"


# --- Every key of the stack config, given hostile values ------------------------------------------

from gpu_aks_policies.declarations import Key, ListOf, Section  # noqa: E402

from components.platform_settings import DOCUMENT  # noqa: E402

HOSTILE_VALUES = ("a\x1b[2J\r\n::error::pwned ##[error]x\u202e", 10**4000, float("nan"), float("inf"),
                  ["\x1b[2J"] * 1000, {"\x1b]0;t\x07": "##[error]"}, -1, True)
#: A valid item for each list of pools, for the keys inside one.
LIST_ITEMS = {"gpuPools": {"name": "gput4", "vmSize": T4}, "cpuPools": {"name": "cpu", "minCount": 1, "maxCount": 1},
              "gpuNodePools": {"name": "h100", "gpus": ["H100"], "limits": {"gpu": 8}}}


def _key_paths(section: Section, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every declared key, as a path of names (and 0 for a list's first item)."""
    paths: list[tuple[Any, ...]] = []
    for item in section.items:
        if isinstance(item, Key):
            paths.append((*prefix, item.name))
        elif isinstance(item, Section):
            paths += _key_paths(item, (*prefix, item.name))
        elif isinstance(item, ListOf):
            paths += _key_paths(item.item, (*prefix, item.name, 0))
    return paths


def _raw_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    from tests.test_nap_settings import NAP
    raw = json.loads(json.dumps(NAP))  # NAP on: every pool kind's keys are read
    node: Any = raw
    for position, step in enumerate(path[:-1]):
        if step == 0:
            if not node:
                node.append(json.loads(json.dumps(LIST_ITEMS[path[position - 1]])))
            node = node[0]
        else:
            if not isinstance(node.get(step), (dict, list)):
                node[step] = [] if path[position + 1] == 0 else {}
            node = node[step]
    node[path[-1]] = value
    return raw


@pytest.mark.slow
def test_every_key_given_hostile_values_gives_short_escaped_problems_and_no_crash():
    # 10**4000 in spotMaxPrice ended the parse in an OverflowError; `##[` in a value reached the
    # Pulumi CLI's output (the program's RunError) as a workflow command; a colon in a map key
    # took the key for a namespace.
    paths = _key_paths(DOCUMENT.root)
    assert len(paths) > 150, "the walk reaches every section"
    for path in paths:
        for value in HOSTILE_VALUES:
            try:
                texts = list(parse_settings(_raw_with(path, value), "dev", "eastus2", today=TODAY, environ={}).warnings)
            except SettingsError as error:
                texts = error.problems
            for text in texts:
                assert_inert(text)
                assert "\n" not in text and len(text) < 1500 and text.startswith(("gpu-aks:", "azure-native:")), \
                    (path, text)


def test_a_megabyte_map_key_is_named_short():
    [problem] = problems_of_raw({"cluster": {"autoScalerProfile": {"k" * 1_000_000: "1"}}})
    assert problem.startswith("gpu-aks:cluster.autoScalerProfile.kkkk") and "(1000034 characters)" in problem
    assert len(problem) < 2000


def problems_of_raw(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SettingsError) as raised:
        parse_settings(raw, "dev", "eastus2", today=TODAY, environ={})
    return raised.value.problems


@pytest.mark.slow
@pytest.mark.parametrize("command", [["tools.preflight", "prod"], ["tools.observability", "--out", "{tmp}", "prod"],
                                     ["tools.preview", "nap", "--json"]])
def test_every_tool_that_reads_a_stack_says_a_garbage_clock_in_one_escaped_line(tmp_path, command):
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command]
    result = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S,
                            env={**os.environ, stack_config.TODAY_VARIABLE: "2026\x1b[2J\n::error::x##[error]y"})
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert_inert(result.stderr)
    assert "GPU_AKS_TODAY='2026\\x1b[2J\\n::error::x##\\x5berror]y' is not an ISO date like 2026-11-22" in result.stderr
