"""The GPU pool kind: `gpu-aks:gpuPools`, each an autoscaled `AgentPool` of one NVIDIA GPU size.

Its settings section (`GPU_POOL`: the keys every pool shares, MIG and the GPU driver), its AgentPool
body, its facts and its one offer: the size's GPUs (or MIG instances under `gpuInstanceProfile`),
asked for as `nvidia.com/gpu` or, under the device plugin's mixed MIG strategy,
`nvidia.com/mig-<partition>`. Tainted so only pods that tolerate the GPU taint land on it; labelled
for Kubeflow (`accelerator=nvidia`) and Flyte (`nvidia.com/gpu.accelerator`, and for MIG
`nvidia.com/gpu.partition-size`) here (`_derived_gpu_labels`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.catalog import (
    ACCELERATOR_LABEL,
    ACCELERATOR_LABEL_VALUE,
    DEFAULT_GPU_TAINT,
    GPU_MODEL_LABEL,
    GPU_PARTITION_LABEL,
    GPU_RESOURCE,
    GPU_SKUS,
    POOL_LABEL,
    UNSUPPORTED_GPU_SKUS,
    GpuSku,
    gpu_sku,
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
    Shape,
    choice,
    describe,
)
from gpu_aks_policies.limits import is_whole
from gpu_aks_policies.pools.model import Offer, Pool, PoolClaims, PoolSharing
from gpu_aks_policies.scheduling import parse_taint

from components.aks_api import GPU_DRIVERS, GPU_INSTANCE_PROFILES
from components.azure_catalog import did_you_mean
from components.pools.agentpool import AgentPoolSpec
from components.pools.room import with_room
from components.pools.user import (
    UserAgentPoolKind,
    capacity_types,
    user_pool_body,
    user_pool_capacity,
    user_pool_spec,
)
from components.settings.common import POOL_MODEL, count_key
from components.settings.device_plugin import DevicePluginSettings
from components.settings.node_baseline import node_baseline_items
from components.settings.pool_upgrade import (
    GPU_POOL_UPGRADE,
    OS_SKU_CHECK,
    SPOT_UPGRADE_CHECK,
    upgrade_keys,
)
from components.settings.pools import (
    KEEP_AZURE_NAME,
    NODE_LABELS,
    NODE_TAINTS_DOC,
    POOL_KEYS_LISTED,
    POOL_NAME,
    POOL_OS_SKU,
    POOL_SURGE,
    POOL_ZONES,
    SCALE_SET_PRIORITY,
    SHARING,
    SPOT_MAX_PRICE,
    SPOT_PRICE_NEEDS_SPOT,
    GpuAgentPoolSettings,
    counts_in_order,
    pool_fields,
    pool_key,
    taints_parser,
)

if TYPE_CHECKING:
    from components.pools.kind import PlatformView


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
        if value.lower().startswith("standard_n") and isinstance(reader.raw.get("gpu"), Mapping):
            reader.warn("vmSize", f"{describe(value)} is not a size gpu-aks's catalog knows ({hint or ''}its GPU is "
                                  "taken from this pool's gpu declaration until a release knows it); `python -m "
                                  "tools.preflight` checks the declaration against Azure's SKU list")
            return value
        reader.problem("vmSize", f"{describe(value)} is not an NVIDIA GPU size gpu-aks knows; {hint}supported: "
                                 f"{', '.join(supported_vm_sizes())}; for a newer N-series size, declare its GPU: "
                                 "gpu: {model: B200, count: 8, memoryGiB: 180}")
        return value
    return sku.vm_size


#: What `gpu` holds (`_declared_gpu` reads it).
DECLARED_GPU = Shape("DeclaredGpu", "The GPU of a VM size gpu-aks's catalog does not know yet.", (
    Key("model", "The GPU model, e.g. B200.", "string", required=True),
    Key("count", "GPUs per node.", "integer", required=True),
    Key("memoryGiB", "Memory per GPU in GiB.", "integer", required=True)))


def _declared_gpu(reader: Reader, value: Any) -> GpuSku | None:
    """`gpu: {model, count, memoryGiB}`: the GPU of a size the catalog does not know yet."""
    if value is MISSING or value is None:
        return None
    example = "e.g. {model: B200, count: 8, memoryGiB: 180}"
    if not isinstance(value, Mapping):
        reader.problem("gpu", f"{reader.shown(value)} is not a GPU declaration ({example})")
        return None
    reader.problems.unknown_keys(value, reader.path("gpu"), ("model", "count", "memoryGiB"))
    model, count, memory = value.get("model"), value.get("count"), value.get("memoryGiB")
    ok = True
    if not isinstance(model, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,40}", model):
        reader.problem("gpu.model", f"{reader.shown(model)} is not a GPU model name ({example})")
        ok = False
    # Whole floats count: the component provider's inputs arrive as JSON numbers (8.0).
    if not is_whole(count) or not 1 <= count <= 16:
        reader.problem("gpu.count", f"{reader.shown(count)} is not a GPU count per node from 1 to 16")
        ok = False
    if not is_whole(memory) or not 1 <= memory <= 4096:
        reader.problem("gpu.memoryGiB", f"{reader.shown(memory)} is not a GPU memory in GiB from 1 to 4096")
        ok = False
    vm_size = reader.raw.get("vmSize")
    if ok and isinstance(vm_size, str) and gpu_sku(vm_size) is not None:
        known = gpu_sku(vm_size)
        assert known is not None
        reader.problem("gpu", f"{describe(vm_size)} is in the catalog ({known.gpus} x {known.model}, "
                              f"{known.gpu_memory_gib} GiB); remove the gpu declaration")
        return None
    if not ok or not isinstance(vm_size, str) or not is_whole(count) or not is_whole(memory):
        return None
    slug = re.sub(r"[^a-z0-9]+", "-", str(model).lower()).strip("-")
    return GpuSku(vm_size, "declared", str(model), int(count), int(memory), f"nvidia-{slug}")


def pool_sku(vm_size: str, declared: GpuSku | None) -> GpuSku | None:
    """A GPU pool's size: the catalog's entry, else the stack's declaration of a size it lacks."""
    return gpu_sku(vm_size) or declared


