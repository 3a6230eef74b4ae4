"""The pack half of pools (`gpu_aks_policies.pools`): each backend recognises its resources and reads
each pool they declare into the one pool model (`Pool`), with its reading beside it (`PoolReading`);
the rules judge any registered backend's pools without reading its fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from gpu_aks_policies import pools
from gpu_aks_policies.podspecs import UNKNOWN
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage, check_gpu_node_pool
from gpu_aks_policies.pools import is_pool_resource, pools_of
from gpu_aks_policies.pools.model import AsWritten, Offer, Pool, PoolReading
from gpu_aks_policies.pools.registry import register
from gpu_aks_policies.rules import RULES

from tests.helpers import DEFAULTS

POOL_CONFIG = DEFAULTS["gpu-node-pools-are-tainted"]
T4 = {"vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule"], "enableAutoScaling": True,
      "minCount": 0, "maxCount": 2}


@pytest.mark.parametrize(("resource_type", "recognized"), [
    ("azure-native:containerservice:AgentPool", True),
    ("azure-native:containerservice/v20250801:AgentPool", True),
    ("azure-native:containerservice:ManagedCluster", True),
    ("azure-native:containerservice:Fleet", False),
    ("kubernetes:apps/v1:DaemonSet", False),
])
def test_the_agent_pool_kind_recognizes_agent_pools_and_cluster_profiles(resource_type, recognized):
    assert is_pool_resource(resource_type) is recognized
    assert [kind.name for kind in pools.BACKENDS if kind.recognizes(resource_type)] == (["agentPool"] if recognized else [])


def test_an_agent_pool_is_read_into_the_pool_model_with_where_each_fact_is_written():
    [read] = pools_of("azure-native:containerservice:AgentPool",
                      {**T4, "agentPoolName": "t4", "scaleSetPriority": "Spot", "gpuInstanceProfile": "MIG1g",
                       "nodeLabels": {"team": "ml"}, "maxCount": 3.0, "nodeTaints": ["sku=gpu:NoSchedule", "bad"]})
    pool = read.pool
    assert (pool.name, pool.azure_name, pool.backend, pool.role, pool.vm_sizes, pool.mig, pool.spot) == \
        ("t4", "t4", "agentPool", "gpu", ("Standard_NC4as_T4_v3",), True, True)
    assert [offer.gpu_model for offer in pool.gpu_offers] == ["T4"] and pool.offers[0].capacity_types == ("spot",)
    assert pool.taints == ("sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule")
    assert (pool.min_count, pool.max_count, read.unknown) == (0, 3, {})
    assert read.written == AsWritten(
        True, "enableAutoScaling: True, minCount: 0, maxCount: 3",
        "enableAutoScaling: true, minCount: 0, maxCount: <the most GPUs nodes you will pay for>", ("minCount", "0"),
        ("maxCount", "3"), taint_problems=("taint 'bad' has no effect: write it as key=value:Effect, e.g. "
                                           "'sku=gpu:NoSchedule'",))
    assert (read.source["pool"], read.source["taints"], read.source["offers"]) == ("nodeTaints", "nodeTaints", "vmSize")
    assert pool.labels["team"] == "ml" and pool.labels["kubernetes.azure.com/agentpool"] == "t4"
    assert read.needs_device_plugin


def test_a_fixed_size_agent_pool_has_its_count_as_both_bounds():
    [read] = pools_of("azure-native:containerservice:AgentPool",
                      {"agentPoolName": "sys", "vmSize": "Standard_D4ds_v5", "mode": "System", "count": 2.0})
    pool = read.pool
    assert (pool.role, pool.min_count, pool.max_count, pool.gpu, read.needs_device_plugin) == ("system", 2, 2, False, False)
    assert not read.written.autoscaled
    assert read.written.bounds == "enableAutoScaling: None, minCount: None, maxCount: None"


def test_cluster_profiles_are_pools_at_their_own_path_and_an_unknown_value_stays_in_its_pool():
    profiles = [{**T4, "name": "gpu"}, {**T4, "vmSize": UNKNOWN}]
    first, second = pools_of("azure-native:containerservice:ManagedCluster", {"agentPoolProfiles": profiles})
    assert (first.pool.name, first.source["pool"], second.pool.name, second.source["pool"]) == (
        "gpu", "agentPoolProfiles[0]", "#1", "agentPoolProfiles[1]")
    assert (first.pool.azure_name, second.pool.azure_name) == ("gpu", None)
    # The preview hides the second pool's size alone: its other facts are read.
    assert (first.unknown, second.unknown) == ({}, {"offers": "agentPoolProfiles[1].vmSize"})
    assert second.pool.taints == ("sku=gpu:NoSchedule",) and second.written.autoscaled
    findings = check_gpu_node_pool("azure-native:containerservice:ManagedCluster",
                                   {"agentPoolProfiles": [{**profiles[0], "nodeTaints": []}, profiles[1]]}, POOL_CONFIG)
    assert [(f.path, f.decided) for f in findings] == [("agentPoolProfiles[0]", True),
                                                       ("agentPoolProfiles[1].vmSize", False)]


@pytest.mark.parametrize(("gpu_profile", "served"), [
    (None, True), ({"driver": "Install"}, True), ({"driver": "None"}, False),
    ({"nvidia": {"managementMode": "Managed"}}, False),
])
def test_a_pool_whose_driver_or_plugin_someone_else_runs_needs_no_self_installed_plugin(gpu_profile, served):
    props = {**T4, "agentPoolName": "t4", **({"gpuProfile": gpu_profile} if gpu_profile else {})}
    [read] = pools_of("azure-native:containerservice:AgentPool", props)
    assert read.needs_device_plugin is served


def _karpenterish(props: Mapping[str, Any]) -> PoolReading:
    """A stand-in backend's pool: one that may bring several sizes, with its own field names."""
    name, limit, taints = str(props["name"]), props.get("limit"), "spec.template.spec.taints"
    pool = Pool(name=name, key=name, role="gpu", backend="nodePool", azure_name=None,
                offers=tuple(Offer(size) for size in props["sizes"]), min_count=0, max_count=limit or 0, spot=False,
                zones=(), taints=tuple(props.get("taints", ())), labels={"karpenter.sh/nodepool": name})
    return PoolReading(pool, source={"pool": taints}, needs_device_plugin=True,
                       written=AsWritten(limit is not None, f"spec.limits: {limit}",
                                         "spec.limits.nvidia.com/gpu: <most GPUs>", ("min", "0"),
                                         ("spec.limits", str(limit)), taints, taints_as_text=False))


