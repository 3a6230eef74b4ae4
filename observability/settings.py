"""Facts `gpu-aks:observability` is checked against and the exporter is named by. Pure, and imports
nothing from the rest of the project. The section itself is declared in
`components/settings/observability.py` (`ObservabilitySettings`, `AlertSettings`)."""

from __future__ import annotations

import re

#: NVIDIA's dcgm-exporter chart 4.8.2 (tag `4.5.3-4.8.2`): `deployment/values.yaml` `image.tag`
#: (DCGM 4.5.3, exporter 4.8.2, the distroless build the chart defaults to).
DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
DCGM_EXPORTER_CHART_VERSION = "4.8.2"
#: The exporter's DaemonSets are `dcgm-exporter-<pool>` (components/dcgm_exporter.py).
EXPORTER_NAME_PREFIX = "dcgm-exporter"


def exporter_name(pool_name: str) -> str:
    """The exporter DaemonSet of a GPU pool."""
    return f"{EXPORTER_NAME_PREFIX}-{pool_name}"

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
