"""The policies' configuration: names, defaults, the schema the Pulumi CLI validates against, and
the parser of each rule's section. The registry (`gpu_aks_policies.rules`) sits above this module and
parses the whole config with it (`rules.parse_rule_config`, shared by the pack, `gpu_aks_policies.check`,
`gpu_aks_policies.explain`, the offline preview and the admission policy the platform generates); this
module never reads the registry, it is given the rule declarations.

The CLI sends `Configure` with the schema defaults filled in, but other callers may send nothing at
all, so every default is applied here too. No Pulumi imports.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .admission import AKS_ADMISSION_PLUGINS
from .catalog import (
    DEFAULT_GPU_TAINT,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    PASSTHROUGH_GPU_RESOURCES,
)
from .declarations import MISSING, Key, Problems, Reader, Section, describe
from .scheduling import TAINT_EFFECTS, TaintSyntaxError, label_key_problem, label_value_problem, parse_taint
from .workloads.shapes import WORKLOAD_SHAPES_SCHEMA, WorkloadShape, parse_shapes

TOLERATE_GPU_TAINT = "gpu-pods-tolerate-gpu-taint"
WHOLE_GPU_LIMITS = "gpu-limits-are-whole-numbers"
SELECT_GPU_NODES = "gpu-pods-select-gpu-nodes"
TAINTED_GPU_POOLS = "gpu-node-pools-are-tainted"
DEVICE_PLUGIN_TOLERATES_POOLS = "device-plugin-tolerates-gpu-pools"
ANALYZABLE = "gpu-workloads-are-analyzable"
FIT_A_POOL = "gpu-pods-fit-a-pool"
NOT_DISRUPTIBLE = "gpu-training-pods-not-disruptible"
QUEUE_ADMITS = "queued-gpu-pods-are-admitted"

LEVELS = ("advisory", "mandatory", "disabled")
Level = Literal["advisory", "mandatory", "disabled"]

DEFAULT_GPU_TAINTS: tuple[Mapping[str, str], ...] = (parse_taint(DEFAULT_GPU_TAINT),)
DEFAULT_GPU_RESOURCES: tuple[str, ...] = (GPU_RESOURCE, MIG_RESOURCE_PREFIX + "*", PASSTHROUGH_GPU_RESOURCES)
#: NVIDIA's DRA driver's device classes (kubernetes-sigs/dra-driver-nvidia-gpu).
DEFAULT_GPU_DEVICE_CLASSES: tuple[str, ...] = ("gpu.nvidia.com", "mig.nvidia.com")

_TAINT_SCHEMA = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "value": {"type": "string"},
        "effect": {"type": "string", "enum": list(TAINT_EFFECTS)},
    },
    "required": ["key", "effect"],
}
GPU_TAINTS_SCHEMA = {
    "type": "array", "items": _TAINT_SCHEMA, "minItems": 1,
    "default": [dict(t) for t in DEFAULT_GPU_TAINTS],
    "description": "The taints GPU node pools carry; a GPU pod must tolerate at least one.",
}
GPU_RESOURCES_SCHEMA = {
    "type": "array", "items": {"type": "string"}, "minItems": 1,
    "default": list(DEFAULT_GPU_RESOURCES),
    "description": "Extended resources that count as GPUs; shell-style patterns allowed.",
}
NODE_LABEL_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
    "required": ["key", "value"],
    "description": "The label every GPU node of the platform carries, which GPU pods should select. Unset, it "
                   "depends on the platform: the checker with --platform takes the one its pools' nodes share, and "
                   "otherwise the advice selects AKS's GPU label or node auto-provisioning's, never a label only one "
                   "kind of node has.",
}
ADMISSION_PLUGINS_SCHEMA = {
    "type": "array", "items": {"type": "string", "enum": list(AKS_ADMISSION_PLUGINS)}, "uniqueItems": True,
    "default": list(AKS_ADMISSION_PLUGINS),
    "description": "The admission plugins the cluster runs (AKS runs all three and the list cannot be changed); "
                   "[] for a cluster that runs none.",
}
GPU_DEVICE_CLASSES_SCHEMA = {
    "type": "array", "items": {"type": "string"},
    "default": list(DEFAULT_GPU_DEVICE_CLASSES),
    "description": "DRA device classes whose claims make a pod a GPU pod; shell-style patterns allowed.",
}

#: The Namespaces the cluster already has, as the platform knows them (name -> annotations).
NAMESPACES_SCHEMA = {
    "type": "object",
    "additionalProperties": {"type": "object", "additionalProperties": {"type": "string"}},
    "default": {},
    "description": "Namespaces that exist before this program runs, by name, with their annotations "
                   "(scheduler.alpha.kubernetes.io/defaultTolerations, tolerationsWhitelist, node-selector). Pods in "
                   "them are judged with what AKS's admission plugins add or refuse; a Namespace of the program "
                   "registered before its pods counts as well (and wins).",
}

#: Pods that land on GPU nodes without asking for an extended GPU resource the limits rule judges.
#: KAI Scheduler and Run:ai ask for a share of a GPU with pod annotations (kai-scheduler/KAI-Scheduler
#: `pkg/common/constants`: `GpuFraction = "gpu-fraction"`, `GpuMemory = "gpu-memory"`; Run:ai's
#: `RunaiGPUFraction`/`RunaiGPUMemory` are the same names). Volcano's vGPU asks with
#: `volcano.sh/vgpu-number`, `volcano.sh/vgpu-memory`, `volcano.sh/vgpu-cores`
#: (volcano-sh/volcano `pkg/scheduler/plugins/vgpupredicates/vgpuutil/config.go`; Volcano vGPU user
#: guide). HAMi adds `nvidia.com/gpumem`, `nvidia.com/gpumem-percentage`, `nvidia.com/gpucores`
#: beside `nvidia.com/gpu` (Project-HAMi/HAMi `examples/nvidia/`, its `resourceMem`/`resourceCores`
#: chart values). Such pods still need the GPU taint's toleration; their amounts are not GPU counts,
#: so the whole-number rule never judges them.
DEFAULT_GPU_MARKER_ANNOTATIONS: tuple[str, ...] = ("gpu-fraction", "gpu-memory")
DEFAULT_GPU_MARKER_RESOURCES: tuple[str, ...] = (
    "volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores",
    "nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores",
)
GPU_MARKERS_SCHEMA = {
    "type": "object",
    "properties": {"annotations": {"type": "array", "items": {"type": "string"}},
                   "resources": {"type": "array", "items": {"type": "string"}}},
    "additionalProperties": False,
    "default": {"annotations": list(DEFAULT_GPU_MARKER_ANNOTATIONS), "resources": list(DEFAULT_GPU_MARKER_RESOURCES)},
    "description": "What else puts a pod on GPU nodes: pod annotations (KAI Scheduler, Run:ai) and resources "
                   "(Volcano vGPU, HAMi; shell-style patterns allowed). Such pods must tolerate the GPU taint; "
                   "their amounts are never judged as whole GPUs.",
}


@dataclass(frozen=True)
class GpuMarkers:
    annotations: tuple[str, ...] = DEFAULT_GPU_MARKER_ANNOTATIONS
    resources: tuple[str, ...] = DEFAULT_GPU_MARKER_RESOURCES


@dataclass(frozen=True)
class RuleConfig:
    """One policy's settings, defaults applied."""

    level: str
    gpu_taints: tuple[Mapping[str, str], ...] = DEFAULT_GPU_TAINTS
    gpu_resources: tuple[str, ...] = DEFAULT_GPU_RESOURCES
    #: None: not configured, and not known from the platform (the advice then depends on the platform).
    node_label: Mapping[str, str] | None = None
    admission_plugins: frozenset[str] = frozenset(AKS_ADMISSION_PLUGINS)
    gpu_device_classes: tuple[str, ...] = DEFAULT_GPU_DEVICE_CLASSES
    #: (namespace, its annotations) for the Namespaces the pack's config names, sorted by name.
    namespaces: tuple[tuple[str, Mapping[str, str]], ...] = ()
    gpu_markers: GpuMarkers = GpuMarkers()
    #: Kinds the config declares the shape of (`workloadShapes`; `gpu_aks_policies.workloads.shapes`).
    workload_shapes: tuple[WorkloadShape, ...] = ()

    def namespace_annotations(self, name: str) -> Mapping[str, str] | None:
        for namespace, given in self.namespaces:
            if namespace == name:
                return given
        return None


