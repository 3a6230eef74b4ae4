"""What AKS accepts at the API version this program sends, in one place.

pulumi-azure-native 3.29.0's `containerservice` module sends API version 2025-09-01. The allowed
values and formats below are that version's REST models (Microsoft's `azure-mgmt-containerservice`
40.1.0, `models/_models_py3.py` and `_container_service_client_enums.py`; the tests compare them
with those models) and the AKS docs for what the models only describe in words. No Pulumi imports.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

# MAX_PODS_BOUNDS is re-exported: tests/test_network.py holds it equal to the SDK's network plugins.
from gpu_aks_policies.limits import MAX_PODS_BOUNDS as MAX_PODS_BOUNDS
from gpu_aks_policies.limits import clipped, go_duration_problem

API_VERSION = "2025-09-01"

# --- Enums of API version 2025-09-01 -------------------------------------------------------------

#: `OSSKU`. Ubuntu2404 exists only from 2025-10-01; Windows SKUs are for Windows pools, which
#: gpu-aks does not create.
OS_SKUS = ("Ubuntu", "AzureLinux", "AzureLinux3", "CBLMariner", "Ubuntu2204")
EXPANDERS = ("least-waste", "most-pods", "priority", "random")
UPGRADE_CHANNELS = ("rapid", "stable", "patch", "node-image", "none")
NODE_OS_UPGRADE_CHANNELS = ("None", "Unmanaged", "NodeImage", "SecurityPatch")
SKU_TIERS = ("Free", "Standard", "Premium")
SCALE_SET_PRIORITIES = ("Regular", "Spot")
#: `GPUDriver`: Install (default) or None (bring your own, e.g. the NVIDIA GPU Operator).
GPU_DRIVERS = ("Install", "None")
#: `GPUInstanceProfile`.
GPU_INSTANCE_PROFILES = ("MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g")

# --- Names ---------------------------------------------------------------------------------------

#: ManagedCluster `resourceName`: 1-63 characters (REST spec `resourceName` pattern).
CLUSTER_NAME_RE = re.compile(r"[a-zA-Z0-9]|[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]")
#: Resource group names: 1-90 characters of word characters, '-', '.', '_', '(' and ')', not ending
#: with a period (Azure resource naming rules, Microsoft.Resources/resourcegroups).
RESOURCE_GROUP_RE = re.compile(r"[-\w._()]{0,89}[-\w_()]")
#: Linux agent pool names: lowercase letters and digits, starting with a letter, at most 12.
POOL_NAME_RE = re.compile(r"[a-z][a-z0-9]{0,11}")


def sanitized_cluster_name(text: str) -> str:
    """A stack-derived default name that AKS accepts: invalid characters become '-', runs of '-'
    collapse, and the ends are trimmed to a letter or digit, within 63 characters."""
    name = re.sub(r"[^-_a-zA-Z0-9]+", "-", text)
    name = re.sub(r"-{2,}", "-", name)[:63]
    return re.sub(r"^[-_]+|[-_]+$", "", name)


def dns_prefix_for(cluster_name: str) -> str:
    """`dnsPrefix` from the cluster name: no underscores, at most 54 characters."""
    prefix = re.sub(r"_+", "-", cluster_name)[:54]
    return re.sub(r"^-+|-+$", "", prefix) or "aks"


# --- Cluster-autoscaler profile -----------------------------------------------------------------

_MINUTES = re.compile(r"[0-9]+m")
_DURATION = re.compile(r"[0-9]+(s|m|h)")
_INTEGER = re.compile(r"[0-9]+")
_FRACTION = re.compile(r"(0(\.[0-9]+)?|1(\.0+)?)")


@dataclass(frozen=True)
class AutoscalerSetting:
    """One `autoScalerProfile` key: the wire type the API takes and what a value must look like."""

    wire_type: type
    describe: str
    check: Callable[[Any], bool]


def _string_matching(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None


def _go_duration_matching(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    """A duration the cluster autoscaler reads with Go's `time.ParseDuration`: the pattern, and short
    enough for a Go duration."""
    return lambda value: isinstance(value, str) and pattern.fullmatch(value) is not None \
        and go_duration_problem(value) is None


def _whole_number(value: Any) -> int | None:
    """A string of ASCII digits as its number; None for anything else, and for a number of more than 30
    digits (leading zeros aside), which no count or percentage here means: `int()` of more than 4300
    digits raised ValueError, and `max-empty-bulk-delete: "000…010"` stopped the program (issue 41)."""
    if not isinstance(value, str) or _INTEGER.fullmatch(value) is None:
        return None
    digits = value.lstrip("0") or "0"
    return int(digits) if len(digits) <= 30 else None


def _percentage(value: Any) -> bool:
    number = _whole_number(value)
    return number is not None and number <= 100


def _positive(value: Any) -> bool:
    number = _whole_number(value)
    return number is not None and number > 0


def _true_false(value: Any) -> bool:
    return value in ("true", "false")


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


_MINUTES_TEXT = "a string of whole minutes, e.g. \"10m\" (the API takes no other unit)"

#: `ManagedClusterPropertiesAutoScalerProfile` at 2025-09-01: three keys are booleans, the rest
#: strings in the formats its documentation states.
AUTOSCALER_SETTINGS: Mapping[str, AutoscalerSetting] = {
    "balance-similar-node-groups": AutoscalerSetting(str, "\"true\" or \"false\" (a quoted string)", _true_false),
    "daemonset-eviction-for-empty-nodes": AutoscalerSetting(bool, "true or false", _boolean),
    "daemonset-eviction-for-occupied-nodes": AutoscalerSetting(bool, "true or false", _boolean),
    "ignore-daemonsets-utilization": AutoscalerSetting(bool, "true or false", _boolean),
    "expander": AutoscalerSetting(str, f"one of {', '.join(EXPANDERS)}", lambda v: v in EXPANDERS),
    "max-empty-bulk-delete": AutoscalerSetting(str, "a positive whole number as a string, e.g. \"10\"", _positive),
    "max-graceful-termination-sec": AutoscalerSetting(str, "whole seconds as a string, e.g. \"600\"",
                                                      _string_matching(_INTEGER)),
    "max-node-provision-time": AutoscalerSetting(str, _MINUTES_TEXT, _go_duration_matching(_MINUTES)),
    "max-total-unready-percentage": AutoscalerSetting(str, "a whole percentage from 0 to 100 as a string, e.g. \"45\"",
                                                      _percentage),
    "new-pod-scale-up-delay": AutoscalerSetting(str, "a whole number with a unit, e.g. \"0s\", \"30s\", \"2m\", \"1h\"",
                                                _go_duration_matching(_DURATION)),
    "ok-total-unready-count": AutoscalerSetting(str, "a whole number as a string, e.g. \"3\"", _string_matching(_INTEGER)),
    "scan-interval": AutoscalerSetting(str, "whole seconds as a string, e.g. \"10\"", _string_matching(_INTEGER)),
    "scale-down-delay-after-add": AutoscalerSetting(str, _MINUTES_TEXT, _go_duration_matching(_MINUTES)),
    "scale-down-delay-after-delete": AutoscalerSetting(str, _MINUTES_TEXT, _go_duration_matching(_MINUTES)),
    "scale-down-delay-after-failure": AutoscalerSetting(str, _MINUTES_TEXT, _go_duration_matching(_MINUTES)),
    "scale-down-unneeded-time": AutoscalerSetting(str, _MINUTES_TEXT, _go_duration_matching(_MINUTES)),
    "scale-down-unready-time": AutoscalerSetting(str, _MINUTES_TEXT, _go_duration_matching(_MINUTES)),
    "scale-down-utilization-threshold": AutoscalerSetting(str, "a fraction from 0 to 1 as a string, e.g. \"0.5\"",
                                                          _string_matching(_FRACTION)),
    "skip-nodes-with-local-storage": AutoscalerSetting(str, "\"true\" or \"false\" (a quoted string)", _true_false),
    "skip-nodes-with-system-pods": AutoscalerSetting(str, "\"true\" or \"false\" (a quoted string)", _true_false),
}

# --- Kubernetes versions ------------------------------------------------------------------------


def last_day_of_month(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


@dataclass(frozen=True)
class KubernetesMinor:
    version: str
    aks_ga: date
    #: AKS end of support, the last day it is supported. The calendar gives months; "Unless an
    #: explicit date is provided, the End of Life (EOL) date is the last day of the specified month"
    #: (learn.microsoft.com/azure/aks/supported-kubernetes-versions, "AKS Kubernetes release calendar").
    end_of_support: date


#: The AKS Kubernetes release calendar (learn.microsoft.com/azure/aks/supported-kubernetes-versions,
#: "AKS Kubernetes release calendar", checked 2026-11-22): AKS supports a minor for about 12 months
#: after its AKS GA. Long-term support (Premium tier, `supportPlan: AKSLongTermSupport`) is not used.
KUBERNETES_CALENDAR_CHECKED = date(2026, 11, 22)
KUBERNETES_MINORS: tuple[KubernetesMinor, ...] = (
    KubernetesMinor("1.33", date(2025, 6, 1), last_day_of_month(2026, 6)),
    KubernetesMinor("1.34", date(2025, 11, 1), last_day_of_month(2026, 11)),
    KubernetesMinor("1.35", date(2026, 3, 1), last_day_of_month(2027, 3)),
    KubernetesMinor("1.36", date(2026, 6, 1), last_day_of_month(2027, 6)),
    KubernetesMinor("1.37", date(2026, 10, 1), last_day_of_month(2027, 10)),
)
#: The newest minor AKS supports: about ten months of support left when the calendar was checked.
DEFAULT_KUBERNETES_VERSION = "1.37"
#: A pinned version this close to its end of support gets a warning.
END_OF_SUPPORT_WARNING_DAYS = 60
KUBERNETES_VERSION_RE = re.compile(r"1\.([0-9]{2})(\.[0-9]+)?")


def kubernetes_minor(version: str) -> KubernetesMinor | None:
    minor = ".".join(version.split(".")[:2])
    return next((m for m in KUBERNETES_MINORS if m.version == minor), None)


def supported_minors(today: date) -> list[str]:
    """The minors AKS supports on `today`; the end-of-support day itself is still supported."""
    return [m.version for m in KUBERNETES_MINORS if m.aks_ga <= today <= m.end_of_support]


# --- Operating systems against Kubernetes versions -----------------------------------------------


@dataclass(frozen=True)
class OsSkuLimit:
    """Kubernetes minors on which AKS offers an `osSKU`, and why (each line cites its source)."""

    first_minor: int | None
    last_minor: int | None
    reason: str


#: `osSKU` values AKS refuses outside a range of Kubernetes minors.
OS_SKU_LIMITS: Mapping[str, OsSkuLimit] = {
    # Azure Updates, October 2025, "Generally Available: New OS SKU enum to migrate to Azure Linux
    # 3.0" (azure.microsoft.com/updates?id=512396): "clusters running Kubernetes versions 1.28-1.36";
    # the AKS CHANGELOG limits AzureLinux3 to 1.36 likewise. From 1.37 use `AzureLinux`, which
    # is Azure Linux 3.0 there.
    "AzureLinux3": OsSkuLimit(28, 36, "AKS offers AzureLinux3 for Kubernetes 1.28-1.36 only (Azure Updates, "
                                      "October 2025; AKS CHANGELOG); on later versions use AzureLinux (Azure "
                                      "Linux 3.0 there)"),
    # AKS CHANGELOG, and the AKS FAQ ("What OS versions are supported?"): `Ubuntu` is Ubuntu 22.04 on
    # 1.25-1.34 and Ubuntu 24.04 from 1.35; the pinned `Ubuntu2204` SKU is limited to 1.36.
    "Ubuntu2204": OsSkuLimit(None, 36, "AKS offers Ubuntu2204 up to Kubernetes 1.36 only (AKS CHANGELOG; AKS "
                                       "FAQ: `Ubuntu` is Ubuntu 24.04 from 1.35); use Ubuntu"),
    # Azure Linux 2.0 (`CBLMariner`) support ended on 2025-11-30 and its node images were removed
    # from 2026-03-31 (learn.microsoft.com/azure/azure-linux/ "Azure Linux 2.0 retirement"; AKS
    # CHANGELOG): no version accepts it any more.
    "CBLMariner": OsSkuLimit(None, 0, "CBLMariner (Azure Linux 2.0) ended support on 2025-11-30 and its node "
                                      "images were removed from 2026-03-31 (AKS CHANGELOG); use AzureLinux"),
}


def os_sku_problem(os_sku: str, kubernetes_version: str) -> str | None:
    """Why AKS refuses `os_sku` at `kubernetes_version`, or None."""
    limit = OS_SKU_LIMITS.get(os_sku)
    match = KUBERNETES_VERSION_RE.fullmatch(kubernetes_version)
    if limit is None or match is None:
        return None
    minor = int(match.group(1))
    if (limit.first_minor is not None and minor < limit.first_minor) or \
            (limit.last_minor is not None and minor > limit.last_minor):
        return f"{limit.reason}; kubernetesVersion is {kubernetes_version}"
    return None


# --- Network profile (ContainerServiceNetworkProfile at 2025-09-01) ------------------------------

#: `NetworkPlugin`, `NetworkPluginMode`, `NetworkDataplane`, `NetworkPolicy`, `OutboundType`.
NETWORK_PLUGINS = ("azure", "kubenet", "none")
NETWORK_PLUGIN_MODES = ("overlay",)
NETWORK_DATAPLANES = ("azure", "cilium")
NETWORK_POLICIES = ("none", "calico", "azure", "cilium")
OUTBOUND_TYPES = ("loadBalancer", "userDefinedRouting", "managedNATGateway", "userAssignedNATGateway", "none")
#: The REST model's patterns for `podCidr`/`serviceCidr` and `dnsServiceIP`.
CIDR_PATTERN = re.compile(r"([0-9]{1,3}\.){3}[0-9]{1,3}(\/([0-9]|[1-2][0-9]|3[0-2]))?")
IP_PATTERN = re.compile(r"((25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)")
#: AKS's defaults for Azure CNI Overlay (learn.microsoft.com/azure/aks/azure-cni-overlay: pod CIDR
#: 10.244.0.0/16; service CIDR 10.0.0.0/16 with the DNS service at 10.0.0.10).
DEFAULT_POD_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.0.0.0/16"
DEFAULT_DNS_SERVICE_IP = "10.0.0.10"
#: Ranges AKS reserves and refuses for pod and service CIDRs (learn.microsoft.com/azure/aks/
#: azure-cni-overlay, "IP address planning": 169.254.0.0/16, 172.30.0.0/16, 172.31.0.0/16 and
#: 192.0.2.0/24 must not be used).
RESERVED_CIDRS = ("169.254.0.0/16", "172.30.0.0/16", "172.31.0.0/16", "192.0.2.0/24")

# --- Agent pool upgrade settings (AgentPoolUpgradeSettings at 2025-09-01) ------------------------

#: `drainTimeoutInMinutes`: 1-1440 (AKS's default 30); `nodeSoakDurationInMinutes`: 0-30.
DRAIN_TIMEOUT_RANGE = (1, 1440)
NODE_SOAK_RANGE = (0, 30)
#: `UndrainableNodeBehavior` (API 2025-09-01): with either, a node whose pods cannot be evicted fails the
#: upgrade and the cluster. Schedule (the default): the node is made schedulable, not upgraded, the surge
#: nodes are deleted. Cordon: the node stays cordoned and one surge node per blocked node stays.
UNDRAINABLE_NODE_BEHAVIORS = ("Cordon", "Schedule")

# --- Planned maintenance (MaintenanceConfiguration at 2025-09-01) ---------------------------------

#: The two configuration names AKS reads (learn.microsoft.com/azure/aks/planned-maintenance):
#: Kubernetes upgrades, and node image/OS upgrades.
AUTO_UPGRADE_SCHEDULE = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_SCHEDULE = "aksManagedNodeOSUpgradeSchedule"
#: `MaintenanceWindow.durationHours`: 4-24; `WeeklySchedule.intervalWeeks`: 1-4.
MAINTENANCE_DURATION_RANGE = (4, 24)
INTERVAL_WEEKS_RANGE = (1, 4)
#: `WeekDay`.
WEEK_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
#: `utcOffset` and `startTime` patterns of `MaintenanceWindow`, as the spec writes them. Its `\d` means
#: ASCII digits to the service; Python's `\d` also matches "٢" and "２" (and `int()` reads them), hence
#: re.ASCII.
UTC_OFFSET_PATTERN = re.compile(r"(-|\+)[0-9]{2}:[0-9]{2}")
START_TIME_PATTERN = re.compile(r"\d{2}:\d{2}", re.ASCII)

# --- Identity, your own network, private DNS, security profile (issue 32) -------------------------

#: `ResourceIdentityType` less `None`: a managed cluster needs an identity to manage its load
#: balancers, disks and (with your own subnets) its network (learn.microsoft.com/azure/aks/use-managed-identity).
IDENTITY_TYPES = ("SystemAssigned", "UserAssigned")
#: `OSDiskType`.
OS_DISK_TYPES = ("Managed", "Ephemeral")
#: `AgentPool.osDiskSizeGB` `_validation`: 0 (the VM size's default) to 2048.
OS_DISK_SIZE_RANGE = (0, 2048)
#: `KeyVaultNetworkAccessTypes`.
KEY_VAULT_NETWORK_ACCESS = ("Public", "Private")
#: `apiServerAccessProfile.privateDNSZone`: "Allowed values are 'system' and 'none'", or the resource
#: ID of your own zone (learn.microsoft.com/azure/aks/private-clusters, "Configure a private DNS zone").
PRIVATE_DNS_ZONE_MODES = ("system", "none")
#: The zone names AKS accepts for your own private DNS zone (learn.microsoft.com/azure/aks/private-clusters:
#: `privatelink.<region>.azmk8s.io` or `<subzone>.privatelink.<region>.azmk8s.io`, and the `private.`
#: forms for API Server VNet Integration); the same four patterns as Azure/terraform-azurerm-aks
#: `locals.tf` `valid_private_dns_zone_regexs`. Group `region` must be the cluster's region.
PRIVATE_DNS_ZONE_NAME_RE = re.compile(r"(?:[a-zA-Z0-9-]{1,32}\.)?(?:private|privatelink)\.(?P<region>[a-z0-9]+)\.azmk8s\.io")
#: Image Cleaner's `intervalHours`: 24 hours to 3 months, default 168 (learn.microsoft.com/azure/aks/image-cleaner,
#: "--image-cleaner-interval-hours": minimum 24, maximum 2160).
IMAGE_CLEANER_INTERVAL_RANGE = (24, 2160)
DEFAULT_IMAGE_CLEANER_INTERVAL_HOURS = 168
#: "System node pools ... must support at least 30 pods" (learn.microsoft.com/azure/aks/use-system-pools,
#: "System and user node pools").
SYSTEM_POOL_MIN_PODS = 30

#: Azure built-in roles (learn.microsoft.com/azure/role-based-access-control/built-in-roles).
#: "Network Contributor": the cluster identity needs it on your subnets (AKS docs configure-azure-cni
#: and configure-kubenet, "Prerequisites"; Azure/terraform-azurerm-aks role_assignments.tf).
NETWORK_CONTRIBUTOR_ROLE = "4d97b98b-1d4f-4787-a291-c67834d212e7"
#: "Private DNS Zone Contributor": on your own private DNS zone (learn.microsoft.com/azure/aks/private-clusters,
#: "Create a private AKS cluster with a custom private DNS zone").
PRIVATE_DNS_ZONE_CONTRIBUTOR_ROLE = "b12aa53e-6015-4669-85d0-8515ebb3ae7f"


@dataclass(frozen=True)
class ResourceId:
    """An Azure resource ID, split: `/subscriptions/{subscription}/resourceGroups/{group}/providers/
    {namespace}/{type}/{name}[/{child type}/{child name}]`. Azure compares IDs without case."""

    subscription: str
    resource_group: str
    name: str
    child: str | None = None

    @property
    def text(self) -> str:
        return self.name if self.child is None else f"{self.name}/{self.child}"


_GUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_GROUP = r"[-\w._()]{1,90}"
#: The names Azure accepts inside the IDs gpu-aks takes, by resource type (learn.microsoft.com/azure/
#: azure-resource-manager/management/resource-name-rules): virtualNetworks 2-64 and subnets 1-80
#: "alphanumerics, underscores, periods, and hyphens; start with alphanumeric; end alphanumeric or
#: underscore"; userAssignedIdentities 3-128 "alphanumerics, hyphens, and underscores; start with letter or
#: number"; workspaces 4-63 "alphanumerics and hyphens; start and end with alphanumeric"; vaults 3-24
#: "alphanumerics and hyphens; start with letter; end with letter or digit"; privateDnsZones a DNS name.
#: Anything else (a space, a newline, an escape sequence, `?api-version=`) Azure refuses, and gpu-aks
#: never prints it back into a preview.
NAME_RULES: Mapping[str, tuple[str, str]] = {
    "virtualNetworks": (r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}[a-zA-Z0-9_]",
                        "2 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit and ending with one "
                        "or '_'"),
    "subnets": (r"[a-zA-Z0-9](?:[a-zA-Z0-9_.-]{0,78}[a-zA-Z0-9_])?",
                "1 to 80 letters, digits, '_', '.' or '-', starting with a letter or digit and ending with one or '_'"),
    "userAssignedIdentities": (r"[a-zA-Z0-9][a-zA-Z0-9_-]{2,127}",
                               "3 to 128 letters, digits, '_' or '-', starting with a letter or digit"),
    "privateDnsZones": (r"(?=.{1,253}$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]"
                        r"{0,61}[a-zA-Z0-9])?)+", "a DNS zone name such as privatelink.<region>.azmk8s.io"),
    "workspaces": (r"[a-zA-Z0-9][a-zA-Z0-9-]{2,61}[a-zA-Z0-9]",
                   "4 to 63 letters, digits or '-', starting and ending with a letter or digit"),
    "vaults": (r"[a-zA-Z][a-zA-Z0-9-]{1,22}[a-zA-Z0-9]",
               "3 to 24 letters, digits or '-', starting with a letter and ending with a letter or digit"),
}


def _resource_id_re(provider: str, child: str | None = None) -> re.Pattern[str]:
    name = NAME_RULES[provider.rsplit("/", 1)[-1]][0]
    tail = rf"/{child}/(?P<child>{NAME_RULES[child][0]})" if child else ""
    return re.compile(rf"/subscriptions/(?P<subscription>{_GUID})/resourceGroups/(?P<group>{_GROUP})/providers/"
                      rf"{provider}/(?P<name>{name}){tail}", re.IGNORECASE)


#: The forms the REST models give: `vnetSubnetID`/`podSubnetID` ("/subscriptions/{subscriptionId}/
#: resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}/
#: subnets/{subnetName}"), `userAssignedIdentities` keys, the Defender workspace and the key vault.
RESOURCE_ID_FORMS: Mapping[str, tuple[re.Pattern[str], str]] = {
    "subnet": (_resource_id_re("Microsoft.Network/virtualNetworks", "subnets"),
               "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>"),
    "identity": (_resource_id_re("Microsoft.ManagedIdentity/userAssignedIdentities"),
                 "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ManagedIdentity/userAssignedIdentities/<name>"),
    "privateDnsZone": (_resource_id_re("Microsoft.Network/privateDnsZones"),
                       "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Network/privateDnsZones/"
                       "privatelink.<region>.azmk8s.io"),
    "workspace": (_resource_id_re("Microsoft.OperationalInsights/workspaces"),
                  "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.OperationalInsights/workspaces/<name>"),
    "keyVault": (_resource_id_re("Microsoft.KeyVault/vaults"),
                 "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.KeyVault/vaults/<name>"),
}
#: An Azure Key Vault key identifier with its version, as AKS's KMS needs it
#: (learn.microsoft.com/azure/aks/use-kms-etcd-encryption: `--azure-keyvault-kms-key-id` is the key ID
#: with its version; the REST model: "must be a valid key identifier").
KEY_VAULT_KEY_ID_RE = re.compile(r"https://(?P<vault>[a-zA-Z0-9-]{3,24})\.vault\.(?:azure\.net|azure\.cn|"
                                 r"usgovcloudapi\.net)/keys/[a-zA-Z0-9-]{1,127}/[0-9a-fA-F]{32}")


def parse_resource_id(kind: str, value: Any) -> ResourceId | None:
    """The parts of `value` when it is a resource ID of `kind` (RESOURCE_ID_FORMS), else None."""
    pattern, _ = RESOURCE_ID_FORMS[kind]
    match = pattern.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    return ResourceId(match.group("subscription").lower(), match.group("group"), match.group("name"),
                      match.groupdict().get("child"))


def resource_id_problem(kind: str, value: Any) -> str | None:
    """None when `value` is a resource ID of `kind`, else what is wrong (the part of it, since a long ID
    is shown cut short), with the form."""
    if parse_resource_id(kind, value) is not None:
        return None
    why = _what_is_wrong(kind, value)
    return (f"is not a {RESOURCE_ID_LABELS[kind]} resource ID{': ' + why if why else ''}; the form is "
            f"{RESOURCE_ID_FORMS[kind][1]}")


_TYPE_LABELS = {"virtualNetworks": "virtual network", "subnets": "subnet", "userAssignedIdentities": "identity",
                "privateDnsZones": "zone", "workspaces": "workspace", "vaults": "key vault"}


def _quoted(segment: str) -> str:
    shown = ascii(segment)
    return clipped(shown, 60, 50, "…'")


def _what_is_wrong(kind: str, value: Any) -> str | None:
    """The first part of `value` that does not fit the form of `kind`, segment by segment, compared
    without case as Azure compares IDs."""
    if not isinstance(value, str):
        return None
    if value.endswith("/") and len(value) > 1:
        return "it ends with '/'; remove the trailing slash"
    form = RESOURCE_ID_FORMS[kind][1].split("/")
    # The fixed form of the other private DNS zone names ends in a name, not a placeholder.
    form[-1] = form[-1] if form[-1].startswith("<") else "<zone>"
    segments = value.split("/")
    if segments[0] != "":
        return "it does not start with /subscriptions/"
    if kind == "subnet" and len(segments) == len(form) - 2:
        return "it names a virtual network, not a subnet: add /subnets/<subnet>"
    if len(segments) != len(form):
        return f"it has {len(segments) - 1} segments between '/', the form {len(form) - 1}"
    for position, (segment, expected) in enumerate(zip(segments, form, strict=True)):
        if not expected.startswith("<"):
            if segment.lower() != expected.lower():
                return f"it has {_quoted(segment)} where the form has {expected!r}"
            continue
        resource_type = form[position - 1]
        pattern, allowed = (
            (_GUID, "a subscription ID (a GUID)") if expected == "<id>" else
            (_GROUP, "a resource group name: 1 to 90 letters, digits, '_', '.', '-', '(' or ')'") if expected == "<group>"
            else NAME_RULES[resource_type])
        if not re.fullmatch(pattern, segment):
            return f"{_quoted(segment)} is not {allowed}" if expected in ("<id>", "<group>") else \
                f"the {_TYPE_LABELS[resource_type]} name {_quoted(segment)} is not allowed; Azure takes {allowed}"
    return None


RESOURCE_ID_LABELS: Mapping[str, str] = {
    "subnet": "subnet", "identity": "user-assigned managed identity", "privateDnsZone": "private DNS zone",
    "workspace": "Log Analytics workspace", "keyVault": "key vault",
}


def virtual_network_of(subnet_id: str) -> str:
    """The VNet resource ID of a subnet ID, lower-cased (Azure compares IDs without case)."""
    return re.split(r"/subnets/", subnet_id, flags=re.IGNORECASE)[0].lower()
