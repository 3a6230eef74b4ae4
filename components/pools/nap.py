"""The NAP pool kind: `gpu-aks:gpuNodePools`, GPU capacity by requirement under AKS node auto-provisioning.

Under `cluster.nodeProvisioningProfile.mode: Auto` AKS runs Karpenter (Azure/karpenter-provider-azure).
Each entry of `gpuNodePools` is a `karpenter.sh/v1` NodePool with its own `karpenter.azure.com/v1beta1`
AKSNodeClass (`components/pools/karpenter.py` builds them): it may bring any size with the named GPUs (or
one of the named sizes), Spot first and on-demand as the fallback, up to its `limits`. Its offers are
the catalog's sizes it may bring; everything else reads those (`Pool`), as for any kind.

Every refusal cites its source:
- `NodeProvisioningMode.Auto` (azure-mgmt-containerservice 40.1.0, `_container_service_client_enums.py`):
  "Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be." gpu-aks refuses
  a pool with `minCount` != `maxCount`, the system pool too.
- AKS node auto-provisioning docs (learn.microsoft.com/azure/aks/node-auto-provisioning, "Limitations",
  2026; ../shared/FACTS.md): Azure CNI in overlay or node-subnet mode (not kubenet, not `none`); no
  Calico network policy; no dynamic pod-IP allocation (`podSubnetID`); managed identity only (gpu-aks
  always sends a managed identity); no Windows pools (gpu-aks's `osSKU` choices have none); the outbound
  type cannot change after creation (gpu-aks already treats `outboundType` as create-only).
- `NodeProvisioningDefaultNodePools` (same enums file): `None` on a cluster that had `Auto` deletes the
  default NodePools and drains their nodes; gpu-aks warns whenever `None` is set.
"""


from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, get_args

from gpu_aks_policies.catalog import (
    AKS_MAX_NODES_PER_CLUSTER,
    DEFAULT_GPU_TAINT,
    GPU_RESOURCE,
    KARPENTER_GPU_NAMES,
    NODEPOOL_LIMIT_CEILINGS,
    POOL_LABEL,
    GpuSku,
    arm64_image_problem,
    gpu_names,
    gpu_sku,
    refused_sizes_with_gpu_name,
    skus_with_gpu,
    unsupported_gpu_sku,
    vcpus_in_size_name,
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
    is_whole_number,
    text,
)
from gpu_aks_policies.limits import NODEPOOL_MAX_LABELS, go_duration_problem
from gpu_aks_policies.pools.model import Pool, PoolSharing
from gpu_aks_policies.pools.nodepool import node_pools, nodes_admitted
from gpu_aks_policies.scheduling import parse_taint

from components.aks_api import API_VERSION, POOL_NAME_RE
from components.pools.karpenter import IMAGE_FAMILIES, GpuNodePoolSpec, KarpenterCapacity, aks_node_class, gpu_node_pool
from components.pools.kind import KubernetesObjectsSpec
from components.pools.room import with_room
from components.settings.common import document_pools
from components.settings.device_plugin import DevicePluginSettings
from components.settings.node_baseline import subnet_problem
from components.settings.pools import NODE_LABELS, NODE_TAINTS_DOC, SHARING, SharingSettings, taints_parser

if TYPE_CHECKING:
    from components.pools.kind import PlatformView

_MODEL = f"ManagedCluster (API {API_VERSION})"
_NODEPOOL = "karpenter.sh/v1 NodePool"
_NODE_CLASS = "karpenter.azure.com/v1beta1 AKSNodeClass"

CAPACITY_TYPES: tuple[str, ...] = get_args(KarpenterCapacity)
#: `limits` keys -> the resource Karpenter caps (it limits any resource of a node's capacity; these
#: bound a GPU pool's size and cost: GPUs, as `nvidia.com/gpu`, and vCPUs).
LIMIT_RESOURCES: Mapping[str, str] = {"gpu": GPU_RESOURCE, "cpu": "cpu"}
#: The most each `limits` ceiling may be (the pool rule holds hand-written NodePools to the same).
LIMIT_CEILINGS: Mapping[str, int] = NODEPOOL_LIMIT_CEILINGS
#: A `sku-gpu-name` value gpu-aks writes as given (a GPU its catalog does not know) is a label value: the
#: NodePool CRD's pattern for requirement values (karpenter.sh_nodepools.yaml, `requirements.values`).
REQUIREMENT_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
#: What `limits` holds (`_limits` reads it): one ceiling per LIMIT_RESOURCES key.
LIMITS = Shape("NodePoolLimits", "A GPU NodePool's ceilings (Karpenter `spec.limits`); at least one.", (
    Key("gpu", f"Most GPUs (`nvidia.com/gpu`) the NodePool's nodes may have together (1 to "
        f"{LIMIT_CEILINGS[GPU_RESOURCE]}).", "integer"),
    Key("cpu", f"Most vCPUs the NodePool's nodes may have together (1 to {LIMIT_CEILINGS['cpu']}).", "integer")))
#: `consolidateAfter` (karpenter.sh_nodepools.yaml pattern).
DURATION = re.compile(r"([0-9]+(s|m|h))+|Never")
#: Label keys a NodePool may not set: Azure's NodePool CRD refuses `accelerator` and most of
#: `kubernetes.azure.com/`, and `karpenter.sh/` is Karpenter's own.
RESERVED_NODEPOOL_LABELS = ("accelerator",)
RESERVED_NODEPOOL_PREFIXES = ("karpenter.sh/", "karpenter.azure.com/", "kubernetes.azure.com/", "kubernetes.io/",
                              "k8s.io/")
