"""A fourth hostile round (issue 30), against what the first three missed: hand-written NodePools whose
`spec.limits` bound nothing, line counting in files with other line ends, the lines of list items in
stack files, recorded values of a `--show-secrets` export, and fresh attacks on the component
provider, the stack files, the tools and the manifest checker.

Every input is generated. The standard is `test_hostile_input.py`'s: no hang, no traceback, no
superlinear growth (`growth`: the work at 4n against n, compared loosely), no secret printed, no
terminal or CI-log injection (`assert_inert`), nothing lost."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from gpu_aks_policies import check, explain
from gpu_aks_policies.catalog import AKS_MAX_NODES_PER_CLUSTER, NODEPOOL_LIMIT_CEILINGS
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage, check_gpu_node_pool
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, TAINTED_GPU_POOLS
from gpu_aks_policies.rules import parse_rule_config
from gpu_aks_policies.workloads.shapes import MAX_PLACES, ShapeReachError, expand, parse_path

from components.cluster import NETWORK_OUTPUT
from components.platform_settings import parse_settings
from components.pools.nap import LIMIT_CEILINGS
from components.replacements import IDENTITY_OUTPUT
from components.settings import PROJECT, SettingsError
from components.settings.common import IMAGE_REFERENCE, RECORD_SECRET, image_problem
from tests.conftest import ROOT, TODAY
from tests.test_component_package import TOKEN, plugin  # noqa: F401 (a fixture)
from tests.test_components import GPU, problems_of
from tests.test_hostile_input import GROWTH_LIMIT, HANG_GUARD_S, PLATFORM_T4, assert_inert, growth
from tests.test_hostile_nap import GPU_TAINT, NODEPOOL, _node_pool
from tests.test_hostile_round3 import _construct_as
from tests.test_hostile_surfaces import gpu_pod, line_of
from tests.test_nap_settings import _parse, _problems, _with
from tools import preflight, prices
from tools.analyzer import PolicyPackProcess
from tools.mockrun import run_program
from tools.preview import PreviewInputError, run_stack_program
from tools.preview import main as preview_main
from tools.stacks import StackFileError, config_from_stack_file, settings_from_stack_file

RULES = parse_rule_config(None)

# --- Hand-written NodePools: a limit must bound something -------------------------------------------


def _pool_messages(props: dict[str, Any]) -> list[str]:
    return [finding.message for finding in check_gpu_node_pool(NODEPOOL, props, RULES[TAINTED_GPU_POOLS])]


def test_a_hand_written_nodepool_is_held_to_gpu_aks_s_own_ceilings():
    # One table for both: gpu-aks's NodePool settings and the pool rule.
    assert LIMIT_CEILINGS is NODEPOOL_LIMIT_CEILINGS
    assert NODEPOOL_LIMIT_CEILINGS["nvidia.com/gpu"] == AKS_MAX_NODES_PER_CLUSTER * 8


@pytest.mark.parametrize("limits, shown", [
    ({"nvidia.com/gpu": 1e30}, "nvidia.com/gpu: 1e+30 is above 40000"),
    ({"nvidia.com/gpu": "1e30"}, "nvidia.com/gpu: '1e30' is above 40000"),
    ({"nvidia.com/gpu": "100000"}, "nvidia.com/gpu: '100000' is above 40000"),
    ({"nvidia.com/gpu": 40_001}, "nvidia.com/gpu: 40001 is above 40000"),
    ({"nvidia.com/gpu": "1E"}, "is above 40000"),  # an exa-GPU
    ({"nvidia.com/gpu": 10**4000}, "is far too large to be a quantity"),
    ({"nvidia.com/gpu": float("nan")}, "nan is not a finite number"),
    ({"nvidia.com/gpu": float("-inf")}, "-inf is not a finite number"),
    ({"nvidia.com/gpu": -1}, "nvidia.com/gpu: -1 is negative"),
    ({"nvidia.com/gpu": "-5"}, "nvidia.com/gpu: '-5' is negative"),
    ({"cpu": "1e30"}, "cpu: '1e30' is above"),
    # One sound limit does not make an unusable other one bound the pool.
    ({"nvidia.com/gpu": 8, "cpu": float("nan")}, "unreadable cpu: nan is not a finite number"),
    ({"nvidia.com/gpu": "1e30", "cpu": 96}, "nvidia.com/gpu: '1e30' is above 40000"),
    ({"nvidia.com/gpu": "\x1b[2J::error::x"}, "unreadable nvidia.com/gpu: '\\x1b[2J::error::x'"),
])
def test_a_nodepool_limit_that_bounds_nothing_is_not_bounded(limits, shown):
    # Before, 1e30, "100000", -1 and a sound limit beside a NaN one all passed as "autoscaled within bounds"
    # (a negative one read as "0 above spec.limits -1").
    [message] = _pool_messages(_node_pool(taints=[GPU_TAINT], limits=limits))
    assert "is not autoscaled within bounds (spec.limits: " in message and shown in message, message
    assert_inert(message) and len(message) < 600


@pytest.mark.parametrize("limits", [{"nvidia.com/gpu": 0}, {"nvidia.com/gpu": "40000"}, {"nvidia.com/gpu": "8"},
                                    {"cpu": "1440000"}, {"nvidia.com/gpu": 16, "cpu": "960", "memory": "1e30"}])
def test_a_nodepool_limit_within_a_cluster_s_reach_is_bounded(limits):
    assert _pool_messages(_node_pool(taints=[GPU_TAINT], limits=limits)) == []


# --- Line ends: lines are counted as the YAML reader counts them, in JSON files too ------------------

#: The line breaks PyYAML and libyaml count (YAML 1.1): CR LF once, and CR, LF, NEL, LS, PS alone.
READER_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def reader_line(text: str, needle: str, occurrence: int = 0) -> int:
    position = -1
    for _ in range(occurrence + 1):
        position = text.index(needle, position + 1)
    return len(READER_BREAK.split(text[:position]))


@pytest.mark.parametrize("brk", ["\r", "\r\n", "\x85", "\u2028", "\u2029"])
def test_the_yaml_reader_counts_every_yaml_line_break(brk):
    # The fact the checker's line counting holds to, from PyYAML itself (both loaders agree).
    text = f'a: 1{brk}b: "x{brk}y"{brk}c: [1,{brk}2]{brk}d: 4'
    for loader in (yaml.SafeLoader, yaml.CSafeLoader):
        node = yaml.compose(text, Loader=loader)
        assert [key.start_mark.line + 1 for key, _ in node.value] == [reader_line(text, f"{k}:") for k in "abcd"]


@pytest.mark.parametrize("brk", ["\r", "\r\n", "\n"])
def test_a_json_file_with_any_line_end_names_the_lines_the_yaml_reader_names(tmp_path, brk):
    # With CR line ends (`\r` alone) every finding, duplicate key and syntax error was at line 1.
    pod = gpu_pod("1500m", env=[{"name": "NOTE", "value": "one\u2028two"}])  # LS inside a string: a break too
    text = json.dumps(pod, indent=2, ensure_ascii=False).replace("\n", brk)
    duplicate = text.replace('"name": "c",', f'"name": "c",{brk}      "name": "d",')
    broken = text.replace('"image": "i",', '"image": "i",,')
    deep = "[" * 300 + "]" * 300
    deep = f"{{{brk}{brk}\"a\":{brk}{deep}}}"
    files = {"pod.json": text, "dup.json": duplicate, "broken.json": broken, "deep.json": deep}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content.encode())
    (tmp_path / "bytes.json").write_bytes(f"{{{brk}{brk}\"a\": \"".encode() + b"\xff\"}")
    (tmp_path / "ctrl.yaml").write_bytes(f"kind: Pod{brk}metadata: {{name: p}}{brk}data: \"x\x07\"".encode())
    result = subprocess.run([sys.executable, "-m", "gpu_aks_policies.check", "--format", "json",
                             *sorted(str(path) for path in tmp_path.iterdir())],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    lines = {(Path(v["file"]).name, v["policy"]): v["line"] for v in report["violations"]}
    assert lines[("pod.json", "gpu-limits-are-whole-numbers")] == reader_line(text, '"nvidia.com/gpu"')
    assert lines[("pod.json", "gpu-pods-tolerate-gpu-taint")] == reader_line(text, '"spec"')
    errors = {Path(e["file"]).name: (e["line"], e["message"]) for e in report["errors"]}
    first, second = reader_line(duplicate, '"name": "c"'), reader_line(duplicate, '"name": "d"')
    assert errors["dup.json"][0] == second and f"(first at line {first})" in errors["dup.json"][1], errors
    assert errors["broken.json"][0] == reader_line(broken, ",,")
    column = broken.index(",,") + 1 - max(broken.rfind(b, 0, broken.index(",,")) + 1 for b in ("\r", "\n"))
    assert f"column {column + 1}:" in errors["broken.json"][1]
    assert errors["deep.json"][0] == 4 and errors["bytes.json"][0] == 3 and errors["ctrl.yaml"][0] == 3, errors


# --- Stack files: a plain item of a list is named at its own line ------------------------------------

#: A GUID written in capitals is the same group (Entra ID object IDs are compared without case).
GROUP = "00000000-0000-0000-0000-0000000000a1"


def _stack_problems(tmp_path: Path, text: str) -> list[str]:
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    with pytest.raises(SettingsError) as raised:
        settings_from_stack_file(stack_file, "prod", environ={})
    for problem in raised.value.problems:
        assert_inert(problem)
        assert len(problem) < 400, problem
    return [problem.split(f"{stack_file}:", 1)[-1] for problem in raised.value.problems]


def test_a_problem_about_a_plain_list_item_names_the_item_s_line(tmp_path):
    # Each item of a list of CIDRs or principals was reported at the list key's line: with 200 ranges,
    # which one was wrong had to be counted by hand.
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    ranges = [f"10.{i}.0.0/16" for i in range(40)]
    ranges[7], ranges[23], ranges[31] = "10.0.0.0/33", "0.0.0.0/0", "\x1b[2J::error::x"
    listed = "".join(f"        - {json.dumps(item)}\n" for item in ranges)
    text = text.replace("        - 203.0.113.0/24\n        - 198.51.100.0/24\n", listed, 1)
    groups = [GROUP, "not-a-guid\u202e", GROUP.upper(), "##[error]x"]
    text = text.replace("      adminGroupObjectIDs: []\n", "      adminGroupObjectIDs:\n" + "".join(
        f"        - {json.dumps(group)}\n" for group in groups), 1)
    problems = _stack_problems(tmp_path, text)
    expected = [
        (f"cluster.apiServerAccessProfile.authorizedIPRanges[{index}]", f"- {json.dumps(ranges[index])}")
        for index in (7, 23, 31)] + [
        (f"cluster.aadProfile.adminGroupObjectIDs[{index}]", f"- {json.dumps(groups[index])}") for index in (1, 2, 3)]
    assert len(problems) == len(expected), problems
    for key, written in expected:
        [problem] = [p for p in problems if f": gpu-aks:{key}: " in p]
        assert problem.startswith(f"{line_of(text, written)}: "), (problem, written)
    assert "is listed twice (first at adminGroupObjectIDs[0])" in "".join(problems)


@pytest.mark.parametrize("groups, reason", [
    (["not-a-guid"], "is not an Entra ID group object ID"),
    ([GROUP, GROUP.upper()], "is listed twice"),
    ([GROUP + "\n::error::x"], "is not an Entra ID group object ID"),
    ([7], "is not an Entra ID group object ID"),
    ("00000000-0000-0000-0000-0000000000a1", "is not a list of group object IDs"),
])
def test_admin_groups_are_group_object_ids_once_each(groups, reason):
    # A non-GUID or repeated admin group passed the preview and failed at deploy (issue 30: "non-GUID
    # principals, and duplicated admins"); clusterAdmins was checked, aadProfile.adminGroupObjectIDs not.
    problems = problems_of({**GPU, "cluster": {"aadProfile": {"adminGroupObjectIDs": groups}}})
    [problem] = [p for p in problems if "adminGroupObjectIDs" in p]
    assert reason in problem and "\n" not in problem
    assert_inert(problem)


# --- Recorded values of a `--show-secrets` export ---------------------------------------------------

OLD_NAME = "s3cret-old-cluster-name"
OLD_CIDR = "10.99.0.0/16"


@pytest.fixture(scope="module")
def secret_export() -> dict[str, Any]:
    """The last update's outputs when `gpu-aks:cluster` was secret, as `pulumi stack output --json
    --show-secrets` prints them: Pulumi's marking gone, every value plain JSON."""
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", PROJECT)
    run = run_program(ROOT, "dev", config, [f"{PROJECT}:cluster"])
    assert run.error is None, run.error
    assert {IDENTITY_OUTPUT, NETWORK_OUTPUT} <= run.secret_outputs
    return json.loads(json.dumps(run.stack_outputs))


def _refusal(previous: dict[str, Any]) -> str:
    """The offline preview of dev (its cluster config not secret now) against `previous`."""
    with pytest.raises(PreviewInputError) as refused:
        run_stack_program("dev", previous_outputs=previous)
    text = str(refused.value)
    assert_inert(text.replace("\n", ""))
    return text


def _moved(outputs: dict[str, Any], record: str, secret: Any = "as recorded") -> dict[str, Any]:
    """`outputs` with the recorded cluster name or service CIDR changed (both are refused) and the
    record's `secret` field as given (absent: written by a gpu-aks before it)."""
    outputs = json.loads(json.dumps(outputs))
    if record == IDENTITY_OUTPUT:
        outputs[record]["cluster"]["resourceName"] = OLD_NAME
    else:
        outputs[record]["serviceCidr"] = OLD_CIDR
    if secret is None:
        del outputs[record][RECORD_SECRET]
    elif secret != "as recorded":
        outputs[record][RECORD_SECRET] = secret
    return outputs


@pytest.mark.slow
@pytest.mark.parametrize("record", [IDENTITY_OUTPUT, NETWORK_OUTPUT])
@pytest.mark.parametrize("secret", ["as recorded", None, "yes", 1])
def test_a_record_that_was_secret_stays_masked_after_a_show_secrets_export(secret_export, record, secret):
    # The export holds the values in plain text; the preview printed them whenever the stack's cluster
    # config was no longer secret, though `pulumi preview` itself masks them (the engine knows they were).
    text = _refusal(_moved(secret_export, record, secret))
    assert OLD_NAME not in text and OLD_CIDR not in text and "[secret]" in text, text[-400:]


@pytest.mark.slow
@pytest.mark.parametrize("record", [IDENTITY_OUTPUT, NETWORK_OUTPUT])
def test_a_record_that_says_it_was_plain_is_quoted(secret_export, record):
    # What an export may show: the values of a record the program wrote as plain (`secret: false`).
    text = _refusal(_moved(secret_export, record, False))
    assert OLD_NAME in text or OLD_CIDR in text, text[-400:]


# --- Image references: what the kubelet cannot pull is refused before anything is created --------------

#: Each image key: (the stack config it sits in, how to set it).
IMAGE_KEYS = {
    "devicePlugin.image": lambda image: {"devicePlugin": {"image": image}},
    "smokeTest.image": lambda image: {"smokeTest": {"enabled": True, "image": image}},
    "observability.dcgmExporter.image": lambda image: {"observability": {"enabled": True,
                                                                          "dcgmExporter": {"image": image}}},
}


@pytest.mark.parametrize("key", sorted(IMAGE_KEYS))
@pytest.mark.parametrize("image", [
    "x\x1b[2J##[error]pwned\u202e",  # no whitespace: the exporter's own check took it
    "nvcr.io/nvidia/K8S-device-plugin:v1", "nvcr.io/nvidia/x:", "nvcr.io/nvidia/x@sha256:short", "-x", "",
    "nvcr.io/" + "a/" * 200 + "a", "x:" + "t" * 200, "a" * 100_000 + "!",
])
def test_an_image_the_kubelet_cannot_pull_is_refused(key, image):
    # Accepted, it left every pod of the DaemonSet or Job in InvalidImageName after the deploy.
    problems = problems_of({**GPU, **IMAGE_KEYS[key](image)})
    [problem] = [p for p in problems if p.startswith(f"{PROJECT}:{key}: ")]
    assert "is not a container image reference like" in problem and len(problem) < 400
    assert_inert(problem)


@pytest.mark.parametrize("image", ["nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "busybox", "localhost:5000/a/b:1",
                                   "[::1]:5000/x@sha256:" + "a" * 64, "registry.example.com:443/a__b/c--d.e:tag_1"])
def test_an_image_reference_the_kubelet_reads_is_taken(image):
    assert image_problem(image) is None


def test_image_references_are_matched_in_linear_time():
    # The grammar's empty separator (`[-]*`) makes a backtracking matcher exponential on "aaaa…!".
    def prepare(n: int) -> Any:
        texts = ["a" * n + "!", "a-" * n + "A", "a." * n + "/", "a.a-" * n + "/a!"]
        return lambda: [IMAGE_REFERENCE.fullmatch(text) for text in texts]
    assert growth(prepare, 2_000) < GROWTH_LIMIT


# --- The component provider ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gc##[error]pwned", "::error::pwned", "gc\u3164x", "gc\u2060x"])
def test_a_component_name_carrying_a_workflow_command_is_refused(plugin, name):  # noqa: F811
    # Printable, so it was taken: the engine prints it in every child's URN and name, as it is.
    error = _construct_as(plugin, TOKEN, name)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert "must be 1 to 1000 printable characters that a CI log shows as they are" in error.details()
    assert_inert(error.details()) and "##[error]" not in error.details()
    assert plugin.monitor.recording.registered == []


# --- NAP NodePools: names AKS keeps for itself ---------------------------------------------------------


def test_a_gpu_nodepool_named_as_aks_s_own_nodepool_is_refused():
    # AKS node auto-provisioning creates and keeps NodePool and AKSNodeClass `default`; gpu-aks names both
    # objects after the pool, so `name: default` wrote over AKS's objects after the preview passed.
    problems = _problems(_with(gpuNodePools__0__name="default"))
    [problem] = [p for p in problems if ".name: " in p]
    assert "'default' is the name of the NodePool and AKSNodeClass AKS node auto-provisioning creates" in problem
    _parse(_with(gpuNodePools__0__name="defaults"))


# --- tools.prices --online --regions -------------------------------------------------------------------


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


# --- Declared workload shapes over YAML aliases -------------------------------------------------------


def _alias_bomb(levels: int, fanout: int) -> str:
    """A custom resource whose `spec` is `levels` levels of `fanout` aliases of the level below: a small
    graph the reader keeps small, and `fanout ** levels` places for a path with `*` at each level."""
    lines = ["apiVersion: example.com/v1", "kind: Bomb", "metadata: {name: b}", "x:",
             "  l0: &l0 {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}"]
    for level in range(1, levels + 1):
        lines.append(f"  l{level}: &l{level} {{" + ", ".join(f"k{i}: *l{level - 1}" for i in range(fanout)) + "}")
    return "\n".join([*lines, f"spec: *l{levels}", ""])


def _shape_config(tmp_path: Path, levels: int) -> Path:
    shape = [{"apiVersion": "example.com/v1", "kind": "Bomb", "pods": [{"path": "spec" + ".*" * levels}]}]
    config = tmp_path / "shapes.json"
    config.write_text(json.dumps({name: {"workloadShapes": shape} for name in (
        "gpu-pods-tolerate-gpu-taint", "gpu-limits-are-whole-numbers", "gpu-pods-select-gpu-nodes")}))
    return config


@pytest.mark.slow
def test_a_declared_shape_over_an_alias_bomb_is_an_input_error_not_a_walk(tmp_path, capsys):
    # Nine levels of nine aliases and a path with `*` at each: 9**9 pod specs; the checker grew past 16 GB.
    manifest = tmp_path / "bomb.yaml"
    manifest.write_text(_alias_bomb(9, 9))
    config = _shape_config(tmp_path, 9)
    assert check.main(["--config", str(config), str(manifest)]) == 2
    out = capsys.readouterr().out
    assert f"{manifest}:1: error: the workload shape's path spec.*.*.*.*.*.*.*.*.* reaches more than 100000 " \
           "places in this object through nodes YAML aliases repeat" in out
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    assert explain.main(["--platform", str(platform), "--config", str(config), str(manifest)]) == 2
    assert "reaches more than 100000 places in this object" in capsys.readouterr().err


def test_a_declared_shape_over_aliases_within_the_bound_is_checked(tmp_path, capsys):
    manifest = tmp_path / "aliases.yaml"
    manifest.write_text(_alias_bomb(3, 4))  # 64 places: every one a pod spec with a GPU and no toleration
    assert check.main(["--config", str(_shape_config(tmp_path, 3)), "--format", "json", str(manifest)]) == 1
    violations = json.loads(capsys.readouterr().out)["violations"]
    assert len({v["path"] for v in violations if v["policy"] == "gpu-pods-tolerate-gpu-taint"}) == 64


@pytest.mark.slow
def test_a_tree_past_the_bound_is_walked_whole_as_the_pack_sees_objects():
    # Only repeated nodes can make a path reach more places than the object has: a tree is walked whole
    # (the pack's objects are trees; refusing one made `Analyze` fail).
    obj = {"spec": {"items": [{"containers": []} for _ in range(MAX_PLACES + 10)]}}
    assert len(expand(obj, parse_path("spec.items[*]"))) == MAX_PLACES + 10


@pytest.mark.slow
def test_a_shape_path_stops_at_its_bound_in_linear_time():
    def prepare(n: int) -> Any:
        wide = {f"k{i}": {"containers": []} for i in range(n)}
        obj = {"spec": {f"a{i}": wide for i in range(MAX_PLACES // n + 2)}}
        steps = parse_path("spec.*.*")
        return lambda: pytest.raises(ShapeReachError, expand, obj, steps)
    assert growth(prepare, 5_000) < GROWTH_LIMIT


# --- Values YAML reads as floats with no integer, and keys of the wrong type, in workload adapters ----

#: Each document once crashed the checker and the explainer with a Python traceback.
CRASHERS = {
    "spark": lambda value: f"""apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {{name: spark-{value.strip(".-")}}}
spec:
  driver: {{cores: 1}}
  executor:
    instances: 2
    gpu: {{name: nvidia.com/gpu, quantity: {value}}}
""",
    "kserve": lambda value: f"""apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {{name: kserve-{value.strip(".-")}}}
spec:
  predictor:
    model:
      modelFormat: {{name: huggingface}}
      resources: {{requests: {{nvidia.com/gpu: "1"}}}}
    workerSpec:
      pipelineParallelSize: {value}
      tensorParallelSize: {value}
      containers: [{{name: worker, resources: {{requests: {{nvidia.com/gpu: "1"}}}}}}]
""",
    "expressions": lambda value: f"""apiVersion: v1
kind: Pod
metadata: {{name: pinned-{value.strip(".-")}}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: 7
        - matchExpressions: [{{key: {{a: b}}, operator: In, values: [x]}}, {{key: [k], operator: NotIn}}]
  containers: [{{name: c, image: i, resources: {{limits: {{nvidia.com/gpu: {value}}}}}}}]
""",
}


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_non_finite_numbers_and_keys_of_the_wrong_type_get_verdicts_not_tracebacks(tmp_path, capsys, value):
    # `quantity: .nan` (SparkApplication), `pipelineParallelSize: .inf` (KServe): int() of them raised;
    # `matchExpressions: 7` was iterated, and a map as an expression's key looked up in the node's labels.
    manifest = tmp_path / "crashers.yaml"
    manifest.write_text("---\n".join(document(value) for document in CRASHERS.values()))
    assert check.main(["--format", "json", str(manifest)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == [] and {v["name"] for v in report["violations"]} >= {
        f"spark-{value.strip('.-')}", f"pinned-{value.strip('.-')}"}
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    assert explain.main(["--platform", str(platform), str(manifest)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_a_map_with_keys_of_mixed_types_is_described_not_a_traceback():
    # A Python program hands GpuCluster dicts as they are: sorting keys 1 and "b" for the message raised.
    problems = _problems(_with(gpuNodePools__0__gpuCount={1: "a", "b": (2,)}))
    [problem] = [p for p in problems if ".gpuCount: " in p]
    assert '{"1": "a", "b": [2]} is not a list of GPU counts' in problem


# --- The pack's messages reach the Pulumi CLI's output as they are ----------------------------------

WORKFLOW = "x##[error]forged"


@pytest.fixture(scope="module")
def pack_process() -> Any:
    with PolicyPackProcess() as process:
        process.configure({})
        yield process


@pytest.mark.parametrize("type_, props", [
    ("azure-native:containerservice:AgentPool", {"agentPoolName": "gpunp", "vmSize": "Standard_NC24ads_A100_v4",
                                                  "enableAutoScaling": True, "minCount": 0.0, "maxCount": WORKFLOW,
                                                  "nodeTaints": []}),
    ("kubernetes:core/v1:Pod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": WORKFLOW, "image": "i", "resources": {"limits": {"nvidia.com/gpu": WORKFLOW}}}]}}),
])
def test_a_value_quoted_in_a_pack_message_carries_no_workflow_command(pack_process, type_, props):
    # Quoted with repr, `##[error]` stayed as written: the Actions runner acts on it anywhere in a line.
    messages = [d.message for d in pack_process.analyze(type_, "r", props)]
    assert messages and all("##[" not in message for message in messages), messages
    assert any("x##\\x5berror]forged" in message for message in messages)


