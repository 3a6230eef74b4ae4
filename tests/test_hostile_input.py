"""Hostile and careless input: the checker, the explainer, the offline preview and the settings never
hang, crash, lose another file's report or print a secret. Every input is generated here (nothing big
is committed) and sized for CI.

Where a test runs a command with a `timeout`, the timeout only turns a hang into a failure (the
work takes a second or two); speed itself is measured by `benchmarks/`, never asserted here."""

from __future__ import annotations

import cProfile
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from gpu_aks_policies import check, documents, explain
from gpu_aks_policies.admission import (
    DEFAULT_TOLERATIONS_ANNOTATION,
    TOLERATIONS_WHITELIST_ANNOTATION,
    Covers,
    _normal,
    merge_tolerations,
)
from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.documents import DocumentError, Limits, _nesting_bound, load_json, load_yaml, read_bounded
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.podspecs import Toleration, find_pod_specs
from gpu_aks_policies.scheduling import Tolerating, tolerates
from gpu_aks_policies.terminal import BROKEN_PIPE_STATUS, escape_json, escape_text
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tools import doctor

# Most tests run the checker, explainer, doctor or preview as a process, at sizes that prove linearity:
# `make test` and CI run them, `make test-fast` does not.
pytestmark = pytest.mark.slow

HANG_GUARD_S = 120

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  tolerations: [{{key: sku, operator: Exists}}]
  containers:
  - name: c
    image: i
    resources: {{limits: {{nvidia.com/gpu: {amount}}}}}
