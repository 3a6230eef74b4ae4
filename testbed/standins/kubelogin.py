"""A stand-in for kubelogin (Azure/kubelogin), the exec credential plugin an AKS kubeconfig runs:
`kubelogin get-token --login MODE --server-id ID [...]` prints an ExecCredential whose bearer token the cluster
tier's API server maps to an identity, where kubelogin would sign in to Microsoft Entra ID and print its token.

It accepts exactly the arguments kubelogin's converter writes for each login mode (`kubelogin
convert-kubeconfig -l MODE`; Azure/kubelogin `pkg/internal/converter/convert.go`, whose `convert_test.go` cases
components/kubeconfig.py and tests/test_kubeconfig.py follow), for AKS's managed Entra ID server application,
and refuses the rest, naming the argument: a kubeconfig the platform did not convert (AKS hands out `--login
devicecode`, which waits for a person at a browser) fails here as it would hang in CI. Like kubelogin, a mode
reads its secrets from the environment: `spn` a client secret (AAD_SERVICE_PRINCIPAL_CLIENT_SECRET or
AZURE_CLIENT_SECRET), `workloadidentity` AZURE_CLIENT_ID, AZURE_TENANT_ID and a federated token
(AZURE_FEDERATED_TOKEN_FILE, or GitHub Actions' ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN).

Who is signed in is the test's to say, as `az login` says it for kubelogin's azurecli mode: GPU_AKS_KUBELOGIN_AS
names a kubeconfig of the cluster tier (`python -m tools.localcluster identity DIR USER`), and its user's bearer
token is the one printed (or its client certificate: the local cluster's admin kubeconfig has no token).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

import yaml
from gpu_aks_policies.documents import DocumentError, Limits, read_file

#: The server application ID of AKS-managed Microsoft Entra integration, the same in every tenant: the
#: `--server-id` of every kubeconfig AKS hands out (learn.microsoft.com/azure/aks/kubelogin-authentication).
AKS_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
IDENTITY_ENV = "GPU_AKS_KUBELOGIN_AS"
#: Where each command line the stand-in was run with is appended, one JSON array a line (if set).
RECORD_ENV = "GPU_AKS_KUBELOGIN_LOG"
#: For each login mode the converter writes: the flags it always writes, and those it keeps when the input
#: has them (convert.go; `--cache-dir` in every mode).
FLAGS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {
    "azurecli": (frozenset({"--server-id"}), frozenset({"--cache-dir"})),
    "spn": (frozenset({"--server-id", "--client-id", "--tenant-id"}), frozenset({"--environment", "--cache-dir"})),
    "msi": (frozenset({"--server-id"}), frozenset({"--cache-dir"})),
    "workloadidentity": (frozenset({"--server-id"}), frozenset({"--cache-dir"})),
}


class LoginError(Exception):
    """What kubelogin would refuse or fail at; printed to stderr, exit 1."""


def parse(args: Sequence[str]) -> tuple[str, dict[str, str]]:
    """The login mode and the flags of a `get-token` command line, each flag with one value."""
    if not args or args[0] != "get-token":
        raise LoginError(f"only `kubelogin get-token` is served here, not {list(args[:1])}")
    flags: dict[str, str] = {}
    rest = list(args[1:])
    while rest:
        flag = rest.pop(0)
        if not flag.startswith("--") or not rest or rest[0].startswith("--"):
            raise LoginError(f"expected `--flag value` pairs after get-token, got {flag!r}")
        if flag in flags:
            raise LoginError(f"{flag} given twice")
        flags[flag] = rest.pop(0)
    mode = flags.pop("--login", "devicecode")
    if mode not in FLAGS:
        raise LoginError(f"--login {mode}: kubelogin converted for a non-interactive mode writes one of "
                         f"{', '.join(sorted(FLAGS))} (devicecode waits for a person at a browser)")
    required, optional = FLAGS[mode]
    missing = sorted(required - flags.keys())
    extra = sorted(flags.keys() - required - optional)
    if missing or extra:
        raise LoginError(f"--login {mode}: kubelogin's converter writes {sorted(required)}"
                         f"{f' and may keep {sorted(optional)}' if optional else ''}; missing {missing}, extra {extra}")
    if flags["--server-id"] != AKS_SERVER_ID:
        raise LoginError(f"--server-id {flags['--server-id']}: AKS-managed Entra ID's server application is "
                         f"{AKS_SERVER_ID}")
    return mode, flags


def check_environment(mode: str, env: Mapping[str, str]) -> None:
    """What each mode reads from the environment, as kubelogin does, refused when absent."""
    if mode == "spn" and not (env.get("AAD_SERVICE_PRINCIPAL_CLIENT_SECRET") or env.get("AZURE_CLIENT_SECRET")):
        raise LoginError("--login spn needs the client secret in AAD_SERVICE_PRINCIPAL_CLIENT_SECRET or "
                         "AZURE_CLIENT_SECRET")
    if mode == "workloadidentity":
        absent = [name for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID") if not env.get(name)]
        federated = env.get("AZURE_FEDERATED_TOKEN_FILE") or (
            env.get("ACTIONS_ID_TOKEN_REQUEST_URL") and env.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN"))
        if absent or not federated:
            raise LoginError("--login workloadidentity needs AZURE_CLIENT_ID, AZURE_TENANT_ID and "
                             "AZURE_FEDERATED_TOKEN_FILE (or GitHub Actions' ID token variables); missing "
                             f"{absent + ([] if federated else ['AZURE_FEDERATED_TOKEN_FILE'])}")


def read_identity(path: str) -> str:
    """The kubeconfig GPU_AKS_KUBELOGIN_AS names, read as the tools read every path a user gives them: a regular
    file of bounded size (`policies/documents.py`, `read_file`), so a FIFO, /dev/zero or a folder is an error
    that names the variable, not a hang or a flood (as azure_native.py reads GPU_AKS_LOCAL_KUBECONFIG)."""
    try:
        return read_file(path, Limits(max_bytes=1024 * 1024))
    except DocumentError as error:
        raise LoginError(f"{IDENTITY_ENV}: {error}") from None


def signed_in_credential(env: Mapping[str, str]) -> dict[str, str]:
    """The credential of the identity the test signed in as (GPU_AKS_KUBELOGIN_AS): its bearer token, as kubelogin
    prints; or, for a kubeconfig whose user holds a client certificate (the local cluster's admin), that
    certificate, which an ExecCredential may carry too (client.authentication.k8s.io/v1beta1)."""
    path = env.get(IDENTITY_ENV)
    if not path:
        raise LoginError(f"nobody is signed in: set {IDENTITY_ENV} to a kubeconfig of the local cluster's identity")
    try:
        user = yaml.safe_load(read_identity(path))["users"][0]["user"]
    except (yaml.YAMLError, KeyError, IndexError, TypeError) as error:
        raise LoginError(f"{IDENTITY_ENV}: {path} is not a kubeconfig with a user ({error})") from None
    if isinstance(user, dict) and isinstance(user.get("token"), str) and user["token"]:
        return {"token": user["token"]}
    try:
        return {"clientCertificateData": base64.b64decode(user["client-certificate-data"]).decode(),
                "clientKeyData": base64.b64decode(user["client-key-data"]).decode()}
    except (KeyError, TypeError, ValueError):
        raise LoginError(f"{IDENTITY_ENV}: {path}'s user has neither a bearer token nor client certificate data") from None


def exec_credential(credential: Mapping[str, str], now: datetime) -> dict[str, object]:
    """What kubelogin prints for client-go (client.authentication.k8s.io/v1beta1 ExecCredential)."""
    return {"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1beta1", "spec": {"interactive": False},
            "status": {"expirationTimestamp": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), **credential}}


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    environment = os.environ if env is None else env
    args = list(sys.argv[1:] if argv is None else argv)
    if environment.get(RECORD_ENV):
        with open(environment[RECORD_ENV], "a", encoding="utf-8") as record:
            record.write(json.dumps(args) + "\n")
    try:
        mode, _ = parse(args)
        check_environment(mode, environment)
        credential = exec_credential(signed_in_credential(environment), datetime.now(UTC))
    except LoginError as error:
        print(f"kubelogin (gpu-aks stand-in): {error}", file=sys.stderr)
        return 1
    print(json.dumps(credential))
    return 0


if __name__ == "__main__":
    sys.exit(main())
