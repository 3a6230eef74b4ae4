"""The production platform's settings: access, network, API server, maintenance and pool upgrades:
frozen dataclasses, and their config keys declared on the settings engine (`policies/declarations.py`),
one declaration per key, each checked against the AKS API version this program sends
(`components/aks_api.py`). The other sections of this package place these declarations among their
own items; `docs/configuration.md` is generated from them. No Pulumi imports.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from gpu_aks_policies.declarations import MISSING, Check, Default, Key, Reader, Section, boolean, describe, is_whole_number, text

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
    PRIVATE_DNS_ZONE_MODES,
    PRIVATE_DNS_ZONE_NAME_RE,
    RESERVED_CIDRS,
    RESOURCE_ID_FORMS,
    START_TIME_PATTERN,
    UNDRAINABLE_NODE_BEHAVIORS,
    UTC_OFFSET_PATTERN,
    WEEK_DAYS,
    os_sku_problem,
    parse_resource_id,
)
from components.azure_catalog import cpu_vm_size_problem, region_check

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
#: `maxUnavailable`: a node count (0 allowed) or a percentage.
_UNAVAILABLE = re.compile(r"[0-9]+%?")

UPGRADE_KEYS = ("maxSurge", "maxUnavailable", "drainTimeoutInMinutes", "nodeSoakDurationInMinutes",
                "undrainableNodeBehavior")


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
    #: `privateDNSZone` of a private cluster: `system`, `none` or your zone's resource ID; None leaves
    #: AKS's default (`system`).
    private_dns_zone: str | None = None

    @property
    def own_private_dns_zone(self) -> str | None:
        """The resource ID of your own private DNS zone, when the cluster uses one."""
        return self.private_dns_zone if self.private_dns_zone not in (None, *PRIVATE_DNS_ZONE_MODES) else None

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


#: GPU pools: let a drain wait an hour on PodDisruptionBudgets (AKS's default is 30 minutes), soak 5
#: minutes between nodes (AgentPoolUpgradeSettings; learn.microsoft.com/azure/aks/upgrade-aks-node-pools-rolling).
#: A node still undrainable after that fails the upgrade under either `undrainableNodeBehavior`
#: (Microsoft's enum text, azure-mgmt-containerservice 40.1.0 `UndrainableNodeBehavior`, API 2025-09-01).
#: `Cordon` (gpu-aks 0.3.1's GPU default) would also keep one surge GPU node per blocked node, billed,
#: beside the quarantined one until someone acts: two GPU VMs for one job. GPU pools therefore write
#: AKS's own default, `Schedule`, explicitly: the job keeps running on its node, the surge nodes go,
#: and the failed upgrade is retried once the job is done (docs/platform.md, "Pools during an upgrade").
GPU_POOL_UPGRADE = PoolUpgradeSettings(max_surge="33%", drain_timeout_minutes=60, node_soak_minutes=5,
                                       undrainable_node_behavior="Schedule")
CPU_POOL_UPGRADE = PoolUpgradeSettings(max_surge="33%")
#: "When you upgrade a Spot node pool, AKS internally issues a cordon and an eviction notice, but no
#: drain is applied. There are no surge nodes available for Spot node pool upgrades"
#: (learn.microsoft.com/azure/aks/spot-node-pool, "Upgrade a Spot node pool").
SPOT_UPGRADE_REASON = ("is not used on a Spot pool: AKS upgrades Spot pools without surge nodes or a drain (it "
                       "cordons and sends an eviction notice; learn.microsoft.com/azure/aks/spot-node-pool), so "
                       "remove it")


# --- Declarations (policies/declarations.py: one per key; docs/configuration.md derives from them) ---

_CLUSTER_MODEL = f"ManagedCluster (API {API_VERSION})"
_POOL_MODEL = f"AgentPool (API {API_VERSION})"
_MAINTENANCE_MODEL = f"MaintenanceConfiguration (API {API_VERSION})"


def _api_choice(allowed: Sequence[str]) -> Callable[[Any], str | None]:
    return lambda value: None if isinstance(value, str) and value in allowed else \
        f"is not allowed; AKS API {API_VERSION} takes {', '.join(allowed)}"


def _whole_in(bounds: tuple[int, int]) -> Callable[[Any], str | None]:
    return lambda value: None if is_whole_number(value) and bounds[0] <= value <= bounds[1] else \
        f"is not allowed; AKS API {API_VERSION} takes a whole number from {bounds[0]} to {bounds[1]}"


def api_choice(name: str, doc: str, allowed: Sequence[str], default: Any, **kwargs: Any) -> Key:
    return Key(name, doc, "string", default, check=_api_choice(allowed), allowed=tuple(allowed), **kwargs)


# --- access ---


def _deployer_type_default(reader: Reader) -> PrincipalType:
    environ: Mapping[str, str] = getattr(reader.context, "environ", {}) or {}
    return "ServicePrincipal" if any(environ.get(name) for name in SERVICE_PRINCIPAL_VARIABLES) else "User"


DEPLOYER_PRINCIPAL_TYPE = Key(
    "deployerPrincipalType", "The deployer's `principalType` on its role assignment: `User` (a person after `az "
    "login`) or `ServicePrincipal` (a service principal or managed identity, as in CI). Azure refuses a mismatch "
    "(`UnmatchedPrincipalType`).", "string",
    Default(_deployer_type_default, "ServicePrincipal when ARM_CLIENT_ID or AZURE_CLIENT_ID is set, else User"),
    check=lambda value: None if value in DEPLOYER_PRINCIPAL_TYPES else
    "is not allowed; use User (a person after `az login`) or ServicePrincipal (a service principal or managed "
    "identity, as in CI)", allowed=DEPLOYER_PRINCIPAL_TYPES, attr="deployer_principal_type",
    source="RoleAssignment principalType (azure-mgmt-authorization PrincipalType)")


def _cluster_admins(reader: Reader, value: Any) -> tuple[ClusterAdmin, ...]:
    if value is MISSING or value is None:
        return ()
    if not isinstance(value, list):
        reader.problem("clusterAdmins", f"{reader.shown(value)} is not a list of {{objectId, principalType}}")
        return ()
    admins: list[ClusterAdmin] = []
    for index, item in enumerate(value):
        at = f"clusterAdmins[{index}]"
        item = reader.problems.mapping(item, reader.path(at))
        reader.problems.unknown_keys(item, reader.path(at), ("objectId", "principalType"))
        object_id, principal_type = item.get("objectId"), item.get("principalType")
        if not isinstance(object_id, str) or not OBJECT_ID.fullmatch(object_id):
            reader.problem(f"{at}.objectId", f"{'missing' if object_id is None else reader.shown(object_id)}: an Entra "
                                             "ID object ID (a GUID, e.g. from `az ad group show -g NAME --query id`)")
            continue
        if principal_type not in ADMIN_PRINCIPAL_TYPES:
            reader.problem(f"{at}.principalType", f"{'missing' if principal_type is None else reader.shown(principal_type)}"
                                                  f": one of {', '.join(ADMIN_PRINCIPAL_TYPES)} (Azure refuses a role "
                                                  "assignment whose type does not match the principal)")
            continue
        admin = ClusterAdmin(object_id.lower(), principal_type)
        if admin in admins:
            reader.problem(at, f"{object_id} is listed twice")
        else:
            admins.append(admin)
    return tuple(admins)


CLUSTER_ADMINS = Key(
    "clusterAdmins", "Principals granted \"Azure Kubernetes Service RBAC Cluster Admin\" explicitly, whoever deploys: "
    "a list of `{objectId, principalType}` (`User`, `Group` or `ServicePrincipal`).", "object", (),
    parse=_cluster_admins, attr="cluster_admins", source="RoleAssignment principalId/principalType")


def _admins_need_azure_rbac(reader: Reader) -> None:
    cluster = reader.root.children["cluster"]
    if reader.get("clusterAdmins") and not (cluster.get("aadProfile.managed") and
                                            cluster.get("aadProfile.enableAzureRBAC")):
        reader.problem("clusterAdmins", "needs cluster.aadProfile.managed and enableAzureRBAC: true; the role grants "
                                        "Kubernetes rights only through Azure RBAC for Kubernetes")


ADMINS_NEED_AZURE_RBAC = Check(_admins_need_azure_rbac, reads=("clusterAdmins",),
                               doc="`clusterAdmins` need Azure RBAC for Kubernetes (`cluster.aadProfile`).")


# --- cluster.networkProfile ---


def _cidr_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not CIDR_PATTERN.fullmatch(value) or "/" not in value:
        return f"is not an IPv4 CIDR like 10.244.0.0/16 (the API {API_VERSION} pattern, with a prefix length)"
    network = _network(value)
    if network is None:
        fixed = ipaddress.IPv4Interface(value).network if _interface(value) else "10.0.0.0/16"
        return f"is not a network address: the bits after the prefix must be 0 (e.g. {fixed})"
    for reserved in RESERVED_CIDRS:
        if network.overlaps(ipaddress.IPv4Network(reserved)):
            return (f"overlaps {reserved}, which AKS reserves (learn.microsoft.com/azure/aks/azure-cni-overlay, IP "
                    "address planning)")
    return None


def _ip_problem(value: Any) -> str | None:
    return None if isinstance(value, str) and IP_PATTERN.fullmatch(value) else "is not an IPv4 address"


def _network(value: str | None) -> ipaddress.IPv4Network | None:
    try:
        return ipaddress.IPv4Network(value, strict=True) if value else None
    except ValueError:
        return None


def _interface(value: str) -> bool:
    try:
        ipaddress.IPv4Interface(value)
        return True
    except ValueError:
        return False


def tenth_address(cidr: str | None) -> str:
    """The address AKS gives the DNS service in a service CIDR: the tenth (10.0.0.10 in 10.0.0.0/16)."""
    network = _network(cidr)
    return str(network.network_address + 10) if network is not None and network.num_addresses > 11 else DEFAULT_DNS_SERVICE_IP


def pools_name_pod_subnets(raw_root: Mapping[str, Any]) -> bool:
    """Whether any pool in the raw config names a `podSubnetID` (read before the pools are parsed, for
    the network plugin mode's default)."""
    pools = [raw_root.get("systemPool")]
    for list_key in ("cpuPools", "gpuPools"):
        listed = raw_root.get(list_key)
        pools += listed if isinstance(listed, list) else []
    return any(isinstance(pool, Mapping) and pool.get("podSubnetID") for pool in pools)


def _default_plugin_mode(reader: Reader) -> str | None:
    """Overlay with Azure CNI, except where the pools name pod subnets: those are Azure CNI with dynamic
    pod IP allocation, which is not Overlay (docs/network.md)."""
    if reader.get("networkPlugin") != "azure" or pools_name_pod_subnets(reader.root.raw):
        return None
    return "overlay"


def _overlay_or_kubenet(reader: Reader) -> bool:
    return reader.get("networkPluginMode") == "overlay" or reader.get("networkPlugin") == "kubenet"


def _dns_inside_service_cidr(reader: Reader) -> None:
    service_cidr, dns_ip = reader.get("serviceCidr"), reader.get("dnsServiceIP")
    service, address = _network(service_cidr), ipaddress.IPv4Address(dns_ip)
    if service is not None and (address not in service or address in (service.network_address,
                                                                      service.broadcast_address)):
        reader.problem("dnsServiceIP", f"{dns_ip} is not a usable address inside serviceCidr {service_cidr}; the REST "
                                       "model: \"It must be within the Kubernetes service address range\" (e.g. "
                                       f"{tenth_address(service_cidr)})")


def _pods_and_services_apart(reader: Reader) -> None:
    pods, services = _network(reader.get("podCidr")), _network(reader.get("serviceCidr"))
    if pods is not None and services is not None and pods.overlaps(services):
        reader.problem("podCidr", f"{pods} overlaps serviceCidr {services}; pods and services need separate ranges")


def _network_combinations(reader: Reader) -> None:
    plugin, mode = reader.get("networkPlugin"), reader.get("networkPluginMode")
    dataplane, policy = reader.get("networkDataplane"), reader.get("networkPolicy")
    if "podCidr" in reader.raw and not _overlay_or_kubenet(reader):
        reader.problem("podCidr", "is only used by Azure CNI Overlay (networkPluginMode: overlay) or kubenet; Azure "
                                  "CNI without overlay gives pods subnet addresses")
    if mode == "overlay" and plugin != "azure":
        reader.problem("networkPluginMode", f"overlay needs networkPlugin: azure, not {plugin}")
    if dataplane == "cilium" and plugin != "azure":
        reader.problem("networkDataplane", f"cilium needs networkPlugin: azure (Azure CNI powered by Cilium), not {plugin}")
    if policy == "cilium" and dataplane != "cilium":
        reader.problem("networkPolicy", "cilium needs networkDataplane: cilium")
    elif dataplane == "cilium" and policy not in ("cilium", "none"):
        reader.problem("networkPolicy", f"{policy} cannot run with networkDataplane: cilium, which enforces policy "
                                        "itself; use cilium (or none)")


_NETWORK_KEYS_READ = ("networkPlugin", "networkPluginMode", "networkDataplane", "networkPolicy", "podCidr")
NETWORK_PROFILE = Section(
    "networkProfile", "The cluster network, stated in full: Azure CNI Overlay with the Cilium dataplane and Cilium "
    "network policy by default (AKS's recommendation). Fixed at creation except the in-place upgrades AKS offers; "
    "a change AKS would refuse is refused at preview (docs/platform.md, \"Network\").", (
        api_choice("networkPlugin", "The CNI plugin.", NETWORK_PLUGINS, "azure", attr="plugin",
                   source=f"{_CLUSTER_MODEL} networkProfile.networkPlugin"),
        api_choice("networkPluginMode", "`overlay`: pods get addresses from podCidr, not the subnet.",
                   NETWORK_PLUGIN_MODES, Default(_default_plugin_mode, "overlay with networkPlugin azure, unless the "
                                                                       "pools name podSubnetID"),
                   attr="plugin_mode", source=f"{_CLUSTER_MODEL} networkProfile.networkPluginMode"),
        api_choice("networkDataplane", "The dataplane (`cilium`: eBPF, Azure CNI powered by Cilium).",
                   NETWORK_DATAPLANES, Default(lambda r: "cilium" if r.get("networkPlugin") == "azure" else "azure",
                                               "cilium with networkPlugin azure"),
                   attr="dataplane", source=f"{_CLUSTER_MODEL} networkProfile.networkDataplane"),
        api_choice("networkPolicy", "The network-policy engine.", NETWORK_POLICIES,
                   Default(lambda r: "cilium" if r.get("networkDataplane") == "cilium" else "none",
                           "cilium with the cilium dataplane, else none"),
                   attr="policy", source=f"{_CLUSTER_MODEL} networkProfile.networkPolicy"),
        api_choice("outboundType", "Egress: `loadBalancer`, `managedNATGateway`, or with the pools in your subnets "
                   "`userDefinedRouting` (through your firewall), `userAssignedNATGateway` or `none`.",
                   OUTBOUND_TYPES, "loadBalancer", attr="outbound_type",
                   source=f"{_CLUSTER_MODEL} networkProfile.outboundType (create-only)"),
        Key("podCidr", "Pod addresses (Overlay or kubenet).", "string",
            Default(lambda r: DEFAULT_POD_CIDR if _overlay_or_kubenet(r) else None, DEFAULT_POD_CIDR),
            check=_cidr_problem, attr="pod_cidr", source=f"{_CLUSTER_MODEL} networkProfile.podCidr pattern"),
        Key("serviceCidr", "Kubernetes service addresses.", "string", DEFAULT_SERVICE_CIDR, check=_cidr_problem,
            attr="service_cidr", source=f"{_CLUSTER_MODEL} networkProfile.serviceCidr pattern"),
        Key("dnsServiceIP", "The cluster DNS service's address, inside serviceCidr.", "string",
            Default(lambda r: tenth_address(r.get("serviceCidr")), "the tenth address of serviceCidr (10.0.0.10)"),
            check=_ip_problem, attr="dns_service_ip", source=f"{_CLUSTER_MODEL} networkProfile.dnsServiceIP"),
        Check(_dns_inside_service_cidr, reads=("serviceCidr", "dnsServiceIP"),
              doc="`dnsServiceIP` is a usable address inside `serviceCidr`."),
        Check(_pods_and_services_apart, reads=("podCidr", "serviceCidr"),
              doc="`podCidr` and `serviceCidr` do not overlap."),
        Check(_network_combinations, reads=_NETWORK_KEYS_READ,
              doc="Overlay and Cilium need Azure CNI; Cilium policy needs the Cilium dataplane."),
    ), cls=NetworkSettings, source=f"{_CLUSTER_MODEL} networkProfile (ContainerServiceNetworkProfile)",
    listed=("networkPlugin", "networkPluginMode", "networkDataplane", "networkPolicy", "podCidr", "serviceCidr",
            "dnsServiceIP", "outboundType"))


# --- cluster.apiServerAccessProfile ---


def _authorized_ranges(reader: Reader, value: Any) -> tuple[str, ...]:
    if value is MISSING or value is None:
        return ()
    name = "authorizedIPRanges"
    if not isinstance(value, list):
        reader.problem(name, f"{reader.shown(value)} is not a list of CIDRs like 203.0.113.0/24")
        return ()
    if len(value) > MAX_AUTHORIZED_RANGES:
        reader.problem(name, f"has {len(value)} ranges; AKS allows at most {MAX_AUTHORIZED_RANGES}")
        return ()
    ranges = []
    for index, item in enumerate(value):
        at = f"{name}[{index}]"
        if not isinstance(item, str) or not CIDR_PATTERN.fullmatch(item) or not _interface(item):
            reader.problem(at, f"{reader.shown(item)} is not an IPv4 address or CIDR like 203.0.113.0/24")
        elif _network(item) is None:
            reader.problem(at, f"{item} has bits set after the prefix; write {ipaddress.IPv4Interface(item).network}")
        elif _network(item) == ipaddress.IPv4Network("0.0.0.0/0"):
            reader.problem(at, "0.0.0.0/0 authorizes every address, which is no restriction; list your ranges or leave "
                               "the key out")
        else:
            ranges.append(item)
    return tuple(ranges)


def _private_dns_zone_problem(value: Any) -> str | None:
    if value in PRIVATE_DNS_ZONE_MODES:
        return None
    zone = parse_resource_id("privateDnsZone", value)
    if zone is None:
        return (f"is not allowed; AKS API {API_VERSION} takes {', '.join(PRIVATE_DNS_ZONE_MODES)} or your private DNS "
                f"zone's resource ID ({RESOURCE_ID_FORMS['privateDnsZone'][1]})")
    if not PRIVATE_DNS_ZONE_NAME_RE.fullmatch(zone.name):
        return (f"names zone {zone.name!r}; AKS takes privatelink.<region>.azmk8s.io or <subzone>.privatelink.<region>."
                "azmk8s.io (learn.microsoft.com/azure/aks/private-clusters, \"Configure a private DNS zone\")")
    return None


def _private_dns_zone_fits(reader: Reader) -> None:
    value = reader.get("privateDNSZone")
    if value is None:
        return
    if not reader.get("enablePrivateCluster"):
        reader.problem("privateDNSZone", "is only used by a private cluster; set enablePrivateCluster: true or remove it")
        return
    zone = parse_resource_id("privateDnsZone", value)
    match = PRIVATE_DNS_ZONE_NAME_RE.fullmatch(zone.name) if zone else None
    location = reader.context.location
    if zone and match and isinstance(location, str) and location and match.group("region") != location:
        reader.problem("privateDNSZone", f"names zone {zone.name!r} of region {match.group('region')!r}, but the "
                                         f"cluster is in {location!r} (azure-native:location); AKS needs the cluster's "
                                         "region in the zone name")


def _private_or_ranges(reader: Reader) -> None:
    if reader.get("enablePrivateCluster") and reader.get("authorizedIPRanges"):
        reader.problem("authorizedIPRanges", "is not used by a private cluster (enablePrivateCluster: true), whose API "
                                             "server has no public address; remove one of the two")


API_SERVER_ACCESS_PROFILE = Section(
    "apiServerAccessProfile", "Who can reach the Kubernetes API server. Without ranges or a private cluster it answers "
    "any address (a warning says so).", (
        Key("authorizedIPRanges", "The only addresses the public API server answers: IPv4 CIDRs or addresses, at most "
            f"{MAX_AUTHORIZED_RANGES}. GitHub-hosted runners have no fixed address (docs/platform.md).",
            "list of strings", [], parse=_authorized_ranges, attr="authorized_ip_ranges",
            source=f"{_CLUSTER_MODEL} apiServerAccessProfile.authorizedIPRanges"),
        boolean("enablePrivateCluster", "No public API server at all.", False, attr="private_cluster",
                source=f"{_CLUSTER_MODEL} apiServerAccessProfile.enablePrivateCluster"),
        Check(_private_or_ranges, reads=("authorizedIPRanges", "enablePrivateCluster"),
              doc="A private cluster takes no authorized ranges."),
        text("privateDNSZone", "A private cluster's DNS zone: `system` (AKS creates one), `none` (public DNS only) or "
             "your own zone's resource ID (needs cluster.identity UserAssigned; gpu-aks grants it Private DNS Zone "
             "Contributor there).", None, check=_private_dns_zone_problem, attr="private_dns_zone",
             source=f"{_CLUSTER_MODEL} apiServerAccessProfile.privateDNSZone"),
        Check(_private_dns_zone_fits, reads=("privateDNSZone", "enablePrivateCluster"),
              doc="`privateDNSZone` only with `enablePrivateCluster: true`; your zone names the cluster's region."),
    ), cls=ApiServerAccessSettings, source=f"{_CLUSTER_MODEL} apiServerAccessProfile")


def warn_open_api_server(reader: Reader) -> None:
    """A cluster check: an API server open to every address gets a warning naming the key."""
    api_server = reader.children["apiServerAccessProfile"].build()
    warning = api_server_warning(api_server)
    if warning:
        reader.warn("apiServerAccessProfile", warning)


PROTECT = boolean("protect", "Pulumi's `protect` on the cluster and its resource group: `pulumi destroy` and "
                  "replacements stop at them.", False, attr="protect", source="Pulumi resource option protect")


def check_region(reader: Reader) -> None:
    """`azure-native:location` is an Azure region name (did-you-mean; unknown but well-formed: a warning)."""
    location = reader.context.location
    if not isinstance(location, str) or not location.strip():
        return
    problem, warning = region_check(location)
    if problem:
        reader.problems.add("azure-native:location", problem)
    if warning:
        reader.problems.warn("azure-native:location", warning)


# --- pools: upgradeSettings ---


def upgrade_keys(default: PoolUpgradeSettings) -> tuple[Key, ...]:
    """`maxUnavailable`, `drainTimeoutInMinutes`, `nodeSoakDurationInMinutes`, `undrainableNodeBehavior` of a
    pool (its `maxSurge` is declared with the pool), with the pool kind's defaults."""
    return (
        Key("maxUnavailable", "Nodes that may be unavailable at once during an upgrade: a count or a percentage.",
            "string", default.max_unavailable, check=lambda v: None if isinstance(v, (str, int)) and not isinstance(
                v, bool) and _UNAVAILABLE.fullmatch(str(v)) else "must be a node count or a percentage, e.g. 0 or 1",
            convert=str, attr="max_unavailable", source=f"{_POOL_MODEL} upgradeSettings.maxUnavailable"),
        Key("drainTimeoutInMinutes", "How long a drain waits on PodDisruptionBudgets before the upgrade gives up on "
            "the node.", "integer", default.drain_timeout_minutes, check=_whole_in(DRAIN_TIMEOUT_RANGE), convert=int,
            attr="drain_timeout_minutes", source=f"{_POOL_MODEL} upgradeSettings.drainTimeoutInMinutes"),
        Key("nodeSoakDurationInMinutes", "Minutes to wait after upgrading a node before the next.", "integer",
            default.node_soak_minutes, check=_whole_in(NODE_SOAK_RANGE), convert=int, attr="node_soak_minutes",
            source=f"{_POOL_MODEL} upgradeSettings.nodeSoakDurationInMinutes"),
        api_choice("undrainableNodeBehavior", "What AKS does with a node whose pods cannot be evicted; either way the "
                   "upgrade and the cluster end failed. `Schedule` (AKS's default): the node is made schedulable again, "
                   "not upgraded, and the surge nodes are deleted. `Cordon`: the node stays cordoned (label "
                   "`kubernetes.azure.com/upgrade-status: Quarantined`) and one surge node per blocked node stays, "
                   "billed, until you act (canceled, not failed, when too few surge nodes exist).",
                   UNDRAINABLE_NODE_BEHAVIORS,
                   default.undrainable_node_behavior, attr="undrainable_node_behavior",
                   source=f"{_POOL_MODEL} upgradeSettings.undrainableNodeBehavior"),
    )


def refuse_upgrade_keys_on_spot(reader: Reader) -> None:
    """Upgrade keys on a Spot pool are refused (AKS does not use them there); runs only when
    `scaleSetPriority` parsed cleanly, so a typo there reports nothing more."""
    if reader.get("scaleSetPriority"):
        for name in UPGRADE_KEYS:
            if reader.raw.get(name) is not None:
                reader.problem(name, SPOT_UPGRADE_REASON)


SPOT_UPGRADE_CHECK = Check(refuse_upgrade_keys_on_spot, reads=("scaleSetPriority",),
                           doc="No upgrade settings on a Spot pool (AKS upgrades Spot pools without surge or drain).")


def os_sku_check(reader: Reader) -> None:
    problem = os_sku_problem(reader.get("osSKU"), reader.root.children["cluster"].get("kubernetesVersion"))
    if problem:
        reader.reject("osSKU", f"{describe(reader.get('osSKU'))}: {problem}")


OS_SKU_CHECK = Check(os_sku_check, reads=("osSKU",), doc="`osSKU` is offered at `cluster.kubernetesVersion` "
                     "(AzureLinux3 and Ubuntu2204 up to 1.36; CBLMariner never).")


def cpu_size_check(reader: Reader) -> None:
    unsold = cpu_vm_size_problem(reader.get("vmSize"))
    if unsold:
        reader.problem("vmSize", f"{describe(reader.get('vmSize'))}: {unsold}")


CPU_SIZE_CHECK = Check(cpu_size_check, reads=("vmSize",), doc="A D/E/F `vmSize` is a series and version Azure sells.")


# --- devicePlugin: MIG pools and the autoscaler ---


def mig_pools_scale_from_zero(reader: Reader) -> None:
    """A devicePlugin check: served MIG pools at minCount 0 (Azure/AKS#5161)."""
    strategy = reader.get("migStrategy")
    pools = {pool["name"]: pool for pool in reader.root.values.get("gpuPools", [])}
    for list_reader in reader.root.lists.get("gpuPools", []):
        pool = list_reader.values
        if pool.get("name") not in pools or not pool.get("gpuInstanceProfile") or not list_reader.ok("minCount"):
            continue
        if reader.get("enabled") and pool["name"] in reader.get("pools"):
            problem, warning = mig_scale_from_zero(pool["minCount"], True, strategy)
            if problem:
                reader.problems.add(f"{list_reader.key}.minCount", problem)
            if warning:
                reader.problems.warn(f"{list_reader.key}.minCount", warning)


MIG_SCALE_FROM_ZERO_CHECK = Check(mig_pools_scale_from_zero, reads=("migStrategy", "pools"),
                                  doc="A served MIG pool keeps `minCount` >= 1 under `mixed` (a warning under "
                                      "`single`): Azure/AKS#5161.")


# --- maintenance ---


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
    source = f"{_MAINTENANCE_MODEL} maintenanceWindow"
    return Section(name, doc, (
        api_choice("dayOfWeek", "The day the window opens.", WEEK_DAYS, default.day_of_week, attr="day_of_week",
                   source=f"{source}.schedule.weekly.dayOfWeek"),
        text("startTime", "When it opens, \"HH:MM\" in utcOffset's time.", default.start_time,
             check=_start_time_problem, attr="start_time", source=f"{source}.startTime"),
        Key("durationHours", "How long it stays open: 4 to 24 hours.", "integer", default.duration_hours,
            check=_whole_in(MAINTENANCE_DURATION_RANGE), convert=int, attr="duration_hours",
            source=f"{source}.durationHours"),
        text("utcOffset", "The window's UTC offset, \"+HH:MM\" or \"-HH:MM\".", default.utc_offset,
             check=_utc_offset_problem, attr="utc_offset", source=f"{source}.utcOffset"),
        Key("intervalWeeks", "Every how many weeks: 1 to 4.", "integer", default.interval_weeks,
            check=_whole_in(INTERVAL_WEEKS_RANGE), convert=int, attr="interval_weeks",
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


# --- Warnings and cross-section checks ---------------------------------------------------------------

#: Azure/AKS#5161 (open): the cluster autoscaler assumes `nvidia.com/gpu` and one GPU per node for
#: MIG pools, so a MIG pool at zero nodes is not scaled up for pods asking for `nvidia.com/mig-*`.
MIG_AUTOSCALER_ISSUE = "Azure/AKS#5161"


def mig_scale_from_zero(min_count: int, mig: bool, strategy: str) -> tuple[str | None, str | None]:
    """(problem, warning) for a MIG pool that can scale to zero under the device plugin's strategy."""
    if not mig or min_count > 0:
        return None, None
    if strategy == "mixed":
        return (f"0 on a MIG pool under devicePlugin.migStrategy: mixed: the cluster autoscaler never scales it up for "
                f"pods asking for nvidia.com/mig-* ({MIG_AUTOSCALER_ISSUE}); set minCount: 1 or use migStrategy: single"), None
    return None, ("0 on a MIG pool: the cluster autoscaler assumes one nvidia.com/gpu per node "
                  f"for MIG pools ({MIG_AUTOSCALER_ISSUE}), so scale-up from zero may under-count the slices; keep "
                  "minCount: 1 where that matters")


def api_server_warning(api_server: ApiServerAccessSettings) -> str | None:
    if not api_server.open_to_internet:
        return None
    return ("neither authorizedIPRanges nor enablePrivateCluster is set, so the Kubernetes API server accepts "
            "connections from any address (Azure AD still authenticates them); set "
            "gpu-aks:cluster.apiServerAccessProfile.authorizedIPRanges (docs/platform.md, \"API server access\")")


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
