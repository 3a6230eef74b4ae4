"""`gpu-aks:systemPool`, `gpu-aks:cpuPools` and `gpu-aks:gpuPools`: the node pools."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_aks_policies.catalog import (
    ACCELERATOR_LABEL,
    ACCELERATOR_LABEL_VALUE,
    DEFAULT_GPU_TAINT,
    GPU_MODEL_LABEL,
    GPU_PARTITION_LABEL,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    MIN_SHARING_REPLICAS,
    MPS_MAX_REPLICAS,
    POOL_LABEL,
    RESERVED_LABEL_PREFIXES,
    SHARING_STRATEGIES,
    SPOT_TAINT,
    TIME_SLICING_MAX_REPLICAS,
    GpuSku,
    SharingStrategy,
    gpu_sku,
    is_gpu_vm_size,
    sharing_max_replicas,
    supported_vm_sizes,
    unsupported_gpu_sku,
)
from gpu_aks_policies.declarations import (
    MISSING,
    Check,
    Key,
    ListOf,
    Reader,
    Section,
    boolean,
    choice,
    describe,
    is_whole_number,
    text,
)
from gpu_aks_policies.scheduling import TaintSyntaxError, label_key_problem, label_value_problem, parse_taint

from components.aks_api import API_VERSION, GPU_DRIVERS, GPU_INSTANCE_PROFILES, OS_SKUS, POOL_NAME_RE, SCALE_SET_PRIORITIES
from components.azure_catalog import did_you_mean
from components.settings.common import count_key, surge_key, zones_key
from components.settings.device_plugin import DevicePluginSettings
from components.settings.node_baseline import (
    NODE_BASELINE_KEYS,
    NodeBaseline,
    node_baseline,
    node_baseline_items,
    placed_in_system_subnet,
)
from components.settings.production import (
    CPU_POOL_UPGRADE,
    CPU_SIZE_CHECK,
    GPU_POOL_UPGRADE,
    OS_SKU_CHECK,
    SPOT_UPGRADE_CHECK,
    PoolUpgradeSettings,
    upgrade_keys,
)

#: A pool's Azure name is its config name plus 4 hex characters of a hash of its create-only
#: properties (the Azure Verified Module's pattern): a config name of at most 8 then fits AKS's 12.
SUFFIXED_NAME_LENGTH = 8
#: AgentPool properties Azure fixes at creation that have no config key of their own (gpu-aks sets
#: `scaleSetEvictionPolicy` from `scaleSetPriority`).
_CREATE_ONLY_WITHOUT_KEY = ("scaleSetEvictionPolicy",)
_POOL = f"AgentPool (API {API_VERSION})"


# --- Settings objects --------------------------------------------------------------------------


def create_only_identity(vm_size: str, os_sku: str, availability_zones: Sequence[str], spot: bool,
                         spot_max_price: float, **gpu: Any) -> dict[str, Any]:
    """The create-only properties as they are hashed into a pool's Azure name. This exact form is
    part of every deployed pool's name: changing it would replace every pool."""
    return {"vmSize": vm_size.lower(), "osSKU": os_sku, "availabilityZones": sorted(availability_zones),
            "spot": spot, "spotMaxPrice": spot_max_price if spot else None, **gpu}


def suffixed_name(name: str, identity: Mapping[str, Any], keep_azure_name: bool) -> str:
    if keep_azure_name:
        return name
    return name + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:4]


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
    #: `upgradeSettings` beyond maxSurge (None: AKS's default); Spot pools send none of them.
    max_unavailable: str | None = None
    drain_timeout_minutes: int | None = None
    node_soak_minutes: int | None = None
    undrainable_node_behavior: str | None = None
    #: Subnets, OS disk, pod density and host encryption (components/settings/node_baseline.py).
    baseline: NodeBaseline = NodeBaseline()

    def upgrade_settings(self) -> PoolUpgradeSettings | None:
        """What the pool sends as `upgradeSettings`; None on Spot pools, where AKS uses none."""
        if self.spot:
            return None
        return PoolUpgradeSettings(self.max_surge, self.max_unavailable, self.drain_timeout_minutes,
                                   self.node_soak_minutes, self.undrainable_node_behavior)

    def create_only(self) -> dict[str, Any]:
        """The properties Azure fixes at creation; any change to them needs a new pool."""
        return create_only_identity(self.vm_size, self.os_sku, self.availability_zones, self.spot, self.spot_max_price,
                                    **self.baseline.create_only())


