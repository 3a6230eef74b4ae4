"""Facts `gpu-aks:observability` is checked against and the exporter is named by, and the plain values
the builders of this package take (`AlertSettings`, and the one pool model,
`gpu_aks_policies.pools.model.Pool`, for the pools the exporter watches). Pure, and imports nothing
from the rest of the project but the light package: `components/` calls these builders, never the reverse.
The section itself is declared in `components/settings/observability.py` (`ObservabilitySettings`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_aks_policies.catalog import sharing_name
from gpu_aks_policies.pools.model import Pool

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


# --- A watched pool, as the alerts and the dashboard read it: the one pool model -------------------


def pool_description(pool: Pool) -> str:
    """What the pool's nodes are, for the dashboard's row title (`Standard_NC4as_T4_v3, T4`)."""
    description = "; ".join(f"{offer.vm_size}, {offer.gpu_model}" + (
        f", MIG {offer.gpu_instance_profile}" if offer.gpu_instance_profile else "") for offer in pool.gpu_offers)
    if shares_per_gpu(pool) > 1 and pool.sharing is not None:
        description += f", {pool.sharing.replicas} slices per GPU by {sharing_name(pool.sharing.strategy)}"
    return description


def mig_profile(pool: Pool) -> str | None:
    """The MIG profile of the pool's GPUs, or None for whole GPUs: DCGM reports no GPU_UTIL for MIG
    instances, so MIG pools are charted and alerted on by graphics-engine activity."""
    return next((offer.gpu_instance_profile for offer in pool.gpu_offers if offer.gpu_instance_profile), None)


def shares_per_gpu(pool: Pool) -> int:
    """How many pods share each GPU (time-slicing or MPS); 1: none. The exporter then repeats a GPU's
    series once per pod sharing it (`vgpu`), and the dashboard counts the slices in use."""
    return pool.sharing.replicas if pool.sharing is not None and pool.sharing.replicas > 1 else 1