class RuleConfigError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid policy configuration:\n" + "\n".join(f"  - {p}" for p in problems))
        self.problems = problems


#: Where a parameter's reader reports a problem: (the key as the file spells it, the message).
Report = Callable[[str, str], None]


def _taints(raw: Any, where: str, report: Report) -> tuple[Mapping[str, str], ...]:
    if not isinstance(raw, (list, tuple)) or not raw:
        report(where, f"expected a non-empty list of {{key, value, effect}}, got {describe(raw)}")
        return DEFAULT_GPU_TAINTS
    taints = []
    for index, item in enumerate(raw):
        item_where = f"{where}[{index}]"
        if isinstance(item, str):
            try:
                taints.append(parse_taint(item))
            except TaintSyntaxError as error:
                report(item_where, f"{error}")
            continue
        if not isinstance(item, Mapping):
            report(item_where, f"expected {{key, value, effect}}, got {describe(item)}")
            continue
        key, value, effect = item.get("key"), item.get("value", ""), item.get("effect")
        key_problem = label_key_problem(key) if isinstance(key, str) else "must be a string"
        value_problem = label_value_problem(value) if isinstance(value, str) else "must be a string"
        if key_problem:
            report(f"{item_where}.key", f"{describe(key)} {key_problem}")
        if value_problem:
            report(f"{item_where}.value", f"{describe(value)} {value_problem}")
        if effect not in TAINT_EFFECTS:
            report(f"{item_where}.effect", f"{describe(effect)} is not one of {', '.join(TAINT_EFFECTS)}")
        if not (key_problem or value_problem) and effect in TAINT_EFFECTS:
            taints.append({"key": str(key), "value": str(value), "effect": str(effect)})
    return tuple(taints) or DEFAULT_GPU_TAINTS


