"""The control plane on loopback: etcd, kube-apiserver, kube-controller-manager and kube-scheduler from
k8s.io/kubernetes v1.37.2, and kwok (sigs.k8s.io/kwok v0.8.0) in the kubelets' place, all built by
`make engines` (testbed/engines/kube/, testbed/engines/kwok/) into build/engines/.

- **kube-controller-manager** runs every controller it runs by default, each as its own ServiceAccount
  (`--use-service-account-credentials`, as kubeadm starts it): Deployments, ReplicaSets, DaemonSets, Jobs,
  garbage collection, namespaces, ServiceAccounts and their root CA, the node lifecycle and taint eviction.
  The node lifecycle controller stays on: kwok renews each node's Lease in `kube-node-lease` as a kubelet does
  (its node-heartbeat-with-lease stage), which is what the controller reads for node health
  (k8s.io/kubernetes v1.37.2 `pkg/controller/nodelifecycle/node_lifecycle_controller.go`, tryUpdateNodeHealth),
  so it removes the `node.kubernetes.io/not-ready` taint a new node gets and taints nothing that runs.
- **kwok** manages every node: it reports a node Ready with the capacity and allocatable it was registered
  with, renews its Lease, and moves the pods bound to it through kwok's own stages, copied unchanged from its
  module (kustomize/stage/node/fast, node/heartbeat-with-lease, pod/fast: the set kwokctl gives a cluster,
  kwok v0.8.0 `pkg/kwokctl/runtime/cluster.go`): a pod goes Running and Ready, a Job's pod Succeeded, a
  terminating pod is removed. No image is pulled and no container runs. A pod labelled
  `crash-loop.stage.gpu-aks.io: "true"` is reported crash-looping instead (stages/pod-crash-loop.yaml).
- **What AKS serves for the stack**: the CRDs of Karpenter with node auto-provisioning (NodePool and
  AKSNodeClass, from tests/fixtures/karpenter, the versions the NodePools are checked against) and the
  PodMonitor kind Azure Managed Prometheus watches (a stand-in schema that keeps every field).
- **Who may do what**: RBAC and the Node authorizer on, the admission plugins AKS runs, DIR/kubeconfig
  cluster-admin (`system:masters`), and bearer tokens for named identities (`Cluster.identity_kubeconfig`).

Everything listens on 127.0.0.1 only. `localcluster.json` in DIR records each process (pid, binary, arguments)
for `stop`; a process is only ever signalled while its pid still runs the binary recorded."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import ssl
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from gpu_aks_policies.documents import DocumentError, Limits, load_json, read_file

from testbed.build import BIN, LIBEXEC, ROOT

from .client import ApiError, Client, ClusterError, InputError
from .pki import SERVICE_CIDR, TOKENS_FILE, IdentityError, Pki, make_pki, write_private
from .processes import Process, alive, free_port, spawn

STATE_FILE = "localcluster.json"
#: The programs `up` starts, and kubectl, which the tests and the doctor use.
PROGRAMS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl")
#: kwok's stages, as testbed/engines/kwok/files.txt copies them into build/engines/libexec/kwok-stages/.
KWOK_STAGES = ("node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-complete", "pod-delete")
#: This repository's own stages (stages/*.yaml), each gated by a label a pod opts in with.
OWN_STAGES = tuple(sorted((Path(__file__).resolve().parent / "stages").glob("*.yaml")))
READY_TIMEOUT_S = 180.0
#: The admission plugins AKS runs on top of kube-apiserver's defaults, and which cannot be changed
#: (AKS FAQ, "What Kubernetes admission controllers does AKS support?"; Azure/AKS#1449; FACTS.md).
#: kube-apiserver's defaults already include ValidatingAdmissionPolicy, TaintNodesByCondition,
#: ServiceAccount, Priority, DefaultTolerationSeconds and NamespaceLifecycle; NodeRestriction is the
#: companion of the Node authorizer every cluster runs.
AKS_ADMISSION_PLUGINS = ("NodeRestriction", "ExtendedResourceToleration", "PodTolerationRestriction",
                         "PodNodeSelector")
#: The pods' addresses kwok hands out (AKS's default pod CIDR with kubenet and Azure CNI overlay).
POD_CIDR = "10.244.0.0/16"
#: How long a node's Lease lasts; kwok renews it well before (kubelet's default, `nodeLeaseDurationSeconds`).
NODE_LEASE_SECONDS = 40
KARPENTER_CRDS = ROOT / "tests" / "fixtures" / "karpenter"
CRD_FILES = ("karpenter.sh_nodepools.yaml", "karpenter.azure.com_aksnodeclasses.yaml")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#: A PodMonitor CRD that keeps every field: the group, version, kind and scope Azure Managed Prometheus
#: watches (FACTS.md, "GPU observability on AKS"). It proves the group, version and kind, not the schema.
POD_MONITOR_CRD: Mapping[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "podmonitors.azmonitoring.coreos.com", "labels": {"gpu-aks.io/local-cluster": "stand-in"}},
    "spec": {"group": "azmonitoring.coreos.com", "scope": "Namespaced",
             "names": {"plural": "podmonitors", "singular": "podmonitor", "kind": "PodMonitor",
                       "listKind": "PodMonitorList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def programs() -> dict[str, Path]:
    """The programs and kwok's stage files; ClusterError naming what is missing and how to build it."""
    found = {name: BIN / name for name in PROGRAMS}
    found.update({f"stage {stage}": LIBEXEC / "kwok-stages" / f"{stage}.yaml" for stage in KWOK_STAGES})
    missing = [name for name, path in found.items()
               if not (os.access(path, os.X_OK) if name in PROGRAMS else path.is_file())]
    if missing:
        raise InputError(f"{', '.join(missing)} not built in {BIN.parent}: run `make engines` (needs Go)")
    return found


