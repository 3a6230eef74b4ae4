"""A stand-in for the `azure-native` provider plugin: gpu-aks's resources and functions, held to the real
provider's rules and to ARM's, with nothing sent anywhere. It is not Azure and never says it is: every ID is
under a made-up subscription, and the kubeconfig it hands out is the local API server named by
GPU_AKS_LOCAL_KUBECONFIG or a placeholder that says it comes from this stand-in. docs/azure-only.md says
what a run against it proves and what it cannot.

What it models, each after its owner (pulumi/pulumi-azure-native `provider/pkg/provider/provider.go` unless
said otherwise):
- Check: auto-naming (the logical name plus a random suffix, or a GUID; either marks the inputs
  `__createBeforeDelete`), the default location (the old inputs', the provider's `location` config, else the
  resource group's), `azureApiVersion`, and the provider's validation of every property and URL parameter
  against its schema (`azure_checks.py`, over the shapes `azure_schema.py` builds from the provider's SDK and
  Microsoft's REST models and operations).
- Diff: a changed path parameter, a changed `location` (ARM's TrackedResource marks it create-only), or a
  change to a property azure-native's `forceNewMap` names replaces the resource (`provider/pkg/gen/
  replacement.go` at 1b7112af33c62b247daed1028686bf279f4d5e69; `diff.go`, `calculateDetailedDiff`), and a
  replacement deletes first unless the old inputs carry `__createBeforeDelete` (`Diff`:
  `deleteBeforeReplace := len(replaces) > 0`). The engine lets a program's `delete_before_replace=False`
  win over that (pulumi `pkg/resource/deploy/step_generator.go`).
- Create: refused for an ID that exists ("cannot create already existing resource", `crud.CanCreate`), for a
  missing resource group or parent, and for what ARM refuses at the PUT (`arm_rules.py`); otherwise the
  resource as ARM's GET returns it goes into the cloud (`azure_cloud.py`), with the read-only answers of
  `offline/azure_answers.py` and the server defaults the REST models state.
- Read: the resource from the cloud, as outputs, and the inputs moved by what changed there (`Read`:
  old and new outputs projected onto inputs, the difference applied to the old inputs, `diff.go` `applyDiff`);
  a resource missing from the cloud is gone; with no inputs (an import) the inputs come from the ID and the
  resource.
- Update: ARM's refusals, plus `PropertyChangeNotAllowed` for the AgentPool properties AKS fixes at creation
  (learn.microsoft.com/rest/api/aks/agent-pools/create-or-update; `az aks nodepool update` offers no way to
  change them).
- Delete: the resource and everything under its ID leave the cloud (deleting a resource group deletes what
  it holds).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import arm_rules
import azure_schema
from azure_checks import validate_path_parameter, validate_type
from azure_cloud import Cloud, arm_resource, inputs_view, outputs_of
from provider import UNKNOWN, Model, ProviderError, has_unknown, reveal, serve

sys.path.append(str(arm_rules.checkout()))
from offline import azure_answers

#: The version of pulumi-azure-native gpu-aks pins (requirements.txt); the engine asks for it.
VERSION = "3.29.0"
STANDIN_NOTE = "gpu-aks stand-in for azure-native: not Azure, nothing was created"
CREATE_BEFORE_DELETE = "__createBeforeDelete"
SUBSCRIPTION = azure_answers.SUBSCRIPTION_ID

#: azure-native's forceNewMap (provider/pkg/gen/replacement.go at 1b7112af33c62b247daed1028686bf279f4d5e69),
#: for the types gpu-aks creates; nested paths as `diff.go` names them (`networkProfile.serviceCidr`).
FORCE_NEW: dict[str, frozenset[str]] = {
    "azure-native:authorization:RoleAssignment": frozenset({"principalId", "scope"}),
    "azure-native:containerservice:ManagedCluster": frozenset({
        "diskEncryptionSetID", "dnsPrefix", "fqdnSubdomain", "linuxProfile", "location", "nodeResourceGroup",
        "windowsProfile", "networkProfile.serviceCidr", "networkProfile.serviceCidrs", "networkProfile.dnsServiceIP",
        "networkProfile.networkMode", "networkProfile.networkPlugin", "networkProfile.networkPluginMode",
        "networkProfile.podCidr", "networkProfile.networkDataplane", "networkProfile.networkPolicy",
        "networkProfile.outboundType", "agentPoolProfiles[].networkProfile.nodePublicIPTags"}),
    "azure-native:containerservice:AgentPool": frozenset({"gpuInstanceProfile", "vmSize",
                                                          "networkProfile.nodePublicIPTags"}),
    "azure-native:resources:ResourceGroup": frozenset({"location"}),
}
#: AgentPool properties AKS fixes at creation: the REST API answers PropertyChangeNotAllowed (vmSize and
#: gpuInstanceProfile the provider already replaces on).
AGENT_POOL_FIXED = frozenset({"osDiskSizeGB", "osDiskType", "vnetSubnetID", "podSubnetID", "maxPods",
                              "availabilityZones", "enableEncryptionAtHost", "kubeletDiskType", "scaleSetPriority",
                              "scaleSetEvictionPolicy", "spotMaxPrice", "enableFIPS", "kubeletConfig",
                              "linuxOSConfig", "enableNodePublicIP", "nodePublicIPPrefixID", "workloadRuntime",
                              "hostGroupID", "capacityReservationGroupID", "messageOfTheDay", "enableUltraSSD"})
#: Server defaults the REST models state for an agent pool (azure-mgmt-containerservice 40.1.0
#: `AgentPool`/`ManagedClusterAgentPoolProfile` docstrings: count "The default value is 1", osType "The
#: default is Linux", scaleSetPriority "If not specified, the default is 'Regular'").
POOL_DEFAULTS = {"count": 1, "osType": "Linux", "scaleSetPriority": "Regular"}
#: Types whose ARM answer has no `provisioningState` (RoleAssignmentProperties, MaintenanceConfiguration).
NO_PROVISIONING_STATE = ("azure-native:authorization:RoleAssignment",
                         "azure-native:containerservice:MaintenanceConfiguration")


def _get(value: Any, path: str) -> Any:
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _normalized_location(value: Any) -> Any:
    # diff.go, applyAzureSpecificDiff: "West US 2" and "westus2" are the same location.
    return value.replace(" ", "").lower() if isinstance(value, str) else value


def _changed_paths(old: Any, new: Any, path: str) -> list[str]:
    """Every leaf path where two input values differ, in the replace-key form `diff.go` matches
    (`networkProfile.podCidr`, `agentPoolProfiles[].vmSize`)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [changed for key in sorted(set(old) | set(new))
                for changed in _changed_paths(old.get(key), new.get(key), f"{path}.{key}" if path else key)]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [changed for a, b in zip(old, new, strict=True) for changed in _changed_paths(a, b, f"{path}[]")]
    return [] if old == new else [path]


