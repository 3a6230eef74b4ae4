"""`GpuQueues`: Kueue (kubernetes-sigs/kueue) from its own chart at a pinned version, and the ResourceFlavors,
ClusterQueues and LocalQueues of `gpu-aks:queues` (`components/settings/queues.py`, `manifests.kueue_objects`).

Kueue's chart holds its controller, CRDs, webhooks and their certificates; like the DRA driver's, it is a
`helm.v3.Release` (rendering it here would be a copy to keep in step), so it does not reach `pulumi preview` or
the policy pack. The queue objects are plain resources the pack sees, created once the release is up (their
CRDs come with it). The team namespaces are the platform's: gpu-aks creates them, labelled, so app stacks deploy
into them without creating them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_policies.pools.model import Pool

from components.manifests import kueue_objects, namespace
from components.settings.queues import KUEUE_CHART, KUEUE_NAMESPACE, KUEUE_VERSION, QueuesSettings


def queue_room(pools: Sequence[Pool]) -> dict[str, tuple[int, int]]:
    """Per GPU pool, the CPU (millicores) and memory (bytes) its nodes give pods at its largest: its largest
    offer's room for pods (`Allocatable.for_pods`) times its node limit (`maxCount`; one node where none is
    written). 0 where the contract does not know the size."""
    room = {}
    for pool in pools:
        sizes = [o.allocatable.for_pods for o in pool.gpu_offers if o.allocatable is not None]
        cpu = max((s.cpu_milli or 0 for s in sizes), default=0)
        memory = max((s.memory or 0 for s in sizes), default=0)
        nodes = pool.max_count or 1
        room[pool.name] = (cpu * nodes, memory * nodes)
    return room


@dataclass(frozen=True)
class GpuQueuesArgs:
    settings: QueuesSettings
    #: The GPU pools, one ResourceFlavor each.
    pools: Sequence[Pool]
    provider: k8s.Provider
    after: Sequence[pulumi.Resource] = ()


class GpuQueues(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuQueuesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuQueues", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        ns = namespace(KUEUE_NAMESPACE)
        self.namespace = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns["metadata"], opts=in_cluster)
        self.release = k8s.helm.v3.Release(f"{name}-kueue", k8s.helm.v3.ReleaseArgs(
            chart=KUEUE_CHART, version=KUEUE_VERSION, namespace=KUEUE_NAMESPACE),
            opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[self.namespace])))
        team_namespaces: dict[str, k8s.core.v1.Namespace] = {}
        for team in args.settings.teams:
            for namespace_name in team.namespaces:
                if namespace_name not in team_namespaces:
                    written = namespace(namespace_name)
                    team_namespaces[namespace_name] = k8s.core.v1.Namespace(
                        f"{name}-ns-{namespace_name}", metadata=written["metadata"], opts=in_cluster)
        after_release = pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(
            depends_on=[self.release, *team_namespaces.values()]))
        self.objects: list[k8s.apiextensions.CustomResource] = []
        for obj in kueue_objects(args.settings.teams, args.pools, queue_room(args.pools)):
            metadata: Mapping[str, object] = obj["metadata"]
            suffix = "-".join(str(part) for part in (obj["kind"].lower(), metadata.get("namespace"), metadata["name"])
                              if part)
            self.objects.append(k8s.apiextensions.CustomResource(
                f"{name}-{suffix}", api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"],
                spec=obj["spec"], opts=after_release))
        self.register_outputs({"namespace": self.namespace.metadata["name"], "release": self.release.name,
                               "objects": len(self.objects)})
