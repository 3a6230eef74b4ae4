"""Property-based tests: toleration matching, quantity parsing, and rules that never crash."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from gpu_aks_policies.podspecs import UNKNOWN
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage, check_gpu_node_pool
from gpu_aks_policies.quantities import QuantityError, parse_quantity
from gpu_aks_policies.rule_config import (
    DEVICE_PLUGIN_TOLERATES_POOLS,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
)
from gpu_aks_policies.rules import POD_RULES, default_rule_config
from gpu_aks_policies.scheduling import TAINT_EFFECTS, tolerates, toleration_for
from hypothesis import given, settings
from hypothesis import strategies as st

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


def assert_well_formed(found: list, policy: str) -> None:
    """What every finding carries, whatever the input: its own rule, a path, a message that says
    something, and no duplicate."""
    assert len(found) == len(set(found))
    for finding in found:
        assert finding.policy == policy and isinstance(finding.path, str) and finding.message.strip()


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(json_values)
def test_no_rule_crashes_on_arbitrary_json(value):
    for name in POD_RULES:
        assert_well_formed(findings(value, name), name)
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


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(pod_specs, pools)
def test_no_rule_crashes_on_gpu_shaped_garbage(pod_spec, pool):
    obj = {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"spec": pod_spec}}}
    for name in POD_RULES:
        found = findings(obj, name)
        assert_well_formed(found, name)
        if name == WHOLE_GPU_LIMITS:
            # Every container asks for nvidia.com/gpu here: a limit this rule refuses is said, per container.
            assert len([f for f in found if f.decided]) <= len(pod_spec["containers"])
    check_gpu_node_pool("azure-native:containerservice:AgentPool", pool, DEFAULTS[TAINTED_GPU_POOLS])
    check_device_plugin_coverage(
        [StackResource("pool", "azure-native:containerservice:AgentPool", pool),
         StackResource("ds", "kubernetes:apps/v1:DaemonSet", obj)], DEFAULTS[DEVICE_PLUGIN_TOLERATES_POOLS])


# --- Invariants of the verdicts ------------------------------------------------------------------

quantities = (st.integers(min_value=-2, max_value=8) | st.sampled_from([0.5, 1.0, 2.0, 1.5])
              | st.sampled_from(["1", "2", "1500m", "3000m", "0", " 2 ", "1e0", "x", "-1", "0.5"]))
gpu_resources = st.sampled_from(["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "cpu", "volcano.sh/vgpu-number"])
resource_maps = st.dictionaries(gpu_resources, quantities, max_size=2)
containers = st.builds(lambda name, limits, requests: {"name": name, "image": "x", "resources": {
    key: value for key, value in (("limits", limits), ("requests", requests)) if value}},
    st.sampled_from(["a", "b", "c"]), resource_maps, resource_maps)
toleration_strategy = st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(["", "sku", "nvidia.com/gpu", "other"]), "operator": st.sampled_from(["Equal", "Exists"]),
    "value": st.sampled_from(["", "gpu", "present"]), "effect": st.sampled_from(["", "NoSchedule", "NoExecute"])})
namespaces = st.sampled_from(["", "ml", "team"])


def _pod(name: str, namespace: str, pod_containers: list, tolerations: list, annotations: dict) -> dict:
    metadata = {"name": name, "annotations": annotations, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": pod_containers, "tolerations": tolerations}}


pods = st.builds(_pod, st.sampled_from(["p1", "p2", "p3"]), namespaces, st.lists(containers, min_size=1, max_size=3),
                 st.lists(toleration_strategy, max_size=2),
                 st.sampled_from([{}, {"gpu-fraction": "0.5"}]))
namespace_objects = st.builds(
    lambda name, defaults: {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": {
        "scheduler.alpha.kubernetes.io/defaultTolerations": json.dumps(defaults)}}},
    st.sampled_from(["ml", "team"]), st.lists(toleration_strategy, max_size=2))


def _verdicts(objects: list) -> list[tuple]:
    from gpu_aks_policies.check import LoadedObject, check_objects

    loaded = [LoadedObject("f.yaml", index, 1, obj) for index, obj in enumerate(objects)]
    report = check_objects(loaded, default_rule_config())
    return sorted((v.kind, v.name, v.policy, v.level, v.message) for v in report.violations)


def _identity(obj: dict) -> tuple:
    return obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace", "")


@settings(max_examples=60, deadline=None)
@given(st.lists(pods | namespace_objects, min_size=1, max_size=5, unique_by=_identity), st.randoms(use_true_random=False))
def test_a_verdict_does_not_depend_on_the_order_of_documents(objects, random):
    """The checker reads every object first: a pod's Namespace counts wherever it is in the input
    (objects are unique by kind, name and namespace, as the API server keeps them)."""
    shuffled = list(objects)
    random.shuffle(shuffled)
    assert _verdicts(objects) == _verdicts(shuffled)


@settings(max_examples=100, deadline=None)
@given(pods, st.lists(namespace_objects, max_size=1), toleration_strategy)
def test_adding_a_toleration_never_turns_a_pass_into_a_violation(pod, together, toleration):
    """Without a tolerationsWhitelist (which may refuse a toleration), more tolerations never hurt."""
    before = findings(pod, TOLERATE_GPU_TAINT, together=together)
    more = {**pod, "spec": {**pod["spec"], "tolerations": [*pod["spec"]["tolerations"], toleration]}}
    after = findings(more, TOLERATE_GPU_TAINT, together=together)
    if not any(f.decided for f in before):
        assert not any(f.decided for f in after)


@settings(max_examples=150, deadline=None)
@given(st.lists(containers, min_size=1, max_size=3), st.data())
def test_a_gpu_limit_equal_to_the_request_never_adds_a_whole_number_violation(pod_containers, data):
    pod = _pod("p", "", pod_containers, [], {})
    before = [f for f in findings(pod, WHOLE_GPU_LIMITS) if f.decided]
    fixed = []
    for container in pod_containers:
        resources = dict(container["resources"])
        requests, limits = dict(resources.get("requests", {})), dict(resources.get("limits", {}))
        for resource, amount in requests.items():
            if resource not in limits and data.draw(st.booleans()):
                limits[resource] = amount
        fixed.append({**container, "resources": {**resources, **({"limits": limits} if limits else {})}})
    after = [f for f in findings(_pod("p", "", fixed, [], {}), WHOLE_GPU_LIMITS) if f.decided]
    assert len(after) <= len(before)
