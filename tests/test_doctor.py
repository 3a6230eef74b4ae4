"""The doctor on recorded `kubectl get nodes/pods -o json` of a prod-shaped cluster: healthy, a
crash-looping device plugin, a node without allocatable GPUs, a wrong taint, and MIG under `mixed`."""

from __future__ import annotations

import copy
import io
import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_policies.fit import platform_from_outputs

from tests.conftest import ROOT
from tools.doctor import GPU_CONDITIONS, diagnose, main

FIXTURES = Path(__file__).parent / "fixtures" / "doctor"
PLATFORM = FIXTURES / "platform-prod.json"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def doctor(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(args), stdout=out), out.getvalue()


def run_on(nodes: str, pods: str = "pods-healthy.json", platform: Path = PLATFORM, *extra: str) -> tuple[int, str]:
    return doctor("--platform", str(platform), "--nodes", str(FIXTURES / nodes), "--pods", str(FIXTURES / pods), *extra)


def doctor_on(nodes: Any, pods: str = "pods-healthy.json") -> tuple[int, str]:
    """The doctor on a nodes document built by the test (written to a temporary file)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "nodes.json"
        path.write_text(json.dumps(nodes))
        return doctor("--platform", str(PLATFORM), "--nodes", str(path), "--pods", str(FIXTURES / pods))


def problems_of(nodes: Any, pods: Any, platform: str = "platform-prod.json") -> list[tuple[str, str, str]]:
    diagnosis = diagnose(platform_from_outputs(load(platform)), nodes["items"], pods["items"])
    return [(p.pool, p.node, p.check) for p in diagnosis.problems]


A100_1 = "aks-a100mig73f6-31871234-vmss000001"
T4_0 = "aks-t4spotce97-31871234-vmss000000"


def test_the_recorded_platform_is_what_the_prod_stack_exports(prod_run):
    recorded = load("platform-prod.json")
    for key in ("gpuPools", "migStrategy", "gpuNamespace"):
        assert recorded[key] == prod_run.stack_outputs[key], f"regenerate {PLATFORM.name}: {key} changed"
    # Recorded as version 2 wrote it: the doctor reads the contracts older platforms export too.
    assert (recorded["contractVersion"], prod_run.stack_outputs["contractVersion"]) == (2, 3)


def test_a_healthy_cluster_exits_0_and_lists_every_gpu_node():
    code, out = run_on("nodes-healthy.json")
    assert code == 0, out
    assert "pool a100mig (3 nvidia.com/gpu per node): 2 node(s)" in out
    assert f"  {T4_0}: ok; 1 nvidia.com/gpu allocatable, device plugin nvidia-device-plugin-daemonset-h2v8c ready" in out
    assert out.rstrip().endswith("healthy: every GPU node advertises its GPUs and runs a ready device plugin")
    assert "aks-system" not in out and "cpuc563" not in out, "CPU nodes are not GPU pool members"


def test_a_crash_looping_device_plugin_names_the_pod_and_how_to_read_its_logs():
    code, out = run_on("nodes-healthy.json", "pods-plugin-crashloop.json")
    assert code == 1
    assert (f"- node {T4_0} (pool t4spot) [device-plugin]: device-plugin pod nvidia-device-plugin-daemonset-h2v8c is "
            "not Ready (CrashLoopBackOff, 7 restart(s))") in out
    assert "do: kubectl -n gpu-resources logs nvidia-device-plugin-daemonset-h2v8c --previous" in out


def test_a_node_without_allocatable_gpus():
    code, out = run_on("nodes-no-allocatable-gpus.json")
    assert code == 1
    assert (f"- node {A100_1} (pool a100mig) [gpu-allocatable]: advertises no allocatable nvidia.com/gpu (the contract "
            "says 3 per node)") in out
    assert problems_of(load("nodes-no-allocatable-gpus.json"), load("pods-healthy.json")) == [
        ("a100mig", A100_1, "gpu-allocatable")]


def test_a_wrong_taint_is_both_missing_and_untolerated():
    code, out = run_on("nodes-wrong-taint.json")
    assert code == 1
    assert (f"- node {T4_0} (pool t4spot) [taints]: the node lacks sku=gpu:NoSchedule and carries sku=gpus:NoSchedule, "
            "which the contract's tolerations do not tolerate") in out


def test_mig_under_mixed_counts_the_mig_resource():
    code, out = run_on("nodes-mig-mixed.json", platform=FIXTURES / "platform-prod-mixed.json")
    assert code == 0, out
    assert "pool a100mig (3 nvidia.com/mig-2g.20gb per node): 2 node(s)" in out
    assert "3 nvidia.com/mig-2g.20gb allocatable" in out


def test_mixed_contract_on_nodes_advertising_whole_gpus_says_the_strategies_disagree():
    code, out = run_on("nodes-healthy.json", platform=FIXTURES / "platform-prod-mixed.json")
    assert code == 1
    assert (f"- node {A100_1} (pool a100mig) [gpu-resource]: advertises 3 nvidia.com/gpu but no nvidia.com/mig-2g.20gb"
            in out)
    assert "MIG strategy (mixed in the contract)" in out


def test_a_pool_scaled_to_zero_is_reported_and_healthy():
    nodes = load("nodes-healthy.json")
    nodes["items"] = [n for n in nodes["items"] if "t4spot" not in n["metadata"]["name"]]
    diagnosis = diagnose(platform_from_outputs(load("platform-prod.json")), nodes["items"], load("pods-healthy.json")["items"])
    (t4,) = [pool for pool in diagnosis.pools if pool.name == "t4spot"]
    assert t4.scaled_to_zero and not diagnosis.problems


def test_a_pool_with_min_count_but_no_nodes_is_a_problem():
    platform = load("platform-prod.json")
    platform["gpuPools"]["t4spot"]["minCount"] = 1
    nodes = load("nodes-healthy.json")
    nodes["items"] = [n for n in nodes["items"] if "t4spot" not in n["metadata"]["name"]]
    diagnosis = diagnose(platform_from_outputs(platform), nodes["items"], load("pods-healthy.json")["items"])
    assert [(p.pool, p.node, p.check) for p in diagnosis.problems] == [("t4spot", "", "nodes")]


@pytest.mark.parametrize("condition", sorted(GPU_CONDITIONS))
def test_node_problem_detector_gpu_conditions_are_reported(condition):
    nodes = load("nodes-healthy.json")
    node = next(n for n in nodes["items"] if n["metadata"]["name"] == A100_1)
    # NPD keeps each condition on the node, False while healthy (the recording has some); one type, one entry.
    conditions = [c for c in node["status"]["conditions"] if c["type"] != condition]
    node["status"]["conditions"] = [*conditions, {"type": condition, "status": "True", "reason": condition,
                                                  "message": "XID 79 detected on GPU 0" if condition == "XIDErrors" else ""}]
    assert problems_of(nodes, load("pods-healthy.json")) == [("a100mig", A100_1, f"condition:{condition}")]
    healthy_again = copy.deepcopy(nodes)
    next(n for n in healthy_again["items"] if n["metadata"]["name"] == A100_1)["status"]["conditions"][-1]["status"] = "False"
    assert problems_of(healthy_again, load("pods-healthy.json")) == []


def test_not_ready_node_missing_plugin_and_relabelled_node():
    nodes, pods = load("nodes-healthy.json"), load("pods-healthy.json")
    node = next(n for n in nodes["items"] if n["metadata"]["name"] == A100_1)
    next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["status"] = "False"
    node["metadata"]["labels"]["nvidia.com/gpu.partition-size"] = "1g.10gb"
    pods["items"] = [p for p in pods["items"] if p["spec"]["nodeName"] != A100_1]
    # Every pod of the node is gone, the DCGM exporter's too (prod's contract says gpu-aks exports its metrics).
    assert problems_of(nodes, pods) == [("a100mig", A100_1, "node-ready"), ("a100mig", A100_1, "device-plugin"),
                                        ("a100mig", A100_1, "labels"), ("a100mig", A100_1, "dcgm-exporter")]


def test_json_output():
    code, out = run_on("nodes-no-allocatable-gpus.json", "pods-healthy.json", PLATFORM, "--json")
    document = json.loads(out)
    assert code == 1 and document["healthy"] is False
    assert [pool["name"] for pool in document["pools"]] == ["a100mig", "t4spot"]
    assert document["pools"][0]["nodes"][1] == {"name": A100_1, "ready": True, "allocatable": "0 nvidia.com/gpu",
                                                "devicePlugin": "nvidia-device-plugin-mig-daemonset-m4q9z ready",
                                                "healthy": False}
    assert document["problems"][0]["check"] == "gpu-allocatable" and document["problems"][0]["node"] == A100_1


@pytest.mark.parametrize(("nodes_text", "expected"), [
    ('{"kind": "NodeList"}', "expected `kubectl get nodes -o json` output (a List with items)"),
    ('{"items": [1]}', "expected `kubectl get nodes -o json` output"),
    ('{"items": [}', ":1: "),
    ("[]", "expected `kubectl get nodes -o json` output"),
])
def test_bad_cluster_files_exit_2_naming_the_file(tmp_path, capsys, nodes_text, expected):
    nodes = tmp_path / "nodes.json"
    nodes.write_text(nodes_text)
    code, out = doctor("--platform", str(PLATFORM), "--nodes", str(nodes), "--pods", str(FIXTURES / "pods-healthy.json"))
    assert code == 2 and out == ""
    err = capsys.readouterr().err
    assert err.startswith(f"error: {nodes}") and expected in err


def test_a_platform_that_is_not_a_contract_exits_2(tmp_path, capsys):
    platform = tmp_path / "outputs.json"
    platform.write_text('{"clusterName": "x"}')
    assert doctor("--platform", str(platform), "--nodes", str(FIXTURES / "nodes-healthy.json"),
                  "--pods", str(FIXTURES / "pods-healthy.json"))[0] == 2
    assert "gpuPools" in capsys.readouterr().err


def _fake_kubectl(tmp_path: Path, body: str) -> dict[str, str]:
    script = tmp_path / "bin" / "kubectl"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{script.parent}:/usr/bin:/bin"}


def test_without_files_the_doctor_runs_kubectl(tmp_path):
    env = _fake_kubectl(tmp_path, f'case "$2" in nodes) cat {FIXTURES}/nodes-healthy.json;; '
                                  f'pods) cat {FIXTURES}/pods-plugin-crashloop.json;; esac')
    result = subprocess.run([sys.executable, "-m", "tools.doctor", "--platform", str(PLATFORM)], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stderr
    assert "[device-plugin]" in result.stdout and "Traceback" not in result.stderr


def test_kubectl_failing_or_missing_exits_2(tmp_path):
    env = _fake_kubectl(tmp_path, 'echo "error: You must be logged in to the server (Unauthorized)" >&2; exit 1')
    result = subprocess.run([sys.executable, "-m", "tools.doctor", "--platform", str(PLATFORM)], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "`get nodes -o json` failed: error: You must be logged in to the server (Unauthorized)" in result.stderr
    env["PATH"] = "/nonexistent"
    result = subprocess.run([sys.executable, "-m", "tools.doctor", "--platform", str(PLATFORM)], cwd=ROOT, env=env,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "kubectl is not on PATH" in result.stderr


def test_a_node_is_held_to_the_offer_of_its_own_vm_size():
    """A NodePool-backed pool brings several sizes: each node advertises what its size's offer says."""
    platform = load("platform-prod.json")
    pool = platform["gpuPools"]["t4spot"]
    bigger = {**pool["offers"][0], "vmSize": "Standard_NC64as_T4_v3", "gpusPerVm": 4, "perNode": 4}
    platform["gpuPools"]["t4spot"] = {**pool, "kind": "nodePool", "offers": [pool["offers"][0], bigger]}
    nodes = load("nodes-healthy.json")
    node = next(n for n in nodes["items"] if n["metadata"]["name"] == T4_0)
    node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "Standard_NC64as_T4_v3"
    for key in ("capacity", "allocatable"):
        node["status"][key]["nvidia.com/gpu"] = "4"
    diagnosis = diagnose(platform_from_outputs(platform), nodes["items"], load("pods-healthy.json")["items"])
    assert [(p.node, p.check) for p in diagnosis.problems] == []
    node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "Standard_NC4as_T4_v3"
    diagnosis = diagnose(platform_from_outputs(platform), nodes["items"], load("pods-healthy.json")["items"])
    assert [(p.node, p.check) for p in diagnosis.problems] == [(T4_0, "gpu-count")]


