"""The whole Pulumi program for dev and prod, under the Pulumi SDK's mock runtime."""

from __future__ import annotations

import json

import kubernetes_validate
import pulumi
import pytest
import yaml

from components.platform_settings import parse_settings
from offline.mockrun import run_program
from tests.conftest import KUBERNETES_SCHEMA_VERSION, ROOT, run_stack
from tools.stacks import config_from_stack_file

AGENT_POOL = "azure-native:containerservice:AgentPool"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
WAIT = "pulumi-python:dynamic:Resource"
MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"
IN_CLUSTER = ("kubernetes:core/v1:Namespace", DAEMONSET,
              "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
              "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding")


def test_dev_tree(dev_run):
    tree = sorted((r.type, r.name, r.parent.rsplit("::", 1)[-1]) for r in dev_run.resources)
    assert tree == sorted([
        ("gpu-aks:index:GpuCluster", "gpu-aks", "gpu-aks-dev"),
        ("gpu-aks:index:AksCluster", "aks", "gpu-aks"),
        ("azure-native:resources:ResourceGroup", "aks-rg", "aks"),
        (MANAGED_CLUSTER, "aks-cluster", "aks"),
        ("pulumi:providers:kubernetes", "aks-k8s", "aks"),
        ("gpu-aks:index:PlannedMaintenance", "aks-maintenance", "aks"),
        (MAINTENANCE, "aks-maintenance-aksManagedAutoUpgradeSchedule", "aks-maintenance"),
        (MAINTENANCE, "aks-maintenance-aksManagedNodeOSUpgradeSchedule", "aks-maintenance"),
        ("gpu-aks:index:ClusterAccess", "access", "gpu-aks"),
        (ROLE_ASSIGNMENT, "access-deployer-cluster-admin", "access"),
        (WAIT, "access-role-propagation", "access"),
        ("gpu-aks:index:CpuAgentPool", "cpu", "gpu-aks"),
        (AGENT_POOL, "cpu-pool", "cpu"),
        ("gpu-aks:index:GpuAgentPool", "gput4", "gpu-aks"),
        (AGENT_POOL, "gput4-pool", "gput4"),
        ("gpu-aks:index:GpuDevicePlugin", "nvidia-device-plugin", "gpu-aks"),
        ("kubernetes:core/v1:Namespace", "nvidia-device-plugin-namespace", "nvidia-device-plugin"),
        (DAEMONSET, "nvidia-device-plugin-daemonset", "nvidia-device-plugin"),
        ("gpu-aks:index:GpuAdmissionPolicy", "gpu-admission", "gpu-aks"),
        (IN_CLUSTER[2], "gpu-admission-policy", "gpu-admission"),
        (IN_CLUSTER[3], "gpu-admission-binding", "gpu-admission"),
    ])


def test_dev_gpu_pool_scales_to_zero_with_the_gpu_taint_and_a_stable_label(dev_run):
    pool = dev_run.one(AGENT_POOL, "gput4-pool").inputs
    assert pool["vmSize"] == "Standard_NC4as_T4_v3"
    assert (pool["enableAutoScaling"], pool["minCount"], pool["maxCount"], pool["count"]) == (True, 0, 2, 0)
    assert pool["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert pool["nodeLabels"] == {"accelerator": "nvidia", "nvidia.com/gpu.accelerator": "nvidia-tesla-t4",
                                  "gpu-aks.io/pool": "gput4"}
    assert pool["gpuProfile"] == {"driver": "Install"}
    assert pool["mode"] == "User"
    assert pool["agentPoolName"].startswith("gput4") and len(pool["agentPoolName"]) == 9


def test_cluster_is_locked_down_by_default(dev_run):
    cluster = dev_run.one(MANAGED_CLUSTER).inputs
    assert cluster["disableLocalAccounts"] is True
    assert cluster["aadProfile"]["managed"] is True and cluster["aadProfile"]["enableAzureRBAC"] is True
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"] == {"workloadIdentity": {"enabled": True}}
    assert cluster["identity"] == {"type": "SystemAssigned"}
    assert cluster["kubernetesVersion"] == "1.37"
    assert cluster["autoUpgradeProfile"]["upgradeChannel"] == "patch"
    assert cluster["autoScalerProfile"]["expander"] == "least-waste"
    [system] = cluster["agentPoolProfiles"]
    assert system["mode"] == "System" and system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    assert system["enableAutoScaling"] is True and (system["minCount"], system["maxCount"]) == (1, 2)


