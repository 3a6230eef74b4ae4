"""A third hostile round, from the outside, against what 0.3.1 added: the component provider over gRPC,
the replacement record, JSON manifests, the generated admission CEL against the Python rule, and the
names that flow into messages the Pulumi engine prints as they are.

Every input is generated. The standard is `test_hostile_input.py`'s: no hang, no traceback, no
superlinear growth (sizes at 4n against n), no secret printed, no terminal or CI-log injection
(`::` at a line start, `##[` anywhere: actions/runner `ActionCommand.cs`), nothing lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from gpu_aks_policies import check
from gpu_aks_policies.pod_rules import check_gpu_tolerations
from gpu_aks_policies.quantities import QuantityError, parse_quantity
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT
from gpu_aks_policies.workloads import context_of, pod_specs_of
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pulumi.runtime.proto import provider_pb2

from components.access import deployer_change_warning
from components.platform_settings import parse_settings
from components.replacements import identity_changes
from components.settings import PROJECT, SettingsError
from tests.conftest import ROOT, TODAY
from tests.helpers import findings
from tests.test_admission_policy import pod_as_admitted
from tests.test_component_package import TOKEN, _error_details, plugin  # noqa: F401 (a fixture)
from tests.test_hostile_input import HANG_GUARD_S
from tests.test_hostile_surfaces import (
    GPU_RESOURCE_CHOICES,
    GPU_TAINT_CHOICES,
    RESOURCE_NAMES,
    SECRET_SIGNATURE,
    SECRET_TEXT,
    T4,
    TOLERATION_KEYS,
    TOLERATION_VALUES,
    UNKNOWN_WIRE,
    _compiled,
    _secret,
)

#: What a terminal or the Actions runner would act on in a line the engine prints.
INJECTIONS = ("\x1b", "\x07", "\r", "\n", "\u202e", "##[")
HOSTILE_KEY = "\x1b[31m\u202e\r::add-mask::x\n##[error]pwned"


def assert_inert(text: str) -> None:
    for bad in INJECTIONS:
        assert bad not in text, (bad, text[:300])


# --- The component provider over gRPC --------------------------------------------------------------


def _refused(plugin: Any, inputs: dict[str, Any]) -> tuple[list[tuple[str, str]], str]:  # noqa: F811
    with pytest.raises(grpc.RpcError) as caught:
        plugin.construct(inputs)
    # RESOURCE_EXHAUSTED here was the client refusing a trailer past 16 KiB: every detail lost.
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert plugin.monitor.recording.registered == [], "a refused input registers nothing"
    return _error_details(caught.value), caught.value.details()


@pytest.mark.slow
@pytest.mark.parametrize("inputs, path", [
    # Keys reach the property path as written: an unknown, a secret or a too-deep value under one.
    ({"location": "eastus2", "cluster": {"tags": {HOSTILE_KEY: UNKNOWN_WIRE}}}, "cluster.tags."),
    ({"location": "eastus2", "cluster": {"tags": {HOSTILE_KEY: _secret(SECRET_TEXT)}}}, "cluster"),
    ({"location": "eastus2", "gpuPools": [{"name": "gpu", "vmSize": T4, "nodeLabels": {HOSTILE_KEY: "v"}}]},
     "gpuPools[gpu].nodeLabels."),
    ({"location": "eastus2", HOSTILE_KEY: 1}, "\\x1b"),
    ({"location": HOSTILE_KEY}, "location"),
])
def test_construct_sends_the_engine_no_control_or_workflow_command(plugin, inputs, path):  # noqa: F811
    details, message = _refused(plugin, inputs)
    assert any(where.startswith(path) for where, _ in details), details
    for where, why in details:
        assert_inert(where + why)
    assert SECRET_TEXT not in repr(details) + message


@pytest.mark.parametrize("inputs, path", [
    ({"location": "eastus2", "cluster": {"tags": {"k" * 100_000: UNKNOWN_WIRE}}}, "cluster.tags.kkk"),
    ({"location": "eastus2", "k" * 100_000: 1}, "kkk"),
    ({"location": "e" * 1_000_000}, "location"),
])
def test_a_megabyte_key_or_value_is_reported_cut_not_lost(plugin, inputs, path):  # noqa: F811
    details, _ = _refused(plugin, inputs)
    assert any(where.startswith(path) for where, _ in details), details
    assert all(len(where) < 400 and len(why) < 2500 for where, why in details)
    assert "characters" in repr(details), "a cut value says how long it was"


@pytest.mark.slow
def test_thousands_of_problems_stay_within_one_trailer_and_count_the_rest(plugin):  # noqa: F811
    def size(n: int) -> tuple[int, list[tuple[str, str]]]:
        details, message = _refused(plugin, {"location": "eastus2", **{f"gpuPool{i}": 1 for i in range(n)}})
        assert f"GpuCluster has {n} input problem(s)" in message
        return sum(len(where) + len(why) for where, why in details), details
    small, _ = size(2_500)
    large, details = size(10_000)
    assert large <= small + 200 and large < 8000, "n vs 4n: the report does not grow"
    assert details[-1][0] == "(inputs)" and "more problem(s) not listed" in details[-1][1]
    assert all(why.startswith("unknown config key") for _, why in details[:-1])


@pytest.mark.slow
@pytest.mark.parametrize("inputs", [
    {"location": "eastus2", "gpuPools": [{"name": f"g{i}", "vmSize": T4} for i in range(100_000)]},
    {"location": "eastus2", "cluster": {"tags": {"k": json.loads("[" * 40 + "]" * 40)}}},
])
def test_an_input_too_large_to_read_is_one_problem_without_knock_ons(plugin, inputs):  # noqa: F811
    # The walk stopped early and everything after it read as absent: `location is not set` was false.
    details, _ = _refused(plugin, inputs)
    [(where, why)] = details
    assert why.startswith("is larger or deeper than gpu-aks accepts") and where in ("gpuPools", "cluster")


@pytest.mark.slow
@pytest.mark.parametrize("count, refused", [(1.0, None), (-0.0, None), (1.5, "not a whole number"),
                                            (1e308, "above the AKS limit"), (float("nan"), "NaN is not a whole"),
                                            (float("inf"), "Infinity is not a whole"), (True, "true is not a whole")])
def test_numbers_cross_the_wire_as_floats_and_only_whole_ones_pass(plugin, count, refused):  # noqa: F811
    inputs = {"location": "eastus2", "gpuPools": [{"name": "gpu", "vmSize": T4, "minCount": count}]}
    if refused is None:
        plugin.construct(inputs)
        assert plugin.monitor.recording.registered
    else:
        details, _ = _refused(plugin, inputs)
        assert [(where, refused in why) for where, why in details] == [("gpuPools[gpu].minCount", True)], details


@pytest.mark.parametrize("pools, expected", [
    ([{"name": "gpu", "vmSize": T4}, {"name": "GPU", "vmSize": T4}], ("gpuPools[1].name", "is not a name AKS accepts")),
    ([{"name": "gpu", "vmSize": T4}] * 2, ("gpuPools[1].name", "pool names must be unique")),
    ([{"name": "system", "vmSize": T4}], ("gpuPools[0].name", "already the name of systemPool")),
    ([{"name": UNKNOWN_WIRE, "vmSize": T4}] * 2, ("gpuPools[0].name", "must be plain values known")),
])
def test_colliding_pool_names_are_refused_by_path(plugin, pools, expected):  # noqa: F811
    details, _ = _refused(plugin, {"location": "eastus2", "gpuPools": pools})
    assert any(where == expected[0] and expected[1] in why for where, why in details), details


def test_a_gpu_and_a_cpu_pool_of_one_name_collide(plugin):  # noqa: F811
    details, _ = _refused(plugin, {"location": "eastus2", "gpuPools": [{"name": "pool1", "vmSize": T4}],
                                   "cpuPools": [{"name": "pool1", "vmSize": "Standard_D4s_v5"}]})
    assert details == [("gpuPools[0].name", "'pool1' is already the name of cpuPools[0]; pool names must be unique")]


def _construct_as(plugin: Any, type_token: str, name: str) -> grpc.RpcError:  # noqa: F811
    struct = struct_pb2.Struct()
    struct.update({"location": "eastus2"})
    request = provider_pb2.ConstructRequest(
        project=PROJECT, stack="dev", dryRun=True, monitorEndpoint=plugin.monitor_address, type=type_token, name=name,
        parent=f"urn:pulumi:dev::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-dev", inputs=struct)
    plugin.monitor.reset("dev")
    with pytest.raises(grpc.RpcError) as caught:
        plugin.stub.Construct(request, timeout=60)
    return caught.value


@pytest.mark.parametrize("type_token, name, expected", [
    (f"{PROJECT}:index:Nope", "gc0", f"'{PROJECT}:index:Nope' is not a component of {PROJECT}"),
    (f"{PROJECT}:index:{HOSTILE_KEY}", "gc0", "is not a component"),
    ("x" * 1_000_000, "gc0", "(1000000 characters)' is not a component"),
    ("", "gc0", "'' is not a component"),
    (f"{PROJECT}:index:GpuCluster:extra", "gc0", "is not a component"),
    (TOKEN, HOSTILE_KEY, "of a GpuCluster must be 1 to 1000 printable characters"),
    (TOKEN, "n" * 1_000_000, "(1000000 characters)' of a GpuCluster"),
    (TOKEN, "", "the name '' of a GpuCluster"),
])
def test_a_wrong_type_token_or_name_is_bad_input_without_a_traceback(plugin, type_token, name, expected):  # noqa: F811
    # The SDK answered UNKNOWN with "Unexpected <class 'Exception'>", a Python traceback and the token raw.
    error = _construct_as(plugin, type_token, name)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert expected in error.details() and "Traceback" not in error.details() and "File \"" not in error.details()
    assert_inert(error.details())
    assert len(error.details()) < 400
    assert plugin.monitor.recording.registered == []


def test_get_schema_ignores_hostile_subpackage_fields(plugin):  # noqa: F811
    for text in ("", HOSTILE_KEY, "x" * 100_000):
        request = provider_pb2.GetSchemaRequest(version=0, subpackage_name=text, subpackage_version=text)
        assert json.loads(plugin.stub.GetSchema(request, timeout=30).schema)["name"] == PROJECT


# --- Stack config problems and recorded values, as the engine prints them -------------------------


@pytest.mark.parametrize("where", ["label key", "unknown key", "tag key"])
def test_a_settings_problem_never_carries_a_workflow_command(where):
    pool: dict[str, Any] = {"name": "gput4", "vmSize": T4, "maxCount": 1}
    raw: dict[str, Any] = {"gpuPools": [pool]}
    if where == "label key":
        pool["nodeLabels"] = {"##[error]x": "v"}
    elif where == "unknown key":
        pool["##[error]x" + "y" * 100_000] = 1
    else:
        raw["cluster"] = {"tags": {"##[error]x": 5}}
    with pytest.raises(SettingsError) as raised:
        parse_settings(raw, "dev", "eastus2", today=TODAY)
    for problem in raised.value.problems:
        assert_inert(str(problem))
        assert len(str(problem)) < 5000


def test_a_recorded_value_shown_in_a_warning_carries_no_workflow_command():
    from tests.test_replacements import DEV, _with
    previous = _with(_with(DEV, "cluster.resourceName", "##[error]old"), "gpuPools.gput4.azureName", "##[warning]x")
    previous["gpuPools"]["##[add-mask]y"] = {"kind": "agentPool", "azureName": "##[error]z", "createOnly": {}}
    changes = identity_changes(previous, DEV)
    assert changes.refused and changes.warnings
    for message in changes.refused + changes.warnings:
        assert_inert(message)


# --- JSON manifests ---------------------------------------------------------------------------------


def _many_gpu_containers(tmp_path: Path, n: int) -> list[Any]:
    path = tmp_path / f"pod{n}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": f"c{i}", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}} for i in range(n)]}}))
    return check.check_paths([str(path)], check.load_config(None)).violations


def test_a_pod_of_thousands_of_gpu_containers_gets_a_bounded_finding(tmp_path):
    # The toleration finding named every container: 4.4 MB of message for 100,000 of them.
    small = {v.policy: len(v.message) for v in _many_gpu_containers(tmp_path, 500)}
    large = {v.policy: len(v.message) for v in _many_gpu_containers(tmp_path, 2_000)}
    assert large[TOLERATE_GPU_TAINT] <= small[TOLERATE_GPU_TAINT] + 10 < 3000, (small, large)
    [message] = [v.message for v in _many_gpu_containers(tmp_path, 7) if v.policy == TOLERATE_GPU_TAINT]
    assert "container 'c4' asks for nvidia.com/gpu and 2 more" in message


@pytest.mark.parametrize("text, amount", [(" 1", 1), ("1\n", 1), ("\u00a01", 1), ("\u30001", 1), ("\x1c1", None),
                                          ("1\x1f", None), ("+1", 1), ("1e0", 1), ("1000m", 1), (".5", 0.5)])
def test_quantities_are_trimmed_as_the_api_server_trims_them(text, amount):
    # apimachinery's UnmarshalJSON trims with Go's strings.TrimSpace, which keeps U+001C-U+001F;
    # Python's str.strip() removed them, so the checker accepted what the API server refuses.
    if amount is None:
        with pytest.raises(QuantityError):
            parse_quantity(text)
    else:
        assert parse_quantity(text) == amount


# --- The generated CEL against the Python rule, on wider pods --------------------------------------

AMOUNTS = (0, 1, 2, 1.0, 3.0, "1", "0", "2000m", "0m", "1000m", "1e0", "1E0", "0.5", "+1", " 1", "1 ", "+0", "-0",
           "0.0", "0e5", ".0", "1.", None)
_tolerations = st.lists(st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(TOLERATION_KEYS), "operator": st.sampled_from(("Exists", "Equal", "")),
    "value": st.sampled_from(TOLERATION_VALUES), "effect": st.sampled_from(("", "NoSchedule", "NoExecute", "PreferNoSchedule")),
}), max_size=3)
_amounts = st.dictionaries(st.sampled_from(RESOURCE_NAMES), st.sampled_from(AMOUNTS), max_size=2)
_resources = st.fixed_dictionaries({}, optional={"limits": _amounts, "requests": _amounts})
#: Containers, init containers, sidecars (init containers that keep running) and ephemeral containers.
_containers = st.lists(st.tuples(st.sampled_from(("containers", "initContainers", "sidecar", "ephemeralContainers")),
                                 _resources), min_size=1, max_size=3)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(taints=st.lists(st.sampled_from(GPU_TAINT_CHOICES), min_size=1, max_size=2, unique=True),
       resources=st.lists(st.sampled_from(GPU_RESOURCE_CHOICES), min_size=1, max_size=3, unique=True),
       pod_tolerations=_tolerations, pod_containers=_containers,
       pod_resources=st.none() | st.dictionaries(st.sampled_from(("limits", "requests")), _amounts))
def test_the_cel_and_the_python_rule_agree_on_wider_pods(taints, resources, pod_tolerations, pod_containers,
                                                         pod_resources):
    config, policy = _compiled(tuple(taints), tuple(resources))
    spec: dict[str, Any] = {"containers": [], "tolerations": pod_tolerations}
    for number, (role, container_resources) in enumerate(pod_containers):
        container = {"name": f"c{number}", "image": "i", "resources": container_resources}
        if role == "sidecar":
            role, container["restartPolicy"] = "initContainers", "Always"
        spec.setdefault(role, []).append(container)
    if not spec["containers"]:
        spec["containers"].append({"name": "main", "image": "i"})
    if pod_resources is not None:
        spec["resources"] = pod_resources  # pod-level resources: cpu and memory only, never a GPU
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"}, "spec": spec}
    context = context_of([obj])
    [pod] = pod_specs_of(obj, context)
    admitted_pod = pod_as_admitted(pod, context, config)
    assume(admitted_pod is not None)
    python_admits = not [f for f in check_gpu_tolerations([pod], config, context) if f.decided]
    assert policy.admits(admitted_pod) == python_admits, (obj, admitted_pod, python_admits)


def test_an_ephemeral_container_never_asks_for_a_gpu():
    # The API server refuses resources on an ephemeral container, and neither ExtendedResourceToleration
    # nor the generated CEL counts one: the Python rule demanded a toleration the CEL did not.
    pod = {"kind": "Pod", "apiVersion": "v1", "spec": {"containers": [{"name": "app", "image": "x"}],
                                                       "ephemeralContainers": [{"name": "debug", "image": "x",
                                                                                "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    assert findings(pod, TOLERATE_GPU_TAINT) == []


# --- `--previous-outputs` and the records read back from the last update -------------------------

SECRET_WIRE = "1b47061264138c4ac30d75fd1eb44270"
#: Pulumi's wire form of an asset, a resource reference and an output (pulumi/runtime/rpc.py).
OTHER_WIRE = ("c44067f5952c0a294b673a41bacd8c17", "5cf8f73096256a8f31e491e813e4eb8e", "d0e6a833031e9bbcd3f4e8bde6ca49a4")


@pytest.fixture(scope="module")
def dev_outputs() -> dict[str, Any]:
    from tools.preview import run_stack_program
    run = run_stack_program("dev")
    assert run.error is None, run.error
    return json.loads(json.dumps(run.stack_outputs))


def _preview(tmp_path: Path, outputs: Any, *options: str) -> tuple[int, str]:
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    result = subprocess.run([sys.executable, "-m", "tools.preview", "dev", "--previous-outputs", str(path), *options],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("signature", OTHER_WIRE)
@pytest.mark.parametrize("where", ["clusterIdentity", "clusterNetwork.podCidr"])
def test_a_pulumi_wire_object_in_previous_outputs_is_bad_input(tmp_path, dev_outputs, signature, where):
    # An asset's signature under clusterIdentity hung the preview (the SDK decoded it in the mock run).
    outputs = json.loads(json.dumps(dev_outputs))
    wire = {SECRET_SIGNATURE: signature, "hash": 5, "urn": HOSTILE_KEY, "value": 1}
    if "." in where:
        outputs["clusterNetwork"]["podCidr"] = wire
    else:
        outputs[where] = wire
    code, text = _preview(tmp_path, outputs)
    assert code == 2 and f"{where} holds Pulumi's internal wire form" in text, text[-500:]
    assert_inert(text.replace("\n", ""))  # a multi-line answer: its own newlines only


@pytest.mark.slow
@pytest.mark.parametrize("name", ["clusterIdentity", "clusterNetwork", "deployerObjectId"])
def test_a_masked_record_is_refused_not_skipped(tmp_path, dev_outputs, name):
    # `pulumi stack output --json` prints "[secret]": read as garbage, every check passed without a word.
    code, text = _preview(tmp_path, {**dev_outputs, name: "[secret]"})
    assert code == 2 and f"{name} is '[secret]'" in text and "--show-secrets" in text


@pytest.mark.slow
def test_a_record_the_file_marks_secret_is_never_printed(tmp_path, dev_outputs):
    identity = json.loads(json.dumps(dev_outputs["clusterIdentity"]))
    identity["cluster"]["resourceName"] = SECRET_TEXT
    network = {**dev_outputs["clusterNetwork"], "networkPlugin": SECRET_TEXT + "-net"}
    for name, value in (("clusterIdentity", identity), ("clusterNetwork", network)):
        code, text = _preview(tmp_path, {**dev_outputs, name: {SECRET_SIGNATURE: SECRET_WIRE, "value": value}})
        assert code == 2 and SECRET_TEXT not in text and "[secret]" in text, text[-500:]


@pytest.mark.parametrize("recorded", [{"a": 1}, ["x"], 5, True, HOSTILE_KEY, "##[error]" + "f" * 10_000])
def test_a_recorded_deployer_of_any_shape_never_crashes_the_program(recorded):
    # A dict crashed the program (`'dict' object has no attribute 'lower'`); a string was printed raw.
    warning = deployer_change_warning(recorded, "22222222-2222-2222-2222-222222222222")
    if isinstance(recorded, str):
        assert warning is not None and len(warning) < 800
        assert_inert(warning)
    else:
        assert warning is None


def test_the_program_reads_a_recorded_deployer_of_the_wrong_type_as_no_record(dev_outputs):
    from tests.test_replacements import _dev_after
    run = _dev_after({**dev_outputs, "deployerObjectId": {"a": HOSTILE_KEY}})
    assert run.error is None, run.error


# --- The preflight's `az` answers ----------------------------------------------------------------


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
    assert_inert(err.replace("\n", "")) and len(err) < 400


def test_a_capability_repeated_with_the_same_value_is_read_once(tmp_path):
    from tests.test_preflight import ROOMY, SKUS
    from tests.test_preflight import run as run_preflight
    skus = json.loads(json.dumps(SKUS))
    for item in skus:
        item["capabilities"] = item.get("capabilities", []) * 3
    assert run_preflight(tmp_path, "prod", ROOMY, skus)[0] == 0


# --- JSON manifests at 10^6 elements ---------------------------------------------------------------


@pytest.mark.slow
def test_a_json_manifest_with_a_huge_array_is_read_in_linear_time(tmp_path):
    from tests.test_hostile_input import GROWTH_LIMIT, growth

    def prepare(n: int) -> Any:
        path = tmp_path / f"array{n}.json"
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "image": "i", "args": [[i, str(i), {"k": i}] for i in range(n)],
             "resources": {"limits": {"nvidia.com/gpu": "1500m"}}}]}}
        path.write_text(json.dumps(pod, indent=1))
        return lambda: check.check_paths([str(path)], check.load_config(None))
    assert growth(prepare, 50_000) < GROWTH_LIMIT


# --- GPU resource patterns: fnmatch (the rules) against the admission policy's regex ---------------

_NAME_CHARS = "ab1./-"
_class = st.builds(lambda negated, items: "[" + ("!" if negated else "") + "".join(items) + "]", st.booleans(),
                   st.lists(st.sampled_from(["a", "b", "1", ".", "/", "a-b", "0-9", ".-/"]), min_size=1, max_size=3))
_patterns = st.lists(st.sampled_from(list(_NAME_CHARS) + ["*", "?"]) | _class, min_size=1, max_size=6).map("".join)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(pattern=_patterns, name=st.text(alphabet=_NAME_CHARS + "c]", max_size=6))
def test_an_accepted_resource_pattern_means_the_same_to_fnmatch_and_to_the_cel_regex(pattern, name):
    import fnmatch
    import re

    from gpu_aks_policies.admission_policy import shell_pattern_regex
    from gpu_aks_policies.rule_config import RESOURCE_PATTERN
    assume(RESOURCE_PATTERN.fullmatch(pattern))
    assert bool(re.fullmatch(shell_pattern_regex(pattern), name)) == fnmatch.fnmatchcase(name, pattern), pattern


@pytest.mark.parametrize("pattern", ["example.com/[!]b", "example.com/[\\-*]", "example.com/[b-a]", "example.com/[",
                                     "example.com/[]]", "example.com/[^x]", "a'b\nc", "example.com/[[]"])
@pytest.mark.parametrize("where", ["gpuResources", "gpuMarkers"])
def test_a_resource_pattern_the_cel_regex_cannot_mean_is_refused(pattern, where):
    # Each was taken: fnmatch read it one way, and its regex was invalid RE2 (the API server refuses the
    # ValidatingAdmissionPolicy) or matched other names.
    from gpu_aks_policies.rules import parse_rule_config
    raw = {"gpuResources": [pattern]} if where == "gpuResources" else {"gpuMarkers": {"resources": [pattern]}}
    with pytest.raises(Exception) as raised:
        parse_rule_config({TOLERATE_GPU_TAINT: raw})
    assert "is not a resource name or a shell pattern of one" in str(raised.value)
    assert_inert(str(raised.value).replace("\n", ""))
