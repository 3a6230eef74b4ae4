"""Issue 32: your own identity, subnets, egress, private DNS, OS disks, pod density and the security
profile. Every refusal names its key; every new input the program sends is checked against Microsoft's
REST models for the API version it sends (azure-mgmt-containerservice 40.1.0, API 2025-09-01)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from azure.mgmt.containerservice import models

from components import aks_api
from components.network_grants import network_grants
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.settings import SettingsError
from tests.conftest import TODAY

SUB = "11111111-1111-1111-1111-111111111111"
OTHER_SUB = "77777777-7777-7777-7777-777777777777"
VNET = f"/subscriptions/{SUB}/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-spoke"
IDENTITY = f"/subscriptions/{SUB}/resourceGroups/rg-id/providers/Microsoft.ManagedIdentity/userAssignedIdentities/aks-cp"
ZONE = f"/subscriptions/{SUB}/resourceGroups/rg-dns/providers/Microsoft.Network/privateDnsZones/privatelink.eastus2.azmk8s.io"
WORKSPACE = f"/subscriptions/{SUB}/resourceGroups/rg-log/providers/Microsoft.OperationalInsights/workspaces/law-sec"
VAULT = f"/subscriptions/{SUB}/resourceGroups/rg-kv/providers/Microsoft.KeyVault/vaults/kv-etcd"
KEY = "https://kv-etcd.vault.azure.net/keys/etcd/0123456789abcdef0123456789abcdef"

BASE: dict[str, Any] = {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2}]}


def subnet(name: str, vnet: str = VNET) -> str:
    return f"{vnet}/subnets/{name}"


def with_cluster(**cluster: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE), "cluster": cluster}


def settings(raw: dict[str, Any], location: str = "eastus2"):
    return parse_settings(raw, "dev", location, today=TODAY)


def problems(raw: dict[str, Any], location: str = "eastus2") -> list[str]:
    with pytest.raises(SettingsError) as error:
        settings(raw, location)
    return error.value.problems


# --- The REST models are the oracle for every closed set and bound -------------------------------


def _values(enum: Any) -> set[str]:
    return {member.value for member in enum}


def test_new_enums_and_bounds_are_the_api_versions():
    assert set(aks_api.IDENTITY_TYPES) == _values(models.ResourceIdentityType) - {"None"}
    assert set(aks_api.OS_DISK_TYPES) == _values(models.OSDiskType)
    assert set(aks_api.KEY_VAULT_NETWORK_ACCESS) == _values(models.KeyVaultNetworkAccessTypes)
    size = models.ManagedClusterAgentPoolProfileProperties._validation["os_disk_size_gb"]
    assert (size["minimum"], size["maximum"]) == aks_api.OS_DISK_SIZE_RANGE
    assert set(aks_api.MAX_PODS_BOUNDS) == _values(models.NetworkPlugin)
    for field in ("private_dns_zone",):
        assert field in models.ManagedClusterAPIServerAccessProfile._attribute_map
    # The API's own words for privateDNSZone's modes.
    assert "'system' and 'none'" in (models.ManagedClusterAPIServerAccessProfile.__init__.__doc__ or "")


def test_resource_ids_follow_the_forms_the_models_give():
    assert aks_api.parse_resource_id("subnet", subnet("gpu")) is not None
    assert aks_api.parse_resource_id("subnet", subnet("gpu").upper().replace(SUB.upper(), SUB)) is not None, \
        "Azure compares IDs without case"
    for bad in (VNET, f"{VNET}/subnets/", "subnet-gpu", IDENTITY, None, 3):
        assert aks_api.parse_resource_id("subnet", bad) is None, bad
    assert aks_api.virtual_network_of(subnet("a")) == aks_api.virtual_network_of(subnet("b").replace("rg-net", "RG-NET"))


# --- identity -----------------------------------------------------------------------------------


def test_the_identity_defaults_to_system_assigned_and_takes_one_user_assigned_identity():
    assert settings(BASE).cluster.identity.type == "SystemAssigned"
    identity = settings(with_cluster(identity={"userAssignedIdentities": [IDENTITY]})).cluster.identity
    assert (identity.type, identity.user_assigned_identity) == ("UserAssigned", IDENTITY)


@pytest.mark.parametrize("identity, expected", [
    ({"type": "UserAssigned"}, "gpu-aks:cluster.identity.userAssignedIdentities: is missing; type UserAssigned "
                               "needs the identity's resource ID"),
    ({"type": "SystemAssigned", "userAssignedIdentities": [IDENTITY]},
     "gpu-aks:cluster.identity.userAssignedIdentities: is set but type is SystemAssigned"),
    ({"userAssignedIdentities": [IDENTITY, IDENTITY + "2"]},
     "gpu-aks:cluster.identity.userAssignedIdentities: has 2 identities; AKS API 2025-09-01 allows one"),
    ({"userAssignedIdentities": ["aks-cp"]},
     "gpu-aks:cluster.identity.userAssignedIdentities[0]: 'aks-cp' is not a user-assigned managed identity resource ID"),
    ({"type": "None"}, "gpu-aks:cluster.identity.type: 'None' is not allowed; AKS API 2025-09-01 takes SystemAssigned, "
                       "UserAssigned"),
])
def test_identity_refusals_name_the_key(identity, expected):
    assert any(problem.startswith(expected) for problem in problems(with_cluster(identity=identity))), expected


# --- apiServerAccessProfile.privateDNSZone -------------------------------------------------------


def test_private_dns_zone_modes_and_your_own_zone():
    for mode in ("system", "none"):
        api = settings(with_cluster(apiServerAccessProfile={"enablePrivateCluster": True, "privateDNSZone": mode})
                       ).cluster.api_server
        assert api.private_dns_zone == mode and api.own_private_dns_zone is None
    own = settings(with_cluster(identity={"userAssignedIdentities": [IDENTITY]},
                                apiServerAccessProfile={"enablePrivateCluster": True, "privateDNSZone": ZONE}))
    assert own.cluster.api_server.own_private_dns_zone == ZONE


@pytest.mark.parametrize("cluster, expected", [
    ({"apiServerAccessProfile": {"privateDNSZone": "system"}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: is only used by a private cluster"),
    ({"apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": "System"}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: 'System' is not allowed; AKS API 2025-09-01 takes system, "
     "none or your private DNS zone's resource ID"),
    ({"identity": {"userAssignedIdentities": [IDENTITY]},
      "apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": ZONE.replace(
          "privatelink.eastus2.azmk8s.io", "corp.contoso.com")}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: '/subscriptions/"),
    ({"identity": {"userAssignedIdentities": [IDENTITY]},
      "apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": ZONE.replace("eastus2", "westeurope")}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: names zone 'privatelink.westeurope.azmk8s.io' of region "
     "'westeurope', but the cluster is in 'eastus2'"),
    ({"apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": ZONE}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: is your own zone, which needs identity.type UserAssigned"),
])
def test_private_dns_zone_refusals_name_the_key(cluster, expected):
    found = problems(with_cluster(**cluster))
    assert any(problem.startswith(expected) for problem in found), (expected, found)


def test_your_own_zone_must_have_an_aks_zone_name():
    zone = ZONE.replace("privatelink.eastus2.azmk8s.io", "corp.contoso.com")
    found = problems(with_cluster(identity={"userAssignedIdentities": [IDENTITY]},
                                  apiServerAccessProfile={"enablePrivateCluster": True, "privateDNSZone": zone}))
    assert any("names zone 'corp.contoso.com'; AKS takes privatelink.<region>.azmk8s.io" in p for p in found), found


# --- securityProfile ----------------------------------------------------------------------------


def test_the_security_profile_is_off_by_default_and_sends_nothing():
    profile = settings(BASE).cluster.security_profile
    assert not (profile.defender.enabled or profile.azure_key_vault_kms.enabled or profile.image_cleaner.enabled)
    assert profile.as_api() == {}


def test_the_security_profile_sends_what_is_turned_on():
    profile = settings(with_cluster(identity={"userAssignedIdentities": [IDENTITY]}, securityProfile={
        "defender": {"securityMonitoring": {"enabled": True}, "logAnalyticsWorkspaceResourceId": WORKSPACE},
        "azureKeyVaultKms": {"enabled": True, "keyId": KEY, "keyVaultNetworkAccess": "Private",
                             "keyVaultResourceId": VAULT},
        "imageCleaner": {"enabled": True, "intervalHours": 48}})).cluster.security_profile
    assert profile.as_api() == {
        "defender": {"log_analytics_workspace_resource_id": WORKSPACE, "security_monitoring": {"enabled": True}},
        "azure_key_vault_kms": {"enabled": True, "key_id": KEY, "key_vault_network_access": "Private",
                                "key_vault_resource_id": VAULT},
        "image_cleaner": {"enabled": True, "interval_hours": 48}}


_KMS = {"enabled": True, "keyId": KEY}
_UAMI = {"userAssignedIdentities": [IDENTITY]}


@pytest.mark.parametrize("cluster, expected", [
    ({"securityProfile": {"defender": {"securityMonitoring": {"enabled": True}}}},
     "gpu-aks:cluster.securityProfile.defender.logAnalyticsWorkspaceResourceId: is missing"),
    ({"securityProfile": {"defender": {"logAnalyticsWorkspaceResourceId": WORKSPACE}}},
     "gpu-aks:cluster.securityProfile.defender.logAnalyticsWorkspaceResourceId: is set but securityMonitoring.enabled "
     "is false"),
    ({"securityProfile": {"defender": {"securityMonitoring": {"enabled": True},
                                       "logAnalyticsWorkspaceResourceId": VAULT}}},
     "gpu-aks:cluster.securityProfile.defender.logAnalyticsWorkspaceResourceId: "),
    ({"securityProfile": {"azureKeyVaultKms": _KMS}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.enabled: needs identity.type UserAssigned"),
    ({"identity": _UAMI, "securityProfile": {"azureKeyVaultKms": {"enabled": True}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyId: is missing"),
    ({"identity": _UAMI, "securityProfile": {"azureKeyVaultKms": {**_KMS, "keyId": KEY.rsplit("/", 1)[0]}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyId: "),
    ({"identity": _UAMI, "securityProfile": {"azureKeyVaultKms": {**_KMS, "keyVaultNetworkAccess": "Private"}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyVaultResourceId: is missing"),
    ({"identity": _UAMI, "securityProfile": {"azureKeyVaultKms": {**_KMS, "keyVaultResourceId": VAULT}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyVaultResourceId: is set but keyVaultNetworkAccess is Public"),
    ({"identity": _UAMI, "securityProfile": {"azureKeyVaultKms": {
        **_KMS, "keyVaultNetworkAccess": "Private", "keyVaultResourceId": VAULT.replace("kv-etcd", "kv-other")}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyId: is a key of vault 'kv-etcd'"),
    ({"identity": _UAMI, "securityProfile": {"azureKeyVaultKms": {**_KMS, "keyVaultNetworkAccess": "private"}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyVaultNetworkAccess: 'private' is not allowed"),
    ({"securityProfile": {"azureKeyVaultKms": {"keyId": KEY}}},
     "gpu-aks:cluster.securityProfile.azureKeyVaultKms.keyId: is set but enabled is false"),
    ({"securityProfile": {"imageCleaner": {"enabled": True, "intervalHours": 12}}},
     "gpu-aks:cluster.securityProfile.imageCleaner.intervalHours: 12 is not allowed; AKS takes whole hours from 24"),
    ({"securityProfile": {"imageCleaner": {"intervalHours": 48}}},
     "gpu-aks:cluster.securityProfile.imageCleaner.intervalHours: is set but enabled is false"),
])
def test_security_profile_refusals_name_the_key(cluster, expected):
    assert any(problem.startswith(expected) for problem in problems(with_cluster(**cluster))), expected


def test_a_private_key_vault_is_allowed_with_a_warning_about_api_server_vnet_integration():
    result = settings(with_cluster(identity=_UAMI, securityProfile={"azureKeyVaultKms": {
        **_KMS, "keyVaultNetworkAccess": "Private", "keyVaultResourceId": VAULT}}))
    assert any("securityProfile.azureKeyVaultKms.keyVaultNetworkAccess: Private" in w and "VNet Integration" in w
               for w in result.warnings)


def test_every_problem_is_reported_at_once():
    found = problems(with_cluster(identity={"type": "UserAssigned"},
                                  apiServerAccessProfile={"privateDNSZone": "system"},
                                  securityProfile={"imageCleaner": {"intervalHours": 1}}))
    keys = {problem.split(":")[1] for problem in found}
    assert {"cluster.identity.userAssignedIdentities", "cluster.apiServerAccessProfile.privateDNSZone",
            "cluster.securityProfile.imageCleaner.intervalHours"} <= keys


# --- Network grants ------------------------------------------------------------------------------


def test_network_grants_are_one_per_distinct_subnet_and_the_zone():
    grants = network_grants([subnet("system"), subnet("gpu"), subnet("GPU".lower()).upper().replace(SUB.upper(), SUB)],
                            ZONE)
    assert [(g.scope, g.role) for g in grants] == [
        (subnet("system"), aks_api.NETWORK_CONTRIBUTOR_ROLE), (subnet("gpu"), aks_api.NETWORK_CONTRIBUTOR_ROLE),
        (ZONE, aks_api.PRIVATE_DNS_ZONE_CONTRIBUTOR_ROLE)]
    assert network_grants([], None) == []
    # The role definition lives in the scope's subscription.
    assert network_grants([subnet("gpu", VNET.replace(SUB, OTHER_SUB))], None)[0].subscription == OTHER_SUB


# --- The catalog's local disks ------------------------------------------------------------------

from components.azure_catalog import LOCAL_DISKS, ephemeral_os_disk_check, local_disks  # noqa: E402

#: `MaxResourceVolumeMB` (MiB) of the sizes Azure/karpenter-provider-azure's capture of the Resource
#: SKUs API holds: the temp disks the Learn pages give must be the same disks.
RESOURCE_VOLUME_MIB = {"Standard_NC16as_T4_v3": 360448, "Standard_NC24ads_A100_v4": 65536}


def test_the_two_sources_of_disk_sizes_agree_where_both_have_a_size():
    for size, mib in RESOURCE_VOLUME_MIB.items():
        disks = local_disks(size)
        assert disks is not None and disks.temp_gib == mib // 1024, size


def test_every_catalogued_gpu_size_with_disks_is_a_supported_gpu_size_or_a_d_size():
    from gpu_aks_policies.catalog import gpu_sku
    for size, disks in LOCAL_DISKS.items():
        assert gpu_sku(size) is not None or size.startswith("standard_d"), size
        if disks.cache_at_most is not None:
            # A bound comes from a larger size of the same series whose cache a source gives.
            bound = local_disks(disks.cache_bound_by)
            assert bound is not None and bound.cache_gib == disks.cache_at_most, size
            assert disks.cache_bound_by.lower().split("_")[-2:] == size.split("_")[-2:], "same series"


@pytest.mark.parametrize("vm_size, size, refused, warned", [
    ("Standard_NC24ads_A100_v4", 256, False, False),   # fits the 256 GiB cache though the temp disk has 64
    ("Standard_NC24ads_A100_v4", 257, True, False),
    ("Standard_D4ds_v5", 150, False, False),
    ("Standard_D4ds_v5", 151, True, False),            # no cache disk: the temp disk is the limit
    ("Standard_NC4as_T4_v3", 176, False, False),
    ("Standard_NC4as_T4_v3", 200, True, False),        # cache bounded by NC16as_T4_v3's 144 GiB
    ("Standard_NC48ads_A100_v4", 128, False, False),
    ("Standard_NC48ads_A100_v4", 200, False, True),    # cache unknown: a warning, never a refusal
    ("Standard_ND96asr_v4", 2048, False, False),       # not in the table: nothing to say
    ("Standard_D4ds_v5", None, False, False),
])
def test_ephemeral_os_disk_fits_the_cache_or_temp_disk(vm_size, size, refused, warned):
    problem, warning = ephemeral_os_disk_check(vm_size, size)
    assert (problem is not None, warning is not None) == (refused, warned)


# --- What the program sends, against the REST models ---------------------------------------------

import yaml  # noqa: E402

from offline.mockrun import FAKE_CLUSTER_PRINCIPAL_ID, FAKE_IDENTITY_PRINCIPAL_ID  # noqa: E402
from tests.conftest import run_stack  # noqa: E402
from tests.test_aks_api import _walk  # noqa: E402

CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
ROLE_TYPE = "azure-native:authorization:RoleAssignment"


def run_config(tmp_path_factory: Any, name: str, config: dict[str, Any]):
    path = tmp_path_factory.mktemp(name) / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {"azure-native:location": "eastus2",
                                               **{f"gpu-aks:{key}": value for key, value in config.items()}}}))
    run = run_stack(name, path)
    assert run.error is None, run.error
    return run


PRIVATE_CONFIG: dict[str, Any] = {
    "cluster": {"identity": {"userAssignedIdentities": [IDENTITY]},
                "apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": ZONE},
                "securityProfile": {
                    "defender": {"securityMonitoring": {"enabled": True}, "logAnalyticsWorkspaceResourceId": WORKSPACE},
                    "azureKeyVaultKms": {"enabled": True, "keyId": KEY, "keyVaultNetworkAccess": "Private",
                                         "keyVaultResourceId": VAULT},
                    "imageCleaner": {"enabled": True}}},
    "gpuPools": BASE["gpuPools"],
}


@pytest.fixture(scope="module")
def private_run(tmp_path_factory):
    return run_config(tmp_path_factory, "private", PRIVATE_CONFIG)


def test_the_cluster_sends_identity_private_dns_and_security_profile(private_run):
    cluster = private_run.one(CLUSTER_TYPE).inputs
    assert cluster["identity"] == {"type": "UserAssigned", "userAssignedIdentities": [IDENTITY]}
    assert cluster["apiServerAccessProfile"] == {"enablePrivateCluster": True, "privateDNSZone": ZONE}
    security = cluster["securityProfile"]
    assert security["defender"] == {"logAnalyticsWorkspaceResourceId": WORKSPACE, "securityMonitoring": {"enabled": True}}
    assert security["azureKeyVaultKms"]["keyVaultNetworkAccess"] == "Private"
    assert security["imageCleaner"] == {"enabled": True, "intervalHours": 168}
    problems: list[str] = []
    _walk(cluster, models.ManagedCluster, "private", problems)
    assert problems == []


def test_a_user_assigned_identity_is_granted_on_your_zone_before_the_cluster(private_run):
    grants = [r for r in private_run.by_type(ROLE_TYPE) if r.inputs["scope"] == ZONE]
    assert len(grants) == 1
    grant = grants[0].inputs
    assert grant["principalId"] == FAKE_IDENTITY_PRINCIPAL_ID and grant["principalType"] == "ServicePrincipal"
    assert grant["roleDefinitionId"] == (f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/"
                                         f"{aks_api.PRIVATE_DNS_ZONE_CONTRIBUTOR_ROLE}")
    assert grants[0].urn in private_run.one(CLUSTER_TYPE).dependencies, "the cluster waits for the grant"
    identity_calls = [c for c in private_run.calls if c.token == "azure-native:managedidentity:getUserAssignedIdentity"]
    assert identity_calls and identity_calls[0].args == {"resourceGroupName": "rg-id", "resourceName": "aks-cp"}


def test_the_default_stacks_send_a_system_assigned_identity_and_no_network_grant(dev_run):
    assert dev_run.one(CLUSTER_TYPE).inputs["identity"] == {"type": "SystemAssigned"}
    assert not [r for r in dev_run.by_type(ROLE_TYPE) if "roleDefinitions/" + aks_api.NETWORK_CONTRIBUTOR_ROLE
                in r.inputs["roleDefinitionId"]]
    assert "defender" not in dev_run.one(CLUSTER_TYPE).inputs["securityProfile"]
    assert FAKE_CLUSTER_PRINCIPAL_ID  # used by the subnet grants of a system-assigned identity (below)


# --- Pools in your subnets ------------------------------------------------------------------------

SYSTEM_SUBNET, GPU_SUBNET, POD_SUBNET = subnet("snet-system"), subnet("snet-gpu"), subnet("snet-pods")


def in_subnets(**changes: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "systemPool": {"vnetSubnetID": SYSTEM_SUBNET},
        "cpuPools": [{"name": "cpu", "vnetSubnetID": SYSTEM_SUBNET}],
        "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": GPU_SUBNET}],
    }
    for key, value in changes.items():
        raw[key] = value
    return raw


def test_pools_in_your_subnets_and_a_pool_without_one_joins_the_system_pools():
    raw = in_subnets(cpuPools=[{"name": "cpu"}])
    result = settings(raw)
    assert result.system_pool.baseline.vnet_subnet_id == SYSTEM_SUBNET
    assert result.cpu_pools[0].baseline.vnet_subnet_id == SYSTEM_SUBNET, "placed as AKS places it"
    assert result.gpu_pools[0].baseline.vnet_subnet_id == GPU_SUBNET
    assert platform_pools(result).subnets() == (SYSTEM_SUBNET, GPU_SUBNET)


def test_udr_is_allowed_with_subnets_and_refused_without():
    raw = in_subnets(cluster={"networkProfile": {"outboundType": "userDefinedRouting"}})
    assert settings(raw).cluster.network.outbound_type == "userDefinedRouting"
    found = problems({**BASE, "cluster": {"networkProfile": {"outboundType": "userDefinedRouting"}}})
    assert [p for p in found if p.startswith("gpu-aks:cluster.networkProfile.outboundType: 'userDefinedRouting' needs "
                                             "the nodes in your own subnets")]
    nat = problems(in_subnets(cluster={"networkProfile": {"outboundType": "managedNATGateway"}}))
    assert [p for p in nat if p.startswith("gpu-aks:cluster.networkProfile.outboundType: 'managedNATGateway' is AKS's "
                                           "NAT gateway in the VNet AKS manages")]
    assert settings(in_subnets(cluster={"networkProfile": {"outboundType": "userAssignedNATGateway"}}))


GPU = "gpu-aks:gpuPools[gput4]"


@pytest.mark.parametrize("raw, expected", [
    (in_subnets(gpuPools=[{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3",
                           "vnetSubnetID": subnet("snet-gpu", VNET.replace("vnet-spoke", "vnet-other"))}]),
     f"{GPU}.vnetSubnetID: is in VNet 'vnet-other', but gpu-aks:systemPool.vnetSubnetID is in VNet 'vnet-spoke'"),
    (in_subnets(gpuPools=[{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": VNET}]),
     (f"{GPU}.vnetSubnetID: '/subscriptions/", "is not a subnet resource ID: it names a virtual network, not a subnet",
      "the form is /subscriptions/<id>/")),
    (in_subnets(gpuPools=[{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": "snet-gpu"}]),
     f"{GPU}.vnetSubnetID: 'snet-gpu' is not a subnet resource ID"),
    (in_subnets(systemPool={"vnetSubnetID": f"{VNET}/subnets"}),
     "gpu-aks:systemPool.vnetSubnetID: "),
    ({"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": GPU_SUBNET}]},
     f"{GPU}.vnetSubnetID: is your subnet, but systemPool has no vnetSubnetID"),
])
def test_bad_subnets_are_refused_naming_vnet_subnet_id(raw, expected):
    prefix, *contained = expected if isinstance(expected, tuple) else (expected,)
    found = problems(raw)
    assert any(problem.startswith(prefix) and all(part in problem for part in contained) for problem in found), \
        (expected, found)


def test_pod_subnets_on_all_pools_or_none_and_never_with_overlay():
    everywhere = in_subnets(systemPool={"vnetSubnetID": SYSTEM_SUBNET, "podSubnetID": POD_SUBNET},
                            cpuPools=[{"name": "cpu", "podSubnetID": POD_SUBNET}],
                            gpuPools=[{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": GPU_SUBNET,
                                       "podSubnetID": POD_SUBNET}])
    result = settings(everywhere)
    assert result.cluster.network.plugin_mode is None and result.cluster.network.pod_cidr is None, \
        "pod subnets are Azure CNI without Overlay"
    assert POD_SUBNET in platform_pools(result).subnets()
    partial = copy.deepcopy(everywhere)
    del partial["cpuPools"][0]["podSubnetID"]
    assert any(p.startswith("gpu-aks:cpuPools[cpu].podSubnetID: is missing while gpu-aks:systemPool.podSubnetID is "
                            "set") for p in problems(partial))
    overlay = {**copy.deepcopy(everywhere), "cluster": {"networkProfile": {"networkPluginMode": "overlay"}}}
    assert any(p.startswith(f"{GPU}.podSubnetID: is for Azure CNI with dynamic pod IP allocation") and
               "uses networkPluginMode overlay" in p for p in problems(overlay))
    kubenet = {**copy.deepcopy(everywhere), "cluster": {"networkProfile": {"networkPlugin": "kubenet",
                                                                           "networkDataplane": "azure"}}}
    assert any(p.startswith(f"{GPU}.podSubnetID: is for Azure CNI") and "uses networkPlugin kubenet" in p
               for p in problems(kubenet))


# --- OS disks, pod density, host encryption -------------------------------------------------------


def gpu_pool(**changes: Any) -> dict[str, Any]:
    return {"gpuPools": [{"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", **changes}]}


def test_ephemeral_os_disks_max_pods_and_encryption_reach_the_settings():
    pool = settings(gpu_pool(osDiskType="Ephemeral", osDiskSizeGB=256, maxPods=110, enableEncryptionAtHost=True)
                    ).gpu_pools[0]
    assert pool.baseline.as_api() == {"os_disk_type": "Ephemeral", "os_disk_size_gb": 256, "max_pods": 110,
                                      "enable_encryption_at_host": True}


@pytest.mark.parametrize("raw, expected", [
    (gpu_pool(osDiskType="Ephemeral", osDiskSizeGB=512),
     "gpu-aks:gpuPools[a100].osDiskSizeGB: 512 GiB does not fit an Ephemeral OS disk on Standard_NC24ads_A100_v4: its "
     "temp disk has 64 GiB and its cache 256 GiB"),
    (gpu_pool(osDiskSizeGB=4096), "gpu-aks:gpuPools[a100].osDiskSizeGB: 4096 is not allowed; AKS API 2025-09-01 takes "
                                  "whole GiB from 0"),
    (gpu_pool(osDiskType="ephemeral"), "gpu-aks:gpuPools[a100].osDiskType: 'ephemeral' is not allowed; AKS API "
                                       "2025-09-01 takes Managed, Ephemeral"),
    (gpu_pool(maxPods=300), "gpu-aks:gpuPools[a100].maxPods: 300 is not allowed; AKS takes 10 to 250 pods per node with "
                            "networkPlugin azure"),
    (gpu_pool(maxPods=5), "gpu-aks:gpuPools[a100].maxPods: 5 is not allowed"),
    (gpu_pool(maxPods="110"), "gpu-aks:gpuPools[a100].maxPods: '110' is not allowed"),
    ({**gpu_pool(), "systemPool": {"maxPods": 20}}, "gpu-aks:systemPool.maxPods: 20 is not allowed; a system pool "
                                                    "takes 30 to 250"),
    ({**gpu_pool(), "cluster": {"networkProfile": {"networkPlugin": "kubenet"}}, "cpuPools": [{"name": "cpu",
                                                                                              "maxPods": 251}]},
     "gpu-aks:cpuPools[cpu].maxPods: 251 is not allowed; AKS takes 10 to 250 pods per node with networkPlugin kubenet"),
    (gpu_pool(enableEncryptionAtHost="yes"), "gpu-aks:gpuPools[a100].enableEncryptionAtHost: 'yes' is not true or "
                                             "false"),
])
def test_node_setting_refusals_name_the_key(raw, expected):
    found = problems(raw)
    assert any(problem.startswith(expected) for problem in found), (expected, found)


def test_all_problems_of_one_config_at_once():
    raw = in_subnets(gpuPools=[{"name": "gput4", "vmSize": "Standard_NC24ads_A100_v4", "vnetSubnetID": "x",
                                "osDiskType": "Ephemeral", "osDiskSizeGB": 999, "maxPods": 300}])
    keys = {problem.split(": ")[0] for problem in problems(raw)}
    assert {f"{GPU}.vnetSubnetID", f"{GPU}.osDiskSizeGB", f"{GPU}.maxPods"} <= keys


def test_subnet_keys_rename_the_pool_and_unset_keys_keep_every_existing_name():
    def azure_name(raw: dict[str, Any]) -> str:
        return settings(raw).gpu_pools[0].azure_name

    plain = {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3"}]}
    assert azure_name(plain) == settings(BASE).gpu_pools[0].azure_name
    assert azure_name(in_subnets()) != azure_name(plain)
    moved = in_subnets(gpuPools=[{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": subnet("other")}])
    assert azure_name(moved) != azure_name(in_subnets()), "a new subnet is a new pool, created before the old goes"


# --- The example stack: every new input, through the program, against the REST models -------------

from tests.conftest import ROOT  # noqa: E402
from tools.stacks import example_stacks  # noqa: E402

EXAMPLE = ROOT / "examples" / "landing-zone" / "Pulumi.landing-zone.yaml"
POOL_TYPE = "azure-native:containerservice:AgentPool"


@pytest.fixture(scope="module")
def example_run():
    run = run_stack("landing-zone", EXAMPLE)
    assert run.error is None, run.error
    return run


def _example_config() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE.read_text())["config"]


def test_the_example_uses_every_new_key():
    config = _example_config()
    cluster = config["gpu-aks:cluster"]
    assert cluster["networkProfile"]["outboundType"] == "userDefinedRouting"
    assert cluster["identity"]["type"] == "UserAssigned" and cluster["apiServerAccessProfile"]["privateDNSZone"]
    assert set(cluster["securityProfile"]) == {"defender", "azureKeyVaultKms", "imageCleaner"}
    from components.settings.node_baseline import NODE_BASELINE_KEYS
    used = set()
    for pool in [config["gpu-aks:systemPool"], *config["gpu-aks:cpuPools"], *config["gpu-aks:gpuPools"]]:
        used |= set(pool) & set(NODE_BASELINE_KEYS)
    assert used == set(NODE_BASELINE_KEYS) - {"podSubnetID"}, "podSubnetID needs Azure CNI without Overlay: below"
    # The first key the docs and the example show for production is the subnet.
    assert next(iter(config["gpu-aks:systemPool"])) == "vnetSubnetID"
    page = (ROOT / "docs" / "network.md").read_text()
    first_block = page.split("```yaml", 1)[1]
    assert first_block.split("gpu-aks:systemPool:", 1)[1].split(":", 1)[0].strip() == "vnetSubnetID"


def test_the_example_reaches_the_cluster_and_the_pools(example_run):
    cluster = example_run.one(CLUSTER_TYPE).inputs
    assert cluster["networkProfile"]["outboundType"] == "userDefinedRouting"
    config = _example_config()
    system_subnet = config["gpu-aks:systemPool"]["vnetSubnetID"]
    gpu_subnet = config["gpu-aks:gpuPools"][0]["vnetSubnetID"]
    inline = cluster["agentPoolProfiles"][0]
    assert (inline["vnetSubnetID"], inline["osDiskType"], inline["maxPods"]) == (system_subnet, "Ephemeral", 110)
    pools = {pool.inputs["vmSize"]: pool.inputs for pool in example_run.by_type(POOL_TYPE)}
    a100 = pools["Standard_NC24ads_A100_v4"]
    assert (a100["vnetSubnetID"], a100["osDiskType"], a100["osDiskSizeGB"], a100["maxPods"],
            a100["enableEncryptionAtHost"]) == (gpu_subnet, "Ephemeral", 256, 60, True)
    assert pools["Standard_D16ds_v5"]["vnetSubnetID"] == system_subnet, "the CPU pool joins the system pool's subnet"
    for pool in example_run.by_type(POOL_TYPE):
        for key in NODE_KEYS_CREATE_ONLY:
            assert key in pool.replace_on_changes, key


NODE_KEYS_CREATE_ONLY = ("vnetSubnetID", "podSubnetID", "osDiskType", "osDiskSizeGB", "maxPods", "enableEncryptionAtHost")


def test_the_identity_is_granted_network_contributor_on_each_subnet_before_the_cluster(example_run):
    config = _example_config()
    subnets = {config["gpu-aks:systemPool"]["vnetSubnetID"], config["gpu-aks:gpuPools"][0]["vnetSubnetID"]}
    grants = [r for r in example_run.by_type(ROLE_TYPE)
              if r.inputs["roleDefinitionId"].endswith(aks_api.NETWORK_CONTRIBUTOR_ROLE)]
    assert {g.inputs["scope"] for g in grants} == subnets
    assert all(g.inputs["principalId"] == FAKE_IDENTITY_PRINCIPAL_ID for g in grants)
    dependencies = example_run.one(CLUSTER_TYPE).dependencies
    assert all(g.urn in dependencies for g in grants)


def test_every_input_of_the_example_passes_the_rest_models(example_run):
    problems_found: list[str] = []
    for type_, model in ((CLUSTER_TYPE, models.ManagedCluster), (POOL_TYPE, models.AgentPool)):
        for resource in example_run.by_type(type_):
            _walk(resource.inputs, model, resource.name, problems_found)
    assert problems_found == []
    from tests.test_aks_api import _validation_problems
    for pool in [*example_run.by_type(POOL_TYPE)]:
        body = {k: v for k, v in pool.inputs.items() if k in ("osDiskSizeGB",)}
        assert _validation_problems(models.ManagedClusterAgentPoolProfileProperties, body) == []
    authorization = pytest.importorskip("azure.mgmt.authorization.v2022_04_01.models")
    rest = {entry["key"].split(".")[-1] for entry in authorization.RoleAssignmentCreateParameters._attribute_map.values()}
    for assignment in example_run.by_type(ROLE_TYPE):
        assert set(assignment.inputs) - {"roleAssignmentName", "scope"} <= rest
        assert assignment.inputs["principalType"] in {m.value for m in authorization.PrincipalType}


def test_ci_previews_the_example_like_the_other_stacks():
    assert {"stack": "landing-zone", "file": "examples/landing-zone/Pulumi.landing-zone.yaml"} in example_stacks()
    assert not [e for e in example_stacks() if e["file"].startswith(("examples/gpu-job/", "examples/gpu-inference/"))], \
        "app projects (their own Pulumi.yaml) are not stacks of this program"
    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "pr.yaml").read_text())["jobs"]
    job = jobs["example-preview"]
    assert job["strategy"]["matrix"]["example"] == "${{ fromJSON(needs.stacks.outputs.examples) }}"
    assert any("tools.preview ${{ matrix.example.stack }} --config-file ${{ matrix.example.file }}" in str(step.get("run"))
               for step in job["steps"])
    assert any("--examples" in str(step.get("run")) for step in jobs["stacks"]["steps"])


SYSTEM_ASSIGNED_CONFIG: dict[str, Any] = {
    "systemPool": {"vnetSubnetID": SYSTEM_SUBNET, "podSubnetID": POD_SUBNET},
    "cpuPools": [{"name": "cpu", "podSubnetID": POD_SUBNET}],
    "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": GPU_SUBNET,
                  "podSubnetID": POD_SUBNET, "osDiskType": "Ephemeral", "osDiskSizeGB": 128, "maxPods": 250}],
    "cluster": {"networkProfile": {"networkPlugin": "azure", "outboundType": "userDefinedRouting"}},
}


def test_a_system_assigned_identity_is_granted_after_the_cluster_with_pod_subnets(tmp_path_factory):
    run = run_config(tmp_path_factory, "systemassigned", SYSTEM_ASSIGNED_CONFIG)
    cluster = run.one(CLUSTER_TYPE)
    assert "networkPluginMode" not in cluster.inputs["networkProfile"] and "podCidr" not in cluster.inputs["networkProfile"]
    grants = [r for r in run.by_type(ROLE_TYPE) if r.inputs["roleDefinitionId"].endswith(aks_api.NETWORK_CONTRIBUTOR_ROLE)]
    assert {g.inputs["scope"] for g in grants} == {SYSTEM_SUBNET, GPU_SUBNET, POD_SUBNET}
    assert all(g.inputs["principalId"] == FAKE_CLUSTER_PRINCIPAL_ID for g in grants), "the cluster's own identity"
    assert all(cluster.urn in g.dependencies for g in grants), "granted after the cluster (its principal is an output)"
    assert not any(g.urn in cluster.dependencies for g in grants)
    problems_found: list[str] = []
    for type_, model in ((CLUSTER_TYPE, models.ManagedCluster), (POOL_TYPE, models.AgentPool)):
        for resource in run.by_type(type_):
            _walk(resource.inputs, model, resource.name, problems_found)
    assert problems_found == []


# --- The docs ----------------------------------------------------------------------------------------


def test_the_configuration_reference_lists_every_new_key_with_its_aks_field():
    page = (ROOT / "docs" / "configuration.md").read_text()
    rows: dict[str, str] = {}
    for line in page.splitlines():
        if line.startswith("| `"):
            # A key's first row: a NAP NodePool's osDiskSizeGB (AKSNodeClass's) comes after the AgentPool kinds'.
            rows.setdefault(line.split("|")[1].strip().strip("`"), line)
    expected = {
        "identity.type": "identity.type", "identity.userAssignedIdentities": "identity.userAssignedIdentities",
        "apiServerAccessProfile.privateDNSZone": "apiServerAccessProfile.privateDNSZone",
        "securityProfile.defender.logAnalyticsWorkspaceResourceId": "securityProfile.defender.logAnalyticsWorkspaceResourceId",
        "securityProfile.defender.securityMonitoring.enabled": "securityProfile.defender.securityMonitoring.enabled",
        "securityProfile.azureKeyVaultKms.keyVaultNetworkAccess": "securityProfile.azureKeyVaultKms.keyVaultNetworkAccess",
        "securityProfile.imageCleaner.intervalHours": "securityProfile.imageCleaner.intervalHours",
        **{key: f"AgentPool (API 2025-09-01) {key}" for key in NODE_KEYS_CREATE_ONLY},
    }
    for key, field in expected.items():
        assert key in rows and field in rows[key], key
    for section in ("`gpu-aks:systemPool`", "`gpu-aks:cpuPools[]`", "`gpu-aks:gpuPools[]`"):
        part = page.split(f"## {section}" if "[]" not in section else f"### {section}", 1)[1].split("\n## ", 1)[0]
        for key in NODE_KEYS_CREATE_ONLY:
            assert f"| `{key}` |" in part, (section, key)


def test_the_firewall_list_names_the_images_gpu_aks_runs_today():
    from gpu_aks_policies.catalog import DEVICE_PLUGIN_IMAGE

    from components.settings.observability import DCGM_EXPORTER_IMAGE
    from components.settings.smoke_test import DEFAULT_SMOKE_TEST_IMAGE
    page = (ROOT / "docs" / "network.md").read_text()
    for image in (DEVICE_PLUGIN_IMAGE, DCGM_EXPORTER_IMAGE, DEFAULT_SMOKE_TEST_IMAGE):
        assert f"`{image}`" in page, image
        assert f"`{image.split('/', 1)[0]}`" in page, "its registry"
    assert "outbound-rules-control-egress" in page and "GPU-enabled" in page
    assert "```mermaid" in page and "hub" in page and "spoke" in page


def test_the_preview_summary_says_where_the_nodes_are_and_how_they_egress(example_run, dev_run):
    from tools.preview import render_summary
    text = "\n".join(render_summary("landing-zone", example_run, EXAMPLE))
    assert ("Network: azure overlay, outbound userDefinedRouting; API server private (DNS zone "
            "privatelink.eastus2.azmk8s.io); control-plane identity UserAssigned") in text
    # In the order of the pools' lines above: by kind, then as configured.
    assert "nodes in your subnets: system -> snet-system, cpu -> snet-system, a100 -> snet-gpu" in text
    assert "nodes in the VNet AKS manages" in "\n".join(render_summary("dev", dev_run))


# --- Properties ---------------------------------------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=20)
#: Names Azure accepts (aks_api.NAME_RULES): a VNet name has 2 to 64 characters, a subnet's 1 to 80.
_VNET_NAME = st.from_regex(aks_api.NAME_RULES["virtualNetworks"][0], fullmatch=True).filter(lambda name: name.isascii())
_SUBNET_NAME = st.from_regex(aks_api.NAME_RULES["subnets"][0], fullmatch=True).filter(lambda name: name.isascii())


@pytest.mark.slow
@given(group=_NAME, vnet=_VNET_NAME, names=st.lists(_SUBNET_NAME, min_size=1, max_size=4), flips=st.lists(st.booleans(),
                                                                                             min_size=200, max_size=200))
def test_subnets_of_one_vnet_are_one_vnet_whatever_their_case(group, vnet, names, flips):
    """Azure compares IDs without case: the same VNet written in any case is one VNet, and every subnet
    of it parses as a subnet."""
    base = f"/subscriptions/{SUB}/resourceGroups/{group}/providers/Microsoft.Network/virtualNetworks/{vnet}"
    ids = []
    for index, name in enumerate(names):
        text = f"{base}/subnets/{name}"
        ids.append("".join(c.upper() if flips[(i + index) % len(flips)] else c for i, c in enumerate(text)))
    assert all(aks_api.parse_resource_id("subnet", subnet_id) is not None for subnet_id in ids)
    assert len({aks_api.virtual_network_of(subnet_id) for subnet_id in ids}) == 1


# --- Held-out acceptance (netcheck): IDs Azure refuses, named by what is wrong ------------------


@pytest.mark.parametrize(("value", "why"), [
    (f"{VNET}/subnets/gpu/", "ends with '/'"),
    (f"{VNET}/subnet/gpu", "'subnet' where the form has 'subnets'"),
    (subnet("gpu").replace("Microsoft.Network", "Microsoft.Netwrok"), "'Microsoft.Netwrok' where the form has"),
    (VNET, "names a virtual network, not a subnet"),
    ("snet-gpu", "does not start with /subscriptions/"),
    (subnet("gpu").replace(SUB, "<sub>"), "'<sub>' is not a subscription ID"),
    (subnet("gpu\x1b[31mRED\x1b[0m\n  - fake: fine"), "subnet name 'gpu\\x1b[31mRED"),
    (subnet("gpu\r\x07"), "subnet name 'gpu\\r\\x07'"),
    (subnet("my subnet"), "subnet name 'my subnet' is not allowed"),
    (subnet("gpu?api-version=2025-09-01"), "subnet name 'gpu?api-version"),
    (subnet(".."), "subnet name '..'"),
    (subnet("s", VNET.replace("vnet-spoke", "vnet\u202espoke")), "virtual network name 'vnet\\u202espoke'"),
])
def test_a_subnet_id_azure_refuses_is_refused_saying_which_part(value: str, why: str):
    # A long ID is shown cut short, so the message names the part that is wrong; escape sequences and
    # newlines come back escaped, never raw into the terminal or the preview's tree.
    raw = {"systemPool": {"vnetSubnetID": value}}
    found = problems(raw)
    assert len(found) == 1 and found[0].startswith("gpu-aks:systemPool.vnetSubnetID:"), found
    assert why in found[0], found[0]
    assert not any(ord(char) < 32 or char == "\u202e" for char in found[0]), found[0]


def test_lowercase_provider_segments_are_the_same_subnet_and_vnet():
    # Azure compares resource IDs without case: a lowercase `resourcegroups/.../microsoft.network/virtualnetworks`
    # ID is accepted, is in the same VNet, and gets one Network Contributor grant with its mixed-case twin.
    lower = subnet("gpu").replace("resourceGroups", "resourcegroups").replace("Microsoft.Network/virtualNetworks",
                                                                              "microsoft.network/virtualnetworks")
    raw = {"systemPool": {"vnetSubnetID": subnet("sys")},
           "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": lower},
                        {"name": "gput4b", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": subnet("GPU")}]}
    settings(raw)
    grants = network_grants([subnet("sys"), lower, subnet("GPU")], None)
    assert [grant.scope for grant in grants] == [subnet("sys"), lower]


def test_two_vnets_of_one_name_are_told_apart():
    other_group = subnet("gpu").replace("rg-net", "rg-other")
    raw = {"systemPool": {"vnetSubnetID": subnet("sys")},
           "gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "vnetSubnetID": other_group}]}
    (found,) = problems(raw)
    assert "VNet 'rg-other/vnet-spoke', but gpu-aks:systemPool.vnetSubnetID is in VNet 'rg-net/vnet-spoke'" in found


def test_a_private_dns_zone_id_azure_refuses_says_which_part():
    raw = with_cluster(apiServerAccessProfile={"enablePrivateCluster": True,
                                               "privateDNSZone": ZONE.replace(SUB, "<sub>")})
    (found,) = problems(raw)
    assert "privateDNSZone" in found and "'<sub>' is not a subscription ID" in found
