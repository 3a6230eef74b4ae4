"""The component provider (`GpuCluster` over gRPC) under hostile inputs: refused by path, cut, escaped, numbers
as the wire sends them.

The module they pin: `gpu_aks_plugin/`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import provider_pb2

from components.platform_settings import parse_settings
from components.settings import PROJECT
from tests.conftest import TODAY
from tests.inputs import (
    ESCAPES,
    HOSTILE_KEY,
    NAP_WHOLE_NUMBERS,
    SECRET_SIGNATURE,
    SECRET_TEXT,
    T4,
    assert_inert,
    assert_no_injection,
)
from tests.test_component_package import (  # noqa: F401 (a fixture)
    TOKEN,
    _error_details,
    plugin,
)
from tests.test_components import problems_of

NAP_INPUTS = {"location": "eastus2", "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
              "systemPool": {"minCount": 2, "maxCount": 2}}


def _refused(plugin: Any, inputs: dict[str, Any]) -> tuple[list[tuple[str, str]], str]:  # noqa: F811
    with pytest.raises(grpc.RpcError) as caught:
        plugin.construct(inputs)
    # RESOURCE_EXHAUSTED here was the client refusing a trailer past 16 KiB: every detail lost.
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    assert plugin.monitor.recording.registered == [], "a refused input registers nothing"
    return _error_details(caught.value), caught.value.details()


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


UNKNOWN_WIRE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def _secret(value: Any) -> dict[str, Any]:
    return {SECRET_SIGNATURE: "1b47061264138c4ac30d75fd1eb44270", "value": value}


@pytest.mark.slow
def test_construct_takes_a_nodepool_s_whole_numbers_as_the_wire_sends_them(plugin):  # noqa: F811
    # Every number crosses the wire as a float: `limits: {gpu: 8}` arrived as 8.0 and was refused as
    # "not a whole number", so no SDK could declare a GPU NodePool.
    pool = {"name": "h100", "gpus": ["H100"], "gpuCount": [1, 2], "limits": {"gpu": 8}, "weight": 50,
            "osDiskSizeGB": 256}
    plugin.construct({**NAP_INPUTS, "gpuNodePools": [pool]})
    [node_pool] = [r for r in plugin.monitor.recording.registered if r.type == "kubernetes:karpenter.sh/v1:NodePool"]
    spec = node_pool.wire_inputs["spec"]
    assert spec["limits"] == {"nvidia.com/gpu": "8"} and spec["weight"] == 50
    counts = [r["values"] for r in spec["template"]["spec"]["requirements"] if r["key"].endswith("sku-gpu-count")]
    assert counts == [["1", "2"]]


@pytest.mark.slow
@pytest.mark.parametrize("limits, reason", [
    ({"gpu": 1e100}, "is above 40000"), ({"gpu": float("nan")}, "NaN is not a whole number"),
    ({"gpu": 8.5}, "8.5 is not a whole number"), ({"gpu": ESCAPES}, "is not a whole number"),
])
def test_construct_refuses_a_hostile_nodepool_limit_by_path(plugin, limits, reason):  # noqa: F811
    import grpc
    with pytest.raises(grpc.RpcError) as caught:
        plugin.construct({**NAP_INPUTS, "gpuNodePools": [{"name": "h100", "gpus": ["H100"], "limits": limits}]})
    details = _error_details(caught.value)
    assert [(where, why) for where, why in details if where == "gpuNodePools[h100].limits.gpu" and reason in why]
    assert "\x1b" not in repr(details) + caught.value.details()


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
        assert_no_injection(where + why)
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
    assert_no_injection(error.details())
    assert len(error.details()) < 400
    assert plugin.monitor.recording.registered == []


def test_get_schema_ignores_hostile_subpackage_fields(plugin):  # noqa: F811
    for text in ("", HOSTILE_KEY, "x" * 100_000):
        request = provider_pb2.GetSchemaRequest(version=0, subpackage_name=text, subpackage_version=text)
        assert json.loads(plugin.stub.GetSchema(request, timeout=30).schema)["name"] == PROJECT


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gc##[error]pwned", "::error::pwned", "gc\u3164x", "gc\u2060x"])
def test_a_component_name_carrying_a_workflow_command_is_refused(plugin, name):  # noqa: F811
    # Printable, so it was taken: the engine prints it in every child's URN and name, as it is.
    error = _construct_as(plugin, TOKEN, name)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert "must be 1 to 1000 printable characters that a CI log shows as they are" in error.details()
    assert_inert(error.details()) and "##[error]" not in error.details()
    assert plugin.monitor.recording.registered == []


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
