"""Stack config -> validated, frozen settings. The only module that knows the config keys.

Keys follow the AKS API's names where one exists (`vmSize`, `minCount`, `maxCount`, `nodeTaints`,
`nodeLabels`, `gpuInstanceProfile`, `gpuProfile.driver`, `scaleSetPriority`, ...), so a reader who
knows AKS can read `Pulumi.<stack>.yaml` at a glance, and values are checked against what the AKS API
version this program sends accepts (`components/aks_api.py`). Every problem is collected and reported
at once, each naming the key as it appears in the stack file (pools by name:
`gpu-aks:gpuPools[gput4].minCount`), the bad value (masked when the key is secret) and what is
allowed; nothing is created until all are fixed. No Pulumi imports: `components/stack_config.py`
reads `pulumi.Config` and hands the raw values here.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, TypeVar

from components.aks_api import (
    API_VERSION,
    AUTOSCALER_SETTINGS,
    CLUSTER_NAME_RE,
    DEFAULT_KUBERNETES_VERSION,
    END_OF_SUPPORT_WARNING_DAYS,
    GPU_DRIVERS,
    GPU_INSTANCE_PROFILES,
    KUBERNETES_VERSION_RE,
    NODE_OS_UPGRADE_CHANNELS,
    OS_SKUS,
    POOL_NAME_RE,
    RESOURCE_GROUP_RE,
    SCALE_SET_PRIORITIES,
    SKU_TIERS,
    UPGRADE_CHANNELS,
    kubernetes_minor,
    sanitized_cluster_name,
    supported_minors,
)
from observability.settings import ObservabilitySettings, parse_observability
from policies.catalog import (
    ACCELERATOR_LABEL,
    ACCELERATOR_LABEL_VALUE,
    DEFAULT_GPU_TAINT,
    DEVICE_PLUGIN_IMAGE,
    DEVICE_PLUGIN_NAMESPACE,
    GPU_MODEL_LABEL,
    GPU_PARTITION_LABEL,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    MIG_STRATEGIES,
    POOL_LABEL,
    RESERVED_LABEL_PREFIXES,
    SPOT_TAINT,
    GpuSku,
    gpu_sku,
    is_gpu_vm_size,
    supported_vm_sizes,
    unsupported_gpu_sku,
)
from policies.scheduling import TaintSyntaxError, label_key_problem, label_value_problem, parse_taint

PROJECT = "gpu-aks"
#: AKS allows at most 1000 nodes in one pool (and in one cluster with VM scale sets).
AKS_MAX_NODES_PER_POOL = 1000
#: A pool's Azure name is its config name plus 4 hex characters of a hash of its create-only
#: properties (the Azure Verified Module's pattern): a config name of at most 8 then fits AKS's 12.
SUFFIXED_NAME_LENGTH = 8
ZONES = ("1", "2", "3")
#: Azure RBAC for Kubernetes: "New role assignments can take up to five minutes to propagate"
#: (learn.microsoft.com/azure/aks/manage-azure-rbac).
DEFAULT_ROLE_PROPAGATION_SECONDS = 300
VALIDATION_ACTIONS = ("Deny", "Warn", "Audit")

#: Idle GPU nodes are the most expensive thing in the cluster: give them back after 5 idle minutes
#: (AKS's default is 10) and prefer the pool that wastes the least when scaling up.
DEFAULT_AUTOSCALER_PROFILE: Mapping[str, Any] = {
    "expander": "least-waste",
    "scale-down-unneeded-time": "5m",
    "scale-down-delay-after-add": "5m",
}

TOP_LEVEL_KEYS = ("cluster", "access", "systemPool", "cpuPools", "gpuPools", "devicePlugin", "admissionPolicy",
                  "smokeTest", "observability")
_POOL_KEYS = ("name", "vmSize", "minCount", "maxCount", "nodeTaints", "nodeLabels", "availabilityZones",
              "osSKU", "maxSurge", "scaleSetPriority", "spotMaxPrice", "keepAzureName")
_GPU_POOL_KEYS = (*_POOL_KEYS, "gpuInstanceProfile", "gpuProfile")
_SYSTEM_POOL_KEYS = ("name", "vmSize", "minCount", "maxCount", "availabilityZones", "osSKU", "maxSurge",
                     "onlyCriticalAddonsEnabled")
_CLUSTER_KEYS = ("name", "resourceGroupName", "kubernetesVersion", "skuTier", "upgradeChannel",
                 "nodeOSUpgradeChannel", "aadProfile", "disableLocalAccounts", "oidcIssuerProfile",
                 "workloadIdentity", "kubeloginMode", "autoScalerProfile", "tags")
_ACCESS_KEYS = ("grantDeployerClusterAdmin", "rolePropagationSeconds")
_DEVICE_PLUGIN_KEYS = ("enabled", "image", "namespace", "migStrategy", "pools")
_ADMISSION_POLICY_KEYS = ("enabled", "validationActions", "exemptNamespaces")
_SMOKE_TEST_KEYS = ("enabled", "image")
KUBELOGIN_MODES = ("azurecli", "spn", "msi", "workloadidentity")


class SettingsError(ValueError):
    """Every problem in the stack config, each on its own line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            f"the stack config has {len(self.problems)} problem(s); nothing was created:\n"
            + "\n".join(f"  - {problem}" for problem in self.problems))