def _strings(raw: Any, where: str, report: Report, default: tuple[str, ...], allow_empty: bool = False,
             allowed: tuple[str, ...] = ()) -> tuple[str, ...]:
    if not isinstance(raw, (list, tuple)) or not all(isinstance(r, str) and r for r in raw) or (not raw and not allow_empty):
        report(where, f"expected a {'' if allow_empty else 'non-empty '}list of names, got {describe(raw)}")
        return default
    unknown = [r for r in raw if allowed and r not in allowed]
    if unknown:
        report(where, f"{', '.join(map(repr, unknown))} not allowed; allowed: {', '.join(allowed)}")
        return default
    return tuple(raw)


#: A GPU resource: an extended resource's name (`domain/name`: letters, digits, '.', '-', '_') or a
#: shell pattern of one, with `*`, `?` and classes (`[0-9]`, `[!x]`) of name characters and ascending
#: ranges. Only these mean the same to fnmatch (the rules) and to the RE2 regex of the generated
#: admission policy (`admission_policy.shell_pattern_regex`): `[!]b`, `[\\-*]` or `[b-a]` gave an
#: invalid regex, so the API server would refuse the policy that the checker ran happily.
_CLASS = r"\[!?(?:[A-Za-z0-9._/](?:-[A-Za-z0-9._/])?)+\]"
RESOURCE_PATTERN = re.compile(rf"(?:[A-Za-z0-9._/*?-]|{_CLASS})+")
_RANGE = re.compile(r"([A-Za-z0-9._/])-([A-Za-z0-9._/])")


