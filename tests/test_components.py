"""Each component alone under the mock runtime, and the pure pieces they are built from."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import resources

from components.access import AKS_RBAC_CLUSTER_ADMIN_ROLE, ClusterAccess, ClusterAccessArgs
from components.cluster import AksCluster, AksClusterArgs, ClusterTarget
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.node_pools import GpuNodePool, GpuNodePoolArgs, NodePool, NodePoolArgs
from components.settings import AccessSettings, parse_settings
from tools.mockrun import FAKE_DEPLOYER_OBJECT_ID, FAKE_SUBSCRIPTION, run_pulumi

SETTINGS = parse_settings({
    "cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "nodeTaints": ["workload=batch:NoSchedule"],
                  "nodeLabels": {"tier": "batch"}}],
    "gpuPools": [{"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "gpuInstanceProfile": "MIG7g",
                  "minCount": 1, "maxCount": 4, "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
                 {"name": "t4", "vmSize": "Standard_NC4as_T4_v3"}],
    "devicePlugin": {"migStrategy": "mixed"},
}, "unit", "westeurope")


def _target(moves_version: bool = False) -> ClusterTarget:
    stub = resources.ResourceGroup("stub", resource_group_name="rg")
    return ClusterTarget(pulumi.Output.from_input("rg"), pulumi.Output.from_input("aks"), "1.37", stub, moves_version)


def test_aks_cluster_alone():
    run = run_pulumi(lambda: AksCluster("c", AksClusterArgs(SETTINGS.cluster, SETTINGS.system_pool)), "unit")
    assert run.error is None, run.error
    assert sorted(r.type for r in run.resources) == [
        "azure-native:containerservice:ManagedCluster", "azure-native:resources:ResourceGroup",
        "gpu-aks:index:AksCluster", "pulumi:providers:kubernetes"]
    cluster = run.one("azure-native:containerservice:ManagedCluster")
    assert cluster.inputs["location"] == "westeurope" and cluster.inputs["resourceName"] == "gpu-aks-unit"
    assert cluster.inputs["dnsPrefix"] == "gpu-aks-unit"
    assert cluster.ignore_changes == ["agentPoolProfiles"], "patch channel with a minor pin: AKS keeps the pin"
    assert [c.token for c in run.calls] == ["azure-native:containerservice:listManagedClusterUserCredentials"]
    assert run.calls[0].args["format"] == "exec"


def test_a_channel_that_moves_the_version_is_not_sent_to_pools():
    stable = parse_settings({"cluster": {"upgradeChannel": "stable"}}, "unit", "westeurope")
    run = run_pulumi(lambda: AksCluster("c", AksClusterArgs(stable.cluster, stable.system_pool)), "unit")
    assert run.one("azure-native:containerservice:ManagedCluster").ignore_changes == ["agentPoolProfiles",
                                                                                      "kubernetesVersion"]
    run = run_pulumi(lambda: GpuNodePool("t4", GpuNodePoolArgs(SETTINGS.gpu_pools[1], _target(True))), "unit")
    pool = run.one("azure-native:containerservice:AgentPool")
    # pulumi-azure-native#2094: a pinned version AKS has since moved must never be re-sent.
    assert pool.ignore_changes == ["count"] and "orchestratorVersion" not in pool.inputs


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
    assert inputs["nodeLabels"]["gpu-aks.io/pool"] == "h100"
    assert (inputs["resourceGroupName"], inputs["resourceName"]) == ("rg", "aks")
    assert inputs["agentPoolName"] == SETTINGS.gpu_pools[0].azure_name
    assert pool.delete_before_replace is False, "a new Azure name: the new pool is created first"


def test_cpu_node_pool_alone_has_no_gpu_fields():
    run = run_pulumi(lambda: NodePool("cpu", NodePoolArgs(SETTINGS.cpu_pools[0], _target())), "unit")
    assert run.error is None, run.error
    inputs = run.one("azure-native:containerservice:AgentPool").inputs
    assert "gpuProfile" not in inputs and "gpuInstanceProfile" not in inputs
    assert inputs["nodeTaints"] == ["workload=batch:NoSchedule"]
    assert inputs["nodeLabels"] == {"tier": "batch", "gpu-aks.io/pool": "cpu"}
    assert inputs["upgradeSettings"] == {"maxSurge": "33%"}
    assert run.one("gpu-aks:index:NodePool")


def test_device_plugin_alone_splits_mig_and_whole_gpu_pools():
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuDevicePlugin("dp", GpuDevicePluginArgs(SETTINGS.device_plugin, SETTINGS.served_gpu_pools(), provider))

    run = run_pulumi(program, "unit")
    assert run.error is None, run.error
    by_name = {r.name: r.inputs["spec"]["template"]["spec"] for r in run.by_type("kubernetes:apps/v1:DaemonSet")}
    assert set(by_name) == {"nvidia-device-plugin-daemonset", "nvidia-device-plugin-mig-daemonset"}
    mig, whole = by_name["nvidia-device-plugin-mig-daemonset"], by_name["nvidia-device-plugin-daemonset"]
    [mig_container], [whole_container] = mig["containers"], whole["containers"]
    # NVIDIA's chart: SYS_ADMIN and NVIDIA_MIG_MONITOR_DEVICES=all whenever the strategy is not none.
    assert mig_container["securityContext"] == {"capabilities": {"add": ["SYS_ADMIN"]}}
    assert {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"} in mig_container["env"]
    assert {"name": "MIG_STRATEGY", "value": "mixed"} in mig_container["env"]
    assert whole_container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert {"name": "MIG_STRATEGY", "value": "none"} in whole_container["env"]
    assert not any(e["name"] == "NVIDIA_MIG_MONITOR_DEVICES" for e in whole_container["env"])
    assert mig["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
    ]
    terms = {name: spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
             ["nodeSelectorTerms"][0]["matchExpressions"] for name, spec in by_name.items()}
    assert terms["nvidia-device-plugin-mig-daemonset"] == [{"key": "gpu-aks.io/pool", "operator": "In", "values": ["h100"]}]
    assert terms["nvidia-device-plugin-daemonset"] == [{"key": "gpu-aks.io/pool", "operator": "In", "values": ["t4"]}]
    namespace = run.one("kubernetes:core/v1:Namespace")
    assert namespace.inputs["metadata"]["name"] == "gpu-resources"
    assert all(namespace.urn in ds.dependencies for ds in run.by_type("kubernetes:apps/v1:DaemonSet"))


def test_device_plugin_without_mig_pools_is_one_restricted_daemonset():
    whole_only = parse_settings({"gpuPools": [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3"}]}, "unit", "westeurope")

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuDevicePlugin("dp", GpuDevicePluginArgs(whole_only.device_plugin, whole_only.served_gpu_pools(), provider))

    run = run_pulumi(program, "unit")
    [daemon_set] = run.by_type("kubernetes:apps/v1:DaemonSet")
    [container] = daemon_set.inputs["spec"]["template"]["spec"]["containers"]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_cluster_access_grants_the_deployer_and_waits_for_propagation():
    def program() -> None:
        ClusterAccess("access", ClusterAccessArgs(AccessSettings(True, 120), pulumi.Output.from_input("/sub/aks"), True))

    run = run_pulumi(program, "unit")
    assert run.error is None, run.error
    assignment = run.one("azure-native:authorization:RoleAssignment")
    assert assignment.inputs["principalId"] == FAKE_DEPLOYER_OBJECT_ID
    assert assignment.inputs["scope"] == "/sub/aks"
    assert assignment.inputs["roleDefinitionId"] == (
        f"/subscriptions/{FAKE_SUBSCRIPTION}/providers/Microsoft.Authorization/roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN_ROLE}")
    wait = run.one("pulumi-python:dynamic:Resource")
    assert wait.inputs["seconds"] == 120 and assignment.urn in wait.dependencies
    assert [c.token for c in run.calls] == ["azure-native:authorization:getClientConfig"]


def test_cluster_access_off_creates_nothing():
    for grant, azure_rbac in ((False, True), (True, False)):
        run = run_pulumi(lambda grant=grant, rbac=azure_rbac: ClusterAccess(
            "access", ClusterAccessArgs(AccessSettings(grant, 300), "/sub/aks", rbac)), "unit")
        assert [r.type for r in run.resources] == ["gpu-aks:index:ClusterAccess"]
