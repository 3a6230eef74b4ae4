"""The `cluster` tier: a real control plane (etcd, kube-apiserver, kube-scheduler from engines/kube/,
`make engines`) started once per test session by `tools.localcluster`.

Where the binaries are not built (no Go here), the tier's modules are not collected and the run ends
with one line saying so. Under CI (`CI=true`) a missing binary fails every test of the tier instead:
CI builds the engines first, so their absence there is a broken build, not a machine without Go."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools import localcluster

HERE = Path(__file__).resolve().parent
SKIPPED = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    # Registered here until pytest.ini (owned by the engine tier's change) lists it.
    config.addinivalue_line("markers", "cluster: runs against a real kube-apiserver and kube-scheduler "
                                       "(tools/localcluster.py); needs `make engines`")


def _ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name.startswith("test_") and not _ci():
        missing = _missing()
        if missing:
            config.stash[SKIPPED] = missing
            return True
    return None


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if SKIPPED in config.stash:
        terminalreporter.write_line(f"cluster tier skipped: {config.stash[SKIPPED]}", yellow=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.cluster)
            item.add_marker(pytest.mark.slow)


@functools.cache
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
        if _ci():
            pytest.fail(f"the cluster tier cannot run under CI: {missing}", pytrace=False)
        pytest.skip(f"cluster tier: {missing}")  # only when a test of the tier is named though not built
    with localcluster.running(tmp_path_factory.mktemp("localcluster")) as running:
        yield running


@pytest.fixture(scope="session")
def api(cluster: localcluster.Cluster) -> Iterator[localcluster.Client]:
    client = cluster.client()
    yield client
    client.close()
