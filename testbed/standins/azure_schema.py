"""The shapes the azure-native stand-in holds each request to, built from the owners' artifacts in this
virtualenv, never from gpu-aks's own settings code (so the stand-in can catch gpu-aks's mistakes).

pulumi-azure-native's `Check` (`provider/pkg/provider/provider.go`, `validateType`/`validateProperty`)
validates a resource's inputs against metadata its generator derives from Microsoft's REST spec
(`provider/pkg/gen/properties.go`, `genProperty`): each property's type, the required properties, string
length, number range and pattern, and the constraints of each URL (path) parameter. That metadata ships
inside the provider's binary, which this machine cannot have (the module is refused by the proxy). The same
facts come here from two artifacts that are installed:

- the provider's own Python SDK (`pulumi_azure_native` 3.29.0): every input type, its wire name, which
  arguments are required, and the enum of each enum-typed property (`_enums.py`), as the generator wrote
  them from the same schema;
- Microsoft's REST models and operations for the API version that SDK sends (`azure-mgmt-containerservice`
  40.1.0 for 2025-09-01, `azure-mgmt-monitor` 6.0.2 for 2022-06-01, `azure-mgmt-authorization` 4.0.0 for
  2022-04-01): each model's `_validation` (required, min/max length, minimum/maximum, pattern) and each
  operation's URL-parameter rules (`build_create_or_update_request`: `_SERIALIZER.url(..., max_length=,
  min_length=, pattern=)`).

Where no REST model of the SDK's API version is installed (ResourceGroup 2024-03-01, AzureMonitorWorkspace
2023-04-03, ActionGroup 2024-10-01-preview, PrometheusRuleGroup 2023-03-01, Grafana 2024-10-01) the shape has
the SDK's types, required properties and enums only; docs/azure-only.md lists it.

`python azure_schema.py OUT.json` writes the shapes as JSON (`make engines` does, into
build/engines/libexec/standins/): importing the SDK's modules takes seconds, and the stand-in starts once
per Pulumi command.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import json
import sys
import typing
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The file `make engines` writes beside the stand-in (see the module's docstring).
SCHEMA_FILE = Path(__file__).resolve().parent / "azure-schema.json"

SUBSCRIPTION_PATH = "/subscriptions/{subscription}"
GROUP_PATH = SUBSCRIPTION_PATH + "/resourceGroups/{resourceGroupName}"
CLUSTER_PATH = GROUP_PATH + "/providers/Microsoft.ContainerService/managedClusters/{resourceName}"

#: ResourceGroups_CreateOrUpdate's `resourceGroupName` (Azure/azure-rest-api-specs `specification/resources/
#: resource-manager/Microsoft.Resources/resources/stable/2024-03-01/resources.json`, the ResourceGroupName
#: path parameter: pattern, minLength 1, maxLength 90). No azure-mgmt-resource release carries 2024-03-01.
RESOURCE_GROUP_NAME_RULE = {"minLength": 1, "maxLength": 90, "pattern": r"^[-\w\._\(\)]+$"}


@dataclass(frozen=True)
class ResourceSource:
    """Where one resource type's shape comes from."""

    #: package:Class of the SDK's args (`<Name>InitArgs` where `<Name>Args` is a nested type's name), read from
    #: the package: importing a resource's module directly breaks the package's lazy loading of it.
    sdk: str
    path: tuple[str, ...]  # the ID's path parameters, in order; the last names the resource
    template: str  # the ARM ID
    arm_type: str
    api_version: str
    rest_model: str = ""  # module:Class of the REST model of that API version, where installed
    operations: str = ""  # module of the REST operations (URL-parameter rules), where installed
    #: azure-native's auto-naming strategy for the name parameter (metadata `autoName`): "random" (name plus
    #: a random suffix), "uuid" (a random GUID); both set `__createBeforeDelete` (provider.go, applyDefaults).
    autoname: str = "random"


CS = "pulumi_azure_native.containerservice"
MON = "pulumi_azure_native.monitor"
CS_MODELS = "azure.mgmt.containerservice.models:"
CS_OPS = "azure.mgmt.containerservice.operations._"
MON_MODELS = "azure.mgmt.monitor.v2022_06_01.models:"
MON_OPS = "azure.mgmt.monitor.v2022_06_01.operations._"

