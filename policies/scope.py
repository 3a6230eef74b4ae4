"""The one per-request cache scope: what is derived while one request is answered, and nothing longer.

A request is one gRPC call of the pack (`Analyze`, `AnalyzeStack`) or one object of the checker.
Within it the same inputs come back many times: the SDK hands every policy the same request and
converts it again for each, and the pod rules run one after another on the same pods (each needs
their GPU asks, demand and admitted form). `request_scope()` opens a scope for the current thread
(a `contextvars` variable, so the SDK's thread pool keeps requests apart); `remembered()` computes
a value once per (name, source) inside it. Entries are keyed by identity and hold their source, so
an identity cannot be reused while they live; they die with the scope, so nothing accumulates.
Outside a scope nothing is remembered: every call computes.

The scope also holds the request's secret texts (`secret_texts()`): the scalars the engine marked
secret in this request. They are per request, without a cap, and gone when it ends.

Pure: no Pulumi imports.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")


class RequestScope:
    """What one request has derived, keyed by (name, id(source)), and its secret texts."""

    __slots__ = ("entries", "secrets", "plain_is_known")

    def __init__(self) -> None:
        self.entries: dict[tuple[Any, int], tuple[Any, Any]] = {}
        self.secrets: set[str] = set()
        #: Set by the pack's SDK patch when the request provably holds no unknown preview value, so
        #: its plain properties need no conversion (`gpu_aks_policies.pack.plain_props`).
        self.plain_is_known = False


_CURRENT: ContextVar[RequestScope | None] = ContextVar("gpu_aks_request_scope", default=None)


class _OpenScope:
    """`with request_scope():` as a plain context manager: the checker opens one per object, where a
    generator-based one costs a measurable share of the run."""

    __slots__ = ("_token",)

    def __enter__(self) -> RequestScope:
        current = _CURRENT.get()
        if current is not None:
            self._token = None  # nested: reuse the open scope, and leave it open
            return current
        scope = RequestScope()
        self._token = _CURRENT.set(scope)
        return scope

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)


def request_scope() -> _OpenScope:
    """Open a scope for one request (nested calls reuse the open one)."""
    return _OpenScope()


def current_scope() -> RequestScope | None:
    return _CURRENT.get()


def remembered(name: Any, source: Any, compute: Callable[[], T]) -> T:
    """`compute()` for `source`, once per open scope; computed every time outside one."""
    scope = _CURRENT.get()
    if scope is None:
        return compute()
    key = (name, id(source))
    entry = scope.entries.get(key)
    if entry is not None and entry[0] is source:
        return entry[1]  # type: ignore[no-any-return]
    value = compute()
    scope.entries[key] = (source, value)
    return value


def secret_texts() -> set[str]:
    """The open scope's secret texts (an empty, throwaway set outside a scope)."""
    scope = _CURRENT.get()
    return scope.secrets if scope is not None else set()
