"""Declared workload shapes (`workloadShapes`): the engine, its config errors, and the worked example
of docs/workloads.md on a CRD invented for it, in the checker, the explainer and the pack."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import yaml
from gpu_aks_policies.check import main as check_main
from gpu_aks_policies.explain import main as explain_main
from gpu_aks_policies.rule_config import ANALYZABLE, SELECT_GPU_NODES, TOLERATE_GPU_TAINT, WHOLE_GPU_LIMITS, RuleConfigError
from gpu_aks_policies.rules import parse_rule_config
from gpu_aks_policies.workloads import pod_specs_of
from gpu_aks_policies.workloads.shapes import (
    EXAMPLE_OBJECT,
    EXAMPLE_OUTPUT,
    EXAMPLE_SHAPES,
    POD_RULE_NAMES,
    example_config,
    parse_shapes,
)

from components.contract import platform_contract
from components.platform_settings import parse_settings
from tests.helpers import findings

T, L, S, A = TOLERATE_GPU_TAINT, WHOLE_GPU_LIMITS, SELECT_GPU_NODES, ANALYZABLE
FLEET = yaml.safe_load(EXAMPLE_OBJECT)
CONFIGS = parse_rule_config(example_config())


def test_the_example_declares_every_rule_that_judges_pods():
    from gpu_aks_policies.rules import RULES

    assert set(POD_RULE_NAMES) == {name for name, rule in RULES.items() if rule.subject == "pods"}


def test_the_docs_example_gives_the_output_the_docs_show(tmp_path):
    (tmp_path / "fleet.yaml").write_text(EXAMPLE_OBJECT)
    (tmp_path / "fleet-config.json").write_text(json.dumps(example_config()))
    out = io.StringIO()
    import os
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert check_main(["--config", "fleet-config.json", "fleet.yaml"], stdout=out) == 1
    finally:
        os.chdir(cwd)
    heads = [line for line in out.getvalue().splitlines() if not line.startswith("    ")]
    assert heads == EXAMPLE_OUTPUT.splitlines()


def test_without_the_declaration_the_fleet_is_not_evaluated():
    assert [f.path for f in findings(FLEET, T)] == []
    [note] = findings(FLEET, A)
    assert "not evaluated: declare this kind's shape" in note.message and "InferenceFleet (fleet.example.com/v1)" in note.message


def test_the_declared_pods_as_the_shape_places_them():
    router, small, large, warmup = pod_specs_of(FLEET, shapes=CONFIGS[T].workload_shapes)
    assert router.path == "spec.router.podTemplate" and [c.name for c in router.containers] == ["router"]
    assert small.containers[0].name == "server" and small.containers[0].spec["resources"]["limits"] == {
        "memory": "64Gi", "nvidia.com/gpu": "1"}
    assert small.spec["tolerations"][0]["key"] == "sku" and small.path == "spec.shards[0].placement"
    assert large.containers[0].written_at == {("limits", "nvidia.com/gpu"): "spec.shards[1].accelerators"}
    assert warmup.workload == "InferenceFleet pod" and small.workload == "InferenceFleet pods (one per replica)"
    assert all(f.path != "spec" for f in findings(FLEET, A, CONFIGS[A])), "declared: no advisory"


def test_a_declaration_wins_over_a_built_in_adapter():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
        "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
        "gpus": {"count": 1}}}
    configs = parse_rule_config({T: {"workloadShapes": [{"group": "apps", "kind": "Deployment", "pods": [
        {"path": "spec.template.spec.containers[*]", "form": "container", "gpu": "spec.gpus.count",
         "podSpec": "spec.template.spec"}]}]}})
    [pod] = pod_specs_of(deployment, shapes=configs[T].workload_shapes)
    assert pod.containers[0].spec["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert [f.path for f in findings(deployment, T, configs[T])] == ["spec.template.spec.tolerations"]


def test_map_wildcards_and_node_selector_terms():
    shapes = parse_shapes([{"apiVersion": "x.example.com/v1", "kind": "Graph", "pods": [
        {"path": "spec.services.*", "form": "container", "gpu": "spec.services.*.gpus",
         "tolerations": "spec.services.*.tolerations", "nodeSelectorTerms": "spec.services.*.terms"}]}],
        "workloadShapes", lambda where, message: pytest.fail(f"{where}: {message}"))
    graph = {"apiVersion": "x.example.com/v1", "kind": "Graph", "metadata": {"name": "g"}, "spec": {"services": {
        "a": {"gpus": 2, "terms": [{"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}]},
        "b": {"gpus": 0}}}}
    a, b = pod_specs_of(graph, shapes=shapes)
    assert a.containers[0].name == "a" and a.containers[0].spec["resources"]["limits"] == {"nvidia.com/gpu": 2}
    assert a.spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert a.path == "spec.services.a" and a.tolerations_key == "tolerations"


def test_every_declaration_error_names_its_key_and_path():
    shapes = json.loads(EXAMPLE_SHAPES)
    bad: list[Any] = [
        {**shapes[0], "pods": [
            {"path": "spec..x"},
            {"path": "spec.shards[*].server", "form": "container", "gpu": "spec.other[*].n"},
            {"path": "spec.a", "gpu": "spec.a.gpu", "created": "twice", "extra": 1},
            {"path": "spec.b", "form": "sidecar", "tolerations": 3},
            {"form": "container"},
        ]},
        {"kind": "", "pods": []},
        {"apiVersion": "fleet.example.com/v1", "group": "fleet.example.com", "kind": "X", "pods": [{"path": "spec"}]},
        shapes[0], shapes[0],
        "InferenceFleet",
    ]
    with pytest.raises(RuleConfigError) as error:
        parse_rule_config({T: {"workloadShapes": bad}})
    where = f"{T}.workloadShapes"
    assert error.value.problems == [
        f"{where}[0].pods[0].path: 'spec..x' has the segment '': write keys separated by dots, `[*]` after a key for "
        "every entry of a list and `*` for every value of a map (spec.workers[*].template.spec)",
        f"{where}[0].pods[1].gpu: 'spec.other[*].n' uses a wildcard outside its block's path 'spec.shards[*].server'; "
        "write the block's path up to its [*] first",
        f"{where}[0].pods[2].extra: is not a key of a pod block; known: path, form, containerName, gpu, gpuResource, "
        "gpuResourceField, podSpec, tolerations, nodeSelector, affinity, nodeSelectorTerms, created",
        f"{where}[0].pods[2].created: 'twice' is not one of once, perReplica",
        f"{where}[0].pods[2].gpu: is for a block of form container (a pod spec has its own containers); set form: "
        "container or remove it",
        f"{where}[0].pods[3].tolerations: expected a string, got int",
        f"{where}[0].pods[3].form: 'sidecar' is not one of podSpec, container",
        f"{where}[0].pods[4].path: is required: the path of the pod spec or container (spec.template.spec)",
        f"{where}[1].kind: expected the kind's name (InferencePool), got ''",
        f"{where}[1]: names no apiVersion (example.com/v1) or group (example.com)",
        f"{where}[1].pods: expected a non-empty list of pod blocks, got list",
        f"{where}[2]: give apiVersion or group, not both",
        f"{where}[4]: declares InferenceFleet (fleet.example.com) again; {where}[3] already does",
        f"{where}[5]: expected {{apiVersion, kind, pods: [...]}}, got 'InferenceFleet'",
    ]


def test_the_explainer_reads_the_declaration(tmp_path):
    # The example's shard asks for 64 GiB of memory: a Standard_NC16as_T4_v3 node (110 GiB) gives pods that, a
    # Standard_NC4as_T4_v3 (28 GiB) does not (node fit, #48).
    platform = platform_contract(parse_settings({"gpuPools": [{"name": "t4", "vmSize": "Standard_NC16as_T4_v3"}]},
                                                "test", "eastus2"))
    (tmp_path / "outputs.json").write_text(json.dumps(platform))
    (tmp_path / "config.json").write_text(json.dumps(example_config()))
    (tmp_path / "fleet.yaml").write_text(EXAMPLE_OBJECT)
    out = io.StringIO()
    assert explain_main(["--platform", str(tmp_path / "outputs.json"), str(tmp_path / "fleet.yaml")], stdout=out) == 0
    assert "note: not evaluated: declare this kind's shape" in out.getvalue()
    out = io.StringIO()
    code = explain_main(["--platform", str(tmp_path / "outputs.json"), "--config", str(tmp_path / "config.json"),
                         str(tmp_path / "fleet.yaml")], stdout=out)
    text = out.getvalue()
    assert code == 1 and "InferenceFleet/chat: InferenceFleet pods (one per replica) at spec.shards[0].placement asks " \
                          "for 1 nvidia.com/gpu" in text and "lands on: t4" in text
    (tmp_path / "bad.json").write_text(json.dumps({T: {"workloadShapes": [{"kind": "X"}]}}))
    assert explain_main(["--platform", str(tmp_path / "outputs.json"), "--config", str(tmp_path / "bad.json"),
                         str(tmp_path / "fleet.yaml")]) == 2
