"""The pools of a stack config while it is parsed, as the pool model: for the checks that ask about them
(which pools the device plugin and the DRA driver serve, MIG and sharing, a queue's GPU quota, node
auto-provisioning's prerequisites and arm64 images), which are declared in their sections with
`after_document` and run once the whole document has been read, and for the defaults decided from the
pools while it is read (`devicePlugin.pools` and `migStrategy`).

Those sections sit below the pool kinds, so they reach the pools through the parse's context
(`ParseContext.pools`, set by `components.platform_settings.parse_settings`), which answers with
`Pool`s: each pool whose own section parsed without a problem, built by its kind as the program builds
it, with gpu-aks's device plugin provisionally serving every GPU pool it may serve (the served set and
the MIG strategy are what the device-plugin section decides from these). A pool whose section has
problems is reported by them, and named among `unread` so the checks across sections neither judge
it nor call it missing: every problem is still reported at once. Pure, no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from gpu_aks_policies.declarations import ListOf, Reader
from gpu_aks_policies.pools.model import Pool

from components.pools import KINDS, PoolKind
from components.settings.cluster import ClusterSettings
from components.settings.device_plugin import DevicePluginSettings
from components.settings.dra import DraSettings
from components.settings.observability import ObservabilitySettings

__all__ = ["DOCUMENT_POOLS", "DocumentPoolsOfKinds", "pool_readers"]


def pool_readers(root: Reader, kind: PoolKind) -> list[Reader]:
    """The section reader of each of the kind's pools, in config order."""
    if isinstance(kind.section, ListOf):
        return list(root.lists.get(kind.config_key, []))
    child = root.children.get(kind.config_key)
    return [child] if child is not None else []


def _clean(reader: Reader) -> bool:
    """The section parsed without a problem, nested sections and lists included."""
    return not reader.bad and all(map(_clean, reader.children.values())) and \
        all(_clean(item) for items in reader.lists.values() for item in items)


@dataclass(frozen=True)
class _Provisional:
    """What a kind's `facts` reads of the platform, before the device-plugin section decides what it serves."""

    pools: Mapping[str, tuple[Any, ...]]
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    #: Every GPU pool it may serve (a kind leaves out the pools whose plugin is managed elsewhere); the MIG
    #: strategy changes only the resource a MIG pool's pods ask for, which no check across sections reads.
    device_plugin: DevicePluginSettings = field(default_factory=lambda: DevicePluginSettings(pools=None,
                                                                                              mig_strategy="single"))
    #: No pool served through DRA: `dra.pools` is decided from these (the device plugin's default reads the raw
    #: `dra.pools`), so each GPU pool reads as gpu-aks's plugin may serve it.
    dra: DraSettings = field(default_factory=DraSettings)
    #: The network's default maxPods stands in for the cluster's: a node's allocatable (`Offer.allocatable`)
    #: is read by no check across sections.
    cluster: ClusterSettings = field(default_factory=lambda: ClusterSettings(name="", resource_group_name="",
                                                                             location=""))


@dataclass(frozen=True)
class _Read:
    pools: tuple[Pool, ...]
    unread: frozenset[str]


class DocumentPoolsOfKinds:
    """`ParseContext.pools` over a tuple of pool kinds (`KINDS`; a test may give others)."""

    def __init__(self, kinds: Sequence[PoolKind]) -> None:
        self.kinds = tuple(kinds)
        self._read: WeakKeyDictionary[Reader, _Read] = WeakKeyDictionary()

    def _of(self, root: Reader) -> _Read:
        if root not in self._read:
            view = _Provisional({})
            settings: dict[str, tuple[Any, ...]] = {}
            unread: set[str] = set()
            for kind in self.kinds:
                readers = pool_readers(root, kind)
                unread.update(str(reader.values.get("name")) for reader in readers if not _clean(reader))
                settings[kind.config_key] = tuple(kind.read(reader, {"devicePlugin": view.device_plugin})
                                                  for reader in readers if _clean(reader))
            view = _Provisional(settings)
            self._read[root] = _Read(tuple(kind.facts(pool, view) for kind in self.kinds
                                           for pool in settings[kind.config_key]), frozenset(unread))
        return self._read[root]

    def models(self, root: Reader) -> tuple[Pool, ...]:
        """Every pool whose section parsed cleanly, as the model, in `KINDS` order then config order."""
        return self._of(root).pools

    def unread(self, root: Reader) -> frozenset[str]:
        """The names of the pools whose own sections have problems (reported already)."""
        return self._of(root).unread

    def readers(self, root: Reader) -> list[Reader]:
        """Every pool's section reader, of any kind, in `KINDS` order then config order."""
        return [reader for kind in self.kinds for reader in pool_readers(root, kind)]

    def raw(self, root: Reader) -> list[Mapping[str, Any]]:
        """Every pool as written in the stack config (for a section parsed before the pools); whatever
        is not a mapping is left out (the pools' own sections report it)."""
        pools: list[Any] = []
        for kind in self.kinds:
            value = root.raw.get(kind.config_key)
            pools += value if isinstance(value, list) else [value]
        return [pool for pool in pools if isinstance(pool, Mapping)]


#: The platform's: every kind of `KINDS`.
DOCUMENT_POOLS = DocumentPoolsOfKinds(KINDS)
