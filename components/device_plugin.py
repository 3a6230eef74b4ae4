"""`GpuDevicePlugin`: the `gpu-resources` namespace and NVIDIA's device-plugin DaemonSets, which make
`nvidia.com/gpu` (or `nvidia.com/mig-*`) schedulable on the GPU pools they serve.

Plain `DaemonSet` resources, not a Helm release: resources a `helm.v3.Release` installs never reach
`pulumi preview` or the policy pack, and these must be checked by both. Whole-GPU pools and MIG pools
get separate DaemonSets because NVIDIA's chart runs the plugin with SYS_ADMIN only for MIG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.manifests import device_plugin_daemonsets, namespace
from components.pools import PoolFacts
from components.settings import DevicePluginSettings


@dataclass(frozen=True)
class GpuDevicePluginArgs:
    settings: DevicePluginSettings
    #: The pools it serves: NVIDIA pools whose driver AKS installs and whose plugin nothing else runs.
    pools: Sequence[PoolFacts]
    provider: k8s.Provider
    #: What in-cluster objects wait for (the deployer's role assignment and its propagation).
    after: Sequence[pulumi.Resource] = ()


class GpuDevicePlugin(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuDevicePluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuDevicePlugin", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        ns = namespace(args.settings.namespace)
        self.namespace = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns["metadata"], opts=in_cluster)
        self.daemon_sets = [
            k8s.apps.v1.DaemonSet(
                # Named after this component (`nvidia-device-plugin-daemonset` in the program), so two
                # GpuClusters in one program do not register the same URN.
                name + manifest["metadata"]["name"].removeprefix("nvidia-device-plugin"),
                metadata=manifest["metadata"], spec=manifest["spec"],
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[self.namespace])),
            )
            for manifest in device_plugin_daemonsets(args.settings.namespace, args.settings.image,
                                                     args.settings.mig_strategy, args.pools)
        ]
        self.register_outputs({
            "namespace": self.namespace.metadata["name"],
            "daemonSets": [ds.metadata["name"] for ds in self.daemon_sets],
        })
