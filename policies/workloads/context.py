"""The objects checked together: what one object's pods depend on in the others.

The checker gathers them across the files it reads in one run, the pack across the stack. A pod's
verdict can rest on its Namespace (AKS's PodTolerationRestriction and PodNodeSelector read its
annotations), on the ResourceClaims and ResourceClaimTemplates it names (Dynamic Resource
Allocation), and on the training runtime a TrainJob refers to. Names resolve within a namespace, as
the API server resolves them; an object without a namespace is in "default".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..podspecs import api_group, as_list, as_mapping, as_str, object_namespace

DEFAULT_NAMESPACE = "default"


def namespace_of(namespace: str) -> str:
    return namespace or DEFAULT_NAMESPACE


@dataclass(frozen=True)
class DeviceRequest:
    """One request of a claim: the device classes it may be satisfied from."""

    name: str
    device_classes: tuple[str, ...]


@dataclass
class Context:
    #: Namespace name -> its annotations.
    namespaces: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    #: (namespace, name) -> device requests, for ResourceClaims and ResourceClaimTemplates.
    claims: dict[tuple[str, str], tuple[DeviceRequest, ...]] = field(default_factory=dict)
    claim_templates: dict[tuple[str, str], tuple[DeviceRequest, ...]] = field(default_factory=dict)
    #: (kind, namespace or "" for cluster-scoped, name) -> the runtime object.
    training_runtimes: dict[tuple[str, str, str], Mapping[str, Any]] = field(default_factory=dict)
    #: False when the caller sees one object alone: then what it cannot find may still exist.
    complete: bool = False

    def add(self, obj: Any) -> None:
        if not isinstance(obj, Mapping):
            return
        kind, group = obj.get("kind"), api_group(obj)
        metadata = as_mapping(obj.get("metadata"))
        name = as_str(metadata.get("name"))
        if not name:
            return
        if kind == "Namespace" and group == "":
            self.namespaces[name] = as_mapping(metadata.get("annotations"))
        elif group == "resource.k8s.io" and kind == "ResourceClaim":
            self.claims[(namespace_of(object_namespace(obj)), name)] = device_requests(as_mapping(obj.get("spec")))
        elif group == "resource.k8s.io" and kind == "ResourceClaimTemplate":
            claim_spec = as_mapping(as_mapping(obj.get("spec")).get("spec"))
            self.claim_templates[(namespace_of(object_namespace(obj)), name)] = device_requests(claim_spec)
        elif group == "trainer.kubeflow.org" and kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
            namespace = namespace_of(object_namespace(obj)) if kind == "TrainingRuntime" else ""
            self.training_runtimes[(kind, namespace, name)] = obj


def device_requests(claim_spec: Mapping[str, Any]) -> tuple[DeviceRequest, ...]:
    """The device classes of a claim spec's requests, in every version's shape: resource.k8s.io/v1
    `requests[].exactly.deviceClassName` and `firstAvailable[].deviceClassName`, v1beta1/v1alpha3
    `requests[].deviceClassName` (Kubernetes `pkg/apis/resource` types; DRA is GA in 1.34)."""
    requests = []
    for request in as_list(as_mapping(claim_spec.get("devices")).get("requests")):
        request = as_mapping(request)
        classes = [as_str(as_mapping(request.get("exactly")).get("deviceClassName")),
                   as_str(request.get("deviceClassName")),
                   *(as_str(as_mapping(sub).get("deviceClassName")) for sub in as_list(request.get("firstAvailable")))]
        requests.append(DeviceRequest(as_str(request.get("name")), tuple(c for c in classes if c)))
    return tuple(requests)


def context_of(objects: Iterable[Any], complete: bool = True) -> Context:
    context = Context(complete=complete)
    for obj in objects:
        context.add(obj)
    return context
