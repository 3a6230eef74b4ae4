"""The labels every node carries (AKS's on AgentPool nodes, Karpenter's and its Azure provider's on NAP
nodes): `--platform`, the explainer and the app helper read them, and a label whose value only the
live node shows is "cannot tell", never "fits no pool".

Sources: MicrosoftDocs `articles/aks/reserved-labels-reference.md` (AgentPool nodes);
kubernetes-sigs/karpenter `pkg/apis/v1/labels.go` (commit 046bcdae737388a7edf5f984cdecfe62047b9143) and
Azure/karpenter-provider-azure `pkg/apis/v1beta1/labels.go`, `pkg/providers/instancetype/instancetype.go`
`computeRequirements` (commit 00ae11268ef84e134ea41d7701262d2d246decd4) (NAP nodes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_app import GpuRequest, PlacementError, place
from gpu_aks_policies.check import LoadedObject, check_objects
from gpu_aks_policies.contract import PlatformContract
from gpu_aks_policies.explain import explain
from gpu_aks_policies.fit import platform_from_outputs, render
from gpu_aks_policies.node_labels import node_kinds
from gpu_aks_policies.rules import default_rule_config
from hypothesis import given, settings
from hypothesis import strategies as st

from components.contract import platform_contract
from components.platform_settings import parse_settings
from tests.conftest import ROOT

PROD = json.loads((ROOT / "examples" / "app-repo" / "platform" / "prod-outputs.json").read_text())
SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _nap() -> dict[str, Any]:
    from tools.stacks import settings_from_stack_file
    return platform_contract(settings_from_stack_file(ROOT / "Pulumi.nap.yaml", "nap"))


NAP = _nap()


def _pod(selector: dict[str, str] | None = None, gpus: int = 1, affinity: list[dict[str, Any]] | None = None,
         tolerations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"tolerations": [SKU] if tolerations is None else tolerations,
                            "containers": [{"name": "c", "image": "x",
                                            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}
    if selector:
        spec["nodeSelector"] = selector
    if affinity:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": affinity}]}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def _mandatory(pod: dict[str, Any], platform: Any) -> list[str]:
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config(), platform_from_outputs(platform))
    return [f"{v.policy}: {v.message}" for v in report.violations if v.level == "mandatory"]


def _lands(pod: dict[str, Any], platform: Any) -> list[str]:
    [explanation] = explain(pod, platform)
    return explanation.lands_on


# --- The five labels, against the shipped prod outputs and the nap stack --------------------

@pytest.mark.parametrize("selector, prod, nap", [
    ({"kubernetes.io/os": "linux"}, ["a100mig"], ["h100", "a100"]),
    ({"node.kubernetes.io/instance-type": "Standard_NC24ads_A100_v4"}, ["a100mig"], ["a100"]),
    ({"topology.kubernetes.io/region": "eastus2"}, ["a100mig"], ["h100", "a100"]),
    ({"karpenter.sh/capacity-type": "on-demand"}, [], ["h100", "a100"]),
    ({"karpenter.azure.com/sku-gpu-name": "A100"}, [], ["a100"]),
    ({"kubernetes.azure.com/accelerator": "nvidia"}, ["a100mig"], []),
    ({"kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent"}, ["a100mig"], ["h100", "a100"]),
    ({"karpenter.azure.com/sku-gpu-count": "2"}, [], ["h100"]),
    ({"beta.kubernetes.io/os": "linux"}, ["a100mig"], ["h100", "a100"]),
], ids=str)
def test_labels_every_node_carries_are_read_as_the_nodes_carry_them(selector, prod, nap):
    """The first three fit the shipped prod platform; Karpenter's labels fit only NAP pools and AKS's
    `accelerator` only AgentPools (the t4spot pool needs the Spot toleration this pod lacks)."""
    assert _lands(_pod(selector), PROD) == prod
    gpus = 2 if selector.get("karpenter.azure.com/sku-gpu-count") == "2" else 1
    assert _lands(_pod(selector, gpus), NAP) == nap


def test_a_label_of_the_other_kind_of_pool_says_where_it_comes_from():
    text = render(explain(_pod({"karpenter.sh/capacity-type": "on-demand"}), PROD))
    assert "no karpenter.sh/capacity-type label (Karpenter sets it on node auto-provisioning (NAP) nodes only; " \
           "this pool is an AKS AgentPool)" in text, text
    assert _mandatory(_pod({"karpenter.sh/capacity-type": "on-demand"}), PROD)


def test_a_wrong_value_of_a_known_label_fails_and_names_the_values_the_nodes_have():
    text = render(explain(_pod({"topology.kubernetes.io/region": "westeurope"}), PROD))
    assert "needs topology.kubernetes.io/region=westeurope, but the pool's nodes have " \
           "topology.kubernetes.io/region=eastus2" in text, text


@pytest.mark.parametrize("pod", [
    _pod({"topology.kubernetes.io/zone": "eastus2-1"}),
    # AKS's bootstrap writes dozens of kubernetes.azure.com/ labels, more with each release.
    _pod({"kubernetes.azure.com/network-subnet": "snet-gpu"}),
    _pod({"kubernetes.azure.com/os-sku-effective": "Ubuntu2204"}),
    _pod({"kubernetes.io/hostname": "aks-a100mig-1234-vmss000000"}),
    _pod(affinity=[{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus2-1", "eastus2-2"]}]),
    _pod(affinity=[{"key": "kubernetes.azure.com/node-image-version", "operator": "NotIn", "values": ["x"]}]),
], ids=["zone", "network subnet", "os sku", "hostname", "zone affinity", "node image"])
def test_a_label_only_the_live_node_shows_is_cannot_tell_never_fits_no_pool(pod):
    assert _mandatory(pod, PROD) == []
    [explanation] = explain(pod, PROD)
    assert explanation.lands_on == ["a100mig"]
    [verdict] = [v for v in explanation.verdicts if v.pool == "a100mig"]
    assert any(note.startswith("cannot tell offline") for note in verdict.notes), verdict.notes


def test_exists_and_does_not_exist_on_a_label_of_unknown_value_are_decided():
    """Every node carries a zone: Exists holds and DoesNotExist fails, whatever the value."""
    assert _lands(_pod(affinity=[{"key": "topology.kubernetes.io/zone", "operator": "Exists"}]), PROD) == ["a100mig"]
    assert _lands(_pod(affinity=[{"key": "topology.kubernetes.io/zone", "operator": "DoesNotExist"}]), PROD) == []


def test_a_label_no_node_carries_still_fails_the_fit():
    assert _lands(_pod({"gpu-type": "a100"}), PROD) == []
    assert _mandatory(_pod({"gpu-type": "a100"}), PROD)


def test_nap_node_labels_come_from_karpenter_and_the_azure_provider():
    contract = PlatformContract.from_json(NAP)
    kinds = list(node_kinds("h100", contract.gpu_pool_models()["h100"], contract.location))
    assert [(k.offer.vm_size, k.capacity_type) for k in kinds] == [
        ("Standard_NC40ads_H100_v5", "spot"), ("Standard_NC40ads_H100_v5", "onDemand"),
        ("Standard_NC80adis_H100_v5", "spot"), ("Standard_NC80adis_H100_v5", "onDemand")]
    labels = kinds[1].labels
    assert {key: labels.known[key] for key in (
        "karpenter.sh/nodepool", "karpenter.sh/capacity-type", "node.kubernetes.io/instance-type", "kubernetes.io/os",
        "kubernetes.io/arch", "topology.kubernetes.io/region", "karpenter.azure.com/sku-name",
        "karpenter.azure.com/sku-family", "karpenter.azure.com/sku-cpu", "kubernetes.azure.com/sku-cpu",
        "karpenter.azure.com/sku-gpu-name", "karpenter.azure.com/sku-gpu-count",
        "karpenter.azure.com/sku-gpu-manufacturer", "gpu-aks.io/pool")} == {
        "karpenter.sh/nodepool": "h100", "karpenter.sh/capacity-type": "on-demand",
        "node.kubernetes.io/instance-type": "Standard_NC40ads_H100_v5", "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "topology.kubernetes.io/region": "eastus2",
        "karpenter.azure.com/sku-name": "Standard_NC40ads_H100_v5", "karpenter.azure.com/sku-family": "N",
        "karpenter.azure.com/sku-cpu": "40", "kubernetes.azure.com/sku-cpu": "40",
        "karpenter.azure.com/sku-gpu-name": "H100", "karpenter.azure.com/sku-gpu-count": "1",
        "karpenter.azure.com/sku-gpu-manufacturer": "nvidia", "gpu-aks.io/pool": "h100"}
    assert "kubernetes.azure.com/accelerator" not in labels.known, "Karpenter adds no accelerator label"
    assert all(key in labels.unknown for key in (
        "topology.kubernetes.io/zone", "kubernetes.io/hostname", "karpenter.azure.com/sku-memory",
        "karpenter.azure.com/placement-scope", "kubernetes.azure.com/node-image-version"))
    assert "kubernetes.azure.com/accelerator" not in labels.unknown


def test_agent_pool_node_labels_come_from_aks():
    contract = PlatformContract.from_json(PROD)
    [spot] = node_kinds("t4spot", contract.gpu_pool_models()["t4spot"], contract.location)
    assert {key: spot.labels.known[key] for key in (
        "kubernetes.azure.com/agentpool", "agentpool", "kubernetes.azure.com/scalesetpriority",
        "kubernetes.azure.com/accelerator", "kubernetes.azure.com/mode", "kubernetes.azure.com/role",
        "node.kubernetes.io/instance-type", "topology.kubernetes.io/region", "kubernetes.io/os")} == {
        "kubernetes.azure.com/agentpool": "t4spotce97", "agentpool": "t4spotce97",
        "kubernetes.azure.com/scalesetpriority": "spot", "kubernetes.azure.com/accelerator": "nvidia",
        "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
        "node.kubernetes.io/instance-type": "Standard_NC4as_T4_v3", "topology.kubernetes.io/region": "eastus2",
        "kubernetes.io/os": "linux"}
    assert not any(key.startswith("karpenter.") for key in spot.labels.known)


def test_the_node_choice_names_only_the_sizes_the_pod_can_land_on():
    """A 2-GPU pod on a NodePool of 1- and 2-GPU H100 sizes lands only on the 2-GPU size."""
    text = render(explain(_pod(gpus=2), NAP))
    assert "lands on: h100 (Standard_NC80adis_H100_v5): H100 x2, Spot or on-demand" in text, text
    assert "H100 x1" not in text


# --- The app helper's placements pass --platform ---------------------------------------------------

_PLATFORMS = {
    "prod": PROD, "nap": NAP,
    "mixed": platform_contract(parse_settings({"gpuPools": [
        {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 4},
        {"name": "t4x4", "vmSize": "Standard_NC64as_T4_v3", "maxCount": 2},
        {"name": "a100mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g"},
        {"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "maxCount": 1},
        {"name": "t4spot", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot"},
        {"name": "t4shared", "vmSize": "Standard_NC4as_T4_v3", "sharing": {"strategy": "timeSlicing", "replicas": 4}},
    ]}, "test", "eastus2")),
}
_MODELS = [None, "T4", "A100", "A100 80GB", "H100", "H100 NVL", "nvidia-tesla-t4", "H200"]


@settings(max_examples=150, deadline=None)
@given(platform=st.sampled_from(sorted(_PLATFORMS)), gpus=st.integers(1, 9), model=st.sampled_from(_MODELS),
       spot=st.sampled_from([None, True, False]), shared=st.sampled_from([None, True]),
       mig=st.sampled_from([None, "2g.20gb"]), pool=st.sampled_from([None, "h100", "a100", "t4spot", "a100mig"]))
def test_every_placement_the_helper_makes_passes_the_platform_check(platform, gpus, model, spot, shared, mig, pool):
    outputs = _PLATFORMS[platform]
    try:
        placement = place(outputs, GpuRequest(gpus=gpus, model=model, spot=spot, shared=shared, mig_partition=mig,
                                              pool=pool))
    except PlacementError:
        return
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
           "spec": placement.pod_spec([{"name": "app", "image": "app:1"}])}
    assert _mandatory(pod, outputs) == [], (placement, pod)
    assert placement.pool in _lands(pod, outputs)


def test_the_helpers_two_h100_placement_pins_the_size_and_passes():
    placement = place(NAP, GpuRequest(gpus=2, model="H100"))
    assert placement.node_selector["node.kubernetes.io/instance-type"] == "Standard_NC80adis_H100_v5"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
           "spec": placement.pod_spec([{"name": "app", "image": "app:1"}])}
    assert _mandatory(pod, NAP) == []


def test_the_checker_reads_the_shipped_outputs_file(tmp_path: Path):
    from gpu_aks_policies.check import main
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps(_pod({"kubernetes.io/os": "linux", "topology.kubernetes.io/region": "eastus2"})))
    import io
    out = io.StringIO()
    code = main(["--platform", str(ROOT / "examples" / "app-repo" / "platform" / "prod-outputs.json"), str(pod)],
                stdout=out)
    assert code == 0, out.getvalue()


# --- Capacity types, per offer and per pool ----------------------------------------------------------

def test_a_spot_first_nodepool_is_published_with_both_capacity_types_and_not_as_spot():
    h100 = NAP["gpuPools"]["h100"]
    assert h100["spot"] is False
    assert h100["capacityTypes"] == ["spot", "onDemand"]
    assert NAP["gpuPools"]["a100"]["capacityTypes"] == ["onDemand"]
    assert PROD["gpuPools"]["t4spot"]["spot"] is True
    assert PlatformContract.from_json(PROD).gpu_pools["t4spot"].capacity_types == ("spot",), "derived when absent"


def test_version_3_pools_say_the_same_capacity_types_and_spot_as_gpu_pools():
    for name in ("system", "h100", "a100"):
        assert NAP["pools"][name]["capacityTypes"] == (["spot", "onDemand"] if name == "h100" else ["onDemand"])
        assert NAP["pools"][name]["spot"] is False
    assert PlatformContract.from_json(NAP).contract_version == 3


def test_the_contract_orders_capacity_types_spot_first_as_karpenter_tries_them():
    from gpu_aks_policies.pools.model import spot_first
    assert spot_first(["onDemand", "spot"]) == ("spot", "onDemand")
    pools = platform_contract(parse_settings({
        "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}}, "systemPool": {"minCount": 2, "maxCount": 2},
        "gpuNodePools": [{"name": "h100", "gpus": ["H100"], "gpuCount": [1], "capacityTypes": ["on-demand", "spot"],
                          "limits": {"gpu": 2}}]}, "test", "eastus2"))["gpuPools"]
    assert pools["h100"]["capacityTypes"] == ["spot", "onDemand"]


@pytest.mark.parametrize("spot, pinned", [(False, "on-demand"), (True, "spot")])
def test_the_helper_places_on_demand_and_spot_on_a_spot_first_nodepool(spot, pinned):
    placement = place(NAP, GpuRequest(model="H100", spot=spot))
    assert placement.pool == "h100"
    assert placement.node_selector["karpenter.sh/capacity-type"] == pinned
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
           "spec": placement.pod_spec([{"name": "app", "image": "app:1"}])}
    assert _mandatory(pod, NAP) == []
    [explanation] = explain(pod, NAP)
    [h100] = [v for v in explanation.verdicts if v.pool == "h100"]
    assert any("Spot" in line for line in h100.gets) is spot, h100.gets


def test_a_request_without_a_capacity_type_is_not_pinned_and_prefers_an_on_demand_pool():
    placement = place(NAP, GpuRequest(model="A100"))
    assert "karpenter.sh/capacity-type" not in placement.node_selector
    with pytest.raises(PlacementError, match="no Spot pool"):
        place(NAP, GpuRequest(model="A100", spot=True))


# --- What a workload costs ---------------------------------------------------------------------------

def test_the_explainer_states_the_node_s_hourly_list_price_and_the_pod_s_part():
    """#38: a MIG slice is 1/3 of an NC24ads_A100_v4 node (MIG2g: 3 instances), with the prices' date."""
    contract = platform_contract(_settings_of("prod"))
    [a100] = [offer for offer in contract["gpuPools"]["a100mig"]["offers"]]
    price = a100["hourlyPrice"]
    assert price["onDemand"] and price["currency"] == "USD" and price["asOf"] == "2026-06-18"
    [explanation] = explain(_pod({"kubernetes.io/os": "linux"}), contract)
    [verdict] = [v for v in explanation.verdicts if v.pool == "a100mig"]
    [line] = [line for line in verdict.gets if line.startswith("its node")]
    third = round(price["onDemand"] / 3, 4)
    assert line == (f"its node (Standard_NC24ads_A100_v4) costs {price['onDemand']} USD an hour on-demand; the pod "
                    f"asks for 1 of the node's 3 nvidia.com/gpu, so its part is 1/3 of that: {third} USD an hour "
                    "on-demand (list prices of 2026-06-18, before discounts; disks and egress not counted)"), line


