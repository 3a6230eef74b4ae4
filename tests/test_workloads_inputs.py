"""Workload adapters and declared shapes under hostile objects: bounded walks, verdicts instead of tracebacks.

The module they pin: `policies/workloads/`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_policies import check, explain
from gpu_aks_policies.podspecs import find_pod_specs
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT
from gpu_aks_policies.workloads.shapes import MAX_PLACES, ShapeReachError, expand, parse_path

from tests.helpers import findings
from tests.inputs import GROWTH_LIMIT, PLATFORM_T4, growth
from tests.test_nap_settings import _problems, _with


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


class _CountingText(str):
    """A str that counts the characters its `find` calls examine."""

    examined = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        found = super().find(sub, start, end)
        begin = start or 0
        _CountingText.examined += (found + len(sub) if found != -1 else len(self)) - begin
        return found


@pytest.mark.slow
def test_walks_are_iterative_and_see_past_a_decoy_containers_list():
    deep: dict = {"name": "leaf"}
    for _ in range(5000):  # far past Python's recursion limit
        deep = {"next": deep}
    obj = {"apiVersion": "example.com/v1", "kind": "Thing", "spec": {
        "containers": [{"name": "decoy"}],
        "template": {"spec": {"containers": [{"name": "real", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}},
        "deep": deep}}
    assert sorted(pod.path for pod in find_pod_specs(obj)) == ["spec", "spec.template.spec"]


def test_an_ephemeral_container_never_asks_for_a_gpu():
    # The API server refuses resources on an ephemeral container, and neither ExtendedResourceToleration
    # nor the generated CEL counts one: the Python rule demanded a toleration the CEL did not.
    pod = {"kind": "Pod", "apiVersion": "v1", "spec": {"containers": [{"name": "app", "image": "x"}],
                                                       "ephemeralContainers": [{"name": "debug", "image": "x",
                                                                                "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    assert findings(pod, TOLERATE_GPU_TAINT) == []


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


@pytest.mark.parametrize("text", ["{{" * 50_000, "{{ a }}" * 20_000 + "{{" * 20_000, "}}{{x" * 30_000])
def test_expression_markers_are_found_in_one_pass(text):
    # `\{\{.*?\}\}` scanned to the end at every unclosed `{{`: 50,000 of them took minutes.
    from gpu_aks_policies.workloads import argo

    _CountingText.examined = 0
    argo._marked(_CountingText(text))
    assert _CountingText.examined <= 2 * len(text) + 4, (_CountingText.examined, len(text))


@pytest.mark.parametrize("text", ["", "{{", "}}", "{{}}", "a{{b}}c{{d", "{{{{x}}}}", "{{a}}}}{{b}}", "x{{\n}}y{{z}}",
                                  "{{ a }} {{ b }", "{}{{}{}}"])
def test_expression_markers_are_the_regex_s(text):

    from gpu_aks_policies.workloads import argo

    regex = re.compile(r"\{\{.*?\}\}", re.DOTALL)
    assert argo._marked(text) == regex.sub(argo.EXPRESSION_MARKER, text)
    assert argo._has_expression_in(text) == bool(regex.search(text))