#: Well-known labels the CRD lets a NodePool's template set, but which pick its instance types: Karpenter
#: adds the template's labels to its requirements (kubernetes-sigs/karpenter `NodeClaimTemplate`:
#: `Requirements.Add(scheduling.NewLabelRequirements(nodePool.Spec.Template.Labels)...)`), so one pins
#: the size, region or zone, and a value no offered size has leaves the NodePool unable to launch a node.
REQUIREMENT_NODEPOOL_LABELS = ("node.kubernetes.io/instance-type", "topology.kubernetes.io/region",
                               "topology.kubernetes.io/zone", "node.kubernetes.io/windows-build",
                               "beta.kubernetes.io/instance-type", "beta.kubernetes.io/arch", "beta.kubernetes.io/os",
                               "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone")



@dataclass(frozen=True)
class NapGpuPoolSettings:
    """One GPU NodePool: which GPUs it may bring, Spot or on-demand, up to which ceiling."""

    name: str
    gpu_names: tuple[str, ...] = ()
    gpu_counts: tuple[int, ...] = ()
    vm_sizes: tuple[str, ...] = ()
    capacity_types: tuple[KarpenterCapacity, ...] = ("on-demand",)
    #: Karpenter resource name -> ceiling (`nvidia.com/gpu`, `cpu`).
    limits: Mapping[str, int] = field(default_factory=dict)

    @property
    def max_gpus(self) -> int | None:
        return self.limits.get(GPU_RESOURCE)

    @property
    def max_vcpus(self) -> int | None:
        return self.limits.get("cpu")
    weight: int | None = None
    taints: tuple[str, ...] = (DEFAULT_GPU_TAINT,)
    labels: Mapping[str, str] = field(default_factory=dict)
    consolidate_after: str = "10m"
    image_family: str = "Ubuntu"
    os_disk_size_gb: int | None = None
    #: gpu-aks's device-plugin settings; whether they serve this NodePool is `devicePlugin.pools`.
    plugin: DevicePluginSettings | None = None
    #: Time-slicing or MPS (`gpuNodePools[].sharing`, as `gpuPools[].sharing`); None: whole GPUs.
    sharing: SharingSettings | None = None
    #: Your subnet the NodePool's nodes join (its AKSNodeClass `spec.vnetSubnetID`), or None.
    vnet_subnet_id: str | None = None
    #: Where its nodes land: its own subnet, else the cluster's node subnet (the system pool's, which
    #: NAP gives Karpenter as its default `--vnet-subnet-id`), else None: the VNet AKS manages.
    node_subnet: str | None = None

    @property
    def device_plugin(self) -> bool:
        """Whether gpu-aks's device plugin serves the NodePool's nodes (NAP installs no plugin)."""
        return self.plugin is not None and self.plugin.serves(self.name)

    def _matches(self, name: str) -> list[GpuSku]:
        return [sku for sku in skus_with_gpu(name) if not self.gpu_counts or sku.gpus in self.gpu_counts]

    @property
    def by_size(self) -> bool:
        """Whether the NodePool selects `node.kubernetes.io/instance-type` rather than GPU labels: when it
        names sizes, or a GPU whose sizes carry no `sku-gpu-name` gpu-aks knows (GB200, GB300, RTX PRO).
        Karpenter ANDs requirements, so one NodePool cannot mix the two."""
        return bool(self.vm_sizes) or any(
            skus_with_gpu(name) and not any(sku.karpenter_gpu_name for sku in skus_with_gpu(name))
            for name in self.gpu_names)

    @property
    def candidates(self) -> tuple[GpuSku, ...]:
        """The catalog's sizes the NodePool may bring (a GPU or size the catalog lacks brings none here,
        though Karpenter may still find it)."""
        found: dict[str, GpuSku] = {}
        if self.vm_sizes:
            for size in self.vm_sizes:
                sku = gpu_sku(size)
                if sku is not None:
                    found.setdefault(sku.vm_size, sku)
        for name in self.gpu_names:
            for sku in self._matches(name):
                if self.by_size or sku.karpenter_gpu_name:
                    found.setdefault(sku.vm_size, sku)
        return tuple(found.values())

    @property
    def pinned_sizes(self) -> tuple[str, ...]:
        """Sizes to pin with `node.kubernetes.io/instance-type` beside the GPU names, when a name also labels
        sizes gpu-aks refuses (`A10` labels the fractional NV A10 v5 sizes, which Karpenter, taking the
        cheapest fit, would choose first)."""
        if self.by_size or not any(refused_sizes_with_gpu_name(name) for name in self.gpu_names):
            return ()
        return tuple(sku.vm_size for sku in self.candidates)

    @property
    def uncatalogued(self) -> tuple[str, ...]:
        """GPU names or sizes the catalog does not know (usable under NAP, but unpriced and unsized)."""
        return (*(name for name in self.gpu_names if not skus_with_gpu(name)),
                *(size for size in self.vm_sizes if gpu_sku(size) is None))

    @property
    def architectures(self) -> tuple[str, ...]:
        return tuple(sorted({sku.arch for sku in self.candidates}))

    @property
    def spot(self) -> bool:
        return "spot" in self.capacity_types

    @property
    def node_class(self) -> str:
        """Each GPU NodePool has its own AKSNodeClass, named after it."""
        return self.name

    def node_pool_spec(self) -> GpuNodePoolSpec:
        if self.by_size:
            sizes = tuple(dict.fromkeys((*(sku.vm_size for sku in self.candidates), *self.vm_sizes)))
            selection: dict[str, Any] = {"vm_sizes": sizes}
        else:
            selection = {"gpu_names": tuple(_karpenter_gpu_names(self.gpu_names)), "gpu_counts": self.gpu_counts,
                         "vm_sizes": self.pinned_sizes}
        return GpuNodePoolSpec(
            name=self.name, node_class=self.node_class, **selection,
            capacity_types=self.capacity_types, taints=self.taints,
            labels={**self.labels, POOL_LABEL: self.name},
            limits={resource: str(ceiling) for resource, ceiling in self.limits.items()},
            weight=self.weight, consolidate_after=self.consolidate_after,
            architectures=self.architectures if "arm64" in self.architectures else ())


