"""A stack file as the tools read it (`tools.stacks`): every problem at once with its file and line.

The module they pin: `tools/stacks.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from components import stack_config
from components.settings import PROJECT, SettingsError
from tests.conftest import ROOT
from tests.inputs import GROUP, HANG_GUARD_S, SECRET, alias_bomb, assert_inert, line_of, run, stack_problems
from tools import preflight
from tools.preview import main as preview_main
from tools.stacks import StackFileError, config_from_stack_file, settings_from_stack_file


def _production_stack_attacked() -> str:
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    for old, new in [
        ("        - 203.0.113.0/24\n        - 198.51.100.0/24",
         '        - 0.0.0.0/0\n        - ::/0\n        - 10.0.0.0/33\n        - "\\e[2J\\n::error::x"'),
        ("durationHours: 8", "durationHours: 25"), ("durationHours: 6", "durationHours: 0"),
        ('startTime: "22:00"\n      durationHours: 25', 'startTime: "25:00"\n      durationHours: 25'),
        ('utcOffset: "+00:00"\n      intervalWeeks', 'utcOffset: "+99:00"\n      intervalWeeks'),
        ("      - objectId: 00000000-0000-0000-0000-00000000a002\n        principalType: User",
         '      - objectId: "not-a-guid\\e]0;x\\a"\n        principalType: User\n'
         "      - objectId: 00000000-0000-0000-0000-00000000a001\n        principalType: Group"),
        ("    - name: a100mig\n      vmSize: Standard_NC24ads_A100_v4\n",
         "    - name: a100mig\n      vmSize: Standard_NC24ads_A100_v4\n      vnetSubnetID: \"/sub\\e[2J\\n::add-mask::x\"\n"),
    ]:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


@pytest.mark.slow
@pytest.mark.parametrize(("text", "expected"), [
    ("- config\n", "the stack file is a list; it must be a mapping with a 'config' key"),
    ("config: [1, 2]\n", "'config' must be a map of keys to values"),
    ("config:\n  azure-native:location: eastus2\n  ? [a, b]\n  : 1\n", "found unhashable key"),
    ("config:\n  azure-native:location: eastus2\n  5: x\n", "config key 5 is not a string"),
    ("config:\n  azure-native:location: eastus2\n  gpu-aks:cluster: " + "[" * 300 + "]" * 300 + "\n",
     "nested more than 64 levels deep"),
    ("anchors:\n" + alias_bomb(levels=8, indent="  ") + "config:\n  azure-native:location: eastus2\n"
     "  gpu-aks:cluster: {tags: {t: *l7}}\n", "once aliases are expanded (an alias bomb?)"),
])
def test_broken_stack_files_exit_2_naming_the_problem(tmp_path, text, expected):
    stack_file = tmp_path / "Pulumi.hostile.yaml"
    stack_file.write_text(text)
    assert len(text.encode()) < 1000 or "[[[" in text
    result = run("tools.preview", "hostile", "--config-file", str(stack_file))
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {stack_file}:") and expected in result.stderr


@pytest.mark.slow
def test_a_bad_tag_in_a_stack_file_is_a_preview_input_error(tmp_path):
    stack_file = tmp_path / "Pulumi.hostile.yaml"
    stack_file.write_text(f"config:\n  azure-native:location: eastus2\n  gpu-aks:password: !!bool {SECRET}\n")
    result = run("tools.preview", "hostile", "--config-file", str(stack_file))
    assert result.returncode == 2 and SECRET not in result.stdout + result.stderr
    assert f"{stack_file}:3:" in result.stderr and "!!bool is not true or false" in result.stderr


@pytest.mark.slow
def test_a_huge_nodepool_limit_in_a_stack_file_is_an_input_error_with_its_line(tmp_path):
    text = (ROOT / "Pulumi.nap.yaml").read_text().replace("limits: {gpu: 8}", "limits: {gpu: 1" + "0" * 4000 + "}")
    stack_file = tmp_path / "Pulumi.nap.yaml"
    stack_file.write_text(text)
    result = subprocess.run([sys.executable, "-m", "tools.preview", "nap", "--config-file", str(stack_file)], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert "OverflowError" not in result.stderr
    line = text[:text.index("limits: {gpu: 1000")].count("\n") + 1
    assert f"{stack_file}:{line}: gpu-aks:gpuNodePools[h100].limits.gpu: 1000" in result.stderr
    assert len(result.stderr) < 1000


def test_a_problem_about_a_plain_list_item_names_the_item_s_line(tmp_path):
    # Each item of a list of CIDRs or principals was reported at the list key's line: with 200 ranges,
    # which one was wrong had to be counted by hand.
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    ranges = [f"10.{i}.0.0/16" for i in range(40)]
    ranges[7], ranges[23], ranges[31] = "10.0.0.0/33", "0.0.0.0/0", "\x1b[2J::error::x"
    listed = "".join(f"        - {json.dumps(item)}\n" for item in ranges)
    text = text.replace("        - 203.0.113.0/24\n        - 198.51.100.0/24\n", listed, 1)
    groups = [GROUP, "not-a-guid\u202e", GROUP.upper(), "##[error]x"]
    text = text.replace("      adminGroupObjectIDs: []\n", "      adminGroupObjectIDs:\n" + "".join(
        f"        - {json.dumps(group)}\n" for group in groups), 1)
    problems = stack_problems(tmp_path, text)
    expected = [
        (f"cluster.apiServerAccessProfile.authorizedIPRanges[{index}]", f"- {json.dumps(ranges[index])}")
        for index in (7, 23, 31)] + [
        (f"cluster.aadProfile.adminGroupObjectIDs[{index}]", f"- {json.dumps(groups[index])}") for index in (1, 2, 3)]
    assert len(problems) == len(expected), problems
    for key, written in expected:
        [problem] = [p for p in problems if f": gpu-aks:{key}: " in p]
        assert problem.startswith(f"{line_of(text, written)}: "), (problem, written)
    assert "is listed twice (first at adminGroupObjectIDs[0])" in "".join(problems)


@pytest.mark.parametrize("tool", [preview_main, preflight.main])
def test_a_config_key_given_with_and_without_its_namespace_is_refused_with_both_lines(tmp_path, capsys, tool):
    # `gpuPools` is `gpu-aks:gpuPools` in the project's stack file: the later one replaced the earlier
    # without a word, and with it every GPU pool the first declared.
    text = (ROOT / "Pulumi.prod.yaml").read_text() + "  gpuPools:\n    - name: other\n      vmSize: Standard_NC4as_T4_v3\n"
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    first, again = line_of(text, "  gpu-aks:gpuPools:"), line_of(text, "  gpuPools:\n    - name: other")
    assert tool(["prod", "--config-file", str(stack_file)]) == 2
    err = capsys.readouterr().err
    assert f"config key 'gpuPools' is gpu-aks:gpuPools, already given as 'gpu-aks:gpuPools' at line {first}" in err
    assert f":{again}: " in err or f"line {again}: " in err, err
    with pytest.raises(StackFileError) as raised:
        config_from_stack_file(stack_file, PROJECT)
    assert raised.value.line == again


def test_the_preview_refuses_a_pool_section_holding_a_secure_value(tmp_path, capsys):
    from tools.preview import main as preview_main
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    written = "      vmSize: Standard_NC4as_T4_v3\n"
    assert written in text
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(text.replace(written, written + "      nodeLabels:\n        team:\n"
                                       "          secure: v1:AAAAs3cretcipher\n", 1))
    assert preview_main(["dev", "--config-file", str(stack_file)]) == 2
    captured = capsys.readouterr()
    assert "gpu-aks:gpuPools: is a secret" in captured.err
    assert "AAAAs3cretcipher" not in captured.out + captured.err


@pytest.mark.slow
def test_hostile_production_keys_are_every_problem_at_once_with_file_and_line(tmp_path):
    text = _production_stack_attacked()
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    result = subprocess.run([sys.executable, "-m", "tools.preview", "prod", "--config-file", str(stack_file)],
                            cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert_inert(result.stderr)
    problems = result.stderr.splitlines()[1:]
    expected = {  # key -> the text on its line (a list's plain items their own: test_stack_file_inputs.py)
        "cluster.apiServerAccessProfile.authorizedIPRanges[0]": "- 0.0.0.0/0",
        "cluster.apiServerAccessProfile.authorizedIPRanges[1]": "- ::/0",
        "cluster.apiServerAccessProfile.authorizedIPRanges[2]": "- 10.0.0.0/33",
        "cluster.apiServerAccessProfile.authorizedIPRanges[3]": '- "\\e[2J',
        "access.clusterAdmins[1].objectId": "not-a-guid", "access.clusterAdmins[2]": "a001\n        principalType: G",
        "maintenance.autoUpgrade.startTime": '"25:00"', "maintenance.autoUpgrade.durationHours": "durationHours: 25",
        "maintenance.autoUpgrade.utcOffset": '"+99:00"', "maintenance.nodeOSUpgrade.durationHours": "durationHours: 0",
        "gpuPools[a100mig].vnetSubnetID": "vnetSubnetID:",
    }
    assert len(problems) == len(expected), problems
    for key, written in expected.items():
        [problem] = [p for p in problems if f": gpu-aks:{key}: " in p]
        needle = text.index(written) if "clusterAdmins[2]" not in key else text.rindex("- objectId: 00000000")
        assert problem.startswith(f"  - {stack_file}:{text[:needle].count(chr(10)) + 1}: "), (problem, written)
        assert len(problem) < 400


def test_ten_thousand_ranges_are_one_problem_on_the_line_of_the_key(tmp_path):
    text = (ROOT / "Pulumi.prod.yaml").read_text().replace(
        "        - 203.0.113.0/24\n", "".join(f"        - 10.{i // 256}.{i % 256}.0/24\n" for i in range(10_000)))
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    with pytest.raises(SettingsError) as raised:
        settings_from_stack_file(stack_file, "prod", environ={})
    [problem] = raised.value.problems
    assert problem.startswith(f"{stack_file}:{line_of(text, 'authorizedIPRanges:')}: gpu-aks:cluster.apiServer")
    assert "has 10001 ranges; AKS allows at most 200" in problem


@pytest.mark.slow
@pytest.mark.parametrize("command", [["tools.preflight", "prod"], ["tools.observability", "--out", "{tmp}", "prod"],
                                     ["tools.preview", "nap", "--json"]])
def test_every_tool_that_reads_a_stack_says_a_garbage_clock_in_one_escaped_line(tmp_path, command):
    argv = [part.replace("{tmp}", str(tmp_path)) for part in command]
    result = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD_S,
                            env={**os.environ, stack_config.TODAY_VARIABLE: "2026\x1b[2J\n::error::x##[error]y"})
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert_inert(result.stderr)
    assert "GPU_AKS_TODAY='2026\\x1b[2J\\n::error::x##\\x5berror]y' is not an ISO date like 2026-11-22" in result.stderr