# --- the state file ---------------------------------------------------------------------------------

#: A state file is a few hundred bytes (five processes and their arguments).
STATE_FILE_LIMITS = Limits(max_bytes=1024 * 1024)


def _state(directory: Path) -> dict[str, Any] | None:
    """What `up` recorded in `directory`, or None; InputError for a file `up` did not write (read as every
    tool reads a file it is handed: a regular file, bounded, never blocking on a FIFO or a device)."""
    path = directory / STATE_FILE
    if not path.exists() and not path.is_symlink():
        return None
    try:
        state = load_json(read_file(str(path), STATE_FILE_LIMITS), STATE_FILE_LIMITS)
    except DocumentError:
        state = None
    processes = state.get("processes") if isinstance(state, dict) else None
    if not (isinstance(state, dict) and isinstance(state.get("server"), str) and isinstance(processes, list)
            and all(isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("binary"), str)
                    and type(p.get("pid")) is int and isinstance(p.get("args", []), list) for p in processes)):
        raise InputError(f"{path} is not a state file `up` wrote; remove it if no cluster runs there")
    return state


def _recorded(state: Mapping[str, Any]) -> list[Process]:
    return [Process(p["name"], p["binary"], p["pid"], tuple(map(str, p.get("args", [])))) for p in state["processes"]]


def _record(directory: Path, server: str, processes: Sequence[Process]) -> None:
    write_private(directory / STATE_FILE, json.dumps({"server": server, "processes": [
        {"name": p.name, "binary": p.binary, "pid": p.pid, "args": list(p.args)} for p in processes]}).encode())


# --- the cluster ------------------------------------------------------------------------------------

