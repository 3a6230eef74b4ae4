"""Tekton Pipelines (`tekton.dev`): Task, TaskRun, Pipeline, PipelineRun.

Sources, tektoncd/pipeline at main (2026-08, 3ee1745):
- `pkg/apis/pipeline/v1/container_types.go`: a Step, a StepTemplate and a Sidecar ask for resources
  under `computeResources` (v1beta1: `resources`, `pkg/apis/pipeline/v1beta1/container_types.go`).
- `pkg/pod/pod.go` (`Builder.Build`): the TaskRun's pod is built from the task spec: steps merged
  with `stepTemplate` (`v1.MergeStepsWithStepTemplate`, a strategic merge, so `limits` and
  `requests` merge key by key), then with the run's `stepSpecs` (v1beta1 `stepOverrides`) by step
  name, then the run's task-level `computeResources`
  (`pkg/internal/computeresources/tasklevel/tasklevel.go`: every step gets its limits, and the
  requests divided evenly among the steps, in thousandths); sidecars merged with `sidecarSpecs`
  (v1beta1 `sidecarOverrides`). Containers are named `step-<name>` (`step-unnamed-<i>`) and
  `sidecar-<name>` (`pkg/pod/entrypoint.go`). The pod's `tolerations`, `nodeSelector` and
  `affinity` are the TaskRun's `spec.podTemplate`'s, and nothing else (`pkg/apis/pipeline/pod/template.go`).
- `pkg/apis/pipeline/v1/pipelinerun_types.go` (`GetTaskRunSpec`): a PipelineRun gives each of its
  tasks the pod template `spec.taskRunTemplate.podTemplate` (v1beta1: `spec.podTemplate`), merged
  with the task's `taskRunSpecs[].podTemplate` (v1beta1 `taskPodTemplate`) by
  `pod.MergePodTemplateWithDefault`: a field the task's template sets wins, one it leaves out comes
  from the run's. `stepSpecs`, `sidecarSpecs` and `computeResources` come from `taskRunSpecs[]`.
- `pkg/apis/pipeline/v1/pipeline_types.go`: a Pipeline's `tasks` and `finally` run a Task by
  `taskRef` or an inline `taskSpec`.
A Task and a Pipeline have no place for pod fields: their pods take tolerations from the runs that
run them (and the cluster's `default-pod-template`, which is not among the objects checked), so the
toleration rule judges the runs, and a Task's own pods are judged only for their GPU amounts. A run
resolves a Task or Pipeline by name among the objects checked; a remote one (`resolver`, `bundle`)
or one not there is an advisory. The steps of a referenced Task are judged for their amounts at the
Task, not again at every run, unless the run overrides them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from ..podspecs import (
    Container,
    PodSpec,
    as_list,
    as_mapping,
    as_str,
    iter_mappings,
    join,
    object_namespace,
    scheduling_fields,
)
from ..quantities import QuantityError, parse_quantity
from .context import Context, collects, scoped_name
from .mentions import names_gpu
from .registry import register

GROUP = "tekton.dev"
TASKS = "tekton.tasks"
PIPELINES = "tekton.pipelines"
#: ("Task" or "Pipeline", namespace, name) of what the runs checked together run, by reference.
RUN_REFERENCES = "tekton.run_references"
#: v1 writes a container's resources under `computeResources`, v1beta1 under `resources`.
_RESOURCE_KEYS = ("computeResources", "resources")
_RUNS = "the TaskRun or PipelineRun that runs it (its podTemplate)"


@collects(TASKS, GROUP, "Task")
def _task(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield scoped_name(obj, name), obj


@collects(PIPELINES, GROUP, "Pipeline")
def _pipeline(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield scoped_name(obj, name), obj


@collects(RUN_REFERENCES, GROUP, "TaskRun", "PipelineRun")
def _run_references(obj: Mapping[str, Any], _: str) -> Iterator[tuple[Hashable, Any]]:
    spec = as_mapping(obj.get("spec"))
    namespace = scoped_name(obj, "")[0]
    for key, kind in (("taskRef", "Task"), ("pipelineRef", "Pipeline")):
        name = as_str(as_mapping(spec.get(key)).get("name"))
        if name:
            yield (kind, namespace, name), True
    for _path, pipeline_task in _pipeline_tasks(as_mapping(spec.get("pipelineSpec")), ""):
        name = as_str(as_mapping(pipeline_task.get("taskRef")).get("name"))
        if name:
            yield ("Task", namespace, name), True


def _is_run(kind: str, namespace: str, name: str, context: Context) -> bool:
    """Whether a run checked together runs the Task or Pipeline, directly or through a Pipeline."""
    runs = context.table(RUN_REFERENCES)
    if (kind, namespace, name) in runs:
        return True
    if kind != "Task":
        return False
    for key, pipeline_obj in context.table(PIPELINES).items():
        if not isinstance(key, tuple) or key[0] != namespace or ("Pipeline", namespace, key[1]) not in runs:
            continue
        for _path, pipeline_task in _pipeline_tasks(as_mapping(as_mapping(pipeline_obj).get("spec")), ""):
            if as_str(as_mapping(pipeline_task.get("taskRef")).get("name")) == name:
                return True
    return False


def _asks_for_gpus(containers: tuple[Container, ...]) -> bool:
    return any(isinstance(resource, str) and names_gpu(resource) for container in containers
               for kind in ("limits", "requests") for resource in as_mapping(as_mapping(container.spec)
                                                                           .get("resources")).get(kind) or {})


def _no_run_note(kind: str, name: str, obj: Mapping[str, Any], containers: tuple[Container, ...],
                 context: Context) -> tuple[str, ...]:
    """The advisory for a Task or Pipeline that asks for GPUs while no run of it is checked with it:
    its pods get their tolerations only from the run, so the toleration rule has nothing to judge."""
    if not _asks_for_gpus(containers) or _is_run(kind, scoped_name(obj, "")[0], name, context):
        return ()
    scope = "among the objects checked" if context.complete else "visible to a check of this object alone"
    return (f"asks for GPUs, and no TaskRun or PipelineRun that runs this {kind} is {scope}. Its pods take their "
            "tolerations from the run's podTemplate only (TaskRun spec.podTemplate; PipelineRun "
            "spec.taskRunTemplate.podTemplate or spec.taskRunSpecs[].podTemplate; v1beta1 spec.podTemplate), or from "
            "the cluster's default-pod-template: give the GPU toleration there, and check the run together with it",)


def _resources(container: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], str] | None:
    for key in _RESOURCE_KEYS:
        value = container.get(key)
        if isinstance(value, Mapping):
            return value, join(path, key)
    return None


def _merge(layers: list[tuple[Mapping[str, Any], str]]) -> tuple[dict[str, Any], dict[tuple[str, str], str]]:
    """Resources merged key by key, later layers winning, and where each amount was written."""
    merged: dict[str, dict[Any, Any]] = {}
    written_at: dict[tuple[str, str], str] = {}
    for resources, path in layers:
        for kind in ("limits", "requests"):
            for name, amount in as_mapping(resources.get(kind)).items():
                merged.setdefault(kind, {})[name] = amount
                if isinstance(name, str):
                    written_at[(kind, name)] = join(join(path, kind), name)
    return merged, written_at


def _divided(amount: Any, steps: int) -> Any:
    """`computeAverageRequests`: the amount's thousandths divided by the number of steps."""
    try:
        milli = int(parse_quantity(amount) * 1000)
    except (QuantityError, TypeError, ValueError, OverflowError):
        return amount
    share = Fraction(milli // steps, 1000)
    return int(share) if share.denominator == 1 else f"{milli // steps}m"


def _overrides(run_spec: Mapping[str, Any], run_path: str, keys: tuple[str, ...]) -> dict[str, tuple[Mapping[str, Any], str]]:
    """stepSpecs/sidecarSpecs (v1) or stepOverrides/sidecarOverrides (v1beta1): name -> resources."""
    found: dict[str, tuple[Mapping[str, Any], str]] = {}
    for key in keys:
        for index, override in iter_mappings(run_spec.get(key)):
            resources = _resources(override, join(join(run_path, key), index))
            if resources is not None:
                found[as_str(override.get("name"))] = resources
    return found


def task_containers(task_spec: Mapping[str, Any], spec_path: str, run_spec: Mapping[str, Any] | None = None,
                    run_path: str = "", judged_elsewhere: bool = False) -> tuple[Container, ...]:
    """The step and sidecar containers of a task spec, as `Builder.Build` makes them for a run
    (`run_spec`: a TaskRun's spec or a PipelineRun's `taskRunSpecs[]` entry)."""
    run_spec = run_spec or {}
    template = _resources(as_mapping(task_spec.get("stepTemplate")), join(spec_path, "stepTemplate"))
    step_overrides = _overrides(run_spec, run_path, ("stepSpecs", "stepOverrides"))
    sidecar_overrides = _overrides(run_spec, run_path, ("sidecarSpecs", "sidecarOverrides"))
    task_level = _resources(run_spec, run_path) if "computeResources" in run_spec else None
    steps = list(iter_mappings(task_spec.get("steps")))
    containers: list[Container] = []
    for index, step in steps:
        path = join(join(spec_path, "steps"), index)
        name = as_str(step.get("name"))
        own = _resources(step, path)
        layers = [layer for layer in (template, own, step_overrides.get(name)) if layer is not None]
        resources, written_at = _merge(layers)
        overridden = name in step_overrides
        if task_level is not None and (as_mapping(task_level[0]).get("limits") or as_mapping(task_level[0]).get("requests")):
            level, level_path = task_level
            limits, requests = as_mapping(level.get("limits")), as_mapping(level.get("requests"))
            base = requests if requests or resources.get("requests") else limits
            resources = {"limits": dict(limits), "requests": {k: _divided(v, len(steps)) for k, v in base.items()}}
            written_at = {(kind, str(k)): join(join(level_path, kind), str(k)) for kind in ("limits", "requests")
                          for k in resources[kind]}
            written_at.update({("requests", str(k)): join(join(level_path, "requests" if base is requests else "limits"),
                                                          str(k)) for k in base})
            overridden = True
        containers.append(Container(path, f"step-{name}" if name else f"step-unnamed-{index}",
                                    {**step, "resources": resources},
                                    resources_path=own[1] if own else join(path, "computeResources"),
                                    limits_set_by_controller=judged_elsewhere and not overridden,
                                    written_at=written_at))
    for index, sidecar in iter_mappings(task_spec.get("sidecars")):
        path = join(join(spec_path, "sidecars"), index)
        name = as_str(sidecar.get("name"))
        own = _resources(sidecar, path)
        resources, written_at = _merge([layer for layer in (own, sidecar_overrides.get(name)) if layer is not None])
        containers.append(Container(path, f"sidecar-{name}" if name else f"sidecar-#{index}",
                                    {**sidecar, "resources": resources},
                                    resources_path=own[1] if own else join(path, "computeResources"),
                                    limits_set_by_controller=judged_elsewhere and name not in sidecar_overrides,
                                    written_at=written_at))
    return tuple(containers)


def _resolve(table: str, kind: str, ref: Mapping[str, Any], namespace: str,
             context: Context) -> tuple[Mapping[str, Any] | None, str]:
    """The referenced object's spec, or why it cannot be seen."""
    name = as_str(ref.get("name"))
    if ref.get("resolver") or ref.get("bundle"):
        how = f"resolver '{as_str(ref.get('resolver'))}'" if ref.get("resolver") else "a bundle"
        return None, f"Tekton fetches its {kind} through {how} when it runs; the rules cannot see its steps"
    target = context.table(table).get((namespace or "default", name))
    if target is None:
        scope = "among the objects checked" if context.complete else "visible to a check of this object alone"
        return None, (f"its {kind} '{name}' is not {scope}, so the rules cannot see its steps; check them "
                      "together")
    return as_mapping(as_mapping(target).get("spec")), ""


# --- Task and Pipeline: templates with no place for pod fields ----------------------------------


@register(GROUP, "Task", gpus="`steps[].computeResources` (v1beta1 `resources`) merged over `stepTemplate`, "
          "`sidecars[].computeResources`", tolerations=f"none of its own: from {_RUNS}; judged at the run",
          source="tektoncd/pipeline `pkg/pod/pod.go`, `pkg/apis/pipeline/v1/container_types.go`")
def task(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    containers = task_containers(as_mapping(obj.get("spec")), "spec")
    if not containers:
        return []
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return [PodSpec("spec", {}, containers, object_namespace(obj), f"Tekton Task '{name}'", own_nodes=_RUNS,
                    tolerations_from=_RUNS, notes=_no_run_note("Task", name, obj, containers, context))]


@register(GROUP, "Pipeline", gpus="the inline `taskSpec` of each of `tasks` and `finally`, as for a Task",
          tolerations=f"none of its own: from {_RUNS}; judged at the PipelineRun",
          source="tektoncd/pipeline `pkg/apis/pipeline/v1/pipeline_types.go`")
def pipeline(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    pods = []
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    for path, pipeline_task in _pipeline_tasks(as_mapping(obj.get("spec")), "spec"):
        task_spec = pipeline_task.get("taskSpec")
        if isinstance(task_spec, Mapping):
            containers = task_containers(task_spec, join(path, "taskSpec"))
            if containers:
                pods.append(PodSpec(join(path, "taskSpec"), {}, containers, object_namespace(obj),
                                    f"Tekton pipeline task '{as_str(pipeline_task.get('name'))}'", own_nodes=_RUNS,
                                    tolerations_from=_RUNS,
                                    notes=_no_run_note("Pipeline", name, obj, containers, context)))
    return pods


def _pipeline_tasks(spec: Mapping[str, Any], path: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [(join(join(path, key), index), pipeline_task) for key in ("tasks", "finally")
            for index, pipeline_task in iter_mappings(spec.get(key))]


# --- TaskRun and PipelineRun: the pods themselves -----------------------------------------------


def _run_pod(path: str, fields: Mapping[str, Any], containers: tuple[Container, ...], namespace: str, workload: str,
             notes: tuple[str, ...] = ()) -> PodSpec:
    """A run's pod. Tekton substitutes `$(params.x)` in pod template fields when it creates the
    TaskRun (tektoncd/pipeline docs/podtemplates.md, "Parameter Substitution in Pod Templates"): a toleration written
    with one is known only then, so the toleration rule leaves it to the run, and says so."""
    substituted = [index for index, toleration in enumerate(as_list(fields.get("tolerations")))
                   if any(isinstance(v, str) and "$(" in v for v in as_mapping(toleration).values())]
    if not substituted:
        return PodSpec(path, fields, containers, namespace, workload, notes=notes)
    where = ", ".join(f"{path}.tolerations[{index}]" for index in substituted)
    note = f"Tekton substitutes the parameters in {where} when the run starts; the rules cannot judge it"
    return PodSpec(path, fields, containers, namespace, workload, notes=(*notes, note),
                   tolerations_from="the run's parameters ($(params...) in the podTemplate)")


@register(GROUP, "TaskRun", gpus="its `taskSpec`, or the Task its `taskRef` names (when checked together), with "
          "`stepSpecs`/`sidecarSpecs` (v1beta1 `stepOverrides`/`sidecarOverrides`) and task-level `computeResources`",
          tolerations="`spec.podTemplate`", source="tektoncd/pipeline `pkg/pod/pod.go`, "
          "`pkg/internal/computeresources/tasklevel/tasklevel.go`")
def task_run(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    pod_path = "spec.podTemplate"
    pod = scheduling_fields(as_mapping(spec.get("podTemplate")))
    inline = spec.get("taskSpec")
    if isinstance(inline, Mapping):
        containers = task_containers(inline, "spec.taskSpec", spec, "spec")
        return [_run_pod(pod_path, pod, containers, namespace, f"Tekton TaskRun '{name}'")] if containers else []
    if not isinstance(spec.get("taskRef"), Mapping):
        return []
    ref = as_mapping(spec.get("taskRef"))
    task_spec, problem = _resolve(TASKS, "Task", ref, namespace, context)
    workload = f"Tekton TaskRun '{name}'" + (f" of Task '{as_str(ref.get('name'))}'" if ref.get("name") else "")
    if task_spec is None:
        return [PodSpec(pod_path, pod, (), namespace, workload, notes=(problem,))]
    containers = task_containers(task_spec, f"Task '{as_str(ref.get('name'))}' spec", spec, "spec",
                                 judged_elsewhere=True)
    return [_run_pod(pod_path, pod, containers, namespace, workload)] if containers else []


def _task_run_specs(spec: Mapping[str, Any]) -> dict[str, tuple[int, Mapping[str, Any]]]:
    """pipelineTaskName -> its `taskRunSpecs` entry (the last one, as `GetTaskRunSpec`'s loop leaves
    it), indexed once so a run with many tasks is not read once per task."""
    return {as_str(entry.get("pipelineTaskName")): (index, entry) for index, entry in iter_mappings(spec.get("taskRunSpecs"))}


def _run_spec_for(spec: Mapping[str, Any], entries: Mapping[str, tuple[int, Mapping[str, Any]]], task_name: str,
                  v1beta1: bool) -> tuple[Mapping[str, Any], str, dict[str, Any], str]:
    """`GetTaskRunSpec`: the taskRunSpecs entry for one pipeline task, its path, the merged pod
    fields and the path where a toleration fix belongs."""
    default_path = "spec.podTemplate" if v1beta1 else "spec.taskRunTemplate.podTemplate"
    default = as_mapping(spec.get("podTemplate")) if v1beta1 else \
        as_mapping(as_mapping(spec.get("taskRunTemplate")).get("podTemplate"))
    fields, fix_path = scheduling_fields(default), default_path
    if task_name not in entries:
        return {}, "", fields, fix_path
    index, entry = entries[task_name]
    entry_path = join(join("spec", "taskRunSpecs"), index)
    for key in ("podTemplate", "taskPodTemplate"):
        own = entry.get(key)
        if isinstance(own, Mapping):
            fields = {**fields, **scheduling_fields(own)}  # MergePodTemplateWithDefault: the task's fields win
            if own.get("tolerations") is not None or not default.get("tolerations"):
                fix_path = join(entry_path, key)
    return entry, entry_path, fields, fix_path


@register(GROUP, "PipelineRun", gpus="each pipeline task's inline `taskSpec` or referenced Task, of its `pipelineSpec` "
          "or referenced Pipeline (when checked together), with `taskRunSpecs[]` overrides",
          tolerations="`spec.taskRunTemplate.podTemplate` (v1beta1 `spec.podTemplate`), merged under "
          "`taskRunSpecs[].podTemplate` (v1beta1 `taskPodTemplate`)",
          source="tektoncd/pipeline `pkg/apis/pipeline/v1/pipelinerun_types.go` (`GetTaskRunSpec`), "
          "`pkg/apis/pipeline/pod/template.go` (`MergePodTemplateWithDefault`)")
def pipeline_run(obj: Mapping[str, Any], context: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    namespace = object_namespace(obj)
    run_name = as_str(as_mapping(obj.get("metadata")).get("name"))
    v1beta1 = as_str(obj.get("apiVersion")).endswith("/v1beta1")
    inline = spec.get("pipelineSpec")
    if isinstance(inline, Mapping):
        pipeline_spec, pipeline_path, referenced = inline, "spec.pipelineSpec", False
    elif isinstance(spec.get("pipelineRef"), Mapping):
        ref = as_mapping(spec.get("pipelineRef"))
        resolved, problem = _resolve(PIPELINES, "Pipeline", ref, namespace, context)
        if resolved is None:
            _, _, default_fields, default_path = _run_spec_for(spec, {}, "", v1beta1)
            return [PodSpec(default_path, default_fields, (), namespace, f"Tekton PipelineRun '{run_name}'",
                            notes=(problem,))]
        pipeline_spec, pipeline_path, referenced = resolved, f"Pipeline '{as_str(ref.get('name'))}' spec", True
    else:
        return []
    pods = []
    entries = _task_run_specs(spec)
    for path, pipeline_task in _pipeline_tasks(pipeline_spec, pipeline_path):
        task_name = as_str(pipeline_task.get("name"))
        entry, entry_path, fields, fix_path = _run_spec_for(spec, entries, task_name, v1beta1)
        workload = f"Tekton PipelineRun '{run_name}' task '{task_name}'"
        task_spec = pipeline_task.get("taskSpec")
        if isinstance(task_spec, Mapping):
            containers = task_containers(task_spec, join(path, "taskSpec"), entry, entry_path,
                                         judged_elsewhere=referenced)
        elif isinstance(pipeline_task.get("taskRef"), Mapping):
            ref = as_mapping(pipeline_task.get("taskRef"))
            if ref.get("apiVersion"):
                continue  # a custom task: its controller, not Tekton's, runs it
            resolved, problem = _resolve(TASKS, "Task", ref, namespace, context)
            if resolved is None:
                pods.append(PodSpec(fix_path, fields, (), namespace, workload, notes=(problem,)))
                continue
            containers = task_containers(resolved, f"Task '{as_str(ref.get('name'))}' spec", entry, entry_path,
                                         judged_elsewhere=True)
        else:
            continue
        if containers:
            pods.append(_run_pod(fix_path, fields, containers, namespace, workload))
    return pods
