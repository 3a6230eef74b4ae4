"""What gpu-aks knows about Azure GPU VM sizes, GPU labels and taints: the one place for these facts.

Pure data and lookups, no Pulumi imports and nothing from outside `policies/`: the rules, the checker
and the explainer read from here, and the platform's `components/` import these facts from here too
(dependencies run one way, components -> policies). Sources are cited per table (Azure VM size docs, AKS
"use-nvidia-gpu" and MIG docs, NVIDIA's MIG user guide, flytekit's accelerator constants).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .limits import is_whole

# --- Labels and taints -------------------------------------------------------------------------

#: The GPU taint AKS's GPU how-to uses (learn.microsoft.com/azure/aks/use-nvidia-gpu):
#: `--node-taints sku=gpu:NoSchedule`.
DEFAULT_GPU_TAINT = "sku=gpu:NoSchedule"

#: Kubeflow Pipelines' `add_node_selector_constraint('accelerator', 'nvidia')` and the common
#: Kubernetes GPU node setups select on this.
ACCELERATOR_LABEL = "accelerator"
ACCELERATOR_LABEL_VALUE = "nvidia"

#: The label keys Flyte's accelerator requests target (Flyte docs, GPU accelerators: `nvidia.com/gpu.accelerator`,
#: `nvidia.com/gpu.partition-size`); Flyte's `gpu-device-node-label` /
#: `gpu-partition-size-node-label` must be set to these.
GPU_MODEL_LABEL = "nvidia.com/gpu.accelerator"
GPU_PARTITION_LABEL = "nvidia.com/gpu.partition-size"

#: Karpenter's Azure provider labels every GPU node it makes with the GPU's maker (`nvidia`, `amd`), and only
#: GPU nodes (karpenter-provider-azure `pkg/apis/v1beta1/labels.go`, `pkg/providers/instancetype/instancetype.go`
#: `setRequirementsGPU`): on node auto-provisioning, the label every NVIDIA GPU node carries.
SKU_GPU_MANUFACTURER_LABEL = "karpenter.azure.com/sku-gpu-manufacturer"

#: AKS sets this label on every node, with the pool's Azure name as its value.
AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"

#: The label gpu-aks puts on every pool it creates, with the pool's config name as its value. Unlike
#: the agentpool label it survives a create-before-delete replacement (the Azure name changes, this
#: does not), so the contract's nodeSelector, the device plugin's pinning and the smoke test use it.
POOL_LABEL = "gpu-aks.io/pool"

#: AKS adds this label and taint to every node of a Spot pool. Declaring the taint ourselves keeps
#: the AgentPool from drifting (pulumi-azure-native #959).
SPOT_LABEL = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"

#: Label prefixes AKS reserves for itself; `nodeLabels` under them are refused by the AKS API.
RESERVED_LABEL_PREFIXES = ("kubernetes.azure.com/", "kubernetes.io/", "k8s.io/")

#: The extended resource NVIDIA's device plugin advertises, and the prefix of its MIG resources
#: under `migStrategy: mixed` (`nvidia.com/mig-1g.5gb`, ...).
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
#: Whole GPUs passed through to a virtual machine: NVIDIA's sandbox device plugin (GPU Operator,
#: `sandboxWorkloads`) and KubeVirt's `permittedHostDevices` advertise each GPU model as its own
#: resource, named after the PCI device in capitals (`nvidia.com/GA102GL_A10`,
#: `nvidia.com/TU104GL_Tesla_T4`, vGPU types `nvidia.com/GRID_T4-1Q`; kubevirt/kubevirt
#: `examples/vmi-gpu.yaml`, `docs/devel/host-devices-and-device-plugins.md`). The device plugin's
#: own resources (`gpu`, `mig-*`, `gpu.shared`) and HAMi's (`gpumem`, `gpucores`) are lower case.
PASSTHROUGH_GPU_RESOURCES = "nvidia.com/[A-Z]*"

# --- The NVIDIA device plugin ------------------------------------------------------------------

#: NVIDIA's upstream release at the time of writing (the AKS doc's manifest still shows v0.18.0).
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.20.0"
DEVICE_PLUGIN_NAMESPACE = "gpu-resources"
MIG_STRATEGIES = ("none", "single", "mixed")

# --- GPU sharing (NVIDIA/k8s-device-plugin v0.20.0, the image above) ----------------------------

#: How a pool's GPUs are shared, named as the keys under `sharing` in NVIDIA's config file
#: (`api/config/v1/sharing.go`: `TimeSlicing ... json:"timeSlicing"`, `MPS ... json:"mps"`).
SharingStrategy = Literal["timeSlicing", "mps"]
SHARING_STRATEGIES: tuple[str, ...] = get_args(SharingStrategy)
#: `api/config/v1/replicas.go`, `ReplicatedResource.UnmarshalJSON`: "number of replicas must be >= 2".
MIN_SHARING_REPLICAS = 2
#: `cmd/mps-control-daemon/mps/device.go`, `maxClients`: an MPS server takes 48 clients on Volta or
#: newer (16 before); every GPU in this catalog is Turing (T4) or newer, and the control daemon
#: refuses more replicas ("maximum allowed replicas exceeded").
MPS_MAX_REPLICAS = 48
#: NVIDIA sets no bound on time-slicing replicas, but no AKS node runs more than 250 pods (the
#: highest `maxPods` AKS accepts), so more replicas of one GPU than that can never all be used.
TIME_SLICING_MAX_REPLICAS = 250
#: The chart's `mps.root` (`deployments/helm/nvidia-device-plugin/values.yaml`): the host folder where
#: the MPS control daemon keeps its pipes, logs and /dev/shm; the plugin reads it as `MPS_ROOT`.
MPS_ROOT = "/run/nvidia/mps"
#: Where NVIDIA's chart points `CONFIG_FILE` (`templates/daemonset-device-plugin.yml`).
DEVICE_PLUGIN_CONFIG_FILE = "/config/config.yaml"


def sharing_max_replicas(strategy: str) -> int:
    return MPS_MAX_REPLICAS if strategy == "mps" else TIME_SLICING_MAX_REPLICAS


def sharing_phrase(strategy: str) -> str:
    """How a share is described to people: "time-sliced", "shared through MPS"."""
    return "shared through MPS" if strategy == "mps" else "time-sliced"


def sharing_name(strategy: str) -> str:
    """The strategy as docs name it: "time-slicing", "MPS"."""
    return "MPS" if strategy == "mps" else "time-slicing"

# --- MIG ---------------------------------------------------------------------------------------

#: AKS `gpuInstanceProfile` values and how many instances of each fit on one GPU (NVIDIA MIG guide).
MIG_INSTANCES_PER_GPU: Mapping[str, int] = {"MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG4g": 1, "MIG7g": 1}


_A100_40GB_MIG: Mapping[str, str] = {
    "MIG1g": "1g.5gb",
    "MIG2g": "2g.10gb",
    "MIG3g": "3g.20gb",
    "MIG4g": "4g.20gb",
    "MIG7g": "7g.40gb",
}
_A100_80GB_MIG: Mapping[str, str] = {
    "MIG1g": "1g.10gb",
    "MIG2g": "2g.20gb",
    "MIG3g": "3g.40gb",
    "MIG4g": "4g.40gb",
    "MIG7g": "7g.80gb",
}
_H100_NVL_MIG: Mapping[str, str] = {
    "MIG1g": "1g.12gb",
    "MIG2g": "2g.24gb",
    "MIG3g": "3g.47gb",
    "MIG4g": "4g.47gb",
    "MIG7g": "7g.94gb",
}
_H200_MIG: Mapping[str, str] = {
    "MIG1g": "1g.18gb",
    "MIG2g": "2g.35gb",
    "MIG3g": "3g.71gb",
    "MIG4g": "4g.71gb",
    "MIG7g": "7g.141gb",
}


# --- The catalog -------------------------------------------------------------------------------

#: Families AKS drives only under Ubuntu (karpenter-provider-azure `pkg/utils/supported-gpus.yaml`).
UBUNTU_ONLY_FAMILIES = frozenset({"ND_GB200_v6", "ND_GB300_v6", "NC_RTXPRO6000BSE_v6"})

#: The CPU architecture of a size's host, as Kubernetes names it (`kubernetes.io/arch`).
Architecture = Literal["amd64", "arm64"]


@dataclass(frozen=True)
class GpuSku:
    """One Azure VM size with NVIDIA GPUs that AKS runs with its NVIDIA driver install."""

    vm_size: str
    family: str
    model: str
    gpus: int
    gpu_memory_gib: int
    #: The `nvidia.com/gpu.accelerator` label value, named as Flyte's accelerator constants are
    #: (`T4` -> `nvidia-tesla-t4`, `A100` -> `nvidia-tesla-a100`, `A100_80GB` -> `nvidia-a100-80gb`).
    accelerator: str
    #: `gpuInstanceProfile` -> MIG partition name; empty when the GPU has no MIG.
    mig_partitions: Mapping[str, str] = field(default_factory=dict)
    #: The host's CPU architecture: the Grace Blackwell sizes run on Arm64 (Neoverse V2) hosts.
    arch: Architecture = "amd64"
    #: For a size that gets a share of one GPU (a vGPU: NC A10 v4, the smaller RTX PRO sizes), the
    #: share, such as "1/3"; the node still advertises one `nvidia.com/gpu` with `gpu_memory_gib`.
    gpu_share: str | None = None
    #: The value of Karpenter's `karpenter.azure.com/sku-gpu-name` label for this size (the accelerator
    #: token Azure/skewer parses from the size name: `Standard_NC24ads_A100_v4` -> `A100`); None where
    #: the name has no plain token to parse (`Standard_ND96asr_v4`, the GB200/GB300 and RTX PRO names),
    #: so a NodePool selects those by `node.kubernetes.io/instance-type` instead.
    karpenter_gpu_name: str | None = None

    @property
    def ubuntu_only(self) -> bool:
        """AKS installs the driver on these only under Ubuntu (supported-gpus.yaml lists `os: ["ubuntu"]`
        for the GB200/GB300 and RTX PRO sizes)."""
        return self.family in UBUNTU_ONLY_FAMILIES

    @property
    def supports_mig(self) -> bool:
        return bool(self.mig_partitions)

    def mig_partition(self, gpu_instance_profile: str) -> str:
        return self.mig_partitions[gpu_instance_profile]

    def gpus_per_node(self, gpu_instance_profile: str | None) -> int:
        """Schedulable GPUs (or MIG instances) one node of this size advertises."""
        if gpu_instance_profile is None:
            return self.gpus
        return self.gpus * MIG_INSTANCES_PER_GPU[gpu_instance_profile]


@dataclass(frozen=True)
class UnsupportedSku:
    """A GPU VM size gpu-aks refuses, with why and what to use instead."""

    vm_size: str
    reason: str
    replacement: str
    #: The `karpenter.azure.com/sku-gpu-name` Karpenter's Azure provider gives the size, where a
    #: NodePool asking for that GPU name would otherwise admit it (NV A10 v5: `A10`).
    karpenter_gpu_name: str | None = None


def _family(
    family: str, model: str, memory: int, accelerator: str, sizes: Mapping[str, int],
    mig: Mapping[str, str] | None = None, arch: Architecture = "amd64", gpu_name: str | None = None,
) -> list[GpuSku]:
    return [
        GpuSku(size, family, model, gpus, memory, accelerator, dict(mig or {}), arch, None, gpu_name)
        for size, gpus in sizes.items()
    ]


def _shares(family: str, model: str, accelerator: str, sizes: Mapping[str, tuple[str, int]],
            gpu_name: str | None = None) -> list[GpuSku]:
    """Sizes that each get a share of one GPU (share, GPU memory in GiB of that share)."""
    return [GpuSku(size, family, model, 1, memory, accelerator, {}, "amd64", share, gpu_name)
            for size, (share, memory) in sizes.items()]


#: Every size below is one AKS installs the NVIDIA driver on: Azure/karpenter-provider-azure
#: `pkg/utils/supported-gpus.yaml` (the list AKS node auto-provisioning and its node bootstrap share;
#: commit 352646f, 2026-08) has each with `gpu: nvidia`. GPU counts and memory: the Azure VM size pages
#: (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/<series>).
_SUPPORTED: list[GpuSku] = [
    # NCasT4_v3: the minimum size AKS recommends for GPU pools today.
    *_family("NCasT4_v3", "T4", 16, "nvidia-tesla-t4", {
        "Standard_NC4as_T4_v3": 1, "Standard_NC8as_T4_v3": 1, "Standard_NC16as_T4_v3": 1,
        "Standard_NC64as_T4_v3": 4,
    }, gpu_name="T4"),
    # NC A100 v4: A100 80GB PCIe, the replacement Azure names for the retired NCv3 (V100).
    *_family("NC_A100_v4", "A100 80GB", 80, "nvidia-a100-80gb", {
        "Standard_NC24ads_A100_v4": 1, "Standard_NC48ads_A100_v4": 2, "Standard_NC96ads_A100_v4": 4,
    }, _A100_80GB_MIG, gpu_name="A100"),
    # ND A100 v4: 8x A100 SXM, 40GB (asr) or 80GB (amsr).
    *_family("ND_A100_v4", "A100 40GB", 40, "nvidia-tesla-a100", {"Standard_ND96asr_v4": 8}, _A100_40GB_MIG),
    *_family("NDm_A100_v4", "A100 80GB", 80, "nvidia-a100-80gb", {"Standard_ND96amsr_A100_v4": 8}, _A100_80GB_MIG,
             gpu_name="A100"),
    # NC H100 v5: H100 NVL (94GB), 1 or 2 per VM (nc-h100-v5-series).
    *_family("NC_H100_v5", "H100 NVL", 94, "nvidia-h100-nvl", {
        "Standard_NC40ads_H100_v5": 1, "Standard_NC80adis_H100_v5": 2,
    }, _H100_NVL_MIG, gpu_name="H100"),
    # ND H100 v5 / ND H200 v5: 8x SXM. supported-gpus.yaml (commit 021c778) also lists the is (no
    # InfiniBand), isf and isrf variants of both (standardNDSH100v5Family, standardNDSFH100v5Family,
    # standardNDS{,F}H200v5Family): skewer gives them the same `sku-gpu-name`, so an H100 or H200 NodePool
    # without a GPU count may bring them.
    *_family("ND_H100_v5", "H100 80GB", 80, "nvidia-h100-80gb", {
        "Standard_ND96isr_H100_v5": 8, "Standard_ND96is_H100_v5": 8, "Standard_ND96isf_H100_v5": 8,
        "Standard_ND96isrf_H100_v5": 8,
    }, _A100_80GB_MIG, gpu_name="H100"),
    *_family("ND_H200_v5", "H200", 141, "nvidia-h200-141gb", {
        "Standard_ND96isr_H200_v5": 8, "Standard_ND96is_H200_v5": 8, "Standard_ND96isf_H200_v5": 8,
        "Standard_ND96isrf_H200_v5": 8,
    }, _H200_MIG, gpu_name="H200"),
    # ND GB200 v6 / ND GB300 v6: 4 Blackwell (192 GB HBM3e) or Blackwell Ultra (288 GB) GPUs on two Grace
    # (Arm64) CPUs per VM (nd-gb200-v6-series, nd-gb300-v6-series). supported-gpus.yaml lists them for
    # Ubuntu only; AKS's support shows in its node-image code (the `2404gen2arm64gb200containerd` image
    # of karpenter-provider-azure `pkg/fake/nodeimageversionsapi.go`), not yet in the AKS GPU docs.
    # MIG: not offered here until AKS documents `gpuInstanceProfile` on them.
    *_family("ND_GB200_v6", "GB200", 192, "nvidia-gb200", {"Standard_ND128isr_NDR_GB200_v6": 4}, arch="arm64"),
    *_family("ND_GB300_v6", "GB300", 288, "nvidia-gb300", {"Standard_ND128isr_GB300_v6": 4}, arch="arm64"),
    # NC A10 v4: a share of one A10 (24 GB) per VM (nc-a10-v4-series: 1/3, 2/3, 1). AKS installs NVIDIA's
    # converged GRID/CUDA driver on them (karpenter-provider-azure `pkg/utils/gpu.go`
    # ConvergedGPUDriverSizes), and the device plugin sees one GPU with the share's memory.
    *_shares("NC_A10_v4", "A10", "nvidia-a10", {
        "Standard_NC8ads_A10_v4": ("1/3", 8), "Standard_NC16ads_A10_v4": ("2/3", 16),
        "Standard_NC32ads_A10_v4": ("1", 24),
    }, gpu_name="A10"),
    # NC RTX PRO 6000 BSE v6: RTX PRO 6000 Blackwell Server Edition (96 GB), GRID v20 driver (gpu.go
    # rtxPro6000GPUDriverSizes), Ubuntu only. The whole-GPU sizes; the 1/4 and 1/2 sizes are vGPU shares.
    *_family("NC_RTXPRO6000BSE_v6", "RTX PRO 6000", 96, "nvidia-rtx-pro-6000", {
        "Standard_NC144ds_xl_RTXPRO6000BSE_v6": 1, "Standard_NC144lds_xl_RTXPRO6000BSE_v6": 1,
        "Standard_NC288ds_xl_RTXPRO6000BSE_v6": 2, "Standard_NC288lds_xl_RTXPRO6000BSE_v6": 2,
    }),
    *_shares("NC_RTXPRO6000BSE_v6", "RTX PRO 6000", "nvidia-rtx-pro-6000", {
        "Standard_NC24lds_xl_RTXPRO6000BSE_v6": ("1/4", 24), "Standard_NC36ds_xl_RTXPRO6000BSE_v6": ("1/4", 24),
        "Standard_NC36lds_xl_RTXPRO6000BSE_v6": ("1/4", 24), "Standard_NC72ds_xl_RTXPRO6000BSE_v6": ("1/2", 48),
        "Standard_NC72lds_xl_RTXPRO6000BSE_v6": ("1/2", 48),
    }),
]


def _unsupported(sizes: list[str], reason: str, replacement: str, gpu_name: str | None = None) -> list[UnsupportedSku]:
    return [UnsupportedSku(size, reason, replacement, gpu_name) for size in sizes]


_UNSUPPORTED: list[UnsupportedSku] = [
    *_unsupported(
        ["Standard_NC6", "Standard_NC12", "Standard_NC24", "Standard_NC24r"],
        "NC-series (Tesla K80) was retired by Azure on 2023-09-06",
        "Standard_NC4as_T4_v3 (NCasT4_v3, T4) or Standard_NC24ads_A100_v4 (NC A100 v4)",
    ),
    *_unsupported(
        ["Standard_NC6s_v2", "Standard_NC12s_v2", "Standard_NC24s_v2", "Standard_NC24rs_v2"],
        "NCv2-series (Tesla P100) was retired by Azure on 2023-09-06",
        "Standard_NC24ads_A100_v4 (NC A100 v4)",
    ),
    *_unsupported(
        ["Standard_ND6s", "Standard_ND12s", "Standard_ND24s", "Standard_ND24rs"],
        "ND-series (Tesla P40) was retired by Azure on 2023-09-06",
        "Standard_NC24ads_A100_v4 (NC A100 v4)",
    ),
    *_unsupported(
        ["Standard_NV6", "Standard_NV12", "Standard_NV24"],
        "NV-series (Tesla M60) was retired by Azure on 2023-09-06",
        "Standard_NC4as_T4_v3 (NCasT4_v3, T4)",
    ),
    *_unsupported(
        ["Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3", "Standard_NC24rs_v3"],
        "NCv3-series (Tesla V100) was retired by Azure on 2025-09-30",
        "Standard_NC24ads_A100_v4 (NC A100 v4, the replacement Azure names)",
    ),
    *_unsupported(
        ["Standard_NV4as_v4", "Standard_NV8as_v4", "Standard_NV16as_v4", "Standard_NV32as_v4"],
        "NVv4-series (AMD Radeon Instinct MI25) is not supported on AKS",
        "an NVIDIA size such as Standard_NC4as_T4_v3",
    ),
    *_unsupported(
        ["Standard_ND96isr_MI300X_v5"],
        "ND MI300X v5 (AMD Instinct MI300X) needs AMD's device plugin (amd.com/gpu), which gpu-aks does "
        "not install",
        "an NVIDIA size such as Standard_ND96isr_H100_v5, or run AMD's GPU operator outside gpu-aks",
    ),
    *_unsupported(
        ["Standard_NV6ads_A10_v5", "Standard_NV12ads_A10_v5", "Standard_NV18ads_A10_v5",
         "Standard_NV36ads_A10_v5", "Standard_NV36adms_A10_v5", "Standard_NV72ads_A10_v5"],
        "NV A10 v5 sizes are graphics (virtual desktop) sizes; gpu-aks runs compute pools on the NC sizes "
        "of the same GPU",
        "Standard_NC8ads_A10_v4 (NC A10 v4) or Standard_NC4as_T4_v3 (NCasT4_v3)",
        # skewer parses `A10` from these names as from the NC A10 v4 ones, supported-gpus.yaml marks them
        # `gpu: nvidia`, and ARM's GPU count is 1: an `A10` requirement admits them, from 1/6 of a GPU.
        gpu_name="A10",
    ),
]

GPU_SKUS: Mapping[str, GpuSku] = {sku.vm_size.lower(): sku for sku in _SUPPORTED}
UNSUPPORTED_GPU_SKUS: Mapping[str, UnsupportedSku] = {sku.vm_size.lower(): sku for sku in _UNSUPPORTED}


def gpu_sku(vm_size: str) -> GpuSku | None:
    """The catalog entry for a supported NVIDIA size (case-insensitive, as Azure treats sizes)."""
    return GPU_SKUS.get(vm_size.lower())


def unsupported_gpu_sku(vm_size: str) -> UnsupportedSku | None:
    return UNSUPPORTED_GPU_SKUS.get(vm_size.lower())


def is_gpu_vm_size(vm_size: str) -> bool:
    """Whether a VM size has GPUs: anything in the catalog, retired or not, and every Azure N-series
    size (`Standard_N...`), which is the GPU family by Azure's naming."""
    lowered = vm_size.lower()
    return lowered in GPU_SKUS or lowered in UNSUPPORTED_GPU_SKUS or lowered.startswith("standard_n")


