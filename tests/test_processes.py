"""`tests/processes.py`: what the end of a test run counts as left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import replace

from tests.conftest import ROOT
from tests.processes import left_behind, running, this_process

#: A stand-in for a pytest-xdist worker (its command line does not say pytest) whose child is a policy pack,
#: working in policies/ as `PolicyPackProcess` starts one.
WORKER = f"""
import subprocess, sys, time
pack = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "pulumi.policy"], cwd={str(ROOT / "policies")!r})
print(pack.pid, flush=True)
time.sleep(60)
"""


def test_a_live_pack_of_another_worker_of_the_run_is_not_left_behind():
    """`make test-fast` runs on several pytest-xdist workers, each ending its session on its own: a pack another
    worker still uses is that worker's, not an orphan, although the worker's command line does not say pytest and
    it started before the session that looks (it was killed as left behind, failing the other worker's test)."""
    worker = subprocess.Popen([sys.executable, "-c", WORKER], stdout=subprocess.PIPE, text=True)
    pack = None
    try:
        assert worker.stdout is not None
        pack = int(worker.stdout.readline())  # printed once Popen returned: the pack's program runs
        assert any(p.pid == pack and "pulumi.policy" in p.argv for p in running())
        started = next(p.started for p in running() if p.pid == worker.pid)
        later_session = replace(this_process(), pid=-1, started=started + 1)  # another worker's, begun after it
        assert pack not in [p.pid for p in left_behind(later_session, ROOT)]
    finally:
        if pack is not None:
            with contextlib.suppress(OSError):
                os.kill(pack, signal.SIGKILL)
        worker.kill()
        worker.wait()
