"""A NAP NodePool that shares its GPUs (#38): `gpuNodePools[].sharing` is declared as `gpuPools[].sharing`
is, gpu-aks's device plugin serves the NodePool's nodes with NVIDIA's config (a DaemonSet of its own,
pinned by the pool label every node of the NodePool carries, reading `CONFIG_FILE`: NVIDIA/k8s-device-plugin
v0.20.0 `cmd/nvidia-device-plugin/main.go`, `api/config/v1`), and the contract, the explainer and the app
helper read the shares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_aks_app import GpuRequest, place
from gpu_aks_policies.explain import explain

from components.contract import platform_contract
from components.manifests import device_plugin_manifests
from components.platform_settings import parse_settings
from components.pools import platform_pools
from offline.mockrun import run_program
from tests.conftest import ROOT
from tests.test_nap_settings import _problems

NAP = {"cluster": {"nodeProvisioningProfile": {"mode": "Auto"}}, "systemPool": {"minCount": 2, "maxCount": 2}}
SHARED_T4 = {"name": "t4", "gpus": ["T4"], "gpuCount": [1], "limits": {"gpu": 4},
             "sharing": {"strategy": "timeSlicing", "replicas": 4}}
TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _settings(*pools: dict[str, Any], **extra: Any) -> Any:
    return parse_settings({**NAP, "gpuNodePools": list(pools), **extra}, "test", "westeurope")


def test_a_shared_nodepool_is_in_the_contract_with_its_shares():
    pool = platform_contract(_settings(SHARED_T4))["gpuPools"]["t4"]
    assert pool["kind"] == "nodePool" and pool["sharing"] == {"strategy": "timeSlicing", "replicas": 4}
    assert [(offer["vmSize"], offer["perNode"]) for offer in pool["offers"]] == [
        ("Standard_NC4as_T4_v3", 4), ("Standard_NC8as_T4_v3", 4), ("Standard_NC16as_T4_v3", 4)]


@pytest.mark.parametrize("strategy, kinds", [
    ("timeSlicing", [("ConfigMap", "nvidia-device-plugin-shared-t4"), ("DaemonSet", "nvidia-device-plugin-shared-t4")]),
    ("mps", [("ConfigMap", "nvidia-device-plugin-shared-t4"), ("DaemonSet", "nvidia-device-plugin-shared-t4"),
             ("DaemonSet", "nvidia-mps-control-daemon-t4")]),
])
def test_the_device_plugin_serves_a_shared_nodepool_with_nvidia_s_config(strategy, kinds):
    settings = _settings({**SHARED_T4, "sharing": {"strategy": strategy, "replicas": 4}})
    pools = [pool for pool in platform_pools(settings).gpu if pool.served]
    manifests = device_plugin_manifests("gpu-resources", "nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "none", pools)
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == kinds
    config = yaml.safe_load(manifests[0]["data"]["config.yaml"])
    assert config["sharing"][strategy]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]
    assert config["sharing"][strategy]["failRequestsGreaterThanOne"] is True
    plugin = manifests[1]["spec"]["template"]["spec"]
    # Pinned by the label Karpenter's nodes get from the NodePool's template (gpu-aks.io/pool).
    terms = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"key": "gpu-aks.io/pool", "operator": "In", "values": ["t4"]} in terms[0]["matchExpressions"]


def test_a_shared_nodepool_the_plugin_does_not_serve_is_refused():
    [problem] = _problems({**NAP, "gpuNodePools": [SHARED_T4], "devicePlugin": {"pools": []}})
    assert problem.startswith("gpu-aks:gpuNodePools[t4].sharing: ") and "does not serve pool 't4'" in problem


@pytest.mark.parametrize("sharing, message", [
    ({"strategy": "mps"}, "replicas: is missing"),
    ({"strategy": "mps", "replicas": 49}, "above 48 for mps"),
    ({"strategy": "slicing", "replicas": 2}, "sharing.strategy"),
    ({"strategy": "timeSlicing", "replicas": 1}, "is below 2"),
])
def test_a_nodepool_s_sharing_is_refused_as_a_pool_s_is(sharing, message):
    problems = _problems({**NAP, "gpuNodePools": [{**SHARED_T4, "sharing": sharing}]})
    assert any(p.startswith("gpu-aks:gpuNodePools[t4].sharing") and message in p for p in problems), problems


def test_the_explainer_and_the_app_helper_read_a_shared_nodepool():
    contract = platform_contract(_settings(SHARED_T4))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nb"}, "spec": {
        "tolerations": [TOLERATION],
        "containers": [{"name": "nb", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    [explanation] = explain(pod, contract)
    [verdict] = explanation.verdicts
    assert verdict.fits and any("1/4 of a T4, time-sliced" in line for line in verdict.gets), verdict.gets
    placement = place(contract, GpuRequest(shared=True))
    assert (placement.pool, placement.share) == ("t4", "1/4 of a T4, time-sliced")


@pytest.mark.parametrize("containers, launches", [(1, True), (2, False)])
def test_karpenter_launches_a_shared_nodepool_s_node_by_its_physical_gpus(containers, launches):
    # Two containers with a share each ask the node for 2 nvidia.com/gpu. A T4 node time-sliced 4 ways
    # advertises 4, but Karpenter sizes a new node by the size's physical GPUs (karpenter-provider-azure
    # instancetype.go, computeCapacity), and every size of this NodePool has 1: it never launches one.
    contract = platform_contract(_settings(SHARED_T4))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nb"}, "spec": {"tolerations": [TOLERATION],
           "containers": [{"name": f"c{i}", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}
                          for i in range(containers)]}}
    [verdict] = explain(pod, contract)[0].verdicts
    assert verdict.fits, "a node already up with free shares takes it: the scheduler counts shares"
    waits = [line for line in verdict.gets if "auto-provisioning" in line or "never launches" in line]
    if launches:
        assert waits == ["waits for node auto-provisioning when no node has room: a new GPU node takes minutes"]
    else:
        assert waits == ["lands only where a node already up has 2 free shares: Karpenter sizes a new node by its "
                         "physical GPUs, not its shares, and no size this pool may bring has 2 (the most is 1), so it "
                         "never launches one for this pod; ask for at most 1 here"]


def test_the_program_deploys_the_shared_nodepool_s_plugin(tmp_path: Path):
    config = {f"gpu-aks:{key}": json.dumps(value) for key, value in
              {**NAP, "gpuNodePools": [SHARED_T4]}.items()}
    config["azure-native:location"] = "westeurope"
    run = run_program(ROOT, "dev", config)
    assert run.error is None, run.error
    names = {resource.name for resource in run.resources}
    assert {"nvidia-device-plugin-shared-t4"} <= {name.split("/")[-1] for name in names}, sorted(names)


def test_the_doctor_finds_a_shared_nodepool_s_node_that_advertises_whole_gpus():
    """A node of the shared NodePool advertising 1 nvidia.com/gpu, not 4: its plugin did not read the config."""
    from gpu_aks_policies.fit import platform_from_outputs

    from tests.test_doctor_nap import _node, _plugin_pod
    from tools.doctor import diagnose, render

    contract = platform_contract(_settings(SHARED_T4))
    node = _node("aks-t4-abcde", "Standard_NC4as_T4_v3", 1)
    node["metadata"]["labels"].update({"gpu-aks.io/pool": "t4", "karpenter.sh/nodepool": "t4"})
    diagnosis = diagnose(platform_from_outputs(contract), [node], [_plugin_pod("aks-t4-abcde")])
    checks = {problem.check for problem in diagnosis.problems}
    assert "gpu-sharing" in checks, render(diagnosis)
    node["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    assert diagnose(platform_from_outputs(contract), [node], [_plugin_pod("aks-t4-abcde")]).problems == []
