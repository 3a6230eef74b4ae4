"""Node selection as the API server and kube-scheduler read it (`gpu_aks_policies.scheduling`): a
requirement the API server refuses (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go,
`ValidateNodeSelectorRequirement`, `ValidateNodeFieldSelectorRequirement`) is named with its path, and no
reader reads it as matching; topology spread over a key a node lacks keeps the pod off it
(podtopologyspread's filter). The real API server and scheduler hold the same verdicts in
tests/cluster/test_scheduler.py."""

from __future__ import annotations

from typing import Any

import pytest
from gpu_aks_policies.limits import MAX_LISTED
from gpu_aks_policies.scheduling import (
    label_int,
    placement_problems,
    selector_verdict,
    selects_node,
    spread_keys,
    spread_verdict,
)

REQUIRED = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
NODE = {"gpu": "5", "pool": "t4", "kubernetes.io/os": "linux"}


def _required(*expressions: Any, fields: tuple[Any, ...] = ()) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": list(expressions)}
    if fields:
        term["matchFields"] = list(fields)
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}}


#: (requirement, where under the term the API server points, what the message says). Each would match
#: NODE if read loosely (Python's int(), a value compared as text, Exists ignoring its values).
REFUSED = [
    ({"key": "gpu", "operator": "Gt", "values": ["+0"]}, "matchExpressions[0].values[0]", "'+0' is not a label value"),
    ({"key": "gpu", "operator": "Lt", "values": ["+9"]}, "matchExpressions[0].values[0]", "'+9' is not a label value"),
    ({"key": "gpu", "operator": "Gt", "values": ["-1"]}, "matchExpressions[0].values[0]", "'-1' is not a label value"),
    ({"key": "gpu", "operator": "Gt", "values": ["0x1"]}, "matchExpressions[0].values[0]", "is not an integer"),
    ({"key": "gpu", "operator": "Gt", "values": ["1", "2"]}, "matchExpressions[0].values", "must be one value"),
    ({"key": "pool", "operator": "In", "values": ["t4", "a b"]}, "matchExpressions[0].values[1]",
     "'a b' is not a label value"),
    ({"key": "pool", "operator": "NotIn", "values": ["x" * 64]}, "matchExpressions[0].values[0]", "is not a label value"),
    ({"key": "pool", "operator": "In", "values": []}, "matchExpressions[0].values", "must be given"),
    ({"key": "pool", "operator": "In", "values": [4]}, "matchExpressions[0].values[0]", "must be a string"),
    ({"key": "pool", "operator": "Exists", "values": ["t4"]}, "matchExpressions[0].values", "may not be given"),
    ({"key": "zone", "operator": "DoesNotExist", "values": ["1"]}, "matchExpressions[0].values", "may not be given"),
    ({"key": "pool", "operator": "Equals", "values": ["t4"]}, "matchExpressions[0].operator", "is not one of In"),
    ({"key": "Bad.Prefix/pool", "operator": "DoesNotExist"}, "matchExpressions[0].key", "is not a label key"),
    ({"key": "pool ", "operator": "NotIn", "values": ["x"]}, "matchExpressions[0].key", "'pool ' is not a label key"),
    ({"key": "/pool", "operator": "DoesNotExist"}, "matchExpressions[0].key", "is not a label key"),
    ({"key": "a/b/c", "operator": "DoesNotExist"}, "matchExpressions[0].key", "is not a label key"),
    ({"key": ["pool"], "operator": "DoesNotExist"}, "matchExpressions[0].key", "must be a string"),
]


@pytest.mark.parametrize("expression, where, says", REFUSED, ids=[f"{e['operator']} {e.get('values')}" for e, _, _ in REFUSED])
def test_a_requirement_the_api_server_refuses_is_named_and_matches_no_node(expression, where, says):
    spec = _required(expression)
    [problem] = placement_problems(spec, "spec")
    assert problem.startswith(f"spec.{REQUIRED}.{where}: ") and says in problem, problem
    # The scheduler's own reading (labels.NewRequirement) refuses it too: the term matches no node.
    assert selects_node(spec, NODE) is False
    assert selector_verdict(spec, {}, NODE) is False
    assert selector_verdict(spec, {}, {}, unknown={"pool", "gpu", "zone", "pool ", "Bad.Prefix/pool"}) is False


