"""Taints, tolerations and node selection (`gpu_aks_policies.scheduling`) under hostile input.

The module they pin: `policies/scheduling.py`. Each test failed on the code before its fix."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.podspecs import Toleration
from gpu_aks_policies.scheduling import Tolerating, tolerates
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.inputs import GROWTH_LIMIT, TOLERATION_STRATEGY, growth

_TAINT = st.fixed_dictionaries({"key": st.sampled_from(["a", "b"]), "value": st.sampled_from(["", "1", "2"]),
                                "effect": st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule"])})


@pytest.mark.slow
def test_duplicate_platform_taints_are_removed_in_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        pools = {f"p{i}": {"taints": [f"k{i}=v:NoSchedule", "sku=gpu:NoSchedule"], "labels": {},
                           "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1} for i in range(n)}
        platform = platform_from_outputs({"gpuPools": pools})
        return platform.gpu_taints
    assert growth(prepare, 1500) < GROWTH_LIMIT


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(TOLERATION_STRATEGY, max_size=7), _TAINT)
def test_the_toleration_lookup_answers_as_tolerates_taint(tolerations, taint):
    items = [Toleration(t, "written in the pod spec" if i % 2 else "added") for i, t in enumerate(tolerations)]
    by = [index for index, item in enumerate(items) if tolerates(item.toleration, taint)]
    first, written = Tolerating((item.toleration, item.source == "written in the pod spec") for item in items).first(taint)
    assert first == (by[0] if by else None)
    assert written == any(items[index].source == "written in the pod spec" for index in by)


@pytest.mark.parametrize("bound, matches", [
    ("0", True), ("+0", False), ("00", True), ("-1", False), ("9223372036854775807", False),
    ("٠", False), ("０", False), ("0_0", False), (" 0", False), ("0 ", False), ("9223372036854775808", False),
    ("1" + "0" * 5000, False),
])
def test_a_gt_bound_is_read_as_the_scheduler_reads_it(bound, matches):
    # Python's int() takes Arabic-Indic and fullwidth digits, `_` and spaces; apimachinery's `NewRequirement`
    # reads the bound with strconv.ParseInt(v, 10, 64), and a bound it cannot read matches no node. A pod
    # asking for `sku-gpu-count Gt ["٠"]` was said to fit a pool it can never land on. `NewRequirement` also
    # holds every value to `IsValidLabelValue`, which has no sign: `+0` and `-1` match nothing (issue 50; this
    # table said they matched, as ParseInt alone reads them; the API server refuses such a pod outright).
    from gpu_aks_policies.scheduling import node_selector_term_matches
    term = {"matchExpressions": [{"key": "karpenter.azure.com/sku-gpu-count", "operator": "Gt", "values": [bound]}]}
    assert node_selector_term_matches(term, {"karpenter.azure.com/sku-gpu-count": "1"}) is matches
