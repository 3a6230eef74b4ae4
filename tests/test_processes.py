"""`tests/processes.py`: what the end of a test run counts as left behind."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.processes import Process, left_behind

PACKS = str(ROOT / "policies")
XDIST_WORKER = ("python", "-c", "import sys;exec(eval(sys.stdin.readline()))")
PACK = ("python", "-u", "-m", "pulumi.policy", "127.0.0.1:1", ".")
#: A pytest-xdist run (`make test-fast`): its controller, and two workers whose command lines do not say pytest.
CONTROLLER = Process(10, "S", 1, 100, ("python", "-m", "pytest", "-n", "2"), str(ROOT))
WORKER_A = Process(11, "S", 10, 150, XDIST_WORKER, str(ROOT))
WORKER_B = Process(12, "S", 10, 151, XDIST_WORKER, str(ROOT))
#: A policy pack, as `PolicyPackProcess` starts one, in a test of worker A.
PACK_OF_A = Process(20, "S", 11, 300, PACK, PACKS)
#: Another run in the same checkout, begun earlier, its worker's pack still in use.
OTHER_CONTROLLER = Process(30, "S", 1, 90, ("python", "-m", "pytest", "-n", "1"), str(ROOT))
OTHER_WORKER = Process(31, "S", 30, 95, XDIST_WORKER, str(ROOT))
PACK_OF_OTHER_RUN = Process(32, "S", 31, 305, PACK, PACKS)
#: A pack a killed preview left, adopted by init, and one adopted by a subreaper older than the run.
ORPHAN = Process(21, "S", 1, 310, PACK, PACKS)
SUBREAPER = Process(5, "S", 1, 50, ("tini", "--", "bash"), "/")
ADOPTED = Process(22, "S", 5, 320, PACK, PACKS)
RUNNING = [CONTROLLER, WORKER_A, WORKER_B, PACK_OF_A, OTHER_CONTROLLER, OTHER_WORKER, PACK_OF_OTHER_RUN, ORPHAN,
           SUBREAPER, ADOPTED]


def test_a_live_pack_of_a_test_process_is_the_tests_and_an_adopted_one_is_left_behind():
    """Each xdist worker ends its session on its own: a pack worker A, or another run's worker, still uses is
    theirs, although a worker's command line does not say pytest and it started before worker B's session (such a
    pack was counted as an orphan and killed, failing A's test); a pack adopted by init or a subreaper is left
    behind."""
    assert sorted(p.pid for p in left_behind(WORKER_B, ROOT, RUNNING)) == [ORPHAN.pid, ADOPTED.pid]


def test_a_pack_of_the_run_itself_is_left_behind_however_deep():
    assert [p.pid for p in left_behind(WORKER_A, ROOT, RUNNING) if p.pid == PACK_OF_A.pid] == [PACK_OF_A.pid]
