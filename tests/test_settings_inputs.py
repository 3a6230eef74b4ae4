"""The stack config's settings (`components.platform_settings.parse_settings`) under hostile values: short
escaped problems naming the key, no secret printed, numbers and durations as Go and AKS read them.

The module they pin: `components/settings/`. Each test failed on the code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from gpu_aks_policies.declarations import Key, ListOf, Section

from components import stack_config
from components.platform_settings import DOCUMENT, parse_settings
from components.pools import platform_pools
from components.replacements import identity_changes
from components.settings import PROJECT, SettingsError
from components.settings.common import IMAGE_REFERENCE, image_problem
from offline.mockrun import run_program
from tests.conftest import ROOT, TODAY
from tests.inputs import (
    ESCAPES,
    GROUP,
    GROWTH_LIMIT,
    HANG_GUARD_S,
    NAP_WHOLE_NUMBERS,
    SECRET_TEXT,
    T4,
    assert_inert,
    assert_no_injection,
    assert_one_line,
    growth,
    line_of,
    nap_pool_section,
    stack_problems,
)
from tests.test_components import GPU, problems_of
from tests.test_nap_settings import _with
from tools.stacks import config_from_stack_file

#: Each image key: (the stack config it sits in, how to set it).
IMAGE_KEYS = {
    "devicePlugin.image": lambda image: {"devicePlugin": {"image": image}},
    "smokeTest.image": lambda image: {"smokeTest": {"enabled": True, "image": image}},
    "observability.dcgmExporter.image": lambda image: {"observability": {"enabled": True,
                                                                          "dcgmExporter": {"image": image}}},
}


POOL_SECRET = "s3cret-pool-value"


HOSTILE_VALUES = ("a\x1b[2J\r\n::error::pwned ##[error]x\u202e", 10**4000, float("nan"), float("inf"),
                  ["\x1b[2J"] * 1000, {"\x1b]0;t\x07": "##[error]"}, -1, True)


#: A valid item for each list of pools, for the keys inside one.
LIST_ITEMS = {"gpuPools": {"name": "gput4", "vmSize": T4}, "cpuPools": {"name": "cpu", "minCount": 1, "maxCount": 1},
              "gpuNodePools": {"name": "h100", "gpus": ["H100"], "limits": {"gpu": 8}},
              "teams": {"name": "team-a", "namespaces": ["ml"], "gpus": {"h100": 1}}}


def _key_paths(section: Section, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every declared key, as a path of names (and 0 for a list's first item)."""
    paths: list[tuple[Any, ...]] = []
    for item in section.items:
        if isinstance(item, Key):
            paths.append((*prefix, item.name))
        elif isinstance(item, Section):
            paths += _key_paths(item, (*prefix, item.name))
        elif isinstance(item, ListOf):
            paths += _key_paths(item.item, (*prefix, item.name, 0))
    return paths


def _raw_with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    from tests.test_nap_settings import NAP
    raw = json.loads(json.dumps(NAP))  # NAP on: every pool kind's keys are read
    node: Any = raw
    for position, step in enumerate(path[:-1]):
        if step == 0:
            if not node:
                node.append(json.loads(json.dumps(LIST_ITEMS[path[position - 1]])))
            node = node[0]
        else:
            if not isinstance(node.get(step), (dict, list)):
                node[step] = [] if path[position + 1] == 0 else {}
            node = node[step]
    node[path[-1]] = value
    return raw


def problems_of_raw(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SettingsError) as raised:
        parse_settings(raw, "dev", "eastus2", today=TODAY, environ={})
    return raised.value.problems


SECTION_SECRET = "s3cretmark"


#: A value of each section that the program writes into a resource as it is.
_SECRET_SECTIONS: dict[str, dict[str, Any]] = {
    "access": {"clusterAdmins": [{"objectId": "00000000-0000-0000-0000-00000000c0de", "principalType": "User"}]},
    "devicePlugin": {"image": f"nvcr.io/nvidia/{SECTION_SECRET}:v0.18.0"},
    "smokeTest": {"enabled": True, "image": f"myacr.azurecr.io/{SECTION_SECRET}:1"},
    "admissionPolicy": {"exemptNamespaces": [SECTION_SECRET]},
    "maintenance": {"autoUpgrade": {"dayOfWeek": "Saturday", "startTime": "21:17"}},
    "observability": {"alerts": {"gpuTemperatureCelsius": 86}},
}


