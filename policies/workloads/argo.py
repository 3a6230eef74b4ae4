"""Argo Workflows (`argoproj.io`): Workflow, WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow.

Sources, argoproj/argo-workflows at main (2026-08):
- `workflow/controller/workflowpod.go`: a `container` or `script` template runs in the container
  `main`; a `containerSet` runs its containers by their names; `initContainers` and `sidecars` join
  the pod. `addSchedulingConstraints` takes nodeSelector, affinity and tolerations each from the
  template if set there, else from the boundary template (the steps or DAG template that calls it),
  else from the workflow's `spec`.
- `workflow/controller/operator.go` (`mergedTemplateDefaultsInto`): `spec.templateDefaults` fills
  the fields a template leaves out.
- `podSpecPatch` (workflow or template) is a patch applied when the pod is built, often with
  `{{ }}` expressions: it cannot be evaluated here, which is said as an advisory.
A CronWorkflow's workflow is `spec.workflowSpec`.
- `workflow/executor/resource.go` (`ExecResource`): a `resource` template with `action` create,
  apply or replace hands its `manifest` (a string) to the API server as is, after the controller has
  substituted the `{{ }}` expressions in it. The object it creates (a GPU Job, a Volcano Job) is
  judged here as its own adapter reads it, with paths under `resource.manifest`; a manifest that
  holds expressions or does not parse, and names a GPU, is said as "could not be judged".
- `workflow/common/util.go` (`ProcessArgs`, `SubstituteParams`): a pod template's `{{ }}` expressions
  are substituted when it runs; one in the GPU asks or scheduling fields of a template that names a
  GPU is said as "could not be judged" too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..documents import DocumentError, Limits, load_yaml
from ..podspecs import (
    SCHEDULING_FIELDS,
    UNKNOWN,
    Container,
    PodSpec,
    as_list,
    as_mapping,
    as_str,
    iter_mappings,
    join,
    object_namespace,
)
from .context import Context, is_kubernetes_object
from .mentions import GPU_DEVICE_CLASS_NAMES, GPU_NAME_PREFIXES
from .registry import pod_specs_of, register

#: The actions whose manifest becomes an object (`workflow/executor/resource.go`); get, delete and
#: patch create nothing new.
CREATING_ACTIONS = ("create", "apply", "replace")
#: A manifest is text inside a template: small. The checker has bounded the file already.
MANIFEST_LIMITS = Limits(max_bytes=1024 * 1024, max_depth=64, max_nodes=100_000)
EXPRESSION_MARKER = "argo-expression-substituted-at-run-time"


def _expression_spans(text: str) -> Iterator[tuple[int, int]]:
    """Each `{{ … }}` (from a `{{` to the first `}}` after it), in one pass. The lazy regex this replaces
    scanned to the end of the text at every unclosed `{{`: quadratic in the text."""
    start = text.find("{{")
    while start != -1:
        end = text.find("}}", start + 2)
        if end == -1:
            return  # no `}}` after this `{{`, so none after any later one either
        yield start, end + 2
        start = text.find("{{", end + 2)


def _has_expression_in(text: str) -> bool:
    return next(_expression_spans(text), None) is not None


def _marked(text: str) -> str:
    """`text` with each `{{ … }}` replaced by EXPRESSION_MARKER."""
    parts: list[str] = []
    last = 0
    for start, end in _expression_spans(text):
        parts += (text[last:start], EXPRESSION_MARKER)
        last = end
    return "".join(parts) + text[last:] if parts else text


@dataclass(frozen=True)
class _Parsed:
    """A `resource` manifest read once: a template anchored once and aliased many times is one string
    object, so it is marked and parsed once per workflow, not once per alias."""

    names_gpu: bool
    marked: bool
    documents: tuple[Any, ...] = ()
    error: str | None = None


def _parsed(manifest: str, seen: dict[int, tuple[str, _Parsed]]) -> _Parsed:
    known = seen.get(id(manifest))
    if known is not None and known[0] is manifest:
        return known[1]
    text = _marked(manifest)
    try:
        documents = tuple(document for _, document in load_yaml(text, MANIFEST_LIMITS) if document is not None)
        parsed = _Parsed(_names_gpu(manifest), text is not manifest, documents)
    except DocumentError as error:
        parsed = _Parsed(_names_gpu(manifest), text is not manifest, error=error.message)
    seen[id(manifest)] = (manifest, parsed)  # the manifest is held, so its id is not reused meanwhile
    return parsed


def _names_gpu(text: str) -> bool:
    return any(prefix in text for prefix in GPU_NAME_PREFIXES) or any(name in text for name in GPU_DEVICE_CLASS_NAMES)


def _relocated(pod: PodSpec, prefix: str, workload: str) -> PodSpec:
    """A pod of the created object with its paths under the template's `resource.manifest`."""
    def moved(path: str) -> str:
        return join(prefix, path) if path else prefix

    containers = tuple(replace(c, path=moved(c.path), resources_path=moved(c.resources_path) if c.resources_path else "",
                               written_at={key: moved(value) for key, value in c.written_at.items()})
                       for c in pod.containers)
    return replace(pod, path=moved(pod.path), containers=containers, workload=f"{workload} ({pod.where})")


