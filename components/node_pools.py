"""`PoolComponent`: one pool of any kind, made of the resources its kind's pure specs describe.

What the pool is comes from its kind (`components/pools/`): the component type, and the specs (an
AgentPool's body and Azure name; Kubernetes objects). This module only creates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice

from components.cluster import ClusterTarget
from components.pools import AGENT_POOL_CREATE_ONLY, AgentPoolSpec, KubernetesObjectsSpec, agent_pool_properties

#: Properties Azure sets at creation and refuses to change in place. `vmSize`, `gpuInstanceProfile`
#: and `nodePublicIPTags` already force replacement in the provider; the rest would fail the update
#: ("PropertyChangeNotAllowed"), so a change to any of them replaces the pool. With suffixed Azure
#: names a change to them also changes the name, so the replacement is a new pool. Declared once, on
#: the pool keys (`create_only`), in the settings layer.
CREATE_ONLY_PROPERTIES = list(AGENT_POOL_CREATE_ONLY)


def renamed(opts: pulumi.ResourceOptions | None, former_types: Sequence[str]) -> pulumi.ResourceOptions:
    """`opts` plus an alias for each former type of the component, alone and combined with each alias
    `opts` already has (a pool of a gpu-aks 0.2 stack had the old type *and* the stack as parent)."""
    opts = opts or pulumi.ResourceOptions()
    existing = [alias for alias in opts.aliases or [] if isinstance(alias, pulumi.Alias)]
    extra = [pulumi.Alias(type_=former) for former in former_types]
    extra += [pulumi.Alias(name=alias.name, type_=former, parent=alias.parent, stack=alias.stack, project=alias.project)
              for former in former_types for alias in existing]
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=extra))


@dataclass(frozen=True)
class PoolArgs:
    #: What the pool is made of, from its kind (`kind.resources(pool)`).
    specs: tuple[AgentPoolSpec | KubernetesObjectsSpec, ...]
    cluster: ClusterTarget
    #: For Kubernetes objects: the cluster's provider, and what they wait for (the deployer's rights).
    provider: k8s.Provider | None = None
    after: Sequence[pulumi.Resource] = ()


class PoolComponent(pulumi.ComponentResource):
    """One pool, typed by its kind (`component_type`), made of what its kind's specs say.

    An `AgentPoolSpec` is an `AgentPool` named `<pool>-pool`: an autoscaled user pool with its taints
    and labels. Its Azure name is the config name plus 4 hex characters of a hash of its create-only
    properties (the Azure Verified Module's pattern). A change to one of them is a new Azure name, so
    Pulumi creates the new pool before it deletes the old one and GPU capacity never drops to zero;
    pods pin themselves with the `gpu-aks.io/pool` label, which both pools carry. With
    `keepAzureName: true` the Azure name is the config name (gpu-aks 0.1 naming) and a replacement
    must delete first. A `KubernetesObjectsSpec` is one Kubernetes object per manifest, named
    `<pool>-<kind>` (a NAP pool's `NodePool` and `AKSNodeClass`), created with the cluster's provider.
    """

    def __init__(self, component_type: str, name: str, args: PoolArgs,
                 opts: pulumi.ResourceOptions | None = None, former_types: Sequence[str] = ()) -> None:
        super().__init__(component_type, name, None, renamed(opts, former_types))
        self.agent_pools: list[containerservice.AgentPool] = []
        self.objects: list[pulumi.CustomResource] = []
        outputs: dict[str, Any] = {}
        for spec in args.specs:
            if isinstance(spec, AgentPoolSpec):
                self.agent_pools.append(self._agent_pool(name, spec, args.cluster))
                outputs = {"name": spec.name, "azureName": self.agent_pools[-1].name, "vmSize": spec.body.vm_size}
            else:
                self.objects += self._objects(name, spec, args)
                outputs = {"name": spec.name}
        self.register_outputs(outputs)

    def _agent_pool(self, name: str, spec: AgentPoolSpec, cluster: ClusterTarget) -> containerservice.AgentPool:
        return containerservice.AgentPool(
            f"{name}-pool",
            agent_pool_name=spec.azure_name,
            resource_group_name=cluster.resource_group_name,
            resource_name_=cluster.cluster_name,
            # pulumi-azure-native#2094: re-sending a pinned orchestratorVersion after AKS's auto-upgrade
            # moved the pool asks AKS for a downgrade, which it refuses. When the channel moves versions
            # the pool sends none: it is created at the control plane's version and AKS moves it after.
            **agent_pool_properties(spec.body, None if cluster.aks_moves_version else cluster.kubernetes_version),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[cluster.cluster],
                # The autoscaler owns the node count of an autoscaled pool once it exists; a fixed-size
                # pool's count is the config's.
                ignore_changes=["count"] if spec.body.autoscaled else [],
                replace_on_changes=CREATE_ONLY_PROPERTIES,
                # Two pools cannot share an Azure name: only a kept name has to go first.
                delete_before_replace=spec.keeps_azure_name,
            ),
        )

    def _objects(self, name: str, spec: KubernetesObjectsSpec, args: PoolArgs) -> list[pulumi.CustomResource]:
        if args.provider is None:
            raise ValueError(f"pool {spec.name}: Kubernetes objects need the cluster's provider")
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider,
                                            depends_on=[args.cluster.cluster, *args.after])
        return [k8s.apiextensions.CustomResource(
            f"{name}-{manifest['kind'].lower()}", api_version=manifest["apiVersion"], kind=manifest["kind"],
            metadata=manifest.get("metadata"), spec=manifest.get("spec"), opts=in_cluster)
            for manifest in spec.manifests]