@pytest.mark.parametrize("sharing, reason", [
    ({"strategy": "timeSlicing", "replicas": 10**9}, "is above"),
    ({"strategy": "timeSlicing", "replicas": float("nan")}, "is not a whole number of replicas"),
    ({"strategy": "timeSlicing", "replicas": "4"}, "is not a whole number of replicas"),
    ({"strategy": "timeSlicing", "replicas": True}, "is not a whole number of replicas"),
    ({"strategy": "mps", "replicas": 10**4000}, "is above"),
    ({"strategy": ESCAPES, "replicas": 4}, "is not allowed"),
    ([1] * 10_000, "expected an object of settings"),
])
def test_hostile_sharing_settings_are_short_escaped_problems(sharing, reason):
    raw = json.loads(json.dumps(GPU, default=str))
    raw["gpuPools"][0]["sharing"] = sharing
    problems = problems_of(raw)
    assert any("gpuPools[gput4].sharing" in problem and reason in problem for problem in problems), problems
    for problem in problems:
        assert_one_line(problem)


@pytest.mark.parametrize("section, changes", [
    ("gpuNodePools", {"gpus": [SECRET_TEXT + " x"]}), ("gpuNodePools", {"gpus": [SECRET_TEXT], "gpuCount": None}),
    ("gpuNodePools", {"gpus": ["GB200", SECRET_TEXT], "gpuCount": None}),
    ("gpuNodePools", {"nodeTaints": [SECRET_TEXT + "=x:PreferNoSchedule"]}), ("gpuNodePools", {"limits": {SECRET_TEXT: 1}}),
    ("gpuNodePools", {"vmSizes": ["Standard_N" + SECRET_TEXT], "gpus": None, "gpuCount": None}),
    ("gpuNodePools", {"nodeLabels": {"kubernetes.azure.com/" + SECRET_TEXT: "x"}}),
    ("gpuPools", {"vmSize": "Standard_NC" + SECRET_TEXT}), ("gpuPools", {"nodeLabels": {"a.b/" + SECRET_TEXT + ".c": "x!"}}),
    ("gpuPools", {SECRET_TEXT: 1}),
])
def test_no_value_or_map_key_of_a_secret_section_is_printed(section, changes):
    # Checks quote values with `describe` and paths name map keys as written: every line is redacted
    # against the secret sections' strings (`Problems.redact`).
    from components.platform_settings import parse_settings
    from components.settings import SettingsError
    from tests.test_nap_settings import TODAY
    # A GPU AgentPool beside NAP is refused (fixed-size: the pool rule; autoscaled: AKS), so it is
    # only there for the gpuPools cases, each of which is refused by its section first.
    raw = _with(**({"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "minCount": 1, "maxCount": 1}]}
                   if section == "gpuPools" else {}))
    pool = raw[section][0]
    for name, value in changes.items():
        if value is None:
            del pool[name]
        else:
            pool[name] = value
    try:
        texts = list(parse_settings(raw, "nap", "eastus2", secret_keys={section}, today=TODAY, environ={}).warnings)
    except SettingsError as error:
        texts = error.problems
    # A secret pool section is refused as such (issue 41); its other problems are still told, redacted.
    assert any(f"gpu-aks:{section}[[secret]]" in text or text.startswith(f"gpu-aks:{section}: is a secret")
               for text in texts), texts
    assert not [text for text in texts if "hunter2" in text]


@pytest.mark.slow
def test_secret_texts_are_redacted_in_linear_time():
    from gpu_aks_policies.secrets import Redactor

    def prepare(n: int) -> Any:
        redactor = Redactor(f"secret-{i}" for i in range(n))
        messages = [f"gpuPools[p{i}].vmSize: 'secret-{i}' is not a size" for i in range(n)]
        return lambda: [redactor(message) for message in messages] + [redactor.path(m) for m in messages]
    assert growth(prepare, 5000) < GROWTH_LIMIT
    assert Redactor(["a.b/s3cret.c"]).path("gpuPools[x].nodeLabels.a.b/s3cret.c") == "gpuPools[x].nodeLabels.[secret]"
    assert Redactor(["s3cret"])("the 's3cret' value, not xs3cret") == "the '[secret]' value, not xs3cret"


@pytest.mark.parametrize("where", ["label key", "unknown key", "tag key"])
def test_a_settings_problem_never_carries_a_workflow_command(where):
    pool: dict[str, Any] = {"name": "gput4", "vmSize": T4, "maxCount": 1}
    raw: dict[str, Any] = {"gpuPools": [pool]}
    if where == "label key":
        pool["nodeLabels"] = {"##[error]x": "v"}
    elif where == "unknown key":
        pool["##[error]x" + "y" * 100_000] = 1
    else:
        raw["cluster"] = {"tags": {"##[error]x": 5}}
    with pytest.raises(SettingsError) as raised:
        parse_settings(raw, "dev", "eastus2", today=TODAY)
    for problem in raised.value.problems:
        assert_no_injection(str(problem))
        assert len(str(problem)) < 5000


def test_a_recorded_value_shown_in_a_warning_carries_no_workflow_command():
    from tests.test_replacements import DEV, _with
    previous = _with(_with(DEV, "cluster.resourceName", "##[error]old"), "gpuPools.gput4.azureName", "##[warning]x")
    previous["gpuPools"]["##[add-mask]y"] = {"kind": "agentPool", "azureName": "##[error]z", "createOnly": {}}
    changes = identity_changes(previous, DEV)
    assert changes.refused and changes.warnings
    for message in changes.refused + changes.warnings:
        assert_no_injection(message)


@pytest.mark.parametrize("groups, reason", [
    (["not-a-guid"], "is not an Entra ID group object ID"),
    ([GROUP, GROUP.upper()], "is listed twice"),
    ([GROUP + "\n::error::x"], "is not an Entra ID group object ID"),
    ([7], "is not an Entra ID group object ID"),
    ("00000000-0000-0000-0000-0000000000a1", "is not a list of group object IDs"),
])
def test_admin_groups_are_group_object_ids_once_each(groups, reason):
    # A non-GUID or repeated admin group passed the preview and failed at deploy (issue 30: "non-GUID
    # principals, and duplicated admins"); clusterAdmins was checked, aadProfile.adminGroupObjectIDs not.
    problems = problems_of({**GPU, "cluster": {"aadProfile": {"adminGroupObjectIDs": groups}}})
    [problem] = [p for p in problems if "adminGroupObjectIDs" in p]
    assert reason in problem and "\n" not in problem
    assert_inert(problem)


@pytest.mark.parametrize("key", sorted(IMAGE_KEYS))
@pytest.mark.parametrize("image", [
    "x\x1b[2J##[error]pwned\u202e",  # no whitespace: the exporter's own check took it
    "nvcr.io/nvidia/K8S-device-plugin:v1", "nvcr.io/nvidia/x:", "nvcr.io/nvidia/x@sha256:short", "-x", "",
    "nvcr.io/" + "a/" * 200 + "a", "x:" + "t" * 200, "a" * 100_000 + "!",
])
def test_an_image_the_kubelet_cannot_pull_is_refused(key, image):
    # Accepted, it left every pod of the DaemonSet or Job in InvalidImageName after the deploy.
    problems = problems_of({**GPU, **IMAGE_KEYS[key](image)})
    [problem] = [p for p in problems if p.startswith(f"{PROJECT}:{key}: ")]
    assert "is not a container image reference like" in problem and len(problem) < 400
    assert_inert(problem)


@pytest.mark.parametrize("image", ["nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "busybox", "localhost:5000/a/b:1",
                                   "[::1]:5000/x@sha256:" + "a" * 64, "registry.example.com:443/a__b/c--d.e:tag_1"])
def test_an_image_reference_the_kubelet_reads_is_taken(image):
    assert image_problem(image) is None


def test_image_references_are_matched_in_linear_time():
    # The grammar's empty separator (`[-]*`) makes a backtracking matcher exponential on "aaaa…!".
    def prepare(n: int) -> Any:
        texts = ["a" * n + "!", "a-" * n + "A", "a." * n + "/", "a.a-" * n + "/a!"]
        return lambda: [IMAGE_REFERENCE.fullmatch(text) for text in texts]
    assert growth(prepare, 2_000) < GROWTH_LIMIT


def test_a_fix_derived_from_a_secret_value_is_masked_too():
    # "[secret] has bits set after the prefix; write 10.0.0.0/8" told most of the secret range.
    raw = {**GPU, "cluster": {"apiServerAccessProfile": {"authorizedIPRanges": ["10.20.30.41/16"]},
                              "aadProfile": {"adminGroupObjectIDs": [GROUP, GROUP.upper()]}}}
    with pytest.raises(SettingsError) as raised:
        parse_settings(raw, "unit", "eastus2", secret_keys={"cluster"}, today=TODAY, environ={})
    text = "\n".join(raised.value.problems)
    assert "has bits set after the prefix; write [secret]" in text and "is listed twice" in text
    assert "10.20" not in text and "0000a1" not in text.lower()


@pytest.mark.parametrize("network, key, reason", [
    # kube-apiserver gives the first service address to the `kubernetes` Service (ServiceIPRange).
    ({"serviceCidr": "10.0.0.0/16", "dnsServiceIP": "10.0.0.1"}, "dnsServiceIP", "is the first address of serviceCidr"),
    # ... and refuses a service range of fewer than 8 addresses.
    ({"serviceCidr": "10.0.0.0/30", "dnsServiceIP": "10.0.0.2"}, "serviceCidr", "holds 4 address(es)"),
    # Each node takes a /24 of podCidr under Overlay.
    ({"podCidr": "10.244.0.0/25"}, "podCidr", "is smaller than the /24 each node takes from it"),
    ({"podCidr": "10.244.0.0/32"}, "podCidr", "is smaller than the /24"),
    ({"podCidr": "224.0.0.0/4"}, "podCidr", "overlaps 224.0.0.0/4, a special-purpose range"),
    ({"podCidr": "127.0.0.0/16"}, "podCidr", "overlaps 127.0.0.0/8"),
    ({"podCidr": "0.0.0.0/1"}, "podCidr", "overlaps 0.0.0.0/8"),
    ({"serviceCidr": "240.0.0.0/16", "dnsServiceIP": "240.0.0.10"}, "serviceCidr", "overlaps 240.0.0.0/4"),
])
def test_a_network_range_the_cluster_cannot_run_with_is_refused(network, key, reason):
    # Each was accepted, and the cluster broke after `pulumi up` (no node, no DNS, no API server).
    raw = {**GPU, "cluster": {"networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", **network}}}
    problems = problems_of(raw)
    assert any(p.startswith(f"{PROJECT}:cluster.networkProfile.{key}: ") and reason in p for p in problems), problems


