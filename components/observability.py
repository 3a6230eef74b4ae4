"""`GpuObservability`: Azure Monitor managed service for Prometheus for the cluster, the GPU alert
rules, and optionally Azure Managed Grafana.

Managed Prometheus is four Azure resources plus a cluster setting (learn.microsoft.com/azure/aks/
monitor-gpu-metrics; learn.microsoft.com/azure/azure-monitor/containers/kubernetes-monitoring-enable,
its ARM template): an Azure Monitor workspace (`Microsoft.Monitor/accounts`, API 2023-04-03 as
pulumi-azure-native 3.29.0 sends it; or one given by ID), a data collection endpoint and a data
collection rule (`Microsoft.Insights`, 2022-06-01) whose Prometheus forwarder sends the stream
`Microsoft-PrometheusMetrics` to the workspace, the rule's association with the cluster, and the
cluster's `azureMonitorProfile.metrics.enabled` (`azure_monitor_profile` below, which the cluster
component takes). The alerts are one `PrometheusRuleGroup` (`Microsoft.AlertsManagement`,
2023-03-01) on the workspace, limited to this cluster's series by `clusterName`, notifying an
action group given by ID and/or one created for an email list (`Microsoft.Insights/actionGroups`,
2024-10-01-preview).

Microsoft's onboarding templates (Azure/prometheus-collector `AddonArmTemplate`, `AddonBicepTemplate`,
`AddonTerraformTemplate`; copies in tests/fixtures/prometheus-collector/) are followed where they decide:
- the node, Kubernetes and UX recording rule groups they always create are created too
  (`observability/recording_rules.py`), beside gpu-aks's GPU alert group;
- the data collection endpoint, the rule and every rule group go to the *workspace's* region; only the
  association follows the cluster. A private cluster in another region than its workspace also gets a
  data collection endpoint in its own region, associated with the cluster (the Terraform template's
  `dce_mismatch` and `dcra_mismatch`);
- names: the endpoint `MSProm-<workspace region>-<cluster>` cut to 44 characters, the rule the same cut
  to 64, the association `MSProm-<cluster region>-<cluster>` uncut (the ARM template's `dceName`,
  `dcrName`, `dcraName`).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi.dynamic
from gpu_aks_policies.pools.model import Pool
from pulumi_azure_native import alertsmanagement, authorization, dashboard, monitor

from components.access import assign_role, role_definition_id
from components.manifests import device_plugin_daemonsets
from components.platform_settings import PlatformSettings
from components.pools import PlatformPools, platform_pools
from components.propagation import RolePropagationWait
from components.settings import ClusterSettings, ObservabilitySettings
from observability.recording_rules import azure_recording_rules, recording_rule_groups
from observability.rules import EVALUATION_INTERVAL, GROUP_NAME, AlertRule, alert_rules, azure_rules
from observability.settings import exporter_name

PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"
MONITORING_ACCOUNT_DESTINATION = "MonitoringAccount1"
#: Built-in role "Monitoring Data Reader": what Azure Managed Grafana's identity needs on the workspace
#: to query it (learn.microsoft.com/azure/azure-monitor/essentials/prometheus-grafana).
MONITORING_DATA_READER_ROLE = "b0d8363b-8ddd-447d-831f-62ca05bff136"
#: Built-in role "Grafana Editor": enough for the deployer to create and update dashboards
#: (learn.microsoft.com/azure/role-based-access-control/built-in-roles, "Grafana Editor").
GRAFANA_EDITOR_ROLE = "a79a5197-3a5c-4973-a920-486035ffd60f"
#: The audience of Entra tokens Azure Managed Grafana's HTTP API takes (azure-cli's amg extension,
#: `azext_amg/custom.py`: `amg_first_party_app`).
GRAFANA_TOKEN_RESOURCE = "ce34e7e5-485f-4d76-964f-b3d2b16d1e4f"
#: An action group's short name is at most 12 characters (ActionGroup.groupShortName).
SHORT_NAME_LENGTH = 12
#: The ARM template's cuts (`dceName`: min(44, ...), `dcrName`: min(64, ...)); `dcraName` is not cut.
DCE_NAME_LENGTH = 44
DCR_NAME_LENGTH = 64
#: The name Azure gives an association of a data collection *endpoint* with a resource (the azurerm
#: provider's default for `data_collection_endpoint_id`, which the Terraform template relies on;
#: Azure/prometheus-collector `internal/scripts/troubleshoot/TroubleshootError.ps1` skips DCRAs of this name).
ENDPOINT_ASSOCIATION_NAME = "configurationAccessEndpoint"


def azure_monitor_profile(settings: ObservabilitySettings) -> dict[str, Any] | None:
    """The cluster's `azureMonitorProfile` (ManagedCluster API 2025-09-01,
    `ManagedClusterAzureMonitorProfile.metrics.enabled`) in the SDK's Python names; None leaves the
    cluster as it is when observability is off. kube-state-metrics keeps its default label and
    annotation allowlists: the alerts need no extra labels."""
    return {"metrics": {"enabled": True}} if settings.enabled else None


# --- Which pools are watched: settings questions, answered from the pools' facts -------------------


def exporter_pools(pools: PlatformPools, settings: ObservabilitySettings) -> tuple[Pool, ...]:
    """The pools the DCGM exporter runs on once observability is on (`Pool.exporter` says where it runs
    now): those gpu-aks's device plugin serves (a pool with an external driver has its GPU Operator's
    exporter), unless the exporter is switched off."""
    return pools.served if settings.exporter_enabled else ()


def agent_daemonsets(settings: PlatformSettings, pools: PlatformPools) -> list[str]:
    """The DaemonSets every served GPU node must run: gpu-aks's device plugin and the exporter."""
    plugin = settings.device_plugin
    names = [ds["metadata"]["name"] for ds in device_plugin_daemonsets(plugin.namespace, plugin.image,
                                                                       plugin.mig_strategy, pools.served)]
    names += [exporter_name(pool.name) for pool in exporter_pools(pools, settings.observability)]
    return names


