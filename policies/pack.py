"""The Pulumi layer of the policy pack: wraps the pure rules in pulumi-policy's Policy objects.

Importing this module builds nothing that serves; `policies/__main__.py` hands `build_policies()` to
`PolicyPack`, which starts the gRPC Analyzer. Validators receive the SDK's read-only proxies, in which
reading a value unknown during preview raises `UnknownValueError`; `to_plain` turns them into plain
dicts with `UNKNOWN` markers so the rules stay pure, and a rule that could not decide is reported the
way the SDK reports it (an advisory "can't run policy during preview" with the path).

Where each rule runs:
- per resource (`Analyze`, before each resource is created): the limits rule, node selection, and
  GPU pools. They need nothing but the resource.
- per stack (`AnalyzeStack`): the toleration rule and the visibility advisory, because a pod's
  verdict rests on other resources of the stack (its Namespace's default tolerations and
  whitelist, the ResourceClaimTemplates it names), and the device-plugin coverage rule. `pulumi up`
  previews first by default, so these still stop a bad change before anything is created.

Secrets: the SDK unwraps secret values before validators see them. `track_secrets` (called by
`__main__.py`) records the secret values of each request as the SDK deserializes it, and every
message is redacted against them, so no message prints a secret-marked property.
"""

from __future__ import annotations

import json
import re
import threading
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

from . import __version__
from .gpu_rules import (
    Finding,
    StackResource,
    check_analyzable,
    check_device_plugin_coverage,
    check_gpu_limits,
    check_gpu_node_pool,
    check_gpu_node_selection,
    check_gpu_tolerations,
)
from .podspecs import UNKNOWN, PodSpec, object_identity
from .rule_config import (
    ANALYZABLE,
    CONFIG_SCHEMAS,
    DEFAULT_LEVELS,
    DESCRIPTIONS,
    DEVICE_PLUGIN_TOLERATES_POOLS,
    SELECT_GPU_NODES,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    RuleConfig,
    parse_rule_config,
)
from .workloads import Context, context_of, pod_specs_of

PACK_NAME = "gpu-aks-policies"
PACK_VERSION = __version__

UNKNOWN_SENTINELS = frozenset({
    UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_ARRAY_VALUE,
    UNKNOWN_ASSET_VALUE, UNKNOWN_ARCHIVE_VALUE, UNKNOWN_OBJECT_VALUE,
})
_SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"


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


# --- Secrets ----------------------------------------------------------------------------------

_SECRET_TEXTS: set[str] = set()
_MAX_SECRET_TEXTS = 10_000


def _collect_secrets(props: Any) -> None:
    """Remember every scalar inside a secret-marked value of a request's properties."""
    pending: list[tuple[Any, bool]] = [(props, False)]
    while pending and len(_SECRET_TEXTS) < _MAX_SECRET_TEXTS:
        value, secret = pending.pop()
        if isinstance(value, dict):
            secret = secret or value.get(_SECRET_SIG_KEY) == _SECRET_SIG
            pending.extend((item, secret) for key, item in value.items() if key != _SECRET_SIG_KEY)
        elif isinstance(value, list):
            pending.extend((item, secret) for item in value)
        elif secret and value is not None and str(value).strip():
            _SECRET_TEXTS.add(str(value))
            if isinstance(value, float) and value.is_integer():
                _SECRET_TEXTS.add(str(int(value)))


# --- One conversion per request -----------------------------------------------------------------

_this_thread = threading.local()


def once_per_request(name: str, source: Any, compute: Callable[[], Any]) -> Any:
    """`compute()` for `source`, reused while the same object comes back within one gRPC call.
    Within one `Analyze` the SDK hands every policy the same request, and within one `AnalyzeStack`
    every stack policy the same resources, converting them again for each (protobuf to dict,
    deserialized, wrapped in proxies). Entries are keyed by identity and hold their source, so an
    identity cannot be reused while they live; they live for one call only (`_one_call_of`), so
    nothing accumulates for the cyclic collector. Outside a call nothing is remembered."""
    memos = getattr(_this_thread, "memos", None)
    if memos is None:
        return compute()
    memo = memos.setdefault(name, {})
    entry = memo.get(id(source))
    if entry is not None and entry[0] is source:
        return entry[1]
    value = compute()
    memo[id(source)] = (source, value)
    return value


def _one_call_of(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, request: Any, context: Any) -> Any:
        _this_thread.memos = {}
        try:
            return method(self, request, context)
        finally:
            _this_thread.memos = None

    call.gpu_aks_scoped = True  # type: ignore[attr-defined]
    return call


def plain_props(props: Any) -> Any:
    """`to_plain(props)`, once per request."""
    return once_per_request("plain", _unproxied(props), lambda: to_plain(props))