def _project(value: Any, prop: dict[str, Any] | None, types: dict[str, Any]) -> Any:
    """A value of an ARM answer, kept to what the input type holds (read-only properties dropped; a string
    set's map back to its keys, `convert/sdkOutputsToSdkInputs.go`)."""
    if prop is None:
        return value
    if prop.get("stringSet") and isinstance(value, dict):
        return list(value)
    if isinstance(value, dict) and prop.get("ref"):
        shape = types[prop["ref"]]["properties"]
        return {key: _project(item, shape[key], types) for key, item in value.items() if key in shape}
    if isinstance(value, list) and prop.get("items"):
        return [_project(item, prop["items"], types) for item in value]
    return value


def _preview(value: Any, prop: dict[str, Any] | None, types: dict[str, Any]) -> Any:
    """An input as `pulumi preview` shows it among the outputs before the resource exists: itself where the
    output has the input's shape, unknown where it does not (a string set's list against the answer's map),
    as azure-native's `PreviewOutputs` makes it (`provider/pkg/convert/previewOutputs.go`)."""
    if prop is None:
        return value
    if prop.get("stringSet"):
        return UNKNOWN
    if isinstance(value, dict) and prop.get("ref"):
        shape = types[prop["ref"]]["properties"]
        return {key: _preview(item, shape.get(key), types) for key, item in value.items()}
    if isinstance(value, list) and prop.get("items"):
        return [_preview(item, prop["items"], types) for item in value]
    return value


