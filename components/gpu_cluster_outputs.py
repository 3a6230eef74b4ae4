"""The typed outputs of `GpuCluster`: the outputs contract's pool entries, field by field.

GENERATED from the contract's dataclasses (policies/contract.py) by `venv/bin/python -m gpu_aks_plugin.schema`;
do not edit. No `from __future__ import annotations`: Pulumi's component host reads these annotations as objects.
"""

# ruff: noqa: E501
from typing import NotRequired, TypedDict


class Toleration(TypedDict):
    """A Kubernetes toleration of one of the pool's taints."""

    key: str
    """The taint key."""
    operator: str
    """Equal (with a value) or Exists."""
    value: NotRequired[str]
    """The taint value, when the taint has one."""
    effect: str
    """The taint effect, e.g. NoSchedule."""


class OfferPriceContract(TypedDict):
    """The list price of one node of the offer, per hour, as the platform's price table gave it when the contract was written (Azure Retail Prices: pay-as-you-go, Linux; no discount)."""

    onDemand: NotRequired[float]
    """On-demand (pay-as-you-go) price of one node an hour, or null."""
    spot: NotRequired[float]
    """Spot price of one node an hour, or null (never above on-demand: Spot's default max price is the on-demand price)."""
    currency: str
    """The prices' currency (USD)."""
    asOf: str
    """The date of the prices (YYYY-MM-DD)."""


class AllocatableContract(TypedDict):
    """What one node of the offer gives pods: its allocatable (the VM's vCPUs and memory less what AKS reserves on an AgentPool node, or what Karpenter plans a NAP node to keep; `node_capacity`), and what gpu-aks's own DaemonSets on the pool ask of it. A null figure is not known (a size gpu-aks's list lacks)."""

    cpuMillicores: NotRequired[int]
    """The node's allocatable CPU, in millicores."""
    memoryBytes: NotRequired[int]
    """The node's allocatable memory, in bytes."""
    ephemeralStorageBytes: NotRequired[int]
    """The node's allocatable ephemeral storage, in bytes; null when not known."""
    pods: NotRequired[int]
    """How many pods the node runs at most (maxPods)."""
    daemonSetCpuMillicores: int
    """What gpu-aks's DaemonSets on the pool ask of each node's CPU, in millicores."""
    daemonSetMemoryBytes: int
    """What they ask of its memory, in bytes."""
    daemonSetPods: int
    """How many of its pod slots they take."""


class PoolClaimsContract(TypedDict):
    """How a GPU pool hands out its GPUs through Dynamic Resource Allocation (NVIDIA's DRA driver for GPUs, `gpu-aks:dra`) instead of a device plugin: the DeviceClasses its GPUs are claimed by, and the extended resource a pod may still ask for there (KEP-5004: kube-scheduler makes the claim itself)."""

    deviceClasses: list[str]
    """The DeviceClasses whose claims the pool's GPUs serve: gpu.nvidia.com, or mig.nvidia.com on a MIG pool (its GPUs are published as MIG devices only)."""
    extendedResource: NotRequired[str]
    """The extended resource served through DRA on the pool (nvidia.com/gpu), or null: pods there ask through claims only."""


class GpuOfferContract(TypedDict):
    """One VM size a GPU pool may bring, and what one of its nodes advertises. An AgentPool-backed pool has one offer; a NodePool-backed (NAP) pool one per VM size it may choose."""

    vmSize: NotRequired[str]
    """The VM size (null only when derived from an older contract that had none)."""
    gpuModel: NotRequired[str]
    """The GPU model ("T4", "A100 80GB", "H100")."""
    gpuMemoryGiB: NotRequired[int]
    """Memory of one GPU in GiB."""
    gpusPerVm: NotRequired[int]
    """Physical GPUs per VM."""
    resource: str
    """The extended resource a pod asks for: nvidia.com/gpu, or nvidia.com/mig-<profile> under migStrategy mixed."""
    perNode: int
    """How many of `resource` one node advertises: GPUs, MIG instances, or GPUs times the sharing replicas."""
    migPartition: NotRequired[str]
    """The MIG partition (1g.10gb ...), or null."""
    capacityTypes: list[str]
    """How the nodes are bought: onDemand, spot, or both (a NodePool with both tries Spot first and falls back to on-demand)."""
    hourlyPrice: NotRequired[OfferPriceContract]
    """The list price of one node an hour (on-demand and Spot), or null when the platform had none."""


