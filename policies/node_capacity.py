"""What one node of a VM size gives pods: its vCPUs and memory, less what the node's owner reserves
and less what gpu-aks's own DaemonSets ask of it. Pure values, standard library only.

Two owners make AKS nodes, and each reserves differently:

- **AgentPool nodes** (AKS). AKS docs, "Node resource reservations"
  (learn.microsoft.com/azure/aks/node-resource-reservations), for AKS 1.29 and later: kube-reserved CPU
  by core count (the table 1 core 60m, 2 cores 100m, 4 cores 140m, 8 cores 180m, 16 cores 260m, 32 cores
  420m, 64 cores 740m); kube-reserved memory the lesser of 20 MB x maxPods + 50 MB and 25% of the VM's
  memory; and the kubelet's `memory.available<100Mi` hard eviction threshold. The docs write MB; the
  kubelet flags AKS writes are in Mi (AgentBaker's test data: `--kube-reserved=cpu=100m,memory=1638Mi`
  for a 7 GiB VM, which is the older brackets below in MiB), so MiB here.
- **NodePool nodes** (NAP, Karpenter). Karpenter launches a node only for pods that fit what its Azure
  provider *plans* a size to give (Azure/karpenter-provider-azure @352646f
  `pkg/providers/instancetype/instancetype.go`): `computeCapacity` takes the VM's memory less
  `--vm-memory-overhead-percent` (default 0.075, `pkg/operator/options/options.go`), `KubeReservedResources`
  takes CPU by brackets (6% of the first core, 4% of the second, 2% up to 4, 1% above: the same numbers as
  AKS's table) and memory by brackets (25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% up
  to 128 GiB, 2% above), and `EvictionThreshold` is `memory.available: 750Mi`; `prepareKubeletConfiguration`
  (`pkg/providers/imagefamily/resolver.go`) hands the same figures to the node's kubelet. Ephemeral storage
  is the AKSNodeClass's `osDiskSizeGB` (default 128) in GB, pods its `maxPods` (`pkg/utils/utils.go`
  `GetMaxPods`).

The CPU table of the AKS docs is the bracket formula evaluated at its columns, so both use the formula and
every core count has an answer (24 cores: 140m + 20 x 10m = 340m).

The vCPUs and memory of each size are the Azure Resource SKUs API's `vCPUs` and `MemoryGB` capabilities
(`MemoryGB` is in GiB: karpenter-provider-azure `instancetype.go` `memoryGiB`), as Microsoft's Aspire
generates them into `src/Aspire.Hosting.Azure.Kubernetes/AksNodeVmSizes.cs` (@5bd693a), and as the Azure VM
size pages list them (learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/<series>). A size
whose memory no such source gives is left out: its fit is not judged.

What this cannot know offline: the memory the kernel keeps below the VM's listed memory on an AgentPool
node (the kubelet's capacity is the kernel's MemTotal), and AKS's own DaemonSets (kube-proxy, CNI, CSI,
monitoring agents), whose requests AKS changes between node images. Both make a node give pods a little
less than this says; a pod that asks for nearly all of it may still wait.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MIB = 2**20
GIB = 2**30

# --- VM sizes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VmShape:
    """A VM size's vCPUs and memory (GiB), as the Resource SKUs API lists them."""

    vcpus: int
    memory_gib: int


def _sizes(**sizes: tuple[int, int]) -> dict[str, VmShape]:
    return {f"Standard_{name}".lower(): VmShape(*shape) for name, shape in sizes.items()}