def test_a_device_plugin_with_a_security_context_of_the_wrong_shape_is_judged():
    # `securityContext: 5` beside a MIG pool raised AttributeError in the coverage rule.
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": {
        "tolerations": [{"operator": "Exists"}], "containers": [
            {"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.18.0", "securityContext": 5, "env": 7}]}}}}
    pool = {"agentPoolName": "mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g",
            "enableAutoScaling": True, "minCount": 0, "maxCount": 2, "nodeTaints": ["sku=gpu:NoSchedule"]}
    [finding] = check_device_plugin_coverage(
        [StackResource("urn:plugin", "kubernetes:apps/v1:DaemonSet", daemonset),
         StackResource("urn:pool", "azure-native:containerservice:AgentPool", pool)],
        RULES[DEVICE_PLUGIN_TOLERATES_POOLS])
    assert "serves a MIG pool without MIG_STRATEGY (single or mixed), NVIDIA_MIG_MONITOR_DEVICES=all, the " \
           "SYS_ADMIN capability" in finding.message


# --- Secret sections: nothing derived from a secret value is printed either ---------------------------


def test_a_fix_derived_from_a_secret_value_is_masked_too():
    # "[secret] has bits set after the prefix; write 10.0.0.0/8" told most of the secret range.
    raw = {**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ["10.20.30.41/16"]},
                              "aadProfile": {"adminGroupObjectIDs": [GROUP, GROUP.upper()]}}}
    with pytest.raises(SettingsError) as raised:
        parse_settings(raw, "unit", "eastus2", secret_keys={"cluster"}, today=TODAY, environ={})
    text = "\n".join(raised.value.problems)
    assert "has bits set after the prefix; write [secret]" in text and "is listed twice" in text
    assert "10.20" not in text and "0000a1" not in text.lower()


