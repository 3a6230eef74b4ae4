"""`make outputs` (#38): a failed preview says why and leaves no file behind, nor does a killed one;
POLICY_PACK_CONFIG=FILE reaches the preview as `--policy-pack-config`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.processes import left_behind, running, this_process

pytestmark = pytest.mark.slow


def _make(stack: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "--no-print-directory", "outputs", f"STACK={stack}", *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "MAKEFLAGS": ""})


@pytest.fixture
def stack(request: pytest.FixtureRequest) -> tuple[str, Path]:
    name = f"outputs-test-{os.getpid()}"
    path = ROOT / f"Pulumi.{name}.yaml"
    yield name, path
    path.unlink(missing_ok=True)
    for left in (ROOT / "build").glob(f"outputs-{name}.json*"):
        left.unlink()


def _temporary_files() -> set[Path]:
    return set((ROOT / "build").glob("outputs*.tmp"))


def test_a_failed_preview_says_why_and_leaves_no_tmp(stack):
    name, path = stack
    path.write_text("config:\n  azure-native:location: eastus2\n  gpu-aks:gpuPools:\n"
                    "    - {name: t4, vmSize: Standard_NC4as_T4_v3, maxCount: -1}\n")
    (ROOT / "build").mkdir(exist_ok=True)
    before = _temporary_files()
    result = _make(name)
    assert result.returncode != 0
    assert "gpu-aks:gpuPools[t4].maxCount" in result.stderr, result.stderr
    assert f"make outputs: the preview of {name} failed (exit 2, reasons above)" in result.stderr
    assert not list((ROOT / "build").glob(f"outputs-{name}.json*")) and _temporary_files() <= before


@pytest.mark.parametrize("signal_number, group", [(signal.SIGTERM, False), (signal.SIGINT, True), (signal.SIGTERM, True)],
                         ids=["SIGTERM to make (a CI timeout)", "SIGINT to its group (Ctrl-C)", "SIGTERM to its group"])
def test_a_killed_make_outputs_leaves_no_tmp_and_no_preview_running(stack, signal_number, group):
    # GNU make passes SIGTERM on to the recipe's shell, whose trap must stop the preview and remove the
    # .tmp (a shell runs a trap only once its foreground command has ended); Ctrl-C reaches them all.
    name, path = stack
    path.write_text((ROOT / "Pulumi.dev.yaml").read_text())
    (ROOT / "build").mkdir(exist_ok=True)
    before = _temporary_files()
    # SIGINT as a terminal's foreground job has it: a test run started in the background by a shell without job
    # control inherits it ignored, and then neither make nor its shell's trap can take it (POSIX: a signal ignored
    # on entry to a non-interactive shell cannot be trapped).
    make = subprocess.Popen(["make", "--no-print-directory", "outputs", f"STACK={name}"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MAKEFLAGS": ""}, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # Once the preview has started its policy pack, which must not outlive it either.
        _poll(lambda: bool(_temporary_files() - before and _packs_of(_previews_of(name))) or make.poll() is not None)
        written = _temporary_files() - before
        assert written and _packs_of(_previews_of(name)) and make.poll() is None, "the preview never started"
        if group:
            os.killpg(make.pid, signal_number)
        else:
            make.send_signal(signal_number)
        make.wait(timeout=60)
    finally:
        if make.poll() is None:
            make.kill()
            make.wait()
    assert make.returncode != 0
    assert not (_temporary_files() & written), "the .tmp is left behind"
    assert not list((ROOT / "build").glob(f"outputs-{name}.json*"))
    _poll(lambda: not _previews_of(name))  # the trap waits for it; this only lets /proc settle
    assert not _previews_of(name), "the preview outlived make"
    assert not _packs_left(), "the preview's policy pack outlived it"


def _poll(done: Callable[[], bool], tries: int = 3000) -> None:
    """Look up to `tries` times, 20 ms apart, until `done` (a count of looks, never a time compared)."""
    pause = threading.Event()
    for _ in range(tries):
        if done():
            return
        pause.wait(0.02)


def _previews_of(stack: str) -> list[int]:
    return [process.pid for process in running() if "tools.preview" in process.argv and stack in process.argv]


def _packs_of(parents: list[int]) -> list[int]:
    return [process.pid for process in running() if process.parent in parents and "pulumi.policy" in process.argv]


def _packs_left() -> list[int]:
    return [process.pid for process in left_behind(this_process(), ROOT) if "pulumi.policy" in process.argv]


def test_policy_pack_config_reaches_the_preview(stack, tmp_path):
    name, path = stack
    path.write_text((ROOT / "Pulumi.dev.yaml").read_text())
    config = tmp_path / "pack.json"
    config.write_text(json.dumps({"gpu-pods-fit-a-pool": {"enforcementLevel": "loud"}}))
    result = _make(name, f"POLICY_PACK_CONFIG={config}")
    assert result.returncode == 2 and "pack.json" in result.stderr, result.stderr
    config.write_text(json.dumps({"all": "advisory"}))
    result = _make(name, f"POLICY_PACK_CONFIG={config}")
    assert result.returncode == 0, result.stderr
    assert json.loads((ROOT / "build" / f"outputs-{name}.json").read_text())["outputs"]["gpuPools"]


def test_preview_json_says_on_stderr_why_it_exits_1(monkeypatch, capsys):
    """The JSON goes to a file in `make outputs`: the mandatory violations go to stderr too. (The settings
    now refuse what the shipped stacks could plant, exit 2, so the pack's answer is planted here.)"""
    import io

    from offline.analyzer import Diagnostic
    from tools import preview

    planted = Diagnostic("device-plugin-tolerates-gpu-pools", "mandatory", "urn:pulumi:dev::gpu-aks::x::a100-pool",
                         "GPU node pool 'a100' is not served by any NVIDIA device plugin")
    monkeypatch.setattr(preview, "analyze", lambda *args, **kwargs: [planted])
    out = io.StringIO()
    assert preview.main(["dev", "--json"], stdout=out) == 1
    assert not _packs_left(), "the pack the preview started outlived it"  # analyze(), which ended it, was replaced
    assert json.loads(out.getvalue())["violations"]
    error = capsys.readouterr().err
    assert "[mandatory]  device-plugin-tolerates-gpu-pools  (a100-pool)" in error
    assert "error: 1 mandatory policy violation(s)" in error and "--policy-pack-config" in error


def test_the_enforcement_page_s_pack_config_makes_a_rule_advisory():
    import re

    from gpu_aks_policies.rules import parse_rule_config

    page = (ROOT / "docs" / "enforcement.md").read_text()
    section = page[page.index("## Making a rule advisory"):]
    [example] = re.findall(r"```json\n(.*?)```", section, re.S)[:1]
    levels = {name: config.level for name, config in parse_rule_config(json.loads(example)).items()}
    assert levels["gpu-node-pools-are-tainted"] == "advisory" and levels["gpu-pods-select-gpu-nodes"] == "disabled"
