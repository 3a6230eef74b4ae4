"""The typed inputs of `GpuCluster`: one field per gpu-aks config key, with its description.

GENERATED from the config-key declarations by `venv/bin/python -m gpu_aks_plugin.schema`; do not edit.
No `from __future__ import annotations`: Pulumi's component host reads these annotations as objects.
"""

# ruff: noqa: E501
from enum import StrEnum
from typing import NotRequired, Required, TypedDict


class SkuTier(StrEnum):
    """The values `cluster.skuTier` allows."""

    FREE = "Free"
    STANDARD = "Standard"
    PREMIUM = "Premium"


class UpgradeChannel(StrEnum):
    """The values `cluster.upgradeChannel` allows."""

    RAPID = "rapid"
    STABLE = "stable"
    PATCH = "patch"
    NODE_IMAGE = "node-image"
    NONE = "none"


class NodeOSUpgradeChannel(StrEnum):
    """The values `cluster.nodeOSUpgradeChannel` allows."""

    NONE = "None"
    UNMANAGED = "Unmanaged"
    NODEIMAGE = "NodeImage"
    SECURITYPATCH = "SecurityPatch"


class KubeloginMode(StrEnum):
    """The values `cluster.kubeloginMode` allows."""

    AZURECLI = "azurecli"
    SPN = "spn"
    MSI = "msi"
    WORKLOADIDENTITY = "workloadidentity"


class AutoScalerProfileExpander(StrEnum):
    """The values `cluster.autoScalerProfile.expander` allows."""

    LEAST_WASTE = "least-waste"
    MOST_PODS = "most-pods"
    PRIORITY = "priority"
    RANDOM = "random"


class NetworkPlugin(StrEnum):
    """The values `cluster.networkProfile.networkPlugin` allows."""

    AZURE = "azure"
    KUBENET = "kubenet"
    NONE = "none"


class NetworkPluginMode(StrEnum):
    """The values `cluster.networkProfile.networkPluginMode` allows."""

    OVERLAY = "overlay"


class NetworkDataplane(StrEnum):
    """The values `cluster.networkProfile.networkDataplane` allows."""

    AZURE = "azure"
    CILIUM = "cilium"


class NetworkPolicy(StrEnum):
    """The values `cluster.networkProfile.networkPolicy` allows."""

    NONE = "none"
    CALICO = "calico"
    AZURE = "azure"
    CILIUM = "cilium"


class OutboundType(StrEnum):
    """The values `cluster.networkProfile.outboundType` allows."""

    LOADBALANCER = "loadBalancer"
    USERDEFINEDROUTING = "userDefinedRouting"
    MANAGEDNATGATEWAY = "managedNATGateway"
    USERASSIGNEDNATGATEWAY = "userAssignedNATGateway"
    NONE = "none"


class IdentityType(StrEnum):
    """The values `cluster.identity.type` allows."""

    SYSTEMASSIGNED = "SystemAssigned"
    USERASSIGNED = "UserAssigned"


class KeyVaultNetworkAccess(StrEnum):
    """The values `cluster.securityProfile.azureKeyVaultKms.keyVaultNetworkAccess` allows."""

    PUBLIC = "Public"
    PRIVATE = "Private"


class NodeProvisioningProfileMode(StrEnum):
    """The values `cluster.nodeProvisioningProfile.mode` allows."""

    MANUAL = "Manual"
    AUTO = "Auto"


class DefaultNodePools(StrEnum):
    """The values `cluster.nodeProvisioningProfile.defaultNodePools` allows."""

    AUTO = "Auto"
    NONE = "None"


class DeployerPrincipalType(StrEnum):
    """The values `access.deployerPrincipalType` allows."""

    USER = "User"
    SERVICEPRINCIPAL = "ServicePrincipal"


class PrincipalType(StrEnum):
    """The values `access.clusterAdmins[].principalType` allows."""

    USER = "User"
    GROUP = "Group"
    SERVICEPRINCIPAL = "ServicePrincipal"


class OsSKU(StrEnum):
    """The values `systemPool.osSKU` allows."""

    UBUNTU = "Ubuntu"
    AZURELINUX = "AzureLinux"
    AZURELINUX3 = "AzureLinux3"
    CBLMARINER = "CBLMariner"
    UBUNTU2204 = "Ubuntu2204"


class OsDiskType(StrEnum):
    """The values `systemPool.osDiskType` allows."""

    MANAGED = "Managed"
    EPHEMERAL = "Ephemeral"


class UndrainableNodeBehavior(StrEnum):
    """The values `cpuPools[].undrainableNodeBehavior` allows."""

    CORDON = "Cordon"
    SCHEDULE = "Schedule"


class ScaleSetPriority(StrEnum):
    """The values `cpuPools[].scaleSetPriority` allows."""

    REGULAR = "Regular"
    SPOT = "Spot"


class GpuInstanceProfile(StrEnum):
    """The values `gpuPools[].gpuInstanceProfile` allows."""

    MIG1G = "MIG1g"
    MIG2G = "MIG2g"
    MIG3G = "MIG3g"
    MIG4G = "MIG4g"
    MIG7G = "MIG7g"


class GpuProfileDriver(StrEnum):
    """The values `gpuPools[].gpuProfile.driver` allows."""

    INSTALL = "Install"
    NONE = "None"


class SharingStrategy(StrEnum):
    """The values `gpuPools[].sharing.strategy` allows."""

    TIMESLICING = "timeSlicing"
    MPS = "mps"


class ImageFamily(StrEnum):
    """The values `gpuNodePools[].imageFamily` allows."""

    UBUNTU = "Ubuntu"
    UBUNTU2204 = "Ubuntu2204"
    UBUNTU2404 = "Ubuntu2404"
    AZURELINUX = "AzureLinux"


class MigStrategy(StrEnum):
    """The values `devicePlugin.migStrategy` allows."""

    NONE = "none"
    SINGLE = "single"
    MIXED = "mixed"


class ValidationAction(StrEnum):
    """The values `admissionPolicy.validationActions` allows."""

    DENY = "Deny"
    WARN = "Warn"
    AUDIT = "Audit"


class DayOfWeek(StrEnum):
    """The values `maintenance.autoUpgrade.dayOfWeek` allows."""

    SUNDAY = "Sunday"
    MONDAY = "Monday"
    TUESDAY = "Tuesday"
    WEDNESDAY = "Wednesday"
    THURSDAY = "Thursday"
    FRIDAY = "Friday"
    SATURDAY = "Saturday"


