"""The pod specs a Kubernetes object leads to, and the GPU asks in them. No Pulumi imports.

A `PodSpec` is what a controller will create: its containers (each with the path where the user
wrote it, which may be a KServe `model` or a Spark `gpu` field rather than a `containers` list),
the pod-level fields it sets (tolerations, nodeSelector, affinity, resourceClaims), the path where
a fix belongs, and what the controller adds by itself. Workload adapters (`policies/workloads/`)
build them for the kinds they know; `find_pod_specs` is the generic search for everything else: any
mapping with a `containers` list of objects, at any depth.

The search is iterative and visits each node once (a YAML alias is the same Python object), so it
neither recurses nor re-walks an alias bomb. A `containers` list does not stop it: a decoy
`containers: [{name: x}]` beside a real pod template must not hide the template.

Values the engine could not know during preview arrive as `UNKNOWN`; a rule that needs one raises
`UndecidableError` for that container or pod only, so the known ones still get their verdicts.
"""

from __future__ import annotations

from collections import abc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal, TypeGuard, TypeVar

from .limits import MAX_REMEMBERED_NAME
from .scope import current_scope, remembered

T = TypeVar("T")

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
ROLE_OF_LIST = {"containers": "app", "initContainers": "init", "ephemeralContainers": "ephemeral"}
_NEVER_POD_SPECS = frozenset({"metadata", "status"})
_SCALARS = (str, int, float, bool, type(None))


class Unknown:
    """A value the Pulumi engine cannot know during preview (an output of a resource not yet made)."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = Unknown()


class Absent:
    """A key that is not there at all, as opposed to one written as `null` (the zero quantity)."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = Absent()


class UndecidableError(Exception):
    """A rule met an unknown value it needs; `path` says where."""

    def __init__(self, path: str) -> None:
        super().__init__(f"the value at {path} is not known during preview")
        self.path = path


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def known(value: Any, path: str) -> Any:
    if value is UNKNOWN:
        raise UndecidableError(path)
    return value


# The `type(value) is dict/list` tests first are a fast path: parsed YAML and JSON are plain dicts and
# lists, and the ABC checks behind them (for the pack's read-only proxies) cost several times more.
# An absent field (None, the commonest non-container) is answered before them for the same reason.


def mapping_at(value: Any, path: str) -> Mapping[str, Any]:
    """`value` as a mapping: an absent or non-mapping value is empty; an unknown one is undecidable."""
    if type(value) is dict:
        return value
    if value is None:
        return {}
    value = known(value, path)
    return value if isinstance(value, abc.Mapping) else {}


def list_at(value: Any, path: str) -> Sequence[Any]:
    if type(value) is list:
        return value
    if value is None:
        return []
    value = known(value, path)
    return value if isinstance(value, abc.Sequence) and not isinstance(value, (str, bytes)) else []


def is_mapping(value: Any) -> TypeGuard[Mapping[Any, Any]]:
    """`isinstance(value, Mapping)`, answered without the ABC check for a plain dict."""
    return type(value) is dict or isinstance(value, abc.Mapping)


def as_mapping(value: Any) -> Mapping[str, Any]:
    """Tolerant reads for adapters: anything that is not a mapping is empty (unknown stays unknown
    only where a rule asks for it through `mapping_at`)."""
    if type(value) is dict:
        return value
    # An absent field (None) is the common other case: the ABC check below costs several times more.
    return value if value is not None and isinstance(value, abc.Mapping) else {}


def as_list(value: Any) -> list[Any]:
    if type(value) is list:
        return list(value)
    if value is None:
        return []
    return list(value) if isinstance(value, abc.Sequence) and not isinstance(value, (str, bytes)) else []


#: The fields of a pod spec, besides its containers, that say where the pod may run.
SCHEDULING_FIELDS = ("tolerations", "nodeSelector", "affinity", "topologySpreadConstraints")