# --- Settings ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodePoolSettings:
    """A user pool (CPU or GPU): what AKS needs to create it and the autoscaler to size it."""

    name: str
    vm_size: str
    min_count: int
    max_count: int
    taints: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    availability_zones: tuple[str, ...] = ()
    os_sku: str = "Ubuntu"
    max_surge: str = "33%"
    spot: bool = False
    spot_max_price: float = -1.0
    #: The pool's name in Azure: the config name plus a hash of its create-only properties, so a
    #: change to one of them creates the new pool before the old one is deleted.
    azure_name: str = ""
    #: The Azure name is the config name (gpu-aks 0.1 naming): replacements delete first.
    keep_azure_name: bool = False

    def create_only(self) -> dict[str, Any]:
        """The properties Azure fixes at creation; any change to them needs a new pool."""
        return {"vmSize": self.vm_size.lower(), "osSKU": self.os_sku, "availabilityZones": sorted(self.availability_zones),
                "spot": self.spot, "spotMaxPrice": self.spot_max_price if self.spot else None}


@dataclass(frozen=True)
class GpuNodePoolSettings(NodePoolSettings):
    sku: GpuSku | None = None
    gpu_instance_profile: str | None = None
    gpu_driver: str = "Install"
    #: Whether gpu-aks's own device-plugin DaemonSet serves this pool (see DevicePluginSettings).
    device_plugin: bool = True
    mig_strategy: str = "none"

    @property
    def gpu(self) -> GpuSku:
        assert self.sku is not None
        return self.sku

    @property
    def mig_partition(self) -> str | None:
        return self.gpu.mig_partition(self.gpu_instance_profile) if self.gpu_instance_profile else None

    @property
    def gpus_per_node(self) -> int:
        return self.gpu.gpus_per_node(self.gpu_instance_profile)

    @property
    def gpu_resource(self) -> str:
        """The extended resource a pod asks for to get one GPU (or MIG instance) of this pool."""
        if self.mig_partition and self.mig_strategy == "mixed":
            return MIG_RESOURCE_PREFIX + self.mig_partition
        return GPU_RESOURCE

    def create_only(self) -> dict[str, Any]:
        return {**super().create_only(), "gpuInstanceProfile": self.gpu_instance_profile, "gpuDriver": self.gpu_driver}


def azure_pool_name(pool: NodePoolSettings) -> str:
    if pool.keep_azure_name:
        return pool.name
    digest = hashlib.sha256(json.dumps(pool.create_only(), sort_keys=True).encode()).hexdigest()
    return pool.name + digest[:4]


@dataclass(frozen=True)
class SystemPoolSettings:
    name: str = "system"
    vm_size: str = "Standard_D4ds_v5"
    min_count: int = 1
    max_count: int = 3
    availability_zones: tuple[str, ...] = ()
    os_sku: str = "AzureLinux"
    max_surge: str = "33%"
    #: Adds `CriticalAddonsOnly=true:NoSchedule` so app pods stay off the system pool.
    only_critical_addons: bool = True


@dataclass(frozen=True)
class ClusterSettings:
    name: str
    resource_group_name: str
    location: str
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    sku_tier: str = "Free"
    upgrade_channel: str = "patch"
    node_os_upgrade_channel: str = "NodeImage"
    aad_enabled: bool = True
    azure_rbac: bool = True
    admin_group_object_ids: tuple[str, ...] = ()
    disable_local_accounts: bool = True
    oidc_issuer: bool = True
    workload_identity: bool = True
    kubelogin_mode: str = "azurecli"
    #: The API's keys and wire types (three booleans, the rest strings).
    autoscaler_profile: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_AUTOSCALER_PROFILE))
    tags: Mapping[str, str] = field(default_factory=dict)
    #: `gpu-aks:cluster` is a secret config key (it holds a `secure:` value): its tags are passed as
    #: secret inputs, so Pulumi encrypts them in state and never prints them.
    secret: bool = False

    @property
    def aks_moves_version(self) -> bool:
        """Whether AKS's auto-upgrade changes the version under the pinned value: `stable` and
        `rapid` move the minor, `patch` moves a pinned patch version (a minor-only pin is an alias
        AKS keeps; learn.microsoft.com/azure/aks/auto-upgrade-cluster)."""
        if self.upgrade_channel in ("stable", "rapid"):
            return True
        return self.upgrade_channel == "patch" and self.kubernetes_version.count(".") == 2


@dataclass(frozen=True)
class AccessSettings:
    #: Grant whoever runs `pulumi up` "Azure Kubernetes Service RBAC Cluster Admin" on the cluster.
    grant_deployer_cluster_admin: bool = True
    #: How long in-cluster resources wait after a new role assignment.
    role_propagation_seconds: int = DEFAULT_ROLE_PROPAGATION_SECONDS


@dataclass(frozen=True)
class DevicePluginSettings:
    enabled: bool = True
    image: str = DEVICE_PLUGIN_IMAGE
    namespace: str = DEVICE_PLUGIN_NAMESPACE
    mig_strategy: str = "none"
    #: The GPU pools the DaemonSets serve (their names).
    pools: tuple[str, ...] = ()


@dataclass(frozen=True)
class AdmissionPolicySettings:
    enabled: bool = True
    validation_actions: tuple[str, ...] = ("Warn", "Audit")
    exempt_namespaces: tuple[str, ...] = ("kube-system", DEVICE_PLUGIN_NAMESPACE)


