"""The platform's settings for access, network, API server, maintenance and pool upgrades: frozen
dataclasses and the pure readers that check raw stack config against the AKS API version this
program sends (`components/aks_api.py`). No Pulumi imports.

Each reader takes the raw mapping of its section and a `Report` (the settings layer's problem
collector: `add(key, message)` and `shown(key, value)`, which masks secret values) and returns a
usable value even when something is wrong, so that every problem is reported at once.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, Protocol

from components.aks_api import (
    API_VERSION,
    CIDR_PATTERN,
    DEFAULT_DNS_SERVICE_IP,
    DEFAULT_POD_CIDR,
    DEFAULT_SERVICE_CIDR,
    DRAIN_TIMEOUT_RANGE,
    INTERVAL_WEEKS_RANGE,
    IP_PATTERN,
    MAINTENANCE_DURATION_RANGE,
    NETWORK_DATAPLANES,
    NETWORK_PLUGIN_MODES,
    NETWORK_PLUGINS,
    NETWORK_POLICIES,
    NODE_SOAK_RANGE,
    OUTBOUND_TYPES,
    RESERVED_CIDRS,
    START_TIME_PATTERN,
    UNDRAINABLE_NODE_BEHAVIORS,
    UTC_OFFSET_PATTERN,
    WEEK_DAYS,
)

PrincipalType = Literal["User", "Group", "ServicePrincipal"]
#: Who can run `pulumi up`: a person (`User`), or a service principal or managed identity, which
#: Azure role assignments both call `ServicePrincipal` (azure-mgmt-authorization `PrincipalType`).
DEPLOYER_PRINCIPAL_TYPES: tuple[PrincipalType, ...] = ("User", "ServicePrincipal")
ADMIN_PRINCIPAL_TYPES: tuple[PrincipalType, ...] = ("User", "Group", "ServicePrincipal")
#: Set by `az login --service-principal` flows and azure/login (`AZURE_CLIENT_ID`) or by the
#: Pulumi/Terraform Azure provider conventions (`ARM_CLIENT_ID`): a non-person deploys.
SERVICE_PRINCIPAL_VARIABLES = ("ARM_CLIENT_ID", "AZURE_CLIENT_ID")
OBJECT_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: At most this many authorized IP ranges (AKS: "You can specify up to 200 authorized IP ranges",
#: learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges).
MAX_AUTHORIZED_RANGES = 200

NETWORK_KEYS = ("networkPlugin", "networkPluginMode", "networkDataplane", "networkPolicy", "podCidr", "serviceCidr",
                "dnsServiceIP", "outboundType")
API_SERVER_KEYS = ("authorizedIPRanges", "enablePrivateCluster")
WINDOW_KEYS = ("dayOfWeek", "startTime", "durationHours", "utcOffset", "intervalWeeks", "startDate", "notAllowedDates")
MAINTENANCE_KEYS = ("autoUpgrade", "nodeOSUpgrade")
UPGRADE_KEYS = ("maxSurge", "maxUnavailable", "drainTimeoutInMinutes", "nodeSoakDurationInMinutes",
                "undrainableNodeBehavior")


class Report(Protocol):
    def add(self, key: str, message: str) -> None: ...

    def shown(self, key: str, value: Any) -> str: ...


class _Counted:
    """A Report that counts what it passes on, so cross-field checks run only on clean fields."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.count = 0

    def add(self, key: str, message: str) -> None:
        self.count += 1
        self.report.add(key, message)

    def shown(self, key: str, value: Any) -> str:
        return self.report.shown(key, value)


# --- Settings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterAdmin:
    """A principal granted "Azure Kubernetes Service RBAC Cluster Admin" on the cluster."""

    object_id: str
    principal_type: PrincipalType


@dataclass(frozen=True)
class NetworkSettings:
    """`networkProfile`: Azure CNI Overlay with the Cilium dataplane and Cilium network policy, AKS's
    recommendation for new clusters (learn.microsoft.com/azure/aks/azure-cni-powered-by-cilium)."""

    plugin: str = "azure"
    plugin_mode: str | None = "overlay"
    dataplane: str = "cilium"
    policy: str = "cilium"
    pod_cidr: str | None = DEFAULT_POD_CIDR
    service_cidr: str = DEFAULT_SERVICE_CIDR
    dns_service_ip: str = DEFAULT_DNS_SERVICE_IP
    outbound_type: str = "loadBalancer"


