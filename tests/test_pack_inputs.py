"""What the policy pack tells the Pulumi CLI, under hostile resources.

The module they pin: `policies/pack.py`. Each test failed on the code before its fix."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS

from offline.analyzer import PolicyPackProcess
from tests.inputs import RULES

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
