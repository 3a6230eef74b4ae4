"""`make setup`'s policies/venv (tools/overlay_venv.py): a virtualenv of its own that sees the checkout's packages,
over which Pulumi's `python -m venv VENV` (the first step of `pulumi install`) succeeds, where a link fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools import overlay_venv

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "venv"
pytestmark = pytest.mark.slow  # each virtualenv takes seconds


def _venv_over(target: Path) -> subprocess.CompletedProcess[str]:
    """What Pulumi's pip toolchain runs first when it installs (python/toolchain/pip.go:483-491 at v3.274.0)."""
    return subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip",
                           str(target)], capture_output=True, text=True, timeout=300)


def test_python_m_venv_over_a_link_to_the_checkouts_virtualenv_fails(tmp_path: Path) -> None:
    link = tmp_path / "venv"
    link.symlink_to(BASE)
    assert _venv_over(link).returncode != 0


def test_the_overlay_replaces_a_link_survives_python_m_venv_and_sees_the_checkouts_packages(tmp_path: Path) -> None:
    target = tmp_path / "venv"
    target.symlink_to(BASE)
    overlay_venv.overlay(target, BASE)
    assert not target.is_symlink()
    done = _venv_over(target)
    assert done.returncode == 0, done.stderr
    imported = subprocess.run([str(target / "bin" / "python"), "-c", "import pulumi_policy, yaml, gpu_aks_policies"],
                              capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr


def test_make_setup_gives_the_pack_such_a_virtualenv() -> None:
    venv = ROOT / "policies" / "venv"
    assert venv.is_dir() and not venv.is_symlink()
    assert (overlay_venv.site_packages(venv) / overlay_venv.PTH).is_file()