@dataclass(frozen=True)
class SmokeTestSettings:
    enabled: bool = False
    image: str = "nvcr.io/nvidia/pytorch:25.10-py3"


@dataclass(frozen=True)
class PlatformSettings:
    stack: str
    cluster: ClusterSettings
    system_pool: SystemPoolSettings
    cpu_pools: tuple[NodePoolSettings, ...]
    gpu_pools: tuple[GpuNodePoolSettings, ...]
    device_plugin: DevicePluginSettings
    smoke_test: SmokeTestSettings
    access: AccessSettings = field(default_factory=AccessSettings)
    admission_policy: AdmissionPolicySettings = field(default_factory=AdmissionPolicySettings)
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    #: Things that are allowed but worth a look (a Kubernetes version close to its end of support).
    warnings: tuple[str, ...] = ()

    def served_gpu_pools(self) -> tuple[GpuNodePoolSettings, ...]:
        return tuple(pool for pool in self.gpu_pools if pool.device_plugin)


# --- Reading raw config ------------------------------------------------------------------------

T = TypeVar("T")
_MISSING = object()


def describe(value: Any) -> str:
    """A config value as the stack file would show it: strings quoted, everything else as JSON."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, sort_keys=True, default=str)
        except (ValueError, RecursionError):
            text = "<unprintable>"
    return text if len(text) <= 80 else text[:60] + "…"


class _Problems:
    """Collects problems; each reader returns a usable fallback so parsing goes on to find the rest."""

    def __init__(self, secret_keys: Collection[str] = ()) -> None:
        self.items: list[str] = []
        self.secret_keys = set(secret_keys)

    @staticmethod
    def full_key(key: str) -> str:
        # Keys are named as they appear in Pulumi.<stack>.yaml: `gpu-aks:gpuPools[gput4].minCount`.
        return key if ":" in key else f"{PROJECT}:{key}"

    def add(self, key: str, message: str) -> None:
        self.items.append(f"{self.full_key(key)}: {message}")

    def shown(self, key: str, value: Any) -> str:
        """The value for a message; never the value of a secret key."""
        top = key.split(":")[-1].split(".")[0].split("[")[0]
        return "[secret]" if top in self.secret_keys else describe(value)

    def mapping(self, raw: Any, key: str) -> Mapping[str, Any]:
        if raw is None or raw is _MISSING:
            return {}
        if not isinstance(raw, Mapping):
            self.add(key, f"expected an object of settings, got {self.shown(key, raw)}")
            return {}
        return raw

    def unknown_keys(self, raw: Mapping[str, Any], key: str, allowed: Sequence[str]) -> None:
        for name in raw:
            if not isinstance(name, str):
                self.add(key, f"has a key that is not a string ({self.shown(key, name)}); keys are setting names")
            elif name not in allowed:
                close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
                hint = f"did you mean '{close[0]}'? " if close else ""
                self.add(f"{key}.{name}", f"unknown setting; {hint}allowed: {', '.join(allowed)}")

    def get(self, raw: Mapping[str, Any], name: str, key: str, default: T,
            check: Callable[[Any], str | None], convert: Callable[[Any], T] = lambda v: v) -> T:
        value = raw.get(name, _MISSING)
        if value is _MISSING or value is None:
            return default
        problem = check(value)
        if problem:
            self.add(f"{key}.{name}", f"{self.shown(key, value)} {problem}")
            return default
        return convert(value)


def _is_int(value: Any) -> bool:
    # Config numbers may arrive as floats (1.0) from JSON: whole floats are fine.
    return not isinstance(value, bool) and (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))


def _count_problem(value: Any) -> str | None:
    if not _is_int(value):
        return "is not a whole number"
    if value < 0:
        return "is negative; node counts start at 0"
    if value > AKS_MAX_NODES_PER_POOL:
        return f"is above the AKS limit of {AKS_MAX_NODES_PER_POOL} nodes per pool"
    return None


def _one_of(allowed: Sequence[str]) -> Callable[[Any], str | None]:
    return lambda value: None if isinstance(value, str) and value in allowed else f"is not allowed; allowed: {', '.join(allowed)}"


def _bool_problem(value: Any) -> str | None:
    return None if isinstance(value, bool) else "is not true or false"


def _string_problem(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() == value and value else "is not a non-empty string"


def _zones_problem(value: Any) -> str | None:
    ok = isinstance(value, list) and all(isinstance(zone, (str, int)) and str(zone) in ZONES for zone in value)
    return None if ok else f"must be a list of zones out of {', '.join(ZONES)}"


def _surge_problem(value: Any) -> str | None:
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    return None if re.fullmatch(r"[1-9][0-9]*%?", text) else "must be a node count (e.g. 1) or a percentage (e.g. 33%)"


def _string_map_problem(value: Any) -> str | None:
    ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return None if ok else "must be a map of strings to strings"


def _string_list_problem(value: Any) -> str | None:
    return None if isinstance(value, list) and all(isinstance(v, str) and v for v in value) else "must be a list of strings"


def _zones(problems: _Problems, raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    zones: list[Any] = problems.get(raw, "availabilityZones", key, [], _zones_problem)
    return tuple(str(zone) for zone in zones)


def pool_key(list_key: str, index: int, raw: Any) -> str:
    """How a pool is named in messages: by its name when it has a usable one, else by position."""
    name = raw.get("name") if isinstance(raw, Mapping) else None
    return f"{list_key}[{name}]" if isinstance(name, str) and POOL_NAME_RE.fullmatch(name) else f"{list_key}[{index}]"


def _pool_name(problems: _Problems, raw: Mapping[str, Any], key: str, default: str | None, max_length: int) -> str:
    name = raw.get("name", default)
    if not isinstance(name, str) or not POOL_NAME_RE.fullmatch(name):
        problems.add(f"{key}.name", f"{problems.shown(key, name)} is not a name AKS accepts for a Linux pool: 1-12 "
                                    "lowercase letters and digits, starting with a letter (e.g. 'gput4')")
        return name if isinstance(name, str) else f"<{key}>"
    if len(name) > max_length:
        problems.add(f"{key}.name", f"{problems.shown(key, name)} is longer than {max_length} characters: gpu-aks adds 4 "
                                    "hex characters to a pool's Azure name (so a replacement can be created before the "
                                    "old pool is deleted) and AKS allows 12; shorten it, or set keepAzureName: true")
    return name


def _counts(problems: _Problems, raw: Mapping[str, Any], key: str, default_min: int, default_max: int,
            floor: int = 0) -> tuple[int, int]:
    before = len(problems.items)
    min_count = problems.get(raw, "minCount", key, default_min, _count_problem, int)
    max_count = problems.get(raw, "maxCount", key, default_max, _count_problem, int)
    if len(problems.items) > before:
        return min_count, max_count
    if min_count < floor:
        problems.add(f"{key}.minCount", f"{min_count} is below {floor}; a system pool needs at least one node")
    elif min_count > max_count:
        problems.add(f"{key}.minCount", f"{min_count} is above maxCount {max_count}; the autoscaler needs "
                                        "minCount <= maxCount")
    return min_count, max_count


def _taints(problems: _Problems, raw: Mapping[str, Any], key: str, default: Sequence[str]) -> tuple[str, ...] | None:
    """The pool's taints; None when some could not be parsed (so no knock-on check runs)."""
    value = raw.get("nodeTaints", _MISSING)
    if value is _MISSING or value is None:
        return tuple(default)
    if not isinstance(value, list):
        problems.add(f"{key}.nodeTaints", f"{problems.shown(key, value)} is not a list of taints like 'sku=gpu:NoSchedule'")
        return None
    taints, ok = [], True
    for index, text in enumerate(value):
        try:
            parse_taint(text)
            taints.append(text)
        except TaintSyntaxError as error:
            problems.add(f"{key}.nodeTaints[{index}]", "[secret] is not a valid taint"
                         if problems.shown(key, text) == "[secret]" else str(error))
            ok = False
    return tuple(taints) if ok else None


