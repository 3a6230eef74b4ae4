"""The platform reaches the cluster as AKS has it reached, as the identities it grants: from the kubeconfig AKS
hands out (a kubelogin exec user that logs in with devicecode), converted by components/kubeconfig.py to the
stack's login mode, the real pulumi-kubernetes provider runs `kubelogin get-token` for its credential (here
testbed/standins/kubelogin.py, which takes only what kubelogin's converter writes and answers with the bearer
token of the identity the test signed in as). No `system:masters`: Kubernetes RBAC decides, with the bindings
that AKS's built-in roles give the Azure role assignments on the cluster (testbed/aks_rbac.py): the deployer's
"Azure Kubernetes Service RBAC Cluster Admin" that components/access.py assigns, and an app team's "RBAC
Writer" on its own namespace."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from offline.azure_answers import DEPLOYER_OBJECT_ID, SUBSCRIPTION_ID
from testbed import aks_rbac
from testbed.build import BIN
from testbed.localcluster import Client, Cluster
from testbed.standins.aks_kubeconfig import aks_user_kubeconfig
from testbed.standins.azure_cloud import Cloud
from testbed.standins.kubelogin import AKS_SERVER_ID, IDENTITY_ENV, RECORD_ENV
from testbed.workspace import Workspace
from tests.cluster.conftest import APP_TEAM_GROUP, APP_TEAM_MEMBER

PLATFORM_NAMESPACE = "gpu-resources"
NAMESPACE = f"/api/v1/namespaces/{PLATFORM_NAMESPACE}"
TEAM_NAMESPACE = "team-a"
NO_WAIT = [("gpu-aks:access.rolePropagationSeconds", "0")]  # the Azure RBAC wait is a real sleep
#: The name of the app team's role assignment (a GUID, as Azure names them).
TEAM_ASSIGNMENT = "55555555-5555-5555-5555-555555555555"


def _no_namespace(api: Client, name: str) -> None:
    path = f"/api/v1/namespaces/{name}"
    if api.exists(path):
        api.delete(path)
    api.wait_for(f"{name} to go", lambda: not api.exists(path), timeout=120)


@pytest.fixture
def through_kubelogin(cluster: Cluster, api: Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """A workspace whose azure-native stand-in hands out AKS's kubeconfig for the local API server."""
    _no_namespace(api, PLATFORM_NAMESPACE)
    base = tmp_path_factory.mktemp("identity")
    aks = base / "aks.kubeconfig"
    aks.write_text(aks_user_kubeconfig(yaml.safe_load(cluster.kubeconfig.read_text())))
    space = Workspace.new(base / "space", kubeconfig=aks)
    space.env[RECORD_ENV] = str(base / "kubelogin.jsonl")
    yield space
    for namespace in (PLATFORM_NAMESPACE, TEAM_NAMESPACE):
        _no_namespace(api, namespace)
    space.cloud.unlink(missing_ok=True)
    aks_rbac.sync(api, space.cloud)  # no assignment left: no binding either


def _kubelogin_calls(space: Workspace) -> list[list[str]]:
    record = Path(space.env[RECORD_ENV])
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def _assignments(space: Workspace) -> list[aks_rbac.RoleAssignment]:
    return list(aks_rbac.cluster_assignments(json.loads(space.cloud.read_text())))


