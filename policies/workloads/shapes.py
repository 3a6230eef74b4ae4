"""Workload shapes: where a kind keeps the pods its controller creates, as data.

A shape names, for one (API group, kind), its *pod blocks*: each a path (keys separated by dots,
`[*]` after a key for every entry of a list, `*` for every value of a map) to either

- a Kubernetes pod spec (`form: podSpec`, the default): its containers, tolerations, nodeSelector
  and affinity are read as the API server reads a pod's; or
- one container (`form: container`): its `resources` are the container's, and the pod's fields come
  from the paths the block names (`podSpec`, `tolerations`, `nodeSelector`, `affinity`).

A block may name a bare GPU count the controller turns into a limit (`gpu`: `"1"`, `"0.5"`), the
resource it counts (`gpuResource`, or `gpuResourceField` for a field that names it, as vLLM's
`gpuType`), and whether its pod is created once or once per replica (`created`). A field path uses
the same `[*]` as its block: `spec.workers[*].tolerations` is read at the same entry as the block
`spec.workers[*]`.

Built-in adapters that only read fixed places are written as shapes (`registry.register_shape`); users
declare the rest in the policy config (`workloadShapes`, parsed by `parse_shapes` with every problem
named by key and path). A declared shape wins over a built-in adapter for its kind: the user knows
the controller version they run. No Pulumi imports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..catalog import GPU_RESOURCE
from ..limits import MAX_PLACES
from ..podspecs import (
    SCHEDULING_FIELDS,
    UNKNOWN,
    Container,
    PodSpec,
    as_mapping,
    as_str,
    containers_of_spec,
    is_mapping,
    join,
    object_namespace,
    pod_spec,
)

Form = Literal["podSpec", "container"]
Created = Literal["once", "perReplica"]
FORMS: tuple[Form, ...] = ("podSpec", "container")
CREATED: tuple[Created, ...] = ("once", "perReplica")

#: One step of a path: ("key", name), ("list", "") for `[*]`, ("map", "") for `*`.
Step = tuple[str, str]

_KEY = re.compile(r"[A-Za-z0-9_-]+")
_PATH_HELP = ("write keys separated by dots, `[*]` after a key for every entry of a list and `*` for every value "
              "of a map (spec.workers[*].template.spec)")


class ShapePathError(ValueError):
    pass




class ShapeReachError(ValueError):
    """A declared shape's path reaches more than MAX_PLACES places in one object, through repeated nodes."""

    def __init__(self, steps: Sequence[Step]) -> None:
        path = "".join(f".{key}" if kind == "key" else "[*]" if kind == "list" else ".*" for kind, key in steps)[1:]
        super().__init__(f"the workload shape's path {path} reaches more than {MAX_PLACES} places in this object "
                         "through nodes YAML aliases repeat, so it is not checked")


def _walks_a_node_twice(reached: Sequence[tuple[str, Any, tuple[str | int, ...], Any]]) -> bool:
    """Whether two places hold the same mapping or list (an alias): only then can a step reach more places
    than the object has nodes."""
    containers = [id(value) for _, value, _, _ in reached if is_mapping(value) or isinstance(value, (list, tuple))]
    return len(set(containers)) < len(containers)


def parse_path(text: str) -> tuple[Step, ...]:
    """`spec.workers[*].template.spec` -> its steps; ShapePathError says what is wrong."""
    if not text:
        raise ShapePathError("is empty")
    steps: list[Step] = []
    for segment in text.split("."):
        if segment in ("*", "*[*]"):
            steps.append(("map", ""))
            if segment == "*[*]":
                steps.append(("list", ""))
            continue
        key, wildcard = (segment[:-3], True) if segment.endswith("[*]") else (segment, False)
        if not _KEY.fullmatch(key):
            raise ShapePathError(f"has the segment {segment!r}")
        steps.append(("key", key))
        if wildcard:
            steps.append(("list", ""))
    return tuple(steps)


def _wildcards(steps: Sequence[Step]) -> int:
    return sum(kind != "key" for kind, _ in steps)