def test_a_spot_first_pool_without_a_spot_price_is_bounded_by_on_demand_in_the_explainer():
    contract = platform_contract(_settings_of("nap"))
    [explanation] = explain(_pod(gpus=2), contract)
    [verdict] = [v for v in explanation.verdicts if v.pool == "h100"]
    [line] = [line for line in verdict.gets if line.startswith("its node")]
    assert "at most" in line and "Spot never costs more than on-demand" in line and "the pod takes the whole node" in line


def test_a_contract_without_prices_explains_as_before():
    unpriced = json.loads(json.dumps(PROD))
    for pool in unpriced["gpuPools"].values():
        for offer in pool["offers"]:
            del offer["hourlyPrice"]
    [explanation] = explain(_pod({"kubernetes.io/os": "linux"}), unpriced)
    assert not any(line.startswith("its node") for v in explanation.verdicts for line in v.gets)


def _settings_of(stack: str) -> Any:
    from tools.stacks import settings_from_stack_file
    return settings_from_stack_file(ROOT / f"Pulumi.{stack}.yaml", stack)


# --- Small fixes: the node-selection advice on NAP, a CPU-only pod --------------------------------

def test_the_node_selection_advice_names_a_label_nap_nodes_carry():
    """#38: `accelerator: nvidia` is on AgentPool GPU nodes only (Azure's NodePool CRD refuses it)."""
    pod = _pod()
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config(), platform_from_outputs(NAP))
    [advice] = [v.message for v in report.violations if v.policy == "gpu-pods-select-gpu-nodes"]
    assert "karpenter.azure.com/sku-gpu-manufacturer: nvidia" in advice and "accelerator: nvidia" not in advice
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config(), platform_from_outputs(PROD))
    [advice] = [v.message for v in report.violations if v.policy == "gpu-pods-select-gpu-nodes"]
    assert "accelerator: nvidia" in advice


