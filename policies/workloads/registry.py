"""Which adapter turns which kind into pod specs: one small module per controller family registers
its (API group, kind) pairs here, with where it reads GPUs and tolerations and the controller source
it follows (the table in `docs/workloads.md` is generated from these registrations). A Kubernetes
kind nobody registered falls back to the generic search; a document that is not a Kubernetes object
(no `apiVersion` and `kind`, such as a Helm values file) gets no pod specs at all, unless a document
adapter recognises it (a compiled Kubeflow pipeline)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..podspecs import PodSpec, api_group, find_pod_specs, is_mapping, object_identity, object_namespace
from .context import Context, Recognize, is_kubernetes_object
from .loading import load_all
from .mentions import gpu_mention
from .shapes import WorkloadShape, declared_shape, pods_of_shape, shapes_markdown

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


#: (object, the pod specs its adapter found, objects checked together) -> the pods as they will run: what
#: admits or changes a workload's pods before they exist, whatever controller made them (a queue).
PodTransform = Callable[[Mapping[str, Any], Sequence[PodSpec], Context], list[PodSpec]]

ADAPTERS: dict[tuple[str, str], Adapter] = {}
POD_TRANSFORMS: list[PodTransform] = []
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


def register_shape(shape: WorkloadShape, *more_kinds: str, gpus: str, tolerations: str, source: str,
                   workload: str | None = None) -> Adapter:
    """A built-in adapter that is only a shape: registered for `shape.kind` (and `more_kinds` of the
    same group read the same way)."""
    def adapter(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
        return pods_of_shape(shape, obj, workload)

    return register(shape.group, shape.kind, *more_kinds, gpus=gpus, tolerations=tolerations, source=source)(adapter)


def register_pod_transform(transform: PodTransform) -> PodTransform:
    """Register what changes a workload's pods after its controller describes them (Kueue's admission)."""
    POD_TRANSFORMS.append(transform)
    return transform


def adapter_for(obj: Any) -> Adapter | None:
    if not is_mapping(obj):
        return None
    load_all()
    if not is_kubernetes_object(obj):
        return next((r.adapter for r in DOCUMENT_ADAPTERS if r.recognize is not None and r.recognize(obj)), None)
    return ADAPTERS.get((api_group(obj), obj["kind"]))


def pod_specs_of(obj: Any, context: Context | None = None, shapes: Sequence[WorkloadShape] = ()) -> list[PodSpec]:
    """The pod specs `obj` leads to: from the shape the policy config declares for its kind, else
    from its registered adapter, else (for a Kubernetes object) from the generic search. A document
    that is not a Kubernetes object and that no document adapter knows leads to none: nothing
    creates pods from it. A kind nobody knows that names a GPU outside every pod spec the search
    finds is not evaluated (`mentions`): one pod spec with the advisory and nothing to judge."""
    context = context or Context()
    pods = _described_pods(obj, context, shapes)
    load_all()  # the transforms register as their modules load
    for transform in POD_TRANSFORMS if pods else ():
        pods = transform(obj, pods, context)
    return pods


def _described_pods(obj: Any, context: Context, shapes: Sequence[WorkloadShape]) -> list[PodSpec]:
    if shapes and is_kubernetes_object(obj):
        shape = declared_shape(shapes, api_group(obj), obj["kind"])
        if shape is not None:
            return pods_of_shape(shape, obj)
    adapter = adapter_for(obj)
    if adapter is not None:
        return adapter(obj, context)
    if not is_kubernetes_object(obj):
        return []
    pods = find_pod_specs(obj, namespace=object_namespace(obj))
    mention = gpu_mention(obj, (id(pod.spec) for pod in pods))
    if mention is None:
        return pods
    return [not_evaluated(obj, *mention)]


def not_evaluated(obj: Mapping[str, Any], path: str, name: str) -> PodSpec:
    """The advisory for an object of a kind no adapter or declaration knows that names a GPU."""
    kind = object_identity(obj)[0]
    group = api_group(obj)
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else group
    note = (f"not evaluated: declare this kind's shape. No adapter or declared shape knows {kind} ({api_version}), "
            f"and it names {name!r} at {path}, outside any pod spec the rules can find; any verdict would be a guess. "
            f"Declare where its pods are in the policy config (workloadShapes: {{apiVersion: {api_version}, kind: "
            f"{kind}, pods: [...]}}; docs/workloads.md)")
    return PodSpec("spec", {}, (), object_namespace(obj), f"{kind}", notes=(note,))


# --- The reference page -------------------------------------------------------------------------

_PAGE_INTRO = """\
# Supported workloads

<!-- Generated by gpu_aks_policies.workloads.registry.workloads_markdown(); do not edit by hand. -->