def scheduling_fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The scheduling fields `spec` sets (a null one counts as unset): the pod spec an adapter hands
    the rules when its controller builds the pod from parts (a pod template, `extraPodSpec`)."""
    return {key: spec[key] for key in SCHEDULING_FIELDS if spec.get(key) is not None}


def as_str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


# --- The model --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Container:
    """One container of a pod as its controller creates it."""

    #: Where the user wrote it, for messages (`spec.containers[0]`, `spec.predictor.model`).
    path: str
    name: str
    #: The container (a mapping, or UNKNOWN during preview).
    spec: Any
    #: "app", "init" or "ephemeral".
    role: str = "app"
    #: Where its resources are written, when not `<path>.resources` (Spark's `gpu`, TrainJob's
    #: `resourcesPerNode`, Dynamo's `resources`).
    resources_path: str = ""
    #: The controller writes this container's GPU limits and requests itself (KServe's multi-node
    #: head and workers, KAITO's presets), so what the user wrote is not what the API server sees.
    limits_set_by_controller: bool = False
    #: Where an amount is really written when the controller derives the limit from another field:
    #: ("limits" or "requests", resource) -> path (Spark's `gpu.quantity`, Dynamo's `limits.gpu`).
    written_at: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @property
    def resources_at(self) -> str:
        # Not a functools.cached_property: before Python 3.12 its first read takes a lock, which cost
        # more than joining the path again on the few reads of each container.
        return self.resources_path or join(self.path, "resources")


@dataclass(frozen=True)
class Toleration:
    """A toleration a controller or admission plugin adds, and who adds it (for messages)."""

    toleration: Mapping[str, Any]
    source: str


@dataclass(frozen=True)
class Queued:
    """A pod whose workload waits in a queue (Kueue) until it is admitted: how it was admitted, for
    messages; or why the queue never admits it; or what is missing to tell (`workloads/kueue.py`)."""

    #: The queue's name (a LocalQueue in the pod's namespace) as messages quote it: cut and on one line, as
    #: `pools.model.pool_named` shows any name read from input.
    queue: str
    #: How the queue admits this form of the pod: "when queue 'team-a' (ClusterQueue 'gpu') admits it to
    #: flavor 't4'". Empty when it is not admitted.
    admitted: str = ""
    #: Why the queue never admits the pod (each a whole sentence naming the object and key).
    blocked: tuple[str, ...] = ()
    #: The queue objects that are not among those checked, for the advisory that names what to add.
    unknown: str = ""
    #: Where the queue is named in the object (`metadata.labels`), where a queue finding points.
    at: str = "metadata.labels"

    @property
    def judged(self) -> bool:
        """The pod runs as this form says: the pod rules judge it (with what admission added)."""
        return bool(self.admitted)


@dataclass(frozen=True)
class PodSpec:
    #: Where the pod's own fields are written in the object: tolerations and nodeSelector fixes go here.
    path: str
    #: The pod-level fields as the controller sets them (tolerations the user wrote, nodeSelector,
    #: affinity, resourceClaims). Containers are in `containers`.
    spec: Mapping[str, Any]
    containers: tuple[Container, ...]
    #: The namespace the pods are created in ("" when the object names none).
    namespace: str = ""
    #: What creates the pod, for messages: "" for a plain workload, "KServe predictor", ...
    workload: str = ""
    #: Tolerations the controller adds on its own, with a citation.
    added_tolerations: tuple[Toleration, ...] = ()
    #: What the rules cannot evaluate here (an Argo podSpecPatch, ...): reported as advisories.
    notes: tuple[str, ...] = ()
    #: Who provisions this pod's nodes when it is not the platform (KAITO): pool fit is not judged.
    own_nodes: str = ""
    #: Who gives this pod its tolerations when the object has no place for them (a Tekton Task: the
    #: podTemplate of the run that runs it): the toleration rule judges them there, not here.
    tolerations_from: str = ""
    #: The pod's annotations (its template's `metadata.annotations`), where the object shows them:
    #: some schedulers take GPU shares from annotations (`gpuMarkers`).
    annotations: Mapping[str, Any] = field(default_factory=dict)
    #: The key the pod's tolerations are written under at `path` (vLLM's VLLMRuntime says `toleration`).
    tolerations_key: str = "tolerations"
    #: How node selection is written at `path`: `nodeSelector` (a map), or `nodeSelectorTerms` (a
    #: list of NodeSelectorTerms the controller makes the required node affinity: vLLM's VLLMRuntime,
    #: which has no `nodeSelector`).
    node_selection_key: Literal["nodeSelector", "nodeSelectorTerms"] = "nodeSelector"
    #: The workload waits in a queue (Kueue): how this form of the pod was admitted, or why it is not.
    queued: Queued | None = None

    @property
    def tolerations_at(self) -> str:
        return join(self.path, self.tolerations_key)

    @property
    def where(self) -> str:
        place = self.path or "<root>"
        where = f"{self.workload} at {place}" if self.workload else f"pod spec at {place}"
        return f"{where}, {self.queued.admitted}" if self.queued is not None and self.queued.admitted else where

    @property
    def unjudged_queue(self) -> bool:
        """Its queue never admits it, or its queue's objects are not known: the verdicts that rest on where it
        runs are not given (the queue rule says why)."""
        return self.queued is not None and not self.queued.judged


def derived(pod: PodSpec, key: tuple[Any, ...], context: Any, compute: Callable[[], T]) -> T:
    """What a rule derives from `pod` among the objects of `context` (its admitted form, its GPU
    demand), computed once per request scope (`gpu_aks_policies.scope`): the rules run one after another on
    the same pods."""
    scope = current_scope()
    if scope is None:
        return compute()
    entry_key = (key, id(pod))
    entry = scope.entries.get(entry_key)
    if entry is not None and entry[0] is pod and entry[1][0] is context:
        return entry[1][1]  # type: ignore[no-any-return]
    value = compute()
    scope.entries[entry_key] = (pod, (context, value))
    return value


def containers_of_spec(spec: Mapping[str, Any], path: str) -> tuple[Container, ...]:
    """The containers of an ordinary pod spec, from its three container lists. An unknown list or
    entry during preview becomes one UNKNOWN container, so the known ones keep their verdicts."""
    containers: list[Container] = []
    for list_name in CONTAINER_LISTS:
        value = spec.get(list_name)
        if value is None:  # most pods write one of the three lists: no path for the others
            continue
        list_path = join(path, list_name)
        if value is UNKNOWN:
            containers.append(Container(list_path, f"<{list_name}>", UNKNOWN, ROLE_OF_LIST[list_name]))
            continue
        role = ROLE_OF_LIST[list_name]
        for index, container in enumerate(value if type(value) is list else as_list(value)):
            if type(container) is dict or is_mapping(container):
                name = container.get("name")
            elif container is UNKNOWN:
                name = None
            else:
                continue
            containers.append(Container(f"{list_path}[{index}]", name if isinstance(name, str) else f"#{index}",
                                        container, role))
    return tuple(containers)


def pod_spec(spec: Any, path: str, namespace: str = "", workload: str = "", **extra: Any) -> PodSpec:
    """A PodSpec for an ordinary pod spec mapping written at `path` (an unknown one during preview
    becomes a pod whose only container is unknown, so the rules say they could not decide)."""
    if spec is UNKNOWN:
        return PodSpec(path, {}, (Container(path, "<pod spec>", UNKNOWN),), namespace, workload, **extra)
    mapping = spec if is_mapping(spec) else {}
    return PodSpec(path, mapping, containers_of_spec(mapping, path), namespace, workload, **extra)


# --- Generic search ---------------------------------------------------------------------------


def _is_container_list(value: Any) -> bool:
    return (
        isinstance(value, abc.Sequence) and not isinstance(value, (str, bytes)) and len(value) > 0
        and all(isinstance(item, abc.Mapping) or item is UNKNOWN for item in value)
    )


def find_pod_specs(obj: Any, path: str = "", namespace: str = "") -> list[PodSpec]:
    """Every mapping with a `containers` list in `obj`, outermost first, each node visited once."""
    found: list[PodSpec] = []
    visited: set[int] = set()
    stack: list[tuple[Any, tuple[str | int, ...], Any]] = [(obj, (), None)]
    while stack:
        node, parts, parent = stack.pop()
        if isinstance(node, _SCALARS) or id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, abc.Mapping):
            containers = node.get("containers")
            if containers is UNKNOWN or _is_container_list(containers):
                text = path
                for part in parts:
                    text = join(text, part)
                # A pod spec's annotations are its template's (or the Pod's) metadata, beside `spec`.
                template = parent if parts and parts[-1] == "spec" and isinstance(parent, abc.Mapping) else {}
                annotations = as_mapping(as_mapping(template.get("metadata")).get("annotations"))
                found.append(pod_spec(node, text, namespace, annotations=annotations))
            children: list[tuple[Any, tuple[str | int, ...], Any]] = [
                (value, (*parts, key), node) for key, value in node.items()
                        if isinstance(key, str) and key not in _NEVER_POD_SPECS and key not in CONTAINER_LISTS
                        and not isinstance(value, _SCALARS)]
        elif isinstance(node, abc.Sequence) and not isinstance(node, (str, bytes)):
            children = [(item, (*parts, index), node) for index, item in enumerate(node) if not isinstance(item, _SCALARS)]
        else:
            continue
        stack.extend(reversed(children))
    return found


# --- GPU asks ---------------------------------------------------------------------------------


def is_gpu_resource(name: str, gpu_resources: Sequence[str]) -> bool:
    """`gpu_resources` holds names or shell-style patterns (`nvidia.com/mig-*`)."""
    return _matches(name, _answers(tuple(gpu_resources)))


class _Answers(dict[str, bool]):
    """Whether each resource name asked so far matches one of `patterns`."""

    __slots__ = ("patterns",)

    def __init__(self, patterns: tuple[str, ...]) -> None:
        super().__init__()
        self.patterns = patterns


#: patterns -> their answers. Resource names repeat across thousands of containers (cpu, memory,
#: nvidia.com/gpu) and a config has a few pattern lists: the patterns are looked up once per
#: container, then each name once in a dict (an lru_cache keyed by (name, patterns) hashed the
#: pattern tuple again for every name).
_ANSWERS: dict[tuple[str, ...], _Answers] = {}
#: Bounds: a hostile stream of distinct names or pattern lists must not grow them without end.
_MAX_PATTERN_LISTS = 64
_MAX_NAMES_PER_LIST = 4096


def _answers(patterns: tuple[str, ...]) -> _Answers:
    answers = _ANSWERS.get(patterns)
    if answers is None:
        if len(_ANSWERS) >= _MAX_PATTERN_LISTS:
            _ANSWERS.clear()
        answers = _ANSWERS[patterns] = _Answers(patterns)
    return answers


def _matches(name: str, answers: _Answers) -> bool:
    """Whether `name` matches one of `answers.patterns`, remembered there for a plain string of a
    resource name's length (a str subclass, such as a secret marker, is never kept)."""
    answer = answers.get(name) if type(name) is str else None
    if answer is None:
        answer = any(fnmatchcase(name, pattern) for pattern in answers.patterns)
        if type(name) is str and len(name) <= MAX_REMEMBERED_NAME and len(answers) < _MAX_NAMES_PER_LIST:
            answers[name] = answer
    return answer


