"""The doctor on NAP nodes: Karpenter's nodes of a GPU NodePool, each advertising its own size's GPUs."""

from __future__ import annotations

from typing import Any

from gpu_aks_policies.fit import platform_from_outputs

from components.manifests import DEVICE_PLUGIN_APP_LABEL
from tests.test_nap_fit import CONTRACT, _offer
from tools.doctor import diagnose, render

NAP_CONTRACT = {**CONTRACT, "gpuPools": {"gpu": {**CONTRACT["gpuPools"]["gpu"], "offers": [
    _offer("Standard_NC40ads_H100_v5", "H100 NVL", 1, ["spot", "onDemand"]),
    _offer("Standard_NC80adis_H100_v5", "H100 NVL", 2, ["spot", "onDemand"])]}}}


def _node(name: str, size: str, gpus: int, taints: list[dict[str, str]] | None = None, ready: bool = True) -> dict:
    labels = {"gpu-aks.io/pool": "gpu", "karpenter.sh/nodepool": "gpu", "node.kubernetes.io/instance-type": size,
              "karpenter.sh/capacity-type": "spot", "karpenter.azure.com/sku-gpu-manufacturer": "nvidia",
              "kubernetes.azure.com/scalesetpriority": "spot"}
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}, *(taints or [])]},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus)},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False", "reason": "KubeletReady"}]}}


def _plugin_pod(node: str) -> dict[str, Any]:
    return {"metadata": {"name": f"nvidia-device-plugin-{node}", "namespace": "gpu-resources",
                         "labels": dict([DEVICE_PLUGIN_APP_LABEL])},
            "spec": {"nodeName": node}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def test_nap_nodes_are_recognised_and_each_judged_by_its_own_size():
    nodes = [_node("aks-gpu-abcde", "Standard_NC40ads_H100_v5", 1),
             _node("aks-gpu-fghij", "Standard_NC80adis_H100_v5", 2,
                   [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])]
    diagnosis = diagnose(platform_from_outputs(NAP_CONTRACT), nodes, [_plugin_pod(n["metadata"]["name"]) for n in nodes])
    assert diagnosis.problems == [], render(diagnosis)
    assert [node.name for node in diagnosis.pools[0].nodes] == ["aks-gpu-abcde", "aks-gpu-fghij"]


def test_a_nap_node_short_of_its_sizes_gpus_is_a_problem_and_is_replaced_through_karpenter():
    nodes = [_node("aks-gpu-fghij", "Standard_NC80adis_H100_v5", 1, ready=False)]
    diagnosis = diagnose(platform_from_outputs(NAP_CONTRACT), nodes, [_plugin_pod("aks-gpu-fghij")])
    checks = {problem.check: problem for problem in diagnosis.problems}
    assert "advertises 1 nvidia.com/gpu, the contract says 2 per node" in checks["gpu-count"].message
    assert "Karpenter's NodePool gpu replaces it" in checks["node-ready"].fix


def test_a_nap_gpu_node_of_no_pool_is_noted():
    stray = _node("aks-other-xyz", "Standard_NC40ads_H100_v5", 0)
    stray["metadata"]["labels"]["gpu-aks.io/pool"] = "other"
    diagnosis = diagnose(platform_from_outputs(NAP_CONTRACT), [stray], [])
    assert diagnosis.unmatched_gpu_nodes == ["aks-other-xyz"]


def test_a_new_kinds_node_facts_reach_the_doctor_through_the_registry_alone(monkeypatch):
    """A kind registered in the pack (its own taints, GPU label, node label and replacement) is read by
    the doctor without the doctor naming it: its taint is not a problem, its broken node is replaced
    its way, and its GPU node of no pool is noted."""
    from gpu_aks_policies.pools import BackendRegistration, NodeFacts, registry

    facts = NodeFacts(taint_prefixes=("fleet.example.com/",), gpu_labels={"fleet.example.com/gpu": "yes"},
                      node_label="fleet.example.com/fleet",
                      replace_hint=lambda name, labels: f"fleetctl recycle {name} in {labels['fleet.example.com/fleet']}")
    fleet = BackendRegistration("fleet", lambda resource_type: False, lambda resource_type, props: [], "test", facts)
    monkeypatch.setattr(registry, "BACKENDS", [*registry.BACKENDS, fleet])

    def fleet_node(name: str, pool: str, ready: bool) -> dict:
        node = _node(name, "Standard_NC40ads_H100_v5", 1, [{"key": "fleet.example.com/booting", "effect": "NoSchedule"}],
                     ready=ready)
        labels = node["metadata"]["labels"]
        for key in ("karpenter.sh/nodepool", "karpenter.azure.com/sku-gpu-manufacturer"):
            del labels[key]
        labels.update({"gpu-aks.io/pool": pool, "fleet.example.com/fleet": "blue", "fleet.example.com/gpu": "yes"})
        return node

    broken, stray = fleet_node("fleet-1", "gpu", ready=False), fleet_node("fleet-2", "other", ready=True)
    stray["status"]["allocatable"] = {}
    diagnosis = diagnose(platform_from_outputs(NAP_CONTRACT), [broken, stray], [_plugin_pod("fleet-1")])
    checks = {problem.check: problem for problem in diagnosis.problems}
    assert set(checks) == {"node-ready"}, render(diagnosis)
    assert "fleetctl recycle fleet-1 in blue" in checks["node-ready"].fix
    assert diagnosis.unmatched_gpu_nodes == ["fleet-2"]
    monkeypatch.undo()
    # Without the kind, its taint is a problem and its stray GPU node goes unnoticed.
    diagnosis = diagnose(platform_from_outputs(NAP_CONTRACT), [broken, stray], [_plugin_pod("fleet-1")])
    assert "taints" in {problem.check for problem in diagnosis.problems}
    assert diagnosis.unmatched_gpu_nodes == []
