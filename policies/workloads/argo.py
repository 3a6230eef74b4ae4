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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from .context import Context
from .registry import register


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


def _workflow_pods(spec: Mapping[str, Any], spec_path: str, namespace: str) -> list[PodSpec]:
    templates = list(iter_mappings(spec.get("templates")))
    callers = _callers(templates)
    defaults = as_mapping(spec.get("templateDefaults"))
    workflow_patch = bool(spec.get("podSpecPatch"))
    pods: list[PodSpec] = []
    for index, written in templates:
        path = join(join(spec_path, "templates"), index)
        template = {**defaults, **written}
        containers = _template_containers(template, path)
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
            pods.append(PodSpec(path, pod, containers, namespace, workload, notes=notes))
    return pods


_ARGO_GPUS = ("`container`, `script`, `containerSet.containers`, `initContainers`, `sidecars` of each template "
              "(`templateDefaults` fill in)")
_ARGO_TOLERATIONS = ("the template's `tolerations`/`nodeSelector`/`affinity`, else its calling steps or DAG "
                     "template's, else the workflow's; a `podSpecPatch` is an advisory")
_ARGO_SOURCE = "argoproj/argo-workflows `workflow/controller/workflowpod.go`, `workflow/controller/operator.go`"


@register("argoproj.io", "Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", gpus=_ARGO_GPUS,
          tolerations=_ARGO_TOLERATIONS, source=_ARGO_SOURCE)
def workflow(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return _workflow_pods(as_mapping(obj.get("spec")), "spec", object_namespace(obj))


@register("argoproj.io", "CronWorkflow", gpus=f"{_ARGO_GPUS}, under `spec.workflowSpec`",
          tolerations=_ARGO_TOLERATIONS, source=_ARGO_SOURCE)
def cron_workflow(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(as_mapping(obj.get("spec")).get("workflowSpec"))
    return _workflow_pods(spec, "spec.workflowSpec", object_namespace(obj))
