"""Stack config -> validated, frozen settings. The only module that knows the config keys.

Keys follow the AKS API's names where one exists (`vmSize`, `minCount`, `maxCount`, `nodeTaints`,
`nodeLabels`, `gpuInstanceProfile`, `gpuProfile.driver`, `scaleSetPriority`, ...), so a reader who
knows AKS can read `Pulumi.<stack>.yaml` at a glance. Every problem is collected and reported at once,
each naming the key, the bad value and what is allowed; nothing is created until all are fixed.
No Pulumi imports: `components/stack_config.py` reads `pulumi.Config` and hands the raw values here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from components.catalog import (
    ACCELERATOR_LABEL,
    ACCELERATOR_LABEL_VALUE,
    DEFAULT_GPU_TAINT,
    DEVICE_PLUGIN_IMAGE,
    DEVICE_PLUGIN_NAMESPACE,
    GPU_MODEL_LABEL,
    GPU_PARTITION_LABEL,
    GPU_RESOURCE,
    MIG_INSTANCES_PER_GPU,
    MIG_RESOURCE_PREFIX,
    MIG_STRATEGIES,
    RESERVED_LABEL_PREFIXES,
    SPOT_TAINT,
    GpuSku,
    gpu_sku,
    is_gpu_vm_size,
    supported_vm_sizes,
    unsupported_gpu_sku,
)
from policies.scheduling import TaintSyntaxError, label_key_problem, label_value_problem, parse_taint

#: AKS allows at most 1000 nodes in one pool (and in one cluster with VM scale sets).
AKS_MAX_NODES_PER_POOL = 1000
#: Linux pool names: lowercase letters and digits, starting with a letter, at most 12 characters.
POOL_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,11}$")
KUBERNETES_VERSION_RE = re.compile(r"^1\.[0-9]{2}(\.[0-9]+)?$")

#: The Kubernetes minor version this project pins and validates its manifests against.
DEFAULT_KUBERNETES_VERSION = "1.34"
UPGRADE_CHANNELS = ("none", "patch", "stable", "rapid", "node-image")
NODE_OS_UPGRADE_CHANNELS = ("None", "Unmanaged", "NodeImage", "SecurityPatch")
SKU_TIERS = ("Free", "Standard", "Premium")
KUBELOGIN_MODES = ("azurecli", "spn", "msi", "workloadidentity")
SCALE_SET_PRIORITIES = ("Regular", "Spot")
GPU_DRIVERS = ("Install", "None")
OS_SKUS = ("Ubuntu", "AzureLinux", "AzureLinux3", "Ubuntu2204", "Ubuntu2404")
ZONES = ("1", "2", "3")

#: Cluster-autoscaler settings AKS accepts (`autoScalerProfile`, the API's kebab-case names).
AUTOSCALER_KEYS = (
    "balance-similar-node-groups", "daemonset-eviction-for-empty-nodes", "daemonset-eviction-for-occupied-nodes",
    "expander", "ignore-daemonsets-utilization", "max-empty-bulk-delete", "max-graceful-termination-sec",
    "max-node-provision-time", "max-total-unready-percentage", "new-pod-scale-up-delay", "ok-total-unready-count",
    "scale-down-delay-after-add", "scale-down-delay-after-delete", "scale-down-delay-after-failure",
    "scale-down-unneeded-time", "scale-down-unready-time", "scale-down-utilization-threshold", "scan-interval",
    "skip-nodes-with-local-storage", "skip-nodes-with-system-pods",
)
#: Idle GPU nodes are the most expensive thing in the cluster: give them back after 5 idle minutes
#: (AKS's default is 10) and prefer the pool that wastes the least when scaling up.
DEFAULT_AUTOSCALER_PROFILE: Mapping[str, str] = {
    "expander": "least-waste",
    "scale-down-unneeded-time": "5m",
    "scale-down-delay-after-add": "5m",
}

TOP_LEVEL_KEYS = ("cluster", "systemPool", "cpuPools", "gpuPools", "devicePlugin", "smokeTest")
_POOL_KEYS = ("name", "vmSize", "minCount", "maxCount", "nodeTaints", "nodeLabels", "availabilityZones",
              "osSKU", "maxSurge", "scaleSetPriority", "spotMaxPrice")
_GPU_POOL_KEYS = (*_POOL_KEYS, "gpuInstanceProfile", "gpuProfile")
_SYSTEM_POOL_KEYS = ("name", "vmSize", "minCount", "maxCount", "availabilityZones", "osSKU", "maxSurge",
                     "onlyCriticalAddonsEnabled")
_CLUSTER_KEYS = ("name", "resourceGroupName", "kubernetesVersion", "skuTier", "upgradeChannel",
                 "nodeOSUpgradeChannel", "aadProfile", "disableLocalAccounts", "oidcIssuerProfile",
                 "workloadIdentity", "kubeloginMode", "autoScalerProfile", "tags")
_DEVICE_PLUGIN_KEYS = ("enabled", "image", "namespace", "migStrategy", "pools")
_SMOKE_TEST_KEYS = ("enabled", "image")


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
    autoscaler_profile: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_AUTOSCALER_PROFILE))
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DevicePluginSettings:
    enabled: bool = True
    image: str = DEVICE_PLUGIN_IMAGE
    namespace: str = DEVICE_PLUGIN_NAMESPACE
    mig_strategy: str = "none"
    #: The GPU pools the DaemonSet serves (their names).
    pools: tuple[str, ...] = ()


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

    def served_gpu_pools(self) -> tuple[GpuNodePoolSettings, ...]:
        return tuple(pool for pool in self.gpu_pools if pool.device_plugin)


# --- Reading raw config ------------------------------------------------------------------------

T = TypeVar("T")
_MISSING = object()


class _Problems:
    """Collects problems; each reader returns a usable fallback so parsing goes on to find the rest."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        # Keys are named as they appear in Pulumi.<stack>.yaml: `gpu-aks:gpuPools[0].minCount`.
        self.items.append(f"{key if ':' in key else 'gpu-aks:' + key}: {message}")

    def mapping(self, raw: Any, key: str) -> Mapping[str, Any]:
        if raw is None or raw is _MISSING:
            return {}
        if not isinstance(raw, Mapping):
            self.add(key, f"expected an object, got {raw!r}")
            return {}
        return raw

    def unknown_keys(self, raw: Mapping[str, Any], key: str, allowed: Sequence[str]) -> None:
        for name in raw:
            if name not in allowed:
                self.add(f"{key}.{name}", f"unknown setting; allowed: {', '.join(allowed)}")

    def get(self, raw: Mapping[str, Any], name: str, key: str, default: T,
            check: Callable[[Any], str | None], convert: Callable[[Any], T] = lambda v: v) -> T:
        value = raw.get(name, _MISSING)
        if value is _MISSING or value is None:
            return default
        problem = check(value)
        if problem:
            self.add(f"{key}.{name}", f"{value!r} {problem}")
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
    return lambda value: None if value in allowed else f"is not allowed; allowed: {', '.join(allowed)}"