def _resource_patterns(raw: Any, where: str, report: Report, default: tuple[str, ...],
                       allow_empty: bool = False) -> tuple[str, ...]:
    patterns = _strings(raw, where, report, default, allow_empty)
    bad = [p for p in patterns if not RESOURCE_PATTERN.fullmatch(p) or any(
        low > high for found in re.finditer(_CLASS, p) for low, high in _RANGE.findall(found.group()))]
    if bad:
        report(where, f"{', '.join(describe(p) for p in bad[:5])} {'is' if len(bad) == 1 else 'are'} not a resource "
                      "name or a shell pattern of one: letters, digits, '.', '-', '_' and '/', with '*', '?' and "
                      "classes of those characters such as [0-9] or [!x] (ranges ascending), e.g. nvidia.com/mig-*")
        return default
    return patterns


def _node_label(raw: Any, where: str, report: Report) -> Mapping[str, str] | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), str) or not isinstance(raw.get("value"), str):
        report(where, f"expected {{key: ..., value: ...}}, got {describe(raw)}")
        return None
    return {"key": raw["key"], "value": raw["value"]}


def _namespaces(raw: Any, where: str, report: Report) -> tuple[tuple[str, Mapping[str, str]], ...]:
    if not isinstance(raw, Mapping):
        report(where, f"expected an object of namespace name -> {{annotation: value}}, got {describe(raw)}")
        return ()
    namespaces = []
    for name, given in raw.items():
        if not isinstance(name, str) or not name:
            report(where, f"namespace names are non-empty strings, got {describe(name)}")
            continue
        if not isinstance(given, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items()):
            report(f"{where}.{name}", f"expected an object of annotation -> string, got {describe(given)}")
            continue
        namespaces.append((name, dict(given)))
    return tuple(sorted(namespaces, key=lambda item: item[0]))


def _markers(raw: Any, where: str, report: Report) -> GpuMarkers:
    if not isinstance(raw, Mapping):
        report(where, f"expected {{annotations: [...], resources: [...]}}, got {describe(raw)}")
        return GpuMarkers()
    unknown = [key for key in raw if key not in ("annotations", "resources")]
    if unknown:
        report(where, f"unknown key(s) {', '.join(map(describe, unknown))}; takes annotations, resources")
    annotations = (_strings(raw["annotations"], where + ".annotations", report, DEFAULT_GPU_MARKER_ANNOTATIONS,
                            allow_empty=True) if "annotations" in raw else DEFAULT_GPU_MARKER_ANNOTATIONS)
    resources = (_resource_patterns(raw["resources"], where + ".resources", report, DEFAULT_GPU_MARKER_RESOURCES,
                                    allow_empty=True) if "resources" in raw else DEFAULT_GPU_MARKER_RESOURCES)
    return GpuMarkers(annotations, resources)


@dataclass(frozen=True)
class Parameter:
    """One config property a rule may take: its JSON Schema (what the Pulumi CLI validates and
    `docs/policies.md` shows), the RuleConfig field it sets and how it is read (all problems at once)."""

    name: str
    schema: Mapping[str, Any]
    field: str
    parse: Callable[[Any, str, Report], Any]

    @property
    def key(self) -> Key:
        """The parameter as a declaration of the config engine (`gpu_aks_policies.declarations`)."""
        def read(reader: Reader, raw: Any) -> Any:
            if raw is MISSING:
                return getattr(_DEFAULTS, self.field)

            def report(where: str, message: str) -> None:
                reader.bad.add(self.name)
                reader.problems.add(where, message)

            return self.parse(raw, reader.path(self.name), report)

        return Key(self.name, str(self.schema.get("description", "")), str(self.schema.get("type", "")),
                   default=self.schema.get("default"), parse=read, attr=self.field)


