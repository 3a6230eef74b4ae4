"""AKS AgentPools: an `azure-native` AgentPool resource, or an entry of a ManagedCluster's
`agentPoolProfiles` (the inline system pool; AKS reads each entry as an AgentPool body).

Field names and semantics are the AKS API's ManagedClusterAgentPoolProfileProperties
(`vmSize`, `nodeTaints`, `nodeLabels`, `scaleSetPriority`, `enableAutoScaling`, `minCount`,
`maxCount`, `gpuInstanceProfile`, `gpuProfile.driver`, `gpuProfile.nvidia.managementMode`).
"""

from __future__ import annotations

import re
from collections import abc
from collections.abc import Mapping
from typing import Any

from ..catalog import SPOT_TAINT, aks_node_labels, gpu_sku, node_count_problem
from ..limits import is_number
from ..podspecs import join, known, list_at, mapping_at
from ..quantities import shown
from ..scheduling import TaintSyntaxError, format_taint, parse_taint
from .registry import NodeFacts, register
from .view import PoolView, Scaling, shown_count

_AGENT_POOL_TYPE = re.compile(r"azure-native:containerservice(/v[0-9a-z]+)?:AgentPool")
_MANAGED_CLUSTER_TYPE = re.compile(r"azure-native:containerservice(/v[0-9a-z]+)?:ManagedCluster")


class AgentPoolView(PoolView):
    """One AgentPool body (`props`), at `path` in its resource."""

    def __init__(self, path: str, name: str, props: Mapping[str, Any]) -> None:
        self.path, self.name, self.props = path, name, props

    def _at(self, key: str) -> Any:
        return known(self.props.get(key), join(self.path, key))

    @property
    def taints_path(self) -> str:
        return join(self.path, "nodeTaints")

    def taint_fix(self, taint: Mapping[str, str]) -> str:
        return f'nodeTaints: ["{format_taint(taint)}"]'

    def vm_sizes(self) -> tuple[str, ...]:
        vm_size = self._at("vmSize")
        return (vm_size,) if isinstance(vm_size, str) else ()

    def taints(self) -> tuple[list[dict[str, str]], list[str]]:
        taints, problems = [], []
        path = self.taints_path
        for index, text in enumerate(list_at(self.props.get("nodeTaints"), path)):
            known(text, join(path, index))
            try:
                taints.append(parse_taint(text))
            except TaintSyntaxError as error:
                problems.append(str(error))
        # AKS adds the Spot taint to every Spot node, declared or not.
        if self._at("scaleSetPriority") == "Spot":
            spot = parse_taint(SPOT_TAINT)
            if spot not in taints:
                taints.append(spot)
        return taints, problems

    def scaling(self) -> Scaling:
        autoscaling, min_count, max_count = self._at("enableAutoScaling"), self._at("minCount"), self._at("maxCount")
        written = (f"enableAutoScaling: {shown(autoscaling)}, minCount: {shown_count(min_count)}, "
                   f"maxCount: {shown_count(max_count)}")
        # A count past AKS's limit, fractional, negative or not finite bounds nothing (1e30 once passed);
        # one that is no number at all is read as no bound already.
        unusable = [f"{field} {why}" for field, value in (("minCount", min_count), ("maxCount", max_count))
                    if is_number(value) and (why := node_count_problem(value))]
        return Scaling(
            autoscaling is True and is_number(min_count) and is_number(max_count) and not unusable, min_count, max_count,
            "; ".join([written, *unusable]),
            "enableAutoScaling: true, minCount: 0, maxCount: <the most GPUs nodes you will pay for>")

    def node_labels(self) -> dict[str, str]:
        labels = {k: str(v) for k, v in mapping_at(self.props.get("nodeLabels"), join(self.path, "nodeLabels")).items()}
        size = self.props.get("vmSize")
        return aks_node_labels(self.name, labels, self.props.get("scaleSetPriority") == "Spot",
                               size if isinstance(size, str) else None)

    def mig(self) -> bool:
        return bool(self._at("gpuInstanceProfile"))

    def served_by_nvidia_plugin(self) -> bool:
        # `gpuProfile.driver: None`: the GPU Operator or another owner runs driver and plugin; AKS-managed
        # GPU pools (`gpuProfile.nvidia.managementMode: Managed`) run their own plugin.
        vm_size = self.props.get("vmSize")
        if not isinstance(vm_size, str) or gpu_sku(vm_size) is None:
            return False
        gpu_profile = self.props.get("gpuProfile")
        if isinstance(gpu_profile, abc.Mapping):
            if gpu_profile.get("driver") == "None":
                return False
            nvidia = gpu_profile.get("nvidia")
            if isinstance(nvidia, abc.Mapping) and nvidia.get("managementMode") == "Managed":
                return False
        return True


def _recognizes(resource_type: str) -> bool:
    return bool(_AGENT_POOL_TYPE.fullmatch(resource_type) or _MANAGED_CLUSTER_TYPE.fullmatch(resource_type))


#: An AgentPool's nodes: AKS labels its GPU nodes `kubernetes.azure.com/accelerator: nvidia`; a broken
#: node's VM is deleted and replaced through the pool (`az aks nodepool delete-machines`).
NODES = NodeFacts(gpu_labels={"kubernetes.azure.com/accelerator": "nvidia"},
                  replace_hint=lambda node_name, labels: "az aks nodepool delete-machines")


@register("agentPool", _recognizes, source="azure-native containerservice AgentPool; ManagedCluster agentPoolProfiles",
          nodes=NODES)
def agent_pools(resource_type: str, props: Mapping[str, Any]) -> list[PoolView]:
    if _AGENT_POOL_TYPE.fullmatch(resource_type):
        name = props.get("agentPoolName") or props.get("name") or ""
        return [AgentPoolView("", name if isinstance(name, str) else "", props)]
    profiles = list_at(props.get("agentPoolProfiles"), "agentPoolProfiles")
    return [AgentPoolView(join("agentPoolProfiles", index), str(profile.get("name") or f"#{index}"), profile)
            for index, profile in enumerate(profiles) if isinstance(profile, abc.Mapping)]
