"""A stand-in for the `azure-native` provider plugin: gpu-aks's resources and functions, answered as ARM
would answer them, with nothing sent anywhere. It is not Azure and never says it is: every ID is under the
all-zero subscription, and the kubeconfig it hands out is the local API server named by
GPU_AKS_LOCAL_KUBECONFIG or a placeholder that says it comes from this stand-in. docs/azure-only.md says
what a run against it proves and what it cannot.

What it models, with the source of each rule:
- Check: the resource-ID path parameters are present (the last one is autonamed from the resource's
  name plus a random suffix when absent, as pulumi-azure-native autonames); `location` is required where
  ARM requires it; ManagedCluster and AgentPool bodies are validated against Microsoft's REST models
  (`azure-mgmt-containerservice`, API 2025-09-01: the msrest `_validation` constraints).
- Diff: a change of `location`, of a path parameter, or of a property in pulumi-azure-native's forceNewMap
  (pulumi/pulumi-azure-native `provider/pkg/gen/replacement.go` at 1b7112af33c62b247daed1028686bf279f4d5e69)
  replaces the resource; anything else updates it in place.
- Update: a change ARM refuses in place fails as ARM fails it (`PropertyChangeNotAllowed`): the AgentPool
  properties AKS fixes at creation (learn.microsoft.com/rest/api/aks/agent-pools/create-or-update and
  `az aks nodepool update`, which offers no way to change them). The provider's diff does not force a
  replacement for them; gpu-aks asks for one with `replace_on_changes`, so the engine never sends them
  here as an update.
- Create: the computed outputs ARM returns: `id`, `name`, `type`, `provisioningState`; for a cluster the
  FQDN, the identity's `principalId`, the OIDC issuer URL, the kubelet identity and `nodeResourceGroup`.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from provider import UNKNOWN, Model, ProviderError, has_unknown, reveal, serve

#: The version of pulumi-azure-native gpu-aks pins (requirements.txt); the engine asks for it.
VERSION = "3.29.0"
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
TENANT = "00000000-0000-0000-0000-000000000001"
STANDIN_NOTE = "gpu-aks stand-in for azure-native: not Azure, nothing was created"

#: Per type: the resource-ID path parameters (the last names the resource itself), the ARM ID template,
#: and the properties the provider's forceNewMap replaces on (besides `location` and the path parameters).
SUB = "/subscriptions/{subscription}"
RG = SUB + "/resourceGroups/{resourceGroupName}"
CLUSTER = RG + "/providers/Microsoft.ContainerService/managedClusters/{resourceName}"
TYPES: dict[str, tuple[tuple[str, ...], str, str, frozenset[str]]] = {
    "azure-native:resources:ResourceGroup": (("resourceGroupName",), RG, "Microsoft.Resources/resourceGroups",
                                             frozenset()),
    "azure-native:containerservice:ManagedCluster": (
        ("resourceGroupName", "resourceName"), CLUSTER, "Microsoft.ContainerService/ManagedClusters",
        frozenset({"diskEncryptionSetID", "dnsPrefix", "fqdnSubdomain", "linuxProfile", "nodeResourceGroup",
                   "windowsProfile", "networkProfile.serviceCidr", "networkProfile.serviceCidrs",
                   "networkProfile.dnsServiceIP", "networkProfile.networkMode", "networkProfile.networkPlugin",
                   "networkProfile.networkPluginMode", "networkProfile.podCidr", "networkProfile.networkDataplane",
                   "networkProfile.networkPolicy", "networkProfile.outboundType"})),
    "azure-native:containerservice:AgentPool": (
        ("resourceGroupName", "resourceName", "agentPoolName"), CLUSTER + "/agentPools/{agentPoolName}",
        "Microsoft.ContainerService/managedClusters/agentPools",
        frozenset({"gpuInstanceProfile", "vmSize", "networkProfile.nodePublicIPTags"})),
    "azure-native:containerservice:MaintenanceConfiguration": (
        ("resourceGroupName", "resourceName", "configName"), CLUSTER + "/maintenanceConfigurations/{configName}",
        "Microsoft.ContainerService/managedClusters/maintenanceConfigurations", frozenset()),
    "azure-native:authorization:RoleAssignment": (
        ("scope", "roleAssignmentName"), "{scope}/providers/Microsoft.Authorization/roleAssignments/{roleAssignmentName}",
        "Microsoft.Authorization/roleAssignments", frozenset({"principalId", "scope"})),
    "azure-native:monitor:AzureMonitorWorkspace": (
        ("resourceGroupName", "azureMonitorWorkspaceName"),
        RG + "/providers/Microsoft.Monitor/accounts/{azureMonitorWorkspaceName}", "Microsoft.Monitor/accounts",
        frozenset()),
    "azure-native:monitor:DataCollectionEndpoint": (
        ("resourceGroupName", "dataCollectionEndpointName"),
        RG + "/providers/Microsoft.Insights/dataCollectionEndpoints/{dataCollectionEndpointName}",
        "Microsoft.Insights/dataCollectionEndpoints", frozenset()),
    "azure-native:monitor:DataCollectionRule": (
        ("resourceGroupName", "dataCollectionRuleName"),
        RG + "/providers/Microsoft.Insights/dataCollectionRules/{dataCollectionRuleName}",
        "Microsoft.Insights/dataCollectionRules", frozenset()),
    "azure-native:monitor:DataCollectionRuleAssociation": (
        ("resourceUri", "associationName"),
        "{resourceUri}/providers/Microsoft.Insights/dataCollectionRuleAssociations/{associationName}",
        "Microsoft.Insights/dataCollectionRuleAssociations", frozenset()),
    "azure-native:monitor:ActionGroup": (
        ("resourceGroupName", "actionGroupName"), RG + "/providers/Microsoft.Insights/actionGroups/{actionGroupName}",
        "Microsoft.Insights/actionGroups", frozenset()),
    "azure-native:alertsmanagement:PrometheusRuleGroup": (
        ("resourceGroupName", "ruleGroupName"),
        RG + "/providers/Microsoft.AlertsManagement/prometheusRuleGroups/{ruleGroupName}",
        "Microsoft.AlertsManagement/prometheusRuleGroups", frozenset()),
    "azure-native:dashboard:Grafana": (
        ("resourceGroupName", "workspaceName"), RG + "/providers/Microsoft.Dashboard/grafana/{workspaceName}",
        "Microsoft.Dashboard/grafana", frozenset()),
}
#: Types ARM places in a region, whose `location` is therefore part of the request (the rest are global or
#: take their parent's). pulumi-azure-native defaults a missing `location` to the provider's or the
#: resource group's, so only an explicit empty value is refused.
LOCATED = ("ResourceGroup", "ManagedCluster", "AzureMonitorWorkspace", "DataCollectionEndpoint", "DataCollectionRule",
           "PrometheusRuleGroup", "Grafana")
#: AgentPool properties AKS fixes at creation: `az aks nodepool update` has no flag for them and the REST
#: API answers PropertyChangeNotAllowed (vmSize and gpuInstanceProfile the provider already replaces on).
AGENT_POOL_FIXED = frozenset({"osDiskSizeGB", "osDiskType", "vnetSubnetID", "podSubnetID", "maxPods",
                              "availabilityZones", "enableEncryptionAtHost", "kubeletDiskType", "scaleSetPriority",
                              "scaleSetEvictionPolicy", "spotMaxPrice", "enableFIPS", "kubeletConfig",
                              "linuxOSConfig", "enableNodePublicIP", "nodePublicIPPrefixID", "workloadRuntime",
                              "hostGroupID", "capacityReservationGroupID", "messageOfTheDay", "enableUltraSSD"})


def _rest_model(type_: str) -> Any:
    """The msrest model of the REST API gpu-aks's azure-native sends (2025-09-01), or None."""
    if type_ not in ("azure-native:containerservice:ManagedCluster", "azure-native:containerservice:AgentPool"):
        return None
    try:
        from azure.mgmt.containerservice import models  # an oracle where the venv has it (requirements-dev.txt)
    except ImportError:
        return None
    return models.ManagedCluster if type_.endswith("ManagedCluster") else models.AgentPool