def expand(obj: Any, steps: Sequence[Step]) -> list[tuple[str, Any, tuple[str | int, ...], Any]]:
    """Every (concrete path, value, the keys the wildcards took, the mapping or list holding the value)
    that `steps` reach in `obj`. A value unknown during preview is kept at the end of the path and
    skipped inside it."""
    reached: list[tuple[str, Any, tuple[str | int, ...], Any]] = [("", obj, (), None)]
    for kind, key in steps:
        following: list[tuple[str, Any, tuple[str | int, ...], Any]] = []
        asked = False  # whether this step's places were checked for a node walked twice (once, when many)
        for path, value, bound, _ in reached:
            if not asked and len(following) > MAX_PLACES:
                asked = True
                if _walks_a_node_twice(reached):
                    raise ShapeReachError(steps)
            if kind == "key":
                mapping = as_mapping(value)
                if key in mapping:
                    following.append((join(path, key), mapping[key], bound, mapping))
            elif kind == "list":
                if isinstance(value, (list, tuple)):
                    following += [(join(path, index), item, (*bound, index), value) for index, item in enumerate(value)]
            else:
                mapping = as_mapping(value)
                following += [(join(path, name), item, (*bound, name), mapping) for name, item in mapping.items()
                              if isinstance(name, str)]
        reached = following
    return reached


def bind(steps: Sequence[Step], bound: Sequence[str | int]) -> tuple[str, tuple[Step, ...]]:
    """A field path with its wildcards set to the keys its block's wildcards took: (text, steps)."""
    concrete: list[Step] = []
    text = ""
    taken = iter(bound)
    for kind, key in steps:
        if kind == "key":
            concrete.append((kind, key))
            text = join(text, key)
            continue
        index = next(taken)
        concrete.append(("key", str(index)) if isinstance(index, str) else ("index", str(index)))
        text = join(text, index)
    return text, tuple(concrete)


def read(obj: Any, steps: Sequence[Step]) -> Any:
    """The value at concrete steps, or None."""
    value = obj
    for kind, key in steps:
        if kind == "index":
            index = int(key)
            value = value[index] if isinstance(value, (list, tuple)) and index < len(value) else None
        else:
            value = as_mapping(value).get(key)
        if value is None:
            return None
    return value


# --- The model ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodBlock:
    """Where one kind of pod is written in the object (see the module docstring)."""

    path: str
    form: Form = "podSpec"
    #: The name the controller gives the container (`form: container`); else the block's `name`.
    container_name: str = ""
    gpu: str = ""
    gpu_resource: str = GPU_RESOURCE
    gpu_resource_field: str = ""
    #: `form: container`: a pod spec beside the container whose containers join the pod and whose
    #: tolerations, nodeSelector and affinity are the pod's.
    pod_spec: str = ""
    tolerations: str = ""
    node_selector: str = ""
    affinity: str = ""
    #: A list of NodeSelectorTerms the controller makes the pod's required node affinity.
    node_selector_terms: str = ""
    created: Created = "perReplica"
    #: Read once at construction: the steps of each path.
    steps: Mapping[str, tuple[Step, ...]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.steps:
            paths = {name: getattr(self, name) for name in ("path", "gpu", "gpu_resource_field", "pod_spec",
                                                            "tolerations", "node_selector", "affinity",
                                                            "node_selector_terms")}
            object.__setattr__(self, "steps", {name: parse_path(text) for name, text in paths.items() if text})


@dataclass(frozen=True)
class WorkloadShape:
    group: str
    kind: str
    pods: tuple[PodBlock, ...]
    #: Who declared it, for messages ("workloadShapes[0]" or the adapter's citation).
    declared_by: str = ""


_POD_FIELDS = (("tolerations", "tolerations"), ("node_selector", "nodeSelector"), ("affinity", "affinity"))


def _field(obj: Any, block: PodBlock, name: str, bound: Sequence[str | int]) -> tuple[str, Any]:
    text, steps = bind(block.steps[name], bound)
    return text, read(obj, steps)


def _pod_fields(obj: Any, block: PodBlock, bound: Sequence[str | int], base: Mapping[str, Any]) -> dict[str, Any]:
    fields = {key: value for key, value in base.items() if key not in ("containers", "initContainers",
                                                                       "ephemeralContainers")}
    for attr, key in _POD_FIELDS:
        if attr in block.steps:
            value = _field(obj, block, attr, bound)[1]
            if value is None:
                fields.pop(key, None)
            else:
                fields[key] = value
    if "node_selector_terms" in block.steps:
        terms = _field(obj, block, "node_selector_terms", bound)[1]
        if terms is not None:
            fields["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": terms}}}
    return fields


