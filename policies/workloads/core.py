"""The built-in workload kinds: each has its pod spec at a fixed place (Kubernetes API reference,
`core/v1` Pod and PodTemplate, `apps/v1`, `batch/v1`). Reading that place, and only it, is exact and
cheap, and a decoy `containers` list elsewhere in the object changes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..podspecs import UNKNOWN, PodSpec, as_mapping, object_namespace, pod_spec
from .context import Context
from .registry import register

_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def _at(obj: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    value: Any = obj
    for key in keys:
        value = as_mapping(value).get(key)
    return value


def _builtin(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    keys = _TEMPLATE_PATHS[str(obj.get("kind"))]
    spec = _at(obj, keys)
    if not isinstance(spec, Mapping) and spec is not UNKNOWN:
        return []
    # The pod's annotations sit beside its spec, in the template's (or the Pod's) metadata.
    annotations = as_mapping(as_mapping(as_mapping(_at(obj, keys[:-1])).get("metadata")).get("annotations"))
    return [pod_spec(spec, ".".join(keys), object_namespace(obj), annotations=annotations)]


register("", "Pod", "PodTemplate", "ReplicationController")(_builtin)
register("apps", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet")(_builtin)
register("batch", "Job", "CronJob")(_builtin)
