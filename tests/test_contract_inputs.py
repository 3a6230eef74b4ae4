"""The outputs contract as the tools read it, under hostile values.

The module they pin: `policies/contract.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.inputs import HANG_GUARD_S, HOSTILE_NAME, assert_inert


@pytest.mark.slow
@pytest.mark.parametrize("sharing, expected", [
    ({"strategy": "timeSlicing", "replicas": 10**9}, "sharing.replicas: expected a whole number from 1 to 1000000"),
    ({"strategy": "timeSlicing", "replicas": "NaN"}, "sharing.replicas: expected a whole number"),
    ({"strategy": HOSTILE_NAME, "replicas": 4}, "sharing.strategy: expected timeSlicing or mps, got 'a\\x1b[2J"),
    ([1] * 10, "sharing: expected null or an object"),
])
@pytest.mark.parametrize("tool", ["gpu_aks_policies.check", "gpu_aks_policies.explain", "tools.doctor"])
def test_a_hostile_sharing_in_the_contract_is_one_escaped_input_error(tmp_path, tool, sharing, expected):
    outputs = json.loads((ROOT / "tests" / "fixtures" / "doctor" / "platform-prod.json").read_text())
    pool = next(iter(outputs["gpuPools"].values()))
    pool["sharing"] = sharing
    platform, pod = tmp_path / "outputs.json", tmp_path / "pod.yaml"
    platform.write_text(json.dumps(outputs))
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}))
    files = ["--nodes", str(pod), "--pods", str(pod)] if tool == "tools.doctor" else [str(pod)]
    result = subprocess.run([sys.executable, "-m", tool, "--platform", str(platform), *files], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert expected in line and len(line) < 400
    assert_inert(result.stderr)
