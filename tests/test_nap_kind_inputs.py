"""The NAP pool kind's settings (`gpuNodePools`) under hostile values.

The module they pin: `components/pools/nap.py`. Each test failed on the code before its fix."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from gpu_aks_policies.catalog import AKS_MAX_NODES_PER_CLUSTER

from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.pools.karpenter import SKU_GPU_NAME_LABEL, requirements
from components.pools.nap import LIMIT_CEILINGS, NAP, _karpenter_gpu_names
from components.settings import PROJECT
from tests.conftest import ROOT, TODAY
from tests.inputs import ESCAPES, GROWTH_LIMIT, assert_one_line, growth, nap_pool_section
from tests.test_components import problems_of
from tests.test_nap_settings import _parse, _problems, _with


@pytest.mark.parametrize("changes, key, reason", [
    # A ceiling no cluster reaches bounds nothing; 10**4000 GPUs once ended the preview in an OverflowError.
    ({"limits": {"gpu": 10**9}}, "limits.gpu", f"is above {LIMIT_CEILINGS['nvidia.com/gpu']}"),
    ({"limits": {"gpu": 10**4000}}, "limits.gpu", "is above"),
    ({"limits": {"cpu": 10**12}}, "limits.cpu", f"is above {LIMIT_CEILINGS['cpu']}"),
    ({"limits": {"gpu": -1}}, "limits.gpu", "not a whole number of at least 1"),
    ({"limits": {"gpu": float("nan")}}, "limits.gpu", "NaN is not a whole number"),
    ({"limits": {"gpu": float("inf")}}, "limits.gpu", "not a whole number"),
    ({"limits": {"gpu": 8.5}}, "limits.gpu", "not a whole number"),
    ({"limits": {"gpu": "8"}}, "limits.gpu", "not a whole number"),
    ({"limits": [1] * 100_000}, "limits", "is not a map of resources"),
    ({"limits": {ESCAPES: 8}}, "limits.\\x1b[2J\\x0d\\n::error::pwned", "is not a ceiling gpu-aks sets"),
    ({"gpus": [ESCAPES]}, "gpus[0]", "is not a GPU name like 'H100'"),
    # A name the catalog does not know is written as the label value: the CRD's pattern has no space.
    ({"gpus": ["MI 400"], "gpuCount": None}, "gpus[0]", "no spaces"),
    ({"gpuCount": [10**9]}, "gpuCount", "from 1 to 16"),
    ({"gpuCount": list(range(1, 10_001))}, "gpuCount", "from 1 to 16"),
    ({"capacityTypes": ["spot"] * 10_000}, "capacityTypes", "spot, on-demand"),
    ({"weight": 10**9}, "weight", "from 1 to 100"),
    ({"weight": float("nan")}, "weight", "from 1 to 100"),
    ({"osDiskSizeGB": float("nan")}, "osDiskSizeGB", "from 30 to 2048"),
    ({"nodeLabels": {"team": ESCAPES}}, "nodeLabels.team", "label value"),
    ({"nodeLabels": {ESCAPES: "x"}}, "nodeLabels.\\x1b[2J", "label key"),
    ({"consolidateAfter": ESCAPES}, "consolidateAfter", "is not a duration"),
    ({"vmSizes": ["Standard_D8ds_v5\x1b[2J"], "gpus": None, "gpuCount": None}, "vmSizes[0]", "is not a GPU size"),
])
def test_hostile_nodepool_settings_are_short_escaped_problems_naming_the_key(changes, key, reason):
    raw = _with(**{f"gpuNodePools__0__{name}": value for name, value in changes.items() if value is not None})
    for name, value in changes.items():
        if value is None:
            del raw["gpuNodePools"][0][name]
    problems = _problems(raw)
    for problem in problems:
        assert_one_line(problem)
    assert any(f"gpuNodePools[h100].{key}" in problem and reason in problem for problem in problems), problems


def test_a_hostile_nodepool_name_is_named_by_position_and_escaped():
    [problem] = _problems(_with(gpuNodePools__0__name=ESCAPES))
    assert_one_line(problem)
    assert problem.startswith("gpu-aks:gpuNodePools[0].name: '\\x1b[2J")


@pytest.mark.parametrize("gpus, per_node", [(["H100"], 1), (["A100"], 1)])
def test_a_nodepool_admits_no_more_nodes_than_a_cluster_holds(gpus, per_node):
    # The largest ceiling allowed, on sizes of one GPU: 40,000 nodes by the limit, 5,000 by AKS.
    settings = _parse(_with(gpuNodePools__0__gpus=gpus, gpuNodePools__0__gpuCount=[per_node],
                            gpuNodePools__0__limits={"gpu": LIMIT_CEILINGS["nvidia.com/gpu"]}))
    [pool] = [pool for pool in platform_pools(settings).pools if pool.name == "h100"]
    assert pool.max_count == AKS_MAX_NODES_PER_CLUSTER
    assert {need.max_count for need in pool.capacity} == {AKS_MAX_NODES_PER_CLUSTER}


def test_thousands_of_unknown_gpu_names_are_refused_each_once():
    """#38: a name no size carries is refused (it was a warning, and the NodePool never brought a node)."""
    names = [f"X{i}" for i in range(3000)] + ["X7", "H100"]
    problems = _problems(_with(gpuNodePools__0__gpus=names, gpuNodePools__0__gpuCount=None))
    assert sum("Karpenter's Azure provider gives no size" in problem for problem in problems) == 3000


