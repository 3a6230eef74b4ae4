"""The doctor under hostile cluster answers.

The module they pin: `tools/doctor.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.limits import MAX_SHOWN_CHARS

from tests.conftest import ROOT
from tests.inputs import (
    GROWTH_LIMIT,
    HOSTILE_NAME,
    LONG_POOL_NAME,
    POOL_NAMES,
    assert_inert,
    assert_pool_names_shown_bounded,
    growth,
)
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


def test_pool_and_node_names_are_cut_and_escaped_in_the_report():
    """A pool named with 100,000 characters was printed whole on its line (and in each problem about it), a
    name holding a line break forged a report line (#50); node names likewise."""
    pools = {name: {"taints": [], "labels": {}, "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1, "minCount": minimum}
             for name, minimum in zip(POOL_NAMES, (1, 0, 1), strict=True)}
    platform = platform_from_outputs({"gpuPools": pools})
    # One node in the pool with the line break, advertising no GPUs (a node problem naming both); the others
    # pools have none although minCount is 1 (a pool problem); a node of no pool (a note).
    nodes = [{"metadata": {"name": name, "labels": {POOL_LABEL: pool, "kubernetes.azure.com/accelerator": "nvidia"}},
              "status": {"allocatable": {}, "conditions": [{"type": "Ready", "status": "True"}]}}
             for name, pool in ((LONG_POOL_NAME.replace("p", "n"), "a\nb"), (HOSTILE_NAME, "nowhere"))]
    diagnosis = doctor.diagnose(platform, nodes, [])
    report = doctor.render(diagnosis)
    assert_pool_names_shown_bounded(report)
    assert "n" * (MAX_SHOWN_CHARS + 1) not in report
    assert "pool a\\nb" in report and "- pool pppp" in report and "…(100000 characters)" in report, report


def test_a_nodes_nodepool_label_in_the_replace_hint_is_cut_and_escaped():
    """The hint for a NAP node names its `karpenter.sh/nodepool` label, any text the cluster holds (#50)."""
    from gpu_aks_policies.pools import nodepool

    hint = nodepool._replace_hint("node-1", {nodepool.NODEPOOL_LABEL: "gpu\n::error::" + "x" * 100_000})
    assert "\n" not in hint and len(hint) < 300 and "(100013 characters)" in hint, hint[:300]


def test_a_nodes_taints_in_the_report_are_cut_counted_and_on_one_line():
    """A node listing's taints are input nothing checks before the report: a 100,000-character key or value, a line
    break, or 5,000 taints made the taint problem grow with them (a 400 KB line)."""
    pools = {"gput4": {"taints": ["sku=gpu:NoSchedule"], "labels": {}, "gpuResource": "nvidia.com/gpu",
                       "gpusPerNode": 1, "minCount": 1}}
    platform = platform_from_outputs({"gpuPools": pools})
    hostile = [{"key": "k" * 100_000, "value": "v\n::error::" + "v" * 100_000, "effect": "NoSchedule"},
               *({"key": f"t{i}.example.com/x", "value": "y", "effect": "NoSchedule"} for i in range(5000))]
    node = {"metadata": {"name": "n1", "labels": {POOL_LABEL: "gput4", "kubernetes.azure.com/accelerator": "nvidia"}},
            "spec": {"taints": hostile},
            "status": {"allocatable": {"nvidia.com/gpu": "1"}, "conditions": [{"type": "Ready", "status": "True"}]}}
    report = doctor.render(doctor.diagnose(platform, [node], []))
    assert "lacks sku=gpu:NoSchedule" in report and ", and 4991 more" in report, report[:2000]
    assert len(report) < 20_000 and "\n::error" not in report
    assert_inert(report)