@pytest.mark.parametrize("network", [{"podCidr": "10.244.0.0/24"}, {"serviceCidr": "10.0.0.0/29", "dnsServiceIP": "10.0.0.2"},
                                     {"serviceCidr": "10.0.0.0/16", "dnsServiceIP": "10.0.0.2"}])
def test_the_smallest_ranges_that_work_are_taken(network):
    raw = {**GPU, "cluster": {"networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", **network}}}
    assert parse_settings(raw, "unit", "eastus2", today=TODAY, environ={}).cluster.network is not None


@pytest.mark.parametrize("tags, reason", [
    ({f"k{i}": "v" for i in range(51)}, "has 51 tags; Azure allows at most 50 on a resource"),
    ({"a/b": "v"}, "has the tag name 'a/b': Azure takes 1 to 512 characters without"),
    ({"": "v"}, "has the tag name '': Azure takes 1 to 512"), ({"k" * 513: "v"}, "has the tag name 'kkkk"),
    ({"k": "v" * 257}, "has a value of 257 characters for 'k'; Azure takes at most 256"),
    ({"Env": "a", "env": "b"}, "has the tags 'Env' and 'env', one tag to Azure (tag names are case-insensitive)"),
])
def test_tags_azure_refuses_are_refused_at_preview(tags, reason):
    # Each passed the preview and failed `pulumi up` at the cluster and its resource group.
    [problem] = [p for p in problems_of({**GPU, "cluster": {"tags": tags}}) if p.startswith(f"{PROJECT}:cluster.tags: ")]
    assert reason in problem and len(problem) < 400, problem