@dataclass(frozen=True)
class SharingSettings:
    """How NVIDIA's device plugin shares each GPU (or MIG instance) of a pool: it advertises every
    device `replicas` times, each replica one pod's share."""

    strategy: SharingStrategy
    replicas: int


@dataclass(frozen=True)
class GpuNodePoolSettings(NodePoolSettings):
    sku: GpuSku | None = None
    gpu_instance_profile: str | None = None
    gpu_driver: str = "Install"
    #: Time-slicing or MPS (`gpuPools[].sharing`); None: each pod gets whole devices.
    sharing: SharingSettings | None = None
    #: gpu-aks's device-plugin settings; whether they serve this pool is `devicePlugin.pools`, stored
    #: there only.
    plugin: DevicePluginSettings | None = None

    @property
    def device_plugin(self) -> bool:
        """Whether gpu-aks's own device-plugin DaemonSet serves this pool."""
        return self.plugin is not None and self.name in self.plugin.pools

    @property
    def mig_strategy(self) -> str:
        return self.plugin.mig_strategy if self.plugin is not None else "none"

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
    def advertised_per_node(self) -> int:
        """How many of `gpu_resource` one node advertises: its GPUs (or MIG instances), times the
        replicas when they are shared (NVIDIA `internal/rm/device_map.go`, `updateDeviceMapWithReplicas`)."""
        return self.gpus_per_node * (self.sharing.replicas if self.sharing else 1)

    @property
    def gpu_resource(self) -> str:
        """The extended resource a pod asks for to get one GPU (or MIG instance) of this pool."""
        if self.mig_partition and self.mig_strategy == "mixed":
            return MIG_RESOURCE_PREFIX + self.mig_partition
        return GPU_RESOURCE

    def create_only(self) -> dict[str, Any]:
        return {**super().create_only(), "gpuInstanceProfile": self.gpu_instance_profile, "gpuDriver": self.gpu_driver}


def azure_pool_name(pool: NodePoolSettings) -> str:
    return suffixed_name(pool.name, pool.create_only(), pool.keep_azure_name)


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
    #: Subnets, OS disk, pod density and host encryption (components/settings/node_baseline.py).
    baseline: NodeBaseline = NodeBaseline()


# --- Readers for structured keys ---------------------------------------------------------------


def pool_key(list_key: str, index: int, raw: Any) -> str:
    """How a pool is named in messages: by its name when it has a usable one, else by position."""
    name = raw.get("name") if isinstance(raw, Mapping) else None
    return f"{list_key}[{name}]" if isinstance(name, str) and POOL_NAME_RE.fullmatch(name) else f"{list_key}[{index}]"


def _pool_name(default: str | None, suffixed: bool) -> Any:
    def parse(reader: Reader, value: Any) -> str:
        name = default if value is MISSING else value
        # The system pool is inline in the cluster and never replaced, so its name has no suffix.
        max_length = SUFFIXED_NAME_LENGTH if suffixed and reader.raw.get("keepAzureName") is not True else 12
        if not isinstance(name, str) or not POOL_NAME_RE.fullmatch(name):
            reader.problem("name", f"{reader.shown(name)} is not a name AKS accepts for a Linux pool: 1-12 lowercase "
                                   "letters and digits, starting with a letter (e.g. 'gput4')")
            return name if isinstance(name, str) else f"<{reader.key}>"
        if len(name) > max_length:
            reader.problem("name", f"{reader.shown(name)} is longer than {max_length} characters: gpu-aks adds 4 hex "
                                   "characters to a pool's Azure name (so a replacement can be created before the old "
                                   "pool is deleted) and AKS allows 12; shorten it, or set keepAzureName: true")
        return name
    return parse


