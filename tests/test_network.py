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
from components.settings import SettingsError, parse_settings
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
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: "),
    ({"identity": {"userAssignedIdentities": [IDENTITY]},
      "apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": ZONE.replace("eastus2", "westeurope")}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: names zone 'privatelink.westeurope.azmk8s.io' of region "
     "'westeurope', but the cluster is in 'eastus2'"),
    ({"apiServerAccessProfile": {"enablePrivateCluster": True, "privateDNSZone": ZONE}},
     "gpu-aks:cluster.apiServerAccessProfile.privateDNSZone: is your own zone, which needs identity.type UserAssigned"),
])
def test_private_dns_zone_refusals_name_the_key(cluster, expected):
    assert any(problem.startswith(expected) for problem in problems(with_cluster(**cluster))), expected


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
