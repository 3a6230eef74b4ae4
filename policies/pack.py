"""The Pulumi layer of the policy pack: wraps the pure rules in pulumi-policy's Policy objects.

Importing this module builds nothing that serves; `policies/__main__.py` hands `build_policies()` to
`PolicyPack`, which starts the gRPC Analyzer. Validators receive the SDK's read-only proxies, in which
reading a value unknown during preview raises `UnknownValueError`; `to_plain` turns them into plain
dicts with `UNKNOWN` markers so the rules stay pure, and a rule that could not decide is reported the
way the SDK reports it (an advisory "can't run policy during preview" with the path).
"""

from __future__ import annotations

import json
from collections import abc
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import (
    UNKNOWN_ARCHIVE_VALUE,
    UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE,
    UNKNOWN_BOOLEAN_VALUE,
    UNKNOWN_NUMBER_VALUE,
    UNKNOWN_OBJECT_VALUE,
    UNKNOWN_STRING_VALUE,
    UnknownValueError,
)

from policies.gpu_rules import (
    POD_RULES,
    Finding,
    StackResource,
    check_device_plugin_coverage,
    check_gpu_node_pool,
)
from policies.podspecs import UNKNOWN, object_identity
from policies.rule_config import (
    CONFIG_SCHEMAS,
    DEFAULT_LEVELS,
    DESCRIPTIONS,
    DEVICE_PLUGIN_TOLERATES_POOLS,
    TAINTED_GPU_POOLS,
    RuleConfig,
    parse_rule_config,
)

PACK_NAME = "gpu-aks-policies"

UNKNOWN_SENTINELS = frozenset({
    UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE, UNKNOWN_ARCHIVE_VALUE, UNKNOWN_OBJECT_VALUE,
})


def _unproxied(value: Any) -> Any:
    """The SDK's proxies hand out their plain container for the key `"__target"`; reading it directly
    skips the per-access unknown check, which `to_plain` does once itself."""
    try:
        return value["__target"]
    except (KeyError, IndexError, TypeError):
        return value


def to_plain(value: Any) -> Any:
    """Copy the SDK's proxies into plain dicts and lists; unknown preview values become UNKNOWN."""
    if isinstance(value, str):
        return UNKNOWN if value in UNKNOWN_SENTINELS else value
    if isinstance(value, abc.Mapping):
        return {key: to_plain(item) for key, item in _unproxied(value).items()}
    if isinstance(value, abc.Sequence) and not isinstance(value, bytes):
        return [to_plain(item) for item in _unproxied(value)]
    return value


@lru_cache(maxsize=64)
def _rule_config(policy: str, config_json: str) -> RuleConfig:
    return parse_rule_config({policy: json.loads(config_json)})[policy]


def rule_config(policy: str, config: Mapping[str, Any] | None) -> RuleConfig:
    """This policy's config from `Configure` (or none at all), defaults applied, parsed once."""
    section = {k: v for k, v in (config or {}).items() if k != "enforcementLevel"}
    return _rule_config(policy, json.dumps(section, sort_keys=True) if section else "{}")


def _report(findings: Sequence[Finding], report: ReportViolation, prefix: str = "") -> None:
    """Report decided findings; then, if any finding could not be decided, raise as the SDK does for
    unknown values so the engine shows an advisory naming the path."""
    undecided = None
    for finding in findings:
        if not finding.decided:
            undecided = undecided or finding
            continue
        # A stack rule blames the resource it names; a resource rule, the resource under analysis.
        report(f"{prefix}{finding.message}", finding.subject or None)
    if undecided is not None:
        raise UnknownValueError(UNKNOWN_STRING_VALUE, undecided.path.replace("[", ".").replace("]", "").split("."))


def _identity(args: ResourceValidationArgs, props: Any) -> str:
    kind, name = object_identity(props)
    return f"{kind or args.resource_type} '{name or args.name}': "


def _schema(policy: str) -> PolicyConfigSchema:
    return PolicyConfigSchema(properties={key: dict(schema) for key, schema in CONFIG_SCHEMAS[policy].items()})


def _pod_policy(name: str, rule: Callable[[Any, RuleConfig], list[Finding]]) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        # Every Kubernetes type may carry a pod spec (custom resources included); nothing else does.
        if not args.resource_type.startswith("kubernetes:") or args.resource_type.startswith("kubernetes:yaml"):
            return
        props = to_plain(args.props)
        _report(rule(props, rule_config(name, args.get_config())), report, _identity(args, props))

    return ResourceValidationPolicy(
        name=name, description=DESCRIPTIONS[name], validate=validate,
        enforcement_level=EnforcementLevel(DEFAULT_LEVELS[name]),
        config_schema=_schema(name) if CONFIG_SCHEMAS[name] else None,
    )


def _gpu_pool_policy() -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if not args.resource_type.startswith("azure-native:containerservice"):
            return
        findings = check_gpu_node_pool(args.resource_type, to_plain(args.props),
                                       rule_config(TAINTED_GPU_POOLS, args.get_config()))
        _report(findings, report)

    return ResourceValidationPolicy(
        name=TAINTED_GPU_POOLS, description=DESCRIPTIONS[TAINTED_GPU_POOLS], validate=validate,
        enforcement_level=EnforcementLevel(DEFAULT_LEVELS[TAINTED_GPU_POOLS]),
        config_schema=_schema(TAINTED_GPU_POOLS),
    )


def _device_plugin_policy() -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            StackResource(r.urn, r.resource_type, to_plain(r.props)) for r in args.resources
            if r.resource_type.startswith(("azure-native:containerservice", "kubernetes:apps/v1:DaemonSet"))
        ]
        config = rule_config(DEVICE_PLUGIN_TOLERATES_POOLS, args.get_config())
        _report(check_device_plugin_coverage(resources, config), report)

    return StackValidationPolicy(
        name=DEVICE_PLUGIN_TOLERATES_POOLS, description=DESCRIPTIONS[DEVICE_PLUGIN_TOLERATES_POOLS],
        validate=validate, enforcement_level=EnforcementLevel(DEFAULT_LEVELS[DEVICE_PLUGIN_TOLERATES_POOLS]),
    )


def build_policies() -> list[Policy]:
    return [
        *(_pod_policy(name, rule) for name, rule in POD_RULES.items()),
        _gpu_pool_policy(),
        _device_plugin_policy(),
    ]
