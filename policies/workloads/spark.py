"""Kubeflow Spark operator (`sparkoperator.k8s.io`): SparkApplication, ScheduledSparkApplication.

Sources, kubeflow/spark-operator at master (2026-08):
- `api/v1beta2/sparkapplication_types.go`: `driver` and `executor` are SparkPodSpecs with
  `gpu: {name, quantity}`, `tolerations`, `nodeSelector`, `affinity`, `sidecars`,
  `initContainers` and a pod `template`; a ScheduledSparkApplication's application is `spec.template`.
- `internal/webhook/sparkpod_defaulter.go`: `addGPU` sets `limits[gpu.name] = gpu.quantity` on the
  Spark container (`spark-kubernetes-driver` / `spark-kubernetes-executor`, `pkg/common/spark.go`)
  and ignores a GPU spec without a name or with a quantity <= 0; `addTolerations` appends the
  SparkPodSpec's tolerations to the pod's (the template's); `addNodeSelectors` merges;
  `addAffinity` replaces.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import is_whole
from ..podspecs import Container, PodSpec, as_list, as_mapping, as_str, containers_of_spec, join, object_namespace
from .context import Context
from .registry import register

_CONTAINER_NAMES = {"driver": "spark-kubernetes-driver", "executor": "spark-kubernetes-executor"}


def _gpu_limits(gpu: Mapping[str, Any]) -> dict[str, Any]:
    """What addGPU writes: nothing without a name or for a whole quantity <= 0; anything else is
    kept as written so the limits rule can judge it (a fraction never passes the CRD's int64)."""
    name, quantity = as_str(gpu.get("name")), gpu.get("quantity")
    if not name or quantity is None:
        return {}
    # (YAML's .nan and .inf are floats with no int: kept as written, for the limits rule to name.)
    if is_whole(quantity) and quantity <= 0:
        return {}
    return {name: quantity}


def _role_pod(app: Mapping[str, Any], app_path: str, role: str, namespace: str) -> PodSpec | None:
    spark_pod = app.get(role)
    if not isinstance(spark_pod, Mapping):
        return None
    path = join(app_path, role)
    template = as_mapping(as_mapping(spark_pod.get("template")).get("spec"))
    template_containers = containers_of_spec(template, join(path, "template.spec"))
    main_index = next((i for i, c in enumerate(template_containers)
                       if c.role == "app" and c.name == _CONTAINER_NAMES[role]), None)
    if main_index is None:
        main_index = next((i for i, c in enumerate(template_containers) if c.role == "app"), None)
    main_spec = dict(as_mapping(template_containers[main_index].spec)) if main_index is not None else {}
    resources = dict(as_mapping(main_spec.get("resources")))
    gpu_limits = _gpu_limits(as_mapping(spark_pod.get("gpu")))
    resources["limits"] = {**as_mapping(resources.get("limits")), **gpu_limits}
    main = Container(path, _CONTAINER_NAMES[role], {**main_spec, "resources": resources},
                     written_at={("limits", name): join(path, "gpu.quantity") for name in gpu_limits})
    others = [c for i, c in enumerate(template_containers) if i != main_index]
    for list_name, role_name in (("sidecars", "app"), ("initContainers", "init")):
        for index, container in enumerate(as_list(spark_pod.get(list_name))):
            if isinstance(container, Mapping):
                others.append(Container(join(join(path, list_name), index), as_str(container.get("name"), f"#{index}"),
                                        container, role_name))
    pod: dict[str, Any] = {
        "tolerations": [*as_list(template.get("tolerations")), *as_list(spark_pod.get("tolerations"))],
        "nodeSelector": {**as_mapping(app.get("nodeSelector")), **as_mapping(template.get("nodeSelector")),
                         **as_mapping(spark_pod.get("nodeSelector"))},
    }
    affinity = spark_pod.get("affinity") or template.get("affinity")
    if affinity:
        pod["affinity"] = affinity
    return PodSpec(path, pod, (main, *others), namespace, f"Spark {role}")


def _application_pods(app: Mapping[str, Any], app_path: str, namespace: str) -> list[PodSpec]:
    pods = [_role_pod(app, app_path, role, namespace) for role in ("driver", "executor")]
    return [pod for pod in pods if pod is not None]


_SPARK_GPUS = "`driver.gpu` and `executor.gpu` ({name, quantity}), their `template`, `sidecars`, `initContainers`"
_SPARK_TOLERATIONS = "`driver`/`executor` `tolerations` appended to their `template`'s; `nodeSelector` merged"
_SPARK_SOURCE = "kubeflow/spark-operator `internal/webhook/sparkpod_defaulter.go`, `api/v1beta2/sparkapplication_types.go`"


@register("sparkoperator.k8s.io", "SparkApplication", gpus=_SPARK_GPUS, tolerations=_SPARK_TOLERATIONS,
          source=_SPARK_SOURCE)
def spark_application(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return _application_pods(as_mapping(obj.get("spec")), "spec", object_namespace(obj))


@register("sparkoperator.k8s.io", "ScheduledSparkApplication", gpus=f"{_SPARK_GPUS}, under `spec.template`",
          tolerations=_SPARK_TOLERATIONS, source=_SPARK_SOURCE)
def scheduled_spark_application(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return _application_pods(as_mapping(as_mapping(obj.get("spec")).get("template")), "spec.template",
                             object_namespace(obj))
