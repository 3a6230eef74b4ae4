"""The built-in kinds.

- Workloads: each has its pod spec at a fixed place (Kubernetes API reference, `core/v1` Pod and
  PodTemplate, `apps/v1`, `batch/v1`). Reading that place, and only it, is exact and cheap, and a
  decoy `containers` list elsewhere in the object changes nothing.
- Namespaces: collected for the admission plugins AKS runs (PodTolerationRestriction and
  PodNodeSelector read a Namespace's annotations; `policies/admission.py`).
- Secrets and ConfigMaps: no controller creates pods from them, whatever their `data` or
  `stringData` holds, so nothing looks inside them (a Secret's contents must never reach a report).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from ..podspecs import UNKNOWN, PodSpec, as_mapping, object_namespace, pod_spec
from .context import NAMESPACES, Context, collects
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


_SOURCE = "Kubernetes API reference (`core/v1`, `apps/v1`, `batch/v1`)"
_GPUS = "`resources` of `containers`, `initContainers`, `ephemeralContainers` of the pod template"
_TOLERATIONS = "the pod template's `tolerations`, `nodeSelector`, `affinity`, plus what AKS admission adds"
register("", "Pod", "PodTemplate", "ReplicationController", gpus=_GPUS, tolerations=_TOLERATIONS,
         source=_SOURCE)(_builtin)
register("apps", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", gpus=_GPUS, tolerations=_TOLERATIONS,
         source=_SOURCE)(_builtin)
register("batch", "Job", "CronJob", gpus=_GPUS, tolerations=_TOLERATIONS, source=_SOURCE)(_builtin)


@register("", "Secret", "ConfigMap", gpus="never (no controller creates pods from them)", tolerations="never",
          source="Kubernetes API reference (`core/v1` Secret, ConfigMap)")
def never_pods(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    """Secrets and ConfigMaps hold data, not workloads: a pod-shaped object in `stringData` or
    `data` is never created, and a Secret's contents must not appear in any report."""
    return []


@collects(NAMESPACES, "", "Namespace")
def _namespace(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield name, as_mapping(as_mapping(obj.get("metadata")).get("annotations"))