RESOURCES: dict[str, ResourceSource] = {
    "azure-native:resources:ResourceGroup": ResourceSource(
        "pulumi_azure_native.resources:ResourceGroupArgs", ("resourceGroupName",), GROUP_PATH,
        "Microsoft.Resources/resourceGroups", "2024-03-01"),
    "azure-native:containerservice:ManagedCluster": ResourceSource(
        CS + ":ManagedClusterArgs", ("resourceGroupName", "resourceName"), CLUSTER_PATH,
        "Microsoft.ContainerService/ManagedClusters", "2025-09-01", CS_MODELS + "ManagedCluster",
        CS_OPS + "managed_clusters_operations"),
    "azure-native:containerservice:AgentPool": ResourceSource(
        CS + ":AgentPoolArgs", ("resourceGroupName", "resourceName", "agentPoolName"),
        CLUSTER_PATH + "/agentPools/{agentPoolName}", "Microsoft.ContainerService/managedClusters/agentPools",
        "2025-09-01", CS_MODELS + "AgentPool", CS_OPS + "agent_pools_operations"),
    "azure-native:containerservice:MaintenanceConfiguration": ResourceSource(
        CS + ":MaintenanceConfigurationArgs", ("resourceGroupName", "resourceName", "configName"),
        CLUSTER_PATH + "/maintenanceConfigurations/{configName}",
        "Microsoft.ContainerService/managedClusters/maintenanceConfigurations", "2025-09-01",
        CS_MODELS + "MaintenanceConfiguration", CS_OPS + "maintenance_configurations_operations"),
    "azure-native:authorization:RoleAssignment": ResourceSource(
        "pulumi_azure_native.authorization:RoleAssignmentArgs", ("scope", "roleAssignmentName"),
        "{scope}/providers/Microsoft.Authorization/roleAssignments/{roleAssignmentName}",
        "Microsoft.Authorization/roleAssignments", "2022-04-01",
        "azure.mgmt.authorization.v2022_04_01.models:RoleAssignmentCreateParameters",
        "azure.mgmt.authorization.v2022_04_01.operations._role_assignments_operations", autoname="uuid"),
    "azure-native:monitor:AzureMonitorWorkspace": ResourceSource(
        MON + ":AzureMonitorWorkspaceArgs", ("resourceGroupName", "azureMonitorWorkspaceName"),
        GROUP_PATH + "/providers/Microsoft.Monitor/accounts/{azureMonitorWorkspaceName}", "Microsoft.Monitor/accounts",
        "2023-04-03"),
    "azure-native:monitor:DataCollectionEndpoint": ResourceSource(
        MON + ":DataCollectionEndpointArgs", ("resourceGroupName", "dataCollectionEndpointName"),
        GROUP_PATH + "/providers/Microsoft.Insights/dataCollectionEndpoints/{dataCollectionEndpointName}",
        "Microsoft.Insights/dataCollectionEndpoints", "2022-06-01", MON_MODELS + "DataCollectionEndpointResource",
        MON_OPS + "data_collection_endpoints_operations"),
    "azure-native:monitor:DataCollectionRule": ResourceSource(
        MON + ":DataCollectionRuleArgs", ("resourceGroupName", "dataCollectionRuleName"),
        GROUP_PATH + "/providers/Microsoft.Insights/dataCollectionRules/{dataCollectionRuleName}",
        "Microsoft.Insights/dataCollectionRules", "2022-06-01", MON_MODELS + "DataCollectionRuleResource",
        MON_OPS + "data_collection_rules_operations"),
    "azure-native:monitor:DataCollectionRuleAssociation": ResourceSource(
        MON + ":DataCollectionRuleAssociationArgs", ("resourceUri", "associationName"),
        "{resourceUri}/providers/Microsoft.Insights/dataCollectionRuleAssociations/{associationName}",
        "Microsoft.Insights/dataCollectionRuleAssociations", "2022-06-01",
        MON_MODELS + "DataCollectionRuleAssociationProxyOnlyResource",
        MON_OPS + "data_collection_rule_associations_operations"),
    "azure-native:monitor:ActionGroup": ResourceSource(
        MON + ":ActionGroupInitArgs", ("resourceGroupName", "actionGroupName"),
        GROUP_PATH + "/providers/Microsoft.Insights/actionGroups/{actionGroupName}", "Microsoft.Insights/actionGroups",
        "2024-10-01-preview"),
    "azure-native:alertsmanagement:PrometheusRuleGroup": ResourceSource(
        "pulumi_azure_native.alertsmanagement:PrometheusRuleGroupArgs",
        ("resourceGroupName", "ruleGroupName"),
        GROUP_PATH + "/providers/Microsoft.AlertsManagement/prometheusRuleGroups/{ruleGroupName}",
        "Microsoft.AlertsManagement/prometheusRuleGroups", "2023-03-01"),
    "azure-native:dashboard:Grafana": ResourceSource(
        "pulumi_azure_native.dashboard:GrafanaArgs", ("resourceGroupName", "workspaceName"),
        GROUP_PATH + "/providers/Microsoft.Dashboard/grafana/{workspaceName}", "Microsoft.Dashboard/grafana",
        "2024-10-01"),
}

