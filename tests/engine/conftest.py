"""The `engine` tier: the real Pulumi CLI (built by `make engines` into build/engines/bin) runs this
repository's programs, policy pack and component package against the stand-in providers.

Every test here is marked `engine` and `slow`. Where the engines are not built (no Go), the tier is not
collected and one line says why; under CI (CI=true) a missing engine fails the run instead
(`testbed.tiers`). The tests share one temporary copy of the repository (`testbed.workspace`) and one
`file://` backend, so the platform stack the app stacks read is deployed once per session.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testbed import build, workspace
from testbed.tiers import Tier

ROOT = Path(__file__).resolve().parents[2]
PASSPHRASE = workspace.PASSPHRASE


def _missing() -> str | None:
    absent = build.missing()
    if not absent:
        return None
    return (f"{', '.join(absent)} not built in build/engines/bin "
            f"({'no Go on PATH' if shutil.which('go') is None else 'run `make engines`'})")


TIER = Tier("engine", _missing)
pytest_ignore_collect = TIER.ignore_collect
pytest_terminal_summary = TIER.terminal_summary


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.engine)
            item.add_marker(pytest.mark.slow)


Result = workspace.Result
Workspace = workspace.Workspace


def new_workspace(tmp_path_factory: pytest.TempPathFactory, name: str) -> Workspace:
    TIER.require()
    return Workspace.new(tmp_path_factory.mktemp(name))


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The shared copy: the dev platform and the app stacks that read it."""
    return new_workspace(tmp_path_factory, "engine")


#: Settings that keep a deploy here fast: the role-propagation wait is a real sleep in a dynamic resource.
FAST = (("gpu-aks:access.rolePropagationSeconds", "0"),)


@pytest.fixture(scope="session")
def deployed_dev(workspace: Workspace) -> Workspace:
    """The dev platform, deployed once with the pack: the app stacks read it through StackReference."""
    workspace.init("dev", config=FAST)
    workspace.pulumi("up", "--yes", "--skip-preview", "--policy-pack", "policies", "--stack", "dev")
    return workspace
