"""`gpu-aks:cluster`: the managed cluster itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from gpu_aks_policies.declarations import (
    MISSING,
    Check,
    Default,
    Key,
    Reader,
    Section,
    boolean,
    choice,
    describe,
    string_map_problem,
    text,
)
from gpu_aks_policies.limits import MAX_TAG_NAME_CHARS, MAX_TAG_VALUE_CHARS, MAX_TAGS

from components.aks_api import (
    API_VERSION,
    AUTOSCALER_SETTINGS,
    CLUSTER_NAME_RE,
    DEFAULT_KUBERNETES_VERSION,
    END_OF_SUPPORT_WARNING_DAYS,
    KUBERNETES_VERSION_RE,
    NODE_OS_UPGRADE_CHANNELS,
    RESOURCE_GROUP_RE,
    SKU_TIERS,
    UPGRADE_CHANNELS,
    kubernetes_minor,
    sanitized_cluster_name,
    supported_minors,
)
from components.azure_catalog import region_check
from components.settings.access import OBJECT_ID
from components.settings.api_server import API_SERVER_ACCESS_PROFILE, ApiServerAccessSettings, warn_open_api_server
from components.settings.common import PROJECT, ParseContext
from components.settings.identity import IDENTITY, IdentitySettings
from components.settings.network import NETWORK_PROFILE, NetworkSettings
from components.settings.node_provisioning import NODE_PROVISIONING_PROFILE, NodeProvisioningSettings
from components.settings.security_profile import SECURITY_PROFILE, SecurityProfileSettings

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


#: `kubelogin convert-kubeconfig -l` modes that work without a person at the keyboard.
KubeloginMode = Literal["azurecli", "spn", "msi", "workloadidentity"]
KUBELOGIN_MODES: tuple[str, ...] = get_args(KubeloginMode)
_MODEL = f"ManagedCluster (API {API_VERSION})"

#: Idle GPU nodes are the most expensive thing in the cluster: give them back after 5 idle minutes
#: (AKS's default is 10) and prefer the pool that wastes the least when scaling up.
DEFAULT_AUTOSCALER_PROFILE: Mapping[str, Any] = {
    "expander": "least-waste",
    "scale-down-unneeded-time": "5m",
    "scale-down-delay-after-add": "5m",
}


@dataclass(frozen=True)
class ClusterSettings:
    name: str
    resource_group_name: str
    location: str
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    sku_tier: str = "Free"
    upgrade_channel: str = "patch"
    node_os_upgrade_channel: str = "NodeImage"
    aad_enabled: bool = True
    azure_rbac: bool = True
    admin_group_object_ids: tuple[str, ...] = ()
    disable_local_accounts: bool = True
    oidc_issuer: bool = True
    workload_identity: bool = True
    kubelogin_mode: KubeloginMode = "azurecli"
    #: The API's keys and wire types (three booleans, the rest strings).
    autoscaler_profile: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_AUTOSCALER_PROFILE))
    tags: Mapping[str, str] = field(default_factory=dict)
    #: `gpu-aks:cluster` is a secret config key (it holds a `secure:` value): its tags are passed as
    #: secret inputs, so Pulumi encrypts them in state and never prints them.
    secret: bool = False
    network_profile: NetworkSettings = field(default_factory=NetworkSettings)
    api_server_access_profile: ApiServerAccessSettings = field(default_factory=ApiServerAccessSettings)
    #: The control plane's managed identity (the AKS `identity` block).
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    #: Defender, KMS and Image Cleaner (each off by default); workload identity is `workload_identity`.
    security_profile: SecurityProfileSettings = field(default_factory=SecurityProfileSettings)
    #: Pulumi's `protect` on the cluster and its resource group.
    protect: bool = False
    #: Node auto-provisioning (NAP): `mode: Auto` lets `gpuNodePools` declare GPU capacity by requirement.
    node_provisioning_profile: NodeProvisioningSettings = field(default_factory=NodeProvisioningSettings)

    @property
    def network(self) -> NetworkSettings:
        return self.network_profile

    @property
    def api_server(self) -> ApiServerAccessSettings:
        return self.api_server_access_profile

    @property
    def aks_moves_version(self) -> bool:
        """Whether AKS's auto-upgrade changes the version under the pinned value: `stable` and
        `rapid` move the minor, `patch` moves a pinned patch version (a minor-only pin is an alias
        AKS keeps; learn.microsoft.com/azure/aks/auto-upgrade-cluster)."""
        if self.upgrade_channel in ("stable", "rapid"):
            return True
        return self.upgrade_channel == "patch" and self.kubernetes_version.count(".") == 2


def _location(reader: Reader) -> None:
    location = reader.context.location
    if not isinstance(location, str) or not location.strip():
        reader.problems.add("azure-native:location", "is not set; set the Azure region with "
                                                     "`pulumi config set azure-native:location eastus2`")


def _local_accounts_need_aad(reader: Reader) -> None:
    if reader.get("disableLocalAccounts") and not reader.get("aadProfile.managed"):
        reader.problem("disableLocalAccounts", "true needs aadProfile.managed: true; without Azure AD and local "
                                               "accounts nobody could reach the API server")


def _workload_identity_needs_oidc(reader: Reader) -> None:
    if reader.get("workloadIdentity") and not reader.get("oidcIssuerProfile.enabled"):
        reader.problem("workloadIdentity", "true needs oidcIssuerProfile.enabled: true")


def _default_name(reader: Reader) -> str:
    context: ParseContext = reader.context
    return sanitized_cluster_name(f"{PROJECT}-{context.stack}")


def _kubernetes_version(reader: Reader, value: Any) -> str:
    if value is MISSING:
        value = DEFAULT_KUBERNETES_VERSION
    name = "kubernetesVersion"
    if not isinstance(value, str) or not KUBERNETES_VERSION_RE.fullmatch(value):
        reader.problem(name, f"{reader.shown(value)} is not a Kubernetes version like \"1.37\" or \"1.37.2\" "
                             "(quote it in YAML)")
        return DEFAULT_KUBERNETES_VERSION
    today = reader.context.today
    minor = kubernetes_minor(value)
    supported = supported_minors(today)
    if minor is None or minor.version not in supported:
        if minor is not None and today > minor.end_of_support:
            reason = f"reached its AKS end of support: its last supported day was {minor.end_of_support}"
        elif minor is not None:
            reason = f"is not GA on AKS until {minor.aks_ga}"
        else:
            reason = "is not a version AKS supports"
        reader.problem(name, f"{describe(value)} {reason}; supported on {today}: "
                             f"{', '.join(supported) or 'none (that day is outside the AKS release calendar)'} "
                             f"(AKS release calendar)")
        return DEFAULT_KUBERNETES_VERSION
    days = (minor.end_of_support - today).days
    if days <= END_OF_SUPPORT_WARNING_DAYS:
        reader.warn(name, f"{describe(value)} reaches its AKS end of support on {minor.end_of_support} "
                          f"({days} days); upgrade to {supported[-1]}")
    return value


def _autoscaler_profile(reader: Reader, value: Any) -> dict[str, Any]:
    key = reader.path("autoScalerProfile")
    profile = reader.problems.mapping(value, key)
    reader.problems.unknown_keys(profile, key, tuple(sorted(AUTOSCALER_SETTINGS)))
    checked: dict[str, Any] = {}
    for name, setting_value in profile.items():
        setting = AUTOSCALER_SETTINGS.get(name) if isinstance(name, str) else None
        if setting is None:
            continue
        if setting.check(setting_value):
            checked[name] = setting_value
        else:
            reader.problem(f"autoScalerProfile.{name}", f"{reader.shown(setting_value)} is not allowed; AKS API "
                                                        f"{API_VERSION} takes {setting.describe}")
    return {**DEFAULT_AUTOSCALER_PROFILE, **checked}


def _grants_before_the_cluster(reader: Reader) -> None:
    """Your own private DNS zone and KMS need the control plane's identity granted before the cluster
    exists, which only a user-assigned identity can be (learn.microsoft.com/azure/aks/private-clusters;
    learn.microsoft.com/azure/aks/use-kms-etcd-encryption, "Limitations"; Azure/terraform-azurerm-aks
    `main.tf` preconditions)."""
    if reader.get("identity.type") == "UserAssigned":
        return
    zone = reader.get("apiServerAccessProfile.privateDNSZone")
    if zone and zone not in ("system", "none"):
        reader.problem("apiServerAccessProfile.privateDNSZone", "is your own zone, which needs identity.type "
                                                                "UserAssigned: the identity must hold Private DNS Zone "
                                                                "Contributor on the zone before AKS creates the cluster")
    if reader.get("securityProfile.azureKeyVaultKms.enabled"):
        reader.problem("securityProfile.azureKeyVaultKms.enabled", "needs identity.type UserAssigned: \"KMS etcd "
                                                                   "encryption doesn't work with system-assigned managed "
                                                                   "identity\" (learn.microsoft.com/azure/aks/"
                                                                   "use-kms-etcd-encryption)")


def _cluster(reader: Reader) -> ClusterSettings:
    context: ParseContext = reader.context
    location = context.location if isinstance(context.location, str) and context.location.strip() else ""
    return ClusterSettings(**reader.section.attrs(reader), location=location,
                           secret="cluster" in context.secret_sections)


def _admin_groups(reader: Reader, value: Any) -> tuple[str, ...]:
    """Each an Entra ID group's object ID, once: AKS refuses anything else at deploy time, after the
    preview passed (the same check as `access.clusterAdmins`)."""
    name = "adminGroupObjectIDs"
    if value is MISSING or value is None:
        return ()
    if not isinstance(value, list):
        reader.problem(name, f"{reader.shown(value)} is not a list of group object IDs (GUIDs)")
        return ()
    groups: dict[str, int] = {}
    for index, item in enumerate(value):
        at = f"{name}[{index}]"
        if not isinstance(item, str) or not OBJECT_ID.fullmatch(item):
            reader.problem(at, f"{reader.shown(item)} is not an Entra ID group object ID (a GUID, e.g. from "
                               "`az ad group show -g NAME --query id`)")
        elif item.lower() in groups:
            reader.problem(at, f"{reader.shown(item)} is listed twice (first at {name}[{groups[item.lower()]}])")
        else:
            groups[item.lower()] = index
    return tuple(value) if len(groups) == len(value) else ()


#: The characters Azure refuses in a tag name (policies/limits.py MAX_TAGS cites the page).
TAG_NAME_FORBIDDEN = "<>%&\\?/"


def azure_tags_problem(value: Any) -> str | None:
    """Why Azure would refuse these tags on the cluster and its resource group, or None."""
    problem = string_map_problem(value)
    if problem is not None:
        return problem
    if len(value) > MAX_TAGS:
        return f"has {len(value)} tags; Azure allows at most {MAX_TAGS} on a resource"
    seen: dict[str, str] = {}
    for name, tag_value in value.items():
        if not name or len(name) > MAX_TAG_NAME_CHARS or any(c in TAG_NAME_FORBIDDEN for c in name):
            return (f"has the tag name {describe(name)}: Azure takes 1 to {MAX_TAG_NAME_CHARS} characters without "
                    f"{' '.join(TAG_NAME_FORBIDDEN)}")
        if len(tag_value) > MAX_TAG_VALUE_CHARS:
            return f"has a value of {len(tag_value)} characters for {describe(name)}; Azure takes at most {MAX_TAG_VALUE_CHARS}"
        if name.lower() in seen:
            return (f"has the tags {describe(seen[name.lower()])} and {describe(name)}, one tag to Azure (tag names "
                    "are case-insensitive)")
        seen[name.lower()] = name
    return None


AAD_PROFILE = Section(
    "aadProfile", "Azure AD integration (AKS-managed).", (
        boolean("managed", "Use AKS-managed Azure AD for sign-in.", True, attr="aad_enabled",
                source=f"{_MODEL} aadProfile.managed"),
        boolean("enableAzureRBAC", "Authorize Kubernetes requests with Azure RBAC.", True, attr="azure_rbac",
                source=f"{_MODEL} aadProfile.enableAzureRBAC"),
        Key("adminGroupObjectIDs", "Azure AD groups that get cluster admin: their object IDs (GUIDs).",
            "list of strings", [], parse=_admin_groups, attr="admin_group_object_ids",
            source=f"{_MODEL} aadProfile.adminGroupObjectIDs"),
    ), flatten=True)

OIDC_ISSUER_PROFILE = Section(
    "oidcIssuerProfile", "The cluster's OIDC issuer (needed by workload identity).", (
        boolean("enabled", "Expose an OIDC issuer URL.", True, attr="oidc_issuer",
                source=f"{_MODEL} oidcIssuerProfile.enabled"),
    ), flatten=True)

CLUSTER = Section(
    "cluster", "The AKS cluster. May be a secret key (`pulumi config set --secret`): every value it gives the "
               "cluster and its resource group is then a secret input, shown as [secret] and encrypted in state, and "
               "the `kubernetesVersion` output is secret.", (
        Check(_location, doc="`azure-native:location` (the Azure region) must be set."),
        Check(check_region, doc="`azure-native:location` is an Azure region name (a did-you-mean when it is close to "
                                "one; a warning when it is well-formed but unknown)."),
        AAD_PROFILE,
        boolean("disableLocalAccounts", "Turn off the static admin kubeconfig (Azure AD only).", True,
                attr="disable_local_accounts", source=f"{_MODEL} disableLocalAccounts"),
        Check(_local_accounts_need_aad, reads=("disableLocalAccounts", "aadProfile.managed"),
              doc="`disableLocalAccounts: true` needs `aadProfile.managed: true`."),
        OIDC_ISSUER_PROFILE,
        boolean("workloadIdentity", "Enable workload identity (pods use Azure AD federated credentials).", True,
                attr="workload_identity", source=f"{_MODEL} securityProfile.workloadIdentity.enabled"),
        Check(_workload_identity_needs_oidc, reads=("workloadIdentity", "oidcIssuerProfile.enabled"),
              doc="`workloadIdentity: true` needs `oidcIssuerProfile.enabled: true`."),
        text("name", "The cluster's name in Azure.", Default(_default_name, "gpu-aks-<stack>"),
             check=lambda v: None if isinstance(v, str) and CLUSTER_NAME_RE.fullmatch(v) else
             "is not a cluster name AKS accepts: 1-63 letters, digits, '-' and '_', starting and ending with a "
             "letter or digit", attr="name", source=f"{_MODEL} name pattern"),
        text("resourceGroupName", "The resource group created for the cluster.",
             Default(lambda reader: f"rg-{_default_name(reader)}"[:90], "rg-gpu-aks-<stack>"),
             check=lambda v: None if isinstance(v, str) and RESOURCE_GROUP_RE.fullmatch(v) else
             "is not a resource group name Azure accepts: 1-90 letters, digits, '-', '_', '.', '(' and ')', not "
             "ending with '.'", attr="resource_group_name", source="Microsoft.Resources resourceGroups name pattern"),
        Key("kubernetesVersion", "Kubernetes version: a minor (\"1.37\") or a patch (\"1.37.2\"); quote it in YAML. "
            "Refused once past AKS end of support; a warning 60 days before.", "string",
            Default(lambda reader: DEFAULT_KUBERNETES_VERSION, DEFAULT_KUBERNETES_VERSION),
            parse=_kubernetes_version, attr="kubernetes_version",
            source="AKS release calendar (components/aks_api.py KUBERNETES_MINORS)"),
        choice("skuTier", "The control plane's tier.", SKU_TIERS, "Free", attr="sku_tier",
               source=f"{_MODEL} sku.tier"),
        choice("upgradeChannel", "AKS auto-upgrade channel for Kubernetes.", UPGRADE_CHANNELS, "patch",
               attr="upgrade_channel", source=f"{_MODEL} autoUpgradeProfile.upgradeChannel"),
        choice("nodeOSUpgradeChannel", "AKS auto-upgrade channel for node images and OS.", NODE_OS_UPGRADE_CHANNELS,
               "NodeImage", attr="node_os_upgrade_channel", source=f"{_MODEL} autoUpgradeProfile.nodeOSUpgradeChannel"),
        choice("kubeloginMode", "How the exported kubeconfig signs in (kubelogin convert-kubeconfig -l).",
               KUBELOGIN_MODES, "azurecli", attr="kubelogin_mode",
               source="Azure/kubelogin pkg/internal/converter/convert.go"),
        Key("autoScalerProfile", "Cluster autoscaler settings, with the API's keys and wire types; merged over "
            "gpu-aks's defaults.", "object", Default(lambda reader: dict(DEFAULT_AUTOSCALER_PROFILE),
                                                       describe(dict(DEFAULT_AUTOSCALER_PROFILE))),
            parse=_autoscaler_profile, attr="autoscaler_profile",
            source=f"{_MODEL} autoScalerProfile (components/aks_api.py AUTOSCALER_SETTINGS)"),
        Key("tags", "Azure tags on the cluster (at most 50; names up to 512 characters, without `<>%&\\?/`, "
            "values up to 256).", "map of strings", {}, check=azure_tags_problem, attr="tags",
            source=f"{_MODEL} tags"),
        NETWORK_PROFILE,
        API_SERVER_ACCESS_PROFILE,
        Check(warn_open_api_server, reads=("apiServerAccessProfile",),
              doc="A warning when the API server has neither authorized ranges nor a private endpoint."),
        IDENTITY,
        SECURITY_PROFILE,
        Check(_grants_before_the_cluster, reads=("identity", "apiServerAccessProfile", "securityProfile"),
              doc="Your own private DNS zone and KMS need `identity.type: UserAssigned`."),
        PROTECT,
        NODE_PROVISIONING_PROFILE,
    ), build=_cluster,
    listed=("name", "resourceGroupName", "kubernetesVersion", "skuTier", "upgradeChannel", "nodeOSUpgradeChannel",
            "aadProfile", "disableLocalAccounts", "oidcIssuerProfile", "workloadIdentity", "kubeloginMode",
            "autoScalerProfile", "tags", "networkProfile", "apiServerAccessProfile", "identity", "securityProfile",
            "protect", "nodeProvisioningProfile"))