class PoolSharingContract(TypedDict):
    """How the device plugin shares each GPU of the pool between pods."""

    strategy: str
    """timeSlicing or mps."""
    replicas: int
    """How many pods share one GPU (or one MIG instance)."""


class CpuPoolContract(TypedDict):
    """A CPU user pool."""

    name: str
    """The pool's name in the stack config."""
    azureName: NotRequired[str]
    """The pool's name in Azure (the config name plus a hash of its create-only properties). Version 2."""
    poolLabel: dict[str, str]
    """The label every node of the pool carries (gpu-aks.io/pool), stable across replacements. Version 2."""
    vmSize: NotRequired[str]
    """The VM size of the nodes."""
    minCount: NotRequired[int]
    """Fewest nodes the autoscaler keeps."""
    maxCount: NotRequired[int]
    """Most nodes the autoscaler adds."""
    taints: list[str]
    """The nodes' taints, as key=value:Effect."""
    labels: dict[str, str]
    """The nodes' labels that gpu-aks sets."""
    spot: bool
    """Spot VMs (AKS adds the Spot label and taint)."""


class GpuPoolContract(TypedDict):
    """A GPU pool: everything a pod needs to land there, already worked out. `offers` is what a reader reads; the single-size fields (vmSize ... accelerator) describe an AgentPool-backed pool's one offer, and a NodePool-backed pool's first offer or null."""

    name: str
    """The pool's name in the stack config."""
    kind: str
    """What backs the pool: an AKS AgentPool (agentPool) or a NAP Karpenter NodePool (nodePool); agentPool when absent."""
    azureName: NotRequired[str]
    """The pool's name in Azure (the config name plus a hash of its create-only properties). Version 2."""
    poolLabel: dict[str, str]
    """The label every node of the pool carries (gpu-aks.io/pool), stable across replacements. Version 2."""
    vmSize: NotRequired[str]
    """The VM size of the nodes."""
    gpuModel: NotRequired[str]
    """The GPU model ("T4", "A100 80GB", "H100")."""
    gpuMemoryGiB: NotRequired[int]
    """Memory of one GPU in GiB."""
    gpusPerVm: NotRequired[int]
    """Physical GPUs per VM."""
    gpusPerNode: int
    """How many of `gpuResource` one node offers (MIG instances count one each; on a shared pool, GPUs times the sharing replicas)."""
    gpuResource: str
    """The extended resource a pod asks for: nvidia.com/gpu, or nvidia.com/mig-<profile> under migStrategy mixed."""
    gpuInstanceProfile: NotRequired[str]
    """The MIG profile (MIG1g ...), or null."""
    migPartition: NotRequired[str]
    """The MIG partition (1g.10gb ...), or null."""
    accelerator: NotRequired[str]
    """The nvidia.com/gpu.accelerator label value."""
    spot: bool
    """Spot VMs (AKS adds the Spot label and taint)."""
    minCount: NotRequired[int]
    """Fewest nodes the autoscaler keeps."""
    maxCount: NotRequired[int]
    """Most nodes the autoscaler adds."""
    taints: list[str]
    """The nodes' taints, as key=value:Effect."""
    labels: dict[str, str]
    """The nodes' labels that gpu-aks sets."""
    devicePlugin: NotRequired[str]
    """Who runs the device plugin on the pool: gpu-aks's DaemonSet, or something else (driver: None); null on a pool that hands out its GPUs through DRA (version 3's `dra`)."""
    dcgmExporter: NotRequired[str]
    """Whether gpu-aks's DCGM exporter runs on the pool's nodes (the doctor then expects a Ready exporter pod on each); absent in contracts written before gpu-aks 0.3."""
    tolerations: list[Toleration]
    """The tolerations a pod needs for the pool's taints."""
    nodeSelector: dict[str, str]
    """The nodeSelector that pins a pod to the pool's GPU nodes."""
    offers: list[GpuOfferContract]
    """The GPUs the pool may bring, one offer per VM size; derived from the single-size fields when absent."""
    sharing: NotRequired[PoolSharingContract]
    """How pods share a GPU (time-slicing or MPS), or null: each pod gets whole GPUs or MIG instances."""
    capacityTypes: list[str]
    """How the pool's nodes may be bought, over its offers: onDemand, spot, or both (a NAP NodePool with both tries Spot first, whatever the order, and falls back to on-demand; `spot` is then false). Derived from the offers when absent."""


