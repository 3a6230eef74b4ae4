"""The cluster tier's model of AKS's Azure RBAC for Kubernetes (testbed/aks_rbac.py): which of the stand-in
Azure's role assignments grant Kubernetes rights, and the binding each one becomes."""

from __future__ import annotations

from components.access import AKS_RBAC_CLUSTER_ADMIN_ROLE, role_definition_id
from testbed import aks_rbac

SUBSCRIPTION = "11111111-1111-1111-1111-111111111111"
CLUSTER = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-gpu/providers/Microsoft.ContainerService/"
           "managedClusters/gpu-aks-dev")
NETWORK_CONTRIBUTOR = "4d97b98b-1d4f-4787-a291-c67834d212e7"


def _state(*assignments: tuple[str, str, str, str, str]) -> dict[str, dict]:
    resources = [aks_rbac.role_assignment_resource(scope, name, role, principal, kind, SUBSCRIPTION)
                 for scope, name, role, principal, kind in assignments]
    return {resource["id"]: resource for resource in resources}


def test_the_platforms_cluster_admin_assignment_binds_cluster_admin_to_the_deployer() -> None:
    # The role definition ID as components/access.py writes it.
    state = _state((CLUSTER, "a1", AKS_RBAC_CLUSTER_ADMIN_ROLE, "deployer-oid", "ServicePrincipal"))
    [resource] = state.values()
    assert resource["properties"]["roleDefinitionId"] == role_definition_id(SUBSCRIPTION)
    [assignment] = aks_rbac.cluster_assignments(state)
    assert aks_rbac.binding(assignment) == {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "aks-rbac-a1", "labels": {aks_rbac.ASSIGNMENT_LABEL: "a1"},
                     "annotations": {"gpu-aks.io/azure-role": "Azure Kubernetes Service RBAC Cluster Admin"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "deployer-oid"}]}


def test_a_writer_assignment_on_a_namespace_binds_edit_there_to_the_group() -> None:
    state = _state((f"{CLUSTER}/namespaces/team-a", "w1", aks_rbac.WRITER_ROLE, "team-group-oid", "Group"))
    [assignment] = aks_rbac.cluster_assignments(state)
    binding = aks_rbac.binding(assignment)
    assert (binding["kind"], binding["metadata"]["namespace"], binding["roleRef"]["name"]) == (
        "RoleBinding", "team-a", "edit")
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-group-oid"}]


def test_assignments_elsewhere_or_of_other_roles_grant_nothing_in_the_cluster() -> None:
    subnet = (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-gpu/providers/Microsoft.Network/virtualNetworks/"
              "vnet/subnets/nodes")
    state = _state((subnet, "n1", AKS_RBAC_CLUSTER_ADMIN_ROLE, "someone", "User"),
                   (CLUSTER, "n2", NETWORK_CONTRIBUTOR, "control-plane-oid", "ServicePrincipal"),
                   (f"{CLUSTER}/agentPools/gpu", "n3", aks_rbac.WRITER_ROLE, "someone", "User"))
    assert list(aks_rbac.cluster_assignments(state)) == []