class _ReusingJsonFormat:
    """`google.protobuf.json_format` as pulumi-policy uses it, converting each message once."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def MessageToDict(self, message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (protobuf's name)
        if args or kwargs:
            return self._module.MessageToDict(message, *args, **kwargs)
        return once_per_request("message_to_dict", message, lambda: self._module.MessageToDict(message))


def reuse_request_conversions() -> None:
    """Install the per-call reuse in pulumi-policy (called by `__main__.py`, before PolicyPack starts
    the servicer). Its deserialization does not modify its input, and validators only read what
    they get, so sharing one copy is safe. This reaches into the SDK's servicer class (pinned
    pulumi-policy 1.21); if a later SDK renames it, the pack still works, converting per policy."""
    import pulumi_policy.policy as sdk

    servicer = getattr(sdk, "_PolicyAnalyzerServicer", None)
    if servicer is None or not hasattr(sdk, "json_format"):
        return
    for method in ("Analyze", "AnalyzeStack"):
        original = getattr(servicer, method, None)
        if original is not None and not getattr(original, "gpu_aks_scoped", False):
            setattr(servicer, method, _one_call_of(original))
    if not isinstance(sdk.json_format, _ReusingJsonFormat):
        sdk.json_format = _ReusingJsonFormat(sdk.json_format)
    proxy = getattr(sdk, "unknown_checking_proxy", None)
    if proxy is not None and not getattr(proxy, "gpu_aks_scoped", False):
        # The proxy tree is built eagerly, a copy of every container; it only reads its target.
        def shared_proxy(props: Any) -> Any:
            return once_per_request("proxy", props, lambda: proxy(props))

        shared_proxy.gpu_aks_scoped = True  # type: ignore[attr-defined]
        sdk.unknown_checking_proxy = shared_proxy


def track_secrets() -> None:
    """Record secret values as the SDK deserializes each request (pulumi-policy unwraps them before
    validators run, so they cannot be told apart afterwards)."""
    import pulumi_policy.policy as sdk

    original = sdk.deserialize_properties
    if getattr(original, "gpu_aks_tracking", False):
        return

    def recording(props: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:  # remediation asks for secret-preserving proxies: not shared
            _collect_secrets(props)
            return original(props, *args, **kwargs)

        def deserialize() -> Any:
            _collect_secrets(props)
            return original(props)

        return once_per_request("deserialized", props, deserialize)

    recording.gpu_aks_tracking = True  # type: ignore[attr-defined]
    sdk.deserialize_properties = recording


def redact(message: str) -> str:
    for text in sorted(_SECRET_TEXTS, key=len, reverse=True):
        if text in message:
            message = re.sub(rf"(?<![\w.-]){re.escape(text)}(?![\w.-])", "[secret]", message)
    return message


# --- Configuration and reporting ----------------------------------------------------------------


@lru_cache(maxsize=64)
def _rule_config(policy: str, config_json: str) -> RuleConfig:
    return parse_rule_config({policy: json.loads(config_json)})[policy]


def rule_config(policy: str, config: Mapping[str, Any] | None) -> RuleConfig:
    """This policy's config from `Configure` (or none at all), defaults applied, parsed once."""
    section = {k: v for k, v in (config or {}).items() if k != "enforcementLevel"}
    return _rule_config(policy, json.dumps(section, sort_keys=True, default=list) if section else "{}")


def _report(findings: Sequence[Finding], report: ReportViolation, prefix: str = "") -> None:
    """Report decided findings; then, if any finding could not be decided, raise as the SDK does for
    unknown values so the engine shows an advisory naming the path."""
    first_undecided = None
    for finding in findings:
        if not finding.decided:
            first_undecided = first_undecided or finding
            continue
        # A stack rule blames the resource it names; a resource rule, the resource under analysis.
        report(redact(f"{prefix}{finding.message}"), finding.subject or None)
    if first_undecided is not None:
        path = first_undecided.path.replace("[", ".").replace("]", "").split(".")
        raise UnknownValueError(UNKNOWN_STRING_VALUE, path)


_K8S_TYPE = re.compile(r"kubernetes:(?P<group>[^:]+)/(?P<version>[^:/]+):(?P<kind>[^:]+)")


def kubernetes_object(resource_type: str, props: Any) -> dict[str, Any] | None:
    """A Kubernetes resource's properties as the object they describe (apiVersion and kind from the
    type token when the properties leave them out; `*Patch` resources as their kind)."""
    match = _K8S_TYPE.fullmatch(resource_type)
    if match is None or not isinstance(props, dict):
        return None
    group = match["group"]
    obj = dict(props)
    if not isinstance(obj.get("apiVersion"), str):
        obj["apiVersion"] = match["version"] if group == "core" else f"{group}/{match['version']}"
    if not isinstance(obj.get("kind"), str):
        obj["kind"] = match["kind"].removesuffix("Patch")
    return obj


def _identity(obj: Any, resource_type: str, name: str) -> str:
    kind, object_name = object_identity(obj)
    return f"{kind or resource_type} '{object_name or name}': "


