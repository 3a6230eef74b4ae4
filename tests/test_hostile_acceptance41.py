"""The held-out acceptance check of issue 41, from the outside: what it found beyond rounds 4 and 5.

- a JSON string cost the reader about 115 bytes a character (a 4 MB string in a legal `--previous-outputs`
  record took the preview to 4.6 times its usual peak memory; the checker reads JSON manifests the same way);
- a contract's `gpuModel` made of qualifiers or spaces was stripped in quadratic time by `gpu-aks-check
  --platform` and `gpu-aks-explain` (an 80 kB model: 100 s);
- a Go duration or an autoscaler number of more than 4300 digits stopped the program with ValueError
  (`consolidateAfter: 000…01s`, which Go reads as 1s).

The standard is `test_hostile_input.py`'s. Memory is counted in bytes (tracemalloc); a hang is turned into a
failure by HANG_GUARD_S only, never compared."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from typing import Any

import pytest
from gpu_aks_policies.documents import SourceIndex, load_json

from components.platform_settings import parse_settings
from tests.conftest import ROOT, TODAY
from tests.test_components import GPU, problems_of
from tests.test_hostile_input import HANG_GUARD_S
from tests.test_hostile_round5 import _nap_pool
from tools.preview import PREVIOUS_OUTPUTS_LIMITS


def _peak_bytes(work: Any) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("body", ["k" * 2_000_000, "\\n" * 1_000_000, "\\u00e9x" * 300_000],
                         ids=["plain", "escapes", "unicode escapes"])
@pytest.mark.parametrize("indexed", [False, True], ids=["record", "manifest"])
def test_a_long_json_string_costs_about_its_own_size(body, indexed):
    # `"(?:[^"\\]|\\.)*"` kept a backtracking entry per character: 230 MB for this 2 MB string.
    text = json.dumps({"kubeconfig": None, "deep": [[[[]]]] * 30}).replace("null", f'"{body}"')
    assert text.count("[") + text.count("{") > PREVIOUS_OUTPUTS_LIMITS.max_depth, "brackets enough to scan the nesting"
    # As `--previous-outputs` reads a record (no index), and as the checker reads a JSON manifest.
    peak = _peak_bytes(lambda: load_json(text, index=SourceIndex()) if indexed else
                       load_json(text, PREVIOUS_OUTPUTS_LIMITS))
    assert peak < 4 * len(text), (peak, len(text))


def test_a_long_json_string_is_still_located_and_its_duplicates_found():
    index = SourceIndex()
    text = '{\n"a": "' + "\\\"{" * 100_000 + '",\n"b": {"c": 1},\n"b": 2}'
    document = load_json(text, index=index)
    assert document["b"] == 2 and len(document["a"]) == 200_000
    [duplicate] = index.duplicates
    assert duplicate.line == 4 and "line 3" in duplicate.message, duplicate


_NODE_CHOICE = """
from gpu_aks_policies.fit import node_choice
from gpu_aks_policies.pools.model import Offer
def offer(model, gpus):
    return Offer(vm_size="Standard_X", gpu_model=model, gpu_memory_gib=80, gpus_per_vm=gpus,
                 resource="nvidia.com/gpu", per_node=gpus, mig_partition=None,
                 capacity_types=("spot", "onDemand"), hourly_price=None)