class OfferContract(TypedDict):
    """One VM size a pool may bring (version 3; Karpenter's `Offering`): how its nodes are bought (with the size, what prices it) and, on a GPU size, its GPUs and what one node advertises."""

    vmSize: str
    """The VM size."""
    capacityTypes: list[str]
    """How the nodes are bought: onDemand, spot, or both (a NodePool with both tries Spot first and falls back to on-demand)."""
    gpuModel: NotRequired[str]
    """The GPU model ("T4", "A100 80GB", "H100")."""
    gpuMemoryGiB: NotRequired[int]
    """Memory of one GPU in GiB; null on a CPU size."""
    gpusPerVm: NotRequired[int]
    """Physical GPUs per VM; null on a CPU size."""
    resource: NotRequired[str]
    """The extended resource a pod asks for (nvidia.com/gpu, or nvidia.com/mig-<profile> under migStrategy mixed); null on a CPU size."""
    perNode: int
    """How many of `resource` one node advertises (GPUs, MIG instances, or GPUs times the sharing replicas); 0 on a CPU size."""
    gpuInstanceProfile: NotRequired[str]
    """The MIG profile (MIG1g ...), or null."""
    migPartition: NotRequired[str]
    """The MIG partition (1g.10gb ...), or null."""
    hourlyPrice: NotRequired[OfferPriceContract]
    """The list price of one node an hour (on-demand and Spot), or null when the platform had none."""
    allocatable: NotRequired[AllocatableContract]
    """What one node gives pods: its allocatable CPU, memory, storage and pods, and what gpu-aks's DaemonSets there ask; absent when not known. Version 3 of 0.5."""


class PoolContract(TypedDict):
    """Every pool of the platform, system and CPU pools included (version 3): the one pool model, whatever backs the pool. Version 2's `gpuPools` and `cpuPools` are written from the same model."""

    name: str
    """The pool's name in the stack config."""
    key: str
    """How the stack config names the pool (gpuPools[t4], systemPool)."""
    role: str
    """What the pool is for: system, cpu or gpu."""
    backend: str
    """What backs the pool: an AKS AgentPool (agentPool) or a NAP Karpenter NodePool (nodePool)."""
    azureName: NotRequired[str]
    """The pool's name in Azure (the config name plus a hash of its create-only properties). Version 2."""
    offers: list[OfferContract]
    """Every VM size the pool may bring."""
    minCount: NotRequired[int]
    """Fewest nodes the autoscaler keeps."""
    maxCount: NotRequired[int]
    """Most nodes the autoscaler adds."""
    spot: bool
    """Spot VMs (AKS adds the Spot label and taint)."""
    capacityTypes: list[str]
    """How the pool's nodes may be bought, over its offers, Spot first as Karpenter tries them; `spot` is true only when every node is a Spot VM. Derived from the offers when absent."""
    zones: list[str]
    """The availability zones of the pool's nodes; [] for any."""
    taints: list[str]
    """The nodes' taints, as key=value:Effect."""
    labels: dict[str, str]
    """The nodes' labels that gpu-aks sets."""
    sharing: NotRequired[PoolSharingContract]
    """How pods share a GPU (time-slicing or MPS), or null."""
    devicePlugin: NotRequired[str]
    """Who runs the device plugin on a GPU pool: gpu-aks's DaemonSet, or something else; null on CPU pools."""
    exporter: bool
    """gpu-aks's DCGM exporter runs on the pool's nodes."""
    dra: NotRequired[PoolClaimsContract]
    """How the pool hands out its GPUs through DRA claims (NVIDIA's DRA driver), or absent: through a device plugin. Version 3 of 0.5."""
