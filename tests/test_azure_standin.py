"""The azure-native stand-in's model (testbed/standins/azure_native.py), called directly: what it refuses
and why, how it orders a replacement, and what its cloud file shows. The engine tier
(tests/engine/test_azure_standin.py) runs the same model behind the real Pulumi CLI."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

STANDINS = Path(__file__).resolve().parents[1] / "testbed" / "standins"
sys.path.insert(0, str(STANDINS))

import azure_native  # noqa: E402
import kubernetes as kubernetes_standin  # noqa: E402
from provider import ProviderError  # noqa: E402

AP = "azure-native:containerservice:AgentPool"
MC = "azure-native:containerservice:ManagedCluster"
RG = "azure-native:resources:ResourceGroup"
RA = "azure-native:authorization:RoleAssignment"
GROUP, CLUSTER = "rg-standin", "gpu-aks-standin"

POOL = {"resourceGroupName": GROUP, "resourceName": CLUSTER, "agentPoolName": "gput45b2a",
        "vmSize": "Standard_NC4as_T4_v3", "mode": "User", "osType": "Linux", "osSKU": "Ubuntu", "count": 0.0,
        "enableAutoScaling": True, "minCount": 0.0, "maxCount": 2.0, "nodeTaints": ["sku=gpu:NoSchedule"],
        "nodeLabels": {"gpu-aks.io/pool": "gput4"}, "upgradeSettings": {"maxSurge": "33%"}}
PROFILE = {"name": "system", "vmSize": "Standard_D4ds_v5", "mode": "System", "count": 1.0,
           "enableAutoScaling": True, "minCount": 1.0, "maxCount": 2.0, "osType": "Linux"}
CLUSTER_INPUTS = {"resourceGroupName": GROUP, "resourceName": CLUSTER, "location": "westeurope",
                  "dnsPrefix": CLUSTER, "kubernetesVersion": "1.37", "identity": {"type": "SystemAssigned"},
                  "oidcIssuerProfile": {"enabled": True}, "agentPoolProfiles": [PROFILE],
                  "autoScalerProfile": {"expander": "least-waste"}}


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shapes, built once from the SDK and REST models (what `make engines` writes)."""
    import azure_schema

    path = tmp_path_factory.mktemp("schema") / "azure-schema.json"
    path.write_text(json.dumps(azure_schema.build()))
    return path