def _mig_needs_a_mig_gpu(reader: Reader) -> None:
    profile, sku = reader.get("gpuInstanceProfile"), pool_sku(reader.get("vmSize"), reader.get("gpu"))
    if profile and sku is not None and not sku.supports_mig:
        reader.reject("gpuInstanceProfile", f"{describe(profile)} needs a MIG-capable GPU, but {sku.vm_size} has "
                                            f"{sku.model}; MIG works on A100, H100 and H200 sizes")


def _ubuntu_only_sizes(reader: Reader) -> None:
    sku, os_sku = gpu_sku(reader.get("vmSize")), reader.get("osSKU")
    if sku is not None and sku.ubuntu_only and not os_sku.startswith("Ubuntu"):
        reader.problem("osSKU", f"{describe(os_sku)} cannot run {sku.vm_size}: AKS installs its NVIDIA driver only on "
                                "Ubuntu (karpenter-provider-azure pkg/utils/supported-gpus.yaml); use Ubuntu")


def _needs_a_no_schedule_taint(reader: Reader) -> None:
    taints = reader.get("nodeTaints")
    if taints is not None and not any(parse_taint(t)["effect"] == "NoSchedule" for t in taints):
        reader.problem("nodeTaints", f"{describe(list(taints))} has no NoSchedule taint; a GPU pool needs one so "
                                     f"only GPU pods land on it (the default is {describe(DEFAULT_GPU_TAINT)})")


def _derived_gpu_labels(reader: Reader) -> dict[str, str]:
    """The labels gpu-aks sets on a GPU pool's nodes."""
    derived = {ACCELERATOR_LABEL: ACCELERATOR_LABEL_VALUE, POOL_LABEL: reader.get("name")}
    sku = pool_sku(reader.get("vmSize"), reader.get("gpu")) if reader.ok("vmSize") and reader.ok("gpu") else None
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


# --- Sharing (time-slicing and MPS: NVIDIA's device-plugin config) ------------------------------


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


def _gpu_pool(reader: Reader, plugin: DevicePluginSettings | None = None) -> GpuAgentPoolSettings:
    attrs = pool_fields(reader)
    attrs["labels"] = {**reader.get("nodeLabels"), **_derived_gpu_labels(reader)}
    return GpuAgentPoolSettings(**attrs, sku=pool_sku(attrs["vm_size"], reader.get("gpu")), plugin=plugin)