class AadProfile(TypedDict, total=False):
    """Azure AD integration (AKS-managed)."""

    managed: NotRequired[bool]
    """Use AKS-managed Azure AD for sign-in. Default: true."""
    enableAzureRBAC: NotRequired[bool]
    """Authorize Kubernetes requests with Azure RBAC. Default: true."""
    adminGroupObjectIDs: NotRequired[list[str]]
    """Azure AD groups that get cluster admin: their object IDs (GUIDs). Default: []."""


class OidcIssuerProfile(TypedDict, total=False):
    """The cluster's OIDC issuer (needed by workload identity)."""

    enabled: NotRequired[bool]
    """Expose an OIDC issuer URL. Default: true."""


class AutoScalerProfile(TypedDict, total=False):
    """Cluster autoscaler settings, typed as AKS API 2025-09-01 types them; merged over gpu-aks's defaults."""

    balanceSimilarNodeGroups: NotRequired[str]
    """AKS autoscaler setting `balance-similar-node-groups`: "true" or "false" (a quoted string)."""
    daemonsetEvictionForEmptyNodes: NotRequired[bool]
    """AKS autoscaler setting `daemonset-eviction-for-empty-nodes`: true or false."""
    daemonsetEvictionForOccupiedNodes: NotRequired[bool]
    """AKS autoscaler setting `daemonset-eviction-for-occupied-nodes`: true or false."""
    ignoreDaemonsetsUtilization: NotRequired[bool]
    """AKS autoscaler setting `ignore-daemonsets-utilization`: true or false."""
    expander: NotRequired[AutoScalerProfileExpander]
    """AKS autoscaler setting `expander`: one of least-waste, most-pods, priority, random. gpu-aks's default: least-waste."""
    maxEmptyBulkDelete: NotRequired[str]
    """AKS autoscaler setting `max-empty-bulk-delete`: a positive whole number as a string, e.g. "10"."""
    maxGracefulTerminationSec: NotRequired[str]
    """AKS autoscaler setting `max-graceful-termination-sec`: whole seconds as a string, e.g. "600"."""
    maxNodeProvisionTime: NotRequired[str]
    """AKS autoscaler setting `max-node-provision-time`: a string of whole minutes, e.g. "10m" (the API takes no other unit)."""
    maxTotalUnreadyPercentage: NotRequired[str]
    """AKS autoscaler setting `max-total-unready-percentage`: a whole percentage from 0 to 100 as a string, e.g. "45"."""
    newPodScaleUpDelay: NotRequired[str]
    """AKS autoscaler setting `new-pod-scale-up-delay`: a whole number with a unit, e.g. "0s", "30s", "2m", "1h"."""
    okTotalUnreadyCount: NotRequired[str]
    """AKS autoscaler setting `ok-total-unready-count`: a whole number as a string, e.g. "3"."""
    scanInterval: NotRequired[str]
    """AKS autoscaler setting `scan-interval`: whole seconds as a string, e.g. "10"."""
    scaleDownDelayAfterAdd: NotRequired[str]
    """AKS autoscaler setting `scale-down-delay-after-add`: a string of whole minutes, e.g. "10m" (the API takes no other unit). gpu-aks's default: 5m."""
    scaleDownDelayAfterDelete: NotRequired[str]
    """AKS autoscaler setting `scale-down-delay-after-delete`: a string of whole minutes, e.g. "10m" (the API takes no other unit)."""
    scaleDownDelayAfterFailure: NotRequired[str]
    """AKS autoscaler setting `scale-down-delay-after-failure`: a string of whole minutes, e.g. "10m" (the API takes no other unit)."""
    scaleDownUnneededTime: NotRequired[str]
    """AKS autoscaler setting `scale-down-unneeded-time`: a string of whole minutes, e.g. "10m" (the API takes no other unit). gpu-aks's default: 5m."""
    scaleDownUnreadyTime: NotRequired[str]
    """AKS autoscaler setting `scale-down-unready-time`: a string of whole minutes, e.g. "10m" (the API takes no other unit)."""
    scaleDownUtilizationThreshold: NotRequired[str]
    """AKS autoscaler setting `scale-down-utilization-threshold`: a fraction from 0 to 1 as a string, e.g. "0.5"."""
    skipNodesWithLocalStorage: NotRequired[str]
    """AKS autoscaler setting `skip-nodes-with-local-storage`: "true" or "false" (a quoted string)."""
    skipNodesWithSystemPods: NotRequired[str]
    """AKS autoscaler setting `skip-nodes-with-system-pods`: "true" or "false" (a quoted string)."""


class NetworkProfile(TypedDict, total=False):
    """The cluster network, stated in full: Azure CNI Overlay with the Cilium dataplane and Cilium network policy by default (AKS's recommendation). Fixed at creation except the in-place upgrades AKS offers; a change AKS would refuse is refused at preview (docs/platform.md, "Network")."""

    networkPlugin: NotRequired[NetworkPlugin]
    """The CNI plugin. Default: azure."""
    networkPluginMode: NotRequired[NetworkPluginMode]
    """`overlay`: pods get addresses from podCidr, not the subnet. Default: overlay with networkPlugin azure, unless the pools name podSubnetID."""
    networkDataplane: NotRequired[NetworkDataplane]
    """The dataplane (`cilium`: eBPF, Azure CNI powered by Cilium). Default: cilium with networkPlugin azure."""
    networkPolicy: NotRequired[NetworkPolicy]
    """The network-policy engine. Default: cilium with the cilium dataplane, else none."""
    podCidr: NotRequired[str]
    """Pod addresses (Overlay or kubenet). Default: 10.244.0.0/16."""
    serviceCidr: NotRequired[str]
    """Kubernetes service addresses. Default: 10.0.0.0/16."""
    dnsServiceIP: NotRequired[str]
    """The cluster DNS service's address, inside serviceCidr. Default: the tenth address of serviceCidr (10.0.0.10)."""
    outboundType: NotRequired[OutboundType]
    """Egress: `loadBalancer`, `managedNATGateway`, or with the pools in your subnets `userDefinedRouting` (through your firewall), `userAssignedNATGateway` or `none`. Default: loadBalancer."""


