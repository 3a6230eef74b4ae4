"""Hostile input on the surfaces 0.3 added: JSON manifests, the component provider, the production
stack keys, the preflight's `az` answers, the clock override, the generated CEL, and names that
flow into Prometheus rules, the dashboard and the generated docs.

Every input is generated here. The standard is the one of `test_hostile_input.py`: no hang, no
traceback, no superlinear growth (the work at 4n against n, `growth`), no secret printed, no
terminal or CI-log injection, nothing lost. Speed itself is measured by `benchmarks/`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_policies import check
from gpu_aks_policies.documents import DocumentError, SourceIndex, load_json
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.test_hostile_input import GROWTH_LIMIT, HANG_GUARD_S, growth


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
