"""What the program sends to AKS, against Microsoft's REST models for the API version it sends.

pulumi-azure-native 3.29.0 sends containerservice API version 2025-09-01; Microsoft's
`azure-mgmt-containerservice` 40.1.0 is generated from that version's REST spec. Its models'
`_attribute_map` (wire key and type of every property) and enums are the oracle: every allowed value
gpu-aks keeps must be in them, and every property the program sends must exist there, at its type.
"""

from __future__ import annotations

import re
from typing import Any

import azure.mgmt.containerservice as sdk
import pytest
from azure.mgmt.containerservice import models

from components import aks_api
from tests.conftest import ROOT

PULUMI_ONLY = {"resourceName", "resourceGroupName", "agentPoolName"}
#: Properties whose values must be members of an enum (the attribute map only says `str`).
ENUMS = {
    "osSKU": models.OSSKU, "expander": models.Expander, "upgradeChannel": models.UpgradeChannel,
    "nodeOSUpgradeChannel": models.NodeOSUpgradeChannel, "tier": models.ManagedClusterSKUTier,
    "scaleSetPriority": models.ScaleSetPriority, "scaleSetEvictionPolicy": models.ScaleSetEvictionPolicy,
    "gpuInstanceProfile": models.GPUInstanceProfile, "driver": models.GPUDriver, "mode": models.AgentPoolMode,
    "osType": models.OSType, "networkPlugin": models.NetworkPlugin, "networkPluginMode": models.NetworkPluginMode,
    "keyVaultNetworkAccess": models.KeyVaultNetworkAccessTypes, "osDiskType": models.OSDiskType,
    "outboundType": models.OutboundType,
}
PYTHON_TYPES = {"str": str, "bool": bool, "int": (int, float), "float": (int, float)}
#: Maps the provider takes as a list of their keys and sends as the map the API wants:
#: pulumi-azure-native's `ManagedClusterIdentityArgs.user_assigned_identities` is a sequence of resource
#: IDs (`pulumi_azure_native/containerservice/_inputs.py`); the API's is `{id: {}}`.
PROVIDER_LISTS_OF_MAP_KEYS = {"userAssignedIdentities"}


def values(enum: Any) -> set[str]:
    return {member.value for member in enum}


def test_the_oracle_is_the_api_version_azure_native_sends():
    assert sdk.__version__ == "40.1.0"
    assert aks_api.API_VERSION == "2025-09-01"
    from azure.mgmt.containerservice._configuration import ContainerServiceClientConfiguration

    configuration = ContainerServiceClientConfiguration(credential=object(), subscription_id="s")  # type: ignore[arg-type]
    assert configuration.api_version == aks_api.API_VERSION


@pytest.mark.parametrize("ours, enum", [
    (aks_api.EXPANDERS, models.Expander), (aks_api.UPGRADE_CHANNELS, models.UpgradeChannel),
    (aks_api.NODE_OS_UPGRADE_CHANNELS, models.NodeOSUpgradeChannel), (aks_api.SKU_TIERS, models.ManagedClusterSKUTier),
    (aks_api.SCALE_SET_PRIORITIES, models.ScaleSetPriority), (aks_api.GPU_DRIVERS, models.GPUDriver),
    (aks_api.GPU_INSTANCE_PROFILES, models.GPUInstanceProfile),
])
def test_enums_are_the_api_versions(ours, enum):
    assert set(ours) == values(enum)


def test_os_skus_are_the_linux_ones_of_the_api_version():
    assert set(aks_api.OS_SKUS) == values(models.OSSKU) - {"Windows2019", "Windows2022"}
    assert "Ubuntu2404" not in values(models.OSSKU)


def test_autoscaler_settings_have_the_api_versions_keys_and_types():
    attribute_map = models.ManagedClusterPropertiesAutoScalerProfile._attribute_map
    rest = {entry["key"]: entry["type"] for entry in attribute_map.values()}
    assert set(aks_api.AUTOSCALER_SETTINGS) == set(rest)
    for key, setting in aks_api.AUTOSCALER_SETTINGS.items():
        assert setting.wire_type is PYTHON_TYPES[rest[key]], key
    assert {k for k, t in rest.items() if t == "bool"} == {
        "daemonset-eviction-for-empty-nodes", "daemonset-eviction-for-occupied-nodes", "ignore-daemonsets-utilization"}


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", lambda m: "-" + m.group(1).lower(), name)


