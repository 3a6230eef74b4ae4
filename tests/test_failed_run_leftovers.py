"""A failed mock run reports its error once, in `ProgramRun.error`, and leaves nothing that reports it
again when the collector frees it: no "Future exception was never retrieved" traceback in a
command's output, and (CPython 3.11 before 3.11.8, gh-106905) no `ast.parse` elsewhere in the process
left raising `SystemError: AST constructor recursion depth mismatch` because that traceback was
formatted in the middle of it. The suite once passed only because of its order: an `ast.parse` of
tests/test_layers.py happened to run a collection that freed an earlier test's failed run."""

from __future__ import annotations

import ast
import gc
import logging

import pulumi
import pytest

from offline.mockrun import run_pulumi
from tests.conftest import ROOT
from tests.test_example_app import run_example


def _program_that_succeeds() -> None:
    pulumi.CustomResource("kubernetes:core/v1:Namespace", "apps", {"metadata": {"name": "apps"}})


def test_a_failed_run_is_reported_once_and_leaves_ast_parse_working(dev_run, caplog: pytest.LogCaptureFixture):
    """The example app asking for GPUs the platform lacks: its Job's outputs are left holding the error."""
    source = (ROOT / "offline" / "mockrun.py").read_text()
    gc.collect()
    gc.disable()  # nothing is freed until the parse below: the collection starts inside it
    try:
        failed = run_example(dev_run, gpuModel="H100")
        assert "the platform has no pool with H100 GPUs" in str(failed.error)
        del failed
        # The next run clears the SDK's record of the failed one: its futures are garbage now.
        assert run_pulumi(_program_that_succeeds, "unit").error is None
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            gc.enable()
            tree = ast.parse(source)  # its first allocations start the collection that frees them
            gc.collect()
    finally:
        gc.enable()
    assert any(isinstance(node, ast.FunctionDef) and node.name == "run_pulumi" for node in tree.body)
    assert [record.getMessage() for record in caplog.records] == []


def test_an_error_the_run_did_not_return_is_still_reported(caplog: pytest.LogCaptureFixture):
    """Only the run's own error is quieted: any other unread failure still reaches the loop's report."""
    import asyncio

    from pulumi.runtime.sync_await import _ensure_event_loop

    run_pulumi(_program_that_succeeds, "unit")
    loop = _ensure_event_loop()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        future: asyncio.Future[None] = loop.create_future()
        future.set_exception(RuntimeError("unrelated"))
        del future
        gc.collect()
    assert [record.getMessage().splitlines()[0] for record in caplog.records] == ["Future exception was never retrieved"]
    assert "RuntimeError('unrelated')" in caplog.records[0].getMessage()
