"""The small manifests `benchmarks.checker_throughput` times the checker on have the shape issue 30
names: a Pod, Job, CronJob, Deployment, List or pod template of about 16 lines, two or three
containers with quantity strings, nearly every one breaking a rule. A generator that drifted to
cheaper cases would make the ratio it prints say nothing about such a corpus."""

from __future__ import annotations

import collections
from pathlib import Path

import yaml
from gpu_aks_policies.check import check_paths
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import pod_specs_of

from benchmarks.checker_throughput import SMALL_KINDS, small_corpus


def test_the_small_corpus_has_the_shape_of_the_issue(tmp_path: Path) -> None:
    files = small_corpus(tmp_path / "small", 240)
    texts = [file.read_text() for file in files]
    assert 14 <= sum(text.count("\n") for text in texts) / len(texts) <= 18, "about 16 lines each"
    kinds = collections.Counter(yaml.safe_load(text)["kind"] for text in texts)
    assert set(kinds) == set(SMALL_KINDS) and min(kinds.values()) == len(texts) // len(SMALL_KINDS)
    for text in texts:
        document = yaml.safe_load(text)
        [obj] = document["items"] if document["kind"] == "List" else [document]
        [pod] = pod_specs_of(obj)
        assert len(pod.containers) in (2, 3)
        for container in pod.containers:
            limits = container.spec["resources"]["limits"]
            assert any(isinstance(value, str) for value in limits.values()), "quantity strings"
    report = check_paths([str(tmp_path / "small")], default_rule_config())
    assert report.checked == len(texts) and not report.errors
    breaking = {(v.file, v.doc) for v in report.violations if v.level == "mandatory"}
    assert len(breaking) >= 0.85 * len(texts), "nearly every one breaks a mandatory rule"
    gpu_positions = {v.path.split("containers[")[1][0] for v in report.violations if "containers[" in v.path}
    assert gpu_positions == {"0", "1", "2"}, "the GPU container is not always the first"


def test_the_analyzer_benchmark_reads_a_process_cpu_time(monkeypatch, tmp_path) -> None:
    """The pack process's CPU per request that `benchmarks.analyzer_throughput` prints beside wall time:
    utime and stime of `/proc/<pid>/stat`, read from a stat line written here. No time is measured (issue
    41: a test that ran a busy child and bounded its CPU seconds compared times)."""
    import subprocess
    import sys

    from benchmarks import analyzer_throughput
    from benchmarks.analyzer_throughput import process_cpu_seconds

    # Fields 14 and 15 (utime 12, stime 3 ticks); the command name holds ") " as a process may name itself.
    stat = "4242 (py) thon) R 1 2 3 4 5 6 7 8 9 10 12 3 0 0 20 0 1 0 100 1000 10\n"
    real_path = analyzer_throughput.Path
    monkeypatch.setattr(analyzer_throughput, "Path", lambda text: tmp_path / "stat" if text == "/proc/4242/stat"
                        else real_path(text))
    monkeypatch.setattr(analyzer_throughput.os, "sysconf", lambda name: 100)
    (tmp_path / "stat").write_text(stat)
    assert process_cpu_seconds(4242) == 0.15
    (tmp_path / "stat").write_text("4242 (py) R 1 2\n")
    assert process_cpu_seconds(4242) is None, "a line without the CPU fields is no reading"
    monkeypatch.undo()
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    assert process_cpu_seconds(finished.pid) is None, "a process that is gone has no CPU time to read"
