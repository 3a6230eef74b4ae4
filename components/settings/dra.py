"""`gpu-aks:dra`: GPU pools that hand out their GPUs through Dynamic Resource Allocation (DRA, GA in
Kubernetes 1.34) with NVIDIA's DRA driver for GPUs, instead of the device plugin.

The driver (kubernetes-sigs/dra-driver-nvidia-gpu; released as NVIDIA's `nvidia-dra-driver-gpu` chart, pinned
here at 25.8.1) runs a kubelet plugin on the served nodes that publishes each GPU (and each MIG device) in a
ResourceSlice, and its chart creates the DeviceClasses `gpu.nvidia.com` and `mig.nvidia.com`
(`deployments/helm/nvidia-dra-driver-gpu/templates/deviceclass-{gpu,mig}.yaml`). A pod asks for a GPU through
a ResourceClaim of one of those classes; with `extendedResource`, gpu-aks also creates a DeviceClass whose
`extendedResourceName` is `nvidia.com/gpu` (KEP-5004, locked on in 1.37), so a plain `nvidia.com/gpu` pod
is served through DRA on these pools: kube-scheduler makes its claim itself
(k8s.io/kubernetes v1.37.2 `pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go`),
on nodes that do not advertise `nvidia.com/gpu` through a device plugin (`noderesources/fit.go`,
`shouldDelegateResourceToDRA`). The 25.8.1 chart's own `gpu.nvidia.com` sets no `extendedResourceName`
(its development chart, 0.5.0-dev, does).

Refused, with the reason:
- a pool the device plugin also serves: both would hand the same GPUs out twice (NVIDIA/aicr#332);
- a NAP NodePool: Karpenter does not provision nodes for pods that ask through claims (Azure's Karpenter chart
  sets `ignoreDRARequests: true`; kubernetes-sigs/karpenter#3228), so such pods would never get a node;
- a pool whose driver is managed elsewhere (`gpuProfile.driver: None`), and a pool that shares its GPUs
  (`sharing` is the device plugin's config).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.catalog import GPU_RESOURCE
from gpu_aks_policies.declarations import Check, Key, Reader, Section, boolean, describe, string_list_problem, text
from gpu_aks_policies.dra_driver import DRA_DRIVER_CHARTS, GPU_DEVICE_CLASS, MIG_DEVICE_CLASS
from gpu_aks_policies.pools.model import Pool

from components.settings.common import dns_label_problem, document_gpu_pools, not_a_gpu_pool

#: NVIDIA's released chart (NGC Helm repository `https://helm.ngc.nvidia.com/nvidia`, chart `nvidia-dra-driver-gpu`),
#: the version whose templates were read (dra-driver-nvidia-gpu tag v25.8.1).
DRA_CHART = DRA_DRIVER_CHARTS[0]
DRA_CHART_VERSION = "25.8.1"
DRA_CHART_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
DRA_NAMESPACE = "nvidia-dra-driver-gpu"
#: The DeviceClass gpu-aks adds for KEP-5004: the chart's `gpu.nvidia.com` selector, with `nvidia.com/gpu` as
#: its extended resource. Named in gpu-aks's domain so it never collides with a class the chart may add.
EXTENDED_DEVICE_CLASS = "nvidia-gpu.gpu-aks.io"

_SOURCE = "kubernetes-sigs/dra-driver-nvidia-gpu v25.8.1 deployments/helm/nvidia-dra-driver-gpu"


@dataclass(frozen=True)
class DraSettings:
    #: The GPU pools served through DRA (their names). The one place this is stored.
    pools: tuple[str, ...] = ()
    #: `nvidia.com/gpu` is served through DRA on those pools (KEP-5004).
    extended_resource: bool = True
    namespace: str = DRA_NAMESPACE

    def serves(self, pool_name: str) -> bool:
        return pool_name in self.pools

    def device_classes(self, mig: bool = False) -> tuple[str, ...]:
        """The DeviceClasses a DRA pool's devices are claimed by. The driver publishes a GPU whose MIG mode is on
        as its MIG devices only, and any other GPU whole (v25.8.1 `cmd/gpu-kubelet-plugin/nvlib.go`,
        `enumerateGpusAndMigDevices`): a MIG pool's devices are `mig.nvidia.com`'s, and the KEP-5004 class, whose
        selector is `gpu.nvidia.com`'s, finds none there."""
        if mig:
            return (MIG_DEVICE_CLASS,)
        return (GPU_DEVICE_CLASS, *((EXTENDED_DEVICE_CLASS,) if self.extended_resource else ()))

    def maps_extended_resource(self, mig: bool = False) -> bool:
        """`nvidia.com/gpu` is served through DRA on such a pool (KEP-5004)."""
        return self.extended_resource and not mig


def dra_pool_names(raw: Mapping[str, Any]) -> list[str]:
    """The pool names `dra.pools` lists in the raw document (for sections parsed before this one: the device
    plugin's default leaves them out)."""
    section = raw.get("dra")
    pools = section.get("pools") if isinstance(section, Mapping) else None
    return [name for name in pools if isinstance(name, str)] if isinstance(pools, list) else []