def _rest_problems(model: Any, body: Any, where: str = "", depth: int = 0) -> list[str]:
    """The msrest model's own `_validation` (required, minimum, maximum, pattern) over a wire body, nested
    models included. Flattened attributes (`properties.vmSize`) are matched on their last key, as the
    provider flattens `properties` into the resource's inputs."""
    from azure.mgmt.containerservice import models

    if not isinstance(body, dict) or depth > 8:
        return []
    problems = []
    for attribute, spec in model._attribute_map.items():
        wire = spec["key"].split(".")[-1].replace("\\.", ".")
        value, rules = body.get(wire), model._validation.get(attribute, {})
        path = f"{where}{wire}"
        if value is None:
            if rules.get("required") and not rules.get("readonly"):
                problems.append(f"{path}: required")
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                "minimum" in rules and value < rules["minimum"] or "maximum" in rules and value > rules["maximum"]):
            problems.append(f"{path}: {value} is outside {rules.get('minimum')}..{rules.get('maximum')}")
        if isinstance(value, str) and "pattern" in rules and not re.search(rules["pattern"], value):
            problems.append(f"{path}: {value!r} does not match {rules['pattern']}")
        nested = getattr(models, spec["type"].strip("[]"), None)
        if isinstance(nested, type) and hasattr(nested, "_attribute_map"):
            for index, item in enumerate(value if isinstance(value, list) else [value]):
                label = f"{path}[{index}]." if isinstance(value, list) else f"{path}."
                problems += _rest_problems(nested, item, label, depth + 1)
    return problems