def _attribute(model: type, wire_key: str) -> dict[str, str] | None:
    """The attribute a Pulumi (flattened, camelCase) input key stands for."""
    for entry in model._attribute_map.values():
        rest_key = entry["key"].replace("\\.", ".").split(".")[-1]
        if rest_key in (wire_key, _kebab(wire_key)):
            return entry
    return None


def _walk(value: Any, model: type, path: str, problems: list[str]) -> None:
    for key, item in value.items():
        if key in PULUMI_ONLY and model in (models.ManagedCluster, models.AgentPool):
            continue
        attribute = _attribute(model, key)
        if attribute is None:
            problems.append(f"{path}.{key}: no such property in {model.__name__}")
            continue
        if key in PROVIDER_LISTS_OF_MAP_KEYS and attribute["type"].startswith("{"):
            _check(item, "[str]", f"{path}.{key}", problems)
        else:
            _check(item, attribute["type"], f"{path}.{key}", problems)
        if key in ENUMS and isinstance(item, str) and item not in values(ENUMS[key]):
            problems.append(f"{path}.{key}: {item!r} is not in {ENUMS[key].__name__}")


def _check(value: Any, type_name: str, path: str, problems: list[str]) -> None:
    if type_name.startswith("[") and type_name.endswith("]"):
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list ({type_name})")
            return
        for index, item in enumerate(value):
            _check(item, type_name[1:-1], f"{path}[{index}]", problems)
    elif type_name.startswith("{"):
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map ({type_name})")
    elif type_name in PYTHON_TYPES:
        if isinstance(value, bool) and type_name != "bool" or not isinstance(value, PYTHON_TYPES[type_name]):
            problems.append(f"{path}: {value!r} is not a {type_name}")
    elif hasattr(models, type_name):
        if not isinstance(value, dict):
            problems.append(f"{path}: expected an object ({type_name})")
            return
        _walk(value, getattr(models, type_name), path, problems)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_property_the_program_sends_exists_at_its_type(stack, dev_run, prod_run):
    run = dev_run if stack == "dev" else prod_run
    problems: list[str] = []
    for type_, model in (("azure-native:containerservice:ManagedCluster", models.ManagedCluster),
                         ("azure-native:containerservice:AgentPool", models.AgentPool)):
        resources = run.by_type(type_)
        assert resources
        for resource in resources:
            _walk(resource.inputs, model, resource.name, problems)
    assert problems == []


def test_the_oracle_catches_what_the_old_settings_sent():
    problems: list[str] = []
    _walk({"autoScalerProfile": {"daemonsetEvictionForEmptyNodes": "true", "expander": "fastest"},
           "agentPoolProfiles": [{"osSKU": "Ubuntu2404", "name": "system"}], "kubernetesVersoin": "1.37"},
          models.ManagedCluster, "cluster", problems)
    assert problems == [
        "cluster.autoScalerProfile.daemonsetEvictionForEmptyNodes: 'true' is not a bool",
        "cluster.autoScalerProfile.expander: 'fastest' is not in Expander",
        "cluster.agentPoolProfiles[0].osSKU: 'Ubuntu2404' is not in OSSKU",
        "cluster.kubernetesVersoin: no such property in ManagedCluster",
    ]


# --- Issue 17: every new resource and property against the REST models ------------------------------

from components.settings import network as platform_settings  # noqa: E402
from components.settings import pool_upgrade  # noqa: E402


@pytest.mark.parametrize("ours, enum", [
    (aks_api.NETWORK_PLUGINS, models.NetworkPlugin), (aks_api.NETWORK_PLUGIN_MODES, models.NetworkPluginMode),
    (aks_api.NETWORK_DATAPLANES, models.NetworkDataplane), (aks_api.NETWORK_POLICIES, models.NetworkPolicy),
    (aks_api.OUTBOUND_TYPES, models.OutboundType), (aks_api.WEEK_DAYS, models.WeekDay),
    (aks_api.UNDRAINABLE_NODE_BEHAVIORS, models.UndrainableNodeBehavior),
])
def test_new_enums_are_the_api_versions(ours, enum):
    assert set(ours) == values(enum)