class ApiServerAccessProfile(TypedDict, total=False):
    """Who can reach the Kubernetes API server. Without ranges or a private cluster it answers any address (a warning says so)."""

    authorizedIPRanges: NotRequired[list[str]]
    """The only addresses the public API server answers: IPv4 CIDRs or addresses, at most 200. GitHub-hosted runners have no fixed address (docs/platform.md). Default: []."""
    enablePrivateCluster: NotRequired[bool]
    """No public API server at all. Default: false."""
    privateDNSZone: NotRequired[str]
    """A private cluster's DNS zone: `system` (AKS creates one), `none` (public DNS only) or your own zone's resource ID (needs cluster.identity UserAssigned; gpu-aks grants it Private DNS Zone Contributor there)."""


class Identity(TypedDict, total=False):
    """The control plane's managed identity. `UserAssigned` (an identity you created) lets gpu-aks grant its roles before the cluster exists; `SystemAssigned` is created with the cluster and granted after it (docs/network.md, "Identity and grant order")."""

    type: NotRequired[IdentityType]
    """`SystemAssigned` or `UserAssigned`. Default: UserAssigned when userAssignedIdentities is set, else SystemAssigned."""
    userAssignedIdentities: NotRequired[list[str]]
    """The user-assigned identity's resource ID, in a list of one (the API allows one). Default: []."""


class SecurityMonitoring(TypedDict, total=False):
    """Defender's threat detection."""

    enabled: NotRequired[bool]
    """Turn Defender's security monitoring on. Default: false."""


class Defender(TypedDict, total=False):
    """Microsoft Defender for Containers (runtime threat detection), off by default. Billed per node vCore by Defender for Cloud, plus Log Analytics ingestion (docs/network.md)."""

    securityMonitoring: NotRequired[SecurityMonitoring]
    """Defender's threat detection."""
    logAnalyticsWorkspaceResourceId: NotRequired[str]
    """The Log Analytics workspace Defender reports to (its resource ID)."""


class AzureKeyVaultKms(TypedDict, total=False):
    """etcd encryption of Kubernetes secrets with your Key Vault key (KMS), off by default. Needs identity.type UserAssigned; Key Vault bills per operation (docs/network.md)."""

    enabled: NotRequired[bool]
    """Encrypt etcd with your key. Default: false."""
    keyId: NotRequired[str]
    """The key's identifier, with its version."""
    keyVaultNetworkAccess: NotRequired[KeyVaultNetworkAccess]
    """`Public` (the vault allows public access) or `Private` (private link only). Default: Public."""
    keyVaultResourceId: NotRequired[str]
    """The key vault's resource ID; only with keyVaultNetworkAccess Private."""


class ImageCleaner(TypedDict, total=False):
    """Image Cleaner removes unused images with known vulnerabilities from nodes, off by default; no charge beyond the node CPU its pods use."""

    enabled: NotRequired[bool]
    """Run Image Cleaner. Default: false."""
    intervalHours: NotRequired[int]
    """How often it scans, in hours (24 to 2160). Default: 168."""


class SecurityProfile(TypedDict, total=False):
    """Defender, KMS etcd encryption and Image Cleaner; each off by default (docs/network.md, "Security profile", has what each costs)."""

    defender: NotRequired[Defender]
    """Microsoft Defender for Containers (runtime threat detection), off by default. Billed per node vCore by Defender for Cloud, plus Log Analytics ingestion (docs/network.md)."""
    azureKeyVaultKms: NotRequired[AzureKeyVaultKms]
    """etcd encryption of Kubernetes secrets with your Key Vault key (KMS), off by default. Needs identity.type UserAssigned; Key Vault bills per operation (docs/network.md)."""
    imageCleaner: NotRequired[ImageCleaner]
    """Image Cleaner removes unused images with known vulnerabilities from nodes, off by default; no charge beyond the node CPU its pods use."""


class NodeProvisioningProfile(TypedDict, total=False):
    """Node auto-provisioning (AKS runs Karpenter); `gpuNodePools` needs `mode: Auto`."""

    mode: NotRequired[NodeProvisioningProfileMode]
    """`Auto`: AKS provisions nodes with Karpenter (NAP); then every AgentPool must be fixed-size (`minCount` = `maxCount`). Default: Manual."""
    defaultNodePools: NotRequired[DefaultNodePools]
    """`Auto`: AKS adds its default Karpenter NodePools (general-purpose nodes for any pod); `None`: only the NodePools declared here. Do not switch Auto to None under load. Default: Auto."""


class Cluster(TypedDict, total=False):
    """The AKS cluster. May be a secret key (`pulumi config set --secret`): every value it gives the cluster and its resource group is then a secret input, shown as [secret] and encrypted in state, and the `kubernetesVersion` output is secret."""

    name: NotRequired[str]
    """The cluster's name in Azure. Default: gpu-aks-<stack>."""
    resourceGroupName: NotRequired[str]
    """The resource group created for the cluster. Default: rg-gpu-aks-<stack>."""
    kubernetesVersion: NotRequired[str]
    """Kubernetes version: a minor ("1.37") or a patch ("1.37.2"); quote it in YAML. Refused once past AKS end of support; a warning 60 days before. Default: 1.37."""
    skuTier: NotRequired[SkuTier]
    """The control plane's tier. Default: Free."""
    upgradeChannel: NotRequired[UpgradeChannel]
    """AKS auto-upgrade channel for Kubernetes. Default: patch."""
    nodeOSUpgradeChannel: NotRequired[NodeOSUpgradeChannel]
    """AKS auto-upgrade channel for node images and OS. Default: NodeImage."""
    aadProfile: NotRequired[AadProfile]
    """Azure AD integration (AKS-managed)."""
    disableLocalAccounts: NotRequired[bool]
    """Turn off the static admin kubeconfig (Azure AD only). Default: true."""
    oidcIssuerProfile: NotRequired[OidcIssuerProfile]
    """The cluster's OIDC issuer (needed by workload identity)."""
    workloadIdentity: NotRequired[bool]
    """Enable workload identity (pods use Azure AD federated credentials). Default: true."""
    kubeloginMode: NotRequired[KubeloginMode]
    """How the exported kubeconfig signs in (kubelogin convert-kubeconfig -l). Default: azurecli."""
    autoScalerProfile: NotRequired[AutoScalerProfile]
    """Cluster autoscaler settings, with the API's keys and wire types; merged over gpu-aks's defaults. Default: {"expander": "least-waste", "scale-down-delay-after-add": "5…."""
    tags: NotRequired[dict[str, str]]
    """Azure tags on the cluster (at most 50; names up to 512 characters, without `<>%&\\?/`, values up to 256). Default: {}."""
    networkProfile: NotRequired[NetworkProfile]
    """The cluster network, stated in full: Azure CNI Overlay with the Cilium dataplane and Cilium network policy by default (AKS's recommendation). Fixed at creation except the in-place upgrades AKS offers; a change AKS would refuse is refused at preview (docs/platform.md, "Network")."""
    apiServerAccessProfile: NotRequired[ApiServerAccessProfile]
    """Who can reach the Kubernetes API server. Without ranges or a private cluster it answers any address (a warning says so)."""
    identity: NotRequired[Identity]
    """The control plane's managed identity. `UserAssigned` (an identity you created) lets gpu-aks grant its roles before the cluster exists; `SystemAssigned` is created with the cluster and granted after it (docs/network.md, "Identity and grant order")."""
    securityProfile: NotRequired[SecurityProfile]
    """Defender, KMS etcd encryption and Image Cleaner; each off by default (docs/network.md, "Security profile", has what each costs)."""
    protect: NotRequired[bool]
    """Pulumi's `protect` on the cluster and its resource group: `pulumi destroy` and replacements stop at them. Default: false."""
    nodeProvisioningProfile: NotRequired[NodeProvisioningProfile]
    """Node auto-provisioning (AKS runs Karpenter); `gpuNodePools` needs `mode: Auto`."""