def _karpenter_gpu_names(names: tuple[str, ...]) -> list[str]:
    """`sku-gpu-name` values: the catalog's label value where it has one (`H100`), else the name as given."""
    values: dict[str, None] = {}  # ordered and unique: a list's `in` made thousands of names quadratic
    for name in names:
        known = {sku.karpenter_gpu_name or "" for sku in skus_with_gpu(name) if sku.karpenter_gpu_name}
        values.update(dict.fromkeys(sorted(known) or [name]))
    return list(values)


# --- Readers -----------------------------------------------------------------------------------


def _string_list(reader: Reader, name: str, value: Any) -> list[str] | None:
    if value is MISSING or value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        reader.problem(name, f"{reader.shown(value)} is not a list of names")
        return None
    return list(dict.fromkeys(value))


def _gpu_names(reader: Reader, value: Any) -> tuple[str, ...]:
    names = _string_list(reader, "gpus", value)
    if names is None:
        return ()
    for index, name in enumerate(names):
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,62}", name):
            reader.problem(f"gpus[{index}]", f"{describe(name)} is not a GPU name like 'H100' (letters, digits)")
        elif not skus_with_gpu(name) and not REQUIREMENT_VALUE.fullmatch(name):
            reader.problem(f"gpus[{index}]", f"{describe(name)} is not a GPU gpu-aks's catalog knows, and Karpenter's "
                                             "NodePool refuses it as a karpenter.azure.com/sku-gpu-name value (letters, "
                                             "digits, '-', '_' and '.', no spaces); write the name as the label has it")
        elif not skus_with_gpu(name) and name.casefold() not in _PRODUCIBLE:
            # A NodePool asking for a name no size carries never brings a node: its pods wait forever.
            squashed = re.sub(r"[^a-z0-9]", "", name.casefold())
            # A name with a suffix ("H100-80GB", "A100_80G") means the name it starts with.
            close = sorted((known for known in _PRODUCIBLE if squashed.startswith(known)), key=len, reverse=True)[:1] \
                or difflib.get_close_matches(squashed, _PRODUCIBLE, n=2, cutoff=0.5)
            hint = f"did you mean {' or '.join(_PRODUCIBLE[match] for match in close)}? " if close else ""
            reader.problem(f"gpus[{index}]", f"{describe(name)} is a GPU name Karpenter's Azure provider gives no size "
                                             f"(karpenter.azure.com/sku-gpu-name is one of {', '.join(KARPENTER_GPU_NAMES)}"
                                             f"), so the NodePool would never bring a node; {hint}name a size with "
                                             "vmSizes to use one gpu-aks's catalog lacks")
        elif not skus_with_gpu(name):
            reader.warn(f"gpus[{index}]", f"{describe(name)} is not a GPU gpu-aks's catalog knows ({', '.join(gpu_names())}); "
                                          "Karpenter matches it as karpenter.azure.com/sku-gpu-name, but gpu-aks cannot "
                                          "price it nor say its memory")
    return tuple(names)


#: The GPU names a NodePool may ask for, case-folded and squashed (for a did-you-mean) -> as written.
_PRODUCIBLE: dict[str, str] = {re.sub(r"[^a-z0-9]", "", name.casefold()): name
                               for name in (*KARPENTER_GPU_NAMES, *gpu_names())}


def _vm_sizes(reader: Reader, value: Any) -> tuple[str, ...]:
    sizes = _string_list(reader, "vmSizes", value)
    if sizes is None:
        return ()
    for index, size in enumerate(sizes):
        unsupported = unsupported_gpu_sku(size)
        if unsupported:
            reader.problem(f"vmSizes[{index}]", f"{describe(size)}: {unsupported.reason}; use {unsupported.replacement}")
        elif gpu_sku(size) is None:
            if not size.lower().startswith("standard_n"):
                reader.problem(f"vmSizes[{index}]", f"{describe(size)} is not a GPU size (Azure's GPU sizes are "
                                                    "Standard_N...)")
            else:
                reader.warn(f"vmSizes[{index}]", f"{describe(size)} is not in gpu-aks's catalog; Karpenter may use it, "
                                                 "but gpu-aks cannot price it nor say its GPUs")
    return tuple(gpu_sku(size).vm_size if gpu_sku(size) else size for size in sizes)  # type: ignore[union-attr]


def _gpu_counts(reader: Reader, value: Any) -> tuple[int, ...]:
    if value is MISSING or value is None:
        return ()
    # Whole floats count: the component provider's inputs arrive as JSON numbers (8.0).
    if not isinstance(value, list) or not value or not all(
            is_whole_number(count) and 1 <= count <= 16 for count in value):
        reader.problem("gpuCount", f"{reader.shown(value)} is not a list of GPU counts per node from 1 to 16 "
                                   "(e.g. [1, 2])")
        return ()
    return tuple(sorted({int(count) for count in value}))


