"""Everything that reaches into pulumi-policy's internals, in one place, each patch guarded.

The pack is written against pulumi-policy 1.21 (pinned in `requirements.txt`). Three things it needs
are not in the SDK's public API:

- `scope_requests`: each gRPC call (`Analyze`, `AnalyzeStack`) runs inside one request scope
  (`gpu_aks_policies.scope`), and `Configure` starts a new operation
  (`on_configure`). Patches the servicer
  class `_PolicyAnalyzerServicer`.
- `reuse_request_conversions`: within one call the SDK converts the same request once per policy
  (protobuf to dict, deserialized, wrapped in proxies); the conversions are shared inside the call's
  scope. Patches `json_format` and `unknown_checking_proxy` as `pulumi_policy.policy` names them. Its
  deserialization does not modify its input and validators only read, so sharing is safe. It is the
  one patch kept for speed: without it the pack ran at 1.26-1.76x a no-op pack as the SDK ships
  (benchmarks.analyzer_throughput, 600 resources, 2026-11-28), with it at 0.77-1.02x. The two
  other speed measures of 0.4.0 (reports built in place, the collector paused during each call) made
  no difference the benchmark could see and are gone.
- `track_secrets`: the SDK unwraps secret values before validators run. The patch records each
  request's secret texts in its scope and hands the rules `gpu_aks_policies.secrets` markers in place of the
  secret scalars, so no message prints one. Patches `deserialize_properties` as `policy` names it.

Each patch first checks the SDK's shape (the names it replaces exist and are callable, the servicer
has the methods) and returns False without touching anything when it does not: the pack then still
works, converting per policy; without `track_secrets` its messages name only the rule and the
path (`SECRETS_FALLBACK`), so a secret cannot print. Applying a patch twice is harmless.

The wire's secret and unknown markers are imported from the SDK, never copied.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .scope import remembered, request_scope, secret_texts
from .secrets import as_secret, secret_forms

try:  # the engine's wire signatures, as the SDK spells them (pulumi `sdk/go/common/resource/properties.go`)
    from pulumi_policy.deserialize import SPECIAL_SECRET_SIG, SPECIAL_SIG_KEY
except ImportError:  # pragma: no cover - an SDK that moved them: the pack then sees no secret markers
    SPECIAL_SIG_KEY = SPECIAL_SECRET_SIG = None  # type: ignore[assignment]

try:  # the SDK's unknown preview values, as the engine sends them (`pulumi_policy.proxy`)
    from pulumi_policy.proxy import (
        UNKNOWN_ARCHIVE_VALUE,
        UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE,
        UNKNOWN_BOOLEAN_VALUE,
        UNKNOWN_NUMBER_VALUE,
        UNKNOWN_OBJECT_VALUE,
        UNKNOWN_STRING_VALUE,
    )

    UNKNOWN_SENTINELS: frozenset[str] = frozenset({
        UNKNOWN_BOOLEAN_VALUE, UNKNOWN_NUMBER_VALUE, UNKNOWN_STRING_VALUE, UNKNOWN_ARRAY_VALUE,
        UNKNOWN_ASSET_VALUE, UNKNOWN_ARCHIVE_VALUE, UNKNOWN_OBJECT_VALUE})
except ImportError:  # pragma: no cover - then no request is taken as free of unknowns
    UNKNOWN_SENTINELS = frozenset()

_MARK = "gpu_aks_patched"
#: True when `track_secrets` could not be installed: the pack then prints no text from the input.
SECRETS_FALLBACK = False


def _sdk() -> Any:
    """`pulumi_policy.policy`, the module whose names the patches replace (typed Any: the patches
    check every name they touch; a test passes an object of another shape)."""
    import pulumi_policy.policy as sdk

    return sdk


def _patched(function: Any) -> bool:
    return bool(getattr(function, _MARK, False))


def _mark(function: Callable[..., Any]) -> Callable[..., Any]:
    setattr(function, _MARK, True)
    return function


# --- Request scope per gRPC call ----------------------------------------------------------------


def _scoped(method: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, request: Any, context: Any) -> Any:
        with request_scope() as scope:
            scope.plain_is_known = _holds_no_unknown(request)
            return method(self, request, context)

    return _mark(call)


#: The SDK's unknown sentinels as they are written on the wire (UTF-8 in a Struct's string values).
_UNKNOWN_BYTES = tuple(sentinel.encode() for sentinel in sorted(UNKNOWN_SENTINELS))


def _holds_no_unknown(request: Any) -> bool:
    """Whether a request's properties provably hold no unknown preview value: no sentinel among the
    bytes of their wire form (a byte search, against a walk of every node): an `Analyze` request's
    properties, or every resource's of an `AnalyzeStack` request. Any other shape answers False:
    its values are converted."""
    resources = getattr(request, "resources", None)
    if resources is not None and not hasattr(request, "properties"):
        try:
            return all(_wire_holds_no_unknown(resource.properties) for resource in resources)
        except Exception:  # any failure only means the safe path
            return False
    return _wire_holds_no_unknown(getattr(request, "properties", None))


def _wire_holds_no_unknown(properties: Any) -> bool:
    serialize = getattr(properties, "SerializeToString", None)
    if not callable(serialize) or not _UNKNOWN_BYTES:
        return False
    try:
        wire = serialize()
    except Exception:  # any failure only means the safe path
        return False
    return isinstance(wire, bytes) and not any(sentinel in wire for sentinel in _UNKNOWN_BYTES)


def scope_requests(sdk: Any = None, on_configure: Callable[[], None] | None = None) -> bool:
    """Run each `Analyze`/`AnalyzeStack` in its own request scope; call `on_configure` on each
    `Configure` (the CLI configures a pack once per operation). False when the servicer is not the
    shape this was written for (nothing is changed then)."""
    sdk = sdk or _sdk()
    servicer = getattr(sdk, "_PolicyAnalyzerServicer", None)
    methods = ("Analyze", "AnalyzeStack", "Configure")
    if servicer is None or not all(callable(getattr(servicer, name, None)) for name in methods):
        return False
    for name in ("Analyze", "AnalyzeStack"):
        if not _patched(getattr(servicer, name)):
            setattr(servicer, name, _scoped(getattr(servicer, name)))
    configure = servicer.Configure
    if on_configure is not None and not _patched(configure):
        def configured(self: Any, request: Any, context: Any) -> Any:
            response = configure(self, request, context)
            on_configure()
            return response

        servicer.Configure = _mark(configured)
    return True


# --- Shared conversions within a call ------------------------------------------------------------


class _ReusingJsonFormat:
    """`google.protobuf.json_format` as pulumi-policy uses it, converting each message once per scope."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def MessageToDict(self, message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (protobuf's name)
        if args or kwargs:
            return self._module.MessageToDict(message, *args, **kwargs)
        return remembered("message_to_dict", message, lambda: self._module.MessageToDict(message))


