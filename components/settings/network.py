"""`gpu-aks:cluster.networkProfile`: the cluster network, its settings and keys, and the record of it a
stack exports so that the next run can refuse a change AKS would refuse. No Pulumi imports.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import Check, Default, Key, Reader, Section

from components.aks_api import (
    API_VERSION,
    CIDR_PATTERN,
    DEFAULT_DNS_SERVICE_IP,
    DEFAULT_POD_CIDR,
    DEFAULT_SERVICE_CIDR,
    IP_PATTERN,
    NETWORK_DATAPLANES,
    NETWORK_PLUGIN_MODES,
    NETWORK_PLUGINS,
    NETWORK_POLICIES,
    OUTBOUND_TYPES,
    RESERVED_CIDRS,
)
from components.settings.common import (
    CLUSTER_MODEL,
    api_choice,
    document_pools,
    ipv4_network,
    is_ipv4_interface,
    shown,
)


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


#: Ranges no node routes as pod or service addresses (the IANA special-purpose registry, RFC 6890): "this
#: network" (RFC 1122), loopback, multicast (RFC 5771) and the reserved 240.0.0.0/4 (RFC 1112).
SPECIAL_PURPOSE_CIDRS = ("0.0.0.0/8", "127.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4")
#: Each node takes a /24 of podCidr (learn.microsoft.com/azure/aks/azure-cni-overlay: "Each node is assigned a
#: /24 address space carved out from the same CIDR"; kubenet assigns a /24 per node as well).
NODE_POD_PREFIX = 24
#: kube-apiserver refuses a smaller service range (kubernetes `ServiceIPRange`: "the service cluster IP range
#: must be at least 8 IP addresses"), and gives its first address to the `kubernetes` Service
#: (`GetIndexedIP(serviceClusterIPRange, 1)`).
MIN_SERVICE_ADDRESSES = 8


def _cidr_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not CIDR_PATTERN.fullmatch(value) or "/" not in value:
        return f"is not an IPv4 CIDR like 10.244.0.0/16 (the API {API_VERSION} pattern, with a prefix length)"
    network = ipv4_network(value)
    if network is None:
        fixed = ipaddress.IPv4Interface(value).network if is_ipv4_interface(value) else "10.0.0.0/16"
        return f"is not a network address: the bits after the prefix must be 0 (e.g. {fixed})"
    for reserved in RESERVED_CIDRS:
        if network.overlaps(ipaddress.IPv4Network(reserved)):
            return (f"overlaps {reserved}, which AKS reserves (learn.microsoft.com/azure/aks/azure-cni-overlay, IP "
                    "address planning)")
    for special in SPECIAL_PURPOSE_CIDRS:
        if network.overlaps(ipaddress.IPv4Network(special)):
            return (f"overlaps {special}, a special-purpose range (RFC 6890: this network, loopback, multicast or "
                    "reserved) no node routes; use a private range (e.g. 10.244.0.0/16)")
    return None


def _pod_cidr_problem(value: Any) -> str | None:
    problem = _cidr_problem(value)
    network = ipv4_network(value) if problem is None else None
    if network is not None and network.prefixlen > NODE_POD_PREFIX:
        return (f"is smaller than the /{NODE_POD_PREFIX} each node takes from it (learn.microsoft.com/azure/aks/"
                "azure-cni-overlay), so no node could start; use a /24 or larger (e.g. 10.244.0.0/16)")
    return problem


def _service_cidr_problem(value: Any) -> str | None:
    problem = _cidr_problem(value)
    network = ipv4_network(value) if problem is None else None
    if network is not None and network.num_addresses < MIN_SERVICE_ADDRESSES:
        return (f"holds {network.num_addresses} address(es); kube-apiserver needs at least {MIN_SERVICE_ADDRESSES} "
                "(e.g. 10.0.0.0/16)")
    return problem


def _ip_problem(value: Any) -> str | None:
    return None if isinstance(value, str) and IP_PATTERN.fullmatch(value) else "is not an IPv4 address"


def tenth_address(cidr: str | None) -> str:
    """The address AKS gives the DNS service in a service CIDR: the tenth (10.0.0.10 in 10.0.0.0/16)."""
    network = ipv4_network(cidr)
    return str(network.network_address + 10) if network is not None and network.num_addresses > 11 else DEFAULT_DNS_SERVICE_IP


def pools_name_pod_subnets(reader: Reader) -> bool:
    """Whether any pool, of any kind, names a `podSubnetID` in the raw config (read before the pools are
    parsed, for the network plugin mode's default)."""
    return any(pool.get("podSubnetID") for pool in document_pools(reader).raw(reader.root))


def _default_plugin_mode(reader: Reader) -> str | None:
    """Overlay with Azure CNI, except where the pools name pod subnets: those are Azure CNI with dynamic
    pod IP allocation, which is not Overlay (docs/network.md)."""
    if reader.get("networkPlugin") != "azure" or pools_name_pod_subnets(reader):
        return None
    return "overlay"


def _overlay_or_kubenet(reader: Reader) -> bool:
    return reader.get("networkPluginMode") == "overlay" or reader.get("networkPlugin") == "kubenet"


def _dns_inside_service_cidr(reader: Reader) -> None:
    service_cidr, dns_ip = reader.get("serviceCidr"), reader.get("dnsServiceIP")
    service, address = ipv4_network(service_cidr), ipaddress.IPv4Address(dns_ip)
    if service is not None and (address not in service or address in (service.network_address,
                                                                      service.broadcast_address)):
        reader.problem("dnsServiceIP", f"{dns_ip} is not a usable address inside serviceCidr {service_cidr}; the REST "
                                       "model: \"It must be within the Kubernetes service address range\" (e.g. "
                                       f"{tenth_address(service_cidr)})")
    elif service is not None and address == service.network_address + 1:
        reader.problem("dnsServiceIP", f"{dns_ip} is the first address of serviceCidr {service_cidr}, which Kubernetes "
                                       "gives the `kubernetes` Service, so the cluster DNS could not have it (e.g. "
                                       f"{tenth_address(service_cidr)})")


def _pods_and_services_apart(reader: Reader) -> None:
    pods, services = ipv4_network(reader.get("podCidr")), ipv4_network(reader.get("serviceCidr"))
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
                   source=f"{CLUSTER_MODEL} networkProfile.networkPlugin"),
        api_choice("networkPluginMode", "`overlay`: pods get addresses from podCidr, not the subnet.",
                   NETWORK_PLUGIN_MODES, Default(_default_plugin_mode, "overlay with networkPlugin azure, unless the "
                                                                       "pools name podSubnetID"),
                   attr="plugin_mode", source=f"{CLUSTER_MODEL} networkProfile.networkPluginMode"),
        api_choice("networkDataplane", "The dataplane (`cilium`: eBPF, Azure CNI powered by Cilium).",
                   NETWORK_DATAPLANES, Default(lambda r: "cilium" if r.get("networkPlugin") == "azure" else "azure",
                                               "cilium with networkPlugin azure"),
                   attr="dataplane", source=f"{CLUSTER_MODEL} networkProfile.networkDataplane"),
        api_choice("networkPolicy", "The network-policy engine.", NETWORK_POLICIES,
                   Default(lambda r: "cilium" if r.get("networkDataplane") == "cilium" else "none",
                           "cilium with the cilium dataplane, else none"),
                   attr="policy", source=f"{CLUSTER_MODEL} networkProfile.networkPolicy"),
        api_choice("outboundType", "Egress: `loadBalancer`, `managedNATGateway`, or with the pools in your subnets "
                   "`userDefinedRouting` (through your firewall), `userAssignedNATGateway` or `none`.",
                   OUTBOUND_TYPES, "loadBalancer", attr="outbound_type",
                   source=f"{CLUSTER_MODEL} networkProfile.outboundType (create-only)"),
        Key("podCidr", "Pod addresses (Overlay or kubenet).", "string",
            Default(lambda r: DEFAULT_POD_CIDR if _overlay_or_kubenet(r) else None, DEFAULT_POD_CIDR),
            check=_pod_cidr_problem, attr="pod_cidr", source=f"{CLUSTER_MODEL} networkProfile.podCidr pattern"),
        Key("serviceCidr", "Kubernetes service addresses.", "string", DEFAULT_SERVICE_CIDR, check=_service_cidr_problem,
            attr="service_cidr", source=f"{CLUSTER_MODEL} networkProfile.serviceCidr pattern"),
        Key("dnsServiceIP", "The cluster DNS service's address, inside serviceCidr.", "string",
            Default(lambda r: tenth_address(r.get("serviceCidr")), "the tenth address of serviceCidr (10.0.0.10)"),
            check=_ip_problem, attr="dns_service_ip", source=f"{CLUSTER_MODEL} networkProfile.dnsServiceIP"),
        Check(_dns_inside_service_cidr, reads=("serviceCidr", "dnsServiceIP"),
              doc="`dnsServiceIP` is a usable address inside `serviceCidr`, not the first (the `kubernetes` "
                  "Service's)."),
        Check(_pods_and_services_apart, reads=("podCidr", "serviceCidr"),
              doc="`podCidr` and `serviceCidr` do not overlap."),
        Check(_network_combinations, reads=_NETWORK_KEYS_READ,
              doc="Overlay and Cilium need Azure CNI; Cilium policy needs the Cilium dataplane."),
    ), cls=NetworkSettings, source=f"{CLUSTER_MODEL} networkProfile (ContainerServiceNetworkProfile)",
    listed=("networkPlugin", "networkPluginMode", "networkDataplane", "networkPolicy", "podCidr", "serviceCidr",
            "dnsServiceIP", "outboundType"))


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


