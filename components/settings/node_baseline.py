"""The node baseline every pool kind takes (`systemPool`, `cpuPools[]`, `gpuPools[]`): your subnets
(`vnetSubnetID`, `podSubnetID`), the OS disk (`osDiskType`, `osDiskSizeGB`), pod density (`maxPods`)
and `enableEncryptionAtHost`, each named and checked as AKS API 2025-09-01 names and checks it, and
the checks across pools and the cluster that AKS makes: one VNet, a custom subnet beside a managed one,
pod subnets on all pools or none, the outbound types that need your subnets. docs/network.md explains
each. No Pulumi imports.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from gpu_aks_policies.declarations import MISSING, Check, Key, Reader, bool_problem, describe, is_whole_number, text
from gpu_aks_policies.limits import MAX_PODS_BOUNDS

from components.aks_api import (
    API_VERSION,
    OS_DISK_SIZE_RANGE,
    OS_DISK_TYPES,
    SYSTEM_POOL_MIN_PODS,
    parse_resource_id,
    resource_id_problem,
    virtual_network_of,
)
from components.azure_catalog import ephemeral_os_disk_check
from components.settings.common import api_choice, document_pools

_POOL = f"AgentPool (API {API_VERSION})"
#: Outbound types whose egress path lives in your subnets (learn.microsoft.com/azure/aks/egress-outboundtype:
#: `userDefinedRouting` uses the subnets' route table, `userAssignedNATGateway` the NAT gateway associated
#: with them, `none` leaves egress to you); AKS needs the nodes in your VNet for each.
OUTBOUND_TYPES_NEEDING_SUBNETS = ("userDefinedRouting", "userAssignedNATGateway", "none")
NODE_BASELINE_KEYS = ("vnetSubnetID", "podSubnetID", "osDiskType", "osDiskSizeGB", "maxPods", "enableEncryptionAtHost")


@dataclass(frozen=True)
class NodeBaseline:
    """What a pool sends beside its size and counts; None leaves AKS's default."""

    vnet_subnet_id: str | None = None
    pod_subnet_id: str | None = None
    os_disk_type: str | None = None
    os_disk_size_gb: int | None = None
    max_pods: int | None = None
    enable_encryption_at_host: bool | None = None

    def as_api(self) -> dict[str, Any]:
        """The AgentPool (and inline agentPoolProfiles) fields, in the SDK's snake_case."""
        return {name: value for name, value in (
            ("vnet_subnet_id", self.vnet_subnet_id), ("pod_subnet_id", self.pod_subnet_id),
            ("os_disk_type", self.os_disk_type), ("os_disk_size_gb", self.os_disk_size_gb),
            ("max_pods", self.max_pods), ("enable_encryption_at_host", self.enable_encryption_at_host),
        ) if value is not None}

    def create_only(self) -> dict[str, Any]:
        """The create-only fields that are set, as they join a pool's create-only identity. Unset fields
        are left out so the Azure name of every pool deployed before these keys existed stays the same."""
        return {key: value for key, value in (
            ("vnetSubnetID", self.vnet_subnet_id.lower() if self.vnet_subnet_id else None),
            ("podSubnetID", self.pod_subnet_id.lower() if self.pod_subnet_id else None),
            ("osDiskType", self.os_disk_type), ("osDiskSizeGB", self.os_disk_size_gb), ("maxPods", self.max_pods),
            ("enableEncryptionAtHost", self.enable_encryption_at_host),
        ) if value is not None}

    def subnets(self) -> tuple[str, ...]:
        return tuple(subnet for subnet in (self.vnet_subnet_id, self.pod_subnet_id) if subnet)


def node_baseline(reader: Reader) -> NodeBaseline:
    """The parsed baseline keys of a pool section."""
    return NodeBaseline(reader.get("vnetSubnetID"), reader.get("podSubnetID"), reader.get("osDiskType"),
                        reader.get("osDiskSizeGB"), reader.get("maxPods"), reader.get("enableEncryptionAtHost"))


def subnet_problem(value: Any) -> str | None:
    return resource_id_problem("subnet", value)


def _os_disk_size_problem(value: Any) -> str | None:
    low, high = OS_DISK_SIZE_RANGE
    return None if is_whole_number(value) and low <= value <= high else \
        f"is not allowed; AKS API {API_VERSION} takes whole GiB from {low} (the size's default) to {high}"


def _max_pods(reader: Reader, value: Any) -> int | None:
    """`maxPods` within AKS's bounds for the cluster's network plugin (and 30 for a system pool)."""
    if value is MISSING or value is None:
        return None
    cluster = reader.root.children.get("cluster")
    plugin = cluster.get("networkProfile.networkPlugin") if cluster is not None else "azure"
    low, high = MAX_PODS_BOUNDS.get(plugin, MAX_PODS_BOUNDS["azure"])
    system = reader.key.endswith("systemPool")
    if system:
        low = max(low, SYSTEM_POOL_MIN_PODS)
    if not is_whole_number(value) or not low <= value <= high:
        where = (f"a system pool takes {low} to {high} (\"System node pools ... must support at least "
                 f"{SYSTEM_POOL_MIN_PODS} pods\", learn.microsoft.com/azure/aks/use-system-pools)" if system else
                 f"AKS takes {low} to {high} pods per node with networkPlugin {plugin} "
                 "(learn.microsoft.com/azure/aks/azure-cni-overview, \"Maximum pods per node\")")
        reader.problem("maxPods", f"{reader.shown(value)} is not allowed; {where}")
        return None
    return int(value)


