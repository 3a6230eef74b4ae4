"""Writes `components/gpu_cluster_args.py`, the typed inputs of `GpuCluster`, from the config keys.

The component's inputs are the stack config's keys, spelled the same, with the same nesting, types,
allowed values and descriptions: Pulumi's component host reads the generated TypedDicts (their
annotations and the docstring under each field) to build the package schema every SDK is generated
from. Regenerate after adding or changing a config key:

    venv/bin/python -m components.gpu_cluster_codegen

`tests/test_component_package.py` fails while the committed file is stale.

Every field is plain (no `pulumi.Input`): the values decide which resources exist (how many pools,
whether there is a device plugin), so they must be known when the program runs, exactly as stack
config is. The schema marks them `plain`, and each SDK asks for a prompt value instead of accepting
an output of another resource and failing later.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from components.aks_api import (
    AUTOSCALER_SETTINGS,
    EXPANDERS,
    GPU_DRIVERS,
    GPU_INSTANCE_PROFILES,
    NODE_OS_UPGRADE_CHANNELS,
    OS_SKUS,
    SCALE_SET_PRIORITIES,
    SKU_TIERS,
    UPGRADE_CHANNELS,
)
from components.settings import KUBELOGIN_MODES, VALIDATION_ACTIONS
from policies.catalog import MIG_STRATEGIES

ARGS_MODULE = Path(__file__).resolve().parent / "gpu_cluster_args.py"


@dataclass(frozen=True)
class EnumSpec:
    name: str
    doc: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class FieldSpec:
    """One input: `key` is the config key (and the schema property), `annotation` its Python type."""

    key: str
    annotation: str
    doc: str
    required: bool = False
    #: The config key when it is not the schema property (the autoscaler's kebab-case keys).
    config_key: str | None = None


@dataclass(frozen=True)
class TypeSpec:
    name: str
    doc: str
    fields: tuple[FieldSpec, ...]


@dataclass(frozen=True)
class ArgsModel:
    enums: tuple[EnumSpec, ...]
    #: Nested types first, the top-level args type last.
    types: tuple[TypeSpec, ...]


# --- The model: today's settings keys ------------------------------------------------------------------

def _enum(name: str, doc: str, values: Iterable[str]) -> EnumSpec:
    return EnumSpec(name, doc, tuple(values))


def camel_from_kebab(key: str) -> str:
    head, *rest = key.split("-")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _pool_fields(gpu: bool) -> tuple[FieldSpec, ...]:
    kind = "GPU" if gpu else "CPU"
    fields = [
        FieldSpec("name", "str", "The pool's name: 1-8 lowercase letters and digits, starting with a letter (12 with "
                  "keepAzureName); gpu-aks adds 4 hex characters for its Azure name.", required=True),
        FieldSpec("vmSize", "str", "The VM size, e.g. Standard_NC4as_T4_v3; it must be in gpu-aks's GPU catalog "
                  "(retired and unsupported sizes are refused)." if gpu else
                  "The VM size, e.g. Standard_D8ds_v5 (default); a GPU size is refused here: use gpuPools.",
                  required=gpu),
        FieldSpec("minCount", "int", "Autoscaler minimum node count (default 0: idle GPUs cost nothing)." if gpu else
                  "Autoscaler minimum node count (default 0)."),
        FieldSpec("maxCount", "int", f"Autoscaler maximum node count, at most 1000 (default {2 if gpu else 3})."),
        FieldSpec("nodeTaints", "list[str]", "Node taints as key=value:Effect (default [sku=gpu:NoSchedule]); a GPU "
                  "pool needs a NoSchedule taint." if gpu else "Node taints as key=value:Effect (default none)."),
        FieldSpec("nodeLabels", "dict[str, str]", "Node labels, added to the ones gpu-aks sets; AKS's reserved "
                  "prefixes are refused."),
        FieldSpec("availabilityZones", "list[str]", "Availability zones out of 1, 2 and 3 (default none)."),
        FieldSpec("osSKU", "OsSku", "The node OS image (default Ubuntu)."),
        FieldSpec("maxSurge", "str", "Extra nodes during an upgrade: a count (\"1\") or a percentage (default 33%)."),
        FieldSpec("scaleSetPriority", "ScaleSetPriority", "Regular (default) or Spot; fixed at creation."),
        FieldSpec("spotMaxPrice", "float", "Spot only: the highest price in US dollars, or -1 (default) to pay up to "
                  "the on-demand price."),
        FieldSpec("keepAzureName", "bool", "Keep the Azure name equal to the pool name (gpu-aks 0.1 naming); a "
                  "replacement then deletes the old pool first."),
    ]
    if gpu:
        fields += [
            FieldSpec("gpuInstanceProfile", "GpuInstanceProfile", "MIG profile for A100, H100 and H200 sizes; fixed "
                      "at creation."),
            FieldSpec("gpuProfile", "GpuProfile", f"The {kind} driver AKS installs."),
        ]
    return tuple(fields)


def legacy_model() -> ArgsModel:
    """The model from today's settings layer (used until the config-key declarations exist)."""
    enums = (
        _enum("SkuTier", "The AKS control-plane pricing tier.", SKU_TIERS),
        _enum("UpgradeChannel", "AKS's Kubernetes auto-upgrade channel.", UPGRADE_CHANNELS),
        _enum("NodeOsUpgradeChannel", "How AKS updates the node OS image.", NODE_OS_UPGRADE_CHANNELS),
        _enum("KubeloginMode", "How the kubeconfig output logs in to Azure AD.", KUBELOGIN_MODES),
        _enum("Expander", "How the cluster autoscaler picks a pool to grow.", EXPANDERS),
        _enum("OsSku", "A node OS image.", OS_SKUS),
        _enum("ScaleSetPriority", "On-demand (Regular) or Spot VMs.", SCALE_SET_PRIORITIES),
        _enum("GpuInstanceProfile", "A MIG profile (A100, H100 and H200 sizes).", GPU_INSTANCE_PROFILES),
        _enum("GpuDriver", "Whether AKS installs the NVIDIA driver (Install) or you bring it (None, e.g. the GPU "
                           "Operator).", GPU_DRIVERS),
        _enum("MigStrategy", "How NVIDIA's device plugin exposes MIG instances.", MIG_STRATEGIES),
        _enum("ValidationAction", "What the API server does with a GPU pod the admission policy refuses.",
              VALIDATION_ACTIONS),
    )
    autoscaler = tuple(
        FieldSpec(camel_from_kebab(key), "Expander" if key == "expander" else setting.wire_type.__name__,
                  f"AKS autoscaler setting `{key}`: {setting.describe}.", config_key=key)
        for key, setting in sorted(AUTOSCALER_SETTINGS.items()))
    types = (
        TypeSpec("AadProfile", "Azure AD integration of the cluster.", (
            FieldSpec("managed", "bool", "Azure AD integration (default true)."),
            FieldSpec("enableAzureRBAC", "bool", "Authorize Kubernetes requests with Azure RBAC (default true)."),
            FieldSpec("adminGroupObjectIDs", "list[str]", "Azure AD groups whose members administer the cluster."),
        )),
        TypeSpec("OidcIssuerProfile", "The cluster's OIDC issuer.", (
            FieldSpec("enabled", "bool", "Publish an OIDC issuer (default true; workload identity needs it)."),
        )),
        TypeSpec("AutoScalerProfile", "Cluster autoscaler settings, typed as AKS API 2025-09-01 types them; gpu-aks "
                                      "defaults expander least-waste and 5m scale-down times.", autoscaler),
        TypeSpec("Cluster", "The AKS cluster and its resource group.", (
            FieldSpec("name", "str", "The cluster's name (default gpu-aks-<stack>)."),
            FieldSpec("resourceGroupName", "str", "The resource group created for it (default rg-<cluster name>)."),
            FieldSpec("kubernetesVersion", "str", "A Kubernetes minor (\"1.37\") or patch AKS supports today "
                      "(default 1.37)."),
            FieldSpec("skuTier", "SkuTier", "The control-plane tier (default Free)."),
            FieldSpec("upgradeChannel", "UpgradeChannel", "The auto-upgrade channel (default patch)."),
            FieldSpec("nodeOSUpgradeChannel", "NodeOsUpgradeChannel", "The node OS upgrade channel (default "
                      "NodeImage)."),
            FieldSpec("aadProfile", "AadProfile", "Azure AD integration."),
            FieldSpec("disableLocalAccounts", "bool", "Disable local accounts (default true; needs "
                      "aadProfile.managed)."),
            FieldSpec("oidcIssuerProfile", "OidcIssuerProfile", "The OIDC issuer."),
            FieldSpec("workloadIdentity", "bool", "Enable workload identity (default true; needs the OIDC issuer)."),
            FieldSpec("kubeloginMode", "KubeloginMode", "How the kubeconfig output logs in (default azurecli)."),
            FieldSpec("autoScalerProfile", "AutoScalerProfile", "Cluster autoscaler settings."),
            FieldSpec("tags", "dict[str, str]", "Azure tags on the resource group and the cluster."),
        )),
        TypeSpec("Access", "Kubernetes rights for whoever runs pulumi up.", (
            FieldSpec("grantDeployerClusterAdmin", "bool", "Grant the deploying identity \"Azure Kubernetes Service "
                      "RBAC Cluster Admin\" on the cluster (default true)."),
            FieldSpec("rolePropagationSeconds", "int", "Seconds to wait once after that grant, 0-1800 (default 300)."),
        )),
        TypeSpec("SystemPool", "The inline system (CPU) pool, mode System.", (
            FieldSpec("name", "str", "The pool's name (default system)."),
            FieldSpec("vmSize", "str", "The VM size (default Standard_D4ds_v5); a GPU size is refused."),
            FieldSpec("minCount", "int", "Autoscaler minimum node count, at least 1 (default 1)."),
            FieldSpec("maxCount", "int", "Autoscaler maximum node count (default 3)."),
            FieldSpec("availabilityZones", "list[str]", "Availability zones out of 1, 2 and 3 (default none)."),
            FieldSpec("osSKU", "OsSku", "The node OS image (default AzureLinux)."),
            FieldSpec("maxSurge", "str", "Extra nodes during an upgrade (default 33%)."),
            FieldSpec("onlyCriticalAddonsEnabled", "bool", "Taint it CriticalAddonsOnly=true:NoSchedule so app pods "
                      "stay off (default true)."),
        )),
        TypeSpec("CpuPool", "A CPU user pool.", _pool_fields(gpu=False)),
        TypeSpec("GpuProfile", "The pool's GPU driver.", (
            FieldSpec("driver", "GpuDriver", "Install (default) or None (driver and device plugin are yours)."),
        )),
        TypeSpec("GpuPool", "A GPU pool: tainted, labelled and served by the device plugin.", _pool_fields(gpu=True)),
        TypeSpec("DevicePlugin", "NVIDIA's device-plugin DaemonSet.", (
            FieldSpec("enabled", "bool", "Run it (default true)."),
            FieldSpec("image", "str", "The device-plugin image (default nvcr.io/nvidia/k8s-device-plugin:v0.20.0)."),
            FieldSpec("namespace", "str", "Its namespace (default gpu-resources)."),
            FieldSpec("migStrategy", "MigStrategy", "none, single or mixed (default single when a served pool uses "
                      "MIG, else none)."),
            FieldSpec("pools", "list[str]", "The GPU pools it serves (default every pool whose gpuProfile.driver is "
                      "Install)."),
        )),
        TypeSpec("AdmissionPolicy", "A ValidatingAdmissionPolicy for GPU pods.", (
            FieldSpec("enabled", "bool", "Create it (default true)."),
            FieldSpec("validationActions", "list[ValidationAction]", "What happens to a refused pod (default [Warn, "
                      "Audit]); not both Deny and Warn."),
            FieldSpec("exemptNamespaces", "list[str]", "Namespaces it ignores (default kube-system and the device "
                      "plugin's)."),
        )),
        TypeSpec("SmokeTest", "One GPU check Job per served pool after pulumi up.", (
            FieldSpec("enabled", "bool", "Run it (default false)."),
            FieldSpec("image", "str", "The image the Job runs (default nvcr.io/nvidia/pytorch:25.10-py3)."),
        )),
        TypeSpec("GpuClusterArgs", "The inputs of GpuCluster: the gpu-aks stack config, key for key.", (
            FieldSpec("location", "str", "The Azure region (the stack config's azure-native:location).",
                      required=True),
            FieldSpec("cluster", "Cluster", "The AKS cluster (gpu-aks:cluster)."),
            FieldSpec("access", "Access", "Kubernetes rights for the deployer (gpu-aks:access)."),
            FieldSpec("systemPool", "SystemPool", "The inline system pool (gpu-aks:systemPool)."),
            FieldSpec("cpuPools", "list[CpuPool]", "CPU user pools (gpu-aks:cpuPools)."),
            FieldSpec("gpuPools", "list[GpuPool]", "GPU pools (gpu-aks:gpuPools)."),
            FieldSpec("devicePlugin", "DevicePlugin", "NVIDIA's device plugin (gpu-aks:devicePlugin)."),
            FieldSpec("admissionPolicy", "AdmissionPolicy", "The GPU admission policy (gpu-aks:admissionPolicy)."),
            FieldSpec("smokeTest", "SmokeTest", "The post-deploy GPU check (gpu-aks:smokeTest)."),
        )),
    )
    return ArgsModel(enums, types)


