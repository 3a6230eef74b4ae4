"""The policies' configuration: names, defaults, the schema the Pulumi CLI validates against, and
one parser shared by the pack, `policies.check`, `policies.explain`, the offline preview and the
admission policy the platform generates.

The CLI sends `Configure` with the schema defaults filled in, but other callers may send nothing at
all, so every default is applied here too. No Pulumi imports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .admission import AKS_ADMISSION_PLUGINS
from .catalog import ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE, DEFAULT_GPU_TAINT, GPU_RESOURCE, MIG_RESOURCE_PREFIX
from .documents import DocumentError, Limits, load_json, read_file
from .scheduling import TAINT_EFFECTS, TaintSyntaxError, label_key_problem, label_value_problem, parse_taint

TOLERATE_GPU_TAINT = "gpu-pods-tolerate-gpu-taint"
WHOLE_GPU_LIMITS = "gpu-limits-are-whole-numbers"
SELECT_GPU_NODES = "gpu-pods-select-gpu-nodes"
TAINTED_GPU_POOLS = "gpu-node-pools-are-tainted"
DEVICE_PLUGIN_TOLERATES_POOLS = "device-plugin-tolerates-gpu-pools"
ANALYZABLE = "gpu-workloads-are-analyzable"
FIT_A_POOL = "gpu-pods-fit-a-pool"

LEVELS = ("advisory", "mandatory", "disabled")

DEFAULT_LEVELS: Mapping[str, str] = {
    TOLERATE_GPU_TAINT: "mandatory",
    WHOLE_GPU_LIMITS: "mandatory",
    SELECT_GPU_NODES: "advisory",
    TAINTED_GPU_POOLS: "mandatory",
    DEVICE_PLUGIN_TOLERATES_POOLS: "mandatory",
    ANALYZABLE: "advisory",
    FIT_A_POOL: "mandatory",
}
POLICY_NAMES = tuple(DEFAULT_LEVELS)
#: Policies only the manifest checker runs (it needs the platform's outputs, `--platform`).
CHECKER_ONLY = (FIT_A_POOL,)
PACK_POLICY_NAMES = tuple(name for name in POLICY_NAMES if name not in CHECKER_ONLY)

DESCRIPTIONS: Mapping[str, str] = {
    TOLERATE_GPU_TAINT: "Pods that ask for GPUs tolerate the GPU node taint, or they stay Pending forever.",
    WHOLE_GPU_LIMITS: "GPU amounts are set as limits, whole, and equal to any request, as the API server requires.",
    SELECT_GPU_NODES: "Pods that ask for GPUs select GPU nodes by label (nodeSelector or required affinity).",
    TAINTED_GPU_POOLS: "AKS node pools with GPU VM sizes carry a NoSchedule GPU taint and bounded autoscaling.",
    DEVICE_PLUGIN_TOLERATES_POOLS: "The NVIDIA device-plugin DaemonSets select, tolerate and can serve every GPU pool.",
    ANALYZABLE: "What the GPU rules cannot see (a podSpecPatch, a claim not among the objects checked) is said.",
    FIT_A_POOL: "Every GPU pod fits at least one GPU pool of the platform (taints, selectors, GPU counts, models).",
}

DEFAULT_GPU_TAINTS: tuple[Mapping[str, str], ...] = (parse_taint(DEFAULT_GPU_TAINT),)
DEFAULT_GPU_RESOURCES: tuple[str, ...] = (GPU_RESOURCE, MIG_RESOURCE_PREFIX + "*")
DEFAULT_NODE_LABEL: Mapping[str, str] = {"key": ACCELERATOR_LABEL, "value": ACCELERATOR_LABEL_VALUE}
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
    "default": dict(DEFAULT_NODE_LABEL),
    "description": "The label GPU nodes carry and GPU pods should select.",
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

#: Which config properties each policy takes (its `PolicyConfigSchema`).
CONFIG_SCHEMAS: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    TOLERATE_GPU_TAINT: {"gpuTaints": GPU_TAINTS_SCHEMA, "gpuResources": GPU_RESOURCES_SCHEMA,
                         "admissionPlugins": ADMISSION_PLUGINS_SCHEMA, "gpuDeviceClasses": GPU_DEVICE_CLASSES_SCHEMA},
    WHOLE_GPU_LIMITS: {"gpuResources": GPU_RESOURCES_SCHEMA},
    SELECT_GPU_NODES: {"gpuResources": GPU_RESOURCES_SCHEMA, "nodeLabel": NODE_LABEL_SCHEMA,
                       "gpuDeviceClasses": GPU_DEVICE_CLASSES_SCHEMA},
    TAINTED_GPU_POOLS: {"gpuTaints": GPU_TAINTS_SCHEMA},
    DEVICE_PLUGIN_TOLERATES_POOLS: {},
    ANALYZABLE: {"gpuTaints": GPU_TAINTS_SCHEMA, "gpuResources": GPU_RESOURCES_SCHEMA,
                 "admissionPlugins": ADMISSION_PLUGINS_SCHEMA, "gpuDeviceClasses": GPU_DEVICE_CLASSES_SCHEMA},
    FIT_A_POOL: {"gpuResources": GPU_RESOURCES_SCHEMA, "admissionPlugins": ADMISSION_PLUGINS_SCHEMA,
                 "gpuDeviceClasses": GPU_DEVICE_CLASSES_SCHEMA},
}


@dataclass(frozen=True)
class RuleConfig:
    """One policy's settings, defaults applied."""

    level: str
    gpu_taints: tuple[Mapping[str, str], ...] = DEFAULT_GPU_TAINTS
    gpu_resources: tuple[str, ...] = DEFAULT_GPU_RESOURCES
    node_label: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_NODE_LABEL))
    admission_plugins: frozenset[str] = frozenset(AKS_ADMISSION_PLUGINS)
    gpu_device_classes: tuple[str, ...] = DEFAULT_GPU_DEVICE_CLASSES