#: Accelerator label values of GPUs Azure no longer sells, for requests that still name them
#: (Flyte's `V100`, `K80`, `P100`, `M60` constants).
RETIRED_ACCELERATORS: Mapping[str, str] = {
    "nvidia-tesla-v100": "Azure retired its V100 sizes (NCv3) on 2025-09-30; NC A100 v4 (nvidia-a100-80gb) replaces them",
    "nvidia-tesla-k80": "Azure retired its K80 sizes (NC) on 2023-09-06; use NCasT4_v3 (nvidia-tesla-t4)",
    "nvidia-tesla-p100": "Azure retired its P100 sizes (NCv2) on 2023-09-06; use NC A100 v4 (nvidia-a100-80gb)",
    "nvidia-tesla-p40": "Azure retired its P40 sizes (ND) on 2023-09-06; use NC A100 v4 (nvidia-a100-80gb)",
    "nvidia-tesla-m60": "Azure retired its M60 sizes (NV) on 2023-09-06; use NCasT4_v3 (nvidia-tesla-t4)",
}


#: Kubernetes' well-known node labels (k8s.io/api core/v1 `well_known_labels.go`), on every AKS node.
OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
#: AKS's on every AgentPool node (MicrosoftDocs `articles/aks/reserved-labels-reference.md`).
MODE_LABEL = "kubernetes.azure.com/mode"
ROLE_LABEL = "kubernetes.azure.com/role"


