"""The checker (`gpu-aks-check`) under hostile input: every file's report kept, every format, names from the
input that cannot steer its output, huge or malformed amounts as readable violations.

The module they pin: `policies/check.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_policies import check
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT
from gpu_aks_policies.terminal import BROKEN_PIPE_STATUS

from tests.conftest import ROOT
from tests.inputs import HANG_GUARD_S, HOSTILE_NAME, PLATFORM_T4, assert_inert, check_files, pod_yaml, run


def _many_gpu_containers(tmp_path: Path, n: int) -> list[Any]:
    path = tmp_path / f"pod{n}.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": f"c{i}", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}} for i in range(n)]}}))
    return check.check_paths([str(path)], check.load_config(None)).violations


HUGE = "1" + "0" * 400


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize("amount", ["9" * 5000, '"9' + "9" * 4999 + '"', '"1.' + "0" * 5000 + '1"', "1e400", '"1e999999999"'])
def test_huge_gpu_amounts_get_a_readable_violation(tmp_path, amount):
    pod = tmp_path / "huge.yaml"
    pod.write_text(pod_yaml("huge", amount))
    result = check_files(pod)
    assert result.returncode == 1, result.stderr
    [message] = [line for line in result.stdout.splitlines() if line.startswith("    ") and "limits.nvidia.com/gpu" in line]
    assert len(message) < 400


@pytest.mark.slow
@pytest.mark.parametrize("config_text", ["[]", '"mandatory"', '{"gpu-pods-tolerate-gpu-taint": [1]}', "{"])
def test_a_policy_config_that_is_not_a_mapping_exits_2(tmp_path, bad_pod, config_text):
    config = tmp_path / "policy-config.json"
    config.write_text(config_text)
    checked = check_files(bad_pod, extra=("--config", str(config)))
    previewed = run("tools.preview", "dev", "--policy-pack-config", str(config))
    for result in (checked, previewed):
        assert result.returncode == 2 and str(config) in result.stderr, result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("amount", ["0x" + "f" * 4000, "0b" + "1" * 14100, "0" + "7" * 4290, "-0x" + "9" * 3600,
                                    "1" + ":59" * 2000])
def test_integers_of_any_base_too_long_to_print_get_a_readable_violation(tmp_path, amount):
    pod = tmp_path / "huge.yaml"
    pod.write_text(pod_yaml("huge", amount))
    result = check_files(pod)
    assert result.returncode == 1, result.stdout + result.stderr
    [message] = [line for line in result.stdout.splitlines() if line.startswith("    ") and "limits.nvidia.com/gpu" in line]
    assert len(message) < 400


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_file_name_cannot_steer_the_output(tmp_path):
    folder = tmp_path / "\n::add-mask::x"
    folder.mkdir()
    (folder / "##[error]x.yaml").write_text(pod_yaml("p", '"0.5"'))
    result = check_files(folder)
    assert result.returncode == 1
    assert_inert(result.stdout)


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def test_a_pod_of_thousands_of_gpu_containers_gets_a_bounded_finding(tmp_path):
    # The toleration finding named every container: 4.4 MB of message for 100,000 of them.
    small = {v.policy: len(v.message) for v in _many_gpu_containers(tmp_path, 500)}
    large = {v.policy: len(v.message) for v in _many_gpu_containers(tmp_path, 2_000)}
    assert large[TOLERATE_GPU_TAINT] <= small[TOLERATE_GPU_TAINT] + 10 < 3000, (small, large)
    [message] = [v.message for v in _many_gpu_containers(tmp_path, 7) if v.policy == TOLERATE_GPU_TAINT]
    assert "container 'c4' asks for nvidia.com/gpu and 2 more" in message


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
