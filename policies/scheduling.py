"""Kubernetes scheduling semantics over plain dicts: taints, tolerations, labels and node selection.

No Pulumi imports. Shared by the platform components (to derive tolerations from pool taints), the
policy rules, the scheduling explainer and the app-stack helper, so "does this pod tolerate that
pool" has exactly one answer everywhere.
"""

from __future__ import annotations

import functools
import re
from collections import abc
from collections.abc import Container, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from .limits import go_int
from .podspecs import MAX_REMEMBERED_NAME, as_mapping, is_mapping

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
    value = taint.get("value") or ""
    return f"{taint['key']}={value}:{taint['effect']}" if value else f"{taint['key']}:{taint['effect']}"


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


def _expression_matches(expression: Any, labels: Mapping[str, str]) -> bool:
    expression = as_mapping(expression)
    key = expression.get("key")
    operator = expression.get("operator")
    values = [str(v) for v in _as_list(expression.get("values"))]
    present = isinstance(key, str) and key in labels  # a key of another type (a map, a list) names no label
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt") and present and len(values) == 1:
        node_value, bound = go_int(labels[key]), go_int(values[0])
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
    if isinstance(key, str) and key in unknown and key not in labels:
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
        # matchFields select a node by its name, which only the live node has.
        verdict = _all_of([*(_expression_verdict(e, labels, unknown) for e in expressions),
                           *([None] if term.get("matchFields") else [])])
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
