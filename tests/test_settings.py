"""The settings layer: defaults, and every kind of bad input with its exact message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.settings import SettingsError, parse_settings

BASE: dict[str, Any] = {
    "location": "eastus2",
    "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2}],
}


def with_gpu_pool(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw["gpuPools"][0].update(changes)
    return raw


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SettingsError) as error:
        parse_settings(raw, "dev")
    return error.value.problems


def test_defaults_for_a_gpu_pool():
    settings = parse_settings(BASE, "dev")
    pool = settings.gpu_pools[0]
    assert (pool.min_count, pool.max_count) == (0, 2), "GPU pools scale to zero by default"
    assert pool.taints == ("sku=gpu:NoSchedule",)
    assert pool.labels == {"accelerator": "nvidia", "nvidia.com/gpu.accelerator": "nvidia-tesla-t4"}
    assert pool.gpu_driver == "Install" and pool.device_plugin
    assert settings.device_plugin.pools == ("gput4",)
    assert settings.device_plugin.mig_strategy == "none"
    assert settings.cluster.name == "gpu-aks-dev"
    assert settings.cluster.disable_local_accounts and settings.cluster.aad_enabled
    assert settings.smoke_test.enabled is False


def test_mig_pool_labels_partition_and_defaults_strategy_single():
    settings = parse_settings(with_gpu_pool(name="a100", vmSize="Standard_NC24ads_A100_v4",
                                            gpuInstanceProfile="MIG2g"), "dev")
    pool = settings.gpu_pools[0]
    assert pool.labels["nvidia.com/gpu.partition-size"] == "2g.20gb"
    assert pool.labels["nvidia.com/gpu.accelerator"] == "nvidia-a100-80gb"
    assert settings.device_plugin.mig_strategy == "single"
    assert pool.gpus_per_node == 3 and pool.gpu_resource == "nvidia.com/gpu"


def test_mixed_strategy_makes_pods_ask_for_the_mig_resource():
    raw = with_gpu_pool(name="a100", vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG1g")
    raw["devicePlugin"] = {"migStrategy": "mixed"}
    assert parse_settings(raw, "dev").gpu_pools[0].gpu_resource == "nvidia.com/mig-1g.10gb"


def test_spot_pool_declares_the_taint_aks_adds():
    pool = parse_settings(with_gpu_pool(scaleSetPriority="Spot"), "dev").gpu_pools[0]
    assert pool.spot and pool.taints == ("sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule")


def test_whole_floats_from_the_wire_are_counts():
    pool = parse_settings(with_gpu_pool(minCount=1.0, maxCount=3.0), "dev").gpu_pools[0]
    assert (pool.min_count, pool.max_count) == (1, 3)


def test_gpu_driver_none_pool_is_not_served_by_our_device_plugin():
    raw = copy.deepcopy(BASE)
    raw["gpuPools"].append({"name": "operator", "vmSize": "Standard_NC24ads_A100_v4", "gpuProfile": {"driver": "None"}})
    settings = parse_settings(raw, "dev")
    assert settings.device_plugin.pools == ("gput4",)
    assert [p.name for p in settings.served_gpu_pools()] == ["gput4"]


P = "gpu-aks:gpuPools[0]"
CASES = [
    ("min above max", with_gpu_pool(minCount=3, maxCount=2),
     [f"{P}.minCount: 3 is above maxCount 2; the autoscaler needs minCount <= maxCount"]),
    ("negative count", with_gpu_pool(minCount=-1),
     [f"{P}.minCount: -1 is negative; node counts start at 0"]),
    ("max above the AKS limit", with_gpu_pool(maxCount=1001),
     [f"{P}.maxCount: 1001 is above the AKS limit of 1000 nodes per pool"]),
    ("fractional count", with_gpu_pool(maxCount=2.5),
     [f"{P}.maxCount: 2.5 is not a whole number"]),
    ("unknown VM size", with_gpu_pool(vmSize="Standard_NC999_v9"),
     [f"{P}.vmSize: 'Standard_NC999_v9' is not an NVIDIA GPU size gpu-aks knows; supported: "
      "Standard_NC4as_T4_v3, Standard_NC8as_T4_v3, Standard_NC16as_T4_v3, Standard_NC64as_T4_v3, "
      "Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4, Standard_NC96ads_A100_v4, Standard_ND96asr_v4, "
      "Standard_ND96amsr_A100_v4, Standard_NC40ads_H100_v5, Standard_NC80adis_H100_v5, "
      "Standard_ND96isr_H100_v5, Standard_ND96isr_H200_v5"]),
    ("the seeds' retired NC6", with_gpu_pool(vmSize="Standard_NC6"),
     [f"{P}.vmSize: 'Standard_NC6': NC-series (Tesla K80) was retired by Azure on 2023-09-06; use "
      "Standard_NC4as_T4_v3 (NCasT4_v3, T4) or Standard_NC24ads_A100_v4 (NC A100 v4)"]),
    ("retired NCv2", with_gpu_pool(vmSize="Standard_NC12s_v2"),
     [f"{P}.vmSize: 'Standard_NC12s_v2': NCv2-series (Tesla P100) was retired by Azure on 2023-09-06; use "
      "Standard_NC24ads_A100_v4 (NC A100 v4)"]),
    ("retired NDv1", with_gpu_pool(vmSize="Standard_ND24s"),
     [f"{P}.vmSize: 'Standard_ND24s': ND-series (Tesla P40) was retired by Azure on 2023-09-06; use "
      "Standard_NC24ads_A100_v4 (NC A100 v4)"]),
    ("retired NCv3", with_gpu_pool(vmSize="Standard_NC6s_v3"),
     [f"{P}.vmSize: 'Standard_NC6s_v3': NCv3-series (Tesla V100) was retired by Azure on 2025-09-30; use "
      "Standard_NC24ads_A100_v4 (NC A100 v4, the replacement Azure names)"]),
    ("AMD NVv4", with_gpu_pool(vmSize="Standard_NV8as_v4"),
     [f"{P}.vmSize: 'Standard_NV8as_v4': NVv4-series (AMD Radeon Instinct MI25) is not supported on AKS; use "
      "an NVIDIA size such as Standard_NC4as_T4_v3"]),
    ("MIG on a T4", with_gpu_pool(gpuInstanceProfile="MIG1g"),
     [f"{P}.gpuInstanceProfile: 'MIG1g' needs a MIG-capable GPU, but Standard_NC4as_T4_v3 has T4; MIG works "
      "on A100, H100 and H200 sizes"]),
    ("unknown MIG profile", with_gpu_pool(vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG5g"),
     [f"{P}.gpuInstanceProfile: 'MIG5g' is not allowed; allowed: MIG1g, MIG2g, MIG3g, MIG4g, MIG7g"]),
    ("malformed taint", with_gpu_pool(nodeTaints=["sku=gpu"]),
     [f"{P}.nodeTaints[0]: taint 'sku=gpu' has no effect: write it as key=value:Effect, e.g. "
      "'sku=gpu:NoSchedule'"]),
    ("bad taint effect", with_gpu_pool(nodeTaints=["sku=gpu:NoScheduled"]),
     [f"{P}.nodeTaints[0]: taint 'sku=gpu:NoScheduled' has effect 'NoScheduled'; allowed: NoSchedule, "
      "PreferNoSchedule, NoExecute"]),
    ("GPU pool without a NoSchedule taint", with_gpu_pool(nodeTaints=["sku=gpu:PreferNoSchedule"]),
     [f"{P}.nodeTaints: ['sku=gpu:PreferNoSchedule'] has no NoSchedule taint; a GPU pool needs one so only "
      "GPU pods land on it (the default is 'sku=gpu:NoSchedule')"]),
    ("malformed label key", with_gpu_pool(nodeLabels={"team name": "ml"}),
     [f"{P}.nodeLabels.team name: label key 'team name' must be a qualified name: an optional DNS-subdomain "
      "prefix and '/', then 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"]),
    ("malformed label value", with_gpu_pool(nodeLabels={"team": "-ml-"}),
     [f"{P}.nodeLabels.team: label value '-ml-' must be empty or 1-63 letters, digits, '-', '_' or '.', "
      "starting and ending with a letter or digit"]),
    ("reserved label prefix", with_gpu_pool(nodeLabels={"kubernetes.azure.com/team": "ml"}),
     [f"{P}.nodeLabels.kubernetes.azure.com/team: label key 'kubernetes.azure.com/team' uses a prefix AKS "
      "reserves (kubernetes.azure.com/, kubernetes.io/, k8s.io/); pick another prefix"]),
    ("label conflicting with a derived one", with_gpu_pool(nodeLabels={"accelerator": "amd"}),
     [f"{P}.nodeLabels.accelerator: 'amd' conflicts with the value gpu-aks sets ('nvidia'); remove it"]),
    ("pool name AKS would refuse", with_gpu_pool(name="GPU_pool_number_1"),
     [f"{P}.name: 'GPU_pool_number_1' is not a name AKS accepts for a Linux pool: 1-12 lowercase letters "
      "and digits, starting with a letter (e.g. 'gput4')"]),
    ("pool name too long", with_gpu_pool(name="gpupoolnumber1"),
     [f"{P}.name: 'gpupoolnumber1' is not a name AKS accepts for a Linux pool: 1-12 lowercase letters and "
      "digits, starting with a letter (e.g. 'gput4')"]),
    ("duplicate pool name", {**BASE, "cpuPools": [{"name": "gput4", "vmSize": "Standard_D8ds_v5"}]},
     [f"{P}.name: 'gput4' is already the name of cpuPools[0]; pool names must be unique"]),
    ("device plugin on a pool whose driver is managed elsewhere",
     {**with_gpu_pool(gpuProfile={"driver": "None"}), "devicePlugin": {"pools": ["gput4"]}},
     ["gpu-aks:devicePlugin.pools[0]: 'gput4' has gpuProfile.driver: None, so its driver and device plugin "
      "are managed elsewhere (e.g. the NVIDIA GPU Operator); running this DaemonSet there too "
      "double-registers nvidia.com/gpu. Remove it from devicePlugin.pools"]),
    ("device plugin on an unknown pool", {**BASE, "devicePlugin": {"pools": ["nope"]}},
     ["gpu-aks:devicePlugin.pools[0]: 'nope' is not a GPU pool; GPU pools: gput4"]),
    ("MIG pools with migStrategy none",
     {**with_gpu_pool(vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG3g"),
      "devicePlugin": {"migStrategy": "none"}},
     ["gpu-aks:devicePlugin.migStrategy: 'none' cannot serve MIG pools (gput4); use 'single' (pods ask for "
      "nvidia.com/gpu) or 'mixed' (pods ask for nvidia.com/mig-<profile>)"]),
    ("GPU size in a CPU pool", {**BASE, "cpuPools": [{"name": "cpu", "vmSize": "Standard_NC4as_T4_v3"}]},
     ["gpu-aks:cpuPools[0].vmSize: 'Standard_NC4as_T4_v3' is a GPU size; declare GPU pools under gpuPools so "
      "they get the GPU taint, labels and the device plugin"]),
    ("system pool at zero", {**BASE, "systemPool": {"minCount": 0}},
     ["gpu-aks:systemPool.minCount: 0 is below 1; a system pool needs at least one node"]),
    ("spot price on a regular pool", with_gpu_pool(spotMaxPrice=0.5),
     [f"{P}.spotMaxPrice: is only valid with scaleSetPriority: Spot"]),
    ("unknown pool key (a typo)", with_gpu_pool(nodeTaint=["sku=gpu:NoSchedule"]),
     [f"{P}.nodeTaint: unknown setting; allowed: name, vmSize, minCount, maxCount, nodeTaints, nodeLabels, "
      "availabilityZones, osSKU, maxSurge, scaleSetPriority, spotMaxPrice, gpuInstanceProfile, gpuProfile"]),
    ("unknown top-level key", {**BASE, "gpuPool": []},
     ["gpu-aks:gpuPool: unknown config key; gpu-aks takes cluster, systemPool, cpuPools, gpuPools, "
      "devicePlugin, smokeTest"]),
    ("missing location", {"gpuPools": BASE["gpuPools"]},
     ["azure-native:location: None: set the Azure region, e.g. `pulumi config set azure-native:location eastus2`"]),
    ("unquoted Kubernetes version", {**BASE, "cluster": {"kubernetesVersion": 1.3}},
     ["gpu-aks:cluster.kubernetesVersion: 1.3 is not a Kubernetes version like \"1.34\" or \"1.34.1\" (quote it "
      "in YAML)"]),
    ("local accounts disabled without Azure AD", {**BASE, "cluster": {"aadProfile": {"managed": False}}},
     ["gpu-aks:cluster.disableLocalAccounts: true needs aadProfile.managed: true; without Azure AD and local "
      "accounts nobody could reach the API server"]),
    ("bad kubelogin mode", {**BASE, "cluster": {"kubeloginMode": "devicecode"}},
     ["gpu-aks:cluster.kubeloginMode: 'devicecode' is not allowed; allowed: azurecli, spn, msi, workloadidentity"]),
    ("unknown autoscaler setting", {**BASE, "cluster": {"autoScalerProfile": {"scale-down-time": "5m"}}},
     ["gpu-aks:cluster.autoScalerProfile.scale-down-time: unknown autoscaler setting; allowed: "
      "balance-similar-node-groups, daemonset-eviction-for-empty-nodes, daemonset-eviction-for-occupied-nodes, "
      "expander, ignore-daemonsets-utilization, max-empty-bulk-delete, max-graceful-termination-sec, "
      "max-node-provision-time, max-total-unready-percentage, new-pod-scale-up-delay, ok-total-unready-count, "
      "scale-down-delay-after-add, scale-down-delay-after-delete, scale-down-delay-after-failure, "
      "scale-down-unneeded-time, scale-down-unready-time, scale-down-utilization-threshold, scan-interval, "
      "skip-nodes-with-local-storage, skip-nodes-with-system-pods"]),
    ("bad driver choice", with_gpu_pool(gpuProfile={"driver": "Skip"}),
     [f"{P}.gpuProfile.driver: 'Skip' is not allowed; allowed: Install, None"]),
]


@pytest.mark.parametrize("raw, expected", [(raw, expected) for _, raw, expected in CASES],
                         ids=[case[0] for case in CASES])
def test_each_bad_input_is_reported_exactly(raw, expected):
    assert problems(raw) == expected


def test_all_problems_are_reported_together_in_one_error():
    raw = copy.deepcopy(BASE)
    raw["gpuPools"] = [
        {"name": "GPU", "vmSize": "Standard_NC6", "minCount": 5, "maxCount": 2},
        {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "gpuInstanceProfile": "MIG1g", "nodeTaints": ["bad"]},
    ]
    error = pytest.raises(SettingsError, parse_settings, raw, "dev").value
    assert len(error.problems) == 5
    text = str(error)
    assert text.startswith("the stack config has 5 problem(s); nothing was created:")
    for problem in error.problems:
        assert f"  - {problem}" in text