@pytest.mark.parametrize("field, says", [
    ({"key": "metadata.namespace", "operator": "In", "values": ["n"]}, "only metadata.name"),
    ({"key": "spec.unschedulable", "operator": "NotIn", "values": ["true"]}, "only metadata.name"),
    ({"key": "metadata.name", "operator": "Exists"}, "is not In or NotIn"),
    ({"key": "metadata.name", "operator": "In", "values": ["a", "b"]}, "must be exactly one value"),
    ({"key": "metadata.name", "operator": "In", "values": ["Node_1"]}, "is not a node name"),
], ids=["namespace", "unschedulable", "Exists", "two names", "not a DNS subdomain"])
def test_match_fields_on_anything_but_one_node_name_is_refused(field, says):
    spec = _required({"key": "pool", "operator": "In", "values": ["t4"]}, fields=(field,))
    [problem] = placement_problems(spec)
    assert f"{REQUIRED}.matchFields[0]" in problem and says in problem, problem
    assert selector_verdict(spec, {}, NODE) is False and selects_node(spec, NODE) is False


def test_what_the_api_server_takes_still_matches_as_before():
    accepted = _required({"key": "gpu", "operator": "Gt", "values": ["0"]}, {"key": "gpu", "operator": "Lt", "values": ["007"]},
                         {"key": "pool", "operator": "In", "values": ["t4", ""]}, {"key": "zone", "operator": "DoesNotExist"},
                         {"key": "kubernetes.io/os", "operator": "Exists"})
    assert placement_problems(accepted) == []
    assert selects_node(accepted, NODE) is True and selector_verdict(accepted, {}, NODE) is True
    # A node's name is a field only the live node has: "cannot tell", not "no".
    by_name = _required({"key": "pool", "operator": "In", "values": ["t4"]},
                        fields=({"key": "metadata.name", "operator": "In", "values": ["aks-t4-1"]},))
    assert placement_problems(by_name) == [] and selector_verdict(by_name, {}, NODE) is None


@pytest.mark.parametrize("selector, says", [
    ({"pool ": "t4"}, "the key 'pool ' is not a label key"), ({"pool": "+1"}, "'+1' is not a label value"),
    ({"pool": True}, "must be a string"), ({"pool": "t" * 64}, "is not a label value"),
], ids=["key with a space", "signed value", "bool", "64 characters"])
def test_a_node_selector_the_api_server_refuses_is_named(selector, says):
    [problem] = placement_problems({"nodeSelector": selector}, "spec")
    assert problem.startswith("spec.nodeSelector") and says in problem, problem


def test_an_empty_term_list_and_a_bad_preferred_weight_are_refused():
    empty = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}}
    assert placement_problems(empty) == [
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: must have at least one "
        "node selector term"]
    preferred = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a b"]}]}},
        {"weight": 5, "preference": {"matchExpressions": [{"key": "pool ", "operator": "In", "values": ["t4"]}]}}]}}}
    # The API server takes any value in a preferred term ("as they can success when cluster has only one
    # node"), not a bad weight or key.
    problems = placement_problems(preferred)
    assert len(problems) == 2 and "[0].weight: '0' is not a weight from 1 to 100" in problems[0]
    assert "[1].preference.matchExpressions[0].key" in problems[1]


def test_problems_are_counted_past_a_few_and_quoted_values_are_cut_and_inert():
    hostile = "\x1b[2J\n::error::" + "v" * 100_000
    spec = _required(*({"key": "pool", "operator": "In", "values": [hostile]} for _ in range(10_000)))
    problems = placement_problems(spec)
    assert len(problems) == MAX_LISTED + 1 and problems[-1] == (
        f"and {10_000 - MAX_LISTED} more problems in its node selection and topology spread")
    text = "\n".join(problems)
    assert len(text) < 4000 and "\x1b" not in text and text.count("\n") == MAX_LISTED


@pytest.mark.parametrize("text, value", [("7", 7), ("007", 7), ("0", 0), ("9223372036854775807", 2**63 - 1),
                                         ("+0", None), ("-1", None), (" 1", None), ("1 ", None), ("١", None),
                                         ("9223372036854775808", None), ("1" * 64, None), ("", None), (7, None)])
def test_a_label_value_is_read_as_an_integer_only_without_a_sign(text, value):
    # `limits.go_int` reads Go's ParseInt, which takes a sign; a label value cannot hold one.
    assert label_int(text) == value


# --- topology spread -------------------------------------------------------------------------------

def _spread(*constraints: dict[str, Any]) -> dict[str, Any]:
    return {"topologySpreadConstraints": list(constraints)}


