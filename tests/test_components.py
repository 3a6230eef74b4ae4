"""Each component alone under the mock runtime, and the pure pieces they are built from."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import yaml
from pulumi_azure_native import resources

from components.cluster import AksCluster, AksClusterArgs, ClusterTarget
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.kubeconfig import with_kubelogin_mode
from components.node_pools import GpuNodePool, GpuNodePoolArgs, NodePool, NodePoolArgs
from components.settings import parse_settings
from tools.mockrun import fake_aad_kubeconfig, run_pulumi

SETTINGS = parse_settings({
    "location": "westeurope",
    "cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "nodeTaints": ["workload=batch:NoSchedule"],
                  "nodeLabels": {"tier": "batch"}}],
    "gpuPools": [{"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "gpuInstanceProfile": "MIG7g",
                  "maxCount": 4, "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]}],
    "devicePlugin": {"migStrategy": "mixed"},
}, "unit")


def _target() -> ClusterTarget:
    stub = resources.ResourceGroup("stub", resource_group_name="rg")
    return ClusterTarget(pulumi.Output.from_input("rg"), pulumi.Output.from_input("aks"), "1.34", stub)


def test_aks_cluster_alone():
    run = run_pulumi(lambda: AksCluster("c", AksClusterArgs(SETTINGS.cluster, SETTINGS.system_pool)), "unit")
    assert run.error is None, run.error
    assert sorted(r.type for r in run.resources) == [
        "azure-native:containerservice:ManagedCluster", "azure-native:resources:ResourceGroup",
        "gpu-aks:index:AksCluster", "pulumi:providers:kubernetes"]
    cluster = run.one("azure-native:containerservice:ManagedCluster").inputs
    assert cluster["location"] == "westeurope" and cluster["resourceName"] == "gpu-aks-unit"
    assert [c.token for c in run.calls] == ["azure-native:containerservice:listManagedClusterUserCredentials"]
    assert run.calls[0].args["format"] == "exec"


def test_gpu_node_pool_alone():
    run = run_pulumi(lambda: GpuNodePool("h100", GpuNodePoolArgs(SETTINGS.gpu_pools[0], _target())), "unit")
    assert run.error is None, run.error
    component = run.one("gpu-aks:index:GpuNodePool")
    pool = run.one("azure-native:containerservice:AgentPool")
    assert pool.parent == component.urn
    inputs = pool.inputs
    assert inputs["nodeTaints"] == ["nvidia.com/gpu=present:NoSchedule"]
    assert inputs["gpuInstanceProfile"] == "MIG7g"
    assert inputs["nodeLabels"]["nvidia.com/gpu.partition-size"] == "7g.80gb"
    assert inputs["nodeLabels"]["nvidia.com/gpu.accelerator"] == "nvidia-h100-80gb"
    assert (inputs["resourceGroupName"], inputs["resourceName"]) == ("rg", "aks")


def test_cpu_node_pool_alone_has_no_gpu_fields():
    run = run_pulumi(lambda: NodePool("cpu", NodePoolArgs(SETTINGS.cpu_pools[0], _target())), "unit")
    assert run.error is None, run.error
    inputs = run.one("azure-native:containerservice:AgentPool").inputs
    assert "gpuProfile" not in inputs and "gpuInstanceProfile" not in inputs
    assert inputs["nodeTaints"] == ["workload=batch:NoSchedule"] and inputs["nodeLabels"] == {"tier": "batch"}
    assert inputs["upgradeSettings"] == {"maxSurge": "33%"}
    assert run.one("gpu-aks:index:NodePool")


def test_device_plugin_alone_derives_tolerations_from_the_pools_it_serves():
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuDevicePlugin("dp", GpuDevicePluginArgs(SETTINGS.device_plugin, SETTINGS.served_gpu_pools(), provider))

    run = run_pulumi(program, "unit")
    assert run.error is None, run.error
    spec = run.one("kubernetes:apps/v1:DaemonSet").inputs["spec"]["template"]["spec"]
    assert spec["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
    ]
    assert {"name": "MIG_STRATEGY", "value": "mixed"} in spec["containers"][0]["env"]
    namespace = run.one("kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["name"] == "gpu-resources"
    assert namespace.urn in run.one("kubernetes:apps/v1:DaemonSet").dependencies


def test_kubelogin_conversion_keeps_server_and_tenant():
    converted = yaml.safe_load(with_kubelogin_mode(fake_aad_kubeconfig("c"), "spn"))
    args = converted["users"][0]["user"]["exec"]["args"]
    assert args == ["get-token", "--login", "spn", "--environment", "AzurePublicCloud",
                    "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630",
                    "--tenant-id", "00000000-0000-0000-0000-000000000000"]


def test_certificate_kubeconfig_is_left_alone():
    local = yaml.safe_dump({"users": [{"name": "admin", "user": {"client-certificate-data": "abc"}}]})
    assert with_kubelogin_mode(local, "azurecli") == local