def aks_node_labels(azure_name: str, labels: Mapping[str, str], spot: bool, vm_size: str | None = None) -> dict[str, str]:
    """The labels with a known value a GPU AgentPool's nodes carry: the pool's `nodeLabels` plus those
    AKS always adds (the agentpool labels carry the pool's Azure name; a device plugin selecting
    `kubernetes.io/os: linux`, as many manifests do, selects these nodes). `gpu_aks_policies.node_labels`
    adds those whose value only the live node shows."""
    sku = gpu_sku(vm_size) if vm_size else None
    node_labels = {OS_LABEL: "linux", "beta.kubernetes.io/os": "linux", ARCH_LABEL: sku.arch if sku else "amd64",
                   MODE_LABEL: "user", ROLE_LABEL: "agent", **labels, AGENTPOOL_LABEL: azure_name,
                   "agentpool": azure_name, "kubernetes.azure.com/accelerator": "nvidia"}
    node_labels["beta.kubernetes.io/arch"] = node_labels[ARCH_LABEL]
    if vm_size:
        node_labels[INSTANCE_TYPE_LABEL] = node_labels["beta.kubernetes.io/instance-type"] = vm_size
    if spot:
        node_labels[SPOT_LABEL] = "spot"
    return node_labels


def supported_vm_sizes() -> list[str]:
    return [sku.vm_size for sku in _SUPPORTED]