GPU_POOL = Section("gpuPools[]", "One GPU pool: the CPU pool keys, MIG, the GPU driver and GPU sharing.", (
    POOL_NAME,
    Key("vmSize", "An NVIDIA GPU size gpu-aks knows (docs/configuration.md, \"GPU sizes a GPU pool accepts\"); "
        "retired sizes are refused with their replacement.", "string", None, parse=_gpu_vm_size, attr="vm_size",
        source=f"{POOL_MODEL} vmSize", create_only=True, required=True),
    *node_baseline_items(),
    count_key("minCount", "Fewest nodes the autoscaler keeps (idle GPUs cost nothing at 0).", 0, f"{POOL_MODEL} minCount"),
    count_key("maxCount", "Most nodes the autoscaler adds.", 2, f"{POOL_MODEL} maxCount"),
    counts_in_order(0),
    SCALE_SET_PRIORITY, SPOT_MAX_PRICE, SPOT_PRICE_NEEDS_SPOT, POOL_ZONES, POOL_OS_SKU, OS_SKU_CHECK, POOL_SURGE,
    *upgrade_keys(GPU_POOL_UPGRADE), SPOT_UPGRADE_CHECK, KEEP_AZURE_NAME,
    Key("gpu", "The GPU of a size the catalog does not know yet: `{model, count, memoryGiB}` (a warning; the "
        "preflight checks it against Azure's SKU list).", "object", None, parse=_declared_gpu,
        source="Azure resource SKUs capability GPUs", shape=DECLARED_GPU),
    choice("gpuInstanceProfile", "MIG partition of each GPU (A100, H100 and H200 sizes).", GPU_INSTANCE_PROFILES, None,
           attr="gpu_instance_profile", source=f"{POOL_MODEL} gpuInstanceProfile", create_only=True),
    Check(_mig_needs_a_mig_gpu, reads=("vmSize", "gpuInstanceProfile"),
          doc="`gpuInstanceProfile` needs a MIG-capable `vmSize`."),
    Check(_ubuntu_only_sizes, reads=("vmSize", "osSKU"), doc="GB200, GB300 and RTX PRO sizes need an Ubuntu `osSKU`."),
    Section("gpuProfile", "How AKS sets up the GPU.", (
        choice("driver", "`Install`: AKS installs the NVIDIA driver; `None`: bring your own (e.g. the GPU Operator).",
               GPU_DRIVERS, "Install", attr="gpu_driver", source=f"{POOL_MODEL} gpuProfile.driver", create_only=True),
    ), flatten=True),
    Key("nodeTaints", NODE_TAINTS_DOC + " Needs a NoSchedule taint.", "list of strings", [DEFAULT_GPU_TAINT],
        parse=taints_parser((DEFAULT_GPU_TAINT,)), source=f"{POOL_MODEL} nodeTaints"),
    Check(_needs_a_no_schedule_taint, reads=("nodeTaints",), doc="A GPU pool has a NoSchedule taint."),
    NODE_LABELS,
    Check(_labels_agree_with_derived, doc="`nodeLabels` do not contradict the labels gpu-aks sets (accelerator, "
                                          "GPU model, MIG partition, pool)."),
    SHARING,
    Check(_sharing_fits_the_pool, reads=("gpuInstanceProfile", "sharing.strategy"),
          doc="`sharing.strategy: mps` cannot share a MIG pool (NVIDIA `internal/plugin/mps.go`)."),
    Check(_shares_fit_max_pods, reads=("vmSize", "gpuInstanceProfile", "maxPods", "sharing.replicas"),
          doc="A shared node's shares (GPUs x `replicas`) beyond its `maxPods` are warned about: no pod can use them."),
), build=_gpu_pool, listed=(*POOL_KEYS_LISTED, "gpu", "gpuInstanceProfile", "gpuProfile", "sharing"))


GPU_POOLS = ListOf("gpuPools", "GPU pools, each an AgentPool of its own; tainted, labelled and served by the device "
                   "plugin.", GPU_POOL, pool_key, noun="pools")


