"""`gpu-aks:maintenance`: when AKS may upgrade (`aksManagedAutoUpgradeSchedule`,
`aksManagedNodeOSUpgradeSchedule`). No Pulumi imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gpu_aks_policies.declarations import MISSING, Key, Reader, Section, text

from components.aks_api import (
    INTERVAL_WEEKS_RANGE,
    MAINTENANCE_DURATION_RANGE,
    START_TIME_PATTERN,
    UTC_OFFSET_PATTERN,
    WEEK_DAYS,
)
from components.settings.common import (
    MAINTENANCE_MODEL,
    api_choice,
    whole_in,
)


@dataclass(frozen=True)
class MaintenanceWindowSettings:
    """A weekly `maintenanceWindow` (MaintenanceConfiguration at 2025-09-01)."""

    day_of_week: str
    start_time: str
    duration_hours: int
    utc_offset: str = "+00:00"
    interval_weeks: int = 1
    start_date: date | None = None
    #: (start, end) date spans, inclusive, on which AKS must not upgrade.
    not_allowed_dates: tuple[tuple[date, date], ...] = ()


@dataclass(frozen=True)
class MaintenanceSettings:
    """When AKS may upgrade Kubernetes (`aksManagedAutoUpgradeSchedule`) and node images
    (`aksManagedNodeOSUpgradeSchedule`). GPU defaults: weekend nights, 8 hours, one day apart, so a
    bad node image and a Kubernetes upgrade never land in the same window."""

    auto_upgrade: MaintenanceWindowSettings = field(
        default_factory=lambda: MaintenanceWindowSettings("Saturday", "00:00", 8))
    node_os_upgrade: MaintenanceWindowSettings = field(
        default_factory=lambda: MaintenanceWindowSettings("Sunday", "00:00", 8))


def _start_time_problem(value: Any) -> str | None:
    ok = isinstance(value, str) and START_TIME_PATTERN.fullmatch(value) and int(value[:2]) <= 23 and int(value[3:]) <= 59
    return None if ok else "is not a time from \"00:00\" to \"23:59\" (quote it in YAML)"


def _utc_offset_problem(value: Any) -> str | None:
    ok = isinstance(value, str) and UTC_OFFSET_PATTERN.fullmatch(value) and int(value[1:3]) <= 14 and int(value[4:]) <= 59
    return None if ok else "is not a UTC offset like \"+00:00\" or \"-07:00\" (quote it in YAML)"


def _as_date(value: Any) -> date | None:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _start_date(reader: Reader, value: Any) -> date | None:
    if value is MISSING or value is None:
        return None
    parsed = _as_date(value)
    if parsed is None:
        reader.problem("startDate", f"{reader.shown(value)} is not a date like 2026-12-24 (quote it in YAML)")
    return parsed


def _not_allowed_dates(reader: Reader, value: Any) -> tuple[tuple[date, date], ...]:
    if value is MISSING or value is None:
        return ()
    if not isinstance(value, list):
        reader.problem("notAllowedDates", f"{reader.shown(value)} is not a list of {{start, end}} dates")
        return ()
    spans = []
    for index, item in enumerate(value):
        at = f"notAllowedDates[{index}]"
        item = reader.problems.mapping(item, reader.path(at))
        reader.problems.unknown_keys(item, reader.path(at), ("start", "end"))
        if "start" not in item or "end" not in item:
            reader.problem(at, "needs both start and end dates, e.g. {start: \"2026-12-20\", end: \"2027-01-04\"}")
            continue
        start, end = _as_date(item["start"]), _as_date(item["end"])
        for name, raw, parsed in (("start", item["start"], start), ("end", item["end"], end)):
            if parsed is None:
                reader.problem(f"{at}.{name}", f"{reader.shown(raw)} is not a date like 2026-12-24 (quote it in YAML)")
        if start and end:
            if end < start:
                reader.problem(f"{at}.end", f"{end} is before start {start}")
            else:
                spans.append((start, end))
    return tuple(spans)


def _window(name: str, doc: str, default: MaintenanceWindowSettings) -> Section:
    source = f"{MAINTENANCE_MODEL} maintenanceWindow"
    return Section(name, doc, (
        api_choice("dayOfWeek", "The day the window opens.", WEEK_DAYS, default.day_of_week, attr="day_of_week",
                   source=f"{source}.schedule.weekly.dayOfWeek"),
        text("startTime", "When it opens, \"HH:MM\" in utcOffset's time.", default.start_time,
             check=_start_time_problem, attr="start_time", source=f"{source}.startTime"),
        Key("durationHours", "How long it stays open: 4 to 24 hours.", "integer", default.duration_hours,
            check=whole_in(MAINTENANCE_DURATION_RANGE), convert=int, attr="duration_hours",
            source=f"{source}.durationHours"),
        text("utcOffset", "The window's UTC offset, \"+HH:MM\" or \"-HH:MM\".", default.utc_offset,
             check=_utc_offset_problem, attr="utc_offset", source=f"{source}.utcOffset"),
        Key("intervalWeeks", "Every how many weeks: 1 to 4.", "integer", default.interval_weeks,
            check=whole_in(INTERVAL_WEEKS_RANGE), convert=int, attr="interval_weeks",
            source=f"{source}.schedule.weekly.intervalWeeks"),
        Key("startDate", "The window is inactive before this date.", "string", None, parse=_start_date,
            attr="start_date", source=f"{source}.startDate"),
        Key("notAllowedDates", "Date spans on which nothing may start: a list of `{start, end}` dates.", "object", (),
            parse=_not_allowed_dates, attr="not_allowed_dates", source=f"{source}.notAllowedDates"),
    ), cls=MaintenanceWindowSettings)


_DEFAULTS = MaintenanceSettings()
MAINTENANCE = Section(
    "maintenance", "When AKS may upgrade: `aksManagedAutoUpgradeSchedule` (Kubernetes) and "
    "`aksManagedNodeOSUpgradeSchedule` (node images), each a weekly window of at least 4 hours. Created only for a "
    "channel that upgrades something.", (
        _window("autoUpgrade", "Kubernetes upgrades (cluster.upgradeChannel).", _DEFAULTS.auto_upgrade),
        _window("nodeOSUpgrade", "Node image and OS upgrades (cluster.nodeOSUpgradeChannel).", _DEFAULTS.node_os_upgrade),
    ), build=lambda reader: MaintenanceSettings(auto_upgrade=reader.children["autoUpgrade"].build(),
                                                node_os_upgrade=reader.children["nodeOSUpgrade"].build()),
    source="learn.microsoft.com/azure/aks/planned-maintenance")
