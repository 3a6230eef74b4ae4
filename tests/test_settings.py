"""The settings layer: defaults, and every kind of bad input with its exact message."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
from gpu_aks_policies.catalog import supported_vm_sizes

from components.aks_api import DEFAULT_KUBERNETES_VERSION, KUBERNETES_CALENDAR_CHECKED, KUBERNETES_MINORS
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.settings import SettingsError
from components.settings.api_server import ApiServerAccessSettings, api_server_warning
from tests.conftest import TODAY

#: Every stack without authorized ranges or a private API server gets this warning (docs/platform.md).
OPEN_API_SERVER = f"gpu-aks:cluster.apiServerAccessProfile: {api_server_warning(ApiServerAccessSettings())}"

BASE: dict[str, Any] = {
    "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2}],
}


def with_gpu_pool(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw["gpuPools"][0].update(changes)
    return raw


def with_cluster(**cluster: Any) -> dict[str, Any]:
    return {**BASE, "cluster": cluster}


def settings(raw: dict[str, Any], stack: str = "dev", location: Any = "eastus2", **kwargs: Any):
    return parse_settings(raw, stack, location, today=kwargs.pop("today", TODAY), **kwargs)


def problems(raw: dict[str, Any], **kwargs: Any) -> list[str]:
    with pytest.raises(SettingsError) as error:
        settings(raw, **kwargs)
    return error.value.problems


def test_defaults_for_a_gpu_pool():
    result = settings(BASE)
    pool = result.gpu_pools[0]
    assert (pool.min_count, pool.max_count) == (0, 2), "GPU pools scale to zero by default"
    assert pool.taints == ("sku=gpu:NoSchedule",)
    assert pool.labels == {"accelerator": "nvidia", "nvidia.com/gpu.accelerator": "nvidia-tesla-t4",
                           "gpu-aks.io/pool": "gput4"}
    assert pool.gpu_driver == "Install" and pool.device_plugin
    assert pool.azure_name.startswith("gput4") and len(pool.azure_name) == 9
    assert result.device_plugin.pools == ("gput4",)
    assert result.device_plugin.mig_strategy == "none"
    assert result.cluster.name == "gpu-aks-dev" and result.cluster.resource_group_name == "rg-gpu-aks-dev"
    assert result.cluster.kubernetes_version == DEFAULT_KUBERNETES_VERSION
    assert result.cluster.disable_local_accounts and result.cluster.aad_enabled
    assert result.access.grant_deployer_cluster_admin and result.access.role_propagation_seconds == 300
    assert result.admission_policy.validation_actions == ("Warn", "Audit")
    assert result.admission_policy.exempt_namespaces == ("kube-system", "gpu-resources")
    assert result.smoke_test.enabled is False and result.warnings == (OPEN_API_SERVER,)


def test_default_kubernetes_version_has_six_months_of_support_left():
    [default] = [m for m in KUBERNETES_MINORS if m.version == DEFAULT_KUBERNETES_VERSION]
    assert (default.end_of_support - KUBERNETES_CALENDAR_CHECKED).days >= 183


def test_mig_pool_labels_partition_and_defaults_strategy_single():
    result = settings(with_gpu_pool(name="a100", vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG2g"))
    pool = result.gpu_pools[0]
    assert pool.labels["nvidia.com/gpu.partition-size"] == "2g.20gb"
    assert pool.labels["nvidia.com/gpu.accelerator"] == "nvidia-a100-80gb"
    assert result.device_plugin.mig_strategy == "single"
    assert pool.gpus_per_node == 3 and pool.gpu_resource == "nvidia.com/gpu"


def test_mixed_strategy_makes_pods_ask_for_the_mig_resource():
    raw = with_gpu_pool(name="a100", vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG1g", minCount=1)
    raw["devicePlugin"] = {"migStrategy": "mixed"}
    assert settings(raw).gpu_pools[0].gpu_resource == "nvidia.com/mig-1g.10gb"


def test_spot_pool_declares_the_taint_aks_adds():
    pool = settings(with_gpu_pool(scaleSetPriority="Spot")).gpu_pools[0]
    assert pool.spot and pool.taints == ("sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule")


def test_whole_floats_from_the_wire_are_counts():
    pool = settings(with_gpu_pool(minCount=1.0, maxCount=3.0)).gpu_pools[0]
    assert (pool.min_count, pool.max_count) == (1, 3)


def test_gpu_driver_none_pool_is_not_served_by_our_device_plugin():
    raw = copy.deepcopy(BASE)
    raw["gpuPools"].append({"name": "operator", "vmSize": "Standard_NC24ads_A100_v4", "gpuProfile": {"driver": "None"}})
    result = settings(raw)
    assert result.device_plugin.pools == ("gput4",)
    assert [p.name for p in platform_pools(result).served] == ["gput4"]


def test_autoscaler_values_keep_the_api_types():
    profile = settings(with_cluster(autoScalerProfile={
        "daemonset-eviction-for-empty-nodes": True, "ignore-daemonsets-utilization": False,
        "balance-similar-node-groups": "true", "max-total-unready-percentage": "100", "scan-interval": "20",
        "new-pod-scale-up-delay": "30s", "scale-down-utilization-threshold": "0.65"})).cluster.autoscaler_profile
    assert profile["daemonset-eviction-for-empty-nodes"] is True and profile["ignore-daemonsets-utilization"] is False
    assert profile["balance-similar-node-groups"] == "true" and profile["expander"] == "least-waste"


@pytest.mark.parametrize("stack, name", [("dev.eu", "gpu-aks-dev-eu"), ("team_a", "gpu-aks-team_a"),
                                         ("x" * 80, "gpu-aks-" + "x" * 55), ("prod--", "gpu-aks-prod")])
def test_default_names_from_the_stack_name_are_ones_azure_accepts(stack, name):
    cluster = settings(BASE, stack=stack).cluster
    assert cluster.name == name and cluster.resource_group_name == f"rg-{name}"


def test_a_version_close_to_its_end_of_support_is_a_warning():
    result = settings(with_cluster(kubernetesVersion="1.36"), today=date(2027, 5, 20))
    assert result.warnings == ("gpu-aks:cluster.kubernetesVersion: '1.36' reaches its AKS end of support on "
                               "2027-06-30 (41 days); upgrade to 1.37", OPEN_API_SERVER)


@pytest.mark.parametrize("channel, version, moves", [
    ("stable", "1.36", True), ("rapid", "1.37", True), ("patch", "1.37.2", True), ("patch", "1.37", False),
    ("node-image", "1.37.2", False), ("none", "1.37", False)])
def test_which_channels_move_the_version(channel, version, moves):
    assert settings(with_cluster(upgradeChannel=channel, kubernetesVersion=version)).cluster.aks_moves_version is moves


P = "gpu-aks:gpuPools[gput4]"
CASES = [
    ("min above max", with_gpu_pool(minCount=3, maxCount=2),
     [f"{P}.minCount: 3 is above maxCount 2; the autoscaler needs minCount <= maxCount"]),
    ("negative count", with_gpu_pool(minCount=-1),
     [f"{P}.minCount: -1 is negative; node counts start at 0"]),
    ("max above the AKS limit", with_gpu_pool(maxCount=1001),
     [f"{P}.maxCount: 1001 is above the AKS limit of 1000 nodes per pool"]),
    ("fractional count", with_gpu_pool(maxCount=2.5),
     [f"{P}.maxCount: 2.5 is not a whole number of nodes"]),
    ("unknown VM size", with_gpu_pool(vmSize="Standard_NC999_v9"),
     # The catalogue is policies/catalog.py's; the message lists it whole.
     [f"{P}.vmSize: 'Standard_NC999_v9' is not an NVIDIA GPU size gpu-aks knows; supported: "
      f"{', '.join(supported_vm_sizes())}; for a newer N-series size, declare its GPU: "
      "gpu: {model: B200, count: 8, memoryGiB: 180}"]),
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
     [f"{P}.nodeTaints: [\"sku=gpu:PreferNoSchedule\"] has no NoSchedule taint; a GPU pool needs one so only "
      "GPU pods land on it (the default is 'sku=gpu:NoSchedule')"]),
    ("malformed label key", with_gpu_pool(nodeLabels={"team name": "ml"}),
     [f"{P}.nodeLabels.team name: label key 'team name' must be a qualified name: an optional DNS-subdomain "
      "prefix and '/', then 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"]),
    ("malformed label value", with_gpu_pool(nodeLabels={"team": "-ml-"}),
     [f"{P}.nodeLabels.team: label value '-ml-' must be empty or 1-63 letters, digits, '-', '_' or '.', "
      "starting and ending with a letter or digit"]),
    ("reserved label prefix", with_gpu_pool(nodeLabels={"kubernetes.azure.com/team": "ml"}),
     [f"{P}.nodeLabels.kubernetes.azure.com/team: label key 'kubernetes.azure.com/team' is reserved (AKS: "
      "kubernetes.azure.com/, kubernetes.io/, k8s.io/; gpu-aks sets gpu-aks.io/pool); pick another key"]),
    ("label conflicting with a derived one", with_gpu_pool(nodeLabels={"accelerator": "amd"}),
     [f"{P}.nodeLabels.accelerator: 'amd' conflicts with the value gpu-aks sets ('nvidia'); remove it"]),
    ("pool name AKS would refuse", with_gpu_pool(name="GPU_pool_number_1"),
     ["gpu-aks:gpuPools[0].name: 'GPU_pool_number_1' is not a name AKS accepts for a Linux pool: 1-12 lowercase letters "
      "and digits, starting with a letter (e.g. 'gput4')"]),
    ("pool name too long", with_gpu_pool(name="gpupoolnumber1"),
     ["gpu-aks:gpuPools[0].name: 'gpupoolnumber1' is not a name AKS accepts for a Linux pool: 1-12 lowercase letters and "
      "digits, starting with a letter (e.g. 'gput4')"]),
    ("duplicate pool name", {**BASE, "cpuPools": [{"name": "gput4", "vmSize": "Standard_D8ds_v5"}]},
     ["gpu-aks:gpuPools[0].name: 'gput4' is already the name of cpuPools[0]; pool names must be unique"]),
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
     ["gpu-aks:cpuPools[cpu].vmSize: 'Standard_NC4as_T4_v3' is a GPU size; declare GPU pools under gpuPools so "
      "they get the GPU taint, labels and the device plugin"]),
    ("system pool at zero", {**BASE, "systemPool": {"minCount": 0}},
     ["gpu-aks:systemPool.minCount: 0 is below 1; a system pool needs at least one node"]),
    ("spot price on a regular pool", with_gpu_pool(spotMaxPrice=0.5),
     [f"{P}.spotMaxPrice: is only valid with scaleSetPriority: Spot"]),
    ("unknown pool key (a typo)", with_gpu_pool(nodeTaint=["sku=gpu:NoSchedule"]),
     [f"{P}.nodeTaint: unknown setting; did you mean 'nodeTaints'? allowed: name, vmSize, minCount, maxCount, "
      "nodeTaints, nodeLabels, availabilityZones, osSKU, maxSurge, maxUnavailable, drainTimeoutInMinutes, "
      "nodeSoakDurationInMinutes, undrainableNodeBehavior, scaleSetPriority, spotMaxPrice, keepAzureName, "
      "vnetSubnetID, podSubnetID, osDiskType, osDiskSizeGB, maxPods, enableEncryptionAtHost, "
      "gpu, gpuInstanceProfile, gpuProfile, sharing"]),
    ("unknown top-level key", {**BASE, "gpuPool": []},
     ["gpu-aks:gpuPool: unknown config key; did you mean 'gpu-aks:gpuPools'? gpu-aks takes cluster, access, "
      "systemPool, cpuPools, gpuPools, gpuNodePools, devicePlugin, dra, queues, admissionPolicy, smokeTest, "
      "maintenance, observability"]),
    ("unquoted Kubernetes version", {**BASE, "cluster": {"kubernetesVersion": 1.3}},
     ["gpu-aks:cluster.kubernetesVersion: 1.3 is not a Kubernetes version like \"1.37\" or \"1.37.2\" (quote it "
      "in YAML)"]),
    ("local accounts disabled without Azure AD", {**BASE, "cluster": {"aadProfile": {"managed": False}}},
     ["gpu-aks:cluster.disableLocalAccounts: true needs aadProfile.managed: true; without Azure AD and local "
      "accounts nobody could reach the API server"]),
    ("bad kubelogin mode", {**BASE, "cluster": {"kubeloginMode": "devicecode"}},
     ["gpu-aks:cluster.kubeloginMode: 'devicecode' is not allowed; allowed: azurecli, spn, msi, workloadidentity"]),
    ("unknown autoscaler setting", {**BASE, "cluster": {"autoScalerProfile": {"scale-down-time": "5m"}}},
     ["gpu-aks:cluster.autoScalerProfile.scale-down-time: unknown setting; did you mean 'scale-down-unready-time'? "
      "allowed: balance-similar-node-groups, daemonset-eviction-for-empty-nodes, daemonset-eviction-for-occupied-nodes, "
      "expander, ignore-daemonsets-utilization, max-empty-bulk-delete, max-graceful-termination-sec, "
      "max-node-provision-time, max-total-unready-percentage, new-pod-scale-up-delay, ok-total-unready-count, "
      "scale-down-delay-after-add, scale-down-delay-after-delete, scale-down-delay-after-failure, "
      "scale-down-unneeded-time, scale-down-unready-time, scale-down-utilization-threshold, scan-interval, "
      "skip-nodes-with-local-storage, skip-nodes-with-system-pods"]),
    ("bad driver choice", with_gpu_pool(gpuProfile={"driver": "Skip"}),
     [f"{P}.gpuProfile.driver: 'Skip' is not allowed; allowed: Install, None"]),

    # --- What API version 2025-09-01 accepts (issue: platform fidelity) ---
    ("autoscaler boolean as a string", with_cluster(autoScalerProfile={"daemonset-eviction-for-empty-nodes": "true"}),
     ["gpu-aks:cluster.autoScalerProfile.daemonset-eviction-for-empty-nodes: 'true' is not allowed; AKS API "
      "2025-09-01 takes true or false"]),
    ("unknown expander", with_cluster(autoScalerProfile={"expander": "fastest"}),
     ["gpu-aks:cluster.autoScalerProfile.expander: 'fastest' is not allowed; AKS API 2025-09-01 takes one of "
      "least-waste, most-pods, priority, random"]),
    ("duration in seconds where minutes are required", with_cluster(autoScalerProfile={"scale-down-unneeded-time": "300s"}),
     ["gpu-aks:cluster.autoScalerProfile.scale-down-unneeded-time: '300s' is not allowed; AKS API 2025-09-01 takes "
      "a string of whole minutes, e.g. \"10m\" (the API takes no other unit)"]),
    ("percentage above 100", with_cluster(autoScalerProfile={"max-total-unready-percentage": "150"}),
     ["gpu-aks:cluster.autoScalerProfile.max-total-unready-percentage: '150' is not allowed; AKS API 2025-09-01 "
      "takes a whole percentage from 0 to 100 as a string, e.g. \"45\""]),
    ("yes for a true/false string", with_cluster(autoScalerProfile={"balance-similar-node-groups": "yes"}),
     ["gpu-aks:cluster.autoScalerProfile.balance-similar-node-groups: 'yes' is not allowed; AKS API 2025-09-01 "
      "takes \"true\" or \"false\" (a quoted string)"]),
    ("YAML boolean where the API takes a string", with_cluster(autoScalerProfile={"skip-nodes-with-system-pods": False}),
     ["gpu-aks:cluster.autoScalerProfile.skip-nodes-with-system-pods: false is not allowed; AKS API 2025-09-01 "
      "takes \"true\" or \"false\" (a quoted string)"]),
    ("osSKU newer than the API version", with_gpu_pool(osSKU="Ubuntu2404"),
     [f"{P}.osSKU: 'Ubuntu2404' is not allowed; allowed: Ubuntu, AzureLinux, AzureLinux3, CBLMariner, Ubuntu2204"]),
    ("cluster name with a dot", with_cluster(name="gpu.aks"),
     ["gpu-aks:cluster.name: 'gpu.aks' is not a cluster name AKS accepts: 1-63 letters, digits, '-' and '_', "
      "starting and ending with a letter or digit"]),
    ("cluster name over 63 characters", with_cluster(name="a" * 64),
     [f"gpu-aks:cluster.name: '{'a' * 64}' is not a cluster name AKS accepts: 1-63 letters, digits, '-' and '_', "
      "starting and ending with a letter or digit"]),
    ("cluster name with a trailing newline", with_cluster(name="gpuaks\n"),
     ["gpu-aks:cluster.name: 'gpuaks\\n' is not a cluster name AKS accepts: 1-63 letters, digits, '-' and '_', "
      "starting and ending with a letter or digit"]),
    ("resource group over 90 characters", with_cluster(resourceGroupName="r" * 91),
     [f"gpu-aks:cluster.resourceGroupName: '{'r' * 59}… is not a resource group name Azure accepts: 1-90 letters, "
      "digits, '-', '_', '.', '(' and ')', not ending with '.'"]),
    ("resource group with a slash", with_cluster(resourceGroupName="rg/gpu"),
     ["gpu-aks:cluster.resourceGroupName: 'rg/gpu' is not a resource group name Azure accepts: 1-90 letters, "
      "digits, '-', '_', '.', '(' and ')', not ending with '.'"]),
    ("pool name with a trailing newline", with_gpu_pool(name="gput4\n"),
     ["gpu-aks:gpuPools[0].name: 'gput4\\n' is not a name AKS accepts for a Linux pool: 1-12 lowercase letters "
      "and digits, starting with a letter (e.g. 'gput4')"]),
    ("pool name too long for the suffix", with_gpu_pool(name="gpunumber1"),
     ["gpu-aks:gpuPools[gpunumber1].name: 'gpunumber1' is longer than 8 characters: gpu-aks adds 4 hex characters "
      "to a pool's Azure name (so a replacement can be created before the old pool is deleted) and AKS allows 12; "
      "shorten it, or set keepAzureName: true"]),
    ("Kubernetes version past its end of support", with_cluster(kubernetesVersion="1.33"),
     ["gpu-aks:cluster.kubernetesVersion: '1.33' reached its AKS end of support: its last supported day was "
      "2026-06-30; supported on 2026-11-22: 1.34, 1.35, 1.36, 1.37 (AKS release calendar)"]),
    ("long-gone Kubernetes version", with_cluster(kubernetesVersion="1.29"),
     ["gpu-aks:cluster.kubernetesVersion: '1.29' is not a version AKS supports; supported on 2026-11-22: 1.34, "
      "1.35, 1.36, 1.37 (AKS release calendar)"]),
    ("Kubernetes version from the future", with_cluster(kubernetesVersion="1.99"),
     ["gpu-aks:cluster.kubernetesVersion: '1.99' is not a version AKS supports; supported on 2026-11-22: 1.34, "
      "1.35, 1.36, 1.37 (AKS release calendar)"]),
    ("nobody would have Kubernetes rights", {**BASE, "access": {"grantDeployerClusterAdmin": False}},
     ["gpu-aks:access.grantDeployerClusterAdmin: is false, cluster.disableLocalAccounts is true and "
      "cluster.aadProfile.adminGroupObjectIDs is empty: nobody would have Kubernetes rights, so creating the "
      "namespace and the device plugin would fail with Forbidden after the GPU pools already bill. Keep the grant "
      "(the default), list an admin group, or set disableLocalAccounts: false"]),
    ("Deny and Warn together", {**BASE, "admissionPolicy": {"validationActions": ["Deny", "Warn"]}},
     ["gpu-aks:admissionPolicy.validationActions: [\"Deny\", \"Warn\"] must be a non-empty list out of Deny, Warn, "
      "Audit, without both Deny and Warn (the API refuses that pair)"]),
    ("smoke test with nothing to test", {**BASE, "devicePlugin": {"enabled": False}, "smokeTest": {"enabled": True}},
     ["gpu-aks:smokeTest.enabled: true, but no GPU pool is served by gpu-aks's device plugin (devicePlugin.enabled "
      "or devicePlugin.pools) nor by the DRA driver (dra.pools), so there is nothing to test"]),
    # --- A new user's first hour ---
    ("region under the project namespace", {**BASE, "location": "eastus2"},
     ["gpu-aks:location: the Azure region is read from azure-native:location; write `azure-native:location: "
      "eastus2` in Pulumi.<stack>.yaml instead"]),
    ("a key that is not a string", with_gpu_pool(**{"1": "x"}),
     [f"{P}.1: unknown setting; allowed: name, vmSize, minCount, maxCount, nodeTaints, nodeLabels, availabilityZones, "
      "osSKU, maxSurge, maxUnavailable, drainTimeoutInMinutes, "
      "nodeSoakDurationInMinutes, undrainableNodeBehavior, scaleSetPriority, spotMaxPrice, keepAzureName, "
      "vnetSubnetID, podSubnetID, osDiskType, osDiskSizeGB, maxPods, enableEncryptionAtHost, "
      "gpu, gpuInstanceProfile, gpuProfile, sharing"]),
    ("an object where a list belongs", {**BASE, "cpuPools": {"name": "cpu"}},
     ["gpu-aks:cpuPools: expected a list of pools, got {\"name\": \"cpu\"}"]),
]


@pytest.mark.parametrize("raw, expected", [(raw, expected) for _, raw, expected in CASES],
                         ids=[case[0] for case in CASES])
def test_each_bad_input_is_reported_exactly(raw, expected):
    assert problems(raw) == expected


def test_missing_location_is_named_plainly():
    assert problems(BASE, location=None) == [
        "azure-native:location: is not set; set the Azure region with `pulumi config set azure-native:location eastus2`"]


def test_all_problems_are_reported_together_without_knock_on_errors():
    raw = copy.deepcopy(BASE)
    raw["gpuPools"] = [
        {"name": "GPU", "vmSize": "Standard_NC6", "minCount": 5, "maxCount": 2},
        {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "gpuInstanceProfile": "MIG1g", "nodeTaints": ["bad"]},
    ]
    error = pytest.raises(SettingsError, settings, raw).value
    assert error.problems == [
        "gpu-aks:gpuPools[0].name: 'GPU' is not a name AKS accepts for a Linux pool: 1-12 lowercase letters and "
        "digits, starting with a letter (e.g. 'gput4')",
        "gpu-aks:gpuPools[0].vmSize: 'Standard_NC6': NC-series (Tesla K80) was retired by Azure on 2023-09-06; use "
        "Standard_NC4as_T4_v3 (NCasT4_v3, T4) or Standard_NC24ads_A100_v4 (NC A100 v4)",
        "gpu-aks:gpuPools[0].minCount: 5 is above maxCount 2; the autoscaler needs minCount <= maxCount",
        "gpu-aks:gpuPools[t4].gpuInstanceProfile: 'MIG1g' needs a MIG-capable GPU, but Standard_NC4as_T4_v3 has T4; "
        "MIG works on A100, H100 and H200 sizes",
        "gpu-aks:gpuPools[t4].nodeTaints[0]: taint 'bad' has no effect: write it as key=value:Effect, e.g. "
        "'sku=gpu:NoSchedule'",
    ], "a bad taint is one problem, not also 'has no NoSchedule taint'"
    text = str(error)
    assert text.startswith("the stack config has 5 problem(s); nothing was created:")


def test_secret_values_are_masked_but_keys_named():
    raw = {**BASE, "cluster": {"name": "s3cr3t value!", "tags": {"token": 42}}}
    assert problems(raw, secret_keys={"cluster"}) == [
        "gpu-aks:cluster.name: [secret] is not a cluster name AKS accepts: 1-63 letters, digits, '-' and '_', "
        "starting and ending with a letter or digit",
        "gpu-aks:cluster.tags: [secret] must be a map of strings to strings"]


def test_no_python_reprs_in_messages():
    text = "\n".join(problems({**BASE, "cluster": {"tags": {"a": None}, "autoScalerProfile": {"expander": True}}}))
    assert "None" not in text and "True" not in text and "{'" not in text


# --- Derived from the declarations --------------------------------------------------------------


def test_the_configuration_reference_page_is_current():
    from pathlib import Path

    from components.platform_settings import reference_markdown

    page = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
    assert page.read_text() == reference_markdown(), (
        "docs/configuration.md is stale: regenerate it with python -c 'from components.settings import "
        "reference_markdown; print(reference_markdown(), end=\"\")' > docs/configuration.md")


def test_every_key_is_on_the_reference_page():
    from gpu_aks_policies.declarations import Key, ListOf, Section

    from components.platform_settings import DOCUMENT, reference_markdown

    page = reference_markdown()

    def names(section: Section, prefix: str = ""):
        for item in section.items:
            if isinstance(item, Key):
                yield prefix + item.name
            elif isinstance(item, Section):
                yield from names(item, prefix + item.name + ".")
            elif isinstance(item, ListOf):
                yield from names(item.item)

    for section in DOCUMENT.root.items:
        if isinstance(section, (Section, ListOf)):
            assert f"`{DOCUMENT.namespace}:{section.name}`" in page
            for name in names(section if isinstance(section, Section) else section.item):
                assert f"| `{name}` |" in page, name


CREATE_ONLY_CHANGES = {
    "vmSize": "Standard_NC48ads_A100_v4", "osSKU": "AzureLinux", "availabilityZones": ["1"],
    "scaleSetPriority": "Spot", "gpuInstanceProfile": "MIG2g", "gpuProfile": {"driver": "None"},
    "osDiskType": "Ephemeral", "osDiskSizeGB": 128, "maxPods": 110, "enableEncryptionAtHost": True,
}
#: Create-only too, but they need the system pool in a subnet: tests/test_network.py renames with them.
CREATE_ONLY_SUBNET_KEYS = {"vnetSubnetID", "podSubnetID"}
UPDATABLE_CHANGES = {"minCount": 1, "maxCount": 9, "nodeTaints": ["sku=gpu:NoSchedule", "team=ml:NoSchedule"],
                     "nodeLabels": {"team": "ml"}, "maxSurge": "1"}


def test_create_only_keys_are_declared_once_and_each_renames_the_pool():
    from components.pools.gpu import GPU_POOL
    from components.settings import create_only_properties

    declared = create_only_properties(GPU_POOL)
    assert set(declared) - {"spotMaxPrice", "scaleSetEvictionPolicy"} == set(CREATE_ONLY_CHANGES) | CREATE_ONLY_SUBNET_KEYS
    base = {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG1g"}

    def azure_name(**changes: Any) -> str:
        raw = {"gpuPools": [{**base, **changes}], "devicePlugin": {"pools": []}}
        return settings(raw).gpu_pools[0].azure_name

    for key, value in CREATE_ONLY_CHANGES.items():
        assert azure_name(**{key: value}) != azure_name(), key
    assert azure_name(scaleSetPriority="Spot", spotMaxPrice=0.5) != azure_name(scaleSetPriority="Spot")
    for key, value in UPDATABLE_CHANGES.items():
        assert azure_name(**{key: value}) == azure_name(), key


def test_which_pools_the_device_plugin_serves_is_stored_once():
    raw = copy.deepcopy(BASE)
    raw["gpuPools"].append({"name": "other", "vmSize": "Standard_NC4as_T4_v3"})
    # A GPU pool the plugin leaves out runs another plugin (else the pack's device-plugin rule refuses it).
    raw["gpuPools"][0]["gpuProfile"] = {"driver": "None"}
    raw["devicePlugin"] = {"pools": ["other"]}
    result = settings(raw)
    assert [pool.device_plugin for pool in result.gpu_pools] == [False, True]
    assert all(pool.plugin is result.device_plugin for pool in result.gpu_pools)


def test_the_checks_across_sections_judge_the_pools_and_report_with_every_other_problem():
    """`devicePlugin.pools` and its checks read the document's pools as the model (`components.pools.document`),
    each pool whose own section parsed cleanly: a problem elsewhere (the cluster's name) stops none of them,
    and a pool with a problem of its own is named by it alone, not also as "not a GPU pool"."""
    raw = copy.deepcopy(BASE)
    raw["cluster"] = {"name": "bad name!"}
    raw["cpuPools"] = [{"name": "cpu", "vmSize": "Standard_D4ds_v5"}]
    raw["gpuPools"] = [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "sharing": {"strategy": "timeSlicing",
                                                                                   "replicas": 4}},
                       {"name": "bad", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["x"]}]
    raw["devicePlugin"] = {"pools": ["bad"]}
    assert [problem.split(": ")[0] for problem in problems(raw)] == [
        "gpu-aks:cluster.name", "gpu-aks:gpuPools[bad].nodeTaints[0]", "gpu-aks:gpuPools[t4].sharing"]
    raw["devicePlugin"] = {"pools": ["cpu", "t4"]}
    assert "gpu-aks:devicePlugin.pools[0]: 'cpu' is not a GPU pool; GPU pools: t4" in problems(raw)
