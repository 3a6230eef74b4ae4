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
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .podspecs import UNKNOWN, PodSpec, Toleration, as_mapping, derived, join, known, list_at
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

WRITTEN = "written in the pod spec"


@dataclass(frozen=True)
class Admitted:
    """A pod as the scheduler will see it, and why the API server would refuse it (if it would)."""

    tolerations: tuple[Toleration, ...]
    node_selector: Mapping[str, str]
    refusals: tuple[str, ...]
    #: A container unknown during preview might have added an ExtendedResourceToleration.
    incomplete: bool = False


def _normal(toleration: Mapping[str, Any]) -> tuple[str, str, str, str, Any]:
    return (str(toleration.get("key") or ""), str(toleration.get("operator") or ""), str(toleration.get("value") or ""),
            str(toleration.get("effect") or ""), toleration.get("tolerationSeconds"))


def is_superset(ss: Mapping[str, Any], t: Mapping[str, Any]) -> bool:
    """`isSuperset(ss, t)` of `pkg/util/tolerations`: whether ss tolerates a superset of t."""
    ss_key, ss_op, ss_value, ss_effect, ss_seconds = _normal(ss)
    t_key, t_op, t_value, t_effect, t_seconds = _normal(t)
    if _normal(ss) == _normal(t):
        return True
    if t_key != ss_key and (ss_key != "" or ss_op != "Exists"):
        return False
    if t_effect != ss_effect and ss_effect != "":
        return False
    if ss_effect == "NoExecute" and ss_seconds is not None and (t_seconds is None or t_seconds > ss_seconds):
        return False
    if ss_op in ("Equal", ""):
        return t_op == "Equal" and t_value == ss_value
    return ss_op == "Exists"


def merge_tolerations(first: Sequence[Toleration], second: Sequence[Toleration]) -> list[Toleration]:
    """`MergeTolerations`: both lists, without those another one already covers."""
    everything = [*first, *second]
    merged: list[Toleration] = []
    for index, item in enumerate(everything):
        if any(is_superset(kept.toleration, item.toleration) for kept in merged):
            continue
        if any(_normal(item.toleration) != _normal(later.toleration) and is_superset(later.toleration, item.toleration)
               for later in everything[index + 1:]):
            continue
        merged.append(item)
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
        resources = as_mapping(spec).get("resources") if spec is not UNKNOWN else UNKNOWN
        if resources is UNKNOWN or any(as_mapping(resources).get(kind) is UNKNOWN for kind in ("requests", "limits")):
            unknown = True
            continue
        for kind in ("requests", "limits"):
            names.update(n for n in as_mapping(as_mapping(resources).get(kind)) if is_extended_resource_name(n))
    return sorted(names), unknown


#: Namespaces known without being among the objects checked (the pack's `namespaces` config):
#: (name, annotations) pairs.
KnownNamespaces = Sequence[tuple[str, Mapping[str, Any]]]


def admit(pod: PodSpec, context: Context, plugins: Collection[str], given: KnownNamespaces = ()) -> Admitted:
    """The pod after the admission plugins in `plugins` (raises UndecidableError when its own
    tolerations or nodeSelector are unknown during preview). Its Namespace is the one among the
    objects checked, else the one in `given`, else a Namespace without the plugins' annotations."""
    key = ("admit", frozenset(plugins), tuple(name for name, _ in given))
    return derived(pod, key, context, lambda: _admit(pod, context, plugins, given))


def _namespace_annotations(name: str, context: Context, given: KnownNamespaces) -> Mapping[str, Any] | None:
    annotations = context.namespaces.get(name)
    if annotations is None:
        annotations = next((annotations for namespace, annotations in given if namespace == name), None)
    return annotations


def _admit(pod: PodSpec, context: Context, plugins: Collection[str], given: KnownNamespaces = ()) -> Admitted:
    refusals: list[str] = []
    path = join(pod.path, "tolerations")
    written = [Toleration(known(t, join(path, i)), WRITTEN) for i, t in enumerate(list_at(pod.spec.get("tolerations"), path))
               if t is UNKNOWN or isinstance(t, Mapping)]
    tolerations = [*written, *pod.added_tolerations]
    node_selector = {str(k): str(v) for k, v in as_mapping(known(pod.spec.get("nodeSelector"),
                                                                 join(pod.path, "nodeSelector"))).items()}
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
    if annotations is not None and POD_TOLERATION_RESTRICTION in plugins:
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
        for resource in resources:
            added = {"key": resource, "operator": "Exists", "effect": "NoSchedule"}
            if not any(_normal(t.toleration)[:4] == _normal(added)[:4] for t in tolerations):
                tolerations.append(Toleration(added, "AKS's ExtendedResourceToleration"))

    if whitelist and tolerations:
        outside = [t for t in tolerations if not any(is_superset(w, t.toleration) for w in whitelist)]
        if outside:
            refusals.append(f"namespace '{namespace}''s tolerationsWhitelist does not cover "
                            f"{', '.join(describe(t.toleration) for t in outside)} (PodTolerationRestriction)")
    return Admitted(tuple(tolerations), node_selector, tuple(refusals), incomplete)


def describe(toleration: Mapping[str, Any]) -> str:
    """A toleration as people read it: `sku=gpu:NoSchedule`, `nvidia.com/gpu (Exists):NoSchedule`."""
    key, operator, value, effect, _ = _normal(toleration)
    key = key or "<every key>"
    body = f"{key} (Exists)" if operator == "Exists" else f"{key}={value}"
    return f"{body}:{effect}" if effect else f"{body} (any effect)"
