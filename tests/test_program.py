"""The whole Pulumi program for dev and prod, under the Pulumi SDK's mock runtime."""

from __future__ import annotations

import json

import kubernetes_validate
import pulumi
import pytest
import yaml

from tests.conftest import KUBERNETES_SCHEMA_VERSION, ROOT, run_stack
from tools.mockrun import config_from_stack_file, run_program

AGENT_POOL = "azure-native:containerservice:AgentPool"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"


def test_dev_tree(dev_run):
    tree = sorted((r.type, r.name, r.parent.rsplit("::", 1)[-1]) for r in dev_run.resources)
    assert tree == sorted([
        ("gpu-aks:index:AksCluster", "aks", "gpu-aks-dev"),
        ("azure-native:resources:ResourceGroup", "aks-rg", "aks"),
        (MANAGED_CLUSTER, "aks-cluster", "aks"),
        ("pulumi:providers:kubernetes", "aks-k8s", "aks"),
        ("gpu-aks:index:NodePool", "cpu", "gpu-aks-dev"),
        (AGENT_POOL, "cpu-pool", "cpu"),
        ("gpu-aks:index:GpuNodePool", "gput4", "gpu-aks-dev"),
        (AGENT_POOL, "gput4-pool", "gput4"),
        ("gpu-aks:index:GpuDevicePlugin", "nvidia-device-plugin", "gpu-aks-dev"),
        ("kubernetes:core/v1:Namespace", "nvidia-device-plugin-namespace", "nvidia-device-plugin"),
        (DAEMONSET, "nvidia-device-plugin-daemonset", "nvidia-device-plugin"),
    ])


def test_dev_gpu_pool_scales_to_zero_with_the_seed_taint(dev_run):
    pool = dev_run.one(AGENT_POOL, "gput4-pool").inputs
    assert pool["vmSize"] == "Standard_NC4as_T4_v3"
    assert (pool["enableAutoScaling"], pool["minCount"], pool["maxCount"], pool["count"]) == (True, 0, 2, 0)
    assert pool["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert pool["nodeLabels"] == {"accelerator": "nvidia", "nvidia.com/gpu.accelerator": "nvidia-tesla-t4"}
    assert pool["gpuProfile"] == {"driver": "Install"}
    assert pool["mode"] == "User" and pool["agentPoolName"] == "gput4"


def test_cluster_is_locked_down_by_default(dev_run):
    cluster = dev_run.one(MANAGED_CLUSTER).inputs
    assert cluster["disableLocalAccounts"] is True
    assert cluster["aadProfile"]["managed"] is True and cluster["aadProfile"]["enableAzureRBAC"] is True
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"] == {"workloadIdentity": {"enabled": True}}
    assert cluster["identity"] == {"type": "SystemAssigned"}
    assert cluster["kubernetesVersion"] == "1.34"
    assert cluster["autoUpgradeProfile"]["upgradeChannel"] == "patch"
    assert cluster["autoScalerProfile"]["expander"] == "least-waste"
    [system] = cluster["agentPoolProfiles"]
    assert system["mode"] == "System" and system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    assert system["enableAutoScaling"] is True and (system["minCount"], system["maxCount"]) == (1, 2)


def test_drift_and_replacement_options(prod_run):
    cluster = prod_run.one(MANAGED_CLUSTER)
    assert cluster.ignore_changes == ["agentPoolProfiles"]
    for pool in prod_run.by_type(AGENT_POOL):
        assert pool.ignore_changes == ["count"]
        assert pool.delete_before_replace is True
        for prop in ("vmSize", "gpuInstanceProfile", "gpuProfile", "scaleSetPriority", "spotMaxPrice",
                     "scaleSetEvictionPolicy", "osSKU", "availabilityZones"):
            assert prop in pool.replace_on_changes
        assert "nodeTaints" not in pool.replace_on_changes, "taints are updatable in place"
        assert pool.dependencies, "a pool waits for its cluster"


def test_prod_mig_and_spot_pools(prod_run):
    mig = prod_run.one(AGENT_POOL, "a100mig-pool").inputs
    assert mig["gpuInstanceProfile"] == "MIG2g"
    assert mig["nodeLabels"]["nvidia.com/gpu.partition-size"] == "2g.20gb"
    assert mig["nodeLabels"]["team"] == "ml-platform"
    spot = prod_run.one(AGENT_POOL, "t4spot-pool").inputs
    assert spot["scaleSetPriority"] == "Spot" and spot["scaleSetEvictionPolicy"] == "Delete"
    assert spot["spotMaxPrice"] == -1
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in spot["nodeTaints"]
    assert "upgradeSettings" not in spot, "Spot pools get no surge nodes"


def test_device_plugin_tolerates_every_served_pool_and_runs_only_there(prod_run):
    spec = prod_run.one(DAEMONSET).inputs["spec"]["template"]["spec"]
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in spec["tolerations"]
    assert {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
            "effect": "NoSchedule"} in spec["tolerations"]
    [term] = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["a100mig", "t4spot"]}]
    assert spec["priorityClassName"] == "system-node-critical"
    [container] = spec["containers"]
    assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert container["resources"]["requests"] == {"cpu": "50m", "memory": "64Mi"}
    assert {"name": "MIG_STRATEGY", "value": "single"} in container["env"]
    assert spec["volumes"][0]["hostPath"]["path"] == "/var/lib/kubelet/device-plugins"
    assert prod_run.one(DAEMONSET).inputs["metadata"]["namespace"] == "gpu-resources"


