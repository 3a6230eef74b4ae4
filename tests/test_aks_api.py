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

PULUMI_ONLY = {"resourceName", "resourceGroupName", "agentPoolName"}
#: Properties whose values must be members of an enum (the attribute map only says `str`).
ENUMS = {
    "osSKU": models.OSSKU, "expander": models.Expander, "upgradeChannel": models.UpgradeChannel,
    "nodeOSUpgradeChannel": models.NodeOSUpgradeChannel, "tier": models.ManagedClusterSKUTier,
    "scaleSetPriority": models.ScaleSetPriority, "scaleSetEvictionPolicy": models.ScaleSetEvictionPolicy,
    "gpuInstanceProfile": models.GPUInstanceProfile, "driver": models.GPUDriver, "mode": models.AgentPoolMode,
    "osType": models.OSType, "networkPlugin": models.NetworkPlugin, "networkPluginMode": models.NetworkPluginMode,
}
PYTHON_TYPES = {"str": str, "bool": bool, "int": (int, float), "float": (int, float)}


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
