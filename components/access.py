"""`ClusterAccess`: Kubernetes rights for whoever runs `pulumi up`, before anything in-cluster.

With local accounts disabled and Azure RBAC for Kubernetes on (the defaults), Azure Owner or
Contributor grant no Kubernetes rights: the deploying identity needs an AKS RBAC role on the cluster
(learn.microsoft.com/azure/aks/manage-azure-rbac). By default this grants it the built-in role
"Azure Kubernetes Service RBAC Cluster Admin" (`b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b`), scoped to the
cluster, to the object ID `azure-native:authorization:getClientConfig` reports (a user after
`az login`, the service principal or managed identity in CI), then waits for the assignment to
propagate. Every in-cluster resource depends on `ready`. `access.grantDeployerClusterAdmin: false`
turns it off (then an admin group or local accounts must provide access; the settings check that).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import authorization

from components.propagation import RolePropagationWait
from components.settings import AccessSettings

AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"


@dataclass(frozen=True)
class ClusterAccessArgs:
    settings: AccessSettings
    cluster_id: pulumi.Input[str]
    #: Whether the cluster authorizes Kubernetes requests with Azure RBAC (the role means nothing otherwise).
    azure_rbac: bool


def role_definition_id(subscription_id: str) -> str:
    return f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN_ROLE}"


class ClusterAccess(pulumi.ComponentResource):
    def __init__(self, name: str, args: ClusterAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:ClusterAccess", name, None, opts)
        #: What in-cluster resources wait for.
        self.ready: list[pulumi.Resource] = []
        if not (args.settings.grant_deployer_cluster_admin and args.azure_rbac):
            self.register_outputs({})
            return
        child = pulumi.ResourceOptions(parent=self)
        deployer = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))
        self.role_assignment = authorization.RoleAssignment(
            f"{name}-deployer-cluster-admin",
            principal_id=deployer.object_id,
            role_definition_id=deployer.subscription_id.apply(role_definition_id),
            scope=args.cluster_id,
            description="gpu-aks: the identity that runs pulumi up administers the cluster's Kubernetes objects",
            opts=child)
        self.propagation = RolePropagationWait(f"{name}-role-propagation", self.role_assignment.id,
                                               args.settings.role_propagation_seconds, opts=child)
        self.ready = [self.propagation]
        self.register_outputs({"roleAssignmentId": self.role_assignment.id})
