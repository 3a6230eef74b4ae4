"""Pods on NAP GPU NodePools: the explainer and `--platform` read a NodePool's offers like any pool's."""

from __future__ import annotations

from typing import Any

from gpu_aks_policies.explain import explain
from gpu_aks_policies.fit import node_choice, render

TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _offer(vm_size: str, model: str, gpus: int, capacity: list[str]) -> dict[str, Any]:
    return {"vmSize": vm_size, "gpuModel": model, "gpuMemoryGiB": 80, "gpusPerVm": gpus, "resource": "nvidia.com/gpu",
            "perNode": gpus, "migPartition": None, "capacityTypes": capacity}


#: A contract with one NAP NodePool that may bring an H100 NVL (1 GPU) or an A100 (1 GPU), Spot first.
CONTRACT = {"contractVersion": 2, "gpuNamespace": "gpu-resources", "migStrategy": "none", "gpuPools": {"gpu": {
    "name": "gpu", "kind": "nodePool", "azureName": None, "poolLabel": {"gpu-aks.io/pool": "gpu"},
    "vmSize": "Standard_NC40ads_H100_v5", "gpuModel": "H100 NVL", "gpuMemoryGiB": 94, "gpusPerVm": 1,
    "gpusPerNode": 1, "gpuResource": "nvidia.com/gpu", "spot": True, "minCount": 0, "maxCount": None,
    "taints": ["sku=gpu:NoSchedule"], "labels": {"gpu-aks.io/pool": "gpu"}, "tolerations": [TOLERATION],
    "nodeSelector": {"gpu-aks.io/pool": "gpu"}, "devicePlugin": "gpu-aks",
    "offers": [_offer("Standard_NC40ads_H100_v5", "H100 NVL", 1, ["spot", "onDemand"]),
               _offer("Standard_NC24ads_A100_v4", "A100 80GB", 1, ["spot", "onDemand"])]}}}


def _job(gpus: int, tolerate: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "train", "image": "trainer:1",
                                            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}
    if tolerate:
        spec["tolerations"] = [TOLERATION]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"},
            "spec": {"template": {"spec": spec}}}


def test_the_explainer_says_which_gpus_a_nodepool_may_bring():
    text = render(explain(_job(1), CONTRACT))
    assert ("lands on: gpu (Standard_NC40ads_H100_v5 or Standard_NC24ads_A100_v4): one of H100 x1, A100 x1, Spot or "
            "on-demand") in text, text


def test_a_pod_that_does_not_tolerate_the_nodepools_taint_lands_nowhere():
    [explanation] = explain(_job(1, tolerate=False), CONTRACT)
    assert explanation.lands_on == []
    assert any("sku=gpu:NoSchedule" in reason for reason in explanation.verdicts[0].reasons)


def test_more_gpus_than_any_candidate_has_fits_no_size():
    [explanation] = explain(_job(2), CONTRACT)
    assert explanation.lands_on == []


def test_a_pool_of_one_size_and_one_capacity_needs_no_choice():
    assert node_choice(()) == ""


# --- The nap stack's own contract ------------------------------------------------------------------

def test_the_nap_stacks_contract_admits_a_tolerating_pod_and_refuses_one_that_does_not():
    from components.contract import platform_contract
    from tests.conftest import ROOT
    from tools.stacks import settings_from_stack_file

    contract = platform_contract(settings_from_stack_file(ROOT / "Pulumi.nap.yaml", "nap"))
    pools = contract["gpuPools"]
    assert {name: pools[name]["kind"] for name in pools} == {"h100": "nodePool", "a100": "nodePool"}
    assert pools["h100"]["nodeSelector"] == {"gpu-aks.io/pool": "h100"}, "NAP nodes carry no accelerator label"
    text = render(explain(_job(1), contract))
    assert ("lands on: h100 (Standard_NC40ads_H100_v5 or Standard_NC80adis_H100_v5): one of H100 x1, H100 x2, Spot "
            "or on-demand; a100 (Standard_NC24ads_A100_v4)") in text, text
    [refused] = explain(_job(1, tolerate=False), contract)
    assert refused.lands_on == []
