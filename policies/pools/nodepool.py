"""Karpenter NodePools (AKS node auto-provisioning): a `karpenter.sh/v1` NodePool custom resource, as
pulumi-kubernetes registers it (`kubernetes:karpenter.sh/v1:NodePool`, or an `apiextensions`
CustomResource whose `apiVersion` is `karpenter.sh/v1` and `kind` `NodePool`).

Field names and semantics are the NodePool CRD's (kubernetes-sigs/karpenter `pkg/apis/v1/nodepool.go`;
Azure/karpenter-provider-azure `pkg/apis/crds/karpenter.sh_nodepools.yaml`): the nodes' taints and
labels are `spec.template.spec.taints` and `spec.template.metadata.labels`; what sizes it may bring are
its `spec.template.spec.requirements` (`node.kubernetes.io/instance-type`, or Azure's
`karpenter.azure.com/sku-gpu-name` / `sku-gpu-count` / `sku-gpu-manufacturer`); its ceiling is
`spec.limits`. Karpenter adds no taint of its own to a running node and no `accelerator` label.
"""

from __future__ import annotations

import re
from collections import abc
from collections.abc import Mapping
from typing import Any

from ..catalog import (
    AKS_MAX_NODES_PER_CLUSTER,
    GPU_SKUS,
    NODEPOOL_LIMIT_CEILINGS,
    OS_LABEL,
    gpu_sku,
    vcpus_in_size_name,
)
from ..podspecs import join, known, list_at, mapping_at
from ..quantities import QuantityError, parse_quantity, shown
from ..scheduling import TaintSyntaxError, parse_taint
from .registry import NodeFacts, register
from .view import PoolView, Scaling

_NODEPOOL_TYPE = re.compile(r"kubernetes:karpenter\.sh/v1:NodePool")
_CUSTOM_RESOURCE_TYPE = "kubernetes:apiextensions.k8s.io:CustomResource"
_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
_GPU_NAME = "karpenter.azure.com/sku-gpu-name"
_GPU_COUNT = "karpenter.azure.com/sku-gpu-count"
_GPU_MANUFACTURER = "karpenter.azure.com/sku-gpu-manufacturer"
#: Resources whose `spec.limits` bound a GPU NodePool's size.
_BOUNDING_LIMITS = ("nvidia.com/gpu", "cpu")