"""


def pod_yaml(name: str = "p", amount: str = "1") -> str:
    return POD.format(name=name, amount=amount)


def alias_bomb(levels: int = 9, width: int = 9, indent: str = "") -> str:
    """The "billion laughs": each level an anchored list of `width` aliases of the level below, so
    expanding the last one means width**levels leaves from a few hundred bytes."""
    lines = [f'{indent}l0: &l0 [{", ".join(["lol"] * width)}]']
    for level in range(1, levels):
        lines.append(f"{indent}l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def run(module: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, check=False,
                            input=stdin, timeout=HANG_GUARD_S)
    completed = subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode("utf-8", "replace"),
                                            result.stderr.decode("utf-8", "replace"))
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed


def check_files(*paths: Path | str, fmt: str = "text", extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return run("gpu_aks_policies.check", "--format", fmt, *extra, *map(str, paths))


@pytest.fixture
def clean_pod(tmp_path: Path) -> Path:
    path = tmp_path / "clean.yaml"
    path.write_text(pod_yaml("clean"))
    return path


@pytest.fixture
def bad_pod(tmp_path: Path) -> Path:
    """A file with a real violation: the report that must survive every broken neighbour."""
    path = tmp_path / "fractional.yaml"
    path.write_text(pod_yaml("half", '"0.5"'))
    return path


# --- 1. Bounded work --------------------------------------------------------------------------


def test_an_alias_bomb_is_a_small_graph_walked_once():
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\nspec:\n  containers: [{name: c, image: i}]\n" \
           "  nodeSelector: {}\nbomb:\n" + alias_bomb(indent="  ")
    assert len(text.encode()) < 700
    [(_, document)] = load_yaml(text)
    # An alias is the same Python object as its anchor: 81 list nodes, not 9**9 leaves.
    assert document["bomb"]["l8"][0] is document["bomb"]["l7"]
    assert [pod.path for pod in find_pod_specs(document)] == ["spec"]


def test_an_alias_bomb_in_a_manifest_gets_its_verdict(tmp_path, bad_pod):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(pod_yaml("bomb", '"0.5"') + "  bomb:\n" + alias_bomb(indent="    "))
    result = check_files(bomb, bad_pod)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Pod/bomb [mandatory] gpu-limits-are-whole-numbers" in result.stdout
    assert "Pod/half [mandatory] gpu-limits-are-whole-numbers" in result.stdout


def test_expanding_callers_stop_at_the_node_cap():
    with pytest.raises(DocumentError, match="once aliases are expanded"):
        load_yaml(alias_bomb(), Limits(max_nodes=100_000), expanded=True)


def test_a_recursive_alias_is_an_input_error(tmp_path, bad_pod):
    recursive = tmp_path / "recursive.yaml"
    recursive.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: r}\nspec: &s\n  containers: [*s]\n")
    result = check_files(recursive, bad_pod)
    assert result.returncode == 2
    assert f"{recursive}:1: error: a recursive alias: a node contains itself" in result.stdout
    assert "Pod/half [mandatory]" in result.stdout


@pytest.mark.parametrize(("name", "text", "line"), [
    ("flow-1000.yaml", "[" * 1000 + "]" * 1000, 1),
    ("flow-100k.yaml", "a: " + "[" * 100_000 + "]" * 100_000, 1),
    ("block-1000.yaml", "".join("  " * i + "a:\n" for i in range(1000)), 257),
    ("nested-1000.json", "[" * 1000 + "]" * 1000, 1),
    ("nested-100k.json", '{"a": ' * 100_000 + "1" + "}" * 100_000, 1),
])
def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path, bad_pod, name, text, line):
    deep = tmp_path / name
    deep.write_text(text)
    result = check_files(deep, bad_pod)
    assert result.returncode == 2
    assert f"{deep}:{line}: error: nested more than 256 levels deep" in result.stdout
    assert "Pod/half [mandatory]" in result.stdout


def _depth(value: object) -> int:
    stack, deepest = [(value, 1)], 0
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


NESTED = st.recursive(st.none() | st.integers() | st.text(alphabet="ab[]{}:-?#'\" \n", max_size=4),
                      lambda children: st.lists(children, max_size=3) | st.dictionaries(
                          st.text(alphabet="ab[]{}:- ", max_size=3), children, max_size=3), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(NESTED, st.sampled_from([True, False, None]), st.integers(2, 5))
def test_the_cheap_nesting_bound_is_never_below_the_real_depth(value, flow, indent):
    """Whether the exact (event) walk runs rests on this bound: it must never underestimate."""
    text = yaml.safe_dump(value, default_flow_style=flow, indent=indent)
    assert _nesting_bound(text) >= _depth(value)


@pytest.mark.parametrize(("text", "depth"), [
    ("- - - - a\n", 4),
    ("a:\n- b:\n  - c:\n    - d\n", 6),
    ("? - a\n: - b\n", 2),
    ("[a: [b: [c: d]]]\n", 6),
    ("x: |\n  ]]]]\ny: [[[1]]]\n", 4),
    ("--- [[[\n]]]\n--- {a: {b: 1}}\n", 3),
])
def test_the_nesting_bound_covers_compact_and_flow_forms(text, depth):
    level = deepest = 0
    for event in yaml.parse(text):  # the parser's own view, which also takes collections as keys
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            level += 1
            deepest = max(deepest, level)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            level -= 1
    assert deepest == depth
    assert _nesting_bound(text) >= depth


def test_nesting_just_under_the_cap_is_read():
    text = "[" * 200 + "]" * 200
    assert load_yaml(text)[0][0] == 1 and load_json(text) is not None


def test_walks_are_iterative_and_see_past_a_decoy_containers_list():
    deep: dict = {"name": "leaf"}
    for _ in range(5000):  # far past Python's recursion limit
        deep = {"next": deep}
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "spec": {
        "containers": [{"name": "decoy"}],
        "template": {"spec": {"containers": [{"name": "real", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}},
        "deep": deep}}
    assert sorted(pod.path for pod in find_pod_specs(obj)) == ["spec", "spec.template.spec"]


def test_100k_documents_in_one_file_are_all_checked_with_their_lines(tmp_path):
    many = tmp_path / "many.yaml"
    count = 100_000
    many.write_text("".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n" for i in range(count - 1))
                    + "---\n" + pod_yaml("last", '"0.5"'))
    result = check_files(many, fmt="json")
    report = json.loads(result.stdout)
    assert report["checked"] == count and result.returncode == 1
    [violation] = [v for v in report["violations"] if v["policy"] == "gpu-limits-are-whole-numbers"]
    # The document starts on line 4 * (count - 1) + 2; its `limits` key is on the pod's ninth line.
    assert (violation["doc"], violation["line"]) == (count - 1, 4 * (count - 1) + 2 + 8)


def test_the_file_size_cap_is_configurable(tmp_path, bad_pod):
    big = tmp_path / "big.yaml"
    big.write_text(pod_yaml("big") + "# padding\n" * 2000)
    size = big.stat().st_size
    result = check_files(big, bad_pod, extra=("--max-file-size", "4096"))
    assert result.returncode == 2
    assert f"{big}:0: error: {size} bytes, over the 4096-byte limit" in result.stdout
    assert "Pod/half [mandatory]" in result.stdout
    assert check_files(big, extra=("--max-file-size", str(size))).returncode == 0


def test_the_size_cap_holds_for_standard_input(bad_pod):
    result = run("gpu_aks_policies.check", "--max-file-size", "1000", "-", str(bad_pod), stdin=b"# x\n" * 1000)
    assert result.returncode == 2 and "<stdin>:0: error: larger than the 1000-byte limit" in result.stdout


# --- 2. Documented errors, every report kept ---------------------------------------------------


@pytest.fixture
def broken_inputs(tmp_path: Path) -> list[Path]:
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 1000 + "]" * 1000)
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to(tmp_path / "gone.yaml")
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text("kind: Pod\nspec: [unclosed\n")
    return [latin1, deep, dangling, invalid]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_every_format_keeps_the_other_files_report(broken_inputs, bad_pod, fmt):
    result = check_files(*broken_inputs, bad_pod, fmt=fmt)
    assert result.returncode == 2
    if fmt == "text":
        assert "Pod/half [mandatory] gpu-limits-are-whole-numbers" in result.stdout
        assert result.stdout.count(": error: ") == len(broken_inputs)
    elif fmt == "json":
        report = json.loads(result.stdout)
        assert [v["name"] for v in report["violations"] if v["level"] == "mandatory"] == ["half"]
        assert sorted(e["file"] for e in report["errors"]) == sorted(map(str, broken_inputs))
    else:
        results = json.loads(result.stdout)["runs"][0]["results"]
        assert sum(r["ruleId"] == "input-error" for r in results) == len(broken_inputs)
        assert any(r["ruleId"] == "gpu-limits-are-whole-numbers" for r in results)
    if fmt == "text":
        lines = {broken_inputs[0]: 3, broken_inputs[1]: 1, broken_inputs[2]: 0, broken_inputs[3]: 2}
        for path, line in lines.items():
            assert f"{path}:{line}: error: " in result.stdout


def test_non_utf8_names_the_byte_and_line(broken_inputs):
    result = check_files(broken_inputs[0])
    assert f"{broken_inputs[0]}:3: error: not UTF-8 text: byte 0xe9 at offset 51 cannot be decoded" in result.stdout


def test_lone_surrogates_and_undecodable_file_names_print(tmp_path, bad_pod):
    surrogate = tmp_path / "surrogate.json"
    surrogate.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x\\ud800"}, "spec": {"containers": '
                         '[{"name": "c\\udc00", "resources": {"limits": {"nvidia.com/gpu": 0.5}}}]}}')
    odd_name = os.fsencode(tmp_path) + b"/caf\xe9.yaml"
    with open(odd_name, "wb") as stream:
        stream.write(pod_yaml("odd", '"0.5"').encode())
    for fmt in ("text", "json", "sarif"):
        result = check_files(tmp_path, fmt=fmt)
        assert result.returncode == 1, result.stderr
        assert "\\ud800" in result.stdout and ("caf\\udce9" in result.stdout or "caf\\xe9" in result.stdout)


def test_a_symlink_loop_is_not_followed_twice(tmp_path, bad_pod):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "pod.yaml").write_text(bad_pod.read_text())
    (tree / "sub" / "loop").symlink_to(tree, target_is_directory=True)
    (tree / "again").symlink_to(tree / "sub", target_is_directory=True)
    result = check_files(tree, fmt="json")
    report = json.loads(result.stdout)
    assert report["checked"] == 1 and len([v for v in report["violations"] if v["level"] == "mandatory"]) == 1


def test_an_unreadable_file_is_an_input_error(tmp_path, bad_pod, monkeypatch):
    unreadable = tmp_path / "secret-perms.yaml"
    unreadable.write_text(pod_yaml("hidden"))
    unreadable.chmod(0)
    if os.geteuid() != 0:
        result = check_files(unreadable, bad_pod)
        assert result.returncode == 2 and f"{unreadable}:0: error: cannot read: Permission denied" in result.stdout
        return
    # root reads anything: make the open fail as it does for everyone else.
    real_open = os.open

    def refusing_open(file, *args, **kwargs):
        if os.fspath(file) == str(unreadable):
            raise PermissionError(13, "Permission denied", str(unreadable))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    report = check.check_paths([str(unreadable), str(bad_pod)], check.load_config(None))
    assert [(e.file, e.line, e.message) for e in report.errors] == [(str(unreadable), 0, "cannot read: Permission denied")]
    assert report.exit_code == 2 and len(report.violations) >= 1


def test_documents_that_are_not_objects_are_input_errors_and_never_exit_1(tmp_path):
    odd = tmp_path / "odd.yaml"
    odd.write_text("--- just a string\n--- [1, 2]\n--- 42\n")
    result = check_files(odd)
    assert result.returncode == 2 and result.stdout.count(": error: ") == 3


# --- 3. Quantities of any size ----------------------------------------------------------------


@pytest.mark.parametrize("amount", ["9" * 5000, '"9' + "9" * 4999 + '"', '"1.' + "0" * 5000 + '1"', "1e400", '"1e999999999"'])
def test_huge_gpu_amounts_get_a_readable_violation(tmp_path, amount):
    pod = tmp_path / "huge.yaml"
    pod.write_text(pod_yaml("huge", amount))
    result = check_files(pod)
    assert result.returncode == 1, result.stderr
    [message] = [line for line in result.stdout.splitlines() if line.startswith("    ") and "limits.nvidia.com/gpu" in line]
    assert len(message) < 400


# --- 4. Config --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("- config\n", "the stack file is a list; it must be a mapping with a 'config' key"),
    ("config: [1, 2]\n", "'config' must be a map of keys to values"),
    ("config:\n  azure-native:location: eastus2\n  ? [a, b]\n  : 1\n", "found unhashable key"),
    ("config:\n  azure-native:location: eastus2\n  5: x\n", "config key 5 is not a string"),
    ("config:\n  azure-native:location: eastus2\n  gpu-aks:cluster: " + "[" * 300 + "]" * 300 + "\n",
     "nested more than 64 levels deep"),
    ("anchors:\n" + alias_bomb(levels=8, indent="  ") + "config:\n  azure-native:location: eastus2\n"
     "  gpu-aks:cluster: {tags: {t: *l7}}\n", "once aliases are expanded (an alias bomb?)"),
])
def test_broken_stack_files_exit_2_naming_the_problem(tmp_path, text, expected):
    stack_file = tmp_path / "Pulumi.hostile.yaml"
    stack_file.write_text(text)
    assert len(text.encode()) < 1000 or "[[[" in text
    result = run("tools.preview", "hostile", "--config-file", str(stack_file))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {stack_file}:") and expected in result.stderr


@pytest.mark.parametrize("config_text", ["[]", '"mandatory"', '{"gpu-pods-tolerate-gpu-taint": [1]}', "{"])
def test_a_policy_config_that_is_not_a_mapping_exits_2(tmp_path, bad_pod, config_text):
    config = tmp_path / "policy-config.json"
    config.write_text(config_text)
    checked = check_files(bad_pod, extra=("--config", str(config)))
    previewed = run("tools.preview", "dev", "--policy-pack-config", str(config))
    for result in (checked, previewed):
        assert result.returncode == 2 and str(config) in result.stderr, result.stderr


# --- 5. Secrets -------------------------------------------------------------------------------


def test_the_explainer_never_echoes_a_secrets_lines(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: hunter2-SUPERSECRET\n"
                      "  token: [unclosed\n")
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps({"gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {},
                                                         "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}))
    for module, args in (("gpu_aks_policies.explain", ["--platform", str(platform)]), ("gpu_aks_policies.check", [])):
        result = run(module, *args, str(secret))
        assert result.returncode == 2
        assert "SUPERSECRET" not in result.stdout + result.stderr and "hunter2" not in result.stdout + result.stderr
        assert f"{secret}:6: error: invalid YAML" in result.stdout + result.stderr


def test_the_explainer_reads_directories_and_stdin_and_keeps_going(tmp_path, bad_pod, broken_inputs):
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps({"gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {},
                                                         "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}))
    out = io.StringIO()
    code = explain.main(["--platform", str(platform), str(broken_inputs[1]), "-"], stdin=io.BytesIO(bad_pod.read_bytes()),
                        stdout=out)
    assert code == 2 and "half" in out.getvalue()


def test_yaml_errors_never_quote_the_line():
    with pytest.raises(DocumentError) as error:
        load_yaml("a: 1\npassword: 'hunter2\n")
    assert "hunter2" not in error.value.message
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("password: 'hunter2\n")  # PyYAML itself would quote it


def test_an_endless_stream_is_cut_at_the_limit_and_a_grown_file_is_read_whole():
    with pytest.raises(DocumentError, match="larger than the 1000-byte limit"):
        read_bounded(io.BytesIO(b"\0" * 5000), Limits(max_bytes=1000))
    # A regular file that grew after its size was taken: what was read first is kept.
    assert read_bounded(io.BytesIO(b" world"), Limits(max_bytes=100), start=b"hello") == "hello world"
    with pytest.raises(DocumentError, match="larger than the 8-byte limit"):
        read_bounded(io.BytesIO(b" world"), Limits(max_bytes=8), start=b"hello")


def test_every_tool_names_the_file_it_cannot_read(tmp_path, capsys):
    directory = tmp_path / "outputs.json"
    directory.mkdir()
    assert check.main(["--platform", str(directory), str(tmp_path)]) == 2
    assert f"error: {directory}: not a regular file (a directory)" in capsys.readouterr().err
    previewed = run("tools.preview", "dev", "--policy-pack-config", str(directory))
    assert previewed.returncode == 2 and f"{directory}: not a regular file (a directory)" in previewed.stderr


# --- Round 3 (issue 19): one test per class, each failing on the code before it --------------
#
# Quadratic paths are counted, not timed: the function calls (Python's and the built-ins', as cProfile
# counts them) the same work makes at n and at 4n; a linear path makes about 4x as many, a quadratic
# one 16x. A count does not move with the machine: CPU-time ratios did (a CI run once measured 8.07x
# for a path that measures 3.9x to 4.4x). What a count cannot see is work inside one built-in call (a
# list's `in`, `str.find`): a test for such a path counts that work itself (the bytes scanned, the
# items looked at). Speed belongs in benchmarks/.

GROWTH_LIMIT = 8.0


def calls_made(work: Callable[[], object]) -> int:
    """How many function calls `work()` makes, built-ins included (cProfile's count)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        work()
    finally:
        profiler.disable()
    return sum(entry.callcount for entry in profiler.getstats())


def growth(prepare: Callable[[int], Callable[[], object]], n: int) -> float:
    """How many times the calls at n the same work makes at 4n (inputs built outside the count)."""
    small, large = prepare(n), prepare(4 * n)
    small(), large()  # warm caches and imports, which the counts then leave out
    return calls_made(large) / max(calls_made(small), 1)


def test_growth_counts_tell_quadratic_from_linear_work():
    def pairs(n: int) -> Callable[[], object]:
        items = list(range(n))
        return lambda: [abs(a - b) for a in items for b in items]

    def singles(n: int) -> Callable[[], object]:
        items = list(range(n))
        return lambda: [abs(a) for a in items]

    assert growth(pairs, 50) > GROWTH_LIMIT
    assert growth(singles, 50) < GROWTH_LIMIT
    assert calls_made(singles(50)) == calls_made(singles(50))  # a count, not a measurement: the same each time


def _tolerations(prefix: str, count: int) -> list[dict[str, object]]:
    return [{"key": f"{prefix}{i}.example.com/t", "operator": "Equal", "value": f"v{i}", "effect": "NoSchedule"}
            for i in range(count)]


def _namespaced_pod(tolerations: list[dict[str, object]], annotations: dict[str, str]) -> list[dict[str, object]]:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "annotations": annotations}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "many", "namespace": "team"},
           "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "i", "resources": {
               "limits": {"nvidia.com/gpu": 1, "cpu": "1"}}}]}}
    return [namespace, pod]


