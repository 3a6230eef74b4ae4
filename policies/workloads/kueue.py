"""Kueue (`kueue.x-k8s.io`): a workload labelled with a queue runs only once Kueue admits it, and then
with what the admitting flavors add to its pods.

Read from kubernetes-sigs/kueue v0.17.0 (the Go module the proxy serves):

- **The queue.** `jobframework.QueueNameForObject` (`pkg/controller/jobframework/interface.go`) reads the
  label `kueue.x-k8s.io/queue-name` on the job (for a CronJob, on its `jobTemplate`, which becomes the
  Job). Kueue v0.3 to v0.14 also read an annotation of that name; v0.15 removed it
  (`CHANGELOG/CHANGELOG-0.15.md`, #7271), so a job that only has the annotation is read as those versions
  read it, with a note that current Kueue ignores it.
- **The LocalQueue** in the job's namespace names a **ClusterQueue** (`spec.clusterQueue`). The
  ClusterQueue admits nothing while it is stopped (`stopPolicy`), names a ResourceFlavor that does not exist
  (`FlavorNotFound`, `pkg/cache/scheduler/clusterqueue.go` `inactiveReason`), or sits under a Cohort
  whose `parentName` chain is a cycle (`pkg/cache/scheduler/snapshot.go`: a ClusterQueue whose parent
  `hierarchy.HasCycle` is left out of the snapshot the scheduler admits from). Its `namespaceSelector`
  must select the job's namespace; null selects none (`clusterqueue_types.go`: "Defaults to null which is
  a nothing selector"; `pkg/scheduler/scheduler.go`: "Workload namespace doesn't match ClusterQueue
  selector").
- **Flavors** (`pkg/scheduler/flavorassigner/flavorassigner.go`): every resource the pods ask for, with a
  non-zero amount, must be covered by one of the ClusterQueue's resource groups ("resource %s unavailable
  in ClusterQueue", `findFlavorForPodSets`); within a group the flavors are tried in order, and a flavor is
  passed over when its `nodeTaints` (NoSchedule and NoExecute) are not tolerated by the pod's tolerations
  together with the flavor's own `tolerations`, or when its `nodeLabels` do not pass the pod's
  nodeSelector and required node affinity, read only on the label keys the group's flavors use
  (`checkFlavorForPodSets`, `flavorSelector`). Which of the remaining flavors is chosen depends on the
  quota in use at the time: offline every one of them is possible.
- **What admission writes** (`pkg/podset/podset.go`, `FromAssignment` and `Merge`): each assigned flavor's
  `nodeLabels` join the pod template's nodeSelector, and its `tolerations` join the template's
  tolerations, before the job's pods are created.

So a queued pod is judged once per way Kueue may admit it: with the flavors' tolerations and node
labels, named in every message ("when queue 'team-a' admits it to flavor 't4'"). Where the queue's
objects are not among those checked (nor in the platform's contract), nothing is guessed: the pod is
marked, the mandatory rules leave it alone, and an advisory names what to add.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from ..limits import MAX_ADMISSIONS, listed
from ..pod_requests import resource_requests
from ..podspecs import PodSpec, Queued, Toleration, as_list, as_mapping, as_str, is_mapping
from ..pools.model import pool_named
from ..quantities import QuantityError, parse_quantity
from ..scheduling import HARD_TAINT_EFFECTS, required_node_terms, selector_verdict, shown_taint, tolerates
from .context import Context, collects, namespace_of, scoped_name
from .registry import register_pod_transform

GROUP = "kueue.x-k8s.io"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
#: Tables of the objects checked together (and of the platform's queues, `--platform`).
FLAVORS = "kueue.flavors"
CLUSTER_QUEUES = "kueue.cluster_queues"
LOCAL_QUEUES = "kueue.local_queues"
COHORTS = "kueue.cohorts"
NAMESPACE_LABELS = "kueue.namespace_labels"


@dataclass(frozen=True)
class Flavor:
    """A ResourceFlavor's `spec` as Kueue reads it."""

    name: str
    node_labels: Mapping[str, str]
    node_taints: tuple[Mapping[str, Any], ...]
    tolerations: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class FlavorQuotas:
    """One flavor of a resource group, with the nominal quota of each resource (None: unreadable)."""

    name: str
    quotas: Mapping[str, Fraction | None]


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    groups: tuple[ResourceGroup, ...]
    cohort: str
    #: The namespaceSelector as written; None when absent or null (Kueue: no namespace).
    namespace_selector: Mapping[str, Any] | None
    stopped: bool = False


