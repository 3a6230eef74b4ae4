"""`record`: the dataclass the rules build per request, frozen where it is checked and cheap where it runs.

A frozen dataclass's `__init__` assigns each field through `object.__setattr__`, which costs about
3.7 times a plain assignment (0.89 µs against 0.24 µs for a seven-field `Container` on CPython
3.11). The pack builds some fifteen such values for every resource it is asked about (containers,
the pod spec, GPU asks, the demand, the admitted pod, findings), so frozen construction alone was
about a tenth of what the rules add to an `Analyze` call.

So a `record` is frozen to the type checker (`dataclass_transform(frozen_default=True)`: mypy,
which `make lint` runs, refuses any assignment to a field) and, at run time, a plain dataclass with
the hash a frozen one has (`unsafe_hash=True`: findings are de-duplicated by hash). Nothing in the
repository assigns to a record's field; the type check holds that.

`computed_once` is `functools.cached_property` as Python 3.12 has it (python/cpython gh-87634 removed
the lock): CPython 3.11's takes a lock on every first read, which cost more than the value it guarded
(a finding's summary of what puts a pod on GPU nodes, written once per pod).

Pure: no Pulumi imports.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, dataclass_transform

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[T]) -> type[T]:
    """`@dataclass(frozen=True)` to the type checker, a plain hashable dataclass at run time."""
    return dataclass(unsafe_hash=True)(cls)


class _ComputedOnce(Generic[T]):
    """A non-data descriptor: the first read computes the value and stores it in the instance's
    `__dict__`, which every later read finds first. No lock: a race computes the same value twice."""

    def __init__(self, compute: Callable[[Any], T]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self._name] = self._compute(instance)
        return value


if TYPE_CHECKING:  # the type checker knows cached_property's types; at run time, the lock-free one
    from functools import cached_property as computed_once
else:
    computed_once = _ComputedOnce