def _capacity_types(reader: Reader, value: Any) -> tuple[str, ...]:
    if value is MISSING or value is None:
        return ("on-demand",)
    if not isinstance(value, list) or not value or not all(item in CAPACITY_TYPES for item in value) \
            or len(set(value)) != len(value):
        reader.problem("capacityTypes", f"{reader.shown(value)} is not a list of karpenter.sh/capacity-type values "
                                        f"out of {', '.join(CAPACITY_TYPES)} (Spot first, on-demand as the fallback: "
                                        "[spot, on-demand])")
        return ("on-demand",)
    return tuple(value)


def _limits(reader: Reader, value: Any) -> dict[str, int]:
    example = "e.g. {gpu: 16}"
    if value is MISSING or value is None:
        reader.problem("limits", f"is missing; a GPU NodePool needs a ceiling ({example}), as a fixed pool has "
                                 "maxCount: without one Karpenter adds GPU nodes as long as pods wait")
        return {}
    if not isinstance(value, Mapping) or not value:
        reader.problem("limits", f"{reader.shown(value)} is not a map of resources to ceilings ({example})")
        return {}
    limits: dict[str, int] = {}
    for resource, ceiling in value.items():
        if resource not in LIMIT_RESOURCES:
            reader.problem(f"limits.{resource}", f"is not a ceiling gpu-aks sets; use {' or '.join(LIMIT_RESOURCES)} "
                                                 "(GPUs, vCPUs)")
        elif not is_whole_number(ceiling) or ceiling < 1:
            reader.problem(f"limits.{resource}", f"{reader.shown(ceiling)} is not a whole number of at least 1")
        elif ceiling > (most := LIMIT_CEILINGS[LIMIT_RESOURCES[resource]]):
            reader.problem(f"limits.{resource}", f"{reader.shown(ceiling)} is above {most}: no cluster holds that many "
                                                 f"(AKS allows {AKS_MAX_NODES_PER_CLUSTER} nodes per cluster, "
                                                 "learn.microsoft.com/azure/aks/quotas-skus-regions), so it bounds "
                                                 f"nothing; say the most you will pay for ({example})")
        else:
            limits[LIMIT_RESOURCES[resource]] = int(ceiling)
    return limits


#: The NodePools and AKSNodeClasses AKS node auto-provisioning creates and keeps as its own
#: (learn.microsoft.com/azure/aks/node-autoprovision-node-pools: "When you first install node autoprovisioning,
#: a default NodePool is created", with a `system-surge` one for the system pool). A GPU NodePool of the same
#: name would write over AKS's objects (gpu-aks names the NodePool and its AKSNodeClass after the pool).
AKS_NODEPOOL_NAMES = ("default", "system-surge")


def _name(reader: Reader, value: Any) -> str:
    if not isinstance(value, str) or not POOL_NAME_RE.fullmatch(value):
        reader.problem("name", f"{'missing' if value is MISSING else reader.shown(value)}: a GPU NodePool needs a name "
                               "of 1-12 lowercase letters and digits, starting with a letter (e.g. 'h100')")
        return value if isinstance(value, str) else f"<{reader.key}>"
    if value in AKS_NODEPOOL_NAMES:
        reader.problem("name", f"'{value}' is the name of the NodePool and AKSNodeClass AKS node auto-provisioning "
                               "creates and keeps as its own; a GPU NodePool of that name would write over them. "
                               "Pick another name (e.g. 'h100')")
    return value


def _consolidate_after_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not DURATION.fullmatch(value):
        return "is not a duration like 10m, 1h or Never"
    return go_duration_problem(value)


def _nodepool_labels(reader: Reader, value: Any) -> dict[str, str]:
    # The fixed pools' label reader (one declaration), then what Azure's NodePool CRD refuses besides.
    assert NODE_LABELS.parse is not None
    labels: dict[str, str] = NODE_LABELS.parse(reader, value)
    for label in list(labels):
        if label in RESERVED_NODEPOOL_LABELS or label.startswith(RESERVED_NODEPOOL_PREFIXES):
            reader.problem(f"nodeLabels.{label}", f"label key {describe(label)} is refused by Azure's NodePool CRD "
                                                  "(karpenter.sh_nodepools.yaml: restricted label domains and "
                                                  "'accelerator'); pick another key")
            del labels[label]
        elif label in REQUIREMENT_NODEPOOL_LABELS:
            reader.problem(f"nodeLabels.{label}", f"label key {describe(label)} picks the NodePool's instance types: "
                                                  "Karpenter adds template labels to its requirements, so the pool "
                                                  "could launch only nodes with this value; choose the sizes and "
                                                  "zones with the pool's own keys")
            del labels[label]
    if len(labels) >= NODEPOOL_MAX_LABELS:
        # gpu-aks adds POOL_LABEL to the NodePool's labels.
        reader.problem("nodeLabels", f"has {len(labels)} labels; with gpu-aks's {POOL_LABEL} the NodePool's nodes "
                                     f"would carry {len(labels) + 1}, and its CRD allows at most {NODEPOOL_MAX_LABELS} "
                                     "(karpenter.sh_nodepools.yaml, spec.template.metadata.labels maxProperties)")
    return labels


# --- Checks ------------------------------------------------------------------------------------


