"""`GpuDraDriver`: NVIDIA's DRA driver for GPUs on the pools `gpu-aks:dra` names, from NVIDIA's chart at a
pinned version (`components/settings/dra.py`), and, with `extendedResource`, the DeviceClass that serves
`nvidia.com/gpu` through it (KEP-5004).

A `helm.v3.Release`: the chart holds a controller, a kubelet-plugin DaemonSet, RBAC and admission objects that
NVIDIA maintains; rendering them here would be a copy to keep in step. What a Release installs does not reach
`pulumi preview` or the policy pack (FACTS, "Pulumi policy packs"), so what gpu-aks decides for the driver (its
pinning and tolerations) is in `manifests.dra_driver_values`, tested beside the device plugin's, and the
DeviceClass gpu-aks adds is a plain resource the pack sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_policies.catalog import GPU_RESOURCE
from gpu_aks_policies.pools.model import Pool

from components.manifests import dra_driver_values, extended_resource_device_class, namespace
from components.settings.dra import (
    DRA_CHART,
    DRA_CHART_REPOSITORY,
    DRA_CHART_VERSION,
    EXTENDED_DEVICE_CLASS,
    DraSettings,
)


@dataclass(frozen=True)
class GpuDraDriverArgs:
    settings: DraSettings
    #: The pools it serves (`dra.pools`).
    pools: Sequence[Pool]
    provider: k8s.Provider
    after: Sequence[pulumi.Resource] = ()


class GpuDraDriver(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuDraDriverArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuDraDriver", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        ns = namespace(args.settings.namespace)
        self.namespace = k8s.core.v1.Namespace(f"{name}-namespace", metadata=ns["metadata"], opts=in_cluster)
        after_namespace = pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[self.namespace]))
        self.release = k8s.helm.v3.Release(f"{name}-chart", k8s.helm.v3.ReleaseArgs(
            chart=DRA_CHART, version=DRA_CHART_VERSION,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=DRA_CHART_REPOSITORY),
            namespace=args.settings.namespace, values=dra_driver_values(args.pools)), opts=after_namespace)
        self.device_classes: list[k8s.resource.v1.DeviceClass] = []
        if args.settings.extended_resource:
            device_class = extended_resource_device_class(EXTENDED_DEVICE_CLASS, GPU_RESOURCE)
            self.device_classes.append(k8s.resource.v1.DeviceClass(
                f"{name}-extended-resource", metadata=device_class["metadata"], spec=device_class["spec"],
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[self.release]))))
        self.register_outputs({"namespace": self.namespace.metadata["name"], "release": self.release.name,
                               "deviceClasses": [c.metadata["name"] for c in self.device_classes]})