def test_a_nap_pod_that_selects_a_gpu_name_selects_gpu_nodes():
    pod = _pod({"karpenter.azure.com/sku-gpu-name": "H100"})
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config(), platform_from_outputs(NAP))
    assert not [v for v in report.violations if v.policy == "gpu-pods-select-gpu-nodes"]


def test_the_explainer_does_not_tell_a_cpu_only_ray_head_to_tolerate_the_gpu_taint():
    import yaml
    documents = list(yaml.safe_load_all((ROOT / "tests" / "manifests" / "seeds" /
                                         "ray-cpu-head-gpu-workers.yaml").read_text()))
    text = render(explain(documents[0], PROD))
    head, worker = text.split("RayCluster/rc: ")[1:3]
    assert "lands on: CPU nodes, not a GPU pool" in head and "add the toleration" not in head, head
    assert "lands on: a100mig" in worker


def test_labels_aks_never_writes_on_a_node_still_fail_the_fit():
    """On-demand AgentPool nodes carry no scalesetpriority label ("regular is never written by AKS as a
    label", karpenter-provider-azure labels.go); NAP nodes no kubernetes.azure.com/accelerator."""
    assert _lands(_pod({"kubernetes.azure.com/scalesetpriority": "spot"}), PROD) == []
    assert _lands(_pod({"kubernetes.azure.com/accelerator": "nvidia"}), NAP) == []
    assert _lands(_pod({"kubernetes.azure.com/network-subnet": "snet-gpu"}), NAP) == ["h100", "a100"]


