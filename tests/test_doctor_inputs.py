"""The doctor under hostile cluster answers.

The module they pin: `tools/doctor.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.fit import platform_from_outputs

from tests.conftest import ROOT
from tests.inputs import GROWTH_LIMIT, HOSTILE_NAME, assert_inert, growth
from tools import doctor


@pytest.mark.slow
def test_the_doctor_finds_each_pools_nodes_in_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        pools = {f"p{i}": {"taints": [], "labels": {}, "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1, "minCount": 0}
                 for i in range(n)}
        platform = platform_from_outputs({"gpuPools": pools})
        nodes = [{"metadata": {"name": f"n{i}", "labels": {POOL_LABEL: f"p{i % n}"}},
                  "status": {"allocatable": {"nvidia.com/gpu": "1"}, "conditions": [{"type": "Ready", "status": "True"}]}}
                 for i in range(5 * n)]
        return lambda: doctor.diagnose(platform, nodes, [])
    assert growth(prepare, 200) < GROWTH_LIMIT


@pytest.mark.parametrize("allocatable, shown", [
    ("1000000000", "'1000000000'"), ("NaN", "'NaN'"), ("-4", "'-4'"), (3.5, "3.5"), ("1e999999999", "'1e999999999'"),
    ("9" * 5000, "'9999999999999999999…999' (5000 characters)"), (HOSTILE_NAME, "'a\\x1b[2J"),
])
def test_an_allocatable_count_no_node_has_is_named_not_read_as_none(allocatable, shown):
    # 10**9 GPUs, NaN or -4 read as 0: "advertises no allocatable nvidia.com/gpu", the value lost.
    from tests.test_doctor import T4_0, doctor_on
    nodes = json.loads((ROOT / "tests" / "fixtures" / "doctor" / "nodes-healthy.json").read_text())
    [node] = [node for node in nodes["items"] if node["metadata"]["name"] == T4_0]
    node["status"]["allocatable"]["nvidia.com/gpu"] = allocatable
    code, out = doctor_on(nodes)
    assert code == 1
    assert (f"- node {T4_0} (pool t4spot) [gpu-allocatable]: advertises {shown}" in out and
            "allocatable nvidia.com/gpu, which is no count of GPUs (the contract says 1 per node)" in out), out
    assert f"  {T4_0}: 1 problem(s); {shown}" in out
    assert_inert(out)