def _schema(policy: str) -> PolicyConfigSchema | None:
    properties = CONFIG_SCHEMAS[policy]
    return PolicyConfigSchema(properties={key: dict(schema) for key, schema in properties.items()}) if properties else None


def _level(policy: str) -> EnforcementLevel:
    return EnforcementLevel(DEFAULT_LEVELS[policy])


PodRule = Callable[[Sequence[PodSpec], RuleConfig, Context], list[Finding]]


def _pods_of(args: ResourceValidationArgs) -> tuple[dict[str, Any] | None, Context, list[PodSpec]]:
    """The object, its context and pod specs, shared by the resource policies of one request (the
    rules keep what they derive from a pod on the PodSpec, so the next policy reuses it)."""
    obj = kubernetes_object(args.resource_type, plain_props(args.props))
    context = context_of([obj] if obj is not None else [], complete=False)
    return obj, context, (pod_specs_of(obj, context) if obj is not None else [])


StackPods = tuple[list[tuple[Any, dict[str, Any], list[PodSpec]]], Context]


def _stack_pods(args: StackValidationArgs) -> StackPods:
    """The stack's Kubernetes objects with their pod specs, and the context they share: computed once
    per `AnalyzeStack` for the stack pod policies (each gets the same resources, in the same order)."""
    sources = tuple(_unproxied(r.props) for r in args.resources)
    memos = getattr(_this_thread, "memos", None)
    cached = memos.get("stack_pods") if memos is not None else None
    if cached is not None and len(cached[0]) == len(sources) and all(a is b for a, b in zip(cached[0], sources, strict=True)):
        return cached[1]  # type: ignore[no-any-return]
    objects = [(r, kubernetes_object(r.resource_type, plain_props(r.props))) for r in args.resources]
    present = [(r, obj) for r, obj in objects if obj is not None]
    context = context_of((obj for _, obj in present), complete=True)
    value: StackPods = ([(r, obj, pod_specs_of(obj, context)) for r, obj in present], context)
    if memos is not None:
        memos["stack_pods"] = (sources, value)
    return value


def _pod_policy(name: str, rule: PodRule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        obj, context, pods = once_per_request("pods", _unproxied(args.props), lambda: _pods_of(args))
        if obj is None:
            return
        findings = rule(pods, rule_config(name, args.get_config()), context)
        _report(findings, report, _identity(obj, args.resource_type, args.name))

    return ResourceValidationPolicy(name=name, description=DESCRIPTIONS[name], validate=validate,
                                    enforcement_level=_level(name), config_schema=_schema(name))


def _stack_pod_policy(name: str, rule: PodRule) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        present, context = _stack_pods(args)
        config = rule_config(name, args.get_config())
        findings: list[Finding] = []
        for resource, obj, pods in present:
            prefix = _identity(obj, resource.resource_type, resource.name)
            findings.extend(Finding(f.policy, f.path, prefix + f.message, f.decided, resource.urn)
                            for f in rule(pods, config, context))
        _report(findings, report)

    return StackValidationPolicy(name=name, description=DESCRIPTIONS[name], validate=validate,
                                 enforcement_level=_level(name), config_schema=_schema(name))


def _gpu_pool_policy() -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if not args.resource_type.startswith("azure-native:containerservice"):
            return
        findings = check_gpu_node_pool(args.resource_type, plain_props(args.props),
                                       rule_config(TAINTED_GPU_POOLS, args.get_config()))
        _report(findings, report)

    return ResourceValidationPolicy(name=TAINTED_GPU_POOLS, description=DESCRIPTIONS[TAINTED_GPU_POOLS],
                                    validate=validate, enforcement_level=_level(TAINTED_GPU_POOLS),
                                    config_schema=_schema(TAINTED_GPU_POOLS))


def _device_plugin_policy() -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        resources = [
            StackResource(r.urn, r.resource_type, plain_props(r.props)) for r in args.resources
            if r.resource_type.startswith(("azure-native:containerservice", "kubernetes:apps/v1:DaemonSet"))
        ]
        config = rule_config(DEVICE_PLUGIN_TOLERATES_POOLS, args.get_config())
        _report(check_device_plugin_coverage(resources, config), report)

    return StackValidationPolicy(name=DEVICE_PLUGIN_TOLERATES_POOLS,
                                 description=DESCRIPTIONS[DEVICE_PLUGIN_TOLERATES_POOLS],
                                 validate=validate, enforcement_level=_level(DEVICE_PLUGIN_TOLERATES_POOLS))


def build_policies() -> list[Policy]:
    return [
        _stack_pod_policy(TOLERATE_GPU_TAINT, check_gpu_tolerations),
        _pod_policy(WHOLE_GPU_LIMITS, check_gpu_limits),
        _pod_policy(SELECT_GPU_NODES, check_gpu_node_selection),
        _gpu_pool_policy(),
        _device_plugin_policy(),
        _stack_pod_policy(ANALYZABLE, check_analyzable),
    ]
