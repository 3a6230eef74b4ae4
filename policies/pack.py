"""The Pulumi layer of the policy pack: the rule declarations (`gpu_aks_policies.rules`) as pulumi-policy's
Policy objects.

Importing this module builds nothing that serves; `policies/__main__.py` installs the guarded SDK
patches (`gpu_aks_policies.sdk_patches`) and hands `build_policies()` to `PolicyPack`, which starts the gRPC
Analyzer. Validators receive the SDK's read-only proxies, in which reading a value unknown during
preview raises `UnknownValueError`; `to_plain` turns them into plain dicts with `UNKNOWN` markers so
the rules stay pure, and a rule that could not decide is reported the way the SDK reports it (an
advisory "can't run policy during preview" with the path).

When each rule runs (see `docs/enforcement.md`):
- `Analyze` (rules declared "resource"): per resource as the engine registers it, on its inputs,
  before the step that creates it. Every mandatory pod verdict is here (the toleration rule, the
  limits rule) with the advisory node selection, and the GPU pool rule. So `pulumi up
  --skip-preview` (the Automation API, pulumi/actions) stops before the object exists.
- `AnalyzeStack` (rules declared "stack"): after the program, on every resource's outputs: the
  device plugin's coverage of the pools, and the advisories that need the whole stack.

One analyzer process serves one operation, so the pack remembers, in `OPERATION`, the objects a
pod's verdict rests on as the engine registers them: Namespaces (AKS's PodTolerationRestriction and
PodNodeSelector read their annotations), ResourceClaims and ResourceClaimTemplates, training
runtimes. A pod is judged with those registered before it (a pod that uses `ns.metadata.name` is
registered after its Namespace) and with the Namespaces the config's `namespaces` names. A namespace
neither registered before nor configured is judged as Kubernetes creates one: without the admission
annotations (what the stack policy also assumed for a namespace outside the stack). Where that
assumption could be wrong, nothing is lost quietly: when the namespace itself is unknown during
preview the toleration verdict is an advisory "can't run during preview" (a namespace could add the
toleration); and at `AnalyzeStack`, a pod whose Namespace or claim was registered after it is judged
again with the complete stack, and any difference is reported as an advisory naming the object to
register first. A `Configure` starts a new operation (the CLI sends one per process).

Secrets: `gpu_aks_policies.sdk_patches.track_secrets` gives the rules marked secret values that print as
`[secret]` and records each request's secret texts; every message is redacted against them. If that
patch cannot be installed, messages carry only the rule and the path.
"""

from __future__ import annotations

import json
import re
import threading
from collections import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from . import __version__, sdk_patches
from .findings import Finding, undecided
from .podspecs import UNKNOWN, PodSpec, UndecidableError, is_mapping, object_identity
from .pool_rules import SERVING_TYPES, StackResource
from .pools import is_pool_resource
from .rule_config import ANALYZABLE, TOLERATE_GPU_TAINT, RuleConfig
from .rules import RULES, Rule, parse_rule_config
from .scope import current_scope, remembered, secret_texts
from .secrets import redact
from .terminal import escape_text
from .workloads import Context, context_of, pod_specs_of
from .workloads.context import collectors_of, namespace_of
from .workloads.dra import CLAIM_TEMPLATES, CLAIMS

PACK_NAME = "gpu-aks-policies"
PACK_VERSION = __version__

UNKNOWN_SENTINELS = sdk_patches.UNKNOWN_SENTINELS


def _unproxied(value: Any) -> Any:
    """The SDK's proxies hand out their plain container for the key `"__target"`; reading it directly
    skips the per-access unknown check, which `to_plain` does once itself."""
    try:
        return value["__target"]
    except (KeyError, IndexError, TypeError):
        return value


def to_plain(value: Any) -> Any:
    """Copy the SDK's proxies into plain dicts and lists, iteratively; unknown preview values
    become UNKNOWN."""
    def convert(item: Any) -> Any:
        if isinstance(item, str):
            return UNKNOWN if item in UNKNOWN_SENTINELS else item
        if isinstance(item, abc.Mapping):
            copy: dict[Any, Any] = {}
            pending.append((_unproxied(item), copy))
            return copy
        if isinstance(item, abc.Sequence) and not isinstance(item, bytes):
            copy_list: list[Any] = []
            pending.append((_unproxied(item), copy_list))
            return copy_list
        return item

    pending: list[tuple[Any, Any]] = []
    root = convert(value)
    while pending:
        source, target = pending.pop()
        if isinstance(target, dict):
            for key, item in source.items():
                target[key] = convert(item)
        else:
            target.extend(convert(item) for item in source)
    return root