def _gpus_or_sizes(reader: Reader) -> None:
    gpus, sizes = reader.get("gpus"), reader.get("vmSizes")
    if bool(gpus) == bool(sizes):
        reader.problem("gpus", "name the GPUs (gpus: [H100, A100]) or the sizes (vmSizes: [...]) the NodePool may "
                               "bring, one of the two" + (", not both" if gpus else ""))


def _one_way_of_selecting(reader: Reader) -> None:
    names = reader.get("gpus")
    by_size = [name for name in names if skus_with_gpu(name) and not any(
        sku.karpenter_gpu_name for sku in skus_with_gpu(name))]
    unknown = [name for name in names if not skus_with_gpu(name)]
    if by_size and unknown:
        reader.problem("gpus", f"{', '.join(by_size)} can only be selected by size (gpu-aks knows no "
                               f"karpenter.azure.com/sku-gpu-name for them) and {', '.join(unknown)} only by that "
                               "label; Karpenter ANDs requirements, so declare them in two NodePools")


def _count_matches_a_candidate(reader: Reader) -> None:
    gpus, counts = reader.get("gpus"), reader.get("gpuCount")
    if not gpus or not counts:
        return
    known = [name for name in gpus if skus_with_gpu(name)]
    offered = {sku.gpus for name in known for sku in skus_with_gpu(name)}
    if known and len(known) == len(gpus) and not offered & set(counts):
        reader.problem("gpuCount", f"{describe(list(counts))}: no size with {', '.join(gpus)} has that many GPUs; "
                                   f"Azure sells {', '.join(map(str, sorted(offered)))} per VM")


def _limits_admit_a_node(reader: Reader) -> None:
    limits = reader.get("limits")
    if not limits:
        return
    pool = NapGpuPoolSettings(reader.get("name"), gpu_names=reader.get("gpus"), gpu_counts=reader.get("gpuCount"),
                              vm_sizes=reader.get("vmSizes"), limits=limits)
    # Karpenter launches no node that would pass a limit (kubernetes-sigs/karpenter `filterByRemainingResources`).
    if pool.candidates and not any(nodes_admitted(sku, limits) for sku in pool.candidates):
        smallest = min(pool.candidates, key=lambda sku: (sku.gpus, vcpus_in_size_name(sku.vm_size) or 0))
        reader.problem("limits", f"{reader.shown(reader.raw.get('limits'))} admits no node: the smallest size "
                                 f"the NodePool may bring, {smallest.vm_size}, has {smallest.gpus} GPUs and "
                                 f"{vcpus_in_size_name(smallest.vm_size)} vCPUs, and Karpenter launches no node that "
                                 "would pass a limit (filterByRemainingResources), so pods would wait forever; raise "
                                 "the limits or ask for smaller sizes")


def _ubuntu_only_sizes(reader: Reader) -> None:
    family = reader.get("imageFamily")
    if family == "AzureLinux":
        pool = NapGpuPoolSettings(reader.get("name"), gpu_names=reader.get("gpus"), vm_sizes=reader.get("vmSizes"))
        ubuntu_only = [sku.vm_size for sku in pool.candidates if sku.ubuntu_only]
        if ubuntu_only:
            reader.problem("imageFamily", f"AzureLinux cannot run {', '.join(ubuntu_only)}: AKS installs their NVIDIA "
                                          "driver only on Ubuntu (karpenter-provider-azure supported-gpus.yaml); use "
                                          "Ubuntu, or leave those GPUs out")


def _needs_a_no_schedule_taint(reader: Reader) -> None:
    taints = reader.get("nodeTaints")
    if taints is not None and not any(parse_taint(t)["effect"] == "NoSchedule" for t in taints):
        reader.problem("nodeTaints", f"{describe(list(taints))} has no NoSchedule taint; Karpenter adds none, so the "
                                     f"NodePool needs one for only GPU pods to land on it (the default is "
                                     f"{describe(DEFAULT_GPU_TAINT)})")


def _settings(reader: Reader, plugin: DevicePluginSettings | None = None) -> NapGpuPoolSettings:
    return NapGpuPoolSettings(plugin=plugin,
        name=reader.get("name"), gpu_names=reader.get("gpus"), gpu_counts=reader.get("gpuCount"),
        vm_sizes=reader.get("vmSizes"), capacity_types=reader.get("capacityTypes"), limits=reader.get("limits"),
        weight=reader.get("weight"), taints=tuple(reader.get("nodeTaints") or ()),
        labels=reader.get("nodeLabels"), consolidate_after=reader.get("consolidateAfter"),
        image_family=reader.get("imageFamily"), os_disk_size_gb=reader.get("osDiskSizeGB"),
        sharing=reader.children["sharing"].build(),
        vnet_subnet_id=reader.get("vnetSubnetID"),
        node_subnet=reader.get("vnetSubnetID") or reader.root.children["systemPool"].values.get("vnetSubnetID"))


# --- Declarations ------------------------------------------------------------------------------


def _taints_key() -> Key:
    return Key("nodeTaints", NODE_TAINTS_DOC + " Karpenter adds no GPU taint: the NodePool declares it.",
               "list of strings", [DEFAULT_GPU_TAINT], parse=taints_parser((DEFAULT_GPU_TAINT,)),
               source=f"{_NODEPOOL} spec.template.spec.taints")


def _whole(low: int, high: int) -> Any:
    return lambda v: None if is_whole_number(v) and low <= v <= high else f"is not a whole number from {low} to {high}"