def platform_alert_rules(settings: PlatformSettings, pools: PlatformPools | None = None) -> list[AlertRule]:
    """The alerts a stack's settings give: what the Azure rule group holds when observability is on, and
    what the rule file holds either way."""
    pools = pools or platform_pools(settings)
    return alert_rules(settings.observability.alerts, list(exporter_pools(pools, settings.observability)),
                       settings.device_plugin.namespace, agent_daemonsets(settings, pools))


def msprom_name(location: str, cluster_name: str, length: int | None = None) -> str:
    """`MSProm-<region>-<cluster>`, cut to `length` characters where the template cuts it."""
    return f"MSProm-{location}-{cluster_name}"[:length]


def same_region(first: str, second: str) -> bool:
    """Azure answers with `eastus2` or `East US 2` for one region."""
    return first.replace(" ", "").lower() == second.replace(" ", "").lower()


def private_link_endpoint_name(workspace_location: str, cluster_name: str) -> str:
    """The Terraform template's `dce_mismatch` name: `MSProm-PL-<workspace region>-<cluster>`, cut to 44."""
    return f"MSProm-PL-{workspace_location}-{cluster_name}"[:DCE_NAME_LENGTH]


def _checked_region(configured: str, found: str | None, workspace_id: str) -> str:
    """The configured workspace region, after Azure's answer agrees with it (refused, not guessed, when not)."""
    if found and not same_region(configured, found):
        # RunError: the SDK reports the message and stops, without a traceback.
        raise pulumi.RunError(f"gpu-aks:observability.azureMonitorWorkspaceLocation: {configured!r}, but the workspace "
                              f"{workspace_id} is in {found!r}; set azureMonitorWorkspaceLocation: {found}")
    return configured


def workspace_parts(resource_id: str) -> tuple[str, str]:
    """(resource group, name) of an Azure Monitor workspace ID the settings already checked."""
    match = re.search(r"/resourceGroups/([^/]+)/providers/Microsoft\.Monitor/accounts/([^/]+)$", resource_id, re.IGNORECASE)
    assert match, resource_id
    return match.group(1), match.group(2)


#: Azure Managed Grafana workspace names: 2-23 characters, letters, digits and hyphens, starting with a
#: letter and ending with a letter or digit (the bound Microsoft's own Bicep states, e.g. Azure/ARO-HCP
#: `take('aro-hcp-grafana-...', 23)`). Left to Pulumi's auto-naming the name was about 29 characters.
GRAFANA_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,21}[A-Za-z0-9]")
GRAFANA_NAME_LENGTH = 23


