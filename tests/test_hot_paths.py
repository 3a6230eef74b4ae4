"""The shortcuts on the pack's hot path (#30) answer as the long way does, and stay bounded.

Each per-request value is a frozen dataclass; resource-name patterns and Kubernetes type tokens are
remembered per name or type; an object nothing collects takes no lock.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpu_aks_policies import pack, podspecs
from gpu_aks_policies.demand import GpuDemand
from gpu_aks_policies.findings import Finding, dedupe
from gpu_aks_policies.secrets import SecretText
from gpu_aks_policies.workloads import Context
from gpu_aks_policies.workloads.context import collectors_of
from gpu_aks_policies.workloads.dra import NO_CLAIMS

ROOT = Path(__file__).resolve().parent.parent


def test_a_finding_is_a_value_equal_and_hashed_by_its_fields():
    one, same, other = Finding("p", "spec", "m"), Finding("p", "spec", "m"), Finding("p", "spec", "n")
    assert one == same and hash(one) == hash(same) and one != other
    assert dedupe([one, same, other]) == [one, other]
    assert dataclasses.replace(one, message="n") == other
    assert dataclasses.is_dataclass(one) and [f.name for f in dataclasses.fields(Finding)][:3] == ["policy", "path", "message"]


def test_a_demand_summary_is_written_once_per_demand():
    container = podspecs.Container("spec.containers[0]", "main", {})
    ask = podspecs.GpuAsk(container, "nvidia.com/gpu", "1", podspecs.ABSENT)
    demand = GpuDemand((ask,), NO_CLAIMS, None)
    assert demand.summary == "container 'main' asks for nvidia.com/gpu"
    assert demand.__dict__["summary"] is demand.summary


def test_resource_patterns_answer_per_name_as_fnmatch_does():
    patterns = ("nvidia.com/gpu", "nvidia.com/mig-*")
    names = ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "cpu", "nvidia.com/gpu.shared", "NVIDIA.com/gpu", ""]
    assert [podspecs.is_gpu_resource(n, patterns) for n in names] == [True, True, False, False, False, False]
    assert [podspecs.is_gpu_resource(n, list(patterns)) for n in names] == [True, True, False, False, False, False]


def test_a_secret_resource_name_is_judged_but_never_remembered():
    patterns = ("secret.example.com/*",)
    secret = SecretText("secret.example.com/gpu")
    assert podspecs.is_gpu_resource(secret, patterns)
    assert all(type(name) is str for answers in podspecs._ANSWERS.values() for name in answers)
    assert "secret.example.com/gpu" not in podspecs._answers(patterns)


def test_remembered_names_and_pattern_lists_are_bounded():
    patterns = ("bounded.example.com/*",)
    for index in range(podspecs._MAX_NAMES_PER_LIST + 500):
        assert podspecs.is_gpu_resource(f"bounded.example.com/r{index}", patterns)
    assert len(podspecs._answers(patterns)) == podspecs._MAX_NAMES_PER_LIST
    long_name = "bounded.example.com/" + "x" * podspecs.MAX_REMEMBERED_NAME
    podspecs._answers(patterns).clear()
    assert podspecs.is_gpu_resource(long_name, patterns) and long_name not in podspecs._answers(patterns), \
        "a name longer than any resource name is answered afresh"
    for index in range(podspecs._MAX_PATTERN_LISTS + 10):
        podspecs.is_gpu_resource("cpu", (f"list{index}/*",))
    assert len(podspecs._ANSWERS) <= podspecs._MAX_PATTERN_LISTS


def test_kubernetes_objects_from_type_tokens():
    assert pack.kubernetes_object("kubernetes:core/v1:Pod", {"spec": {}}) == {"spec": {}, "apiVersion": "v1", "kind": "Pod"}
    assert pack.kubernetes_object("kubernetes:apps/v1:DeploymentPatch", {})["kind"] == "Deployment"
    assert pack.kubernetes_object("kubernetes:batch/v1:Job", {"apiVersion": "batch/v1beta1", "kind": "X"}) == \
        {"apiVersion": "batch/v1beta1", "kind": "X"}
    assert pack.kubernetes_object("azure-native:containerservice:AgentPool", {}) is None
    assert pack.kubernetes_object(None, {}) is None  # type: ignore[arg-type]
    assert pack.kubernetes_object("kubernetes:core/v1:Pod", ["not", "a", "map"]) is None


def test_an_object_is_collected_only_when_its_kind_has_a_collector():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "annotations": {"a": "b"}}}
    assert collectors_of(namespace)
    assert not collectors_of({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})
    assert not collectors_of("not a mapping") and not collectors_of(None)
    assert not collectors_of({"some": "document"}), "a document no collector recognises"
    operation = pack.Operation()
    operation.remember({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})
    operation.remember(namespace)
    operation.remember({"apiVersion": "v1", "kind": "Namespace", "metadata": {"annotations": {"x": "y"}}})
    assert dict(operation.context.namespaces) == {"ml": {"a": "b"}}, "a Namespace without a name contributes nothing"
    context = Context()
    context.add(namespace)
    assert dict(context.namespaces) == {"ml": {"a": "b"}}, "add asks for the collectors itself"