def _gpu_vm_size(reader: Reader, value: Any) -> str:
    value = None if value is MISSING else value
    if not isinstance(value, str) or not value:
        reader.problem("vmSize", f"{'missing' if value is None else reader.shown(value)}: a GPU pool needs a vmSize, "
                                 "e.g. Standard_NC4as_T4_v3")
        return str(value)
    unsupported = unsupported_gpu_sku(value)
    if unsupported:
        reader.problem("vmSize", f"{describe(value)}: {unsupported.reason}; use {unsupported.replacement}")
        return value
    sku = gpu_sku(value)
    if sku is None:
        close = did_you_mean(value, supported_vm_sizes())
        hint = f"did you mean {close}? " if close else ""
        reader.problem("vmSize", f"{describe(value)} is not an NVIDIA GPU size gpu-aks knows; {hint}supported: "
                                 f"{', '.join(supported_vm_sizes())}")
        return value
    return sku.vm_size


def _taints(default: Sequence[str]) -> Any:
    def parse(reader: Reader, value: Any) -> tuple[str, ...] | None:
        """The pool's taints; None when some could not be parsed (so no knock-on check runs)."""
        if value is MISSING or value is None:
            return tuple(default)
        if not isinstance(value, list):
            reader.problem("nodeTaints", f"{reader.shown(value)} is not a list of taints like 'sku=gpu:NoSchedule'")
            return None
        taints, ok = [], True
        for index, taint in enumerate(value):
            try:
                parse_taint(taint)
                taints.append(taint)
            except TaintSyntaxError as error:
                reader.problem(f"nodeTaints[{index}]", "[secret] is not a valid taint"
                               if reader.shown(taint) == "[secret]" else str(error))
                ok = False
        return tuple(taints) if ok else None
    return parse


def _labels(reader: Reader, value: Any) -> dict[str, str]:
    if value is MISSING or value is None:
        return {}
    if not isinstance(value, Mapping):
        reader.problem("nodeLabels", f"{reader.shown(value)} is not a map of label keys to values")
        return {}
    labels = {}
    for label, label_value in value.items():
        where = f"nodeLabels.{label}"
        if not isinstance(label, str):
            reader.problem("nodeLabels", f"has a key that is not a string ({reader.shown(label)})")
            continue
        if not isinstance(label_value, str):
            reader.problem(where, f"{reader.shown(label_value)} is not a string; quote it in YAML (e.g. \"true\")")
            continue
        key_problem = label_key_problem(label)
        if key_problem:
            reader.problem(where, f"label key {describe(label)} {key_problem}")
            continue
        if label.startswith(RESERVED_LABEL_PREFIXES) or label == POOL_LABEL:
            reader.problem(where, f"label key {describe(label)} is reserved (AKS: {', '.join(RESERVED_LABEL_PREFIXES)}; "
                                  f"gpu-aks sets {POOL_LABEL}); pick another key")
            continue
        value_problem = label_value_problem(label_value)
        if value_problem:
            reader.problem(where, f"label value {reader.shown(label_value)} {value_problem}")
            continue
        labels[label] = label_value
    return labels


def _replicas_problem(value: Any) -> str | None:
    if not is_whole_number(value):
        return "is not a whole number of replicas"
    if value < MIN_SHARING_REPLICAS:
        return (f"is below {MIN_SHARING_REPLICAS}: NVIDIA's device plugin refuses fewer replicas (\"number of replicas "
                "must be >= 2\"); to give pods whole GPUs, remove sharing")
    if value > TIME_SLICING_MAX_REPLICAS:
        return (f"is above {TIME_SLICING_MAX_REPLICAS}: no AKS node runs more pods than that, so the extra replicas "
                "could never be used")
    return None


