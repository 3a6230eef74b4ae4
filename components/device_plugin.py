"""`GpuDevicePlugin`: the `gpu-resources` namespace and NVIDIA's device-plugin DaemonSets, which make
`nvidia.com/gpu` (or `nvidia.com/mig-*`) schedulable on the GPU pools they serve.

Plain `DaemonSet` resources, not a Helm release: resources a `helm.v3.Release` installs never reach
`pulumi preview` or the policy pack, and these must be checked by both. Whole-GPU pools and MIG pools
get separate DaemonSets because NVIDIA's chart runs the plugin with SYS_ADMIN only for MIG. A pool
that shares its GPUs (time-slicing or MPS) gets its own DaemonSet reading its own ConfigMap, and an
MPS pool NVIDIA's MPS control daemon too (`components/manifests.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_policies.pools.model import Pool

from components.manifests import device_plugin_manifests, namespace
from components.settings import DevicePluginSettings

_PLUGIN_PREFIX = "nvidia-device-plugin"


@dataclass(frozen=True)
class GpuDevicePluginArgs:
    settings: DevicePluginSettings
    #: The pools it serves: NVIDIA pools whose driver AKS installs and whose plugin nothing else runs.
    pools: Sequence[Pool]
    provider: k8s.Provider
    #: What in-cluster objects wait for (the deployer's role assignment and its propagation).
    after: Sequence[pulumi.Resource] = ()


class GpuDevicePlugin(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuDevicePluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuDevicePlugin", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        ns = namespace(args.settings.namespace)
        self.namespace = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns["metadata"], opts=in_cluster)
        self.config_maps: list[k8s.core.v1.ConfigMap] = []
        self.daemon_sets: list[k8s.apps.v1.DaemonSet] = []
        for manifest in device_plugin_manifests(args.settings.namespace, args.settings.image,
                                                args.settings.mig_strategy, args.pools):
            # Named after this component (`nvidia-device-plugin-daemonset` in the program), so two
            # GpuClusters in one program do not register the same URN.
            object_name = manifest["metadata"]["name"]
            resource_name = (name + object_name.removeprefix(_PLUGIN_PREFIX) if object_name.startswith(_PLUGIN_PREFIX)
                             else f"{name}-{object_name.removeprefix('nvidia-')}")
            # A shared pool's DaemonSets mount its ConfigMap (the only ConfigMaps here).
            opts = pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(
                depends_on=[self.namespace, *self.config_maps]))
            if manifest["kind"] == "ConfigMap":
                self.config_maps.append(k8s.core.v1.ConfigMap(resource_name, metadata=manifest["metadata"],
                                                              data=manifest["data"], opts=opts))
            else:
                self.daemon_sets.append(k8s.apps.v1.DaemonSet(resource_name, metadata=manifest["metadata"],
                                                              spec=manifest["spec"], opts=opts))
        outputs: dict[str, Any] = {
            "namespace": self.namespace.metadata["name"],
            "daemonSets": [ds.metadata["name"] for ds in self.daemon_sets],
        }
        if self.config_maps:
            outputs["configMaps"] = [config_map.metadata["name"] for config_map in self.config_maps]
        self.register_outputs(outputs)