@dataclass(frozen=True)
class ApiServerAccessSettings:
    """`apiServerAccessProfile`: who can reach the Kubernetes API server."""

    authorized_ip_ranges: tuple[str, ...] = ()
    private_cluster: bool = False

    @property
    def open_to_internet(self) -> bool:
        return not self.private_cluster and not self.authorized_ip_ranges


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


@dataclass(frozen=True)
class PoolUpgradeSettings:
    """`upgradeSettings` of a pool; None leaves AKS's default."""

    max_surge: str | None = None
    max_unavailable: str | None = None
    drain_timeout_minutes: int | None = None
    node_soak_minutes: int | None = None
    undrainable_node_behavior: str | None = None

    def as_api(self) -> dict[str, Any]:
        return {key: value for key, value in (
            ("max_surge", self.max_surge), ("max_unavailable", self.max_unavailable),
            ("drain_timeout_in_minutes", self.drain_timeout_minutes),
            ("node_soak_duration_in_minutes", self.node_soak_minutes),
            ("undrainable_node_behavior", self.undrainable_node_behavior)) if value is not None}


#: GPU pools: let a drain wait an hour on PodDisruptionBudgets (AKS's default is 30 minutes, after
#: which the upgrade fails), soak 5 minutes between nodes, and leave a node whose pods still cannot
#: be evicted cordoned (`Cordon`) instead of failing the upgrade, so a job guarded by a PDB finishes
#: on it (AgentPoolUpgradeSettings; learn.microsoft.com/azure/aks/upgrade-aks-node-pools-rolling).
GPU_POOL_UPGRADE = PoolUpgradeSettings(max_surge="33%", drain_timeout_minutes=60, node_soak_minutes=5,
                                       undrainable_node_behavior="Cordon")
CPU_POOL_UPGRADE = PoolUpgradeSettings(max_surge="33%")
#: "When you upgrade a Spot node pool, AKS internally issues a cordon and an eviction notice, but no
#: drain is applied. There are no surge nodes available for Spot node pool upgrades"
#: (learn.microsoft.com/azure/aks/spot-node-pool, "Upgrade a Spot node pool").
SPOT_UPGRADE_REASON = ("is not used on a Spot pool: AKS upgrades Spot pools without surge nodes or a drain (it "
                       "cordons and sends an eviction notice; learn.microsoft.com/azure/aks/spot-node-pool), so "
                       "remove it")


# --- Readers --------------------------------------------------------------------------------------


def _mapping(report: Report, raw: Any, key: str, allowed: Sequence[str]) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        report.add(key, f"expected an object of settings, got {report.shown(key, raw)}")
        return {}
    for name in raw:
        if name not in allowed:
            report.add(f"{key}.{name}", f"unknown setting; allowed: {', '.join(allowed)}")
    return raw


def _is_int(value: Any) -> bool:
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def _choice(report: Report, raw: Mapping[str, Any], name: str, key: str, allowed: Sequence[str], default: Any) -> Any:
    value = raw.get(name)
    if value is None:
        return default
    if isinstance(value, str) and value in allowed:
        return value
    report.add(f"{key}.{name}", f"{report.shown(key, value)} is not allowed; AKS API {API_VERSION} takes "
                                f"{', '.join(allowed)}")
    return default


def _whole(report: Report, raw: Mapping[str, Any], name: str, key: str, bounds: tuple[int, int],
           default: int | None) -> int | None:
    value = raw.get(name)
    if value is None:
        return default
    if not _is_int(value) or not bounds[0] <= value <= bounds[1]:
        report.add(f"{key}.{name}", f"{report.shown(key, value)} is not allowed; AKS API {API_VERSION} takes a whole "
                                    f"number from {bounds[0]} to {bounds[1]}")
        return default
    return int(value)


def _bool(report: Report, raw: Mapping[str, Any], name: str, key: str, default: bool) -> bool:
    value = raw.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        report.add(f"{key}.{name}", f"{report.shown(key, value)} is not true or false")
        return default
    return value


