"""`tests/processes.py`: what the end of a test run counts as left behind."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.processes import Process, left_behind

PACKS = str(ROOT / "policies")
#: A pytest-xdist run (`make test-fast`): its controller, and two workers whose command lines do not say pytest.
CONTROLLER = Process(10, "S", 1, 100, ("python", "-m", "pytest", "-n", "2"), str(ROOT))
WORKER_A = Process(11, "S", 10, 150, ("python", "-c", "import sys;exec(eval(sys.stdin.readline()))"), str(ROOT))
WORKER_B = Process(12, "S", 10, 151, WORKER_A.argv, str(ROOT))
#: A policy pack, as `PolicyPackProcess` starts one, in a test of worker A.
PACK_OF_A = Process(20, "S", 11, 300, ("python", "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."), PACKS)
#: A pack a killed preview left, adopted by a subreaper older than the run.
SUBREAPER = Process(5, "S", 1, 50, ("bash", "-c", "sleep infinity"), "/")
ORPHAN = Process(21, "S", 5, 310, PACK_OF_A.argv, PACKS)


def test_a_live_pack_of_another_worker_of_the_run_is_the_workers_not_an_orphan():
    """Each xdist worker ends its session on its own: a pack worker A still uses is A's, although A's command line
    does not say pytest and A started before worker B's session (it was counted as an orphan and killed, failing
    A's test); a pack adopted by a subreaper is still an orphan."""
    running = [CONTROLLER, WORKER_A, WORKER_B, PACK_OF_A, SUBREAPER, ORPHAN]
    assert [p.pid for p in left_behind(WORKER_B, ROOT, {WORKER_A.pid}, running)] == [ORPHAN.pid]
    # Without knowing the run's other workers, A's pack reads as adopted: what the rule above tells apart.
    assert sorted(p.pid for p in left_behind(WORKER_B, ROOT, (), running)) == [PACK_OF_A.pid, ORPHAN.pid]
