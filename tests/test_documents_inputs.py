"""Bounded YAML and JSON reading (`gpu_aks_policies.documents`) under hostile input: alias bombs, nesting,
sizes, line ends, keys written twice, tags, special files; every problem an input error with its file and
line, in time linear in the input.

The module they pin: `policies/documents.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_aks_policies import check, documents
from gpu_aks_policies.documents import DocumentError, Limits, SourceIndex, _nesting_bound, load_json, load_yaml, read_bounded
from gpu_aks_policies.podspecs import find_pod_specs
from gpu_aks_policies.rules import parse_rule_config
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.inputs import (
    GROWTH_LIMIT,
    HANG_GUARD_S,
    PLATFORM_T4,
    SECRET,
    alias_bomb,
    check_files,
    checked,
    growth,
    line_of,
    pod_yaml,
    run,
)
from tools.preview import PREVIOUS_OUTPUTS_LIMITS


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


# Class 2: merge keys count in the alias budget.


def merge_chain(levels: int, indent: str = "") -> str:
    """Each mapping merges the one before it and adds a key: expanding them copies levels**2 / 2
    entries from a file of a few dozen bytes a level."""
    lines = [f"{indent}m0: &m0 {{k0: 0}}"]
    lines += [f"{indent}m{i}: &m{i} {{<<: *m{i - 1}, k{i}: {i}}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


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


#: The line breaks PyYAML and libyaml count (YAML 1.1): CR LF once, and CR, LF, NEL, LS, PS alone.
READER_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


def reader_line(text: str, needle: str, occurrence: int = 0) -> int:
    position = -1
    for _ in range(occurrence + 1):
        position = text.index(needle, position + 1)
    return len(READER_BREAK.split(text[:position]))


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


def gpu_pod(limit: Any = 1, **container: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", **container,
                                     "resources": {"limits": {"nvidia.com/gpu": limit}}}]}}


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


def _peak_bytes(work: Any) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_an_alias_bomb_is_a_small_graph_walked_once():
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\nspec:\n  containers: [{name: c, image: i}]\n" \
           "  nodeSelector: {}\nbomb:\n" + alias_bomb(indent="  ")
    assert len(text.encode()) < 700
    [(_, document)] = load_yaml(text)
    # An alias is the same Python object as its anchor: 81 list nodes, not 9**9 leaves.
    assert document["bomb"]["l8"][0] is document["bomb"]["l7"]
    assert [pod.path for pod in find_pod_specs(document)] == ["spec"]


@pytest.mark.slow
def test_an_alias_bomb_in_a_manifest_gets_its_verdict(tmp_path, bad_pod):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(pod_yaml("bomb", '"0.5"') + "  bomb:\n" + alias_bomb(indent="    "))
    result = check_files(bomb, bad_pod)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Pod/bomb [mandatory] gpu-limits-are-whole-numbers" in result.stdout
    assert "Pod/half [mandatory] gpu-limits-are-whole-numbers" in result.stdout


@pytest.mark.slow
def test_expanding_callers_stop_at_the_node_cap():
    with pytest.raises(DocumentError, match="once aliases are expanded"):
        load_yaml(alias_bomb(), Limits(max_nodes=100_000), expanded=True)


@pytest.mark.slow
def test_a_recursive_alias_is_an_input_error(tmp_path, bad_pod):
    recursive = tmp_path / "recursive.yaml"
    recursive.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: r}\nspec: &s\n  containers: [*s]\n")
    result = check_files(recursive, bad_pod)
    assert result.returncode == 2
    assert f"{recursive}:1: error: a recursive alias: a node contains itself" in result.stdout
    assert "Pod/half [mandatory]" in result.stdout


@pytest.mark.slow
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


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(NESTED, st.sampled_from([True, False, None]), st.integers(2, 5))
def test_the_cheap_nesting_bound_is_never_below_the_real_depth(value, flow, indent):
    """Whether the exact (event) walk runs rests on this bound: it must never underestimate."""
    text = yaml.safe_dump(value, default_flow_style=flow, indent=indent)
    assert _nesting_bound(text) >= _depth(value)


@pytest.mark.slow
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


@pytest.mark.slow
def test_nesting_just_under_the_cap_is_read():
    text = "[" * 200 + "]" * 200
    assert load_yaml(text)[0][0] == 1 and load_json(text) is not None


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_file_size_cap_is_configurable(tmp_path, bad_pod):
    big = tmp_path / "big.yaml"
    big.write_text(pod_yaml("big") + "# padding\n" * 2000)
    size = big.stat().st_size
    result = check_files(big, bad_pod, extra=("--max-file-size", "4096"))
    assert result.returncode == 2
    assert f"{big}:0: error: {size} bytes, over the 4096-byte limit" in result.stdout
    assert "Pod/half [mandatory]" in result.stdout
    assert check_files(big, extra=("--max-file-size", str(size))).returncode == 0


@pytest.mark.slow
def test_the_size_cap_holds_for_standard_input(bad_pod):
    result = run("gpu_aks_policies.check", "--max-file-size", "1000", "-", str(bad_pod), stdin=b"# x\n" * 1000)
    assert result.returncode == 2 and "<stdin>:0: error: larger than the 1000-byte limit" in result.stdout


@pytest.mark.slow
def test_non_utf8_names_the_byte_and_line(broken_inputs):
    result = check_files(broken_inputs[0])
    assert f"{broken_inputs[0]}:3: error: not UTF-8 text: byte 0xe9 at offset 51 cannot be decoded" in result.stdout


@pytest.mark.slow
def test_a_symlink_loop_is_not_followed_twice(tmp_path, bad_pod):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "pod.yaml").write_text(bad_pod.read_text())
    (tree / "sub" / "loop").symlink_to(tree, target_is_directory=True)
    (tree / "again").symlink_to(tree / "sub", target_is_directory=True)
    result = check_files(tree, fmt="json")
    report = json.loads(result.stdout)
    assert report["checked"] == 1 and len([v for v in report["violations"] if v["level"] == "mandatory"]) == 1


@pytest.mark.slow
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


@pytest.mark.slow
def test_documents_that_are_not_objects_are_input_errors_and_never_exit_1(tmp_path):
    odd = tmp_path / "odd.yaml"
    odd.write_text("--- just a string\n--- [1, 2]\n--- 42\n")
    result = check_files(odd)
    assert result.returncode == 2 and result.stdout.count(": error: ") == 3


@pytest.mark.slow
def test_yaml_errors_never_quote_the_line():
    with pytest.raises(DocumentError) as error:
        load_yaml("a: 1\npassword: 'hunter2\n")
    assert "hunter2" not in error.value.message
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("password: 'hunter2\n")  # PyYAML itself would quote it


@pytest.mark.slow
def test_an_endless_stream_is_cut_at_the_limit_and_a_grown_file_is_read_whole():
    with pytest.raises(DocumentError, match="larger than the 1000-byte limit"):
        read_bounded(io.BytesIO(b"\0" * 5000), Limits(max_bytes=1000))
    # A regular file that grew after its size was taken: what was read first is kept.
    assert read_bounded(io.BytesIO(b" world"), Limits(max_bytes=100), start=b"hello") == "hello world"
    with pytest.raises(DocumentError, match="larger than the 8-byte limit"):
        read_bounded(io.BytesIO(b" world"), Limits(max_bytes=8), start=b"hello")


@pytest.mark.slow
def test_every_tool_names_the_file_it_cannot_read(tmp_path, capsys):
    directory = tmp_path / "outputs.json"
    directory.mkdir()
    assert check.main(["--platform", str(directory), str(tmp_path)]) == 2
    assert f"error: {directory}: not a regular file (a directory)" in capsys.readouterr().err
    previewed = run("tools.preview", "dev", "--policy-pack-config", str(directory))
    assert previewed.returncode == 2 and f"{directory}: not a regular file (a directory)" in previewed.stderr


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_key_that_looks_like_a_huge_list_index_is_checked(tmp_path):
    # `[` followed by more digits than Python converts: never read as an index, never a traceback.
    pod = tmp_path / "index.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                   f"    image: i\n    resources:\n      limits:\n        ? 'nvidia.com/mig-x[{'1' * 4301}]'\n"
                   "        : '500m'\n")
    result = check_files(pod, fmt="json")
    assert result.returncode == 1, result.stderr
    assert "gpu-limits-are-whole-numbers" in {v["policy"] for v in json.loads(result.stdout)["violations"]}


@pytest.mark.slow
def test_a_short_read_is_read_on_to_the_end(tmp_path, monkeypatch):
    # Linux returns at most 2 GiB from one read(2); any read may return less than asked.
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("a: 1\n" * 1000)
    real_read = documents.os.read
    monkeypatch.setattr(documents.os, "read", lambda descriptor, size: real_read(descriptor, min(size, 100)))
    assert documents.read_file(str(manifest)) == "a: 1\n" * 1000


@pytest.mark.slow
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


@pytest.mark.slow
def test_merge_keys_read_as_yaml_and_go_yaml_read_them():
    text = ("base: &b {x: 1, y: 2}\nmore: &m {y: 3, z: 4}\nown: {<<: [*b, *m], y: 9}\nfirst: {<<: [*b, *m]}\n"
            "c: &c {<<: *b, v: 5}\nchained: {<<: *c, w: 0}\n")
    [(_, document)] = load_yaml(text)
    assert document == yaml.safe_load(text)
    assert document["own"]["y"] == 9 and document["first"]["y"] == 2 and document["chained"] == {"x": 1, "y": 2, "v": 5, "w": 0}
    with pytest.raises(DocumentError, match="merges a mapping into itself"):
        load_yaml("a: &a {<<: *a}\n")


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_raw_control_bytes_name_their_line_and_reason(tmp_path, bad_pod):
    control = tmp_path / "control.yaml"
    control.write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xc3\xa9}\ndata: {a: \"x\x07y\"}\n")
    result = check_files(control, bad_pod)
    assert result.returncode == 2
    assert (f"{control}:4: error: invalid YAML: control characters are not allowed (0x07); YAML allows tab, line "
            "breaks and printable characters") in result.stdout


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_json_manifest_with_a_huge_array_is_read_in_linear_time(tmp_path):
    from tests.inputs import GROWTH_LIMIT, growth

    def prepare(n: int) -> Any:
        path = tmp_path / f"array{n}.json"
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "image": "i", "args": [[i, str(i), {"k": i}] for i in range(n)],
             "resources": {"limits": {"nvidia.com/gpu": "1500m"}}}]}}
        path.write_text(json.dumps(pod, indent=1))
        return lambda: check.check_paths([str(path)], check.load_config(None))
    assert growth(prepare, 50_000) < GROWTH_LIMIT


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


@pytest.mark.parametrize("aliases", [1, 300])
def test_an_aliased_resource_manifest_is_parsed_once(tmp_path, monkeypatch, aliases):
    # Each alias of the template parsed the manifest again: 300 aliases of a 200 kB manifest parsed
    # 60 MB of YAML.
    from gpu_aks_policies import check
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


@pytest.mark.parametrize("body", ["k" * 2_000_000, "\\n" * 1_000_000, "\\u00e9x" * 300_000],
                         ids=["plain", "escapes", "unicode escapes"])
@pytest.mark.parametrize("indexed", [False, True], ids=["record", "manifest"])
def test_a_long_json_string_costs_about_its_own_size(body, indexed):
    # `"(?:[^"\\]|\\.)*"` kept a backtracking entry per character: 230 MB for this 2 MB string.
    text = json.dumps({"kubeconfig": None, "deep": [[[[]]]] * 30}).replace("null", f'"{body}"')
    assert text.count("[") + text.count("{") > PREVIOUS_OUTPUTS_LIMITS.max_depth, "brackets enough to scan the nesting"
    # As `--previous-outputs` reads a record (no index), and as the checker reads a JSON manifest.
    peak = _peak_bytes(lambda: load_json(text, index=SourceIndex()) if indexed else
                       load_json(text, PREVIOUS_OUTPUTS_LIMITS))
    assert peak < 4 * len(text), (peak, len(text))


def test_a_long_json_string_is_still_located_and_its_duplicates_found():
    index = SourceIndex()
    text = '{\n"a": "' + "\\\"{" * 100_000 + '",\n"b": {"c": 1},\n"b": 2}'
    document = load_json(text, index=index)
    assert document["b"] == 2 and len(document["a"]) == 200_000
    [duplicate] = index.duplicates
    assert duplicate.line == 4 and "line 3" in duplicate.message, duplicate