#: The steps of a block that set the pod's own fields from elsewhere in the object.
_POD_FIELD_STEPS = frozenset(("tolerations", "node_selector", "affinity", "node_selector_terms"))


def _fix_path(block: PodBlock, concrete: str, bound: Sequence[str | int]) -> tuple[str, str]:
    """Where a toleration fix belongs, and the key it is written under there."""
    if "tolerations" in block.steps:
        text = bind(block.steps["tolerations"], bound)[0]
        parent, _, key = text.rpartition(".")
        return parent, key
    if "pod_spec" in block.steps:
        return bind(block.steps["pod_spec"], bound)[0], "tolerations"
    return concrete, "tolerations"


def _node_selection_key(block: PodBlock) -> Literal["nodeSelector", "nodeSelectorTerms"]:
    """Where a node selection fix is written: a block with `nodeSelectorTerms` and no `nodeSelector`
    path has no map to add a label to (vLLM's DeploymentConfig)."""
    if "node_selector_terms" in block.steps and "node_selector" not in block.steps:
        return "nodeSelectorTerms"
    return "nodeSelector"


def _workload(shape: WorkloadShape, block: PodBlock) -> str:
    return f"{shape.kind} pod" if block.created == "once" else f"{shape.kind} pods (one per replica)"


def _container_block(obj: Any, block: PodBlock, concrete: str, value: Any, bound: Sequence[str | int],
                     namespace: str, workload: str) -> PodSpec:
    spec = as_mapping(value)
    beside_path, beside = "", as_mapping(None)
    if "pod_spec" in block.steps:
        beside_path, found = _field(obj, block, "pod_spec", bound)
        beside = as_mapping(found)
    resources = as_mapping(spec.get("resources"))
    limits = dict(as_mapping(resources.get("limits")))
    written_at: dict[tuple[str, str], str] = {}
    if "gpu" in block.steps:
        gpu_path, amount = _field(obj, block, "gpu", bound)
        resource = block.gpu_resource
        if "gpu_resource_field" in block.steps:
            resource = as_str(_field(obj, block, "gpu_resource_field", bound)[1]) or resource
        if amount is not None and amount != "":
            limits[resource] = amount
            written_at[("limits", resource)] = gpu_path
    name = block.container_name or as_str(spec.get("name")) or concrete.rsplit(".", 1)[-1]
    container_spec = spec if value is UNKNOWN else {**spec, "resources": {**resources, "limits": limits}}
    main = Container(concrete, name, container_spec, written_at=written_at)
    containers = (main, *containers_of_spec(beside, beside_path)) if beside else (main,)
    fix, key = _fix_path(block, concrete, bound)
    return PodSpec(fix, _pod_fields(obj, block, bound, {k: beside[k] for k in SCHEDULING_FIELDS if k in beside}),
                   containers, namespace, workload, tolerations_key=key, node_selection_key=_node_selection_key(block))


def _pod_spec_block(obj: Any, block: PodBlock, concrete: str, value: Any, bound: Sequence[str | int],
                    holder: Any, namespace: str, workload: str) -> PodSpec | None:
    if value is not UNKNOWN and not is_mapping(value):
        return None
    # A pod spec's annotations are its template's (or the Pod's) metadata, beside `spec`.
    annotations: Mapping[str, Any] = {}
    if concrete == "spec" or concrete.endswith(".spec"):
        annotations = as_mapping(as_mapping(as_mapping(holder).get("metadata")).get("annotations"))
    if _POD_FIELD_STEPS.isdisjoint(block.steps):
        return pod_spec(value, concrete, namespace, workload, annotations=annotations)
    fix, key = _fix_path(block, concrete, bound)
    base = pod_spec(value, concrete, namespace, workload, annotations=annotations)
    return PodSpec(fix, _pod_fields(obj, block, bound, base.spec), base.containers, namespace, workload,
                   annotations=annotations, tolerations_key=key, node_selection_key=_node_selection_key(block))


