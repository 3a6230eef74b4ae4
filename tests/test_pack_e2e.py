"""The policy pack over its real gRPC Analyzer interface, started exactly as the Pulumi CLI starts it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from policies.rule_config import CONFIG_SCHEMAS, DEFAULT_LEVELS
from tools.analyzer import PolicyPackProcess, wire_struct

SEEDS = Path(__file__).parent / "manifests" / "seeds"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
POD = "kubernetes:core/v1:Pod"


@pytest.fixture(scope="module")
def pack():
    with PolicyPackProcess() as process:
        yield process


def seed(name: str) -> dict:
    return yaml.safe_load((SEEDS / name).read_text())


def test_analyzer_info_lists_every_policy_with_its_level_and_schema(pack):
    info = pack.info()
    assert info.name == "gpu-aks-policies" and info.supportsConfig
    policies = {p.name: p for p in info.policies}
    assert set(policies) == set(DEFAULT_LEVELS)
    levels = {name: policy.enforcementLevel for name, policy in policies.items()}
    assert levels == {"gpu-pods-tolerate-gpu-taint": 1, "gpu-limits-are-whole-numbers": 1,
                      "gpu-pods-select-gpu-nodes": 0, "gpu-node-pools-are-tainted": 1,
                      "device-plugin-tolerates-gpu-pools": 1}
    for name, properties in CONFIG_SCHEMAS.items():
        assert set(policies[name].configSchema.properties) == set(properties)
    taints = policies["gpu-pods-tolerate-gpu-taint"].configSchema.properties["gpuTaints"]
    assert taints["default"][0] == {"key": "sku", "value": "gpu", "effect": "NoSchedule"}


def test_defaults_apply_when_configure_was_never_sent(pack):
    diagnostics = pack.analyze(POD, "gpu-pod", seed("generic-gpu-pod.yaml"))
    assert [(d.policy, d.level) for d in diagnostics] == [("gpu-pods-tolerate-gpu-taint", "mandatory")]
    assert "Pod 'gpu-pod': container 'gpu-container' asks for nvidia.com/gpu" in diagnostics[0].message
    assert "tolerations:\n  - key: sku\n    operator: Equal\n    value: gpu" in diagnostics[0].message


def test_numbers_arrive_as_floats_and_whole_ones_pass(pack):
    job = seed("aks-mnist-job.yaml")
    struct = wire_struct(job)
    limits = struct["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert isinstance(limits["nvidia.com/gpu"], float) and limits["nvidia.com/gpu"] == 1.0
    diagnostics = pack.analyze("kubernetes:batch/v1:Job", "mnist", struct)
    assert [(d.policy, d.level) for d in diagnostics] == [("gpu-pods-select-gpu-nodes", "advisory")]


def test_fractional_gpu_is_mandatory_violation(pack):
    pod = copy.deepcopy(seed("aks-mnist-job.yaml"))
    pod["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 0.5
    policies = [d.policy for d in pack.analyze("kubernetes:batch/v1:Job", "half", pod) if d.level == "mandatory"]
    assert policies == ["gpu-limits-are-whole-numbers"]


def test_custom_resources_and_patches_are_checked(pack):
    ray = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc"}, "spec": {
        "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray"}]}}},
        "workerGroupSpecs": [{"groupName": "gpu", "template": {"spec": {
            "containers": [{"name": "worker", "image": "ray", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}]}}
    diagnostics = pack.analyze("kubernetes:ray.io/v1:RayCluster", "rc", ray)
    assert "gpu-pods-tolerate-gpu-taint" in {d.policy for d in diagnostics}
    assert "spec.workerGroupSpecs[0].template.spec" in diagnostics[0].message
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1500m"}}}]}}}}
    assert "gpu-limits-are-whole-numbers" in {d.policy for d in pack.analyze("kubernetes:apps/v1:DeploymentPatch", "p", patch)}


def test_unknown_values_during_preview_are_advisory_and_say_where(pack):
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": UNKNOWN_STRING}}}],
        "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        "nodeSelector": {"accelerator": "nvidia"}}}
    [diagnostic] = pack.analyze(POD, "u", pod)
    assert diagnostic.policy == "gpu-limits-are-whole-numbers" and diagnostic.level == "advisory"
    assert "can't run policy 'gpu-limits-are-whole-numbers'" in diagnostic.message
    assert ".spec.containers.0.resources.limits.nvidia.com/gpu can't be known during preview" in diagnostic.message


def test_azure_gpu_pool_rule(pack):
    pool = {"agentPoolName": "gpunp", "vmSize": "Standard_NC24ads_A100_v4", "enableAutoScaling": True,
            "minCount": 3.0, "maxCount": 1.0, "nodeTaints": []}
    diagnostics = pack.analyze("azure-native:containerservice:AgentPool", "gpunp", pool)
    messages = [d.message for d in diagnostics if d.policy == "gpu-node-pools-are-tainted"]
    assert len(messages) == 2
    assert any("has minCount 3 above maxCount 1" in m for m in messages)


def test_configure_with_a_non_default_taint_then_stack_analysis(pack):
    flyte_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    pack.configure({
        "gpu-pods-tolerate-gpu-taint": {"enforcementLevel": "mandatory", "gpuTaints": flyte_taint},
        "gpu-pods-select-gpu-nodes": {"enforcementLevel": "disabled"},
        "gpu-node-pools-are-tainted": {"enforcementLevel": "mandatory", "gpuTaints": flyte_taint},
        "gpu-limits-are-whole-numbers": {"enforcementLevel": "mandatory"},
        "device-plugin-tolerates-gpu-pools": {"enforcementLevel": "mandatory"},
    })
    try:
        assert pack.analyze(POD, "flyte", seed("flyte-plain-gpu.yaml")) == []
        [diagnostic] = pack.analyze(POD, "mnist-style", seed("generic-gpu-pod.yaml"))
        assert "nvidia.com/gpu=present:NoSchedule" in diagnostic.message

        pool_props = {"agentPoolName": "gput4", "vmSize": "Standard_NC4as_T4_v3", "enableAutoScaling": True,
                      "minCount": 0.0, "maxCount": 2.0, "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]}
        plugin = seed("aks-device-plugin-ds.yaml")
        pool_urn = "urn:pulumi:dev::gpu-aks::azure-native:containerservice:AgentPool::gput4"
        plugin_urn = "urn:pulumi:dev::gpu-aks::kubernetes:apps/v1:DaemonSet::plugin"
        resources = [(pool_urn, "azure-native:containerservice:AgentPool", "gput4", pool_props),
                     (plugin_urn, "kubernetes:apps/v1:DaemonSet", "plugin", plugin)]
        assert pack.analyze_stack(resources) == [], "the seed's DaemonSet tolerates nvidia.com/gpu Exists"
        plugin["spec"]["template"]["spec"]["tolerations"] = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
        [diagnostic] = pack.analyze_stack(resources)
        assert diagnostic.policy == "device-plugin-tolerates-gpu-pools" and diagnostic.urn == pool_urn
        assert "does not tolerate nvidia.com/gpu=present:NoSchedule" in diagnostic.message
    finally:
        pack.configure({})


def test_every_resource_of_the_dev_program_passes_the_pack(pack, dev_run):
    for resource in dev_run.resources:
        diagnostics = pack.analyze(resource.type, resource.name, wire_struct(resource.wire_inputs), resource.urn)
        assert [d for d in diagnostics if d.level == "mandatory"] == [], resource.type
    stack = [(r.urn, r.type, r.name, wire_struct(r.outputs)) for r in dev_run.resources if r.custom]
    assert pack.analyze_stack(stack) == []