def _by_gpu_name() -> dict[str, tuple[GpuSku, ...]]:
    found: dict[str, list[GpuSku]] = {}
    for sku in _SUPPORTED:
        for name in dict.fromkeys(((sku.karpenter_gpu_name or "").casefold(), sku.model.casefold(),
                                   sku.model.split()[0].casefold())):
            found.setdefault(name, []).append(sku)
    return {name: tuple(skus) for name, skus in found.items()}


#: The catalog's sizes by each name of their GPU, built once: a NAP stack asks for them per pool and
#: per check, and a scan of the catalog each time made 10,000 hostile NodePools take 8 s to refuse.
_SKUS_BY_GPU_NAME = _by_gpu_name()


def skus_with_gpu(gpu_name: str) -> list[GpuSku]:
    """The catalog's sizes whose GPU is `gpu_name`: Karpenter's `sku-gpu-name` value (`H100`), or the
    model (`GB200`, `RTX PRO 6000`), case-insensitively."""
    return list(_SKUS_BY_GPU_NAME.get(gpu_name.casefold(), ()))


def refused_sizes_with_gpu_name(gpu_name: str) -> list[str]:
    """Sizes gpu-aks refuses that Karpenter's Azure provider labels with this `sku-gpu-name` (`A10`: the
    NV A10 v5 sizes): a NodePool asking for the name must pin its sizes to keep them out."""
    return [sku.vm_size for sku in _UNSUPPORTED if sku.karpenter_gpu_name and
            sku.karpenter_gpu_name.casefold() == gpu_name.casefold()]


