"""ruff over the whole tree (mypy is slower and runs in `make lint`)."""

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_ruff_is_clean():
    ruff = Path(sys.executable).with_name("ruff")
    result = subprocess.run([str(ruff), "check", str(ROOT)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


#: Modules and names that measure time. A test that imports one compares times, which move with the
#: machine (issue 41: a CI run measured 8.07x against a limit of 8x); growth is counted instead
#: (`tests/inputs.py`, `calls_made`), and speed is measured in benchmarks/.
TIMING_MODULES = frozenset({"time", "timeit"})
TIMING_NAMES = frozenset({"perf_counter", "perf_counter_ns", "process_time", "process_time_ns", "monotonic",
                          "monotonic_ns", "thread_time", "thread_time_ns", "getrusage", "default_timer"})


def _timing_imports(source: str) -> list[str]:
    import ast
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] in TIMING_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in TIMING_MODULES:
                found.append(node.module or "")
            found += [alias.name for alias in node.names if alias.name in TIMING_NAMES]
        elif isinstance(node, ast.Attribute) and node.attr in TIMING_NAMES:
            found.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A script a test runs in a child process (`python -c "import time ..."`) measures time too.
            found += [name for name in TIMING_NAMES if re.search(rf"\b{name}\(", node.value)]
    return found


def test_no_test_measures_time():
    offenders = {path.name: names for path in sorted((ROOT / "tests").glob("*.py"))
                 if path.name != Path(__file__).name and (names := _timing_imports(path.read_text()))}
    assert offenders == {}, f"tests that measure time (count work instead, or move to benchmarks/): {offenders}"


def test_the_timing_check_can_fail():
    assert _timing_imports("import time\n") == ["time"]
    assert _timing_imports("from time import perf_counter\n") == ["time", "perf_counter"]
    assert _timing_imports("import resource\nresource.getrusage(0)\n") == ["getrusage"]
    assert _timing_imports("import cProfile\n") == []
    assert _timing_imports('run(["python", "-c", "end = time.process_time() + 0.1"])\n') == ["process_time"]
    assert _timing_imports('"a process_time of the pack"\n') == []