def _labels(problems: _Problems, raw: Mapping[str, Any], key: str) -> dict[str, str]:
    value = raw.get("nodeLabels", _MISSING)
    if value is _MISSING or value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.add(f"{key}.nodeLabels", f"{problems.shown(key, value)} is not a map of label keys to values")
        return {}
    labels = {}
    for label, label_value in value.items():
        where = f"{key}.nodeLabels.{label}"
        if not isinstance(label, str):
            problems.add(f"{key}.nodeLabels", f"has a key that is not a string ({problems.shown(key, label)})")
            continue
        if not isinstance(label_value, str):
            problems.add(where, f"{problems.shown(key, label_value)} is not a string; quote it in YAML (e.g. \"true\")")
            continue
        key_problem = label_key_problem(label)
        if key_problem:
            problems.add(where, f"label key {describe(label)} {key_problem}")
            continue
        if label.startswith(RESERVED_LABEL_PREFIXES) or label == POOL_LABEL:
            problems.add(where, f"label key {describe(label)} is reserved (AKS: {', '.join(RESERVED_LABEL_PREFIXES)}; "
                                f"gpu-aks sets {POOL_LABEL}); pick another key")
            continue
        value_problem = label_value_problem(label_value)
        if value_problem:
            problems.add(where, f"label value {problems.shown(key, label_value)} {value_problem}")
            continue
        labels[label] = label_value
    return labels


def _pool_common(problems: _Problems, raw: Mapping[str, Any], key: str) -> dict[str, Any]:
    spot = problems.get(raw, "scaleSetPriority", key, "Regular", _one_of(SCALE_SET_PRIORITIES)) == "Spot"
    spot_max_price = problems.get(
        raw, "spotMaxPrice", key, -1.0,
        lambda v: None if isinstance(v, (int, float)) and not isinstance(v, bool) and (v == -1 or v > 0)
        else "must be -1 (pay up to the on-demand price) or a positive price in US dollars", float)
    if "spotMaxPrice" in raw and not spot:
        problems.add(f"{key}.spotMaxPrice", "is only valid with scaleSetPriority: Spot")
    return {
        "availability_zones": _zones(problems, raw, key),
        "os_sku": problems.get(raw, "osSKU", key, "Ubuntu", _one_of(OS_SKUS)),
        "max_surge": str(problems.get(raw, "maxSurge", key, "33%", _surge_problem)),
        "spot": spot,
        "spot_max_price": spot_max_price,
        "keep_azure_name": problems.get(raw, "keepAzureName", key, False, _bool_problem),
    }