def _bool_problem(value: Any) -> str | None:
    return None if isinstance(value, bool) else "is not true or false"


def _string_problem(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "is not a non-empty string"


def _zones_problem(value: Any) -> str | None:
    ok = isinstance(value, list) and all(str(zone) in ZONES for zone in value)
    return None if ok else f"must be a list of zones out of {', '.join(ZONES)}"


def _surge_problem(value: Any) -> str | None:
    return None if isinstance(value, (str, int)) and re.match(r"^[1-9][0-9]*%?$", str(value)) else \
        "must be a node count (e.g. 1) or a percentage (e.g. 33%)"


def _string_map_problem(value: Any) -> str | None:
    ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return None if ok else "must be a map of strings to strings"


def _zones(problems: _Problems, raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    zones: list[Any] = problems.get(raw, "availabilityZones", key, [], _zones_problem)
    return tuple(str(zone) for zone in zones)


def _pool_name(problems: _Problems, raw: Mapping[str, Any], key: str, default: str | None) -> str:
    name = raw.get("name", default)
    if not isinstance(name, str) or not POOL_NAME_RE.match(name):
        problems.add(f"{key}.name", f"{name!r} is not a name AKS accepts for a Linux pool: 1-12 lowercase "
                                    "letters and digits, starting with a letter (e.g. 'gput4')")
        return name if isinstance(name, str) else f"<{key}>"
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
    if min_count > max_count:
        problems.add(f"{key}.minCount", f"{min_count} is above maxCount {max_count}; the autoscaler needs "
                                        "minCount <= maxCount")
    return min_count, max_count


def _taints(problems: _Problems, raw: Mapping[str, Any], key: str, default: Sequence[str]) -> tuple[str, ...]:
    value = raw.get("nodeTaints", _MISSING)
    if value is _MISSING or value is None:
        return tuple(default)
    if not isinstance(value, list):
        problems.add(f"{key}.nodeTaints", f"{value!r} is not a list of taints like 'sku=gpu:NoSchedule'")
        return tuple(default)
    taints = []
    for index, text in enumerate(value):
        try:
            parse_taint(text)
            taints.append(text)
        except TaintSyntaxError as error:
            problems.add(f"{key}.nodeTaints[{index}]", str(error))
    return tuple(taints)


def _labels(problems: _Problems, raw: Mapping[str, Any], key: str) -> dict[str, str]:
    value = raw.get("nodeLabels", _MISSING)
    if value is _MISSING or value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.add(f"{key}.nodeLabels", f"{value!r} is not a map of label keys to values")
        return {}
    labels = {}
    for label, label_value in value.items():
        where = f"{key}.nodeLabels.{label}"
        if not isinstance(label_value, str):
            problems.add(where, f"{label_value!r} is not a string; quote it in YAML (e.g. \"true\")")
            continue
        key_problem = label_key_problem(label)
        if key_problem:
            problems.add(where, f"label key {label!r} {key_problem}")
            continue
        if label.startswith(RESERVED_LABEL_PREFIXES):
            problems.add(where, f"label key {label!r} uses a prefix AKS reserves "
                                f"({', '.join(RESERVED_LABEL_PREFIXES)}); pick another prefix")
            continue
        value_problem = label_value_problem(label_value)
        if value_problem:
            problems.add(where, f"label value {label_value!r} {value_problem}")
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
    }


def _with_spot_taint(taints: tuple[str, ...], spot: bool) -> tuple[str, ...]:
    # AKS adds this taint to every Spot node; declaring it keeps the AgentPool from drifting.
    return (*taints, SPOT_TAINT) if spot and SPOT_TAINT not in taints else taints


def _cpu_pool(problems: _Problems, raw: Any, key: str) -> NodePoolSettings:
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _POOL_KEYS)
    name = _pool_name(problems, raw, key, None)
    vm_size = problems.get(raw, "vmSize", key, "Standard_D8ds_v5", _string_problem)
    if is_gpu_vm_size(vm_size):
        problems.add(f"{key}.vmSize", f"{vm_size!r} is a GPU size; declare GPU pools under gpuPools so they "
                                      "get the GPU taint, labels and the device plugin")
    min_count, max_count = _counts(problems, raw, key, 0, 3)
    common = _pool_common(problems, raw, key)
    taints = _with_spot_taint(_taints(problems, raw, key, ()), common["spot"])
    return NodePoolSettings(name, vm_size, min_count, max_count, taints, _labels(problems, raw, key), **common)