def _ephemeral_fits(reader: Reader) -> None:
    if reader.get("osDiskType") != "Ephemeral":
        return
    problem, warning = ephemeral_os_disk_check(reader.get("vmSize"), reader.get("osDiskSizeGB"))
    if problem:
        reader.problem("osDiskSizeGB", problem)
    if warning:
        reader.warn("osDiskSizeGB", warning)


def _pod_subnet_fits_the_plugin(reader: Reader) -> None:
    if not reader.get("podSubnetID"):
        return
    network = reader.root.children["cluster"].children["networkProfile"]
    plugin, mode = network.get("networkPlugin"), network.get("networkPluginMode")
    if plugin != "azure" or mode == "overlay":
        using = "networkPluginMode overlay" if mode == "overlay" else f"networkPlugin {plugin}"
        reader.problem("podSubnetID", f"is for Azure CNI with dynamic pod IP allocation (networkPlugin: azure without "
                                      f"networkPluginMode: overlay), but cluster.networkProfile uses {using}: "
                                      "Overlay gives pods addresses from podCidr, not a subnet (learn.microsoft.com/"
                                      "azure/aks/concepts-network-azure-cni-pod-subnet). Remove podSubnetID, or leave "
                                      "networkPluginMode out: with pod subnets gpu-aks then uses Azure CNI without "
                                      "Overlay")


def node_baseline_items(default_os_disk_type: str | None = None) -> tuple[Key | Check, ...]:
    """The baseline keys and their per-pool checks, for a pool section (placed after `vmSize`)."""
    return (
        text("vnetSubnetID", "The subnet the pool's nodes (and, without podSubnetID, pods) join: a subnet resource "
             "ID. All pools share one VNet; docs/network.md.", None, check=subnet_problem,
             source=f"{_POOL} vnetSubnetID", create_only=True),
        text("podSubnetID", "The subnet pods join (Azure CNI with dynamic pod IP allocation, not Overlay); all pools "
             "or none.", None, check=subnet_problem, source=f"{_POOL} podSubnetID", create_only=True),
        Check(_pod_subnet_fits_the_plugin, reads=("podSubnetID",),
              doc="`podSubnetID` only with Azure CNI without Overlay."),
        api_choice("osDiskType", "`Managed` or `Ephemeral` (the OS on the VM's cache or temp disk: no disk charge, "
                   "faster node start).", OS_DISK_TYPES, default_os_disk_type, source=f"{_POOL} osDiskType",
                   create_only=True),
        Key("osDiskSizeGB", "OS disk size in GiB (0: the size's default); an Ephemeral disk must fit the VM's cache "
            "or temp disk.", "integer", None, check=_os_disk_size_problem, convert=int,
            source=f"{_POOL} osDiskSizeGB", create_only=True),
        Check(_ephemeral_fits, reads=("vmSize", "osDiskType", "osDiskSizeGB"),
              doc="An Ephemeral `osDiskSizeGB` fits the size's cache or temp disk where the catalog knows them."),
        Key("maxPods", "Pods per node: 10 to 250 with every network plugin (30 at least on the system pool).",
            "integer", None, parse=_max_pods, source=f"{_POOL} maxPods", create_only=True),
        Key("enableEncryptionAtHost", "Encrypt temp disks, caches and disk flows at the VM host (needs the "
            "EncryptionAtHost subscription feature).", "boolean", None, check=bool_problem,
            source=f"{_POOL} enableEncryptionAtHost", create_only=True),
    )


# --- Across pools and the cluster (a root check, after the pools) ---------------------------------


def _pool_readers(root: Reader) -> Iterator[Reader]:
    """The readers of every pool, of any kind, that has the node baseline (its subnets): the system
    pool first (`KINDS` order)."""
    for reader in document_pools(root).readers(root):
        if "vnetSubnetID" in reader.section.key_names:
            yield reader


def _value(reader: Reader, name: str) -> Any:
    return reader.values.get(name) if reader.ok(name) else None


