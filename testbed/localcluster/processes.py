"""The local cluster's processes: started in a session of their own, their output in DIR/logs/NAME.log, stopped
by process group and recognised by pid and binary (a pid the kernel reused for another program is never
signalled)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:
    # PR_SET_PDEATHSIG (1): the kernel sends SIGKILL when the process that started this one exits,
    # however it exits (a test run killed with SIGKILL runs no finalizer).
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def alive(pid: int, binary: str) -> bool:
    """Whether `pid` is still the process started from `binary` (not a reused pid, not a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z" and cmdline == binary


@dataclass
class Process:
    name: str
    binary: str
    pid: int
    #: Its arguments (a restart repeats them).
    args: tuple[str, ...] = ()
    popen: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def alive(self) -> bool:
        return alive(self.pid, self.binary)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM to its process group, SIGKILL after `timeout`; returns once it is gone."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
            if not self.alive():
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and self.alive():
                if self.popen is not None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.popen.wait(0.1)
                else:
                    time.sleep(0.1)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(1)


def spawn(name: str, binary: Path, args: Sequence[str], logs: Path, die_with_parent: bool,
          env: Mapping[str, str] | None = None) -> Process:
    """Starts `binary` in a new session with DIR/logs as its working folder, appending to logs/NAME.log."""
    log = open(logs / f"{name}.log", "ab")  # noqa: SIM115 - the child holds it; closed below
    try:
        popen = subprocess.Popen([str(binary), *args], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, cwd=logs, env=None if env is None else dict(env),
                                 preexec_fn=_die_with_parent if die_with_parent else None)
    finally:
        log.close()
    return Process(name, str(binary), popen.pid, tuple(args), popen)
