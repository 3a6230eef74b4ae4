"""Make the kubeconfig AKS hands out usable without a person at a browser. Pure, no Pulumi imports.

On a cluster with Azure AD (the default here, local accounts disabled), `listClusterUserCredential`
returns a `kubelogin` exec config that logs in with `--login devicecode`: it waits for someone to type
a code into a browser, which never happens in CI or inside `pulumi up`. This is what
`kubelogin convert-kubeconfig -l <mode>` does, done here so the kubeconfig output (and the Kubernetes
provider built from it) authenticates as whatever runs Pulumi: `azurecli` (a developer's `az login`,
or CI after azure/login), `spn` (AAD_SERVICE_PRINCIPAL_CLIENT_ID/SECRET), `msi` or `workloadidentity`
(AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE, as GitHub OIDC federation provides).
"""

from __future__ import annotations

import base64
from typing import Any

import yaml

#: Arguments that keep their meaning in every login mode; `--client-id` is the AKS AAD client used
#: by devicecode and would be wrong for a service principal or managed identity.
_KEPT_FLAGS = ("--server-id", "--environment", "--tenant-id")


def decode_kubeconfig(value: str) -> str:
    """The API returns the kubeconfig base64-encoded."""
    return base64.b64decode(value).decode("utf-8")


def _flag_values(args: list[Any]) -> dict[str, str]:
    values = {}
    for index, arg in enumerate(args[:-1]):
        if arg in _KEPT_FLAGS:
            values[arg] = str(args[index + 1])
    return values


def with_kubelogin_mode(kubeconfig: str, login_mode: str) -> str:
    """Rewrite every kubelogin exec user to `--login <login_mode>`; other users are left as they are
    (a cluster without Azure AD returns client certificates, which need no conversion)."""
    config = yaml.safe_load(kubeconfig) or {}
    changed = False
    for user in config.get("users") or []:
        exec_config = (user.get("user") or {}).get("exec") if isinstance(user, dict) else None
        if not isinstance(exec_config, dict) or exec_config.get("command") != "kubelogin":
            continue
        kept = _flag_values(list(exec_config.get("args") or []))
        args = ["get-token", "--login", login_mode]
        for flag, value in kept.items():
            args += [flag, value]
        exec_config["args"] = args
        changed = True
    return yaml.safe_dump(config, sort_keys=False) if changed else kubeconfig