def model() -> ArgsModel:
    return legacy_model()


# --- Rendering --------------------------------------------------------------------------------------

_HEADER = '''"""The typed inputs of `GpuCluster`: one field per gpu-aks config key, with its description.

GENERATED by `venv/bin/python -m components.gpu_cluster_codegen` from the config keys; do not edit.
No `from __future__ import annotations`: Pulumi's component host reads these annotations as objects.
"""

# ruff: noqa: E501
from enum import StrEnum
from typing import NotRequired, Required, TypedDict'''


def member_name(value: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", value).strip("_").upper() or "EMPTY"
    name = "_" + name if name[0].isdigit() else name
    return name + "_" if keyword.iskeyword(name) else name


def _quoted(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""'


def render(args_model: ArgsModel) -> str:
    lines = [_HEADER]
    for enum in args_model.enums:
        lines += ["", "", f"class {enum.name}(StrEnum):", f"    {_quoted(enum.doc)}", ""]
        lines += [f"    {member_name(value)} = {json.dumps(value)}" for value in enum.values]
    for spec in args_model.types:
        lines += ["", "", f"class {spec.name}(TypedDict, total=False):", f"    {_quoted(spec.doc)}", ""]
        for field_spec in spec.fields:
            annotation = f"Required[{field_spec.annotation}]" if field_spec.required else \
                f"NotRequired[{field_spec.annotation}]"
            lines += [f"    {field_spec.key}: {annotation}", f"    {_quoted(field_spec.doc)}"]
    config_keys = {spec.name: {f.key: f.config_key for f in spec.fields if f.config_key}
                   for spec in args_model.types}
    config_keys = {name: keys for name, keys in config_keys.items() if keys}
    lines += ["", "", "#: Schema properties whose config key is spelled differently, by type.",
              "CONFIG_KEYS: dict[str, dict[str, str]] = {"]
    for name, keys in config_keys.items():
        lines.append(f"    {json.dumps(name)}: {{")
        lines += [f"        {json.dumps(key)}: {json.dumps(config_key)}," for key, config_key in keys.items()]
        lines.append("    },")
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    ARGS_MODULE.write_text(render(model()))
    print(f"wrote {ARGS_MODULE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