#: Why a NodePool cannot serve GPUs through DRA.
NAP_REFUSES_CLAIMS = ("it is a NAP NodePool, and Karpenter does not provision nodes for pods that ask through "
                      "ResourceClaims (Azure's Karpenter chart sets ignoreDRARequests: true; kubernetes-sigs/karpenter"
                      "#3228), so they would never get a node; serve claims from a GPU AgentPool (gpuPools)")
#: Why a pool whose driver another owner manages cannot (gpu-aks would run a second driver beside that owner's).
DRIVER_ELSEWHERE = ("it has gpuProfile.driver: None, so its driver and GPU software are managed elsewhere (e.g. the "
                    "NVIDIA GPU Operator, which runs its own DRA driver)")


def _claims_refused(pool: Pool) -> str | None:
    """Why NVIDIA's DRA driver cannot serve the pool's GPUs, or None where it can. Read off the document's pools
    (`components.pools.document`), where gpu-aks's plugin provisionally serves every pool it may."""
    if pool.backend == "nodePool":
        return NAP_REFUSES_CLAIMS
    return None if pool.served else DRIVER_ELSEWHERE


def _pools_can_serve_claims(reader: Reader) -> None:
    gpu_pools, unread = document_gpu_pools(reader)
    served_by_plugin = reader.root.get("devicePlugin.pools") if reader.root.ok("devicePlugin") else []
    for index, name in enumerate(reader.get("pools")):
        pool = gpu_pools.get(name)
        where = f"pools[{index}]"
        if pool is None:
            if name not in unread:
                reader.problem(where, not_a_gpu_pool(name, gpu_pools))
        elif refused := _claims_refused(pool):
            reader.problem(where, f"{describe(name)} cannot be served through DRA: {refused}")
        elif name in (served_by_plugin or []):
            reader.problem(where, f"{describe(name)} is also in devicePlugin.pools: the device plugin and the DRA driver "
                                  "would both hand out its GPUs, so two pods could get the same GPU (NVIDIA/aicr#332); "
                                  "remove it from one of them")
        elif pool.sharing:
            reader.problem(where, f"{describe(name)} shares its GPUs ({pool.sharing.strategy}), which is gpu-aks's device "
                                  "plugin's config; a DRA pool gives each claim whole GPUs or MIG devices: remove its sharing")


def _namespace_is_its_own(reader: Reader) -> None:
    """The driver's component creates its namespace, as the device plugin's creates `devicePlugin.namespace`: two
    Namespace resources of one name would fight over it, and destroying either would delete the other's pods."""
    plugin = reader.root.ok("devicePlugin") and reader.root.get("devicePlugin.enabled") and \
        reader.root.get("devicePlugin.pools")
    if reader.get("pools") and plugin and reader.get("namespace") == reader.root.get("devicePlugin.namespace"):
        reader.problem("namespace", f"{describe(reader.get('namespace'))} is devicePlugin.namespace too; the DRA "
                                    "driver needs a namespace of its own")


def _dra(reader: Reader) -> DraSettings:
    return DraSettings(pools=tuple(dict.fromkeys(reader.get("pools"))), extended_resource=reader.get("extendedResource"),
                       namespace=reader.get("namespace"))


DRA = Section(
    "dra", "GPU pools served through Dynamic Resource Allocation by NVIDIA's DRA driver (its chart "
    f"{DRA_CHART} {DRA_CHART_VERSION}) instead of the device plugin; see docs/gpu-capacity.md, \"DRA pools\".", (
        Key("pools", "The GPU pools (AgentPools) the DRA driver serves; the device plugin then leaves them out.",
            "list of strings", [], check=string_list_problem, source=_SOURCE),
        Check(_pools_can_serve_claims, reads=("pools",),
              doc="`dra.pools` names GPU AgentPools that the device plugin does not also serve (NVIDIA/aicr#332), "
                  "that are not NAP NodePools (Karpenter provisions nothing for claims: kubernetes-sigs/karpenter#3228), "
                  "whose driver AKS installs, and that do not share their GPUs.", after_document=True),
        boolean("extendedResource", f"Serve `{GPU_RESOURCE}` through DRA on those pools (KEP-5004): gpu-aks adds the "
                f"DeviceClass {EXTENDED_DEVICE_CLASS} with `extendedResourceName: {GPU_RESOURCE}`, so pods written "
                "for the device plugin land there unchanged.", True, attr="extended_resource"),
        text("namespace", "The namespace of the DRA driver.", DRA_NAMESPACE, check=dns_label_problem, source=_SOURCE),
        # After the document, as the pools' check before it: it reads devicePlugin's keys and `pools`, which that
        # check may refuse, and the queues' check reads `namespace` after it.
        Check(_namespace_is_its_own, reads=("pools", "namespace"), after_document=True,
              doc="The DRA driver's namespace is not the device plugin's: each component creates its namespace."),
    ), build=_dra, listed=("pools", "extendedResource", "namespace"))