def deployer_principal_type(report: Report, raw: Mapping[str, Any], key: str,
                            environ: Mapping[str, str]) -> PrincipalType:
    """`access.deployerPrincipalType`; absent, `ServicePrincipal` when ARM_CLIENT_ID or
    AZURE_CLIENT_ID is set (CI), else `User`. Azure refuses a role assignment whose principalType
    does not match the principal (`UnmatchedPrincipalType`), and pulumi-azure-native defaults it to
    `User` (`pulumi_azure_native/authorization/role_assignment.py`)."""
    value = raw.get("deployerPrincipalType")
    if value is None:
        return "ServicePrincipal" if any(environ.get(name) for name in SERVICE_PRINCIPAL_VARIABLES) else "User"
    if value in DEPLOYER_PRINCIPAL_TYPES:
        return value  # type: ignore[no-any-return]
    report.add(f"{key}.deployerPrincipalType",
               f"{report.shown(key, value)} is not allowed; use User (a person after `az login`) or ServicePrincipal "
               "(a service principal or managed identity, as in CI)")
    return "User"


def cluster_admins(report: Report, raw: Mapping[str, Any], key: str) -> tuple[ClusterAdmin, ...]:
    """`access.clusterAdmins: [{objectId, principalType}]`."""
    value = raw.get("clusterAdmins")
    where = f"{key}.clusterAdmins"
    if value is None:
        return ()
    if not isinstance(value, list):
        report.add(where, f"{report.shown(key, value)} is not a list of {{objectId, principalType}}")
        return ()
    admins: list[ClusterAdmin] = []
    for index, item in enumerate(value):
        at = f"{where}[{index}]"
        item = _mapping(report, item, at, ("objectId", "principalType"))
        object_id, principal_type = item.get("objectId"), item.get("principalType")
        ok = True
        if not isinstance(object_id, str) or not OBJECT_ID.fullmatch(object_id):
            report.add(f"{at}.objectId", f"{'missing' if object_id is None else report.shown(key, object_id)}: "
                                         "an Entra ID object ID (a GUID, e.g. from `az ad group show -g NAME --query id`)")
            ok = False
        if principal_type not in ADMIN_PRINCIPAL_TYPES:
            report.add(f"{at}.principalType", f"{'missing' if principal_type is None else report.shown(key, principal_type)}"
                                              f": one of {', '.join(ADMIN_PRINCIPAL_TYPES)} (Azure refuses a role "
                                              "assignment whose type does not match the principal)")
            ok = False
        if ok:
            admin = ClusterAdmin(object_id.lower(), principal_type)
            if admin in admins:
                report.add(at, f"{object_id} is listed twice")
            else:
                admins.append(admin)
    return tuple(admins)


def _network(value: str) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value, strict=True)
    except ValueError:
        return None


def _cidr(report: Report, raw: Mapping[str, Any], name: str, key: str, default: str | None) -> str | None:
    value = raw.get(name)
    if value is None:
        return default
    where = f"{key}.{name}"
    if not isinstance(value, str) or not CIDR_PATTERN.fullmatch(value) or "/" not in value:
        report.add(where, f"{report.shown(key, value)} is not an IPv4 CIDR like {default or '10.244.0.0/16'} (the "
                          f"API {API_VERSION} pattern, with a prefix length)")
        return default
    network = _network(value)
    if network is None:
        report.add(where, f"{report.shown(key, value)} is not a network address: the bits after the prefix must be 0 "
                          f"(e.g. {ipaddress.IPv4Interface(value).network if _interface(value) else '10.0.0.0/16'})")
        return default
    for reserved in RESERVED_CIDRS:
        if network.overlaps(ipaddress.IPv4Network(reserved)):
            report.add(where, f"{value} overlaps {reserved}, which AKS reserves (learn.microsoft.com/azure/aks/"
                              "azure-cni-overlay, IP address planning)")
            return default
    return value


def _interface(value: str) -> bool:
    try:
        ipaddress.IPv4Interface(value)
        return True
    except ValueError:
        return False