class ClusterAdmin(TypedDict, total=False):
    """A principal granted AKS RBAC Cluster Admin on the cluster."""

    objectId: Required[str]
    """The principal's Azure AD object ID (a GUID). Required."""
    principalType: Required[PrincipalType]
    """What the principal is; Azure refuses a role assignment whose type does not match. Required."""


class Access(TypedDict, total=False):
    """Kubernetes rights for whoever deploys (Azure RBAC for Kubernetes)."""

    grantDeployerClusterAdmin: NotRequired[bool]
    """Grant the deployer "Azure Kubernetes Service RBAC Cluster Admin" on the cluster. Default: true."""
    rolePropagationSeconds: NotRequired[int]
    """How long in-cluster resources wait after a new role assignment. Default: 300."""
    deployerPrincipalType: NotRequired[DeployerPrincipalType]
    """The deployer's `principalType` on its role assignment: `User` (a person after `az login`) or `ServicePrincipal` (a service principal or managed identity, as in CI). Azure refuses a mismatch (`UnmatchedPrincipalType`). Default: ServicePrincipal when ARM_CLIENT_ID or AZURE_CLIENT_ID is set, else User."""
    clusterAdmins: NotRequired[list[ClusterAdmin]]
    """Principals granted "Azure Kubernetes Service RBAC Cluster Admin" explicitly, whoever deploys: a list of `{objectId, principalType}` (`User`, `Group` or `ServicePrincipal`). Default: []."""


class SystemPool(TypedDict, total=False):
    """The inline system (CPU) pool; never replaced, so its name has no suffix."""

    name: NotRequired[str]
    """The pool's name (at most 12 characters). Default: system."""
    vmSize: NotRequired[str]
    """The VM size of the system nodes. Default: Standard_D4ds_v5."""
    minCount: NotRequired[int]
    """Fewest nodes (at least 1). Default: 1."""
    maxCount: NotRequired[int]
    """Most nodes. Default: 3."""
    availabilityZones: NotRequired[list[str]]
    """Availability zones of the pool's nodes. Default: []."""
    osSKU: NotRequired[OsSKU]
    """The node OS image. Default: AzureLinux."""
    maxSurge: NotRequired[str]
    """Extra nodes during an upgrade: a node count or a percentage. Default: 33%."""
    onlyCriticalAddonsEnabled: NotRequired[bool]
    """Taint the pool `CriticalAddonsOnly=true:NoSchedule` so app pods stay off. Default: true."""
    vnetSubnetID: NotRequired[str]
    """The subnet the pool's nodes (and, without podSubnetID, pods) join: a subnet resource ID. All pools share one VNet; docs/network.md. Create-only: a change replaces the resource."""
    podSubnetID: NotRequired[str]
    """The subnet pods join (Azure CNI with dynamic pod IP allocation, not Overlay); all pools or none. Create-only: a change replaces the resource."""
    osDiskType: NotRequired[OsDiskType]
    """`Managed` or `Ephemeral` (the OS on the VM's cache or temp disk: no disk charge, faster node start). Create-only: a change replaces the resource."""
    osDiskSizeGB: NotRequired[int]
    """OS disk size in GiB (0: the size's default); an Ephemeral disk must fit the VM's cache or temp disk. Create-only: a change replaces the resource."""
    maxPods: NotRequired[int]
    """Pods per node: 10 to 250 with every network plugin (30 at least on the system pool). Create-only: a change replaces the resource."""
    enableEncryptionAtHost: NotRequired[bool]
    """Encrypt temp disks, caches and disk flows at the VM host (needs the EncryptionAtHost subscription feature). Create-only: a change replaces the resource."""