def _resource_pods(template: Mapping[str, Any], path: str, namespace: str, name: str, context: Context,
                   seen: dict[int, tuple[str, _Parsed]]) -> list[PodSpec]:
    resource = as_mapping(template.get("resource"))
    manifest = resource.get("manifest")
    if not isinstance(manifest, str) or as_str(resource.get("action")) not in CREATING_ACTIONS:
        return []
    prefix = join(join(path, "resource"), "manifest")
    workload = f"Argo resource template '{name}'"
    # Expressions become a marker before parsing (an unquoted `{{x}}` would read as a YAML mapping);
    # one left in a field the rules read means the verdict waits for the run.
    parsed = _parsed(manifest, seen)

    def unjudged(why: str) -> list[PodSpec]:
        if not parsed.names_gpu:
            return []
        return [PodSpec(prefix, {}, (), namespace, workload, notes=(
            f"could not be judged: {why}, and it names a GPU. Check the object it creates on its own",))]

    if parsed.error is not None:
        return unjudged(f"its manifest does not parse ({parsed.error})")
    documents = parsed.documents
    if len(documents) != 1 or not is_kubernetes_object(documents[0]):
        return unjudged("its manifest is not one Kubernetes object")
    created = documents[0]
    metadata = as_mapping(created.get("metadata"))
    if namespace and not as_str(metadata.get("namespace")):
        # Argo creates a namespaced object in the workflow's namespace when the manifest names none.
        created = {**created, "metadata": {**metadata, "namespace": namespace}}
    kind = as_str(created.get("kind"))
    created_name = as_str(metadata.get("name") or metadata.get("generateName")).replace(EXPRESSION_MARKER, "{{…}}")
    pods = pod_specs_of(created, context)
    if parsed.marked and any(_substituted(pod) for pod in pods):
        return unjudged("Argo substitutes the {{ }} expressions in its manifest's resources or scheduling fields when "
                        "it runs")
    return [_relocated(pod, prefix, f"{workload} creates {kind} '{created_name}'") for pod in pods]


def _substituted(pod: PodSpec) -> bool:
    fields = [pod.spec.get(key) for key in (*SCHEDULING_FIELDS, "resourceClaims")]
    fields += [as_mapping(container.spec).get("resources") for container in pod.containers]
    return any(EXPRESSION_MARKER in str(value) for value in fields if value is not None)


def _template_containers(template: Mapping[str, Any], path: str) -> tuple[Container, ...]:
    containers: list[Container] = []
    for key in ("container", "script"):
        value = template.get(key)
        if isinstance(value, Mapping) or value is UNKNOWN:
            containers.append(Container(join(path, key), "main", value))
    for index, container in iter_mappings(as_mapping(template.get("containerSet")).get("containers")):
        containers.append(Container(join(join(path, "containerSet.containers"), index),
                                    as_str(container.get("name"), f"#{index}"), container))
    for list_name, role in (("initContainers", "init"), ("sidecars", "app")):
        for index, container in iter_mappings(template.get(list_name)):
            containers.append(Container(join(join(path, list_name), index), as_str(container.get("name"), f"#{index}"),
                                        container, role))
    return tuple(containers)


def _callers(templates: list[tuple[int, Mapping[str, Any]]]) -> dict[str, list[Mapping[str, Any]]]:
    """Template name -> the steps and DAG templates that call it (its possible boundary templates)."""
    callers: dict[str, list[Mapping[str, Any]]] = {}
    for _, template in templates:
        steps = [step for group in as_list(template.get("steps")) for step in as_list(group)]
        tasks = as_list(as_mapping(template.get("dag")).get("tasks"))
        for call in (*steps, *tasks):
            name = as_str(as_mapping(call).get("template"))
            if name:
                callers.setdefault(name, []).append(template)
    return callers


def _first_set(key: str, *sources: Mapping[str, Any]) -> Any:
    for source in sources:
        value = source.get(key)
        if value:
            return value
    return None


