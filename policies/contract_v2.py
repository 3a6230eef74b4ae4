"""Contract version 2 (and 1): the `gpuPools` and `cpuPools` maps, in one place, as Karpenter keeps an
old API version in its conversion files (kubernetes-sigs/karpenter `pkg/apis/v1/nodepool_conversion.go`).

A contract written before version 3 is read here into the pool model (`gpu_pool_model`), once, so
every reader (the explainer, `--platform`, the doctor) reads `Pool` whichever version wrote the
contract. The platform still writes version 2's maps beside version 3's `pools`, from the same
`Pool`s (`components/contract.py`), for the window the CHANGELOG states; this module goes with them.
Standard library only, no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from .fields import (
    COUNT,
    LABELS,
    OPTIONAL_TEXT,
    RESOURCE,
    TOLERATIONS,
    Object,
    Objects,
    Written,
    choice,
    json_field,
    one_of,
    read_complete,
)
from .pools.model import (
    CAPACITY_TYPES,
    CapacityType,
    DevicePluginOwner,
    Offer,
    OfferPrice,
    Pool,
    PoolBackend,
    PoolSharing,
    offer_field,
    pool_field,
    pool_named,
    spot_first,
)

__all__ = ["CpuPoolEntry", "GpuOfferEntry", "GpuPoolEntry", "MetricsExporter", "gpu_pool_model", "read_pools",
           "single_size_offer"]

#: Who exports the pool's GPU metrics: gpu-aks's DCGM exporter (`gpu-aks:observability`), or nobody here.
MetricsExporter = Literal["gpu-aks", "none"]


@dataclass(frozen=True)
class CpuPoolEntry(Written):
    """A CPU user pool."""

    name: str = pool_field("name")
    azure_name: str | None = pool_field("azureName")
    pool_label: dict[str, str] = pool_field("poolLabel")
    vm_size: str | None = pool_field("vmSize")
    min_count: int | None = pool_field("minCount")
    max_count: int | None = pool_field("maxCount")
    taints: tuple[str, ...] = pool_field("taints")
    labels: dict[str, str] = pool_field("labels")
    spot: bool = pool_field("spot")


@dataclass(frozen=True)
class GpuOfferEntry(Written):
    """One VM size a GPU pool may bring, and what one of its nodes advertises. An AgentPool-backed
    pool has one offer; a NodePool-backed (NAP) pool one per VM size it may choose."""

    vm_size: str | None = json_field("vmSize", OPTIONAL_TEXT, "The VM size (null only when derived from an older "
                                     "contract that had none).", None)
    gpu_model: str | None = offer_field("gpuModel")
    gpu_memory_gib: int | None = offer_field("gpuMemoryGiB")
    gpus_per_vm: int | None = offer_field("gpusPerVm")
    resource: str = json_field("resource", RESOURCE, "The extended resource a pod asks for: nvidia.com/gpu, or "
                               "nvidia.com/mig-<profile> under migStrategy mixed.", "", reader_needs=True)
    per_node: int = json_field("perNode", COUNT, "How many of `resource` one node advertises: GPUs, MIG instances, or "
                               "GPUs times the sharing replicas.", 0, reader_needs=True)
    mig_partition: str | None = offer_field("migPartition")
    capacity_types: tuple[CapacityType, ...] = offer_field("capacityTypes")
    hourly_price: OfferPrice | None = json_field("hourlyPrice", Object(OfferPrice), "The list price of one node an hour "
                                                 "(on-demand and Spot), or null when the platform had none.", None)


@dataclass(frozen=True)
class GpuPoolEntry(Written):
    """A GPU pool: everything a pod needs to land there, already worked out. `offers` is what a reader
    reads; the single-size fields (vmSize ... accelerator) describe an AgentPool-backed pool's one
    offer, and a NodePool-backed pool's first offer or null."""

    name: str = pool_field("name")
    kind: PoolBackend = json_field("kind", one_of(PoolBackend), "What backs the pool: an AKS AgentPool (agentPool) or "
                                   "a NAP Karpenter NodePool (nodePool); agentPool when absent.", "agentPool")
    azure_name: str | None = pool_field("azureName")
    pool_label: dict[str, str] = pool_field("poolLabel")
    vm_size: str | None = pool_field("vmSize")
    gpu_model: str | None = json_field("gpuModel", OPTIONAL_TEXT, "The GPU model (\"T4\", \"A100 80GB\", \"H100\").",
                                       None)
    gpu_memory_gib: int | None = json_field("gpuMemoryGiB", COUNT, "Memory of one GPU in GiB.", None)
    gpus_per_vm: int | None = json_field("gpusPerVm", COUNT, "Physical GPUs per VM.", None)
    gpus_per_node: int = json_field("gpusPerNode", COUNT, "How many of `gpuResource` one node offers (MIG "
                                    "instances count one each; on a shared pool, GPUs times the sharing replicas).", 0,
                                    reader_needs=True)
    gpu_resource: str = json_field("gpuResource", RESOURCE, "The extended resource a pod asks for: nvidia.com/gpu, or "
                                   "nvidia.com/mig-<profile> under migStrategy mixed.", "", reader_needs=True)
    gpu_instance_profile: str | None = json_field("gpuInstanceProfile", OPTIONAL_TEXT, "The MIG profile (MIG1g ...), "
                                                  "or null.", None)
    mig_partition: str | None = json_field("migPartition", OPTIONAL_TEXT, "The MIG partition (1g.10gb ...), or null.",
                                           None)
    accelerator: str | None = json_field("accelerator", OPTIONAL_TEXT, "The nvidia.com/gpu.accelerator label value.",
                                         None)
    spot: bool = pool_field("spot")
    min_count: int | None = pool_field("minCount")
    max_count: int | None = pool_field("maxCount")
    taints: tuple[str, ...] = pool_field("taints", reader_needs=True)
    labels: dict[str, str] = pool_field("labels", reader_needs=True)
    device_plugin: DevicePluginOwner | None = json_field(
        "devicePlugin", choice(get_args(DevicePluginOwner), " or ".join(get_args(DevicePluginOwner)) + " or null",
                               nullable=True),
        "Who runs the device plugin on the pool: gpu-aks's DaemonSet, or something else (driver: None); null on a pool "
        "that hands out its GPUs through DRA (version 3's `dra`).", None)
    dcgm_exporter: MetricsExporter | None = json_field(
        "dcgmExporter", choice(get_args(MetricsExporter), " or ".join(get_args(MetricsExporter))),
        "Whether gpu-aks's DCGM exporter runs on the pool's nodes (the doctor then expects a Ready exporter pod "
        "on each); absent in contracts written before gpu-aks 0.3.", None)
    tolerations: tuple[dict[str, str], ...] = json_field("tolerations", TOLERATIONS, "The tolerations a pod needs "
                                                         "for the pool's taints.", ())
    node_selector: dict[str, str] = json_field("nodeSelector", LABELS, "The nodeSelector that pins a pod to the pool's "
                                               "GPU nodes.", {})
    offers: tuple[GpuOfferEntry, ...] = json_field("offers", Objects(GpuOfferEntry), "The GPUs the pool may bring, one "
                                                   "offer per VM size; derived from the single-size fields when absent.",
                                                   ())
    sharing: PoolSharing | None = json_field("sharing", Object(PoolSharing), "How pods share a GPU (time-slicing or "
                                             "MPS), or null: each pod gets whole GPUs or MIG instances.", None)
    capacity_types: tuple[CapacityType, ...] = json_field(
        "capacityTypes", CAPACITY_TYPES, "How the pool's nodes may be bought, over its offers: onDemand, spot, or both "
        "(a NAP NodePool with both tries Spot first, whatever the order, and falls back to on-demand; `spot` is then "
        "false). Derived from the offers when absent.", ("onDemand",))

    @property
    def spot_only(self) -> bool:
        """Every node of the pool is a Spot VM."""
        return self.capacity_types == ("spot",)


