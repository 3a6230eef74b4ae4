"""The outputs contract as the tools read it, under hostile values.

The module they pin: `policies/contract.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gpu_aks_policies.contract import ContractError, PlatformContract

from components.contract import platform_contract
from tests.conftest import ROOT
from tests.inputs import (
    HANG_GUARD_S,
    HOSTILE_NAME,
    POOL_NAMES,
    assert_inert,
    assert_pool_names_shown_bounded,
    pool_name_contracts,
)
from tools.observability import stack_settings

#: The dev stack's contract with its GPU pool renamed to each hostile name, damaged each way a name reaches a message.
NAMED = pool_name_contracts(platform_contract(stack_settings("dev")))


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


@pytest.mark.parametrize("damage", ["disagree", "one version", "bad field"])
def test_a_pool_name_in_a_contract_error_is_cut_and_escaped(damage):
    """A 100,000-character pool name was quoted whole (twice where the versions disagree: 200 KB), and one
    holding a line break forged an output line (#50): each name is cut to MAX_SHOWN_CHARS and escaped."""
    with pytest.raises(ContractError) as raised:
        PlatformContract.from_json(NAMED[damage])
    message = str(raised.value)
    assert_pool_names_shown_bounded(message)
    assert "\n" not in message and "pppp…(100000 characters)" in message and "a\\nb" in message
    PlatformContract.from_json(NAMED["agree"])  # the names themselves are no error


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["disagree", "one version", "bad field"])
@pytest.mark.parametrize("tool", ["gpu_aks_policies.check", "gpu_aks_policies.explain", "tools.doctor"])
def test_a_pool_name_in_a_contract_error_is_one_bounded_line_from_every_tool(tmp_path, tool, damage):
    platform, pod = tmp_path / "outputs.json", tmp_path / "pod.yaml"
    platform.write_text(json.dumps(NAMED[damage]))
    pod.write_text(json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}))
    files = ["--nodes", str(pod), "--pods", str(pod)] if tool == "tools.doctor" else [str(pod)]
    result = subprocess.run([sys.executable, "-m", tool, "--platform", str(platform), *files], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and "Traceback" not in result.stderr and not result.stdout
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ") and "(100000 characters)" in line
    assert_pool_names_shown_bounded(result.stderr, POOL_NAMES)
