"""Hostile input on the NAP NodePools and GPU sharing (issue 30): the `gpuNodePools` settings, the
Karpenter NodePools gpu-aks writes, the pool rules reading any karpenter.sh NodePool, and the
`sharing` of a pool as settings and as the outputs contract the checker, the explainer and the doctor
read. Every input is generated here; the standard is `test_hostile_input.py`'s: no hang, no
traceback, no superlinear growth (`growth`: the work at 4n against n), no terminal or CI-log
injection, nothing lost."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage, check_gpu_node_pool
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, TAINTED_GPU_POOLS
from gpu_aks_policies.rules import parse_rule_config

from components.pools import platform_pools
from components.pools.karpenter import SKU_GPU_NAME_LABEL, requirements
from components.pools.nap import LIMIT_CEILINGS, NAP, _karpenter_gpu_names
from components.settings.common import AKS_MAX_NODES_PER_CLUSTER
from tests.conftest import ROOT
from tests.test_hostile_input import GROWTH_LIMIT, HANG_GUARD_S, HOSTILE_NAME, assert_inert, growth
from tests.test_nap_settings import _parse, _problems, _with

ESCAPES = "\x1b[2J\r\n::error::pwned\x1b]0;title\x07"


def _one_line(problem: str) -> None:
    assert "\x1b" not in problem and "\n" not in problem and "\r" not in problem and "\x07" not in problem, problem
    assert len(problem) < 400, problem


# --- gpuNodePools settings -------------------------------------------------------------------------


@pytest.mark.parametrize("changes, key, reason", [
    # A ceiling no cluster reaches bounds nothing; 10**4000 GPUs once ended the preview in an OverflowError.
    ({"limits": {"gpu": 10**9}}, "limits.gpu", f"is above {LIMIT_CEILINGS['nvidia.com/gpu']}"),
    ({"limits": {"gpu": 10**4000}}, "limits.gpu", "is above"),
    ({"limits": {"cpu": 10**12}}, "limits.cpu", f"is above {LIMIT_CEILINGS['cpu']}"),
    ({"limits": {"gpu": -1}}, "limits.gpu", "not a whole number of at least 1"),
    ({"limits": {"gpu": float("nan")}}, "limits.gpu", "NaN is not a whole number"),
    ({"limits": {"gpu": float("inf")}}, "limits.gpu", "not a whole number"),
    ({"limits": {"gpu": 8.5}}, "limits.gpu", "not a whole number"),
    ({"limits": {"gpu": "8"}}, "limits.gpu", "not a whole number"),
    ({"limits": [1] * 100_000}, "limits", "is not a map of resources"),
    ({"limits": {ESCAPES: 8}}, "limits.\\x1b[2J\\x0d\\n::error::pwned", "is not a ceiling gpu-aks sets"),
    ({"gpus": [ESCAPES]}, "gpus[0]", "is not a GPU name like 'H100'"),
    # A name the catalog does not know is written as the label value: the CRD's pattern has no space.
    ({"gpus": ["MI 400"], "gpuCount": None}, "gpus[0]", "no spaces"),
    ({"gpuCount": [10**9]}, "gpuCount", "from 1 to 16"),
    ({"gpuCount": list(range(1, 10_001))}, "gpuCount", "from 1 to 16"),
    ({"capacityTypes": ["spot"] * 10_000}, "capacityTypes", "spot, on-demand"),
    ({"weight": 10**9}, "weight", "from 1 to 100"),
    ({"weight": float("nan")}, "weight", "from 1 to 100"),
    ({"osDiskSizeGB": float("nan")}, "osDiskSizeGB", "from 30 to 2048"),
    ({"nodeLabels": {"team": ESCAPES}}, "nodeLabels.team", "label value"),
    ({"nodeLabels": {ESCAPES: "x"}}, "nodeLabels.\\x1b[2J", "label key"),
    ({"consolidateAfter": ESCAPES}, "consolidateAfter", "is not a duration"),
    ({"vmSizes": ["Standard_D8ds_v5\x1b[2J"], "gpus": None, "gpuCount": None}, "vmSizes[0]", "is not a GPU size"),
])
def test_hostile_nodepool_settings_are_short_escaped_problems_naming_the_key(changes, key, reason):
    raw = _with(**{f"gpuNodePools__0__{name}": value for name, value in changes.items() if value is not None})
    for name, value in changes.items():
        if value is None:
            del raw["gpuNodePools"][0][name]
    problems = _problems(raw)
    for problem in problems:
        _one_line(problem)
    assert any(f"gpuNodePools[h100].{key}" in problem and reason in problem for problem in problems), problems


def test_a_hostile_nodepool_name_is_named_by_position_and_escaped():
    [problem] = _problems(_with(gpuNodePools__0__name=ESCAPES))
    _one_line(problem)
    assert problem.startswith("gpu-aks:gpuNodePools[0].name: '\\x1b[2J")


@pytest.mark.parametrize("gpus, per_node", [(["H100"], 1), (["A100"], 1)])
def test_a_nodepool_admits_no_more_nodes_than_a_cluster_holds(gpus, per_node):
    # The largest ceiling allowed, on sizes of one GPU: 40,000 nodes by the limit, 5,000 by AKS.
    settings = _parse(_with(gpuNodePools__0__gpus=gpus, gpuNodePools__0__gpuCount=[per_node],
                            gpuNodePools__0__limits={"gpu": LIMIT_CEILINGS["nvidia.com/gpu"]}))
    [pool] = [pool for pool in platform_pools(settings).pools if pool.name == "h100"]
    assert pool.max_count == AKS_MAX_NODES_PER_CLUSTER
    assert {need.max_count for need in pool.capacity} == {AKS_MAX_NODES_PER_CLUSTER}


def test_thousands_of_unknown_gpu_names_are_refused_each_once():
    """#38: a name no size carries is refused (it was a warning, and the NodePool never brought a node)."""
    names = [f"X{i}" for i in range(3000)] + ["X7", "H100"]
    problems = _problems(_with(gpuNodePools__0__gpus=names, gpuNodePools__0__gpuCount=None))
    assert sum("Karpenter's Azure provider gives no size" in problem for problem in problems) == 3000