class CpuPool(TypedDict, total=False):
    """One CPU user pool."""

    name: Required[str]
    """The pool's name: lowercase letters and digits, starting with a letter; at most 8 (12 with keepAzureName). Required."""
    vmSize: NotRequired[str]
    """The VM size of the pool's nodes. Default: Standard_D8ds_v5. Create-only: a change replaces the resource."""
    minCount: NotRequired[int]
    """Fewest nodes the autoscaler keeps. Default: 0."""
    maxCount: NotRequired[int]
    """Most nodes the autoscaler adds. Default: 3."""
    nodeTaints: NotRequired[list[str]]
    """Taints, as `key=value:Effect`. Default: []."""
    nodeLabels: NotRequired[dict[str, str]]
    """Labels for the pool's nodes (not under AKS's reserved prefixes, not gpu-aks.io/pool). Default: {}."""
    availabilityZones: NotRequired[list[str]]
    """Availability zones of the pool's nodes. Default: []. Create-only: a change replaces the resource."""
    osSKU: NotRequired[OsSKU]
    """The node OS image. Default: Ubuntu. Create-only: a change replaces the resource."""
    maxSurge: NotRequired[str]
    """Extra nodes during an upgrade: a node count or a percentage. Default: 33%."""
    maxUnavailable: NotRequired[str]
    """Nodes that may be unavailable at once during an upgrade: a count or a percentage."""
    drainTimeoutInMinutes: NotRequired[int]
    """How long a drain waits on PodDisruptionBudgets before the upgrade gives up on the node."""
    nodeSoakDurationInMinutes: NotRequired[int]
    """Minutes to wait after upgrading a node before the next."""
    undrainableNodeBehavior: NotRequired[UndrainableNodeBehavior]
    """What AKS does with a node whose pods cannot be evicted; either way the upgrade and the cluster end failed. `Schedule` (AKS's default): the node is made schedulable again, not upgraded, and the surge nodes are deleted. `Cordon`: the node stays cordoned (label `kubernetes.azure.com/upgrade-status: Quarantined`) and one surge node per blocked node stays, billed, until you act (canceled, not failed, when too few surge nodes exist)."""
    scaleSetPriority: NotRequired[ScaleSetPriority]
    """`Spot` for Spot VMs (AKS adds the Spot taint; gpu-aks declares it). Default: Regular. Create-only: a change replaces the resource."""
    spotMaxPrice: NotRequired[float]
    """Highest price per hour in US dollars for Spot VMs, up to 5 decimal places; -1 pays up to on-demand. Default: -1.0. Create-only: a change replaces the resource."""
    keepAzureName: NotRequired[bool]
    """Use the config name as the Azure name (gpu-aks 0.1 naming); a replacement then deletes the old pool first. Default: false."""
    vnetSubnetID: NotRequired[str]
    """The subnet the pool's nodes (and, without podSubnetID, pods) join: a subnet resource ID. All pools share one VNet; docs/network.md. Create-only: a change replaces the resource."""
    podSubnetID: NotRequired[str]
    """The subnet pods join (Azure CNI with dynamic pod IP allocation, not Overlay); all pools or none. Create-only: a change replaces the resource."""
    osDiskType: NotRequired[OsDiskType]
    """`Managed` or `Ephemeral` (the OS on the VM's cache or temp disk: no disk charge, faster node start). Create-only: a change replaces the resource."""
    osDiskSizeGB: NotRequired[int]
    """OS disk size in GiB (0: the size's default); an Ephemeral disk must fit the VM's cache or temp disk. Create-only: a change replaces the resource."""
    maxPods: NotRequired[int]
    """Pods per node: 10 to 250 with every network plugin (30 at least on the system pool). Create-only: a change replaces the resource."""
    enableEncryptionAtHost: NotRequired[bool]
    """Encrypt temp disks, caches and disk flows at the VM host (needs the EncryptionAtHost subscription feature). Create-only: a change replaces the resource."""


class DeclaredGpu(TypedDict, total=False):
    """The GPU of a VM size gpu-aks's catalog does not know yet."""

    model: Required[str]
    """The GPU model, e.g. B200. Required."""
    count: Required[int]
    """GPUs per node. Required."""
    memoryGiB: Required[int]
    """Memory per GPU in GiB. Required."""


class GpuProfile(TypedDict, total=False):
    """How AKS sets up the GPU."""

    driver: NotRequired[GpuProfileDriver]
    """`Install`: AKS installs the NVIDIA driver; `None`: bring your own (e.g. the GPU Operator). Default: Install. Create-only: a change replaces the resource."""


class Sharing(TypedDict, total=False):
    """Share each GPU (or MIG instance) of the pool between pods through NVIDIA's device plugin: a node advertises its GPUs times `replicas` as nvidia.com/gpu, and a pod asking for 1 gets one share. Absent: pods get whole GPUs. See docs/sharing.md."""

    strategy: NotRequired[SharingStrategy]
    """`timeSlicing`: pods take turns on the whole GPU (no memory or fault isolation); `mps`: NVIDIA's MPS control daemon runs the pods' kernels side by side, each limited to 1/replicas of the GPU's memory and compute (not on MIG pools)."""
    replicas: NotRequired[int]
    """How many pods share one GPU: 2 to 250 (48 with mps)."""


class GpuPool(TypedDict, total=False):
    """One GPU pool: the CPU pool keys, MIG, the GPU driver and GPU sharing."""

    name: Required[str]
    """The pool's name: lowercase letters and digits, starting with a letter; at most 8 (12 with keepAzureName). Required."""
    vmSize: Required[str]
    """An NVIDIA GPU size gpu-aks knows (docs/configuration.md, "GPU sizes a GPU pool accepts"); retired sizes are refused with their replacement. Required. Create-only: a change replaces the resource."""
    minCount: NotRequired[int]
    """Fewest nodes the autoscaler keeps (idle GPUs cost nothing at 0). Default: 0."""
    maxCount: NotRequired[int]
    """Most nodes the autoscaler adds. Default: 2."""
    nodeTaints: NotRequired[list[str]]
    """Taints, as `key=value:Effect`. Needs a NoSchedule taint. Default: ["sku=gpu:NoSchedule"]."""
    nodeLabels: NotRequired[dict[str, str]]
    """Labels for the pool's nodes (not under AKS's reserved prefixes, not gpu-aks.io/pool). Default: {}."""
    availabilityZones: NotRequired[list[str]]
    """Availability zones of the pool's nodes. Default: []. Create-only: a change replaces the resource."""
    osSKU: NotRequired[OsSKU]
    """The node OS image. Default: Ubuntu. Create-only: a change replaces the resource."""
    maxSurge: NotRequired[str]
    """Extra nodes during an upgrade: a node count or a percentage. Default: 33%."""
    maxUnavailable: NotRequired[str]
    """Nodes that may be unavailable at once during an upgrade: a count or a percentage."""
    drainTimeoutInMinutes: NotRequired[int]
    """How long a drain waits on PodDisruptionBudgets before the upgrade gives up on the node. Default: 60."""
    nodeSoakDurationInMinutes: NotRequired[int]
    """Minutes to wait after upgrading a node before the next. Default: 5."""
    undrainableNodeBehavior: NotRequired[UndrainableNodeBehavior]
    """What AKS does with a node whose pods cannot be evicted; either way the upgrade and the cluster end failed. `Schedule` (AKS's default): the node is made schedulable again, not upgraded, and the surge nodes are deleted. `Cordon`: the node stays cordoned (label `kubernetes.azure.com/upgrade-status: Quarantined`) and one surge node per blocked node stays, billed, until you act (canceled, not failed, when too few surge nodes exist). Default: Schedule."""
    scaleSetPriority: NotRequired[ScaleSetPriority]
    """`Spot` for Spot VMs (AKS adds the Spot taint; gpu-aks declares it). Default: Regular. Create-only: a change replaces the resource."""
    spotMaxPrice: NotRequired[float]
    """Highest price per hour in US dollars for Spot VMs, up to 5 decimal places; -1 pays up to on-demand. Default: -1.0. Create-only: a change replaces the resource."""
    keepAzureName: NotRequired[bool]
    """Use the config name as the Azure name (gpu-aks 0.1 naming); a replacement then deletes the old pool first. Default: false."""
    vnetSubnetID: NotRequired[str]
    """The subnet the pool's nodes (and, without podSubnetID, pods) join: a subnet resource ID. All pools share one VNet; docs/network.md. Create-only: a change replaces the resource."""
    podSubnetID: NotRequired[str]
    """The subnet pods join (Azure CNI with dynamic pod IP allocation, not Overlay); all pools or none. Create-only: a change replaces the resource."""
    osDiskType: NotRequired[OsDiskType]
    """`Managed` or `Ephemeral` (the OS on the VM's cache or temp disk: no disk charge, faster node start). Create-only: a change replaces the resource."""
    osDiskSizeGB: NotRequired[int]
    """OS disk size in GiB (0: the size's default); an Ephemeral disk must fit the VM's cache or temp disk. Create-only: a change replaces the resource."""
    maxPods: NotRequired[int]
    """Pods per node: 10 to 250 with every network plugin (30 at least on the system pool). Create-only: a change replaces the resource."""
    enableEncryptionAtHost: NotRequired[bool]
    """Encrypt temp disks, caches and disk flows at the VM host (needs the EncryptionAtHost subscription feature). Create-only: a change replaces the resource."""
    gpu: NotRequired[DeclaredGpu]
    """The GPU of a size the catalog does not know yet: `{model, count, memoryGiB}` (a warning; the preflight checks it against Azure's SKU list)."""
    gpuInstanceProfile: NotRequired[GpuInstanceProfile]
    """MIG partition of each GPU (A100, H100 and H200 sizes). Create-only: a change replaces the resource."""
    gpuProfile: NotRequired[GpuProfile]
    """How AKS sets up the GPU."""
    sharing: NotRequired[Sharing]
    """Share each GPU (or MIG instance) of the pool between pods through NVIDIA's device plugin: a node advertises its GPUs times `replicas` as nvidia.com/gpu, and a pod asking for 1 gets one share. Absent: pods get whole GPUs. See docs/sharing.md."""


