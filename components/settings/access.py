"""`gpu-aks:access`: who may use the cluster's Kubernetes API once it exists."""

from __future__ import annotations

from dataclasses import dataclass

from gpu_aks_policies.declarations import Check, Key, Reader, Section, boolean, is_whole_number

from components.settings.production import (
    ADMINS_NEED_AZURE_RBAC,
    CLUSTER_ADMINS,
    DEPLOYER_PRINCIPAL_TYPE,
    ClusterAdmin,
    PrincipalType,
)

#: Azure RBAC for Kubernetes: "New role assignments can take up to five minutes to propagate"
#: (learn.microsoft.com/azure/aks/manage-azure-rbac).
DEFAULT_ROLE_PROPAGATION_SECONDS = 300


@dataclass(frozen=True)
class AccessSettings:
    #: Grant whoever runs `pulumi up` "Azure Kubernetes Service RBAC Cluster Admin" on the cluster.
    grant_deployer_cluster_admin: bool = True
    #: How long in-cluster resources wait after a new role assignment.
    role_propagation_seconds: int = DEFAULT_ROLE_PROPAGATION_SECONDS
    #: The deployer's `principalType` on its role assignment.
    deployer_principal_type: PrincipalType = "User"
    #: Granted "Azure Kubernetes Service RBAC Cluster Admin" explicitly, whoever deploys.
    cluster_admins: tuple[ClusterAdmin, ...] = ()


def _somebody_has_kubernetes_rights(reader: Reader) -> None:
    cluster = reader.root.children["cluster"]
    grant = reader.get("grantDeployerClusterAdmin")
    aad, azure_rbac = cluster.get("aadProfile.managed"), cluster.get("aadProfile.enableAzureRBAC")
    granted = (grant or reader.get("clusterAdmins")) and aad and azure_rbac
    # Local accounts disabled without Azure AD is already a problem of its own (no knock-on error).
    if cluster.get("disableLocalAccounts") and aad and not cluster.get("aadProfile.adminGroupObjectIDs") and not granted:
        why = ("is false" if not grant else "needs cluster.aadProfile.enableAzureRBAC: true to grant anything")
        reader.problem("grantDeployerClusterAdmin",
                       f"{why}, cluster.disableLocalAccounts is true and cluster.aadProfile.adminGroupObjectIDs is "
                       "empty: nobody would have Kubernetes rights, so creating the namespace and the device plugin "
                       "would fail with Forbidden after the GPU pools already bill. Keep the grant (the default), list "
                       "an admin group, or set disableLocalAccounts: false")


ACCESS = Section("access", "Kubernetes rights for whoever deploys (Azure RBAC for Kubernetes).", (
    boolean("grantDeployerClusterAdmin", "Grant the deployer \"Azure Kubernetes Service RBAC Cluster Admin\" on the "
            "cluster.", True, attr="grant_deployer_cluster_admin",
            source="Azure built-in role b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"),
    Key("rolePropagationSeconds", "How long in-cluster resources wait after a new role assignment.", "integer",
        DEFAULT_ROLE_PROPAGATION_SECONDS, check=lambda v: None if is_whole_number(v) and 0 <= v <= 1800
        else "must be whole seconds from 0 to 1800", convert=int, attr="role_propagation_seconds",
        source="learn.microsoft.com/azure/aks/manage-azure-rbac"),
    DEPLOYER_PRINCIPAL_TYPE,
    CLUSTER_ADMINS,
    ADMINS_NEED_AZURE_RBAC,
    Check(_somebody_has_kubernetes_rights, doc="With local accounts disabled somebody must get Kubernetes rights: "
          "the deployer's grant or access.clusterAdmins (need Azure RBAC), or an admin group."),
), cls=AccessSettings)