def single_size_offer(pool: GpuPoolEntry) -> GpuOfferEntry:
    """The one offer an AgentPool-backed pool's single-size fields describe (what the reader gives a
    contract written before pools had `offers`)."""
    return GpuOfferEntry(vm_size=pool.vm_size, gpu_model=pool.gpu_model, gpu_memory_gib=pool.gpu_memory_gib,
                         gpus_per_vm=pool.gpus_per_vm, resource=pool.gpu_resource, per_node=pool.gpus_per_node,
                         mig_partition=pool.mig_partition, capacity_types=("spot",) if pool.spot else ("onDemand",))


def read_pools(cls: type, pools: Mapping[Any, Mapping[str, Any]], key: str, problems: list[str]) -> dict[str, Any]:
    """Version 2's `gpuPools` (`cls` GpuPoolEntry) or `cpuPools` (CpuPoolEntry) map, each problem named
    by its key. A GPU pool without `offers` reads as the one offer of its single-size fields, and its
    `capacityTypes` as its offers'."""
    read = {}
    for name, pool in pools.items():
        values = read_complete(cls, pool, f"{key}.{pool_named(name)}.", problems, defaults={"name": str(name)})
        if values is None:
            continue
        if cls is GpuPoolEntry and "offers" not in pool:
            values["offers"] = (single_size_offer(GpuPoolEntry(**values)),)
        if cls is GpuPoolEntry and "capacityTypes" not in pool and values.get("offers"):
            values["capacity_types"] = spot_first(kind for offer in values["offers"] for kind in offer.capacity_types)
        read[str(name)] = cls(**values)
    return read


