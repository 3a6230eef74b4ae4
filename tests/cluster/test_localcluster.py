"""`python -m tools.localcluster` as a user runs it: `up DIR`, `nodes DIR OUTPUTS.json`, `identity`, `down DIR`;
what it refuses, with a message and exit 2, and never a traceback; and that no process outlives a test run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from testbed.build import BIN, ROOT
from testbed.localcluster import STATE_FILE, alive
from tests.cluster.stacks import outputs_of

#: The processes `up` starts, in order; each is a binary `make engines` built.
PROGRAMS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"]


def localcluster(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools.localcluster", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=timeout)


def _pids(directory: Path) -> list[tuple[int, str]]:
    state = json.loads((directory / STATE_FILE).read_text())
    return [(p["pid"], p["binary"]) for p in state["processes"]]


def kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "kubectl"), "--kubeconfig", str(kubeconfig), *args], capture_output=True,
                          text=True, check=False, timeout=60)


def _no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


@pytest.fixture(scope="module")
def started(cluster, tmp_path_factory):
    """A second cluster, started and stopped with the CLI (`cluster` first: its fixture gives the tier's one
    skip, or CI failure, where nothing is built)."""
    directory = tmp_path_factory.mktemp("cli") / "cp"
    up = localcluster("up", str(directory), "--identity", "deployer@contoso.example:gpu-aks-deployers,all-staff")
    try:
        assert up.returncode == 0, up.stderr
        yield directory, up
    finally:
        localcluster("down", str(directory))


def test_up_starts_the_owners_programs_and_writes_a_kubeconfig_kubectl_uses(started):
    directory, up = started
    assert "cluster ready" in up.stdout
    pids = _pids(directory)
    assert [Path(binary).name for _, binary in pids] == PROGRAMS
    assert all(Path(binary).parent == BIN for _, binary in pids), "the binaries make engines built"
    assert all(alive(pid, binary) for pid, binary in pids), "up returns with everything running"
    kubeconfig = directory / "kubeconfig"
    assert oct(kubeconfig.stat().st_mode & 0o777) == "0o600", "the kubeconfig holds the admin's key"
    # RBAC is on: the admin (system:masters) may do anything; the API server says who it is.
    assert kubectl(kubeconfig, "auth", "can-i", "create", "pods").stdout.strip() == "yes"
    whoami = kubectl(kubeconfig, "auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"]["groups"][0] == "system:masters"
    version = json.loads(kubectl(kubeconfig, "version", "-o", "json").stdout)
    assert version["clientVersion"]["gitVersion"] == version["serverVersion"]["gitVersion"] == "v1.37.2"
    crds = kubectl(kubeconfig, "get", "crd", "-o", "name").stdout.split()
    assert {"customresourcedefinition.apiextensions.k8s.io/nodepools.karpenter.sh",
            "customresourcedefinition.apiextensions.k8s.io/aksnodeclasses.karpenter.azure.com",
            "customresourcedefinition.apiextensions.k8s.io/podmonitors.azmonitoring.coreos.com"} <= set(crds)


def test_nodes_registers_every_pool_of_a_contract_ready_and_up_again_is_refused(started, tmp_path):
    directory, _ = started
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"outputs": outputs_of("dev")}))
    nodes = localcluster("nodes", str(directory), str(outputs))
    assert nodes.returncode == 0, nodes.stderr
    listed = json.loads(kubectl(directory / "kubeconfig", "get", "nodes", "-o", "json").stdout)["items"]
    assert sorted(n["metadata"]["labels"]["gpu-aks.io/pool"] for n in listed) == ["cpu", "gput4"]
    assert all(any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"]) for n in listed)
    again = localcluster("up", str(directory), timeout=60)
    assert again.returncode == 2 and "down" in again.stderr, "a second up in the same folder is refused"
    _no_traceback(again)


def whoami(kubeconfig: Path) -> dict:
    result = kubectl(kubeconfig, "auth", "whoami", "-o", "json")
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout)["status"]["userInfo"])


def test_identities_authenticate_with_a_token_and_rbac_decides_what_they_may_do(started):
    directory, _ = started
    admin = directory / "kubeconfig"
    made = localcluster("identity", str(directory), "deployer@contoso.example", "--group", "gpu-aks-deployers",
                        "--group", "all-staff")
    assert made.returncode == 0, made.stderr
    deployer = Path(made.stdout.strip())
    config = json.loads(deployer.read_text())
    assert set(config["users"][0]["user"]) == {"token"}, "a bearer token, as kubelogin hands one to kubectl"
    assert oct(deployer.stat().st_mode & 0o777) == "0o600"
    who = whoami(deployer)
    assert who["username"] == "deployer@contoso.example"
    assert {"gpu-aks-deployers", "all-staff", "system:authenticated"} <= set(who["groups"])
    assert kubectl(deployer, "auth", "can-i", "create", "deployments", "-n", "team").stdout.strip() == "no"
    binding = kubectl(admin, "create", "clusterrolebinding", "deployers", "--clusterrole=cluster-admin",
                      "--group=gpu-aks-deployers")
    assert binding.returncode == 0, binding.stderr
    assert kubectl(deployer, "auth", "can-i", "create", "deployments", "-n", "team").stdout.strip() == "yes"
    # A new identity: kube-apiserver restarts to read its token file; what it stored stays.
    team = localcluster("identity", str(directory), "app-team@contoso.example", "--group", "team-a")
    assert team.returncode == 0, team.stderr
    assert whoami(Path(team.stdout.strip()))["username"] == "app-team@contoso.example"
    assert kubectl(deployer, "auth", "can-i", "create", "deployments", "-n", "team").stdout.strip() == "yes"
    assert all(alive(pid, binary) for pid, binary in _pids(directory))
    refused = localcluster("identity", str(directory), "a,b")
    assert refused.returncode == 2 and "comma" in refused.stderr
    _no_traceback(refused)


def test_down_stops_every_process_and_a_stale_folder_starts_afresh(cluster, tmp_path):
    directory = tmp_path / "cp"
    assert localcluster("up", str(directory)).returncode == 0
    pids = _pids(directory)
    down = localcluster("down", str(directory), timeout=120)
    assert down.returncode == 0, down.stderr
    assert not any(alive(pid, binary) for pid, binary in pids)
    assert not (directory / STATE_FILE).exists()
    assert kubectl(directory / "kubeconfig", "get", "nodes", "--request-timeout=5s").returncode != 0
    # A state whose processes are gone (a machine restarted; processes killed): up starts afresh.
    (directory / STATE_FILE).write_text(json.dumps({"server": "https://127.0.0.1:1", "processes": [
        {"name": "etcd", "binary": str(BIN / "etcd"), "pid": pids[0][0], "args": []}]}))
    try:
        up = localcluster("up", str(directory))
        assert up.returncode == 0, up.stderr
        assert "starting afresh" in up.stdout
    finally:
        assert localcluster("down", str(directory), timeout=120).returncode == 0


def test_a_killed_test_run_leaves_no_process(cluster, tmp_path):
    """A test run killed outright (SIGKILL: no finalizer runs) takes its cluster with it."""
    directory = tmp_path / "killed"
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from testbed import localcluster
        with localcluster.running(Path({str(directory)!r})):
            print("ready", flush=True)
            time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        pids = _pids(directory)
        assert len(pids) == len(PROGRAMS) and all(alive(pid, binary) for pid, binary in pids)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    deadline = time.monotonic() + 30
    while any(alive(pid, binary) for pid, binary in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid, binary) for pid, binary in pids)


def test_a_node_has_the_lease_kwok_renews_and_set_taints_replaces_its_taints(cluster, api):
    """kwok keeps a Lease per node, as a kubelet does (what the node lifecycle controller reads; the nodes
    staying Ready over minutes is checked in test_platform). set_taints is one patch, so it does not lose a
    race with another writer of the node, as the controller-manager is (a GET then PUT did: HTTP 409). The
    other writer here is a thread patching the node's annotations as fast as it can."""
    import threading

    from tests.cluster.stacks import forget_stack, use_stack

    use_stack(api, "dev", copies=1)
    [name, *_] = sorted(n["metadata"]["name"] for n in api.get("/api/v1/nodes")["items"])
    lease = api.get(f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}")
    assert lease["spec"]["leaseDurationSeconds"] == 40
    done = threading.Event()

    def write_the_node() -> None:
        writer = cluster.client()
        tick = 0
        while not done.is_set():
            tick += 1
            writer.patch(f"/api/v1/nodes/{name}", {"metadata": {"annotations": {"gpu-aks.io/tick": str(tick)}}})
        writer.close()

    other = threading.Thread(target=write_the_node)
    other.start()
    try:
        for round_ in range(30):
            api.set_taints(name, [{"key": "gpu-aks.io/test", "value": str(round_), "effect": "NoSchedule"}])
    finally:
        done.set()
        other.join()
    node = api.get(f"/api/v1/nodes/{name}")
    assert node["spec"]["taints"] == [{"key": "gpu-aks.io/test", "value": "29", "effect": "NoSchedule"}]
    api.set_taints(name, [])
    assert not api.get(f"/api/v1/nodes/{name}")["spec"].get("taints")
    forget_stack(api)