The rules judge the pods a controller *will create*, not the object as written. One small adapter per
controller family (`policies/workloads/`) reads each kind where its controller reads it, following
the controller's source, and hands the rules the pod specs: each container with the path where its
GPU amounts are written, and the pod's tolerations, node selection and device claims as the
controller sets them. What an adapter cannot see (a patch applied at run time, a Task fetched by a
remote resolver, an accelerator chosen by a pipeline parameter) is reported as an advisory of the
rule `gpu-workloads-are-analyzable`.

- A Kubernetes kind no adapter registers falls back to a generic search: every mapping with a
  `containers` list, at any depth.
- A document that is not a Kubernetes object (no `kind`; for example a Helm values file with
  `containers` lists) gets no verdict, unless a document adapter below recognises it.
- Secrets and ConfigMaps never create pods: nothing looks inside them, and nothing of them appears in
  any report.
- Dynamic Resource Allocation: a pod's `resourceClaims` resolve to the ResourceClaims and
  ResourceClaimTemplates (`resource.k8s.io`) checked with it; a claim for a GPU device class makes it
  a GPU pod, whatever controller created it (`policies/workloads/dra.py`).

| API group | Kinds | GPUs are read from | Tolerations and node selection are read from | Controller source |
| --- | --- | --- | --- | --- |
"""

_RECIPE = """
## Adding a controller adapter

Adding a controller is one new module in `policies/workloads/` and its tests (a sample in
`tests/manifests/workloads/` with its rows in `tests/test_workloads.py`). Nothing else is edited:
every module of the package is imported the first time an adapter is asked for
(`loading.load_all`), and this page is generated from the registrations.

1. **Read the controller's source.** Find where it builds the pod: which fields become containers
   (and their names), which become resource limits and requests (and under which resource name),
   and where the pod's `tolerations`, `nodeSelector` and `affinity` come from, including what the
   controller adds by itself. Cite the files in the module's docstring, with the commit or date read.
2. **Write the adapter.** A function `(obj, context) -> list[PodSpec]`, registered with
   `@register(group, *kinds, gpus=..., tolerations=..., source=...)` (those three strings make this
   page's row). Build each `Container` with the path where the user wrote it, the name the
   controller gives it, and its resources; set `written_at` when an amount is written somewhere
   else than `<path>.resources` (a `gpu` shorthand, a `custom` map), and `limits_set_by_controller`
   when the controller computes the amounts itself. Build each `PodSpec` with the path where a
   toleration fix belongs, the pod-level fields, and `added_tolerations` (with their source),
   `notes` (advisories), `own_nodes` or `tolerations_from` where the controller, not the object,
   decides them. Read input with the tolerant helpers of `policies/podspecs.py` (`as_mapping`,
   `as_list`, `as_str`, `iter_mappings`): any JSON must give pods or none, never an exception.
3. **Collect what it needs from other objects.** If a pod depends on another object (a runtime, a
   Task, a platform spec), register a collector in the same module:
   `@collects(TABLE, group, kind)` yielding `(key, value)` pairs (`scoped_name(obj, name)` for a
   namespaced name), and read it with `context.table(TABLE)`. When the object is not there, say so
   in a note: with `context.complete` false the caller saw one object alone and it may still exist.
   Documents that are not Kubernetes objects use `register_document` and `collects_documents` with
   a recogniser.
4. **Test it with the project's own samples.** Copy a manifest from the project's samples or docs
   into `tests/manifests/workloads/`, with a header naming the file and commit, plus the same with
   the fix applied; list the expected finding paths per document and rule in `tests/test_workloads.py`,
   in both verdict directions. The property tests pick the new kinds up from the registry; add the
   adapter's field names to their key list so they are exercised.
5. **Regenerate this page** (`docs/workloads.md <- gpu_aks_policies.workloads.registry:workloads_markdown`);
   a test fails while it is stale.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def workloads_markdown() -> str:
    """`docs/workloads.md`: the supported kinds, one row per registration, and the recipe."""
    load_all()
    rows = []
    for registration in sorted(REGISTRATIONS, key=lambda r: (r.recognize is not None, r.group, r.kinds)):
        if registration.recognize is not None:
            group, kinds = "(not a Kubernetes object)", registration.group
        else:
            group, kinds = f"`{registration.group}`" if registration.group else "core (`v1`)", ", ".join(registration.kinds)
        rows.append(f"| {_cell(group)} | {_cell(kinds)} | {_cell(registration.gpus)} | {_cell(registration.tolerations)} "
                    f"| {_cell(registration.source)} |")
    return _PAGE_INTRO + "\n".join(rows) + "\n" + _RECIPE + shapes_markdown()
