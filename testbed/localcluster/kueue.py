"""Kueue's own controller (sigs.k8s.io/kueue v0.17.0, built from its Go module by `make engines` into
build/engines/bin/kueue-manager: testbed/engines/kueue/) against the local control plane.

What a cluster gets from Kueue's release manifests, fitted to loopback:

- **The CRDs** of `config/components/crd/bases/` (the module's files, copied by `make engines`), with the
  conversion webhook Kueue's kustomization patches into five of them (`config/components/crd/patches/
  webhook_in_*.yaml`) pointed at the manager on loopback. The manager injects its CA into exactly those five
  (`pkg/util/cert/cert.go`, `buildCertRotatorConfig`), and waits until it has: a CRD without the webhook would
  keep it waiting (open-policy-agent/cert-controller v0.16.0 `injectCertToConversionWebhook` fails on it).
- **Webhook serving certificates the API server trusts.** Kueue manages its own (`internalCertManagement`): it
  keeps the CA and serving certificate of the Secret `kueue-webhook-server-cert` while they are valid (the CA for
  `kueue-ca`, the certificate for `kueue-webhook-service.kueue-system.svc`, both beyond 90 days ahead; the CA key
  RSA in PKCS #1: cert-controller's `ValidCert` and `buildArtifactsFromSecret`), serves them from its `certDir`
  and injects the CA into the webhook configurations; the files come from the Secret's volume mount, which the
  rotator waits for (`ensureCertsMounted`) and which is written here. The Secret is written first with such a pair whose
  certificate is also valid for 127.0.0.1, so the API server, told `url: https://127.0.0.1:PORT/...`, checks
  the certificate Kueue serves against that address. (With its own certificate management off, Kueue reads a
  metrics certificate from the fixed path /etc/kueue/metrics/certs, `cmd/kueue/main.go`, which a test must not
  write.)
- **The webhook configurations** of `config/components/webhook/manifests.yaml`, named as the manager looks
  them up (`kueue-{mutating,validating}-webhook-configuration`), for Kueue's own kinds and the one integration
  enabled here (`batch/job`). The others are left out: the pod, Deployment and StatefulSet webhooks would send
  every such object of the cluster to Kueue, and a webhook whose integration is off is not served.

The manager runs as the cluster admin (Kueue's ClusterRole is not what is tested), without leader election,
metrics, health probes or the visibility server (`VisibilityOnDemand=false`: it would bind a fixed port); it is
ready when its webhooks answer (the main manager serves them once its certificates are in place). `stop_kueue`
removes the webhook configurations before the manager goes, so the cluster's other tests never meet a webhook
with nothing behind it."""

from __future__ import annotations

import base64
import contextlib
import datetime
import ipaddress
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from testbed.build import BIN, LIBEXEC

from .client import ApiError, Client, ClusterError, InputError
from .control_plane import CRDS, Cluster, _record, _wait
from .pki import write_private
from .processes import Process, free_port, spawn

KUEUE = BIN / "kueue-manager"
FILES = LIBEXEC / "kueue"
NAMESPACE = "kueue-system"
SERVICE = "kueue-webhook-service"
SECRET = "kueue-webhook-server-cert"
#: The CRDs Kueue converts between v1beta1 and v1beta2 (and injects its CA into).
CONVERTED = ("localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters")
#: The API groups whose webhooks are kept: Kueue's own kinds and batch/v1 Job.
WEBHOOK_GROUPS = frozenset({"kueue.x-k8s.io", "batch"})
WEBHOOK_CONFIGURATIONS = {
    "MutatingWebhookConfiguration": ("mutatingwebhookconfigurations", "kueue-mutating-webhook-configuration"),
    "ValidatingWebhookConfiguration": ("validatingwebhookconfigurations", "kueue-validating-webhook-configuration"),
}
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
READY_TIMEOUT_S = 180.0


def missing() -> str | None:
    """What `make engines` has not built for Kueue, or None."""
    absent = [str(path) for path in (KUEUE, FILES / "webhook-manifests.yaml") if not path.exists()]
    if not absent and not list((FILES / "crds").glob("*.yaml")):
        absent.append(str(FILES / "crds"))
    return f"{', '.join(absent)} not built: run `make engines` (needs Go)" if absent else None


@dataclass
class Kueue:
    process: Process
    webhook_port: int


