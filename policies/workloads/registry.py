"""Which adapter turns which kind into pod specs: one small module per controller family registers
its (API group, kind) pairs here, with where it reads GPUs and tolerations and the controller source
it follows (the table in `docs/workloads.md` is generated from these registrations). A Kubernetes
kind nobody registered falls back to the generic search; a document that is not a Kubernetes object
(no `apiVersion` and `kind`, such as a Helm values file) gets no pod specs at all, unless a document
adapter recognises it (a compiled Kubeflow pipeline)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..podspecs import PodSpec, api_group, find_pod_specs, object_namespace
from .context import Context, Recognize, is_kubernetes_object

#: (object, objects checked together) -> the pod specs its controller will create.
Adapter = Callable[[Mapping[str, Any], Context], list[PodSpec]]


@dataclass(frozen=True)
class Registration:
    """One adapter as the docs describe it."""

    #: API group ("" for core), or a description of the document shape for document adapters.
    group: str
    kinds: tuple[str, ...]
    adapter: Adapter
    #: Where the controller's pods get their GPU asks from, in the object.
    gpus: str
    #: Where they get their tolerations (and node selection) from.
    tolerations: str
    #: The controller source the adapter follows.
    source: str
    recognize: Recognize | None = None


ADAPTERS: dict[tuple[str, str], Adapter] = {}
REGISTRATIONS: list[Registration] = []
#: Adapters of documents that are not Kubernetes objects, each with its recogniser.
DOCUMENT_ADAPTERS: list[Registration] = []


def register(group: str, *kinds: str, gpus: str = "", tolerations: str = "",
             source: str = "") -> Callable[[Adapter], Adapter]:
    def decorate(adapter: Adapter) -> Adapter:
        for kind in kinds:
            ADAPTERS[(group, kind)] = adapter
        REGISTRATIONS.append(Registration(group, kinds, adapter, gpus, tolerations, source))
        return adapter
    return decorate


def register_document(shape: str, recognize: Recognize, gpus: str = "", tolerations: str = "",
                      source: str = "") -> Callable[[Adapter], Adapter]:
    """An adapter for documents that are not Kubernetes objects but that `recognize` knows."""
    def decorate(adapter: Adapter) -> Adapter:
        registration = Registration(shape, (), adapter, gpus, tolerations, source, recognize)
        DOCUMENT_ADAPTERS.append(registration)
        REGISTRATIONS.append(registration)
        return adapter
    return decorate


def adapter_for(obj: Any) -> Adapter | None:
    if not isinstance(obj, Mapping):
        return None
    if not is_kubernetes_object(obj):
        return next((r.adapter for r in DOCUMENT_ADAPTERS if r.recognize is not None and r.recognize(obj)), None)
    return ADAPTERS.get((api_group(obj), obj["kind"]))


def pod_specs_of(obj: Any, context: Context | None = None) -> list[PodSpec]:
    """The pod specs `obj` leads to: from its registered adapter, else (for a Kubernetes object)
    from the generic search. A document that is not a Kubernetes object and that no document
    adapter knows leads to none: nothing creates pods from it."""
    adapter = adapter_for(obj)
    if adapter is not None:
        return adapter(obj, context or Context())
    if not is_kubernetes_object(obj):
        return []
    return find_pod_specs(obj, namespace=object_namespace(obj))
