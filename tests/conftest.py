"""Shared fixtures: the repository root on sys.path, a fixed date for Kubernetes version checks, and
the dev/prod programs run once per session under the Pulumi mock runtime (runs are deterministic,
so sharing them costs no isolation)."""

from __future__ import annotations

import os
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
from tools.mockrun import ProgramRun, run_program  # noqa: E402
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
