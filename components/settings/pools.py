"""What the AgentPool-backed pool kinds share in settings: the settings objects, the keys every pool
declares the same way (name, taints, labels, Spot, zones, OS, surge, keepAzureName), their readers and
checks, a pool's create-only identity and Azure name, and `sharing` (the GPU and NAP kinds', so that no
kind imports another). Each kind's own section (`systemPool`, `cpuPools`, `gpuPools`) is declared in its
kind module, `components/pools/<kind>.py`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_aks_policies.catalog import (
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
    is_gpu_vm_size,
    sharing_max_replicas,
)
from gpu_aks_policies.declarations import (
    MISSING,
    Check,
    Key,
    Reader,
    Section,
    boolean,
    choice,
    describe,
    is_whole_number,
)
from gpu_aks_policies.limits import is_finite_number
from gpu_aks_policies.scheduling import TaintSyntaxError, label_key_problem, label_value_problem, parse_taint

from components.aks_api import OS_SKUS, POOL_NAME_RE, SCALE_SET_PRIORITIES
from components.settings.common import POOL_MODEL, surge_key, zones_key
from components.settings.device_plugin import DevicePluginSettings
from components.settings.node_baseline import (
    NODE_BASELINE_KEYS,
    NodeBaseline,
    node_baseline,
    placed_in_system_subnet,
)
from components.settings.pool_upgrade import PoolUpgradeSettings

#: A pool's Azure name is its config name plus 4 hex characters of a hash of its create-only
#: properties (the Azure Verified Module's pattern): a config name of at most 8 then fits AKS's 12.
SUFFIXED_NAME_LENGTH = 8
#: AgentPool properties Azure fixes at creation that have no config key of their own (gpu-aks sets
#: `scaleSetEvictionPolicy` from `scaleSetPriority`).
_CREATE_ONLY_WITHOUT_KEY = ("scaleSetEvictionPolicy",)


# --- Settings objects --------------------------------------------------------------------------


def create_only_identity(vm_size: str, os_sku: str, availability_zones: Sequence[str], spot: bool,
                         spot_max_price: float, **gpu: Any) -> dict[str, Any]:
    """The create-only properties as they are hashed into a pool's Azure name. This exact form is
    part of every deployed pool's name: changing it would replace every pool."""
    return {"vmSize": vm_size.lower(), "osSKU": os_sku, "availabilityZones": sorted(availability_zones),
            "spot": spot, "spotMaxPrice": spot_max_price if spot else None, **gpu}


def azure_pool_name(name: str, identity: Mapping[str, Any], keep_azure_name: bool) -> str:
    """A pool's Azure name: `name` plus 4 hex characters of a hash of its create-only `identity`
    (`create_only_identity`), or `name` itself with keepAzureName. The one place the hash is made."""
    if keep_azure_name:
        return name
    return name + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:4]


@dataclass(frozen=True)
class UserAgentPoolSettings:
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

    @property
    def azure_name(self) -> str:
        """The pool's name in Azure: the config name plus a hash of its create-only properties, so a
        change to one of them creates the new pool before the old one is deleted."""
        return azure_pool_name(self.name, self.create_only(), self.keep_azure_name)


@dataclass(frozen=True)
class SharingSettings:
    """How NVIDIA's device plugin shares each GPU (or MIG instance) of a pool: it advertises every
    device `replicas` times, each replica one pod's share."""

    strategy: SharingStrategy
    replicas: int


@dataclass(frozen=True)
class GpuAgentPoolSettings(UserAgentPoolSettings):
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
        """Whether gpu-aks's own device-plugin DaemonSet serves this pool: never one whose driver (and so
        its plugin) another owner installs (`gpuProfile.driver: None`)."""
        return self.plugin is not None and self.plugin.serves(self.name) and self.gpu_driver != "None"

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


def pool_name_parser(default: str | None, suffixed: bool) -> Any:
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


def taints_parser(default: Sequence[str]) -> Any:
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


def labels_parser(reader: Reader, value: Any) -> dict[str, str]:
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


# --- Checks across keys ------------------------------------------------------------------------


def counts_in_order(floor: int) -> Check:
    def run(reader: Reader) -> None:
        min_count, max_count = reader.get("minCount"), reader.get("maxCount")
        if min_count < floor:
            reader.problem("minCount", f"{min_count} is below {floor}; a system pool needs at least one node")
        elif min_count > max_count:
            reader.problem("minCount", f"{min_count} is above maxCount {max_count}; the autoscaler needs "
                                       "minCount <= maxCount")
    return Check(run, reads=("minCount", "maxCount"),
                 doc="`minCount` <= `maxCount`" + (f"; `minCount` >= {floor}" if floor else "") + ".")


def not_a_gpu_size(advice: str) -> Check:
    def run(reader: Reader) -> None:
        vm_size = reader.get("vmSize")
        if is_gpu_vm_size(vm_size):
            reader.problem("vmSize", f"{describe(vm_size)} is a GPU size; {advice}")
    return Check(run, reads=("vmSize",), doc="`vmSize` is not a GPU size.")


def _spot_price_needs_spot(reader: Reader) -> None:
    if "spotMaxPrice" in reader.raw and not reader.get("scaleSetPriority"):
        reader.problem("spotMaxPrice", "is only valid with scaleSetPriority: Spot")


# --- Builders ----------------------------------------------------------------------------------


