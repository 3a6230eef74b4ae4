"""The `engine` tier: the real Pulumi CLI (built by `make engines` into build/engines/bin) runs this
repository's programs, policy pack and component package against the stand-in providers.

Every test here is marked `engine` and `slow`. Where the engines are not built (no Go), the tier is not
collected and one line says why; under CI (CI=true) a missing engine fails the run instead. The tests share
one temporary copy of the repository (its virtualenv linked, not copied) and one `file://` backend, so the
platform stack the app stacks read is deployed once per session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tools import engines

ROOT = Path(__file__).resolve().parents[2]
CI = os.environ.get("CI", "").lower() == "true"
MISSING = engines.missing()
SKIP_LINE = (f"engine tier skipped: {', '.join(MISSING)} not built in build/engines/bin "
             f"({'no Go on PATH' if shutil.which('go') is None else 'run `make engines`'})")
PASSPHRASE = "engine-tier-passphrase"

if MISSING and not CI:
    collect_ignore_glob = ["test_*.py"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if MISSING and not CI:
        terminalreporter.write_line(SKIP_LINE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.engine)
            item.add_marker(pytest.mark.slow)


@dataclass
class Result:
    returncode: int
    output: str  # stdout and stderr together, as a user sees them


class Workspace:
    """A copy of the repository with a `file://` backend; `pulumi(...)` runs the built CLI in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.state = root.parent / "state"
        self.record = root.parent / "standin-calls.jsonl"
        self.env = engines.engine_env(root, self.state, self.record)
        self.env.pop("GPU_AKS_LOCAL_KUBECONFIG", None)
        self.env.pop("PULUMI_IGNORE_AMBIENT_PLUGINS", None)

    def pulumi(self, *args: str, cwd: Path | None = None, check: bool = True, timeout: int = 600) -> Result:
        done = subprocess.run([str(engines.BIN / "pulumi"), *args, "--non-interactive"], cwd=cwd or self.root,
                              env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        result = Result(done.returncode, done.stdout)
        if check and done.returncode != 0:
            pytest.fail(f"pulumi {' '.join(args)} exited {done.returncode}:\n{done.stdout[-6000:]}")
        return result

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def export(self, stack: str, cwd: Path | None = None) -> dict[str, Any]:
        return json.loads(self.pulumi("stack", "export", "--stack", stack, cwd=cwd).output)

    def outputs(self, stack: str, cwd: Path | None = None) -> dict[str, Any]:
        return json.loads(self.pulumi("stack", "output", "--json", "--stack", stack, cwd=cwd).output)

    def init(self, stack: str, cwd: Path | None = None, config: Sequence[tuple[str, str]] = (),
             extra: Sequence[str] = ()) -> None:
        self.pulumi("stack", "init", stack, cwd=cwd)
        for key, value in config:
            self.pulumi("config", "set", "--path", key, value, "--stack", stack, *extra, cwd=cwd)


def new_workspace(tmp_path_factory: pytest.TempPathFactory, name: str) -> Workspace:
    if MISSING:
        pytest.fail(f"CI=true and the engines are missing: {SKIP_LINE}")
    root = tmp_path_factory.mktemp(name) / "repo"
    root.mkdir()
    engines.copy_checkout(root)
    space = Workspace(root)
    space.state.mkdir()
    space.pulumi("login", f"file://{space.state}")
    return space


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