#: The NVIDIA `karpenter.azure.com/sku-gpu-name` values Karpenter's Azure provider can produce: the
#: accelerator token Azure/skewer parses from the name of each NVIDIA size in karpenter-provider-azure
#: `pkg/utils/supported-gpus.yaml` (commit 021c778; sizes without a token, such as `Standard_NC6s_v3`,
#: get none). skewer v0.0.23 (the RTX PRO commit) adds `GB200`, `GB300` and `RTXPRO6000BSE`. A
#: NodePool asking for any other name never brings a node.
KARPENTER_GPU_NAMES: tuple[str, ...] = ("T4", "A10", "A100", "H100", "H200", "GB200", "GB300", "RTXPRO6000BSE")


def gpu_names() -> list[str]:
    """The GPU names a NAP NodePool may ask for by name (each size's `sku-gpu-name` or model)."""
    return sorted({sku.karpenter_gpu_name or sku.model for sku in _SUPPORTED})


#: The vCPU count at the start of an Azure size name (`Standard_NC24ads_A100_v4`: 24, `Standard_D8ds_v5`: 8).
SIZE_VCPUS = re.compile(r"Standard_[A-Za-z]+?(\d+)")


def vcpus_in_size_name(vm_size: str) -> int | None:
    """The vCPU count Azure's size name carries (`Standard_NC24ads_A100_v4`: 24), or None."""
    match = SIZE_VCPUS.match(vm_size)
    return int(match.group(1)) if match else None


