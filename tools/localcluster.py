"""A real Kubernetes control plane on loopback, for the `cluster` test tier: etcd, kube-apiserver and
kube-scheduler, built from their Go modules by `make engines` (engines/kube/), with their own
certificates, RBAC on and the admission plugins AKS runs.

    python -m tools.localcluster up DIR      start it; writes DIR/kubeconfig (cluster-admin)
    python -m tools.localcluster nodes DIR OUTPUTS.json [--copies N]
                                             register Ready nodes shaped like the stack's pools
    python -m tools.localcluster down DIR    stop every process `up` started; DIR stays

No kubelet and no kube-controller-manager run (its node lifecycle controller would taint every node
whose kubelet never reports). What they would do is done here: nodes are registered shaped like a
pool's nodes (the labels AKS or Karpenter set, the pool's taints, the GPUs the device plugin
advertises) and their status is patched as a kubelet reports it; a fourth process
(`python -m tools.localcluster controllers DIR`, started by `up`) runs the few controller loops the
platform's objects wait on: default ServiceAccounts, DaemonSet status, foreground deletion, namespace
deletion (`controller_pass`). Everything listens on
127.0.0.1 only. Tests start it through `start()` with `die_with_parent`, so an interrupted or killed
test run leaves no process behind.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import datetime
import http.client
import ipaddress
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ENGINES_BIN = ROOT / "build" / "engines" / "bin"
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kubectl")
STATE_FILE = "localcluster.json"
READY_TIMEOUT_S = 60.0

#: The admission plugins AKS runs on top of kube-apiserver's defaults, and which cannot be changed
#: (AKS FAQ, "What Kubernetes admission controllers does AKS support?"; Azure/AKS#1449; FACTS.md).
#: kube-apiserver's defaults already include ValidatingAdmissionPolicy, TaintNodesByCondition,
#: ServiceAccount, Priority, DefaultTolerationSeconds and NamespaceLifecycle; NodeRestriction is the
#: companion of the Node authorizer every cluster runs.
AKS_ADMISSION_PLUGINS = ("NodeRestriction", "ExtendedResourceToleration", "PodTolerationRestriction",
                         "PodNodeSelector")
#: dev's `clusterNetwork.serviceCidr` (the API server takes the first address for `kubernetes`).
SERVICE_CIDR = "10.0.0.0/16"


class ClusterError(RuntimeError):
    """The control plane did not start, or a request to it failed."""


class ApiError(ClusterError):
    def __init__(self, method: str, path: str, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        message = body.get("message") if isinstance(body, Mapping) else str(body)[:500]
        super().__init__(f"{method} {path}: HTTP {status}: {message}")

    @property
    def reason(self) -> str:
        return str(self.body.get("reason", "")) if isinstance(self.body, Mapping) else ""

    @property
    def message(self) -> str:
        return str(self.body.get("message", "")) if isinstance(self.body, Mapping) else str(self.body)


# --- certificates ---------------------------------------------------------------------------------

def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


@dataclass(frozen=True)
class Pki:
    """The files under DIR/pki: one CA signs the API server's serving certificate and every client's."""

    directory: Path

    def path(self, name: str) -> Path:
        return self.directory / name

    def data(self, name: str) -> str:
        return base64.b64encode(self.path(name).read_bytes()).decode()


def make_pki(directory: Path) -> Pki:
    """A CA, the API server's serving certificate (loopback and the in-cluster names), client
    certificates for the cluster admin (`system:masters`) and the scheduler (`system:kube-scheduler`,
    which RBAC's bootstrap policy binds), and the service-account signing key. ECDSA P-256: quick to
    make, and every component accepts it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=2))

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    def save_key(name: str, private: ec.EllipticCurvePrivateKey) -> None:
        _write_private(directory / name, private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    def name_of(common: str, org: str | None = None) -> x509.Name:
        parts = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
        if org:
            parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
        return x509.Name(parts)

    ca_key = key()
    ca_name = name_of("gpu-aks-localcluster-ca")
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(valid[0]).not_valid_after(valid[1])
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    (directory / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    save_key("ca.key", ca_key)

    def issue(stem: str, subject: x509.Name, usage: x509.ObjectIdentifier,
              sans: Sequence[x509.GeneralName] = ()) -> None:
        private = key()
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(ca_name)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(valid[0]).not_valid_after(valid[1])
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
        cert = builder.sign(ca_key, hashes.SHA256())
        (directory / f"{stem}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        save_key(f"{stem}.key", private)

    service_ip = next(ipaddress.IPv4Network(SERVICE_CIDR).hosts())
    issue("apiserver", name_of("kube-apiserver"), ExtendedKeyUsageOID.SERVER_AUTH, [
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(service_ip), x509.DNSName("localhost"),
        *(x509.DNSName(n) for n in ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                                    "kubernetes.default.svc.cluster.local"))])
    issue("admin", name_of("gpu-aks-admin", "system:masters"), ExtendedKeyUsageOID.CLIENT_AUTH)
    issue("scheduler", name_of("system:kube-scheduler"), ExtendedKeyUsageOID.CLIENT_AUTH)
    signing = key()
    save_key("sa.key", signing)
    (directory / "sa.pub").write_bytes(signing.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return Pki(directory)


def kubeconfig(server: str, pki: Pki, client: str, user: str) -> dict[str, Any]:
    """A self-contained kubeconfig (certificates inline), as `az aks get-credentials` writes one."""
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "local",
        "clusters": [{"name": "local", "cluster": {"server": server, "certificate-authority-data": pki.data("ca.crt")}}],
        "users": [{"name": user, "user": {"client-certificate-data": pki.data(f"{client}.crt"),
                                          "client-key-data": pki.data(f"{client}.key")}}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
    }


# --- processes ------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG (1): the kernel sends SIGKILL when the process that started this one exits,
    # however it exits (a test run killed with SIGKILL runs no finalizer).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def _alive(pid: int, binary: str) -> bool:
    """Whether `pid` is still the process started from `binary` (not a reused pid, not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z" and cmdline == binary


@dataclass
class Process:
    name: str
    binary: str
    pid: int
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to its process group, SIGKILL after `timeout`; returns once it is gone."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            if not _alive(self.pid, self.binary):
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _alive(self.pid, self.binary):
                if self.popen is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.popen.wait(0.1)
                else:
                    time.sleep(0.1)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(1)


def _spawn(name: str, binary: Path, args: Sequence[str], logs: Path, die_with_parent: bool,
           cwd: Path | None = None) -> Process:
    log = open(logs / f"{name}.log", "ab")  # noqa: SIM115 - the child holds it; closed below
    try:
        popen = subprocess.Popen([str(binary), *args], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, cwd=cwd or logs,
                                 preexec_fn=_die_with_parent if die_with_parent else None)
    finally:
        log.close()
    return Process(name, str(binary), popen.pid, popen)


# --- the API client -------------------------------------------------------------------------------

class Client:
    """A small Kubernetes REST client over one kept-alive HTTPS connection (kubectl per request would
    spend most of a test's time starting kubectl)."""

    def __init__(self, server: str, pki: Pki, client: str = "admin") -> None:
        parsed = urllib.parse.urlsplit(server)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 443
        self.context = ssl.create_default_context(cafile=str(pki.path("ca.crt")))
        self.context.load_cert_chain(str(pki.path(f"{client}.crt")), str(pki.path(f"{client}.key")))
        self._connection: http.client.HTTPSConnection | None = None
        #: The `Warning` headers of the last response (a ValidatingAdmissionPolicy bound with `Warn`).
        self.warnings: list[str] = []

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def raw(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
            timeout: float = 30.0) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                               timeout=timeout)
            try:
                self._connection.request(method, path, body=data, headers=headers)
                response = self._connection.getresponse()
                payload = response.read()
                self.warnings = response.headers.get_all("Warning") or []
                break
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 2:
                    raise
        try:
            parsed: Any = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return response.status, parsed

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        status, parsed = self.raw(method, path, body, content_type)
        if status >= 400:
            raise ApiError(method, path, status, parsed)
        return parsed

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def create(self, path: str, obj: Mapping[str, Any], dry_run: bool = False) -> Any:
        return self.request("POST", path + ("?dryRun=All" if dry_run else ""), obj)

    def patch(self, path: str, patch: Any, kind: str = "merge") -> Any:
        types = {"merge": "application/merge-patch+json", "strategic": "application/strategic-merge-patch+json",
                 "json": "application/json-patch+json"}
        return self.request("PATCH", path, patch, types[kind])

    def delete(self, path: str, force: bool = False) -> None:
        # No kubelet confirms a pod's end: a bound pod is removed at once only with grace period 0.
        status, parsed = self.raw("DELETE", path + ("?gracePeriodSeconds=0" if force else ""))
        if status >= 400 and status != 404:
            raise ApiError("DELETE", path, status, parsed)

    def exists(self, path: str) -> bool:
        status, parsed = self.raw("GET", path)
        if status >= 400 and status != 404:
            raise ApiError("GET", path, status, parsed)
        return status < 400

    def wait_for(self, what: str, test: Callable[[], bool], timeout: float = 30.0, every: float = 0.05) -> None:
        deadline = time.monotonic() + timeout
        while not test():
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(every)

    # --- what a controller-manager would do --------------------------------------------------------

    def ensure_namespace(self, name: str, annotations: Mapping[str, str] | None = None,
                         labels: Mapping[str, str] | None = None) -> None:
        """The namespace, and its ServiceAccount `default`, which the ServiceAccount admission plugin
        needs for every pod and which only the controller-manager would create."""
        if not self.exists(f"/api/v1/namespaces/{name}"):
            metadata: dict[str, Any] = {"name": name}
            if annotations:
                metadata["annotations"] = dict(annotations)
            if labels:
                metadata["labels"] = dict(labels)
            self.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
        if not self.exists(f"/api/v1/namespaces/{name}/serviceaccounts/default"):
            status, body = self.raw("POST", f"/api/v1/namespaces/{name}/serviceaccounts", {
                "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
            if status >= 400 and status != 409:
                raise ApiError("POST", f"/api/v1/namespaces/{name}/serviceaccounts", status, body)

    def register_node(self, node: Mapping[str, Any]) -> None:
        """Creates the Node and reports its status as its kubelet would: capacity, allocatable and
        Ready. The TaintNodesByCondition admission plugin gives a new Node the taint
        `node.kubernetes.io/not-ready:NoSchedule`; the node lifecycle controller (not running here)
        removes it once the node is Ready, so this does."""
        spec = dict(node.get("spec") or {})
        status = node["status"]
        created = self.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                                "metadata": node["metadata"], "spec": spec})
        name = created["metadata"]["name"]
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        conditions = [{"type": kind, "status": "False", "reason": f"Kubelet{reason}", "message": "",
                       "lastHeartbeatTime": now, "lastTransitionTime": now}
                      for kind, reason in (("MemoryPressure", "HasSufficientMemory"),
                                           ("DiskPressure", "HasNoDiskPressure"),
                                           ("PIDPressure", "HasSufficientPID"))]
        conditions.append({"type": "Ready", "status": "True", "reason": "KubeletReady",
                           "message": "kubelet is posting ready status", "lastHeartbeatTime": now,
                           "lastTransitionTime": now})
        self.patch(f"/api/v1/nodes/{name}/status", {"status": {**status, "conditions": conditions}},
                   "strategic")
        self.set_taints(name, spec.get("taints") or [])

    def set_taints(self, name: str, taints: Sequence[Mapping[str, Any]]) -> None:
        current = self.get(f"/api/v1/nodes/{name}")
        self.request("PUT", f"/api/v1/nodes/{name}",
                     {**current, "spec": {**current.get("spec", {}), "taints": [dict(t) for t in taints]}})

    def patch_status(self, path: str, status: Mapping[str, Any]) -> Any:
        return self.patch(f"{path}/status", {"status": dict(status)})


# --- nodes shaped like a pool's -----------------------------------------------------------------

#: Memory (GiB) of the VM sizes the example stacks use, from Azure's size pages (learn.microsoft.com/
#: azure/virtual-machines/sizes/...); other sizes get 4 GiB per vCPU. Allocatable is capacity: AKS's
#: kube-reserved is not modelled.
VM_MEMORY_GIB = {
    "Standard_D4ds_v5": 16, "Standard_D8ds_v5": 32, "Standard_D16ds_v5": 64, "Standard_NC4as_T4_v3": 28,
    "Standard_NC8as_T4_v3": 56, "Standard_NC16as_T4_v3": 110, "Standard_NC64as_T4_v3": 440,
    "Standard_NC24ads_A100_v4": 220, "Standard_NC48ads_A100_v4": 440, "Standard_NC96ads_A100_v4": 880,
    "Standard_NC40ads_H100_v5": 320, "Standard_NC80adis_H100_v5": 640, "Standard_ND96asr_v4": 900,
    "Standard_ND96amsr_A100_v4": 1900, "Standard_ND96isr_H100_v5": 1900,
}
#: Sizes whose hosts are Arm64 (Grace): kubelet reports `kubernetes.io/arch: arm64` there.
ARM64_SIZE = re.compile(r"_GB\d+_", re.IGNORECASE)
#: The GPU name token Azure/skewer parses from a size name (`karpenter.azure.com/sku-gpu-name`).
SKU_GPU_NAME = re.compile(r"_(T4|A10|A100|H100|H200|MI300X|GB200|GB300)_", re.IGNORECASE)


def _vcpus(vm_size: str) -> int:
    return int(m.group(1)) if (m := re.match(r"Standard_[A-Za-z]+?(\d+)", vm_size)) else 8


def _memory_gib(vm_size: str) -> int:
    return VM_MEMORY_GIB.get(vm_size, 4 * _vcpus(vm_size))


def _node_resources(vm_size: str, gpus: Mapping[str, int]) -> dict[str, str]:
    return {"cpu": str(_vcpus(vm_size)), "memory": f"{_memory_gib(vm_size)}Gi", "pods": "110", "ephemeral-storage": "100Gi",
            **{resource: str(count) for resource, count in gpus.items()}}


def _gpu_resources(offer: Mapping[str, Any]) -> dict[str, int]:
    """What the device plugin advertises on a node of this offer: the offer's `perNode` of its resource,
    which the contract already counts as the plugin does (GPUs, MIG instances, or GPUs times the
    sharing replicas: NVIDIA k8s-device-plugin `api/config/v1`; components/gpu_cluster_outputs.py)."""
    return {str(offer["resource"]): int(offer.get("perNode") or 0)}


def _base_labels(name: str, vm_size: str, location: str, zone: str) -> dict[str, str]:
    arch = "arm64" if ARM64_SIZE.search(vm_size) else "amd64"
    return {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": arch,
            "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": arch,
            "node.kubernetes.io/instance-type": vm_size, "beta.kubernetes.io/instance-type": vm_size,
            "topology.kubernetes.io/region": location, "topology.kubernetes.io/zone": zone,
            "failure-domain.beta.kubernetes.io/region": location, "failure-domain.beta.kubernetes.io/zone": zone}


def _taints(texts: Iterable[str]) -> list[dict[str, str]]:
    taints = []
    for text in texts:
        key_value, _, effect = str(text).rpartition(":")
        key, _, value = key_value.partition("=")
        taint = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints.append(taint)
    return taints


def pool_nodes(outputs: Mapping[str, Any], pool_name: str, copies: int = 1) -> list[dict[str, Any]]:
    """Nodes as a pool of the outputs contract (`python -m tools.preview STACK --json`'s `outputs`)
    brings them up, `copies` of each kind. An AgentPool's nodes carry AKS's reserved labels
    (MicrosoftDocs `articles/aks/reserved-labels-reference.md`) and the pool's `nodeLabels`; a NAP
    NodePool's carry Karpenter's and the Azure provider's (`karpenter.sh/*`, `karpenter.azure.com/sku-*`)
    and the NodePool template's labels, one node kind per offer, Spot first where the pool allows it
    (Karpenter tries Spot before on-demand). Neither gets a label or taint the pool does not declare
    beyond those (Karpenter adds no GPU taint and no `kubernetes.azure.com/accelerator`)."""
    location = str(outputs.get("location") or "eastus2")
    # The contract's pool model (version 3's `pools`); the system pool's nodes are not simulated.
    pool = (outputs.get("pools") or {}).get(pool_name)
    if pool is None or pool.get("role") not in ("gpu", "cpu"):
        raise KeyError(pool_name)
    is_gpu = pool["role"] == "gpu"
    nap = pool.get("backend") == "nodePool"
    identity = (outputs.get("clusterIdentity") or {}).get("gpuPools", {}).get(pool_name, {})
    os_sku = str((identity.get("createOnly") or {}).get("osSKU") or "Ubuntu")
    zones = list((identity.get("createOnly") or {}).get("availabilityZones") or [])
    cluster = f"MC_{outputs.get('resourceGroupName', 'rg')}_{outputs.get('clusterName', 'aks')}_{location}"
    # A GPU pool's nodes are of its GPU sizes, as the device plugin and the scheduler see them.
    offers = [offer for offer in pool.get("offers") or [] if offer.get("resource") or not is_gpu]
    nodes = []
    for index, offer in enumerate(offers):
        vm_size = str(offer["vmSize"])
        gpus = _gpu_resources(offer) if is_gpu else {}
        for copy in range(copies):
            zone = f"{location}-{zones[copy % len(zones)]}" if zones else "0"
            if nap:
                capacity = "spot" if "spot" in (offer.get("capacityTypes") or []) else "on-demand"
                name = f"aks-{pool_name}-{index}{copy:04d}"[:63]
                # Karpenter writes no kubernetes.azure.com/agentpool and no kubernetes.azure.com/accelerator
                # (removed as redundant with sku-gpu-name); it writes mode, role, cluster, os-sku and, on
                # Spot nodes, scalesetpriority (karpenter-provider-azure designs/0006-requirements-and-labels.md
                # at 3ecc05ae, "Decision 2").
                labels = {**_base_labels(name, vm_size, location, zone), **(pool.get("labels") or {}),
                          "karpenter.sh/nodepool": pool_name, "karpenter.sh/capacity-type": capacity,
                          "karpenter.sh/registered": "true", "karpenter.sh/initialized": "true",
                          "karpenter.azure.com/sku-name": vm_size, "karpenter.azure.com/sku-family": vm_size.split("_")[1][:1],
                          "karpenter.azure.com/sku-cpu": str(_vcpus(vm_size)),
                          "karpenter.azure.com/sku-memory": str(_memory_gib(vm_size) * 1024),
                          "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
                          "kubernetes.azure.com/os-sku": os_sku, "kubernetes.azure.com/cluster": cluster}
                if capacity == "spot":
                    labels["kubernetes.azure.com/scalesetpriority"] = "spot"
                if is_gpu:
                    token = SKU_GPU_NAME.search(vm_size)
                    labels.update({"karpenter.azure.com/sku-gpu-manufacturer": "nvidia",
                                   "karpenter.azure.com/sku-gpu-count": str(offer.get("gpusPerVm") or 0)})
                    if token:
                        labels["karpenter.azure.com/sku-gpu-name"] = token.group(1).upper()
            else:
                azure_name = str(pool.get("azureName") or pool_name)
                name = f"aks-{azure_name}-12345678-vmss{copy:06d}"
                labels = {**_base_labels(name, vm_size, location, zone), **(pool.get("labels") or {}),
                          "kubernetes.azure.com/agentpool": azure_name, "agentpool": azure_name,
                          "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
                          "kubernetes.azure.com/os-sku": os_sku,
                          "kubernetes.azure.com/node-image-version": f"AKS{os_sku}-gpu-202611.01.0",
                          "kubernetes.azure.com/cluster": cluster}
                if is_gpu:
                    labels["kubernetes.azure.com/accelerator"] = "nvidia"
                if pool.get("spot"):
                    labels["kubernetes.azure.com/scalesetpriority"] = "spot"
            resources = _node_resources(vm_size, gpus)
            nodes.append({
                "metadata": {"name": name, "labels": {k: str(v) for k, v in labels.items()},
                             "annotations": {"gpu-aks.io/test-pool": pool_name}},
                "spec": {"taints": _taints(pool.get("taints") or [])},
                "status": {"capacity": resources, "allocatable": resources,
                           "nodeInfo": {"architecture": labels["kubernetes.io/arch"], "operatingSystem": "linux",
                                        "kubeletVersion": f"v{outputs.get('kubernetesVersion', '1.37')}.0",
                                        "kubeProxyVersion": "", "containerRuntimeVersion": "containerd://2.1.0",
                                        "kernelVersion": "", "osImage": os_sku, "bootID": "", "machineID": "",
                                        "systemUUID": ""},
                           "addresses": [{"type": "InternalIP", "address": "10.224.0.4"},
                                         {"type": "Hostname", "address": name}]},
            })
    return nodes


def stack_nodes(outputs: Mapping[str, Any], copies: int = 1) -> list[dict[str, Any]]:
    """Every GPU and CPU pool's nodes."""
    return [node for name, pool in (outputs.get("pools") or {}).items() if pool.get("role") in ("gpu", "cpu")
            for node in pool_nodes(outputs, name, copies)]


# --- what kube-controller-manager would do ---------------------------------------------------------

#: Where objects the platform (or a test) deletes may wait on a finalizer only a controller removes.
FINALIZED_COLLECTIONS = (
    "/api/v1/namespaces", "/apis/apps/v1/daemonsets", "/api/v1/configmaps", "/api/v1/pods", "/api/v1/serviceaccounts",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
)
#: The garbage collector's finalizers (kubernetes `pkg/controller/garbagecollector`): pulumi-kubernetes
#: deletes with foreground propagation by default, which waits on `foregroundDeletion`.
GC_FINALIZERS = ("foregroundDeletion", "orphan")


def _ready(pod: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def controller_pass(client: Client, collections: Sequence[str] = ()) -> None:
    """One pass of the few kube-controller-manager loops the platform's objects wait on; no
    controller-manager runs here (it would also run the node lifecycle controller, which taints
    nodes whose kubelet never reports). Each does what its controller does, minus creating pods:
    - serviceaccount: a `default` ServiceAccount in every namespace;
    - daemonset: status counted from the pods the DaemonSet owns (a test creates them: no kubelet
      runs them), with `observedGeneration`, which pulumi-kubernetes waits for;
    - garbagecollector: foreground deletion's finalizer removed once the owner's dependents are gone;
    - namespace: a terminating namespace's content deleted and its `kubernetes` finalizer removed.
    `collections` adds custom resources (their CRDs' plural paths) to watch for finalizers."""
    namespaces = client.get("/api/v1/namespaces")["items"]
    accounts = {item["metadata"]["namespace"] for item in client.get("/api/v1/serviceaccounts")["items"]
                if item["metadata"]["name"] == "default"}
    pods = client.get("/api/v1/pods")["items"]
    for namespace in namespaces:
        name = namespace["metadata"]["name"]
        if namespace["metadata"].get("deletionTimestamp"):
            for collection in (*FINALIZED_COLLECTIONS, *collections):
                base, plural = collection.rsplit("/", 1)
                status, listed = client.raw("GET", f"{base}/namespaces/{name}/{plural}")
                for item in listed.get("items", []) if status == 200 else []:
                    client.delete(f"{base}/namespaces/{name}/{plural}/{item['metadata']['name']}",
                                  force=plural == "pods")
            if namespace.get("spec", {}).get("finalizers"):
                status, body = client.raw("PUT", f"/api/v1/namespaces/{name}/finalize",
                                          {**namespace, "spec": {**namespace["spec"], "finalizers": []}})
                if status >= 400 and status not in (404, 409):
                    raise ApiError("PUT", f"/api/v1/namespaces/{name}/finalize", status, body)
        elif name not in accounts:
            status, body = client.raw("POST", f"/api/v1/namespaces/{name}/serviceaccounts", {
                "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
            if status >= 400 and status not in (403, 404, 409):  # 403: the namespace began terminating
                raise ApiError("POST", f"/api/v1/namespaces/{name}/serviceaccounts", status, body)
    owned: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        for owner in pod["metadata"].get("ownerReferences") or []:
            owned.setdefault(owner.get("uid", ""), []).append(pod)
    for daemonset in client.get("/apis/apps/v1/daemonsets")["items"]:
        metadata = daemonset["metadata"]
        if metadata.get("deletionTimestamp"):
            continue
        mine = [pod for pod in owned.get(metadata["uid"], []) if pod["spec"].get("nodeName")]
        ready = sum(_ready(pod) for pod in mine)
        wanted = {"observedGeneration": metadata.get("generation", 1), "currentNumberScheduled": len(mine),
                  "desiredNumberScheduled": len(mine), "numberMisscheduled": 0, "numberReady": ready,
                  "updatedNumberScheduled": len(mine), "numberAvailable": ready,
                  "numberUnavailable": len(mine) - ready}
        current = daemonset.get("status") or {}
        if any(current.get(key, 0) != value for key, value in wanted.items()):
            status, body = client.raw("PATCH", f"/apis/apps/v1/namespaces/{metadata['namespace']}/daemonsets/"
                                      f"{metadata['name']}/status", {"status": wanted},
                                      "application/merge-patch+json")
            if status >= 400 and status not in (404, 409):
                raise ApiError("PATCH", f"daemonset {metadata['name']}/status", status, body)
    for collection in (*FINALIZED_COLLECTIONS, *collections):
        status, listed = client.raw("GET", collection)
        if status == 404:
            continue  # a CRD not installed (yet, or any more)
        if status >= 400:
            raise ApiError("GET", collection, status, listed)
        for item in listed["items"]:
            metadata = item["metadata"]
            kept = [f for f in metadata.get("finalizers") or [] if f not in GC_FINALIZERS]
            if metadata.get("deletionTimestamp") and kept != (metadata.get("finalizers") or []):
                if any(metadata["uid"] == owner.get("uid") for pod in pods
                       for owner in pod["metadata"].get("ownerReferences") or []):
                    for pod in owned.get(metadata["uid"], []):
                        client.delete(f"/api/v1/namespaces/{pod['metadata']['namespace']}/pods/"
                                      f"{pod['metadata']['name']}", force=True)
                    continue  # next pass, once its pods are gone
                prefix, kind_plural = collection.rsplit("/", 1)
                path = (f"{prefix}/namespaces/{metadata['namespace']}/{kind_plural}/{metadata['name']}"
                        if metadata.get("namespace") else f"{collection}/{metadata['name']}")
                status, body = client.raw("PATCH", path, {"metadata": {"finalizers": kept or None}},
                                          "application/merge-patch+json")
                if status >= 400 and status not in (404, 409):
                    raise ApiError("PATCH", path, status, body)
    client.close()


def run_controllers(directory: Path, every: float = 0.3) -> None:
    """`controller_pass` until killed, as the cluster admin; transient errors are retried."""
    directory = directory.resolve()
    state = json.loads((directory / STATE_FILE).read_text())
    client = Client(state["server"], Pki(directory / "pki"))
    collections: list[str] = []
    while True:
        try:
            crds = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]
            collections = [f"/apis/{crd['spec']['group']}/{version['name']}/{crd['spec']['names']['plural']}"
                           for crd in crds for version in crd["spec"]["versions"] if version.get("storage")]
            controller_pass(client, collections)
        except (OSError, http.client.HTTPException, ClusterError) as error:
            print(f"controller pass: {error}", file=sys.stderr, flush=True)
            client.close()
        time.sleep(every)


# --- up and down ----------------------------------------------------------------------------------

@dataclass
class Cluster:
    directory: Path
    server: str
    processes: list[Process]
    pki: Pki

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "kubeconfig"

    def client(self) -> Client:
        return Client(self.server, self.pki)

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()
        (self.directory / STATE_FILE).unlink(missing_ok=True)


def binaries(bin_dir: Path | None = None) -> dict[str, Path]:
    """The control plane's binaries; ClusterError naming what is missing and how to build it."""
    where = bin_dir or Path(os.environ.get("GPU_AKS_ENGINES_BIN") or ENGINES_BIN)
    found = {name: where / name for name in BINARIES}
    missing = [name for name, path in found.items() if not os.access(path, os.X_OK)]
    if missing:
        raise ClusterError(f"{', '.join(missing)} not built in {where}: run `make engines` (needs Go)")
    return found


def _https_ok(url: str, context: ssl.SSLContext) -> bool:
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPSConnection(parsed.hostname or "", parsed.port, context=context, timeout=2)
    try:
        connection.request("GET", parsed.path)
        response = connection.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def start(directory: Path, bin_dir: Path | None = None, die_with_parent: bool = False,
          timeout: float = READY_TIMEOUT_S, log: Callable[[str], None] = lambda _: None) -> Cluster:
    """Starts the control plane under `directory` and returns once the API server is ready, the
    scheduler healthy and the `default` ServiceAccount exists; stops what it started on failure."""
    found = binaries(bin_dir)
    directory = directory.resolve()
    if (directory / STATE_FILE).exists():
        raise ClusterError(f"{directory / STATE_FILE} exists: a control plane may still run there; "
                           f"`python -m tools.localcluster down {directory}` first")
    logs = directory / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    pki = make_pki(directory / "pki")
    etcd_client, etcd_peer, api_port, scheduler_port = (free_port() for _ in range(4))
    server = f"https://127.0.0.1:{api_port}"
    processes: list[Process] = []
    cluster = Cluster(directory, server, processes, pki)

    def record() -> None:
        (directory / STATE_FILE).write_text(json.dumps({
            "server": server, "processes": [{"name": p.name, "binary": p.binary, "pid": p.pid} for p in processes]}))

    try:
        etcd_url, peer_url = f"http://127.0.0.1:{etcd_client}", f"http://127.0.0.1:{etcd_peer}"
        # etcd listens on loopback only, in plain HTTP: only the API server talks to it.
        processes.append(_spawn("etcd", found["etcd"], [
            "--name=local", f"--data-dir={directory / 'etcd'}", f"--listen-client-urls={etcd_url}",
            f"--advertise-client-urls={etcd_url}", f"--listen-peer-urls={peer_url}",
            f"--initial-advertise-peer-urls={peer_url}", f"--initial-cluster=local={peer_url}",
            "--unsafe-no-fsync=true", "--log-level=warn"], logs, die_with_parent))
        record()
        processes.append(_spawn("kube-apiserver", found["kube-apiserver"], [
            f"--etcd-servers={etcd_url}", "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={api_port}", f"--tls-cert-file={pki.path('apiserver.crt')}",
            f"--tls-private-key-file={pki.path('apiserver.key')}", f"--client-ca-file={pki.path('ca.crt')}",
            f"--service-account-key-file={pki.path('sa.pub')}",
            f"--service-account-signing-key-file={pki.path('sa.key')}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--authorization-mode=Node,RBAC",
            f"--enable-admission-plugins={','.join(AKS_ADMISSION_PLUGINS)}", "--allow-privileged=true",
            "--profiling=false", "--enable-priority-and-fairness=false", "--endpoint-reconciler-type=none",
            f"--cert-dir={directory / 'pki'}", "--v=0"], logs, die_with_parent))
        record()
        scheduler_config = directory / "scheduler-kubeconfig"
        _write_private(scheduler_config, json.dumps(kubeconfig(server, pki, "scheduler", "system:kube-scheduler")).encode())
        _write_private(directory / "kubeconfig", json.dumps(kubeconfig(server, pki, "admin", "gpu-aks-admin"),
                                                            indent=2).encode())
        client = cluster.client()
        deadline = started + timeout

        def wait(what: str, test: Callable[[], bool]) -> None:
            while not test():
                dead = [p.name for p in processes if not _alive(p.pid, p.binary)]
                if dead:
                    raise ClusterError(f"{', '.join(dead)} exited while waiting for {what}; see {logs}")
                if time.monotonic() > deadline:
                    raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}; see {logs}")
                time.sleep(0.1)

        def ready() -> bool:
            with contextlib.suppress(OSError, http.client.HTTPException):
                return client.raw("GET", "/readyz", timeout=2)[0] == 200
            client.close()
            return False

        wait("kube-apiserver /readyz", ready)
        log(f"kube-apiserver ready at {server} after {time.monotonic() - started:.1f} s")
        processes.append(_spawn("kube-scheduler", found["kube-scheduler"], [
            f"--kubeconfig={scheduler_config}", f"--authentication-kubeconfig={scheduler_config}",
            f"--authorization-kubeconfig={scheduler_config}", "--bind-address=127.0.0.1",
            f"--secure-port={scheduler_port}", "--leader-elect=false", "--v=0"], logs, die_with_parent))
        record()
        probe = ssl.create_default_context()
        probe.check_hostname = False
        probe.verify_mode = ssl.CERT_NONE
        wait("kube-scheduler /healthz", lambda: _https_ok(f"https://127.0.0.1:{scheduler_port}/healthz", probe))
        wait("the default namespace", lambda: client.exists("/api/v1/namespaces/default"))
        client.ensure_namespace("default")
        processes.append(_spawn("controllers", Path(sys.executable), [
            "-m", "tools.localcluster", "controllers", str(directory)], logs, die_with_parent, cwd=ROOT))
        record()
        client.close()
        log(f"control plane ready in {time.monotonic() - started:.1f} s; kubeconfig: {directory / 'kubeconfig'}")
        return cluster
    except BaseException:
        cluster.stop()
        raise


def stop(directory: Path) -> int:
    """Stops what `up` started in `directory` (by the pids it recorded, each checked to still be the
    binary it started). Returns how many processes were still running."""
    state_path = directory.resolve() / STATE_FILE
    if not state_path.exists():
        return 0
    state = json.loads(state_path.read_text())
    processes = [Process(p["name"], p["binary"], int(p["pid"])) for p in state.get("processes", [])]
    running = sum(_alive(p.pid, p.binary) for p in processes)
    for process in reversed(processes):
        process.stop()
    state_path.unlink(missing_ok=True)
    return running


@contextlib.contextmanager
def running(directory: Path, bin_dir: Path | None = None) -> Iterator[Cluster]:
    """The control plane for the length of a `with` block (tests): its processes die with this one."""
    cluster = start(directory, bin_dir, die_with_parent=True)
    try:
        yield cluster
    finally:
        cluster.stop()


def register_stack_nodes(directory: Path, outputs_file: Path, copies: int) -> int:
    directory = directory.resolve()
    try:
        state = json.loads((directory / STATE_FILE).read_text())
        outputs = json.loads(outputs_file.read_text())
    except (OSError, ValueError) as error:
        raise ClusterError(f"cannot read {error}") from None
    outputs = outputs.get("outputs", outputs) if isinstance(outputs, dict) else {}
    client = Client(state["server"], Pki(directory / "pki"))
    for node in stack_nodes(outputs, copies):
        client.register_node(node)
        print(f"==> node {node['metadata']['name']} ({node['metadata']['annotations']['gpu-aks.io/test-pool']}) Ready")
    client.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.localcluster", description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start etcd, kube-apiserver and kube-scheduler; write DIR/kubeconfig")
    up.add_argument("directory", type=Path)
    up.add_argument("--bin", type=Path, help=f"where the binaries are (default {ENGINES_BIN})")
    down = sub.add_parser("down", help="stop everything `up` started in DIR")
    down.add_argument("directory", type=Path)
    nodes = sub.add_parser("nodes", help="register nodes shaped like every pool of a stack's outputs, Ready")
    nodes.add_argument("directory", type=Path)
    nodes.add_argument("outputs", type=Path, metavar="OUTPUTS.json",
                       help="the stack's outputs (`pulumi stack output --json`, or tools.preview --json's)")
    nodes.add_argument("--copies", type=int, default=1, help="nodes of each kind per pool (default 1)")
    controllers = sub.add_parser("controllers", help="(started by up) the controller loops the platform waits on")
    controllers.add_argument("directory", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "controllers":
            run_controllers(args.directory)
        if args.command == "nodes":
            return register_stack_nodes(args.directory, args.outputs, args.copies)
        if args.command == "up":
            start(args.directory, args.bin, log=lambda line: print(f"==> {line}", flush=True))
            return 0
        stopped = stop(args.directory)
        print(f"==> stopped {stopped} process(es) of {args.directory.resolve()}")
        return 0
    except ClusterError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
