"""Kubeflow Notebooks v2 (`kubeflow.org`): WorkspaceKind.

Sources, kubeflow/notebooks branch notebooks-v2 (2026-08, 8b61057), `workspaces/controller/`:
- `api/v1beta1/workspacekind_types.go`: `spec.podTemplate.options.podConfig.values[]` are the pod
  configurations a Workspace may choose (`id`); each `spec` (PodConfigSpec) holds `affinity`,
  `nodeSelector`, `tolerations` and `resources` "for the main container", and no `containers` list.
- `internal/controller/workspace_controller.go` (`generateStatefulSet`): the Workspace's pod has one
  container, `main` (`workspacePodTemplateContainerName`), whose resources are the chosen option's
  `resources`; the pod's affinity, nodeSelector and tolerations are the option's, and nothing else.
Every option is a pod some Workspace may run, so each is judged; a `redirect` only moves Workspaces
from one option to another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..podspecs import Container, PodSpec, as_mapping, as_str, iter_mappings, join, object_namespace, scheduling_fields
from .context import Context
from .registry import register

MAIN = "main"
_OPTIONS = "spec.podTemplate.options.podConfig.values"


@register("kubeflow.org", "WorkspaceKind",
          gpus="`resources` of each `spec.podTemplate.options.podConfig.values[].spec` (the `main` container)",
          tolerations="the same option's `tolerations`, `nodeSelector`, `affinity`",
          source="kubeflow/notebooks (notebooks-v2) `workspaces/controller/internal/controller/workspace_controller.go`, "
          "`api/v1beta1/workspacekind_types.go`")
def workspace_kind(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    options = as_mapping(as_mapping(as_mapping(as_mapping(obj.get("spec")).get("podTemplate")).get("options"))
                         .get("podConfig")).get("values")
    name = as_str(as_mapping(obj.get("metadata")).get("name"))
    pods = []
    for index, option in iter_mappings(options):
        path = join(join(_OPTIONS, index), "spec")
        config = as_mapping(option.get("spec"))
        fields = scheduling_fields(config)
        main = Container(path, MAIN, {"resources": config.get("resources")})
        pods.append(PodSpec(path, fields, (main,), object_namespace(obj),
                            f"WorkspaceKind '{name}' podConfig '{as_str(option.get('id'), f'#{index}')}'"))
    return pods
