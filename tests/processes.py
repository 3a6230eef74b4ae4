"""The processes running on this machine, read from /proc (no pgrep or psutil on a bare image): what
`conftest.py` checks at the end of a run, so that no process a test started outlives it, a failed
run included (issue 50: each full run left a `python -m pulumi.policy 127.0.0.1:1 .` behind)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Process:
    pid: int
    #: `R`, `S`, ... `Z` for a zombie: ended, waiting for its parent to read its status.
    state: str
    parent: int
    #: When it started, in clock ticks since boot (`/proc/PID/stat` field 22).
    started: int
    argv: tuple[str, ...]
    cwd: str


def running() -> Iterator[Process]:
    """Every process whose /proc entry can be read (others' may not be, or may end meanwhile)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        # The command name (field 2) is in parentheses and may hold spaces and ')': split after the last one.
        fields = stat[stat.rindex(")") + 2:].split()
        yield Process(int(entry.name), fields[0], int(fields[1]), int(fields[19]),
                      tuple(part.decode(errors="replace") for part in argv if part), cwd)


def this_process() -> Process:
    return next(process for process in running() if process.pid == os.getpid())


def left_behind(run: Process, root: Path, processes: Sequence[Process] | None = None) -> list[Process]:
    """What a test run (`run`: the pytest process) leaves running: its descendants, and the policy packs
    (`python -m pulumi.policy`, working in `root`/policies) started since it began whose parent is gone
    (a killed preview's pack is adopted by init, and is no descendant any more). `processes`: what runs
    (default: this machine's, now)."""
    processes = [process for process in (running() if processes is None else processes) if process.state != "Z"]
    children: dict[int, list[Process]] = {}
    for process in processes:
        children.setdefault(process.parent, []).append(process)
    found, pending = {}, list(children.get(run.pid, []))
    while pending:
        process = pending.pop()
        found[process.pid] = process
        pending.extend(children.get(process.pid, []))
    packs = str(root / "policies")
    by_pid = {process.pid: process for process in processes}
    for process in processes:
        parent = by_pid.get(process.parent)
        # Adopted: its parent is init or a subreaper, older than the run, and no test's: not another test run's
        # pytest, nor a pytest-xdist worker of this run or another (`make test-fast`), whose command line does not
        # say pytest but whose controller's does.
        adopted = parent is None or (parent.started < run.started and not _under_pytest(parent, by_pid))
        if process.started >= run.started and process.cwd == packs and "pulumi.policy" in process.argv and adopted:
            found.setdefault(process.pid, process)
    return list(found.values())


def _under_pytest(process: Process, by_pid: Mapping[int, Process]) -> bool:
    """The process or one of its ancestors is pytest."""
    seen: set[int] = set()
    current: Process | None = process
    while current is not None and current.pid not in seen:
        if any("pytest" in part for part in current.argv):
            return True
        seen.add(current.pid)
        current = by_pid.get(current.parent)
    return False