GPU_NODE_POOL = Section("gpuNodePools[]", "One GPU NodePool (NAP): the GPUs it may bring, Spot or on-demand, up to "
                        "its limits.", (
    Key("name", "The NodePool's name (its nodes carry `gpu-aks.io/pool: <name>`).", "string", None, parse=_name,
        source=f"{_NODEPOOL} metadata.name", required=True),
    Key("gpus", "GPU names the NodePool may bring (`karpenter.azure.com/sku-gpu-name`, e.g. `H100`); a name no size "
        "carries is refused with the nearest ones, and one Karpenter's Azure provider gives but the catalog lacks is "
        "allowed with a warning.", "list of strings", [], parse=_gpu_names,
        source=f"{_NODEPOOL} requirements karpenter.azure.com/sku-gpu-name"),
    Key("gpuCount", "GPUs per node (`karpenter.azure.com/sku-gpu-count`); any count when absent.",
        "list of integers", [], parse=_gpu_counts, source=f"{_NODEPOOL} requirements karpenter.azure.com/sku-gpu-count"),
    Key("vmSizes", "Sizes the NodePool may bring (`node.kubernetes.io/instance-type`), instead of `gpus`.",
        "list of strings", [], parse=_vm_sizes, source=f"{_NODEPOOL} requirements node.kubernetes.io/instance-type"),
    Check(_gpus_or_sizes, reads=("gpus", "vmSizes"), doc="A GPU NodePool names `gpus` or `vmSizes`, one of the two."),
    Check(_one_way_of_selecting, reads=("gpus",),
          doc="One NodePool selects by GPU label or by size, not both (Karpenter ANDs requirements)."),
    Check(_count_matches_a_candidate, reads=("gpus", "gpuCount"),
          doc="`gpuCount` is a count some size with the named GPUs has."),
    Key("capacityTypes", "`spot`, `on-demand` or both; with both Karpenter takes Spot first and falls back to "
        "on-demand.", "list of strings", ["on-demand"], parse=_capacity_types,
        source=f"{_NODEPOOL} requirements karpenter.sh/capacity-type"),
    Key("limits", "Ceilings of the NodePool (required): `gpu` (GPUs, Karpenter's `nvidia.com/gpu`) and/or `cpu` "
        "(vCPUs), as `maxCount` is for a pool.",
        "object", None, parse=_limits, source=f"{_NODEPOOL} spec.limits", required=True, shape=LIMITS),
    Check(_limits_admit_a_node, reads=("gpus", "gpuCount", "vmSizes", "limits"),
          doc="The `limits` admit at least one node of a size the NodePool may bring."),
    Key("weight", "Preference among NodePools (1-100; Karpenter tries the highest first).", "integer", None,
        check=_whole(1, 100), convert=int, source=f"{_NODEPOOL} spec.weight"),
    _taints_key(),
    Check(_needs_a_no_schedule_taint, reads=("nodeTaints",), doc="A GPU NodePool has a NoSchedule taint."),
    Key("nodeLabels", "Labels for the NodePool's nodes (not `accelerator`, nor under `karpenter.sh/`, "
        "`karpenter.azure.com/` or AKS's reserved prefixes, nor a well-known label that picks instance types, such as "
        "`node.kubernetes.io/instance-type`: Karpenter requires its template labels).", "map of strings", {},
        parse=_nodepool_labels, source=f"{_NODEPOOL} spec.template.metadata.labels"),
    Key("consolidateAfter", "How long a node stays empty before Karpenter removes it (only empty nodes are).",
        "string", "10m", check=_consolidate_after_problem, source=f"{_NODEPOOL} spec.disruption.consolidateAfter"),
    choice("imageFamily", "The node image.", IMAGE_FAMILIES, "Ubuntu", source=f"{_NODE_CLASS} spec.imageFamily"),
    Check(_ubuntu_only_sizes, reads=("imageFamily", "gpus", "vmSizes"),
          doc="GB200, GB300 and RTX PRO sizes need `imageFamily` Ubuntu."),
    Key("osDiskSizeGB", "OS disk size (GB); AKSNodeClass's default (128) when absent.", "integer", None,
        check=_whole(30, 2048), convert=int, source=f"{_NODE_CLASS} spec.osDiskSizeGB"),
    # Checked with every pool's subnets (`check_pool_subnets`: one VNet, the system pool in your subnets
    # too) and granted Network Contributor as theirs are (`Pool.subnets`).
    text("vnetSubnetID", "Your subnet the NodePool's nodes join (a subnet resource ID, in the VNet of the other pools); "
         "absent: the cluster's node subnet (the system pool's). docs/network.md.", None, check=subnet_problem,
         source=f"{_NODE_CLASS} spec.vnetSubnetID"),
    # The same section as gpuPools[].sharing: gpu-aks's device plugin serves a shared NodePool with a
    # DaemonSet of its own, pinned by the pool label every node of the NodePool carries and reading the
    # pool's NVIDIA config file (NVIDIA/k8s-device-plugin v0.20.0, commit 1b826ac,
    # `cmd/nvidia-device-plugin/main.go`: `--config-file`, env `CONFIG_FILE`; `api/config/v1`), so
    # nothing about it is kind-specific. (The alternative, one plugin choosing its config by the node label
    # `nvidia.com/device-plugin.config`, needs the chart's config-manager sidecar, which gpu-aks does not run.)
    SHARING,
), build=_settings)

GPU_NODE_POOLS = ListOf("gpuNodePools", "GPU NodePools under node auto-provisioning (needs "
                        "`cluster.nodeProvisioningProfile.mode: Auto`); each a karpenter.sh/v1 NodePool with its own "
                        "AKSNodeClass.", GPU_NODE_POOL, noun="NodePools",
                        item_key=lambda key, index, raw: _listed_key(key, index, raw))