def test_names_karpenter_gives_are_written_once_in_order():
    names = ["RTXPRO6000BSE", "H100", "RTXPRO6000BSE", "H200"]
    settings = _parse(_with(gpuNodePools__0__gpus=names, gpuNodePools__0__gpuCount=None,
                            gpuNodePools__0__limits={"gpu": 64}))
    [pool] = [pool for pool in NAP.pools(settings) if pool.name == "h100"]
    [requirement] = [r for r in requirements(pool.node_pool_spec()) if r["key"] == SKU_GPU_NAME_LABEL]
    assert requirement["values"] == ["RTXPRO6000BSE", "H100", "H200"]


def test_gpu_names_become_requirement_values_in_linear_time():
    # A list's `in` per name made 20,000 names take 11x the time of 5,000.
    def prepare(n: int) -> Any:
        names = tuple(f"X{i}" for i in range(n))
        return lambda: _karpenter_gpu_names(names)
    assert growth(prepare, 5000) < GROWTH_LIMIT


@pytest.mark.slow
def test_a_huge_nodepool_limit_in_a_stack_file_is_an_input_error_with_its_line(tmp_path):
    text = (ROOT / "Pulumi.nap.yaml").read_text().replace("limits: {gpu: 8}", "limits: {gpu: 1" + "0" * 4000 + "}")
    stack_file = tmp_path / "Pulumi.nap.yaml"
    stack_file.write_text(text)
    result = subprocess.run([sys.executable, "-m", "tools.preview", "nap", "--config-file", str(stack_file)], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert "OverflowError" not in result.stderr
    line = text[:text.index("limits: {gpu: 1000")].count("\n") + 1
    assert f"{stack_file}:{line}: gpu-aks:gpuNodePools[h100].limits.gpu: 1000" in result.stderr
    assert len(result.stderr) < 1000


# --- The pool rules on any karpenter.sh NodePool (the pack) ---------------------------------------

RULES = parse_rule_config({})
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
GPU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}


