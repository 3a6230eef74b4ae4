"""`gpu-aks:cluster.identity`: the control plane's managed identity (the AKS `identity` block).

`SystemAssigned` (the default): AKS creates the identity with the cluster, so anything granted to it
(the Network Contributor role on your subnets) can only be granted after the cluster exists.
`UserAssigned`: you create the identity first and name it here; gpu-aks grants its roles before it
creates the cluster, and features that need a grant before the cluster exists need it: your own private
DNS zone (learn.microsoft.com/azure/aks/private-clusters) and KMS etcd encryption ("KMS etcd encryption
doesn't work with system-assigned managed identity", learn.microsoft.com/azure/aks/use-kms-etcd-encryption,
"Limitations"; Azure/terraform-azurerm-aks `main.tf` refuses both likewise). No Pulumi imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import MISSING, Check, Default, Key, Reader, Section
from gpu_aks_policies.limits import MAX_CONTROL_PLANE_IDENTITIES

from components.aks_api import API_VERSION, IDENTITY_TYPES, resource_id_problem
from components.settings.common import api_choice

_MODEL = f"ManagedCluster (API {API_VERSION})"


@dataclass(frozen=True)
class IdentitySettings:
    """The cluster's `identity`: its type and, for `UserAssigned`, the identity's resource ID."""

    type: str = "SystemAssigned"
    user_assigned_identity: str | None = None

    @property
    def user_assigned(self) -> bool:
        return self.type == "UserAssigned"

    def as_api(self) -> dict[str, Any]:
        if self.user_assigned_identity is None:
            return {"type": self.type}
        return {"type": self.type, "user_assigned_identities": [self.user_assigned_identity]}


def _identities(reader: Reader, value: Any) -> tuple[str, ...]:
    name = "userAssignedIdentities"
    if value is MISSING or value is None:
        return ()
    if not isinstance(value, list):
        reader.problem(name, f"{reader.shown(value)} is not a list of user-assigned identity resource IDs")
        return ()
    if len(value) > MAX_CONTROL_PLANE_IDENTITIES:
        reader.problem(name, f"has {len(value)} identities; AKS API {API_VERSION} allows one for the control plane "
                             "(\"Only one user assigned identity is allowed\")")
        return ()
    found = []
    for index, item in enumerate(value):
        problem = resource_id_problem("identity", item)
        if problem:
            reader.problem(f"{name}[{index}]", f"{reader.shown(item)} {problem}")
        else:
            found.append(item)
    return tuple(found)


def _type_matches(reader: Reader) -> None:
    kind, identities = reader.get("type"), reader.get("userAssignedIdentities")
    if kind == "UserAssigned" and not identities:
        reader.problem("userAssignedIdentities", "is missing; type UserAssigned needs the identity's resource ID, e.g. "
                                                 "[/subscriptions/<id>/resourceGroups/<group>/providers/"
                                                 "Microsoft.ManagedIdentity/userAssignedIdentities/<name>]")
    elif kind == "SystemAssigned" and identities:
        reader.problem("userAssignedIdentities", "is set but type is SystemAssigned; set type: UserAssigned or remove "
                                                 "the list")


def _build(reader: Reader) -> IdentitySettings:
    identities = reader.get("userAssignedIdentities")
    return IdentitySettings(reader.get("type"), identities[0] if identities else None)


IDENTITY = Section(
    "identity", "The control plane's managed identity. `UserAssigned` (an identity you created) lets gpu-aks grant "
    "its roles before the cluster exists; `SystemAssigned` is created with the cluster and granted after it "
    "(docs/network.md, \"Identity and grant order\").", (
        api_choice("type", "`SystemAssigned` or `UserAssigned`.", IDENTITY_TYPES,
                   Default(lambda r: "UserAssigned" if r.raw.get("userAssignedIdentities") else "SystemAssigned",
                           "UserAssigned when userAssignedIdentities is set, else SystemAssigned"),
                   source=f"{_MODEL} identity.type"),
        Key("userAssignedIdentities", "The user-assigned identity's resource ID, in a list of one (the API allows one).",
            "list of strings", [], parse=_identities, source=f"{_MODEL} identity.userAssignedIdentities"),
        Check(_type_matches, reads=("type", "userAssignedIdentities"),
              doc="`UserAssigned` names exactly one identity; `SystemAssigned` names none."),
    ), build=_build, source=f"{_MODEL} identity (ManagedClusterIdentity)")
