"""The one rule for what the engine and cluster tiers need (testbed/tiers.py): skipped with a reason here,
a failure under CI=true."""

from __future__ import annotations

import pytest

from testbed.tiers import required_program

ABSENT = "gpu-aks-no-such-program"


def test_a_missing_program_fails_the_test_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=f"{ABSENT} is not installed, and under CI=true compiling fails"):
        required_program(ABSENT, "compiling")


def test_a_missing_program_skips_the_test_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=f"{ABSENT} is not installed: compiling is skipped"):
        required_program(ABSENT, "compiling")


def test_a_present_program_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert required_program("sh", "anything").endswith("/sh")