def _apply_diff(values: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """diff.go `applyDiff`: the old inputs moved by what changed between two projections of outputs,
    objects and arrays property by property, so server defaults that did not change stay out."""
    result = {key: value for key, value in values.items() if not (key in old and key not in new)}
    for key, value in new.items():
        if key not in old:
            result[key] = value
        elif old[key] != value:
            result[key] = _apply_value(values[key], old[key], value) if key in values else value
    return result


def _apply_value(base: Any, old: Any, new: Any) -> Any:
    if isinstance(base, dict) and isinstance(old, dict) and isinstance(new, dict):
        return _apply_diff(base, old, new)
    if isinstance(base, list) and isinstance(old, list) and isinstance(new, list):
        return [_apply_value(base[index], old[index], item) if index < len(base) and index < len(old) else item
                for index, item in enumerate(new)]
    return new


class AzureNative(Model):
    name = "azure-native"
    version = VERSION

    def __init__(self) -> None:
        self.schema = azure_schema.load()
        self.types: dict[str, Any] = self.schema["types"]
        self.cloud = Cloud.from_environment()
        self.config: dict[str, str] = {}

    def configure(self, variables: dict[str, str]) -> None:
        self.config = {key.removeprefix("azure-native:config:").removeprefix("azure-native:"): value
                       for key, value in variables.items()}

    def _resource(self, type_: str) -> dict[str, Any]:
        spec = self.schema["resources"].get(type_)
        if spec is None:
            raise ProviderError(f"Resource type {type_} not found ({STANDIN_NOTE}: the type is not modelled)")
        return spec

    # --- Check ---------------------------------------------------------------------------------------

    def check(self, type_: str, name: str, olds: dict[str, Any], news: dict[str, Any], seed: bytes,
              ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        spec = self._resource(type_)
        params, own = spec["path"], spec["path"][-1]
        inputs = dict(news)
        if own not in inputs:
            if own in olds:
                inputs[own] = olds[own]
                if isinstance(olds.get(CREATE_BEFORE_DELETE), bool):
                    inputs[CREATE_BEFORE_DELETE] = olds[CREATE_BEFORE_DELETE]
            else:
                digest = hashlib.sha256(seed + name.encode()).digest()
                inputs[own] = str(uuid.UUID(bytes=digest[:16])) if spec["autoname"] == "uuid" \
                    else name + digest.hex()[:8]
                inputs[CREATE_BEFORE_DELETE] = True
        args = self.types[spec["args"]]
        if "location" in args["properties"] and "location" not in inputs:
            location = self._default_location(olds, inputs)
            if location is not None:
                inputs["location"] = location
        inputs.setdefault("azureApiVersion", spec["apiVersion"])
        revealed = reveal(inputs)
        failures = []
        for param in params:
            if param in revealed:
                failures += validate_path_parameter(param, spec["pathRules"].get(param, {}), revealed[param])
            else:
                failures.append(f"missing required property '{param}'")
        body = {key: value for key, value in revealed.items() if key not in params}
        failures += validate_type("", spec["args"], body, {**self.types, spec["args"]: {
            **args, "required": [key for key in args["required"] if key not in params]}})
        return inputs, [("", reason) for reason in failures]

    def _default_location(self, olds: dict[str, Any], news: dict[str, Any]) -> Any:
        if "location" in olds:
            return olds["location"]
        if self.config.get("location"):
            return self.config["location"]
        group = reveal(news.get("resourceGroupName"))
        if group is None:
            return None
        if has_unknown(group):
            return UNKNOWN
        found = self.cloud.get(azure_answers.group_id(str(group)))
        return found.get("location") if found else None

    # --- Diff ----------------------------------------------------------------------------------------

    def diff(self, type_: str, olds: dict[str, Any], news: dict[str, Any], ignore: list[str],
             ) -> tuple[list[str], list[str], bool]:
        spec = self._resource(type_)
        old, new = reveal(olds), reveal(news)
        changed = sorted(key for key in set(old) | set(new) if key not in ignore and (
            _normalized_location(old.get(key)) != _normalized_location(new.get(key)) if key == "location"
            else old.get(key) != new.get(key)))
        force_new = FORCE_NEW.get(type_, frozenset()) | {"location"}
        replaces = set()
        for key in changed:
            if key in spec["path"] or key in force_new:
                replaces.add(key)
                continue
            for path in _changed_paths(old.get(key), new.get(key), key):
                if path in force_new and path not in ignore:
                    replaces.add(key)
        delete_first = bool(replaces) and old.get(CREATE_BEFORE_DELETE) is not True
        return changed, sorted(replaces), delete_first

    # --- Create, Update, Delete ---------------------------------------------------------------------

    def _id(self, spec: dict[str, Any], inputs: dict[str, Any]) -> str:
        values = {param: reveal(inputs.get(param)) for param in spec["path"]}
        if any(value is None or has_unknown(value) for value in values.values()):
            return UNKNOWN
        return spec["template"].format(subscription=SUBSCRIPTION, **values)

    def _body(self, spec: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in inputs.items()
                if key not in spec["path"] and key not in (CREATE_BEFORE_DELETE, "azureApiVersion")}

    def _previewed(self, spec: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        args = self.types[spec["args"]]["properties"]
        return {key: _preview(value, args.get(key), self.types) for key, value in body.items()}

    def _refusal(self, type_: str, spec: dict[str, Any], id_: str, body: dict[str, Any]) -> None:
        error = arm_rules.put_errors(type_, spec["armType"], reveal(body), spec["args"], self.types)
        if error is not None:
            raise ProviderError(str(error))
        if not self.cloud.persistent:
            return
        if spec["template"].startswith("{"):
            # An extension resource (a role assignment, a rule association) sits on its scope, which may be
            # anything Azure holds (your subnet, in a group of yours) that the stand-in never saw: its ID has
            # no parent of its own to check.
            return
        # The parent must exist: ARM answers 404 for a missing resource group or cluster.
        group = re.match(r"^/subscriptions/[^/]+/resourceGroups/([^/]+)/providers/", id_, re.IGNORECASE)
        if group and self.cloud.get(azure_answers.group_id(group.group(1))) is None:
            raise ProviderError(str(arm_rules.ArmError(
                "ResourceGroupNotFound", f"Resource group '{group.group(1)}' could not be found.", 404)))
        parent = id_.rsplit("/", 2)[0]
        if "/managedClusters/" in parent and self.cloud.get(parent) is None:
            raise ProviderError(str(arm_rules.ArmError(
                "ParentResourceNotFound", f"Can not perform requested operation on nested resource. Parent "
                f"resource '{parent.rsplit('/', 1)[-1]}' not found.", 404)))

    def create(self, type_: str, name: str, inputs: dict[str, Any], preview: bool) -> tuple[str, dict[str, Any]]:
        spec = self._resource(type_)
        id_ = self._id(spec, inputs)
        body = self._body(spec, inputs)
        if preview:
            # provider.go Create with preview: the inputs as outputs, every other output unknown.
            outputs = {**self._previewed(spec, body), "id": id_, "name": reveal(inputs.get(spec["path"][-1])),
                       "type": spec["armType"], "azureApiVersion": spec["apiVersion"]}
            if type_ not in NO_PROVISIONING_STATE:
                outputs["provisioningState"] = UNKNOWN
            return "", outputs
        if self.cloud.get(id_) is not None:
            raise ProviderError(f"cannot create already existing resource '{id_}'")
        self._refusal(type_, spec, id_, body)
        resource = self._arm_answer(type_, spec, id_, reveal(body))
        self.cloud.put(id_, resource)
        return id_, self._outputs(spec, resource, inputs)

    def update(self, type_: str, id_: str, olds: dict[str, Any], old_inputs: dict[str, Any],
               news: dict[str, Any], preview: bool) -> dict[str, Any]:
        spec = self._resource(type_)
        if type_.endswith(":AgentPool"):
            fixed = sorted(key for key in AGENT_POOL_FIXED
                           if key in old_inputs and reveal(old_inputs.get(key)) != reveal(news.get(key)))
            if fixed:
                raise ProviderError(str(arm_rules.ArmError(
                    "PropertyChangeNotAllowed", f"Changing property '{fixed[0]}' is not allowed.")))
        body = self._body(spec, news)
        if preview:
            return {**olds, **self._previewed(spec, body)}
        self._refusal(type_, spec, id_, body)
        resource = self._arm_answer(type_, spec, id_, reveal(body))
        self.cloud.put(id_, resource)
        return self._outputs(spec, resource, news)

    def delete(self, type_: str, id_: str, state: dict[str, Any]) -> None:
        self.cloud.delete(id_)

    def _outputs(self, spec: dict[str, Any], resource: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
        outputs = outputs_of(resource)
        outputs["azureApiVersion"] = spec["apiVersion"]
        # Secrets the program sent stay secret in the outputs (the engine would otherwise show them).
        for key, value in inputs.items():
            if key in outputs and isinstance(value, dict) and reveal(value) != value:
                outputs[key] = value
        return outputs

    def _arm_answer(self, type_: str, spec: dict[str, Any], id_: str, body: dict[str, Any]) -> dict[str, Any]:
        """The resource as ARM's GET returns it after the PUT of `body`."""
        answer = dict(body)
        if type_ not in NO_PROVISIONING_STATE:
            answer["provisioningState"] = "Succeeded"
        if type_.endswith(":AgentPool"):
            answer = {**POOL_DEFAULTS, **answer, "powerState": {"code": "Running"}}
            cluster = self.cloud.get(id_.rsplit("/agentPools/", 1)[0]) or {}
            current = answer.get("orchestratorVersion") or (cluster.get("properties") or {}).get(
                "currentKubernetesVersion")
            if current:
                answer["currentOrchestratorVersion"] = current
        if type_.endswith(":ManagedCluster"):
            answer = self._cluster_answer(id_, answer)
        return arm_resource(id_, spec["armType"], answer)

    def _cluster_answer(self, id_: str, answer: dict[str, Any]) -> dict[str, Any]:
        parts = id_.split("/")
        group, name = parts[4], parts[-1]
        answer.update(azure_answers.cluster_answers(
            name, group, str(answer.get("location") or ""), answer.get("dnsPrefix") or answer.get("fqdnSubdomain"),
            answer.get("identity"), bool((answer.get("oidcIssuerProfile") or {}).get("enabled")),
            answer.get("nodeResourceGroup")))
        answer["powerState"] = {"code": "Running"}
        if answer.get("kubernetesVersion"):
            # AKS answers the patch it picked; the stand-in knows none, so it answers what was asked.
            answer["currentKubernetesVersion"] = answer["kubernetesVersion"]
        answer["agentPoolProfiles"] = [
            {**POOL_DEFAULTS, **profile, "provisioningState": "Succeeded", "powerState": {"code": "Running"},
             **({"currentOrchestratorVersion": profile.get("orchestratorVersion") or answer["kubernetesVersion"]}
                if profile.get("orchestratorVersion") or answer.get("kubernetesVersion") else {})}
            for profile in answer.get("agentPoolProfiles") or [] if isinstance(profile, dict)]
        return answer

    # --- Read ----------------------------------------------------------------------------------------

    def read(self, type_: str, id_: str, state: dict[str, Any], inputs: dict[str, Any] | None,
             ) -> tuple[str, dict[str, Any], dict[str, Any] | None] | None:
        spec = self._resource(type_)
        if not self.cloud.persistent:
            return id_, state, inputs  # nothing to compare against: Pulumi's state stands
        resource = self.cloud.get(id_)
        if resource is None:
            return None
        outputs = self._outputs(spec, resource, inputs or {})
        args = self.types[spec["args"]]["properties"]
        new_projection = {key: _project(value, args[key], self.types) for key, value in inputs_view(resource).items()
                          if key in args and key not in spec["path"]}
        if not inputs:
            # An import: the inputs come from the ID and the resource (provider.go, ResponseToSdkInputs).
            match = re.fullmatch(re.sub(r"\\{(\w+)\\}", r"(?P<\1>.+?)", re.escape(spec["template"])), id_,
                                 re.IGNORECASE)
            path = {key: value for key, value in (match.groupdict() if match else {}).items()
                    if key in spec["path"]}
            return id_, outputs, {**path, **new_projection, "azureApiVersion": spec["apiVersion"]}
        old_projection = {key: _project(value, args[key], self.types) for key, value in reveal(state).items()
                          if key in args and key not in spec["path"]}
        moved = _apply_diff(reveal(inputs), old_projection, new_projection)
        # What did not move keeps its wire form (secrets stay secret).
        return id_, outputs, {key: inputs[key] if key in inputs and reveal(inputs[key]) == value else value
                              for key, value in moved.items()}

    # --- Functions -----------------------------------------------------------------------------------

    def invoke(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        if token == "azure-native:containerservice:listManagedClusterUserCredentials":
            return {"kubeconfigs": [{"name": "clusterUser",
                                     "value": base64.b64encode(self._kubeconfig(args).encode()).decode()}]}
        if token == "azure-native:authorization:getClientConfig":
            return azure_answers.client_config()
        if token == "azure-native:managedidentity:getUserAssignedIdentity":
            return azure_answers.user_assigned_identity(str(reveal(args.get("resourceGroupName"))),
                                                        str(reveal(args.get("resourceName"))))
        return super().invoke(token, args)

    def _kubeconfig(self, args: dict[str, Any]) -> str:
        local = os.environ.get("GPU_AKS_LOCAL_KUBECONFIG")
        if local:
            return read_local_kubeconfig(local)
        name = re.sub(r"[^A-Za-z0-9-]", "-", str(reveal(args.get("resourceName")) or "cluster"))
        cluster = self.cloud.get(f"{azure_answers.group_id(str(reveal(args.get('resourceGroupName'))))}"
                                 f"/providers/Microsoft.ContainerService/managedClusters/{reveal(args.get('resourceName'))}")
        fqdn = (cluster or {}).get("properties", {}).get("fqdn") or f"{name}.standin.invalid"
        # The shape AKS returns for an Azure AD cluster (format=exec), pointing at a server that does not
        # exist and saying where it comes from.
        return (f"# {STANDIN_NOTE}; set GPU_AKS_LOCAL_KUBECONFIG to hand out a local API server\n"
                + json.dumps(azure_answers.aad_kubeconfig(name, f"https://{fqdn}:443"), indent=1) + "\n")


def read_local_kubeconfig(path: str) -> str:
    """The kubeconfig GPU_AKS_LOCAL_KUBECONFIG names, read as the tools read every path a user gives them:
    a regular file of bounded size (`policies/documents.py`, `read_file`), so a FIFO, /dev/zero or a folder
    is an error that names the variable, not a hang or a flood."""
    root = str(arm_rules.checkout())
    if root not in sys.path:
        sys.path.append(root)
    from gpu_aks_policies.documents import DocumentError, Limits, read_file

    try:
        return read_file(path, Limits(max_bytes=1024 * 1024))
    except DocumentError as error:
        raise ProviderError(f"GPU_AKS_LOCAL_KUBECONFIG: {error}") from None


if __name__ == "__main__":
    serve(AzureNative())