#: (vCPUs, memory GiB) per size, per family (Resource SKUs `vCPUs`, `MemoryGB`; Aspire's
#: `AksNodeVmSizes.cs` @5bd693a, and each family's Azure size page).
VM_SHAPES: Mapping[str, VmShape] = {
    # NCasT4_v3 (ncast4v3-series).
    **_sizes(NC4as_T4_v3=(4, 28), NC8as_T4_v3=(8, 56), NC16as_T4_v3=(16, 110), NC64as_T4_v3=(64, 440)),
    # NC A100 v4 (nc-a100-v4-series); karpenter-provider-azure's captured SKU list (`pkg/fake/
    # zz_generated.sku.southcentralus.go`) has the same 24 vCPUs and 220 GiB for NC24ads.
    **_sizes(NC24ads_A100_v4=(24, 220), NC48ads_A100_v4=(48, 440), NC96ads_A100_v4=(96, 880)),
    # ND A100 v4 and NDm A100 v4 (nda100-v4-series, ndm-a100-v4-series).
    **_sizes(ND96asr_v4=(96, 900), ND96amsr_A100_v4=(96, 1800)),
    # NC H100 v5 (nc-h100-v5-series).
    **_sizes(NC40ads_H100_v5=(40, 320), NC80adis_H100_v5=(80, 640)),
    # ND H100 v5 and ND H200 v5 (nd-h100-v5-series, nd-h200-v5-series): the isr sizes. The is, isf and
    # isrf variants are in no size list read here, so their fit is not judged.
    **_sizes(ND96isr_H100_v5=(96, 1900), ND96isr_H200_v5=(96, 1850)),
    # ND GB200 v6 and ND GB300 v6 (nd-gb200-v6-series, nd-gb300-v6-series).
    **_sizes(ND128isr_NDR_GB200_v6=(128, 864), ND128isr_GB300_v6=(128, 864)),
    # NC A10 v4 (nc-a10-v4-series).
    **_sizes(NC8ads_A10_v4=(8, 100), NC16ads_A10_v4=(16, 200), NC32ads_A10_v4=(32, 400)),
    # NC RTX PRO 6000 BSE v6 (the whole-GPU sizes and NC24lds; the 36 and 72 vCPU shares are not listed).
    **_sizes(NC144ds_xl_RTXPRO6000BSE_v6=(144, 516), NC144lds_xl_RTXPRO6000BSE_v6=(144, 264),
             NC288ds_xl_RTXPRO6000BSE_v6=(288, 1032), NC288lds_xl_RTXPRO6000BSE_v6=(288, 516),
             NC24lds_xl_RTXPRO6000BSE_v6=(24, 72)),
    # Ddsv5 and Dsv5 (ddv5-ddsv5-series, dv5-dsv5-series): the system and CPU pools' sizes.
    **{f"standard_d{n}{kind}_v5": VmShape(n, 4 * n) for n in (2, 4, 8, 16, 32, 48, 64, 96) for kind in ("ds", "s")},
}


def vm_shape(vm_size: str) -> VmShape | None:
    """The size's vCPUs and memory, case-insensitively (as Azure treats sizes), or None."""
    return VM_SHAPES.get(vm_size.lower())


# --- Reservations ----------------------------------------------------------------------------------

#: (upper bound, rate) brackets: karpenter-provider-azure `reservedCPUTaxVCPU` (cores) and
#: `reservedMemoryTaxGi` (GiB).
CPU_BRACKETS: tuple[tuple[float, float], ...] = ((1, .06), (2, .04), (4, .02), (math.inf, .01))
MEMORY_BRACKETS: tuple[tuple[float, float], ...] = ((4, .25), (8, .20), (16, .10), (128, .06), (math.inf, .02))


def _taxed(amount: float, brackets: tuple[tuple[float, float], ...]) -> float:
    """`TaxBrackets.Calculate`, in float64 as Karpenter computes it (so the truncation below lands where
    Karpenter's does): each bracket's rate on the part of `amount` inside it."""
    tax, lower = 0.0, 0.0
    for upper, rate in brackets:
        if lower > amount:
            continue
        tax += (min(upper, amount) - lower) * rate
        lower = upper
    return tax


def kube_reserved_cpu_milli(vcpus: int) -> int:
    """kube-reserved CPU in millicores (AKS's table; Karpenter's `reservedCPUTaxVCPU`, truncated as
    `int64(1000 * ...)` truncates)."""
    return int(1000 * _taxed(vcpus, CPU_BRACKETS))


#: AKS's hard eviction threshold from 1.29 (`memory.available<100Mi`), and Karpenter's (`750Mi`).
AKS_EVICTION_BYTES = 100 * MIB
KARPENTER_EVICTION_BYTES = 750 * MIB
#: Karpenter's `--vm-memory-overhead-percent` default: what it assumes the hypervisor and kernel keep.
KARPENTER_VM_MEMORY_OVERHEAD = 0.075
#: AKSNodeClass's `osDiskSizeGB` default (karpenter-provider-azure `pkg/apis/v1beta1/aksnodeclass.go`).
KARPENTER_OS_DISK_GB = 128


