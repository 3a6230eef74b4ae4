"""`gpu-aks:cluster.nodeProvisioningProfile`: AKS node auto-provisioning (NAP) on the managed cluster.

Under `mode: Auto` (ManagedCluster, API 2025-09-01) AKS runs Karpenter (Azure/karpenter-provider-azure),
and GPU capacity may be declared by requirement in `gpuNodePools` (the NAP pool kind,
`components/pools/nap.py`). `NodeProvisioningMode` and `NodeProvisioningDefaultNodePools` are Microsoft's
REST models (azure-mgmt-containerservice 40.1.0, `_container_service_client_enums.py`):
- `Auto`: "Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be."
- `defaultNodePools`: changing `Auto` to `None` on an existing cluster "will cause the default Karpenter
  NodePools to be deleted, which will drain and delete the nodes"; the AKS how-to page says they are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from gpu_aks_policies.declarations import Section, choice

from components.aks_api import API_VERSION

_MODEL = f"ManagedCluster (API {API_VERSION})"

NodeProvisioningMode = Literal["Manual", "Auto"]
NODE_PROVISIONING_MODES: tuple[str, ...] = get_args(NodeProvisioningMode)
DefaultNodePools = Literal["Auto", "None"]
DEFAULT_NODE_POOLS: tuple[str, ...] = get_args(DefaultNodePools)


#: The NodePool AKS adds itself under `defaultNodePools: Auto`: general-purpose on-demand D-family nodes for any
#: pod, with no `limits` (learn.microsoft.com/azure/aks/node-autoprovision-node-pools, "Default node pool
#: configuration"), so Karpenter may launch as many as pending pods ask for.
AKS_DEFAULT_NODEPOOL = "default"


@dataclass(frozen=True)
class NodeProvisioningSettings:
    """`nodeProvisioningProfile` of the managed cluster."""

    mode: NodeProvisioningMode = "Manual"
    default_node_pools: DefaultNodePools = "Auto"

    @property
    def auto(self) -> bool:
        return self.mode == "Auto"

    @property
    def unbounded_nodepools(self) -> dict[str, str]:
        """The NodePools AKS adds on its own that nothing bounds, each with why: no cost ceiling holds them."""
        if self.auto and self.default_node_pools == "Auto":
            return {AKS_DEFAULT_NODEPOOL: "AKS's own NodePool under nodeProvisioningProfile.defaultNodePools: Auto, "
                                          "which has no limits (set defaultNodePools: None to leave it out)"}
        return {}

    def as_api(self) -> dict[str, str]:
        return {"mode": self.mode, "default_node_pools": self.default_node_pools}


NODE_PROVISIONING_PROFILE = Section(
    "nodeProvisioningProfile", "Node auto-provisioning (AKS runs Karpenter); `gpuNodePools` needs `mode: Auto`.", (
        choice("mode", "`Auto`: AKS provisions nodes with Karpenter (NAP); then every AgentPool must be fixed-size "
               "(`minCount` = `maxCount`).", NODE_PROVISIONING_MODES, "Manual", attr="mode",
               source=f"{_MODEL} nodeProvisioningProfile.mode"),
        choice("defaultNodePools", "`Auto`: AKS adds its default Karpenter NodePools (general-purpose nodes for any "
               "pod); `None`: only the NodePools declared here. Do not switch Auto to None under load.",
               DEFAULT_NODE_POOLS, "Auto", attr="default_node_pools",
               source=f"{_MODEL} nodeProvisioningProfile.defaultNodePools"),
    ), cls=NodeProvisioningSettings)
