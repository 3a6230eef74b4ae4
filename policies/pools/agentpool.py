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
from dataclasses import replace
from typing import Any

from ..catalog import SPOT_TAINT, aks_node_labels, gpu_sku, is_gpu_vm_size, node_count_problem
from ..limits import is_number
from ..podspecs import join, known, list_at, mapping_at
from ..quantities import shown
from ..scheduling import TaintSyntaxError, format_taint, parse_taint
from ..secrets import is_secret
from .model import AsWritten, Offer, Pool, PoolFact, PoolReading, PoolRole
from .registry import NO_TAINTS, NodeFacts, read_fact, register

_AGENT_POOL_TYPE = re.compile(r"azure-native:containerservice(/v[0-9a-z]+)?:AgentPool")
_MANAGED_CLUSTER_TYPE = re.compile(r"azure-native:containerservice(/v[0-9a-z]+)?:ManagedCluster")
#: How to bound a GPU AgentPool, in its own field names.
_BOUNDS_FIX = "enableAutoScaling: true, minCount: 0, maxCount: <the most GPUs nodes you will pay for>"


def shown_count(value: Any) -> str:
    """A count as people write it: the wire's 3.0 is 3 (a secret one is named only as secret)."""
    if is_secret(value):
        return shown(value)
    return str(int(value)) if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 else shown(value)