def _nodes_admitted(sku: Any, bounding: Mapping[str, Any]) -> int:
    """How many nodes of the size the limits admit."""
    counts = [int(bounding["nvidia.com/gpu"] // sku.gpus)] if "nvidia.com/gpu" in bounding else []
    vcpus = vcpus_in_size_name(sku.vm_size)
    if "cpu" in bounding and vcpus:
        counts.append(int(bounding["cpu"] // vcpus))
    return min(counts, default=1)


class NodePoolView(PoolView):
    """One NodePool (`props`: the custom resource's inputs)."""

    def __init__(self, name: str, props: Mapping[str, Any]) -> None:
        self.path, self.name, self.props = "", name, props

    def _template(self) -> Mapping[str, Any]:
        spec = mapping_at(self.props.get("spec"), "spec")
        return mapping_at(spec.get("template"), "spec.template")

    def _requirements(self) -> dict[str, tuple[str, list[str]]]:
        template_spec = mapping_at(self._template().get("spec"), "spec.template.spec")
        found: dict[str, tuple[str, list[str]]] = {}
        path = "spec.template.spec.requirements"
        for index, item in enumerate(list_at(template_spec.get("requirements"), path)):
            if not isinstance(item, abc.Mapping):
                continue
            key, operator = known(item.get("key"), join(join(path, index), "key")), item.get("operator")
            values = [str(v) for v in list_at(item.get("values"), join(join(path, index), "values"))]
            if isinstance(key, str) and isinstance(operator, str):
                found[key] = (operator, values)
        return found

    @property
    def taints_path(self) -> str:
        return "spec.template.spec.taints"

    def vm_sizes(self) -> tuple[str, ...]:
        """The sizes named by instance type, else the catalog's sizes with the named GPUs and counts."""
        requirements = self._requirements()
        operator, sizes = requirements.get(_INSTANCE_TYPE, ("", []))
        if operator == "In":
            return tuple(sizes)
        names = {value.lower() for op, values in [requirements.get(_GPU_NAME, ("", []))] if op == "In"
                 for value in values}
        counts = {value for op, values in [requirements.get(_GPU_COUNT, ("", []))] if op == "In" for value in values}
        manufacturer = requirements.get(_GPU_MANUFACTURER, ("", []))
        if not names and manufacturer == ("In", ["nvidia"]):
            return tuple(sku.vm_size for sku in GPU_SKUS.values() if not counts or str(sku.gpus) in counts)
        return tuple(sku.vm_size for sku in GPU_SKUS.values()
                     if (sku.karpenter_gpu_name or "").lower() in names and (not counts or str(sku.gpus) in counts))

    def taints(self) -> tuple[list[dict[str, str]], list[str]]:
        template_spec = mapping_at(self._template().get("spec"), "spec.template.spec")
        taints, problems = [], []
        for index, item in enumerate(list_at(template_spec.get("taints"), self.taints_path)):
            item = known(item, join(self.taints_path, index))
            if not isinstance(item, abc.Mapping):
                problems.append(f"taint {index} is not an object with key and effect")
                continue
            key, value, effect = item.get("key"), item.get("value", ""), item.get("effect")
            text = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
            try:
                taints.append(parse_taint(text))
            except TaintSyntaxError as error:
                problems.append(str(error))
        return taints, problems

    def scaling(self) -> Scaling:
        """Bounded when a GPU or vCPU limit is a ceiling some cluster can reach: 0 up to what AKS's most
        nodes hold (`NODEPOOL_LIMIT_CEILINGS`, the ceilings gpu-aks's own NodePools keep to). Past it
        (`1e30`, `"100000"` GPUs) a limit bounds nothing; below 0, or one Karpenter cannot read, no
        NodePool the API server takes has it. Each such limit is named with why."""
        spec = mapping_at(self.props.get("spec"), "spec")
        limits = mapping_at(spec.get("limits"), "spec.limits")
        bounding, unusable = {}, []
        for key in _BOUNDING_LIMITS:
            if key not in limits:
                continue
            written = known(limits[key], join("spec.limits", key))
            try:
                amount = parse_quantity(written)
            except QuantityError as error:  # a limit Karpenter cannot read bounds nothing: say why
                unusable.append(f"unreadable {key}: {error}")
                continue
            if amount < 0:
                unusable.append(f"{key}: {shown(written, 64)} is negative; a ceiling is 0 (no node) or more")
            elif amount > (most := NODEPOOL_LIMIT_CEILINGS[key]):
                unusable.append(f"{key}: {shown(written, 64)} is above {most}, more than AKS's "
                                f"{AKS_MAX_NODES_PER_CLUSTER} nodes per cluster hold of any GPU size, so it bounds "
                                "nothing")
            else:
                bounding[key] = amount
        sizes = [sku for sku in map(gpu_sku, self.vm_sizes()) if sku is not None]
        # A limit of 0 is written on purpose (a paused NodePool); a positive one no size fits is a mistake.
        if bounding and all(bounding.values()) and sizes and not any(_nodes_admitted(sku, bounding) for sku in sizes):
            # Karpenter launches no node that would pass a limit (kubernetes-sigs/karpenter
            # `filterByRemainingResources`): such a NodePool never brings a node, and its pods wait forever.
            smallest = min(sizes, key=lambda sku: sku.gpus)
            unusable.append(f"they admit no node of any size the NodePool may bring (the smallest, {smallest.vm_size}, "
                            f"has {smallest.gpus} GPUs and {vcpus_in_size_name(smallest.vm_size)} vCPUs)")
        written = ", ".join(f"{key}: {shown(limits[key], 64).strip(chr(39))}" for key in bounding) or "no limits"
        if unusable:
            written += f"; {'; '.join(unusable)}"
        ceiling = next(iter(bounding.values()), None)
        return Scaling(bool(bounding) and not unusable, 0, int(ceiling) if ceiling is not None else None,
                       f"spec.limits: {written}", "spec.limits: {nvidia.com/gpu: <the most GPUs you will pay for>}",
                       min_field="(none: Karpenter starts at no node)", max_field="spec.limits")

    def node_labels(self) -> dict[str, str]:
        labels = mapping_at(self._template().get("metadata"), "spec.template.metadata").get("labels")
        written = {str(k): str(v) for k, v in mapping_at(labels, "spec.template.metadata.labels").items()}
        # Karpenter labels every node with its NodePool and OS (kubernetes-sigs/karpenter pkg/apis/v1/labels.go;
        # the Azure provider's `computeRequirements` gives `kubernetes.io/os` one value, linux for every
        # image family gpu-aks allows).
        return {OS_LABEL: "linux", "beta.kubernetes.io/os": "linux", **written, NODEPOOL_LABEL: self.name}

    def mig(self) -> bool:
        return False

    def served_by_nvidia_plugin(self) -> bool:
        # NAP installs the NVIDIA driver on its GPU nodes (AKSNodeClass `gpu.mode: Driver`, the default),
        # not the device plugin: whoever declares an NVIDIA NodePool runs one.
        return any(gpu_sku(size) is not None for size in self.vm_sizes())


def _recognizes(resource_type: str) -> bool:
    return bool(_NODEPOOL_TYPE.fullmatch(resource_type))


#: The label Karpenter puts on the nodes it creates: their NodePool (kubernetes-sigs/karpenter
#: pkg/apis/v1/labels.go).
NODEPOOL_LABEL = "karpenter.sh/nodepool"


def _replace_hint(node_name: str, labels: Mapping[str, str]) -> str:
    return f"kubectl delete node {node_name} (Karpenter's NodePool {labels.get(NODEPOOL_LABEL, '')} replaces it)"


#: A NodePool's nodes: Karpenter's own taints while it starts or disrupts a node (`karpenter.sh/unregistered`,
#: `karpenter.sh/disrupted`; kubernetes-sigs/karpenter pkg/apis/v1/taints.go); Azure's GPU label
#: (karpenter-provider-azure pkg/apis/v1beta1/labels.go; NAP nodes lack `kubernetes.azure.com/accelerator`);
#: a deleted node's NodeClaim is replaced by its NodePool.
NODES = NodeFacts(taint_prefixes=("karpenter.sh/",), gpu_labels={_GPU_MANUFACTURER: "nvidia"},
                  node_label=NODEPOOL_LABEL, replace_hint=_replace_hint)


@register("nodePool", _recognizes, source="karpenter.sh/v1 NodePool (AKS node auto-provisioning)", nodes=NODES)
def node_pools(resource_type: str, props: Mapping[str, Any]) -> list[PoolView]:
    metadata = mapping_at(props.get("metadata"), "metadata")
    name = metadata.get("name")
    return [NodePoolView(name if isinstance(name, str) else "", props)]