def test_do_not_schedule_over_a_key_the_node_lacks_keeps_the_pod_off_it():
    spec = _spread({"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
                   {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"})
    assert placement_problems(spec) == [] and spread_keys(spec) == ["rack"]
    assert spread_verdict(spec, NODE) is False
    assert spread_verdict(spec, {**NODE, "rack": "r1"}) is True
    assert spread_verdict(spec, NODE, unknown={"rack"}) is True  # carried, its value seen only live
    assert spread_verdict(_spread({"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}), NODE)


@pytest.mark.parametrize("constraint, where, says", [
    ({"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}, "maxSkew", "greater than zero"),
    ({"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}, "topologyKey", "must be given"),
    ({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Never"}, "whenUnsatisfiable", "is not one of"),
    ({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}, "minDomains",
     "only be given with whenUnsatisfiable DoNotSchedule"),
    ({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "Always"},
     "nodeTaintsPolicy", "is not one of Honor, Ignore"),
], ids=["maxSkew 0", "no key", "action", "minDomains", "policy"])
def test_a_spread_constraint_the_api_server_refuses_is_named(constraint, where, says):
    [problem] = placement_problems(_spread(constraint), "spec")
    assert problem.startswith(f"spec.topologySpreadConstraints[0].{where}: ") and says in problem, problem


def test_a_repeated_spread_constraint_is_refused():
    same = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    [problem] = placement_problems(_spread(same, {**same, "maxSkew": 2}))
    assert problem.startswith("topologySpreadConstraints[1]: repeats {zone, DoNotSchedule}")


# --- what the explainer and `--platform` say ------------------------------------------------------

def _explained(spec: dict[str, Any]) -> Any:
    from gpu_aks_policies.explain import explain

    from components.contract import platform_contract
    from components.platform_settings import parse_settings
    platform = platform_contract(parse_settings({"gpuPools": [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3"}]},
                                                "test", "eastus2"))
    pool = platform["gpuPools"]["t4"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        "tolerations": pool["tolerations"], "nodeSelector": pool["nodeSelector"], **spec}}
    [explanation] = explain(pod, platform)
    return explanation, pod, platform


@pytest.mark.parametrize("expression", [expression for expression, _, _ in REFUSED[:6]],
                         ids=[f"{e['operator']} {e['values']}" for e, _, _ in REFUSED[:6]])
def test_the_explainer_says_the_api_server_refuses_the_pod_and_it_lands_nowhere(expression):
    from gpu_aks_policies.fit import check_fit, platform_from_outputs
    from gpu_aks_policies.rules import default_rule_config
    from gpu_aks_policies.workloads import context_of, pod_specs_of
    explanation, pod, platform = _explained(_required({**expression, "key": "kubernetes.io/os"}))
    assert explanation.lands_on == [] and explanation.refusals
    assert explanation.refusals[0].startswith(f"spec.{REQUIRED}.matchExpressions[0]")
    # `--platform`: gpu-pods-fit-a-pool says the API server refuses it, first.
    context = context_of([pod])
    [finding] = check_fit(pod_specs_of(pod, context), "Pod", "p", platform_from_outputs(platform),
                          default_rule_config()["gpu-pods-fit-a-pool"], context)
    assert finding.message.startswith("pod spec at spec is refused by the API server, so no pod is ever created")
    assert "\nrefused: spec.affinity.nodeAffinity" in finding.message


def test_a_spread_over_a_label_the_pool_s_nodes_lack_lands_nowhere_and_says_why():
    spread = {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"}
    explanation, _, _ = _explained({"topologySpreadConstraints": [spread]})
    [verdict] = explanation.verdicts
    assert explanation.lands_on == [] and not explanation.refusals
    assert verdict.reasons == ("its topology spread over rack is DoNotSchedule, and no node this pool may bring carries "
                               "that label: kube-scheduler keeps the pod off every such node (podtopologyspread: "
                               "\"missing required label\")",)
    # A label every node carries (a hostname: its value only the live node shows), or ScheduleAnyway: it lands.
    for constraint in ({**spread, "topologyKey": "kubernetes.io/hostname"}, {**spread, "whenUnsatisfiable": "ScheduleAnyway"}):
        assert _explained({"topologySpreadConstraints": [constraint]})[0].lands_on == ["t4"]


@pytest.mark.parametrize("count", [100, 400])
def test_the_affinity_a_reason_quotes_does_not_grow_with_the_pod(count):
    # Every pool's reason quoted the whole affinity: 16 times the output at 4 times the input (issue 50).
    from gpu_aks_policies.fit import render
    expressions = [{"key": f"k{i}", "operator": "DoesNotExist"} for i in range(count)]
    explanation, _, _ = _explained(_required(*expressions, {"key": "kubernetes.io/os", "operator": "In",
                                                            "values": ["windows" + "x" * 10_000]}))
    text = render([explanation])
    assert len(text) < 2500 and f"and {count + 1 - MAX_LISTED} more" in text, len(text)
