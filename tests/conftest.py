"""Shared fixtures: the repository root on sys.path, a fixed date for Kubernetes version checks, and
the dev/prod programs run once per session under the Pulumi mock runtime (runs are deterministic,
so sharing them costs no isolation)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from datetime import date
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "app_sdk"):  # the app helper installs as a top-level module
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# Kubernetes versions are judged against the AKS calendar as of a day; the tests fix that day to the
# one the calendar was checked on, so they do not start failing as time passes (subprocesses too).
TODAY = date(2026, 11, 22)
os.environ["GPU_AKS_TODAY"] = TODAY.isoformat()

from components.aks_api import DEFAULT_KUBERNETES_VERSION  # noqa: E402
from offline.mockrun import ProgramRun, run_program  # noqa: E402
from tests.processes import Process, left_behind, this_process  # noqa: E402
from tools.stacks import config_from_stack_file  # noqa: E402

#: Manifests are validated against the schemas of the version the platform pins by default.
KUBERNETES_SCHEMA_VERSION = DEFAULT_KUBERNETES_VERSION


def run_stack(stack: str, config_file: Path | None = None) -> ProgramRun:
    config, secret_keys = config_from_stack_file(config_file or ROOT / f"Pulumi.{stack}.yaml", "gpu-aks")
    return run_program(ROOT, stack, config, secret_keys)


@pytest.fixture(scope="session")
def dev_run() -> ProgramRun:
    run = run_stack("dev")
    assert run.error is None, run.error
    return run


@pytest.fixture(scope="session")
def prod_run() -> ProgramRun:
    run = run_stack("prod")
    assert run.error is None, run.error
    return run


# --- Inputs the tests of hostile input share (tests/inputs.py builds them) ---------------------------


@pytest.fixture
def bad_pod(tmp_path: Path) -> Path:
    """A file with a real violation: the report that must survive every broken neighbour."""
    from tests.inputs import pod_yaml  # the module imports this one

    path = tmp_path / "fractional.yaml"
    path.write_text(pod_yaml("half", '"0.5"'))
    return path


@pytest.fixture
def broken_inputs(tmp_path: Path) -> list[Path]:
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 1000 + "]" * 1000)
    dangling = tmp_path / "dangling.yaml"
    dangling.symlink_to(tmp_path / "gone.yaml")
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text("kind: Pod\nspec: [unclosed\n")
    return [latin1, deep, dangling, invalid]


# --- No process outlives a test run ---------------------------------------------------------------

_RUN = pytest.StashKey[Process]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_RUN] = this_process()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Called last, after pytest's runner has torn down the session's fixtures (its own
    `pytest_sessionfinish`; a conftest's hook is otherwise called first, while the local cluster still runs):
    whatever a test started and still runs (a policy pack whose preview was killed, a child a failed test never
    waited for) is ended here, and the run fails naming it, a failed run and an interrupted one included."""
    left = left_behind(session.config.stash[_RUN], ROOT)
    for process in left:
        with contextlib.suppress(OSError):  # ended meanwhile
            os.kill(process.pid, signal.SIGKILL)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"{process.pid}: {' '.join(process.argv)[:200]} (in {process.cwd})" for process in left]
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_sep("=", "processes the tests left running (now killed)", red=True)
            for line in lines:
                reporter.write_line(line)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