def _kubectl(space: Workspace, kubeconfig: Path, signed_in: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """kubectl with the platform's kubeconfig, kubelogin signed in as `signed_in`'s identity."""
    return subprocess.run([str(BIN / "kubectl"), "--kubeconfig", str(kubeconfig), *args], capture_output=True,
                          text=True, timeout=120, env={**space.env, IDENTITY_ENV: str(signed_in)})


def test_the_platform_deploys_as_its_deployer_through_kubelogin_and_an_app_team_writes_only_its_namespace(
        cluster: Cluster, api: Client, through_kubelogin: Workspace) -> None:
    space = through_kubelogin
    space.init("dev", config=NO_WAIT)
    # Nobody signed in: kubelogin fails, and so does every request of the provider (client-go says so; the
    # plugin's own message goes to the provider's stderr).
    refused = space.pulumi("up", "--yes", "--skip-preview", "--stack", "dev", check=False)
    assert refused.returncode != 0, refused.output[-4000:]
    assert "getting credentials: exec: executable kubelogin failed with exit code 1" in refused.output
    assert not api.exists(NAMESPACE)

    # The deployer signed in, before its role assignment has reached the cluster's authorizer (what
    # access.rolePropagationSeconds waits for on AKS): RBAC refuses it, as it would any identity not granted.
    deployer = cluster.identity_kubeconfig(DEPLOYER_OBJECT_ID)
    space.env[IDENTITY_ENV] = str(deployer)
    forbidden = space.pulumi("up", "--yes", "--skip-preview", "--stack", "dev", check=False)
    assert forbidden.returncode != 0, forbidden.output[-4000:]
    assert f'is forbidden: User "{DEPLOYER_OBJECT_ID}" cannot' in forbidden.output, forbidden.output[-4000:]
    assert not api.exists(NAMESPACE)

    # The platform's own grant (components/access.py), as AKS honours it once propagated: Cluster Admin at the
    # cluster's scope, to the object ID getClientConfig reported. Nothing else grants the deployer anything.
    [platform_grant] = _assignments(space)
    assert (platform_grant.role, platform_grant.principal_id, platform_grant.namespace) == (
        "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b", DEPLOYER_OBJECT_ID, None)
    [binding] = aks_rbac.sync(api, space.cloud)
    assert binding["kind"] == "ClusterRoleBinding" and binding["roleRef"]["name"] == "cluster-admin"
    space.pulumi("up", "--yes", "--skip-preview", "--stack", "dev")
    assert api.exists(NAMESPACE)

    # An app team: RBAC Writer on its namespace, assigned to its Entra ID group as `az role assignment create
    # --scope <cluster>/namespaces/team-a` would, and its member signed in through the platform's kubeconfig
    # (the stack output app stacks read).
    api.ensure_namespace(TEAM_NAMESPACE)
    scope = f"{platform_grant.scope}/namespaces/{TEAM_NAMESPACE}"
    Cloud(str(space.cloud)).put(f"{scope}{aks_rbac.ASSIGNMENTS}{TEAM_ASSIGNMENT}", aks_rbac.role_assignment_resource(
        scope, TEAM_ASSIGNMENT, aks_rbac.WRITER_ROLE, APP_TEAM_GROUP, "Group", SUBSCRIPTION_ID))
    aks_rbac.sync(api, space.cloud)
    platform_kubeconfig = space.root.parent / "platform.kubeconfig"
    platform_kubeconfig.write_text(space.pulumi("stack", "output", "kubeconfig", "--show-secrets", "--stack", "dev").output)
    member = cluster.identity_kubeconfig(APP_TEAM_MEMBER, [APP_TEAM_GROUP])
    configmap = ("create", "configmap", "team-settings", "--from-literal=model=llama")
    pod = ("run", "probe", "--image=registry.k8s.io/pause:3.10", "--restart=Never")
    for attempt in (configmap, pod):
        # -v=6: kubectl logs each response's status.
        outside = _kubectl(space, platform_kubeconfig, member, *attempt, "-n", PLATFORM_NAMESPACE, "-v=6")
        assert outside.returncode != 0, outside.stdout
        assert 'verb="POST"' in outside.stderr and 'status="403 Forbidden"' in outside.stderr, outside.stderr[-3000:]
        assert f'User "{APP_TEAM_MEMBER}" cannot create resource' in outside.stderr, outside.stderr[-3000:]
        inside = _kubectl(space, platform_kubeconfig, member, *attempt, "-n", TEAM_NAMESPACE, "-v=6")
        assert inside.returncode == 0 and 'status="201 Created"' in inside.stderr, inside.stderr[-3000:]
    assert api.exists(f"/api/v1/namespaces/{TEAM_NAMESPACE}/configmaps/team-settings")
    assert not api.exists(f"{NAMESPACE}/configmaps/team-settings")

    # dev's kubeloginMode is the default, azurecli: the converter's arguments, nothing of devicecode's.
    calls = _kubelogin_calls(space)
    assert calls and all(call == ["get-token", "--login", "azurecli", "--server-id", AKS_SERVER_ID] for call in calls)
    space.pulumi("destroy", "--yes", "--stack", "dev")
    assert not api.exists(NAMESPACE)
    # The platform's role assignment went with the destroy, and with it every right the deployer had.
    assert binding["metadata"]["name"] not in [left["metadata"]["name"] for left in aks_rbac.sync(api, space.cloud)]
    gone = _kubectl(space, platform_kubeconfig, deployer, "get", "namespaces")
    assert gone.returncode != 0 and "(Forbidden)" in gone.stderr, gone.stderr
