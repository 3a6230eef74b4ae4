"""Azure's computed answers, in one table: what ARM and Entra ID fill in that no program can know before it
runs (a cluster's FQDN and OIDC issuer, the principal of a managed identity, the deployer's client
config, the user kubeconfig AKS hands out). Both fakes of Azure answer from here: the mock runtime of the
offline tools (`offline/mockrun.py`, `PlatformMocks`) and the engine tier's azure-native stand-in
(`testbed/standins/azure_native.py`), so they cannot drift apart.

Every identifier is a made-up GUID under an all-zero tenant: nothing here is, or looks like, a real
Azure tenant. The shapes follow what Azure returns (learn.microsoft.com/rest/api/aks/managed-clusters/get:
`fqdn` `<dnsPrefix>-<hash>.hcp.<location>.azmk8s.io`, `oidcIssuerProfile.issuerURL`
`https://<location>.oic.prod-aks.azure.com/<tenant>/<guid>/`, `nodeResourceGroup` `MC_<group>_<cluster>_<location>`
by default; `listClusterUserCredential?format=exec` for an Azure AD cluster: a kubelogin exec config).
Standard library only: the stand-in imports it without the Pulumi SDK's runtime.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

TENANT_ID = "00000000-0000-0000-0000-000000000000"
SUBSCRIPTION_ID = "11111111-1111-1111-1111-111111111111"
DEPLOYER_OBJECT_ID = "22222222-2222-2222-2222-222222222222"
DEPLOYER_CLIENT_ID = "33333333-3333-3333-3333-333333333333"
#: The principal of a cluster's system-assigned identity, and of a user-assigned identity (and its client).
CLUSTER_PRINCIPAL_ID = "44444444-4444-4444-4444-444444444444"
IDENTITY_CLIENT_ID = "55555555-5555-5555-5555-555555555555"
IDENTITY_PRINCIPAL_ID = "66666666-6666-6666-6666-666666666666"
#: The kubelet identity AKS creates in the node resource group (`identityProfile.kubeletidentity`).
KUBELET_CLIENT_ID = "77777777-7777-7777-7777-777777777777"
KUBELET_OBJECT_ID = "88888888-8888-8888-8888-888888888888"
#: AKS's AAD server application, which `kubelogin get-token --server-id` names (the same in every tenant).
AKS_AAD_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
#: The client ID `az aks get-credentials` writes for the Azure CLI (the same in every tenant).
AZURE_CLI_CLIENT_ID = "80faf920-1908-4b52-b5ef-a8e7bedfc67a"


def _short_hash(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:8]


def _guid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.sha256("/".join(parts).encode()).hexdigest()[:32]))


def group_id(resource_group: str) -> str:
    return f"/subscriptions/{SUBSCRIPTION_ID}/resourceGroups/{resource_group}"


def cluster_fqdn(dns_prefix: str, cluster_id: str, location: str) -> str:
    return f"{dns_prefix}-{_short_hash(cluster_id)}.hcp.{location}.azmk8s.io"


def cluster_answers(name: str, resource_group: str, location: str, dns_prefix: str | None,
                    identity: Any, oidc_issuer: bool, node_resource_group: str | None = None) -> dict[str, Any]:
    """The read-only outputs ARM returns for a created ManagedCluster, by its (flattened) output name."""
    cluster_id = f"{group_id(resource_group)}/providers/Microsoft.ContainerService/managedClusters/{name}"
    prefix = dns_prefix or name
    node_group = node_resource_group or f"MC_{resource_group}_{name}_{location}"
    answers: dict[str, Any] = {
        "fqdn": cluster_fqdn(prefix, cluster_id, location),
        "azurePortalFQDN": f"{prefix}-{_short_hash(cluster_id)}.portal.hcp.{location}.azmk8s.io",
        "nodeResourceGroup": node_group,
        "identityProfile": {"kubeletidentity": {
            "resourceId": f"{group_id(node_group)}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"
                          f"{name}-agentpool",
            "clientId": KUBELET_CLIENT_ID, "objectId": KUBELET_OBJECT_ID}},
    }
    if isinstance(identity, dict) and identity.get("type") == "SystemAssigned":
        answers["identity"] = {**identity, "principalId": CLUSTER_PRINCIPAL_ID, "tenantId": TENANT_ID}
    elif isinstance(identity, dict) and identity.get("userAssignedIdentities"):
        # The provider sends a list of IDs; Azure answers with a map of ID -> its principal and client.
        answers["identity"] = {**identity, "userAssignedIdentities": {
            key: {"principalId": IDENTITY_PRINCIPAL_ID, "clientId": IDENTITY_CLIENT_ID}
            for key in identity["userAssignedIdentities"]}}
    if oidc_issuer:
        answers["oidcIssuerProfile"] = {
            "enabled": True, "issuerURL": f"https://{location}.oic.prod-aks.azure.com/{TENANT_ID}/{_guid(cluster_id)}/"}
    return answers


def client_config() -> dict[str, str]:
    """`azure-native:authorization:getClientConfig`: who runs `pulumi up`."""
    return {"clientId": DEPLOYER_CLIENT_ID, "objectId": DEPLOYER_OBJECT_ID, "subscriptionId": SUBSCRIPTION_ID,
            "tenantId": TENANT_ID}


def user_assigned_identity(resource_group: str, name: str) -> dict[str, str]:
    """`azure-native:managedidentity:getUserAssignedIdentity`."""
    return {"id": f"{group_id(resource_group)}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}",
            "name": name, "principalId": IDENTITY_PRINCIPAL_ID, "clientId": IDENTITY_CLIENT_ID, "tenantId": TENANT_ID}


def aad_kubeconfig(cluster_name: str, server: str) -> dict[str, Any]:
    """What `listClusterUserCredential?format=exec` returns for an Azure AD cluster, as a kubeconfig object:
    a kubelogin exec config that logs in with devicecode (the caller serializes it)."""
    user = f"clusterUser_{cluster_name}"
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": cluster_name,
        "clusters": [{"name": cluster_name, "cluster": {"server": server, "certificate-authority-data": "LS0t"}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": user}}],
        "users": [{"name": user, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "kubelogin",
            "args": ["get-token", "--environment", "AzurePublicCloud", "--server-id", AKS_AAD_SERVER_ID,
                     "--client-id", AZURE_CLI_CLIENT_ID, "--tenant-id", TENANT_ID, "--login", "devicecode"],
            "interactiveMode": "IfNotPresent"}}}],
    }
