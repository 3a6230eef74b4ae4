"""`GpuNodePools`: the GPU NodePools of node auto-provisioning (NAP), each a `karpenter.sh/v1` NodePool
with its own `karpenter.azure.com/v1beta1` AKSNodeClass, created in the cluster with its Kubernetes
provider once the cluster runs NAP (`cluster.nodeProvisioningProfile.mode: Auto`).

The objects come from the pure builders in `components/karpenter.py`. Plain `CustomResource`s, not a
Helm release, so `pulumi preview` and the policy pack see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.karpenter import aks_node_class, gpu_node_pool
from components.settings import NapGpuPoolSettings


@dataclass(frozen=True)
class GpuNodePoolsArgs:
    pools: Sequence[NapGpuPoolSettings]
    provider: k8s.Provider
    #: The managed cluster (NAP must run before its CRDs exist) and the deployer's role assignment.
    after: Sequence[pulumi.Resource] = ()


class GpuNodePools(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuNodePoolsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuNodePools", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        self.node_classes: list[k8s.apiextensions.CustomResource] = []
        self.node_pools: list[k8s.apiextensions.CustomResource] = []
        for pool in args.pools:
            node_class = aks_node_class(pool.node_class, pool.image_family, pool.os_disk_size_gb)
            created_class = k8s.apiextensions.CustomResource(
                f"{name}-{pool.name}-nodeclass", api_version=node_class["apiVersion"], kind=node_class["kind"],
                metadata=node_class["metadata"], spec=node_class["spec"], opts=in_cluster)
            node_pool = gpu_node_pool(pool.node_pool_spec())
            self.node_classes.append(created_class)
            self.node_pools.append(k8s.apiextensions.CustomResource(
                f"{name}-{pool.name}", api_version=node_pool["apiVersion"], kind=node_pool["kind"],
                metadata=node_pool["metadata"], spec=node_pool["spec"],
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[created_class]))))
        self.register_outputs({"nodePools": [pool.name for pool in args.pools]})
