"""`gpu-aks:observability`: Azure Monitor managed service for Prometheus, NVIDIA's DCGM exporter on
the served GPU pools, GPU alerts and an optional Azure Managed Grafana (docs/observe.md)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpu_aks_policies.declarations import Check, Key, Reader, Section, boolean, is_whole_number, text
from gpu_aks_policies.limits import MAX_EMAILS

from components.azure_catalog import region_check
from components.settings.common import image_problem
from observability.settings import (
    ACTION_GROUP_ID_RE,
    DCGM_EXPORTER_IMAGE,
    EMAIL_RE,
    WORKSPACE_ID_RE,
    AlertSettings,
)

_MONITOR = "learn.microsoft.com/azure/aks/monitor-gpu-metrics"
_CHART = "NVIDIA/dcgm-exporter deployment/values.yaml (chart 4.8.2)"


@dataclass(frozen=True)
class ObservabilitySettings:
    #: Off by default: an existing stack that upgrades gets no new billable resources unasked.
    enabled: bool = False
    #: An existing Azure Monitor workspace; None: gpu-aks creates one beside the cluster.
    workspace_id: str | None = None
    #: That workspace's region; None: read from Azure (the created workspace is in the cluster's region).
    workspace_location: str | None = None
    #: Azure Managed Grafana with the dashboard, reading the workspace. Off: it costs money.
    grafana: bool = False
    exporter_enabled: bool = True
    exporter_image: str = DCGM_EXPORTER_IMAGE
    alerts: AlertSettings = field(default_factory=AlertSettings)

    @property
    def exporter_on(self) -> bool:
        return self.enabled and self.exporter_enabled

    @property
    def alerts_on(self) -> bool:
        return self.enabled and self.alerts.enabled


def _whole(low: int, high: int, unit: str) -> Callable[[Any], str | None]:
    return lambda value: None if is_whole_number(value) and low <= value <= high else \
        f"must be whole {unit} from {low} to {high}"


def _matches(pattern: re.Pattern[str], what: str) -> Callable[[Any], str | None]:
    return lambda value: None if isinstance(value, str) and pattern.fullmatch(value) else f"is not {what}"


def _emails(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and EMAIL_RE.fullmatch(v) for v in value):
        return "must be a list of email addresses"
    if len(value) > MAX_EMAILS:
        return f"lists {len(value)} addresses; an action group takes at most {MAX_EMAILS}"
    return None if len(set(value)) == len(value) else "lists an address twice"


def _grafana_reads_the_workspace(reader: Reader) -> None:
    if reader.get("grafana") and not reader.get("enabled"):
        reader.problem("grafana", "true needs observability.enabled: true: the dashboard reads the managed Prometheus "
                                  "workspace, which only exists when observability is enabled")


def _region(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return "is not an Azure region name"
    problem, _warning = region_check(value)
    # The reader shows the value before the message; region_check names it too.
    return problem.removeprefix(f"{value!r} ") if problem else None


def _workspace_location(reader: Reader) -> None:
    location = reader.get("azureMonitorWorkspaceLocation")
    if location and not reader.get("azureMonitorWorkspaceResourceId"):
        reader.problem("azureMonitorWorkspaceLocation", "is set without azureMonitorWorkspaceResourceId; the workspace "
                                                        "gpu-aks creates is in the cluster's region (azure-native:location)")
    private = reader.root.children["cluster"].get("apiServerAccessProfile.enablePrivateCluster")
    if reader.get("enabled") and reader.get("azureMonitorWorkspaceResourceId") and private and not location:
        # Microsoft's Terraform template (AddonTerraformTemplate/main.tf) gives a private cluster whose region
        # differs from the workspace's a second data collection endpoint in the cluster's region; whether that
        # endpoint exists must be known when the program plans, not read from Azure while it runs.
        reader.problem("azureMonitorWorkspaceLocation", "is needed for a private cluster with an existing workspace: "
                                                        "a private cluster in another region than its workspace needs "
                                                        "a second data collection endpoint in its own region; set it "
                                                        "to the workspace's region, e.g. eastus2")


def _minutes(name: str, doc: str, default: int, low: int, attr: str) -> Key:
    return Key(name, doc, "integer", default, check=_whole(low, 1440, "minutes"), convert=int, attr=attr)


ALERTS = Section("alerts", "GPU alerts: one Azure Prometheus rule group on the workspace, scoped to the cluster.", (
    boolean("enabled", "Create the alert rule group.", True, attr="enabled"),
    Key("actionGroupResourceId", "An existing action group every alert notifies.", "string", None,
        check=_matches(ACTION_GROUP_ID_RE, "an action group resource ID like /subscriptions/<id>/resourceGroups/<rg>/"
                                           "providers/microsoft.insights/actionGroups/<name>"),
        attr="action_group_id", source="Microsoft.Insights/actionGroups"),
    Key("emails", "Addresses of an action group gpu-aks creates for the alerts.", "list of strings", [],
        check=_emails, convert=tuple, attr="emails",
        source="Microsoft.Insights/actionGroups emailReceivers (API 2024-10-01-preview)"),
    Key("gpuTemperatureCelsius", "GpuTemperatureHigh fires above this for 5 minutes.", "integer", 85,
        check=_whole(40, 120, "degrees Celsius"), convert=int, attr="gpu_temperature_celsius",
        source="DCGM_FI_DEV_GPU_TEMP"),
    _minutes("pendingGpuPodMinutes", "GpuPodPending fires when a GPU pod stays Pending this long.", 15, 1,
             "pending_gpu_pod_minutes"),
    Key("idleGpuUtilizationPercent", "GpuAllocatedButIdle: a GPU held by a pod under this utilisation ...",
        "integer", 5, check=_whole(1, 99, "percent"), convert=int, attr="idle_gpu_utilization_percent",
        source="DCGM_FI_DEV_GPU_UTIL; DCGM_FI_PROF_GR_ENGINE_ACTIVE on MIG"),
    _minutes("idleGpuMinutes", "... for this many minutes.", 60, 5, "idle_gpu_minutes"),
    _minutes("agentDownMinutes", "GpuNodeAgentDown fires when a GPU node lacks a ready device plugin or exporter "
             "this long.", 10, 1, "agent_down_minutes"),
), cls=AlertSettings)

OBSERVABILITY = Section(
    "observability", "Azure Monitor managed Prometheus, NVIDIA's DCGM exporter on the served GPU pools, GPU alerts "
    "and an optional Azure Managed Grafana (docs/observe.md).", (
        boolean("enabled", "Turn on managed Prometheus, the exporter and the alerts (they cost money: "
                "docs/observe.md).", False, attr="enabled", source=_MONITOR),
        Key("azureMonitorWorkspaceResourceId", "An existing Azure Monitor workspace; default: one is created.",
            "string", None, check=_matches(WORKSPACE_ID_RE, "an Azure Monitor workspace resource ID like /subscriptions/"
                                                            "<id>/resourceGroups/<rg>/providers/Microsoft.Monitor/"
                                                            "accounts/<name>"),
            attr="workspace_id", source="Microsoft.Monitor/accounts (API 2023-04-03)"),
        Key("azureMonitorWorkspaceLocation", "The region of that workspace; default: read from Azure. The data "
            "collection endpoint and rule and the rule groups go to the workspace's region (Microsoft's templates); "
            "required for a private cluster.", "string", None, check=_region, attr="workspace_location",
            source="Azure/prometheus-collector AddonArmTemplate (azureMonitorWorkspaceLocation)"),
        Check(_workspace_location, reads=("enabled", "azureMonitorWorkspaceResourceId", "azureMonitorWorkspaceLocation"),
              doc="`azureMonitorWorkspaceLocation` goes with `azureMonitorWorkspaceResourceId`, and a private cluster "
                  "with an existing workspace needs it."),
        boolean("grafana", "Azure Managed Grafana (Standard) with the GPU dashboard, reading the workspace.", False,
                attr="grafana", source="Microsoft.Dashboard/grafana (API 2024-10-01)"),
        Check(_grafana_reads_the_workspace, reads=("enabled", "grafana"), doc="`grafana: true` needs `enabled: true`."),
        Section("dcgmExporter", "NVIDIA's DCGM exporter, one DaemonSet per served GPU pool.", (
            boolean("enabled", "Run the exporter (turn off where something else exports DCGM metrics).", True,
                    attr="exporter_enabled"),
            text("image", "The exporter image.", DCGM_EXPORTER_IMAGE, check=image_problem, attr="exporter_image",
                 source=_CHART),
        ), flatten=True),
        ALERTS,
    ), cls=ObservabilitySettings)