def network_change_problems(previous: Any, current: Mapping[str, Any], masked: bool = False) -> list[str]:
    """Why AKS would refuse to move an existing cluster from `previous` (this stack's last
    `clusterNetwork` output; None before the first deploy) to `current`; `masked`: the values are
    secret (`gpu-aks:cluster` is), and messages show `[secret]`."""
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
        was, now = shown(old, masked), shown(new, masked)
        problems.append(f"gpu-aks:cluster.networkProfile.{key}: the cluster has {was}, the config says {now}; "
                        f"{how}. Put {was} back, or create a new cluster (a new stack) and move the workloads")
    return problems


#: pulumi-azure-native replaces the cluster on a change to any of these (its `forceNewMap` for
#: `ManagedCluster`: pulumi/pulumi-azure-native `provider/pkg/gen/replacement.go`, the whole
#: `networkProfile` at f8d3054ad7a51690d78c6418a507ecd0a97bf847, these sub-properties since #4756 at
#: 1b7112af33c62b247daed1028686bf279f4d5e69: "only along a specific one-way migration ... Force-new to
#: stay conservative"), the in-place upgrades AKS accepts included.
PROVIDER_REPLACES_ON = ("networkPlugin", "networkPluginMode", "networkDataplane", "networkPolicy", "podCidr",
                        "serviceCidr", "dnsServiceIP", "outboundType")


def network_upgrade_warnings(previous: Any, current: Mapping[str, Any], masked: bool = False) -> list[str]:
    """The in-place upgrades AKS accepts (`NETWORK_UPGRADES`) that Pulumi would still carry out as a
    replacement of the cluster: `network_change_problems` lets them pass, the preview says so."""
    if not isinstance(previous, Mapping):
        return []
    return [f"gpu-aks:cluster.networkProfile.{key}: {shown(previous.get(key), masked)} -> "
            f"{shown(current.get(key), masked)} is an upgrade AKS "
            "makes in place (`az aks update`), but pulumi-azure-native replaces the cluster on any change to it: "
            "with cluster.protect the update stops at the replacement, without it the cluster is deleted and "
            "created again. Migrate with `az aks update` first, then `pulumi refresh`, and check that `pulumi preview` "
            "no longer shows the ManagedCluster replaced before `pulumi up`"
            for key in NETWORK_UPGRADES if key in previous and key in PROVIDER_REPLACES_ON
            and (previous.get(key), current.get(key)) in NETWORK_UPGRADES[key]]