# --- Checks across keys ------------------------------------------------------------------------


def _sharing_is_complete(reader: Reader) -> None:
    strategy, replicas = reader.get("strategy"), reader.get("replicas")
    if strategy is None and replicas is not None:
        reader.problem("strategy", f"is missing; with replicas set, say how to share: {', '.join(SHARING_STRATEGIES)}")
    elif strategy is not None and replicas is None:
        reader.problem("replicas", f"is missing; how many pods share one GPU ({MIN_SHARING_REPLICAS} or more), e.g. "
                                   "replicas: 4")
    elif strategy is not None and replicas > sharing_max_replicas(strategy):
        reader.reject("replicas", f"{replicas} is above {MPS_MAX_REPLICAS} for mps: NVIDIA's MPS control daemon serves "
                                  f"at most {MPS_MAX_REPLICAS} clients per GPU and refuses more (\"maximum allowed "
                                  "replicas exceeded\"); lower replicas or use timeSlicing")


def _sharing_fits_the_pool(reader: Reader) -> None:
    if reader.get("sharing.strategy") == "mps" and reader.get("gpuInstanceProfile"):
        reader.children["sharing"].problem(
            "strategy", f"'mps' cannot share the MIG instances of gpuInstanceProfile "
                        f"{describe(reader.get('gpuInstanceProfile'))}: NVIDIA's device plugin refuses it (\"sharing "
                        "using MPS is not supported for MIG devices\"); use strategy: timeSlicing, or drop the sharing "
                        "(MIG already splits each GPU)")


def _shares_fit_max_pods(reader: Reader) -> None:
    replicas, max_pods, sku = reader.get("sharing.replicas"), reader.get("maxPods"), gpu_sku(reader.get("vmSize"))
    if replicas is None or max_pods is None or sku is None:
        return
    shares = sku.gpus_per_node(reader.get("gpuInstanceProfile")) * replicas
    if shares > max_pods:
        reader.warn("sharing.replicas", f"a node advertises {shares} shares ({replicas} per GPU), but maxPods is "
                                        f"{max_pods}: at most {max_pods} pods, its DaemonSets included, run on it, so "
                                        "the rest can never be used; lower replicas or raise maxPods")


# --- Checks across keys (pools) ----------------------------------------------------------------


def _counts_in_order(floor: int) -> Check:
    def run(reader: Reader) -> None:
        min_count, max_count = reader.get("minCount"), reader.get("maxCount")
        if min_count < floor:
            reader.problem("minCount", f"{min_count} is below {floor}; a system pool needs at least one node")
        elif min_count > max_count:
            reader.problem("minCount", f"{min_count} is above maxCount {max_count}; the autoscaler needs "
                                       "minCount <= maxCount")
    return Check(run, reads=("minCount", "maxCount"),
                 doc="`minCount` <= `maxCount`" + (f"; `minCount` >= {floor}" if floor else "") + ".")


def _not_a_gpu_size(advice: str) -> Check:
    def run(reader: Reader) -> None:
        vm_size = reader.get("vmSize")
        if is_gpu_vm_size(vm_size):
            reader.problem("vmSize", f"{describe(vm_size)} is a GPU size; {advice}")
    return Check(run, reads=("vmSize",), doc="`vmSize` is not a GPU size.")


def _spot_price_needs_spot(reader: Reader) -> None:
    if "spotMaxPrice" in reader.raw and not reader.get("scaleSetPriority"):
        reader.problem("spotMaxPrice", "is only valid with scaleSetPriority: Spot")


def _mig_needs_a_mig_gpu(reader: Reader) -> None:
    profile, sku = reader.get("gpuInstanceProfile"), gpu_sku(reader.get("vmSize"))
    if profile and sku is not None and not sku.supports_mig:
        reader.reject("gpuInstanceProfile", f"{describe(profile)} needs a MIG-capable GPU, but {sku.vm_size} has "
                                            f"{sku.model}; MIG works on A100, H100 and H200 sizes")