# --- Checks across sections (the root runs them after every section) --------------------------


#: How to make an AgentPool fixed-size under node auto-provisioning, by what the pool is for.
_FIXED_SIZE_FIX = {
    "system": "the system pool stays fixed-size: set both to one count",
    "cpu": "make it fixed-size, or declare the GPU capacity under gpuNodePools",
    # Not fixed-size: the policy pack's gpu-node-pools-are-tainted refuses a GPU pool that is not autoscaled,
    # and the settings run it on this pool.
    "gpu": "declare the GPU capacity under gpuNodePools instead (a fixed-size GPU pool is refused by the policy "
           "pack's gpu-node-pools-are-tainted)",
}


def nap_prerequisites(reader: Reader) -> None:
    """What AKS refuses under NAP, and `gpuNodePools` without NAP."""
    cluster = reader.values.get("cluster") or {}
    profile = cluster.get("nodeProvisioningProfile") or {}
    auto = profile.get("mode") == "Auto"
    nap_pools = reader.values.get("gpuNodePools") or []
    if nap_pools and not auto:
        reader.problem("gpuNodePools", "needs cluster.nodeProvisioningProfile.mode: Auto (AKS node auto-provisioning "
                                       "runs the Karpenter that serves these NodePools)")
    if not auto:
        return
    if profile.get("defaultNodePools") == "None":
        reader.warn("cluster.nodeProvisioningProfile.defaultNodePools",
                    "None: on a cluster that had Auto, AKS deletes its default NodePools and drains their nodes "
                    f"({_MODEL} NodeProvisioningDefaultNodePools); only gpuNodePools and fixed pools remain")
    fixed_only = ("under cluster.nodeProvisioningProfile.mode: Auto AKS refuses autoscaling pools (\"Fixed size "
                  "Node Pools can still be created, but autoscaling Node Pools cannot be\", NodeProvisioningMode.Auto)")
    # The AgentPools of the document (a NodePool is Karpenter's to size).
    pools = [pool for pool in document_pools(reader).models(reader.root) if pool.backend == "agentPool"]
    for pool in pools:
        if pool.min_count != pool.max_count:
            reader.problem(f"{pool.key}.maxCount", f"{pool.max_count} differs from minCount {pool.min_count}: "
                                                   f"{fixed_only}; {_FIXED_SIZE_FIX[pool.role]}")
    for pool in pools:
        if pool.pod_subnets:
            reader.problem(f"{pool.key}.podSubnetID", "dynamic pod-IP allocation (a pod subnet) is not supported with "
                                                      "node auto-provisioning (learn.microsoft.com/azure/aks/"
                                                      "node-auto-provisioning, Limitations); use Azure CNI Overlay")
    network = cluster.get("networkProfile") or {}
    plugin, policy = network.get("networkPlugin"), network.get("networkPolicy")
    nap_doc = "learn.microsoft.com/azure/aks/node-auto-provisioning, Limitations"
    if plugin != "azure":
        reader.problem("cluster.networkProfile.networkPlugin",
                       f"{describe(plugin)}: node auto-provisioning needs Azure CNI (networkPlugin: azure, overlay or "
                       f"node subnet; {nap_doc})")
    if policy == "calico":
        reader.problem("cluster.networkProfile.networkPolicy",
                       f"'calico' is not supported with node auto-provisioning ({nap_doc}); use cilium (with "
                       "networkDataplane: cilium) or azure")


def arm64_pools_run_arm64_images(reader: Reader) -> None:
    """A Grace (Arm64) GPU node runs every image the platform puts on GPU nodes: each needs an arm64
    build (catalog IMAGE_PLATFORMS records where that was read), or the pool is refused with the reason."""
    values = reader.values
    arm64_pools = [(pool.key, sizes) for pool in document_pools(reader).models(reader.root)
                   if (sizes := [offer.vm_size for offer in pool.offers
                                 if (sku := gpu_sku(offer.vm_size)) is not None and sku.arch == "arm64"])]
    if not arm64_pools:
        return
    plugin, smoke = values.get("devicePlugin") or {}, values.get("smokeTest") or {}
    observability = values.get("observability") or {}
    images = []
    if plugin.get("enabled"):
        images.append(("devicePlugin.image", plugin.get("image")))
    if smoke.get("enabled"):
        images.append(("smokeTest.image", smoke.get("image")))
    exporter = observability.get("dcgmExporter") or {}
    if observability.get("enabled") and exporter.get("enabled"):
        images.append(("observability.dcgmExporter.image", exporter.get("image")))
    for key, sizes in arm64_pools:
        for image_key, image in images:
            why = arm64_image_problem(str(image))
            if why:
                reader.problem(key, f"{', '.join(sizes)} run on Arm64 (Grace) hosts, and {image_key} {why}; use an "
                                    "image with an arm64 build, or leave the Grace sizes out")


def _listed_key(list_key: str, index: int, raw: Any) -> str:
    name = raw.get("name") if isinstance(raw, Mapping) else None
    return f"{list_key}[{name}]" if isinstance(name, str) and POOL_NAME_RE.fullmatch(name) else f"{list_key}[{index}]"



# --- The kind --------------------------------------------------------------------------------------