def _reach(obj: Any, block: PodBlock) -> list[tuple[str, Any, tuple[str | int, ...], Any]]:
    """`expand` for the block's path; a path without wildcards (every built-in kind's) is read
    directly, as the adapters it replaces read it: this runs once per object the pack sees."""
    steps = block.steps["path"]
    if any(kind != "key" for kind, _ in steps):
        return expand(obj, steps)
    holder, value = None, obj
    for _, key in steps:
        holder = as_mapping(value)
        if key not in holder:
            return []
        value = holder[key]
    return [(block.path, value, (), holder)]


def pods_of_shape(shape: WorkloadShape, obj: Mapping[str, Any], workload: str | None = None) -> list[PodSpec]:
    """The pod specs of `obj` as `shape` places them. `workload` names them in messages ("" for a
    plain workload, as the built-in kinds are named)."""
    namespace = object_namespace(obj)
    pods: list[PodSpec] = []
    for block in shape.pods:
        for concrete, value, bound, holder in _reach(obj, block):
            name = _workload(shape, block) if workload is None else workload
            if block.form == "container":
                if is_mapping(value) or value is UNKNOWN:
                    pods.append(_container_block(obj, block, concrete, value, bound, namespace, name))
                continue
            pod = _pod_spec_block(obj, block, concrete, value, bound, holder, namespace, name)
            if pod is not None:
                pods.append(pod)
    return pods


# --- Declared in the policy config ----------------------------------------------------------------

#: Where a reader reports a problem: (the key as the file spells it, the message).
Report = Callable[[str, str], None]

_BLOCK_KEYS = {"path": "path", "form": "form", "containerName": "container_name", "gpu": "gpu",
               "gpuResource": "gpu_resource", "gpuResourceField": "gpu_resource_field", "podSpec": "pod_spec",
               "tolerations": "tolerations", "nodeSelector": "node_selector", "affinity": "affinity",
               "nodeSelectorTerms": "node_selector_terms", "created": "created"}
_FIELD_PATHS = ("gpu", "gpuResourceField", "podSpec", "tolerations", "nodeSelector", "affinity", "nodeSelectorTerms")
_CONTAINER_ONLY = ("containerName", "gpu", "gpuResource", "gpuResourceField", "podSpec")

WORKLOAD_SHAPES_SCHEMA: Mapping[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "group": {"type": "string"}, "kind": {"type": "string"},
            "pods": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {key: ({"type": "string", "enum": list(FORMS)} if key == "form" else
                                     {"type": "string", "enum": list(CREATED)} if key == "created" else
                                     {"type": "string"}) for key in _BLOCK_KEYS},
                "required": ["path"], "additionalProperties": False}},
        },
        "required": ["kind", "pods"], "additionalProperties": False,
    },
    "default": [],
    "description": "Kinds no adapter knows, declared: where their pod specs or containers are (paths with [*] for "
                   "every list entry), where a bare GPU count, tolerations and nodeSelector are when not in a pod "
                   "spec, and whether each pod is created once or per replica. See docs/workloads.md.",
}


def _describe(value: Any) -> str:
    return repr(value) if isinstance(value, str) else type(value).__name__ if value is not None else "null"


