"""Where managed Prometheus's Azure resources go (issue #28, item 4), held to Microsoft's templates
(copies in tests/fixtures/prometheus-collector/): the data collection endpoint, the rule and the rule
groups in the workspace's region, the association with the cluster; a private cluster in another region
than its workspace gets a second endpoint in its own region, associated with the cluster."""

from __future__ import annotations

import json

import pulumi
import pytest

from components.observability import (
    ENDPOINT_ASSOCIATION_NAME,
    GpuObservability,
    GpuObservabilityArgs,
    exporter_pools,
    private_link_endpoint_name,
    same_region,
)
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.settings import SettingsError
from offline.mockrun import PlatformMocks, ProgramRun, run_pulumi
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "prometheus-collector"
ARM = json.loads((FIXTURES / "arm-template-excerpt.json").read_text())
TERRAFORM = (FIXTURES / "terraform-main.tf.excerpt").read_text()
WORKSPACE = "/subscriptions/s/resourceGroups/mon/providers/Microsoft.Monitor/accounts/shared"
INVOKE = "azure-native:monitor:getAzureMonitorWorkspace"
POOLS = [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule"]}]
REGIONAL = ("azure-native:monitor:DataCollectionEndpoint", "azure-native:monitor:DataCollectionRule",
            "azure-native:alertsmanagement:PrometheusRuleGroup")


def platform(observability: dict, private: bool = False):
    cluster = {"name": "gpu-aks-x", **({"apiServerAccessProfile": {"enablePrivateCluster": True}} if private else {})}
    return parse_settings({"cluster": cluster, "gpuPools": POOLS, "observability": {"enabled": True, **observability}},
                          "unit", "eastus2")


def run(observability: dict, private: bool = False, workspace_region: str | None = "westeurope",
        expect_error: bool = False) -> ProgramRun:
    settings = platform(observability, private)
    answer = {"location": workspace_region} if workspace_region else {}
    result = run_pulumi(lambda: GpuObservability("obs", GpuObservabilityArgs(
        settings.observability, settings.cluster, "rg", "cluster-id",
        list(exporter_pools(platform_pools(settings), settings.observability)), "gpu-resources",
        ["nvidia-device-plugin-daemonset"])), "unit", mocks=PlatformMocks(extra_calls={INVOKE: lambda _a: answer}))
    assert expect_error or result.error is None, result.error
    return result


def regions(result: ProgramRun) -> dict[str, str]:
    return {r.name: r.inputs.get("location") for r in result.resources if r.type in REGIONAL}


def test_the_templates_put_endpoint_rule_and_groups_in_the_workspace_region_and_only_the_dcra_follows_the_cluster():
    """What the code follows, read from the ARM template copy."""
    located = {r["type"]: r.get("location") for r in ARM["resources"]}
    workspace = "[parameters('azureMonitorWorkspaceLocation')]"
    assert located["Microsoft.Insights/dataCollectionEndpoints"] == workspace
    assert located["Microsoft.Insights/dataCollectionRules"] == workspace
    assert located["Microsoft.AlertsManagement/prometheusRuleGroups"] == workspace
    dcra = next(r for r in ARM["resources"] if r["type"] == "Microsoft.Resources/deployments")
    assert dcra["properties"]["template"]["resources"][0]["location"] == "[parameters('clusterLocation')]"


def test_a_created_workspace_keeps_everything_in_the_clusters_region():
    result = run({})
    assert set(regions(result).values()) == {"eastus2"} and len(regions(result)) == 6  # DCE, DCR, 4 rule groups
    assert [r for r in result.calls if r.token == INVOKE] == []


def test_a_workspace_elsewhere_takes_the_endpoint_rule_and_groups_to_its_region():
    result = run({"azureMonitorWorkspaceResourceId": WORKSPACE})
    assert set(regions(result).values()) == {"westeurope"} and len(regions(result)) == 6
    endpoint = result.one("azure-native:monitor:DataCollectionEndpoint").inputs
    rule = result.one("azure-native:monitor:DataCollectionRule").inputs
    association = result.one("azure-native:monitor:DataCollectionRuleAssociation").inputs
    assert endpoint["dataCollectionEndpointName"] == "MSProm-westeurope-gpu-aks-x"
    assert rule["dataCollectionRuleName"] == "MSProm-westeurope-gpu-aks-x"
    assert association["associationName"] == "MSProm-eastus2-gpu-aks-x" and "location" not in association
    # A public cluster reaches the workspace's endpoint: no second one (the Terraform template's count is 0).
    assert len(result.by_type("azure-native:monitor:DataCollectionEndpoint")) == 1


def test_a_configured_region_is_used_before_azure_answers_and_checked_against_it():
    result = run({"azureMonitorWorkspaceResourceId": WORKSPACE, "azureMonitorWorkspaceLocation": "westeurope"})
    assert set(regions(result).values()) == {"westeurope"}
    refused = run({"azureMonitorWorkspaceResourceId": WORKSPACE, "azureMonitorWorkspaceLocation": "northeurope"},
                  expect_error=True)
    assert isinstance(refused.error, pulumi.RunError), refused.error
    assert str(refused.error) == (
        f"gpu-aks:observability.azureMonitorWorkspaceLocation: 'northeurope', but the workspace {WORKSPACE} is in "
        "'westeurope'; set azureMonitorWorkspaceLocation: westeurope")


def test_the_terraform_template_adds_an_endpoint_for_a_private_cluster_in_another_region():
    assert "count               = (local.dce_region_mismatch && var.is_private_cluster) ? 1 : 0" in TERRAFORM
    assert 'substr("MSProm-PL-${azurerm_resource_group.rg.location}-${var.cluster_name}", 0, min(44' in TERRAFORM
    assert "location            = var.cluster_region" in TERRAFORM
    assert "data_collection_endpoint_id = azurerm_monitor_data_collection_endpoint.dce_mismatch[0].id" in TERRAFORM


def test_a_private_cluster_in_another_region_gets_its_own_endpoint_and_association():
    result = run({"azureMonitorWorkspaceResourceId": WORKSPACE, "azureMonitorWorkspaceLocation": "westeurope"},
                 private=True)
    endpoints = {r.name: r.inputs for r in result.by_type("azure-native:monitor:DataCollectionEndpoint")}
    assert endpoints["obs-dce"]["location"] == "westeurope"
    private = endpoints["obs-dce-private-link"]
    assert private["location"] == "eastus2" and private["kind"] == "Linux"
    assert private["dataCollectionEndpointName"] == private_link_endpoint_name("westeurope", "gpu-aks-x") == \
        "MSProm-PL-westeurope-gpu-aks-x"
    association = result.one("azure-native:monitor:DataCollectionRuleAssociation", "obs-dcea").inputs
    assert association["associationName"] == ENDPOINT_ASSOCIATION_NAME
    assert association["resourceUri"] == "cluster-id"
    assert association["dataCollectionEndpointId"] == "obs-dce-private-link-id"
    assert "dataCollectionRuleId" not in association


def test_a_private_cluster_in_the_workspaces_region_needs_no_second_endpoint():
    result = run({"azureMonitorWorkspaceResourceId": WORKSPACE, "azureMonitorWorkspaceLocation": "eastus2"},
                 private=True, workspace_region="eastus2")
    assert len(result.by_type("azure-native:monitor:DataCollectionEndpoint")) == 1


@pytest.mark.parametrize("observability, private, expected", [
    ({"azureMonitorWorkspaceResourceId": WORKSPACE}, True,
     "gpu-aks:observability.azureMonitorWorkspaceLocation: is needed for a private cluster with an existing workspace"),
    ({"azureMonitorWorkspaceLocation": "westeurope"}, False,
     "gpu-aks:observability.azureMonitorWorkspaceLocation: is set without azureMonitorWorkspaceResourceId"),
    ({"azureMonitorWorkspaceResourceId": WORKSPACE, "azureMonitorWorkspaceLocation": "West Europe"}, False,
     "gpu-aks:observability.azureMonitorWorkspaceLocation: 'West Europe' is not an Azure region name; did you mean westeurope?"),
])
def test_a_region_that_cannot_be_resolved_is_refused_before_anything_is_created(observability, private, expected):
    with pytest.raises(SettingsError) as caught:
        platform(observability, private)
    assert any(problem.startswith(expected) for problem in caught.value.problems), caught.value.problems


def test_azure_spells_one_region_two_ways():
    assert same_region("eastus2", "East US 2") and not same_region("eastus", "eastus2")
