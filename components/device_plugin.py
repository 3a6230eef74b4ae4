"""`GpuDevicePlugin`: the `gpu-resources` namespace and NVIDIA's device-plugin DaemonSet, which makes
`nvidia.com/gpu` schedulable on the GPU pools it serves.

A plain `DaemonSet` resource, not a Helm release: resources a `helm.v3.Release` installs never reach
`pulumi preview` or the policy pack, and this one must be checked by both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.manifests import device_plugin_daemonset, namespace
from components.settings import DevicePluginSettings, GpuNodePoolSettings


@dataclass(frozen=True)
class GpuDevicePluginArgs:
    settings: DevicePluginSettings
    #: The pools it serves: NVIDIA pools whose driver AKS installs and whose plugin nothing else runs.
    pools: Sequence[GpuNodePoolSettings]
    provider: k8s.Provider


class GpuDevicePlugin(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuDevicePluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuDevicePlugin", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider)
        ns = namespace(args.settings.namespace)
        self.namespace = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns["metadata"], opts=in_cluster)

        manifest = device_plugin_daemonset(
            args.settings.namespace, args.settings.image, args.settings.mig_strategy, args.pools)
        self.daemon_set = k8s.apps.v1.DaemonSet(
            f"{name}-daemonset", metadata=manifest["metadata"], spec=manifest["spec"],
            opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[self.namespace])),
        )
        self.register_outputs({
            "namespace": self.namespace.metadata["name"],
            "daemonSet": self.daemon_set.metadata["name"],
        })