def _gpu_vm_size(problems: _Problems, raw: Mapping[str, Any], key: str) -> GpuSku | None:
    vm_size = raw.get("vmSize")
    if not isinstance(vm_size, str) or not vm_size:
        problems.add(f"{key}.vmSize", f"{vm_size!r}: a GPU pool needs a vmSize, e.g. Standard_NC4as_T4_v3")
        return None
    unsupported = unsupported_gpu_sku(vm_size)
    if unsupported:
        problems.add(f"{key}.vmSize", f"{vm_size!r}: {unsupported.reason}; use {unsupported.replacement}")
        return None
    sku = gpu_sku(vm_size)
    if sku is None:
        problems.add(f"{key}.vmSize", f"{vm_size!r} is not an NVIDIA GPU size gpu-aks knows; supported: "
                                      f"{', '.join(supported_vm_sizes())}")
    return sku


def _gpu_pool(problems: _Problems, raw: Any, key: str) -> GpuNodePoolSettings:
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _GPU_POOL_KEYS)
    name = _pool_name(problems, raw, key, None)
    sku = _gpu_vm_size(problems, raw, key)
    # GPU pools default to minCount 0: idle GPUs cost nothing.
    min_count, max_count = _counts(problems, raw, key, 0, 2)
    common = _pool_common(problems, raw, key)

    profile = problems.get(raw, "gpuInstanceProfile", key, None, _one_of(tuple(MIG_INSTANCES_PER_GPU)))
    if profile and sku is not None and not sku.supports_mig:
        problems.add(f"{key}.gpuInstanceProfile", f"{profile!r} needs a MIG-capable GPU, but {sku.vm_size} has "
                                                  f"{sku.model}; MIG works on A100, H100 and H200 sizes")
        profile = None
    gpu_profile = problems.mapping(raw.get("gpuProfile"), f"{key}.gpuProfile")
    problems.unknown_keys(gpu_profile, f"{key}.gpuProfile", ("driver",))
    driver = problems.get(gpu_profile, "driver", f"{key}.gpuProfile", "Install", _one_of(GPU_DRIVERS))

    taints = _taints(problems, raw, key, (DEFAULT_GPU_TAINT,))
    all_parsed = isinstance(raw.get("nodeTaints"), list) and len(taints) == len(raw["nodeTaints"])
    if all_parsed and not any(parse_taint(t)["effect"] == "NoSchedule" for t in taints):
        problems.add(f"{key}.nodeTaints", f"{list(taints)!r} has no NoSchedule taint; a GPU pool needs one so "
                                          f"only GPU pods land on it (the default is {DEFAULT_GPU_TAINT!r})")
    taints = _with_spot_taint(taints, common["spot"])

    labels = _labels(problems, raw, key)
    derived = {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE}
    if sku is not None:
        derived[GPU_MODEL_LABEL] = sku.accelerator
        if profile:
            derived[GPU_PARTITION_LABEL] = sku.mig_partition(profile)
    for label, value in derived.items():
        if label in labels and labels[label] != value:
            problems.add(f"{key}.nodeLabels.{label}", f"{labels[label]!r} conflicts with the value gpu-aks sets "
                                                      f"({value!r}); remove it")
    return GpuNodePoolSettings(
        name, sku.vm_size if sku else str(raw.get("vmSize")), min_count, max_count, taints,
        {**labels, **derived}, **common, sku=sku, gpu_instance_profile=profile, gpu_driver=driver,
    )