def _workflow_pods(spec: Mapping[str, Any], spec_path: str, namespace: str, context: Context) -> list[PodSpec]:
    templates = list(iter_mappings(spec.get("templates")))
    callers = _callers(templates)
    defaults = as_mapping(spec.get("templateDefaults"))
    workflow_patch = bool(spec.get("podSpecPatch"))
    pods: list[PodSpec] = []
    seen: dict[int, tuple[str, _Parsed]] = {}
    for index, written in templates:
        path = join(join(spec_path, "templates"), index)
        template = {**defaults, **written}
        containers = _template_containers(template, path)
        if "resource" in written:
            pods += _resource_pods(written, path, namespace, as_str(written.get("name"), f"#{index}"), context, seen)
        if not containers:
            continue
        name = as_str(template.get("name"), f"#{index}")
        notes = tuple(
            f"Argo applies the podSpecPatch of {where} when it builds the pod; the rules cannot evaluate it, so "
            "they judge the template as written" for where, present in
            (("the workflow", workflow_patch), (f"template '{name}'", bool(template.get("podSpecPatch")))) if present)
        boundaries = [caller for caller in callers.get(name, []) if any(caller.get(key) for key in SCHEDULING_FIELDS)]
        plain_call = not callers.get(name) or len(boundaries) < len(callers.get(name, []))
        variants: list[tuple[str, Mapping[str, Any]]] = [(f"Argo template '{name}'", {})] if plain_call else []
        variants += [(f"Argo template '{name}' called from '{as_str(b.get('name'))}'", b) for b in boundaries]
        for workload, boundary in variants:
            fields = {key: _first_set(key, template, boundary, spec) for key in SCHEDULING_FIELDS}
            pod = {k: v for k, v in fields.items() if v is not None}
            # DRA claims: the template's, else the workflow's (workflow/controller/workflowpod.go,
            # `pod.Spec.ResourceClaims`); a boundary template does not pass them on.
            claims = _first_set("resourceClaims", template, spec)
            if claims is not None:
                pod["resourceClaims"] = claims
            judged = PodSpec(path, pod, containers, namespace, workload, notes=notes)
            pods.append(_unjudged_expressions(judged) if _has_expression(judged) else judged)
    return pods


def _has_expression(pod: PodSpec) -> bool:
    """Whether a `{{ }}` expression sits in the pod's GPU asks or scheduling fields, and it names a GPU."""
    resources = [as_mapping(container.spec).get("resources") for container in pod.containers]
    if not _names_gpu(str(resources)):
        return False
    fields = [pod.spec.get(key) for key in (*SCHEDULING_FIELDS, "resourceClaims")] + resources
    return any(_has_expression_in(str(value)) for value in fields if value is not None)


def _unjudged_expressions(pod: PodSpec) -> PodSpec:
    """Argo substitutes `{{ }}` in a template before it builds the pod (`workflow/controller/operator.go`
    `executeTemplate` -> `workflow/common/util.go` `ProcessArgs`, `SubstituteParams`): the values the
    API server will see are not in the object, so the pod is said as not judged, as a resource
    template's manifest is."""
    return PodSpec(pod.path, pod.spec, (), pod.namespace, pod.workload, notes=(
        *pod.notes, "could not be judged: Argo substitutes the {{ }} expressions in its resources or scheduling "
                    "fields when it runs, and it names a GPU. Check the values it runs with"))


_ARGO_GPUS = ("`container`, `script`, `containerSet.containers`, `initContainers`, `sidecars` of each template "
              "(`templateDefaults` fill in); the object a `resource` template's `manifest` creates, as its adapter reads it")
_ARGO_TOLERATIONS = ("the template's `tolerations`/`nodeSelector`/`affinity`, else its calling steps or DAG "
                     "template's, else the workflow's; a `podSpecPatch` is an advisory")
_ARGO_SOURCE = "argoproj/argo-workflows `workflow/controller/workflowpod.go`, `workflow/controller/operator.go`"


@register("argoproj.io", "Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", gpus=_ARGO_GPUS,
          tolerations=_ARGO_TOLERATIONS, source=_ARGO_SOURCE)
def workflow(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    return _workflow_pods(as_mapping(obj.get("spec")), "spec", object_namespace(obj), context)


@register("argoproj.io", "CronWorkflow", gpus=f"{_ARGO_GPUS}, under `spec.workflowSpec`",
          tolerations=_ARGO_TOLERATIONS, source=_ARGO_SOURCE)
def cron_workflow(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    spec = as_mapping(as_mapping(obj.get("spec")).get("workflowSpec"))
    return _workflow_pods(spec, "spec.workflowSpec", object_namespace(obj), context)