def grafana_name(cluster_name: str) -> str:
    """The cluster's name made a valid Grafana workspace name; when it must be cut, a short hash of the
    whole name keeps two long cluster names apart. Deterministic: the same cluster, the same name."""
    cleaned = re.sub(r"[^A-Za-z0-9-]", "-", cluster_name).strip("-")
    if not cleaned[:1].isalpha():
        cleaned = f"g-{cleaned}".rstrip("-")
    if len(cleaned) <= GRAFANA_NAME_LENGTH and GRAFANA_NAME_RE.fullmatch(cleaned):
        return cleaned
    digest = hashlib.sha256(cluster_name.encode()).hexdigest()[:4]
    return f"{cleaned[:GRAFANA_NAME_LENGTH - 5].rstrip('-')}-{digest}"


def action_group_short_name(cluster_name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", cluster_name)[:SHORT_NAME_LENGTH] or "gpuaks"


def dashboard_upload(endpoint: str, dashboard_text: str) -> tuple[str, bytes]:
    """Grafana's HTTP API call that creates or replaces a dashboard (POST /api/dashboards/db with
    `overwrite`, grafana.com/docs/grafana/latest/developers/http_api/dashboard): the URL and body."""
    board = {**json.loads(dashboard_text), "id": None}
    body = {"dashboard": board, "overwrite": True, "message": "gpu-aks: pulumi up"}
    return f"{endpoint.rstrip('/')}/api/dashboards/db", json.dumps(body).encode()


def _grafana_request(method: str, url: str, body: bytes | None = None) -> None:
    """One call to Azure Managed Grafana's API with the deployer's Entra token (from the Azure CLI,
    which `pulumi up` is already logged in with)."""
    token = subprocess.run(["az", "account", "get-access-token", "--resource", GRAFANA_TOKEN_RESOURCE, "--query",
                            "accessToken", "-o", "tsv"], capture_output=True, text=True, check=True,
                           timeout=120).stdout.strip()
    request = urllib.request.Request(url, data=body, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60):
        pass


class _DashboardProvider(pulumi.dynamic.ResourceProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        _grafana_request("POST", *dashboard_upload(props["endpoint"], props["dashboard"]))
        uid = json.loads(props["dashboard"])["uid"]
        return pulumi.dynamic.CreateResult(id_=uid, outs={**props, "url": f"{props['endpoint'].rstrip('/')}/d/{uid}"})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        changed = any(olds.get(key) != news.get(key) for key in ("endpoint", "dashboard"))
        return pulumi.dynamic.DiffResult(changes=changed, replaces=["endpoint"] if olds.get("endpoint") !=
                                         news.get("endpoint") else [])

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        _grafana_request("POST", *dashboard_upload(news["endpoint"], news["dashboard"]))
        return pulumi.dynamic.UpdateResult(outs={**news, "url": f"{news['endpoint'].rstrip('/')}/d/{_id}"})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        _grafana_request("DELETE", f"{props['endpoint'].rstrip('/')}/api/dashboards/uid/{_id}")


class GrafanaDashboard(pulumi.dynamic.Resource):
    """gpu-aks's dashboard inside an Azure Managed Grafana. ARM has no resource for a dashboard inside
    a Grafana instance, so this is a dynamic resource (plain Python run by the engine) that calls
    Grafana's HTTP API on create, update and delete."""

    url: pulumi.Output[str]

    def __init__(self, name: str, endpoint: pulumi.Input[str], dashboard_text: str,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(_DashboardProvider(), name, {"endpoint": endpoint, "dashboard": dashboard_text, "url": None},
                         opts)


@dataclass(frozen=True)
class GpuObservabilityArgs:
    settings: ObservabilitySettings
    cluster: ClusterSettings
    resource_group_name: pulumi.Input[str]
    cluster_id: pulumi.Input[str]
    #: The pools the exporter serves.
    pools: Sequence[Pool]
    gpu_namespace: str
    #: The DaemonSets that must be ready on every GPU node (device plugin and exporter).
    agent_daemonsets: Sequence[str]
    #: The dashboard JSON (observability.dashboard), provisioned when `grafana` is on.
    dashboard_json: str = ""
    #: How long to wait after granting the deployer Grafana Editor, before uploading the dashboard.
    role_propagation_seconds: int = 300
    #: The deployer's principal type (access.deployerPrincipalType), for its Grafana Editor grant.
    deployer_principal_type: str = "User"


class GpuObservability(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuObservabilityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuObservability", name, None, opts)
        settings, cluster = args.settings, args.cluster
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(cluster.tags) if not cluster.secret else None

        if settings.workspace_id:
            group, workspace_name = workspace_parts(settings.workspace_id)
            existing = monitor.get_azure_monitor_workspace_output(
                resource_group_name=group, azure_monitor_workspace_name=workspace_name,
                opts=pulumi.InvokeOutputOptions(parent=self))
            self.workspace_id: pulumi.Output[str] = pulumi.Output.from_input(settings.workspace_id)
            self.query_endpoint: pulumi.Output[Any] = existing.metrics.apply(
                lambda metrics: metrics.prometheus_query_endpoint if metrics else None)
            configured = settings.workspace_location
            # Config names the region before anything is planned; Azure's answer is checked against it.
            workspace_location: pulumi.Input[str] = existing.location.apply(
                lambda found: _checked_region(configured, found, settings.workspace_id or "")) \
                if configured else existing.location
        else:
            workspace = monitor.AzureMonitorWorkspace(
                f"{name}-workspace", resource_group_name=args.resource_group_name, location=cluster.location,
                tags=tags, opts=child)
            self.workspace_id = workspace.id
            self.query_endpoint = workspace.metrics.apply(lambda metrics: metrics.prometheus_query_endpoint if metrics else None)
            configured, workspace_location = cluster.location, cluster.location
        self.workspace_location = pulumi.Output.from_input(workspace_location)

        endpoint = monitor.DataCollectionEndpoint(
            f"{name}-dce", data_collection_endpoint_name=self.workspace_location.apply(
                lambda region: msprom_name(region, cluster.name, DCE_NAME_LENGTH)),
            resource_group_name=args.resource_group_name, location=workspace_location, kind="Linux", tags=tags,
            opts=child)
        rule = monitor.DataCollectionRule(
            f"{name}-dcr", data_collection_rule_name=self.workspace_location.apply(
                lambda region: msprom_name(region, cluster.name, DCR_NAME_LENGTH)),
            resource_group_name=args.resource_group_name, location=workspace_location, kind="Linux", tags=tags,
            data_collection_endpoint_id=endpoint.id,
            data_sources={"prometheus_forwarder": [{"name": "PrometheusDataSource", "streams": [PROMETHEUS_STREAM]}]},
            destinations={"monitoring_accounts": [{"account_resource_id": self.workspace_id,
                                                   "name": MONITORING_ACCOUNT_DESTINATION}]},
            data_flows=[{"streams": [PROMETHEUS_STREAM], "destinations": [MONITORING_ACCOUNT_DESTINATION]}],
            description="gpu-aks: the cluster's Prometheus metrics to its Azure Monitor workspace",
            opts=child)
        monitor.DataCollectionRuleAssociation(
            f"{name}-dcra", association_name=msprom_name(cluster.location, cluster.name),
            resource_uri=args.cluster_id, data_collection_rule_id=rule.id,
            description="gpu-aks: managed Prometheus for this cluster", opts=child)
        # A private cluster reaches a data collection endpoint through a private link in its own region:
        # Microsoft's Terraform template adds one there when the workspace is elsewhere (`dce_mismatch`,
        # `dcra_mismatch`). The settings require the workspace's region in config for a private cluster.
        if cluster.api_server.private_cluster and configured and not same_region(configured, cluster.location):
            private_endpoint = monitor.DataCollectionEndpoint(
                f"{name}-dce-private-link",
                data_collection_endpoint_name=private_link_endpoint_name(configured, cluster.name),
                resource_group_name=args.resource_group_name, location=cluster.location, kind="Linux", tags=tags,
                opts=child)
            monitor.DataCollectionRuleAssociation(
                f"{name}-dcea", association_name=ENDPOINT_ASSOCIATION_NAME, resource_uri=args.cluster_id,
                data_collection_endpoint_id=private_endpoint.id,
                description="gpu-aks: the private cluster's data collection endpoint in its own region", opts=child)

        # Microsoft's recording rules: Managed Grafana's Kubernetes dashboards and the portal read their series.
        for recording in recording_rule_groups(cluster.name):
            alertsmanagement.PrometheusRuleGroup(
                f"{name}-{recording.id}-recording-rules",
                rule_group_name=recording.name, resource_group_name=args.resource_group_name,
                location=workspace_location, tags=tags, scopes=[self.workspace_id, args.cluster_id],
                cluster_name=cluster.name, interval=recording.interval, description=recording.description,
                rules=azure_recording_rules(recording), opts=child)  # type: ignore[arg-type]  # plain dicts

        if settings.alerts_on:
            groups: list[pulumi.Input[str]] = []
            if settings.alerts.action_group_id:
                groups.append(settings.alerts.action_group_id)
            if settings.alerts.emails:
                created = monitor.ActionGroup(
                    f"{name}-action-group", resource_group_name=args.resource_group_name, location="Global",
                    group_short_name=action_group_short_name(cluster.name), enabled=True, tags=tags,
                    email_receivers=[{"name": f"email-{index}", "email_address": address,
                                      "use_common_alert_schema": True}
                                     for index, address in enumerate(settings.alerts.emails)],
                    opts=child)
                groups.append(created.id)
            rules = alert_rules(settings.alerts, args.pools, args.gpu_namespace, args.agent_daemonsets)
            alertsmanagement.PrometheusRuleGroup(
                f"{name}-gpu-alerts", rule_group_name=f"{GROUP_NAME}-{cluster.name}",
                resource_group_name=args.resource_group_name, location=workspace_location, tags=tags,
                # "To limit your rule group to a cluster scope ... add the Azure Resource ID of your cluster
                # to the rule group scopes[] list. The scopes list must still include the Azure Monitor
                # workspace resource ID" (learn.microsoft.com/azure/azure-monitor/essentials/prometheus-rule-groups).
                scopes=[self.workspace_id, args.cluster_id], cluster_name=cluster.name, enabled=True,
                interval=EVALUATION_INTERVAL,
                description="gpu-aks GPU alerts (`python -m tools.observability` writes them as a Prometheus rule file)",
                rules=azure_rules(rules, groups), opts=child)  # type: ignore[arg-type]  # plain dicts; tests check them

        self.grafana_endpoint: pulumi.Output[Any] = pulumi.Output.from_input(None)
        self.dashboard_url: pulumi.Output[Any] = pulumi.Output.from_input(None)
        if settings.grafana:
            grafana = dashboard.Grafana(
                f"{name}-grafana", workspace_name=grafana_name(cluster.name),
                resource_group_name=args.resource_group_name, location=cluster.location, tags=tags,
                sku={"name": "Standard"}, identity={"type": "SystemAssigned"},
                properties={"grafana_integrations": {"azure_monitor_workspace_integrations": [
                    {"azure_monitor_workspace_resource_id": self.workspace_id}]}},
                opts=child)
            client = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))
            assign_role(
                f"{name}-grafana-reads-workspace", self.workspace_id,
                grafana.identity.apply(lambda identity: (identity.principal_id if identity else None) or ""),
                "ServicePrincipal",  # Grafana's system-assigned managed identity
                client.subscription_id.apply(lambda sub: role_definition_id(sub, MONITORING_DATA_READER_ROLE)),
                "gpu-aks: Azure Managed Grafana queries the managed Prometheus workspace", child)
            editor = assign_role(
                f"{name}-deployer-edits-grafana", grafana.id, client.object_id, args.deployer_principal_type,
                client.subscription_id.apply(lambda sub: role_definition_id(sub, GRAFANA_EDITOR_ROLE)),
                "gpu-aks: the identity that runs pulumi up provisions the GPU dashboard", child)
            wait = RolePropagationWait(f"{name}-grafana-role-propagation", editor.id, args.role_propagation_seconds,
                                       opts=child)
            self.grafana_endpoint = grafana.properties.apply(lambda p: p.endpoint if p else None)
            board = GrafanaDashboard(f"{name}-dashboard", self.grafana_endpoint, args.dashboard_json,
                                     opts=pulumi.ResourceOptions(parent=self, depends_on=[wait]))
            self.dashboard_url = board.url

        self.register_outputs({"workspaceId": self.workspace_id, "prometheusQueryEndpoint": self.query_endpoint,
                               "grafanaEndpoint": self.grafana_endpoint, "dashboardUrl": self.dashboard_url})
