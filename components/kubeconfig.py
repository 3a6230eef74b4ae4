"""Make the kubeconfig AKS hands out usable without a person at a browser. Pure, no Pulumi imports.

On a cluster with Azure AD (the default here, local accounts disabled), `listClusterUserCredential`
returns a `kubelogin` exec config that logs in with `--login devicecode`: it waits for someone to type
a code into a browser, which never happens in CI or inside `pulumi up`. `with_kubelogin_mode` does
what `kubelogin convert-kubeconfig -l <mode>` does, argument for argument (Azure/kubelogin
`pkg/internal/converter/convert.go`, whose `convert_test.go` cases are this module's tests):

- every mode: `get-token --login <mode> --server-id <id>` (`--cache-dir` kept when present);
- `azurecli`: nothing more. The input's `--tenant-id` is dropped on purpose, because an
  `az login --identity` session refuses a tenant (kubelogin issue #123);
- `spn`: `--client-id` and `--tenant-id` from the input (required), `--environment` when present.
  kubelogin reads the service principal from `AAD_SERVICE_PRINCIPAL_CLIENT_ID`/`_SECRET` (or
  `AZURE_CLIENT_ID`/`AZURE_CLIENT_SECRET`) at run time, which take precedence;
- `msi`: nothing more (a user-assigned identity comes from `AZURE_CLIENT_ID`);
- `workloadidentity`: nothing more; kubelogin reads `AZURE_CLIENT_ID`, `AZURE_TENANT_ID` and
  `AZURE_FEDERATED_TOKEN_FILE`, and under GitHub Actions without a token file the Actions OIDC
  token (`ACTIONS_ID_TOKEN_REQUEST_URL`, `ACTIONS_ID_TOKEN_REQUEST_TOKEN`).
The exec entry is replaced whole (apiVersion `client.authentication.k8s.io/v1beta1`), keeping an
existing install hint, as the converter does. Users that are not kubelogin exec users are untouched.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

#: The kubelogin release whose converter this module follows; the workflows install this one.
KUBELOGIN_VERSION = "v0.2.19"
EXEC_API_VERSION = "client.authentication.k8s.io/v1beta1"
KUBELOGIN_INSTALL_HINT = ("\nkubelogin is not installed which is required to connect to AAD enabled cluster.\n\n"
                          "To learn more, please go to https://azure.github.io/kubelogin/\n")


class KubeconfigError(ValueError):
    pass


def decode_kubeconfig(value: str) -> str:
    """The API returns the kubeconfig base64-encoded."""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise KubeconfigError("the kubeconfig AKS returned is not base64-encoded UTF-8 text") from None


def _arg(args: Sequence[Any], flag: str) -> str:
    """The item right after `flag` (kubelogin's `getExecArg`), or ""."""
    for index, arg in enumerate(args[:-1]):
        if arg == flag:
            return str(args[index + 1])
    return ""


def kubelogin_args(existing: Sequence[Any], login_mode: str) -> list[str]:
    """`kubelogin convert-kubeconfig -l <login_mode>` with no other flags, for one exec user."""
    server_id = _arg(existing, "--server-id")
    if not server_id:
        raise KubeconfigError("the AKS kubeconfig has no --server-id; kubelogin cannot convert it")
    args = ["get-token", "--login", login_mode, "--server-id", server_id]
    cache_dir = _arg(existing, "--cache-dir") or _arg(existing, "--token-cache-dir")
    if cache_dir:
        args += ["--cache-dir", cache_dir]
    if login_mode == "spn":
        for flag in ("--client-id", "--tenant-id"):
            value = _arg(existing, flag)
            if not value:
                raise KubeconfigError(f"the AKS kubeconfig has no {flag}, which kubelogin needs for spn")
            args += [flag, value]
        environment = _arg(existing, "--environment")
        if environment:
            args += ["--environment", environment]
    return args


def _is_kubelogin(exec_config: Any) -> bool:
    return isinstance(exec_config, Mapping) and "kubelogin" in str(exec_config.get("command", "")).lower()


def with_kubelogin_mode(kubeconfig: str, login_mode: str) -> str:
    """Rewrite every kubelogin exec user to `login_mode`; other users are left as they are (a
    cluster without Azure AD returns client certificates, which need no conversion)."""
    config = yaml.safe_load(kubeconfig) or {}
    changed = False
    for user in config.get("users") or []:
        entry = user.get("user") if isinstance(user, dict) else None
        exec_config = entry.get("exec") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(exec_config, dict) or not _is_kubelogin(exec_config):
            continue
        entry["exec"] = {
            "apiVersion": EXEC_API_VERSION,
            "command": "kubelogin",
            "args": kubelogin_args(list(exec_config.get("args") or []), login_mode),
            "env": None,
            "installHint": exec_config.get("installHint") or KUBELOGIN_INSTALL_HINT,
            "provideClusterInfo": False,
        }
        changed = True
    return yaml.safe_dump(config, sort_keys=False) if changed else kubeconfig