def network_settings(report: Report, raw: Any, key: str) -> NetworkSettings:
    """`cluster.networkProfile`, checked as AKS checks it: enums of 2025-09-01, CIDR syntax, the DNS
    service IP inside the service CIDR (and not its first address), no overlap between pod and
    service CIDRs, and the combinations AKS refuses."""
    report = _Counted(report)
    raw = _mapping(report, raw, key, NETWORK_KEYS)
    defaults = NetworkSettings()
    plugin = _choice(report, raw, "networkPlugin", key, NETWORK_PLUGINS, defaults.plugin)
    mode_value = raw.get("networkPluginMode", defaults.plugin_mode if plugin == "azure" else None)
    mode = None if mode_value is None else _choice(report, {"networkPluginMode": mode_value}, "networkPluginMode", key,
                                                   NETWORK_PLUGIN_MODES, None)
    dataplane = _choice(report, raw, "networkDataplane", key, NETWORK_DATAPLANES,
                        defaults.dataplane if plugin == "azure" else "azure")
    policy = _choice(report, raw, "networkPolicy", key, NETWORK_POLICIES,
                     defaults.policy if dataplane == "cilium" else "none")
    outbound = _choice(report, raw, "outboundType", key, OUTBOUND_TYPES, defaults.outbound_type)
    overlay_or_kubenet = mode == "overlay" or plugin == "kubenet"
    pod_cidr = _cidr(report, raw, "podCidr", key, defaults.pod_cidr if overlay_or_kubenet else None)
    service_cidr = _cidr(report, raw, "serviceCidr", key, defaults.service_cidr) or defaults.service_cidr
    dns_ip = raw.get("dnsServiceIP", defaults.dns_service_ip if "serviceCidr" not in raw else None)
    where = f"{key}.dnsServiceIP"
    if dns_ip is None:
        report.add(where, f"missing: with serviceCidr set, set dnsServiceIP to an address inside it (AKS uses the "
                          f"tenth, e.g. {_tenth(service_cidr)})")
        dns_ip = defaults.dns_service_ip
    elif not isinstance(dns_ip, str) or not IP_PATTERN.fullmatch(dns_ip):
        report.add(where, f"{report.shown(key, dns_ip)} is not an IPv4 address")
        dns_ip = defaults.dns_service_ip
    elif "serviceCidr" in raw or "dnsServiceIP" in raw:
        service = _network(service_cidr)
        address = ipaddress.IPv4Address(dns_ip)
        if service is not None and (address not in service or address == service.network_address
                                    or address == service.broadcast_address):
            report.add(where, f"{dns_ip} is not a usable address inside serviceCidr {service_cidr}; the REST model: "
                              f"\"It must be within the Kubernetes service address range\" (e.g. {_tenth(service_cidr)})")
    if pod_cidr and service_cidr:
        pods, services = _network(pod_cidr), _network(service_cidr)
        if pods is not None and services is not None and pods.overlaps(services):
            report.add(f"{key}.podCidr", f"{pod_cidr} overlaps serviceCidr {service_cidr}; pods and services need "
                                         "separate ranges")
    if report.count == 0:
        # Combinations, only when every field read cleanly (no knock-on errors).
        if "podCidr" in raw and not overlay_or_kubenet:
            report.add(f"{key}.podCidr", "is only used by Azure CNI Overlay (networkPluginMode: overlay) or kubenet; "
                                         "Azure CNI without overlay gives pods subnet addresses")
        if mode == "overlay" and plugin != "azure":
            report.add(f"{key}.networkPluginMode", f"overlay needs networkPlugin: azure, not {plugin}")
        if dataplane == "cilium" and plugin != "azure":
            report.add(f"{key}.networkDataplane", f"cilium needs networkPlugin: azure (Azure CNI powered by Cilium), "
                                                  f"not {plugin}")
        if policy == "cilium" and dataplane != "cilium":
            report.add(f"{key}.networkPolicy", "cilium needs networkDataplane: cilium")
        if dataplane == "cilium" and policy not in ("cilium", "none"):
            report.add(f"{key}.networkPolicy", f"{policy} cannot run with networkDataplane: cilium, which enforces "
                                               "policy itself; use cilium (or none)")
        if outbound in ("userDefinedRouting", "userAssignedNATGateway", "none"):
            report.add(f"{key}.outboundType", f"{outbound} needs the cluster in your own subnet (vnetSubnetID), which "
                                              "gpu-aks does not create; use loadBalancer or managedNATGateway")
    return NetworkSettings(plugin, mode, dataplane, policy, pod_cidr, service_cidr, dns_ip, outbound)


