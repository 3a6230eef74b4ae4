"""The local cluster's credentials, under DIR/pki: one CA signs the API server's serving certificate and every
component's client certificate; the service-account signing key; and the bearer tokens of named identities.

Who is who follows kube-apiserver's authenticators and RBAC's bootstrap policy (k8s.io/kubernetes v1.37.2
`plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go`): a client certificate's CN is the user and its O
the groups; `system:kube-scheduler` and `system:kube-controller-manager` are bound to their roles there."""

from __future__ import annotations

import base64
import csv
import datetime
import io
import ipaddress
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: dev's `clusterNetwork.serviceCidr` (the API server takes the first address for `kubernetes`).
SERVICE_CIDR = "10.0.0.0/16"
#: The client certificates `make_pki` issues: file stem -> (user, groups).
CLIENTS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    # The person running the cluster: cluster-admin through system:masters, as `az aks get-credentials --admin`.
    "admin": ("gpu-aks-admin", ("system:masters",)),
    "scheduler": ("system:kube-scheduler", ()),
    # With --use-service-account-credentials the controllers act as their own ServiceAccounts; this identity
    # only starts them (bootstrap policy: ClusterRoleBinding system:kube-controller-manager).
    "controller-manager": ("system:kube-controller-manager", ()),
    # kwok writes every node's and pod's status and the nodes' Leases, as all the kubelets together would;
    # no bootstrap role covers that (each kubelet is limited to its own node by the Node authorizer).
    "kwok": ("kwok-controller", ("system:masters",)),
}
TOKENS_FILE = "tokens.csv"
#: What kube-apiserver's token file cannot hold in a user or group name (k8s.io/apiserver
#: pkg/authentication/token/tokenfile: a CSV record, the groups one comma-separated field).
_UNSAFE = set(',"\r\n')


class IdentityError(ValueError):
    """A user or group name the token file cannot hold."""


def write_private(path: Path, data: bytes) -> None:
    """Writes `data` readable by this user only (keys, tokens, kubeconfigs holding either)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


@dataclass(frozen=True)
class Pki:
    """The files under DIR/pki."""

    directory: Path

    def path(self, name: str) -> Path:
        return self.directory / name

    def data(self, name: str) -> str:
        return base64.b64encode(self.path(name).read_bytes()).decode()

    def kubeconfig(self, server: str, client: str) -> dict[str, Any]:
        """A self-contained kubeconfig (certificates inline), as `az aks get-credentials` writes one."""
        user = CLIENTS[client][0]
        return _kubeconfig(server, self.data("ca.crt"), user, {
            "client-certificate-data": self.data(f"{client}.crt"), "client-key-data": self.data(f"{client}.key")})

    # --- named identities ------------------------------------------------------------------------

    def identities(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """user -> (token, groups), as the token file holds them."""
        path = self.path(TOKENS_FILE)
        if not path.exists():
            return {}
        found = {}
        for row in csv.reader(io.StringIO(path.read_text())):
            if len(row) >= 3:
                found[row[1]] = (row[0], tuple(g for g in (row[3] if len(row) > 3 else "").split(",") if g))
        return found

    def add_identity(self, user: str, groups: Sequence[str]) -> bool:
        """Gives `user` (in `groups`) a bearer token in the token file; False when it already has one with
        exactly these groups (the file is unchanged)."""
        for name in (user, *groups):
            if not name or _UNSAFE & set(name) or not name.isprintable():
                raise IdentityError(f"{json.dumps(name)}: a user or group name must be non-empty, printable and "
                                    "without a comma or a double quote (kube-apiserver's token file is a CSV file)")
        known = self.identities()
        if user in known and known[user][1] == tuple(groups):
            return False
        known[user] = (known[user][0] if user in known else secrets.token_urlsafe(32), tuple(groups))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for name, (token, member_of) in known.items():
            writer.writerow([token, name, name, ",".join(member_of)])
        write_private(self.path(TOKENS_FILE), out.getvalue().encode())
        return True

    def identity_kubeconfig(self, server: str, user: str) -> dict[str, Any]:
        """A kubeconfig that authenticates as `user` with its bearer token (the user must have one)."""
        return _kubeconfig(server, self.data("ca.crt"), user, {"token": self.identities()[user][0]})


def _kubeconfig(server: str, ca_data: str, user: str, credentials: Mapping[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "local",
        "clusters": [{"name": "local", "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": dict(credentials)}],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
    }


def make_pki(directory: Path) -> Pki:
    """A CA, the API server's serving certificate (loopback and the in-cluster names), a client certificate per
    `CLIENTS` entry, the service-account signing key, and an empty token file. ECDSA P-256: quick to make, and
    every component accepts it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=30))

    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    def save_key(name: str, private: ec.EllipticCurvePrivateKey) -> None:
        write_private(directory / name, private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    def name_of(common: str, orgs: Sequence[str] = ()) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common),
                          *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in orgs)])

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
    for stem, (user, groups) in CLIENTS.items():
        issue(stem, name_of(user, groups), ExtendedKeyUsageOID.CLIENT_AUTH)
    signing = key()
    save_key("sa.key", signing)
    (directory / "sa.pub").write_bytes(signing.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    write_private(directory / TOKENS_FILE, b"")
    return Pki(directory)
