"""`gpu-aks:cluster.apiServerAccessProfile`: who can reach the Kubernetes API server. No Pulumi imports.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import MISSING, Check, Key, Reader, Section, boolean, text
from gpu_aks_policies.limits import MAX_AUTHORIZED_RANGES

from components.aks_api import (
    API_VERSION,
    CIDR_PATTERN,
    PRIVATE_DNS_ZONE_MODES,
    PRIVATE_DNS_ZONE_NAME_RE,
    RESOURCE_ID_FORMS,
    parse_resource_id,
    resource_id_problem,
)
from components.settings.common import CLUSTER_MODEL, ipv4_network, is_ipv4_interface


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
        if not isinstance(item, str) or not CIDR_PATTERN.fullmatch(item) or not is_ipv4_interface(item):
            reader.problem(at, f"{reader.shown(item)} is not an IPv4 address or CIDR like 203.0.113.0/24")
        elif ipv4_network(item) is None:
            # The fix is derived from the value: masked with it when the section is secret.
            reader.problem(at, f"{reader.shown(item)} has bits set after the prefix; write "
                               f"{reader.shown(str(ipaddress.IPv4Interface(item).network))}")
        elif ipv4_network(item) == ipaddress.IPv4Network("0.0.0.0/0"):
            reader.problem(at, "0.0.0.0/0 authorizes every address, which is no restriction; list your ranges or leave "
                               "the key out")
        else:
            ranges.append(item)
    _every_address_together(reader, name, ranges)
    return tuple(ranges)


def _every_address_together(reader: Reader, name: str, ranges: list[str]) -> None:
    """Ranges that together cover every IPv4 address (0.0.0.0/1 with 128.0.0.0/1, four /2s, ...) restrict
    nothing, like 0.0.0.0/0 alone. At most 200 ranges, so collapsing them is cheap."""
    networks = [network for network in map(ipv4_network, ranges) if network is not None]
    if list(ipaddress.collapse_addresses(networks)) == [ipaddress.IPv4Network("0.0.0.0/0")]:
        # Indexes, not values: the section may be secret.
        reader.problem(name, f"its {len(ranges)} ranges together cover every IPv4 address (as 0.0.0.0/0 does), which "
                             "is no restriction; list only your own ranges or leave the key out")


def _private_dns_zone_problem(value: Any) -> str | None:
    if value in PRIVATE_DNS_ZONE_MODES:
        return None
    zone = parse_resource_id("privateDnsZone", value)
    if zone is None:
        if isinstance(value, str) and value.startswith("/"):
            return f"{resource_id_problem('privateDnsZone', value)}; or {' or '.join(PRIVATE_DNS_ZONE_MODES)}"
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
    if zone is not None and match and isinstance(location, str) and location and match.group("region") != location:
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
            source=f"{CLUSTER_MODEL} apiServerAccessProfile.authorizedIPRanges"),
        boolean("enablePrivateCluster", "No public API server at all.", False, attr="private_cluster",
                source=f"{CLUSTER_MODEL} apiServerAccessProfile.enablePrivateCluster"),
        Check(_private_or_ranges, reads=("authorizedIPRanges", "enablePrivateCluster"),
              doc="A private cluster takes no authorized ranges."),
        text("privateDNSZone", "A private cluster's DNS zone: `system` (AKS creates one), `none` (public DNS only) or "
             "your own zone's resource ID (needs cluster.identity UserAssigned; gpu-aks grants it Private DNS Zone "
             "Contributor there).", None, check=_private_dns_zone_problem, attr="private_dns_zone",
             source=f"{CLUSTER_MODEL} apiServerAccessProfile.privateDNSZone"),
        Check(_private_dns_zone_fits, reads=("privateDNSZone", "enablePrivateCluster"),
              doc="`privateDNSZone` only with `enablePrivateCluster: true`; your zone names the cluster's region."),
    ), cls=ApiServerAccessSettings, source=f"{CLUSTER_MODEL} apiServerAccessProfile")


def warn_open_api_server(reader: Reader) -> None:
    """A cluster check: an API server open to every address gets a warning naming the key."""
    api_server = reader.children["apiServerAccessProfile"].build()
    warning = api_server_warning(api_server)
    if warning:
        reader.warn("apiServerAccessProfile", warning)


def api_server_warning(api_server: ApiServerAccessSettings) -> str | None:
    if not api_server.open_to_internet:
        return None
    return ("neither authorizedIPRanges nor enablePrivateCluster is set, so the Kubernetes API server accepts "
            "connections from any address (Azure AD still authenticates them); set "
            "gpu-aks:cluster.apiServerAccessProfile.authorizedIPRanges (docs/platform.md, \"API server access\")")