def _block(raw: Any, where: str, report: Report) -> PodBlock | None:
    if not isinstance(raw, Mapping):
        report(where, f"expected an object with a path, got {_describe(raw)}")
        return None
    ok = True
    for key in raw:
        if key not in _BLOCK_KEYS:
            report(f"{where}.{key}", f"is not a key of a pod block; known: {', '.join(_BLOCK_KEYS)}")
            ok = False
    values: dict[str, Any] = {}
    for key, attr in _BLOCK_KEYS.items():
        if key not in raw:
            continue
        if not isinstance(raw[key], str):
            report(f"{where}.{key}", f"expected a string, got {_describe(raw[key])}")
            ok = False
            continue
        values[attr] = raw[key]
    if "path" not in raw:
        report(f"{where}.path", "is required: the path of the pod spec or container (spec.template.spec)")
        return None
    form = values.get("form", "podSpec")
    if form not in FORMS:
        report(f"{where}.form", f"{_describe(form)} is not one of {', '.join(FORMS)}")
        ok = False
    if values.get("created", "perReplica") not in CREATED:
        report(f"{where}.created", f"{_describe(values['created'])} is not one of {', '.join(CREATED)}")
        ok = False
    if form == "podSpec":
        for key in _CONTAINER_ONLY:
            if key in raw:
                report(f"{where}.{key}", "is for a block of form container (a pod spec has its own containers); "
                                         "set form: container or remove it")
                ok = False
    steps: dict[str, tuple[Step, ...]] = {}
    for key in ("path", *_FIELD_PATHS):
        text = values.get(_BLOCK_KEYS[key])
        if not isinstance(text, str):
            continue
        try:
            steps[key] = parse_path(text)
        except ShapePathError as error:
            report(f"{where}.{key}", f"{text!r} {error}: {_PATH_HELP}")
            ok = False
    block_steps = steps.get("path")
    if block_steps is not None:
        for key in _FIELD_PATHS:
            own = steps.get(key)
            if own is None:
                continue
            used = _wildcards(own)
            if used > _wildcards(block_steps):
                report(f"{where}.{key}", f"{values[_BLOCK_KEYS[key]]!r} has more wildcards than its block's path "
                                         f"{values['path']!r}: a field is read once per pod, at the entry of its block")
                ok = False
                continue
            # Each wildcard the field uses must sit where the block's does: the same entry is meant.
            field_prefix = own[:max((i for i, (kind, _) in enumerate(own) if kind != "key"), default=-1) + 1]
            if used and tuple(block_steps[:len(field_prefix)]) != tuple(field_prefix):
                report(f"{where}.{key}", f"{values[_BLOCK_KEYS[key]]!r} uses a wildcard outside its block's path "
                                         f"{values['path']!r}; write the block's path up to its [*] first")
                ok = False
    if not ok:
        return None
    return PodBlock(**values)


def parse_shapes(raw: Any, where: str, report: Report) -> tuple[WorkloadShape, ...]:
    """The `workloadShapes` config value, every problem reported with its key and path."""
    if not isinstance(raw, (list, tuple)):
        report(where, f"expected a list of {{apiVersion, kind, pods: [...]}}, got {_describe(raw)}")
        return ()
    shapes: list[WorkloadShape] = []
    seen: dict[tuple[str, str], str] = {}
    for index, item in enumerate(raw):
        item_where = f"{where}[{index}]"
        if not isinstance(item, Mapping):
            report(item_where, f"expected {{apiVersion, kind, pods: [...]}}, got {_describe(item)}")
            continue
        ok = True
        for key in item:
            if key not in ("apiVersion", "group", "kind", "pods"):
                report(f"{item_where}.{key}", "is not a key of a workload shape; known: apiVersion, group, kind, pods")
                ok = False
        kind = item.get("kind")
        if not isinstance(kind, str) or not kind:
            report(f"{item_where}.kind", f"expected the kind's name (InferencePool), got {_describe(kind)}")
            ok = False
        api_version, group = item.get("apiVersion"), item.get("group")
        if api_version is not None and group is not None:
            report(item_where, "give apiVersion or group, not both")
            ok = False
        elif api_version is not None and (not isinstance(api_version, str) or not api_version):
            report(f"{item_where}.apiVersion", f"expected group/version (example.com/v1), got {_describe(api_version)}")
            ok = False
        elif group is not None and not isinstance(group, str):
            report(f"{item_where}.group", f"expected the API group (example.com), got {_describe(group)}")
            ok = False
        elif api_version is None and group is None:
            report(item_where, "names no apiVersion (example.com/v1) or group (example.com)")
            ok = False
        pods = item.get("pods")
        blocks: list[PodBlock] = []
        if not isinstance(pods, (list, tuple)) or not pods:
            report(f"{item_where}.pods", f"expected a non-empty list of pod blocks, got {_describe(pods)}")
            ok = False
        else:
            for block_index, block_raw in enumerate(pods):
                block = _block(block_raw, f"{item_where}.pods[{block_index}]", report)
                ok = ok and block is not None
                if block is not None:
                    blocks.append(block)
        if not ok:
            continue
        resolved_group = (str(api_version).rsplit("/", 1)[0] if "/" in str(api_version) else "") \
            if api_version is not None else str(group)
        key = (resolved_group, str(kind))
        if key in seen:
            report(item_where, f"declares {kind} ({resolved_group or 'core'}) again; {seen[key]} already does")
            continue
        seen[key] = item_where
        shapes.append(WorkloadShape(resolved_group, str(kind), tuple(blocks), item_where))
    return tuple(shapes)