class NodePoolLimits(TypedDict, total=False):
    """A GPU NodePool's ceilings (Karpenter `spec.limits`); at least one."""

    gpu: NotRequired[int]
    """Most GPUs (`nvidia.com/gpu`) the NodePool's nodes may have together (1 to 40000)."""
    cpu: NotRequired[int]
    """Most vCPUs the NodePool's nodes may have together (1 to 1440000)."""


class GpuNodePool(TypedDict, total=False):
    """One GPU NodePool (NAP): the GPUs it may bring, Spot or on-demand, up to its limits."""

    name: Required[str]
    """The NodePool's name (its nodes carry `gpu-aks.io/pool: <name>`). Required."""
    gpus: NotRequired[list[str]]
    """GPU names the NodePool may bring (`karpenter.azure.com/sku-gpu-name`, e.g. `H100`); a name no size carries is refused with the nearest ones, and one Karpenter's Azure provider gives but the catalog lacks is allowed with a warning. Default: []."""
    gpuCount: NotRequired[list[int]]
    """GPUs per node (`karpenter.azure.com/sku-gpu-count`); any count when absent. Default: []."""
    vmSizes: NotRequired[list[str]]
    """Sizes the NodePool may bring (`node.kubernetes.io/instance-type`), instead of `gpus`. Default: []."""
    capacityTypes: NotRequired[list[str]]
    """`spot`, `on-demand` or both; with both Karpenter takes Spot first and falls back to on-demand. Default: ["on-demand"]."""
    limits: Required[NodePoolLimits]
    """Ceilings of the NodePool (required): `gpu` (GPUs, Karpenter's `nvidia.com/gpu`) and/or `cpu` (vCPUs), as `maxCount` is for a pool. Required."""
    weight: NotRequired[int]
    """Preference among NodePools (1-100; Karpenter tries the highest first)."""
    nodeTaints: NotRequired[list[str]]
    """Taints, as `key=value:Effect`. Karpenter adds no GPU taint: the NodePool declares it. Default: ["sku=gpu:NoSchedule"]."""
    nodeLabels: NotRequired[dict[str, str]]
    """Labels for the NodePool's nodes (not `accelerator`, nor under `karpenter.sh/`, `karpenter.azure.com/` or AKS's reserved prefixes, nor a well-known label that picks instance types, such as `node.kubernetes.io/instance-type`: Karpenter requires its template labels). Default: {}."""
    consolidateAfter: NotRequired[str]
    """How long a node stays empty before Karpenter removes it (only empty nodes are). Default: 10m."""
    imageFamily: NotRequired[ImageFamily]
    """The node image. Default: Ubuntu."""
    osDiskSizeGB: NotRequired[int]
    """OS disk size (GB); AKSNodeClass's default (128) when absent."""
    vnetSubnetID: NotRequired[str]
    """Your subnet the NodePool's nodes join (a subnet resource ID, in the VNet of the other pools); absent: the cluster's node subnet (the system pool's). docs/network.md."""
    sharing: NotRequired[Sharing]
    """Share each GPU (or MIG instance) of the pool between pods through NVIDIA's device plugin: a node advertises its GPUs times `replicas` as nvidia.com/gpu, and a pod asking for 1 gets one share. Absent: pods get whole GPUs. See docs/sharing.md."""


class DevicePlugin(TypedDict, total=False):
    """gpu-aks's NVIDIA device-plugin DaemonSet (self-managed GPU pools: AKS installs the driver, you install the plugin)."""

    enabled: NotRequired[bool]
    """Deploy the DaemonSet. Default: true."""
    image: NotRequired[str]
    """The device-plugin image. Default: nvcr.io/nvidia/k8s-device-plugin:v0.20.0."""
    namespace: NotRequired[str]
    """The namespace of the DaemonSet. Default: gpu-resources."""
    migStrategy: NotRequired[MigStrategy]
    """How MIG instances are advertised: `single` (nvidia.com/gpu) or `mixed` (nvidia.com/mig-<profile>). Default: single when a served pool uses MIG, else none."""
    pools: NotRequired[list[str]]
    """The GPU pools it serves. Default: every GPU pool with gpuProfile.driver: Install that dra.pools does not list."""