def test_a_nodepool_of_many_sizes_gets_its_cheapest_and_dearest_node_s_price_not_one_line_per_size():
    contract = platform_contract(parse_settings({
        "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}}, "systemPool": {"minCount": 2, "maxCount": 2},
        "gpuNodePools": [{"name": "h100", "gpus": ["H100"], "limits": {"gpu": 16}}]}, "test", "eastus2"))
    [explanation] = explain(_pod(), contract)
    [verdict] = explanation.verdicts
    prices = [line for line in verdict.gets if line.startswith("its node")]
    assert prices[0] == "its node is one of 6 sizes; the cheapest and the dearest:"
    assert len(prices) == 3 and "Standard_NC40ads_H100_v5" in prices[1] and "1/8 of that" in prices[2], prices


def test_the_platform_builds_each_pool_s_kinds_of_node_once():
    platform = platform_from_outputs(NAP)
    assert platform.node_kinds("h100") is platform.node_kinds("h100")
    assert len(platform.node_kinds("h100")) == 4 and len(platform.node_kinds("a100")) == 1


def test_the_node_choice_says_spot_first_whatever_order_the_contract_lists():
    from gpu_aks_policies.fit import node_choice
    from gpu_aks_policies.pools.model import Offer
    offers = (Offer(vm_size="Standard_NC40ads_H100_v5", gpu_model="H100 NVL", gpus_per_vm=1,
                    resource="nvidia.com/gpu", per_node=1, capacity_types=("onDemand", "spot")),)
    assert node_choice(offers) == "H100 x1, Spot or on-demand"