def with_spot_taint(taints: tuple[str, ...], spot: bool) -> tuple[str, ...]:
    # AKS adds this taint to every Spot node; declaring it keeps the AgentPool from drifting.
    return (*taints, SPOT_TAINT) if spot and SPOT_TAINT not in taints else taints


def pool_baseline(reader: Reader) -> NodeBaseline:
    """The pool's baseline; without a subnet of its own it joins the system pool's, as AKS places it."""
    return placed_in_system_subnet(node_baseline(reader), node_baseline(reader.root.children["systemPool"]))


def pool_fields(reader: Reader) -> dict[str, Any]:
    attrs = reader.section.attrs(reader)
    attrs["taints"] = with_spot_taint(reader.get("nodeTaints") or (), attrs["spot"])
    attrs["baseline"] = pool_baseline(reader)
    return attrs


# --- Declarations ------------------------------------------------------------------------------

NAME_DOC = "The pool's name: lowercase letters and digits, starting with a letter; at most 8 (12 with keepAzureName)."
NODE_TAINTS_DOC = "Taints, as `key=value:Effect`."
NODE_LABELS_DOC = "Labels for the pool's nodes (not under AKS's reserved prefixes, not gpu-aks.io/pool)."

SCALE_SET_PRIORITY = choice("scaleSetPriority", "`Spot` for Spot VMs (AKS adds the Spot taint; gpu-aks declares it).",
                            SCALE_SET_PRIORITIES, "Regular", convert=lambda priority: priority == "Spot", attr="spot",
                            source=f"{POOL_MODEL} scaleSetPriority", create_only=True)
#: More US dollars an hour than any VM costs: a higher `spotMaxPrice` is no cap (and 10**400 or inf is no
#: number Azure takes; 10**4000 ended the parse in an OverflowError).
MOST_SPOT_PRICE = 10_000
#: Azure takes a Spot max price "using up to five decimal places" (learn.microsoft.com/azure/virtual-machines/
#: spot-vms, "Pricing"): 1e-300 is positive, and no price Azure takes.
SPOT_PRICE_DECIMALS = 5
SPOT_MAX_PRICE = Key("spotMaxPrice", "Highest price per hour in US dollars for Spot VMs, up to 5 decimal places; -1 "
                     "pays up to on-demand.",
                     "number", -1.0, check=lambda v: None if is_finite_number(v)
                     and (v == -1 or 0 < v <= MOST_SPOT_PRICE and round(v, SPOT_PRICE_DECIMALS) == v) else "must be -1 "
                     f"(pay up to the on-demand price) or a positive price in US dollars up to {MOST_SPOT_PRICE}, with "
                     f"at most {SPOT_PRICE_DECIMALS} decimal places", convert=float, attr="spot_max_price",
                     source=f"{POOL_MODEL} spotMaxPrice", create_only=True)
# Reads scaleSetPriority: a typo there is one problem, not also this one (no knock-on error).
SPOT_PRICE_NEEDS_SPOT = Check(_spot_price_needs_spot, reads=("scaleSetPriority",),
                              doc="`spotMaxPrice` only with `scaleSetPriority: Spot`.")
KEEP_AZURE_NAME = boolean("keepAzureName", "Use the config name as the Azure name (gpu-aks 0.1 naming); a "
                          "replacement then deletes the old pool first.", False, attr="keep_azure_name")
POOL_OS_SKU = choice("osSKU", "The node OS image.", OS_SKUS, "Ubuntu", attr="os_sku", source=f"{POOL_MODEL} osSKU",
                     create_only=True)
POOL_ZONES = zones_key(f"{POOL_MODEL} availabilityZones")
POOL_SURGE = surge_key(f"{POOL_MODEL} upgradeSettings.maxSurge")
POOL_NAME = Key("name", NAME_DOC, "string", None, parse=pool_name_parser(None, suffixed=True), attr="name",
                source=f"{POOL_MODEL} name pattern", required=True)
NODE_LABELS = Key("nodeLabels", NODE_LABELS_DOC, "map of strings", {}, parse=labels_parser, source=f"{POOL_MODEL} nodeLabels")

#: The order pool keys are listed in (messages, the reference page); parsing follows the items.
POOL_KEYS_LISTED = ("name", "vmSize", "minCount", "maxCount", "nodeTaints", "nodeLabels", "availabilityZones", "osSKU",
                    "maxSurge", "maxUnavailable", "drainTimeoutInMinutes", "nodeSoakDurationInMinutes",
                    "undrainableNodeBehavior", "scaleSetPriority", "spotMaxPrice", "keepAzureName", *NODE_BASELINE_KEYS)

def create_only_properties(pool: Section) -> list[str]:
    """The AgentPool properties Azure fixes at creation (a change needs a new pool): the keys of
    `pool` declared `create_only`, and those gpu-aks sets without a key. For `replace_on_changes`."""
    names = [item.name for item in pool.items if isinstance(item, Key) and item.create_only]
    names += [item.name for item in pool.items if isinstance(item, Section)
              and any(isinstance(key, Key) and key.create_only for key in item.items)]
    return [*names, *_CREATE_ONLY_WITHOUT_KEY]


# --- sharing: the GPU and NAP kinds' ---


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


def _sharing(reader: Reader) -> SharingSettings | None:
    strategy, replicas = reader.get("strategy"), reader.get("replicas")
    return SharingSettings(strategy, replicas) if strategy is not None and replicas is not None else None


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