@pytest.mark.parametrize("price, taken", [(1e-300, False), (0.123456, False), (0.00001, True), (0.12345, True),
                                          (9999.99999, True), (-1, True)])
def test_a_spot_price_azure_cannot_take_is_refused(price, taken):
    # 1e-300 is positive, so it passed; Azure takes a Spot max price with at most five decimal places.
    raw = {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot",
                         "spotMaxPrice": price}]}
    if taken:
        parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
        return
    [problem] = [p for p in problems_of(raw) if ".spotMaxPrice: " in p]
    assert "with at most 5 decimal places" in problem


def test_thousands_of_cluster_admins_are_read_in_linear_time():
    # Each admin was looked up in a list of those before it: 10,000 took 10 s.
    def prepare(n: int) -> Any:
        admins = [{"objectId": f"00000000-0000-0000-0000-{i:012d}", "principalType": "User"} for i in range(n)]
        raw = {**GPU, "access": {"clusterAdmins": admins}}
        return lambda: parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
    assert growth(prepare, 1_000) < GROWTH_LIMIT
    admins = [{"objectId": GROUP, "principalType": "Group"}, {"objectId": GROUP.upper(), "principalType": "Group"}]
    [problem] = problems_of({**GPU, "access": {"clusterAdmins": admins}})
    assert problem == f"{PROJECT}:access.clusterAdmins[1]: '{GROUP.upper()}' is listed twice"