def test_the_deployer_gets_cluster_admin_before_anything_in_cluster(dev_run, prod_run):
    for run in (dev_run, prod_run):
        assignment = run.one(ROLE_ASSIGNMENT, "access-deployer-cluster-admin")
        assert assignment.inputs["roleDefinitionId"].endswith("/roleDefinitions/b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b")
        assert assignment.inputs["scope"] == run.one(MANAGED_CLUSTER).urn.rsplit("::", 1)[-1] + "-id"
        wait = run.one(WAIT)
        in_cluster = [r for r in run.resources if r.type in IN_CLUSTER]
        assert in_cluster
        for resource in in_cluster:
            assert wait.urn in resource.dependencies, resource.name


def test_replacement_options(prod_run):
    cluster = prod_run.one(MANAGED_CLUSTER)
    assert cluster.ignore_changes == ["agentPoolProfiles", "kubernetesVersion"], "prod is on the stable channel"
    for pool in prod_run.by_type(AGENT_POOL):
        assert pool.ignore_changes == ["count"]
        assert "orchestratorVersion" not in pool.inputs, "pulumi-azure-native#2094: AKS moves it on stable"
        assert pool.delete_before_replace is False, "suffixed Azure names: create the new pool first"
        for prop in ("vmSize", "gpuInstanceProfile", "gpuProfile", "scaleSetPriority", "spotMaxPrice",
                     "scaleSetEvictionPolicy", "osSKU", "availabilityZones"):
            assert prop in pool.replace_on_changes
        assert "nodeTaints" not in pool.replace_on_changes, "taints are updatable in place"
        assert pool.dependencies, "a pool waits for its cluster"


def test_a_create_only_change_gives_a_new_azure_name_and_keep_azure_name_opts_out():
    def pool(**changes):
        raw = {"gpuPools": [{"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", **changes}]}
        return parse_settings(raw, "dev", "eastus2").gpu_pools[0]

    base = pool()
    assert base.azure_name != pool(gpuInstanceProfile="MIG2g").azure_name
    assert base.azure_name != pool(vmSize="Standard_NC48ads_A100_v4").azure_name
    assert base.azure_name != pool(scaleSetPriority="Spot").azure_name
    assert base.azure_name == pool(maxCount=9, nodeLabels={"team": "x"}).azure_name, "updatable fields keep it"
    assert pool(keepAzureName=True).azure_name == "a100"


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


