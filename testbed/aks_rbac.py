"""What AKS's "Azure RBAC for Kubernetes Authorization" makes of the Azure role assignments on a cluster, as
Kubernetes RBAC on the local cluster.

On AKS a role assignment of one of the built-in AKS RBAC roles, at the cluster's scope or at
`<cluster>/namespaces/<namespace>`, lets its principal act on the Kubernetes objects the role names, once the
assignment has reached AKS's authorization webhook ("up to five minutes";
learn.microsoft.com/azure/aks/manage-azure-rbac). The principal is the Entra ID object ID a kubelogin token
carries. Here `sync` writes, for each such assignment in the stand-in Azure's state
(GPU_AKS_AZURE_STANDIN_STATE), the Kubernetes binding that grants what the built-in role grants, and removes
the bindings of assignments that are gone: calling it is the propagation, so a test says when it has happened.

Each built-in role is the Kubernetes default ClusterRole Microsoft describes it as
(learn.microsoft.com/azure/aks/manage-azure-rbac, "Create role assignments": the four built-in roles;
learn.microsoft.com/azure/role-based-access-control/built-in-roles/containers for their data actions):
- "Azure Kubernetes Service RBAC Cluster Admin" (`Microsoft.ContainerService/managedClusters/*`): every action on
  every resource, `cluster-admin`. gpu-aks grants it to the deployer and `access.clusterAdmins`
  (components/access.py).
- "Azure Kubernetes Service RBAC Admin" (the same, less writing ResourceQuotas and Namespaces): `admin`.
- "Azure Kubernetes Service RBAC Writer" (read/write of most objects in a namespace, not Roles or RoleBindings;
  Secrets and running pods as any ServiceAccount of the namespace): `edit`. An app team's grant on its
  namespace (`az role assignment create --scope <cluster ID>/namespaces/<namespace>`); gpu-aks makes none.

Where they differ: the webhook decides from Azure's data actions, so a custom resource is covered only by
`managedClusters/*` (Cluster Admin, Admin), while `edit`/`admin` reach the custom resources whose ClusterRoles
aggregate into them; and the webhook answers after Kubernetes RBAC, which on AKS still holds its own bindings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.access import AKS_RBAC_CLUSTER_ADMIN_ROLE
from offline.azure_answers import DEPLOYER_OBJECT_ID
from testbed.localcluster import Client, Cluster

#: The built-in roles' IDs (the last segment of a role definition ID) -> (name, the Kubernetes ClusterRole).
BUILT_IN_ROLES: Mapping[str, tuple[str, str]] = {
    "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b": ("Azure Kubernetes Service RBAC Cluster Admin", "cluster-admin"),
    "3498e952-d568-435e-9b2c-8d77e338d7f7": ("Azure Kubernetes Service RBAC Admin", "admin"),
    "a7ffa36f-339b-4b5c-8bdf-e2c188b2c0eb": ("Azure Kubernetes Service RBAC Writer", "edit"),
}
WRITER_ROLE = "a7ffa36f-339b-4b5c-8bdf-e2c188b2c0eb"
ASSIGNMENTS = "/providers/Microsoft.Authorization/roleAssignments/"
#: The label that names the role assignment a binding stands for (its GUID name).
ASSIGNMENT_LABEL = "gpu-aks.io/azure-role-assignment"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
#: A cluster's scope, or one of its namespaces' (ARM IDs compare case-insensitively).
CLUSTER_SCOPE = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.ContainerService/"
                           r"managedClusters/[^/]+(/namespaces/[^/]+)?$", re.IGNORECASE)


@dataclass(frozen=True)
class RoleAssignment:
    name: str
    scope: str
    role: str
    principal_id: str
    principal_type: str

    @property
    def cluster_role(self) -> str:
        return BUILT_IN_ROLES[self.role][1]

    @property
    def namespace(self) -> str | None:
        """The namespace of a namespace-scoped assignment (`<cluster>/namespaces/<name>`), else None."""
        _, _, namespace = self.scope.partition("/namespaces/")
        return namespace or None


def role_assignment_resource(scope: str, name: str, role: str, principal_id: str, principal_type: str,
                             subscription_id: str) -> dict[str, Any]:
    """A role assignment as ARM's GET returns it (and the stand-in Azure keeps it): what `az role assignment
    create` makes for an assignment the platform does not (an app team's)."""
    return {"id": f"{scope}{ASSIGNMENTS}{name}", "name": name, "type": "Microsoft.Authorization/roleAssignments",
            "properties": {"principalId": principal_id, "principalType": principal_type, "scope": scope,
                           "roleDefinitionId": f"/subscriptions/{subscription_id}/providers/"
                                               f"Microsoft.Authorization/roleDefinitions/{role}"}}


def cluster_assignments(state: Mapping[str, Any]) -> Iterator[RoleAssignment]:
    """The assignments of built-in AKS RBAC roles on a managed cluster or one of its namespaces, in the stand-in
    Azure's state (the local API server stands for the one cluster a test deploys)."""
    for resource_id, resource in state.items():
        scope, found, name = resource_id.partition(ASSIGNMENTS)
        if not found or not CLUSTER_SCOPE.match(scope):
            continue
        properties = resource.get("properties") or {}
        role = str(properties.get("roleDefinitionId", "")).rsplit("/", 1)[-1].lower()
        if role in BUILT_IN_ROLES:
            yield RoleAssignment(name, scope, role, str(properties["principalId"]),
                                 str(properties.get("principalType", "User")))


def binding(assignment: RoleAssignment) -> dict[str, Any]:
    """The ClusterRoleBinding (cluster scope) or RoleBinding (namespace scope) that grants what the assignment
    does. A group's members carry its object ID among their groups; anyone else, their own object ID."""
    kind = "Group" if assignment.principal_type == "Group" else "User"
    metadata: dict[str, Any] = {"name": f"aks-rbac-{assignment.name}", "labels": {ASSIGNMENT_LABEL: assignment.name},
                                "annotations": {"gpu-aks.io/azure-role": BUILT_IN_ROLES[assignment.role][0]}}
    if assignment.namespace:
        metadata["namespace"] = assignment.namespace
    return {"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding" if assignment.namespace else "ClusterRoleBinding", "metadata": metadata,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": assignment.cluster_role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": assignment.principal_id}]}


def _collection(obj: Mapping[str, Any]) -> str:
    namespace = obj["metadata"].get("namespace")
    return f"{RBAC}/namespaces/{namespace}/rolebindings" if namespace else f"{RBAC}/clusterrolebindings"


def sync(admin: Client, state_file: Path) -> list[dict[str, Any]]:
    """Makes the cluster's bindings match the role assignments on the cluster in the stand-in Azure's state file:
    each assignment's binding created, the bindings of assignments gone deleted. Returns the bindings."""
    state = json.loads(state_file.read_text()) if state_file.is_file() else {}
    wanted = [binding(assignment) for assignment in cluster_assignments(state)]
    names = {obj["metadata"]["name"] for obj in wanted}
    for listing in (f"{RBAC}/clusterrolebindings", f"{RBAC}/rolebindings"):
        for existing in admin.get(f"{listing}?labelSelector={ASSIGNMENT_LABEL}")["items"]:
            if existing["metadata"]["name"] not in names:
                admin.delete(f"{_collection(existing)}/{existing['metadata']['name']}")
    for obj in wanted:
        grant(admin, obj)
    return wanted


def grant(admin: Client, obj: Mapping[str, Any]) -> None:
    """Creates the binding `binding()` made, unless it is there."""
    if not admin.exists(f"{_collection(obj)}/{obj['metadata']['name']}"):
        admin.create(_collection(obj), obj)


def revoke(admin: Client, obj: Mapping[str, Any]) -> None:
    admin.delete(f"{_collection(obj)}/{obj['metadata']['name']}")


@contextmanager
def as_deployer(cluster: Cluster, admin: Client) -> Iterator[Path]:
    """The deployer's kubeconfig, as a platform deploy signs in: a bearer token for the object ID `getClientConfig`
    reports (offline/azure_answers.py), not `system:masters`, with the "Azure Kubernetes Service RBAC Cluster
    Admin" role components/access.py assigns it already propagated, as after an earlier run; revoked after.
    Start the cluster with `identities={DEPLOYER_OBJECT_ID: ()}` (kube-apiserver reads its tokens at start)."""
    propagated = binding(RoleAssignment("deployer", scope="", role=AKS_RBAC_CLUSTER_ADMIN_ROLE,
                                        principal_id=DEPLOYER_OBJECT_ID, principal_type="ServicePrincipal"))
    grant(admin, propagated)
    try:
        yield cluster.identity_kubeconfig(DEPLOYER_OBJECT_ID)
    finally:
        revoke(admin, propagated)