def _with_spot_taint(taints: tuple[str, ...], spot: bool) -> tuple[str, ...]:
    # AKS adds this taint to every Spot node; declaring it keeps the AgentPool from drifting.
    return (*taints, SPOT_TAINT) if spot and SPOT_TAINT not in taints else taints


def _name_length(raw: Mapping[str, Any]) -> int:
    return 12 if raw.get("keepAzureName") is True else SUFFIXED_NAME_LENGTH


def _cpu_pool(problems: _Problems, raw: Any, key: str) -> NodePoolSettings:
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _POOL_KEYS)
    name = _pool_name(problems, raw, key, None, _name_length(raw))
    vm_size = problems.get(raw, "vmSize", key, "Standard_D8ds_v5", _string_problem)
    if is_gpu_vm_size(vm_size):
        problems.add(f"{key}.vmSize", f"{describe(vm_size)} is a GPU size; declare GPU pools under gpuPools so they "
                                      "get the GPU taint, labels and the device plugin")
    min_count, max_count = _counts(problems, raw, key, 0, 3)
    common = _pool_common(problems, raw, key)
    taints = _with_spot_taint(_taints(problems, raw, key, ()) or (), common["spot"])
    labels = {**_labels(problems, raw, key), POOL_LABEL: name}
    pool = NodePoolSettings(name, vm_size, min_count, max_count, taints, labels, **common)
    return replace(pool, azure_name=azure_pool_name(pool))


def _gpu_vm_size(problems: _Problems, raw: Mapping[str, Any], key: str) -> GpuSku | None:
    vm_size = raw.get("vmSize")
    if not isinstance(vm_size, str) or not vm_size:
        problems.add(f"{key}.vmSize", f"{'missing' if vm_size is None else problems.shown(key, vm_size)}: a GPU pool "
                                      "needs a vmSize, e.g. Standard_NC4as_T4_v3")
        return None
    unsupported = unsupported_gpu_sku(vm_size)
    if unsupported:
        problems.add(f"{key}.vmSize", f"{describe(vm_size)}: {unsupported.reason}; use {unsupported.replacement}")
        return None
    sku = gpu_sku(vm_size)
    if sku is None:
        problems.add(f"{key}.vmSize", f"{describe(vm_size)} is not an NVIDIA GPU size gpu-aks knows; supported: "
                                      f"{', '.join(supported_vm_sizes())}")
    return sku


def _gpu_pool(problems: _Problems, raw: Any, key: str) -> GpuNodePoolSettings:
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _GPU_POOL_KEYS)
    name = _pool_name(problems, raw, key, None, _name_length(raw))
    sku = _gpu_vm_size(problems, raw, key)
    # GPU pools default to minCount 0: idle GPUs cost nothing.
    min_count, max_count = _counts(problems, raw, key, 0, 2)
    common = _pool_common(problems, raw, key)

    profile = problems.get(raw, "gpuInstanceProfile", key, None, _one_of(GPU_INSTANCE_PROFILES))
    if profile and sku is not None and not sku.supports_mig:
        problems.add(f"{key}.gpuInstanceProfile", f"{describe(profile)} needs a MIG-capable GPU, but {sku.vm_size} has "
                                                  f"{sku.model}; MIG works on A100, H100 and H200 sizes")
        profile = None
    gpu_profile = problems.mapping(raw.get("gpuProfile"), f"{key}.gpuProfile")
    problems.unknown_keys(gpu_profile, f"{key}.gpuProfile", ("driver",))
    driver = problems.get(gpu_profile, "driver", f"{key}.gpuProfile", "Install", _one_of(GPU_DRIVERS))

    taints = _taints(problems, raw, key, (DEFAULT_GPU_TAINT,))
    if taints is not None and not any(parse_taint(t)["effect"] == "NoSchedule" for t in taints):
        problems.add(f"{key}.nodeTaints", f"{describe(list(taints))} has no NoSchedule taint; a GPU pool needs one so "
                                          f"only GPU pods land on it (the default is {describe(DEFAULT_GPU_TAINT)})")
    taints = _with_spot_taint(taints or (), common["spot"])

    labels = _labels(problems, raw, key)
    derived = {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: name}
    if sku is not None:
        derived[GPU_MODEL_LABEL] = sku.accelerator
        if profile:
            derived[GPU_PARTITION_LABEL] = sku.mig_partition(profile)
    for label, value in derived.items():
        if label in labels and labels[label] != value:
            problems.add(f"{key}.nodeLabels.{label}", f"{describe(labels[label])} conflicts with the value gpu-aks sets "
                                                      f"({describe(value)}); remove it")
    pool = GpuNodePoolSettings(
        name, sku.vm_size if sku else str(raw.get("vmSize")), min_count, max_count, taints,
        {**labels, **derived}, **common, sku=sku, gpu_instance_profile=profile, gpu_driver=driver,
    )
    return replace(pool, azure_name=azure_pool_name(pool))