class Dra(TypedDict, total=False):
    """GPU pools served through Dynamic Resource Allocation by NVIDIA's DRA driver (its chart nvidia-dra-driver-gpu 25.8.1) instead of the device plugin; see docs/gpu-capacity.md, "DRA pools"."""

    pools: NotRequired[list[str]]
    """The GPU pools (AgentPools) the DRA driver serves; the device plugin then leaves them out. Default: []."""
    extendedResource: NotRequired[bool]
    """Serve `nvidia.com/gpu` through DRA on those pools (KEP-5004): gpu-aks adds the DeviceClass nvidia-gpu.gpu-aks.io with `extendedResourceName: nvidia.com/gpu`, so pods written for the device plugin land there unchanged. Default: true."""
    namespace: NotRequired[str]
    """The namespace of the DRA driver. Default: nvidia-dra-driver-gpu."""


class Team(TypedDict, total=False):
    """One team: its ClusterQueue, its GPU quota per pool, and a LocalQueue in each namespace."""

    name: Required[str]
    """The team, named as its ClusterQueue and LocalQueues are (a DNS label). Required."""
    namespaces: Required[list[str]]
    """The namespaces whose jobs the team's queue admits. Required."""
    gpus: Required[dict[str, int]]
    """GPUs per GPU pool the team may use at once, e.g. {gput4: 4}. Required."""


class Queues(TypedDict, total=False):
    """Kueue 0.17.0 from its own chart, a ResourceFlavor per GPU pool and a ClusterQueue per team (docs/gpu-capacity.md, "Queues")."""

    enabled: NotRequired[bool]
    """Install Kueue and the queues. Default: false."""
    teams: NotRequired[list[Team]]
    """The teams and their GPU quota."""


class AdmissionPolicy(TypedDict, total=False):
    """The GPU rules as a ValidatingAdmissionPolicy in the cluster."""

    enabled: NotRequired[bool]
    """Install the policy and its binding. Default: true."""
    validationActions: NotRequired[list[ValidationAction]]
    """What a violation does. Default: ["Warn", "Audit"]."""
    exemptNamespaces: NotRequired[list[str]]
    """Namespaces the policy skips. Default: [kube-system, <devicePlugin.namespace>]."""


class SmokeTest(TypedDict, total=False):
    """One GPU check Job per served GPU pool after `pulumi up`."""

    enabled: NotRequired[bool]
    """Run the smoke test. Default: false."""
    image: NotRequired[str]
    """The image of the check Job (has PyTorch with CUDA). Default: nvcr.io/nvidia/pytorch:25.10-py3."""


class DateSpan(TypedDict, total=False):
    """A span of dates on which no maintenance may start."""

    start: Required[str]
    """The first day nothing may start, YYYY-MM-DD. Required."""
    end: Required[str]
    """The last day nothing may start, YYYY-MM-DD. Required."""


class AutoUpgrade(TypedDict, total=False):
    """Kubernetes upgrades (cluster.upgradeChannel)."""

    dayOfWeek: NotRequired[DayOfWeek]
    """The day the window opens. Default: Saturday."""
    startTime: NotRequired[str]
    """When it opens, "HH:MM" in utcOffset's time. Default: 00:00."""
    durationHours: NotRequired[int]
    """How long it stays open: 4 to 24 hours. Default: 8."""
    utcOffset: NotRequired[str]
    """The window's UTC offset, "+HH:MM" or "-HH:MM". Default: +00:00."""
    intervalWeeks: NotRequired[int]
    """Every how many weeks: 1 to 4. Default: 1."""
    startDate: NotRequired[str]
    """The window is inactive before this date."""
    notAllowedDates: NotRequired[list[DateSpan]]
    """Date spans on which nothing may start: a list of `{start, end}` dates. Default: []."""


class NodeOSUpgradeDateSpan(TypedDict, total=False):
    """A span of dates on which no maintenance may start."""

    start: Required[str]
    """The first day nothing may start, YYYY-MM-DD. Required."""
    end: Required[str]
    """The last day nothing may start, YYYY-MM-DD. Required."""


class NodeOSUpgrade(TypedDict, total=False):
    """Node image and OS upgrades (cluster.nodeOSUpgradeChannel)."""

    dayOfWeek: NotRequired[DayOfWeek]
    """The day the window opens. Default: Sunday."""
    startTime: NotRequired[str]
    """When it opens, "HH:MM" in utcOffset's time. Default: 00:00."""
    durationHours: NotRequired[int]
    """How long it stays open: 4 to 24 hours. Default: 8."""
    utcOffset: NotRequired[str]
    """The window's UTC offset, "+HH:MM" or "-HH:MM". Default: +00:00."""
    intervalWeeks: NotRequired[int]
    """Every how many weeks: 1 to 4. Default: 1."""
    startDate: NotRequired[str]
    """The window is inactive before this date."""
    notAllowedDates: NotRequired[list[NodeOSUpgradeDateSpan]]
    """Date spans on which nothing may start: a list of `{start, end}` dates. Default: []."""


class Maintenance(TypedDict, total=False):
    """When AKS may upgrade: `aksManagedAutoUpgradeSchedule` (Kubernetes) and `aksManagedNodeOSUpgradeSchedule` (node images), each a weekly window of at least 4 hours. Created only for a channel that upgrades something."""

    autoUpgrade: NotRequired[AutoUpgrade]
    """Kubernetes upgrades (cluster.upgradeChannel)."""
    nodeOSUpgrade: NotRequired[NodeOSUpgrade]
    """Node image and OS upgrades (cluster.nodeOSUpgradeChannel)."""


class DcgmExporter(TypedDict, total=False):
    """NVIDIA's DCGM exporter, one DaemonSet per served GPU pool."""

    enabled: NotRequired[bool]
    """Run the exporter (turn off where something else exports DCGM metrics). Default: true."""
    image: NotRequired[str]
    """The exporter image. Default: nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless."""


class Alerts(TypedDict, total=False):
    """GPU alerts: one Azure Prometheus rule group on the workspace, scoped to the cluster."""

    enabled: NotRequired[bool]
    """Create the alert rule group. Default: true."""
    actionGroupResourceId: NotRequired[str]
    """An existing action group every alert notifies."""
    emails: NotRequired[list[str]]
    """Addresses of an action group gpu-aks creates for the alerts. Default: []."""
    gpuTemperatureCelsius: NotRequired[int]
    """GpuTemperatureHigh fires above this for 5 minutes. Default: 85."""
    pendingGpuPodMinutes: NotRequired[int]
    """GpuPodPending fires when a GPU pod stays Pending this long. Default: 15."""
    idleGpuUtilizationPercent: NotRequired[int]
    """GpuAllocatedButIdle: a GPU held by a pod under this utilisation ... Default: 5."""
    idleGpuMinutes: NotRequired[int]
    """... for this many minutes. Default: 60."""
    agentDownMinutes: NotRequired[int]
    """GpuNodeAgentDown fires when a GPU node lacks a ready device plugin or exporter this long. Default: 10."""


