"""A fourth hostile round (issue 30), against what the first three missed: hand-written NodePools whose
`spec.limits` bound nothing, line counting in files with other line ends, the lines of list items in
stack files, recorded values of a `--show-secrets` export, and fresh attacks on the component
provider, the stack files, the tools and the manifest checker.

Every input is generated. The standard is `test_hostile_input.py`'s: no hang, no traceback, no
superlinear growth (`growth`: the work at 4n against n, compared loosely), no secret printed, no
terminal or CI-log injection (`assert_inert`), nothing lost."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_aks_policies.catalog import AKS_MAX_NODES_PER_CLUSTER, NODEPOOL_LIMIT_CEILINGS
from gpu_aks_policies.pool_rules import check_gpu_node_pool
from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS
from gpu_aks_policies.rules import parse_rule_config

from components.pools.nap import LIMIT_CEILINGS
from tests.test_hostile_input import assert_inert
from tests.test_hostile_nap import GPU_TAINT, NODEPOOL, _node_pool

RULES = parse_rule_config(None)

# --- Hand-written NodePools: a limit must bound something -------------------------------------------


def _pool_messages(props: dict[str, Any]) -> list[str]:
    return [finding.message for finding in check_gpu_node_pool(NODEPOOL, props, RULES[TAINTED_GPU_POOLS])]


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
