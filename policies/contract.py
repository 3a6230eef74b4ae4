"""The outputs contract of a gpu-aks platform stack, as one typed, frozen class.

The platform writes it (`components/contract.py` builds a `PlatformContract` from the settings and
the program exports `to_json()`'s keys); app stacks read it through a `StackReference`; the checker
(`--platform`), the explainer and the doctor read it from `pulumi stack output --json`. Every field
is declared once, with its JSON name, type and one line of documentation, and `from_json`,
`to_json`, `json_schema()` (`docs/contract.schema.json`) and `contract_markdown()`
(`docs/contract.md`) all derive from those declarations. Standard library only, no Pulumi.

`from_json` checks every type and names the key of each problem (`gpuPools.t4.gpusPerNode`), so no
tool meets a value it cannot use: JSON's `1e999` (infinity), NaN, fractions and strings where a
count belongs are refused. Counts may arrive as floats (a StackReference turns `1` into `1.0`).
It refuses contract versions this release does not know, naming the ones it reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Literal, get_args

from .catalog import DEVICE_PLUGIN_NAMESPACE, MIG_STRATEGIES, SharingStrategy

# SharingStrategy (how the device plugin shares a GPU: NVIDIA's `sharing.timeSlicing` and `sharing.mps`)
# is declared once, in the catalog beside NVIDIA's limits.
from .limits import MAX_CONTRACT_HOURLY_PRICE, MAX_POOL_COUNT, is_finite_number, is_number, is_whole
from .quantities import shown

#: The version this release writes. 2: pools carry `azureName` and `poolLabel`, and `nodeSelector`
#: pins with gpu-aks's pool label instead of AKS's agentpool label (whose value changes when a pool
#: is replaced). 3: `pools`, every pool as the one pool model (`gpu_aks_policies.pools.model.Pool`)
#: serialized; version 2's `gpuPools` and `cpuPools` are still written, from the same model.
CONTRACT_VERSION = 3
#: The versions this release reads (1 lacks `azureName` and `poolLabel`; readers fall back to the name).
#: A new optional output is not a new version (docs/component-package.md, "What is a breaking change to `GpuCluster`"):
#: `kind`, `offers` and `sharing` joined version 2, and `from_json` derives them from the single-size
#: fields when a platform wrote none.
READABLE_CONTRACT_VERSIONS = (1, 2, 3)
_ABSENT = object()

#: The catalog's MIG_STRATEGIES as a type (tests/test_contract.py holds the two equal).
MigStrategy = Literal["none", "single", "mixed"]
DevicePluginOwner = Literal["gpu-aks", "external"]
#: Who exports the pool's GPU metrics: gpu-aks's DCGM exporter (`gpu-aks:observability`), or nobody here.
MetricsExporter = Literal["gpu-aks", "none"]
#: What backs a pool (its backend; version 2 calls it `kind`): an AKS AgentPool (fixed size or
#: cluster-autoscaled), or a NAP / Karpenter `karpenter.sh/v1` NodePool, which may bring several VM sizes.
PoolBackend = Literal["agentPool", "nodePool"]
#: What the pool is for: the inline system pool, a CPU user pool, a GPU pool.
PoolRole = Literal["system", "cpu", "gpu"]
#: How a node's VMs are bought: Azure's on-demand or Spot priority (Karpenter's
#: `karpenter.sh/capacity-type` values `on-demand` and `spot`, spelled as the contract spells keys).
CapacityType = Literal["onDemand", "spot"]


class ContractError(ValueError):
    """The document is not a gpu-aks outputs contract this release reads; the message names each key."""


# --- Field kinds -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Kind:
    """How one field is read, written and described."""

    schema: Mapping[str, Any]
    #: What a reader expects, for "expected ..." messages.
    expected: str
    #: Say what was found ("got 1.5") after the expectation.
    show_value: bool = True

    def read(self, value: Any) -> Any:
        """The typed value, or raises ValueError when the value is not of this kind."""
        raise NotImplementedError

    def write(self, value: Any) -> Any:
        return value


class _Text(_Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError
        return value


class _OptionalText(_Kind):
    def read(self, value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise ValueError
        return value


class _Choice(_Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, str) or value not in self.schema["enum"]:
            raise ValueError
        return value


class _Count(_Kind):
    def read(self, value: Any) -> Any:
        if not is_whole(value) or not self.schema["minimum"] <= value <= self.schema["maximum"]:
            raise ValueError
        return int(value)


class _Flag(_Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError
        return value


class _Texts(_Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError
        return tuple(value)

    def write(self, value: Any) -> Any:
        return list(value)


class _TextMap(_Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ValueError
        return dict(value)

    def write(self, value: Any) -> Any:
        return dict(value)


class _TextMaps(_Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(
                isinstance(item, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in item.items())
                for item in value):
            raise ValueError
        return tuple(dict(item) for item in value)

    def write(self, value: Any) -> Any:
        return [dict(item) for item in value]


class _Choices(_Kind):
    """A non-empty list of distinct values of one closed set."""

    def read(self, value: Any) -> Any:
        allowed = self.schema["items"]["enum"]
        if not isinstance(value, list) or not value or len(set(map(str, value))) != len(value) or \
                not all(isinstance(item, str) and item in allowed for item in value):
            raise ValueError
        return tuple(value)

    def write(self, value: Any) -> Any:
        return list(value)


class _Version(_Kind):
    def read(self, value: Any) -> Any:
        return int(value)


class _Pools(_Kind):
    """A map of pool names to pools (read by `_read_pools`, which names each pool's problems)."""

    def __init__(self, pool: type) -> None:
        super().__init__({"type": "object", "additionalProperties": {"$ref": f"#/$defs/{pool.__name__}"}},
                         "a map of pool names to pools")

    def write(self, value: Any) -> Any:
        return {name: _write(pool) for name, pool in value.items()}


class _Nested(_Kind):
    """A field holding typed objects of its own; `_read` reads it through `read_nested`, which names
    each problem inside it (`gpuPools.t4.offers[0].perNode`)."""

    def read_nested(self, value: Any, key: str, problems: list[str]) -> Any:
        raise NotImplementedError


class _Object(_Nested):
    """One typed object, or null."""

    def __init__(self, cls: type) -> None:
        super().__init__({"oneOf": [{"type": "null"}, {"$ref": f"#/$defs/{cls.__name__}"}]},
                         f"null or an object ({', '.join(_json_names(cls))})", show_value=False)
        self.cls = cls

    def read_nested(self, value: Any, key: str, problems: list[str]) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError
        return self.cls(**_read(self.cls, value, f"{key}.", problems))

    def write(self, value: Any) -> Any:
        return _write(value)


class _Objects(_Nested):
    """A non-empty list of typed objects."""

    def __init__(self, cls: type) -> None:
        super().__init__({"type": "array", "minItems": 1, "items": {"$ref": f"#/$defs/{cls.__name__}"}},
                         f"a non-empty list of objects ({', '.join(_json_names(cls))})", show_value=False)
        self.cls = cls

    def read_nested(self, value: Any, key: str, problems: list[str]) -> Any:
        if not isinstance(value, list) or not value or not all(isinstance(item, Mapping) for item in value):
            raise ValueError
        return tuple(self.cls(**_read(self.cls, item, f"{key}[{index}].", problems))
                     for index, item in enumerate(value))

    def write(self, value: Any) -> Any:
        return [_write(item) for item in value]


class _Price(_Kind):
    """A list price: a finite number from 0 up, or null (no price known)."""

    def read(self, value: Any) -> Any:
        if not is_finite_number(value) or not 0 <= value <= self.schema["maximum"]:
            raise ValueError
        return float(value)


_STRING_MAP_SCHEMA = {"type": "object", "additionalProperties": {"type": "string"}}
TEXT = _Text({"type": "string"}, "a string")
OPTIONAL_TEXT = _OptionalText({"type": ["string", "null"]}, "a string or null")
COUNT = _Count({"type": "integer", "minimum": 0, "maximum": MAX_POOL_COUNT}, f"a whole number from 0 to {MAX_POOL_COUNT}")
OPTIONAL_COUNT = _Count({"type": ["integer", "null"], "minimum": 0, "maximum": MAX_POOL_COUNT},
                        f"a whole number from 0 to {MAX_POOL_COUNT}, or null")
REPLICAS = _Count({"type": "integer", "minimum": 1, "maximum": MAX_POOL_COUNT}, f"a whole number from 1 to {MAX_POOL_COUNT}")
FLAG = _Flag({"type": "boolean"}, "true or false")
TAINTS = _Texts({"type": "array", "items": {"type": "string"}}, "a list of key=value:Effect strings", show_value=False)
LABELS = _TextMap(_STRING_MAP_SCHEMA, "a map of label keys to values", show_value=False)
TOLERATIONS = _TextMaps({"type": "array", "items": _STRING_MAP_SCHEMA},
                        "a list of tolerations ({key, operator, value, effect} strings)")
RESOURCE = _Text({"type": "string"}, "a resource name such as nvidia.com/gpu", show_value=False)
PRICE = _Price({"type": ["number", "null"], "minimum": 0, "maximum": MAX_CONTRACT_HOURLY_PRICE},
               f"a price from 0 to {MAX_CONTRACT_HOURLY_PRICE}, or null")
ZONES = _Texts({"type": "array", "items": {"type": "string"}}, "a list of zone names")


def _field(json_name: str, kind: _Kind, doc: str, default: Any = MISSING, *, reader_needs: bool = False,
           program: bool = False, since: int | None = None) -> Any:
    """A contract field: its JSON name, kind and documentation. `reader_needs`: a pool without it is
    not a contract (the tools need it). `program`: written by the Pulumi layer (cluster outputs), not
    from settings; `since`: the version that added it. Either is left out of `to_json` while unset,
    and not required by the schema."""
    metadata = {"json": json_name, "kind": kind, "doc": doc, "reader_needs": reader_needs,
                "program": program or since is not None}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def _choice(values: tuple[str, ...], expected: str) -> _Kind:
    return _Choice({"type": "string", "enum": list(values)}, expected)


def _one_of(closed: Any) -> _Kind:
    """A field whose value is one of a Literal's values."""
    values = get_args(closed)
    return _choice(values, " or ".join(values) if len(values) == 2 else "one of " + ", ".join(values))


def _json_names(cls: type) -> list[str]:
    return [spec.metadata["json"] for spec in fields(cls)]


# --- The contract ------------------------------------------------------------------------------


class _Written:
    def to_json(self) -> dict[str, Any]:
        """The JSON object as the contract writes it."""
        return _write(self)


#: The fields CPU and GPU pools share: (kind, documentation, default).
_POOL_FIELDS: Mapping[str, tuple[_Kind, str, Any]] = {
    "name": (TEXT, "The pool's name in the stack config.", MISSING),
    "azureName": (OPTIONAL_TEXT, "The pool's name in Azure (the config name plus a hash of its create-only "
                                 "properties). Version 2.", None),
    "poolLabel": (LABELS, "The label every node of the pool carries (gpu-aks.io/pool), stable across replacements. "
                          "Version 2.", {}),
    "vmSize": (OPTIONAL_TEXT, "The VM size of the nodes.", None),
    "minCount": (COUNT, "Fewest nodes the autoscaler keeps.", None),
    "maxCount": (COUNT, "Most nodes the autoscaler adds.", None),
    "taints": (TAINTS, "The nodes' taints, as key=value:Effect.", ()),
    "labels": (LABELS, "The nodes' labels that gpu-aks sets.", {}),
    "spot": (FLAG, "Spot VMs (AKS adds the Spot label and taint).", False),
}


def _pool_field(json_name: str, reader_needs: bool = False) -> Any:
    kind, doc, default = _POOL_FIELDS[json_name]
    return _field(json_name, kind, doc, default, reader_needs=reader_needs)


@dataclass(frozen=True)
class CpuPoolEntry(_Written):
    """A CPU user pool."""

    name: str = _pool_field("name")
    azure_name: str | None = _pool_field("azureName")
    pool_label: dict[str, str] = _pool_field("poolLabel")
    vm_size: str | None = _pool_field("vmSize")
    min_count: int | None = _pool_field("minCount")
    max_count: int | None = _pool_field("maxCount")
    taints: tuple[str, ...] = _pool_field("taints")
    labels: dict[str, str] = _pool_field("labels")
    spot: bool = _pool_field("spot")


_CAPACITY_TYPES = _Choices({"type": "array", "minItems": 1, "uniqueItems": True,
                            "items": {"type": "string", "enum": list(get_args(CapacityType))}},
                           "a non-empty list of " + " and ".join(get_args(CapacityType)))


def spot_first(capacity_types: Any) -> tuple[CapacityType, ...]:
    """Capacity types in the order Karpenter tries them: Spot before on-demand, whatever the list's
    order (kubernetes-sigs/karpenter: a NodePool's `capacity-type` requirement is a set, and Azure's
    provider orders offerings by price, Spot first)."""
    return tuple(sorted(dict.fromkeys(capacity_types), key=lambda kind: kind != "spot"))


@dataclass(frozen=True)
class OfferPrice(_Written):
    """The list price of one node of the offer, per hour, as the platform's price table gave it when the
    contract was written (Azure Retail Prices: pay-as-you-go, Linux; no discount)."""

    on_demand: float | None = _field("onDemand", PRICE, "On-demand (pay-as-you-go) price of one node an hour, or null.",
                                     None)
    spot: float | None = _field("spot", PRICE, "Spot price of one node an hour, or null (never above on-demand: "
                                "Spot's default max price is the on-demand price).", None)
    currency: str = _field("currency", TEXT, "The prices' currency (USD).", "USD")
    as_of: str = _field("asOf", TEXT, "The date of the prices (YYYY-MM-DD).", "")
#: The fields of an offer, in version 2's GPU offers and version 3's pools alike: (kind, documentation, default).
_OFFER_FIELDS: Mapping[str, tuple[_Kind, str, Any]] = {
    "gpuModel": (OPTIONAL_TEXT, "The GPU model (\"T4\", \"A100 80GB\", \"H100\").", None),
    "gpuMemoryGiB": (COUNT, "Memory of one GPU in GiB.", None),
    "gpusPerVm": (COUNT, "Physical GPUs per VM.", None),
    "migPartition": (OPTIONAL_TEXT, "The MIG partition (1g.10gb ...), or null.", None),
    "capacityTypes": (_CAPACITY_TYPES, "How the nodes are bought: onDemand, spot, or both (a NodePool with both "
                                       "tries Spot first and falls back to on-demand).", ("onDemand",)),
}


def _offer_field(json_name: str) -> Any:
    kind, doc, default = _OFFER_FIELDS[json_name]
    return _field(json_name, kind, doc, default)


@dataclass(frozen=True)
class GpuOfferEntry(_Written):
    """One VM size a GPU pool may bring, and what one of its nodes advertises. An AgentPool-backed
    pool has one offer; a NodePool-backed (NAP) pool one per VM size it may choose."""

    vm_size: str | None = _field("vmSize", OPTIONAL_TEXT, "The VM size (null only when derived from an older "
                                 "contract that had none).", None)
    gpu_model: str | None = _offer_field("gpuModel")
    gpu_memory_gib: int | None = _offer_field("gpuMemoryGiB")
    gpus_per_vm: int | None = _offer_field("gpusPerVm")
    resource: str = _field("resource", RESOURCE, "The extended resource a pod asks for: nvidia.com/gpu, or "
                           "nvidia.com/mig-<profile> under migStrategy mixed.", "", reader_needs=True)
    per_node: int = _field("perNode", COUNT, "How many of `resource` one node advertises: GPUs, MIG instances, or "
                           "GPUs times the sharing replicas.", 0, reader_needs=True)
    mig_partition: str | None = _offer_field("migPartition")
    capacity_types: tuple[CapacityType, ...] = _offer_field("capacityTypes")
    hourly_price: OfferPrice | None = _field("hourlyPrice", _Object(OfferPrice), "The list price of one node an hour "
                                             "(on-demand and Spot), or null when the platform had none.", None)


@dataclass(frozen=True)
class PoolSharing(_Written):
    """How the device plugin shares each GPU of the pool between pods."""

    strategy: SharingStrategy = _field("strategy", _one_of(SharingStrategy), "timeSlicing or mps.", "timeSlicing",
                                       reader_needs=True)
    replicas: int = _field("replicas", REPLICAS, "How many pods share one GPU (or one MIG instance).", 1,
                           reader_needs=True)


@dataclass(frozen=True)
class GpuPoolEntry(_Written):
    """A GPU pool: everything a pod needs to land there, already worked out. `offers` is what a reader
    reads; the single-size fields (vmSize ... accelerator) describe an AgentPool-backed pool's one
    offer, and a NodePool-backed pool's first offer or null."""

    name: str = _pool_field("name")
    kind: PoolBackend = _field("kind", _one_of(PoolBackend), "What backs the pool: an AKS AgentPool (agentPool) or a NAP "
                            "Karpenter NodePool (nodePool); agentPool when absent.", "agentPool")
    azure_name: str | None = _pool_field("azureName")
    pool_label: dict[str, str] = _pool_field("poolLabel")
    vm_size: str | None = _pool_field("vmSize")
    gpu_model: str | None = _field("gpuModel", OPTIONAL_TEXT, "The GPU model (\"T4\", \"A100 80GB\", \"H100\").", None)
    gpu_memory_gib: int | None = _field("gpuMemoryGiB", COUNT, "Memory of one GPU in GiB.", None)
    gpus_per_vm: int | None = _field("gpusPerVm", COUNT, "Physical GPUs per VM.", None)
    gpus_per_node: int = _field("gpusPerNode", COUNT, "How many of `gpuResource` one node offers (MIG "
                                "instances count one each; on a shared pool, GPUs times the sharing replicas).", 0,
                                reader_needs=True)
    gpu_resource: str = _field("gpuResource", RESOURCE, "The extended resource a pod asks for: nvidia.com/gpu, or "
                               "nvidia.com/mig-<profile> under migStrategy mixed.", "", reader_needs=True)
    gpu_instance_profile: str | None = _field("gpuInstanceProfile", OPTIONAL_TEXT, "The MIG profile (MIG1g ...), "
                                              "or null.", None)
    mig_partition: str | None = _field("migPartition", OPTIONAL_TEXT, "The MIG partition (1g.10gb ...), or null.",
                                       None)
    accelerator: str | None = _field("accelerator", OPTIONAL_TEXT, "The nvidia.com/gpu.accelerator label value.",
                                     None)
    spot: bool = _pool_field("spot")
    min_count: int | None = _pool_field("minCount")
    max_count: int | None = _pool_field("maxCount")
    taints: tuple[str, ...] = _pool_field("taints", reader_needs=True)
    labels: dict[str, str] = _pool_field("labels", reader_needs=True)
    device_plugin: DevicePluginOwner | None = _field(
        "devicePlugin", _choice(get_args(DevicePluginOwner), " or ".join(get_args(DevicePluginOwner))),
        "Who runs the device plugin on the pool: gpu-aks's DaemonSet, or something else (driver: None).", None)
    dcgm_exporter: MetricsExporter | None = _field(
        "dcgmExporter", _choice(get_args(MetricsExporter), " or ".join(get_args(MetricsExporter))),
        "Whether gpu-aks's DCGM exporter runs on the pool's nodes (the doctor then expects a Ready exporter pod "
        "on each); absent in contracts written before gpu-aks 0.3.", None)
    tolerations: tuple[dict[str, str], ...] = _field("tolerations", TOLERATIONS, "The tolerations a pod needs "
                                                     "for the pool's taints.", ())
    node_selector: dict[str, str] = _field("nodeSelector", LABELS, "The nodeSelector that pins a pod to the pool's "
                                           "GPU nodes.", {})
    offers: tuple[GpuOfferEntry, ...] = _field("offers", _Objects(GpuOfferEntry), "The GPUs the pool may bring, one offer per "
                                          "VM size; derived from the single-size fields when absent.", ())
    sharing: PoolSharing | None = _field("sharing", _Object(PoolSharing), "How pods share a GPU (time-slicing or "
                                         "MPS), or null: each pod gets whole GPUs or MIG instances.", None)
    capacity_types: tuple[CapacityType, ...] = _field(
        "capacityTypes", _CAPACITY_TYPES, "How the pool's nodes may be bought, over its offers: onDemand, spot, or both "
        "(a NAP NodePool with both tries Spot first, whatever the order, and falls back to on-demand; `spot` is then "
        "false). Derived from the offers when absent.", ("onDemand",))

    @property
    def spot_only(self) -> bool:
        """Every node of the pool is a Spot VM."""
        return self.capacity_types == ("spot",)


@dataclass(frozen=True)
class OfferEntry(_Written):
    """One VM size a pool may bring (version 3; the model's `Offer`): how its nodes are bought (with the
    size, what prices it) and, on a GPU size, its GPUs and what one node advertises."""

    vm_size: str = _field("vmSize", TEXT, "The VM size.", "", reader_needs=True)
    capacity_types: tuple[CapacityType, ...] = _offer_field("capacityTypes")
    gpu_model: str | None = _offer_field("gpuModel")
    gpu_memory_gib: int | None = _field("gpuMemoryGiB", OPTIONAL_COUNT, "Memory of one GPU in GiB; null on a CPU size.",
                                        None)
    gpus_per_vm: int | None = _field("gpusPerVm", OPTIONAL_COUNT, "Physical GPUs per VM; null on a CPU size.", None)
    resource: str | None = _field("resource", OPTIONAL_TEXT, "The extended resource a pod asks for (nvidia.com/gpu, "
                                  "or nvidia.com/mig-<profile> under migStrategy mixed); null on a CPU size.", None)
    per_node: int = _field("perNode", COUNT, "How many of `resource` one node advertises (GPUs, MIG instances, or "
                           "GPUs times the sharing replicas); 0 on a CPU size.", 0)
    gpu_instance_profile: str | None = _field("gpuInstanceProfile", OPTIONAL_TEXT, "The MIG profile (MIG1g ...), "
                                              "or null.", None)
    mig_partition: str | None = _offer_field("migPartition")
    # Karpenter's `Offering` carries its price (kubernetes-sigs/karpenter `pkg/cloudprovider/types.go`).
    hourly_price: OfferPrice | None = _field("hourlyPrice", _Object(OfferPrice), "The list price of one node an hour "
                                             "(on-demand and Spot), or null when the platform had none.", None)

    @property
    def gpu(self) -> bool:
        """The size brings GPUs (a pod asks for `resource`)."""
        return bool(self.resource)


@dataclass(frozen=True)
class PoolEntry(_Written):
    """Every pool of the platform, system and CPU pools included (version 3): the one pool model
    (`gpu_aks_policies.pools.model.Pool`) serialized. Version 2's `gpuPools` and `cpuPools` are
    written from the same model."""

    name: str = _pool_field("name")
    key: str = _field("key", TEXT, "How the stack config names the pool (gpuPools[t4], systemPool).", "")
    role: PoolRole = _field("role", _one_of(PoolRole), "What the pool is for: system, cpu or gpu.", "cpu",
                            reader_needs=True)
    backend: PoolBackend = _field("backend", _one_of(PoolBackend), "What backs the pool: an AKS AgentPool "
                                  "(agentPool) or a NAP Karpenter NodePool (nodePool).", "agentPool")
    azure_name: str | None = _pool_field("azureName")
    offers: tuple[OfferEntry, ...] = _field("offers", _Objects(OfferEntry), "Every VM size the pool may bring.", (),
                                            reader_needs=True)
    min_count: int | None = _pool_field("minCount")
    max_count: int | None = _pool_field("maxCount")
    spot: bool = _pool_field("spot")
    capacity_types: tuple[CapacityType, ...] = _field(
        "capacityTypes", _CAPACITY_TYPES, "How the pool's nodes may be bought, over its offers, Spot first as Karpenter "
        "tries them; `spot` is true only when every node is a Spot VM. Derived from the offers when absent.",
        ("onDemand",))
    zones: tuple[str, ...] = _field("zones", ZONES, "The availability zones of the pool's nodes; [] for any.", ())
    taints: tuple[str, ...] = _pool_field("taints")
    labels: dict[str, str] = _pool_field("labels")
    sharing: PoolSharing | None = _field("sharing", _Object(PoolSharing), "How pods share a GPU (time-slicing or "
                                         "MPS), or null.", None)
    device_plugin: DevicePluginOwner | None = _field(
        "devicePlugin", _Choice({"type": ["string", "null"], "enum": [*get_args(DevicePluginOwner), None]},
                                " or ".join(get_args(DevicePluginOwner)) + " or null"),
        "Who runs the device plugin on a GPU pool: gpu-aks's DaemonSet, or something else; null on CPU pools.", None)
    exporter: bool = _field("exporter", FLAG, "gpu-aks's DCGM exporter runs on the pool's nodes.", False)

    @property
    def gpu_offers(self) -> tuple[OfferEntry, ...]:
        return tuple(offer for offer in self.offers if offer.gpu)


def gpu_pool_as_model(pool: GpuPoolEntry) -> PoolEntry:
    """A version-2 GPU pool in version 3's shape, the pool model serialized: a contract written before
    version 3 is read into it here, once, so every reader (the explainer, `--platform`, the doctor)
    reads one shape whichever version wrote the contract."""
    def offer(each: GpuOfferEntry) -> OfferEntry:
        return OfferEntry(vm_size=each.vm_size or "", capacity_types=each.capacity_types, gpu_model=each.gpu_model,
                          gpu_memory_gib=each.gpu_memory_gib, gpus_per_vm=each.gpus_per_vm, resource=each.resource,
                          per_node=each.per_node, mig_partition=each.mig_partition, hourly_price=each.hourly_price,
                          gpu_instance_profile=pool.gpu_instance_profile if each.mig_partition else None)
    # gpu-aks writes an AgentPool-backed GPU pool from `gpuPools`, a NodePool-backed one from `gpuNodePools`.
    section = "gpuNodePools" if pool.kind == "nodePool" else "gpuPools"
    return PoolEntry(name=pool.name, key=f"{section}[{pool.name}]", role="gpu", backend=pool.kind,
                     azure_name=pool.azure_name, offers=tuple(offer(each) for each in pool.offers),
                     min_count=pool.min_count, max_count=pool.max_count, spot=pool.spot,
                     capacity_types=pool.capacity_types, taints=pool.taints, labels=pool.labels, sharing=pool.sharing,
                     device_plugin=pool.device_plugin, exporter=pool.dcgm_exporter == "gpu-aks")


@dataclass(frozen=True)
class PlatformContract(_Written):
    """What a gpu-aks platform stack exports for the app stacks and tools that read it."""

    contract_version: int | None = _field(
        "contractVersion", _Version({"type": "integer", "enum": list(READABLE_CONTRACT_VERSIONS)},
                                    "one of " + ", ".join(map(str, READABLE_CONTRACT_VERSIONS))),
        f"The contract's version; this release writes {CONTRACT_VERSION} and reads "
        f"{', '.join(map(str, READABLE_CONTRACT_VERSIONS))}. Absent when only the gpuPools map is given.", None)
    location: str | None = _field("location", OPTIONAL_TEXT, "The Azure region.", None)
    kubernetes_version: str | None = _field("kubernetesVersion", OPTIONAL_TEXT, "The pinned Kubernetes version.", None)
    gpu_namespace: str = _field("gpuNamespace", TEXT, "The namespace of gpu-aks's device plugin.",
                                DEVICE_PLUGIN_NAMESPACE)
    mig_strategy: MigStrategy = _field("migStrategy", _choice(MIG_STRATEGIES, "one of " + ", ".join(MIG_STRATEGIES)),
                                       "The device plugin's MIG strategy.", "none")
    gpu_pools: dict[str, GpuPoolEntry] = _field("gpuPools", _Pools(GpuPoolEntry), "The GPU pools, by name.", {},
                                                   reader_needs=True)
    cpu_pools: dict[str, CpuPoolEntry] = _field("cpuPools", _Pools(CpuPoolEntry), "The CPU user pools, by "
                                                   "name.", {})
    pools: dict[str, PoolEntry] | None = _field("pools", _Pools(PoolEntry), "Every pool, by name, as the pool "
                                                "model (version 3; absent before).", None, since=3)
    cluster_name: str | None = _field("clusterName", OPTIONAL_TEXT, "The AKS cluster's name.", None, program=True)
    resource_group_name: str | None = _field("resourceGroupName", OPTIONAL_TEXT, "The cluster's resource group.",
                                             None, program=True)
    oidc_issuer_url: str | None = _field("oidcIssuerUrl", OPTIONAL_TEXT, "The cluster's OIDC issuer URL (workload "
                                         "identity).", None, program=True)
    prometheus_query_endpoint: str | None = _field(
        "prometheusQueryEndpoint", OPTIONAL_TEXT, "The Azure Monitor workspace's PromQL query endpoint, where GPU "
        "metrics land (`gpu-aks:observability`); null when observability is off.", None, program=True)
    grafana_dashboard_url: str | None = _field(
        "grafanaDashboardUrl", OPTIONAL_TEXT, "The GPU dashboard in Azure Managed Grafana; null without "
        "`observability.grafana`.", None, program=True)

    def gpu_pool_models(self) -> dict[str, PoolEntry]:
        """The GPU pools as the pool model serialized (version 3's `pools`, their GPU offers), whichever
        version wrote the contract: before version 3, read from `gpuPools` (`gpu_pool_as_model`)."""
        if self.pools is None:
            return {name: gpu_pool_as_model(pool) for name, pool in self.gpu_pools.items()}
        return {name: replace(pool, offers=pool.gpu_offers) for name, pool in self.pools.items() if pool.role == "gpu"}

    # --- Reading -------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, raw: Any) -> PlatformContract:
        """Read `pulumi stack output --json`, the offline preview's `--json` (its `outputs`), or the
        `gpuPools` map alone. Raises ContractError naming every problem's key. Keys this release does
        not know are ignored (newer platforms may add outputs within a version)."""
        if isinstance(raw, Mapping) and isinstance(raw.get("outputs"), Mapping):
            raw = raw["outputs"]
        pools = raw.get("gpuPools", raw) if isinstance(raw, Mapping) else None
        if not isinstance(pools, Mapping) or not all(isinstance(p, Mapping) for p in pools.values()):
            raise ContractError("expected the platform stack's outputs (with gpuPools), `python -m tools.preview STACK "
                                "--json` output, or the gpuPools map alone")
        document = raw if pools is not raw else {}
        # Absent means the gpuPools map alone; a null, like any other value, has to be a version we read.
        version = document.get("contractVersion", _ABSENT)
        if version is not _ABSENT and (not is_number(version) or version not in READABLE_CONTRACT_VERSIONS):
            raise ContractError(f"contractVersion: {shown(version)} is not a version this release reads; it reads "
                                f"{', '.join(map(str, READABLE_CONTRACT_VERSIONS))}: upgrade gpu-aks to read this "
                                "platform's outputs")
        problems: list[str] = []
        values = _read(cls, document, "", problems, skip=("gpuPools", "cpuPools", "pools"))
        values["gpu_pools"] = _read_pools(GpuPoolEntry, pools, "gpuPools", problems)
        for key, field_name, entry in (("cpuPools", "cpu_pools", CpuPoolEntry), ("pools", "pools", PoolEntry)):
            found = document.get(key)
            if isinstance(found, Mapping) and all(isinstance(p, Mapping) for p in found.values()):
                values[field_name] = _read_pools(entry, found, key, problems)
            elif found is not None:
                problems.append(f"{key}: expected a map of pool names to pools")
        if problems:
            raise ContractError("; ".join(problems))
        return cls(**values)


def _read_pools(cls: type, pools: Mapping[Any, Mapping[str, Any]], key: str, problems: list[str]) -> dict[str, Any]:
    read = {}
    for name, pool in pools.items():
        values = _read(cls, pool, f"{key}.{name}.", problems, defaults={"name": str(name)})
        if cls is GpuPoolEntry and "offers" not in pool:
            values["offers"] = (single_size_offer(GpuPoolEntry(**values)),)
        if cls in (GpuPoolEntry, PoolEntry) and "capacityTypes" not in pool and values.get("offers"):
            values["capacity_types"] = spot_first(kind for offer in values["offers"] for kind in offer.capacity_types)
        if cls is PoolEntry and values.get("role") == "gpu" and values.get("offers") and \
                not any(offer.gpu for offer in values["offers"]):
            problems.append(f"{key}.{name}.offers: a GPU pool needs an offer with a resource (a GPU size); none has one")
            continue
        read[str(name)] = cls(**values)
    return read


def single_size_offer(pool: GpuPoolEntry) -> GpuOfferEntry:
    """The one offer an AgentPool-backed pool's single-size fields describe (what `from_json` gives a
    contract written before pools had `offers`)."""
    return GpuOfferEntry(vm_size=pool.vm_size, gpu_model=pool.gpu_model, gpu_memory_gib=pool.gpu_memory_gib,
                    gpus_per_vm=pool.gpus_per_vm, resource=pool.gpu_resource, per_node=pool.gpus_per_node,
                    mig_partition=pool.mig_partition, capacity_types=("spot",) if pool.spot else ("onDemand",))


def _read(cls: type, raw: Mapping[str, Any], prefix: str, problems: list[str], skip: tuple[str, ...] = (),
          defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    values: dict[str, Any] = dict(defaults or {})
    for spec in fields(cls):
        name, kind = spec.metadata["json"], spec.metadata["kind"]
        if name in skip:
            continue
        if name not in raw:
            if spec.metadata["reader_needs"]:
                problems.append(f"{prefix.rstrip('.')} has no {name}: this is not a gpu-aks outputs contract")
            continue
        value = raw[name]
        if value is None and spec.default is None:
            values[spec.name] = None
            continue
        try:
            values[spec.name] = kind.read_nested(value, f"{prefix}{name}", problems) if isinstance(kind, _Nested) \
                else kind.read(value)
        except ValueError:
            got = f", got {shown(value)}" if kind.show_value else ""
            problems.append(f"{prefix}{name}: expected {kind.expected}{got}")
    return values


def _write(contract: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    document = {}
    for spec in fields(contract):
        name = spec.metadata["json"]
        value = getattr(contract, spec.name)
        if name in skip or (spec.metadata["program"] and value is None):
            continue
        document[name] = None if value is None else spec.metadata["kind"].write(value)
    return document


# --- Derived documents -------------------------------------------------------------------------


def _object_schema(cls: type, description: str, additional: bool) -> dict[str, Any]:
    properties = {}
    for spec in fields(cls):
        properties[spec.metadata["json"]] = {"description": spec.metadata["doc"], **spec.metadata["kind"].schema}
    required = [spec.metadata["json"] for spec in fields(cls) if not spec.metadata["program"]]
    return {"type": "object", "description": description, "properties": properties, "required": required,
            "additionalProperties": additional}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the contract this release writes (`docs/contract.schema.json`). Readers
    (`from_json`) also accept version 1, which lacks azureName and poolLabel."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpu-aks platform outputs contract",
        **_object_schema(PlatformContract, (PlatformContract.__doc__ or "").strip() + " Other outputs (kubeconfig, a "
                         "secret) may sit beside these.", True),
        "$defs": {cls.__name__: _object_schema(cls, (cls.__doc__ or "").strip(), False)
                  for cls in (GpuPoolEntry, GpuOfferEntry, OfferPrice, PoolSharing, CpuPoolEntry, PoolEntry,
                              OfferEntry)},
    }
    return schema


def _field_table(cls: type) -> list[str]:
    lines = ["| key | type | description |", "|---|---|---|"]
    for spec in fields(cls):
        kind = spec.metadata["kind"]
        lines.append(f"| `{spec.metadata['json']}` | {kind.expected} | {spec.metadata['doc']} |")
    return lines


def contract_markdown() -> str:
    """`docs/contract.md`, generated from the field declarations."""
    lines = [
        "# The platform's outputs contract", "",
        "<!-- Generated from policies/contract.py; do not edit. Regenerate with tools/docs.py. -->", "",
        f"A gpu-aks platform stack exports this contract (version {CONTRACT_VERSION}); app stacks read it through a "
        "`StackReference`, and `gpu-aks-check --platform`, `gpu-aks-explain` and the doctor read it from `pulumi "
        "stack output --json`. `gpu_aks_policies.contract.PlatformContract.from_json` reads it, checking every type and "
        f"naming the key of each problem; it reads versions {', '.join(map(str, READABLE_CONTRACT_VERSIONS))} and "
        "refuses others. The JSON Schema is [contract.schema.json](contract.schema.json).", "",
        "Numbers may arrive as floats (a StackReference turns `1` into `1.0`); counts must still be whole. The "
        "`kubeconfig` output (a secret) sits beside these keys and is not part of the typed contract.", "",
        "## Top level", "", *_field_table(PlatformContract), "",
        "## `gpuPools.<name>`", "", (GpuPoolEntry.__doc__ or "").strip(), "", *_field_table(GpuPoolEntry), "",
        "## `gpuPools.<name>.offers[]`", "", (GpuOfferEntry.__doc__ or "").strip(), "", *_field_table(GpuOfferEntry), "",
        "## `gpuPools.<name>.offers[].hourlyPrice`", "", (OfferPrice.__doc__ or "").strip(), "",
        *_field_table(OfferPrice), "",
        "## `gpuPools.<name>.sharing`", "", (PoolSharing.__doc__ or "").strip(), "", *_field_table(PoolSharing), "",
        "## `cpuPools.<name>`", "", (CpuPoolEntry.__doc__ or "").strip(), "", *_field_table(CpuPoolEntry), "",
        "## `pools.<name>`", "", (PoolEntry.__doc__ or "").strip(), "", *_field_table(PoolEntry), "",
        "## `pools.<name>.offers[]`", "", (OfferEntry.__doc__ or "").strip(), "", *_field_table(OfferEntry), "",
        "A reader needs only `taints`, `labels`, `gpuResource` and `gpusPerNode` of a GPU pool; the rest fall back "
        "to null, empty or false when absent (older contracts). A pool without `offers` (written before pools "
        "had offers) reads as one offer made of its single-size fields, `kind` as agentPool and `sharing` as null.", "",
    ]
    return "\n".join(lines)