n = 300_000
print(node_choice([offer("H100" + " NVL" * n, 1), offer("H100" + " " * n + "80GB", 2)]))
print(node_choice([offer("A100 80GB SXM", 1), offer("H100 NVL", 2), offer("80GB", 1)]))
"""


def test_a_gpu_model_of_many_qualifiers_or_spaces_is_read_in_one_pass():
    # The qualifier regex searched the whole model again after each qualifier it removed and backtracked
    # over every run of spaces: 20,000 qualifiers took 100 s, these 300,000 would take hours.
    result = subprocess.run([sys.executable, "-c", _NODE_CHOICE], cwd=ROOT, capture_output=True, text=True,
                            timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["one of H100 x1, H100 x2, Spot or on-demand",
                                          "one of A100 x1, H100 x2, 80GB x1, Spot or on-demand"]


@pytest.mark.parametrize("duration, taken", [("0" * 5000 + "1s", True), ("0" * 5000 + "2562047h", True),
                                             ("9" * 5000 + "s", False), ("0" * 5000 + "2562048h", False)])
def test_a_go_duration_of_thousands_of_digits_is_read_as_go_reads_it(duration, taken):
    # `int()` of more than 4300 digits raised ValueError: "the program failed". Go's `leadingInt` skips zeros.
    from gpu_aks_policies.limits import GO_MAX_DURATION_NS, go_duration_ns
    if taken:
        parse_settings(_nap_pool(consolidateAfter=duration), "unit", "eastus2", today=TODAY, environ={})
        assert go_duration_ns(duration) <= GO_MAX_DURATION_NS
        return
    [problem] = problems_of(_nap_pool(consolidateAfter=duration))
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


# --- Secret sections that are not pool sections --------------------------------------------------------

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
    from tools.mockrun import run_program
    from tools.stacks import config_from_stack_file
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


# --- Gt/Lt bounds in other digits ---------------------------------------------------------------------

@pytest.mark.parametrize("bound, matches", [
    ("0", True), ("+0", True), ("00", True), ("-1", True), ("9223372036854775807", False),
    ("٠", False), ("０", False), ("0_0", False), (" 0", False), ("0 ", False), ("9223372036854775808", False),
    ("1" + "0" * 5000, False),
])
def test_a_gt_bound_is_read_as_the_scheduler_reads_it(bound, matches):
    # Python's int() takes Arabic-Indic and fullwidth digits, `_` and spaces; apimachinery's `NewRequirement`
    # reads the bound with strconv.ParseInt(v, 10, 64), and a bound it cannot read matches no node. A pod
    # asking for `sku-gpu-count Gt ["٠"]` was said to fit a pool it can never land on.
    from gpu_aks_policies.scheduling import node_selector_term_matches
    term = {"matchExpressions": [{"key": "karpenter.azure.com/sku-gpu-count", "operator": "Gt", "values": [bound]}]}
    assert node_selector_term_matches(term, {"karpenter.azure.com/sku-gpu-count": "1"}) is matches


def test_go_integers_are_read_as_strconv_reads_them():
    from gpu_aks_policies.limits import go_int
    assert [go_int(text) for text in ("7", "-7", "+7", "007", "-9223372036854775808")] == [7, -7, 7, 7, -2**63]
    for text in ("", "+", "٧", "7_0", " 7", "7.0", "1e3", "9223372036854775808", "-9223372036854775809", "9" * 5000):
        assert go_int(text) is None, text


# --- maxSurge / maxUnavailable of any length (the lead's files; found by the hostile acceptance run) ---


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
    from components.pools import platform_pools
    settings = parse_settings({"cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "maxCount": 3,
                                             "maxSurge": value}]}, "test", "eastus2")
    need = next(need for need in platform_pools(settings).capacity() if need.key == "cpuPools[cpu]")
    assert need.surge == nodes


# --- Karpenter's Gte and Lte (the lead's files; found by the hostile acceptance run) ---------------


def _gpu_count_nodepool(operator: str, value: str, tainted: bool = True) -> dict:
    taints = [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}] if tainted else []
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
            "spec": {"template": {"spec": {"requirements": [
                {"key": "karpenter.azure.com/sku-gpu-count", "operator": operator, "values": [value]}],
                "taints": taints}}, "limits": {"nvidia.com/gpu": "4"}}}


def _pool_findings(props: dict) -> list[str]:
    from gpu_aks_policies.pool_rules import check_gpu_node_pool
    from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS
    from gpu_aks_policies.rules import parse_rule_config
    config = parse_rule_config({})[TAINTED_GPU_POOLS]
    return [finding.message for finding in check_gpu_node_pool("kubernetes:karpenter.sh/v1:NodePool", props, config)]


@pytest.mark.parametrize("operator, value", [("Gt", "7"), ("Gte", "8")])
def test_gte_is_read_as_karpenter_reads_it(operator, value):
    """Both NodePool CRDs list Gte and Lte (tests/fixtures/karpenter/); the pack read them as no bound, so
    `sku-gpu-count Gte 8` under a 4-GPU limit passed where `Gt 7` is refused."""
    assert any("admit" in message for message in _pool_findings(_gpu_count_nodepool(operator, value)))


@pytest.mark.parametrize("operator, value", [("Lt", "1"), ("Lte", "0")])
def test_lte_zero_gpus_is_no_gpu_pool(operator, value):
    """`sku-gpu-count Lte 0` launches only CPU sizes: untainted, it is no GPU pool (it was judged one,
    listing every GPU size)."""
    assert _pool_findings(_gpu_count_nodepool(operator, value, tainted=False)) == []


# --- NodePool template labels are requirements (the lead's files; found by the hostile acceptance run) ---


@pytest.mark.parametrize("label, value", [("node.kubernetes.io/instance-type", "Standard_D8ds_v5"),
                                          ("topology.kubernetes.io/region", "westus"),
                                          ("failure-domain.beta.kubernetes.io/zone", "eastus2-1")])
def test_a_nodepool_label_that_picks_instance_types_is_refused(label, value):
    """Karpenter requires a NodePool's template labels (`NodeClaimTemplate`): an instance-type label of a
    CPU size left gpuNodePools offering H100 sizes while the NodePool could launch no node at all."""
    problems = problems_of(_nap_pool(nodeLabels={label: value}))
    assert any(f"nodeLabels.{label}" in problem and "requirements" in problem for problem in problems)


def test_the_pack_reads_a_nodepool_s_template_labels_as_requirements():
    """A hand-written NodePool whose template labels pin a CPU size launches no GPU node: untainted, it is
    no GPU pool (the pack judged it one, listing every GPU size)."""
    props = _gpu_count_nodepool("Gt", "0", tainted=False)
    props["spec"]["template"]["metadata"] = {"labels": {"node.kubernetes.io/instance-type": "Standard_D8ds_v5"}}
    assert _pool_findings(props) == []
    props["spec"]["template"]["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "Standard_NC4as_T4_v3"
    assert any("Standard_NC4as_T4_v3" in message for message in _pool_findings(props))


def test_a_surge_of_thousands_of_leading_zeros_counts_as_its_number():
    """The settings accept `maxSurge: "000…03"` (3 nodes, leading zeros aside), and the quota count read it
    with `int()`, which counts the zeros towards its 4300-digit limit and raised ValueError."""
    from components.platform_settings import parse_settings
    from components.pools import platform_pools
    for value, nodes in (("0" * 5000 + "3", 3), ("0" * 5000 + "50%", 2)):
        settings = parse_settings({"cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5", "maxCount": 3,
                                                 "maxSurge": value}]}, "test", "eastus2")
        assert [need.surge for need in platform_pools(settings).capacity() if need.key == "cpuPools[cpu]"] == [nodes]


def test_a_template_label_the_preview_does_not_know_yet_leaves_the_pool_undecided():
    """An instance-type template label from another resource's output is unknown at preview: the pool is
    undecided, not read as admitting no GPU size (which passed it unjudged); an unknown label of your own
    picks no size and changes nothing."""
    from gpu_aks_policies.podspecs import UNKNOWN
    props = _gpu_count_nodepool("Gt", "0", tainted=False)
    props["spec"]["template"]["metadata"] = {"labels": {"node.kubernetes.io/instance-type": UNKNOWN}}
    assert any("instance-type" in message for message in _pool_findings(props))
    props["spec"]["template"]["metadata"] = {"labels": {"team": UNKNOWN}}
    assert any("carries no NoSchedule GPU taint" in message for message in _pool_findings(props))


def test_the_explainer_cuts_a_contract_s_huge_gpu_model_as_every_quoted_value():
    """A contract's `gpuModel` is any text: the explainer printed a 200k-character one whole, in every
    line that named the pool's GPU."""
    from gpu_aks_policies.explain import explain
    from gpu_aks_policies.fit import render
    from gpu_aks_policies.limits import MAX_SHOWN_CHARS
    outputs = json.loads((ROOT / "examples" / "app-repo" / "platform" / "prod-outputs.json").read_text())
    for pool in outputs["gpuPools"].values():
        for offer in pool["offers"]:
            offer["gpuModel"] = "H" * 200_000
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "tolerations": [{"operator": "Exists"}],
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    text = render(explain(pod, outputs))
    assert "H" * MAX_SHOWN_CHARS + "…" in text and "H" * (MAX_SHOWN_CHARS + 1) not in text