def test_in_cluster_objects_use_the_cluster_provider(dev_run):
    provider = dev_run.one("pulumi:providers:kubernetes")
    for type_ in (DAEMONSET, "kubernetes:core/v1:Namespace"):
        assert dev_run.one(type_).provider.startswith(provider.urn + "::")


def test_kubeconfig_is_secret_and_logs_in_without_a_browser(dev_run, prod_run):
    assert "kubeconfig" in dev_run.secret_outputs
    dev_user = yaml.safe_load(dev_run.stack_outputs["kubeconfig"])["users"][0]["user"]["exec"]
    assert dev_user["args"][:3] == ["get-token", "--login", "azurecli"]
    assert "devicecode" not in dev_user["args"] and "--client-id" not in dev_user["args"]
    prod_user = yaml.safe_load(prod_run.stack_outputs["kubeconfig"])["users"][0]["user"]["exec"]
    assert prod_user["args"][:3] == ["get-token", "--login", "workloadidentity"]
    provider = dev_run.one("pulumi:providers:kubernetes")
    assert "kubeconfig" in provider.masked_inputs and provider.masked_inputs["kubeconfig"] == "[secret]"
    assert not (set(dev_run.stack_outputs) - {"kubeconfig"}) & dev_run.secret_outputs


def test_outputs_contract(prod_run):
    outputs = prod_run.stack_outputs
    assert outputs["clusterName"] == "gpu-aks-prod" and outputs["resourceGroupName"] == "rg-gpu-aks-prod"
    assert outputs["oidcIssuerUrl"].startswith("https://")
    mig = outputs["gpuPools"]["a100mig"]
    assert mig["gpuModel"] == "A100 80GB" and mig["gpusPerNode"] == 3 and mig["migPartition"] == "2g.20gb"
    assert mig["tolerations"] == [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert mig["nodeSelector"] == {"accelerator": "nvidia", "kubernetes.azure.com/agentpool": "a100mig"}
    spot = outputs["gpuPools"]["t4spot"]
    assert len(spot["tolerations"]) == 2 and spot["spot"] is True
    assert (spot["minCount"], spot["maxCount"]) == (0, 10)
    json.dumps(outputs)  # the contract is plain JSON for StackReference consumers


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_kubernetes_object_passes_the_official_schema(stack, dev_run, prod_run):
    run = dev_run if stack == "dev" else prod_run
    objects = [r for r in run.resources if r.type.startswith("kubernetes:") and r.custom]
    assert objects
    for resource in objects:
        group_version, kind = resource.type.split(":")[1], resource.type.split(":")[2]
        api_version = group_version.replace("core/", "")
        manifest = {"apiVersion": api_version, "kind": kind, **resource.inputs}
        kubernetes_validate.validate(manifest, KUBERNETES_SCHEMA_VERSION, strict=True)


def test_bad_config_stops_before_anything_is_registered(tmp_path):
    stack_file = tmp_path / "Pulumi.broken.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {
        "azure-native:location": "eastus2",
        "gpu-aks:gpuPools": [{"name": "gpunp", "vmSize": "Standard_NC6", "minCount": 3, "maxCount": 1}],
    }}))
    run = run_stack("broken", stack_file)
    assert isinstance(run.error, pulumi.RunError)
    message = str(run.error)
    assert "gpu-aks:gpuPools[0].vmSize: 'Standard_NC6': NC-series (Tesla K80) was retired" in message
    assert "gpu-aks:gpuPools[0].minCount: 3 is above maxCount 1" in message
    assert run.resources == []


def test_device_plugin_is_skipped_when_no_pool_needs_it(tmp_path):
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", "gpu-aks")
    config["gpu-aks:gpuPools"] = json.dumps([{"name": "operator", "vmSize": "Standard_NC24ads_A100_v4",
                                              "gpuProfile": {"driver": "None"}}])
    run = run_program(ROOT, "dev", config)
    assert run.error is None
    assert not run.by_type(DAEMONSET)
    assert run.stack_outputs["gpuPools"]["operator"]["devicePlugin"] == "external"