class RuleConfigError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid policy configuration:\n" + "\n".join(f"  - {p}" for p in problems))
        self.problems = problems


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:60] + "…"


def _taints(raw: Any, where: str, problems: list[str]) -> tuple[Mapping[str, str], ...]:
    if not isinstance(raw, (list, tuple)) or not raw:
        problems.append(f"{where}: expected a non-empty list of {{key, value, effect}}, got {_shown(raw)}")
        return DEFAULT_GPU_TAINTS
    taints = []
    for index, item in enumerate(raw):
        item_where = f"{where}[{index}]"
        if isinstance(item, str):
            try:
                taints.append(parse_taint(item))
            except TaintSyntaxError as error:
                problems.append(f"{item_where}: {error}")
            continue
        if not isinstance(item, Mapping):
            problems.append(f"{item_where}: expected {{key, value, effect}}, got {_shown(item)}")
            continue
        key, value, effect = item.get("key"), item.get("value", ""), item.get("effect")
        key_problem = label_key_problem(key) if isinstance(key, str) else "must be a string"
        value_problem = label_value_problem(value) if isinstance(value, str) else "must be a string"
        if key_problem:
            problems.append(f"{item_where}.key: {_shown(key)} {key_problem}")
        if value_problem:
            problems.append(f"{item_where}.value: {_shown(value)} {value_problem}")
        if effect not in TAINT_EFFECTS:
            problems.append(f"{item_where}.effect: {_shown(effect)} is not one of {', '.join(TAINT_EFFECTS)}")
        if not (key_problem or value_problem) and effect in TAINT_EFFECTS:
            taints.append({"key": str(key), "value": str(value), "effect": str(effect)})
    return tuple(taints) or DEFAULT_GPU_TAINTS


def _strings(raw: Any, where: str, problems: list[str], default: tuple[str, ...], allow_empty: bool = False,
             allowed: tuple[str, ...] = ()) -> tuple[str, ...]:
    if not isinstance(raw, (list, tuple)) or not all(isinstance(r, str) and r for r in raw) or (not raw and not allow_empty):
        problems.append(f"{where}: expected a {'' if allow_empty else 'non-empty '}list of names, got {_shown(raw)}")
        return default
    unknown = [r for r in raw if allowed and r not in allowed]
    if unknown:
        problems.append(f"{where}: {', '.join(map(repr, unknown))} not allowed; allowed: {', '.join(allowed)}")
        return default
    return tuple(raw)


