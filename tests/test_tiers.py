"""The one rule for what the engine and cluster tiers need (testbed/tiers.py): skipped with a reason here,
a failure under CI=true."""

from __future__ import annotations

import pytest

from testbed.tiers import required_program

ABSENT = "gpu-aks-no-such-program"


#: Both outcomes are caught, so a wrong one fails this test instead of skipping it.
OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception)


def test_a_missing_program_fails_the_test_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(OUTCOMES) as outcome:
        required_program(ABSENT, "compiling")
    assert outcome.type is pytest.fail.Exception
    assert f"{ABSENT} is not installed, and under CI=true compiling fails" in str(outcome.value)


def test_a_missing_program_skips_the_test_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(OUTCOMES) as outcome:
        required_program(ABSENT, "compiling")
    assert outcome.type is pytest.skip.Exception
    assert f"{ABSENT} is not installed: compiling is skipped" in str(outcome.value)


def test_a_present_program_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert required_program("sh", "anything").endswith("/sh")
