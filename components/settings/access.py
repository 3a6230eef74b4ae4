"""`gpu-aks:access`: who may use the cluster's Kubernetes API once it exists."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gpu_aks_policies.declarations import MISSING, Check, Default, Key, Reader, Section, boolean, is_whole_number

PrincipalType = Literal["User", "Group", "ServicePrincipal"]
#: Who can run `pulumi up`: a person (`User`), or a service principal or managed identity, which
#: Azure role assignments both call `ServicePrincipal` (azure-mgmt-authorization `PrincipalType`).
DEPLOYER_PRINCIPAL_TYPES: tuple[PrincipalType, ...] = ("User", "ServicePrincipal")
ADMIN_PRINCIPAL_TYPES: tuple[PrincipalType, ...] = ("User", "Group", "ServicePrincipal")
#: Set by `az login --service-principal` flows and azure/login (`AZURE_CLIENT_ID`) or by the
#: Pulumi/Terraform Azure provider conventions (`ARM_CLIENT_ID`): a non-person deploys.
SERVICE_PRINCIPAL_VARIABLES = ("ARM_CLIENT_ID", "AZURE_CLIENT_ID")
OBJECT_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass(frozen=True)
class ClusterAdmin:
    """A principal granted "Azure Kubernetes Service RBAC Cluster Admin" on the cluster."""

    object_id: str
    principal_type: PrincipalType


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
    admins: dict[ClusterAdmin, None] = {}  # in order; a dict, so a repeat is found in constant time
    #: Where each object ID was first listed, and as what: one Entra ID object is one type (a user, a group
    #: or a service principal), so one ID under two types is a mistake Azure refuses at deploy
    #: (`PrincipalTypeNotSupported` / `UnmatchedPrincipalType`), and both give one RoleAssignment name.
    first: dict[str, tuple[int, str]] = {}
    conflicted: set[int] = set()
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
        earlier = first.setdefault(admin.object_id, (index, principal_type))
        if admin in admins:
            reader.problem(at, f"{reader.shown(object_id)} is listed twice")
        elif earlier[1] != principal_type:
            # Named at both entries, so the stack file's problems carry both lines: either may be the wrong one.
            if earlier[0] not in conflicted:
                conflicted.add(earlier[0])
                reader.problem(f"clusterAdmins[{earlier[0]}]", _two_types(reader, object_id, earlier[1], index,
                                                                           principal_type))
            reader.problem(at, _two_types(reader, object_id, principal_type, earlier[0], earlier[1]))
        else:
            admins[admin] = None
    return tuple(admins)


def _two_types(reader: Reader, object_id: str, here: str, other: int, there: str) -> str:
    return (f"{reader.shown(object_id)} is listed as {here} here and as {there} at clusterAdmins[{other}]: one Entra ID "
            "object has one type, and both would be one role assignment; keep the entry whose principalType matches "
            "the object")


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