def aks_kube_reserved_memory(memory_gib: int, max_pods: int) -> int:
    """AKS 1.29+: the lesser of 20 MiB x maxPods + 50 MiB and 25% of the VM's memory, in bytes."""
    return min((20 * max_pods + 50) * MIB, memory_gib * GIB // 4)


def karpenter_kube_reserved_memory(memory_gib: int) -> int:
    """Karpenter's `KubeReservedResources` memory: `int64(1024 * brackets(GiB))` MiB, in bytes."""
    return int(1024 * _taxed(memory_gib, MEMORY_BRACKETS)) * MIB


def default_max_pods(network_plugin: str | None, plugin_mode: str | None) -> int:
    """AKS's default maxPods by network (learn.microsoft.com/azure/aks/azure-cni-overlay, azure-cni-overview,
    configure-kubenet; karpenter-provider-azure `GetMaxPods`): Azure CNI Overlay 250, Azure CNI on the node
    subnet 30, no plugin (bring your own) 250, kubenet 110."""
    if network_plugin == "azure":
        return 250 if plugin_mode == "overlay" else 30
    return 250 if network_plugin == "none" else 110


# --- What a node gives pods ------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeResources:
    """CPU (millicores), memory and ephemeral storage (bytes), and pods, as a node's `allocatable` or a
    set of requests. None: not known (a size gpu-aks's list lacks; storage whose size is not known)."""

    cpu_milli: int | None
    memory: int | None
    ephemeral_storage: int | None
    pods: int | None

    def less(self, other: NodeResources) -> NodeResources:
        """This less `other` (what the DaemonSets on every node ask), never below zero."""
        def minus(mine: int | None, theirs: int | None) -> int | None:
            return None if mine is None else max(0, mine - (theirs or 0))

        return NodeResources(minus(self.cpu_milli, other.cpu_milli), minus(self.memory, other.memory),
                             minus(self.ephemeral_storage, other.ephemeral_storage), minus(self.pods, other.pods))


NOTHING = NodeResources(0, 0, 0, 0)


def agent_pool_allocatable(vm_size: str, max_pods: int) -> NodeResources | None:
    """The allocatable of an AgentPool node of `vm_size` (AKS 1.29+), or None for a size not listed."""
    shape = vm_shape(vm_size)
    if shape is None:
        return None
    memory = shape.memory_gib * GIB - aks_kube_reserved_memory(shape.memory_gib, max_pods) - AKS_EVICTION_BYTES
    return NodeResources(shape.vcpus * 1000 - kube_reserved_cpu_milli(shape.vcpus), max(0, memory), None, max_pods)


def node_pool_allocatable(vm_size: str, max_pods: int, os_disk_gb: int | None = None) -> NodeResources | None:
    """What Karpenter plans a NAP node of `vm_size` gives (`InstanceType.Allocatable()`: capacity less
    kube-reserved, system-reserved (none on AKS) and the eviction threshold), or None for a size not listed."""
    shape = vm_shape(vm_size)
    if shape is None:
        return None
    capacity = shape.memory_gib * GIB
    capacity -= math.ceil(float(capacity) * KARPENTER_VM_MEMORY_OVERHEAD)
    memory = capacity - karpenter_kube_reserved_memory(shape.memory_gib) - KARPENTER_EVICTION_BYTES
    storage = (os_disk_gb or KARPENTER_OS_DISK_GB) * 10**9
    return NodeResources(shape.vcpus * 1000 - kube_reserved_cpu_milli(shape.vcpus), max(0, memory), storage, max_pods)


def daemon_set_requests(pods: Iterable[Mapping[str, object]]) -> NodeResources:
    """What DaemonSet pod specs on one node ask together: each pod's requests as kube-scheduler counts
    them (`pod_requests`), and one pod slot each."""
    from .pod_requests import spec_requests  # a node's arithmetic never needs the pod reader otherwise

    cpu = memory = storage = count = 0
    for spec in pods:
        asked = spec_requests(spec)
        cpu, memory, storage, count = cpu + asked.cpu_milli, memory + asked.memory, storage + asked.ephemeral_storage, \
            count + 1
    return NodeResources(cpu, memory, storage, count)
