"""Karpenter NodePools as the pack reads them (`gpu_aks_policies.pools.nodepool`) and the pool rules' verdicts
on them, under hostile input.

The module they pin: `policies/pools/nodepool.py`. Each test failed on the code before its fix."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_aks_policies.catalog import AKS_MAX_NODES_PER_CLUSTER, NODEPOOL_LIMIT_CEILINGS
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage, check_gpu_node_pool
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, TAINTED_GPU_POOLS
from gpu_aks_policies.rules import parse_rule_config

from components.pools.nap import LIMIT_CEILINGS
from tests.inputs import GROWTH_LIMIT, HOSTILE_NAME, RULES, assert_inert, growth

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


GPU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}


def _node_pool(name: str = "h100", sizes: list[str] | None = None, limits: Any = None,
               taints: list[Any] | None = None) -> dict[str, Any]:
    requirements = [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                     "values": sizes or ["Standard_NC40ads_H100_v5"]}]
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": {"metadata": {"labels": {"gpu-aks.io/pool": "h100"}},
                                  "spec": {"requirements": requirements, "taints": taints or []}},
                     "limits": {"nvidia.com/gpu": "8"} if limits is None else limits}}


def _pool_messages(props: dict[str, Any]) -> list[str]:
    return [finding.message for finding in check_gpu_node_pool(NODEPOOL, props, RULES[TAINTED_GPU_POOLS])]


def _requirement_pool(*requirements: dict[str, Any], taints: list[Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"requirements": list(requirements), "taints": taints or []}},
                     "limits": {"nvidia.com/gpu": "8"}}}


def _req(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": f"karpenter.azure.com/{key}" if "/" not in key else key, "operator": operator,
            **({"values": list(values)} if values else {})}


def _tainted_pool_messages(props: dict[str, Any]) -> list[str]:
    from gpu_aks_policies.pool_rules import check_gpu_node_pool
    from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS
    config = parse_rule_config({})[TAINTED_GPU_POOLS]
    return [finding.message for finding in
            check_gpu_node_pool("kubernetes:karpenter.sh/v1:NodePool", props, config)]


def _gpu_count_nodepool(operator: str, value: str, tainted: bool = True) -> dict:
    taints = [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}] if tainted else []
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"requirements": [
                {"key": "karpenter.azure.com/sku-gpu-count", "operator": operator, "values": [value]}],
                "taints": taints}}, "limits": {"nvidia.com/gpu": "4"}}}


def _pool_findings(props: dict) -> list[str]:
    from gpu_aks_policies.pool_rules import check_gpu_node_pool
    from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS
    config = parse_rule_config({})[TAINTED_GPU_POOLS]
    return [finding.message for finding in check_gpu_node_pool("kubernetes:karpenter.sh/v1:NodePool", props, config)]


def test_a_nodepool_name_from_the_input_is_escaped_in_the_pack_s_messages():
    # The pack's messages reach the Pulumi CLI's output as they are: nothing in them may be a control.
    [message] = _pool_messages(_node_pool(name=HOSTILE_NAME))
    assert_inert(message) and "\n" not in message
    assert message.startswith("GPU node pool 'a\\x1b[2J")


def test_thousands_of_instance_types_are_named_once_each_and_counted_past_a_few():
    sizes = ["Standard_NC40ads_H100_v5"] * 10_000 + [f"Standard_NC{i}ads_H100_v5" for i in range(10_000)]
    [message] = _pool_messages(_node_pool(sizes=sizes))
    assert message.count("Standard_NC40ads_H100_v5") == 1 and "and 9992 more)" in message
    assert len(message) < 700
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": {"containers": [
        {"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"}]}}}}
    resources = [StackResource("urn:plugin", "kubernetes:apps/v1:DaemonSet", daemonset),
                 StackResource("urn:pool", NODEPOOL, _node_pool(name=HOSTILE_NAME, sizes=sizes, taints=[GPU_TAINT]))]
    [coverage] = check_device_plugin_coverage(resources, RULES[DEVICE_PLUGIN_TOLERATES_POOLS])
    assert len(coverage.message) < 1500 and "and 9992 more" in coverage.message
    assert_inert(coverage.message)


@pytest.mark.parametrize("limit, shown", [
    (float("nan"), "nvidia.com/gpu: nan is not a finite number"), (float("inf"), "inf is not a finite number"),
    ("1e999999999", "has an exponent out of range"), ("9" * 5000, "(5000 characters) is too long"),
    (HOSTILE_NAME, "nvidia.com/gpu: 'a\\x1b[2J"),
])
def test_a_limit_karpenter_cannot_read_is_named_with_why(limit, shown):
    # Before, such a limit read as "no limits", the reason lost.
    [message] = _pool_messages(_node_pool(taints=[GPU_TAINT], limits={"nvidia.com/gpu": limit}))
    assert "is not autoscaled within bounds (spec.limits: no limits; unreadable " in message and shown in message
    assert_inert(message) and len(message) < 500


@pytest.mark.slow  # a growth check at 20,000 sizes: hostile input at scale (pytest.ini)
def test_the_pool_rule_reads_a_nodepool_in_linear_time():
    def prepare(n: int) -> Any:
        props = _node_pool(sizes=[f"Standard_NC{i}ads_H100_v5" for i in range(n)] + ["Standard_NC40ads_H100_v5"])
        return lambda: _pool_messages(props)
    assert growth(prepare, 20_000) < GROWTH_LIMIT


def test_a_hand_written_nodepool_is_held_to_gpu_aks_s_own_ceilings():
    # One table for both: gpu-aks's NodePool settings and the pool rule.
    assert LIMIT_CEILINGS is NODEPOOL_LIMIT_CEILINGS
    assert NODEPOOL_LIMIT_CEILINGS["nvidia.com/gpu"] == AKS_MAX_NODES_PER_CLUSTER * 8


@pytest.mark.parametrize("limits, shown", [
    ({"nvidia.com/gpu": 1e30}, "nvidia.com/gpu: 1e+30 is above 40000"),
    ({"nvidia.com/gpu": "1e30"}, "nvidia.com/gpu: '1e30' is above 40000"),
    ({"nvidia.com/gpu": "100000"}, "nvidia.com/gpu: '100000' is above 40000"),
    ({"nvidia.com/gpu": 40_001}, "nvidia.com/gpu: 40001 is above 40000"),
    ({"nvidia.com/gpu": "1E"}, "is above 40000"),  # an exa-GPU
    ({"nvidia.com/gpu": 10**4000}, "is far too large to be a quantity"),
    ({"nvidia.com/gpu": float("nan")}, "nan is not a finite number"),
    ({"nvidia.com/gpu": float("-inf")}, "-inf is not a finite number"),
    ({"nvidia.com/gpu": -1}, "nvidia.com/gpu: -1 is negative"),
    ({"nvidia.com/gpu": "-5"}, "nvidia.com/gpu: '-5' is negative"),
    ({"cpu": "1e30"}, "cpu: '1e30' is above"),
    # One sound limit does not make an unusable other one bound the pool.
    ({"nvidia.com/gpu": 8, "cpu": float("nan")}, "unreadable cpu: nan is not a finite number"),
    ({"nvidia.com/gpu": "1e30", "cpu": 96}, "nvidia.com/gpu: '1e30' is above 40000"),
    ({"nvidia.com/gpu": "\x1b[2J::error::x"}, "unreadable nvidia.com/gpu: '\\x1b[2J::error::x'"),
])
def test_a_nodepool_limit_that_bounds_nothing_is_not_bounded(limits, shown):
    # Before, 1e30, "100000", -1 and a sound limit beside a NaN one all passed as "autoscaled within bounds"
    # (a negative one read as "0 above spec.limits -1").
    [message] = _pool_messages(_node_pool(taints=[GPU_TAINT], limits=limits))
    assert "is not autoscaled within bounds (spec.limits: " in message and shown in message, message
    assert_inert(message) and len(message) < 600


@pytest.mark.parametrize("limits", [{"nvidia.com/gpu": 0}, {"nvidia.com/gpu": "40000"}, {"nvidia.com/gpu": "8"},
                                    {"cpu": "1440000"}, {"nvidia.com/gpu": 16, "cpu": "960", "memory": "1e30"}])
def test_a_nodepool_limit_within_a_cluster_s_reach_is_bounded(limits):
    assert _pool_messages(_node_pool(taints=[GPU_TAINT], limits=limits)) == []


@pytest.mark.parametrize("counts, shown", [
    ((0, 1e30), "maxCount: 1e+30; maxCount is above the AKS limit of 1000 nodes per pool"),
    ((0, 10**9), "maxCount is above the AKS limit of 1000 nodes per pool"), ((0, 1001), "maxCount is above"),
    ((0, float("nan")), "maxCount is not a whole number"), ((0, float("inf")), "maxCount is not a whole number"),
    ((0, 2.5), "maxCount is not a whole number of nodes"), ((-5, 3), "minCount is negative"),
    ((float("nan"), 3), "minCount is not a whole number"), ((0, -1), "maxCount is negative"),
])
def test_a_hand_written_agent_pool_s_counts_must_bound_it_too(counts, shown):
    # The same class for AgentPools (and a ManagedCluster's inline profiles): any number passed as a bound.
    pool = {"agentPoolName": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "enableAutoScaling": True,
            "minCount": counts[0], "maxCount": counts[1], "nodeTaints": ["sku=gpu:NoSchedule"]}
    [finding] = check_gpu_node_pool("azure-native:containerservice:AgentPool", pool, RULES[TAINTED_GPU_POOLS])
    assert "is not autoscaled within bounds (" in finding.message and shown in finding.message, finding.message
    pool.update(minCount=0.0, maxCount=1000.0)  # the wire's floats, at AKS's limit
    assert check_gpu_node_pool("azure-native:containerservice:AgentPool", pool, RULES[TAINTED_GPU_POOLS]) == []


@pytest.mark.parametrize("requirements", [
    [_req("sku-gpu-name", "In", "H100")],
    [_req("sku-gpu-name", "Exists")],
    [_req("sku-gpu-manufacturer", "In", "nvidia")],
    [_req("sku-gpu-manufacturer", "In", "nvidia", "amd")],
    [_req("sku-gpu-manufacturer", "Exists")],
    [_req("sku-gpu-count", "Gt", "0")],
    [_req("sku-gpu-count", "Gt", "4")],
    [_req("sku-gpu-count", "Lt", "2")],
    [_req("sku-gpu-count", "In", "8")],
    [_req("sku-gpu-name", "NotIn", "T4")],
    [_req("sku-family", "In", "N")],
    [_req("sku-name", "In", "Standard_NC40ads_H100_v5")],
    [_req("beta.kubernetes.io/instance-type", "In", "Standard_NC40ads_H100_v5")],
    [_req("sku-gpu-name", "In", "H100"), _req("sku-gpu-count", "Gt", "1")],
    [_req("kubernetes.io/arch", "In", "amd64")],
    [_req("sku-cpu", "Gt", "16")],
    [],
])
def test_a_nodepool_that_can_launch_gpu_nodes_is_judged(requirements):
    # Only `sku-gpu-name In [...]`, `sku-gpu-manufacturer In [nvidia]` alone and instance types were read:
    # `Exists`, `Gt`, a manufacturer list, a family or no requirement at all got no verdict.
    messages = _tainted_pool_messages(_requirement_pool(*requirements))
    assert messages and all(message.startswith("GPU node pool 'gpu' (") for message in messages), messages
    assert any("taint" in message for message in messages), messages


@pytest.mark.parametrize("requirements", [
    [_req("sku-family", "In", "D")],
    [_req("sku-gpu-count", "DoesNotExist")],
    [_req("sku-gpu-manufacturer", "NotIn", "nvidia")],
    [_req("sku-gpu-manufacturer", "DoesNotExist")],
    [_req("sku-gpu-count", "Lt", "1")],
    [_req("sku-gpu-count", "Gt", "16")],
    [_req("sku-gpu-name", "In", "H100"), _req("sku-gpu-name", "In", "T4")],
    [_req("sku-gpu-count", "Gt", "not-a-number")],
    [_req("node.kubernetes.io/instance-type", "In", "Standard_D8ds_v5")],
    [_req("sku-name", "NotIn", "x"), _req("kubernetes.io/os", "In", "windows")],
])
def test_a_nodepool_that_cannot_launch_gpu_nodes_gets_no_gpu_verdict(requirements):
    assert _tainted_pool_messages(_requirement_pool(*requirements)) == []


def test_a_tainted_nodepool_selected_by_gt_passes():
    taint = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}  # the rule's default taint
    assert _tainted_pool_messages(_requirement_pool(_req("sku-gpu-count", "Gt", "0"), taints=[taint])) == []


@pytest.mark.parametrize("operator, value", [("Gt", "7"), ("Gte", "8")])
def test_gte_is_read_as_karpenter_reads_it(operator, value):
    """Both NodePool CRDs list Gte and Lte (tests/fixtures/karpenter/); the pack read them as no bound, so
    `sku-gpu-count Gte 8` under a 4-GPU limit passed where `Gt 7` is refused."""
    assert any("admit" in message for message in _pool_findings(_gpu_count_nodepool(operator, value)))


@pytest.mark.parametrize("operator, value", [("Lt", "1"), ("Lte", "0")])
def test_lte_zero_gpus_is_no_gpu_pool(operator, value):
    """`sku-gpu-count Lte 0` launches only CPU sizes: untainted, it is no GPU pool (it was judged one,
    listing every GPU size)."""
    assert _pool_findings(_gpu_count_nodepool(operator, value, tainted=False)) == []


def test_the_pack_reads_a_nodepool_s_template_labels_as_requirements():
    """A hand-written NodePool whose template labels pin a CPU size launches no GPU node: untainted, it is
    no GPU pool (the pack judged it one, listing every GPU size)."""
    props = _gpu_count_nodepool("Gt", "0", tainted=False)
    props["spec"]["template"]["metadata"] = {"labels": {"node.kubernetes.io/instance-type": "Standard_D8ds_v5"}}
    assert _pool_findings(props) == []
    props["spec"]["template"]["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "Standard_NC4as_T4_v3"
    assert any("Standard_NC4as_T4_v3" in message for message in _pool_findings(props))


def test_a_template_label_the_preview_does_not_know_yet_leaves_the_pool_undecided():
    """An instance-type template label from another resource's output is unknown at preview: the pool is
    undecided, not read as admitting no GPU size (which passed it unjudged); an unknown label of your own
    picks no size and changes nothing."""
    from gpu_aks_policies.podspecs import UNKNOWN
    props = _gpu_count_nodepool("Gt", "0", tainted=False)
    props["spec"]["template"]["metadata"] = {"labels": {"node.kubernetes.io/instance-type": UNKNOWN}}
    assert any("instance-type" in message for message in _pool_findings(props))
    props["spec"]["template"]["metadata"] = {"labels": {"team": UNKNOWN}}
    assert any("carries no NoSchedule GPU taint" in message for message in _pool_findings(props))