def _tenth(cidr: str) -> str:
    network = _network(cidr)
    return str(network.network_address + 10) if network is not None and network.num_addresses > 11 else "10.0.0.10"


def api_server_settings(report: Report, raw: Any, key: str) -> ApiServerAccessSettings:
    """`cluster.apiServerAccessProfile`: authorized IP ranges (CIDRs or single addresses) or a
    private cluster."""
    raw = _mapping(report, raw, key, API_SERVER_KEYS)
    private = _bool(report, raw, "enablePrivateCluster", key, False)
    value = raw.get("authorizedIPRanges")
    ranges: list[str] = []
    where = f"{key}.authorizedIPRanges"
    if value is not None:
        if not isinstance(value, list):
            report.add(where, f"{report.shown(key, value)} is not a list of CIDRs like 203.0.113.0/24")
        elif len(value) > MAX_AUTHORIZED_RANGES:
            report.add(where, f"has {len(value)} ranges; AKS allows at most {MAX_AUTHORIZED_RANGES}")
        else:
            for index, item in enumerate(value):
                if not isinstance(item, str) or not CIDR_PATTERN.fullmatch(item) or not _interface(item):
                    report.add(f"{where}[{index}]", f"{report.shown(key, item)} is not an IPv4 address or CIDR like "
                                                    "203.0.113.0/24")
                    continue
                if _network(item) is None:
                    report.add(f"{where}[{index}]", f"{item} has bits set after the prefix; write "
                                                    f"{ipaddress.IPv4Interface(item).network}")
                    continue
                if item in ("0.0.0.0/0",):
                    report.add(f"{where}[{index}]", "0.0.0.0/0 authorizes every address, which is no restriction; "
                                                    "list your ranges or leave the key out")
                    continue
                ranges.append(item)
    if private and ranges:
        report.add(where, "is not used by a private cluster (enablePrivateCluster: true), whose API server has no "
                          "public address; remove one of the two")
    return ApiServerAccessSettings(tuple(ranges), private)


def _date(report: Report, value: Any, where: str) -> date | None:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    report.add(where, f"{report.shown(where, value)} is not a date like 2026-12-24 (quote it in YAML)")
    return None


def maintenance_window(report: Report, raw: Any, key: str, default: MaintenanceWindowSettings) -> MaintenanceWindowSettings:
    raw = _mapping(report, raw, key, WINDOW_KEYS)
    day = _choice(report, raw, "dayOfWeek", key, WEEK_DAYS, default.day_of_week)
    start_time = raw.get("startTime", default.start_time)
    if not isinstance(start_time, str) or not START_TIME_PATTERN.fullmatch(start_time) or \
            int(start_time[:2]) > 23 or int(start_time[3:]) > 59:
        report.add(f"{key}.startTime", f"{report.shown(key, start_time)} is not a time from \"00:00\" to \"23:59\" "
                                       "(quote it in YAML)")
        start_time = default.start_time
    hours = _whole(report, raw, "durationHours", key, MAINTENANCE_DURATION_RANGE, default.duration_hours)
    offset = raw.get("utcOffset", default.utc_offset)
    if not isinstance(offset, str) or not UTC_OFFSET_PATTERN.fullmatch(offset) or int(offset[1:3]) > 14 or \
            int(offset[4:]) > 59:
        report.add(f"{key}.utcOffset", f"{report.shown(key, offset)} is not a UTC offset like \"+00:00\" or \"-07:00\" "
                                       "(quote it in YAML)")
        offset = default.utc_offset
    weeks = _whole(report, raw, "intervalWeeks", key, INTERVAL_WEEKS_RANGE, default.interval_weeks)
    start_date = None if raw.get("startDate") is None else _date(report, raw["startDate"], f"{key}.startDate")
    spans: list[tuple[date, date]] = []
    value = raw.get("notAllowedDates")
    if value is not None and not isinstance(value, list):
        report.add(f"{key}.notAllowedDates", f"{report.shown(key, value)} is not a list of {{start, end}} dates")
    for index, item in enumerate(value if isinstance(value, list) else []):
        at = f"{key}.notAllowedDates[{index}]"
        item = _mapping(report, item, at, ("start", "end"))
        if "start" not in item or "end" not in item:
            report.add(at, "needs both start and end dates, e.g. {start: \"2026-12-20\", end: \"2027-01-04\"}")
            continue
        start, end = _date(report, item["start"], f"{at}.start"), _date(report, item["end"], f"{at}.end")
        if start and end:
            if end < start:
                report.add(f"{at}.end", f"{end} is before start {start}")
            else:
                spans.append((start, end))
    return MaintenanceWindowSettings(day, start_time, hours or default.duration_hours, offset,
                                     weeks or default.interval_weeks, start_date, tuple(spans))