def check_pool_subnets(root: Reader) -> None:
    """What AKS refuses across pools: subnets of two VNets, a custom subnet beside a pool on AKS's
    managed subnet, pod subnets on some pools only; and the outbound types that need your subnets."""
    system = root.children["systemPool"]
    system_subnet = _value(system, "vnetSubnetID")
    pools = list(_pool_readers(root))
    # A user pool without a subnet joins the system pool's (what AKS does for a pool added without one,
    # hashicorp/terraform-provider-azurerm#8297); the reverse AKS refuses: "Cannot use a custom subnet
    # because agent pool <system> is using a managed subnet" (MicrosoftDocs/azure-docs#116169).
    if system_subnet is None and system.ok("vnetSubnetID"):
        for pool in pools[1:]:
            if _value(pool, "vnetSubnetID"):
                root.problems.add(f"{pool.key}.vnetSubnetID", "is your subnet, but systemPool has no vnetSubnetID and "
                                                             "so sits in the VNet AKS manages; AKS refuses a custom "
                                                             "subnet beside a managed one (\"Cannot use a custom subnet "
                                                             "because agent pool ... is using a managed subnet\"). Set "
                                                             "systemPool.vnetSubnetID too (docs/network.md)")
    # One VNet per cluster: "All subnets assigned to node pools must belong to the same virtual network"
    # (learn.microsoft.com/azure/aks/create-node-pools, "Add a node pool with a unique subnet"); pod subnets too.
    first: tuple[str, str, str] | None = None
    for pool in pools:
        for name in ("vnetSubnetID", "podSubnetID"):
            subnet = _value(pool, name)
            if not subnet:
                continue
            vnet = virtual_network_of(subnet)
            if first is None:
                first = (root.problems.full_key(f"{pool.key}.{name}"), vnet, subnet)
            elif vnet != first[1]:
                this, that = _vnet_labels(subnet, first[2])
                root.problems.add(f"{pool.key}.{name}", f"is in VNet {this}, but {first[0]} is in "
                                                       f"VNet {that}; AKS needs every pool's "
                                                       "subnets in one virtual network (\"All subnets assigned to node "
                                                       "pools must belong to the same virtual network\", learn.microsoft"
                                                       ".com/azure/aks/create-node-pools)")
    # "All or none of the agentpools should set podsubnet" (the AKS API's refusal).
    with_pod_subnet = [pool for pool in pools if _value(pool, "podSubnetID")]
    if with_pod_subnet and len(with_pod_subnet) < len(pools):
        for pool in pools:
            if pool.ok("podSubnetID") and not _value(pool, "podSubnetID"):
                root.problems.add(f"{pool.key}.podSubnetID", f"is missing while "
                                                            f"{root.problems.full_key(with_pod_subnet[0].key)}.podSubnetID is "
                                                            "set; AKS takes pod subnets on all pools or none (\"All or "
                                                            "none of the agentpools should set podsubnet\")")
    cluster = root.children["cluster"]
    network = cluster.children["networkProfile"]
    outbound = network.values.get("outboundType")
    if network.ok("outboundType") and outbound == "managedNATGateway" and system_subnet is not None:
        root.problems.add("cluster.networkProfile.outboundType",
                          "'managedNATGateway' is AKS's NAT gateway in the VNet AKS manages, but the pools are in your "
                          "subnets, which AKS refuses (\"Outbound type is managedNATGateway but agent pool ... is "
                          "using custom VNet, which is not allowed\", ManagedNATGatewayWithCustomVNetNotAllowed); "
                          "associate your NAT gateway with the subnets and use userAssignedNATGateway, or route "
                          "through your firewall with userDefinedRouting")
    if network.ok("outboundType") and outbound in OUTBOUND_TYPES_NEEDING_SUBNETS and system_subnet is None:
        root.problems.add("cluster.networkProfile.outboundType",
                          f"{describe(outbound)} needs the nodes in your own subnets, whose route table (or NAT "
                          "gateway) carries the egress (learn.microsoft.com/azure/aks/egress-outboundtype); set "
                          "vnetSubnetID on systemPool (the other pools follow it) or use loadBalancer or "
                          "managedNATGateway")


def _vnet_labels(subnet: str, other: str) -> tuple[str, str]:
    """The VNets of two subnets of different VNets, named as shortly as tells them apart (two VNets of one
    name in two resource groups or subscriptions are still two VNets)."""
    ids = parse_resource_id("subnet", subnet), parse_resource_id("subnet", other)
    if ids[0] is None or ids[1] is None:
        return repr(virtual_network_of(subnet)), repr(virtual_network_of(other))
    if ids[0].name.lower() != ids[1].name.lower():
        return repr(ids[0].name), repr(ids[1].name)
    if ids[0].subscription == ids[1].subscription:
        return repr(f"{ids[0].resource_group}/{ids[0].name}"), repr(f"{ids[1].resource_group}/{ids[1].name}")
    return (repr(f"{ids[0].subscription}/{ids[0].resource_group}/{ids[0].name}"),
            repr(f"{ids[1].subscription}/{ids[1].resource_group}/{ids[1].name}"))


SUBNETS_CHECK = Check(check_pool_subnets, doc="Pools' subnets are in one VNet; a user pool's subnet needs the system "
                                             "pool's; pod subnets on all pools or none; userDefinedRouting, "
                                             "userAssignedNATGateway and none need systemPool.vnetSubnetID, "
                                             "managedNATGateway needs AKS's own VNet.")


def placed_in_system_subnet(baseline: NodeBaseline, system: NodeBaseline) -> NodeBaseline:
    """A user pool's baseline with the system pool's subnet where it names none, as AKS places it."""
    if baseline.vnet_subnet_id is not None or system.vnet_subnet_id is None:
        return baseline
    return replace(baseline, vnet_subnet_id=system.vnet_subnet_id)