@dataclass(frozen=True)
class LocalQueue:
    cluster_queue: str
    stopped: bool = False


def _objects(values: Any) -> tuple[Mapping[str, Any], ...]:
    return tuple(item for item in as_list(values) if is_mapping(item))


@collects(FLAVORS, GROUP, "ResourceFlavor")
def _flavor(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    spec = as_mapping(obj.get("spec"))
    labels = {str(k): str(v) for k, v in as_mapping(spec.get("nodeLabels")).items()}
    yield name, Flavor(name, labels, _objects(spec.get("nodeTaints")), _objects(spec.get("tolerations")))


def _quotas(resources: Any) -> dict[str, Fraction | None]:
    quotas: dict[str, Fraction | None] = {}
    for resource in as_list(resources):
        resource = as_mapping(resource)
        try:
            quotas[as_str(resource.get("name"))] = parse_quantity(resource.get("nominalQuota"))
        except QuantityError:
            quotas[as_str(resource.get("name"))] = None
    return quotas


def _groups(resource_groups: Any) -> tuple[ResourceGroup, ...]:
    groups = []
    for group in as_list(resource_groups):
        group = as_mapping(group)
        flavors = tuple(FlavorQuotas(as_str(as_mapping(f).get("name")), _quotas(as_mapping(f).get("resources")))
                        for f in as_list(group.get("flavors")))
        groups.append(ResourceGroup(tuple(as_str(r) for r in as_list(group.get("coveredResources"))), flavors))
    return tuple(groups)


@collects(CLUSTER_QUEUES, GROUP, "ClusterQueue")
def _cluster_queue(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    spec = as_mapping(obj.get("spec"))
    # v1beta2 names the cohort `cohortName`; v1beta1 `cohort`.
    cohort = as_str(spec.get("cohortName")) or as_str(spec.get("cohort"))
    selector = spec.get("namespaceSelector")
    yield name, ClusterQueue(name, _groups(spec.get("resourceGroups")), cohort,
                             selector if is_mapping(selector) else None, _stopped(spec))


def _stopped(spec: Mapping[str, Any]) -> bool:
    return spec.get("stopPolicy") in ("Hold", "HoldAndDrain")


@collects(LOCAL_QUEUES, GROUP, "LocalQueue")
def _local_queue(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    spec = as_mapping(obj.get("spec"))
    yield scoped_name(obj, name), LocalQueue(as_str(spec.get("clusterQueue")), _stopped(spec))


@collects(COHORTS, GROUP, "Cohort")
def _cohort(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    spec = as_mapping(obj.get("spec"))
    yield name, as_str(spec.get("parentName")) or as_str(spec.get("parent"))


@collects(NAMESPACE_LABELS, "", "Namespace")
def _namespace_labels(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield name, {str(k): str(v) for k, v in as_mapping(as_mapping(obj.get("metadata")).get("labels")).items()}


# --- Which queue a workload names ------------------------------------------------------------------


def queue_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    """The LocalQueue the object is queued to ("" if none), and where it is named (`metadata.labels`, or
    `metadata.annotations` when only the old annotation names it)."""
    metadata, at = as_mapping(obj.get("metadata")), "metadata"
    if obj.get("kind") == "CronJob":  # the Job it creates carries its jobTemplate's metadata
        metadata = as_mapping(as_mapping(as_mapping(obj.get("spec")).get("jobTemplate")).get("metadata"))
        at = "spec.jobTemplate.metadata"
    label = as_str(as_mapping(metadata.get("labels")).get(QUEUE_LABEL))
    if label:
        return label, f"{at}.labels"
    return as_str(as_mapping(metadata.get("annotations")).get(QUEUE_LABEL)), f"{at}.annotations"


# --- How Kueue may admit a pod ---------------------------------------------------------------------


@dataclass(frozen=True)
class Admission:
    """One way Kueue may admit the pod: the flavor assigned in each resource group it asks from."""

    flavors: tuple[tuple[Flavor, tuple[str, ...]], ...]

    def describe(self, queue: str, cluster_queue: str) -> str:
        names = [f"'{pool_named(flavor.name)}'" + (f" ({', '.join(resources)})" if len(self.flavors) > 1 else "")
                 for flavor, resources in self.flavors]
        word = "flavor" if len(names) == 1 else "flavors"
        return (f"when queue '{pool_named(queue)}' (ClusterQueue '{pool_named(cluster_queue)}') admits it to {word} "
                f"{' and '.join(names)}")


@dataclass(frozen=True)
class Resolution:
    """What the queue does with the pod: the ways it may admit it, or why it never does, or what is
    missing to tell."""

    admissions: tuple[Admission, ...] = ()
    blocked: tuple[str, ...] = ()
    unknown: str = ""
    cluster_queue: str = ""
    #: Flavors passed over, with why, for the explainer ("flavor 'a100': its nodeTaints ...").
    passed_over: tuple[str, ...] = field(default=(), compare=False)


def _names(table: Mapping[Hashable, Any]) -> str:
    known = sorted(str(key[1] if isinstance(key, tuple) else key) for key in table)
    return listed([f"'{pool_named(name)}'" for name in known])


def _unknown(kind: str, name: str, table: Mapping[Hashable, Any], where: str) -> str:
    """What to add for a `kind` that is not among the objects checked: it may exist in the cluster (a team's
    job names the platform's queue), so this is never an error; the ones that are known are named."""
    known = f"; the {kind}s checked are {_names(table)}" if table else ""
    return f"{kind} '{pool_named(name)}' ({where}{known})"


def _cohort_cycle(cohort: str, cohorts: Mapping[Hashable, Any]) -> list[str] | None:
    """The cycle the Cohort's `parentName` chain runs into, or None. Kueue walks the chain with no bound
    until a Cohort without a parent or one already seen (kueue v0.17.0 `pkg/cache/hierarchy/cycle.go:35-43`,
    `hasCycle` with a `seen` set), and so does this: each Cohort is visited once, so the walk ends within
    as many steps as there are Cohorts, however long the chain or the cycle."""
    seen: dict[str, int] = {}  # each Cohort walked, at its position in the chain
    chain: list[str] = []
    current = cohort
    while current:
        if current in seen:
            return [*chain[seen[current]:], current]
        seen[current] = len(chain)
        chain.append(current)
        current = cohorts.get(current) or ""
    return None


def _selects_namespace(selector: Mapping[str, Any] | None, namespace: str,
                       labels: Mapping[str, str] | None) -> bool | None:
    """Whether a ClusterQueue's namespaceSelector selects the namespace: None when the namespace's labels
    are not known (its Namespace is not among the objects checked) and the selector needs them."""
    if selector is None:
        return False
    # Every namespace carries its name as `kubernetes.io/metadata.name` (NamespaceDefaultLabelName, GA).
    known = {**(labels or {}), "kubernetes.io/metadata.name": namespace}
    verdicts: list[bool | None] = []
    for key, value in as_mapping(selector.get("matchLabels")).items():
        verdicts.append(known.get(str(key)) == str(value) if str(key) in known or labels is not None else None)
    for expression in as_list(selector.get("matchExpressions")):
        expression = as_mapping(expression)
        key, operator = str(expression.get("key")), expression.get("operator")
        if key not in known and labels is None:
            verdicts.append(None)
        elif operator in ("In", "NotIn"):
            inside = known.get(key) in [str(v) for v in as_list(expression.get("values"))]
            verdicts.append(inside if operator == "In" else not inside)
        elif operator in ("Exists", "DoesNotExist"):
            verdicts.append((key in known) == (operator == "Exists"))
        else:
            verdicts.append(False)
    if False in verdicts:
        return False
    return None if None in verdicts else True


def _asked(pod: PodSpec) -> dict[str, Fraction]:
    """The resources one pod asks for with a non-zero amount, totalled as the scheduler totals them (Kueue's
    pod-set requests are the same sums)."""
    return {name: amount for name, amount in resource_requests(pod)[0].items() if amount > 0}


def _flavor_refusal(flavor: Flavor, pod: PodSpec, label_keys: frozenset[str]) -> str | None:
    """Why Kueue passes this flavor over for the pod (`checkFlavorForPodSets`), or None."""
    tolerations = [*_written_tolerations(pod), *flavor.tolerations]
    for taint in flavor.node_taints:
        if taint.get("effect") in HARD_TAINT_EFFECTS and not any(tolerates(t, taint) for t in tolerations):
            return f"its nodeTaints hold {shown_taint(taint)}, which neither the pod nor the flavor tolerates"
    node_selector = {str(k): str(v) for k, v in as_mapping(pod.spec.get("nodeSelector")).items() if str(k) in label_keys}
    terms: list[Mapping[str, Any]] = []
    for term in required_node_terms(pod.spec) or []:
        kept = [e for e in as_list(as_mapping(term).get("matchExpressions")) if str(as_mapping(e).get("key")) in label_keys]
        if not kept:  # a term left empty matches any flavor, and so does the affinity (flavorSelector)
            terms = []
            break
        terms.append({"matchExpressions": kept})
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": terms}}}} if terms else {}
    if selector_verdict(spec, node_selector, flavor.node_labels) is False:
        return "its nodeLabels do not pass the pod's nodeSelector or required node affinity"
    return None


def _written_tolerations(pod: PodSpec) -> list[Mapping[str, Any]]:
    return [t for t in as_list(pod.spec.get("tolerations")) if is_mapping(t)]


def resolve(pod: PodSpec, queue: str, context: Context) -> Resolution:
    """How Kueue treats `pod` of a job queued to LocalQueue `queue` in the pod's namespace. Every name a
    message quotes is input (a label, an object's name): cut and on one line (`pool_named`)."""
    namespace = namespace_of(pod.namespace)
    local_queues, cluster_queues = context.table(LOCAL_QUEUES), context.table(CLUSTER_QUEUES)
    flavors, cohorts = context.table(FLAVORS), context.table(COHORTS)
    local = local_queues.get((namespace, queue))
    shown_queue, shown_namespace = pool_named(queue), pool_named(namespace)
    if local is None:
        same_namespace: dict[Hashable, Any] = {key: value for key, value in local_queues.items()
                                                if isinstance(key, tuple) and key[0] == namespace}
        return Resolution(unknown=_unknown("LocalQueue", queue, same_namespace, f"in namespace '{shown_namespace}'"))
    if local.stopped:
        return Resolution(blocked=(f"LocalQueue '{shown_queue}' is stopped (stopPolicy): it admits nothing",))
    cq = cluster_queues.get(local.cluster_queue)
    if cq is None:
        return Resolution(unknown=_unknown("ClusterQueue", local.cluster_queue, cluster_queues,
                                           f"named by LocalQueue '{shown_queue}' spec.clusterQueue"))
    problems = []
    shown_cq = pool_named(cq.name)
    if cq.stopped:
        problems.append(f"ClusterQueue '{shown_cq}' is stopped (stopPolicy): it admits nothing")
    cycle = _cohort_cycle(cq.cohort, cohorts)
    if cycle:
        problems.append(f"ClusterQueue '{shown_cq}' is in Cohort '{pool_named(cq.cohort)}', whose parentName chain is "
                        f"a cycle ({listed([pool_named(name) for name in cycle], ' -> ')}): Kueue leaves the "
                        "ClusterQueue out of what it admits from")
    selected = _selects_namespace(cq.namespace_selector, namespace, context.table(NAMESPACE_LABELS).get(namespace))
    if selected is False:
        why = "has no namespaceSelector, which selects no namespace (write {} for every one)" \
            if cq.namespace_selector is None else "has a namespaceSelector that does not select it"
        problems.append(f"ClusterQueue '{shown_cq}' {why}, so it never admits a workload of namespace "
                        f"'{shown_namespace}'")
    missing, unknown_flavors = [], []
    for index, group in enumerate(cq.groups):
        for position, quota in enumerate(group.flavors):
            if quota.name in flavors:
                continue
            where = f"spec.resourceGroups[{index}].flavors[{position}]"
            if flavors:
                missing.append(f"{where} names ResourceFlavor '{pool_named(quota.name)}'")
            else:
                unknown_flavors.append(_unknown("ResourceFlavor", quota.name, flavors,
                                                f"named by ClusterQueue '{shown_cq}' {where}"))
    if missing:
        # A ClusterQueue and its flavors are one platform team's setup: among flavors given, a name that
        # matches none is a mistake, not a flavor kept elsewhere.
        which = "which does not exist" if len(missing) == 1 else "which do not exist"
        problems.append(f"ClusterQueue '{shown_cq}' {listed(missing)}, {which} (the ResourceFlavors are "
                        f"{_names(flavors)}): Kueue marks the ClusterQueue inactive (FlavorNotFound) and admits nothing")
    if problems:
        return Resolution(blocked=tuple(problems), cluster_queue=cq.name)
    if unknown_flavors:
        return Resolution(unknown=listed(list(dict.fromkeys(unknown_flavors))), cluster_queue=cq.name)
    return _assign(pod, queue, cq, flavors)


def _assign(pod: PodSpec, queue: str, cq: ClusterQueue, flavors: Mapping[Hashable, Any]) -> Resolution:
    asked = _asked(pod)
    choices: list[list[tuple[Flavor, tuple[str, ...]]]] = []
    problems, passed_over = [], []
    shown_cq = pool_named(cq.name)
    uncovered = [pool_named(resource) for resource in asked if not any(resource in group.covered for group in cq.groups)]
    if uncovered:
        problems.append(f"it asks for {listed(uncovered)}, which no resource group of ClusterQueue '{shown_cq}' "
                        "covers (Kueue: \"resource unavailable in ClusterQueue\"); add it to coveredResources")
    for group in cq.groups:
        resources = tuple(resource for resource in group.covered if resource in asked)
        if not resources:
            continue
        label_keys = frozenset(key for quota in group.flavors for key in flavors[quota.name].node_labels)
        eligible = []
        for quota in group.flavors:
            flavor = flavors[quota.name]
            refusal = _flavor_refusal(flavor, pod, label_keys)
            if refusal is None:
                short = [r for r in resources if quota.quotas.get(r) is not None and not cq.cohort
                         and asked[r] > (quota.quotas[r] or 0)]
                if short:
                    refusal = (f"its nominalQuota of {listed([pool_named(r) for r in short])} is less than one pod "
                               f"asks, and ClusterQueue '{shown_cq}' has no cohort to borrow from")
            if refusal is None:
                eligible.append((flavor, resources))
            else:
                passed_over.append(f"flavor '{pool_named(flavor.name)}': {refusal}")
        if not eligible:
            problems.append(f"no flavor of ClusterQueue '{shown_cq}' for {listed([pool_named(r) for r in resources])} "
                            f"accepts it: {listed(passed_over[-len(group.flavors):], '; ')}")
        choices.append(eligible)
    if problems:
        return Resolution(blocked=tuple(problems), cluster_queue=cq.name, passed_over=tuple(passed_over))
    admissions = tuple(Admission(tuple(combination))
                       for combination in itertools.islice(itertools.product(*choices), MAX_ADMISSIONS))
    return Resolution(admissions=admissions, cluster_queue=cq.name, passed_over=tuple(passed_over))


def admitted_pod(pod: PodSpec, admission: Admission, queue: str, cluster_queue: str, at: str) -> PodSpec:
    """The pod as the job creates it once Kueue admitted it this way: the flavors' nodeLabels in its
    nodeSelector, their tolerations beside its own (`podset.Merge`)."""
    node_selector = dict(as_mapping(pod.spec.get("nodeSelector")))
    added = list(pod.added_tolerations)
    for flavor, _ in admission.flavors:
        node_selector.update(flavor.node_labels)
        added += [Toleration(dict(t), f"Kueue's ResourceFlavor '{pool_named(flavor.name)}'") for t in flavor.tolerations]
    spec = {**pod.spec, "nodeSelector": node_selector} if node_selector else pod.spec
    return replace(pod, spec=spec, added_tolerations=tuple(added),
                   queued=Queued(pool_named(queue), admission.describe(queue, cluster_queue), at=at))


def queued_pods(obj: Mapping[str, Any], pods: Sequence[PodSpec], context: Context) -> list[PodSpec]:
    """The pods of a queued workload as Kueue lets them run: one per way it may admit them; a pod whose
    queue is never going to admit it, or whose queue's objects are not known, marked so (`Queued`)."""
    queue, at = queue_name(obj) if is_mapping(obj) else ("", "")
    if not queue:
        return list(pods)
    note = (f"only the annotation {QUEUE_LABEL} names its queue: Kueue v0.3 to v0.14 read it, v0.15 and later read "
            "the label alone (CHANGELOG-0.15, #7271) and leave this job alone; use the label") if at.endswith("annotations") \
        else ""
    result: list[PodSpec] = []
    for pod in pods:
        if note:
            pod = replace(pod, notes=(*pod.notes, note))
        resolution = resolve(pod, queue, context)
        if resolution.admissions:
            result.extend(admitted_pod(pod, admission, queue, resolution.cluster_queue, at)
                          for admission in resolution.admissions)
        else:
            result.append(replace(pod, queued=Queued(pool_named(queue), blocked=resolution.blocked,
                                                     unknown=resolution.unknown, at=at)))
    return result


register_pod_transform(queued_pods)