PARAMETERS: Mapping[str, Parameter] = {parameter.name: parameter for parameter in (
    Parameter("gpuTaints", GPU_TAINTS_SCHEMA, "gpu_taints", _taints),
    Parameter("gpuResources", GPU_RESOURCES_SCHEMA, "gpu_resources",
              lambda raw, where, report: _resource_patterns(raw, where, report, DEFAULT_GPU_RESOURCES)),
    Parameter("nodeLabel", NODE_LABEL_SCHEMA, "node_label", _node_label),
    Parameter("admissionPlugins", ADMISSION_PLUGINS_SCHEMA, "admission_plugins",
              lambda raw, where, report: frozenset(_strings(raw, where, report, AKS_ADMISSION_PLUGINS,
                                                               allow_empty=True, allowed=AKS_ADMISSION_PLUGINS))),
    Parameter("gpuDeviceClasses", GPU_DEVICE_CLASSES_SCHEMA, "gpu_device_classes",
              lambda raw, where, report: _strings(raw, where, report, DEFAULT_GPU_DEVICE_CLASSES, allow_empty=True)),
    Parameter("namespaces", NAMESPACES_SCHEMA, "namespaces", _namespaces),
    Parameter("gpuMarkers", GPU_MARKERS_SCHEMA, "gpu_markers", _markers),
    Parameter("workloadShapes", WORKLOAD_SHAPES_SCHEMA, "workload_shapes", parse_shapes),
)}


_DEFAULTS = RuleConfig(level="advisory")


def _level_problem(value: Any) -> str | None:
    return None if value in LEVELS else f"is not one of {', '.join(LEVELS)}"


_SECTIONS: dict[str, Section] = {}


class Declared(Protocol):
    """What the config needs of a rule's declaration (`gpu_aks_policies.rules.Rule`)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def parameters(self) -> tuple[str, ...]: ...


def rule_section(rule: Declared) -> Section:
    """A rule's config section, declared with the config engine: its enforcement level and the
    parameters it takes (from its declaration in `gpu_aks_policies.rules`)."""
    section = _SECTIONS.get(rule.name)
    if section is None:
        level = Key("enforcementLevel", "advisory, mandatory or disabled.", "string", default=rule.level,
                    check=_level_problem, allowed=LEVELS, attr="level")
        section = Section(rule.name, rule.description, (level, *(PARAMETERS[name].key for name in rule.parameters)),
                          cls=RuleConfig)
        _SECTIONS[rule.name] = section
    return section


def parse_configs(raw: Any, rules: Mapping[str, Declared]) -> dict[str, RuleConfig]:
    """Parse `--policy-pack-config` JSON (policy name -> level or {enforcementLevel, ...}) with the
    config engine (`gpu_aks_policies.declarations`): each rule's section comes from its declaration
    (`rules`, the registry's: `gpu_aks_policies.rules.parse_rule_config` passes them).

    Raises RuleConfigError with every problem found.
    """
    raw = raw if raw is not None else {}
    if not isinstance(raw, Mapping):
        raise RuleConfigError([f"expected a JSON object of policy name -> settings, got {describe(raw)}"])
    problems = Problems()
    for name in raw:
        if name not in rules and name != "all":
            problems.items.append(f"{describe(name)} is not a policy of this pack; known: {', '.join(rules)}")
    configs: dict[str, RuleConfig] = {}
    all_level = raw.get("all")
    for name, rule in rules.items():
        section = raw.get(name, {})
        if isinstance(section, str):
            section = {"enforcementLevel": section}
        if not isinstance(section, Mapping):
            problems.add(name, f"expected an object or an enforcement level, got {describe(section)}")
            section = {}
        if "enforcementLevel" not in section and isinstance(all_level, str):
            section = {**section, "enforcementLevel": all_level}
        declared = rule_section(rule)
        reader = Reader(declared, section, name, problems, None)
        declared.parse(reader)
        configs[name] = reader.build()
    if problems.items:
        raise RuleConfigError(problems.items)
    return configs