def _system_pool(problems: _Problems, raw: Any) -> SystemPoolSettings:
    key = "systemPool"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _SYSTEM_POOL_KEYS)
    defaults = SystemPoolSettings()
    vm_size = problems.get(raw, "vmSize", key, defaults.vm_size, _string_problem)
    if is_gpu_vm_size(vm_size):
        problems.add(f"{key}.vmSize", f"{describe(vm_size)} is a GPU size; the system pool runs CPU add-ons, use a "
                                      "D-series size")
    min_count, max_count = _counts(problems, raw, key, defaults.min_count, defaults.max_count, floor=1)
    return SystemPoolSettings(
        # The system pool is inline in the cluster and never replaced, so its name has no suffix.
        name=_pool_name(problems, raw, key, defaults.name, 12), vm_size=vm_size, min_count=min_count,
        max_count=max_count,
        availability_zones=_zones(problems, raw, key),
        os_sku=problems.get(raw, "osSKU", key, defaults.os_sku, _one_of(OS_SKUS)),
        max_surge=str(problems.get(raw, "maxSurge", key, defaults.max_surge, _surge_problem)),
        only_critical_addons=problems.get(raw, "onlyCriticalAddonsEnabled", key, True, _bool_problem),
    )


def _autoscaler_profile(problems: _Problems, raw: Mapping[str, Any], key: str) -> dict[str, Any]:
    profile = problems.mapping(raw.get("autoScalerProfile"), f"{key}.autoScalerProfile")
    problems.unknown_keys(profile, f"{key}.autoScalerProfile", tuple(sorted(AUTOSCALER_SETTINGS)))
    checked: dict[str, Any] = {}
    for name, value in profile.items():
        setting = AUTOSCALER_SETTINGS.get(name) if isinstance(name, str) else None
        if setting is None:
            continue
        if setting.check(value):
            checked[name] = value
        else:
            problems.add(f"{key}.autoScalerProfile.{name}", f"{problems.shown(key, value)} is not allowed; AKS API "
                                                            f"{API_VERSION} takes {setting.describe}")
    return {**DEFAULT_AUTOSCALER_PROFILE, **checked}


def _kubernetes_version(problems: _Problems, raw: Mapping[str, Any], key: str, today: date,
                        warnings: list[str]) -> str:
    value = raw.get("kubernetesVersion", DEFAULT_KUBERNETES_VERSION)
    where = f"{key}.kubernetesVersion"
    if not isinstance(value, str) or not KUBERNETES_VERSION_RE.fullmatch(value):
        problems.add(where, f"{problems.shown(key, value)} is not a Kubernetes version like \"1.37\" or \"1.37.2\" "
                            "(quote it in YAML)")
        return DEFAULT_KUBERNETES_VERSION
    minor = kubernetes_minor(value)
    supported = supported_minors(today)
    if minor is None or minor.version not in supported:
        if minor is not None and today >= minor.end_of_support:
            reason = f"reached its AKS end of support on {minor.end_of_support}"
        elif minor is not None:
            reason = f"is not GA on AKS until {minor.aks_ga}"
        else:
            reason = "is not a version AKS supports"
        problems.add(where, f"{describe(value)} {reason}; supported on {today}: {', '.join(supported)} "
                            f"(AKS release calendar)")
        return DEFAULT_KUBERNETES_VERSION
    days = (minor.end_of_support - today).days
    if days <= END_OF_SUPPORT_WARNING_DAYS:
        warnings.append(f"{PROJECT}:{where}: {describe(value)} reaches its AKS end of support on {minor.end_of_support} "
                        f"({days} days); upgrade to {supported[-1]}")
    return value


def _cluster(problems: _Problems, raw: Any, location: Any, stack: str, today: date,
             warnings: list[str]) -> ClusterSettings:
    key = "cluster"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _CLUSTER_KEYS)
    if not isinstance(location, str) or not location.strip():
        problems.add("azure-native:location", "is not set; set the Azure region with "
                                              "`pulumi config set azure-native:location eastus2`")
        location = ""
    aad = problems.mapping(raw.get("aadProfile"), f"{key}.aadProfile")
    problems.unknown_keys(aad, f"{key}.aadProfile", ("managed", "enableAzureRBAC", "adminGroupObjectIDs"))
    aad_enabled = problems.get(aad, "managed", f"{key}.aadProfile", True, _bool_problem)
    admin_groups: list[str] = problems.get(
        aad, "adminGroupObjectIDs", f"{key}.aadProfile", [],
        lambda v: None if isinstance(v, list) and all(isinstance(g, str) for g in v) else "must be a list of group object IDs")
    disable_local = problems.get(raw, "disableLocalAccounts", key, True, _bool_problem)
    if disable_local and not aad_enabled:
        problems.add(f"{key}.disableLocalAccounts", "true needs aadProfile.managed: true; without Azure AD and "
                                                    "local accounts nobody could reach the API server")
    oidc = problems.mapping(raw.get("oidcIssuerProfile"), f"{key}.oidcIssuerProfile")
    problems.unknown_keys(oidc, f"{key}.oidcIssuerProfile", ("enabled",))
    oidc_enabled = problems.get(oidc, "enabled", f"{key}.oidcIssuerProfile", True, _bool_problem)
    workload_identity = problems.get(raw, "workloadIdentity", key, True, _bool_problem)
    if workload_identity and not oidc_enabled:
        problems.add(f"{key}.workloadIdentity", "true needs oidcIssuerProfile.enabled: true")
    default_name = sanitized_cluster_name(f"{PROJECT}-{stack}")
    name = problems.get(raw, "name", key, default_name, lambda v: None if isinstance(v, str) and CLUSTER_NAME_RE.fullmatch(v)
                        else "is not a cluster name AKS accepts: 1-63 letters, digits, '-' and '_', starting and ending "
                             "with a letter or digit")
    resource_group = problems.get(
        raw, "resourceGroupName", key, f"rg-{default_name}"[:90],
        lambda v: None if isinstance(v, str) and RESOURCE_GROUP_RE.fullmatch(v) else
        "is not a resource group name Azure accepts: 1-90 letters, digits, '-', '_', '.', '(' and ')', not ending "
        "with '.'")
    return ClusterSettings(
        name=name,
        resource_group_name=resource_group,
        location=location,
        kubernetes_version=_kubernetes_version(problems, raw, key, today, warnings),
        sku_tier=problems.get(raw, "skuTier", key, "Free", _one_of(SKU_TIERS)),
        upgrade_channel=problems.get(raw, "upgradeChannel", key, "patch", _one_of(UPGRADE_CHANNELS)),
        node_os_upgrade_channel=problems.get(raw, "nodeOSUpgradeChannel", key, "NodeImage",
                                             _one_of(NODE_OS_UPGRADE_CHANNELS)),
        aad_enabled=aad_enabled,
        azure_rbac=problems.get(aad, "enableAzureRBAC", f"{key}.aadProfile", True, _bool_problem),
        admin_group_object_ids=tuple(admin_groups),
        disable_local_accounts=disable_local,
        oidc_issuer=oidc_enabled,
        workload_identity=workload_identity,
        kubelogin_mode=problems.get(raw, "kubeloginMode", key, "azurecli", _one_of(KUBELOGIN_MODES)),
        autoscaler_profile=_autoscaler_profile(problems, raw, key),
        tags=problems.get(raw, "tags", key, {}, _string_map_problem),
        secret=key in problems.secret_keys,
    )


