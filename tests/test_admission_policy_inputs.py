"""The generated admission policy's CEL against the Python rule, on generated pods and resource patterns.

The module they pin: `policies/admission_policy.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import pytest
from gpu_aks_policies.pod_rules import check_gpu_tolerations
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT
from gpu_aks_policies.rules import parse_rule_config
from gpu_aks_policies.workloads import context_of, pod_specs_of
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.inputs import TOLERATION_KEYS, TOLERATION_VALUES, assert_no_injection, tolerations
from tests.test_admission_policy import CompiledPolicy, pod_as_admitted

AMOUNTS = (0, 1, 2, 1.0, 3.0, "1", "0", "2000m", "0m", "1000m", "1e0", "1E0", "0.5", "+1", " 1", "1 ", "+0", "-0",
           "0.0", "0e5", ".0", "1.", None)


_tolerations = st.lists(st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(TOLERATION_KEYS), "operator": st.sampled_from(("Exists", "Equal", "")),
    "value": st.sampled_from(TOLERATION_VALUES), "effect": st.sampled_from(("", "NoSchedule", "NoExecute", "PreferNoSchedule")),
}), max_size=3)


_NAME_CHARS = "ab1./-"


_class = st.builds(lambda negated, items: "[" + ("!" if negated else "") + "".join(items) + "]", st.booleans(),
                   st.lists(st.sampled_from(["a", "b", "1", ".", "/", "a-b", "0-9", ".-/"]), min_size=1, max_size=3))


_patterns = st.lists(st.sampled_from(list(_NAME_CHARS) + ["*", "?"]) | _class, min_size=1, max_size=6).map("".join)


GPU_TAINT_CHOICES = ("sku=gpu:NoSchedule", "nvidia.com/gpu:NoSchedule", "team=ml-1:NoExecute", "a.b/c=d_e.f:NoSchedule")


GPU_RESOURCE_CHOICES = ("nvidia.com/gpu", "nvidia.com/mig-*", "nvidia.com/mig-?g.*", "amd.com/gpu", "example.com/g[pP]u",
                        "example.com/[!x]pu")


RESOURCE_NAMES = ("nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-12g.x", "amd.com/gpu", "example.com/gPu",
                  "example.com/xpu", "example.com/gpu", "cpu", "memory", "nvidia.com/gpux")


_amounts = st.dictionaries(st.sampled_from(RESOURCE_NAMES), st.sampled_from(AMOUNTS), max_size=2)


_resources = st.fixed_dictionaries({}, optional={"limits": _amounts, "requests": _amounts})


#: Containers, init containers, sidecars (init containers that keep running) and ephemeral containers.
_containers = st.lists(st.tuples(st.sampled_from(("containers", "initContainers", "sidecar", "ephemeralContainers")),
                                 _resources), min_size=1, max_size=3)


@lru_cache(maxsize=64)
def _compiled(taints: tuple[str, ...], resources: tuple[str, ...]) -> tuple[Any, CompiledPolicy]:
    from gpu_aks_policies.admission_policy import validating_admission_policy
    config = parse_rule_config({TOLERATE_GPU_TAINT: {"gpuTaints": list(taints),
                                                     "gpuResources": list(resources)}})[TOLERATE_GPU_TAINT]
    return config, CompiledPolicy(validating_admission_policy(config))


amounts = st.sampled_from((0, 1, 2, "1", "0", "2000m", "0m", 1.0))


containers = st.lists(st.builds(lambda limits, role: (role, {"name": "c", "image": "i", "resources": {"limits": limits}}),
                                st.dictionaries(st.sampled_from(RESOURCE_NAMES), amounts, max_size=3),
                                st.sampled_from(("containers", "initContainers"))), min_size=1, max_size=3)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(taints=st.lists(st.sampled_from(GPU_TAINT_CHOICES), min_size=1, max_size=2, unique=True),
       resources=st.lists(st.sampled_from(GPU_RESOURCE_CHOICES), min_size=1, max_size=3, unique=True),
       pod_tolerations=_tolerations, pod_containers=_containers,
       pod_resources=st.none() | st.dictionaries(st.sampled_from(("limits", "requests")), _amounts))
def test_the_cel_and_the_python_rule_agree_on_wider_pods(taints, resources, pod_tolerations, pod_containers,
                                                         pod_resources):
    config, policy = _compiled(tuple(taints), tuple(resources))
    spec: dict[str, Any] = {"containers": [], "tolerations": pod_tolerations}
    for number, (role, container_resources) in enumerate(pod_containers):
        container = {"name": f"c{number}", "image": "i", "resources": container_resources}
        if role == "sidecar":
            role, container["restartPolicy"] = "initContainers", "Always"
        spec.setdefault(role, []).append(container)
    if not spec["containers"]:
        spec["containers"].append({"name": "main", "image": "i"})
    if pod_resources is not None:
        spec["resources"] = pod_resources  # pod-level resources: cpu and memory only, never a GPU
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"}, "spec": spec}
    context = context_of([obj])
    [pod] = pod_specs_of(obj, context)
    admitted_pod = pod_as_admitted(pod, context, config)
    assume(admitted_pod is not None)
    python_admits = not [f for f in check_gpu_tolerations([pod], config, context) if f.decided]
    assert policy.admits(admitted_pod) == python_admits, (obj, admitted_pod, python_admits)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(pattern=_patterns, name=st.text(alphabet=_NAME_CHARS + "c]", max_size=6))
def test_an_accepted_resource_pattern_means_the_same_to_fnmatch_and_to_the_cel_regex(pattern, name):
    import fnmatch

    from gpu_aks_policies.admission_policy import shell_pattern_regex
    from gpu_aks_policies.rule_config import RESOURCE_PATTERN
    assume(RESOURCE_PATTERN.fullmatch(pattern))
    assert bool(re.fullmatch(shell_pattern_regex(pattern), name)) == fnmatch.fnmatchcase(name, pattern), pattern


@pytest.mark.parametrize("pattern", ["example.com/[!]b", "example.com/[\\-*]", "example.com/[b-a]", "example.com/[",
                                     "example.com/[]]", "example.com/[^x]", "a'b\nc", "example.com/[[]"])
@pytest.mark.parametrize("where", ["gpuResources", "gpuMarkers"])
def test_a_resource_pattern_the_cel_regex_cannot_mean_is_refused(pattern, where):
    # Each was taken: fnmatch read it one way, and its regex was invalid RE2 (the API server refuses the
    # ValidatingAdmissionPolicy) or matched other names.
    from gpu_aks_policies.rules import parse_rule_config
    raw = {"gpuResources": [pattern]} if where == "gpuResources" else {"gpuMarkers": {"resources": [pattern]}}
    with pytest.raises(Exception) as raised:
        parse_rule_config({TOLERATE_GPU_TAINT: raw})
    assert "is not a resource name or a shell pattern of one" in str(raised.value)
    assert_no_injection(str(raised.value).replace("\n", ""))


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(taints=st.lists(st.sampled_from(GPU_TAINT_CHOICES), min_size=1, max_size=2, unique=True),
       resources=st.lists(st.sampled_from(GPU_RESOURCE_CHOICES), min_size=1, max_size=3, unique=True),
       pod_tolerations=tolerations, pod_containers=containers)
def test_the_generated_cel_and_the_python_rule_agree_on_generated_pods(taints, resources, pod_tolerations, pod_containers):
    config, policy = _compiled(tuple(taints), tuple(resources))
    spec: dict[str, Any] = {"containers": [], "tolerations": pod_tolerations}
    for number, (role, container) in enumerate(pod_containers):
        spec.setdefault(role, []).append({**container, "name": f"c{number}"})
    if not spec["containers"]:
        spec["containers"].append({"name": "main", "image": "i"})
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"}, "spec": spec}
    context = context_of([obj])
    [pod] = pod_specs_of(obj, context)
    admitted_pod = pod_as_admitted(pod, context, config)
    assume(admitted_pod is not None)  # else the API server refuses it before validating admission runs
    python_admits = not [f for f in check_gpu_tolerations([pod], config, context) if f.decided]
    assert policy.admits(admitted_pod) == python_admits, (admitted_pod, python_admits)