PLATFORM_T4 = {"contractVersion": 2, "gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {"accelerator": "nvidia"},
                                                         "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}


def _checker_and_explainer(objects: list[dict[str, object]]) -> Callable[[], object]:
    loaded = [check.LoadedObject("generated.yaml", index, 1, obj) for index, obj in enumerate(objects)]
    configs = check.load_config(None)
    platform = platform_from_outputs(PLATFORM_T4)

    def work() -> None:
        check.check_objects(loaded, configs, platform)
        explain.explain_all(objects, platform)
    return work


def test_namespace_default_tolerations_merge_in_linear_time():
    # Each default is new to the pod: the API server's MergeTolerations compares every pair.
    def prepare(n: int) -> Callable[[], object]:
        defaults = json.dumps(_tolerations("d", n))
        return _checker_and_explainer(_namespaced_pod(_tolerations("p", n), {DEFAULT_TOLERATIONS_ANNOTATION: defaults}))
    assert growth(prepare, 400) < GROWTH_LIMIT


def test_a_long_toleration_whitelist_is_checked_in_linear_time():
    # No entry of the whitelist covers any of the pod's tolerations: every pair is looked at today.
    def prepare(n: int) -> Callable[[], object]:
        whitelist = json.dumps(_tolerations("w", n))
        return _checker_and_explainer(_namespaced_pod(_tolerations("p", n), {TOLERATIONS_WHITELIST_ANNOTATION: whitelist}))
    assert growth(prepare, 400) < GROWTH_LIMIT


def test_the_doctor_finds_each_pools_nodes_in_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        pools = {f"p{i}": {"taints": [], "labels": {}, "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1, "minCount": 0}
                 for i in range(n)}
        platform = platform_from_outputs({"gpuPools": pools})
        nodes = [{"metadata": {"name": f"n{i}", "labels": {POOL_LABEL: f"p{i % n}"}},
                  "status": {"allocatable": {"nvidia.com/gpu": "1"}, "conditions": [{"type": "Ready", "status": "True"}]}}
                 for i in range(5 * n)]
        return lambda: doctor.diagnose(platform, nodes, [])
    assert growth(prepare, 200) < GROWTH_LIMIT


def test_a_finding_under_a_key_of_thousands_of_dots_is_located_in_linear_time(tmp_path):
    # A key may hold dots (`nvidia.com/gpu`), so every run of parts of a finding's path is a
    # candidate key: cut from a path of thousands of dots, they once made the lookup quadratic.
    def pod_file(n: int) -> Path:
        pod = tmp_path / f"dots-{n}.yaml"
        pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                       "    image: i\n    resources:\n      limits:\n"
                       f"        ? nvidia.com/mig-{'a.' * n}x\n        : 500m\n")
        return pod

    def prepare(n: int) -> Callable[[], object]:
        pod, configs = pod_file(n), check.load_config(None)
        return lambda: check.check_paths([str(pod)], configs)
    # At 2,000 dots one check takes a fraction of a millisecond, where noise gave ratios near the
    # limit; at 10,000 a linear lookup gives about 3.4 and the quadratic one it guards against over 16.
    assert growth(prepare, 10_000) < GROWTH_LIMIT
    # No key that long is a Kubernetes name: the finding is located at the mapping that holds it.
    report = check.check_paths([str(pod_file(10))], check.load_config(None))
    assert {(v.policy, v.line) for v in report.violations} >= {("gpu-limits-are-whole-numbers", 10)}
    report = check.check_paths([str(pod_file(5000))], check.load_config(None))
    assert {(v.policy, v.line) for v in report.violations} >= {("gpu-limits-are-whole-numbers", 9)}


def test_a_key_that_looks_like_a_huge_list_index_is_checked(tmp_path):
    # `[` followed by more digits than Python converts: never read as an index, never a traceback.
    pod = tmp_path / "index.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                   f"    image: i\n    resources:\n      limits:\n        ? 'nvidia.com/mig-x[{'1' * 4301}]'\n"
                   "        : '500m'\n")
    result = check_files(pod, fmt="json")
    assert result.returncode == 1, result.stderr
    assert "gpu-limits-are-whole-numbers" in {v["policy"] for v in json.loads(result.stdout)["violations"]}


