"""The `cluster` tier: a real control plane (etcd, kube-apiserver, kube-scheduler from engines/kube/,
`make engines`) started once per test session by `tools.localcluster`.

Where the binaries are not built (no Go here), every test of the tier skips with one reason, which
`pytest -ra` prints as one line. Under CI (`CI=true`) a missing binary fails the tier instead: CI
builds the engines first, so their absence there is a broken build, not a machine without Go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools import localcluster

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    # Registered here until pytest.ini (owned by the engine tier's change) lists it.
    config.addinivalue_line("markers", "cluster: runs against a real kube-apiserver and kube-scheduler "
                                       "(tools/localcluster.py); needs `make engines`")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.slow)


def _missing() -> str | None:
    try:
        localcluster.binaries()
    except localcluster.ClusterError as error:
        return str(error)
    return None


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[localcluster.Cluster]:
    missing = _missing()
    if missing:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the cluster tier cannot run under CI: {missing}", pytrace=False)
        pytest.skip(f"cluster tier: {missing}")
    with localcluster.running(tmp_path_factory.mktemp("localcluster")) as running:
        yield running


@pytest.fixture(scope="session")
def api(cluster: localcluster.Cluster) -> Iterator[localcluster.Client]:
    client = cluster.client()
    yield client
    client.close()