def test_a_hostile_price_text_in_the_contract_stays_on_its_line():
    hostile = json.loads(json.dumps(PROD))
    hostile["gpuPools"]["a100mig"]["offers"][0]["hourlyPrice"] = {
        "onDemand": 1.0, "spot": None, "currency": "U\x1b[2JSD\n::error::x", "asOf": "2026\n::error::pwned\r"}
    text = render(explain(_pod(), hostile))
    [line] = [line for line in text.splitlines() if "its node" in line]
    assert "\x1b" not in text and "\r" not in text and "pwned" in line and "::error" not in line.split("(")[0]
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())


# --- The pack: a device plugin selecting labels every node carries ----------------------------------

def _plugin(selector: dict[str, str]) -> Any:
    from gpu_aks_policies.pool_rules import StackResource
    return StackResource("urn:ds", "kubernetes:apps/v1:DaemonSet", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nvidia-device-plugin-daemonset"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
            "nodeSelector": selector, "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"}]}}}})


@pytest.mark.parametrize("selector, served", [
    ({"kubernetes.io/os": "linux"}, True),
    ({"node.kubernetes.io/instance-type": "Standard_NC4as_T4_v3"}, True),
    ({"kubernetes.azure.com/mode": "user"}, True),
    ({"kubernetes.io/os": "windows"}, False),
])
def test_the_pack_reads_a_device_plugin_s_selector_against_the_labels_aks_nodes_carry(selector, served):
    """#38: NVIDIA-style manifests select `kubernetes.io/os: linux`; the mandatory device-plugin rule
    refused them as selecting no node of the pool."""
    from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage
    from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS
    from gpu_aks_policies.rules import parse_rule_config

    pool = StackResource("urn:pool", "azure-native:containerservice:AgentPool", {
        "agentPoolName": "t4", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule"],
        "enableAutoScaling": True, "minCount": 0, "maxCount": 2, "nodeLabels": {"gpu-aks.io/pool": "t4"}})
    findings = check_device_plugin_coverage([pool, _plugin(selector)],
                                            parse_rule_config(None)[DEVICE_PLUGIN_TOLERATES_POOLS])
    assert (findings == []) is served, [f.message for f in findings]