def test_one_principal_as_group_and_as_user_is_refused_at_both_lines(tmp_path):
    # Two RoleAssignments with one name: `pulumi up` hit a duplicate URN after other creations had
    # started, and Azure allows one type per object anyway.
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    admins = ("      - objectId: 00000000-0000-0000-0000-00000000a001\n        principalType: Group\n"
              "      - objectId: 00000000-0000-0000-0000-00000000a002\n        principalType: User\n")
    assert admins in text
    text = text.replace(admins, admins.replace("a002", "A001"), 1)
    problems = stack_problems(tmp_path, text)
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


@pytest.mark.parametrize("key, raw", [
    ("gpuPools", {"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3",
                                "nodeLabels": {"team": POOL_SECRET}}]}),
    ("cpuPools", {**GPU, "cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "nodeLabels": {"t": POOL_SECRET}}]}),
    ("systemPool", {**GPU, "systemPool": {"vmSize": "Standard_D4ds_v5", "nodeLabels": {"t": POOL_SECRET}}}),
    ("gpuNodePools", {**NAP_WHOLE_NUMBERS, "gpuNodePools": [{**NAP_WHOLE_NUMBERS["gpuNodePools"][0],
                                                            "nodeLabels": {"team": POOL_SECRET}}]}),
])
def test_a_secret_pool_section_is_refused_without_being_printed(key, raw):
    # A secret gpuPools reached the AgentPools, the device plugin and the outputs contract in plain text.
    with pytest.raises(SettingsError) as refused:
        parse_settings(raw, "unit", "eastus2", secret_keys={key}, today=TODAY, environ={})
    [problem] = [p for p in refused.value.problems if p.startswith(f"{PROJECT}:{key}: ")]
    assert "is a secret" in problem and "set it in plain text" in problem
    assert not [p for p in refused.value.problems if POOL_SECRET in p]


