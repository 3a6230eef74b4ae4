"""A new stack never breaks CI (issue #28, item 7): adding an environment is the first change a platform
team makes. In 0.3.1 a copy of Pulumi.dev.yaml saved as Pulumi.staging.yaml failed `.ci/run`, because
the observability files were committed per stack and a test wanted them current for every stack file.

Here the repository's tracked files are copied, a staging stack is added the way a team adds one, and
every check that compares generated files with the code runs in the copy, with the offline preview the
PR workflow runs for each stack file and the tests that go through every stack file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tools.stacks import stacks


def _tracked() -> list[str]:
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60)
    return [name for name in result.stdout.split("\0") if name]


@pytest.mark.slow
def test_a_copy_of_the_dev_stack_saved_as_staging_keeps_the_checks_green(tmp_path):
    copy = tmp_path / "repo"
    for name in _tracked():
        target = copy / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, target)
    shutil.copy2(ROOT / "Pulumi.dev.yaml", copy / "Pulumi.staging.yaml")
    assert "staging" in stacks(copy)
    env = {**os.environ, "PYTHONPATH": str(copy)}
    # And the tests that go through every stack file: one listed dev and prod where it meant every stack
    # (a full run of the suite with Pulumi.staging.yaml beside the others found it).
    for command in (["-m", "tools.docs", "--check"],
                    ["-m", "tools.observability", "--out", str(tmp_path / "out")],
                    ["-m", "tools.preview", "staging"],
                    ["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_observability.py",
                     "tests/test_observability_rules.py", "tests/test_recording_rules.py"]):
        result = subprocess.run([sys.executable, *command], cwd=copy, env=env, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, (command, result.stdout[-3000:], result.stderr[-3000:])
    assert (tmp_path / "out" / "staging" / "gpu-alerts.rules.yaml").is_file()
