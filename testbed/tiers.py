"""The one rule for a test tier whose programs are not built: where they are missing the tier's modules are
not collected and the run ends with one line saying why; under CI (`CI=true`) they are collected and every
test fails instead, since CI builds the engines first and their absence there is a broken build."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


class Tier:
    """A tier of tests under one folder that needs programs `make engines` builds. `missing()` says what is
    absent (None when everything is built). A conftest wires it with its three hooks:

        TIER = Tier("cluster", missing)
        pytest_ignore_collect, pytest_terminal_summary = TIER.ignore_collect, TIER.terminal_summary
        ... and a fixture calls TIER.require() before it starts anything.
    """

    def __init__(self, name: str, missing: Callable[[], str | None]) -> None:
        self.name = name
        self._missing = missing
        self._known: tuple[str | None] | None = None
        self.skipped = False

    def missing(self) -> str | None:
        if self._known is None:
            self._known = (self._missing(),)
        return self._known[0]

    def ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        if collection_path.name.startswith("test_") and not under_ci() and self.missing():
            self.skipped = True
            return True
        return None

    def terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if self.skipped:
            terminalreporter.write_line(f"{self.name} tier skipped: {self.missing()}", yellow=True)

    def require(self) -> None:
        """In a fixture: fail under CI, skip elsewhere (only reached when a test of the tier is named
        explicitly although its programs are not built)."""
        missing = self.missing()
        if missing:
            if under_ci():
                pytest.fail(f"the {self.name} tier cannot run under CI: {missing}", pytrace=False)
            pytest.skip(f"{self.name} tier: {missing}")