#: NAP's rules across sections (the cluster's profile, every pool kind, the images on GPU nodes).
ROOT_CHECKS: tuple[Check, ...] = (
    Check(nap_prerequisites, doc="Under `cluster.nodeProvisioningProfile.mode: Auto` every AgentPool is fixed-size, "
                                 "without a pod subnet, and the network is Azure CNI without Calico; `gpuNodePools` "
                                 "needs `mode: Auto`.", after_document=True),
    Check(arm64_pools_run_arm64_images, doc="A GPU pool of Arm64 (Grace) sizes needs an arm64 build of every image "
                                            "gpu-aks runs on GPU nodes.", after_document=True),
)


class NapPoolKind:
    """`gpu-aks:gpuNodePools`: each pool a Karpenter NodePool and its AKSNodeClass, in the cluster."""

    config_key = "gpuNodePools"
    section = GPU_NODE_POOLS
    inline = False
    #: A NodePool is a karpenter.sh object in the cluster: AKS's limit on node pools does not count it.
    agent_pools = False
    component_type = "gpu-aks:index:GpuNapPool"
    former_types: tuple[str, ...] = ()
    root_checks = ROOT_CHECKS
    #: Karpenter bounds a NodePool by its `limits`, not by node counts.
    rule_keys: Mapping[str, str] = {"taints": "nodeTaints", "scaling": "limits"}

    def read(self, reader: Reader, built: Mapping[str, Any]) -> NapGpuPoolSettings:
        # Which pools gpu-aks's device plugin serves is devicePlugin.pools, stored there only.
        pool: NapGpuPoolSettings = reader.build(plugin=built["devicePlugin"])
        return pool

    def pools(self, settings: PlatformView) -> tuple[NapGpuPoolSettings, ...]:
        return settings.pools[self.config_key]

    def facts(self, pool: NapGpuPoolSettings, settings: PlatformView) -> Pool:
        """The pack's reading of the NodePool this kind writes (`gpu_aks_policies.pools.nodepool`: the sizes
        its requirements admit, how they are bought, the most nodes its limits admit of each), so the
        settings and the pack agree by construction; with what the platform alone knows: the resource
        gpu-aks's device plugin advertises and its sharing, the pool's key, the exporter, the subnets."""
        key = f"{self.config_key}[{pool.name}]"
        manifest = gpu_node_pool(pool.node_pool_spec())
        [read] = node_pools(f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}", manifest)
        # A size the limits admit no node of is never brought, priced or offered (Karpenter launches no node
        # that would pass a limit); the catalog's sizes in the settings' order.
        order = {sku.vm_size: index for index, sku in enumerate(pool.candidates)}
        offered = sorted((offer for offer in read.pool.gpu_offers if read.pool.nodes_at_most(offer) > 0),
                         key=lambda offer: order.get(offer.vm_size, len(order)))
        sizes = {offer.vm_size for offer in offered}
        # A shared NodePool's node advertises its GPUs times the replicas; Karpenter still plans with
        # physical GPUs (its instance types' `nvidia.com/gpu` capacity), so `limits` count those.
        replicas = pool.sharing.replicas if pool.sharing else 1
        return with_room(Pool(
            name=pool.name, key=key, backend="nodePool", role="gpu", azure_name=None,
            # Karpenter starts at no node; the most nodes are those of the smallest size the limits admit.
            min_count=0, max_count=max((read.pool.nodes_at_most(offer) for offer in offered), default=0),
            spot=read.pool.spot, zones=(), taints=pool.taints, labels={**pool.labels, POOL_LABEL: pool.name},
            offers=tuple(replace(offer, resource=GPU_RESOURCE, per_node=offer.gpus * replicas) for offer in offered),
            device_plugin="gpu-aks" if pool.device_plugin else "external",
            exporter=pool.device_plugin and settings.observability.exporter_on,
            # Each size at the most nodes the limits admit of it, per capacity type (Spot against the regional
            # low-priority quota): the preflight counts a pool's sizes as alternatives, not as a sum.
            capacity=tuple(replace(need, key=key) for need in read.pool.capacity if need.vm_size in sizes),
            uncatalogued=pool.uncatalogued,
            sharing=PoolSharing(pool.sharing.strategy, pool.sharing.replicas) if pool.sharing else None,
            subnets=(pool.vnet_subnet_id,) if pool.vnet_subnet_id else (), node_subnet=pool.node_subnet),
            settings, os_disk_gb=pool.os_disk_size_gb)

    def resources(self, pool: NapGpuPoolSettings) -> tuple[KubernetesObjectsSpec, ...]:
        return (KubernetesObjectsSpec(pool.name, (
            aks_node_class(pool.node_class, pool.image_family, pool.os_disk_size_gb,
                           vnet_subnet_id=pool.vnet_subnet_id),
            gpu_node_pool(pool.node_pool_spec()))),)

    def cluster_properties(self, pools: Sequence[NapGpuPoolSettings]) -> Mapping[str, Any]:
        # The cluster's own key says whether NAP runs (`cluster.nodeProvisioningProfile`, sent by the
        # cluster); a NodePool asks nothing more of the managed cluster.
        return {}

    def reference_markdown(self) -> str:
        return (f"GPU names a NodePool may ask for by name (the catalog's): "
                f"{', '.join(f'`{name}`' for name in gpu_names())}. Names Karpenter's Azure provider gives that the "
                f"catalog lacks are allowed with a warning: "
                f"{', '.join(f'`{name}`' for name in KARPENTER_GPU_NAMES if not skus_with_gpu(name))}; any other "
                "name is refused (no size carries it, so the NodePool would never bring a node).\n")


NAP = NapPoolKind()
