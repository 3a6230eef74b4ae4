"""A fifth hostile round (issue 41): the three attacks of round 4 still open, template-heavy
manifests, price answers, the component provider's numbers, secret pool sections, limits the owners
enforce, NodePools that select GPUs by other means, and memory.

The standard is `test_hostile_input.py`'s: no traceback, no secret printed, no terminal or CI-log
injection (`assert_inert`), nothing lost. Growth is checked by counting work (calls, bytes, nodes),
never by timing."""

from __future__ import annotations

from pathlib import Path

import pytest

from components.platform_settings import parse_settings
from components.settings import PROJECT, SettingsError
from tests.conftest import ROOT, TODAY
from tests.test_components import GPU, problems_of
from tests.test_hostile_input import assert_inert
from tests.test_hostile_surfaces import line_of
from tools.mockrun import settings_from_stack_file

GROUP = "00000000-0000-0000-0000-0000000000a1"


def _stack_problems(tmp_path: Path, text: str) -> list[str]:
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    with pytest.raises(SettingsError) as raised:
        settings_from_stack_file(stack_file, "prod", environ={})
    for problem in raised.value.problems:
        assert_inert(problem)
    return [problem.split(f"{stack_file}:", 1)[-1] for problem in raised.value.problems]


# --- Round 4's three open attacks ----------------------------------------------------------------------

def test_one_principal_as_group_and_as_user_is_refused_at_both_lines(tmp_path):
    # Two RoleAssignments with one name: `pulumi up` hit a duplicate URN after other creations had
    # started, and Azure allows one type per object anyway.
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    admins = ("      - objectId: 00000000-0000-0000-0000-00000000a001\n        principalType: Group\n"
              "      - objectId: 00000000-0000-0000-0000-00000000a002\n        principalType: User\n")
    assert admins in text
    text = text.replace(admins, admins.replace("a002", "A001"), 1)
    problems = _stack_problems(tmp_path, text)
    assert len(problems) == 2, problems
    first, second = sorted(problems, key=lambda problem: int(problem.split(":")[0]))
    assert first.startswith(f"{line_of(text, '00000000a001')}: {PROJECT}:access.clusterAdmins[0]: ")
    assert second.startswith(f"{line_of(text, '00000000A001')}: {PROJECT}:access.clusterAdmins[1]: ")
    assert "listed as Group here and as User at clusterAdmins[1]" in first
    assert "listed as User here and as Group at clusterAdmins[0]" in second


def test_one_principal_under_three_types_names_each_entry_once():
    admins = [{"objectId": GROUP, "principalType": kind} for kind in ("Group", "User", "ServicePrincipal")]
    problems = problems_of({**GPU, "access": {"clusterAdmins": admins}})
    assert [problem.split(": ")[0] for problem in problems] == [
        f"{PROJECT}:access.clusterAdmins[{index}]" for index in (0, 1, 2)], problems


@pytest.mark.parametrize("start", ["٢٢:٠٠", "２２:００", "2٢:00", "22:0０"])
def test_a_maintenance_start_time_in_other_digits_is_refused(start):
    # Python's `\d` and `int()` take Arabic-Indic and fullwidth digits; AKS takes ASCII ones.
    raw = {**GPU, "maintenance": {"autoUpgrade": {"startTime": start}}}
    [problem] = problems_of(raw)
    assert "autoUpgrade.startTime" in problem and "is not a time from" in problem


@pytest.mark.parametrize("ranges", [
    ["0.0.0.0/1", "128.0.0.0/1"],
    ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"],
    ["203.0.113.0/24", "0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/3"],
    [f"{block}.0.0.0/7" for block in range(0, 200, 2)] + ["200.0.0.0/5", "208.0.0.0/4", "224.0.0.0/3"],
])
def test_ranges_that_together_cover_every_address_are_no_restriction(ranges):
    raw = {**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ranges}}}
    [problem] = problems_of(raw)
    assert problem.startswith(f"{PROJECT}:cluster.apiServerAccessProfile.authorizedIPRanges: ")
    assert "together cover every IPv4 address" in problem


def test_ranges_that_leave_one_address_out_restrict():
    # 255.255.255.255 is left out: a restriction, however loose.
    ranges = ["0.0.0.0/1", "128.0.0.0/2", "192.0.0.0/3", "224.0.0.0/4", "240.0.0.0/5", "248.0.0.0/6"]
    settings = parse_settings({**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ranges}}},
                              "unit", "eastus2", today=TODAY, environ={})
    assert settings.cluster.api_server.authorized_ip_ranges == tuple(ranges)