def _plain(props: Any) -> Any:
    # The value the SDK built the proxies over is already plain: where the request holds no unknown
    # (every `pulumi up`, most previews; `sdk_patches` checks the request's bytes) it serves as it
    # is, without copying the proxy tree (the rules never change what they read). Otherwise the
    # copy puts UNKNOWN where the sentinels are.
    scope = current_scope()
    if scope is not None and scope.plain_is_known:
        deserialized = sdk_patches.deserialized_of(props)
        if type(deserialized) is dict:
            return deserialized
    return to_plain(props)


def plain_props(props: Any) -> Any:
    """`to_plain(props)`, once per request."""
    return remembered("plain", _unproxied(props), lambda: _plain(props))


# --- The operation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EarlyVerdict:
    """What `Analyze` decided for a pod-bearing resource without all of its context: the namespace
    and claims it named that were not registered yet, the toleration messages it reported, and the
    toleration rule's config it judged with (the stack policy that looks again has a config of its own)."""

    missing: frozenset[tuple[str, str, str]]
    messages: frozenset[str]
    config: RuleConfig


class Operation:
    """What one operation (one analyzer process; a `Configure` starts a new one) remembers: the
    objects pods depend on, as the engine registered them; each policy's parsed config; and the
    verdicts `Analyze` gave without part of their context."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.context = Context(complete=False)
            self.configs: dict[tuple[str, str], RuleConfig] = {}
            self.early: dict[str, EarlyVerdict] = {}
            #: policy -> (the config last given, its parsed form)
            self.last_configs: dict[str, tuple[Mapping[str, Any] | None, RuleConfig]] = {}

    def remember(self, obj: Any) -> None:
        collectors = collectors_of(obj)
        if not collectors:  # most objects: nothing a pod depends on, no lock taken
            return
        with self._lock:
            self.context.add(obj, collectors)

    def rule_config(self, policy: str, config: Mapping[str, Any] | None) -> RuleConfig:
        """This policy's config from `Configure` (or none at all), defaults applied, parsed once."""
        # The SDK hands each validator a shallow copy of the same config: equal to the last one, it
        # is answered without encoding it (an encoding per policy per request weighed on `Analyze`).
        last = self.last_configs.get(policy)
        if last is not None and last[0] == config:
            return last[1]
        parsed = self._parsed_config(policy, config)
        with self._lock:
            self.last_configs[policy] = (dict(config) if config is not None else None, parsed)
        return parsed

    def _parsed_config(self, policy: str, config: Mapping[str, Any] | None) -> RuleConfig:
        section = {k: v for k, v in (config or {}).items() if k != "enforcementLevel"}
        key = (policy, json.dumps(section, sort_keys=True, default=list) if section else "{}")
        parsed = self.configs.get(key)
        if parsed is None:
            parsed = parse_rule_config({policy: json.loads(key[1])})[policy]
            with self._lock:
                self.configs[key] = parsed
        return parsed

    def judged_early(self, urn: str, verdict: EarlyVerdict) -> None:
        # One store into the operation's table, atomic as it is (`reset` replaces the table whole): no
        # lock, which took a measurable share of every pod's `Analyze` in a namespace not registered yet.
        self.early[urn] = verdict


OPERATION = Operation()


def _missing_context(pods: Sequence[PodSpec], context: Context, config: RuleConfig) -> frozenset[tuple[str, str, str]]:
    """The Namespaces and claims the pods name that neither the operation nor the config knows yet."""
    missing = set()
    for pod in pods:
        namespace = namespace_of(pod.namespace)
        if namespace not in context.namespaces and config.namespace_annotations(namespace) is None:
            missing.add(("Namespace", "", namespace))
        for claim in pod.spec.get("resourceClaims") or [] if isinstance(pod.spec.get("resourceClaims"), list) else []:
            if not isinstance(claim, abc.Mapping):
                continue
            for key, kind, table in (("resourceClaimName", "ResourceClaim", context.table(CLAIMS)),
                                     ("resourceClaimTemplateName", "ResourceClaimTemplate", context.table(CLAIM_TEMPLATES))):
                name = claim.get(key)
                if isinstance(name, str) and (namespace, name) not in table:
                    missing.add((kind, namespace, name))
    return frozenset(missing)


# --- Reporting ----------------------------------------------------------------------------------


def _message(finding: Finding, prefix: str) -> str:
    if sdk_patches.SECRETS_FALLBACK:
        # The SDK's secrets could not be tracked: say which rule and where, nothing the input wrote.
        return f"{finding.policy} is violated at {finding.path}"
    # The Pulumi CLI prints a violation's lines as they are, into terminals and CI logs: a value the
    # input wrote (quoted with repr, which leaves `##[` and a leading `::` alone) must not act there.
    return escape_text(redact(f"{prefix}{finding.message}", secret_texts()))


