"""Pods of the rule corpus as their controllers would create them, for a real API server.

The workload adapters find each pod spec in an object (a Deployment's template, a KServe predictor,
a Spark executor). Here each becomes the Pod its controller submits, before any admission plugin:
the tolerations written plus those the controller adds itself, the nodeSelector and node affinity,
the pod's annotations, and per container the resources as the controller sets them (GPU amounts
exactly as written, so the API server parses them itself). Fields the rules never read (images,
volumes, commands, templated values a controller fills in later) are left out: they are not what
is compared, and their templates (`{{inputs.x}}`) are not valid before the controller runs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gpu_aks_policies.podspecs import ABSENT, PodSpec, asks_by_container
from gpu_aks_policies.quantities import QuantityError, parse_quantity
from gpu_aks_policies.rule_config import RuleConfig
from gpu_aks_policies.workloads import Context

#: Non-GPU resources kept from a container: the scheduler filters on them.
PLAIN_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_DNS_LABEL = re.compile(r"[^a-z0-9-]+")


def dns_label(text: str, fallback: str = "c") -> str:
    label = _DNS_LABEL.sub("-", text.lower()).strip("-")[:63].strip("-")
    return label or fallback


def _quantity_or_none(value: Any) -> Any:
    """A written amount the API server would parse (kept as written), else None."""
    if value is ABSENT or isinstance(value, (dict, list)):
        return None
    try:
        parse_quantity(value)
    except (QuantityError, ValueError, TypeError):
        return None
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def written_pod(pod: PodSpec, name: str, config: RuleConfig, namespace: str | None = None) -> dict[str, Any]:
    """The Pod the controller creates for `pod`, named `name`."""
    resources = (*config.gpu_resources, *config.gpu_markers.resources)
    lists: dict[str, list[dict[str, Any]]] = {"app": [], "init": []}
    seen: set[str] = set()
    for container, asks in zip(pod.containers, asks_by_container(pod, resources), strict=True):
        if container.role not in lists:
            continue
        limits: dict[str, Any] = {}
        requests: dict[str, Any] = {}
        spec_resources = _mapping(_mapping(container.spec).get("resources"))
        for field_name, target in (("limits", limits), ("requests", requests)):
            for resource, value in _mapping(spec_resources.get(field_name)).items():
                kept = _quantity_or_none(value)
                if resource in PLAIN_RESOURCES and kept is not None:
                    target[resource] = kept
        assert isinstance(asks, list), "the corpus has no unknown values"
        for ask in asks:
            for value, target in ((ask.limit, limits), (ask.request, requests)):
                if value is not ABSENT:
                    target[ask.resource] = value
        container_name = dns_label(container.name)
        while container_name in seen:
            container_name = dns_label(container_name[:60] + "-x")
        seen.add(container_name)
        entry: dict[str, Any] = {"name": container_name, "image": "registry.k8s.io/pause:3.10"}
        if limits or requests:
            entry["resources"] = {key: value for key, value in (("limits", limits), ("requests", requests)) if value}
        lists[container.role].append(entry)
    spec: dict[str, Any] = {"containers": lists["app"] or [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]}
    if lists["init"]:
        spec["initContainers"] = lists["init"]
    tolerations = [dict(t) for t in (pod.spec.get("tolerations") or []) if isinstance(t, Mapping)]
    tolerations += [dict(t.toleration) for t in pod.added_tolerations]
    if tolerations:
        spec["tolerations"] = tolerations
    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, Mapping) and selector:
        spec["nodeSelector"] = {str(k): str(v) for k, v in selector.items()}
    node_affinity = _mapping(pod.spec.get("affinity")).get("nodeAffinity")
    if isinstance(node_affinity, Mapping):
        spec["affinity"] = {"nodeAffinity": dict(node_affinity)}
    spread = pod.spec.get("topologySpreadConstraints")
    if isinstance(spread, list) and spread:
        spec["topologySpreadConstraints"] = [dict(constraint) for constraint in spread if isinstance(constraint, Mapping)]
    metadata: dict[str, Any] = {"name": name, "namespace": namespace or pod.namespace or "default"}
    if pod.annotations:
        metadata["annotations"] = {str(k): str(v) for k, v in pod.annotations.items()}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def namespaces_of(context: Context) -> dict[str, Mapping[str, Any]]:
    """The Namespaces among the corpus objects, with their annotations."""
    return {str(name): dict(annotations or {}) for name, annotations in context.namespaces.items()}
