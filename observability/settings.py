"""`gpu-aks:observability`: Azure Monitor managed Prometheus, the DCGM exporter, GPU alerts and an
optional Azure Managed Grafana. Pure; parsed once with the rest of the stack config.

```yaml
gpu-aks:observability:
  enabled: true                              # managed Prometheus + DCGM exporter + alerts
  azureMonitorWorkspaceResourceId: /subscriptions/.../providers/Microsoft.Monitor/accounts/amw  # optional
  grafana: false                             # Azure Managed Grafana with the dashboard (costs money)
  dcgmExporter: {enabled: true, image: nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless}
  alerts:
    enabled: true
    actionGroupResourceId: /subscriptions/.../providers/microsoft.insights/actionGroups/oncall  # optional
    emails: [oncall@example.com]             # optional: an action group is created for them
    gpuTemperatureCelsius: 85
    pendingGpuPodMinutes: 15
    idleGpuUtilizationPercent: 5
    idleGpuMinutes: 60
    agentDownMinutes: 10
```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

#: NVIDIA's dcgm-exporter chart 4.8.2 (tag `4.5.3-4.8.2`): `deployment/values.yaml` `image.tag`
#: (DCGM 4.5.3, exporter 4.8.2, the distroless build the chart defaults to).
DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
DCGM_EXPORTER_CHART_VERSION = "4.8.2"
#: The exporter's DaemonSets are `dcgm-exporter-<pool>` (components/dcgm_exporter.py).
EXPORTER_NAME_PREFIX = "dcgm-exporter"
#: Every exporter pod carries this label (the PodMonitor and the doctor find them by it).
EXPORTER_APP_LABEL = ("app.kubernetes.io/name", "dcgm-exporter")

#: ARM resource IDs (case-insensitive, as ARM treats them).
WORKSPACE_ID_RE = re.compile(r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Monitor/accounts/[^/]+",
                             re.IGNORECASE)
ACTION_GROUP_ID_RE = re.compile(
    r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Insights/actionGroups/[^/]+", re.IGNORECASE)
#: An address an Azure Monitor email receiver takes (one '@', no spaces); Azure checks it for real.
EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
#: "You can have up to 1,000 email actions in an action group" (learn.microsoft.com/azure/azure-monitor/
#: alerts/action-groups, "Email").
MAX_EMAILS = 1000

KEYS = ("enabled", "azureMonitorWorkspaceResourceId", "grafana", "dcgmExporter", "alerts")
EXPORTER_KEYS = ("enabled", "image")
ALERT_KEYS = ("enabled", "actionGroupResourceId", "emails", "gpuTemperatureCelsius", "pendingGpuPodMinutes",
              "idleGpuUtilizationPercent", "idleGpuMinutes", "agentDownMinutes")


@dataclass(frozen=True)
class AlertSettings:
    enabled: bool = True
    #: An existing action group every alert notifies.
    action_group_id: str | None = None
    #: Addresses of an action group gpu-aks creates (with `action_group_id`, both are notified).
    emails: tuple[str, ...] = ()
    #: `GpuTemperatureHigh` fires above this many degrees Celsius for 5 minutes.
    gpu_temperature_celsius: int = 85
    #: `GpuPodPending` fires when a pod asking for GPUs stays Pending this long.
    pending_gpu_pod_minutes: int = 15
    #: `GpuAllocatedButIdle` fires when a GPU given to a pod stays under this utilisation ...
    idle_gpu_utilization_percent: int = 5
    #: ... for this many minutes.
    idle_gpu_minutes: int = 60
    #: `GpuNodeAgentDown` fires when a GPU node lacks a ready device plugin or exporter this long.
    agent_down_minutes: int = 10


@dataclass(frozen=True)
class ObservabilitySettings:
    #: Off by default: an existing stack that upgrades gets no new billable resources unasked.
    enabled: bool = False
    #: An existing Azure Monitor workspace; None: gpu-aks creates one beside the cluster.
    workspace_id: str | None = None
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


class ProblemSink(Protocol):
    """What the settings layer collects problems with (`components.settings._Problems`)."""

    def add(self, key: str, message: str) -> None: ...

    def shown(self, key: str, value: Any) -> str: ...


_MISSING = object()


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "is not true or false"


def _whole(low: int, high: int, unit: str) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        whole = not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
        return None if whole and low <= value <= high else f"must be whole {unit} from {low} to {high}"
    return check


def _matches(pattern: re.Pattern[str], what: str) -> Callable[[Any], str | None]:
    return lambda value: None if isinstance(value, str) and pattern.fullmatch(value) else f"is not {what}"


def _image(value: Any) -> str | None:
    return None if isinstance(value, str) and value and value.strip() == value and " " not in value else \
        "is not a container image reference"


def _emails(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) and EMAIL_RE.fullmatch(v) for v in value):
        return "must be a list of email addresses"
    if len(value) > MAX_EMAILS:
        return f"lists {len(value)} addresses; an action group takes at most {MAX_EMAILS}"
    return None if len(set(value)) == len(value) else "lists an address twice"


class _Reader:
    def __init__(self, problems: ProblemSink) -> None:
        self.problems = problems

    def section(self, raw: Any, key: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
        if raw is None or raw is _MISSING:
            return {}
        if not isinstance(raw, Mapping):
            self.problems.add(key, f"expected an object of settings, got {self.problems.shown(key, raw)}")
            return {}
        for name in raw:
            if name not in allowed:
                self.problems.add(f"{key}.{name}" if isinstance(name, str) else key,
                                  f"unknown setting; allowed: {', '.join(allowed)}")
        return raw

    def get(self, raw: Mapping[str, Any], name: str, key: str, default: Any, check: Callable[[Any], str | None]) -> Any:
        value = raw.get(name, _MISSING)
        if value is _MISSING or value is None:
            return default
        problem = check(value)
        if problem:
            self.problems.add(f"{key}.{name}", f"{self.problems.shown(key, value)} {problem}")
            return default
        return int(value) if isinstance(value, float) else value


def parse_observability(raw: Any, problems: ProblemSink, key: str = "observability") -> ObservabilitySettings:
    """`gpu-aks:observability` -> ObservabilitySettings; every problem goes to `problems`."""
    read = _Reader(problems)
    section = read.section(raw, key, KEYS)
    enabled = read.get(section, "enabled", key, False, _bool)
    workspace = read.get(section, "azureMonitorWorkspaceResourceId", key, None,
                         _matches(WORKSPACE_ID_RE, "an Azure Monitor workspace resource ID like /subscriptions/<id>/"
                                                   "resourceGroups/<rg>/providers/Microsoft.Monitor/accounts/<name>"))
    grafana = read.get(section, "grafana", key, False, _bool)
    exporter = read.section(section.get("dcgmExporter"), f"{key}.dcgmExporter", EXPORTER_KEYS)
    alerts_raw = read.section(section.get("alerts"), f"{key}.alerts", ALERT_KEYS)
    alerts_key = f"{key}.alerts"
    defaults = AlertSettings()
    alerts = AlertSettings(
        enabled=read.get(alerts_raw, "enabled", alerts_key, True, _bool),
        action_group_id=read.get(alerts_raw, "actionGroupResourceId", alerts_key, None, _matches(
            ACTION_GROUP_ID_RE, "an action group resource ID like /subscriptions/<id>/resourceGroups/<rg>/providers/"
                                "microsoft.insights/actionGroups/<name>")),
        emails=tuple(read.get(alerts_raw, "emails", alerts_key, [], _emails)),
        gpu_temperature_celsius=read.get(alerts_raw, "gpuTemperatureCelsius", alerts_key,
                                         defaults.gpu_temperature_celsius, _whole(40, 120, "degrees Celsius")),
        pending_gpu_pod_minutes=read.get(alerts_raw, "pendingGpuPodMinutes", alerts_key,
                                         defaults.pending_gpu_pod_minutes, _whole(1, 1440, "minutes")),
        idle_gpu_utilization_percent=read.get(alerts_raw, "idleGpuUtilizationPercent", alerts_key,
                                              defaults.idle_gpu_utilization_percent, _whole(1, 99, "percent")),
        idle_gpu_minutes=read.get(alerts_raw, "idleGpuMinutes", alerts_key, defaults.idle_gpu_minutes,
                                  _whole(5, 1440, "minutes")),
        agent_down_minutes=read.get(alerts_raw, "agentDownMinutes", alerts_key, defaults.agent_down_minutes,
                                    _whole(1, 1440, "minutes")),
    )
    if grafana and not enabled:
        problems.add(f"{key}.grafana", "true needs observability.enabled: true: the dashboard reads the managed "
                                       "Prometheus workspace, which only exists when observability is enabled")
    return ObservabilitySettings(
        enabled=enabled, workspace_id=workspace, grafana=grafana,
        exporter_enabled=read.get(exporter, "enabled", f"{key}.dcgmExporter", True, _bool),
        exporter_image=read.get(exporter, "image", f"{key}.dcgmExporter", DCGM_EXPORTER_IMAGE, _image),
        alerts=alerts,
    )
