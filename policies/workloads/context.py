"""The objects checked together: what one object's pods depend on in the others.

The checker gathers them across the files it reads in one run, the pack across the stack. A pod's
verdict can rest on other objects: its Namespace (AKS's PodTolerationRestriction and PodNodeSelector
read its annotations), the device claims it names, the runtime or template a controller resolves by
name. This module names no controller: each adapter module registers a *collector*
for the kinds it needs (`collects`), and reads what was collected from its own table
(`Context.table`). Adding a controller never edits this file.

Names resolve within a namespace, as the API server resolves them; an object without a namespace is
in "default".
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..podspecs import api_group, as_mapping, as_str, is_mapping, object_namespace
from .loading import load_all

DEFAULT_NAMESPACE = "default"

#: The table the Namespace collector fills (registered in `core`): name -> annotations. It has a
#: name here because the admission semantics (`policies/admission.py`) read it as `Context.namespaces`.
NAMESPACES = "namespaces"


def namespace_of(namespace: str) -> str:
    return namespace or DEFAULT_NAMESPACE


#: (object, its metadata.name) -> the (key, value) pairs it contributes to the collector's table.
Collect = Callable[[Mapping[str, Any], str], Iterable[tuple[Hashable, Any]]]
#: A test for documents that are not Kubernetes objects (a compiled Kubeflow pipeline).
Recognize = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Collector:
    table: str
    collect: Collect
    #: For Kubernetes objects, the (group, kind) pairs it reads; empty for a document collector.
    kinds: tuple[tuple[str, str], ...] = ()
    recognize: Recognize | None = None


#: (group, kind) -> the collectors of objects of that kind.
COLLECTORS: dict[tuple[str, str], list[Collector]] = {}
#: Collectors of documents that are not Kubernetes objects, each with its recogniser.
DOCUMENT_COLLECTORS: list[Collector] = []


def collects(table: str, group: str, *kinds: str) -> Callable[[Collect], Collect]:
    """Register `collect` for objects of `group` and `kinds`: what it yields lands in `table`.
    An object without a name contributes nothing (the API server would refuse it)."""
    def decorate(collect: Collect) -> Collect:
        collector = Collector(table, collect, tuple((group, kind) for kind in kinds))
        for kind in kinds:
            COLLECTORS.setdefault((group, kind), []).append(collector)
        return collect
    return decorate


def collects_documents(table: str, recognize: Recognize) -> Callable[[Collect], Collect]:
    """Register `collect` for documents that are not Kubernetes objects but that `recognize` knows."""
    def decorate(collect: Collect) -> Collect:
        DOCUMENT_COLLECTORS.append(Collector(table, collect, recognize=recognize))
        return collect
    return decorate


def is_kubernetes_object(obj: Any) -> bool:
    """A mapping with a `kind` (a non-empty string) and an `apiVersion` that is a string if present.
    A Helm values file or a compiled Kubeflow pipeline has neither. A missing `apiVersion` alone is
    tolerated (read as the core group), as hand-written objects and the pack's inputs may leave it out."""
    if not is_mapping(obj):
        return False
    kind, api_version = obj.get("kind"), obj.get("apiVersion", "")
    return isinstance(kind, str) and bool(kind) and isinstance(api_version, str)


def collectors_of(obj: Any) -> Sequence[Collector]:
    """The collectors that take something from `obj`: its kind's, for a Kubernetes object; those that
    recognise it, for another document; none for anything else. The pack asks first for every object
    it is sent, and most have none: they take no lock (`Operation.remember`)."""
    if not is_mapping(obj):
        return ()
    load_all()
    if not is_kubernetes_object(obj):
        return [collector for collector in DOCUMENT_COLLECTORS
                if collector.recognize is not None and collector.recognize(obj)]
    return COLLECTORS.get((api_group(obj), obj["kind"]), ())


class Context:
    """What the collectors gathered from the objects checked together, one table per collector
    name. `Context(complete=..., namespaces={...})` seeds tables (the pack's configured Namespaces)."""

    def __init__(self, complete: bool = False, **tables: Mapping[Hashable, Any]) -> None:
        #: False when the caller sees one object alone: then what it cannot find may still exist.
        self.complete = complete
        self.tables: dict[str, dict[Hashable, Any]] = {name: dict(table) for name, table in tables.items()}

    def table(self, name: str) -> dict[Hashable, Any]:
        """The table a collector fills (empty if nothing was collected)."""
        return self.tables.setdefault(name, {})

    @property
    def namespaces(self) -> dict[Hashable, Any]:
        """Namespace name -> its annotations."""
        return self.table(NAMESPACES)

    def add(self, obj: Any, collectors: Sequence[Collector] | None = None) -> None:
        """What `obj` contributes to each table (`collectors`: `collectors_of(obj)`, when the caller
        asked already)."""
        name: str | None = None
        for collector in collectors_of(obj) if collectors is None else collectors:
            if collector.recognize is not None:  # a document's collector: documents have no metadata.name
                self.table(collector.table).update(collector.collect(obj, ""))
                continue
            if name is None:
                name = as_str(as_mapping(obj.get("metadata")).get("name"))
            if name:  # an object without a name contributes nothing (the API server would refuse it)
                self.table(collector.table).update(collector.collect(obj, name))

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}: {len(table)}" for name, table in sorted(self.tables.items()))
        return f"Context(complete={self.complete}, {sizes})"


def scoped_name(obj: Mapping[str, Any], name: str) -> tuple[str, str]:
    """(namespace, name) of a namespaced object, the key most collectors use."""
    return namespace_of(object_namespace(obj)), name


def context_of(objects: Iterable[Any], complete: bool = True) -> Context:
    context = Context(complete=complete)
    for obj in objects:
        context.add(obj)
    return context