def _needs_a_no_schedule_taint(reader: Reader) -> None:
    taints = reader.get("nodeTaints")
    if taints is not None and not any(parse_taint(t)["effect"] == "NoSchedule" for t in taints):
        reader.problem("nodeTaints", f"{describe(list(taints))} has no NoSchedule taint; a GPU pool needs one so "
                                     f"only GPU pods land on it (the default is {describe(DEFAULT_GPU_TAINT)})")


def _derived_gpu_labels(reader: Reader) -> dict[str, str]:
    """The labels gpu-aks sets on a GPU pool's nodes."""
    derived = {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: reader.get("name")}
    sku = gpu_sku(reader.get("vmSize")) if reader.ok("vmSize") else None
    profile = reader.get("gpuInstanceProfile")
    if sku is not None:
        derived[GPU_MODEL_LABEL] = sku.accelerator
        if profile:
            derived[GPU_PARTITION_LABEL] = sku.mig_partition(profile)
    return derived


def _labels_agree_with_derived(reader: Reader) -> None:
    labels = reader.get("nodeLabels")
    for label, value in _derived_gpu_labels(reader).items():
        if label in labels and labels[label] != value:
            reader.problem(f"nodeLabels.{label}", f"{describe(labels[label])} conflicts with the value gpu-aks sets "
                                                  f"({describe(value)}); remove it")


# --- Builders ----------------------------------------------------------------------------------


def _with_spot_taint(taints: tuple[str, ...], spot: bool) -> tuple[str, ...]:
    # AKS adds this taint to every Spot node; declaring it keeps the AgentPool from drifting.
    return (*taints, SPOT_TAINT) if spot and SPOT_TAINT not in taints else taints


def _pool_baseline(reader: Reader) -> NodeBaseline:
    """The pool's baseline; without a subnet of its own it joins the system pool's, as AKS places it."""
    return placed_in_system_subnet(node_baseline(reader), node_baseline(reader.root.children["systemPool"]))


def _pool_fields(reader: Reader) -> dict[str, Any]:
    attrs = reader.section.attrs(reader)
    attrs["taints"] = _with_spot_taint(reader.get("nodeTaints") or (), attrs["spot"])
    attrs["baseline"] = _pool_baseline(reader)
    return attrs


def _cpu_pool(reader: Reader) -> NodePoolSettings:
    attrs = _pool_fields(reader)
    attrs["labels"] = {**reader.get("nodeLabels"), POOL_LABEL: attrs["name"]}
    identity = create_only_identity(attrs["vm_size"], attrs["os_sku"], attrs["availability_zones"], attrs["spot"],
                                    attrs["spot_max_price"], **attrs["baseline"].create_only())
    return NodePoolSettings(**attrs, azure_name=suffixed_name(attrs["name"], identity, attrs["keep_azure_name"]))


def _sharing(reader: Reader) -> SharingSettings | None:
    strategy, replicas = reader.get("strategy"), reader.get("replicas")
    return SharingSettings(strategy, replicas) if strategy is not None and replicas is not None else None


def _gpu_pool(reader: Reader, plugin: DevicePluginSettings | None = None) -> GpuNodePoolSettings:
    attrs = _pool_fields(reader)
    attrs["labels"] = {**reader.get("nodeLabels"), **_derived_gpu_labels(reader)}
    identity = create_only_identity(attrs["vm_size"], attrs["os_sku"], attrs["availability_zones"], attrs["spot"],
                                    attrs["spot_max_price"], gpuInstanceProfile=attrs["gpu_instance_profile"],
                                    gpuDriver=attrs["gpu_driver"], **attrs["baseline"].create_only())
    return GpuNodePoolSettings(**attrs, sku=gpu_sku(attrs["vm_size"]), plugin=plugin,
                               azure_name=suffixed_name(attrs["name"], identity, attrs["keep_azure_name"]))