def maintenance_settings(report: Report, raw: Any, key: str = "maintenance") -> MaintenanceSettings:
    raw = _mapping(report, raw, key, MAINTENANCE_KEYS)
    defaults = MaintenanceSettings()
    return MaintenanceSettings(
        auto_upgrade=maintenance_window(report, raw.get("autoUpgrade"), f"{key}.autoUpgrade", defaults.auto_upgrade),
        node_os_upgrade=maintenance_window(report, raw.get("nodeOSUpgrade"), f"{key}.nodeOSUpgrade",
                                           defaults.node_os_upgrade))


_SURGE = re.compile(r"[1-9][0-9]*%?")
_UNAVAILABLE = re.compile(r"[0-9]+%?")


def pool_upgrade_settings(report: Report, raw: Mapping[str, Any], key: str, spot: bool | None,
                          default: PoolUpgradeSettings) -> PoolUpgradeSettings:
    """A pool's `upgradeSettings` keys (`maxSurge`, `maxUnavailable`, `drainTimeoutInMinutes`,
    `nodeSoakDurationInMinutes`, `undrainableNodeBehavior`). On a Spot pool each is refused (AKS does
    not use them there); `spot` None means the priority itself was wrong, so nothing more is said."""
    present = [name for name in UPGRADE_KEYS if raw.get(name) is not None]
    if spot:
        for name in present:
            report.add(f"{key}.{name}", SPOT_UPGRADE_REASON)
        return PoolUpgradeSettings()
    if spot is None:
        return default

    def text(name: str, pattern: re.Pattern[str], example: str, fallback: str | None) -> str | None:
        value = raw.get(name)
        if value is None:
            return fallback
        as_text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
        if not pattern.fullmatch(as_text):
            report.add(f"{key}.{name}", f"{report.shown(key, value)} must be a node count or a percentage, e.g. "
                                        f"{example}")
            return fallback
        return as_text

    return PoolUpgradeSettings(
        max_surge=text("maxSurge", _SURGE, "1 or 33%", default.max_surge),
        max_unavailable=text("maxUnavailable", _UNAVAILABLE, "0 or 1", default.max_unavailable),
        drain_timeout_minutes=_whole(report, raw, "drainTimeoutInMinutes", key, DRAIN_TIMEOUT_RANGE,
                                     default.drain_timeout_minutes),
        node_soak_minutes=_whole(report, raw, "nodeSoakDurationInMinutes", key, NODE_SOAK_RANGE,
                                 default.node_soak_minutes),
        undrainable_node_behavior=_choice(report, raw, "undrainableNodeBehavior", key, UNDRAINABLE_NODE_BEHAVIORS,
                                          default.undrainable_node_behavior),
    )


# --- Warnings and cross-section checks ---------------------------------------------------------------

#: Azure/AKS#5161 (open): the cluster autoscaler assumes `nvidia.com/gpu` and one GPU per node for
#: MIG pools, so a MIG pool at zero nodes is not scaled up for pods asking for `nvidia.com/mig-*`.
MIG_AUTOSCALER_ISSUE = "Azure/AKS#5161"