def test_the_program_registers_nothing_for_a_secret_pool_section():
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", PROJECT)
    run = run_program(ROOT, "dev", config, [f"{PROJECT}:gpuPools"])
    assert run.error is not None and "gpu-aks:gpuPools: is a secret" in str(run.error)
    assert run.resources == [] or {resource.type for resource in run.resources} == {"pulumi:pulumi:Stack"}
    assert not run.stack_outputs


def test_go_durations_are_read_as_go_reads_them():
    from gpu_aks_policies.limits import GO_MAX_DURATION_NS, go_duration_ns
    assert go_duration_ns("1h30m") == 5400 * 10**9
    assert go_duration_ns("2562047h47m16s854ms775us807ns") == GO_MAX_DURATION_NS
    for text in ("", "10", "h", "1h 2m", "-1h", "1.5h", "1d"):
        assert go_duration_ns(text) is None, text


@pytest.mark.parametrize("key", ["scale-down-unneeded-time", "new-pod-scale-up-delay", "max-node-provision-time"])
def test_an_autoscaler_duration_go_cannot_hold_is_refused(key):
    # The cluster autoscaler reads these with Go's duration flags.
    raw = {**GPU, "cluster": {"autoScalerProfile": {key: "153722868m"}}}
    [problem] = problems_of(raw)
    assert key in problem
    parse_settings({**GPU, "cluster": {"autoScalerProfile": {key: "153722867m"}}}, "unit", "eastus2",
                   today=TODAY, environ={})


@pytest.mark.parametrize("value", ["garbage", "2026-13-45", "\x1b[2J\n::error::pwned", "9" * 100_000, "２０２６-１１-２２"])
def test_a_garbage_clock_override_is_one_short_escaped_problem(value):
    with pytest.raises(SettingsError) as raised:
        stack_config.today({stack_config.TODAY_VARIABLE: value})
    [problem] = raised.value.problems
    assert len(problem) < 200 and "\x1b" not in problem and "\n" not in problem
    assert problem.startswith("GPU_AKS_TODAY=") and problem.endswith("is not an ISO date like 2026-11-22")


@pytest.mark.slow
@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01"])
def test_a_clock_outside_the_calendar_says_so(tmp_path, day):
    result = subprocess.run([sys.executable, "-m", "tools.preview", "prod"], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_GUARD_S, env={**os.environ, stack_config.TODAY_VARIABLE: day})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"supported on {day}: none (that day is outside the AKS release calendar)" in result.stderr


@pytest.mark.slow
def test_every_key_given_hostile_values_gives_short_escaped_problems_and_no_crash():
    # 10**4000 in spotMaxPrice ended the parse in an OverflowError; `##[` in a value reached the
    # Pulumi CLI's output (the program's RunError) as a workflow command; a colon in a map key
    # took the key for a namespace.
    paths = _key_paths(DOCUMENT.root)
    assert len(paths) > 150, "the walk reaches every section"
    for path in paths:
        for value in HOSTILE_VALUES:
            try:
                texts = list(parse_settings(_raw_with(path, value), "dev", "eastus2", today=TODAY, environ={}).warnings)
            except SettingsError as error:
                texts = error.problems
            for text in texts:
                assert_inert(text)
                assert "\n" not in text and len(text) < 1500 and text.startswith(("gpu-aks:", "azure-native:")), \
                    (path, text)


def test_a_megabyte_map_key_is_named_short():
    [problem] = problems_of_raw({"cluster": {"autoScalerProfile": {"k" * 1_000_000: "1"}}})
    assert problem.startswith("gpu-aks:cluster.autoScalerProfile.kkkk") and "(1000034 characters)" in problem
    assert len(problem) < 2000


@pytest.mark.parametrize("duration, taken", [("0" * 5000 + "1s", True), ("0" * 5000 + "2562047h", True),
                                             ("9" * 5000 + "s", False), ("0" * 5000 + "2562048h", False)])