def declared_shape(shapes: Sequence[WorkloadShape], group: str, kind: str) -> WorkloadShape | None:
    for shape in shapes:
        if shape.kind == kind and shape.group == group:
            return shape
    return None


# --- The reference page's section, with its worked example (tested as written) -------------------

EXAMPLE_OBJECT = """\
apiVersion: fleet.example.com/v1
kind: InferenceFleet
metadata:
  name: chat
  namespace: ml
spec:
  router:
    replicas: 2
    podTemplate:
      containers:
      - name: router
        image: ghcr.io/example/router:1.4
  shards:
  - name: small
    replicas: 4
    accelerators: "1"
    acceleratorResource: nvidia.com/gpu
    server:
      image: ghcr.io/example/server:1.4
      resources:
        limits: {memory: 64Gi}
    placement:
      tolerations:
      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
      nodeSelector: {kubernetes.azure.com/accelerator: nvidia}
  - name: large
    replicas: 1
    accelerators: "0.5"
    server:
      image: ghcr.io/example/server:1.4
  warmup:
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: warm
          image: ghcr.io/example/warm:1.4
          resources:
            limits: {nvidia.com/gpu: 1}
"""

EXAMPLE_SHAPES = """\
[{
  "apiVersion": "fleet.example.com/v1",
  "kind": "InferenceFleet",
  "pods": [
    {"path": "spec.router.podTemplate"},
    {"path": "spec.shards[*].server", "form": "container", "containerName": "server",
     "gpu": "spec.shards[*].accelerators", "gpuResourceField": "spec.shards[*].acceleratorResource",
     "tolerations": "spec.shards[*].placement.tolerations",
     "nodeSelector": "spec.shards[*].placement.nodeSelector"},
    {"path": "spec.warmup.template.spec", "created": "once"}
  ]
}]
"""
#: The rules that judge pods, each of which takes `workloadShapes` (as each takes `namespaces`: the
#: pack hands every policy its own config only).
POD_RULE_NAMES = ("gpu-pods-tolerate-gpu-taint", "gpu-limits-are-whole-numbers", "gpu-pods-select-gpu-nodes",
                  "gpu-workloads-are-analyzable", "gpu-pods-fit-a-pool", "gpu-training-pods-not-disruptible",
                  "queued-gpu-pods-are-admitted")
EXAMPLE_CONFIG = "{\n" + ",\n".join(f'  "{rule}": {{"workloadShapes": SHAPES}}' for rule in POD_RULE_NAMES) + "\n}\n"


def example_config() -> dict[str, Any]:
    """`EXAMPLE_CONFIG` with `EXAMPLE_SHAPES` in place of SHAPES, as a user writes the file."""
    import json

    shapes = json.loads(EXAMPLE_SHAPES)
    return {rule: {"workloadShapes": shapes} for rule in POD_RULE_NAMES}


EXAMPLE_OUTPUT = """\
fleet.yaml:26 (document 0) InferenceFleet/chat [mandatory] gpu-pods-tolerate-gpu-taint at spec.shards[1].placement.tolerations:
fleet.yaml:33 (document 0) InferenceFleet/chat [mandatory] gpu-pods-tolerate-gpu-taint at spec.warmup.template.spec.tolerations:
fleet.yaml:28 (document 0) InferenceFleet/chat [mandatory] gpu-limits-are-whole-numbers at spec.shards[1].accelerators:
fleet.yaml:26 (document 0) InferenceFleet/chat [advisory] gpu-pods-select-gpu-nodes at spec.shards[1].placement.nodeSelector:
fleet.yaml:33 (document 0) InferenceFleet/chat [advisory] gpu-pods-select-gpu-nodes at spec.warmup.template.spec.nodeSelector:
1 object(s) checked: 3 mandatory and 2 advisory violation(s), 0 input error(s)
"""


