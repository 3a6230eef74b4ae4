"""Hostile and careless input: the checker, the explainer, the offline preview and the settings never
hang, crash, lose another file's report or print a secret. Every input is generated here (nothing big
is committed) and sized for CI.

Where a test runs a command with a `timeout`, the timeout only turns a hang into a failure (the
work takes a second or two); speed itself is measured by `benchmarks/`, never asserted here."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from policies import check, explain
from policies.documents import DocumentError, Limits, _nesting_bound, load_json, load_yaml, read_bounded
from policies.podspecs import find_pod_specs
from tests.conftest import ROOT

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
    return run("policies.check", "--format", fmt, *extra, *map(str, paths))


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
    result = run("policies.check", "--max-file-size", "1000", "-", str(bad_pod), stdin=b"# x\n" * 1000)
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
    for module, args in (("policies.explain", ["--platform", str(platform)]), ("policies.check", [])):
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
