"""Kubernetes scheduling semantics over plain dicts: taints, tolerations, labels and node selection.

No Pulumi imports. Shared by the platform components (to derive tolerations from pool taints), the
policy rules, the scheduling explainer and the app-stack helper, so "does this pod tolerate that
pool" has exactly one answer everywhere.
"""

from __future__ import annotations

import functools
import json
import re
from collections import abc
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from .limits import MAX_LISTED, MAX_SHOWN_CHARS, MAX_TAINT_KEY_CHARS, MAX_TAINT_VALUE_CHARS, go_int, is_int
from .podspecs import MAX_REMEMBERED_NAME, UNKNOWN, as_mapping, is_mapping
from .terminal import escape_field

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: Effects that keep a pod off a node unless tolerated (PreferNoSchedule is only a preference).
HARD_TAINT_EFFECTS = ("NoSchedule", "NoExecute")

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
# Used with fullmatch: `$` alone would also accept a trailing newline.
_QUALIFIED_NAME_RE = re.compile(rf"(({_DNS_SUBDOMAIN})/)?{_NAME}")
_LABEL_VALUE_RE = re.compile(rf"({_NAME})?")


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a valid Kubernetes label or taint key, or None if it is."""
    if not isinstance(key, str) or not _QUALIFIED_NAME_RE.fullmatch(key):
        return ("must be a qualified name: an optional DNS-subdomain prefix and '/', then 1-63 "
                "letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
    prefix = key.split("/", 1)[0] if "/" in key else ""
    if len(prefix) > 253:
        return "its prefix must be at most 253 characters"
    return None


def label_value_problem(value: str) -> str | None:
    """Why `value` is not a valid Kubernetes label or taint value, or None if it is."""
    if not isinstance(value, str) or not _LABEL_VALUE_RE.fullmatch(value):
        return ("must be empty or 1-63 letters, digits, '-', '_' or '.', starting and ending with a "
                "letter or digit")
    return None


class TaintSyntaxError(ValueError):
    pass


def parse_taint(text: str) -> dict[str, str]:
    """Parse AKS `nodeTaints` syntax, `key=value:Effect` (or `key:Effect`), into a taint dict.

    Raises TaintSyntaxError naming what is wrong and what is allowed.
    """
    if not isinstance(text, str):
        raise TaintSyntaxError(f"a taint must be a string like 'sku=gpu:NoSchedule', got {text!r}")
    head, sep, effect = text.rpartition(":")
    if not sep:
        raise TaintSyntaxError(
            f"taint {text!r} has no effect: write it as key=value:Effect, e.g. 'sku=gpu:NoSchedule'")
    if effect not in TAINT_EFFECTS:
        raise TaintSyntaxError(
            f"taint {text!r} has effect {effect!r}; allowed: {', '.join(TAINT_EFFECTS)}")
    key, _, value = head.partition("=")
    key_problem = label_key_problem(key)
    if key_problem:
        raise TaintSyntaxError(f"taint {text!r} has key {key!r} that {key_problem}")
    value_problem = label_value_problem(value)
    if value_problem:
        raise TaintSyntaxError(f"taint {text!r} has value {value!r} that {value_problem}")
    return {"key": key, "value": value, "effect": effect}


def is_extended_resource_name(name: Any) -> bool:
    """Kubernetes' `helper.IsExtendedResourceName` (pkg/apis/core/helper): a name with a domain
    prefix outside `kubernetes.io/`, that is not a `requests.` quota name and that stays a qualified
    name as `requests.<name>`. ExtendedResourceToleration adds a toleration for each of these."""
    if type(name) is str:
        # Resource names repeat across every container (cpu, memory, nvidia.com/gpu): the regex runs
        # once per name. Only plain strings are remembered, never a str subclass such as a secret.
        return _is_extended_resource_text(name)
    return isinstance(name, str) and _is_extended_resource_text.__wrapped__(name)


@lru_cache(maxsize=4096)
def _is_extended_resource_text(name: str) -> bool:
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    # Resource names repeat across thousands of containers; the regular expression is the cost.
    if type(name) is str and len(name) <= MAX_REMEMBERED_NAME:
        return _qualified_request_name(name)
    return label_key_problem("requests." + name) is None


@functools.lru_cache(maxsize=1024)
def _qualified_request_name(name: str) -> bool:
    return label_key_problem("requests." + name) is None


def format_taint(taint: Mapping[str, str]) -> str:
    """A taint as `kubectl taint` and AKS's `nodeTaints` write it, `key=value:effect`, exactly: a value others
    parse again (`parse_taint`)."""
    value = taint.get("value") or ""
    return f"{taint['key']}={value}:{taint['effect']}" if value else f"{taint['key']}:{taint['effect']}"


def shown_taint(taint: Mapping[str, Any]) -> str:
    """A taint as a message quotes it: `format_taint`'s, each field on one line and no longer than a valid taint
    can hold (`MAX_TAINT_KEY_CHARS`, `MAX_TAINT_VALUE_CHARS`), since a flavor's or a contract's taint is input."""
    return format_taint({"key": escape_field(str(taint.get("key") or ""), MAX_TAINT_KEY_CHARS),
                         "value": escape_field(str(taint.get("value") or ""), MAX_TAINT_VALUE_CHARS),
                         "effect": escape_field(str(taint.get("effect") or ""), MAX_SHOWN_CHARS)})


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Kubernetes' `Toleration.ToleratesTaint`, exactly.

    An empty effect matches every effect; an empty key (only valid with `Exists`) matches every key;
    `Exists` ignores the value; `Equal`, the default operator, needs the same value.
    """
    if not is_mapping(toleration) or not is_mapping(taint):
        return False
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerates_any(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    return any(tolerates(toleration, taint) for toleration in tolerations)


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


class Tolerating:
    """Which of a pod's tolerations tolerate a taint, by lookup instead of a scan, with the answers
    of `scheduling.tolerates` (Kubernetes' `ToleratesTaint`): an empty key or effect matches every
    one, Exists ignores the value, Equal (the default) needs it. Built once per pod, so a pod with
    thousands of tolerations against thousands of pools and taints stays linear. Takes each
    toleration with whether the pod spec wrote it (rather than admission or its controller adding it);
    a property test holds it to `tolerates`."""

    def __init__(self, tolerations: Iterable[tuple[Any, bool]]) -> None:
        #: (operator, key, effect[, value]) -> (index of the first such toleration, whether any is written)
        self.groups: dict[tuple[Any, ...], tuple[int, bool]] = {}
        for index, (toleration, is_written) in enumerate(tolerations):
            if not isinstance(toleration, Mapping):
                continue
            key, effect = toleration.get("key") or "", toleration.get("effect") or ""
            operator = toleration.get("operator") or "Equal"
            value = toleration.get("value") or ""
            # A key, effect or value that is a list or a map equals no taint's text: it tolerates nothing.
            if not (_hashable(key) and _hashable(effect)) or operator not in ("Exists", "Equal"):
                continue
            if operator == "Equal" and not _hashable(value):
                continue
            group = (operator, key, effect) if operator == "Exists" else (operator, key, effect, value)
            first, written = self.groups.get(group, (index, False))
            self.groups[group] = (first, written or is_written)

    def first(self, taint: Mapping[str, str]) -> tuple[int | None, bool]:
        """The index of the first toleration that tolerates `taint` (None if none does), and whether
        one that does was written in the pod spec."""
        first: int | None = None
        written = False
        value = taint.get("value") or ""
        for key in {taint["key"], ""}:
            for effect in {taint["effect"], ""}:
                for group in (("Exists", key, effect), ("Equal", key, effect, value)):
                    found = self.groups.get(group)
                    if found is not None:
                        first = found[0] if first is None else min(first, found[0])
                        written = written or found[1]
        return first, written



def untolerated_taints(
    tolerations: Sequence[Mapping[str, Any]], taints: Iterable[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """The taints that keep a pod with these tolerations off a node (NoSchedule/NoExecute only)."""
    return [
        taint for taint in taints
        if taint.get("effect") in HARD_TAINT_EFFECTS and not tolerates_any(tolerations, taint)
    ]


def toleration_for(taint: Mapping[str, str]) -> dict[str, str]:
    """The narrowest toleration of one taint: same key, value and effect."""
    if taint.get("value"):
        return {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
    return {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []  # absent: answered before the ABC check, which costs several times more
    return list(value) if isinstance(value, abc.Sequence) and not isinstance(value, (str, bytes)) else []


# --- Node selection as the API server reads it -----------------------------------------------------
# A pod whose node selection the API server refuses is never created, so it lands nowhere; and the
# scheduler's own reading (component-helpers `scheduling/corev1/nodeaffinity`, through apimachinery's
# `labels.NewRequirement`) refuses the same requirements and lets such a term match no node. Every
# reader here (the explainer, `--platform`, the pack's pool rules) judges node selection with these.

#: The operators of a `matchExpressions` requirement (k8s.io/kubernetes v1.37.2
#: pkg/apis/core/validation/validation.go, `ValidateNodeSelectorRequirement`).
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
#: The one node field a `matchFields` requirement may name, with `In` or `NotIn` and one value
#: (the same file, `ValidateNodeFieldSelectorRequirement` and its `nodeFieldSelectorValidators`).
NODE_NAME_FIELD = "metadata.name"
#: The weights a preferred term may have (`ValidatePreferredSchedulingTerms`).
PREFERRED_WEIGHTS = range(1, 101)

_LABEL_VALUE_RULE = ("a label value: empty, or at most 63 letters, digits, '-', '_' or '.', starting and ending "
                     "with a letter or digit")
_LABEL_KEY_RULE = ("a label key: an optional DNS-subdomain prefix (lower case) and '/', then 1-63 letters, digits, "
                   "'-', '_' or '.', starting and ending with a letter or digit")


def _shown(value: Any) -> str:
    """A value a message quotes: cut, on one line, with no control character."""
    text = value if isinstance(value, str) else json.dumps(value) if _hashable(value) else type(value).__name__
    return f"'{escape_field(text, MAX_SHOWN_CHARS)}'"


def label_int(value: Any) -> int | None:
    """A label value read as an integer, as the scheduler reads a `Gt`/`Lt` bound and a node's label
    (apimachinery pkg/labels/selector.go: `strconv.ParseInt(value, 10, 64)`). A label value holds no
    sign (it starts with a letter or digit: `IsValidLabelValue`), so `+0` and `-1`, which ParseInt
    alone would take, are no label's value and match nothing (the API server refuses them first)."""
    return go_int(value) if isinstance(value, str) and label_value_problem(value) is None else None


def _requirement_parts(expression: Any) -> tuple[Any, Any, Any, list[Any]] | list[tuple[str, str]]:
    """A requirement's key, operator, values and those values as a list; or, where there is nothing to
    judge, its problems: none for a value the preview does not know yet, one for what is no object."""
    if expression is UNKNOWN:
        return []
    if not is_mapping(expression):
        return [("", f"must be an object with key, operator and values, not {_shown(expression)}")]
    values = expression.get("values")
    return expression.get("key"), expression.get("operator"), values, _as_list(values)


def requirement_problems(expression: Any, label_values: bool = True) -> Iterator[tuple[str, str]]:
    """Why the API server refuses one `matchExpressions` requirement, as (path under it, reason):
    `ValidateNodeSelectorRequirement` (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go)
    with apimachinery's `IsQualifiedName` for the key and `IsValidLabelValue` for each value;
    `label_values=False` for a preferred term, whose values the API server does not check. Values
    the preview does not know yet are not judged."""
    parts = _requirement_parts(expression)
    if not isinstance(parts, tuple):
        yield from parts
        return
    key, operator, values, listed = parts
    if values is not None and values is not UNKNOWN and not listed and not isinstance(values, abc.Sequence):
        yield "values", f"must be a list of strings, not {_shown(values)}"
    if operator in ("In", "NotIn") and not listed and values is not UNKNOWN:
        yield "values", f"must be given when the operator is {operator}"
    elif operator in ("Exists", "DoesNotExist") and listed:
        yield "values", f"may not be given when the operator is {operator}"
    elif operator in ("Gt", "Lt") and len(listed) != 1 and values is not UNKNOWN:
        yield "values", f"must be one value when the operator is {operator}"
    elif operator not in NODE_SELECTOR_OPERATORS and operator is not UNKNOWN:
        yield "operator", f"{_shown(operator)} is not one of {', '.join(NODE_SELECTOR_OPERATORS)}"
    if key is not UNKNOWN:
        if not isinstance(key, str):
            yield "key", f"must be a string, not {_shown(key)}"
        elif label_key_problem(key) is not None:
            yield "key", f"{_shown(key)} is not {_LABEL_KEY_RULE}"
    for index, value in enumerate(listed):
        if value is UNKNOWN:
            continue
        if not isinstance(value, str):
            yield f"values[{index}]", f"must be a string, not {_shown(value)}"
        elif label_values and label_value_problem(value) is not None:
            yield f"values[{index}]", f"{_shown(value)} is not {_LABEL_VALUE_RULE}"
        elif operator in ("Gt", "Lt") and go_int(value) is None:
            # labels.NewRequirement: "for 'Gt', 'Lt' operators, the value must be an integer".
            yield f"values[{index}]", f"{_shown(value)} is not an integer, which {operator} needs"


def field_requirement_problems(expression: Any) -> Iterator[tuple[str, str]]:
    """Why the API server refuses one `matchFields` requirement (`ValidateNodeFieldSelectorRequirement`):
    only `metadata.name`, with In or NotIn and exactly one value, a DNS subdomain (a node's name)."""
    parts = _requirement_parts(expression)
    if not isinstance(parts, tuple):
        yield from parts
        return
    key, operator, values, listed = parts
    if operator not in ("In", "NotIn") and operator is not UNKNOWN:
        yield "operator", f"{_shown(operator)} is not In or NotIn, the operators of a node field selector"
    elif len(listed) != 1 and values is not UNKNOWN:
        yield "values", "must be exactly one value (a node's name) when the operator is In or NotIn"
    if key is not UNKNOWN and key != NODE_NAME_FIELD:
        yield "key", f"{_shown(key)} is not a node field a pod may select: only {NODE_NAME_FIELD}"
    for index, value in enumerate(listed if key == NODE_NAME_FIELD else ()):
        if value is not UNKNOWN and not (isinstance(value, str) and _NODE_NAME_RE.fullmatch(value)
                                         and len(value) <= 253):
            yield f"values[{index}]", f"{_shown(value)} is not a node name (a lower-case DNS subdomain)"


_NODE_NAME_RE = re.compile(_DNS_SUBDOMAIN)


def _term_problems(term: Any, label_values: bool) -> Iterator[tuple[str, str]]:
    """`ValidateNodeSelectorTerm`: each expression and each field requirement."""
    if term is UNKNOWN:
        return
    if not is_mapping(term):
        yield "", f"must be an object with matchExpressions or matchFields, not {_shown(term)}"
        return
    for index, expression in enumerate(_as_list(term.get("matchExpressions"))):
        for where, reason in requirement_problems(expression, label_values):
            yield _joined(f"matchExpressions[{index}]", where), reason
    for index, expression in enumerate(_as_list(term.get("matchFields"))):
        for where, reason in field_requirement_problems(expression):
            yield _joined(f"matchFields[{index}]", where), reason


def _joined(path: str, key: str) -> str:
    return f"{path}.{key}" if key and not key.startswith("[") else path + key


def _node_selection_problems(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    selector = spec.get("nodeSelector")
    if selector is not None and selector is not UNKNOWN:
        if not is_mapping(selector):
            yield "nodeSelector", f"must be a map of label keys to values, not {_shown(selector)}"
        else:
            # ValidatePodSpec: unversionedvalidation.ValidateLabels(spec.NodeSelector).
            for key, value in selector.items():
                if not isinstance(key, str) or label_key_problem(key) is not None:
                    yield "nodeSelector", f"the key {_shown(key)} is not {_LABEL_KEY_RULE}"
                if value is UNKNOWN:
                    continue
                if not isinstance(value, str):
                    yield f"nodeSelector.{_shown(key)[1:-1]}", f"must be a string, not {_shown(value)}"
                elif label_value_problem(value) is not None:
                    yield f"nodeSelector.{_shown(key)[1:-1]}", f"{_shown(value)} is not {_LABEL_VALUE_RULE}"
    affinity = spec.get("affinity")
    node_affinity = as_mapping(as_mapping(affinity).get("nodeAffinity"))
    required_path = "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None and required is not UNKNOWN:
        terms = as_mapping(required).get("nodeSelectorTerms")
        # ValidateNodeSelector: "must have at least one node selector term".
        if terms is not UNKNOWN and not _as_list(terms):
            yield f"{required_path}.nodeSelectorTerms", "must have at least one node selector term"
        for index, term in enumerate(_as_list(terms)):
            for where, reason in _term_problems(term, label_values=True):
                yield _joined(f"{required_path}.nodeSelectorTerms[{index}]", where), reason
    preferred_path = "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
    for index, preferred in enumerate(_as_list(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        path = f"{preferred_path}[{index}]"
        if preferred is UNKNOWN:
            continue
        weight = as_mapping(preferred).get("weight")
        if weight is not UNKNOWN and not (is_int(weight) and weight in PREFERRED_WEIGHTS):
            yield f"{path}.weight", f"{_shown(weight)} is not a weight from 1 to 100"
        # "we always allow invalid label-value for preferred affinity" (ValidatePreferredSchedulingTerms).
        for where, reason in _term_problems(as_mapping(preferred).get("preference"), label_values=False):
            yield _joined(f"{path}.preference", where), reason


#: `whenUnsatisfiable` and the node inclusion policies a spread constraint may name
#: (`validateTopologySpreadConstraints`: supportedScheduleActions, supportedPodTopologySpreadNodePolicies).
SPREAD_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")
SPREAD_NODE_POLICIES = ("Honor", "Ignore")


def _spread_problems(spec: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """`validateTopologySpreadConstraints` (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go),
    but for the label selector and matchLabelKeys, which say which pods count, not which nodes."""
    constraints = spec.get("topologySpreadConstraints")
    seen: set[tuple[Any, Any]] = set()
    for index, constraint in enumerate(_as_list(constraints)):
        path = f"topologySpreadConstraints[{index}]"
        if constraint is UNKNOWN:
            continue
        if not is_mapping(constraint):
            yield path, f"must be an object with maxSkew, topologyKey and whenUnsatisfiable, not {_shown(constraint)}"
            continue
        skew, key, action = constraint.get("maxSkew"), constraint.get("topologyKey"), constraint.get("whenUnsatisfiable")
        if skew is not UNKNOWN and not (is_int(skew) and 0 < skew < 2**31):
            yield f"{path}.maxSkew", f"{_shown(skew)} is not a whole number greater than zero"
        if key is not UNKNOWN and not (isinstance(key, str) and key):  # ValidateTopologyKey: only "can not be empty"
            yield f"{path}.topologyKey", "must be given" if key in ("", None) else f"must be a string, not {_shown(key)}"
        if action is not UNKNOWN and action not in SPREAD_ACTIONS:
            yield f"{path}.whenUnsatisfiable", f"{_shown(action)} is not one of {', '.join(SPREAD_ACTIONS)}"
        if _hashable(key) and _hashable(action):
            if (key, action) in seen:  # ValidateSpreadConstraintNotRepeat
                yield path, f"repeats {{{_shown(key)[1:-1]}, {_shown(action)[1:-1]}}}, which an earlier constraint has"
            seen.add((key, action))
        domains = constraint.get("minDomains")
        if domains is not None and domains is not UNKNOWN:
            if not (is_int(domains) and 0 < domains < 2**31):
                yield f"{path}.minDomains", f"{_shown(domains)} is not a whole number greater than zero"
            elif action != "DoNotSchedule":
                yield f"{path}.minDomains", "can only be given with whenUnsatisfiable DoNotSchedule"
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = constraint.get(policy)
            if value is not None and value is not UNKNOWN and value not in SPREAD_NODE_POLICIES:
                yield f"{path}.{policy}", f"{_shown(value)} is not one of {', '.join(SPREAD_NODE_POLICIES)}"


def spread_keys(spec: Mapping[str, Any]) -> list[str]:
    """The topology keys of the pod's `DoNotSchedule` spread constraints: kube-scheduler's
    podtopologyspread filter leaves the pod off every node that lacks one of these labels
    (pkg/scheduler/framework/plugins/podtopologyspread/filtering.go, `Filter`: "node(s) didn't match pod
    topology spread constraints (missing required label)"), whatever the skew. A pod with no constraint
    of its own gets the scheduler's defaults, which are ScheduleAnyway (plugin.go, `getConstraints`)."""
    return [key for constraint in _as_list(spec.get("topologySpreadConstraints"))
            for key in [as_mapping(constraint).get("topologyKey")]
            if as_mapping(constraint).get("whenUnsatisfiable") == "DoNotSchedule" and isinstance(key, str)]


def spread_verdict(spec: Mapping[str, Any], labels: Mapping[str, str], unknown: Container[str] = frozenset()) -> bool:
    """Whether a node with `labels` (and the `unknown` ones, whose values only the live node shows)
    carries every key the pod's DoNotSchedule spread constraints spread over (`spread_keys`)."""
    return all(key in labels or key in unknown for key in spread_keys(spec))


def placement_problems(spec: Mapping[str, Any], path: str = "") -> list[str]:
    """Why the API server refuses where the pod spec asks to run (k8s.io/kubernetes v1.37.2
    pkg/apis/core/validation/validation.go: `ValidatePodSpec`'s nodeSelector labels, `validateNodeAffinity`
    with invalid label values not allowed, as on every create, and `validateTopologySpreadConstraints`),
    each naming its path under `path`, at most MAX_LISTED of them and a count of the rest (one pod may
    hold any number)."""
    problems: list[str] = []
    more = 0
    for where, reason in (*_node_selection_problems(spec), *_spread_problems(spec)):
        if len(problems) < MAX_LISTED:
            problems.append(f"{_joined(path, where) if path else where}: {reason}")
        else:
            more += 1
    if more:
        problems.append(f"and {more} more problems in its node selection and topology spread")
    return problems


def _requirement_holds(expression: Mapping[str, Any]) -> bool:
    """Whether the scheduler can read the requirement at all (`labels.NewRequirement` refuses what
    `requirement_problems` names): a term holding one it cannot read matches no node."""
    return next(requirement_problems(expression), None) is None


def _expression_matches(expression: Any, labels: Mapping[str, str]) -> bool:
    expression = as_mapping(expression)
    if not _requirement_holds(expression):
        return False
    key = expression.get("key")
    operator = expression.get("operator")
    values = _as_list(expression.get("values"))
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present:
        node_value, bound = label_int(labels[key]), label_int(values[0])
        if node_value is None or bound is None:
            return False
        return node_value > bound if operator == "Gt" else node_value < bound
    return False


def node_selector_term_matches(term: Any, labels: Mapping[str, str]) -> bool:
    """One `nodeSelectorTerm`: all of its `matchExpressions` must hold (`matchFields` select node
    names, which no label set can answer, so a term that uses them never matches here)."""
    term = as_mapping(term)
    if term.get("matchFields"):
        return False
    expressions = _as_list(term.get("matchExpressions"))
    return bool(expressions) and all(_expression_matches(e, labels) for e in expressions)


def _expression_verdict(expression: Any, labels: Mapping[str, str], unknown: Container[str]) -> bool | None:
    """One expression on a node whose `unknown` labels exist with a value known only on the live node:
    None when the answer rests on such a value."""
    key = as_mapping(expression).get("key")
    if isinstance(key, str) and key in unknown and key not in labels and _requirement_holds(as_mapping(expression)):
        operator = as_mapping(expression).get("operator")
        return True if operator == "Exists" else False if operator == "DoesNotExist" else None
    return _expression_matches(expression, labels)


def _all_of(verdicts: Iterable[bool | None]) -> bool | None:
    answer: bool | None = True
    for verdict in verdicts:
        if verdict is False:
            return False
        if verdict is None:
            answer = None
    return answer


def selector_verdict(pod_spec: Mapping[str, Any], node_selector: Mapping[str, Any], labels: Mapping[str, str],
                     unknown: Container[str] = frozenset()) -> bool | None:
    """Whether a node with `labels` (and the `unknown` ones, values unseen) passes the nodeSelector and
    the pod's required node affinity: True, False, or None when only the live node can tell."""
    selected = _all_of(None if key in unknown and key not in labels else labels.get(key) == str(value)
                       for key, value in node_selector.items())
    terms = required_node_terms(pod_spec)
    if terms is None or selected is False:
        return selected
    affinity: bool | None = False
    for term in terms:
        term = as_mapping(term)
        expressions = _as_list(term.get("matchExpressions"))
        if not expressions and not term.get("matchFields"):
            continue  # an empty term matches no node
        # matchFields select a node by its name, which only the live node has (a term the scheduler
        # cannot read matches no node).
        fields = _as_list(term.get("matchFields"))
        readable = all(next(field_requirement_problems(f), None) is None for f in fields)
        verdict = _all_of([*(_expression_verdict(e, labels, unknown) for e in expressions),
                           *([None if readable else False] if fields else [])])
        if verdict:
            affinity = True
            break
        if verdict is None:
            affinity = None
    return _all_of((selected, affinity))


def required_node_terms(pod_spec: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The pod's required node-affinity terms, or None when it has no required node affinity."""
    node_affinity = as_mapping(as_mapping(pod_spec.get("affinity")).get("nodeAffinity"))
    required = as_mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    terms = _as_list(required.get("nodeSelectorTerms"))
    return terms or None


def selects_node(pod_spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a node with `labels` passes the pod's nodeSelector and required node affinity."""
    selector = as_mapping(pod_spec.get("nodeSelector"))
    if any(labels.get(key) != str(value) for key, value in selector.items()):
        return False
    terms = required_node_terms(pod_spec)
    return terms is None or any(node_selector_term_matches(term, labels) for term in terms)