def test_a_short_read_is_read_on_to_the_end(tmp_path, monkeypatch):
    # Linux returns at most 2 GiB from one read(2); any read may return less than asked.
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("a: 1\n" * 1000)
    real_read = documents.os.read
    monkeypatch.setattr(documents.os, "read", lambda descriptor, size: real_read(descriptor, min(size, 100)))
    assert documents.read_file(str(manifest)) == "a: 1\n" * 1000


def test_duplicate_platform_taints_are_removed_in_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        pools = {f"p{i}": {"taints": [f"k{i}=v:NoSchedule", "sku=gpu:NoSchedule"], "labels": {},
                           "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1} for i in range(n)}
        platform = platform_from_outputs({"gpuPools": pools})
        return platform.gpu_taints
    assert growth(prepare, 1500) < GROWTH_LIMIT


def _struct(x: dict) -> tuple:
    """A toleration as the Go struct holds it: an absent field is its zero value."""
    return (x.get("key") or "", x.get("operator") or "", x.get("value") or "", x.get("effect") or "",
            x.get("tolerationSeconds"))


def _reference_superset(ss: dict, t: dict) -> bool:
    """`isSuperset` of kubernetes `pkg/util/tolerations/tolerations.go`, transcribed pair by pair."""
    norm = _struct
    if norm(ss) == norm(t):
        return True
    (ss_key, ss_op, ss_value, ss_effect, ss_seconds), (t_key, t_op, t_value, t_effect, t_seconds) = norm(ss), norm(t)
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect != "":
        return False
    if ss_effect == "NoExecute" and ss_seconds is not None and (t_seconds is None or t_seconds > ss_seconds):
        return False
    if ss_op in ("Equal", ""):
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"


def _reference_merge(first: list, second: list) -> list:
    """`MergeTolerations`, quadratic as the API server runs it."""
    everything, merged = [*first, *second], []
    for index, item in enumerate(everything):
        if any(_reference_superset(kept.toleration, item.toleration) for kept in merged):
            continue
        if any(_struct(later.toleration) != _struct(item.toleration)
               and _reference_superset(later.toleration, item.toleration)
               for later in everything[index + 1:]):
            continue
        merged.append(item)
    return merged


_TOLERATION = st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(["", "a", "b"]), "operator": st.sampled_from(["", "Equal", "Exists", "Other"]),
    "value": st.sampled_from(["", "1", "2"]), "effect": st.sampled_from(["", "NoSchedule", "NoExecute"]),
    "tolerationSeconds": st.one_of(st.none(), st.integers(0, 3))})


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOLERATION, max_size=7), st.lists(_TOLERATION, max_size=7))
def test_linear_merging_and_whitelisting_answer_as_the_api_server(first, second):
    pod = [Toleration(t, "pod") for t in first]
    defaults = [Toleration(t, "namespace") for t in second]
    assert merge_tolerations(pod, defaults) == _reference_merge(pod, defaults)
    allowed = Covers(_normal(w) for w in second)
    for toleration in first:
        assert allowed.covers(_normal(toleration)) == any(_reference_superset(w, toleration) for w in second)


