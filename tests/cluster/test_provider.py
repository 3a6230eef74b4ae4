"""The real pulumi-kubernetes provider under the platform's `pulumi up`: whichever release runs, a namespace
gpu-aks did not create is never adopted and then deleted.

The tier builds the provider at the one revision the Go module proxy serves (f47bc2d6, between 4.24.0 and 4.26.0),
whose server-side-apply create adopts an existing object; the 4.34.2 the SDK asks for refuses it with
AlreadyExists (testbed/README.md, "The pulumi-kubernetes provider"). The platform's provider creates with a
client-side Create under both (components/cluster.py), which Kubernetes refuses for an existing object."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testbed.localcluster import Client, Cluster
from testbed.workspace import Workspace, listed_version_differences

NAMESPACE = "/api/v1/namespaces/gpu-resources"
PRECIOUS = f"{NAMESPACE}/configmaps/precious"


def _gone(api: Client, path: str) -> None:
    if api.exists(path):
        api.delete(path)
    api.wait_for(f"{path} to go", lambda: not api.exists(path), timeout=120)


@pytest.fixture
def another_teams_namespace(api: Client) -> Iterator[None]:
    """gpu-resources, made by someone else with their ConfigMap in it, as the AKS GPU how-to has users do
    (`kubectl create namespace gpu-resources`)."""
    _gone(api, NAMESPACE)
    api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": "gpu-resources", "labels": {"owner": "another-team"}}})
    api.create(f"{NAMESPACE}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "precious"}, "data": {"keep": "me"}})
    yield
    _gone(api, NAMESPACE)


def test_another_teams_namespace_is_refused_not_adopted_and_survives_destroy(
        cluster: Cluster, api: Client, another_teams_namespace: None,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    space = Workspace.new(tmp_path_factory.mktemp("provider"), kubeconfig=cluster.kubeconfig)
    # The wait for Azure RBAC to propagate is a real sleep (components/propagation.py): nothing to wait for here.
    space.init("dev", config=[("gpu-aks:access.rolePropagationSeconds", "0")])
    up = space.pulumi("up", "--yes", "--skip-preview", "--stack", "dev", check=False)
    assert up.returncode != 0, up.output[-4000:]
    assert 'namespaces "gpu-resources" already exists' in up.output, up.output[-4000:]
    # The real provider ran, older than its SDK: the engine's warning names the one listed difference.
    built = listed_version_differences()["kubernetes"]
    assert f"resource plugin kubernetes is expected to have version >=4.34.2, but has {built}" in up.output
    namespace = api.get(NAMESPACE)
    assert namespace["metadata"]["labels"] == {"owner": "another-team", "kubernetes.io/metadata.name": "gpu-resources"}
    assert not [field for field in namespace["metadata"].get("managedFields", [])
                if field["manager"].startswith("pulumi-kubernetes")], namespace["metadata"]["managedFields"]
    space.pulumi("state", "unprotect", "--all", "--yes", "--stack", "dev")
    space.pulumi("destroy", "--yes", "--stack", "dev")
    assert api.get(PRECIOUS)["data"] == {"keep": "me"}
    assert "gpu-aks" not in str(api.get(NAMESPACE)["metadata"])
