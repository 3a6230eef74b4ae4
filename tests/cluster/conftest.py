"""The `cluster` tier: a real cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler from
testbed/engines/kube/ and kwok from testbed/engines/kwok/, `make engines`) started once per test session by
`testbed.localcluster`.

Where the binaries are not built (no Go here), the tier's modules are not collected and the run ends
with one line saying so; under CI (`CI=true`) a missing binary fails every test of the tier instead
(`testbed.tiers`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from offline.azure_answers import DEPLOYER_OBJECT_ID
from testbed import aks_rbac, build, localcluster
from testbed.localcluster import kueue
from testbed.tiers import Tier

HERE = Path(__file__).resolve().parent
#: An app team as Entra ID has it: a group (the principal its role assignment names) and a member who signs in.
APP_TEAM_GROUP = "33333333-3333-3333-3333-333333333333"
APP_TEAM_MEMBER = "44444444-4444-4444-4444-444444444444"
#: The identities the tier signs in as through kubelogin (tests/cluster/test_identity.py), each named by the
#: object ID its token carries (the deployer's is the one `getClientConfig` reports), with its groups. Named at
#: start: kube-apiserver reads its token file only then.
IDENTITIES = {DEPLOYER_OBJECT_ID: (), APP_TEAM_MEMBER: (APP_TEAM_GROUP,)}


def _missing() -> str | None:
    """The cluster's programs, Kueue's controller and files (test_kueue.py), and for the platform's own
    `pulumi up` the CLI and the real pulumi-kubernetes provider (`make engines` builds them all)."""
    try:
        localcluster.programs()
    except localcluster.ClusterError as error:
        return str(error)
    if kueue.missing():
        return kueue.missing()
    absent = build.missing() + [f"libexec/{name}" for name in ("pulumi-resource-kubernetes",)
                                if not os.access(build.LIBEXEC / name, os.X_OK)]
    return f"{', '.join(absent)} not built in build/engines: run `make engines`" if absent else None


TIER = Tier("cluster", _missing)
pytest_ignore_collect = TIER.ignore_collect
pytest_terminal_summary = TIER.terminal_summary


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[localcluster.Cluster]:
    TIER.require()
    with localcluster.running(tmp_path_factory.mktemp("localcluster"), identities=IDENTITIES) as running:
        yield running


@pytest.fixture(scope="session")
def api(cluster: localcluster.Cluster) -> Iterator[localcluster.Client]:
    client = cluster.client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def deployer_kubeconfig(cluster: localcluster.Cluster, api: localcluster.Client) -> Iterator[Path]:
    """What the tier deploys the platform with: the deployer's kubeconfig (`aks_rbac.as_deployer`). The kubelogin
    conversion and the refusal before propagation are tests/cluster/test_identity.py's."""
    with aks_rbac.as_deployer(cluster, api) as kubeconfig:
        yield kubeconfig