def gpu_sizes_markdown() -> str:
    """The sizes `gpuPools[].vmSize` accepts and those it refuses, from the catalog the parser reads
    (`gpu_aks_policies.catalog`): until 0.3.1 they were listed only in an error message."""
    lines = ["## GPU sizes a GPU pool accepts", "",
             "`gpuPools[].vmSize` takes these sizes (`gpu_aks_policies.catalog`, which the parser reads). MIG: the "
             "`gpuInstanceProfile` values the size takes and the partition each makes; `gpusPerNode` is then GPUs x "
             "instances per GPU (MIG1g: 7, MIG2g: 3, MIG3g: 2, MIG4g and MIG7g: 1).", "",
             "| vmSize | GPU | GPUs per VM | GPU memory (GiB) | MIG (`gpuInstanceProfile`: partition) | notes |",
             "|---|---|---|---|---|---|"]
    for sku in GPU_SKUS.values():
        mig = ", ".join(f"{profile}: {partition}" for profile, partition in sku.mig_partitions.items()) or "no"
        notes = [note for note in (
            f"a {sku.gpu_share} share of one GPU (vGPU)" if sku.gpu_share and sku.gpu_share != "1" else "",
            f"{sku.arch} host" if sku.arch != "amd64" else "",
            "Ubuntu only" if sku.ubuntu_only else "") if note]
        lines.append(f"| `{sku.vm_size}` | {sku.model} | {sku.gpus} | {sku.gpu_memory_gib} | {mig} | "
                     f"{'; '.join(notes)} |")
    lines += ["", "Refused, with the reason and the replacement the error names:", "",
              "| vmSize | why | use instead |", "|---|---|---|"]
    for unsupported in UNSUPPORTED_GPU_SKUS.values():
        lines.append(f"| `{unsupported.vm_size}` | {unsupported.reason} | {unsupported.replacement} |")
    return "\n".join(lines) + "\n"


class GpuPoolKind(UserAgentPoolKind):
    config_key = "gpuPools"
    section = GPU_POOLS
    component_type = "gpu-aks:index:GpuAgentPool"
    former_types: tuple[str, ...] = ("gpu-aks:index:GpuNodePool",)

    def read(self, reader: Reader, built: Mapping[str, Any]) -> GpuAgentPoolSettings:
        # Which pools gpu-aks's device plugin serves is devicePlugin.pools, stored there only.
        pool: GpuAgentPoolSettings = reader.build(plugin=built["devicePlugin"])
        return pool

    def agent_pool(self, pool: GpuAgentPoolSettings) -> AgentPoolSpec:
        return user_pool_spec(pool, user_pool_body(pool, gpu_driver=pool.gpu_driver,
                                                   gpu_instance_profile=pool.gpu_instance_profile))

    def reference_markdown(self) -> str:
        return gpu_sizes_markdown()

    def offers(self, pool: GpuAgentPoolSettings) -> tuple[Offer, ...]:
        # A shared pool's node advertises its GPUs (or MIG instances) times the replicas.
        return (Offer.sized(pool.vm_size, pool.gpu, resource=pool.gpu_resource, per_node=pool.advertised_per_node,
                            gpu_instance_profile=pool.gpu_instance_profile, mig_partition=pool.mig_partition,
                            capacity_types=capacity_types(pool)),)

    def facts(self, pool: GpuAgentPoolSettings, settings: PlatformView) -> Pool:
        key = f"{self.config_key}[{pool.name}]"
        through_dra = settings.dra.serves(pool.name)
        mig = pool.gpu_instance_profile is not None
        return with_room(Pool(
            name=pool.name, key=key, backend="agentPool", role="gpu", azure_name=pool.azure_name,
            offers=self.offers(pool), min_count=pool.min_count, max_count=pool.max_count, spot=pool.spot,
            zones=pool.availability_zones, taints=pool.taints, labels=dict(pool.labels),
            # A DRA pool has no device plugin at all: NVIDIA's DRA driver hands out its GPUs (`gpu-aks:dra`).
            device_plugin=None if through_dra else "gpu-aks" if pool.device_plugin else "external",
            dra=PoolClaims(settings.dra.device_classes(mig), GPU_RESOURCE if settings.dra.maps_extended_resource(mig)
                           else None) if through_dra else None,
            sharing=PoolSharing(pool.sharing.strategy, pool.sharing.replicas) if pool.sharing else None,
            exporter=pool.device_plugin and settings.observability.exporter_on,
            capacity=user_pool_capacity(key, pool), subnets=pool.baseline.subnets(),
            node_subnet=pool.baseline.vnet_subnet_id, create_only=pool.create_only(),
            deletes_before_replace=pool.keep_azure_name), settings, pool.baseline.max_pods)


GPU = GpuPoolKind()
