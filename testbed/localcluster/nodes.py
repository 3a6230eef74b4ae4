"""Nodes shaped like a platform's pools, registered as their kubelets would register them.

A node is created with its labels, the pool's taints, and in its status the capacity and allocatable its
kubelet reports (`kubelet_node_status.go` registers a node with its status in the one create); kwok then
reports it Ready and renews its Lease, and the node lifecycle controller lifts the `not-ready` taint the
TaintNodesByCondition admission plugin gives every new node.

The labels are what AKS and Karpenter put on a real node, written here from their own sources and kept
apart from gpu-aks's model of them (`gpu_aks_policies.node_labels`): the cluster tier compares the
explainer with kube-scheduler on these nodes, which could not catch a wrong belief if both read one copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from gpu_aks_policies.contract import ContractError, PlatformContract
from gpu_aks_policies.documents import DocumentError, Limits, load_json, read_file
from gpu_aks_policies.pools.model import Pool

from .client import ApiError, Client, ClusterError, InputError

#: Memory (GiB) of the VM sizes the example stacks use, from Azure's size pages (learn.microsoft.com/
#: azure/virtual-machines/sizes/...); other sizes get 4 GiB per vCPU. This is the node's capacity; its
#: allocatable is what the contract's offer says pods get (`offers[].allocatable`: AKS's or Karpenter's
#: reservations, #48), or the capacity where the contract does not know.
VM_MEMORY_GIB = {
    "Standard_D4ds_v5": 16, "Standard_D8ds_v5": 32, "Standard_D16ds_v5": 64, "Standard_NC4as_T4_v3": 28,
    "Standard_NC8as_T4_v3": 56, "Standard_NC16as_T4_v3": 110, "Standard_NC64as_T4_v3": 440,
    "Standard_NC24ads_A100_v4": 220, "Standard_NC48ads_A100_v4": 440, "Standard_NC96ads_A100_v4": 880,
    "Standard_NC40ads_H100_v5": 320, "Standard_NC80adis_H100_v5": 640, "Standard_ND96asr_v4": 900,
    "Standard_ND96amsr_A100_v4": 1900, "Standard_ND96isr_H100_v5": 1900,
}
#: Sizes whose hosts are Arm64 (Grace): kubelet reports `kubernetes.io/arch: arm64` there.
ARM64_SIZE = re.compile(r"_GB\d+_", re.IGNORECASE)
#: The GPU name token Azure/skewer parses from a size name (`karpenter.azure.com/sku-gpu-name`).
SKU_GPU_NAME = re.compile(r"_(T4|A10|A100|H100|H200|MI300X|GB200|GB300)_", re.IGNORECASE)
#: Names the node's pool in an annotation, for the tests (`kubectl get nodes` shows the labels only).
POOL_ANNOTATION = "gpu-aks.io/test-pool"


def _vcpus(vm_size: str) -> int:
    return int(m.group(1)) if (m := re.match(r"Standard_[A-Za-z]+?(\d+)", vm_size)) else 8


def _memory_gib(vm_size: str) -> int:
    return VM_MEMORY_GIB.get(vm_size, 4 * _vcpus(vm_size))


def _node_resources(vm_size: str, gpus: Mapping[str, int]) -> dict[str, str]:
    return {"cpu": str(_vcpus(vm_size)), "memory": f"{_memory_gib(vm_size)}Gi", "pods": "110",
            "ephemeral-storage": "100Gi", **{resource: str(count) for resource, count in gpus.items()}}


def _base_labels(name: str, vm_size: str, location: str, zone: str) -> dict[str, str]:
    arch = "arm64" if ARM64_SIZE.search(vm_size) else "amd64"
    return {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": arch,
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": arch,
            "node.kubernetes.io/instance-type": vm_size, "beta.kubernetes.io/instance-type": vm_size,
            "topology.kubernetes.io/region": location, "topology.kubernetes.io/zone": zone,
            "failure-domain.beta.kubernetes.io/region": location, "failure-domain.beta.kubernetes.io/zone": zone}


def _taints(texts: Iterable[str]) -> list[dict[str, str]]:
    taints = []
    for text in texts:
        key_value, _, effect = str(text).rpartition(":")
        key, _, value = key_value.partition("=")
        taint = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints.append(taint)
    return taints


#: The OS image AKS gives a Linux pool that names none (the contract does not carry a pool's osSKU).
DEFAULT_OS_SKU = "Ubuntu"


def pool_nodes(contract: PlatformContract, pool: Pool, copies: int = 1) -> list[dict[str, Any]]:
    """Nodes as the pool brings them up, `copies` of each kind. An AgentPool's nodes carry AKS's reserved
    labels (MicrosoftDocs `articles/aks/reserved-labels-reference.md`) and the pool's `nodeLabels`; a NAP
    NodePool's carry Karpenter's and the Azure provider's (`karpenter.sh/*`, `karpenter.azure.com/sku-*`)
    and the NodePool template's labels, one node kind per offer, Spot first where the offer allows it
    (Karpenter tries Spot before on-demand). Neither gets a label or taint the pool does not declare
    beyond those (Karpenter adds no GPU taint and no `kubernetes.azure.com/accelerator`). A GPU node
    advertises the offer's `perNode` of its resource, which the contract counts as the device plugin does
    (GPUs, MIG instances, or GPUs times the sharing replicas: NVIDIA k8s-device-plugin `api/config/v1`)."""
    location = contract.location or "eastus2"
    name = pool.name
    is_gpu = pool.role == "gpu"
    cluster = f"MC_{contract.resource_group_name or 'rg'}_{contract.cluster_name or 'aks'}_{location}"
    # A GPU pool's nodes are of its GPU sizes, as the device plugin and the scheduler see them.
    offers = pool.gpu_offers if is_gpu else pool.offers
    nodes = []
    for index, offer in enumerate(offers):
        vm_size = offer.vm_size
        # A DRA pool's node advertises no GPU resource: NVIDIA's DRA driver publishes its GPUs in ResourceSlices.
        gpus = {str(offer.resource): offer.per_node} if is_gpu and offer.resource and pool.dra is None else {}
        for copy in range(copies):
            zone = f"{location}-{pool.zones[copy % len(pool.zones)]}" if pool.zones else "0"
            if pool.backend == "nodePool":
                capacity = "spot" if "spot" in offer.capacity_types else "on-demand"
                node_name = f"aks-{name}-{index}{copy:04d}"[:63]
                # Karpenter writes no kubernetes.azure.com/agentpool and no kubernetes.azure.com/accelerator
                # (removed as redundant with sku-gpu-name); it writes mode, role, cluster, os-sku and, on
                # Spot nodes, scalesetpriority (karpenter-provider-azure designs/0006-requirements-and-labels.md
                # at 3ecc05ae, "Decision 2").
                labels = {**_base_labels(node_name, vm_size, location, zone), **pool.labels,
                          "karpenter.sh/nodepool": name, "karpenter.sh/capacity-type": capacity,
                          "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
                          "karpenter.azure.com/sku-name": vm_size,
                          "karpenter.azure.com/sku-family": vm_size.split("_")[1][:1],
                          "karpenter.azure.com/sku-cpu": str(_vcpus(vm_size)),
                          "karpenter.azure.com/sku-memory": str(_memory_gib(vm_size) * 1024),
                          "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
                          "kubernetes.azure.com/os-sku": DEFAULT_OS_SKU, "kubernetes.azure.com/cluster": cluster}
                if capacity == "spot":
                    labels["kubernetes.azure.com/scalesetpriority"] = "spot"
                if is_gpu:
                    token = SKU_GPU_NAME.search(vm_size)
                    labels.update({"karpenter.azure.com/sku-gpu-manufacturer": "nvidia",
                                   "karpenter.azure.com/sku-gpu-count": str(offer.gpus_per_vm or 0)})
                    if token:
                        labels["karpenter.azure.com/sku-gpu-name"] = token.group(1).upper()
            else:
                azure_name = pool.azure_name or name
                node_name = f"aks-{azure_name}-12345678-vmss{copy:06d}"
                labels = {**_base_labels(node_name, vm_size, location, zone), **pool.labels,
                          "kubernetes.azure.com/agentpool": azure_name, "agentpool": azure_name,
                          "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
                          "kubernetes.azure.com/os-sku": DEFAULT_OS_SKU,
                          "kubernetes.azure.com/node-image-version": f"AKS{DEFAULT_OS_SKU}-gpu-202611.01.0",
                          "kubernetes.azure.com/cluster": cluster}
                if is_gpu:
                    labels["kubernetes.azure.com/accelerator"] = "nvidia"
                if pool.spot:
                    labels["kubernetes.azure.com/scalesetpriority"] = "spot"
            resources = _node_resources(vm_size, gpus)
            allocatable = dict(resources)
            room = offer.allocatable
            if room is not None and room.cpu_millicores is not None and room.memory_bytes is not None:
                allocatable.update(cpu=f"{room.cpu_millicores}m", memory=str(room.memory_bytes))
                if room.pods is not None:
                    resources["pods"] = allocatable["pods"] = str(room.pods)
            nodes.append({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": node_name, "labels": {k: str(v) for k, v in labels.items()},
                             "annotations": {POOL_ANNOTATION: name}},
                "spec": {"taints": _taints(pool.taints)},
                "status": {"capacity": resources, "allocatable": allocatable,
                           "nodeInfo": {"architecture": labels["kubernetes.io/arch"], "operatingSystem": "linux",
                                        "kubeletVersion": f"v{contract.kubernetes_version or '1.37'}.0",
                                        "kubeProxyVersion": "", "containerRuntimeVersion": "containerd://2.1.0",
                                        "kernelVersion": "", "osImage": DEFAULT_OS_SKU, "bootID": "", "machineID": "",
                                        "systemUUID": ""},
                           "addresses": [{"type": "InternalIP", "address": "10.224.0.4"},
                                         {"type": "Hostname", "address": node_name}]},
            })
    return nodes


def contract_pool_nodes(contract: PlatformContract, copies: int = 1) -> list[dict[str, Any]]:
    """Every GPU and CPU pool's nodes (the system pool's are not simulated: no workload lands there), each
    with an address of its own in AKS's default node subnet (10.224.0.0/16, from .4 as Azure hands them out:
    the first four of a subnet are Azure's), which kwok gives its pods as their hostIP."""
    nodes = [node for pool in contract.pool_models().values() for node in pool_nodes(contract, pool, copies)]
    for index, node in enumerate(nodes, start=4):
        node["status"]["addresses"][0]["address"] = f"10.224.{index // 256}.{index % 256}"
    return nodes