def test_names_karpenter_gives_are_written_once_in_order():
    names = ["RTXPRO6000BSE", "H100", "RTXPRO6000BSE", "H200"]
    settings = _parse(_with(gpuNodePools__0__gpus=names, gpuNodePools__0__gpuCount=None,
                            gpuNodePools__0__limits={"gpu": 64}))
    [pool] = [pool for pool in NAP.pools(settings) if pool.name == "h100"]
    [requirement] = [r for r in requirements(pool.node_pool_spec()) if r["key"] == SKU_GPU_NAME_LABEL]
    assert requirement["values"] == ["RTXPRO6000BSE", "H100", "H200"]


def test_gpu_names_become_requirement_values_in_linear_time():
    # A list's `in` per name made 20,000 names take 11x the time of 5,000.
    def prepare(n: int) -> Any:
        names = tuple(f"X{i}" for i in range(n))
        return lambda: _karpenter_gpu_names(names)
    assert growth(prepare, 5000) < GROWTH_LIMIT


@pytest.mark.slow
def test_ten_thousand_nodepools_are_one_problem_and_parsed_in_linear_time():
    pools = [{"name": f"p{i}", "gpus": ["H100"], "limits": {"gpu": 8}} for i in range(10_000)]
    [problem] = _problems(_with(gpuNodePools=pools))
    assert problem.startswith("gpu-aks:gpuNodePools: 10000 entries; gpu-aks allows at most 100")

    def prepare(n: int) -> Any:
        raw = _with(gpuNodePools=pools[:n])
        return lambda: _problems(raw)
    assert growth(prepare, 500) < GROWTH_LIMIT


def test_a_gpu_nodepool_named_as_aks_s_own_nodepool_is_refused():
    # AKS node auto-provisioning creates and keeps NodePool and AKSNodeClass `default`; gpu-aks names both
    # objects after the pool, so `name: default` wrote over AKS's objects after the preview passed.
    problems = _problems(_with(gpuNodePools__0__name="default"))
    [problem] = [p for p in problems if ".name: " in p]
    assert "'default' is the name of the NodePool and AKSNodeClass AKS node auto-provisioning creates" in problem
    _parse(_with(gpuNodePools__0__name="defaults"))


def test_the_nodepool_crd_s_label_count_is_the_preview_s():
    # Azure's NodePool CRD: `spec.template.metadata.labels` `maxProperties: 100`; gpu-aks adds its pool label.

    crd = yaml.safe_load((ROOT / "tests/fixtures/karpenter/karpenter.sh_nodepools.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    labels = schema["template"]["properties"]["metadata"]["properties"]["labels"]
    from gpu_aks_policies.limits import NODEPOOL_MAX_LABELS
    assert labels["maxProperties"] == NODEPOOL_MAX_LABELS
    parse_settings(nap_pool_section(nodeLabels={f"l{i}": "x" for i in range(NODEPOOL_MAX_LABELS - 1)}), "unit", "eastus2",
                   today=TODAY, environ={})
    [problem] = problems_of(nap_pool_section(nodeLabels={f"l{i}": "x" for i in range(NODEPOOL_MAX_LABELS)}))
    assert problem.startswith(f"{PROJECT}:gpuNodePools[h100].nodeLabels: has 100 labels;")
    assert "at most 100" in problem


@pytest.mark.parametrize("duration, taken", [
    ("2562047h", True), ("2562047h47m16s", True), ("153722867m", True), ("9223372036s", True),
    ("2562048h", False), ("2562047h47m17s", False), ("9223372037s", False), ("1" + "0" * 400 + "s", False),
    pytest.param("1h" * 2562047 + "1h", False, marks=pytest.mark.slow, id="5 MB of 1h parts"),
])
def test_consolidate_after_is_a_duration_go_can_hold(duration, taken):
    # `time.ParseDuration` refuses past 1<<63-1 ns; the pattern `([0-9]+(s|m|h))+` alone took 10^400 s.
    raw = nap_pool_section(consolidateAfter=duration)
    if taken:
        parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
        return
    [problem] = problems_of(raw)
    assert ".consolidateAfter: " in problem and "longer than a Go duration can be" in problem
    assert len(problem) < 400


@pytest.mark.parametrize("label, value", [("node.kubernetes.io/instance-type", "Standard_D8ds_v5"),
                                          ("topology.kubernetes.io/region", "westus"),
                                          ("failure-domain.beta.kubernetes.io/zone", "eastus2-1")])
def test_a_nodepool_label_that_picks_instance_types_is_refused(label, value):
    """Karpenter requires a NodePool's template labels (`NodeClaimTemplate`): an instance-type label of a
    CPU size left gpuNodePools offering H100 sizes while the NodePool could launch no node at all."""
    problems = problems_of(nap_pool_section(nodeLabels={label: value}))
    assert any(f"nodeLabels.{label}" in problem and "requirements" in problem for problem in problems)