def gpu_pool_model(pool: GpuPoolEntry) -> Pool:
    """A version-2 GPU pool as the pool model: a contract written before version 3 is read into it
    here, once, so every reader reads one shape whichever version wrote the contract."""
    def offer(each: GpuOfferEntry) -> Offer:
        return Offer(vm_size=each.vm_size or "", capacity_types=each.capacity_types, gpu_model=each.gpu_model,
                     gpu_memory_gib=each.gpu_memory_gib, gpus_per_vm=each.gpus_per_vm, resource=each.resource,
                     per_node=each.per_node, mig_partition=each.mig_partition, hourly_price=each.hourly_price,
                     gpu_instance_profile=pool.gpu_instance_profile if each.mig_partition else None)
    # gpu-aks writes an AgentPool-backed GPU pool from `gpuPools`, a NodePool-backed one from `gpuNodePools`.
    section = "gpuNodePools" if pool.kind == "nodePool" else "gpuPools"
    return Pool(name=pool.name, key=f"{section}[{pool.name}]", role="gpu", backend=pool.kind,
                azure_name=pool.azure_name, offers=tuple(offer(each) for each in pool.offers),
                min_count=pool.min_count, max_count=pool.max_count, spot=pool.spot, taints=pool.taints,
                labels=pool.labels, sharing=pool.sharing, device_plugin=pool.device_plugin,
                exporter=pool.dcgm_exporter == "gpu-aks")



def cpu_pool_model(pool: CpuPoolEntry) -> Pool:
    """A version-2 CPU pool as the pool model: one offer, its VM size (what version 3 writes for it)."""
    capacity: tuple[CapacityType, ...] = ("spot",) if pool.spot else ("onDemand",)
    return Pool(name=pool.name, key=f"cpuPools[{pool.name}]", role="cpu", backend="agentPool",
                azure_name=pool.azure_name, offers=(Offer(vm_size=pool.vm_size, capacity_types=capacity),)
                if pool.vm_size else (), min_count=pool.min_count, max_count=pool.max_count, spot=pool.spot,
                taints=pool.taints, labels=pool.labels)

