"""Every pool as the sections parsed around the pools read it, whatever its kind: `ParsedPool`.

The pool kinds (`components.pools.KINDS`) sit above the settings sections, yet some sections ask
about the pools while the document is parsed: which pools the device plugin may serve
(`devicePlugin`), whether any pool names a pod subnet (`cluster.networkProfile`'s default), the
subnets across pools (a root check). They read the kinds through the parse's context
(`ParseContext.pool_kinds`, set by `components.platform_settings.parse_settings`), each kind answering
with kind-neutral values, so a new kind needs no edit there. Pure, no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gpu_aks_policies.declarations import Reader


@dataclass(frozen=True)
class ParsedPool:
    """One pool, parsed (its values may hold problems, reported already): what the sections parsed
    after the pools read of it."""

    #: The pool's section reader (`reader.key`: how messages name it, `gpuPools[gput4]`).
    reader: Reader
    name: str
    #: The pool brings GPUs.
    gpu: bool = False
    #: Some node of the pool is MIG-partitioned.
    mig: bool = False
    #: Why gpu-aks's device plugin must not run on the pool's nodes (their driver and plugin are
    #: managed elsewhere: "gpuProfile.driver: None"), or None where it may.
    plugin_elsewhere: str | None = None
    #: The fewest nodes the cluster autoscaler keeps (`minCount`), or None: it did not parse, or the
    #: cluster autoscaler does not scale the pool.
    min_count: int | None = None
    #: The GPU sharing strategy the pool asks of gpu-aks's device plugin (`timeSlicing`, `mps`), or None.
    sharing: str | None = None
    #: The (minCount, maxCount) the cluster autoscaler would scale it between, as written, or None:
    #: the kind's size is not an AgentPool's count (node auto-provisioning refuses unequal ones).
    count_range: tuple[Any, Any] | None = None
    #: How to make the pool fixed-size, in its own terms (for node auto-provisioning's refusal).
    fixed_size_fix: str = "make it fixed-size, or declare the GPU capacity under gpuNodePools"
    #: The pool names a pod subnet (`podSubnetID`).
    pod_subnet: bool = False
    #: The Arm64 (Grace) VM sizes the pool may bring.
    arm64_sizes: tuple[str, ...] = ()
    #: Why NVIDIA's DRA driver cannot serve the pool's GPUs (`gpu-aks:dra`), or None where it can.
    claims_refused: str | None = None

    @property
    def key(self) -> str:
        return self.reader.key


class PoolKindAtParse(Protocol):
    """A pool kind as the sections see it while the document is parsed (`components.pools.kind.PoolKind`)."""

    #: The config key of the kind's pools: one pool (a mapping) or a list of them.
    config_key: str

    def parsed(self, root: Reader) -> tuple[ParsedPool, ...]:
        """The kind's pools parsed so far (none before its section), in config order."""


def _kinds(reader: Reader) -> Sequence[PoolKindAtParse]:
    kinds: Sequence[PoolKindAtParse] = reader.context.pool_kinds
    return kinds


def parsed_pools(reader: Reader) -> tuple[ParsedPool, ...]:
    """Every pool of every kind parsed so far, in `KINDS` order, then config order."""
    root = reader.root
    return tuple(pool for kind in _kinds(reader) for pool in kind.parsed(root))


def raw_pools(reader: Reader) -> list[Mapping[str, Any]]:
    """Every pool of every kind as written in the stack config (for a section parsed before the
    pools); whatever is not a mapping is left out (the pools' own sections report it)."""
    pools: list[Any] = []
    for kind in _kinds(reader):
        value = reader.root.raw.get(kind.config_key)
        pools += value if isinstance(value, list) else [value]
    return [pool for pool in pools if isinstance(pool, Mapping)]
