"""The policy pack's configuration: names, defaults, the schema the Pulumi CLI validates against, and
one parser shared by the pack, `policies.check`, `policies.explain` and the offline preview.

The CLI sends `Configure` with the schema defaults filled in, but other callers may send nothing at
all, so every default is applied here too. No Pulumi imports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.catalog import (
    ACCELERATOR_LABEL,
    ACCELERATOR_LABEL_VALUE,
    DEFAULT_GPU_TAINT,
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
)
from policies.scheduling import TAINT_EFFECTS, TaintSyntaxError, label_key_problem, label_value_problem, parse_taint

TOLERATE_GPU_TAINT = "gpu-pods-tolerate-gpu-taint"
WHOLE_GPU_LIMITS = "gpu-limits-are-whole-numbers"
SELECT_GPU_NODES = "gpu-pods-select-gpu-nodes"
TAINTED_GPU_POOLS = "gpu-node-pools-are-tainted"
DEVICE_PLUGIN_TOLERATES_POOLS = "device-plugin-tolerates-gpu-pools"

LEVELS = ("advisory", "mandatory", "disabled")

DEFAULT_LEVELS: Mapping[str, str] = {
    TOLERATE_GPU_TAINT: "mandatory",
    WHOLE_GPU_LIMITS: "mandatory",
    SELECT_GPU_NODES: "advisory",
    TAINTED_GPU_POOLS: "mandatory",
    DEVICE_PLUGIN_TOLERATES_POOLS: "mandatory",
}
POLICY_NAMES = tuple(DEFAULT_LEVELS)

DESCRIPTIONS: Mapping[str, str] = {
    TOLERATE_GPU_TAINT: "Pods that ask for GPUs tolerate the GPU node taint, or they stay Pending forever.",
    WHOLE_GPU_LIMITS: "GPU amounts are whole numbers of at least 1, set as limits, equal to any request.",
    SELECT_GPU_NODES: "Pods that ask for GPUs select GPU nodes by label (nodeSelector or required affinity).",
    TAINTED_GPU_POOLS: "AKS node pools with GPU VM sizes carry a NoSchedule GPU taint and bounded autoscaling.",
    DEVICE_PLUGIN_TOLERATES_POOLS: "The NVIDIA device-plugin DaemonSet selects and tolerates every GPU pool it serves.",
}

DEFAULT_GPU_TAINTS: tuple[Mapping[str, str], ...] = (parse_taint(DEFAULT_GPU_TAINT),)
DEFAULT_GPU_RESOURCES: tuple[str, ...] = (GPU_RESOURCE, MIG_RESOURCE_PREFIX + "*")
DEFAULT_NODE_LABEL: Mapping[str, str] = {"key": ACCELERATOR_LABEL, "value": ACCELERATOR_LABEL_VALUE}

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

#: Which config properties each policy takes (its `PolicyConfigSchema`).
CONFIG_SCHEMAS: Mapping[str, Mapping[str, Mapping[str, Any]]] = {
    TOLERATE_GPU_TAINT: {"gpuTaints": GPU_TAINTS_SCHEMA, "gpuResources": GPU_RESOURCES_SCHEMA},
    WHOLE_GPU_LIMITS: {"gpuResources": GPU_RESOURCES_SCHEMA},
    SELECT_GPU_NODES: {"gpuResources": GPU_RESOURCES_SCHEMA, "nodeLabel": NODE_LABEL_SCHEMA},
    TAINTED_GPU_POOLS: {"gpuTaints": GPU_TAINTS_SCHEMA},
    DEVICE_PLUGIN_TOLERATES_POOLS: {},
}


@dataclass(frozen=True)
class RuleConfig:
    """One policy's settings, defaults applied."""

    level: str
    gpu_taints: tuple[Mapping[str, str], ...] = DEFAULT_GPU_TAINTS
    gpu_resources: tuple[str, ...] = DEFAULT_GPU_RESOURCES
    node_label: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_NODE_LABEL))


class RuleConfigError(ValueError):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid policy configuration:\n" + "\n".join(f"  - {p}" for p in problems))
        self.problems = problems