# --- Declarations ------------------------------------------------------------------------------

_NAME_DOC = "The pool's name: lowercase letters and digits, starting with a letter; at most 8 (12 with keepAzureName)."
NODE_TAINTS_DOC = "Taints, as `key=value:Effect`."
NODE_LABELS_DOC = "Labels for the pool's nodes (not under AKS's reserved prefixes, not gpu-aks.io/pool)."

SCALE_SET_PRIORITY = choice("scaleSetPriority", "`Spot` for Spot VMs (AKS adds the Spot taint; gpu-aks declares it).",
                            SCALE_SET_PRIORITIES, "Regular", convert=lambda priority: priority == "Spot", attr="spot",
                            source=f"{_POOL} scaleSetPriority", create_only=True)
SPOT_MAX_PRICE = Key("spotMaxPrice", "Highest price per hour in US dollars for Spot VMs; -1 pays up to on-demand.",
                     "number", -1.0, check=lambda v: None if isinstance(v, (int, float)) and not isinstance(v, bool)
                     and (v == -1 or v > 0) else "must be -1 (pay up to the on-demand price) or a positive price in US "
                     "dollars", convert=float, attr="spot_max_price", source=f"{_POOL} spotMaxPrice", create_only=True)
# Reads scaleSetPriority: a typo there is one problem, not also this one (no knock-on error).
SPOT_PRICE_NEEDS_SPOT = Check(_spot_price_needs_spot, reads=("scaleSetPriority",),
                              doc="`spotMaxPrice` only with `scaleSetPriority: Spot`.")
KEEP_AZURE_NAME = boolean("keepAzureName", "Use the config name as the Azure name (gpu-aks 0.1 naming); a "
                          "replacement then deletes the old pool first.", False, attr="keep_azure_name")
POOL_OS_SKU = choice("osSKU", "The node OS image.", OS_SKUS, "Ubuntu", attr="os_sku", source=f"{_POOL} osSKU",
                     create_only=True)
POOL_ZONES = zones_key(f"{_POOL} availabilityZones")
POOL_SURGE = surge_key(f"{_POOL} upgradeSettings.maxSurge")
POOL_NAME = Key("name", _NAME_DOC, "string", None, parse=_pool_name(None, suffixed=True), attr="name",
                source=f"{_POOL} name pattern", required=True)
NODE_LABELS = Key("nodeLabels", NODE_LABELS_DOC, "map of strings", {}, parse=_labels, source=f"{_POOL} nodeLabels")

_SHARING_SOURCE = "NVIDIA/k8s-device-plugin v0.20.0 api/config/v1 (sharing.go, replicas.go)"
SHARING = Section("sharing", "Share each GPU (or MIG instance) of the pool between pods through NVIDIA's device plugin: "
                  "a node advertises its GPUs times `replicas` as nvidia.com/gpu, and a pod asking for 1 gets one "
                  "share. Absent: pods get whole GPUs. See docs/sharing.md.", (
    choice("strategy", "`timeSlicing`: pods take turns on the whole GPU (no memory or fault isolation); `mps`: "
           "NVIDIA's MPS control daemon runs the pods' kernels side by side, each limited to 1/replicas of the "
           "GPU's memory and compute (not on MIG pools).", SHARING_STRATEGIES, None, attr="strategy",
           source=_SHARING_SOURCE),
    Key("replicas", f"How many pods share one GPU: {MIN_SHARING_REPLICAS} to {TIME_SLICING_MAX_REPLICAS} "
        f"({MPS_MAX_REPLICAS} with mps).", "integer", None, check=_replicas_problem, convert=int, attr="replicas",
        source=_SHARING_SOURCE),
    Check(_sharing_is_complete, reads=("strategy", "replicas"),
          doc=f"`sharing` gives both `strategy` and `replicas`; `mps` takes at most {MPS_MAX_REPLICAS} replicas "
              "(NVIDIA `cmd/mps-control-daemon/mps/device.go`)."),
), build=_sharing, source=_SHARING_SOURCE)