@dataclass(frozen=True)
class GpuAsk:
    """One GPU resource named in one container: its limit and request as written (ABSENT if not)."""

    container: Container
    resource: str
    limit: Any
    request: Any

    @property
    def path(self) -> str:
        return self.container.resources_at

    @property
    def limit_path(self) -> str:
        return self.container.written_at.get(("limits", self.resource)) or join(join(self.path, "limits"), self.resource)

    @property
    def request_path(self) -> str:
        return self.container.written_at.get(("requests", self.resource)) or join(join(self.path, "requests"), self.resource)


def gpu_asks(pod: PodSpec, gpu_resources: Sequence[str]) -> list[GpuAsk]:
    """Every GPU resource entry of every known container. Raises UndecidableError for the first
    unknown container or resources map only after the known ones are collected (see `asks_by_container`)."""
    patterns = tuple(gpu_resources)
    return remembered(("gpu_asks", patterns), pod, lambda: [
        ask for asks in asks_by_container(pod, patterns) if not isinstance(asks, UndecidableError) for ask in asks])


def asks_by_container(pod: PodSpec, gpu_resources: Sequence[str]) -> list[list[GpuAsk] | UndecidableError]:
    """Per container, its GPU asks, or the UndecidableError that hid them during preview."""
    patterns = tuple(gpu_resources)

    def compute() -> list[list[GpuAsk] | UndecidableError]:
        result: list[list[GpuAsk] | UndecidableError] = []
        for container in pod.containers:
            try:
                result.append(_container_asks(container, patterns))
            except UndecidableError as error:
                result.append(error)
        return result

    return remembered(("asks_by_container", patterns), pod, compute)