# --- Network ranges the cluster cannot run with ------------------------------------------------------


@pytest.mark.parametrize("network, key, reason", [
    # kube-apiserver gives the first service address to the `kubernetes` Service (ServiceIPRange).
    ({"serviceCidr": "10.0.0.0/16", "dnsServiceIP": "10.0.0.1"}, "dnsServiceIP", "is the first address of serviceCidr"),
    # ... and refuses a service range of fewer than 8 addresses.
    ({"serviceCidr": "10.0.0.0/30", "dnsServiceIP": "10.0.0.2"}, "serviceCidr", "holds 4 address(es)"),
    # Each node takes a /24 of podCidr under Overlay.
    ({"podCidr": "10.244.0.0/25"}, "podCidr", "is smaller than the /24 each node takes from it"),
    ({"podCidr": "10.244.0.0/32"}, "podCidr", "is smaller than the /24"),
    ({"podCidr": "224.0.0.0/4"}, "podCidr", "overlaps 224.0.0.0/4, a special-purpose range"),
    ({"podCidr": "127.0.0.0/16"}, "podCidr", "overlaps 127.0.0.0/8"),
    ({"podCidr": "0.0.0.0/1"}, "podCidr", "overlaps 0.0.0.0/8"),
    ({"serviceCidr": "240.0.0.0/16", "dnsServiceIP": "240.0.0.10"}, "serviceCidr", "overlaps 240.0.0.0/4"),
])
def test_a_network_range_the_cluster_cannot_run_with_is_refused(network, key, reason):
    # Each was accepted, and the cluster broke after `pulumi up` (no node, no DNS, no API server).
    raw = {**GPU, "cluster": {"networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", **network}}}
    problems = problems_of(raw)
    assert any(p.startswith(f"{PROJECT}:cluster.networkProfile.{key}: ") and reason in p for p in problems), problems