#: What both versions say of a GPU pool and of each of its offers, by the model's field and version 3's
#: key: readers of either version (an app helper reads `gpuPools` first if it predates version 3) must
#: land a pod alike.
_GPU_POOL_FACTS = (("backend", "backend"), ("azure_name", "azureName"), ("min_count", "minCount"),
                   ("max_count", "maxCount"), ("spot", "spot"), ("taints", "taints"), ("labels", "labels"),
                   ("sharing", "sharing"), ("device_plugin", "devicePlugin"), ("exporter", "exporter"))
_OFFER_FACTS = ("vm_size", "capacity_types", "gpu_model", "gpu_memory_gib", "gpus_per_vm", "resource", "per_node",
                "mig_partition", "hourly_price")
_CPU_POOL_FACTS = (("azure_name", "azureName"), ("vm_size", "offers"), ("min_count", "minCount"),
                   ("max_count", "maxCount"), ("taints", "taints"), ("labels", "labels"), ("spot", "spot"))


def disagreements(gpu_pools: Mapping[str, GpuPoolEntry], cpu_pools: Mapping[str, CpuPoolEntry],
                  pools: Mapping[str, Pool]) -> list[str]:
    """Where a contract's version 2 (`gpuPools`, `cpuPools`) and version 3 (`pools`) say different things
    of a pool, each problem naming both keys: such a contract is refused, since each reader would believe
    one of them (the explainer `pools`, an older app helper `gpuPools`)."""
    problems = []
    v3_gpu = {name: pool for name, pool in pools.items() if pool.role == "gpu"}
    v3_cpu = {name: pool for name, pool in pools.items() if pool.role == "cpu"}
    for v3, v2, v2_key, role in ((v3_gpu, gpu_pools, "gpuPools", "GPU"), (v3_cpu, cpu_pools, "cpuPools", "CPU")):
        for name in (*(name for name in v3 if name not in v2), *(name for name in v2 if name not in v3)):
            where, lacking = ("pools", v2_key) if name in v3 else (v2_key, "pools")
            problems.append(f"{where}.{pool_named(name)}: a {role} pool that {lacking} lacks; the contract's two versions "
                            "must list the same pools")
    for name, entry in gpu_pools.items():
        if name in v3_gpu:
            written, read = v3_gpu[name], gpu_pool_model(entry)
            differ = [key for field, key in _GPU_POOL_FACTS if getattr(written, field) != getattr(read, field)]
            offers = tuple(offer for offer in written.offers if offer.resource)
            if len(offers) != len(read.offers) or any(
                    getattr(mine, fact) != getattr(theirs, fact)
                    for mine, theirs in zip(offers, read.offers, strict=False) for fact in _OFFER_FACTS):
                differ.append("offers")
            # Version 2 also says how to select the pool's nodes: labels its nodes must carry (version 3's
            # `labels`), or a pod pinned by `gpuPools` would land elsewhere than one placed by `pools`.
            differ += [key for key, selected in (("nodeSelector", entry.node_selector), ("poolLabel", entry.pool_label))
                       if not selected.items() <= written.labels.items()]
            if differ:
                problems.append(_disagree(name, "gpuPools", differ))
    for name, cpu in cpu_pools.items():
        if name in v3_cpu:
            pool = v3_cpu[name]
            differ = [key for field, key in _CPU_POOL_FACTS
                      if (pool.vm_size if field == "vm_size" else getattr(pool, field)) != getattr(cpu, field)]
            if differ:
                problems.append(_disagree(name, "cpuPools", differ))
    return problems


def _disagree(name: str, v2_key: str, keys: list[str]) -> str:
    shown = pool_named(name)
    return (f"pools.{shown} and {v2_key}.{shown} disagree ({', '.join(keys)}): the contract's version 3 and version 2 "
            "must say the same of a pool, or readers of each land pods differently; write the contract again from "
            "the platform's outputs")
