"""`python -m tools.localcluster up DIR` / `down DIR`, and that no process outlives its test run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from tests.cluster.stacks import outputs_of
from tools import localcluster
from tools.localcluster import ENGINES_BIN, ROOT, STATE_FILE


def _pids(directory: Path) -> list[tuple[int, str]]:
    state = json.loads((directory / STATE_FILE).read_text())
    return [(p["pid"], p["binary"]) for p in state["processes"]]


def _kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    kubectl = Path(os.environ.get("GPU_AKS_ENGINES_BIN") or ENGINES_BIN) / "kubectl"
    return subprocess.run([str(kubectl), "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True,
                          check=False, timeout=60)


def test_up_writes_a_kubeconfig_kubectl_uses_and_down_stops_every_process(cluster, tmp_path):
    # `cluster` first: its fixture gives the tier's one skip (or CI failure) where nothing is built.
    directory = tmp_path / "cp"
    up = subprocess.run([sys.executable, "-m", "tools.localcluster", "up", str(directory)], cwd=ROOT,
                        capture_output=True, text=True, check=False, timeout=120)
    try:
        assert up.returncode == 0, up.stderr
        assert "control plane ready" in up.stdout
        pids = _pids(directory)
        assert [Path(binary).name for _, binary in pids][:3] == ["etcd", "kube-apiserver", "kube-scheduler"]
        assert len(pids) == 4, "and the controller loops (tools.localcluster controllers)"
        assert all(localcluster._alive(pid, binary) for pid, binary in pids), "up returns with everything running"
        kubeconfig = directory / "kubeconfig"
        assert oct(kubeconfig.stat().st_mode & 0o777) == "0o600", "the kubeconfig holds the admin's key"
        # RBAC is on: the admin (system:masters) may do anything; the API server says who it is.
        assert _kubectl(kubeconfig, "auth", "can-i", "create", "pods").stdout.strip() == "yes"
        whoami = _kubectl(kubeconfig, "auth", "whoami", "-o", "json")
        assert json.loads(whoami.stdout)["status"]["userInfo"]["groups"][0] == "system:masters"
        plugins = _kubectl(kubeconfig, "get", "--raw", "/api/v1/namespaces/default/serviceaccounts/default")
        assert plugins.returncode == 0, "the default ServiceAccount a pod needs exists"
        outputs = tmp_path / "outputs.json"
        outputs.write_text(json.dumps({"outputs": outputs_of("dev")}))
        nodes = subprocess.run([sys.executable, "-m", "tools.localcluster", "nodes", str(directory), str(outputs)],
                               cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)
        assert nodes.returncode == 0, nodes.stderr
        listed = json.loads(_kubectl(kubeconfig, "get", "nodes", "-o", "json").stdout)["items"]
        assert sorted(n["metadata"]["labels"]["gpu-aks.io/pool"] for n in listed) == ["cpu", "gput4"]
        again = subprocess.run([sys.executable, "-m", "tools.localcluster", "up", str(directory)], cwd=ROOT,
                               capture_output=True, text=True, check=False, timeout=60)
        assert again.returncode == 1 and "down" in again.stderr, "a second up in the same folder is refused"
    finally:
        down = subprocess.run([sys.executable, "-m", "tools.localcluster", "down", str(directory)], cwd=ROOT,
                              capture_output=True, text=True, check=False, timeout=120)
    assert down.returncode == 0, down.stderr
    assert not any(localcluster._alive(pid, binary) for pid, binary in pids)
    assert not (directory / STATE_FILE).exists()
    assert _kubectl(directory / "kubeconfig", "get", "nodes", "--request-timeout=5s").returncode != 0


def test_a_killed_test_run_leaves_no_process(cluster, tmp_path):
    """A test run killed outright (SIGKILL: no finalizer runs) takes its control plane with it."""
    directory = tmp_path / "killed"
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from tools import localcluster
        with localcluster.running(Path({str(directory)!r})):
            print("ready", flush=True)
            time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        pids = _pids(directory)
        assert len(pids) == 4 and all(localcluster._alive(pid, binary) for pid, binary in pids)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 30
    while any(localcluster._alive(pid, binary) for pid, binary in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(localcluster._alive(pid, binary) for pid, binary in pids)