# --- How large a cluster may grow ---------------------------------------------------------------

#: AKS allows at most 1,000 nodes in one pool (learn.microsoft.com/azure/aks/quotas-skus-regions, "Maximum
#: nodes per node pool (Virtual Machine Scale Sets node pools)") ...
AKS_MAX_NODES_PER_POOL = 1000
#: ... and at most 5,000 in one cluster, across all its pools (learn.microsoft.com/azure/aks/
#: quotas-skus-regions, "Maximum nodes per cluster with Virtual Machine Scale Sets and Standard Load
#: Balancer SKU"; 1,000 until support raises the quota).
AKS_MAX_NODES_PER_CLUSTER = 5000


def node_count_problem(value: Any) -> str | None:
    """Why a value written as a pool's node count (`minCount`, `maxCount`) is no count AKS would keep
    to, or None when it is one: a whole number from 0 to AKS's nodes per pool (JSON's and the wire's
    whole floats, 3.0, included). The one answer for both halves: the settings refuse gpu-aks's own
    pools with it (`components/settings/common.py`, `count_key`), and the pack reads a hand-written
    AgentPool whose bound fails it as not autoscaled within bounds (`pools/agentpool.py`). Commit
    c41f3dd had to fix a copy in each half. Here, beside the limit, not in the pool model: a plain
    check loads the AgentPool reader but never the contract the model imports."""
    # limits.is_whole: an int of any size is whole (never made a float); NaN and the infinities are not.
    if not is_whole(value):
        return "is not a whole number of nodes"
    if value < 0:
        return "is negative; node counts start at 0"
    if value > AKS_MAX_NODES_PER_POOL:
        return f"is above the AKS limit of {AKS_MAX_NODES_PER_POOL} nodes per pool"
    return None


