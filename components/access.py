"""`ClusterAccess`: Kubernetes rights for whoever runs `pulumi up` and for the listed admins, before
anything in-cluster.

With local accounts disabled and Azure RBAC for Kubernetes on (the defaults), Azure Owner or
Contributor grant no Kubernetes rights: the deploying identity needs an AKS RBAC role on the cluster
(learn.microsoft.com/azure/aks/manage-azure-rbac). By default this grants it the built-in role
"Azure Kubernetes Service RBAC Cluster Admin" (`b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b`), scoped to the
cluster, to the object ID `azure-native:authorization:getClientConfig` reports (a user after
`az login`, the service principal or managed identity in CI), then waits for the assignment to
propagate. Every in-cluster resource depends on `ready`. `access.grantDeployerClusterAdmin: false`
turns it off (then an admin group, `access.clusterAdmins` or local accounts must provide access; the
settings check that).

Three things make it work for every kind of deployer and keep it stable:
- `principalType` is always sent. pulumi-azure-native defaults it to `User`
  (`pulumi_azure_native/authorization/role_assignment.py`: `if principal_type is None:
  principal_type = 'User'`), and Azure refuses a service principal or managed identity under that
  type (`UnmatchedPrincipalType`); `access.deployerPrincipalType` (or its environment default) says.
- The assignment's name is a GUID derived from scope, principal and role, as the Azure Verified
  Module (`guid(managedCluster.id, principalId, roleDefinitionId)`) and AKS-Construction do. After
  lost state a re-create then lands on the existing assignment instead of failing with
  `RoleAssignmentExists`, and the same grant is never made twice under two names.
- `access.clusterAdmins` are granted explicitly, so a change of deployer (a person, then CI) never
  takes the cluster away from the people who run it; the preview warns when the deployer grant would
  move from one principal to another, naming both object IDs (`deployer_change_warning`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
from gpu_aks_policies.limits import MAX_SHOWN_CHARS
from gpu_aks_policies.terminal import escape_field
from pulumi_azure_native import authorization

from components.propagation import RolePropagationWait
from components.settings import AccessSettings

AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
#: The namespace of gpu-aks's role-assignment names (UUID version 5, RFC 4122 section 4.3): the same
#: inputs give the same name on every run and every machine.
ROLE_ASSIGNMENT_NAMESPACE = uuid.UUID("5c1f6b3e-7d1a-5e8b-9a61-0d6f2c4b8e17")
#: The stack output holding the deployer's object ID; the next run reads it back (components/previous_run.py).
DEPLOYER_OUTPUT = "deployerObjectId"


@dataclass(frozen=True)
class ClusterAccessArgs:
    settings: AccessSettings
    cluster_id: pulumi.Input[str]
    #: Whether the cluster authorizes Kubernetes requests with Azure RBAC (the role means nothing otherwise).
    azure_rbac: bool
    #: The deployer's object ID the stack recorded last time (`PreviousRun().output(DEPLOYER_OUTPUT)`),
    #: or None to skip the check.
    previous_deployer: pulumi.Input[str | None] | None = None


def role_definition_id(subscription_id: str, role: str = AKS_RBAC_CLUSTER_ADMIN_ROLE) -> str:
    return f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def role_assignment_name(scope: str, principal_id: str, role_definition: str) -> str:
    """A GUID of scope, principal and role (case-insensitive, as Azure compares IDs)."""
    return str(uuid.uuid5(ROLE_ASSIGNMENT_NAMESPACE, "|".join(part.lower() for part in (scope, principal_id,
                                                                                          role_definition))))


def assign_role(resource_name: str, scope: pulumi.Input[str], principal: pulumi.Input[str], principal_type: str,
                role: pulumi.Input[str], description: str, opts: pulumi.ResourceOptions) -> authorization.RoleAssignment:
    """A role assignment as every gpu-aks grant makes one: an explicit principal type (the provider's
    default, User, is refused for a service principal or managed identity) and a deterministic name."""
    return authorization.RoleAssignment(
        resource_name,
        role_assignment_name=pulumi.Output.all(scope, principal, role).apply(
            lambda parts: role_assignment_name(*parts)),
        principal_id=principal,
        principal_type=principal_type,
        role_definition_id=role,
        scope=scope,
        description=description,
        # Azure keeps one assignment per scope, principal and role: a replacement (a new name,
        # e.g. the first run after names became deterministic) must delete the old one first.
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(delete_before_replace=True)))


def deployer_change_warning(previous: Any, current: str | None) -> str | None:
    """The preview's warning when the deployer grant would move to another principal. `previous` is
    read back from the last update's outputs and may hold anything: only a string is compared, and it
    is quoted escaped and cut (the engine prints warnings as they are)."""
    if not isinstance(previous, str) or not previous or not current or previous.lower() == current.lower():
        return None
    shown = escape_field(previous, MAX_SHOWN_CHARS)
    return (f"the deployer's cluster-admin grant moves from object ID {shown} to {current}: this run replaces the "
            f"role assignment, so {shown} loses Kubernetes rights on the cluster. If it still needs them, list it "
            "under gpu-aks:access.clusterAdmins (docs/platform.md, \"Access\")")


class ClusterAccess(pulumi.ComponentResource):
    def __init__(self, name: str, args: ClusterAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:ClusterAccess", name, None, opts)
        #: What in-cluster resources wait for.
        self.ready: list[pulumi.Resource] = []
        self.deployer_object_id: pulumi.Output[str] | None = None
        if not args.azure_rbac or not (args.settings.grant_deployer_cluster_admin or args.settings.cluster_admins):
            self.register_outputs({})
            return
        child = pulumi.ResourceOptions(parent=self)
        client = authorization.get_client_config_output(opts=pulumi.InvokeOutputOptions(parent=self))
        role = client.subscription_id.apply(role_definition_id)
        assignments: list[authorization.RoleAssignment] = []
        if args.settings.grant_deployer_cluster_admin:
            self.deployer_object_id = client.object_id
            self.role_assignment = assign_role(
                f"{name}-deployer-cluster-admin", args.cluster_id, client.object_id,
                args.settings.deployer_principal_type, role,
                "gpu-aks: the identity that runs pulumi up administers the cluster's Kubernetes objects", child)
            assignments.append(self.role_assignment)
            if args.previous_deployer is not None:
                # Exported by the program, so the engine awaits the check during preview.
                self.deployer_object_id = pulumi.Output.all(args.previous_deployer, client.object_id).apply(
                    self._warn_on_change)
        self.admin_assignments = [
            assign_role(f"{name}-admin-{admin.object_id}", args.cluster_id, admin.object_id,
                         admin.principal_type, role, "gpu-aks: listed in access.clusterAdmins", child)
            for admin in args.settings.cluster_admins
        ]
        assignments.extend(self.admin_assignments)
        self.propagation = RolePropagationWait(
            f"{name}-role-propagation", pulumi.Output.all(*[a.id for a in assignments]).apply(",".join),
            args.settings.role_propagation_seconds, opts=child)
        self.ready = [self.propagation]
        self.register_outputs({"roleAssignmentIds": [a.id for a in assignments],
                               DEPLOYER_OUTPUT: self.deployer_object_id})

    @staticmethod
    def _warn_on_change(ids: Sequence[str | None]) -> str:
        warning = deployer_change_warning(ids[0], ids[1])
        if warning:
            pulumi.log.warn(warning)
        return str(ids[1])