def _certificates() -> dict[str, bytes]:
    """ca.crt, ca.key (RSA, PKCS #1), tls.crt (for the Service's name and 127.0.0.1), tls.key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kueue"),
                         x509.NameAttribute(NameOID.COMMON_NAME, "kueue-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=False,
                                       content_commitment=False, key_encipherment=True, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectAlternativeName([x509.DNSName("kueue-ca")]), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                                                  f"{SERVICE}.{NAMESPACE}.svc")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(f"{SERVICE}.{NAMESPACE}.svc"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return {"ca.crt": ca.public_bytes(pem),
            "ca.key": ca_key.private_bytes(pem, serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()),
            "tls.crt": cert.public_bytes(pem),
            "tls.key": key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())}


def _put(client: Client, collection: str, obj: Mapping[str, Any]) -> None:
    """Creates `obj`, or replaces the one of its name."""
    status, body = client.raw("POST", collection, obj)
    if status == 409:
        path = f"{collection}/{obj['metadata']['name']}"
        current = client.get(path)
        client.request("PUT", path, {**obj, "metadata": {**obj["metadata"],
                                                         "resourceVersion": current["metadata"]["resourceVersion"]}})
    elif status >= 400:
        raise ApiError("POST", f"{collection} ({obj['metadata']['name']})", status, body)


def _crds(url: str, ca_bundle: str) -> Iterator[dict[str, Any]]:
    for path in sorted((FILES / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"]["names"]["plural"] in CONVERTED:
            crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": f"{url}/convert", "caBundle": ca_bundle}, "conversionReviewVersions": ["v1"]}}
        yield crd


def _webhook_configurations(url: str, ca_bundle: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for document in yaml.safe_load_all((FILES / "webhook-manifests.yaml").read_text()):
        if not document:
            continue
        resource, name = WEBHOOK_CONFIGURATIONS[document["kind"]]
        webhooks = []
        for webhook in document.get("webhooks") or []:
            groups = {group for rule in webhook.get("rules") or [] for group in rule.get("apiGroups") or []}
            if groups and groups <= WEBHOOK_GROUPS:
                path = webhook["clientConfig"]["service"]["path"]
                webhooks.append({**webhook, "clientConfig": {"url": f"{url}{path}", "caBundle": ca_bundle}})
        yield f"{ADMISSION}/{resource}", {**document, "metadata": {"name": name}, "webhooks": webhooks}


def start_kueue(cluster: Cluster, timeout: float = READY_TIMEOUT_S) -> Kueue:
    """Installs Kueue's CRDs, certificates and webhooks and starts its manager; returns once its webhooks
    answer (a dry-run ResourceFlavor passes them). Stops what it started on failure."""
    problem = missing()
    if problem:
        raise InputError(problem)
    deadline = time.monotonic() + timeout
    client = cluster.client()
    home = cluster.directory / "kueue"
    (home / "certs").mkdir(parents=True, exist_ok=True)
    webhook_port = free_port()
    url = f"https://127.0.0.1:{webhook_port}"
    secrets = _certificates()
    ca_bundle = base64.b64encode(secrets["ca.crt"]).decode()
    try:
        client.ensure_namespace(NAMESPACE)
        _put(client, f"/api/v1/namespaces/{NAMESPACE}/secrets", {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET, "namespace": NAMESPACE},
            "data": {name: base64.b64encode(value).decode() for name, value in secrets.items()}})
        for crd in _crds(url, ca_bundle):
            _put(client, CRDS, crd)
        for crd in _crds(url, ca_bundle):
            name = crd["metadata"]["name"]
            client.wait_for(f"CRD {name} to be established", lambda name=name: any(  # type: ignore[misc]
                c["type"] == "Established" and c["status"] == "True"
                for c in client.get(f"{CRDS}/{name}").get("status", {}).get("conditions") or []),
                timeout=max(1.0, deadline - time.monotonic()), every=0.1)
        for collection, configuration in _webhook_configurations(url, ca_bundle):
            _put(client, collection, configuration)
        config = {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "namespace": NAMESPACE,
            "health": {"healthProbeBindAddress": "0"}, "metrics": {"bindAddress": "0"},
            "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(home / "certs")},
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": True, "webhookServiceName": SERVICE, "webhookSecretName": SECRET},
            "manageJobsWithoutQueueName": False, "integrations": {"frameworks": ["batch/job"]}}
        (home / "config.yaml").write_text(json.dumps(config, indent=2))
        # What the Secret's volume mount gives the manager's pod: the rotator waits for these files and never
        # writes them itself (cert-controller `ensureCertsMounted`); the webhook server serves them.
        for file_name in ("tls.crt", "tls.key"):
            write_private(home / "certs" / file_name, secrets[file_name])
        process = spawn("kueue-manager", KUEUE, [
            f"--config={home / 'config.yaml'}", f"--kubeconfig={cluster.kubeconfig}",
            "--feature-gates=VisibilityOnDemand=false"], cluster.logs, cluster.die_with_parent)
        cluster.processes.append(process)
        _record(cluster.directory, cluster.server, cluster.processes)
        kueue = Kueue(process, webhook_port)
        probe = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "probe"}}
        _wait([process], cluster.logs, deadline, "Kueue's webhooks", lambda: client.raw(
            "POST", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors?dryRun=All", probe)[0] == 201)
        return kueue
    except BaseException:
        _remove(client, cluster)
        raise
    finally:
        client.close()


def _remove(client: Client, cluster: Cluster) -> None:
    for resource, name in WEBHOOK_CONFIGURATIONS.values():
        with contextlib.suppress(ApiError):
            client.delete(f"{ADMISSION}/{resource}/{name}")
    for process in [p for p in cluster.processes if p.name == "kueue-manager"]:
        process.stop()
        cluster.processes.remove(process)
    _record(cluster.directory, cluster.server, cluster.processes)


def stop_kueue(cluster: Cluster) -> None:
    """Removes Kueue's webhooks, then stops its manager (its CRDs and objects stay)."""
    client = cluster.client()
    try:
        _remove(client, cluster)
    finally:
        client.close()


@contextlib.contextmanager
def running_kueue(cluster: Cluster) -> Iterator[Kueue]:
    kueue = start_kueue(cluster)
    try:
        yield kueue
    finally:
        stop_kueue(cluster)


__all__ = ["ClusterError", "Kueue", "missing", "running_kueue", "start_kueue", "stop_kueue"]