#: The scope entry under which a proxy's plain value (what the SDK built it over) is remembered.
PLAIN_OF_PROXY = "plain_of_proxy"


def deserialized_of(proxy: Any) -> Any:
    """The plain value (dicts and lists, unknowns as the SDK's sentinel strings, secrets marked) the
    proxy `proxy` was built over in this request, or None when it was not built by the patched
    `unknown_checking_proxy` in the open scope."""
    return remembered(PLAIN_OF_PROXY, proxy, lambda: None)


def reuse_request_conversions(sdk: Any = None) -> bool:
    """Share the request's conversions among the policies of one call (see the module docstring)."""
    sdk = sdk or _sdk()
    json_format = getattr(sdk, "json_format", None)
    proxy = getattr(sdk, "unknown_checking_proxy", None)
    if json_format is None or not callable(getattr(json_format, "MessageToDict", None)) or not callable(proxy):
        return False
    if not isinstance(json_format, _ReusingJsonFormat):
        sdk.json_format = _ReusingJsonFormat(json_format)
    if not _patched(proxy):
        # The proxy tree is built eagerly, a copy of every container; it only reads its target.
        def shared_proxy(props: Any) -> Any:
            built = remembered("proxy", props, lambda: proxy(props))
            remembered(PLAIN_OF_PROXY, built, lambda: props)  # `deserialized_of` answers with it
            return built

        sdk.unknown_checking_proxy = _mark(shared_proxy)
    return True