def _node_pool(name: str = "h100", sizes: list[str] | None = None, limits: Any = None,
               taints: list[Any] | None = None) -> dict[str, Any]:
    requirements = [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                     "values": sizes or ["Standard_NC40ads_H100_v5"]}]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": {"metadata": {"labels": {"gpu-aks.io/pool": "h100"}},
                                  "spec": {"requirements": requirements, "taints": taints or []}},
                     "limits": {"nvidia.com/gpu": "8"} if limits is None else limits}}


def _pool_messages(props: dict[str, Any]) -> list[str]:
    return [finding.message for finding in check_gpu_node_pool(NODEPOOL, props, RULES[TAINTED_GPU_POOLS])]


def test_a_nodepool_name_from_the_input_is_escaped_in_the_pack_s_messages():
    # The pack's messages reach the Pulumi CLI's output as they are: nothing in them may be a control.
    [message] = _pool_messages(_node_pool(name=HOSTILE_NAME))
    assert_inert(message) and "\n" not in message
    assert message.startswith("GPU node pool 'a\\x1b[2J")


def test_thousands_of_instance_types_are_named_once_each_and_counted_past_a_few():
    sizes = ["Standard_NC40ads_H100_v5"] * 10_000 + [f"Standard_NC{i}ads_H100_v5" for i in range(10_000)]
    [message] = _pool_messages(_node_pool(sizes=sizes))
    assert message.count("Standard_NC40ads_H100_v5") == 1 and "and 9992 more)" in message
    assert len(message) < 700
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": {"containers": [
        {"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"}]}}}}
    resources = [StackResource("urn:plugin", "kubernetes:apps/v1:DaemonSet", daemonset),
                 StackResource("urn:pool", NODEPOOL, _node_pool(name=HOSTILE_NAME, sizes=sizes, taints=[GPU_TAINT]))]
    [coverage] = check_device_plugin_coverage(resources, RULES[DEVICE_PLUGIN_TOLERATES_POOLS])
    assert len(coverage.message) < 1500 and "and 9992 more" in coverage.message
    assert_inert(coverage.message)


@pytest.mark.parametrize("limit, shown", [
    (float("nan"), "nvidia.com/gpu: nan is not a finite number"), (float("inf"), "inf is not a finite number"),
    ("1e999999999", "has an exponent out of range"), ("9" * 5000, "(5000 characters) is too long"),
    (HOSTILE_NAME, "nvidia.com/gpu: 'a\\x1b[2J"),
])
def test_a_limit_karpenter_cannot_read_is_named_with_why(limit, shown):
    # Before, such a limit read as "no limits", the reason lost.
    [message] = _pool_messages(_node_pool(taints=[GPU_TAINT], limits={"nvidia.com/gpu": limit}))
    assert "is not autoscaled within bounds (spec.limits: no limits; unreadable " in message and shown in message
    assert_inert(message) and len(message) < 500


@pytest.mark.slow  # a growth check at 20,000 sizes: hostile input at scale (pytest.ini)
def test_the_pool_rule_reads_a_nodepool_in_linear_time():
    def prepare(n: int) -> Any:
        props = _node_pool(sizes=[f"Standard_NC{i}ads_H100_v5" for i in range(n)] + ["Standard_NC40ads_H100_v5"])
        return lambda: _pool_messages(props)
    assert growth(prepare, 20_000) < GROWTH_LIMIT


# --- GPU sharing: settings and the contract -----------------------------------------------------

from tests.test_components import GPU, problems_of  # noqa: E402