def _system_pool(problems: _Problems, raw: Any) -> SystemPoolSettings:
    key = "systemPool"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _SYSTEM_POOL_KEYS)
    defaults = SystemPoolSettings()
    vm_size = problems.get(raw, "vmSize", key, defaults.vm_size, _string_problem)
    if is_gpu_vm_size(vm_size):
        problems.add(f"{key}.vmSize", f"{vm_size!r} is a GPU size; the system pool runs CPU add-ons, use a D-series size")
    min_count, max_count = _counts(problems, raw, key, defaults.min_count, defaults.max_count, floor=1)
    return SystemPoolSettings(
        name=_pool_name(problems, raw, key, defaults.name), vm_size=vm_size, min_count=min_count,
        max_count=max_count,
        availability_zones=_zones(problems, raw, key),
        os_sku=problems.get(raw, "osSKU", key, defaults.os_sku, _one_of(OS_SKUS)),
        max_surge=str(problems.get(raw, "maxSurge", key, defaults.max_surge, _surge_problem)),
        only_critical_addons=problems.get(raw, "onlyCriticalAddonsEnabled", key, True, _bool_problem),
    )


def _cluster(problems: _Problems, raw: Any, location: Any, stack: str) -> ClusterSettings:
    key = "cluster"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _CLUSTER_KEYS)
    if not isinstance(location, str) or not location:
        problems.add("azure-native:location", f"{location!r}: set the Azure region, e.g. "
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
    autoscaler: dict[str, str] = problems.get(raw, "autoScalerProfile", key, {}, _string_map_problem)
    for name in autoscaler:
        if name not in AUTOSCALER_KEYS:
            problems.add(f"{key}.autoScalerProfile.{name}", f"unknown autoscaler setting; allowed: {', '.join(AUTOSCALER_KEYS)}")
    oidc = problems.mapping(raw.get("oidcIssuerProfile"), f"{key}.oidcIssuerProfile")
    problems.unknown_keys(oidc, f"{key}.oidcIssuerProfile", ("enabled",))
    oidc_enabled = problems.get(oidc, "enabled", f"{key}.oidcIssuerProfile", True, _bool_problem)
    workload_identity = problems.get(raw, "workloadIdentity", key, True, _bool_problem)
    if workload_identity and not oidc_enabled:
        problems.add(f"{key}.workloadIdentity", "true needs oidcIssuerProfile.enabled: true")
    return ClusterSettings(
        name=problems.get(raw, "name", key, f"gpu-aks-{stack}", _string_problem),
        resource_group_name=problems.get(raw, "resourceGroupName", key, f"rg-gpu-aks-{stack}", _string_problem),
        location=location,
        kubernetes_version=problems.get(
            raw, "kubernetesVersion", key, DEFAULT_KUBERNETES_VERSION,
            lambda v: None if isinstance(v, str) and KUBERNETES_VERSION_RE.match(v)
            else "is not a Kubernetes version like \"1.34\" or \"1.34.1\" (quote it in YAML)"),
        sku_tier=problems.get(raw, "skuTier", key, "Free", _one_of(SKU_TIERS)),
        upgrade_channel=problems.get(raw, "upgradeChannel", key, "patch", _one_of(UPGRADE_CHANNELS)),
        node_os_upgrade_channel=problems.get(raw, "nodeOSUpgradeChannel", key, "NodeImage", _one_of(NODE_OS_UPGRADE_CHANNELS)),
        aad_enabled=aad_enabled,
        azure_rbac=problems.get(aad, "enableAzureRBAC", f"{key}.aadProfile", True, _bool_problem),
        admin_group_object_ids=tuple(admin_groups),
        disable_local_accounts=disable_local,
        oidc_issuer=oidc_enabled,
        workload_identity=workload_identity,
        kubelogin_mode=problems.get(raw, "kubeloginMode", key, "azurecli", _one_of(KUBELOGIN_MODES)),
        autoscaler_profile={**DEFAULT_AUTOSCALER_PROFILE, **autoscaler},
        tags=problems.get(raw, "tags", key, {}, _string_map_problem),
    )


def _device_plugin(problems: _Problems, raw: Any, gpu_pools: Sequence[GpuNodePoolSettings]) -> DevicePluginSettings:
    key = "devicePlugin"
    raw = problems.mapping(raw, key)
    problems.unknown_keys(raw, key, _DEVICE_PLUGIN_KEYS)
    enabled = problems.get(raw, "enabled", key, True, _bool_problem)
    eligible = [pool.name for pool in gpu_pools if pool.gpu_driver == "Install"]
    pools = problems.get(
        raw, "pools", key, eligible,
        lambda v: None if isinstance(v, list) and all(isinstance(p, str) for p in v) else "must be a list of GPU pool names")
    by_name = {pool.name: pool for pool in gpu_pools}
    for index, name in enumerate(pools):
        pool = by_name.get(name)
        if pool is None:
            problems.add(f"{key}.pools[{index}]", f"{name!r} is not a GPU pool; GPU pools: {', '.join(by_name) or 'none'}")
        elif pool.gpu_driver == "None":
            # Seed 001's warning: never run a second device plugin where another one is managed.
            problems.add(f"{key}.pools[{index}]", f"{name!r} has gpuProfile.driver: None, so its driver and device "
                                                  "plugin are managed elsewhere (e.g. the NVIDIA GPU Operator); running "
                                                  "this DaemonSet there too double-registers nvidia.com/gpu. Remove it "
                                                  "from devicePlugin.pools")
    served = [name for name in pools if name in by_name] if enabled else []
    uses_mig = any(by_name[name].gpu_instance_profile for name in served)
    strategy = problems.get(raw, "migStrategy", key, "single" if uses_mig else "none", _one_of(MIG_STRATEGIES))
    if strategy == "none" and uses_mig:
        problems.add(f"{key}.migStrategy", "'none' cannot serve MIG pools "
                                           f"({', '.join(n for n in served if by_name[n].gpu_instance_profile)}); "
                                           "use 'single' (pods ask for nvidia.com/gpu) or 'mixed' "
                                           "(pods ask for nvidia.com/mig-<profile>)")
    return DevicePluginSettings(
        enabled=enabled,
        image=problems.get(raw, "image", key, DEVICE_PLUGIN_IMAGE, _string_problem),
        namespace=problems.get(raw, "namespace", key, DEVICE_PLUGIN_NAMESPACE, _string_problem),
        mig_strategy=strategy, pools=tuple(served),
    )


def _smoke_test(problems: _Problems, raw: Any) -> SmokeTestSettings:
    raw = problems.mapping(raw, "smokeTest")
    problems.unknown_keys(raw, "smokeTest", _SMOKE_TEST_KEYS)
    defaults = SmokeTestSettings()
    return SmokeTestSettings(
        enabled=problems.get(raw, "enabled", "smokeTest", False, _bool_problem),
        image=problems.get(raw, "image", "smokeTest", defaults.image, _string_problem),
    )


def _pool_list(problems: _Problems, raw: Any, key: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.add(key, f"expected a list of pools, got {raw!r}")
        return []
    return raw


def parse_settings(raw: Mapping[str, Any], stack: str) -> PlatformSettings:
    """Validate the raw stack config (`location` plus the `gpu-aks:*` keys, already JSON-decoded).

    Raises SettingsError listing every problem.
    """
    problems = _Problems()
    for name in raw:
        if name not in (*TOP_LEVEL_KEYS, "location"):
            problems.add(name, f"unknown config key; gpu-aks takes {', '.join(TOP_LEVEL_KEYS)}")
    cluster = _cluster(problems, raw.get("cluster"), raw.get("location"), stack)
    system_pool = _system_pool(problems, raw.get("systemPool"))
    cpu_raw = _pool_list(problems, raw.get("cpuPools"), "cpuPools")
    gpu_raw = _pool_list(problems, raw.get("gpuPools"), "gpuPools")
    cpu_pools = [_cpu_pool(problems, pool, f"cpuPools[{index}]") for index, pool in enumerate(cpu_raw)]
    gpu_pools = [_gpu_pool(problems, pool, f"gpuPools[{index}]") for index, pool in enumerate(gpu_raw)]

    seen: dict[str, str] = {system_pool.name: "systemPool"}
    for index, pool in enumerate(cpu_pools):
        _unique(problems, seen, pool.name, f"cpuPools[{index}]")
    for index, pool in enumerate(gpu_pools):
        _unique(problems, seen, pool.name, f"gpuPools[{index}]")

    device_plugin = _device_plugin(problems, raw.get("devicePlugin"), gpu_pools)
    smoke_test = _smoke_test(problems, raw.get("smokeTest"))
    if problems.items:
        raise SettingsError(problems.items)
    served = set(device_plugin.pools)
    gpu_pools = [
        replace(pool, device_plugin=pool.name in served, mig_strategy=device_plugin.mig_strategy)
        for pool in gpu_pools
    ]
    return PlatformSettings(stack, cluster, system_pool, tuple(cpu_pools), tuple(gpu_pools), device_plugin, smoke_test)


def _unique(problems: _Problems, seen: dict[str, str], name: str, key: str) -> None:
    if name in seen:
        problems.add(f"{key}.name", f"{name!r} is already the name of {seen[name]}; pool names must be unique")
    else:
        seen[name] = key