def _access(problems: _Problems, raw: Any, cluster: ClusterSettings) -> AccessSettings:
    key = "access"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _ACCESS_KEYS)
    grant = problems.get(raw, "grantDeployerClusterAdmin", key, True, _bool_problem)
    seconds = problems.get(raw, "rolePropagationSeconds", key, DEFAULT_ROLE_PROPAGATION_SECONDS,
                           lambda v: None if _is_int(v) and 0 <= v <= 1800 else "must be whole seconds from 0 to 1800",
                           int)
    granted = grant and cluster.aad_enabled and cluster.azure_rbac
    # Local accounts disabled without Azure AD is already a problem of its own (no knock-on error).
    if cluster.disable_local_accounts and cluster.aad_enabled and not cluster.admin_group_object_ids and not granted:
        why = ("is false" if not grant else "needs cluster.aadProfile.enableAzureRBAC: true to grant anything")
        problems.add(f"{key}.grantDeployerClusterAdmin",
                     f"{why}, cluster.disableLocalAccounts is true and cluster.aadProfile.adminGroupObjectIDs is empty: "
                     "nobody would have Kubernetes rights, so creating the namespace and the device plugin would fail "
                     "with Forbidden after the GPU pools already bill. Keep the grant (the default), list an admin "
                     "group, or set disableLocalAccounts: false")
    return AccessSettings(grant, seconds)


def _device_plugin(problems: _Problems, raw: Any, gpu_pools: Sequence[GpuNodePoolSettings]) -> DevicePluginSettings:
    key = "devicePlugin"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _DEVICE_PLUGIN_KEYS)
    enabled = problems.get(raw, "enabled", key, True, _bool_problem)
    eligible = [pool.name for pool in gpu_pools if pool.gpu_driver == "Install"]
    pools = problems.get(raw, "pools", key, eligible, _string_list_problem)
    by_name = {pool.name: pool for pool in gpu_pools}
    for index, name in enumerate(pools):
        pool = by_name.get(name)
        if pool is None:
            problems.add(f"{key}.pools[{index}]", f"{describe(name)} is not a GPU pool; GPU pools: "
                                                  f"{', '.join(by_name) or 'none'}")
        elif pool.gpu_driver == "None":
            # AKS's GPU docs: never run a second device plugin where another one is managed.
            problems.add(f"{key}.pools[{index}]", f"{describe(name)} has gpuProfile.driver: None, so its driver and device "
                                                  "plugin are managed elsewhere (e.g. the NVIDIA GPU Operator); running "
                                                  "this DaemonSet there too double-registers nvidia.com/gpu. Remove it "
                                                  "from devicePlugin.pools")
    served = [name for name in pools if name in by_name] if enabled else []
    mig_pools = [n for n in served if by_name[n].gpu_instance_profile]
    strategy = problems.get(raw, "migStrategy", key, "single" if mig_pools else "none", _one_of(MIG_STRATEGIES))
    if strategy == "none" and mig_pools:
        problems.add(f"{key}.migStrategy", f"'none' cannot serve MIG pools ({', '.join(mig_pools)}); use 'single' "
                                           "(pods ask for nvidia.com/gpu) or 'mixed' (pods ask for nvidia.com/mig-<profile>)")
    return DevicePluginSettings(
        enabled=enabled,
        image=problems.get(raw, "image", key, DEVICE_PLUGIN_IMAGE, _string_problem),
        namespace=problems.get(raw, "namespace", key, DEVICE_PLUGIN_NAMESPACE, _dns_label_problem),
        mig_strategy=strategy, pools=tuple(served),
    )


