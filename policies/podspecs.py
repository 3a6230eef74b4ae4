"""Find every pod spec inside a Kubernetes object, whatever its kind, and the GPU asks in it.

A pod spec is any mapping with a `containers` list of container objects, at any depth: `spec` of a
Pod, `template.spec` of a PodTemplate or Deployment, `spec.jobTemplate.spec.template.spec` of a
CronJob, `workerGroupSpecs[].template.spec` of a KubeRay RayCluster, `replicatedJobs[].template...`
of a JobSet, the PyTorchJob's `pytorchReplicaSpecs.Worker.template.spec`, and custom resources we
have never heard of. No Pulumi imports; values the engine could not know yet arrive as `UNKNOWN`.
"""

from __future__ import annotations

from collections import abc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
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


def mapping_at(value: Any, path: str) -> Mapping[str, Any]:
    """`value` as a mapping: an absent or non-mapping value is empty; an unknown one is undecidable."""
    value = known(value, path)
    return value if isinstance(value, abc.Mapping) else {}


def list_at(value: Any, path: str) -> Sequence[Any]:
    value = known(value, path)
    return value if isinstance(value, abc.Sequence) and not isinstance(value, (str, bytes)) else []


@dataclass(frozen=True)
class PodSpec:
    path: str
    spec: Mapping[str, Any]
    #: GPU asks by resource-name patterns, so rules run one after another read the pod once.
    asks_cache: dict[tuple[str, ...], list[GpuAsk]] = field(default_factory=dict, compare=False, repr=False)


def _is_container_list(value: Any) -> bool:
    return (
        isinstance(value, abc.Sequence) and not isinstance(value, (str, bytes)) and len(value) > 0
        and all(isinstance(item, abc.Mapping) for item in value)
    )


def find_pod_specs(obj: Any, path: str = "") -> Iterator[PodSpec]:
    """Every pod spec in `obj`, outermost first, with its path (`spec.template.spec`)."""
    for parts, spec in _find(obj, ()):
        text = path
        for part in parts:
            text = join(text, part)
        yield PodSpec(text, spec)


def _find(obj: Any, parts: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    # Paths are kept as tuples and only spelled out for the pod specs found: this walk visits every
    # node of every object the checker reads, so it stays lean.
    if isinstance(obj, (dict, abc.Mapping)):
        containers = obj.get("containers")
        if containers is UNKNOWN or _is_container_list(containers):
            # No workload nests a pod spec inside another one.
            yield parts, obj
            return
        for key, value in obj.items():
            # Object metadata (labels, annotations) and status never hold pod specs.
            if isinstance(value, _SCALARS) or key in _NEVER_POD_SPECS or not isinstance(key, str):
                continue
            yield from _find(value, (*parts, key))
    elif isinstance(obj, list) or (isinstance(obj, abc.Sequence) and not isinstance(obj, (str, bytes))):
        for index, item in enumerate(obj):
            if not isinstance(item, _SCALARS):
                yield from _find(item, (*parts, index))


@dataclass(frozen=True)
class Container:
    path: str
    name: str
    spec: Mapping[str, Any]


def containers_of(pod: PodSpec) -> Iterator[Container]:
    for list_name in CONTAINER_LISTS:
        list_path = join(pod.path, list_name)
        for index, container in enumerate(list_at(pod.spec.get(list_name), list_path)):
            container_path = join(list_path, index)
            if not isinstance(container, abc.Mapping):
                continue
            name = container.get("name")
            yield Container(container_path, name if isinstance(name, str) else f"#{index}", container)


def is_gpu_resource(name: str, gpu_resources: Sequence[str]) -> bool:
    """`gpu_resources` holds names or shell-style patterns (`nvidia.com/mig-*`)."""
    return any(fnmatchcase(name, pattern) for pattern in gpu_resources)


@dataclass(frozen=True)
class GpuAsk:
    """One GPU resource named in one container: its limit and request as written (None if absent)."""

    container: Container
    resource: str
    limit: Any
    request: Any

    @property
    def path(self) -> str:
        return join(self.container.path, "resources")


def gpu_asks(pod: PodSpec, gpu_resources: Sequence[str]) -> list[GpuAsk]:
    key = tuple(gpu_resources)
    if key not in pod.asks_cache:
        pod.asks_cache[key] = _gpu_asks(pod, key)
    return pod.asks_cache[key]


def _gpu_asks(pod: PodSpec, gpu_resources: Sequence[str]) -> list[GpuAsk]:
    asks: list[GpuAsk] = []
    for container in containers_of(pod):
        resources_path = join(container.path, "resources")
        resources = mapping_at(container.spec.get("resources"), resources_path)
        limits = mapping_at(resources.get("limits"), join(resources_path, "limits"))
        requests = mapping_at(resources.get("requests"), join(resources_path, "requests"))
        names = [n for n in dict.fromkeys([*limits, *requests]) if isinstance(n, str)]
        for name in names:
            if is_gpu_resource(name, gpu_resources):
                asks.append(GpuAsk(container, name, limits.get(name), requests.get(name)))
    return asks


def object_identity(obj: Any) -> tuple[str, str]:
    """(kind, name) of a Kubernetes object, for messages; tolerant of anything."""
    if not isinstance(obj, abc.Mapping):
        return "", ""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, abc.Mapping) else None
    return (kind if isinstance(kind, str) else "", name if isinstance(name, str) else "")