@dataclass
class Cluster:
    directory: Path
    server: str
    processes: list[Process]
    pki: Pki
    #: Whether its processes die with the process that started them (tests).
    die_with_parent: bool = False
    logs: Path = field(init=False)

    def __post_init__(self) -> None:
        self.logs = self.directory / "logs"

    @property
    def kubeconfig(self) -> Path:
        """The cluster admin's kubeconfig (`system:masters`)."""
        return self.directory / "kubeconfig"

    def client(self) -> Client:
        return Client(self.server, self.pki)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        (self.directory / STATE_FILE).unlink(missing_ok=True)

    def identity_kubeconfig(self, user: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig that authenticates as `user`, member of `groups`, with a bearer token, as a kubelogin
        exec plugin's token reaches an AKS API server; RBAC then decides what it may do. The tokens live in
        kube-apiserver's token file (DIR/pki/tokens.csv, `--token-auth-file`), which it reads only at start
        (k8s.io/apiserver v0.37.2 `pkg/authentication/token/tokenfile`): an identity that is new, or whose
        groups changed, restarts kube-apiserver (etcd keeps every object; the other components reconnect).
        Name identities at `start(identities=...)` to avoid the restart."""
        if self.pki.add_identity(user, groups):
            self._restart_apiserver()
        path = self.directory / "identities" / f"{_file_name(user)}.kubeconfig"
        path.parent.mkdir(exist_ok=True)
        write_private(path, json.dumps(self.pki.identity_kubeconfig(self.server, user), indent=2).encode())
        return path

    def _restart_apiserver(self) -> None:
        index, old = next((i, p) for i, p in enumerate(self.processes) if p.name == "kube-apiserver")
        old.stop()
        self.processes[index] = spawn("kube-apiserver", Path(old.binary), old.args, self.logs, self.die_with_parent)
        _record(self.directory, self.server, self.processes)
        client = self.client()
        try:
            _wait(self.processes, self.logs, time.monotonic() + READY_TIMEOUT_S, "kube-apiserver /readyz",
                  lambda: _ready(client))
        finally:
            client.close()


def _file_name(user: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.@" else "_" for c in user)[:100] or "_"


def attach(directory: Path) -> Cluster:
    """The cluster `up` started in `directory` (another process may have started it)."""
    directory = directory.resolve()
    state = _state(directory)
    processes = _recorded(state) if state else []
    if state is None or not any(p.alive() for p in processes):
        raise InputError(f"no local cluster runs in {directory}: "
                           f"`python -m tools.localcluster up {directory}` first")
    return Cluster(directory, state["server"], processes, Pki(directory / "pki"))


def _ready(client: Client) -> bool:
    with contextlib.suppress(OSError, http.client.HTTPException):
        return client.raw("GET", "/readyz", timeout=2)[0] == 200
    client.close()
    return False


def _https_ok(port: int) -> bool:
    """Whether a component's /healthz answers 200 (its serving certificate is its own, self-signed)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=2)
    try:
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _wait(processes: Sequence[Process], logs: Path, deadline: float, what: str, test: Callable[[], bool]) -> None:
    while not test():
        dead = [p.name for p in processes if not p.alive()]
        if dead:
            raise ClusterError(f"{', '.join(dead)} exited while waiting for {what}; see {logs}")
        if time.monotonic() > deadline:
            raise ClusterError(f"timed out waiting for {what}; see {logs}")
        time.sleep(0.1)


def _check_folder(directory: Path) -> bool:
    """Whether `directory` can hold a new cluster: refuses one where a cluster runs or whose parts are not
    what `up` makes there; True when it holds a stale cluster's state (its processes gone). Changes nothing."""
    if directory.exists() and not directory.is_dir():
        raise InputError(f"{directory} is not a directory")
    state = _state(directory)
    if state is not None:
        running = [p for p in _recorded(state) if p.alive()]
        if running:
            raise InputError(f"a local cluster runs in {directory} ({', '.join(p.name for p in running)}): "
                             f"`python -m tools.localcluster down {directory}` first")
    etcd = directory / "etcd"
    if etcd.is_symlink() or (etcd.exists() and not (etcd / "member").is_dir()):
        raise InputError(f"{etcd} exists and is not etcd's data folder: remove it or use another folder")
    for name in ("logs", "pki", "kubeconfigs", "identities", "kwok"):
        if (directory / name).is_symlink() or ((directory / name).exists() and not (directory / name).is_dir()):
            raise InputError(f"{directory / name} is not a folder: remove it or use another folder")
    return state is not None


def _clear(directory: Path, stale: bool, log: Callable[[str], None]) -> None:
    """Forgets a stale cluster and removes the etcd data a previous cluster left (objects its keys signed)."""
    if stale:
        log(f"{directory / STATE_FILE}: none of its processes runs any more; starting afresh")
        (directory / STATE_FILE).unlink()
    if (directory / "etcd").exists():
        shutil.rmtree(directory / "etcd")


def start(directory: Path, die_with_parent: bool = False, timeout: float = READY_TIMEOUT_S,
          log: Callable[[str], None] = lambda _: None,
          identities: Mapping[str, Sequence[str]] | None = None) -> Cluster:
    """Starts the cluster in `directory` and returns once every component is up: the API server ready, the
    scheduler and controller-manager healthy, the `default` ServiceAccount made, the CRDs established.
    `identities`: user -> groups given bearer tokens from the start. Stops what it started on failure."""
    directory = directory.resolve()
    stale = _check_folder(directory)
    found = programs()
    _clear(directory, stale, log)
    logs = directory / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    deadline = started + timeout
    pki = make_pki(directory / "pki")
    for user, groups in (identities or {}).items():
        pki.add_identity(user, groups)
    etcd_client, etcd_peer, api_port, scheduler_port, manager_port = (free_port() for _ in range(5))
    server = f"https://127.0.0.1:{api_port}"
    processes: list[Process] = []
    cluster = Cluster(directory, server, processes, pki, die_with_parent)
    configs = directory / "kubeconfigs"
    configs.mkdir(exist_ok=True)
    for component in ("scheduler", "controller-manager", "kwok"):
        write_private(configs / component, json.dumps(pki.kubeconfig(server, component)).encode())
    write_private(directory / "kubeconfig", json.dumps(pki.kubeconfig(server, "admin"), indent=2).encode())

    def launch(name: str, args: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        processes.append(spawn(name, found[name], args, logs, die_with_parent, env))
        _record(directory, server, processes)

    try:
        etcd_url, peer_url = f"http://127.0.0.1:{etcd_client}", f"http://127.0.0.1:{etcd_peer}"
        # etcd listens on loopback only, in plain HTTP: only the API server talks to it.
        launch("etcd", [
            "--name=local", f"--data-dir={directory / 'etcd'}", f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}", f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}", f"--initial-cluster=local={peer_url}",
            "--unsafe-no-fsync=true", "--log-level=warn"])
        launch("kube-apiserver", [
            f"--etcd-servers={etcd_url}", "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={api_port}", f"--tls-cert-file={pki.path('apiserver.crt')}",
            f"--tls-private-key-file={pki.path('apiserver.key')}", f"--client-ca-file={pki.path('ca.crt')}",
            f"--token-auth-file={pki.path(TOKENS_FILE)}",
            f"--service-account-key-file={pki.path('sa.pub')}",
            f"--service-account-signing-key-file={pki.path('sa.key')}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={','.join(AKS_ADMISSION_PLUGINS)}", "--allow-privileged=true",
            "--profiling=false", "--enable-priority-and-fairness=false", "--endpoint-reconciler-type=none",
            f"--cert-dir={directory / 'pki'}", "--v=0"])
        client = cluster.client()
        _wait(processes, logs, deadline, "kube-apiserver /readyz", lambda: _ready(client))
        log(f"kube-apiserver ready at {server} after {time.monotonic() - started:.1f} s")
        scheduler_config, manager_config = configs / "scheduler", configs / "controller-manager"
        launch("kube-controller-manager", [
            f"--kubeconfig={manager_config}", f"--authentication-kubeconfig={manager_config}",
            f"--authorization-kubeconfig={manager_config}", "--bind-address=127.0.0.1",
            f"--secure-port={manager_port}", "--leader-elect=false", "--use-service-account-credentials=true",
            f"--service-account-private-key-file={pki.path('sa.key')}", f"--root-ca-file={pki.path('ca.crt')}",
            f"--cluster-signing-cert-file={pki.path('ca.crt')}", f"--cluster-signing-key-file={pki.path('ca.key')}",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--profiling=false", "--v=0"])
        launch("kube-scheduler", [
            f"--kubeconfig={scheduler_config}", f"--authentication-kubeconfig={scheduler_config}",
            f"--authorization-kubeconfig={scheduler_config}", "--bind-address=127.0.0.1",
            f"--secure-port={scheduler_port}", "--leader-elect=false", "--v=0"])
        # kwok reads ~/.kwok/kwok.yaml first when it exists (kwok v0.8.0 pkg/config/flags.go): HOME is its own.
        (directory / "kwok").mkdir(exist_ok=True)
        launch("kwok", [
            f"--kubeconfig={configs / 'kwok'}", "--manage-all-nodes=true",
            f"--node-lease-duration-seconds={NODE_LEASE_SECONDS}", f"--cidr={POD_CIDR}",
            *(f"--config={found[f'stage {stage}']}" for stage in KWOK_STAGES),
            *(f"--config={stage}" for stage in OWN_STAGES)],
            {"PATH": os.environ.get("PATH", ""), "HOME": str(directory / "kwok")})
        _wait(processes, logs, deadline, "kube-controller-manager /healthz", lambda: _https_ok(manager_port))
        _wait(processes, logs, deadline, "kube-scheduler /healthz", lambda: _https_ok(scheduler_port))
        _wait(processes, logs, deadline, "the default ServiceAccount (the controller-manager's)",
              lambda: client.exists("/api/v1/namespaces/default/serviceaccounts/default"))
        install_crds(client, deadline)
        client.close()
        log(f"cluster ready in {time.monotonic() - started:.1f} s; kubeconfig: {directory / 'kubeconfig'}")
        return cluster
    except BaseException:
        cluster.stop()
        raise


def install_crds(client: Client, deadline: float) -> None:
    """Karpenter's NodePool and AKSNodeClass (what AKS serves with node auto-provisioning) and the PodMonitor
    stand-in, each once it is Established."""
    crds = [yaml.safe_load((KARPENTER_CRDS / name).read_text()) for name in CRD_FILES]
    for crd in [*crds, POD_MONITOR_CRD]:
        name = crd["metadata"]["name"]
        status, body = client.raw("POST", CRDS, crd)
        if status >= 400 and status != 409:
            raise ApiError("POST", f"{CRDS} ({name})", status, body)

        def established(name: str = name) -> bool:
            conditions = client.get(f"{CRDS}/{name}").get("status", {}).get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        while not established():
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for CRD {name} to be established")
            time.sleep(0.1)


def stop(directory: Path) -> int:
    """Stops what `up` started in `directory` (by the pids it recorded, each checked to still be the binary
    it started) and removes its state. Returns how many processes were still running."""
    directory = directory.resolve()
    state = _state(directory)
    if state is None:
        return 0
    processes = _recorded(state)
    running = sum(p.alive() for p in processes)
    for process in reversed(processes):
        process.stop()
    (directory / STATE_FILE).unlink(missing_ok=True)
    return running


@contextlib.contextmanager
def running(directory: Path, identities: Mapping[str, Sequence[str]] | None = None) -> Iterator[Cluster]:
    """The cluster for the length of a `with` block (tests): its processes die with this one."""
    cluster = start(directory, die_with_parent=True, identities=identities)
    try:
        yield cluster
    finally:
        cluster.stop()


__all__ = ["STATE_FILE", "Cluster", "ClusterError", "IdentityError", "InputError", "alive", "attach", "programs",
           "running", "start", "stop"]
