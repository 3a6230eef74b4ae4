"""What a NAP NodePool can really bring (#38): the sizes its requirements admit as Karpenter's Azure
provider labels them, no more nodes than its `limits` admit, and only GPU names the provider produces.

Sources: Azure/karpenter-provider-azure `pkg/utils/supported-gpus.yaml` (commit 021c778) and
`pkg/providers/instancetype/instancetype.go` (commit 00ae112, `setRequirementsGPU`: `sku-gpu-name` is
skewer's accelerator token); kubernetes-sigs/karpenter `filterByRemainingResources` (no node that would
pass a limit).
"""

from __future__ import annotations

from typing import Any

import pytest
from gpu_aks_policies.pool_rules import check_gpu_node_pool
from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS
from gpu_aks_policies.rules import parse_rule_config

from components.pools import platform_pools
from components.pools.karpenter import INSTANCE_TYPE_LABEL, requirements
from components.pools.nap import NAP
from tests.test_nap_settings import _parse, _problems, _with
from tests.test_nodepool_inputs import NODEPOOL, _node_pool

GPU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}


def _pool(**changes: Any) -> Any:
    settings = _parse(_with(**{f"gpuNodePools__0__{key}": value for key, value in changes.items()}))
    [pool] = [pool for pool in NAP.pools(settings) if pool.name == "h100"]
    [facts] = [facts for facts in platform_pools(settings).pools if facts.name == "h100"]
    return pool, facts


def test_an_a10_nodepool_pins_the_nc_a10_v4_sizes_so_karpenter_cannot_take_an_nv_a10_v5():
    """NV6ads_A10_v5 (1/6 of an A10, 0.59 USD/h in westeurope) carries `sku-gpu-name: A10` as the NC A10 v4
    sizes do; Karpenter takes the cheapest fit, so the NodePool must say which sizes it means."""
    pool, facts = _pool(gpus=["A10"], gpuCount=None, limits={"gpu": 4})
    found = {r["key"]: r["values"] for r in requirements(pool.node_pool_spec())}
    assert found["karpenter.azure.com/sku-gpu-name"] == ["A10"]
    assert found[INSTANCE_TYPE_LABEL] == ["Standard_NC8ads_A10_v4", "Standard_NC16ads_A10_v4", "Standard_NC32ads_A10_v4"]
    assert facts.vm_sizes == tuple(found[INSTANCE_TYPE_LABEL])


def test_a_gpu_name_that_labels_no_refused_size_is_not_pinned():
    pool, _ = _pool(gpus=["H100"], gpuCount=[1, 2])
    assert INSTANCE_TYPE_LABEL not in {r["key"] for r in requirements(pool.node_pool_spec())}


def test_an_h100_nodepool_without_a_count_offers_every_size_the_label_admits():
    _, facts = _pool(gpus=["H100"], gpuCount=None, limits={"gpu": 16})
    assert set(facts.vm_sizes) == {"Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5", "Standard_ND96isr_H100_v5",
                                   "Standard_ND96is_H100_v5", "Standard_ND96isf_H100_v5", "Standard_ND96isrf_H100_v5"}


def test_a_size_bigger_than_the_limits_is_neither_offered_nor_priced():
    """A 4-GPU limit admits no 8-GPU ND96 node: it is left out of the offers, the capacity and the cost."""
    _, facts = _pool(gpus=["H100"], gpuCount=None, limits={"gpu": 4})
    assert facts.vm_sizes == ("Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5")
    assert {need.vm_size for need in facts.capacity} == set(facts.vm_sizes)
    assert facts.max_count == 4


def test_limits_that_admit_no_node_are_refused_with_the_smallest_size():
    [problem] = _problems(_with(gpuNodePools__0__gpus=["H200"], gpuNodePools__0__gpuCount=None,
                                gpuNodePools__0__limits={"gpu": 7}))
    assert problem.startswith("gpu-aks:gpuNodePools[h100].limits: {\"gpu\": 7} admits no node"), problem
    assert "has 8 GPUs and 96 vCPUs" in problem and "filterByRemainingResources" in problem


@pytest.mark.parametrize("name, hint", [("H100-80GB", "did you mean H100?"), ("a100_80g", "did you mean A100?"),
                                        ("B200", "did you mean GB200 or H200?"), ("Z9", "name a size with vmSizes")])
def test_a_gpu_name_karpenter_never_gives_a_size_is_refused_with_a_did_you_mean(name, hint):
    [problem] = _problems(_with(gpuNodePools__0__gpus=[name]))
    assert problem.startswith("gpu-aks:gpuNodePools[h100].gpus[0]: ") and hint in problem, problem
    assert "so the NodePool would never bring a node" in problem


@pytest.mark.parametrize("limits", [{"nvidia.com/gpu": 4}, {"cpu": "48"}, {"nvidia.com/gpu": "7", "cpu": 960}])
def test_a_hand_written_nodepool_whose_limits_admit_no_node_is_not_bounded(limits):
    """The pack holds hand-written NodePools to the same: 4 GPUs admit no 8-GPU ND96isr_H100_v5."""
    pool = _node_pool(sizes=["Standard_ND96isr_H100_v5"], taints=[GPU_TAINT], limits=limits)
    [finding] = check_gpu_node_pool(NODEPOOL, pool, parse_rule_config(None)[TAINTED_GPU_POOLS])
    assert "they admit no node of any size the NodePool may bring (the smallest, Standard_ND96isr_H100_v5, has 8 " \
           "GPUs and 96 vCPUs)" in finding.message, finding.message


def test_a_hand_written_nodepool_paused_with_a_zero_limit_stays_bounded():
    pool = _node_pool(sizes=["Standard_ND96isr_H100_v5"], taints=[GPU_TAINT], limits={"nvidia.com/gpu": 0})
    assert check_gpu_node_pool(NODEPOOL, pool, parse_rule_config(None)[TAINTED_GPU_POOLS]) == []


@pytest.mark.parametrize("pool", [
    {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "minCount": 2, "maxCount": 2},
    {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2},
], ids=["fixed", "autoscaled"])
def test_a_gpu_agentpool_beside_nap_is_refused_by_the_settings_with_the_reason(pool):
    """#38 item 2 (the rule's one source is the pack's, run by the settings: #37): never accepted by the
    settings and then refused by the pack's gpu-node-pools-are-tainted."""
    [problem] = _problems(_with(gpuPools=[pool]))
    assert problem.startswith("gpu-aks:gpuPools[t4]."), problem
    assert "gpu-node-pools-are-tainted" in problem or "Fixed size Node Pools can still be created" in problem