def _taints(raw: Any, where: str, problems: list[str]) -> tuple[Mapping[str, str], ...]:
    if not isinstance(raw, (list, tuple)) or not raw:
        problems.append(f"{where}: expected a non-empty list of {{key, value, effect}}, got {raw!r}")
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
            problems.append(f"{item_where}: expected {{key, value, effect}}, got {item!r}")
            continue
        key, value, effect = item.get("key"), item.get("value", ""), item.get("effect")
        key_problem = label_key_problem(key) if isinstance(key, str) else "must be a string"
        value_problem = label_value_problem(value) if isinstance(value, str) else "must be a string"
        if key_problem:
            problems.append(f"{item_where}.key: {key!r} {key_problem}")
        if value_problem:
            problems.append(f"{item_where}.value: {value!r} {value_problem}")
        if effect not in TAINT_EFFECTS:
            problems.append(f"{item_where}.effect: {effect!r} is not one of {', '.join(TAINT_EFFECTS)}")
        if not (key_problem or value_problem) and effect in TAINT_EFFECTS:
            taints.append({"key": str(key), "value": str(value), "effect": str(effect)})
    return tuple(taints) or DEFAULT_GPU_TAINTS


def _resources(raw: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if not isinstance(raw, (list, tuple)) or not raw or not all(isinstance(r, str) and r for r in raw):
        problems.append(f"{where}: expected a non-empty list of resource names, got {raw!r}")
        return DEFAULT_GPU_RESOURCES
    return tuple(raw)


def _node_label(raw: Any, where: str, problems: list[str]) -> Mapping[str, str]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), str) or not isinstance(raw.get("value"), str):
        problems.append(f"{where}: expected {{key: ..., value: ...}}, got {raw!r}")
        return DEFAULT_NODE_LABEL
    return {"key": raw["key"], "value": raw["value"]}


def parse_rule_config(raw: Mapping[str, Any] | None) -> dict[str, RuleConfig]:
    """Parse `--policy-pack-config` JSON (policy name -> level or {enforcementLevel, ...}).

    Raises RuleConfigError with every problem found.
    """
    raw = raw or {}
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        raise RuleConfigError([f"expected a JSON object of policy name -> settings, got {raw!r}"])
    for name in raw:
        if name not in POLICY_NAMES and name != "all":
            problems.append(f"{name!r} is not a policy of this pack; known: {', '.join(POLICY_NAMES)}")
    configs: dict[str, RuleConfig] = {}
    all_level = raw.get("all")
    for name in POLICY_NAMES:
        section = raw.get(name, {})
        if isinstance(section, str):
            section = {"enforcementLevel": section}
        if not isinstance(section, Mapping):
            problems.append(f"{name}: expected an object or an enforcement level, got {section!r}")
            section = {}
        level = section.get("enforcementLevel", all_level if isinstance(all_level, str) else DEFAULT_LEVELS[name])
        if level not in LEVELS:
            problems.append(f"{name}.enforcementLevel: {level!r} is not one of {', '.join(LEVELS)}")
            level = DEFAULT_LEVELS[name]
        allowed = set(CONFIG_SCHEMAS[name]) | {"enforcementLevel"}
        for key in section:
            if key not in allowed:
                problems.append(f"{name}.{key}: unknown setting; {name} takes {', '.join(sorted(allowed))}")
        configs[name] = RuleConfig(
            level=level,
            gpu_taints=_taints(section["gpuTaints"], f"{name}.gpuTaints", problems)
            if "gpuTaints" in section else DEFAULT_GPU_TAINTS,
            gpu_resources=_resources(section["gpuResources"], f"{name}.gpuResources", problems)
            if "gpuResources" in section else DEFAULT_GPU_RESOURCES,
            node_label=_node_label(section["nodeLabel"], f"{name}.nodeLabel", problems)
            if "nodeLabel" in section else DEFAULT_NODE_LABEL,
        )
    if problems:
        raise RuleConfigError(problems)
    return configs


def default_rule_config() -> dict[str, RuleConfig]:
    return parse_rule_config({})


def read_rule_config_file(path: str) -> dict[str, Any]:
    """The raw `--policy-pack-config` JSON from a file, validated (RuleConfigError otherwise)."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise RuleConfigError([f"{path}: cannot read policy config: {error}"]) from None
    parse_rule_config(raw)
    return raw