def _node_label(raw: Any, where: str, problems: list[str]) -> Mapping[str, str]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), str) or not isinstance(raw.get("value"), str):
        problems.append(f"{where}: expected {{key: ..., value: ...}}, got {_shown(raw)}")
        return DEFAULT_NODE_LABEL
    return {"key": raw["key"], "value": raw["value"]}


def parse_rule_config(raw: Any) -> dict[str, RuleConfig]:
    """Parse `--policy-pack-config` JSON (policy name -> level or {enforcementLevel, ...}).

    Raises RuleConfigError with every problem found.
    """
    raw = raw if raw is not None else {}
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        raise RuleConfigError([f"expected a JSON object of policy name -> settings, got {_shown(raw)}"])
    for name in raw:
        if name not in POLICY_NAMES and name != "all":
            problems.append(f"{_shown(name)} is not a policy of this pack; known: {', '.join(POLICY_NAMES)}")
    configs: dict[str, RuleConfig] = {}
    all_level = raw.get("all")
    for name in POLICY_NAMES:
        section = raw.get(name, {})
        if isinstance(section, str):
            section = {"enforcementLevel": section}
        if not isinstance(section, Mapping):
            problems.append(f"{name}: expected an object or an enforcement level, got {_shown(section)}")
            section = {}
        level = section.get("enforcementLevel", all_level if isinstance(all_level, str) else DEFAULT_LEVELS[name])
        if level not in LEVELS:
            problems.append(f"{name}.enforcementLevel: {_shown(level)} is not one of {', '.join(LEVELS)}")
            level = DEFAULT_LEVELS[name]
        allowed = set(CONFIG_SCHEMAS[name]) | {"enforcementLevel"}
        for key in section:
            if key not in allowed:
                problems.append(f"{name}.{key}: unknown setting; {name} takes {', '.join(sorted(allowed))}")
        where = name + "."
        configs[name] = RuleConfig(
            level=level,
            gpu_taints=_taints(section["gpuTaints"], where + "gpuTaints", problems)
            if "gpuTaints" in section else DEFAULT_GPU_TAINTS,
            gpu_resources=_strings(section["gpuResources"], where + "gpuResources", problems, DEFAULT_GPU_RESOURCES)
            if "gpuResources" in section else DEFAULT_GPU_RESOURCES,
            node_label=_node_label(section["nodeLabel"], where + "nodeLabel", problems)
            if "nodeLabel" in section else DEFAULT_NODE_LABEL,
            admission_plugins=frozenset(_strings(section["admissionPlugins"], where + "admissionPlugins", problems,
                                                 AKS_ADMISSION_PLUGINS, allow_empty=True, allowed=AKS_ADMISSION_PLUGINS))
            if "admissionPlugins" in section else frozenset(AKS_ADMISSION_PLUGINS),
            gpu_device_classes=_strings(section["gpuDeviceClasses"], where + "gpuDeviceClasses", problems,
                                        DEFAULT_GPU_DEVICE_CLASSES, allow_empty=True)
            if "gpuDeviceClasses" in section else DEFAULT_GPU_DEVICE_CLASSES,
        )
    if problems:
        raise RuleConfigError(problems)
    return configs


def default_rule_config() -> dict[str, RuleConfig]:
    return parse_rule_config({})


RULE_CONFIG_FILE_LIMITS = Limits(max_bytes=1024 * 1024)


def read_rule_config_file(path: str, limits: Limits = RULE_CONFIG_FILE_LIMITS) -> dict[str, Any]:
    """The raw `--policy-pack-config` JSON from a file, validated (RuleConfigError otherwise)."""
    try:
        raw = load_json(read_file(path, limits), limits)
    except DocumentError as problem:
        raise RuleConfigError([problem.at(path)]) from None
    try:
        parse_rule_config(raw)
    except RuleConfigError as error:
        raise RuleConfigError([f"{path}: {problem}" for problem in error.problems]) from None
    return raw if isinstance(raw, dict) else {}


def with_platform_taints(configs: Mapping[str, RuleConfig], taints: tuple[Mapping[str, str], ...]) -> dict[str, RuleConfig]:
    """The configs with the GPU taints the platform's pools really carry (from `--platform`)."""
    return {name: replace(config, gpu_taints=taints) if taints and "gpuTaints" in CONFIG_SCHEMAS[name] else config
            for name, config in configs.items()}