@pytest.mark.parametrize("network", [{"podCidr": "10.244.0.0/24"}, {"serviceCidr": "10.0.0.0/29", "dnsServiceIP": "10.0.0.2"},
                                     {"serviceCidr": "10.0.0.0/16", "dnsServiceIP": "10.0.0.2"}])
def test_the_smallest_ranges_that_work_are_taken(network):
    raw = {**GPU, "cluster": {"networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", **network}}}
    assert parse_settings(raw, "unit", "eastus2", today=TODAY, environ={}).cluster.network is not None


@pytest.mark.parametrize("counts, shown", [
    ((0, 1e30), "maxCount: 1e+30; maxCount is above the AKS limit of 1000 nodes per pool"),
    ((0, 10**9), "maxCount is above the AKS limit of 1000 nodes per pool"), ((0, 1001), "maxCount is above"),
    ((0, float("nan")), "maxCount is not a whole number"), ((0, float("inf")), "maxCount is not a whole number"),
    ((0, 2.5), "maxCount is not a whole number of nodes"), ((-5, 3), "minCount is negative"),
    ((float("nan"), 3), "minCount is not a whole number"), ((0, -1), "maxCount is negative"),
])
def test_a_hand_written_agent_pool_s_counts_must_bound_it_too(counts, shown):
    # The same class for AgentPools (and a ManagedCluster's inline profiles): any number passed as a bound.
    pool = {"agentPoolName": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "enableAutoScaling": True,
            "minCount": counts[0], "maxCount": counts[1], "nodeTaints": ["sku=gpu:NoSchedule"]}
    [finding] = check_gpu_node_pool("azure-native:containerservice:AgentPool", pool, RULES[TAINTED_GPU_POOLS])
    assert "is not autoscaled within bounds (" in finding.message and shown in finding.message, finding.message
    pool.update(minCount=0.0, maxCount=1000.0)  # the wire's floats, at AKS's limit
    assert check_gpu_node_pool("azure-native:containerservice:AgentPool", pool, RULES[TAINTED_GPU_POOLS]) == []