@pytest.fixture
def model(schema: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> azure_native.AzureNative:
    monkeypatch.setattr(azure_native.azure_schema, "SCHEMA_FILE", schema)
    monkeypatch.setenv("GPU_AKS_AZURE_STANDIN_STATE", str(tmp_path / "cloud.json"))
    found = azure_native.AzureNative()
    found.configure({"azure-native:config:location": "eastus2"})
    return found


def _created(model: azure_native.AzureNative, type_: str, news: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    inputs, failures = model.check(type_, "x", {}, news, b"seed")
    assert failures == []
    id_, outputs = model.create(type_, "x", inputs, preview=False)
    return id_, {"inputs": inputs, "outputs": outputs}


def _platform(model: azure_native.AzureNative) -> None:
    _created(model, RG, {"resourceGroupName": GROUP, "location": "westeurope"})
    _created(model, MC, CLUSTER_INPUTS)


def _check_failures(model: azure_native.AzureNative, type_: str, news: dict[str, Any]) -> list[str]:
    return [reason for _, reason in model.check(type_, "x", {}, news, b"seed")[1]]


# --- What azure-native's Check refuses, in its own words ------------------------------------------------

@pytest.mark.parametrize(("type_", "change", "reason"), [
    (AP, {"count": "three"}, "'count' should be of type 'integer' but got a string"),
    (AP, {"nodeTaints": "sku=gpu:NoSchedule"}, "'nodeTaints' should be of type 'array' but got a string"),
    (AP, {"count": 1.5}, "'count' must be an integer but got 1.500000"),
    (AP, {"osDiskSizeGB": 5000.0}, "'osDiskSizeGB' is too high (5000.000000 > 2048.000000)"),
    (AP, {"agentPoolName": "GPU_Pool-TooLong"}, "'agentPoolName' is too long (16): at most 12 characters allowed"),
    (AP, {"agentPoolName": "GPU_Pool-TooLong"}, "'agentPoolName' does not match expression '^[a-z][a-z0-9]{0,11}$'"),
    (MC, {"resourceName": "gpu.aks"},
     "'resourceName' does not match expression '^[a-zA-Z0-9]$|^[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]$'"),
    (RG, {"resourceGroupName": "rg/bad name"}, "'resourceGroupName' does not match expression '^[-\\w\\._\\(\\)]+$'"),
    (MC, {"agentPoolProfiles": [{"vmSize": "Standard_D4ds_v5"}]}, "missing required property 'agentPoolProfiles[0].name'"),
    (RA, {"principalId": None}, "missing required property 'principalId'"),
])
def test_check_refuses_what_the_provider_refuses_naming_the_property(model: azure_native.AzureNative, type_: str,
                                                                     change: dict[str, Any], reason: str) -> None:
    base = {AP: POOL, MC: CLUSTER_INPUTS, RG: {"resourceGroupName": GROUP},
            RA: {"scope": "/subscriptions/x", "principalId": "p", "roleDefinitionId": "r"}}[type_]
    news = {key: value for key, value in {**base, **change}.items() if value is not None}
    assert reason in _check_failures(model, type_, news)


def test_check_passes_unknowns_and_fills_what_the_provider_fills(model: azure_native.AzureNative) -> None:
    unknown = azure_native.UNKNOWN
    inputs, failures = model.check(AP, "gpu-pool", {}, {**POOL, "count": unknown, "agentPoolName": unknown}, b"s")
    assert failures == []
    assert inputs["azureApiVersion"] == "2025-09-01"
    named, _ = model.check(RA, "grant", {}, {"scope": "/s", "principalId": "p", "roleDefinitionId": "r"}, b"s")
    assert named["__createBeforeDelete"] is True and len(named["roleAssignmentName"]) == 36  # a GUID
    located, _ = model.check(RG, "rg", {}, {"resourceGroupName": GROUP}, b"s")
    assert located["location"] == "eastus2"  # the provider's `location` config


# --- What ARM refuses at the PUT ---------------------------------------------------------------------

@pytest.mark.parametrize(("type_", "change", "words"), [
    (AP, {"mode": "Worker"}, "mode is invalid: 'Worker'"),
    (AP, {"gpuInstanceProfile": "MIG9g"}, "gpuInstanceProfile is invalid: 'MIG9g'"),
    (MC, {"autoScalerProfile": {"expander": "fastest"}}, "autoScalerProfile.expander is invalid: 'fastest'"),
    (AP, {"minCount": 5.0, "maxCount": 2.0}, "minCount 5 must be less than or equal to maxCount 2"),
    (AP, {"vmSize": "Standard_Nope_v9"}, "Standard_Nope_v9"),
    (AP, {"vmSize": "Standard_NC6s_v3"}, "retired by Azure"),
    (AP, {"maxPods": 5000.0}, "maxPods is invalid: 5000 is outside 10 to 250"),
    (AP, {"mode": "System", "scaleSetPriority": "Spot", "count": 1.0, "minCount": 1.0},
     "a Spot pool cannot be a system"),
    (AP, {"spotMaxPrice": 0.5}, "spotMaxPrice is invalid"),
    (MC, {"agentPoolProfiles": [{**PROFILE, "count": 0.0, "enableAutoScaling": False}]},
     "agentPoolProfiles[0].count is invalid: 0 is outside 1 to 1000 for a system pool"),
    (MC, {"location": "moon-west"}, "LocationNotAvailableForResourceType"),
    (RA, {"principalType": "Robot"}, "principalType is invalid: 'Robot'"),
])
def test_create_is_refused_as_arm_refuses_and_nothing_exists(model: azure_native.AzureNative, type_: str,
                                                              change: dict[str, Any], words: str) -> None:
    _platform(model)
    base = {AP: POOL, MC: {**CLUSTER_INPUTS, "resourceName": "other"},
            RA: {"scope": f"/subscriptions/{azure_native.SUBSCRIPTION}/resourceGroups/{GROUP}",
                 "principalId": "p", "roleDefinitionId": "r", "roleAssignmentName": "n"}}[type_]
    inputs, failures = model.check(type_, "x", {}, {**base, **change}, b"seed")
    assert failures == []  # azure-native's Check lets these through; ARM does not
    with pytest.raises(ProviderError, match="Status=400") as refused:
        model.create(type_, "x", inputs, preview=False)
    assert words in str(refused.value)
    assert model.cloud.get(model._id(model._resource(type_), inputs)) is None


def test_valid_bodies_are_accepted_with_arms_answers(model: azure_native.AzureNative) -> None:
    _platform(model)
    _, pool = _created(model, AP, POOL)
    assert pool["outputs"]["provisioningState"] == "Succeeded"
    assert pool["outputs"]["currentOrchestratorVersion"] == "1.37"  # the cluster's, as AKS answers
    cluster = model.cloud.get(f"/subscriptions/{azure_native.SUBSCRIPTION}/resourceGroups/{GROUP}"
                              f"/providers/Microsoft.ContainerService/managedClusters/{CLUSTER}")
    assert cluster is not None
    assert cluster["properties"]["oidcIssuerProfile"]["issuerURL"].startswith("https://westeurope.oic.")
    assert cluster["properties"]["currentKubernetesVersion"] == "1.37"  # what was asked, nothing invented


def test_user_assigned_identities_are_a_string_set_shown_unknown_in_preview_and_read_back_as_sent(
        model: azure_native.AzureNative) -> None:
    """The SDK sends a list of identity IDs; ARM answers a map keyed by them, which the SDK's output type
    holds: a preview shows the list as unknown (a list where the SDK expects a map fails the program), and a
    refresh or an import projects the map back to the list."""
    _created(model, RG, {"resourceGroupName": GROUP, "location": "westeurope"})
    identity_id = f"{azure_native.azure_answers.group_id(GROUP)}/providers/Microsoft.ManagedIdentity/" \
                  "userAssignedIdentities/control-plane"
    news = {**CLUSTER_INPUTS, "identity": {"type": "UserAssigned", "userAssignedIdentities": [identity_id]}}
    inputs, failures = model.check(MC, "x", {}, news, b"s")
    assert failures == []
    _, preview = model.create(MC, "x", inputs, preview=True)
    assert preview["identity"] == {"type": "UserAssigned", "userAssignedIdentities": azure_native.UNKNOWN}
    id_, created = _created(model, MC, news)
    assert list(created["outputs"]["identity"]["userAssignedIdentities"]) == [identity_id]
    for known in (created["inputs"], None):  # a refresh, and an import
        _, _, read_inputs = model.read(MC, id_, created["outputs"], known) or ("", {}, None)
        assert read_inputs is not None and read_inputs["identity"]["userAssignedIdentities"] == [identity_id]


def test_an_existing_id_cannot_be_created_and_a_missing_group_is_not_found(model: azure_native.AzureNative) -> None:
    inputs, _ = model.check(MC, "x", {}, CLUSTER_INPUTS, b"s")
    with pytest.raises(ProviderError, match="ResourceGroupNotFound"):
        model.create(MC, "x", inputs, preview=False)
    _platform(model)
    with pytest.raises(ProviderError, match="cannot create already existing resource '/subscriptions/.*/"
                                            f"managedClusters/{CLUSTER}'"):
        model.create(MC, "x", inputs, preview=False)


def test_a_nested_resource_needs_its_parent_and_an_extension_resource_only_its_scope(
        model: azure_native.AzureNative) -> None:
    _created(model, RG, {"resourceGroupName": GROUP, "location": "westeurope"})
    inputs, _ = model.check(AP, "x", {}, POOL, b"s")
    with pytest.raises(ProviderError, match=f"ParentResourceNotFound.*Parent resource '{CLUSTER}' not found"):
        model.create(AP, "x", inputs, preview=False)
    _created(model, MC, CLUSTER_INPUTS)
    cluster_id = f"/subscriptions/{azure_native.SUBSCRIPTION}/resourceGroups/{GROUP}/providers/" \
                 f"Microsoft.ContainerService/managedClusters/{CLUSTER}"
    # A role assignment's ID is its scope's plus Microsoft.Authorization's: the scope is its only parent, and it
    # may be what the stand-in never saw (your subnet, in a group of yours).
    subnet = f"/subscriptions/{azure_native.SUBSCRIPTION}/resourceGroups/rg-net/providers/Microsoft.Network/" \
             "virtualNetworks/vnet/subnets/nodes"
    for scope in (cluster_id, subnet):
        id_, _ = _created(model, RA, {"scope": scope, "principalId": "p", "principalType": "ServicePrincipal",
                                      "roleDefinitionId": "r"})
        assert id_.startswith(f"{scope}/providers/Microsoft.Authorization/roleAssignments/")


# --- Replacement as azure-native orders it -------------------------------------------------------------

def test_a_named_resource_is_replaced_delete_first_unless_its_name_was_random(model: azure_native.AzureNative) -> None:
    old, _ = model.check(AP, "gpu-pool", {}, POOL, b"s")
    new, _ = model.check(AP, "gpu-pool", old, {**POOL, "vmSize": "Standard_NC8as_T4_v3"}, b"s")
    changed, replaces, delete_first = model.diff(AP, old, new, [])
    assert (changed, replaces, delete_first) == (["vmSize"], ["vmSize"], True)
    random_old, _ = model.check(AP, "gpu-pool", {}, {k: v for k, v in POOL.items() if k != "agentPoolName"}, b"s")
    random_new, _ = model.check(AP, "gpu-pool", random_old, {**POOL, "vmSize": "Standard_NC8as_T4_v3",
                                                             "agentPoolName": random_old["agentPoolName"]}, b"s")
    assert model.diff(AP, random_old, random_new, [])[2] is False
    assert model.diff(AP, old, {**old, "maxCount": 3.0}, [])[1:] == ([], False)  # in place
    group_old, _ = model.check(RG, "rg", {}, {"resourceGroupName": GROUP, "location": "eastus2"}, b"s")
    assert model.diff(RG, group_old, {**group_old, "location": "westus3"}, []) == (["location"], ["location"], True)
    assert model.diff(RG, group_old, {**group_old, "location": "East US 2"}, [])[0] == []  # the same region
    network_old = {**CLUSTER_INPUTS, "networkProfile": {"podCidr": "10.244.0.0/16"}}
    network_new = {**CLUSTER_INPUTS, "networkProfile": {"podCidr": "10.245.0.0/16"}}
    assert model.diff(MC, network_old, network_new, [])[1] == ["networkProfile"]


# --- Drift: the cloud file ------------------------------------------------------------------------------

def test_a_change_in_the_cloud_moves_the_inputs_and_a_missing_entry_is_gone(model: azure_native.AzureNative,
                                                                            tmp_path: Path) -> None:
    _platform(model)
    id_, pool = _created(model, AP, POOL)
    cloud = json.loads((tmp_path / "cloud.json").read_text())
    cloud[id_]["properties"]["maxCount"] = 5  # as someone in the portal would
    (tmp_path / "cloud.json").write_text(json.dumps(cloud))
    found = model.read(AP, id_, pool["outputs"], pool["inputs"])
    assert found is not None
    _, outputs, inputs = found
    assert outputs["maxCount"] == 5 and inputs is not None and inputs["maxCount"] == 5
    assert "provisioningState" not in inputs and "powerState" not in inputs  # read-only stays out
    assert inputs["nodeLabels"] == POOL["nodeLabels"]
    del cloud[id_]
    (tmp_path / "cloud.json").write_text(json.dumps(cloud))
    assert model.read(AP, id_, pool["outputs"], pool["inputs"]) is None


def test_an_import_reads_its_inputs_from_the_id_and_the_resource(model: azure_native.AzureNative) -> None:
    _platform(model)
    id_ = (f"/subscriptions/{azure_native.SUBSCRIPTION}/resourceGroups/{GROUP}"
           f"/providers/Microsoft.ContainerService/managedClusters/{CLUSTER}")
    found = model.read(MC, id_, {}, None)
    assert found is not None
    _, outputs, inputs = found
    assert inputs is not None and inputs["resourceGroupName"] == GROUP and inputs["resourceName"] == CLUSTER
    assert "fqdn" not in inputs and "principalId" not in inputs["identity"]
    assert model.check(MC, "imported", {}, inputs, b"s")[1] == []
    assert outputs["fqdn"].endswith(".hcp.westeurope.azmk8s.io")


def test_concurrent_writers_keep_every_resource(model: azure_native.AzureNative, tmp_path: Path) -> None:
    """Two providers (two commands) writing the one cloud file lose nothing."""
    def put(index: int) -> None:
        azure_native.Cloud(str(tmp_path / "cloud.json")).put(f"/r/{index}", {"id": f"/r/{index}"})
    threads = [threading.Thread(target=put, args=(index,)) for index in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(json.loads((tmp_path / "cloud.json").read_text())) == 20


# --- Hostile inputs to the stand-ins (#50) -------------------------------------------------------------

def test_a_local_kubeconfig_that_is_no_regular_file_is_refused_naming_the_variable(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # Refused before anything is read: a FIFO would block the read, /dev/zero would never end.
    for path in (str(fifo), "/dev/zero", str(tmp_path)):
        with pytest.raises(ProviderError, match="GPU_AKS_LOCAL_KUBECONFIG"):
            azure_native.read_local_kubeconfig(path)


def test_a_yaml_alias_bomb_is_refused_as_go_yaml_refuses_it() -> None:
    levels = "".join(f"{chr(98 + n)}: &{chr(98 + n)} [{','.join(['*' + chr(97 + n)] * 9)}]\n" for n in range(8))
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + levels  # 9^9 scalars once expanded
    assert len(bomb) < 600
    with pytest.raises(ProviderError, match="document contains excessive aliasing"):
        kubernetes_standin.decode_yaml(bomb)
    # go-yaml lets a document through whose aliases are a small share of it.
    assert kubernetes_standin.decode_yaml("a: &x {b: 1}\nc: *x\n---\n---\nk: v\n") == [
        {"a": {"b": 1}, "c": {"b": 1}}, {"k": "v"}]


# --- One table of Azure's computed answers (#49, #50) -------------------------------------------------

def test_the_mock_runtime_and_the_stand_in_answer_alike_in_the_clusters_region(model: azure_native.AzureNative) -> None:
    import pulumi

    from offline.mockrun import PlatformMocks

    _platform(model)
    standin = model.cloud.get(f"/subscriptions/{azure_native.SUBSCRIPTION}/resourceGroups/{GROUP}"
                              f"/providers/Microsoft.ContainerService/managedClusters/{CLUSTER}")
    assert standin is not None
    _, mocked = PlatformMocks().new_resource(pulumi.runtime.MockResourceArgs(
        typ=MC, name="cluster", inputs=CLUSTER_INPUTS, provider=None, resource_id=None, custom=True))
    for key in ("fqdn", "oidcIssuerProfile", "identity", "identityProfile", "nodeResourceGroup"):
        assert mocked[key] == standin["properties"].get(key, standin.get(key)), key
    assert "westeurope" in mocked["oidcIssuerProfile"]["issuerURL"] and "eastus2" not in mocked["fqdn"]
