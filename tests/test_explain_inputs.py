"""The explainer (`gpu-aks-explain`) under hostile input: no secret echoed, every input read, contract text cut
and escaped, linear time.

The module they pin: `policies/explain.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable

import pytest
from gpu_aks_policies import explain
from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.fit import platform_from_outputs

from tests.conftest import ROOT
from tests.inputs import (
    GROWTH_LIMIT,
    HANG_GUARD_S,
    HOSTILE_NAME,
    PLATFORM_T4,
    SECRET,
    assert_inert,
    growth,
    namespaced_pod,
    numbered_tolerations,
    run,
)

_NODE_CHOICE = """
from gpu_aks_policies.fit import node_choice
from gpu_aks_policies.pools.model import Offer
def offer(model, gpus):
    return Offer(vm_size="Standard_X", gpu_model=model, gpu_memory_gib=80, gpus_per_vm=gpus,
                 resource="nvidia.com/gpu", per_node=gpus, mig_partition=None,
                 capacity_types=("spot", "onDemand"), hourly_price=None)
n = 300_000
print(node_choice([offer("H100" + " NVL" * n, 1), offer("H100" + " " * n + "80GB", 2)]))
print(node_choice([offer("A100 80GB SXM", 1), offer("H100 NVL", 2), offer("80GB", 1)]))
"""


@pytest.mark.slow
def test_the_explainer_never_echoes_a_secrets_lines(tmp_path):
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: hunter2-SUPERSECRET\n"
                      "  token: [unclosed\n")
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps({"gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {},
                                                         "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}))
    for module, args in (("gpu_aks_policies.explain", ["--platform", str(platform)]), ("gpu_aks_policies.check", [])):
        result = run(module, *args, str(secret))
        assert result.returncode == 2
        assert "SUPERSECRET" not in result.stdout + result.stderr and "hunter2" not in result.stdout + result.stderr
        assert f"{secret}:6: error: invalid YAML" in result.stdout + result.stderr


@pytest.mark.slow
def test_the_explainer_reads_directories_and_stdin_and_keeps_going(tmp_path, bad_pod, broken_inputs):
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps({"gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {},
                                                         "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}))
    out = io.StringIO()
    code = explain.main(["--platform", str(platform), str(broken_inputs[1]), "-"], stdin=io.BytesIO(bad_pod.read_bytes()),
                        stdout=out)
    assert code == 2 and "half" in out.getvalue()


@pytest.mark.slow
def test_the_explainer_reports_a_bad_tag_and_keeps_going(tmp_path, bad_pod):
    secret = tmp_path / "secret.yaml"
    secret.write_text(f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\nstringData:\n  password: !!float {SECRET}\n")
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    result = run("gpu_aks_policies.explain", "--platform", str(platform), str(secret), str(bad_pod))
    assert result.returncode == 2 and SECRET not in result.stdout + result.stderr
    assert f"{secret}:5: error: invalid YAML" in result.stderr and "Pod/half" in result.stdout


@pytest.mark.slow
def test_names_from_the_input_cannot_steer_the_explainer_or_the_doctor(tmp_path):
    pod = tmp_path / "hostile.yaml"
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": HOSTILE_NAME},
                               "spec": {"containers": [{"name": "c", "image": "i",
                                                        "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}))
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(PLATFORM_T4))
    explained = run("gpu_aks_policies.explain", "--platform", str(platform), str(pod))
    assert HOSTILE_NAME[:1] in explained.stdout
    assert_inert(explained.stdout + explained.stderr)
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"items": [{"metadata": {"name": HOSTILE_NAME, "labels": {POOL_LABEL: "t4"}}, "status": {
        "conditions": [{"type": "Ready", "status": "False", "reason": HOSTILE_NAME},
                       {"type": "XIDErrors", "status": "True", "message": HOSTILE_NAME}]}}]}))
    pods = tmp_path / "pods.json"
    pods.write_text('{"items": []}')
    diagnosed = run("tools.doctor", "--platform", str(platform), "--nodes", str(nodes), "--pods", str(pods))
    assert diagnosed.returncode == 1
    assert_inert(diagnosed.stdout + diagnosed.stderr)
    as_json = run("tools.doctor", "--platform", str(platform), "--nodes", str(nodes), "--pods", str(pods), "--json")
    assert "##[" not in as_json.stdout
    assert json.loads(as_json.stdout)["pools"][0]["nodes"][0]["name"] == HOSTILE_NAME


@pytest.mark.slow
def test_a_pod_with_many_tolerations_against_many_pools_is_explained_in_linear_time():
    def prepare(n: int) -> Callable[[], object]:
        pools = {f"p{i}": {"taints": [f"k{i}.example.com/t=v:NoSchedule"], "labels": {}, "gpuResource": "nvidia.com/gpu",
                           "gpusPerNode": 1} for i in range(n)}
        platform = platform_from_outputs({"gpuPools": pools})
        pod = namespaced_pod(numbered_tolerations("p", n), {})[1]
        return lambda: explain.explain_all([pod], platform)
    assert growth(prepare, 150) < GROWTH_LIMIT


@pytest.mark.slow  # 300,000 qualifiers in a fresh interpreter: hostile input at scale
def test_a_gpu_model_of_many_qualifiers_or_spaces_is_read_in_one_pass():
    # The qualifier regex searched the whole model again after each qualifier it removed and backtracked
    # over every run of spaces: 20,000 qualifiers took 100 s, these 300,000 would take hours.
    result = subprocess.run([sys.executable, "-c", _NODE_CHOICE], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["one of H100 x1, H100 x2, Spot or on-demand",
                                          "one of A100 x1, H100 x2, 80GB x1, Spot or on-demand"]


def test_the_explainer_cuts_a_contract_s_huge_gpu_model_as_every_quoted_value():
    """A contract's `gpuModel` is any text: the explainer printed a 200k-character one whole, in every
    line that named the pool's GPU."""
    from gpu_aks_policies.explain import explain
    from gpu_aks_policies.fit import render
    from gpu_aks_policies.limits import MAX_SHOWN_CHARS
    outputs = json.loads((ROOT / "examples" / "app-repo" / "platform" / "prod-outputs.json").read_text())
    for pool in outputs["gpuPools"].values():
        for offer in pool["offers"]:
            offer["gpuModel"] = "H" * 200_000
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "tolerations": [{"operator": "Exists"}],
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    text = render(explain(pod, outputs))
    assert "H" * MAX_SHOWN_CHARS + "…" in text and "H" * (MAX_SHOWN_CHARS + 1) not in text
