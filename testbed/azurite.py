"""Microsoft's Azure Storage emulator, Azurite (npm, pinned in testbed/engines/azurite/ and installed by
`make engines` into build/engines/node/azurite/), serving Blob Storage on loopback as a storage account does to
a developer after `az login`: HTTPS, Entra ID bearer tokens, no account key.

The Pulumi CLI's `azblob://` backend (pulumi `pkg/backend/diy/backend.go`, gocloud.dev `blob/azureblob`) reaches
it with the settings docs/operations.md gives, `AZURE_STORAGE_ACCOUNT` and no key, and gets its token from
azidentity's `DefaultAzureCredential` whose `AzureCLICredential` runs `az account get-access-token -o json
--resource https://storage.azure.com` (azidentity v1.14.0 `azure_cli_credential.go`). What stands in for Entra
ID is that `az`: a script that prints a token Azurite's `--oauth basic` accepts (Azurite
`src/blob/authentication/BlobTokenAuthenticator.ts`: issuer, audience and lifetime are checked, the signature
and the caller's roles are not). Two settings are the emulator's own: `AZURE_STORAGE_DOMAIN` names the loopback
address (gocloud puts the account in the path for a domain starting `127.0.0.1`), and `SSL_CERT_FILE` makes the
CLI trust the emulator's self-signed certificate (bearer tokens travel over HTTPS only: azcore's
`BearerTokenPolicy`). A third is this machine's: `AZURE_TOKEN_CREDENTIALS=dev` (`BlobService.env` says why)."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import datetime
import ipaddress
import json
import os
import re
import signal
import ssl
import subprocess
import time
import urllib.request
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .build import OUT

MODULES = OUT / "node" / "azurite" / "node_modules"
#: Node 22 from the pinned package set: Azurite 3.37.0's package.json asks for node >=22.
NODE = MODULES / ".bin" / "node"
BLOB_SERVICE = MODULES / "azurite" / "dist" / "src" / "blob" / "main.js"
#: Azurite's one storage account (its EMULATOR_ACCOUNT_NAME).
ACCOUNT = "devstoreaccount1"
#: The Blob REST API version Azurite 3.37.0 serves (BLOB_API_VERSION), and the one azblob v1.8.0 sends.
API_VERSION = "2026-06-06"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
#: What would sign the CLI in instead of DefaultAzureCredential (gocloud.dev `azureblob.go`, `newCredInfoFromEnv`),
#: or pick a service principal for it (azidentity's EnvironmentCredential).
KEYS = ("AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGEBLOB_CONNECTIONSTRING",
        "AZURE_STORAGE_SAS_TOKEN", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_TENANT_ID")
STARTED = re.compile(rb"listens on (https://127\.0\.0\.1:\d+)")


def missing() -> str | None:
    """Why Azurite cannot run here, or None."""
    for path in (NODE, BLOB_SERVICE):
        if not path.exists():
            return f"{path.relative_to(OUT.parent.parent)} is not installed (`make engines` installs it with npm)"
    return None


def bearer_token(lifetime: datetime.timedelta = datetime.timedelta(hours=1)) -> str:
    """An Entra ID access token for Azure Storage as Azurite's basic OAuth checks it: issuer, audience, lifetime.
    Unsigned: Azurite does not check signatures, and nothing else reads it."""
    now = int(time.time())

    def part(value: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    claims = {"aud": "https://storage.azure.com", "iss": f"https://sts.windows.net/{TENANT}/", "tid": TENANT,
              "oid": "00000000-0000-0000-0000-0000000000aa", "nbf": now - 60, "iat": now - 60,
              "exp": now + int(lifetime.total_seconds())}
    return f"{part({'typ': 'JWT', 'alg': 'RS256'})}.{part(claims)}.c2lnbmF0dXJl"


def _az_script(token: str, calls: Path) -> str:
    expires = datetime.datetime.now() + datetime.timedelta(hours=1)  # az prints local time
    answer = json.dumps({"accessToken": token, "expiresOn": expires.strftime("%Y-%m-%d %H:%M:%S.000000"),
                         "expires_on": int(expires.timestamp()), "subscription": "", "tenant": TENANT,
                         "tokenType": "Bearer"})
    return ("#!/bin/sh\n"
            "# Stands in for the Azure CLI after `az login` (testbed/azurite.py): only the token command answers.\n"
            f"printf '%s\\n' \"$*\" >> '{calls}'\n"
            'case "$*" in\n'
            f"  'account get-access-token'*) printf '%s\\n' '{answer}' ;;\n"
            '  *) echo "az stand-in: only account get-access-token" >&2; exit 1 ;;\n'
            "esac\n")


def _self_signed(folder: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "azurite-loopback")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "azurite.crt", folder / "azurite.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


@dataclass(frozen=True)
class BlobService:
    """A running Azurite: `endpoint` is the account's URL, `cert` the certificate it serves, `bin` a folder
    holding the `az` that hands out its tokens, and `bin/az-calls.log` each command it was asked."""

    endpoint: str
    cert: Path
    bin: Path
    token: str

    def az_calls(self) -> list[str]:
        calls = self.bin / "az-calls.log"
        return calls.read_text().splitlines() if calls.exists() else []

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with docs/operations.md's AZURE_STORAGE_ACCOUNT, what the CLI needs beside it to reach the
        emulator (the module's docstring says why each), and the `az` first on PATH. No key, connection string
        or SAS token (they would take the place of DefaultAzureCredential), no service principal."""
        kept = {key: value for key, value in base.items() if key not in KEYS}
        return {**kept, "AZURE_STORAGE_ACCOUNT": ACCOUNT, "AZURE_STORAGE_DOMAIN": self.endpoint.split("/")[2],
                "SSL_CERT_FILE": str(self.cert), "PATH": f"{self.bin}{os.pathsep}{base.get('PATH', '')}",
                # The developer tools' credentials only (azidentity `default_azure_credential.go`: "dev" is
                # AzureCLICredential, then azd's and PowerShell's): this machine's network answers the managed
                # identity endpoint (169.254.169.254) with HTTP 403, which DefaultAzureCredential takes for a
                # managed identity that refused, and stops there, before the Azure CLI.
                "AZURE_TOKEN_CREDENTIALS": "dev"}

    def _request(self, method: str, path: str) -> bytes:
        request = urllib.request.Request(f"{self.endpoint}/{path}", method=method, headers={
            "Authorization": f"Bearer {self.token}", "x-ms-version": API_VERSION,
            "x-ms-date": datetime.datetime.now(datetime.UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")})
        context = ssl.create_default_context(cafile=str(self.cert))
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            return bytes(answer.read())

    def create_container(self, name: str) -> None:
        """As `az storage container create -n NAME --auth-mode login` does (Create Container)."""
        self._request("PUT", f"{name}?restype=container")

    def blobs(self, container: str) -> list[str]:
        """The names in `container` (List Blobs; the state here stays under one page of 5,000)."""
        listing = ElementTree.fromstring(self._request("GET", f"{container}?restype=container&comp=list"))
        return [node.text or "" for node in listing.iter("Name")]

    def read(self, container: str, name: str) -> bytes:
        return self._request("GET", f"{container}/{name}")


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG (1): the kernel kills Azurite when the test run that started it exits, however it exits.
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


@contextlib.contextmanager
def blob_service(folder: Path, timeout: float = 60.0) -> Iterator[BlobService]:
    """Azurite's Blob service on 127.0.0.1 (a port the kernel picks), HTTPS with basic OAuth, its data in
    `folder`; stopped on exit. Its log is `folder/azurite.log`."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = _self_signed(folder)
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    token = bearer_token()
    (bin_dir / "az").write_text(_az_script(token, bin_dir / "az-calls.log"))
    (bin_dir / "az").chmod(0o755)
    log_path = folder / "azurite.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(NODE), str(BLOB_SERVICE), "--blobHost", "127.0.0.1", "--blobPort", "0",
             "--location", str(folder / "data"), "--oauth", "basic", "--cert", str(cert), "--key", str(key),
             "--disableTelemetry", "--silent"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_die_with_parent)
    try:
        deadline = time.monotonic() + timeout
        while not (found := STARTED.search(log_path.read_bytes())):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Azurite did not start (exit {process.poll()}):\n"
                                   f"{log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        yield BlobService(f"{found.group(1).decode()}/{ACCOUNT}", cert, bin_dir, token)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