def _report(findings: Sequence[Finding], report: ReportViolation, prefix: str = "") -> None:
    """Report decided findings; then, if any finding could not be decided, raise as the SDK does for
    unknown values so the engine shows an advisory naming the path."""
    first_undecided = None
    for finding in findings:
        if not finding.decided:
            first_undecided = first_undecided or finding
            continue
        # A stack rule blames the resource it names; a resource rule, the resource under analysis.
        report(_message(finding, prefix), finding.subject or None)
    if first_undecided is not None:
        path = first_undecided.path.replace("[", ".").replace("]", "").split(".")
        raise UnknownValueError(UNKNOWN_STRING_VALUE, path)


_K8S_TYPE = re.compile(r"kubernetes:(?P<group>[^:]+)/(?P<version>[^:/]+):(?P<kind>[^:]+)")


@lru_cache(maxsize=1024)
def _kubernetes_type(resource_type: str) -> tuple[str, str] | None:
    """(apiVersion, kind) a Kubernetes type token names, or None: a stack has a few dozen types, and
    every resource the pack is sent asks."""
    match = _K8S_TYPE.fullmatch(resource_type)
    if match is None:
        return None
    group = match["group"]
    return (match["version"] if group == "core" else f"{group}/{match['version']}"), match["kind"].removesuffix("Patch")


def kubernetes_object(resource_type: str, props: Any) -> dict[str, Any] | None:
    """A Kubernetes resource's properties as the object they describe (apiVersion and kind from the
    type token when the properties leave them out; `*Patch` resources as their kind)."""
    if not isinstance(props, dict) or not isinstance(resource_type, str):
        return None
    api_version_and_kind = _kubernetes_type(resource_type)
    if api_version_and_kind is None:
        return None
    obj = dict(props)
    if not isinstance(obj.get("apiVersion"), str):
        obj["apiVersion"] = api_version_and_kind[0]
    if not isinstance(obj.get("kind"), str):
        obj["kind"] = api_version_and_kind[1]
    return obj


def _identity(obj: Any, resource_type: str, name: str) -> str:
    kind, object_name = object_identity(obj)
    return f"{kind or resource_type} '{object_name or name}': "


def _schema(rule: Rule) -> PolicyConfigSchema | None:
    return PolicyConfigSchema(properties={key: dict(schema) for key, schema in rule.schema.items()}) if rule.parameters else None


def _level(rule: Rule) -> EnforcementLevel:
    return EnforcementLevel(rule.level)


def _namespace_unknown(obj: Mapping[str, Any]) -> bool:
    metadata = obj.get("metadata")
    return is_mapping(metadata) and metadata.get("namespace") is UNKNOWN


def _pods_of(args: ResourceValidationArgs, shapes: tuple[Any, ...]) -> tuple[dict[str, Any] | None, Context,
                                                                              list[PodSpec], str]:
    """The object, its pod specs and the prefix its messages open with, once per request for all the
    resource policies (per declared shapes, which every rule's config normally gives alike), judged
    among the objects registered before it (which this object joins, if pods depend on its kind)."""
    obj = kubernetes_object(args.resource_type, plain_props(args.props))
    if obj is None:
        return None, OPERATION.context, [], ""
    OPERATION.remember(obj)
    context = OPERATION.context
    return obj, context, pod_specs_of(obj, context, shapes), _identity(obj, args.resource_type, args.name)


