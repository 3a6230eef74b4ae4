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
from collections.abc import Callable, Mapping
from dataclasses import replace
from operator import ge, gt, le, lt
from typing import Any

from ..catalog import (
    AKS_MAX_NODES_PER_CLUSTER,
    GPU_SKUS,
    NODEPOOL_LIMIT_CEILINGS,
    OS_LABEL,
    GpuSku,
    gpu_sku,
    is_gpu_vm_size,
    vcpus_in_size_name,
)
from ..podspecs import UndecidableError, join, known, list_at, mapping_at
from ..quantities import QuantityError, parse_quantity, shown
from ..scheduling import TaintSyntaxError, format_taint, label_int, parse_taint
from .model import AsWritten, CapacityNeed, CapacityType, Offer, Pool, PoolFact, PoolReading, pool_named, spot_first
from .registry import NO_TAINTS, NO_TEXTS, NodeFacts, read_fact, register

_NODEPOOL_TYPE = re.compile(r"kubernetes:karpenter\.sh/v1:NodePool")
_CUSTOM_RESOURCE_TYPE = "kubernetes:apiextensions.k8s.io:CustomResource"
_INSTANCE_TYPE = "node.kubernetes.io/instance-type"
_GPU_NAME = "karpenter.azure.com/sku-gpu-name"
_GPU_COUNT = "karpenter.azure.com/sku-gpu-count"
_GPU_MANUFACTURER = "karpenter.azure.com/sku-gpu-manufacturer"
_SKU_NAME = "karpenter.azure.com/sku-name"
_SKU_FAMILY = "karpenter.azure.com/sku-family"
_SKU_CPU = "karpenter.azure.com/sku-cpu"
_ARCH = "kubernetes.io/arch"
_OS = "kubernetes.io/os"
#: The labels of the instance-type keys a requirement names as Kubernetes wrote them before v1.17
#: (Karpenter normalizes them: kubernetes-sigs/karpenter pkg/apis/v1/labels.go `NormalizedLabels`).
_NORMALIZED = {"beta.kubernetes.io/instance-type": _INSTANCE_TYPE, "beta.kubernetes.io/arch": _ARCH,
               "beta.kubernetes.io/os": _OS}
#: Where a NodePool writes what the pool rules read (the NodePool CRD's field paths).
_REQUIREMENTS = "spec.template.spec.requirements"
_TAINTS = "spec.template.spec.taints"
_LABELS = "spec.template.metadata.labels"
_LIMITS = "spec.limits"
#: How to bound a GPU NodePool, and the bound it lacks: Karpenter starts at no node.
_BOUNDS_FIX = "spec.limits: {nvidia.com/gpu: <the most GPUs you will pay for>}"
_NO_LOWER_BOUND = "(none: Karpenter starts at no node)"


def _size_labels(sku: GpuSku) -> dict[str, str]:
    """The labels Karpenter's Azure provider gives a GPU size's instance type, of those a NodePool's
    requirements are read against here (karpenter-provider-azure pkg/apis/v1beta1/labels.go and
    pkg/providers/instancetype: `Standard_NC24ads_A100_v4` has sku-family `N`, sku-gpu-name `A100`,
    sku-gpu-manufacturer `nvidia`, sku-gpu-count its GPUs, sku-cpu its vCPUs)."""
    labels = {_INSTANCE_TYPE: sku.vm_size, _SKU_NAME: sku.vm_size, _GPU_MANUFACTURER: "nvidia",
              _GPU_COUNT: str(sku.gpus), _ARCH: sku.arch, _OS: "linux",
              _SKU_FAMILY: sku.vm_size.removeprefix("Standard_")[:1].upper()}
    if sku.karpenter_gpu_name:
        labels[_GPU_NAME] = sku.karpenter_gpu_name
    vcpus = vcpus_in_size_name(sku.vm_size)
    if vcpus is not None:
        labels[_SKU_CPU] = str(vcpus)
    return labels


