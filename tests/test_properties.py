"""Property-based tests: toleration matching, quantity parsing, and rules that never crash."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from policies.gpu_rules import POD_RULES, StackResource, check_device_plugin_coverage, check_gpu_node_pool
from policies.podspecs import UNKNOWN
from policies.quantities import QuantityError, parse_quantity
from policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, TAINTED_GPU_POOLS, default_rule_config
from policies.scheduling import TAINT_EFFECTS, tolerates, toleration_for
from tests.helpers import findings

DEFAULTS = default_rule_config()
words = st.sampled_from(["", "sku", "gpu", "nvidia.com/gpu", "present", "spot", "x"])
effects = st.sampled_from(["", *TAINT_EFFECTS])
taints = st.fixed_dictionaries({"key": words.filter(bool), "value": words, "effect": st.sampled_from(TAINT_EFFECTS)})
tolerations = st.fixed_dictionaries({}, optional={
    "key": words, "operator": st.sampled_from(["Equal", "Exists", ""]), "value": words, "effect": effects})


def kubernetes_tolerates(toleration: dict, taint: dict) -> bool:
    """k8s.io/api/core/v1 Toleration.ToleratesTaint, transcribed line by line."""
    if toleration.get("effect", "") != "" and toleration.get("effect") != taint["effect"]:
        return False
    if toleration.get("key", "") != "" and toleration.get("key") != taint["key"]:
        return False
    operator = toleration.get("operator", "")
    if operator in ("", "Equal"):
        return toleration.get("value", "") == taint["value"]
    return operator == "Exists"


@given(tolerations, taints)
def test_tolerates_matches_kubernetes(toleration, taint):
    assert tolerates(toleration, taint) is kubernetes_tolerates(toleration, taint)


@given(taints)
def test_derived_toleration_tolerates_its_taint_and_only_that_key(taint):
    toleration = toleration_for(taint)
    assert tolerates(toleration, taint)
    assert not tolerates(toleration, {**taint, "key": taint["key"] + "-other"})


@given(taints, effects)
def test_empty_key_exists_tolerates_everything_with_matching_effect(taint, effect):
    assert tolerates({"operator": "Exists", "effect": effect}, taint) is (effect in ("", taint["effect"]))


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_integer_quantities(n):
    assert parse_quantity(n) == n
    assert parse_quantity(float(n)) == n
    assert parse_quantity(str(n)) == n
    assert parse_quantity(f"{n * 1000}m") == n
    assert parse_quantity(f"{n}k") == n * 1000


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=-9, max_value=9))
def test_exponent_quantities(n, exponent):
    assert parse_quantity(f"{n}e{exponent}") == Fraction(n) * Fraction(10) ** exponent


@given(st.integers(min_value=0, max_value=10**4), st.integers(min_value=1, max_value=999))
def test_millis_are_exact(whole, millis):
    assert parse_quantity(f"{whole * 1000 + millis}m") == Fraction(whole * 1000 + millis, 1000)
    assert parse_quantity(f"{whole * 1000 + millis}m").denominator != 1


@given(st.text(max_size=12))
def test_any_text_parses_or_raises_quantity_error(text):
    try:
        value = parse_quantity(text)
    except QuantityError:
        return
    assert isinstance(value, Fraction)


json_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8) | st.just(UNKNOWN)
json_keys = st.sampled_from(["containers", "initContainers", "resources", "limits", "requests", "nvidia.com/gpu",
                             "tolerations", "spec", "template", "nodeSelector", "affinity", "name", "key",
                             "agentPoolProfiles", "vmSize", "nodeTaints", "minCount", "maxCount", "image"]) | st.text(max_size=5)
json_values = st.recursive(json_leaves, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(json_keys, children, max_size=5), max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_no_rule_crashes_on_arbitrary_json(value):
    for name in POD_RULES:
        assert isinstance(findings(value, name), list)
    if isinstance(value, dict):
        check_gpu_node_pool("azure-native:containerservice:ManagedCluster", value, DEFAULTS[TAINTED_GPU_POOLS])
        check_gpu_node_pool("azure-native:containerservice:AgentPool", value, DEFAULTS[TAINTED_GPU_POOLS])
        check_device_plugin_coverage(
            [StackResource("a", "azure-native:containerservice:AgentPool", value),
             StackResource("b", "kubernetes:apps/v1:DaemonSet", value)], DEFAULTS[DEVICE_PLUGIN_TOLERATES_POOLS])


gpu_container = st.fixed_dictionaries({
    "name": st.text(max_size=4), "image": st.just("nvcr.io/nvidia/k8s-device-plugin:v0.20.0"),
    "resources": st.fixed_dictionaries({"limits": st.fixed_dictionaries({"nvidia.com/gpu": json_values})},
                                       optional={"requests": st.dictionaries(st.just("nvidia.com/gpu"), json_values)}),
})
pod_specs = st.fixed_dictionaries({"containers": st.lists(gpu_container, min_size=1, max_size=2)}, optional={
    "tolerations": json_values, "nodeSelector": json_values, "affinity": json_values})
pools = st.fixed_dictionaries({"vmSize": st.sampled_from(["Standard_NC4as_T4_v3", "Standard_NC6"]) | json_values}, optional={
    "agentPoolName": json_values, "nodeTaints": json_values, "nodeLabels": json_values, "scaleSetPriority": json_values,
    "gpuProfile": json_values, "enableAutoScaling": json_values, "minCount": json_values, "maxCount": json_values})


@settings(max_examples=300, deadline=None)
@given(pod_specs, pools)
def test_no_rule_crashes_on_gpu_shaped_garbage(pod_spec, pool):
    obj = {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": pod_spec}}}
    for name in POD_RULES:
        assert isinstance(findings(obj, name), list)
    check_gpu_node_pool("azure-native:containerservice:AgentPool", pool, DEFAULTS[TAINTED_GPU_POOLS])
    check_device_plugin_coverage(
        [StackResource("pool", "azure-native:containerservice:AgentPool", pool),
         StackResource("ds", "kubernetes:apps/v1:DaemonSet", obj)], DEFAULTS[DEVICE_PLUGIN_TOLERATES_POOLS])
