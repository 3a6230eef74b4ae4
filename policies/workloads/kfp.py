"""Kubeflow Pipelines v2: compiled pipelines (the IR), as a file the SDK writes or inside a
`PipelineVersion` (`pipelines.kubeflow.org`).

A compiled pipeline is not a Kubernetes object: the SDK writes a PipelineSpec document
(`pipelineInfo`, `root`, `deploymentSpec`, no `apiVersion` or `kind`), followed by a PlatformSpec
document (`platforms.kubernetes`) when a task sets Kubernetes options. A `PipelineVersion`
(`backend/src/crd/kubernetes/v2beta1/pipelineversion_types.go`) holds the two as `spec.pipelineSpec`
and `spec.platformSpec`. Sources, kubeflow/pipelines at master (2026-08, 7b70c7b):
- `api/v2alpha1/pipeline_spec.proto`: `deploymentSpec.executors.<label>.container.resources.accelerator`
  has `type`/`count`, or `resourceType`/`resourceCount` (strings that may be run-time placeholders).
- `backend/src/v2/driver/driver.go` (`initPodSpecPatch`): the driver gives the executor pod one
  container, `main`, with `limits[<accelerator type>] = <count>` (the type is a Kubernetes resource
  name, e.g. `nvidia.com/gpu`); `resourceType`/`resourceCount` win over `type`/`count`, a count of 0
  sets nothing, and placeholders are resolved from the run's parameters.
- `kubernetes_platform/proto/kubernetes_executor_config.proto` and `backend/src/v2/driver/k8s.go`
  (`extendPodSpecPatch`): the platform spec's `platforms.kubernetes.deploymentSpec.executors.<label>`
  gives the pod `tolerations` (`key`/`operator`/`value`/`effect`, or `tolerationJson`, a parameter)
  and `nodeSelector.labels` (or `nodeSelectorJson`).
The rules judge the pods the driver will create from what is written; what the run supplies
(placeholders, parameters) is said as an advisory. The PipelineSpec and the PlatformSpec documents
of one file are matched by their executor labels: two compiled pipelines checked together whose
platform specs configure the same executor labels (`exec-<component>`) cannot be told apart, and
the last one read is used for both; check such pipelines one file at a time. A KFP-compiled Argo Workflow is judged by the Argo
adapter: its GPU arrives through `podSpecPatch`, which that adapter reports as an advisory.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from typing import Any, cast

from ..podspecs import Container, PodSpec, as_list, as_mapping, as_str, join, object_namespace
from .context import Context, collects_documents
from .registry import register, register_document

MAIN = "main"
PLATFORM_SPECS = "kfp.platform_specs"
_SOURCE = ("kubeflow/pipelines `backend/src/v2/driver/driver.go` (`initPodSpecPatch`), `backend/src/v2/driver/k8s.go` "
           "(`extendPodSpecPatch`), `kubernetes_platform/proto/kubernetes_executor_config.proto`")
_GPUS = "`deploymentSpec.executors.<label>.container.resources.accelerator` (`resourceType`/`resourceCount`, else `type`/`count`)"
_TOLERATIONS = ("the platform spec's `platforms.kubernetes.deploymentSpec.executors.<label>` `tolerations` and "
                "`nodeSelector.labels`")


def is_pipeline_spec(document: Mapping[str, Any]) -> bool:
    return isinstance(document.get("deploymentSpec"), Mapping) and ("pipelineInfo" in document or "root" in document)


def is_platform_spec(document: Mapping[str, Any]) -> bool:
    return isinstance(as_mapping(document.get("platforms")).get("kubernetes"), Mapping)


def _executors(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(as_mapping(mapping.get("deploymentSpec")).get("executors"))


def _platform_executors(platform_spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return _executors(as_mapping(as_mapping(platform_spec.get("platforms")).get("kubernetes")))


#: The first-label index of PLATFORM_SPECS (label -> every spec's sorted label tuple starting with it),
#: derived from that table and rebuilt when it grows.
_SPECS_BY_FIRST_LABEL = "kfp.platform_specs_by_first_label"
#: How many platform specs one pipeline is compared with at most: a file holds one; thousands of
#: documents sharing a label must not make pairing quadratic.
_CANDIDATES = 64


@collects_documents(PLATFORM_SPECS, is_platform_spec)
def _platform_spec(document: Mapping[str, Any], _: str) -> Iterator[tuple[Hashable, Any]]:
    executors = _platform_executors(document)
    labels = tuple(sorted(label for label in executors if isinstance(label, str)))
    if labels:
        yield labels, executors


def _specs_by_first_label(context: Context) -> Mapping[str, list[tuple[str, ...]]]:
    """Every platform spec's labels, by their first label: several specs may share one (two pipelines
    that both configure `exec-a`), and each must stay a candidate."""
    specs, cache = context.table(PLATFORM_SPECS), context.table(_SPECS_BY_FIRST_LABEL)
    if cache.get("size") != len(specs):
        index: dict[str, list[tuple[str, ...]]] = {}
        for key in specs:
            labels = cast(tuple[str, ...], key)  # the collector keys each spec by its sorted labels
            index.setdefault(labels[0], []).append(labels)
        cache.clear()
        cache.update(size=len(specs), index=index)
    return cache["index"]


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def _accelerator(container: Mapping[str, Any], path: str) -> tuple[dict[str, Any], dict[tuple[str, str], str], str]:
    """The limits the driver writes, where they are written, and why it cannot say (a placeholder)."""
    accelerator = as_mapping(as_mapping(container.get("resources")).get("accelerator"))
    at = join(join(path, "resources"), "accelerator")
    type_key = "resourceType" if accelerator.get("resourceType") else "type"
    count_key = "resourceCount" if accelerator.get("resourceCount") else "count"
    resource, count = accelerator.get(type_key), accelerator.get(count_key)
    if not resource or count in (None, "", 0, "0"):
        return {}, {}, ""
    if _is_placeholder(resource) or _is_placeholder(count):
        return {}, {}, (f"the accelerator at {at} ({type_key}: {as_str(resource, '?')}, {count_key}: "
                        f"{as_str(count, '?')}) is resolved from the run's parameters when it starts; the rules "
                        "cannot judge it")
    if not isinstance(resource, str):
        return {}, {}, ""
    return {resource: count}, {("limits", resource): join(at, count_key)}, ""


def _toleration(entry: Mapping[str, Any]) -> tuple[list[Any], bool]:
    """One platform-spec toleration as Kubernetes tolerations; False when a parameter supplies it."""
    json_spec = entry.get("tolerationJson")
    if json_spec is not None:
        constant = as_mapping(as_mapping(json_spec).get("runtimeValue")).get("constant")
        if isinstance(constant, Mapping):
            return [constant], True
        if isinstance(constant, list):
            return constant, True
        return [], False
    toleration = {key: entry[key] for key in ("key", "operator", "value", "effect") if entry.get(key)}
    if entry.get("tolerationSeconds") is not None:
        toleration["tolerationSeconds"] = entry["tolerationSeconds"]
    return [toleration], True


def _pipeline_pods(pipeline_spec: Mapping[str, Any], spec_path: str, platform: Mapping[str, Any] | None,
                   platform_path: str, namespace: str, name: str) -> list[PodSpec]:
    pods = []
    platform_executors = _platform_executors(platform) if platform is not None else {}
    for label, executor in _executors(pipeline_spec).items():
        container = as_mapping(executor).get("container") if isinstance(executor, Mapping) else None
        if not isinstance(label, str) or not isinstance(container, Mapping):
            continue  # importers and resolvers run in the driver, not in a pod of their own
        path = join(join(join(spec_path, "deploymentSpec.executors"), label), "container")
        limits, written_at, note = _accelerator(container, path)
        config = as_mapping(platform_executors.get(label))
        config_path = join(join(platform_path, "platforms.kubernetes.deploymentSpec.executors"), label)
        notes = [note] if note else []
        tolerations: list[Any] = []
        for entry in as_list(config.get("tolerations")):
            found, known = _toleration(as_mapping(entry))
            tolerations += found
            if not known:
                notes.append(f"a toleration at {config_path}.tolerations comes from the run's parameters "
                             "(tolerationJson); the rules cannot see it")
        fields: dict[str, Any] = {"tolerations": tolerations} if tolerations else {}
        selector = as_mapping(config.get("nodeSelector"))
        if isinstance(selector.get("labels"), Mapping):
            fields["nodeSelector"] = selector["labels"]
        main = Container(path, MAIN, {"resources": {"limits": limits}} if limits else {},
                         resources_path=join(path, "resources"), written_at=written_at)
        workload = (f"Kubeflow pipeline '{name}' executor '{label}'" if name else f"Kubeflow pipeline executor '{label}'")
        if not platform_path:
            workload += " (its tolerations are in the PlatformSpec document: kfp-kubernetes `add_toleration`)"
        from_parameters = "the run's parameters (tolerationJson)" if len(notes) > (1 if note else 0) else ""
        pods.append(PodSpec(config_path, fields, (main,), namespace, workload, notes=tuple(notes),
                            tolerations_from=from_parameters))
    return pods


def _platform_for(pipeline_spec: Mapping[str, Any], context: Context) -> Mapping[str, Any] | None:
    """The platform spec among the documents checked whose executors are all this pipeline's (found
    through the first label of each, so pairing stays linear in the documents)."""
    labels = set(_executors(pipeline_spec))
    by_label, specs = _specs_by_first_label(context), context.table(PLATFORM_SPECS)
    candidates = [key for label in sorted(labels, key=str) for key in by_label.get(label, ())][:_CANDIDATES]
    matches = [specs[key] for key in candidates if set(key) <= labels]
    if not matches:
        return None
    best = max(matches, key=len)
    return {"platforms": {"kubernetes": {"deploymentSpec": {"executors": best}}}}


@register_document("a compiled Kubeflow pipeline (PipelineSpec: `pipelineInfo`, `root`, `deploymentSpec`)",
                   is_pipeline_spec, gpus=_GPUS, tolerations=f"{_TOLERATIONS}, from the PlatformSpec document beside it",
                   source=_SOURCE)
def pipeline_spec_document(document: Mapping[str, Any], context: Context) -> list[PodSpec]:
    name = as_str(as_mapping(document.get("pipelineInfo")).get("name"))
    return _pipeline_pods(document, "", _platform_for(document, context), "", "", name)


@register_document("a Kubeflow pipeline job or run (`pipelineSpec`, `platformSpec`)",
                   lambda d: isinstance(d.get("pipelineSpec"), Mapping) and is_pipeline_spec(d["pipelineSpec"]),
                   gpus=f"{_GPUS}, under `pipelineSpec`", tolerations=f"{_TOLERATIONS}, under `platformSpec`",
                   source=_SOURCE)
def pipeline_job_document(document: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(document.get("pipelineSpec"))
    platform = document.get("platformSpec")
    name = as_str(as_mapping(spec.get("pipelineInfo")).get("name"))
    return _pipeline_pods(spec, "pipelineSpec", as_mapping(platform) if platform is not None else None,
                          "platformSpec", "", name)


@register("pipelines.kubeflow.org", "PipelineVersion", gpus=f"{_GPUS}, under `spec.pipelineSpec`",
          tolerations=f"{_TOLERATIONS}, under `spec.platformSpec`",
          source=f"{_SOURCE}; `backend/src/crd/kubernetes/v2beta1/pipelineversion_types.go`")
def pipeline_version(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    spec = as_mapping(obj.get("spec"))
    pipeline = as_mapping(spec.get("pipelineSpec"))
    platform = spec.get("platformSpec")
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    return _pipeline_pods(pipeline, "spec.pipelineSpec", as_mapping(platform) if platform is not None else None,
                          "spec.platformSpec", object_namespace(obj), name)