def _taints(path: str, props: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The taints the pool's nodes carry, AKS's Spot taint included, and why each written one that is
    not a taint is none."""
    taints, problems = [], []
    taints_path = join(path, "nodeTaints")
    for index, text in enumerate(list_at(props.get("nodeTaints"), taints_path)):
        known(text, join(taints_path, index))
        try:
            taints.append(parse_taint(text))
        except TaintSyntaxError as error:
            problems.append(str(error))
    # AKS adds the Spot taint to every Spot node, declared or not.
    if known(props.get("scaleSetPriority"), join(path, "scaleSetPriority")) == "Spot":
        spot = parse_taint(SPOT_TAINT)
        if spot not in taints:
            taints.append(spot)
    return tuple(map(format_taint, taints)), tuple(problems)


def _bounds(path: str, props: Mapping[str, Any]) -> tuple[AsWritten, int, int]:
    """How the pool's node count is bounded as written, and its bounds (a fixed-size pool: its count
    twice; 0 where the resource writes no usable count)."""
    autoscaling = known(props.get("enableAutoScaling"), join(path, "enableAutoScaling"))
    min_count = known(props.get("minCount"), join(path, "minCount"))
    max_count = known(props.get("maxCount"), join(path, "maxCount"))
    lower, upper = ("minCount", shown_count(min_count)), ("maxCount", shown_count(max_count))
    written = f"enableAutoScaling: {shown(autoscaling)}, {lower[0]}: {lower[1]}, {upper[0]}: {upper[1]}"
    # A count past AKS's limit, fractional, negative or not finite bounds nothing (1e30 once passed);
    # one that is no number at all is read as no bound already.
    unusable = [f"{field} {why}" for field, value in (("minCount", min_count), ("maxCount", max_count))
                if is_number(value) and (why := node_count_problem(value))]
    autoscaled = autoscaling is True and is_number(min_count) and is_number(max_count) and not unusable
    count = props.get("count")
    if autoscaled:
        lowest, highest = int(min_count), int(max_count)
    else:
        lowest = highest = int(count) if is_number(count) and node_count_problem(count) is None else 0
    return AsWritten(autoscaled, "; ".join([written, *unusable]), _BOUNDS_FIX, lower, upper), lowest, highest


def _needs_device_plugin(props: Mapping[str, Any]) -> bool:
    """NVIDIA GPUs whose driver AKS installs and whose plugin nothing else runs: `gpuProfile.driver:
    None` leaves driver and plugin to the GPU Operator or another owner; AKS-managed GPU pools
    (`gpuProfile.nvidia.managementMode: Managed`) run their own plugin."""
    vm_size = props.get("vmSize")
    if not isinstance(vm_size, str) or gpu_sku(vm_size) is None:
        return False
    gpu_profile = props.get("gpuProfile")
    if isinstance(gpu_profile, abc.Mapping):
        if gpu_profile.get("driver") == "None":
            return False
        nvidia = gpu_profile.get("nvidia")
        if isinstance(nvidia, abc.Mapping) and nvidia.get("managementMode") == "Managed":
            return False
    return True


def _agent_pool(path: str, name: str, props: Mapping[str, Any], azure_name: str | None) -> PoolReading:
    """One AgentPool body (`props`) at `path` in its resource, as the one pool model: each fact read
    once, on its own (a value the preview does not know yet hides that fact alone). `name` is its
    Azure name as written, or `#<index>` for a nameless profile (`azure_name` None)."""
    unknown: dict[PoolFact, str] = {}
    vm_size = read_fact(unknown, "offers", lambda: known(props.get("vmSize"), join(path, "vmSize")), None)
    profile = read_fact(unknown, "mig", lambda: known(props.get("gpuInstanceProfile"),
                                                      join(path, "gpuInstanceProfile")), None)
    spot = props.get("scaleSetPriority") == "Spot"
    sizes = (vm_size,) if isinstance(vm_size, str) else ()
    offers = tuple(Offer.sized(size, gpu_sku(size), gpu_instance_profile=str(profile) if profile else None,
                               capacity_types=("spot",) if spot else ("onDemand",)) for size in sizes)
    taints, problems = read_fact(unknown, "taints", lambda: _taints(path, props), NO_TAINTS)
    written, min_count, max_count = read_fact(unknown, "count", lambda: _bounds(path, props),
                                              (AsWritten(False, "", _BOUNDS_FIX), 0, 0))

    def labels() -> dict[str, str]:
        written_labels = mapping_at(props.get("nodeLabels"), join(path, "nodeLabels"))
        return aks_node_labels(name, {k: str(v) for k, v in written_labels.items()}, spot,
                               vm_size if isinstance(vm_size, str) else None)

    zones = props.get("availabilityZones")
    zones = zones if isinstance(zones, abc.Sequence) and not isinstance(zones, str) else ()
    role: PoolRole = "system" if props.get("mode") == "System" else \
        "gpu" if any(map(is_gpu_vm_size, sizes)) else "cpu"
    taints_path = join(path, "nodeTaints")
    pool = Pool(name=name, key=name, role=role, backend="agentPool", azure_name=azure_name, offers=offers,
                min_count=min_count, max_count=max_count, spot=spot,
                zones=tuple(zone for zone in zones if isinstance(zone, str)), taints=taints,
                labels=read_fact(unknown, "labels", labels, {}))
    return PoolReading(
        pool, source={"pool": path or taints_path, "offers": join(path, "vmSize"), "mig": join(path, "gpuInstanceProfile"),
                      "taints": taints_path, "count": join(path, "maxCount"), "labels": join(path, "nodeLabels"),
                      "plugin": join(path, "gpuProfile")},
        written=replace(written, taint_problems=problems), unknown=unknown, needs_device_plugin=_needs_device_plugin(props))


def _recognizes(resource_type: str) -> bool:
    return bool(_AGENT_POOL_TYPE.fullmatch(resource_type) or _MANAGED_CLUSTER_TYPE.fullmatch(resource_type))


#: An AgentPool's nodes: AKS labels its GPU nodes `kubernetes.azure.com/accelerator: nvidia`; a broken
#: node's VM is deleted and replaced through the pool (`az aks nodepool delete-machines`).
NODES = NodeFacts(gpu_labels={"kubernetes.azure.com/accelerator": "nvidia"},
                  replace_hint=lambda node_name, labels: "az aks nodepool delete-machines")


@register("agentPool", _recognizes, source="azure-native containerservice AgentPool; ManagedCluster agentPoolProfiles",
          nodes=NODES)
def agent_pools(resource_type: str, props: Mapping[str, Any]) -> list[PoolReading]:
    if _AGENT_POOL_TYPE.fullmatch(resource_type):
        name = props.get("agentPoolName") or props.get("name") or ""
        name = name if isinstance(name, str) else ""
        return [_agent_pool("", name, props, name or None)]
    profiles = list_at(props.get("agentPoolProfiles"), "agentPoolProfiles")
    pools = []
    for index, profile in enumerate(profiles):
        if isinstance(profile, abc.Mapping):
            name = profile.get("name")
            pools.append(_agent_pool(join("agentPoolProfiles", index), str(name or f"#{index}"), profile,
                                     name if isinstance(name, str) and name else None))
    return pools