def _pod_policy(rule: Rule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        config = OPERATION.rule_config(rule.name, args.get_config())
        shapes = config.workload_shapes
        obj, context, pods, prefix = remembered(("pods", shapes), _unproxied(args.props), lambda: _pods_of(args, shapes))
        if obj is None or not pods:
            return
        findings = rule.check(pods, config, context)
        if rule.name == TOLERATE_GPU_TAINT:
            findings = _with_namespace_caveats(findings, obj, pods, context, config, args.urn)
        _report(findings, report, prefix)

    return ResourceValidationPolicy(name=rule.name, description=rule.description, validate=validate,
                                    enforcement_level=_level(rule), config_schema=_schema(rule))


def _with_namespace_caveats(findings: list[Finding], obj: Mapping[str, Any], pods: Sequence[PodSpec],
                            context: Context, config: RuleConfig, urn: str) -> list[Finding]:
    """The toleration verdict as `Analyze` may give it: a pod whose namespace is unknown during
    preview could get the toleration from that namespace, so its violation is undecided; a verdict
    given before the pod's Namespace or claims were registered is remembered for `AnalyzeStack`."""
    if _namespace_unknown(obj):
        return [undecided(f.policy, UndecidableError("metadata.namespace")) if f.decided else f for f in findings]
    missing = _missing_context(pods, context, config)
    if missing:
        OPERATION.judged_early(urn, EarlyVerdict(missing, frozenset(f.message for f in findings if f.decided), config))
    return findings


def _pool_policy(rule: Rule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if not is_pool_resource(args.resource_type):
            return
        findings = rule.check(args.resource_type, plain_props(args.props), OPERATION.rule_config(rule.name, args.get_config()))
        _report(findings, report)

    return ResourceValidationPolicy(name=rule.name, description=rule.description, validate=validate,
                                    enforcement_level=_level(rule), config_schema=_schema(rule))


StackPods = tuple[list[tuple[Any, dict[str, Any], list[PodSpec]]], Context]


def _stack_pods(args: StackValidationArgs, shapes: tuple[Any, ...] = ()) -> StackPods:
    """The stack's Kubernetes objects with their pod specs, and the complete context they share,
    for a stack pod policy (one is declared: `gpu-workloads-are-analyzable`)."""
    objects = [(r, kubernetes_object(r.resource_type, plain_props(r.props))) for r in args.resources]
    present = [(r, obj) for r, obj in objects if obj is not None]
    context = context_of((obj for _, obj in present), complete=True)
    return [(r, obj, pod_specs_of(obj, context, shapes)) for r, obj in present], context


def _registered_late(resource: Any, pods: Sequence[PodSpec], context: Context) -> list[Finding]:
    """Advisories for a pod `Analyze` judged before its Namespace or claims were registered, where the
    complete stack gives another toleration verdict."""
    early = OPERATION.early.get(resource.urn)
    if early is None:
        return []
    late = sorted(f"{kind} '{name}'" for kind, namespace, name in early.missing
                  if (kind == "Namespace" and name in context.namespaces)
                  or (kind == "ResourceClaim" and (namespace, name) in context.table(CLAIMS))
                  or (kind == "ResourceClaimTemplate" and (namespace, name) in context.table(CLAIM_TEMPLATES)))
    if not late:
        return []
    now = {f.message for f in RULES[TOLERATE_GPU_TAINT].check(pods, early.config, context) if f.decided}
    why = (f"was judged when the engine registered it, before {', '.join(late)}, which the program registers later; "
           f"make it depend on {'them' if len(late) > 1 else 'it'} (for example metadata.namespace: "
           f"ns.metadata.name) so that its verdict counts them.")
    findings = [Finding(ANALYZABLE, "metadata", f"{why} With them, {TOLERATE_GPU_TAINT} says: {message}")
                for message in sorted(now - early.messages)]
    findings += [Finding(ANALYZABLE, "metadata", f"{why} With them, {TOLERATE_GPU_TAINT} no longer says: {message}")
                 for message in sorted(early.messages - now)]
    return findings


def _stack_pod_policy(rule: Rule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        config = OPERATION.rule_config(rule.name, args.get_config())
        present, context = _stack_pods(args, config.workload_shapes)
        findings: list[Finding] = []
        for resource, obj, pods in present:
            prefix = _identity(obj, resource.resource_type, resource.name)
            found = rule.check(pods, config, context)
            if rule.name == ANALYZABLE:
                found = [*found, *_registered_late(resource, pods, context)]
            findings.extend(Finding(f.policy, f.path, prefix + f.message, f.decided, resource.urn) for f in found)
        _report(findings, report)

    return StackValidationPolicy(name=rule.name, description=rule.description, validate=validate,
                                 enforcement_level=_level(rule), config_schema=_schema(rule))


def _stack_resources_policy(rule: Rule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            StackResource(r.urn, r.resource_type, plain_props(r.props)) for r in args.resources
            if is_pool_resource(r.resource_type) or r.resource_type in SERVING_TYPES
        ]
        _report(rule.check(resources, OPERATION.rule_config(rule.name, args.get_config())), report)

    return StackValidationPolicy(name=rule.name, description=rule.description, validate=validate,
                                 enforcement_level=_level(rule), config_schema=_schema(rule))


_BUILDERS = {
    ("resource", "pods"): _pod_policy,
    ("resource", "aks-pools"): _pool_policy,
    ("stack", "pods"): _stack_pod_policy,
    ("stack", "stack-resources"): _stack_resources_policy,
}


def build_policies() -> list[Policy]:
    """One pulumi-policy Policy per rule declaration the pack runs (not the checker-only ones)."""
    return [_BUILDERS[(rule.scope, rule.subject)](rule) for rule in RULES.values() if rule.scope != "checker-only"]