def _indented(text: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in text.splitlines())


def shapes_markdown() -> str:
    """The `docs/workloads.md` section on declared shapes."""
    keys = "\n".join(f"| `{key}` | {doc} |" for key, doc in (
        ("path", "Where the block is: a pod spec (`form: podSpec`, the default) or one container "
                 "(`form: container`). `[*]` after a key: every entry of a list; `*`: every value of a map."),
        ("form", "`podSpec` or `container`."),
        ("containerName", "The name the controller gives the container (`form: container`; default its `name`)."),
        ("gpu", "A bare GPU count the controller makes the container's limit (`\"1\"`, `\"0.5\"`)."),
        ("gpuResource", "The resource `gpu` counts (default `nvidia.com/gpu`); it must match `gpuResources` to be "
                        "judged as a GPU."),
        ("gpuResourceField", "A field naming that resource instead (vLLM's `gpuType`)."),
        ("podSpec", "`form: container`: a pod spec beside the container whose containers join the pod and whose "
                    "scheduling fields are the pod's."),
        ("tolerations, nodeSelector, affinity", "Where the pod's fields are when not in a pod spec; a fix is "
                                                "written there, under that key."),
        ("nodeSelectorTerms", "A list of NodeSelectorTerms the controller makes the required node affinity."),
        ("created", "`perReplica` (default) or `once`: said in messages."),
    ))
    return f"""
## Declaring a kind's shape

No list of adapters is ever complete. A kind no adapter knows is searched generically (every
mapping with a `containers` list), and when it names a GPU (`nvidia.com/...`, `amd.com/gpu`,
`gpu.intel.com/...`, a GPU DRA device class) outside every pod spec that search finds, it gets **no
verdict**: one advisory of `gpu-workloads-are-analyzable`, "not evaluated: declare this kind's
shape". Declare it in the policy config (the pack's `--policy-pack-config`, `gpu-aks-check --config`,
`gpu-aks-explain --config`) under `workloadShapes`, on each rule that judges pods
(`gpu-pods-tolerate-gpu-taint`, `gpu-limits-are-whole-numbers`, `gpu-pods-select-gpu-nodes`,
`gpu-workloads-are-analyzable`, `gpu-pods-fit-a-pool`). A declaration wins over a built-in adapter
for its kind. The built-in kinds are declared the same way (`policies/workloads/core.py`, `vllm.py`,
`slinky.py`). Inside the cluster the admission policy judges the Pods such a kind creates, as any Pod.

Each declaration names `apiVersion` (or `group`), `kind` and `pods`, a list of blocks:

| key | meaning |
| --- | --- |
{keys}

A field path uses the same `[*]` as its block's path and is read at the same entry. Every mistake is
reported at once, with its key and path (`gpu-pods-tolerate-gpu-taint.workloadShapes[0].pods[1].gpu:
'spec.other[*].n' uses a wildcard outside its block's path ...`), and nothing runs.

### Worked example: an `InferenceFleet` no adapter knows

An invented operator runs a router (a pod spec), one server pod per replica of each shard (the
container is `server`, its GPU count `accelerators`, its tolerations under `placement`), and one
warm-up pod. The object:

{_indented(EXAMPLE_OBJECT)}

Without a declaration it names `nvidia.com/gpu` outside any pod spec the search finds, so it is
not evaluated. Its shape, declared (`SHAPES`):

{_indented(EXAMPLE_SHAPES)}

given to each rule that judges pods (the pack hands each policy its own config only, as for
`namespaces`; Pulumi's engine spreads nothing but `enforcementLevel` from the config's `all` key,
pulumi/pulumi `pkg/resource/analyzer/config.go` `applyConfig`, so a declaration cannot be written
once for every policy):

{_indented(EXAMPLE_CONFIG)}

`gpu-aks-check --config fleet-config.json fleet.yaml` judges its four pods (the router asks for no
GPU; each finding's message, indented below its line, is left out here):

{_indented(EXAMPLE_OUTPUT)}

The `large` shard asks for half a GPU, which the operator would pass to the API server, and has no
toleration; the warm-up pod has no toleration either. (`tests/test_workload_shapes.py` checks this
example as written.)
"""
