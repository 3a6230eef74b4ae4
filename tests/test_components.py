"""Each component alone under the mock runtime, and the pure pieces they are built from."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import resources

from components.access import AKS_RBAC_CLUSTER_ADMIN_ROLE, ClusterAccess, ClusterAccessArgs
from components.cluster import AksCluster, AksClusterArgs, ClusterTarget
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.node_pools import PoolArgs, PoolComponent
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.pools.cpu import CPU
from components.pools.gpu import GPU as GPU_KIND
from components.settings import AccessSettings
from offline.mockrun import FAKE_DEPLOYER_OBJECT_ID, FAKE_SUBSCRIPTION, run_pulumi
from tests.helpers import FLYTE_TAINT_RULE

SETTINGS = parse_settings({
    "cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "nodeTaints": ["workload=batch:NoSchedule"],
                  "nodeLabels": {"tier": "batch"}}],
    "gpuPools": [{"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "gpuInstanceProfile": "MIG7g",
                  "minCount": 1, "maxCount": 4, "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
                 {"name": "t4", "vmSize": "Standard_NC4as_T4_v3"}],
    "devicePlugin": {"migStrategy": "mixed"},
}, "unit", "westeurope", pool_rule=FLYTE_TAINT_RULE)


def gpu_pool(name, pool, target):
    return PoolComponent(GPU_KIND.component_type, name, PoolArgs(GPU_KIND.resources(pool), target))


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
    run = run_pulumi(lambda: gpu_pool("t4", SETTINGS.gpu_pools[1], _target(True)), "unit")
    pool = run.one("azure-native:containerservice:AgentPool")
    # pulumi-azure-native#2094: a pinned version AKS has since moved must never be re-sent.
    assert pool.ignore_changes == ["count"] and "orchestratorVersion" not in pool.inputs


def test_gpu_node_pool_alone():
    run = run_pulumi(lambda: gpu_pool("h100", SETTINGS.gpu_pools[0], _target()), "unit")
    assert run.error is None, run.error
    component = run.one(GPU_KIND.component_type)
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
    run = run_pulumi(lambda: PoolComponent(CPU.component_type, "cpu", PoolArgs(
        CPU.resources(SETTINGS.cpu_pools[0]), _target())), "unit")
    assert run.error is None, run.error
    inputs = run.one("azure-native:containerservice:AgentPool").inputs
    assert "gpuProfile" not in inputs and "gpuInstanceProfile" not in inputs
    assert inputs["nodeTaints"] == ["workload=batch:NoSchedule"]
    assert inputs["nodeLabels"] == {"tier": "batch", "gpu-aks.io/pool": "cpu"}
    assert inputs["upgradeSettings"] == {"maxSurge": "33%"}
    assert run.one(CPU.component_type)


def test_device_plugin_alone_splits_mig_and_whole_gpu_pools():
    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuDevicePlugin("nvidia-device-plugin", GpuDevicePluginArgs(SETTINGS.device_plugin, platform_pools(SETTINGS).served,
                                                                    provider))

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
        GpuDevicePlugin("dp", GpuDevicePluginArgs(whole_only.device_plugin, platform_pools(whole_only).served, provider))

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


# --- Issue 17: access, maintenance, network, API server, protection -------------------------------

import copy  # noqa: E402
from datetime import date  # noqa: E402

import pytest  # noqa: E402

from components.access import DEPLOYER_OUTPUT, deployer_change_warning, role_assignment_name  # noqa: E402
from components.cluster import NETWORK_OUTPUT  # noqa: E402
from components.settings import SettingsError  # noqa: E402
from components.settings.access import ClusterAdmin  # noqa: E402
from components.settings.pool_upgrade import SPOT_UPGRADE_REASON  # noqa: E402
from offline.mockrun import PlatformMocks, run_program  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tools.stacks import config_from_stack_file  # noqa: E402

TODAY = date(2026, 11, 23)
GPU = {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3"}]}
ADMIN = "0000aaaa-0000-0000-0000-000000000001"


def parse(raw, location="eastus2", environ=None):
    return parse_settings(raw, "unit", location, today=TODAY, environ=environ or {})


def problems_of(raw, location="eastus2"):
    with pytest.raises(SettingsError) as error:
        parse(raw, location)
    return error.value.problems


def with_pool(**changes):
    raw = copy.deepcopy(GPU)
    raw["gpuPools"][0].update(changes)
    return raw


@pytest.mark.parametrize("environ, expected", [
    ({}, "User"), ({"ARM_CLIENT_ID": "x"}, "ServicePrincipal"), ({"AZURE_CLIENT_ID": "x"}, "ServicePrincipal"),
    ({"AZURE_CLIENT_ID": ""}, "User"),
])
def test_deployer_principal_type_defaults_from_the_environment(environ, expected):
    assert parse(GPU, environ=environ).access.deployer_principal_type == expected
    explicit = parse({**GPU, "access": {"deployerPrincipalType": "User"}}, environ={"ARM_CLIENT_ID": "x"})
    assert explicit.access.deployer_principal_type == "User"


P = "gpu-aks:gpuPools[gput4]"
REFUSED = [
    ("deployer type", {**GPU, "access": {"deployerPrincipalType": "ManagedIdentity"}},
     "gpu-aks:access.deployerPrincipalType: 'ManagedIdentity' is not allowed; use User (a person after `az login`) or "
     "ServicePrincipal (a service principal or managed identity, as in CI)"),
    ("admin object ID", {**GPU, "access": {"clusterAdmins": [{"objectId": "alice", "principalType": "User"}]}},
     "gpu-aks:access.clusterAdmins[0].objectId: 'alice': an Entra ID object ID (a GUID, e.g. from `az ad group show -g "
     "NAME --query id`)"),
    ("admin type", {**GPU, "access": {"clusterAdmins": [{"objectId": ADMIN, "principalType": "Robot"}]}},
     "gpu-aks:access.clusterAdmins[0].principalType: 'Robot': one of User, Group, ServicePrincipal (Azure refuses a "
     "role assignment whose type does not match the principal)"),
    ("admins without Azure RBAC", {**GPU, "cluster": {"aadProfile": {"enableAzureRBAC": False},
                                                       "disableLocalAccounts": False},
                                   "access": {"clusterAdmins": [{"objectId": ADMIN, "principalType": "Group"}]}},
     "gpu-aks:access.clusterAdmins: needs cluster.aadProfile.managed and enableAzureRBAC: true; the role grants "
     "Kubernetes rights only through Azure RBAC for Kubernetes"),
    ("window too short", {**GPU, "maintenance": {"autoUpgrade": {"durationHours": 2}}},
     "gpu-aks:maintenance.autoUpgrade.durationHours: 2 is not allowed; AKS API 2025-09-01 takes a whole number from 4 "
     "to 24"),
    ("week day", {**GPU, "maintenance": {"nodeOSUpgrade": {"dayOfWeek": "Sun"}}},
     "gpu-aks:maintenance.nodeOSUpgrade.dayOfWeek: 'Sun' is not allowed; AKS API 2025-09-01 takes Sunday, Monday, "
     "Tuesday, Wednesday, Thursday, Friday, Saturday"),
    ("UTC offset", {**GPU, "maintenance": {"autoUpgrade": {"utcOffset": "+5"}}},
     "gpu-aks:maintenance.autoUpgrade.utcOffset: '+5' is not a UTC offset like \"+00:00\" or \"-07:00\" (quote it in "
     "YAML)"),
    ("start time", {**GPU, "maintenance": {"autoUpgrade": {"startTime": "25:00"}}},
     "gpu-aks:maintenance.autoUpgrade.startTime: '25:00' is not a time from \"00:00\" to \"23:59\" (quote it in YAML)"),
    ("not-allowed dates backwards", {**GPU, "maintenance": {"autoUpgrade": {"notAllowedDates": [
        {"start": "2027-01-04", "end": "2026-12-20"}]}}},
     "gpu-aks:maintenance.autoUpgrade.notAllowedDates[0].end: 2026-12-20 is before start 2027-01-04"),
    ("drain timeout", with_pool(drainTimeoutInMinutes=0),
     f"{P}.drainTimeoutInMinutes: 0 is not allowed; AKS API 2025-09-01 takes a whole number from 1 to 1440"),
    ("soak", with_pool(nodeSoakDurationInMinutes=60),
     f"{P}.nodeSoakDurationInMinutes: 60 is not allowed; AKS API 2025-09-01 takes a whole number from 0 to 30"),
    ("undrainable", with_pool(undrainableNodeBehavior="Evict"),
     f"{P}.undrainableNodeBehavior: 'Evict' is not allowed; AKS API 2025-09-01 takes Cordon, Schedule"),
    ("maxSurge on Spot", with_pool(scaleSetPriority="Spot", maxSurge="1"), f"{P}.maxSurge: {SPOT_UPGRADE_REASON}"),
    ("drain on Spot", with_pool(scaleSetPriority="Spot", drainTimeoutInMinutes=60),
     f"{P}.drainTimeoutInMinutes: {SPOT_UPGRADE_REASON}"),
    ("network plugin", {**GPU, "cluster": {"networkProfile": {"networkPlugin": "flannel"}}},
     "gpu-aks:cluster.networkProfile.networkPlugin: 'flannel' is not allowed; AKS API 2025-09-01 takes azure, kubenet, "
     "none"),
    ("CIDR syntax", {**GPU, "cluster": {"networkProfile": {"podCidr": "10.244.0.0"}}},
     "gpu-aks:cluster.networkProfile.podCidr: '10.244.0.0' is not an IPv4 CIDR like 10.244.0.0/16 (the API 2025-09-01 "
     "pattern, with a prefix length)"),
    ("host bits", {**GPU, "cluster": {"networkProfile": {"serviceCidr": "10.0.0.1/16", "dnsServiceIP": "10.0.0.10"}}},
     "gpu-aks:cluster.networkProfile.serviceCidr: '10.0.0.1/16' is not a network address: the bits after the prefix "
     "must be 0 (e.g. 10.0.0.0/16)"),
    ("DNS IP outside", {**GPU, "cluster": {"networkProfile": {"serviceCidr": "10.2.0.0/16", "dnsServiceIP": "10.0.0.10"}}},
     "gpu-aks:cluster.networkProfile.dnsServiceIP: 10.0.0.10 is not a usable address inside serviceCidr 10.2.0.0/16; "
     "the REST model: \"It must be within the Kubernetes service address range\" (e.g. 10.2.0.10)"),
    ("overlap", {**GPU, "cluster": {"networkProfile": {"podCidr": "10.0.0.0/8"}}},
     "gpu-aks:cluster.networkProfile.podCidr: 10.0.0.0/8 overlaps serviceCidr 10.0.0.0/16; pods and services need "
     "separate ranges"),
    ("reserved range", {**GPU, "cluster": {"networkProfile": {"podCidr": "172.30.0.0/16"}}},
     "gpu-aks:cluster.networkProfile.podCidr: '172.30.0.0/16' overlaps 172.30.0.0/16, which AKS reserves "
     "(learn.microsoft.com/azure/aks/azure-cni-overlay, IP address planning)"),
    ("cilium policy without cilium", {**GPU, "cluster": {"networkProfile": {"networkDataplane": "azure",
                                                                             "networkPolicy": "cilium"}}},
     "gpu-aks:cluster.networkProfile.networkPolicy: cilium needs networkDataplane: cilium"),
    ("outbound needing a subnet", {**GPU, "cluster": {"networkProfile": {"outboundType": "userDefinedRouting"}}},
     "gpu-aks:cluster.networkProfile.outboundType: 'userDefinedRouting' needs the nodes in your own subnets"),
    ("authorized range", {**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ["10.0.0.300/24"]}}},
     "gpu-aks:cluster.apiServerAccessProfile.authorizedIPRanges[0]: '10.0.0.300/24' is not an IPv4 address or CIDR "
     "like 203.0.113.0/24"),
    ("open range", {**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ["0.0.0.0/0"]}}},
     "gpu-aks:cluster.apiServerAccessProfile.authorizedIPRanges[0]: 0.0.0.0/0 authorizes every address, which is no "
     "restriction; list your ranges or leave the key out"),
    ("ranges on a private cluster", {**GPU, "cluster": {"apiServerAccessProfile": {
        "enablePrivateCluster": True, "authorizedIPRanges": ["203.0.113.0/24"]}}},
     "gpu-aks:cluster.apiServerAccessProfile.authorizedIPRanges: is not used by a private cluster (enablePrivateCluster: "
     "true), whose API server has no public address; remove one of the two"),
    ("protect", {**GPU, "cluster": {"protect": "yes"}}, "gpu-aks:cluster.protect: 'yes' is not true or false"),
    ("AzureLinux3 on 1.37", with_pool(osSKU="AzureLinux3"),
     f"{P}.osSKU: 'AzureLinux3': AKS offers AzureLinux3 for Kubernetes 1.28-1.36 only (Azure Updates, October 2025; "
     "AKS CHANGELOG); on later versions use AzureLinux (Azure Linux 3.0 there); kubernetesVersion is 1.37"),
    ("Ubuntu2204 on 1.37", with_pool(osSKU="Ubuntu2204"),
     f"{P}.osSKU: 'Ubuntu2204': AKS offers Ubuntu2204 up to Kubernetes 1.36 only (AKS CHANGELOG; AKS FAQ: `Ubuntu` is "
     "Ubuntu 24.04 from 1.35); use Ubuntu; kubernetesVersion is 1.37"),
    ("CBLMariner", {**GPU, "systemPool": {"osSKU": "CBLMariner"}},
     "gpu-aks:systemPool.osSKU: 'CBLMariner': CBLMariner (Azure Linux 2.0) ended support on 2025-11-30 and its node "
     "images were removed from 2026-03-31 (AKS CHANGELOG); use AzureLinux; kubernetesVersion is 1.37"),
    ("CPU size Azure does not sell", {**GPU, "cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v9"}]},
     "gpu-aks:cpuPools[cpu].vmSize: 'Standard_D8ds_v9': Azure sells no Dds_v9 series (Dds comes in v4, v5, v6); nearest "
     "real sizes: Standard_D8ds_v5, Standard_D8ds_v6"),
    ("GPU near miss", with_pool(vmSize="Standard_NC40ads_H100_v4"),
     f"{P}.vmSize: 'Standard_NC40ads_H100_v4' is not an NVIDIA GPU size gpu-aks knows; did you mean "
     "Standard_NC40ads_H100_v5? supported:"),
    ("MIG from zero under mixed", {"gpuPools": [{"name": "a100", "vmSize": "Standard_NC24ads_A100_v4",
                                                  "gpuInstanceProfile": "MIG1g"}], "devicePlugin": {"migStrategy": "mixed"}},
     "gpu-aks:gpuPools[a100].minCount: 0 on a MIG pool under devicePlugin.migStrategy: mixed: the cluster autoscaler "
     "never scales it up for pods asking for nvidia.com/mig-* (Azure/AKS#5161); set minCount: 1 or use migStrategy: "
     "single"),
]


@pytest.mark.parametrize("case, raw, expected", REFUSED, ids=[case for case, _, _ in REFUSED])
def test_each_newly_refused_value_says_why(case, raw, expected):
    found = problems_of(raw)
    assert len(found) == 1, found
    assert found[0].startswith(expected), found[0]


@pytest.mark.parametrize("location, expected", [
    ("west-europe", "azure-native:location: 'west-europe' is not an Azure region name; did you mean westeurope?"),
    ("eastu2", "azure-native:location: 'eastu2' is not an Azure region; did you mean eastus2 or eastus?"),
])
def test_location_gets_a_did_you_mean(location, expected):
    assert problems_of(GPU, location)[0].startswith(expected)


def test_a_typo_in_the_priority_is_one_problem_not_two():
    assert problems_of(with_pool(scaleSetPriority="spot", spotMaxPrice=0.5, maxSurge="1")) == [
        f"{P}.scaleSetPriority: 'spot' is not allowed; allowed: Regular, Spot"]


def test_warnings_name_their_key():
    settings = parse({"gpuPools": [{"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG1g"}],
                      "cluster": {"kubernetesVersion": "1.34"}}, location="westeurope")
    assert any("Azure/AKS#5161" in w and w.startswith("gpu-aks:gpuPools[a100].minCount") for w in settings.warnings)
    assert any(w.startswith("gpu-aks:cluster.apiServerAccessProfile: neither authorizedIPRanges") for w in settings.warnings)
    assert any("'1.34' reaches its AKS end of support on 2026-11-30 (7 days)" in w for w in settings.warnings), \
        "1.34 is supported until the last day of November 2026"
    assert parse({**GPU, "cluster": {"apiServerAccessProfile": {"enablePrivateCluster": True}}}).warnings == ()


def test_gpu_pools_protect_long_jobs_and_spot_pools_send_no_upgrade_settings():
    pools = parse({"gpuPools": [{"name": "a", "vmSize": "Standard_NC4as_T4_v3"},
                                {"name": "b", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot"}]}).gpu_pools
    assert (pools[0].drain_timeout_minutes, pools[0].node_soak_minutes, pools[0].undrainable_node_behavior) == (60, 5, "Schedule")
    assert pools[1].upgrade_settings() is None
    run = run_pulumi(lambda: gpu_pool("a", pools[0], _target()), "unit")
    assert run.one("azure-native:containerservice:AgentPool").inputs["upgradeSettings"] == {
        "maxSurge": "33%", "drainTimeoutInMinutes": 60, "nodeSoakDurationInMinutes": 5, "undrainableNodeBehavior": "Schedule"}


def test_role_assignment_names_are_deterministic_guids():
    name = role_assignment_name("/subscriptions/s/rg/aks", FAKE_DEPLOYER_OBJECT_ID, "/roleDefinitions/r")
    assert name == role_assignment_name("/SUBSCRIPTIONS/s/rg/aks", FAKE_DEPLOYER_OBJECT_ID.upper(), "/roleDefinitions/r")
    assert name != role_assignment_name("/subscriptions/s/rg/aks", ADMIN, "/roleDefinitions/r")
    assert len(name) == 36 and name.count("-") == 4


@pytest.mark.parametrize("principal_type", ["User", "ServicePrincipal"])
def test_cluster_access_sends_the_principal_type_a_stable_name_and_grants_admins(principal_type):
    settings = AccessSettings(True, 60, principal_type, (ClusterAdmin(ADMIN, "Group"),))

    def program() -> None:
        ClusterAccess("access", ClusterAccessArgs(settings, "/sub/aks", True))

    run = run_pulumi(program, "unit")
    assert run.error is None, run.error
    deployer = run.one("azure-native:authorization:RoleAssignment", "access-deployer-cluster-admin")
    assert deployer.inputs["principalType"] == principal_type
    role = f"/subscriptions/{FAKE_SUBSCRIPTION}/providers/Microsoft.Authorization/roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN_ROLE}"
    assert deployer.inputs["roleAssignmentName"] == role_assignment_name("/sub/aks", FAKE_DEPLOYER_OBJECT_ID, role)
    assert deployer.delete_before_replace, "Azure keeps one assignment per scope, principal and role"
    admin = run.one("azure-native:authorization:RoleAssignment", f"access-admin-{ADMIN}")
    assert (admin.inputs["principalId"], admin.inputs["principalType"]) == (ADMIN, "Group")
    wait = run.one("pulumi-python:dynamic:Resource")
    assert {deployer.urn, admin.urn} <= set(wait.dependencies)


def test_admins_alone_are_granted_without_the_deployer():
    settings = AccessSettings(False, 60, "User", (ClusterAdmin(ADMIN, "User"),))
    run = run_pulumi(lambda: ClusterAccess("access", ClusterAccessArgs(settings, "/sub/aks", True)), "unit")
    assert [r.name for r in run.by_type("azure-native:authorization:RoleAssignment")] == [f"access-admin-{ADMIN}"]


def test_a_deployer_change_warns_with_both_object_ids():
    warning = deployer_change_warning("aaaa", FAKE_DEPLOYER_OBJECT_ID)
    assert warning is not None and "aaaa" in warning and FAKE_DEPLOYER_OBJECT_ID in warning
    assert "gpu-aks:access.clusterAdmins" in warning
    assert deployer_change_warning(None, FAKE_DEPLOYER_OBJECT_ID) is None
    assert deployer_change_warning(FAKE_DEPLOYER_OBJECT_ID.upper(), FAKE_DEPLOYER_OBJECT_ID) is None


def _dev_with_previous(previous: dict) -> object:
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", "gpu-aks")
    mocks = PlatformMocks(stack_references={"organization/gpu-aks/dev": previous})
    return run_program(ROOT, "dev", config, mocks=mocks)


def test_the_program_records_and_reads_back_deployer_and_network():
    run = _dev_with_previous({})
    assert run.error is None, run.error
    assert run.stack_outputs[DEPLOYER_OUTPUT] == FAKE_DEPLOYER_OBJECT_ID
    assert run.stack_outputs[NETWORK_OUTPUT]["networkDataplane"] == "cilium"
    moved = _dev_with_previous({NETWORK_OUTPUT: {**run.stack_outputs[NETWORK_OUTPUT], "networkPlugin": "none"}})
    assert isinstance(moved.error, pulumi.RunError)
    assert "gpu-aks:cluster.networkProfile.networkPlugin: the cluster has 'none', the config says 'azure'" in str(moved.error)


def test_cluster_network_api_server_protection_and_maintenance(prod_run, dev_run):
    cluster = prod_run.one("azure-native:containerservice:ManagedCluster")
    assert cluster.inputs["networkProfile"] == {
        "networkPlugin": "azure", "networkPluginMode": "overlay", "networkDataplane": "cilium", "networkPolicy": "cilium",
        "podCidr": "10.244.0.0/16", "serviceCidr": "10.0.0.0/16", "dnsServiceIP": "10.0.0.10",
        "outboundType": "loadBalancer", "loadBalancerSku": "standard"}
    assert cluster.inputs["apiServerAccessProfile"] == {"authorizedIPRanges": ["203.0.113.0/24", "198.51.100.0/24"]}
    assert "apiServerAccessProfile" not in dev_run.one("azure-native:containerservice:ManagedCluster").inputs
    [system] = cluster.inputs["agentPoolProfiles"]
    assert "orchestratorVersion" not in system, "stable channel: pulumi-azure-native#2094"
    by_name = {c.inputs["configName"]: c.inputs["maintenanceWindow"]
               for c in prod_run.by_type("azure-native:containerservice:MaintenanceConfiguration")}
    assert by_name["aksManagedAutoUpgradeSchedule"] == {
        "schedule": {"weekly": {"dayOfWeek": "Saturday", "intervalWeeks": 2}}, "durationHours": 8, "utcOffset": "+00:00",
        "startTime": "22:00", "notAllowedDates": [{"start": "2026-12-19", "end": "2027-01-04"}]}
    assert by_name["aksManagedNodeOSUpgradeSchedule"]["durationHours"] == 6
    admins = [r for r in prod_run.by_type("azure-native:authorization:RoleAssignment") if "-admin-" in r.name]
    assert len(admins) == 2
    assert prod_run.one("azure-native:authorization:RoleAssignment", "access-deployer-cluster-admin").inputs[
        "principalType"] == "ServicePrincipal"


def test_protect_follows_the_setting(monkeypatch):
    from offline import mockrun
    protected: dict[str, bool] = {}
    register = mockrun.RecordingMonitor.RegisterResource

    def recording(self, request):  # the engine's `protect` flag, as it crosses the wire
        protected[request.name] = bool(request.protect)
        return register(self, request)

    monkeypatch.setattr(mockrun.RecordingMonitor, "RegisterResource", recording)
    for protect in (True, False):
        settings = parse({**GPU, "cluster": {"protect": protect}})
        run = run_pulumi(lambda s=settings: AksCluster("c", AksClusterArgs(s.cluster, s.system_pool)), "unit")
        assert run.error is None, run.error
        assert (protected["c-cluster"], protected["c-rg"]) == (protect, protect)


def test_maintenance_follows_the_channels():
    from components.maintenance import scheduled_configurations
    settings = parse(GPU).maintenance
    assert list(scheduled_configurations(settings, "patch", "NodeImage")) == ["aksManagedAutoUpgradeSchedule",
                                                                            "aksManagedNodeOSUpgradeSchedule"]
    assert list(scheduled_configurations(settings, "none", "Unmanaged")) == []


def test_the_role_propagation_wait_waits_whatever_subscription_the_assignment_is_in(monkeypatch):
    """No product code recognises the stand-in: an assignment under the all-zero subscription the stand-in
    issues waits as any other (tests set access.rolePropagationSeconds to 0 instead)."""
    from components import propagation

    slept: list[float] = []
    monkeypatch.setattr(propagation.time, "sleep", slept.append)
    provider = propagation._WaitProvider()
    for assignment in ("/subscriptions/00000000-0000-0000-0000-000000000000/providers/Microsoft.Authorization/"
                       "roleAssignments/a", "/subscriptions/5e1f/providers/Microsoft.Authorization/roleAssignments/b"):
        provider.create({"roleAssignmentId": assignment, "seconds": 7})
    assert slept == [7.0, 7.0]