#: The order pool keys are listed in (messages, the reference page); parsing follows the items.
POOL_KEYS_LISTED = ("name", "vmSize", "minCount", "maxCount", "nodeTaints", "nodeLabels", "availabilityZones", "osSKU",
                    "maxSurge", "maxUnavailable", "drainTimeoutInMinutes", "nodeSoakDurationInMinutes",
                    "undrainableNodeBehavior", "scaleSetPriority", "spotMaxPrice", "keepAzureName", *NODE_BASELINE_KEYS)

CPU_POOL = Section("cpuPools[]", "One CPU user pool.", (
    POOL_NAME,
    text("vmSize", "The VM size of the pool's nodes.", "Standard_D8ds_v5", attr="vm_size", source=f"{_POOL} vmSize",
         create_only=True),
    _not_a_gpu_size("declare GPU pools under gpuPools so they get the GPU taint, labels and the device plugin"),
    CPU_SIZE_CHECK,
    *node_baseline_items(),
    count_key("minCount", "Fewest nodes the autoscaler keeps.", 0, f"{_POOL} minCount"),
    count_key("maxCount", "Most nodes the autoscaler adds.", 3, f"{_POOL} maxCount"),
    _counts_in_order(0),
    SCALE_SET_PRIORITY, SPOT_MAX_PRICE, SPOT_PRICE_NEEDS_SPOT, POOL_ZONES, POOL_OS_SKU, OS_SKU_CHECK, POOL_SURGE,
    *upgrade_keys(CPU_POOL_UPGRADE), SPOT_UPGRADE_CHECK, KEEP_AZURE_NAME,
    Key("nodeTaints", NODE_TAINTS_DOC, "list of strings", [], parse=_taints(()), source=f"{_POOL} nodeTaints"),
    NODE_LABELS,
), build=_cpu_pool, listed=POOL_KEYS_LISTED)

GPU_POOL = Section("gpuPools[]", "One GPU pool: the CPU pool keys, MIG, the GPU driver and GPU sharing.", (
    POOL_NAME,
    Key("vmSize", "An NVIDIA GPU size gpu-aks knows (docs/configuration.md, \"GPU sizes a GPU pool accepts\"); "
        "retired sizes are refused with their replacement.", "string", None, parse=_gpu_vm_size, attr="vm_size",
        source=f"{_POOL} vmSize", create_only=True, required=True),
    *node_baseline_items(),
    count_key("minCount", "Fewest nodes the autoscaler keeps (idle GPUs cost nothing at 0).", 0, f"{_POOL} minCount"),
    count_key("maxCount", "Most nodes the autoscaler adds.", 2, f"{_POOL} maxCount"),
    _counts_in_order(0),
    SCALE_SET_PRIORITY, SPOT_MAX_PRICE, SPOT_PRICE_NEEDS_SPOT, POOL_ZONES, POOL_OS_SKU, OS_SKU_CHECK, POOL_SURGE,
    *upgrade_keys(GPU_POOL_UPGRADE), SPOT_UPGRADE_CHECK, KEEP_AZURE_NAME,
    choice("gpuInstanceProfile", "MIG partition of each GPU (A100, H100 and H200 sizes).", GPU_INSTANCE_PROFILES, None,
           attr="gpu_instance_profile", source=f"{_POOL} gpuInstanceProfile", create_only=True),
    Check(_mig_needs_a_mig_gpu, reads=("vmSize", "gpuInstanceProfile"),
          doc="`gpuInstanceProfile` needs a MIG-capable `vmSize`."),
    Section("gpuProfile", "How AKS sets up the GPU.", (
        choice("driver", "`Install`: AKS installs the NVIDIA driver; `None`: bring your own (e.g. the GPU Operator).",
               GPU_DRIVERS, "Install", attr="gpu_driver", source=f"{_POOL} gpuProfile.driver", create_only=True),
    ), flatten=True),
    Key("nodeTaints", NODE_TAINTS_DOC + " Needs a NoSchedule taint.", "list of strings", [DEFAULT_GPU_TAINT],
        parse=_taints((DEFAULT_GPU_TAINT,)), source=f"{_POOL} nodeTaints"),
    Check(_needs_a_no_schedule_taint, reads=("nodeTaints",), doc="A GPU pool has a NoSchedule taint."),
    NODE_LABELS,
    Check(_labels_agree_with_derived, doc="`nodeLabels` do not contradict the labels gpu-aks sets (accelerator, "
                                          "GPU model, MIG partition, pool)."),
    SHARING,
    Check(_sharing_fits_the_pool, reads=("gpuInstanceProfile", "sharing.strategy"),
          doc="`sharing.strategy: mps` cannot share a MIG pool (NVIDIA `internal/plugin/mps.go`)."),
    Check(_shares_fit_max_pods, reads=("vmSize", "gpuInstanceProfile", "maxPods", "sharing.replicas"),
          doc="A shared node's shares (GPUs x `replicas`) beyond its `maxPods` are warned about: no pod can use them."),
), build=_gpu_pool, listed=(*POOL_KEYS_LISTED, "gpuInstanceProfile", "gpuProfile", "sharing"))

