"""`PlannedMaintenance`: when AKS may upgrade Kubernetes and node images, so GPU nodes are not
reimaged in the middle of the week's jobs.

AKS reads two `MaintenanceConfiguration` names (learn.microsoft.com/azure/aks/planned-maintenance):
`aksManagedAutoUpgradeSchedule` for the cluster's `upgradeChannel` and
`aksManagedNodeOSUpgradeSchedule` for its `nodeOSUpgradeChannel`. Each is a weekly window of at least
4 hours (`MaintenanceWindow.durationHours`: 4-24 at API 2025-09-01), with a UTC offset and dates on
which nothing may start. A configuration is created only where its channel lets AKS upgrade
something: with the channel `none`/`None`/`Unmanaged` it would schedule nothing. AKS can still
break a window for urgent security fixes (same page). PSRule for Azure rates a missing window
Important (`Azure.AKS.MaintenanceWindow`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi_azure_native import containerservice

from components.aks_api import AUTO_UPGRADE_SCHEDULE, NODE_OS_UPGRADE_SCHEDULE
from components.settings.maintenance import MaintenanceSettings, MaintenanceWindowSettings

#: Channels under which AKS upgrades nothing on its own, so a schedule would govern nothing.
IDLE_UPGRADE_CHANNELS = ("none",)
IDLE_NODE_OS_CHANNELS = ("None", "Unmanaged")


def maintenance_window(window: MaintenanceWindowSettings) -> dict[str, Any]:
    """A `maintenanceWindow` as the API takes it (snake_case for the Pulumi SDK)."""
    result: dict[str, Any] = {
        "schedule": {"weekly": {"day_of_week": window.day_of_week, "interval_weeks": window.interval_weeks}},
        "duration_hours": window.duration_hours,
        "utc_offset": window.utc_offset,
        "start_time": window.start_time,
    }
    if window.start_date:
        result["start_date"] = window.start_date.isoformat()
    if window.not_allowed_dates:
        result["not_allowed_dates"] = [{"start": start.isoformat(), "end": end.isoformat()}
                                       for start, end in window.not_allowed_dates]
    return result


def scheduled_configurations(settings: MaintenanceSettings, upgrade_channel: str,
                             node_os_upgrade_channel: str) -> dict[str, MaintenanceWindowSettings]:
    """Configuration name -> window, for the channels that upgrade something."""
    configurations = {}
    if upgrade_channel not in IDLE_UPGRADE_CHANNELS:
        configurations[AUTO_UPGRADE_SCHEDULE] = settings.auto_upgrade
    if node_os_upgrade_channel not in IDLE_NODE_OS_CHANNELS:
        configurations[NODE_OS_UPGRADE_SCHEDULE] = settings.node_os_upgrade
    return configurations


@dataclass(frozen=True)
class PlannedMaintenanceArgs:
    settings: MaintenanceSettings
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    upgrade_channel: str
    node_os_upgrade_channel: str


class PlannedMaintenance(pulumi.ComponentResource):
    def __init__(self, name: str, args: PlannedMaintenanceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:PlannedMaintenance", name, None, opts)
        self.configurations = [
            # Plain dicts do not match the SDK's TypedDict overloads for mypy; the tests check them
            # against the REST model.
            containerservice.MaintenanceConfiguration(  # type: ignore[call-overload]
                f"{name}-{config_name}",
                config_name=config_name,
                resource_group_name=args.resource_group_name,
                resource_name_=args.cluster_name,
                maintenance_window=maintenance_window(window),
                opts=pulumi.ResourceOptions(parent=self))
            for config_name, window in scheduled_configurations(
                args.settings, args.upgrade_channel, args.node_os_upgrade_channel).items()
        ]
        self.register_outputs({"configurations": [c.name for c in self.configurations]})