def test_new_bounds_and_patterns_are_the_api_versions():
    upgrade = models.AgentPoolUpgradeSettings._validation
    assert (upgrade["drain_timeout_in_minutes"]["minimum"],
                                           upgrade["drain_timeout_in_minutes"]["maximum"]) == aks_api.DRAIN_TIMEOUT_RANGE
    assert (upgrade["node_soak_duration_in_minutes"]["minimum"],
                                       upgrade["node_soak_duration_in_minutes"]["maximum"]) == aks_api.NODE_SOAK_RANGE
    window = models.MaintenanceWindow._validation
    assert (window["duration_hours"]["minimum"], window["duration_hours"]["maximum"]) == aks_api.MAINTENANCE_DURATION_RANGE
    assert f"^{aks_api.UTC_OFFSET_PATTERN.pattern}$" == window["utc_offset"]["pattern"]
    assert f"^{aks_api.START_TIME_PATTERN.pattern}$" == window["start_time"]["pattern"]
    weekly = models.WeeklySchedule._validation["interval_weeks"]
    assert (weekly["minimum"], weekly["maximum"]) == aks_api.INTERVAL_WEEKS_RANGE
    network = models.ContainerServiceNetworkProfile._validation
    assert f"^{aks_api.CIDR_PATTERN.pattern}$" == network["pod_cidr"]["pattern"] == network["service_cidr"]["pattern"]
    assert network["dns_service_ip"]["pattern"].replace("?:", "") == f"^{aks_api.IP_PATTERN.pattern}$"


def _validation_problems(model: type, body: dict[str, Any]) -> list[str]:
    """The model's own `_validation` (required, minimum, maximum, pattern) applied to a wire body."""
    problems = []
    for attribute, rules in model._validation.items():
        wire = model._attribute_map[attribute]["key"]
        value = body.get(wire)
        if value is None:
            if rules.get("required"):
                problems.append(f"{wire}: required")
            continue
        if "minimum" in rules and value < rules["minimum"] or "maximum" in rules and value > rules["maximum"]:
            problems.append(f"{wire}: {value} out of range")
        if "pattern" in rules and not re.search(rules["pattern"], value):
            problems.append(f"{wire}: {value!r} does not match {rules['pattern']}")
    return problems


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_maintenance_configurations_exist_at_their_types(stack, dev_run, prod_run):
    run = dev_run if stack == "dev" else prod_run
    configurations = run.by_type("azure-native:containerservice:MaintenanceConfiguration")
    assert sorted(c.inputs["configName"] for c in configurations) == [aks_api.AUTO_UPGRADE_SCHEDULE,
                                                                      aks_api.NODE_OS_UPGRADE_SCHEDULE]
    problems: list[str] = []
    for configuration in configurations:
        body = {k: v for k, v in configuration.inputs.items() if k not in ("configName", "resourceGroupName",
                                                                           "resourceName")}
        _walk(body, models.MaintenanceConfiguration, configuration.name, problems)
        # The model's own validation (required fields, 4-24 hours, patterns) on the same body.
        assert _validation_problems(models.MaintenanceWindow, body["maintenanceWindow"]) == [], configuration.name
        assert body["maintenanceWindow"]["durationHours"] >= 4
    assert problems == []


def test_role_assignment_against_the_authorization_models(dev_run, prod_run):
    authorization = pytest.importorskip("azure.mgmt.authorization.v2022_04_01.models",
                                        reason="azure-mgmt-authorization is the test oracle")
    rest = {entry["key"].split(".")[-1] for entry in
            authorization.RoleAssignmentCreateParameters._attribute_map.values()}
    types = {member.value for member in authorization.PrincipalType}
    for run in (dev_run, prod_run):
        for assignment in run.by_type("azure-native:authorization:RoleAssignment"):
            sent = set(assignment.inputs) - {"roleAssignmentName", "scope"}
            assert sent <= rest, sent - rest
            assert assignment.inputs["principalType"] in types


def test_the_new_profiles_the_program_sends_exist_at_their_types(prod_run):
    cluster = prod_run.one("azure-native:containerservice:ManagedCluster").inputs
    problems: list[str] = []
    _walk({"networkProfile": cluster["networkProfile"], "apiServerAccessProfile": cluster["apiServerAccessProfile"]},
          models.ManagedCluster, "prod", problems)
    assert problems == []
    assert _validation_problems(models.ContainerServiceNetworkProfile, cluster["networkProfile"]) == []
    upgrades = [pool.inputs["upgradeSettings"] for pool in prod_run.by_type("azure-native:containerservice:AgentPool")
                if "upgradeSettings" in pool.inputs]
    assert upgrades and all(_validation_problems(models.AgentPoolUpgradeSettings, u) == [] for u in upgrades)