# --- Stack files: one key written twice under two spellings --------------------------------------------


@pytest.mark.parametrize("tool", [preview_main, preflight.main])
def test_a_config_key_given_with_and_without_its_namespace_is_refused_with_both_lines(tmp_path, capsys, tool):
    # `gpuPools` is `gpu-aks:gpuPools` in the project's stack file: the later one replaced the earlier
    # without a word, and with it every GPU pool the first declared.
    text = (ROOT / "Pulumi.prod.yaml").read_text() + "  gpuPools:\n    - name: other\n      vmSize: Standard_NC4as_T4_v3\n"
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    first, again = line_of(text, "  gpu-aks:gpuPools:"), line_of(text, "  gpuPools:\n    - name: other")
    assert tool(["prod", "--config-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert f"config key 'gpuPools' is gpu-aks:gpuPools, already given as 'gpu-aks:gpuPools' at line {first}" in err
    assert f":{again}: " in err or f"line {again}: " in err, err
    with pytest.raises(StackFileError) as raised:
        config_from_stack_file(stack_file, PROJECT)
    assert raised.value.line == again


@pytest.mark.parametrize("tags, reason", [
    ({f"k{i}": "v" for i in range(51)}, "has 51 tags; Azure allows at most 50 on a resource"),
    ({"a/b": "v"}, "has the tag name 'a/b': Azure takes 1 to 512 characters without"),
    ({"": "v"}, "has the tag name '': Azure takes 1 to 512"), ({"k" * 513: "v"}, "has the tag name 'kkkk"),
    ({"k": "v" * 257}, "has a value of 257 characters for 'k'; Azure takes at most 256"),
    ({"Env": "a", "env": "b"}, "has the tags 'Env' and 'env', one tag to Azure (tag names are case-insensitive)"),
])
def test_tags_azure_refuses_are_refused_at_preview(tags, reason):
    # Each passed the preview and failed `pulumi up` at the cluster and its resource group.
    [problem] = [p for p in problems_of({**GPU, "cluster": {"tags": tags}}) if p.startswith(f"{PROJECT}:cluster.tags: ")]
    assert reason in problem and len(problem) < 400, problem


@pytest.mark.parametrize("price, taken", [(1e-300, False), (0.123456, False), (0.00001, True), (0.12345, True),
                                          (9999.99999, True), (-1, True)])
def test_a_spot_price_azure_cannot_take_is_refused(price, taken):
    # 1e-300 is positive, so it passed; Azure takes a Spot max price with at most five decimal places.
    raw = {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot",
                         "spotMaxPrice": price}]}
    if taken:
        parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
        return
    [problem] = [p for p in problems_of(raw) if ".spotMaxPrice: " in p]
    assert "with at most 5 decimal places" in problem


def test_thousands_of_cluster_admins_are_read_in_linear_time():
    # Each admin was looked up in a list of those before it: 10,000 took 10 s.
    def prepare(n: int) -> Any:
        admins = [{"objectId": f"00000000-0000-0000-0000-{i:012d}", "principalType": "User"} for i in range(n)]
        raw = {**GPU, "access": {"clusterAdmins": admins}}
        return lambda: parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
    assert growth(prepare, 1_000) < GROWTH_LIMIT
    admins = [{"objectId": GROUP, "principalType": "Group"}, {"objectId": GROUP.upper(), "principalType": "Group"}]
    [problem] = problems_of({**GPU, "access": {"clusterAdmins": admins}})
    assert problem == f"{PROJECT}:access.clusterAdmins[1]: '{GROUP.upper()}' is listed twice"