def stack_nodes(outputs: Mapping[str, Any], copies: int = 1) -> list[dict[str, Any]]:
    """Every GPU and CPU pool's nodes, from a stack's outputs (`python -m tools.preview STACK --json`'s
    `outputs`, or `pulumi stack output --json`)."""
    return contract_pool_nodes(PlatformContract.from_json(outputs), copies)


def node_ready(node: Mapping[str, Any]) -> bool:
    """Ready, and schedulable: kwok reported it Ready and the node lifecycle controller lifted the
    `node.kubernetes.io/not-ready` taint (the scheduler would keep every pod off it until then)."""
    status = node.get("status") or {}
    return (any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            and not any(str(t.get("key", "")).startswith("node.kubernetes.io/")
                        for t in (node.get("spec") or {}).get("taints") or []))


def register(client: Client, nodes: Iterable[Mapping[str, Any]], timeout: float = 120.0) -> list[str]:
    """Creates the nodes (status included, as a kubelet registers one) and returns their names once each is
    Ready and schedulable."""
    names = []
    for node in nodes:
        try:
            names.append(client.create("/api/v1/nodes", node)["metadata"]["name"])
        except ApiError as error:
            raise ClusterError(f"node {node['metadata']['name']}: {error.message}") from None
    pending = set(names)

    def all_ready() -> bool:
        for name in sorted(pending):
            if node_ready(client.get(f"/api/v1/nodes/{name}")):
                pending.discard(name)
        return not pending

    client.wait_for(f"nodes {', '.join(sorted(pending))} to be Ready", all_ready, timeout, every=0.2)
    return names


def contract_nodes(outputs_file: str, copies: int = 1) -> list[dict[str, Any]]:
    """The nodes of every GPU and CPU pool of the platform's outputs in `outputs_file`, read as every reader of a
    contract reads it (`PlatformContract.from_json`, any version it reads). InputError naming the file and key
    for a document that is not such a contract, or one with no GPU or CPU pool (registering nothing would look
    like success)."""
    limits = Limits(max_bytes=8 * 1024 * 1024)
    try:
        contract = PlatformContract.from_json(load_json(read_file(outputs_file, limits), limits))
    except DocumentError as problem:
        raise InputError(problem.at(outputs_file)) from None
    except ContractError as error:
        raise InputError(f"{outputs_file}: {error}") from None
    nodes = contract_pool_nodes(contract, copies)
    if not nodes:
        raise InputError(f"{outputs_file}: no GPU or CPU pool to register nodes for")
    return nodes
