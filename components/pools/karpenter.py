"""Karpenter objects for AKS node auto-provisioning (NAP): a GPU `NodePool` and its `AKSNodeClass`.

Pure builders over plain values, no Pulumi: they return the manifests as dicts, which the NAP pool
kind hands to pulumi-kubernetes and the tests validate against the projects' published CRD schemas
(`tests/fixtures/karpenter/`, copied from Azure/karpenter-provider-azure `pkg/apis/crds/` and
kubernetes-sigs/karpenter `pkg/apis/crds/`).

Facts, each from the owners' code or docs:
- AKS NAP runs Azure/karpenter-provider-azure. Its NodePool is `karpenter.sh/v1`; its node class is
  `AKSNodeClass` in `karpenter.azure.com/v1beta1` (the CRD's served, stored version; `v1alpha2` is
  served but marked `deprecated: true` with "use v1beta1.AKSNodeClass instead").
- Requirements use Azure's labels (`pkg/apis/v1beta1/labels.go`): `karpenter.azure.com/sku-gpu-name`
  (the accelerator token of the size name, e.g. `H100`), `sku-gpu-count`, `sku-gpu-manufacturer`
  (`nvidia`), `sku-family`; with `node.kubernetes.io/instance-type` and `karpenter.sh/capacity-type`
  (`spot`, `on-demand`). Allowing both capacity types makes Karpenter launch Spot and fall back to
  on-demand when Spot is unavailable (karpenter.sh docs, NodePools, "capacity-type").
- Karpenter adds no GPU taint and no `kubernetes.azure.com/accelerator` label (Azure's NodePool CRD
  refuses `accelerator` and `kubernetes.azure.com/*` labels but a few): the pool declares its taint
  and its `gpu-aks.io/pool` label itself, as every fixed pool does.
- Disruption (`karpenter.sh_nodepools.yaml`): `consolidationPolicy` `WhenEmpty` never removes a node
  that runs a pod (a GPU job keeps its node); `expireAfter` defaults to 720h, after which Karpenter
  replaces the node even under a running job, so GPU pools say `Never`; a `budgets` entry of
  `nodes: "0"` for `Drifted` keeps a node-image drift from draining GPU nodes (drift is replaced at
  the next empty moment instead). `karpenter.sh/do-not-disrupt: "true"` on a pod is the per-pod brake.
- `weight`: Karpenter tries the NodePool of highest weight first (1-100).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from gpu_aks_policies.scheduling import parse_taint

NODEPOOL_API_VERSION = "karpenter.sh/v1"
NODE_CLASS_API_VERSION = "karpenter.azure.com/v1beta1"
NODE_CLASS_GROUP = "karpenter.azure.com"
NODE_CLASS_KIND = "AKSNodeClass"

#: Azure's well-known labels (karpenter-provider-azure `pkg/apis/v1beta1/labels.go`).
SKU_GPU_NAME_LABEL = "karpenter.azure.com/sku-gpu-name"
SKU_GPU_COUNT_LABEL = "karpenter.azure.com/sku-gpu-count"
SKU_GPU_MANUFACTURER_LABEL = "karpenter.azure.com/sku-gpu-manufacturer"
SKU_FAMILY_LABEL = "karpenter.azure.com/sku-family"
#: Kubernetes and Karpenter well-known labels.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ARCH_LABEL = "kubernetes.io/arch"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
#: The pod annotation that keeps Karpenter from disrupting its node (karpenter.sh docs, Disruption).
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"

#: `karpenter.sh/capacity-type` values.
KarpenterCapacity = Literal["spot", "on-demand"]
#: `AKSNodeClass.spec.imageFamily` (v1beta1 enum).
IMAGE_FAMILIES = ("Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux")
#: `AKSNodeClass.spec.gpu.mode`: `Driver` (AKS installs the NVIDIA driver) or `None` (bring your own).
GPU_MODES = ("Driver", "None")


@dataclass(frozen=True)
class GpuNodePoolSpec:
    """What one GPU NodePool says, in the platform's terms (the NAP pool kind fills it from settings)."""

    name: str
    node_class: str
    #: `sku-gpu-name` values (e.g. "H100"); empty when the pool names sizes instead.
    gpu_names: tuple[str, ...] = ()
    #: `sku-gpu-count` values; empty for any count.
    gpu_counts: tuple[int, ...] = ()
    #: `node.kubernetes.io/instance-type` values; empty when the pool names GPUs.
    vm_sizes: tuple[str, ...] = ()
    #: Spot first when both are allowed; on-demand is then the fallback.
    capacity_types: tuple[KarpenterCapacity, ...] = ("on-demand",)
    taints: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    #: Resource ceilings, Kubernetes quantities as strings: {"nvidia.com/gpu": "16"} or {"cpu": "320"}.
    limits: Mapping[str, str] = field(default_factory=dict)
    weight: int | None = None
    #: How long a node stays empty before Karpenter removes it.
    consolidate_after: str = "10m"
    #: `kubernetes.io/arch` values the sizes run ("arm64" for Grace hosts); empty for no requirement.
    architectures: tuple[str, ...] = ()