@pytest.mark.parametrize("sharing, reason", [
    ({"strategy": "timeSlicing", "replicas": 10**9}, "is above"),
    ({"strategy": "timeSlicing", "replicas": float("nan")}, "is not a whole number of replicas"),
    ({"strategy": "timeSlicing", "replicas": "4"}, "is not a whole number of replicas"),
    ({"strategy": "timeSlicing", "replicas": True}, "is not a whole number of replicas"),
    ({"strategy": "mps", "replicas": 10**4000}, "is above"),
    ({"strategy": ESCAPES, "replicas": 4}, "is not allowed"),
    ([1] * 10_000, "expected an object of settings"),
])
def test_hostile_sharing_settings_are_short_escaped_problems(sharing, reason):
    raw = json.loads(json.dumps(GPU, default=str))
    raw["gpuPools"][0]["sharing"] = sharing
    problems = problems_of(raw)
    assert any("gpuPools[gput4].sharing" in problem and reason in problem for problem in problems), problems
    for problem in problems:
        _one_line(problem)


@pytest.mark.slow
@pytest.mark.parametrize("sharing, expected", [
    ({"strategy": "timeSlicing", "replicas": 10**9}, "sharing.replicas: expected a whole number from 1 to 1000000"),
    ({"strategy": "timeSlicing", "replicas": "NaN"}, "sharing.replicas: expected a whole number"),
    ({"strategy": HOSTILE_NAME, "replicas": 4}, "sharing.strategy: expected timeSlicing or mps, got 'a\\x1b[2J"),
    ([1] * 10, "sharing: expected null or an object"),
])
@pytest.mark.parametrize("tool", ["gpu_aks_policies.check", "gpu_aks_policies.explain", "tools.doctor"])
def test_a_hostile_sharing_in_the_contract_is_one_escaped_input_error(tmp_path, tool, sharing, expected):
    outputs = json.loads((ROOT / "tests" / "fixtures" / "doctor" / "platform-prod.json").read_text())
    pool = next(iter(outputs["gpuPools"].values()))
    pool["sharing"] = sharing
    platform, pod = tmp_path / "outputs.json", tmp_path / "pod.yaml"
    platform.write_text(json.dumps(outputs))
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}))
    files = ["--nodes", str(pod), "--pods", str(pod)] if tool == "tools.doctor" else [str(pod)]
    result = subprocess.run([sys.executable, "-m", tool, "--platform", str(platform), *files], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert expected in line and len(line) < 400
    assert_inert(result.stderr)


# --- The doctor: what a node advertises --------------------------------------------------------


@pytest.mark.parametrize("allocatable, shown", [
    ("1000000000", "'1000000000'"), ("NaN", "'NaN'"), ("-4", "'-4'"), (3.5, "3.5"), ("1e999999999", "'1e999999999'"),
    ("9" * 5000, "'9999999999999999999…999' (5000 characters)"), (HOSTILE_NAME, "'a\\x1b[2J"),
])
def test_an_allocatable_count_no_node_has_is_named_not_read_as_none(allocatable, shown):
    # 10**9 GPUs, NaN or -4 read as 0: "advertises no allocatable nvidia.com/gpu", the value lost.
    from tests.test_doctor import T4_0, doctor_on
    nodes = json.loads((ROOT / "tests" / "fixtures" / "doctor" / "nodes-healthy.json").read_text())
    [node] = [node for node in nodes["items"] if node["metadata"]["name"] == T4_0]
    node["status"]["allocatable"]["nvidia.com/gpu"] = allocatable
    code, out = doctor_on(nodes)
    assert code == 1
    assert (f"- node {T4_0} (pool t4spot) [gpu-allocatable]: advertises {shown}" in out and
            "allocatable nvidia.com/gpu, which is no count of GPUs (the contract says 1 per node)" in out), out
    assert f"  {T4_0}: 1 problem(s); {shown}" in out
    assert_inert(out)


# --- Construct: the component provider's inputs arrive as JSON numbers ----------------------------

from tests.test_component_package import _error_details, plugin  # noqa: E402, F401 (a fixture)

NAP_INPUTS = {"location": "eastus2", "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
              "systemPool": {"minCount": 2, "maxCount": 2}}


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
def test_ten_thousand_nodepools_are_one_problem_and_parsed_in_linear_time():
    pools = [{"name": f"p{i}", "gpus": ["H100"], "limits": {"gpu": 8}} for i in range(10_000)]
    [problem] = _problems(_with(gpuNodePools=pools))
    assert problem.startswith("gpu-aks:gpuNodePools: 10000 entries; gpu-aks allows at most 100")

    def prepare(n: int) -> Any:
        raw = _with(gpuNodePools=pools[:n])
        return lambda: _problems(raw)
    assert growth(prepare, 500) < GROWTH_LIMIT


# --- No secret printed: a pool section that is a Pulumi secret -----------------------------------

SECRET = "hunter2-do-not-print"


@pytest.mark.parametrize("section, changes", [
    ("gpuNodePools", {"gpus": [SECRET + " x"]}), ("gpuNodePools", {"gpus": [SECRET], "gpuCount": None}),
    ("gpuNodePools", {"gpus": ["GB200", SECRET], "gpuCount": None}),
    ("gpuNodePools", {"nodeTaints": [SECRET + "=x:PreferNoSchedule"]}), ("gpuNodePools", {"limits": {SECRET: 1}}),
    ("gpuNodePools", {"vmSizes": ["Standard_N" + SECRET], "gpus": None, "gpuCount": None}),
    ("gpuNodePools", {"nodeLabels": {"kubernetes.azure.com/" + SECRET: "x"}}),
    ("gpuPools", {"vmSize": "Standard_NC" + SECRET}), ("gpuPools", {"nodeLabels": {"a.b/" + SECRET + ".c": "x!"}}),
    ("gpuPools", {SECRET: 1}),
])
def test_no_value_or_map_key_of_a_secret_section_is_printed(section, changes):
    # Checks quote values with `describe` and paths name map keys as written: every line is redacted
    # against the secret sections' strings (`Problems.redact`).
    from components.platform_settings import parse_settings
    from components.settings import SettingsError
    from tests.test_nap_settings import TODAY
    # A GPU AgentPool beside NAP is refused (fixed-size: the pool rule; autoscaled: AKS), so it is
    # only there for the gpuPools cases, each of which is refused by its section first.
    raw = _with(**({"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "minCount": 1, "maxCount": 1}]}
                   if section == "gpuPools" else {}))
    pool = raw[section][0]
    for name, value in changes.items():
        if value is None:
            del pool[name]
        else:
            pool[name] = value
    try:
        texts = list(parse_settings(raw, "nap", "eastus2", secret_keys={section}, today=TODAY, environ={}).warnings)
    except SettingsError as error:
        texts = error.problems
    # A secret pool section is refused as such (issue 41); its other problems are still told, redacted.
    assert any(f"gpu-aks:{section}[[secret]]" in text or text.startswith(f"gpu-aks:{section}: is a secret")
               for text in texts), texts
    assert not [text for text in texts if "hunter2" in text]


@pytest.mark.slow
def test_secret_texts_are_redacted_in_linear_time():
    from gpu_aks_policies.secrets import Redactor

    def prepare(n: int) -> Any:
        redactor = Redactor(f"secret-{i}" for i in range(n))
        messages = [f"gpuPools[p{i}].vmSize: 'secret-{i}' is not a size" for i in range(n)]
        return lambda: [redactor(message) for message in messages] + [redactor.path(m) for m in messages]
    assert growth(prepare, 5000) < GROWTH_LIMIT
    assert Redactor(["a.b/s3cret.c"]).path("gpuPools[x].nodeLabels.a.b/s3cret.c") == "gpuPools[x].nodeLabels.[secret]"
    assert Redactor(["s3cret"])("the 's3cret' value, not xs3cret") == "the '[secret]' value, not xs3cret"