_NONE = type(None)


def _load(reference: str) -> Any:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


class _Builder:
    """Walks the SDK's input types (and the REST model beside each) into plain JSON shapes."""

    def __init__(self) -> None:
        self.types: dict[str, dict[str, Any]] = {}

    def type_name(self, cls: type) -> str:
        return f"{cls.__module__.split('.', 1)[1]}:{cls.__name__}"

    def shape(self, cls: type, rest: Any) -> str:
        from pulumi import _types

        name = self.type_name(cls)
        if name in self.types:
            return name
        shape: dict[str, Any] = {"properties": {}, "required": []}
        self.types[name] = shape
        hints = _types.input_type_types(cls)
        python_names = _types.input_type_py_to_pulumi_names(cls)
        signature = inspect.signature(cls)
        rest_attributes = _rest_attributes(rest)
        for python_name, parameter in signature.parameters.items():
            if python_name in ("self", "__self__") or python_name not in python_names:
                continue
            wire = python_names[python_name]
            attribute, rules = rest_attributes.get(wire, (None, {}))
            prop = self.prop(hints.get(wire, Any), attribute)
            prop.update({key: value for key, value in rules.items() if key != "required"})
            shape["properties"][wire] = prop
            if parameter.default is inspect.Parameter.empty or rules.get("required"):
                shape["required"].append(wire)
        return name

    def prop(self, hint: Any, rest_attribute: dict[str, Any] | None) -> dict[str, Any]:
        hint = _without_inputs(hint)
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if origin is typing.Union:
            enums = [arg for arg in args if isinstance(arg, type) and issubclass(arg, enum.Enum)]
            if enums:
                return {"type": "string", "enum": sorted({str(member.value) for cls in enums for member in cls})}
            if str in args:
                return {"type": "string"}
            return {"type": "any"}
        if origin in (list, Sequence, typing.Sequence) or origin is getattr(typing, "List", None):
            if args and _without_inputs(args[0]) is str and rest_attribute is not None \
                    and rest_attribute["type"].startswith("{"):
                # A list of strings in the SDK where the REST body holds a map keyed by them (a resource's
                # `userAssignedIdentities`): azure-native's string set, sent as a map, answered as a map of
                # objects (pulumi-azure-native `provider/pkg/convert/convertPropValue.go`, `IsStringSet`).
                return {"type": "array", "items": {"type": "string"}, "stringSet": True}
            return {"type": "array", "items": self.prop(args[0] if args else Any, _rest_items(rest_attribute))}
        if origin in (dict, Mapping, typing.Mapping):
            return {"type": "object", "additional": self.prop(args[1] if len(args) > 1 else Any, None)}
        if hint is str:
            return {"type": "string"}
        if hint is bool:
            return {"type": "boolean"}
        if hint is int:
            return {"type": "integer"}
        if hint is float:
            return {"type": "number"}
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return {"type": "string", "enum": sorted(str(member.value) for member in hint)}
        if isinstance(hint, type) and hasattr(hint, "_pulumi_input_type"):
            return {"type": "object", "ref": self.shape(hint, _rest_nested(rest_attribute))}
        return {"type": "any"}


