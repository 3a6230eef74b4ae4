"""`NetworkGrants`: the roles the cluster's control-plane identity needs on your network.

With nodes in your own subnets, "the cluster identity used by the AKS cluster must have at least Network
Contributor permissions on the subnet within your virtual network" (learn.microsoft.com/azure/aks/
configure-azure-cni and configure-kubenet, "Prerequisites"); Azure/terraform-azurerm-aks grants it
subnet by subnet (`role_assignments.tf`, `azurerm_role_assignment.network_contributor`, over every node
and pod subnet), and so does this. With your own private DNS zone the identity also needs "Private DNS
Zone Contributor" on the zone (learn.microsoft.com/azure/aks/private-clusters).

Which order that gives depends on the identity (docs/network.md, "Identity and grant order"):
- `UserAssigned`: the identity exists before the program runs; its principal ID is read from Azure
  (`managedidentity.getUserAssignedIdentity`, as the Terraform module's `azurerm_user_assigned_identity`
  data source does), the grants are made first, and the cluster depends on them.
- `SystemAssigned`: AKS creates the identity with the cluster, so the grants follow the cluster, as
  `az aks create --vnet-subnet-id` does for a system-assigned identity.

Every grant goes through `access.assign_role` (explicit principal type, deterministic name).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import managedidentity

from components.access import assign_role, role_definition_id
from components.aks_api import NETWORK_CONTRIBUTOR_ROLE, PRIVATE_DNS_ZONE_CONTRIBUTOR_ROLE, parse_resource_id

#: A managed identity's principal type on a role assignment (azure-mgmt-authorization `PrincipalType`).
MANAGED_IDENTITY_PRINCIPAL_TYPE = "ServicePrincipal"


@dataclass(frozen=True)
class RoleGrant:
    """One role on one scope, with the subscription its role definition lives in."""

    scope: str
    role: str
    subscription: str
    description: str

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.scope.lower()}|{self.role}".encode()).hexdigest()[:8]


def network_grants(subnets: Sequence[str], private_dns_zone: str | None) -> list[RoleGrant]:
    """What the control-plane identity is granted: Network Contributor on each distinct subnet (IDs
    compared without case, as Azure does), Private DNS Zone Contributor on your own zone."""
    grants: list[RoleGrant] = []
    seen: set[str] = set()
    for subnet in subnets:
        parsed = parse_resource_id("subnet", subnet)
        if parsed is None or subnet.lower() in seen:
            continue
        seen.add(subnet.lower())
        grants.append(RoleGrant(subnet, NETWORK_CONTRIBUTOR_ROLE, parsed.subscription,
                                "gpu-aks: the AKS control-plane identity manages the nodes' subnet"))
    zone = parse_resource_id("privateDnsZone", private_dns_zone) if private_dns_zone else None
    if zone is not None and private_dns_zone is not None:
        grants.append(RoleGrant(private_dns_zone, PRIVATE_DNS_ZONE_CONTRIBUTOR_ROLE, zone.subscription,
                                "gpu-aks: the AKS control-plane identity writes the API server's private DNS record"))
    return grants


def user_assigned_principal(identity_id: str, opts: pulumi.InvokeOutputOptions) -> pulumi.Output[str]:
    """The principal (object) ID of a user-assigned identity, read from Azure."""
    parsed = parse_resource_id("identity", identity_id)
    assert parsed is not None, "identity IDs are validated by the settings"
    identity = managedidentity.get_user_assigned_identity_output(
        resource_group_name=parsed.resource_group, resource_name=parsed.name, opts=opts)
    return identity.principal_id


@dataclass(frozen=True)
class NetworkGrantsArgs:
    principal_id: pulumi.Input[str]
    grants: tuple[RoleGrant, ...]


class NetworkGrants(pulumi.ComponentResource):
    def __init__(self, name: str, args: NetworkGrantsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:NetworkGrants", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.assignments = [
            # Named by scope and role, so adding a subnet never renames (replaces) another grant.
            assign_role(f"{name}-{grant.key}", grant.scope, args.principal_id, MANAGED_IDENTITY_PRINCIPAL_TYPE,
                        role_definition_id(grant.subscription, grant.role), grant.description, child)
            for grant in args.grants
        ]
        self.register_outputs({"roleAssignmentIds": [assignment.id for assignment in self.assignments]})