def test_the_pack_reads_a_nodepool_s_nodes_as_linux():
    from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage
    from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS
    from gpu_aks_policies.rules import parse_rule_config

    from tests.test_nodepool_inputs import NODEPOOL, _node_pool
    pool = StackResource("urn:np", NODEPOOL, _node_pool(taints=[{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]))
    assert check_device_plugin_coverage([pool, _plugin({"kubernetes.io/os": "linux"})],
                                        parse_rule_config(None)[DEVICE_PLUGIN_TOLERATES_POOLS]) == []


def test_without_the_platform_the_advice_selects_gpu_nodes_of_either_kind_and_lands_on_both():
    """#48: with no --platform the advice no longer names `accelerator: nvidia` as if every GPU node had it (NAP
    nodes never do): it says the label depends on the platform and gives node-selector terms, ORed, one for
    AKS's GPU label and one for Karpenter's. A pod that follows it fits a pool of prod (AgentPools) and of nap."""
    import yaml

    pod = _pod()
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config())
    [advice] = [v.message for v in report.violations if v.policy == "gpu-pods-select-gpu-nodes"]
    assert "depends on the platform" in advice and "accelerator: nvidia\n" not in advice
    fix = yaml.safe_load(advice[advice.index("affinity:"):])
    followed = {**pod, "spec": {**pod["spec"], **fix}}
    report = check_objects([LoadedObject("pod.yaml", 0, 1, followed)], default_rule_config())
    assert not [v for v in report.violations if v.policy == "gpu-pods-select-gpu-nodes"]
    for platform in (PROD, NAP):
        [explanation] = explain(followed, platform)
        assert explanation.lands_on, render([explanation])