def test_a_go_duration_of_thousands_of_digits_is_read_as_go_reads_it(duration, taken):
    # `int()` of more than 4300 digits raised ValueError: "the program failed". Go's `leadingInt` skips zeros.
    from gpu_aks_policies.limits import GO_MAX_DURATION_NS, go_duration_ns
    if taken:
        parse_settings(nap_pool_section(consolidateAfter=duration), "unit", "eastus2", today=TODAY, environ={})
        assert go_duration_ns(duration) <= GO_MAX_DURATION_NS
        return
    [problem] = problems_of(nap_pool_section(consolidateAfter=duration))
    assert "longer than a Go duration can be" in problem and len(problem) < 400


@pytest.mark.parametrize("key, value, taken", [
    ("max-empty-bulk-delete", "0" * 5000 + "10", True), ("max-total-unready-percentage", "0" * 5000 + "45", True),
    ("max-empty-bulk-delete", "9" * 5000, False), ("max-total-unready-percentage", "1" + "0" * 5000, False),
])
def test_an_autoscaler_number_of_thousands_of_digits_is_a_verdict(key, value, taken):
    raw = {**GPU, "cluster": {"autoScalerProfile": {key: value}}}
    if taken:
        parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})
        return
    [problem] = problems_of(raw)
    assert f"autoScalerProfile.{key}: " in problem and "is not allowed" in problem


@pytest.mark.parametrize("key", sorted(_SECRET_SECTIONS))
def test_a_secret_section_the_program_writes_as_it_is_is_refused_without_being_printed(key):
    # `pulumi config set --secret gpu-aks:devicePlugin ...`: the image, the admins' object IDs, the exempt
    # namespaces, the window and the thresholds reached the DaemonSet, the RoleAssignments, the binding, the
    # MaintenanceConfiguration and the alert rules in plain text.
    from components.settings import PROJECT, SettingsError
    raw = {**GPU, key: _SECRET_SECTIONS[key]}
    parse_settings(raw, "unit", "eastus2", today=TODAY, environ={})  # taken in plain text
    with pytest.raises(SettingsError) as refused:
        parse_settings(raw, "unit", "eastus2", secret_keys={key}, today=TODAY, environ={})
    [problem] = refused.value.problems
    assert problem.startswith(f"{PROJECT}:{key}: is a secret") and "set it in plain text" in problem
    assert SECTION_SECRET not in problem and "c0de" not in problem and "21:17" not in problem


def test_the_program_registers_nothing_for_a_secret_device_plugin_section():
    # As the engine runs the program after `pulumi config set --secret gpu-aks:devicePlugin ...`: the value
    # decrypted, its key marked secret.
    from components.settings import PROJECT
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", PROJECT)
    config = {**config, f"{PROJECT}:devicePlugin": json.dumps(_SECRET_SECTIONS["devicePlugin"])}
    assert run_program(ROOT, "dev", config).error is None
    run = run_program(ROOT, "dev", config, [f"{PROJECT}:devicePlugin"])
    assert run.error is not None and f"{PROJECT}:devicePlugin: is a secret" in str(run.error)
    assert {resource.type for resource in run.resources} <= {"pulumi:pulumi:Stack"} and not run.stack_outputs
    assert SECTION_SECRET not in str(run.error)


def test_a_secret_cluster_section_is_still_taken():
    # Its tags are passed as secret inputs (docs/configuration.md): the one section that may be secret.
    settings = parse_settings({**GPU, "cluster": {"tags": {"owner": SECTION_SECRET}}}, "unit", "eastus2",
                              secret_keys={"cluster"}, today=TODAY, environ={})
    assert settings.cluster.secret


@pytest.mark.parametrize("key, value", [
    ("maxSurge", "1" + "0" * 5000), ("maxSurge", "100000000000000000000"), ("maxSurge", "1001"),
    ("maxSurge", "100000%"), ("maxSurge", "101%"), ("maxUnavailable", "9" * 5000), ("maxUnavailable", "200%"),
])
def test_an_upgrade_node_count_past_the_pool_is_refused_not_a_traceback(key, value):
    """A 5000-digit maxSurge raised ValueError (int() of more than 4300 digits) in the quota count, and
    10^20 was counted as 8x10^20 vCPUs; AKS never surges or takes down more nodes than the pool has."""
    from components.platform_settings import SettingsError, parse_settings
    pool = {"name": "cpu", "vmSize": "Standard_D8ds_v5", key: value}
    with pytest.raises(SettingsError) as refused:
        parse_settings({"cpuPools": [pool]}, "test", "eastus2")
    assert f"cpuPools[cpu].{key}" in str(refused.value) and "learn.microsoft.com/azure/aks/upgrade-cluster" in \
        str(refused.value) and "0" * 100 not in str(refused.value)