# Class 2: merge keys count in the alias budget.


def merge_chain(levels: int, indent: str = "") -> str:
    """Each mapping merges the one before it and adds a key: expanding them copies levels**2 / 2
    entries from a file of a few dozen bytes a level."""
    lines = [f"{indent}m0: &m0 {{k0: 0}}"]
    lines += [f"{indent}m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_merge_keys_are_expanded_within_the_alias_budget(tmp_path, bad_pod):
    chain = tmp_path / "chain.yaml"
    chain.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chain}\ndata:\n" + merge_chain(2500, "  "))
    assert len(chain.read_bytes()) < 100_000
    result = check_files(chain, bad_pod)
    assert result.returncode == 2
    assert f"{chain}:" in result.stdout and "entries once merge keys (<<) are expanded (a merge bomb?)" in result.stdout
    assert "Pod/half [mandatory] gpu-limits-are-whole-numbers" in result.stdout
    # Stack files are read with aliases expanded: the same budget holds there.
    with pytest.raises(DocumentError, match="merge keys"):
        load_yaml("config:\n" + merge_chain(2500, "  "), expanded=True)


def test_merge_keys_read_as_yaml_and_go_yaml_read_them():
    text = ("base: &b {x: 1, y: 2}\nmore: &m {y: 3, z: 4}\nown: {<<: [*b, *m], y: 9}\nfirst: {<<: [*b, *m]}\n"
            "c: &c {<<: *b, v: 5}\nchained: {<<: *c, w: 0}\n")
    [(_, document)] = load_yaml(text)
    assert document == yaml.safe_load(text)
    assert document["own"]["y"] == 9 and document["first"]["y"] == 2 and document["chained"] == {"x": 1, "y": 2, "v": 5, "w": 0}
    with pytest.raises(DocumentError, match="merges a mapping into itself"):
        load_yaml("a: &a {<<: *a}\n")


