"""The shortcuts on the pack's hot path (#30) answer as the long way does, and stay bounded.

Each per-request value is a `record` (frozen to mypy, a plain dataclass at run time); a demand's
summary is `computed_once`; resource-name patterns, pool kinds and Kubernetes type tokens are
remembered per name or type; an object nothing collects takes no lock.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gpu_aks_policies import pack, podspecs
from gpu_aks_policies.demand import GpuDemand
from gpu_aks_policies.findings import Finding, dedupe
from gpu_aks_policies.records import computed_once, record
from gpu_aks_policies.secrets import SecretText
from gpu_aks_policies.workloads import Context
from gpu_aks_policies.workloads.context import collectors_of
from gpu_aks_policies.workloads.dra import NO_CLAIMS

ROOT = Path(__file__).resolve().parent.parent


def test_a_record_is_a_value_equal_and_hashed_by_its_fields():
    one, same, other = Finding("p", "spec", "m"), Finding("p", "spec", "m"), Finding("p", "spec", "n")
    assert one == same and hash(one) == hash(same) and one != other
    assert dedupe([one, same, other]) == [one, other]
    assert dataclasses.replace(one, message="n") == other
    assert dataclasses.is_dataclass(one) and [f.name for f in dataclasses.fields(Finding)][:3] == ["policy", "path", "message"]


@pytest.mark.slow
def test_assigning_to_a_record_field_is_a_type_error(tmp_path):
    """The immutability a frozen dataclass checked at run time is checked by mypy (`make lint`)."""
    snippet = tmp_path / "assigns.py"
    snippet.write_text(textwrap.dedent("""
        from gpu_aks_policies.findings import Finding
        from gpu_aks_policies.records import record

        @record
        class Mine:
            name: str

        Finding("p", "spec", "m").message = "changed"
        Mine("x").name = "y"
    """))
    # As `make lint` reads the package: under its import name, through a link to policies/.
    (tmp_path / "path").mkdir()
    (tmp_path / "path" / "gpu_aks_policies").symlink_to(ROOT / "policies")
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                             "--follow-imports=silent", str(snippet)], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env={**os.environ, "MYPYPATH": str(tmp_path / "path")})
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.count("error:") == 2 and "read-only" in result.stdout, result.stdout


def test_computed_once_computes_on_the_first_read_only():
    calls: list[int] = []

    @record
    class Counted:
        value: int

        @computed_once
        def doubled(self) -> int:
            calls.append(self.value)
            return self.value * 2

    counted = Counted(3)
    assert counted.doubled == 6 and counted.doubled == 6 and calls == [3]
    assert Counted(3) == counted, "the remembered value is not a field"
    assert type(Counted.__dict__["doubled"]).__name__ == "_ComputedOnce", "not functools.cached_property (3.11 locks)"


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
