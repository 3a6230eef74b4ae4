"""What AKS's admission plugins add (`gpu_aks_policies.admission`), under hostile input: namespace default
tolerations and whitelists merged in linear time and answered as the API server answers. Growth is counted
in function calls, never timed.

The module they pin: `policies/admission.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from gpu_aks_policies import check, explain
from gpu_aks_policies.admission import (
    DEFAULT_TOLERATIONS_ANNOTATION,
    TOLERATIONS_WHITELIST_ANNOTATION,
    Covers,
    _normal,
    merge_tolerations,
)
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.podspecs import Toleration
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.inputs import GROWTH_LIMIT, PLATFORM_T4, TOLERATION_STRATEGY, calls_made, growth, namespaced_pod, numbered_tolerations


def _checker_and_explainer(objects: list[dict[str, object]]) -> Callable[[], object]:
    loaded = [check.LoadedObject("generated.yaml", index, 1, obj) for index, obj in enumerate(objects)]
    configs = check.load_config(None)
    platform = platform_from_outputs(PLATFORM_T4)

    def work() -> None:
        check.check_objects(loaded, configs, platform)
        explain.explain_all(objects, platform)
    return work


def _struct(x: dict) -> tuple:
    """A toleration as the Go struct holds it: an absent field is its zero value."""
    return (x.get("key") or "", x.get("operator") or "", x.get("value") or "", x.get("effect") or "",
            x.get("tolerationSeconds"))


def _reference_superset(ss: dict, t: dict) -> bool:
    """`isSuperset` of kubernetes `pkg/util/tolerations/tolerations.go`, transcribed pair by pair."""
    norm = _struct
    if norm(ss) == norm(t):
        return True
    (ss_key, ss_op, ss_value, ss_effect, ss_seconds), (t_key, t_op, t_value, t_effect, t_seconds) = norm(ss), norm(t)
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect != "":
        return False
    if ss_effect == "NoExecute" and ss_seconds is not None and (t_seconds is None or t_seconds > ss_seconds):
        return False
    if ss_op in ("Equal", ""):
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"


def _reference_merge(first: list, second: list) -> list:
    """`MergeTolerations`, quadratic as the API server runs it."""
    everything, merged = [*first, *second], []
    for index, item in enumerate(everything):
        if any(_reference_superset(kept.toleration, item.toleration) for kept in merged):
            continue
        if any(_struct(later.toleration) != _struct(item.toleration)
               and _reference_superset(later.toleration, item.toleration)
               for later in everything[index + 1:]):
            continue
        merged.append(item)
    return merged


@pytest.mark.slow
def test_growth_counts_tell_quadratic_from_linear_work():
    def pairs(n: int) -> Callable[[], object]:
        items = list(range(n))
        return lambda: [abs(a - b) for a in items for b in items]

    def singles(n: int) -> Callable[[], object]:
        items = list(range(n))
        return lambda: [abs(a) for a in items]

    assert growth(pairs, 50) > GROWTH_LIMIT
    assert growth(singles, 50) < GROWTH_LIMIT
    assert calls_made(singles(50)) == calls_made(singles(50))  # a count, not a measurement: the same each time


@pytest.mark.slow
def test_namespace_default_tolerations_merge_in_linear_time():
    # Each default is new to the pod: the API server's MergeTolerations compares every pair.
    def prepare(n: int) -> Callable[[], object]:
        defaults = json.dumps(numbered_tolerations("d", n))
        return _checker_and_explainer(namespaced_pod(numbered_tolerations("p", n), {DEFAULT_TOLERATIONS_ANNOTATION: defaults}))
    assert growth(prepare, 400) < GROWTH_LIMIT


@pytest.mark.slow
def test_a_long_toleration_whitelist_is_checked_in_linear_time():
    # No entry of the whitelist covers any of the pod's tolerations: every pair is looked at today.
    def prepare(n: int) -> Callable[[], object]:
        whitelist = json.dumps(numbered_tolerations("w", n))
        return _checker_and_explainer(namespaced_pod(numbered_tolerations("p", n), {TOLERATIONS_WHITELIST_ANNOTATION: whitelist}))
    assert growth(prepare, 400) < GROWTH_LIMIT


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(TOLERATION_STRATEGY, max_size=7), st.lists(TOLERATION_STRATEGY, max_size=7))
def test_linear_merging_and_whitelisting_answer_as_the_api_server(first, second):
    pod = [Toleration(t, "pod") for t in first]
    defaults = [Toleration(t, "namespace") for t in second]
    assert merge_tolerations(pod, defaults) == _reference_merge(pod, defaults)
    allowed = Covers(_normal(w) for w in second)
    for toleration in first:
        assert allowed.covers(_normal(toleration)) == any(_reference_superset(w, toleration) for w in second)