@pytest.fixture
def stand_in_backend(monkeypatch):
    monkeypatch.setattr(pools.registry, "BACKENDS", list(pools.BACKENDS))

    @register("standIn", lambda resource_type: resource_type == "test:karpenter.sh/v1:NodePool")
    def stand_in(resource_type: str, props: Mapping[str, Any]) -> list[PoolReading]:
        return [_karpenterish(props)]

    return "test:karpenter.sh/v1:NodePool"


def test_a_new_backend_is_judged_by_the_same_rules_without_a_change_to_them(stand_in_backend):
    props = {"name": "nap", "sizes": ["Standard_NC4as_T4_v3", "Standard_NC64as_T4_v3"], "taints": []}
    findings = check_gpu_node_pool(stand_in_backend, props, POOL_CONFIG)
    assert [f.path for f in findings] == ["spec.template.spec.taints"] * 2
    assert findings[0].message.startswith("GPU node pool 'nap' (Standard_NC4as_T4_v3, Standard_NC64as_T4_v3) carries "
                                          "no NoSchedule GPU taint")
    assert "(spec.limits: None)" in findings[1].message and "Fix: spec.limits.nvidia.com/gpu" in findings[1].message
    plugin = StackResource("urn:plugin", "kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"spec": {
        "nodeSelector": {"kubernetes.azure.com/agentpool": "x"},
        "containers": [{"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]}}}})
    [gap] = check_device_plugin_coverage([plugin, StackResource("urn:nap", stand_in_backend, props)],
                                         DEFAULTS["device-plugin-tolerates-gpu-pools"])
    assert gap.subject == "urn:nap" and "does not select its nodes" in gap.message
    assert RULES["gpu-node-pools-are-tainted"].check is check_gpu_node_pool


def test_a_backend_registers_once(stand_in_backend):
    [backend] = [backend for backend in pools.registry.BACKENDS if backend.name == "standIn"]
    with pytest.raises(ValueError, match="registered twice"):
        register("standIn", backend.recognizes)(backend.pools_of)
    with pytest.raises(ValueError, match="registered twice"):
        register("standIn", backend.recognizes)(lambda resource_type, props: [])


def test_the_taint_fix_is_written_in_the_pools_own_field_names(stand_in_backend):
    """An AgentPool is told `nodeTaints`; a karpenter.sh NodePool has no such field: its fix is the
    Taint object at `spec.template.spec.taints`."""
    [agent_pool] = check_gpu_node_pool("azure-native:containerservice:AgentPool",
                                       {**T4, "agentPoolName": "t4", "nodeTaints": []}, POOL_CONFIG)
    assert agent_pool.message.endswith('Fix: nodeTaints: ["sku=gpu:NoSchedule"]')
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "h100"}, "spec": {
        "limits": {"nvidia.com/gpu": 8}, "template": {"spec": {"taints": [], "requirements": [
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_NC40ads_H100_v5"]}]}}}}
    untainted = [f for f in check_gpu_node_pool("kubernetes:karpenter.sh/v1:NodePool", nodepool, POOL_CONFIG)
                 if "taint" in f.message]
    assert [f.message.split("Fix: ")[1] for f in untainted] == [
        "spec.template.spec.taints: [{key: sku, value: gpu, effect: NoSchedule}]"]
    assert "nodeTaints" not in untainted[0].message
    [stand_in, _] = check_gpu_node_pool(stand_in_backend, {"name": "nap", "sizes": ["Standard_NC4as_T4_v3"]}, POOL_CONFIG)
    assert stand_in.message.endswith("Fix: spec.template.spec.taints: [{key: sku, value: gpu, effect: NoSchedule}]")


#: A DaemonSet that runs NVIDIA's plugin on every node: it serves any pool that is not MIG.
_EVERYWHERE = StackResource("urn:plugin", "kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"spec": {
    "tolerations": [{"operator": "Exists"}],
    "containers": [{"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}]}}}})


@pytest.mark.parametrize(("field", "hidden", "tainted_rule", "plugin_rule"), [
    # A hidden size hides the offers: no GPU pool rule can say whether the pool is a GPU pool; nor does the
    # plugin rule find a GPU size that needs a plugin.
    ("vmSize", {"offers": "vmSize"}, "undecided", "passes"),
    ("nodeTaints", {"taints": "nodeTaints"}, "undecided", "undecided"),
    ("scaleSetPriority", {"taints": "scaleSetPriority"}, "undecided", "undecided"),
    ("maxCount", {"count": "maxCount"}, "undecided", "passes"),
    ("nodeLabels", {"labels": "nodeLabels"}, "passes", "undecided"),
    ("gpuInstanceProfile", {"mig": "gpuInstanceProfile"}, "passes", "undecided"),
])
def test_a_value_the_preview_hides_leaves_undecided_only_the_rule_that_needs_its_fact(field, hidden, tainted_rule,
                                                                                       plugin_rule):
    props = {**T4, "agentPoolName": "t4", field: UNKNOWN}
    [read] = pools_of("azure-native:containerservice:AgentPool", props)
    assert read.unknown == hidden
    verdicts = []
    for findings in (check_gpu_node_pool("azure-native:containerservice:AgentPool", props, POOL_CONFIG),
                     check_device_plugin_coverage([_EVERYWHERE, StackResource("urn:t4", "azure-native:containerservice:"
                                                                              "AgentPool", props)],
                                                  DEFAULTS["device-plugin-tolerates-gpu-pools"])):
        assert all(f.path == next(iter(hidden.values())) for f in findings if not f.decided)
        verdicts.append("undecided" if any(not f.decided for f in findings) else "refused" if findings else "passes")
    assert verdicts == [tainted_rule, plugin_rule]


def test_a_nodepool_is_read_into_the_pool_model_in_its_own_field_names():
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "h100"}, "spec": {
        "limits": {"nvidia.com/gpu": 16}, "template": {
            "metadata": {"labels": {"team": "ml"}},
            "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}, {"key": "a b", "effect": "NoSchedule"}],
                     "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                       "values": ["Standard_ND96isr_H100_v5", "Standard_NC999_future"]}]}}}}
    [read] = pools_of("kubernetes:karpenter.sh/v1:NodePool", nodepool)
    pool = read.pool
    assert (pool.name, pool.backend, pool.role, pool.azure_name) == ("h100", "nodePool", "gpu", None)
    # The catalog's size carries its GPUs; one the catalog lacks is offered as written, without them.
    assert [(offer.vm_size, offer.gpus) for offer in pool.offers] == [("Standard_ND96isr_H100_v5", 8),
                                                                     ("Standard_NC999_future", 0)]
    # 16 GPUs admit two 8-GPU nodes: the pool's bounds count nodes, as the platform's NodePools do.
    assert (pool.min_count, pool.max_count, pool.taints, read.needs_device_plugin) == (
        0, 2, ("nvidia.com/gpu:NoSchedule",), True)
    assert pool.labels == {"kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux", "team": "ml",
                           "karpenter.sh/nodepool": "h100"}
    written = read.written
    assert written.autoscaled and written.bounds == "spec.limits: nvidia.com/gpu: 16"
    assert (written.taints_field, written.taints_as_text) == ("spec.template.spec.taints", False)
    assert [problem.split(" has ")[0] for problem in written.taint_problems] == ["taint 'a b:NoSchedule'"]
    assert (read.source["pool"], read.source["count"], read.unknown) == ("spec.template.spec.taints", "spec.limits", {})


@pytest.mark.parametrize(("requirement", "capacity", "spot"), [
    (None, ("onDemand",), False),
    ({"operator": "In", "values": ["spot", "on-demand"]}, ("spot", "onDemand"), False),
    ({"operator": "In", "values": ["on-demand", "spot"]}, ("spot", "onDemand"), False),
    ({"operator": "In", "values": ["spot"]}, ("spot",), True),
    ({"operator": "NotIn", "values": ["spot"]}, ("onDemand",), False),
])
def test_a_nodepool_is_read_with_how_its_nodes_are_bought_and_how_many_of_each_size(requirement, capacity, spot):
    """Karpenter buys a NodePool's nodes as its `karpenter.sh/capacity-type` requirement admits (on-demand
    where none is written), Spot first, and launches no node past its limits: the reading carries both, so
    the platform's NAP kind takes its offers and counts from it (#49)."""
    requirements = [{"key": "karpenter.azure.com/sku-gpu-name", "operator": "In", "values": ["H100"]},
                    {"key": "karpenter.azure.com/sku-gpu-count", "operator": "In", "values": ["1", "2"]}]
    if requirement:
        requirements.append({"key": "karpenter.sh/capacity-type", **requirement})
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "h100"}, "spec": {
        "limits": {"nvidia.com/gpu": 3}, "template": {"spec": {"requirements": requirements}}}}
    [read] = pools_of("kubernetes:karpenter.sh/v1:NodePool", nodepool)
    assert [(offer.vm_size, offer.capacity_types) for offer in read.pool.offers] == [
        ("Standard_NC40ads_H100_v5", capacity), ("Standard_NC80adis_H100_v5", capacity)]
    assert (read.pool.spot, read.pool.max_count) == (spot, 3)
    # 3 GPUs admit three 1-GPU nodes or one 2-GPU node, each counted once per way it may be bought.
    assert [(need.vm_size, need.max_count) for need in read.pool.capacity] == [
        ("Standard_NC40ads_H100_v5", 3)] * len(capacity) + [("Standard_NC80adis_H100_v5", 1)] * len(capacity)
