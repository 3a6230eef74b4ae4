"""Objects created from YAML reach the pack as ordinary typed resources: proven with
`yaml.ConfigFile` and `yaml.ConfigGroup` under the mock runtime (their `kubernetes:yaml:decode` call is
answered by the mocks, exactly as the provider would parse the text)."""

from __future__ import annotations

from pathlib import Path

import pulumi_kubernetes as k8s

from offline.mockrun import run_pulumi
from tools.preview import analyze

SEEDS = Path(__file__).parent / "manifests" / "seeds"


def test_config_file_and_group_children_are_typed_and_checked():
    def program() -> None:
        k8s.yaml.ConfigFile("mnist", file=str(SEEDS / "aks-mnist-job.yaml"))
        k8s.yaml.ConfigGroup("seeds", files=[str(SEEDS / "generic-gpu-pod.yaml"), str(SEEDS / "kubeflow-gpu-op.yaml")])

    run = run_pulumi(program, "yaml")
    assert run.error is None, run.error
    assert any(call.token == "kubernetes:yaml:decode" for call in run.calls)
    custom = {(r.type, r.name) for r in run.resources if r.custom}
    assert custom == {("kubernetes:batch/v1:Job", "samples-tf-mnist-demo"),
                      ("kubernetes:core/v1:Pod", "gpu-pod"), ("kubernetes:core/v1:Pod", "gpu-op")}
    # The toleration rule runs per stack (AnalyzeStack), the rest per resource: the offline preview's
    # `analyze` drives both exactly as the engine does.
    names = {resource.urn: resource.name for resource in run.resources}
    verdicts: dict[str, list[str]] = {name: [] for name in names.values()}
    for diagnostic in analyze(run, None):
        if diagnostic.level == "mandatory":
            verdicts[names[diagnostic.urn]].append(diagnostic.policy)
    assert verdicts["samples-tf-mnist-demo"] == []
    assert verdicts["gpu-pod"] == ["gpu-pods-tolerate-gpu-taint"]
    assert verdicts["gpu-op"] == ["gpu-pods-tolerate-gpu-taint"]