# --- Secrets ------------------------------------------------------------------------------------


def _is_secret_wrapper(value: Any) -> bool:
    return (SPECIAL_SIG_KEY is not None and type(value) is dict and value.get(SPECIAL_SIG_KEY) == SPECIAL_SECRET_SIG
            and "value" in value)


def secret_texts_of(props: Any) -> tuple[set[str], bool]:
    """Every text a secret scalar in `props` (the wire form, secrets wrapped) may print as, and
    whether there is any secret at all. Iterative, every node once; no cap."""
    texts: set[str] = set()
    found = False
    pending: list[tuple[Any, bool]] = [(props, False)]
    while pending:
        value, secret = pending.pop()
        if type(value) is dict:
            if _is_secret_wrapper(value):
                found = secret = True
                pending.append((value["value"], True))
                continue
            pending.extend((item, secret) for item in value.values())
            if secret:
                texts.update(key for key in value if isinstance(key, str) and key.strip())
        elif type(value) is list:
            pending.extend((item, secret) for item in value)
        elif secret:
            texts.update(secret_forms(value))
    return texts, found


def mark_secrets(props: Any) -> Any:
    """A copy of `props` in which every scalar inside a secret wrapper is a `gpu_aks_policies.secrets`
    marker (the wrapper itself stays, for the SDK to unwrap). Iterative."""
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any, bool]] = [(props, root, 0, False)]
    while pending:
        value, parent, key, secret = pending.pop()
        if type(value) is dict:
            copy: dict[Any, Any] = {}
            parent[key] = copy
            if _is_secret_wrapper(value):
                copy.update(value)
                pending.append((value["value"], copy, "value", True))
                continue
            for item_key, item in value.items():
                pending.append((item, copy, item_key, secret))
        elif type(value) is list:
            copy_list: list[Any] = [None] * len(value)
            parent[key] = copy_list
            pending.extend((item, copy_list, index, secret) for index, item in enumerate(value))
        else:
            parent[key] = as_secret(value) if secret else value
    return root[0]


def track_secrets(sdk: Any = None) -> bool:
    """Record each request's secret texts in its scope and give the rules marked secret values."""
    sdk = sdk or _sdk()
    original = getattr(sdk, "deserialize_properties", None)
    if not callable(original) or SPECIAL_SIG_KEY is None:
        return False
    if _patched(original):
        return True

    def deserialize(props: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:  # remediation asks for the SDK's own secret-preserving proxies: not shared
            secret_texts().update(secret_texts_of(props)[0])
            return original(props, *args, **kwargs)

        def scan_and_deserialize() -> Any:
            # Once per request: the SDK deserializes the same props for every policy it runs.
            texts, found = secret_texts_of(props)
            secret_texts().update(texts)
            return original(mark_secrets(props) if found else props)

        return remembered("deserialized", props, scan_and_deserialize)

    sdk.deserialize_properties = _mark(deserialize)
    return True


def install(on_configure: Callable[[], None] | None = None) -> dict[str, bool]:
    """Apply every patch (called by `__main__.py` before PolicyPack starts the servicer); which took.
    Without secret tracking the pack falls back to messages that carry no input text."""
    global SECRETS_FALLBACK
    applied = {"scope_requests": scope_requests(on_configure=on_configure),
               "reuse_request_conversions": reuse_request_conversions(),
               "track_secrets": track_secrets()}
    # Secret texts are kept in the request scope: without it they would be recorded nowhere, so the
    # fallback (messages without input text) applies when either patch is missing.
    SECRETS_FALLBACK = not (applied["track_secrets"] and applied["scope_requests"])
    return applied
