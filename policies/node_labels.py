"""The labels every node of a GPU pool carries, per offer and capacity type, and what can be known
of them offline.

A pod's nodeSelector or required node affinity is matched against the labels the node will really
have, not only those gpu-aks writes. Two sources set them:

- AKS on every AgentPool node (MicrosoftDocs `articles/aks/reserved-labels-reference.md`):
  `kubernetes.azure.com/agentpool` and `agentpool` (the Azure pool name), `kubernetes.io/os`,
  `kubernetes.io/arch`, `node.kubernetes.io/instance-type`, `topology.kubernetes.io/region` and
  `zone`, `kubernetes.azure.com/mode`, `role`, `scalesetpriority` (Spot pools), `accelerator`
  (GPU sizes), `os-sku`, `node-image-version`, `cluster`, and `kubernetes.io/hostname`.
- Karpenter and its Azure provider on every NAP node: Karpenter's well-known labels
  (kubernetes-sigs/karpenter `pkg/apis/v1/labels.go`, commit 046bcda: `karpenter.sh/nodepool`,
  `karpenter.sh/capacity-type`, `node.kubernetes.io/instance-type`, `kubernetes.io/arch`/`os`,
  `topology.kubernetes.io/region`/`zone`, plus `karpenter.sh/registered` and `initialized`) and the
  Azure provider's (Azure/karpenter-provider-azure `pkg/apis/v1beta1/labels.go` `AzureWellKnownLabels`,
  valued in `pkg/providers/instancetype/instancetype.go` `computeRequirements`, commit 00ae112:
  `karpenter.azure.com/sku-name`, `sku-family`, `sku-series`, `sku-version`, `sku-cpu`, `sku-memory`,
  `sku-gpu-name`, `sku-gpu-manufacturer`, `sku-gpu-count`, `sku-networking-accelerated`,
  `sku-storage-premium-capable`, `sku-storage-ephemeralos-maxsize`, `placement-scope`, and the AKS
  domain's `kubernetes.azure.com/sku-cpu`, `sku-memory`, `cluster`, `mode`, `scalesetpriority`,
  `priority`, `os-sku`). Karpenter adds no `kubernetes.azure.com/accelerator` label.
- On both, the cloud node controller also writes the beta aliases of the topology and instance-type
  labels, and the kubelet the beta `arch`/`os` ones (kubernetes/kubernetes
  `staging/src/k8s.io/cloud-provider/controllers/node/node_controller.go` `labelReconcileInfo`;
  `pkg/kubelet/kubelet_node_status.go`).

Some values are known offline (the VM size, the region, the capacity type); others only on the
live node (the hostname, the zone, the cluster's node resource group, the node image). A label of the
second kind is carried with no value here: a selector on it is "cannot tell", never "fits no pool".
No Pulumi imports.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from .catalog import (
    ACCELERATOR_LABEL,
    ACCELERATOR_LABEL_VALUE,
    AGENTPOOL_LABEL,
    ARCH_LABEL,
    INSTANCE_TYPE_LABEL,
    MODE_LABEL,
    OS_LABEL,
    ROLE_LABEL,
    SPOT_LABEL,
    gpu_sku,
    vcpus_in_size_name,
)
from .pools.model import CapacityType, Offer, Pool

# Kubernetes' well-known labels (k8s.io/api core/v1 well_known_labels.go); the first three in the catalog.
REGION_LABEL = "topology.kubernetes.io/region"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
#: The beta aliases the cloud node controller and the kubelet still write, with the stable label's value.
BETA_ALIASES: Mapping[str, str] = {
    "beta.kubernetes.io/os": OS_LABEL,
    "beta.kubernetes.io/arch": ARCH_LABEL,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE_LABEL,
    "failure-domain.beta.kubernetes.io/region": REGION_LABEL,
    "failure-domain.beta.kubernetes.io/zone": ZONE_LABEL,
}

# Karpenter's (kubernetes-sigs/karpenter pkg/apis/v1/labels.go).
NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
#: `CapacityTypeSpot`, `CapacityTypeOnDemand`, as the contract's `capacityTypes` spells them.
KARPENTER_CAPACITY: Mapping[str, str] = {"spot": "spot", "onDemand": "on-demand"}

# The Azure provider's (karpenter-provider-azure pkg/apis/v1beta1/labels.go).
_AZURE = "karpenter.azure.com/"
SKU_NAME_LABEL = _AZURE + "sku-name"
SKU_FAMILY_LABEL = _AZURE + "sku-family"
SKU_CPU_LABEL = _AZURE + "sku-cpu"
SKU_GPU_NAME_LABEL = _AZURE + "sku-gpu-name"
SKU_GPU_COUNT_LABEL = _AZURE + "sku-gpu-count"
SKU_GPU_MANUFACTURER_LABEL = _AZURE + "sku-gpu-manufacturer"
#: Labels whose value depends on Azure's answer about the size or on where the node lands: carried,
#: with a value only the live node shows.
_AZURE_UNKNOWN = tuple(_AZURE + name for name in (
    "sku-series", "sku-version", "sku-memory", "sku-networking-accelerated", "sku-storage-premium-capable",
    "sku-storage-ephemeralos-maxsize", "placement-scope"))
_AKS = "kubernetes.azure.com/"
#: The AKS domain's labels Karpenter's Azure provider knows (`AKSLabelCPU` ... `AKSLabelOSSKU`).
AKS_SKU_CPU_LABEL = _AKS + "sku-cpu"
_AKS_ON_NAP_UNKNOWN = tuple(_AKS + name for name in (
    "sku-memory", "cluster", "mode", "scalesetpriority", "priority", "os-sku", "agentpool"))

# AKS's on AgentPool nodes (reserved-labels-reference.md).
_AKS_ON_AGENTPOOL_UNKNOWN = (*(_AKS + name for name in ("os-sku", "node-image-version", "cluster")),
                             # AKS's legacy unprefixed storage labels and the Azure Disk CSI driver's zone.
                             "storageprofile", "storagetier", "topology.disk.csi.azure.com/zone")


@dataclass(frozen=True)
class UnknownKeys:
    """Labels a node carries, or may, with a value known only on the live node: the `keys` named, and
    any key under `prefixes` but those in `absent` (known to be missing). AKS's node bootstrap writes
    dozens of `kubernetes.azure.com/` labels on every node (`network-subnet`, `node-image-version`,
    `os-sku-effective`, `kubelet-identity-client-id`, ...; a live node's `kubectl get nodes --show-labels`),
    more with each release: a selector on one gpu-aks does not list is "cannot tell", never "fits no pool"."""

    keys: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    absent: frozenset[str] = frozenset()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in self.keys or (key.startswith(self.prefixes) and key not in self.absent))


@dataclass(frozen=True)
class NodeLabels:
    """The labels one kind of node of a pool carries: `known` with their values, `unknown` carried but
    with a value known only on the live node (a hostname, a zone)."""

    known: Mapping[str, str]
    unknown: UnknownKeys = UnknownKeys()

    def carries(self, key: str) -> bool:
        return key in self.known or key in self.unknown


@dataclass(frozen=True)
class NodeKind:
    """One kind of node a pool may bring: an offer (a VM size) bought one way (Spot or on-demand)."""

    offer: Offer
    capacity_type: CapacityType
    labels: NodeLabels


def _with_aliases(known: dict[str, str], unknown: set[str], absent: frozenset[str] = frozenset()) -> NodeLabels:
    for alias, stable in BETA_ALIASES.items():
        if stable in known:
            known[alias] = known[stable]
        elif stable in unknown:
            unknown.add(alias)
    return NodeLabels(known, UnknownKeys(frozenset(unknown - set(known)), (_AKS,), absent | frozenset(known)))


def _common(offer: Offer, region: str | None) -> tuple[dict[str, str], set[str]]:
    sku = gpu_sku(offer.vm_size or "")
    known = {OS_LABEL: "linux", ARCH_LABEL: sku.arch if sku else "amd64"}
    unknown = {HOSTNAME_LABEL, ZONE_LABEL}
    if offer.vm_size:
        known[INSTANCE_TYPE_LABEL] = offer.vm_size
    else:
        unknown.add(INSTANCE_TYPE_LABEL)
    if region:
        known[REGION_LABEL] = region
    else:
        unknown.add(REGION_LABEL)
    return known, unknown


def agent_pool_node_labels(name: str, pool: Pool, offer: Offer, capacity_type: CapacityType,
                           region: str | None) -> NodeLabels:
    """What AKS puts on a node of an AgentPool-backed GPU pool, with the pool's own `nodeLabels`.
    The zone is `0` on a non-zonal pool and `<region>-<n>` on a zonal one; the contract does not say
    which, so it is left unknown."""
    known, unknown = _common(offer, region)
    azure_name = pool.azure_name or name
    known.update({AGENTPOOL_LABEL: azure_name, "agentpool": azure_name, MODE_LABEL: "user", ROLE_LABEL: "agent",
                  # AKS's "use-nvidia-gpu": every node of an N-series size.
                  "kubernetes.azure.com/accelerator": ACCELERATOR_LABEL_VALUE})
    if capacity_type == "spot":
        known[SPOT_LABEL] = "spot"
    unknown.update(_AKS_ON_AGENTPOOL_UNKNOWN)
    known.update(pool.labels)
    # AKS writes the Spot label on Spot pools only ("regular" is never written by AKS: labels.go).
    return _with_aliases(known, unknown, frozenset() if capacity_type == "spot" else frozenset({SPOT_LABEL}))


def nap_node_labels(name: str, pool: Pool, offer: Offer, capacity_type: CapacityType,
                    region: str | None) -> NodeLabels:
    """What Karpenter and its Azure provider put on a node of a NAP NodePool (its `metadata.name` is
    the pool's name), with the NodePool's template labels."""
    known, unknown = _common(offer, region)
    known[NODEPOOL_LABEL] = name
    known[CAPACITY_TYPE_LABEL] = KARPENTER_CAPACITY[capacity_type]
    # The node bootstrap's labels (karpenter-provider-azure `pkg/providers/imagefamily/bootstrap/aksbootstrap.go`
    # `getAgentbakerGeneratedLabels`, commit a96f5dc): `role: agent` and the cluster's node resource group.
    known[ROLE_LABEL] = "agent"
    known["karpenter.sh/registered"] = "true"
    known["karpenter.sh/initialized"] = "true"
    sku = gpu_sku(offer.vm_size or "")
    if offer.vm_size:
        known[SKU_NAME_LABEL] = offer.vm_size
        # skewer's `Family` of every N-series size is "N".
        known[SKU_FAMILY_LABEL] = "N"
        vcpus = vcpus_in_size_name(offer.vm_size)
        for key in (SKU_CPU_LABEL, AKS_SKU_CPU_LABEL):
            if vcpus is None:
                unknown.add(key)
            else:
                known[key] = str(vcpus)
    known[SKU_GPU_MANUFACTURER_LABEL] = "nvidia"
    if offer.gpus_per_vm is not None:
        known[SKU_GPU_COUNT_LABEL] = str(offer.gpus_per_vm)
    else:
        unknown.add(SKU_GPU_COUNT_LABEL)
    if sku is not None and sku.karpenter_gpu_name:
        known[SKU_GPU_NAME_LABEL] = sku.karpenter_gpu_name
    else:
        # Older skewer versions give these sizes no GPU name, newer ones do (`ND96asr_v4` -> `A100`).
        unknown.add(SKU_GPU_NAME_LABEL)
    unknown.update(_AZURE_UNKNOWN, _AKS_ON_NAP_UNKNOWN)
    known.update(pool.labels)
    # Karpenter adds no `kubernetes.azure.com/accelerator` (Azure's NodePool CRD refuses it, and the
    # provider's RestrictedLabels keep Karpenter from writing it).
    return _with_aliases(known, unknown, frozenset({"kubernetes.azure.com/accelerator"}))


def node_kinds(name: str, pool: Pool, region: str | None) -> Iterator[NodeKind]:
    """Every kind of node the pool may bring, in Karpenter's order of preference: Spot before on-demand
    (`karpenter.sh/capacity-type` lists are a set; Karpenter tries Spot first whatever their order)."""
    labelled = nap_node_labels if pool.backend == "nodePool" else agent_pool_node_labels
    for offer in pool.offers:
        for capacity in sorted(offer.capacity_types, key=lambda kind: kind != "spot"):
            yield NodeKind(offer, capacity, labelled(name, pool, offer, capacity, region))


def every_node_carries(kinds: Iterable[NodeKind]) -> dict[str, str]:
    """The labels with one value on every kind of node a pool may bring (what a pod may select to land
    there)."""
    known = [kind.labels.known for kind in kinds]
    if not known:
        return {}
    first, *rest = known
    return {key: value for key, value in first.items() if all(other.get(key) == value for other in rest)}


__all__ = ["ACCELERATOR_LABEL", "NodeKind", "NodeLabels", "UnknownKeys", "agent_pool_node_labels", "every_node_carries",
           "nap_node_labels", "node_kinds"]