def mig_scale_from_zero(pool_key: str, min_count: int, mig: bool, strategy: str) -> tuple[str | None, str | None]:
    """(problem, warning) for a MIG pool that can scale to zero under the device plugin's strategy."""
    if not mig or min_count > 0:
        return None, None
    if strategy == "mixed":
        return (f"0 on a MIG pool under devicePlugin.migStrategy: mixed: the cluster autoscaler never scales it up for "
                f"pods asking for nvidia.com/mig-* ({MIG_AUTOSCALER_ISSUE}); set minCount: 1 or use migStrategy: single"), None
    return None, (f"{pool_key}.minCount: 0 on a MIG pool: the cluster autoscaler assumes one nvidia.com/gpu per node "
                  f"for MIG pools ({MIG_AUTOSCALER_ISSUE}), so scale-up from zero may under-count the slices; keep "
                  "minCount: 1 where that matters")


def api_server_warning(api_server: ApiServerAccessSettings, key: str) -> str | None:
    if not api_server.open_to_internet:
        return None
    return (f"{key}.apiServerAccessProfile: neither authorizedIPRanges nor enablePrivateCluster is set, so the "
            "Kubernetes API server accepts connections from any address (Azure AD still authenticates them); set "
            f"{key}.apiServerAccessProfile.authorizedIPRanges (docs/platform.md, \"API server access\")")


# --- Network changes on an existing cluster ------------------------------------------------------------


def network_record(network: NetworkSettings) -> dict[str, Any]:
    """The network as a stack output (`clusterNetwork`), in the API's names, for the next run."""
    return {"networkPlugin": network.plugin, "networkPluginMode": network.plugin_mode,
            "networkDataplane": network.dataplane, "networkPolicy": network.policy, "podCidr": network.pod_cidr,
            "serviceCidr": network.service_cidr, "dnsServiceIP": network.dns_service_ip,
            "outboundType": network.outbound_type}


#: In-place network changes AKS performs (`az aks update`), from -> to; every other change to these
#: keys is refused by the API. Sources: learn.microsoft.com/azure/aks/upgrade-azure-cni ("Upgrade
#: Azure CNI": kubenet -> Azure CNI Overlay, Azure CNI node subnet -> Overlay; no way back) and
#: learn.microsoft.com/azure/aks/azure-cni-powered-by-cilium ("Upgrade an existing cluster to Azure
#: CNI Powered by Cilium": dataplane azure -> cilium, which also sets the cilium network policy;
#: "you can't downgrade").
NETWORK_UPGRADES: Mapping[str, frozenset[tuple[Any, Any]]] = {
    "networkPlugin": frozenset({("kubenet", "azure")}),
    "networkPluginMode": frozenset({(None, "overlay")}),
    "networkDataplane": frozenset({("azure", "cilium")}),
    "networkPolicy": frozenset({("none", "cilium"), ("azure", "cilium"), ("calico", "cilium"), (None, "cilium")}),
}
#: Fixed at creation: the REST model says of `outboundType` "This can only be set at cluster creation
#: time and cannot be changed later"; the service CIDR, DNS service IP and pod CIDR have no update path.
NETWORK_FIXED = ("serviceCidr", "dnsServiceIP", "podCidr", "outboundType")


def network_change_problems(previous: Any, current: Mapping[str, Any]) -> list[str]:
    """Why AKS would refuse to move an existing cluster from `previous` (this stack's last
    `clusterNetwork` output; None before the first deploy) to `current`."""
    if not isinstance(previous, Mapping):
        return []
    problems = []
    for key in (*NETWORK_UPGRADES, *NETWORK_FIXED):
        old, new = previous.get(key), current.get(key)
        if key not in previous or old == new:
            continue
        if (old, new) in NETWORK_UPGRADES.get(key, frozenset()):
            continue
        how = ("it is fixed when the cluster is created" if key in NETWORK_FIXED else
               "AKS upgrades it in place only " + ", ".join(f"{a} -> {b}" for a, b in sorted(
                   NETWORK_UPGRADES[key], key=str)))
        problems.append(f"gpu-aks:cluster.networkProfile.{key}: the cluster has {old!r}, the config says {new!r}; "
                        f"{how}. Put {old!r} back, or create a new cluster (a new stack) and move the workloads")
    return problems