def test_os_sku_limits_name_skus_of_the_api_version():
    assert set(aks_api.OS_SKU_LIMITS) <= values(models.OSSKU)


@pytest.mark.parametrize("os_sku, version, refused", [
    ("AzureLinux3", "1.36", False), ("AzureLinux3", "1.37", True), ("AzureLinux3", "1.27", True),
    ("Ubuntu2204", "1.36.4", False), ("Ubuntu2204", "1.37", True), ("CBLMariner", "1.34", True),
    ("Ubuntu", "1.37", False), ("AzureLinux", "1.37", False),
])
def test_os_sku_against_the_kubernetes_version(os_sku, version, refused):
    assert (aks_api.os_sku_problem(os_sku, version) is not None) is refused


def test_end_of_support_is_the_last_day_of_the_month():
    from datetime import date
    minor = aks_api.kubernetes_minor("1.34")
    assert minor is not None and minor.end_of_support == date(2026, 11, 30)
    assert "1.34" in aks_api.supported_minors(date(2026, 11, 30))
    assert "1.34" not in aks_api.supported_minors(date(2026, 12, 1))


def test_network_change_problems_follow_what_aks_updates_in_place():
    before = platform_settings.network_record(platform_settings.NetworkSettings(
        plugin="kubenet", plugin_mode=None, dataplane="azure", policy="none"))
    after = platform_settings.network_record(platform_settings.NetworkSettings())
    assert platform_settings.network_change_problems(before, after) == [], "kubenet -> Overlay + Cilium is an update"
    assert platform_settings.network_change_problems(None, after) == [], "first deploy"
    back = platform_settings.network_change_problems(after, before)
    assert back[0].startswith("gpu-aks:cluster.networkProfile.networkPlugin: the cluster has 'azure', the config "
                              "says 'kubenet'; AKS upgrades it in place only kubenet -> azure")
    moved = platform_settings.network_change_problems(after, {**after, "serviceCidr": "10.1.0.0/16"})
    assert moved == ["gpu-aks:cluster.networkProfile.serviceCidr: the cluster has '10.0.0.0/16', the config says "
                     "'10.1.0.0/16'; it is fixed when the cluster is created. Put '10.0.0.0/16' back, or create a new "
                     "cluster (a new stack) and move the workloads"]


# --- Issue 28, item 5: what undrainableNodeBehavior does, in Microsoft's words -------------------------


def _member_texts(enum: type) -> dict[str, str]:
    """The attribute docstrings of an enum's members (only in its source: Python drops them at runtime)."""
    import inspect

    source = inspect.getsource(enum)
    return {name: " ".join(text.split()) for name, text in
            re.findall(r'^\s+(\w+) = "\w+"\n\s+"""(.*?)"""', source, re.MULTILINE | re.DOTALL)}


def test_undrainable_node_behavior_is_documented_as_microsoft_describes_it():
    microsoft = _member_texts(models.UndrainableNodeBehavior)
    assert "the upgrade operation and the managed cluster will be in failed state" in microsoft["CORDON"]
    assert "A surge node will be retained for each blocked node" in microsoft["CORDON"]
    assert "kubernetes.azure.com/upgrade-status:Quarantined" in microsoft["CORDON"]
    assert "managed cluster will be in failed state if there are any blocked nodes" in microsoft["SCHEDULE"]
    key = next(key for key in pool_upgrade.upgrade_keys(pool_upgrade.GPU_POOL_UPGRADE)
               if key.name == "undrainableNodeBehavior")
    for documented in (key.doc, (ROOT / "docs" / "platform.md").read_text()):
        text = " ".join(documented.split())
        assert "and go on" not in text and "the upgrade goes on" not in text  # 0.3.1's promise
        assert "failed" in text and "surge node" in text and "Quarantined" in text
    # The GPU default: Cordon would keep a second, billed GPU VM per blocked node; the upgrade fails anyway.
    assert pool_upgrade.GPU_POOL_UPGRADE.undrainable_node_behavior == "Schedule"