#: The most a GPU NodePool's `spec.limits` may say and still bound something, per resource: what AKS's
#: most nodes in a cluster hold of the catalog's largest GPU size. A ceiling past it bounds nothing, and
#: the figures read from it (nodes, quota, cost) would be past any cluster's. gpu-aks's own NodePool
#: settings and the pool rule, for hand-written NodePools, hold the same ceilings.
NODEPOOL_LIMIT_CEILINGS: Mapping[str, int] = {
    GPU_RESOURCE: AKS_MAX_NODES_PER_CLUSTER * max(sku.gpus for sku in GPU_SKUS.values()),
    "cpu": AKS_MAX_NODES_PER_CLUSTER * max(vcpus_in_size_name(sku.vm_size) or 0 for sku in GPU_SKUS.values())}


# --- Images the platform runs on GPU nodes, and their architectures ---------------------------

@dataclass(frozen=True)
class ImagePlatforms:
    """Which CPU architectures an image repository publishes, and where that was read."""

    repository: str
    architectures: tuple[Architecture, ...]
    source: str


#: The images gpu-aks runs on GPU nodes. A Grace (Arm64) host runs only images with an arm64 build.
#: Read from each image's build (the registry's manifest list could not be fetched from here; the
#: build files are what produce it): `docs/gpu-capacity.md` lists the findings.
IMAGE_PLATFORMS: Mapping[str, ImagePlatforms] = {image.repository: image for image in (
    ImagePlatforms("nvcr.io/nvidia/k8s-device-plugin", ("amd64", "arm64"),
                   "NVIDIA/k8s-device-plugin deployments/container/multi-arch.mk (commit 4bc7fab): "
                   "--platform=linux/amd64,linux/arm64"),
    ImagePlatforms("nvcr.io/nvidia/k8s/dcgm-exporter", ("amd64", "arm64"),
                   "NVIDIA/dcgm-exporter Makefile (commit 1d6b4b7): PLATFORMS := linux/amd64,linux/arm64"),
    ImagePlatforms("nvcr.io/nvidia/pytorch", ("amd64", "arm64"),
                   "NVIDIA Deep Learning Frameworks support matrix: the NGC PyTorch containers are published for "
                   "x86_64 and Arm SBSA (arm64)"),
)}


def image_repository(image: str) -> str:
    """`nvcr.io/nvidia/pytorch:25.10-py3` -> `nvcr.io/nvidia/pytorch` (a digest is dropped too)."""
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[:colon] if colon > slash else name


def arm64_image_problem(image: str) -> str | None:
    """Why `image` cannot be run on an Arm64 GPU node (None when an arm64 build is known)."""
    known = IMAGE_PLATFORMS.get(image_repository(image))
    if known is None:
        return (f"{image} is not an image gpu-aks knows the architectures of, so it cannot confirm an arm64 build "
                f"(known: {', '.join(sorted(IMAGE_PLATFORMS))})")
    if "arm64" not in known.architectures:
        return f"{image} has no arm64 build ({known.source})"
    return None