def _without_inputs(hint: Any) -> Any:
    """T from `pulumi.Input[T]` (Union[T, Awaitable[T], Output[T]]) and Optional[T]."""
    from pulumi import Output

    if typing.get_origin(hint) is not typing.Union:
        return hint
    kept = [arg for arg in typing.get_args(hint) if arg is not _NONE
            and typing.get_origin(arg) not in (Awaitable, typing.Awaitable) and typing.get_origin(arg) is not Output
            and arg is not Output]
    if len(kept) == 1:
        return _without_inputs(kept[0])
    return typing.Union[tuple(kept)] if kept else Any  # noqa: UP007 - a Union built at run time


def _rest_attributes(model: Any) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """A REST model's attributes by wire name (the last segment of the key: the provider flattens
    `properties`), with their msrest `_validation` rules renamed as azure-native's metadata names them."""
    if model is None:
        return {}
    found = {}
    for attribute, spec in model._attribute_map.items():
        wire = spec["key"].replace("\\.", "\0").split(".")[-1].replace("\0", ".")
        rules = model._validation.get(attribute, {})
        if rules.get("readonly"):
            continue
        renamed = {{"min_length": "minLength", "max_length": "maxLength", "minimum": "minimum",
                    "maximum": "maximum", "pattern": "pattern", "required": "required"}[key]: value
                   for key, value in rules.items()
                   if key in ("min_length", "max_length", "minimum", "maximum", "pattern", "required")}
        found[wire] = ({"type": spec["type"], "module": model.__module__}, renamed)
    return found


def _rest_class(rest_attribute: dict[str, Any] | None, name: str) -> Any:
    if rest_attribute is None:
        return None
    module = importlib.import_module(rest_attribute["module"].rsplit(".", 1)[0])
    found = getattr(module, name, None)
    return found if isinstance(found, type) and hasattr(found, "_attribute_map") else None


def _rest_nested(rest_attribute: dict[str, Any] | None) -> Any:
    return None if rest_attribute is None else _rest_class(rest_attribute, rest_attribute["type"])


def _rest_items(rest_attribute: dict[str, Any] | None) -> dict[str, Any] | None:
    if rest_attribute is None or not rest_attribute["type"].startswith("["):
        return None
    return {**rest_attribute, "type": rest_attribute["type"][1:-1]}


def url_rules(operations: str) -> dict[str, dict[str, Any]]:
    """The URL-parameter rules of an operations module's PUT (`build_create_or_update_request`, or
    `build_create_request` where the operation is named Create), by the
    parameter's SDK name: `_SERIALIZER.url("agent_pool_name", agent_pool_name, "str", max_length=12, ...)`."""
    module = importlib.import_module(operations)
    tree = ast.parse(inspect.getsource(module))
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                    and node.name in ("build_create_or_update_request", "build_create_request"))
    rules: dict[str, dict[str, Any]] = {}
    for call in ast.walk(function):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "url"
                and call.args and isinstance(call.args[0], ast.Constant)):
            continue
        python_name = str(call.args[0].value)
        names = {"min_length": "minLength", "max_length": "maxLength", "pattern": "pattern"}
        rule = {names[keyword.arg]: ast.literal_eval(keyword.value) for keyword in call.keywords
                if keyword.arg in names}
        rules[_camel(python_name)] = rule
    return rules


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def build() -> dict[str, Any]:
    builder = _Builder()
    resources: dict[str, Any] = {}
    for token, source in RESOURCES.items():
        args = _load(source.sdk)
        rest = _load(source.rest_model) if source.rest_model else None
        args_type = builder.shape(args, rest)
        path_rules = url_rules(source.operations) if source.operations else {}
        if token == "azure-native:resources:ResourceGroup":
            path_rules = {"resourceGroupName": RESOURCE_GROUP_NAME_RULE}
        resources[token] = {
            "args": args_type, "path": list(source.path), "pathRules": path_rules, "template": source.template,
            "armType": source.arm_type, "apiVersion": source.api_version, "autoname": source.autoname,
            "sources": {"sdk": source.sdk, "restModel": source.rest_model, "operations": source.operations},
        }
    return {"resources": resources, "types": builder.types}


def load() -> dict[str, Any]:
    """The shapes: from the file `make engines` wrote, else built now (seconds)."""
    if SCHEMA_FILE.is_file():
        return json.loads(SCHEMA_FILE.read_text())
    return build()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python azure_schema.py OUT.json")
    Path(sys.argv[1]).write_text(json.dumps(build(), indent=1, sort_keys=True) + "\n")