def test_a_node_that_gives_pods_less_than_the_contract_says_is_named():
    """#48: pods are placed by the contract's `allocatable` (AKS's reservations); a node whose allocatable CPU is
    less, or whose memory is less beyond the kernel's margin, is said. The recorded nodes are prod's own sizes."""
    from components.contract import platform_contract
    from tools.observability import stack_settings

    platform = platform_from_outputs(platform_contract(stack_settings("prod")))
    nodes = load("nodes-healthy.json")
    pods = load("pods-healthy.json")
    assert not [p for p in diagnose(platform, nodes["items"], pods["items"]).problems if p.check == "allocatable"]
    t4 = next(node for node in nodes["items"] if node["metadata"]["name"] == T4_0)
    t4["status"]["allocatable"] = {**t4["status"]["allocatable"], "cpu": "3500m", "memory": "12Gi"}
    [short] = [p for p in diagnose(platform, nodes["items"], pods["items"]).problems if p.check == "allocatable"]
    assert short.node == T4_0 and "cpu 3.5 where the contract says 3.86" in short.message
    assert "memory 12 GiB where the contract says" in short.message


def test_a_dra_pool_node_is_judged_by_the_dra_drivers_kubelet_plugin():
    """#48: a DRA pool advertises no nvidia.com/gpu (its GPUs are in ResourceSlices, which the DRA driver's kubelet
    plugin writes): its node is healthy with a Ready kubelet-plugin pod, in whatever namespace the driver runs,
    and named without one; the device plugin's checks do not apply there."""
    from components.contract import platform_contract
    from tools.observability import stack_settings

    outputs = platform_contract(stack_settings("prod"))
    outputs["pools"]["t4spot"] = {**outputs["pools"]["t4spot"], "devicePlugin": None,
                                  "dra": {"deviceClasses": ["gpu.nvidia.com"], "extendedResource": None}}
    outputs["gpuPools"]["t4spot"] = {**outputs["gpuPools"]["t4spot"], "devicePlugin": None}
    platform = platform_from_outputs(outputs)
    nodes = load("nodes-healthy.json")
    t4 = next(node for node in nodes["items"] if node["metadata"]["name"] == T4_0)
    for key in ("capacity", "allocatable"):
        t4["status"][key].pop("nvidia.com/gpu")
    pods = load("pods-healthy.json")
    pods["items"] = [pod for pod in pods["items"]
                     if pod["spec"].get("nodeName") != T4_0 or "device-plugin" not in pod["metadata"]["name"]]
    without = [(p.node, p.check) for p in diagnose(platform, nodes["items"], pods["items"]).problems]
    assert without == [(T4_0, "dra-driver")]
    plugin = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "nvidia-dra-driver-gpu-kubelet-plugin-x7k2p", "namespace": "nvidia-dra-driver-gpu",
                           "labels": {"nvidia-dra-driver-gpu-component": "kubelet-plugin"}},
              "spec": {"nodeName": T4_0},
              "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    pods["items"].append(plugin)
    diagnosis = diagnose(platform, nodes["items"], pods["items"])
    assert [(p.node, p.check) for p in diagnosis.problems] == []
    [report] = [node for pool in diagnosis.pools if pool.name == "t4spot" for node in pool.nodes]
    assert "through DRA (gpu.nvidia.com)" in report.allocatable and "kubelet-plugin-x7k2p ready" in report.device_plugin
    plugin["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    [problem] = diagnose(platform, nodes["items"], pods["items"]).problems
    assert problem.check == "dra-driver" and "is not Ready" in problem.message
    # The checks every GPU node gets hold on a DRA pool's too: its contract labels, the node problem detector.
    plugin["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    t4["metadata"]["labels"].pop("nvidia.com/gpu.accelerator", None)
    t4["status"]["conditions"] = [*(c for c in t4["status"]["conditions"] if c["type"] != "GPUMissing"),
                                  {"type": "GPUMissing", "status": "True", "reason": "GPUMissing"}]
    assert {(p.node, p.check) for p in diagnose(platform, nodes["items"], pods["items"]).problems} == {
        (T4_0, "labels"), (T4_0, "condition:GPUMissing")}


@pytest.mark.parametrize("labels", [500, 2000])
def test_the_labels_a_node_lacks_are_named_a_few_and_counted(labels):
    # Every missing label was listed per node: 14 times the output at 4 times the input (issue 50).
    platform = load("platform-prod.json")
    hostile = "\x1b[2J\n::error::" + "v" * 10_000
    platform["gpuPools"]["a100mig"]["labels"].update({f"extra{i}.example.com/k": hostile for i in range(labels)})
    diagnosis = diagnose(platform_from_outputs(platform), load("nodes-healthy.json")["items"],
                         load("pods-healthy.json")["items"])
    found = [p for p in diagnosis.problems if p.check == "labels"]
    assert found and all(f"and {labels - 10} more: pods selecting them never land here" in p.message for p in found)
    assert all(len(p.message) < 3000 and "\x1b" not in p.message and "\n" not in p.message for p in found)