#: Karpenter's integer-bound operators: Gt and Lt as Kubernetes has them, Gte and Lte Karpenter's own.
_BOUND_OPERATORS: dict[str, Callable[[int, int], bool]] = {
    "Gt": gt, "Lt": lt, "Gte": ge, "Lte": le}


def _has(operator: str, values: list[str], value: str | None) -> bool | None:
    """Whether one requirement admits an instance type whose label is `value` (None: it has no such
    label), as Karpenter reads requirements (kubernetes-sigs/karpenter pkg/scheduling/requirement.go:
    `In` is a set, `NotIn` and `Exists` its complement, `DoesNotExist` the empty set, `Gt`/`Lt` an
    unbounded set with integer bounds, `Gte`/`Lte` the same bounds inclusive (both NodePool CRDs list
    them: tests/fixtures/karpenter/); `Has` needs an integer value inside the bounds). None: an
    operator this reading does not know."""
    if operator == "In":
        return value is not None and value in values
    if operator == "NotIn":
        return value is None or value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if operator in _BOUND_OPERATORS:
        # Bounds and label values are read as Go's strconv reads a label value (`scheduling.label_int`):
        # both NodePool CRDs hold requirement values to the label-value pattern, which has no sign
        # (tests/fixtures/karpenter/), so `+4` bounds nothing.
        bound = label_int(values[0]) if len(values) == 1 else None
        number = label_int(value) if value is not None else None
        if bound is None or number is None:
            return False
        return _BOUND_OPERATORS[operator](number, bound)
    return None
#: Resources whose `spec.limits` bound a GPU NodePool's size.
_BOUNDING_LIMITS = ("nvidia.com/gpu", "cpu")


