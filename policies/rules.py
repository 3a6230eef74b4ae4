"""The rule registry: each rule is one declaration, and everything else derives from it.

A declaration names the rule, says what it checks (one line), its default enforcement level, where
it runs and what it judges, the config properties it takes (their JSON Schemas live in
`rule_config.PARAMETERS`) and its check function. From `RULES` come the pack's policies
(`gpu_aks_policies.pack`), the checker's rule loop and its SARIF rule metadata (`gpu_aks_policies.check`), the
config parser and its schema (`gpu_aks_policies.rule_config`), and the reference page `docs/policies.md`
(`policies_markdown()`). Each rule's samples, passing and failing manifests with the verdicts
expected of them, sit in `policies/rule_samples/<rule name>/` (`suite.yaml`, keyed by file and
object name); the tests run every rule's suite. Adding a rule is one declaration here plus its
sample folder (kube-linter's `Template{Key, Description, Params, Instantiate}`; the Gatekeeper
library's `samples/` and `suite.yaml`).

Where a rule runs (`scope`):
- "resource": the pack's `Analyze`, per resource as the engine registers it and before the step
  that creates it; the checker, per object. Every mandatory pod verdict is here.
- "stack": the pack's `AnalyzeStack`, once the program has finished, for what needs every resource
  (the device plugin's coverage of the pools; the complete-stack advisories); the checker, per object.
- "checker-only": only the manifest checker runs it (it needs the platform's outputs, `--platform`).

No Pulumi imports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .disruption import check_not_disruptible
from .documents import DocumentError, Limits, load_json, read_file
from .findings import Finding
from .pod_rules import (
    check_analyzable,
    check_gpu_limits,
    check_gpu_node_selection,
    check_gpu_tolerations,
    check_queue_admission,
)
from .podspecs import PodSpec
from .pool_rules import check_device_plugin_coverage, check_gpu_node_pool
from .rule_config import (
    ANALYZABLE,
    DEVICE_PLUGIN_TOLERATES_POOLS,
    FIT_A_POOL,
    NOT_DISRUPTIBLE,
    PARAMETERS,
    QUEUE_ADMITS,
    SELECT_GPU_NODES,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    Level,
    RuleConfig,
    RuleConfigError,
    parse_configs,
)
from .workloads import Context

if TYPE_CHECKING:
    from .fit import Platform

Scope = Literal["resource", "stack", "checker-only"]
#: What a rule judges: the pod specs of one Kubernetes object; one AKS pool resource
#: (`(resource type, props, config)`); or the stack's resources together (`(resources, config)`).
Subject = Literal["pods", "aks-pools", "stack-resources"]

SAMPLES_DIR = Path(__file__).resolve().parent / "rule_samples"


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    level: Level
    scope: Scope
    subject: Subject
    #: The config properties it takes, by name (`rule_config.PARAMETERS`).
    parameters: tuple[str, ...]
    check: Callable[..., list[Finding]]
    #: Pod rules that need the platform's outputs are called with `platform=` and `identity=`; the others
    #: take `platform=` where one is known (its GPU pools' taints, node label and GPU sharing).
    needs_platform: bool = False

    def check_pods(self, pods: Sequence[PodSpec], config: RuleConfig, context: Context,
                   platform: Platform | None = None, identity: tuple[str, str] = ("", "")) -> list[Finding]:
        """The rule on one object's pod specs (a pod rule only); nothing when it needs a platform
        and none is given."""
        if self.needs_platform:
            return self.check(pods, config, context, platform=platform, identity=identity) if platform else []
        return self.check(pods, config, context, platform=platform)

    @property
    def schema(self) -> dict[str, Mapping[str, Any]]:
        return {key: PARAMETERS[key].schema for key in self.parameters}

    @property
    def samples(self) -> Path:
        return SAMPLES_DIR / self.name


def _fit(pods: Sequence[PodSpec], config: RuleConfig, context: Context, *, platform: Platform,
         identity: tuple[str, str]) -> list[Finding]:
    from .fit import check_fit  # with a platform only: the plain check never loads the fit

    return check_fit(pods, identity[0], identity[1], platform, config, context)


_ADMISSION = ("gpuTaints", "gpuResources", "admissionPlugins", "gpuDeviceClasses", "namespaces", "gpuMarkers",
              "workloadShapes")

RULES: Mapping[str, Rule] = {rule.name: rule for rule in (
    Rule(TOLERATE_GPU_TAINT,
         "Pods that ask for GPUs tolerate the GPU node taint, or they stay Pending forever.",
         "mandatory", "resource", "pods", _ADMISSION, check_gpu_tolerations),
    Rule(WHOLE_GPU_LIMITS,
         "GPU amounts are set as limits, whole, and equal to any request, as the API server requires.",
         "mandatory", "resource", "pods", ("gpuResources", "workloadShapes"), check_gpu_limits),
    Rule(SELECT_GPU_NODES,
         "Pods that ask for GPUs select GPU nodes by label (nodeSelector or required affinity).",
         "advisory", "resource", "pods",
         ("gpuResources", "nodeLabel", "gpuDeviceClasses", "namespaces", "gpuMarkers", "workloadShapes"),
         check_gpu_node_selection),
    Rule(TAINTED_GPU_POOLS,
         "AKS node pools with GPU VM sizes carry a NoSchedule GPU taint and bounded autoscaling.",
         "mandatory", "resource", "aks-pools", ("gpuTaints",), check_gpu_node_pool),
    Rule(DEVICE_PLUGIN_TOLERATES_POOLS,
         "The NVIDIA device-plugin DaemonSets select, tolerate and can serve every GPU pool.",
         "mandatory", "stack", "stack-resources", (), check_device_plugin_coverage),
    Rule(ANALYZABLE,
         "What the GPU rules cannot see (a podSpecPatch, a claim not among the objects checked) is said.",
         "advisory", "stack", "pods", _ADMISSION, check_analyzable),
    Rule(FIT_A_POOL,
         "Every GPU pod fits at least one GPU pool of the platform (taints, selectors, GPU counts, models; on a "
         "pool that shares its GPUs, one share per container).",
         "mandatory", "checker-only", "pods",
         ("gpuResources", "admissionPlugins", "gpuDeviceClasses", "namespaces", "gpuMarkers", "workloadShapes"),
         _fit, needs_platform=True),
    Rule(NOT_DISRUPTIBLE,
         "Training pods that may land on a NAP NodePool carry karpenter.sh/do-not-disrupt: \"true\" so Karpenter "
         "leaves their node alone while they run.",
         "advisory", "checker-only", "pods",
         ("gpuResources", "admissionPlugins", "gpuDeviceClasses", "gpuMarkers", "workloadShapes"),
         check_not_disruptible, needs_platform=True),
    Rule(QUEUE_ADMITS,
         "GPU pods queued to Kueue name a LocalQueue whose ClusterQueue admits them: its objects exist, its cohorts "
         "form no cycle, it selects their namespace, covers every resource they ask for, and has a flavor whose "
         "nodeTaints and nodeLabels accept them.",
         "mandatory", "resource", "pods", _ADMISSION, check_queue_admission),
)}

#: The rules over one object's pod specs that need nothing but the objects (by name).
POD_RULES: Mapping[str, Rule] = {name: rule for name, rule in RULES.items()
                                 if rule.subject == "pods" and not rule.needs_platform}



# --- The config of every rule ------------------------------------------------------------------


def parse_rule_config(raw: Any) -> dict[str, RuleConfig]:
    """Parse `--policy-pack-config` JSON (policy name -> level or {enforcementLevel, ...}): each rule's
    section comes from its declaration here. Raises RuleConfigError with every problem found."""
    return parse_configs(raw, RULES)


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


# --- The reference page ------------------------------------------------------------------------

_WHERE = {
    "resource": "`Analyze` (each resource, before it is created)",
    "stack": "`AnalyzeStack` (after the program)",
    "checker-only": "",
}


def runs_in(rule: Rule) -> str:
    if rule.scope == "checker-only":
        return "the checker, with `--platform`"
    return _WHERE[rule.scope] + (" and the checker" if rule.subject == "pods" else "")


def policies_markdown() -> str:
    """`docs/policies.md`: every rule with its level, where it runs and its parameters."""
    lines = [
        "# The GPU policies",
        "",
        "<!-- Generated by `gpu_aks_policies.rules.policies_markdown()` from the rule declarations; do not edit. -->",
        "",
        "Each rule is one declaration in `policies/rules.py`; its samples and expected verdicts are in",
        "`policies/rule_samples/<rule>/`. Where each runs, and what stops when, is in `enforcement.md`.",
        "",
        "| rule | default level | runs in | checks |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| `{rule.name}` | {rule.level} | {runs_in(rule)} | {rule.description} |" for rule in RULES.values()]
    for rule in RULES.values():
        lines += ["", f"## `{rule.name}`", "", rule.description, "",
                  f"- Default level: **{rule.level}**", f"- Runs in: {runs_in(rule)}"]
        if not rule.parameters:
            lines.append("- Parameters: none")
            continue
        lines += ["- Parameters:", ""]
        lines += ["  | parameter | type | default | meaning |", "  | --- | --- | --- | --- |"]
        for key in rule.parameters:
            schema = PARAMETERS[key].schema
            default = json.dumps(schema.get("default"), separators=(", ", ": "))
            lines.append(f"  | `{key}` | {schema.get('type', '')} | `{default}` | {schema.get('description', '')} |")
    return "\n".join(lines) + "\n"
