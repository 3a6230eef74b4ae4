"""Helpers the tests share: run the pod rules on whole objects, as the checker and the pack do."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gpu_aks_policies.gpu_rules import Finding
from gpu_aks_policies.rule_config import RuleConfig
from gpu_aks_policies.rules import POD_RULES, default_rule_config, parse_rule_config
from gpu_aks_policies.workloads import Context, context_of, pod_specs_of

DEFAULTS = default_rule_config()


def findings(obj: Any, policy: str, config: RuleConfig | None = None, together: Iterable[Any] = (),
             context: Context | None = None) -> list[Finding]:
    """One policy's findings on one object, with `together` checked alongside it."""
    context = context or context_of([obj, *together])
    return POD_RULES[policy].check(pod_specs_of(obj, context), config or DEFAULTS[policy], context)


def verdicts(obj: Any, config: Mapping[str, Any] | None = None, together: Iterable[Any] = ()) -> dict[str, list[str]]:
    """Policy -> paths of its decided findings, under the default config (or `config`)."""
    configs = parse_rule_config(config) if config else DEFAULTS
    return {name: [f.path for f in findings(obj, name, configs[name], together) if f.decided] for name in POD_RULES}