@pytest.mark.parametrize("value, nodes", [("1000", 3), ("0003", 3), ("100%", 3), ("2", 2)])
def test_a_surge_counts_at_most_the_pool_s_nodes(value, nodes):
    from components.platform_settings import parse_settings
    settings = parse_settings({"cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "maxCount": 3,
                                             "maxSurge": value}]}, "test", "eastus2")
    need = next(need for need in platform_pools(settings).capacity() if need.key == "cpuPools[cpu]")
    assert need.surge == nodes


def test_a_surge_of_thousands_of_leading_zeros_counts_as_its_number():
    """The settings accept `maxSurge: "000…03"` (3 nodes, leading zeros aside), and the quota count read it
    with `int()`, which counts the zeros towards its 4300-digit limit and raised ValueError."""
    from components.platform_settings import parse_settings
    for value, nodes in (("0" * 5000 + "3", 3), ("0" * 5000 + "50%", 2)):
        settings = parse_settings({"cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "maxCount": 3,
                                                 "maxSurge": value}]}, "test", "eastus2")
        assert [need.surge for need in platform_pools(settings).capacity() if need.key == "cpuPools[cpu]"] == [nodes]


#: A taint at the longest a valid one holds: a 253-character DNS-subdomain prefix, '/', a 63-character name, and a
#: 63-character value (k8s.io/kubernetes v1.37.2 `validateNodeTaints`).
LONGEST_TAINT = f"{'.'.join(['a' * 63] * 3 + ['b' * 61])}/{'n' * 63}={'v' * 63}:NoSchedule"


def test_a_valid_taint_of_any_length_is_read_written_and_read_back_whole():
    """A taint the API server accepts is no message: the pool readers write it with `format_taint` and parse it
    again, so it is never cut (cutting taints at 80 characters failed the program and the pack with
    TaintSyntaxError on a valid 81-character key); only a message quotes it cut (`shown_taint`)."""
    from gpu_aks_policies.scheduling import format_taint, parse_taint, shown_taint

    taint = parse_taint(LONGEST_TAINT)
    assert format_taint(taint) == LONGEST_TAINT and shown_taint(taint) == LONGEST_TAINT
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", PROJECT)
    pools = json.loads(config[f"{PROJECT}:gpuPools"])
    pools[0]["nodeTaints"] = [*pools[0].get("nodeTaints", ["sku=gpu:NoSchedule"]), LONGEST_TAINT]
    run = run_program(ROOT, "dev", {**config, f"{PROJECT}:gpuPools": json.dumps(pools)})
    assert run.error is None, run.error
    [pool] = [r for r in run.resources if r.type == "azure-native:containerservice:AgentPool"
              and LONGEST_TAINT in (r.inputs.get("nodeTaints") or [])]
    assert pool


def test_a_name_that_is_no_gpu_pool_is_told_the_first_gpu_pools_and_a_count():
    """devicePlugin.pools, dra.pools and a queue's gpus name the GPU pools there are: the first MAX_LISTED, then a
    count, however many the stack has."""
    from gpu_aks_policies.limits import MAX_LISTED

    from components.settings.common import not_a_gpu_pool

    pools = [f"g{i}" for i in range(MAX_LISTED + 25)]
    message = not_a_gpu_pool("cpu", pools)
    assert message == f"'cpu' is not a GPU pool; GPU pools: {', '.join(pools[:MAX_LISTED])}, and 25 more"
    assert not_a_gpu_pool("cpu", []) == "'cpu' is not a GPU pool; GPU pools: none"