def test_device_plugins_tolerate_every_served_pool_and_run_only_there(prod_run):
    specs = {r.name: r.inputs["spec"]["template"]["spec"] for r in prod_run.by_type(DAEMONSET)}
    whole, mig = specs["nvidia-device-plugin-daemonset"], specs["nvidia-device-plugin-mig-daemonset"]
    assert {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
            "effect": "NoSchedule"} in whole["tolerations"]
    for spec, pools in ((whole, ["t4spot"]), (mig, ["a100mig"])):
        assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in spec["tolerations"]
        [term] = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert term["matchExpressions"] == [{"key": "gpu-aks.io/pool", "operator": "In", "values": pools}]
        assert spec["priorityClassName"] == "system-node-critical"
        [container] = spec["containers"]
        assert container["image"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
        assert container["resources"]["requests"] == {"cpu": "50m", "memory": "64Mi"}
        assert spec["volumes"][0]["hostPath"]["path"] == "/var/lib/kubelet/device-plugins"
    assert {"name": "MIG_STRATEGY", "value": "single"} in mig["containers"][0]["env"]
    assert mig["containers"][0]["securityContext"] == {"capabilities": {"add": ["SYS_ADMIN"]}}
    assert whole["containers"][0]["securityContext"]["allowPrivilegeEscalation"] is False


def test_in_cluster_objects_use_the_cluster_provider(dev_run):
    provider = dev_run.one("pulumi:providers:kubernetes")
    for resource in dev_run.resources:
        if resource.type in IN_CLUSTER:
            assert resource.provider.startswith(provider.urn + "::")


def test_kubeconfig_is_secret_and_logs_in_without_a_browser(dev_run, prod_run):
    assert "kubeconfig" in dev_run.secret_outputs
    dev_user = yaml.safe_load(dev_run.stack_outputs["kubeconfig"])["users"][0]["user"]["exec"]
    assert dev_user["args"][:3] == ["get-token", "--login", "azurecli"]
    assert "devicecode" not in dev_user["args"] and "--tenant-id" not in dev_user["args"]
    prod_user = yaml.safe_load(prod_run.stack_outputs["kubeconfig"])["users"][0]["user"]["exec"]
    assert prod_user["args"][:3] == ["get-token", "--login", "workloadidentity"]
    provider = dev_run.one("pulumi:providers:kubernetes")
    assert "kubeconfig" in provider.masked_inputs and provider.masked_inputs["kubeconfig"] == "[secret]"
    assert not (set(dev_run.stack_outputs) - {"kubeconfig"}) & dev_run.secret_outputs


def test_outputs_contract(prod_run):
    outputs = prod_run.stack_outputs
    assert outputs["contractVersion"] == 3
    assert outputs["clusterName"] == "gpu-aks-prod" and outputs["resourceGroupName"] == "rg-gpu-aks-prod"
    assert outputs["oidcIssuerUrl"].startswith("https://")
    mig = outputs["gpuPools"]["a100mig"]
    assert mig["gpuModel"] == "A100 80GB" and mig["gpusPerNode"] == 3 and mig["migPartition"] == "2g.20gb"
    assert mig["tolerations"] == [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert mig["nodeSelector"] == {"accelerator": "nvidia", "gpu-aks.io/pool": "a100mig"}
    assert mig["azureName"] == prod_run.one(AGENT_POOL, "a100mig-pool").inputs["agentPoolName"]
    assert mig["poolLabel"] == {"gpu-aks.io/pool": "a100mig"}
    spot = outputs["gpuPools"]["t4spot"]
    assert len(spot["tolerations"]) == 2 and spot["spot"] is True
    assert (spot["minCount"], spot["maxCount"]) == (0, 10)
    json.dumps(outputs)  # the contract is plain JSON for StackReference consumers


def test_admission_policy_follows_the_stack(dev_run, prod_run):
    dev_binding = dev_run.one(IN_CLUSTER[3]).inputs["spec"]
    assert dev_binding["validationActions"] == ["Warn", "Audit"]
    assert dev_binding["matchResources"]["namespaceSelector"]["matchExpressions"][0]["values"] == [
        "kube-system", "gpu-resources"]
    assert prod_run.one(IN_CLUSTER[3]).inputs["spec"]["validationActions"] == ["Deny"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_kubernetes_object_passes_the_official_schema(stack, dev_run, prod_run):
    run = dev_run if stack == "dev" else prod_run
    # Custom resources (the DCGM exporter's PodMonitor) have no schema there; tests/test_observability.py checks it.
    objects = [r for r in run.resources if r.type.startswith("kubernetes:") and r.custom
               and not r.type.startswith("kubernetes:azmonitoring.coreos.com/")]
    assert len(objects) >= 4
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
    assert "gpu-aks:gpuPools[gpunp].vmSize: 'Standard_NC6': NC-series (Tesla K80) was retired" in message
    assert "gpu-aks:gpuPools[gpunp].minCount: 3 is above maxCount 1" in message
    assert run.resources == []


def test_secret_config_values_never_appear_in_errors(tmp_path):
    stack_file = tmp_path / "Pulumi.secret.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {
        "azure-native:location": "eastus2",
        "gpu-aks:cluster": {"tags": {"token": {"secure": "v1:AAAA"}}, "name": "not valid!"},
    }}))
    config, secret_keys = config_from_stack_file(stack_file, "gpu-aks")
    assert secret_keys == ["gpu-aks:cluster"]
    config["gpu-aks:cluster"] = json.dumps({"name": "hunter2 is the password"})
    run = run_program(ROOT, "secret", config, secret_keys)
    assert "gpu-aks:cluster.name: [secret] is not a cluster name AKS accepts" in str(run.error)
    assert "hunter2" not in str(run.error)


def test_a_secret_cluster_section_reaches_the_cluster_only_as_secrets():
    """Everything a secret `gpu-aks:cluster` gives the ManagedCluster and its resource group is a secret
    input, and the version it pins a secret output (issue 41: the authorized ranges and the version were
    written in plain text into the previewed inputs and the outputs)."""
    config, _ = config_from_stack_file(ROOT / "Pulumi.prod.yaml", "gpu-aks")
    cluster = json.loads(config["gpu-aks:cluster"])
    cluster.setdefault("apiServerAccessProfile", {})["authorizedIPRanges"] = ["192.0.2.77/32"]
    config["gpu-aks:cluster"] = json.dumps(cluster)
    run = run_program(ROOT, "prod", config, ["gpu-aks:cluster"])
    assert run.error is None, run.error
    managed = run.one("azure-native:containerservice:ManagedCluster")
    shown = json.dumps(managed.masked_inputs)
    assert "192.0.2.77" not in shown and cluster.get("kubernetesVersion", "1.") not in shown
    assert managed.inputs["apiServerAccessProfile"]["authorizedIPRanges"] == ["192.0.2.77/32"]
    assert "192.0.2.77" not in json.dumps(run.one("azure-native:resources:ResourceGroup").masked_inputs)
    assert "kubernetesVersion" in run.secret_outputs


def test_device_plugin_is_skipped_when_no_pool_needs_it():
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", "gpu-aks")
    config["gpu-aks:gpuPools"] = json.dumps([{"name": "operator", "vmSize": "Standard_NC24ads_A100_v4",
                                              "gpuProfile": {"driver": "None"}}])
    run = run_program(ROOT, "dev", config)
    assert run.error is None
    assert not run.by_type(DAEMONSET)
    assert run.stack_outputs["gpuPools"]["operator"]["devicePlugin"] == "external"
