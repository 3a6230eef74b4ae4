"""The platform reaches the cluster as AKS has it reached: from the kubeconfig AKS hands out (a kubelogin exec user
that logs in with devicecode), converted by components/kubeconfig.py to the stack's login mode, and the real
pulumi-kubernetes provider then runs `kubelogin get-token` for its credential (here testbed/standins/kubelogin.py,
which takes only what kubelogin's converter writes and answers for the identity the test signed in as)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from testbed.localcluster import Client, Cluster
from testbed.standins.aks_kubeconfig import aks_user_kubeconfig
from testbed.standins.kubelogin import AKS_SERVER_ID, IDENTITY_ENV, RECORD_ENV
from testbed.workspace import Workspace

NAMESPACE = "/api/v1/namespaces/gpu-resources"
NO_WAIT = [("gpu-aks:access.rolePropagationSeconds", "0")]  # the Azure RBAC wait is a real sleep


def _no_platform_namespace(api: Client) -> None:
    if api.exists(NAMESPACE):
        api.delete(NAMESPACE)
    api.wait_for("gpu-resources to go", lambda: not api.exists(NAMESPACE), timeout=120)


@pytest.fixture
def through_kubelogin(cluster: Cluster, api: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """A workspace whose azure-native stand-in hands out AKS's kubeconfig for the local API server."""
    _no_platform_namespace(api)
    base = tmp_path_factory.mktemp("identity")
    aks = base / "aks.kubeconfig"
    aks.write_text(aks_user_kubeconfig(yaml.safe_load(cluster.kubeconfig.read_text())))
    space = Workspace.new(base / "space", kubeconfig=aks)
    space.env[RECORD_ENV] = str(base / "kubelogin.jsonl")
    yield space
    _no_platform_namespace(api)


def _kubelogin_calls(space: Workspace) -> list[list[str]]:
    record = Path(space.env[RECORD_ENV])
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def test_the_platform_deploys_through_kubelogin_in_its_login_mode(cluster: Cluster, api: Client,
                                                                   through_kubelogin: Workspace) -> None:
    space = through_kubelogin
    space.init("dev", config=NO_WAIT)
    # Nobody signed in: kubelogin fails, and so does every request of the provider (client-go says so; the
    # plugin's own message goes to the provider's stderr).
    refused = space.pulumi("up", "--yes", "--skip-preview", "--stack", "dev", check=False)
    assert refused.returncode != 0, refused.output[-4000:]
    assert "getting credentials: exec: executable kubelogin failed with exit code 1" in refused.output
    assert not api.exists(NAMESPACE)
    space.env[IDENTITY_ENV] = str(cluster.kubeconfig)
    space.pulumi("up", "--yes", "--skip-preview", "--stack", "dev")
    assert api.exists(NAMESPACE)
    # dev's kubeloginMode is the default, azurecli: the converter's arguments, nothing of devicecode's.
    calls = _kubelogin_calls(space)
    assert calls and all(call == ["get-token", "--login", "azurecli", "--server-id", AKS_SERVER_ID] for call in calls)
    space.pulumi("destroy", "--yes", "--stack", "dev")
    assert not api.exists(NAMESPACE)