SYSTEM_POOL = Section("systemPool", "The inline system (CPU) pool; never replaced, so its name has no suffix.", (
    text("vmSize", "The VM size of the system nodes.", "Standard_D4ds_v5", attr="vm_size", source=f"{_POOL} vmSize"),
    _not_a_gpu_size("the system pool runs CPU add-ons, use a D-series size"),
    CPU_SIZE_CHECK,
    *node_baseline_items(),
    count_key("minCount", "Fewest nodes (at least 1).", 1, f"{_POOL} minCount"),
    count_key("maxCount", "Most nodes.", 3, f"{_POOL} maxCount"),
    _counts_in_order(1),
    Key("name", "The pool's name (at most 12 characters).", "string", "system", parse=_pool_name("system", False),
        attr="name", source=f"{_POOL} name pattern"),
    zones_key(f"{_POOL} availabilityZones", create_only=False),
    choice("osSKU", "The node OS image.", OS_SKUS, "AzureLinux", attr="os_sku", source=f"{_POOL} osSKU"),
    OS_SKU_CHECK,
    surge_key(f"{_POOL} upgradeSettings.maxSurge"),
    boolean("onlyCriticalAddonsEnabled", "Taint the pool `CriticalAddonsOnly=true:NoSchedule` so app pods stay off.",
            True, attr="only_critical_addons", source="ManagedClusterAgentPoolProfile onlyCriticalAddonsEnabled"),
), build=lambda reader: SystemPoolSettings(**reader.section.attrs(reader), baseline=node_baseline(reader)),
   listed=("name", "vmSize", "minCount", "maxCount", "availabilityZones", "osSKU", "maxSurge",
           "onlyCriticalAddonsEnabled", *NODE_BASELINE_KEYS))

CPU_POOLS = ListOf("cpuPools", "CPU user pools, each an AgentPool of its own.", CPU_POOL, pool_key, noun="pools")
GPU_POOLS = ListOf("gpuPools", "GPU pools, each an AgentPool of its own; tainted, labelled and served by the device "
                   "plugin.", GPU_POOL, pool_key, noun="pools")


def create_only_properties() -> list[str]:
    """The AgentPool properties Azure fixes at creation (a change needs a new pool): the pool keys
    declared `create_only`, and those gpu-aks sets without a key. For `replace_on_changes`."""
    names = [item.name for item in GPU_POOL.items if isinstance(item, Key) and item.create_only]
    names += [item.name for item in GPU_POOL.items if isinstance(item, Section)
              and any(isinstance(key, Key) and key.create_only for key in item.items)]
    return [*names, *_CREATE_ONLY_WITHOUT_KEY]
