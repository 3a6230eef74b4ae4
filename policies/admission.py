"""What the API server's admission plugins do to a pod before the scheduler sees it.

AKS runs ExtendedResourceToleration, PodTolerationRestriction and PodNodeSelector, and the list
cannot be changed (AKS FAQ, "What Kubernetes admission controllers does AKS support?";
Azure/AKS#1449). In the API server's order (kubernetes `pkg/kubeapiserver/options/plugins.go`):

1. PodNodeSelector (`plugin/pkg/admission/podnodeselector`): the Namespace annotation
   `scheduler.alpha.kubernetes.io/node-selector` ("k=v,k2=v2") is merged into the pod's nodeSelector;
   a key the pod sets to another value is a conflict and the pod is refused.
2. PodTolerationRestriction, mutating (`plugin/pkg/admission/podtolerationrestriction`): on create,
   the Namespace's `scheduler.alpha.kubernetes.io/defaultTolerations` (a JSON list), plus
   `node.kubernetes.io/memory-pressure` (Exists, NoSchedule) for a pod that is not BestEffort, are
   merged into the pod's tolerations (`pkg/util/tolerations.MergeTolerations`).
3. ExtendedResourceToleration (`plugin/pkg/admission/extendedresourcetoleration`): for every
   extended resource in the requests of containers and init containers (requests are defaulted from
   limits before admission), `{key: <resource>, operator: Exists, effect: NoSchedule}` is added.
4. PodTolerationRestriction, validating: with a `scheduler.alpha.kubernetes.io/tolerationsWhitelist`
   annotation, every toleration of the pod, the ones added above included, must be covered by it
   (`VerifyAgainstWhitelist`), or the pod is refused.

Namespaces count when they are among the objects checked together. Pure; no Pulumi imports.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .limits import MAX_LISTED, is_finite_number
from .podspecs import UNKNOWN, PodSpec, Toleration, UndecidableError, as_mapping, derived, is_mapping, join, known, list_at
from .quantities import QuantityError, parse_quantity
from .scheduling import is_extended_resource_name
from .workloads.context import Context, namespace_of

EXTENDED_RESOURCE_TOLERATION = "ExtendedResourceToleration"
POD_TOLERATION_RESTRICTION = "PodTolerationRestriction"
POD_NODE_SELECTOR = "PodNodeSelector"
#: What AKS runs (and what a cluster that is not AKS may switch off in the policy config).
AKS_ADMISSION_PLUGINS = (EXTENDED_RESOURCE_TOLERATION, POD_TOLERATION_RESTRICTION, POD_NODE_SELECTOR)

DEFAULT_TOLERATIONS_ANNOTATION = "scheduler.alpha.kubernetes.io/defaultTolerations"
TOLERATIONS_WHITELIST_ANNOTATION = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"
NODE_SELECTOR_ANNOTATION = "scheduler.alpha.kubernetes.io/node-selector"
MEMORY_PRESSURE = {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}
#: What kube-apiserver's DefaultTolerationSeconds plugin (on by default, and on AKS) adds to a pod that
#: does not tolerate the taint already, for NoExecute or every effect (kubernetes v1.37.2
#: `plugin/pkg/admission/defaulttolerationseconds/admission.go`). It runs before PodTolerationRestriction
#: (`pkg/kubeapiserver/options/plugins.go`), whose whitelist check, in the validating phase, sees these
#: too: a whitelist that omits them refuses every pod. A real API server showed it (tests/cluster).
DEFAULT_TOLERATION_SECONDS = tuple({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                                   for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"))

WRITTEN = "written in the pod spec"
#: Up to this many tolerations, comparing every pair costs less than indexing them (`Covers`).
SMALL = 16


@dataclass(frozen=True)
class Admitted:
    """A pod as the scheduler will see it, and why the API server would refuse it (if it would)."""

    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    refusals: tuple[str, ...]
    #: A container unknown during preview might have added an ExtendedResourceToleration.
    incomplete: bool = False


#: A toleration as the API server compares them: key, operator, value, effect (absent is ""), and
#: tolerationSeconds (None when absent).
Normal = tuple[str, str, str, str, Any]


def _seconds(value: Any) -> Any:
    """tolerationSeconds as a comparable, hashable value: a number, None, or a marker for anything
    else (the API server refuses those; here they never cover another toleration)."""
    # An infinity or NaN is no int64 either: it compares as a number nowhere (NaN equals nothing, and
    # an infinity would cover every finite tolerationSeconds).
    if value is None or is_finite_number(value):
        return value
    return ("not a number", type(value).__name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float))


def _normal(toleration: Mapping[str, Any]) -> Normal:
    return (str(toleration.get("key") or ""), str(toleration.get("operator") or ""), str(toleration.get("value") or ""),
            str(toleration.get("effect") or ""), _seconds(toleration.get("tolerationSeconds")))


def _superset(ss: Normal, t: Normal) -> bool:
    ss_key, ss_op, ss_value, ss_effect, ss_seconds = ss
    t_key, t_op, t_value, t_effect, t_seconds = t
    if ss == t:
        return True
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect != "":
        return False
    if ss_effect == "NoExecute" and ss_seconds is not None and not (
            _is_number(ss_seconds) and _is_number(t_seconds) and t_seconds <= ss_seconds):
        return False
    if ss_op in ("Equal", ""):
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"


def _bucket(t: Normal) -> tuple[str, ...] | None:
    """The group of tolerations `t` sits in for `Covers`: by operator class, key, effect (and value
    for Equal). An unknown operator covers nothing but its equal."""
    key, op, value, effect, _ = t
    if op == "Exists":
        return ("Exists", key, effect)
    if op in ("Equal", ""):
        return ("Equal", key, effect, value)
    return None


def _needs_seconds(t: Normal) -> bool:
    """Whether `t` covers only tolerations with at most its tolerationSeconds (NoExecute with seconds)."""
    return t[3] == "NoExecute" and t[4] is not None


class Covers:
    """A set of tolerations that answers "does one of them tolerate a superset of t" (`isSuperset`)
    in constant time, so merging and whitelisting stay linear however many tolerations a pod or a
    namespace writes. A superset of t has t's key (or the empty key with Exists), t's effect (or
    the empty effect), covers t's value (Exists, or Equal with the same value when t is Equal), and,
    for NoExecute with tolerationSeconds, at least t's seconds: so per group (`_bucket`) it keeps how
    many cover regardless of seconds, the largest seconds, and how many have each number of seconds."""

    def __init__(self, tolerations: Iterable[Normal] = ()) -> None:
        self.normals: dict[Normal, int] = {}
        #: bucket -> [members that cover whatever the seconds, largest seconds or None, {seconds: count}]
        self.buckets: dict[tuple[str, ...], list[Any]] = {}
        for toleration in tolerations:
            self.add(toleration)

    def add(self, t: Normal) -> None:
        self.normals[t] = self.normals.get(t, 0) + 1
        bucket = _bucket(t)
        if bucket is None:
            return
        group = self.buckets.setdefault(bucket, [0, None, {}])
        if not _needs_seconds(t):
            group[0] += 1
        elif _is_number(t[4]):
            group[1] = t[4] if group[1] is None else max(group[1], t[4])
            group[2][t[4]] = group[2].get(t[4], 0) + 1

    def covers(self, t: Normal, not_equal: bool = False) -> bool:
        """Whether a member tolerates a superset of `t`; with `not_equal`, a member other than those
        equal to `t` (MergeTolerations' look ahead)."""
        equal = self.normals.get(t, 0)
        if equal and not not_equal:
            return True
        key, op, value, effect, seconds = t
        own = _bucket(t)
        keys = {key, ""}
        effects = {effect, ""}
        candidates: list[tuple[str, ...]] = [("Exists", k, e) for k in keys for e in effects]
        if op == "Equal":
            candidates += [("Equal", key, e, value) for e in effects]
        for bucket in candidates:
            group = self.buckets.get(bucket)
            if group is None:
                continue
            free, most, by_seconds = group
            same = by_seconds.get(seconds, 0) if _is_number(seconds) else 0
            if not_equal and bucket == own:  # members equal to t sit in t's own bucket and class
                if _needs_seconds(t):
                    same -= equal
                else:
                    free -= equal
            if free > 0:
                return True
            if _is_number(seconds) and most is not None and (most > seconds or same > 0):
                return True
        return False


def merge_tolerations(first: Sequence[Toleration], second: Sequence[Toleration]) -> list[Toleration]:
    """`MergeTolerations`: both lists, without those another one already covers: a toleration is
    dropped when one kept before it, or a different one after it, tolerates a superset of it. The
    API server compares every pair; `Covers` gives the same answer in linear time."""
    everything = [*first, *second]
    normals = [_normal(item.toleration) for item in everything]
    if len(everything) <= SMALL:  # a few tolerations, as nearly every pod has: the pairwise loop is cheaper
        kept_normals: list[Normal] = []
        merged_small = []
        for index, item in enumerate(everything):
            normal = normals[index]
            if any(_superset(kept, normal) for kept in kept_normals) or any(
                    later != normal and _superset(later, normal) for later in normals[index + 1:]):
                continue
            merged_small.append(item)
            kept_normals.append(normal)
        return merged_small
    later, covered_later = Covers(), [False] * len(everything)
    for index in range(len(everything) - 1, -1, -1):
        covered_later[index] = later.covers(normals[index], not_equal=True)
        later.add(normals[index])
    kept, merged = Covers(), []
    for index, item in enumerate(everything):
        if covered_later[index] or kept.covers(normals[index]):
            continue
        merged.append(item)
        kept.add(normals[index])
    return merged


def _annotation_tolerations(annotations: Mapping[str, Any], key: str) -> list[Mapping[str, Any]] | str:
    """A JSON list of tolerations from a Namespace annotation, or why the API server cannot read it."""
    text = annotations.get(key)
    if not text:
        return []
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        return f"its namespace's {key} annotation is not a JSON list of tolerations"
    return value


def _node_selector_annotation(text: Any) -> dict[str, str] | str:
    """`labels.ConvertSelectorToLabelsMap`: "k=v,k2=v2"."""
    if not isinstance(text, str):
        return {}
    selector: dict[str, str] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep:
            return f"its namespace's {NODE_SELECTOR_ANNOTATION} annotation {text!r} is not k=v,k2=v2"
        selector[key.strip()] = value.strip()
    return selector


def _amount_is_positive(value: Any) -> bool:
    try:
        return parse_quantity(value) > 0
    except QuantityError:
        return True


def is_best_effort(pod: PodSpec) -> bool:
    """Kubernetes' `GetPodQOS`: BestEffort when no container sets a cpu or memory request or limit."""
    for container in pod.containers:
        resources = as_mapping(as_mapping(container.spec).get("resources"))
        for kind in ("requests", "limits"):
            for name, value in as_mapping(resources.get(kind)).items():
                if name in ("cpu", "memory") and _amount_is_positive(value):
                    return False
    return True


def requested_extended_resources(pod: PodSpec) -> tuple[list[str], bool]:
    """Extended resources in the requests of containers and init containers after defaulting (a
    limit alone sets the request), sorted as ExtendedResourceToleration sorts them; and whether a
    container was unknown during preview (it might add more)."""
    names: set[str] = set()
    unknown = False
    for container in pod.containers:
        if container.role == "ephemeral":
            continue
        spec = container.spec
        if type(spec) is dict:  # nearly every container: read without the Mapping ABC check
            resources = spec.get("resources")
        else:
            resources = as_mapping(spec).get("resources") if spec is not UNKNOWN else UNKNOWN
        if resources is None:
            continue
        if resources is UNKNOWN:
            unknown = True
            continue
        if type(resources) is not dict:
            resources = as_mapping(resources)
        requests, limits = resources.get("requests"), resources.get("limits")
        if requests is UNKNOWN or limits is UNKNOWN:
            unknown = True
            continue
        for amounts in (requests, limits):
            if amounts:  # absent (None) or empty: nothing to add
                names.update(filter(is_extended_resource_name, amounts if type(amounts) is dict else as_mapping(amounts)))
    return sorted(names), unknown


#: Namespaces known without being among the objects checked (the pack's `namespaces` config):
#: (name, annotations) pairs.
KnownNamespaces = Sequence[tuple[str, Mapping[str, Any]]]


def admit(pod: PodSpec, context: Context, plugins: Collection[str], given: KnownNamespaces = ()) -> Admitted:
    """The pod after the admission plugins in `plugins` (raises UndecidableError when its own
    tolerations or nodeSelector are unknown during preview). Its Namespace is the one among the
    objects checked, else the one in `given`, else a Namespace without the plugins' annotations."""
    # The given Namespaces' annotations are part of the answer: two rules configured with the same
    # namespace names but other annotations must not share one admitted pod. (Every rule asks for the
    # admitted form of every pod, and most configs give none: no generator is built for them.)
    namespaces = tuple((name, tuple(sorted((str(k), str(v)) for k, v in annotations.items())))
                       for name, annotations in given) if given else ()
    key = ("admit", frozenset(plugins), namespaces)
    return derived(pod, key, context, lambda: _admit(pod, context, plugins, given))


def _namespace_annotations(name: str, context: Context, given: KnownNamespaces) -> Mapping[str, Any] | None:
    annotations = context.namespaces.get(name)
    if annotations is None and given:
        annotations = next((annotations for namespace, annotations in given if namespace == name), None)
    return annotations


def _admit(pod: PodSpec, context: Context, plugins: Collection[str], given: KnownNamespaces = ()) -> Admitted:
    refusals: list[str] = []
    # Paths are joined only for an unknown value, the one place they are named.
    written_tolerations = pod.spec.get("tolerations")
    if written_tolerations is None:  # most pods write none
        tolerations = list(pod.added_tolerations)
    else:
        path = join(pod.path, "tolerations")
        tolerations = [Toleration(known(t, join(path, i)), WRITTEN)
                       for i, t in enumerate(list_at(written_tolerations, path)) if t is UNKNOWN or is_mapping(t)]
        tolerations += pod.added_tolerations
    written_selector = pod.spec.get("nodeSelector")
    if written_selector is UNKNOWN:
        raise UndecidableError(join(pod.path, "nodeSelector"))
    node_selector = {str(k): str(v) for k, v in as_mapping(written_selector).items()} if written_selector else {}
    namespace = namespace_of(pod.namespace)
    annotations = _namespace_annotations(namespace, context, given)

    if annotations is not None and POD_NODE_SELECTOR in plugins:
        selector = _node_selector_annotation(annotations.get(NODE_SELECTOR_ANNOTATION))
        if isinstance(selector, str):
            refusals.append(f"{selector} (PodNodeSelector)")
        else:
            conflicts = [k for k, v in selector.items() if k in node_selector and node_selector[k] != v]
            if conflicts:
                refusals.append(f"its nodeSelector conflicts with namespace '{namespace}''s node selector on "
                                f"{', '.join(conflicts)} (PodNodeSelector)")
            node_selector = {**node_selector, **selector}

    whitelist: list[Mapping[str, Any]] = []
    timed: list[Toleration] = []
    if annotations is not None and POD_TOLERATION_RESTRICTION in plugins:
        # Only a whitelist reads them, and DefaultTolerationSeconds sees the pod before the namespace's defaults.
        timed = [Toleration(added, "DefaultTolerationSeconds") for added in DEFAULT_TOLERATION_SECONDS
                 if not any(_normal(t.toleration)[0] in (added["key"], "") and _normal(t.toleration)[3] in ("NoExecute", "")
                            for t in tolerations)]
        defaults = _annotation_tolerations(annotations, DEFAULT_TOLERATIONS_ANNOTATION)
        allowed = _annotation_tolerations(annotations, TOLERATIONS_WHITELIST_ANNOTATION)
        for problem in (defaults, allowed):
            if isinstance(problem, str):
                refusals.append(f"{problem} (PodTolerationRestriction)")
        extra = [Toleration(t, f"namespace '{namespace}' default") for t in defaults] if isinstance(defaults, list) else []
        if not is_best_effort(pod):
            extra.append(Toleration(MEMORY_PRESSURE, "PodTolerationRestriction (the pod is not BestEffort)"))
        tolerations = merge_tolerations(tolerations, extra)
        whitelist = allowed if isinstance(allowed, list) else []

    incomplete = False
    if EXTENDED_RESOURCE_TOLERATION in plugins:
        resources, incomplete = requested_extended_resources(pod)
        if resources:
            present = {_normal(t.toleration)[:4] for t in tolerations}
            for resource in resources:
                # What `_normal(added)[:4]` gives for the toleration the plugin adds.
                if (resource, "Exists", "", "NoSchedule") not in present:
                    added = {"key": resource, "operator": "Exists", "effect": "NoSchedule"}
                    tolerations.append(Toleration(added, "AKS's ExtendedResourceToleration"))

    checked = [*tolerations, *timed]
    if whitelist and checked:
        permitted = [_normal(w) for w in whitelist]
        if len(permitted) * len(checked) <= SMALL * SMALL:
            outside = [t for t in checked if not any(_superset(w, _normal(t.toleration)) for w in permitted)]
        else:
            allowed_set = Covers(permitted)
            outside = [t for t in checked if not allowed_set.covers(_normal(t.toleration))]
        if outside:
            shown = ", ".join(describe(t.toleration) for t in outside[:MAX_LISTED])
            more = f" and {len(outside) - MAX_LISTED} more" if len(outside) > MAX_LISTED else ""
            refusals.append(f"namespace '{namespace}''s tolerationsWhitelist does not cover {shown}{more} "
                            "(PodTolerationRestriction)")
    return Admitted(tuple(tolerations), node_selector, tuple(refusals), incomplete)


def describe(toleration: Mapping[str, Any]) -> str:
    """A toleration as people read it: `sku=gpu:NoSchedule`, `nvidia.com/gpu (Exists):NoSchedule`."""
    key, operator, value, effect, _ = _normal(toleration)
    key = key or "<every key>"
    body = f"{key} (Exists)" if operator == "Exists" else f"{key}={value}"
    return f"{body}:{effect}" if effect else f"{body} (any effect)"