def _container_asks(container: Container, gpu_resources: Sequence[str]) -> list[GpuAsk]:
    # Plain dicts (almost every input) skip building the paths mapping_at would name on an unknown.
    # An absent field (None) is empty without naming its path.
    spec = container.spec if type(container.spec) is dict else mapping_at(container.spec, container.path)
    resources = spec.get("resources")
    if type(resources) is not dict:
        resources = {} if resources is None else mapping_at(resources, container.resources_at)
    limits = resources.get("limits")
    if type(limits) is not dict:
        limits = {} if limits is None else mapping_at(limits, join(container.resources_at, "limits"))
    requests = resources.get("requests")
    if type(requests) is not dict:
        requests = {} if requests is None else mapping_at(requests, join(container.resources_at, "requests"))
    if not limits and not requests:
        return []
    answers = _answers(gpu_resources if type(gpu_resources) is tuple else tuple(gpu_resources))
    asks = []
    for name in (dict.fromkeys([*limits, *requests]) if requests else limits):
        if isinstance(name, str) and _matches(name, answers):
            asks.append(GpuAsk(container, name, limits.get(name, ABSENT), requests.get(name, ABSENT)))
    return asks


# --- Identity ---------------------------------------------------------------------------------


def object_identity(obj: Any) -> tuple[str, str]:
    """(kind, name) of a Kubernetes object, for messages; tolerant of anything."""
    if not is_mapping(obj):
        return "", ""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    name = metadata.get("name") if is_mapping(metadata) else None
    if not isinstance(name, str) and is_mapping(metadata):
        name = metadata.get("generateName")
    return (kind if isinstance(kind, str) else "", name if isinstance(name, str) else "")


def object_namespace(obj: Any) -> str:
    metadata = obj.get("metadata") if is_mapping(obj) else None
    namespace = metadata.get("namespace") if is_mapping(metadata) else None
    return namespace if isinstance(namespace, str) else ""


def api_group(obj: Any) -> str:
    """The API group of an object (`serving.kserve.io` from `serving.kserve.io/v1beta1`; "" for core)."""
    api_version = obj.get("apiVersion") if is_mapping(obj) else None
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.rsplit("/", 1)[0]


def iter_mappings(values: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for index, value in enumerate(as_list(values)):
        if isinstance(value, abc.Mapping):
            yield index, value
