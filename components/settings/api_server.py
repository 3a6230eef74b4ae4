"""`gpu-aks:cluster.apiServerAccessProfile`: who can reach the Kubernetes API server. No Pulumi imports.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import MISSING, Check, Key, Reader, Section, boolean

from components.aks_api import (
    CIDR_PATTERN,
)
from components.settings.common import (
    CLUSTER_MODEL,
    ipv4_network,
    is_ipv4_interface,
)

#: At most this many authorized IP ranges (AKS: "You can specify up to 200 authorized IP ranges",
#: learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges).
MAX_AUTHORIZED_RANGES = 200


@dataclass(frozen=True)
class ApiServerAccessSettings:
    """`apiServerAccessProfile`: who can reach the Kubernetes API server."""

    authorized_ip_ranges: tuple[str, ...] = ()
    private_cluster: bool = False

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
            reader.problem(at, f"{item} has bits set after the prefix; write {ipaddress.IPv4Interface(item).network}")
        elif ipv4_network(item) == ipaddress.IPv4Network("0.0.0.0/0"):
            reader.problem(at, "0.0.0.0/0 authorizes every address, which is no restriction; list your ranges or leave "
                               "the key out")
        else:
            ranges.append(item)
    return tuple(ranges)


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
