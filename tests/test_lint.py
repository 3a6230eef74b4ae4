"""ruff over the whole tree (mypy is slower and runs in `make lint`)."""

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_ruff_is_clean():
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", str(ROOT)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
