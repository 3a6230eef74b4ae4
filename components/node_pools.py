"""`AgentPoolComponent`: one AgentPool-backed pool (a CPU or a GPU pool), an AKS `AgentPool` of its own.

What the pool is comes from its kind (`components/pools/`): the AgentPool body, its Azure name and
the component type. This module only creates it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import containerservice

from components.cluster import ClusterTarget
from components.pools import AgentPoolSpec, agent_pool_properties
from components.pools.gpu import GPU_POOL
from components.settings import create_only_properties

#: Properties Azure sets at creation and refuses to change in place. `vmSize`, `gpuInstanceProfile`
#: and `nodePublicIPTags` already force replacement in the provider; the rest would fail the update
#: ("PropertyChangeNotAllowed"), so a change to any of them replaces the pool. With suffixed Azure
#: names a change to them also changes the name, so the replacement is a new pool. Declared once, on
#: the pool keys (`create_only`), in the settings layer.
CREATE_ONLY_PROPERTIES = create_only_properties(GPU_POOL)


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
class AgentPoolArgs:
    spec: AgentPoolSpec
    cluster: ClusterTarget


class AgentPoolComponent(pulumi.ComponentResource):
    """An autoscaled user pool with its taints and labels, typed by its kind (`component_type`).

    Its Azure name is the config name plus 4 hex characters of a hash of its create-only properties
    (the Azure Verified Module's pattern). A change to one of them is a new Azure name, so Pulumi
    creates the new pool before it deletes the old one and GPU capacity never drops to zero; pods pin
    themselves with the `gpu-aks.io/pool` label, which both pools carry. With `keepAzureName: true`
    the Azure name is the config name (gpu-aks 0.1 naming) and a replacement must delete first.
    """

    def __init__(self, component_type: str, name: str, args: AgentPoolArgs,
                 opts: pulumi.ResourceOptions | None = None, former_types: Sequence[str] = ()) -> None:
        super().__init__(component_type, name, None, renamed(opts, former_types))
        spec = args.spec
        self.spec = spec
        self.agent_pool = containerservice.AgentPool(
            f"{name}-pool",
            agent_pool_name=spec.azure_name,
            resource_group_name=args.cluster.resource_group_name,
            resource_name_=args.cluster.cluster_name,
            # pulumi-azure-native#2094: re-sending a pinned orchestratorVersion after AKS's auto-upgrade
            # moved the pool asks AKS for a downgrade, which it refuses. When the channel moves versions
            # the pool sends none: it is created at the control plane's version and AKS moves it after.
            **agent_pool_properties(spec.body, None if args.cluster.aks_moves_version else args.cluster.kubernetes_version),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[args.cluster.cluster],
                # The autoscaler owns the node count once the pool exists.
                ignore_changes=["count"],
                replace_on_changes=CREATE_ONLY_PROPERTIES,
                # Two pools cannot share an Azure name: only a kept name has to go first.
                delete_before_replace=spec.keeps_azure_name,
            ),
        )
        self.register_outputs({"name": spec.name, "azureName": self.agent_pool.name, "vmSize": spec.body.vm_size})