def _get(value: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)  # type: ignore[assignment]
    return value


def _guid(*parts: str) -> str:
    return str(uuid.UUID(hashlib.sha256("/".join(parts).encode()).hexdigest()[:32]))


class AzureNative(Model):
    name = "azure-native"
    version = VERSION

    def check(self, type_: str, name: str, olds: dict[str, Any], news: dict[str, Any], seed: bytes,
              ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        spec = TYPES.get(type_)
        if spec is None:
            return news, [("", f"{STANDIN_NOTE}: the type {type_} is not modelled")]
        params, _, _, _ = spec
        inputs = dict(news)
        own = params[-1]
        if own not in inputs:
            # Autonamed as pulumi-azure-native does: the logical name and a random suffix (kept across
            # runs: the old input wins). A role assignment's name is a GUID.
            inputs[own] = olds.get(own) or (
                str(uuid.UUID(bytes=hashlib.sha256(seed + name.encode()).digest()[:16]))
                if type_.endswith("RoleAssignment") else name + hashlib.sha256(seed).hexdigest()[:8])
        failures = [(param, f"missing required property '{param}'") for param in params[:-1] if param not in inputs]
        if type_.rsplit(":", 1)[-1] in LOCATED and inputs.get("location") == "":
            failures.append(("location", "location must not be empty"))
        model = _rest_model(type_)
        if model is not None and not has_unknown(inputs):
            body = reveal({key: value for key, value in inputs.items() if key not in params})
            failures += [("", f"REST model {model.__name__}: {problem}") for problem in _rest_problems(model, body)]
        return inputs, failures

    def diff(self, type_: str, olds: dict[str, Any], news: dict[str, Any], ignore: list[str],
             ) -> tuple[list[str], list[str], bool]:
        params, _, _, force_new = TYPES.get(type_, ((), "", "", frozenset()))
        changed = sorted(key for key in set(olds) | set(news)
                         if key not in ignore and reveal(olds.get(key)) != reveal(news.get(key)))
        replaces = [key for key in changed if key in params or key == "location"]
        for path in sorted(force_new):
            top = path.split(".", 1)[0]
            if top in changed and top not in replaces and path not in ignore \
                    and reveal(_get(olds, path)) != reveal(_get(news, path)):
                replaces.append(top)
        return changed, sorted(set(replaces)), False

    def _id(self, type_: str, inputs: dict[str, Any]) -> str:
        params, template, _, _ = TYPES[type_]
        values = {param: reveal(inputs.get(param)) for param in params}
        if any(value == UNKNOWN or value is None for value in values.values()):
            return UNKNOWN
        return template.format(subscription=SUBSCRIPTION, **values)

    def create(self, type_: str, name: str, inputs: dict[str, Any], preview: bool) -> tuple[str, dict[str, Any]]:
        if type_ not in TYPES:
            raise ProviderError(f"{STANDIN_NOTE}: the type {type_} is not modelled")
        id_ = self._id(type_, inputs)
        params, _, arm_type, _ = TYPES[type_]
        outputs = {key: value for key, value in inputs.items() if key not in params}
        outputs.update(id=id_, name=reveal(inputs.get(params[-1])), type=arm_type,
                       provisioningState=UNKNOWN if preview else "Succeeded")
        if type_.endswith("ManagedCluster"):
            outputs.update(self._cluster_outputs(inputs, id_, preview))
        return ("" if preview else id_), outputs

    def _cluster_outputs(self, inputs: dict[str, Any], id_: str, preview: bool) -> dict[str, Any]:
        def computed(value: Any) -> Any:
            return UNKNOWN if preview or id_ == UNKNOWN else value
        name, location = reveal(inputs.get("resourceName")), reveal(inputs.get("location")) or "eastus2"
        group = reveal(inputs.get("resourceGroupName"))
        prefix = reveal(inputs.get("dnsPrefix") or inputs.get("fqdnSubdomain") or name)
        suffix = hashlib.sha256(f"{id_}".encode()).hexdigest()[:8]
        out: dict[str, Any] = {
            "fqdn": computed(f"{prefix}-{suffix}.hcp.{location}.azmk8s.io"),
            "azurePortalFQDN": computed(f"{prefix}-{suffix}.portal.hcp.{location}.azmk8s.io"),
            "nodeResourceGroup": inputs.get("nodeResourceGroup") or computed(f"MC_{group}_{name}_{location}"),
            "currentKubernetesVersion": inputs.get("kubernetesVersion") or computed("1.33.0"),
            "powerState": {"code": "Running"},
            "identityProfile": computed({"kubeletidentity": {
                "resourceId": f"{SUB.format(subscription=SUBSCRIPTION)}/resourceGroups/MC_{group}_{name}_{location}"
                              f"/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}-agentpool",
                "clientId": _guid(id_, "kubelet-client"), "objectId": _guid(id_, "kubelet-object")}}),
        }
        identity = reveal(inputs.get("identity")) or {}
        if isinstance(identity, dict) and identity.get("type") == "SystemAssigned":
            out["identity"] = {**identity, "principalId": computed(_guid(id_, "principal")),
                               "tenantId": computed(TENANT)}
        elif isinstance(identity, dict) and identity.get("userAssignedIdentities"):
            out["identity"] = {**identity, "userAssignedIdentities": {
                key: {"principalId": computed(_guid(key, "principal")), "clientId": computed(_guid(key, "client"))}
                for key in identity["userAssignedIdentities"]}}
        oidc = reveal(inputs.get("oidcIssuerProfile")) or {}
        if isinstance(oidc, dict) and oidc.get("enabled"):
            out["oidcIssuerProfile"] = {"enabled": True, "issuerURL": computed(
                f"https://{location}.oic.prod-aks.azure.com/{TENANT}/{_guid(id_, 'oidc')}/")}
        return out

    def update(self, type_: str, id_: str, olds: dict[str, Any], old_inputs: dict[str, Any],
               news: dict[str, Any], preview: bool) -> dict[str, Any]:
        if type_.endswith("AgentPool"):
            fixed = sorted(key for key in AGENT_POOL_FIXED
                           if key in old_inputs and reveal(old_inputs.get(key)) != reveal(news.get(key)))
            if fixed:
                raise ProviderError(f"PropertyChangeNotAllowed: Changing property '{fixed[0]}' is not allowed. "
                                    f"({STANDIN_NOTE}; ARM answers this way: {', '.join(fixed)})")
        params = TYPES[type_][0]
        outputs = {**olds, **{key: value for key, value in news.items() if key not in params}}
        if type_.endswith("ManagedCluster"):
            outputs.update({key: value for key, value in self._cluster_outputs(news, id_, preview).items()
                            if key not in ("fqdn", "azurePortalFQDN", "identityProfile")})
        return outputs

    def invoke(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        if token == "azure-native:containerservice:listManagedClusterUserCredentials":
            return {"kubeconfigs": [{"name": "clusterUser",
                                     "value": base64.b64encode(self._kubeconfig(args).encode()).decode()}]}
        if token == "azure-native:authorization:getClientConfig":
            return {"clientId": _guid("standin", "client"), "objectId": _guid("standin", "deployer"),
                    "subscriptionId": SUBSCRIPTION, "tenantId": TENANT}
        if token == "azure-native:managedidentity:getUserAssignedIdentity":
            name = reveal(args.get("resourceName"))
            id_ = (f"{RG.format(subscription=SUBSCRIPTION, resourceGroupName=reveal(args.get('resourceGroupName')))}"
                   f"/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{name}")
            return {"id": id_, "name": name, "principalId": _guid(id_, "principal"),
                    "clientId": _guid(id_, "client"), "tenantId": TENANT}
        return super().invoke(token, args)

    def _kubeconfig(self, args: dict[str, Any]) -> str:
        local = os.environ.get("GPU_AKS_LOCAL_KUBECONFIG")
        if local:
            return Path(local).read_text()
        name = re.sub(r"[^A-Za-z0-9-]", "-", str(reveal(args.get("resourceName")) or "cluster"))
        # A kubelogin exec config, the shape AKS returns for an Azure AD cluster (format=exec), pointing at
        # a server that does not exist and saying where it comes from.
        return (f"# {STANDIN_NOTE}; set GPU_AKS_LOCAL_KUBECONFIG to hand out a local API server\n"
                "apiVersion: v1\nkind: Config\n"
                f"current-context: {name}\n"
                f"clusters:\n- name: {name}\n  cluster:\n    server: https://{name}.standin.invalid:443\n"
                f"contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: clusterUser_{name}\n"
                f"users:\n- name: clusterUser_{name}\n  user:\n    exec:\n"
                "      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n"
                "      args: [get-token, --environment, AzurePublicCloud, --server-id,"
                " 6dae42f8-4368-4678-94ff-3960e28e3630, --login, devicecode]\n")


if __name__ == "__main__":
    serve(AzureNative())