def _taint(text: str) -> dict[str, str]:
    parsed = parse_taint(text)
    taint = {"key": parsed["key"], "effect": parsed["effect"]}
    if parsed.get("value"):
        taint["value"] = parsed["value"]
    return taint


def _requirement(key: str, values: Sequence[str]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


def requirements(spec: GpuNodePoolSpec) -> list[dict[str, Any]]:
    """The NodePool's requirements: NVIDIA GPUs of the named kinds (or sizes), the capacity types and
    the architecture. Every key here is one Azure's NodePool CRD allows."""
    found = [_requirement(SKU_GPU_MANUFACTURER_LABEL, ["nvidia"])]
    if spec.gpu_names:
        found.append(_requirement(SKU_GPU_NAME_LABEL, spec.gpu_names))
    if spec.gpu_counts:
        found.append(_requirement(SKU_GPU_COUNT_LABEL, [str(count) for count in sorted(set(spec.gpu_counts))]))
    if spec.vm_sizes:
        found.append(_requirement(INSTANCE_TYPE_LABEL, spec.vm_sizes))
    if spec.architectures:
        found.append(_requirement(ARCH_LABEL, sorted(set(spec.architectures))))
    found.append(_requirement(CAPACITY_TYPE_LABEL, spec.capacity_types))
    return found


def gpu_node_pool(spec: GpuNodePoolSpec) -> dict[str, Any]:
    """A `karpenter.sh/v1` NodePool for GPU nodes that never disrupts a node under a GPU job."""
    pool_spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": dict(spec.labels)},
            "spec": {
                "nodeClassRef": {"group": NODE_CLASS_GROUP, "kind": NODE_CLASS_KIND, "name": spec.node_class},
                "requirements": requirements(spec),
                "taints": [_taint(taint) for taint in spec.taints],
                # The default (720h) would replace a node under a week-long training job.
                "expireAfter": "Never",
            },
        },
        "disruption": {
            # Only empty nodes are removed: a node that runs a GPU pod is never consolidated away.
            "consolidationPolicy": "WhenEmpty",
            "consolidateAfter": spec.consolidate_after,
            # Drift (a new node image, a changed NodePool) waits for the node to empty instead of
            # draining GPU jobs; empty nodes go, a few at a time.
            "budgets": [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "10%", "reasons": ["Empty"]}],
        },
    }
    if spec.limits:
        pool_spec["limits"] = dict(spec.limits)
    if spec.weight is not None:
        pool_spec["weight"] = spec.weight
    return {"apiVersion": NODEPOOL_API_VERSION, "kind": "NodePool", "metadata": {"name": spec.name},
            "spec": pool_spec}


def aks_node_class(name: str, image_family: str = "Ubuntu", os_disk_size_gb: int | None = None,
                   gpu_mode: str = "Driver", tags: Mapping[str, str] | None = None,
                   vnet_subnet_id: str | None = None) -> dict[str, Any]:
    """A `karpenter.azure.com/v1beta1` AKSNodeClass: the node image and disk of a GPU NodePool.
    `gpu.mode: Driver` lets AKS install the NVIDIA driver (the device plugin is the platform's)."""
    spec: dict[str, Any] = {"imageFamily": image_family, "gpu": {"mode": gpu_mode}}
    if os_disk_size_gb is not None:
        spec["osDiskSizeGB"] = os_disk_size_gb
    if tags:
        spec["tags"] = dict(tags)
    if vnet_subnet_id:
        # "the subnet used by nics provisioned with this nodeclass"; without it Karpenter uses its
        # --vnet-subnet-id, the cluster's node subnet (karpenter.azure.com_aksnodeclasses.yaml).
        spec["vnetSubnetID"] = vnet_subnet_id
    return {"apiVersion": NODE_CLASS_API_VERSION, "kind": NODE_CLASS_KIND, "metadata": {"name": name}, "spec": spec}