class Observability(TypedDict, total=False):
    """Azure Monitor managed Prometheus, NVIDIA's DCGM exporter on the served GPU pools, GPU alerts and an optional Azure Managed Grafana (docs/observe.md)."""

    enabled: NotRequired[bool]
    """Turn on managed Prometheus, the exporter and the alerts (they cost money: docs/observe.md). Default: false."""
    azureMonitorWorkspaceResourceId: NotRequired[str]
    """An existing Azure Monitor workspace; default: one is created."""
    azureMonitorWorkspaceLocation: NotRequired[str]
    """The region of that workspace; default: read from Azure. The data collection endpoint and rule and the rule groups go to the workspace's region (Microsoft's templates); required for a private cluster."""
    grafana: NotRequired[bool]
    """Azure Managed Grafana (Standard) with the GPU dashboard, reading the workspace. Default: false."""
    dcgmExporter: NotRequired[DcgmExporter]
    """NVIDIA's DCGM exporter, one DaemonSet per served GPU pool."""
    alerts: NotRequired[Alerts]
    """GPU alerts: one Azure Prometheus rule group on the workspace, scoped to the cluster."""


class GpuClusterArgs(TypedDict, total=False):
    """The inputs of GpuCluster: the gpu-aks stack config keys, spelled and nested the same."""

    location: Required[str]
    """The Azure region of the cluster and its resource group (the stack config's `azure-native:location`). Required."""
    cluster: NotRequired[Cluster]
    """The AKS cluster. May be a secret key (`pulumi config set --secret`): every value it gives the cluster and its resource group is then a secret input, shown as [secret] and encrypted in state, and the `kubernetesVersion` output is secret. Stack config key: `gpu-aks:cluster`."""
    access: NotRequired[Access]
    """Kubernetes rights for whoever deploys (Azure RBAC for Kubernetes). Stack config key: `gpu-aks:access`."""
    systemPool: NotRequired[SystemPool]
    """The inline system (CPU) pool; never replaced, so its name has no suffix. Stack config key: `gpu-aks:systemPool`."""
    cpuPools: NotRequired[list[CpuPool]]
    """CPU user pools, each an AgentPool of its own. Stack config key: `gpu-aks:cpuPools`."""
    gpuPools: NotRequired[list[GpuPool]]
    """GPU pools, each an AgentPool of its own; tainted, labelled and served by the device plugin. Stack config key: `gpu-aks:gpuPools`."""
    gpuNodePools: NotRequired[list[GpuNodePool]]
    """GPU NodePools under node auto-provisioning (needs `cluster.nodeProvisioningProfile.mode: Auto`); each a karpenter.sh/v1 NodePool with its own AKSNodeClass. Stack config key: `gpu-aks:gpuNodePools`."""
    devicePlugin: NotRequired[DevicePlugin]
    """gpu-aks's NVIDIA device-plugin DaemonSet (self-managed GPU pools: AKS installs the driver, you install the plugin). Stack config key: `gpu-aks:devicePlugin`."""
    dra: NotRequired[Dra]
    """GPU pools served through Dynamic Resource Allocation by NVIDIA's DRA driver (its chart nvidia-dra-driver-gpu 25.8.1) instead of the device plugin; see docs/gpu-capacity.md, "DRA pools". Stack config key: `gpu-aks:dra`."""
    queues: NotRequired[Queues]
    """Kueue 0.17.0 from its own chart, a ResourceFlavor per GPU pool and a ClusterQueue per team (docs/gpu-capacity.md, "Queues"). Stack config key: `gpu-aks:queues`."""
    admissionPolicy: NotRequired[AdmissionPolicy]
    """The GPU rules as a ValidatingAdmissionPolicy in the cluster. Stack config key: `gpu-aks:admissionPolicy`."""
    smokeTest: NotRequired[SmokeTest]
    """One GPU check Job per served GPU pool after `pulumi up`. Stack config key: `gpu-aks:smokeTest`."""
    maintenance: NotRequired[Maintenance]
    """When AKS may upgrade: `aksManagedAutoUpgradeSchedule` (Kubernetes) and `aksManagedNodeOSUpgradeSchedule` (node images), each a weekly window of at least 4 hours. Created only for a channel that upgrades something. Stack config key: `gpu-aks:maintenance`."""
    observability: NotRequired[Observability]
    """Azure Monitor managed Prometheus, NVIDIA's DCGM exporter on the served GPU pools, GPU alerts and an optional Azure Managed Grafana (docs/observe.md). Stack config key: `gpu-aks:observability`."""


#: Properties whose stack config key is spelled differently, by their object's path in the config.
CONFIG_KEYS: dict[str, dict[str, str]] = {
    "cluster.autoScalerProfile": {
        "balanceSimilarNodeGroups": "balance-similar-node-groups",
        "daemonsetEvictionForEmptyNodes": "daemonset-eviction-for-empty-nodes",
        "daemonsetEvictionForOccupiedNodes": "daemonset-eviction-for-occupied-nodes",
        "ignoreDaemonsetsUtilization": "ignore-daemonsets-utilization",
        "maxEmptyBulkDelete": "max-empty-bulk-delete",
        "maxGracefulTerminationSec": "max-graceful-termination-sec",
        "maxNodeProvisionTime": "max-node-provision-time",
        "maxTotalUnreadyPercentage": "max-total-unready-percentage",
        "newPodScaleUpDelay": "new-pod-scale-up-delay",
        "okTotalUnreadyCount": "ok-total-unready-count",
        "scanInterval": "scan-interval",
        "scaleDownDelayAfterAdd": "scale-down-delay-after-add",
        "scaleDownDelayAfterDelete": "scale-down-delay-after-delete",
        "scaleDownDelayAfterFailure": "scale-down-delay-after-failure",
        "scaleDownUnneededTime": "scale-down-unneeded-time",
        "scaleDownUnreadyTime": "scale-down-unready-time",
        "scaleDownUtilizationThreshold": "scale-down-utilization-threshold",
        "skipNodesWithLocalStorage": "skip-nodes-with-local-storage",
        "skipNodesWithSystemPods": "skip-nodes-with-system-pods",
    },
}