def nodes_admitted(sku: GpuSku, bounding: Mapping[str, Any]) -> int:
    """The most nodes of one size a NodePool's bounding `limits` (`nvidia.com/gpu`, `cpu`: numbers) admit:
    Karpenter launches no node that would pass a limit (kubernetes-sigs/karpenter
    `filterByRemainingResources`), and AKS holds at most AKS_MAX_NODES_PER_CLUSTER nodes; 0 where no limit
    bounds the pool. The one count of a NodePool's nodes: the pack's reader and the platform's NAP kind
    (which writes the NodePool, then reads it here) both take it."""
    counts = [int(bounding["nvidia.com/gpu"] // sku.gpus)] if "nvidia.com/gpu" in bounding else []
    vcpus = vcpus_in_size_name(sku.vm_size)
    if "cpu" in bounding and vcpus:
        counts.append(int(bounding["cpu"] // vcpus))
    return min(AKS_MAX_NODES_PER_CLUSTER, *counts) if counts else 0


#: Karpenter's `karpenter.sh/capacity-type` values (kubernetes-sigs/karpenter pkg/apis/v1/labels.go), as the
#: pool model spells them; a NodePool that names none is bought on-demand (Karpenter's default requirement).
_CAPACITY: dict[str, CapacityType] = {"spot": "spot", "on-demand": "onDemand"}
_CAPACITY_TYPE = "karpenter.sh/capacity-type"


def _capacity_types(requirements: list[tuple[str, str, list[str]]]) -> tuple[CapacityType, ...]:
    """How the NodePool's nodes may be bought, in the order its requirement lists them: the capacity types
    every requirement on `karpenter.sh/capacity-type` admits (on-demand where none names the key)."""
    named = [values for key, operator, values in requirements if key == _CAPACITY_TYPE and operator == "In"]
    order = list(dict.fromkeys(value for values in named for value in values)) or list(_CAPACITY)
    admitted = [kind for kind in order if kind in _CAPACITY and all(
        _has(operator, values, kind) is not False for key, operator, values in requirements if key == _CAPACITY_TYPE)]
    if not any(key == _CAPACITY_TYPE for key, _, _ in requirements):
        admitted = ["on-demand"]
    return tuple(_CAPACITY[kind] for kind in admitted)


def _template(props: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = mapping_at(props.get("spec"), "spec")
    return mapping_at(spec.get("template"), "spec.template")


def _template_labels(props: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = mapping_at(_template(props).get("metadata"), "spec.template.metadata").get("labels")
    return {str(k): v for k, v in mapping_at(labels, "spec.template.metadata.labels").items()}


def _requirements(props: Mapping[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(key, operator, values) of each requirement, in order; a key may be required more than once
    (Karpenter intersects them)."""
    template_spec = mapping_at(_template(props).get("spec"), "spec.template.spec")
    found: list[tuple[str, str, list[str]]] = []
    path = _REQUIREMENTS
    for index, item in enumerate(list_at(template_spec.get("requirements"), path)):
        if not isinstance(item, abc.Mapping):
            continue
        key, operator = known(item.get("key"), join(join(path, index), "key")), item.get("operator")
        values = [str(v) for v in list_at(item.get("values"), join(join(path, index), "values"))]
        if isinstance(key, str) and isinstance(operator, str):
            found.append((_NORMALIZED.get(key, key), operator, values))
    # Karpenter requires the template's labels too (kubernetes-sigs/karpenter `NodeClaimTemplate`:
    # `Requirements.Add(scheduling.NewLabelRequirements(nodePool.Spec.Template.Labels)...)`): a label
    # `node.kubernetes.io/instance-type: Standard_D8ds_v5` admits that size alone.
    # A value the preview does not know yet, on a key that picks sizes, leaves the pool undecided.
    path = _LABELS
    for written, value in _template_labels(props).items():
        key = _NORMALIZED.get(written, written)
        found.append((key, "In", [str(known(value, join(path, written)) if key in _READ_KEYS else value)]))
    return found


def _vm_sizes(props: Mapping[str, Any]) -> tuple[str, ...]:
    """The catalog's GPU sizes the requirements admit, whatever operators and keys select them
    (`sku-gpu-name In [H100]`, `sku-gpu-count Gt 0`, `sku-gpu-manufacturer Exists`, none at all: a
    NodePool without requirements launches any size a pending GPU pod needs), and the sizes outside
    the catalog its instance-type requirements name. A requirement on a key read nowhere here (a
    zone, the capacity type, a label of your own) is taken as admitting: the pool is judged
    whenever it may launch a GPU node."""
    requirements = _requirements(props)
    admitted = [sku.vm_size for sku in GPU_SKUS.values() if _admits(requirements, _size_labels(sku))]
    written = [values for key, operator, values in requirements
               if key in (_INSTANCE_TYPE, _SKU_NAME) and operator == "In"]
    named = [set(values) for values in written]
    # Sizes the catalog does not know, as written (the rules say whether each is a GPU size).
    unknown = [size for size in dict.fromkeys(size for values in written for size in values)
               if gpu_sku(size) is None and all(size in values for values in named)]
    return tuple(admitted + unknown)


def _taints(props: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The taints the NodePool's nodes carry, and why each written one that is not a taint is none."""
    template_spec = mapping_at(_template(props).get("spec"), "spec.template.spec")
    taints, problems = [], []
    for index, item in enumerate(list_at(template_spec.get("taints"), _TAINTS)):
        item = known(item, join(_TAINTS, index))
        if not isinstance(item, abc.Mapping):
            problems.append(f"taint {index} is not an object with key and effect")
            continue
        key, value, effect = item.get("key"), item.get("value", ""), item.get("effect")
        text = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        try:
            taints.append(format_taint(parse_taint(text)))
        except TaintSyntaxError as error:
            problems.append(str(error))
    return tuple(taints), tuple(problems)


def _bounds(props: Mapping[str, Any], sizes: Callable[[], tuple[str, ...]]) -> tuple[AsWritten, dict[str, int]]:
    """Bounded when a GPU or vCPU limit is a ceiling some cluster can reach: 0 up to what AKS's most
    nodes hold (`NODEPOOL_LIMIT_CEILINGS`, the ceilings gpu-aks's own NodePools keep to). Past it
    (`1e30`, `"100000"` GPUs) a limit bounds nothing; below 0, or one Karpenter cannot read, no
    NodePool the API server takes has it. Each such limit is named with why. With the most nodes the
    limits admit of each size of the catalog the NodePool may bring (0 where they bound nothing)."""
    spec = mapping_at(props.get("spec"), "spec")
    limits = mapping_at(spec.get("limits"), _LIMITS)
    bounding, unusable = {}, []
    for key in _BOUNDING_LIMITS:
        if key not in limits:
            continue
        written = known(limits[key], join(_LIMITS, key))
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
    skus = [sku for sku in map(gpu_sku, sizes()) if sku is not None]
    # A limit of 0 is written on purpose (a paused NodePool); a positive one no size fits is a mistake.
    if bounding and all(bounding.values()) and skus and not any(nodes_admitted(sku, bounding) for sku in skus):
        # Karpenter launches no node that would pass a limit (kubernetes-sigs/karpenter
        # `filterByRemainingResources`): such a NodePool never brings a node, and its pods wait forever.
        smallest = min(skus, key=lambda sku: sku.gpus)
        unusable.append(f"they admit no node of any size the NodePool may bring (the smallest, {smallest.vm_size}, "
                        f"has {smallest.gpus} GPUs and {vcpus_in_size_name(smallest.vm_size)} vCPUs)")
    written = ", ".join(f"{key}: {shown(limits[key], 64).strip(chr(39))}" for key in bounding) or "no limits"
    bounded = bool(bounding) and not unusable
    nodes = {sku.vm_size: nodes_admitted(sku, bounding) if bounded else 0 for sku in skus}
    upper = (_LIMITS, written)
    if unusable:
        written += f"; {'; '.join(unusable)}"
    return AsWritten(bounded, f"{_LIMITS}: {written}", _BOUNDS_FIX, (_NO_LOWER_BOUND, "0"), upper), nodes


def _node_labels(name: str, props: Mapping[str, Any]) -> dict[str, str]:
    written = {key: str(value) for key, value in _template_labels(props).items()}
    # Karpenter labels every node with its NodePool and OS (kubernetes-sigs/karpenter pkg/apis/v1/labels.go;
    # the Azure provider's `computeRequirements` gives `kubernetes.io/os` one value, linux for every
    # image family gpu-aks allows).
    return {OS_LABEL: "linux", "beta.kubernetes.io/os": "linux", **written, NODEPOOL_LABEL: name}


def _node_pool(name: str, props: Mapping[str, Any]) -> PoolReading:
    """One NodePool (`props`: the custom resource's inputs) as the one pool model: each fact read once,
    on its own (a value the preview does not know yet hides that fact alone)."""
    unknown: dict[PoolFact, str] = {}
    sizes = read_fact(unknown, "offers", lambda: _vm_sizes(props), NO_TEXTS)

    def known_sizes() -> tuple[str, ...]:
        # The limits and the plugin ask the sizes too: hidden sizes hide them (after the limits' own values).
        if "offers" in unknown:
            raise UndecidableError(unknown["offers"])
        return sizes

    taints, problems = read_fact(unknown, "taints", lambda: _taints(props), NO_TAINTS)
    no_nodes: dict[str, int] = {}
    written, nodes = read_fact(unknown, "count", lambda: _bounds(props, known_sizes),
                               (AsWritten(False, "", _BOUNDS_FIX), no_nodes))
    on_demand: tuple[CapacityType, ...] = ("onDemand",)
    capacity = read_fact(unknown, "offers", lambda: _capacity_types(_requirements(props)), on_demand)
    # NAP installs the NVIDIA driver on its GPU nodes (AKSNodeClass `gpu.mode: Driver`, the default),
    # not the device plugin: whoever declares an NVIDIA NodePool runs one.
    needs_plugin = read_fact(unknown, "plugin", lambda: any(gpu_sku(size) is not None for size in known_sizes()), False)
    # Sizes the catalog lacks are offers without a GPU sku: the rules say by its name whether one is a GPU size.
    pool = Pool(name=name, key=name, role="gpu" if any(map(is_gpu_vm_size, sizes)) else "cpu", backend="nodePool",
                azure_name=None, offers=tuple(Offer.sized(size, gpu_sku(size), capacity_types=spot_first(capacity))
                                              for size in sizes),
                min_count=0, max_count=max(nodes.values(), default=0), spot=capacity == ("spot",), zones=(),
                taints=taints, labels=read_fact(unknown, "labels", lambda: _node_labels(name, props), {}),
                # Each catalog size at the most nodes the limits admit of it, per capacity type (for quota).
                capacity=tuple(CapacityNeed(name, size, kind == "spot", (), count, 0)
                               for size, count in nodes.items() for kind in capacity))
    return PoolReading(
        pool, source={"pool": _TAINTS, "offers": _REQUIREMENTS, "taints": _TAINTS, "count": _LIMITS, "labels": _LABELS,
                      "plugin": _REQUIREMENTS},
        written=replace(written, taints_field=_TAINTS, taints_as_text=False, taint_problems=problems), unknown=unknown,
        needs_device_plugin=needs_plugin)


def _admits(requirements: list[tuple[str, str, list[str]]], labels: Mapping[str, str]) -> bool:
    """Every requirement on a key the size's labels are read for admits its value (a key read nowhere
    here admits it); requirements on one key are intersected, as Karpenter does."""
    for key, operator, values in requirements:
        if key not in _READ_KEYS:
            continue
        if _has(operator, values, labels.get(key)) is False:
            return False
    return True


#: The keys `_size_labels` gives a value (or leaves absent on purpose: sku-gpu-name of a size whose name
#: has no GPU token).
_READ_KEYS = frozenset({_INSTANCE_TYPE, _SKU_NAME, _GPU_MANUFACTURER, _GPU_COUNT, _GPU_NAME, _ARCH, _OS,
                        _SKU_FAMILY, _SKU_CPU})


def _recognizes(resource_type: str) -> bool:
    return bool(_NODEPOOL_TYPE.fullmatch(resource_type))


#: The label Karpenter puts on the nodes it creates: their NodePool (kubernetes-sigs/karpenter
#: pkg/apis/v1/labels.go).
NODEPOOL_LABEL = "karpenter.sh/nodepool"


def _replace_hint(node_name: str, labels: Mapping[str, str]) -> str:
    # The node's label is any text the cluster holds: named as a pool's name is, cut and on one line.
    return f"kubectl delete node {node_name} (Karpenter's NodePool {pool_named(labels.get(NODEPOOL_LABEL, ''))} replaces it)"


#: A NodePool's nodes: Karpenter's own taints while it starts or disrupts a node (`karpenter.sh/unregistered`,
#: `karpenter.sh/disrupted`; kubernetes-sigs/karpenter pkg/apis/v1/taints.go); Azure's GPU label
#: (karpenter-provider-azure pkg/apis/v1beta1/labels.go; NAP nodes lack `kubernetes.azure.com/accelerator`);
#: a deleted node's NodeClaim is replaced by its NodePool.
NODES = NodeFacts(taint_prefixes=("karpenter.sh/",), gpu_labels={_GPU_MANUFACTURER: "nvidia"},
                  node_label=NODEPOOL_LABEL, replace_hint=_replace_hint)


@register("nodePool", _recognizes, source="karpenter.sh/v1 NodePool (AKS node auto-provisioning)", nodes=NODES)
def node_pools(resource_type: str, props: Mapping[str, Any]) -> list[PoolReading]:
    metadata = mapping_at(props.get("metadata"), "metadata")
    name = metadata.get("name")
    return [_node_pool(name if isinstance(name, str) else "", props)]