def _dns_label_problem(value: Any) -> str | None:
    ok = isinstance(value, str) and re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value) is not None
    return None if ok else ("is not a namespace name: 1-63 lowercase letters, digits and '-', "
                            "starting and ending with a letter or digit")


def _admission_policy(problems: _Problems, raw: Any, device_plugin: DevicePluginSettings) -> AdmissionPolicySettings:
    key = "admissionPolicy"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _ADMISSION_POLICY_KEYS)
    actions = problems.get(
        raw, "validationActions", key, ["Warn", "Audit"],
        lambda v: None if isinstance(v, list) and v and all(a in VALIDATION_ACTIONS for a in v) and len(set(v)) == len(v)
        and not {"Deny", "Warn"} <= set(v) else
        f"must be a non-empty list out of {', '.join(VALIDATION_ACTIONS)}, without both Deny and Warn (the API refuses "
        "that pair)")
    exempt = problems.get(raw, "exemptNamespaces", key, ["kube-system", device_plugin.namespace],
                          lambda v: _string_list_problem(v) or next(filter(None, map(_dns_label_problem, v)), None))
    return AdmissionPolicySettings(problems.get(raw, "enabled", key, True, _bool_problem), tuple(actions), tuple(exempt))


def _smoke_test(problems: _Problems, raw: Any, device_plugin: DevicePluginSettings) -> SmokeTestSettings:
    raw = problems.mapping(raw, "smokeTest")
    problems.unknown_keys(raw, "smokeTest", _SMOKE_TEST_KEYS)
    defaults = SmokeTestSettings()
    enabled = problems.get(raw, "enabled", "smokeTest", False, _bool_problem)
    if enabled and not device_plugin.pools:
        problems.add("smokeTest.enabled", "true, but no GPU pool is served by gpu-aks's device plugin "
                                          "(devicePlugin.enabled or devicePlugin.pools), so there is nothing to test")
    return SmokeTestSettings(enabled=enabled, image=problems.get(raw, "image", "smokeTest", defaults.image, _string_problem))


def _pool_list(problems: _Problems, raw: Any, key: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.add(key, f"expected a list of pools, got {problems.shown(key, raw)}")
        return []
    return raw


def parse_settings(raw: Mapping[str, Any], stack: str, location: Any = None, secret_keys: Collection[str] = (),
                   today: date | None = None) -> PlatformSettings:
    """Validate the raw stack config (the `gpu-aks:*` keys, already decoded) and
    `azure-native:location`. `secret_keys` are the project keys whose values are secret.

    Raises SettingsError listing every problem.
    """
    today = today or date.today()
    problems = _Problems(secret_keys)
    warnings: list[str] = []
    for name in raw:
        if name == "location":
            problems.add("location", "the Azure region is read from azure-native:location; write "
                                     "`azure-native:location: eastus2` in Pulumi.<stack>.yaml instead")
        elif name not in TOP_LEVEL_KEYS:
            close = difflib.get_close_matches(str(name), TOP_LEVEL_KEYS, n=1, cutoff=0.6)
            hint = f"did you mean '{PROJECT}:{close[0]}'? " if close else ""
            problems.add(str(name), f"unknown config key; {hint}gpu-aks takes {', '.join(TOP_LEVEL_KEYS)}")
    cluster = _cluster(problems, raw.get("cluster"), location, stack, today, warnings)
    access = _access(problems, raw.get("access"), cluster)
    system_pool = _system_pool(problems, raw.get("systemPool"))
    cpu_raw = _pool_list(problems, raw.get("cpuPools"), "cpuPools")
    gpu_raw = _pool_list(problems, raw.get("gpuPools"), "gpuPools")
    cpu_pools = [_cpu_pool(problems, pool, pool_key("cpuPools", index, pool)) for index, pool in enumerate(cpu_raw)]
    gpu_pools = [_gpu_pool(problems, pool, pool_key("gpuPools", index, pool)) for index, pool in enumerate(gpu_raw)]

    seen: dict[str, str] = {system_pool.name: "systemPool"}
    for list_key, pools in (("cpuPools", cpu_pools), ("gpuPools", gpu_pools)):
        for index, pool in enumerate(pools):
            # Two pools of one name: positions are the only unambiguous way to name them.
            key = f"{list_key}[{index}]"
            if pool.name in seen:
                problems.add(f"{key}.name", f"{describe(pool.name)} is already the name of {seen[pool.name]}; pool "
                                            "names must be unique")
            else:
                seen[pool.name] = key

    device_plugin = _device_plugin(problems, raw.get("devicePlugin"), gpu_pools)
    admission_policy = _admission_policy(problems, raw.get("admissionPolicy"), device_plugin)
    smoke_test = _smoke_test(problems, raw.get("smokeTest"), device_plugin)
    observability = parse_observability(raw.get("observability"), problems)
    if problems.items:
        raise SettingsError(problems.items)
    served = set(device_plugin.pools)
    gpu_pools = [
        replace(pool, device_plugin=pool.name in served, mig_strategy=device_plugin.mig_strategy)
        for pool in gpu_pools
    ]
    return PlatformSettings(stack, cluster, system_pool, tuple(cpu_pools), tuple(gpu_pools), device_plugin, smoke_test,
                            access, admission_policy, observability, tuple(warnings))
