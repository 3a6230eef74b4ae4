"""What one node of each offer gives pods (`Offer.allocatable`): the filler every pool kind calls from its
`facts`. Pure, no Pulumi.

The node's allocatable is AKS's on an AgentPool and what Karpenter plans on a NAP NodePool
(`gpu_aks_policies.node_capacity`: the VM's vCPUs and memory, less kube-reserved and the eviction threshold),
at the pool's `maxPods` (its own, else the network's default). The DaemonSets gpu-aks puts on the pool's
nodes are counted beside it, from the very manifests gpu-aks creates: NVIDIA's device plugin (and an MPS pool's
control daemon) where gpu-aks's plugin serves the pool, its DCGM exporter where it runs, and the DRA driver's
kubelet plugin on a DRA pool (the chart asks nothing of CPU or memory for it: `kubeletPlugin.containers.*.
resources: {}`). AKS's own DaemonSets are not counted: what they ask changes with the node image.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.catalog import DEVICE_PLUGIN_IMAGE
from gpu_aks_policies.node_capacity import (
    NOTHING,
    agent_pool_allocatable,
    daemon_set_requests,
    default_max_pods,
    node_pool_allocatable,
)
from gpu_aks_policies.pools.model import Allocatable, Pool

from components.manifests import EXPORTER_RESOURCES, device_plugin_daemonset, mps_control_daemon

if TYPE_CHECKING:
    from components.pools.kind import PlatformView


def pool_daemon_sets(pool: Pool, settings: PlatformView) -> list[Mapping[str, Any]]:
    """The pod specs of gpu-aks's DaemonSets on one of the pool's nodes."""
    plugin = settings.device_plugin
    specs: list[Mapping[str, Any]] = []
    if pool.served:
        shared = pool if pool.sharing is not None else None
        daemon_set = device_plugin_daemonset(plugin.namespace, plugin.image or DEVICE_PLUGIN_IMAGE, plugin.mig_strategy,
                                             [pool], mig=pool.mig and shared is None, shared=shared)
        specs.append(daemon_set["spec"]["template"]["spec"])
        if pool.sharing is not None and pool.sharing.strategy == "mps":
            specs.append(mps_control_daemon(plugin.namespace, plugin.image, pool)["spec"]["template"]["spec"])
    if pool.exporter:
        specs.append({"containers": [{"name": "exporter", "resources": dict(EXPORTER_RESOURCES)}]})
    if settings.dra.serves(pool.name):
        specs.append({"containers": [{"name": "gpus", "resources": {}}]})
    return specs


def with_room(pool: Pool, settings: PlatformView, max_pods: int | None = None, os_disk_gb: int | None = None) -> Pool:
    """The pool with each offer's `allocatable` (None for a size gpu-aks's size list lacks)."""
    network = settings.cluster.network
    pods = max_pods or default_max_pods(network.plugin, network.plugin_mode)
    daemon_sets = daemon_set_requests(pool_daemon_sets(pool, settings)) if pool.gpu else NOTHING
    offers = []
    for offer in pool.offers:
        node = (node_pool_allocatable(offer.vm_size, pods, os_disk_gb) if pool.backend == "nodePool"
                else agent_pool_allocatable(offer.vm_size, pods))
        offers.append(replace(offer, allocatable=None if node is None else Allocatable.of(node, daemon_sets)))
    return replace(pool, offers=tuple(offers))