# Class 3: no tag or scalar crashes the parser.

SECRET = "hunter2-S3CRET"


@pytest.mark.parametrize(("scalar", "problem"), [
    (f"!!float {SECRET}", "a value tagged !!float is not a number"),
    (f"!!bool {SECRET}", "a value tagged !!bool is not true or false"),
    (f"!!timestamp {SECRET}", "a value tagged !!timestamp is not a date or time"),
    (f"!{SECRET} x", "a tag this reader does not know"),
    (f"!!python/object:{SECRET} x", "a tag this reader does not know"),
])
@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_tags_that_do_not_fit_are_input_errors_that_never_quote_the_value(tmp_path, bad_pod, scalar, problem, fmt):
    secret = tmp_path / "secret.yaml"
    secret.write_text(f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\nstringData:\n  password: {scalar}\n")
    result = check_files(secret, bad_pod, fmt=fmt)
    assert result.returncode == 2, result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert problem in result.stdout
    if fmt == "text":
        assert f"{secret}:5: error: invalid YAML, column 13: {problem}" in result.stdout
        assert "Pod/half [mandatory] gpu-limits-are-whole-numbers" in result.stdout
    else:
        json.loads(result.stdout)


def test_the_explainer_reports_a_bad_tag_and_keeps_going(tmp_path, bad_pod):
    secret = tmp_path / "secret.yaml"
    secret.write_text(f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\nstringData:\n  password: !!float {SECRET}\n")
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    result = run("gpu_aks_policies.explain", "--platform", str(platform), str(secret), str(bad_pod))
    assert result.returncode == 2 and SECRET not in result.stdout + result.stderr
    assert f"{secret}:5: error: invalid YAML" in result.stderr and "Pod/half" in result.stdout


def test_a_bad_tag_in_a_stack_file_is_a_preview_input_error(tmp_path):
    stack_file = tmp_path / "Pulumi.hostile.yaml"
    stack_file.write_text(f"config:\n  azure-native:location: eastus2\n  gpu-aks:password: !!bool {SECRET}\n")
    result = run("tools.preview", "hostile", "--config-file", str(stack_file))
    assert result.returncode == 2 and SECRET not in result.stdout + result.stderr
    assert f"{stack_file}:3:" in result.stderr and "!!bool is not true or false" in result.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_timestamp_lookalikes_stay_strings_as_kubernetes_keeps_them(tmp_path, fmt):
    pod = tmp_path / "dates.yaml"
    pod.write_text(pod_yaml("p", '"0.5"').replace("metadata: {name: p}", "metadata:\n  name: 2023-02-30\n  labels: "
                                                   "{at: T25:00:00Z, ok: 2023-02-28, when: 2001-12-14t21:59:43.10-05:00}"))
    [(_, document)] = load_yaml(pod.read_text())
    assert document["metadata"] == {"name": "2023-02-30", "labels": {
        "at": "T25:00:00Z", "ok": "2023-02-28", "when": "2001-12-14t21:59:43.10-05:00"}}
    result = check_files(pod, fmt=fmt)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    if fmt != "text":
        assert "2023-02-30" in result.stdout and json.loads(result.stdout)


@pytest.mark.parametrize("amount", ["0x" + "f" * 4000, "0b" + "1" * 14100, "0" + "7" * 4290, "-0x" + "9" * 3600,
                                    "1" + ":59" * 2000])
def test_integers_of_any_base_too_long_to_print_get_a_readable_violation(tmp_path, amount):
    pod = tmp_path / "huge.yaml"
    pod.write_text(pod_yaml("huge", amount))
    result = check_files(pod)
    assert result.returncode == 1, result.stdout + result.stderr
    [message] = [line for line in result.stdout.splitlines() if line.startswith("    ") and "limits.nvidia.com/gpu" in line]
    assert len(message) < 400


def test_raw_control_bytes_name_their_line_and_reason(tmp_path, bad_pod):
    control = tmp_path / "control.yaml"
    control.write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xc3\xa9}\ndata: {a: \"x\x07y\"}\n")
    result = check_files(control, bad_pod)
    assert result.returncode == 2
    assert (f"{control}:4: error: invalid YAML: control characters are not allowed (0x07); YAML allows tab, line "
            "breaks and printable characters") in result.stdout


# Class 4: files that are not regular files.

FIFO_GUARD_S = 60


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "outputs.json"
    os.mkfifo(path)
    return path


def run_guarded(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A command that must not wait on a FIFO: the guard turns a hang into a failure."""
    result = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=FIFO_GUARD_S, check=False)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize(("module", "option"), [
    ("gpu_aks_policies.check", "--platform"), ("gpu_aks_policies.check", "--config"), ("gpu_aks_policies.explain", "--platform"),
    ("tools.doctor", "--platform"), ("tools.doctor", "--nodes"), ("tools.doctor", "--pods"),
    ("tools.preview", "--policy-pack-config"),
])
def test_a_fifo_given_as_an_option_is_refused_without_blocking(tmp_path, fifo, bad_pod, module, option):
    platform = tmp_path / "platform.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    nodes = tmp_path / "nodes.json"
    nodes.write_text('{"items": []}')
    args = {"gpu_aks_policies.check": [option, str(fifo), str(bad_pod)],
            "gpu_aks_policies.explain": [option, str(fifo), str(bad_pod)],
            "tools.doctor": ["--platform", str(platform), "--nodes", str(nodes), "--pods", str(nodes), option, str(fifo)],
            "tools.preview": ["dev", option, str(fifo)]}[module]
    result = run_guarded(module, *args)
    assert result.returncode == 2
    assert f"{fifo}: not a regular file (a FIFO)" in result.stderr


def test_special_files_in_a_directory_and_as_paths_are_reported(tmp_path, bad_pod):
    folder = tmp_path / "manifests"
    folder.mkdir()
    os.mkfifo(folder / "pipe.yaml")
    (folder / "zero.yaml").symlink_to("/dev/zero")
    (folder / "null.yml").symlink_to("/dev/null")
    (folder / "gone.yaml").symlink_to(folder / "nothing-here.yaml")
    shutil.copy(bad_pod, folder / "bad.yaml")
    fifo = tmp_path / "given.yaml"
    os.mkfifo(fifo)
    result = run_guarded("gpu_aks_policies.check", str(folder), "/dev/zero", str(fifo))
    assert result.returncode == 2
    for path, why in ((folder / "pipe.yaml", "not a regular file (a FIFO)"),
                      (folder / "zero.yaml", "not a regular file (a character device)"),
                      (folder / "null.yml", "not a regular file (a character device)"),
                      (folder / "gone.yaml", "a dangling symbolic link"),
                      ("/dev/zero", "not a regular file (a character device)"),
                      (fifo, "not a regular file (a FIFO)")):
        assert f"{path}:0: error: {why}" in result.stdout, result.stdout
    assert "Pod/half [mandatory] gpu-limits-are-whole-numbers" in result.stdout


# Class 5: text output cannot be steered by the input.

HOSTILE_NAME = "a\x1b[2J\x1b[Hb\r\n::error file=x::ALL CLEAN\u2028##[error]forged\x9b\x7f\u202e"


def assert_inert(text: str) -> None:
    """No control character, no line a GitHub Actions runner would run as a command."""
    assert not any(ord(char) < 32 and char != "\n" or 0x7f <= ord(char) <= 0x9f or char in "\u2028\u2029\u202e"
                   for char in text), repr(text)
    for line in text.splitlines():
        assert not line.lstrip().startswith("::") and "##[" not in line, line


def test_names_from_the_input_cannot_steer_the_checkers_output(tmp_path):
    pod = tmp_path / "hostile.yaml"
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": HOSTILE_NAME},
                               "spec": {"containers": [{"name": HOSTILE_NAME, "image": "i",
                                                        "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}}))
    text = check_files(pod)
    assert text.returncode == 1
    assert_inert(text.stdout)
    # The name stays on its line: its newline is `\\n`, so `::error` starts no line.
    assert "Pod/a\\x1b[2J\\x1b[Hb\\x0d\\n::error file=x::ALL CLEAN\\u2028##\\x5berror]forged\\x9b\\x7f\\u202e" in text.stdout
    for fmt in ("json", "sarif"):
        result = check_files(pod, fmt=fmt)
        assert "##[" not in result.stdout and "\x1b" not in result.stdout
        document = json.loads(result.stdout)  # still valid, and the name reads back exactly
        names = [v["name"] for v in document["violations"]] if fmt == "json" else \
            [r["message"]["text"] for r in document["runs"][0]["results"]]
        assert any(HOSTILE_NAME in name for name in names)


def test_names_from_the_input_cannot_steer_the_explainer_or_the_doctor(tmp_path):
    pod = tmp_path / "hostile.yaml"
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": HOSTILE_NAME},
                               "spec": {"containers": [{"name": "c", "image": "i",
                                                        "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}))
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    explained = run("gpu_aks_policies.explain", "--platform", str(platform), str(pod))
    assert HOSTILE_NAME[:1] in explained.stdout
    assert_inert(explained.stdout + explained.stderr)
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"items": [{"metadata": {"name": HOSTILE_NAME, "labels": {POOL_LABEL: "t4"}}, "status": {
        "conditions": [{"type": "Ready", "status": "False", "reason": HOSTILE_NAME},
                       {"type": "XIDErrors", "status": "True", "message": HOSTILE_NAME}]}}]}))
    pods = tmp_path / "pods.json"
    pods.write_text('{"items": []}')
    diagnosed = run("tools.doctor", "--platform", str(platform), "--nodes", str(nodes), "--pods", str(pods))
    assert diagnosed.returncode == 1
    assert_inert(diagnosed.stdout + diagnosed.stderr)
    as_json = run("tools.doctor", "--platform", str(platform), "--nodes", str(nodes), "--pods", str(pods), "--json")
    assert "##[" not in as_json.stdout
    assert json.loads(as_json.stdout)["pools"][0]["nodes"][0]["name"] == HOSTILE_NAME


def test_a_file_name_cannot_steer_the_output(tmp_path):
    folder = tmp_path / "\n::add-mask::x"
    folder.mkdir()
    (folder / "##[error]x.yaml").write_text(pod_yaml("p", '"0.5"'))
    result = check_files(folder)
    assert result.returncode == 1
    assert_inert(result.stdout)


@pytest.mark.parametrize(("text", "escaped"), [
    ("\x1b[31mred", "\\x1b[31mred"), ("a\rb", "a\\x0db"), ("\x00\x7f\x85\x9f", "\\x00\\x7f\\x85\\x9f"),
    ("x\u2028y\u2029z", "x\\u2028y\\u2029z"), ("::error::x", "\\x3a:error::x"), ("  \t::warning::x", "  \\x09::warning::x"),
    ("  ::set-output name=a::b", "  \\x3a:set-output name=a::b"), ("\u3000::debug::x", "\u3000\\x3a:debug::x"),
    ("say ##[error]x", "say ##\\x5berror]x"), ("#\u200b#[error]", "#\\u200b#[error]"), ("ok: a::b", "ok: a::b"),
    ("line\n::stop-commands::t", "line\n\\x3a:stop-commands::t"), ("\ud800", "\\ud800"),
])
def test_escape_text_neutralises_every_form(text, escaped):
    assert escape_text(text) == escaped
    assert_inert(escape_text(text))


def test_escape_json_keeps_the_data_and_shows_no_command():
    data = {"name": "##[error]x\n::error::y", "other": ["##[", "#"]}
    shown = escape_json(json.dumps(data, indent=2))
    assert "##[" not in shown and json.loads(shown) == data


# Class 7: an outputs contract of an unknown version is refused.


@pytest.mark.parametrize("version", [99, '"banana"', "null", "true"])
def test_an_unknown_contract_version_is_refused_everywhere(tmp_path, bad_pod, version):
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4).replace('"contractVersion": 2', f'"contractVersion": {version}'))
    empty = tmp_path / "empty.json"
    empty.write_text('{"items": []}')
    for module, args in (("gpu_aks_policies.check", ["--platform", str(platform), str(bad_pod)]),
                         ("gpu_aks_policies.explain", ["--platform", str(platform), str(bad_pod)]),
                         ("tools.doctor", ["--platform", str(platform), "--nodes", str(empty), "--pods", str(empty)])):
        result = run(module, *args)
        assert result.returncode == 2, (module, result.stdout)
        assert f"{platform}: contractVersion" in result.stderr and "is not a version this release reads; it reads 1, 2" \
            in result.stderr


# Issue 20, item 3: the checker as a new user met it.


def test_every_problem_of_a_pod_is_reported_at_once_with_the_platform(tmp_path):
    pod = tmp_path / "tgi.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: tgi}\nspec:\n  nodeSelector: {accelerator: h100}\n"
                   "  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n  containers:\n"
                   "  - name: tgi\n    image: ghcr.io/huggingface/text-generation-inference\n    resources:\n"
                   "      requests: {nvidia.com/gpu: 1}\n")
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    report = json.loads(check_files(pod, fmt="json", extra=("--platform", str(platform))).stdout)
    policies = {v["policy"] for v in report["violations"]}
    assert {"gpu-limits-are-whole-numbers", "gpu-pods-fit-a-pool"} <= policies, policies
    [fit] = [v for v in report["violations"] if v["policy"] == "gpu-pods-fit-a-pool"]
    assert "even once the API server accepts it" in fit["message"]
    assert "not t4:\n  - its nodeSelector needs accelerator=h100, but the pool's nodes have accelerator=nvidia" \
        in fit["message"]


def test_a_violation_points_at_its_field_in_every_format(tmp_path):
    pod = tmp_path / "pod.yaml"
    # The document starts on line 2; the offending amount is on line 12, column 9.
    pod.write_text("# leading comment\n" + pod_yaml("p", '"0.5"').replace(
        "    resources: {limits: {nvidia.com/gpu: \"0.5\"}}\n",
        "    resources:\n      limits:\n        nvidia.com/gpu: \"0.5\"\n"))
    report = json.loads(check_files(pod, fmt="json").stdout)
    [whole] = [v for v in report["violations"] if v["policy"] == "gpu-limits-are-whole-numbers"]
    assert whole["path"] == "spec.containers[0].resources.limits.nvidia.com/gpu"
    assert (whole["line"], whole["column"]) == (12, 9)
    sarif = json.loads(check_files(pod, fmt="sarif").stdout)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "gpu-limits-are-whole-numbers"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 9}
    text = check_files(pod).stdout
    assert f"{pod}:12 (document 0) Pod/p [mandatory] gpu-limits-are-whole-numbers at {whole['path']}:" in text


def test_a_duplicate_key_is_reported_with_both_lines(tmp_path, bad_pod):
    pod = tmp_path / "twice.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: twice}\nspec:\n  containers:\n  - name: c\n"
                   "    image: first\n    image: second\n")
    result = check_files(pod, bad_pod)
    assert result.returncode == 2
    assert (f"{pod}:8: error: duplicate key 'image' (first at line 7): the API server's strict field validation "
            "refuses it") in result.stdout
    assert "Pod/half [mandatory]" in result.stdout
    with pytest.raises(DocumentError, match="duplicate key 'a'"):
        load_yaml("a: 1\na: 2\n")  # stack files: go-yaml v3 refuses them too


def test_a_reader_that_stops_early_ends_the_checker_quietly(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(300):
        (folder / f"p{index}.yaml").write_text(pod_yaml(f"p{index}", '"0.5"'))
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    for module, extra in (("gpu_aks_policies.check", []), ("gpu_aks_policies.explain", ["--platform", str(platform)])):
        command = subprocess.Popen([sys.executable, "-m", module, *extra, str(folder)], cwd=ROOT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert command.stdout is not None and command.stdout.readline()
        command.stdout.close()  # what `| head -1` does after its line
        _, errors = command.communicate(timeout=HANG_GUARD_S)
        assert b"Traceback" not in errors and b"BrokenPipe" not in errors, errors
        assert command.returncode == BROKEN_PIPE_STATUS


_TAINT = st.fixed_dictionaries({"key": st.sampled_from(["a", "b"]), "value": st.sampled_from(["", "1", "2"]),
                                "effect": st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"])})


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOLERATION, max_size=7), _TAINT)
def test_the_toleration_lookup_answers_as_tolerates_taint(tolerations, taint):
    items = [Toleration(t, "written in the pod spec" if i % 2 else "added") for i, t in enumerate(tolerations)]
    by = [index for index, item in enumerate(items) if tolerates(item.toleration, taint)]
    first, written = Tolerating((item.toleration, item.source == "written in the pod spec") for item in items).first(taint)
    assert first == (by[0] if by else None)
    assert written == any(items[index].source == "written in the pod spec" for index in by)


def test_a_pod_with_many_tolerations_against_many_pools_is_explained_in_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        pools = {f"p{i}": {"taints": [f"k{i}.example.com/t=v:NoSchedule"], "labels": {}, "gpuResource": "nvidia.com/gpu",
                           "gpusPerNode": 1} for i in range(n)}
        platform = platform_from_outputs({"gpuPools": pools})
        pod = _namespaced_pod(_tolerations("p", n), {})[1]
        return lambda: explain.explain_all([pod], platform)
    assert growth(prepare, 150) < GROWTH_LIMIT
