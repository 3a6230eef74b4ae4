"""A node pool as the pool rules see it, whatever resource declares it.

Each kind module (`agentpool.py`; a karpenter.sh NodePool later) returns one `PoolView` per pool a
resource declares. Its answers are read lazily, one question at a time, because any of them may meet
a value the preview does not know yet (`UndecidableError`): a rule then reports that one pool as
undecided and judges the others. Paths are where in the resource a finding about the pool points.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..quantities import shown
from ..secrets import is_secret


def shown_count(value: Any) -> str:
    """A count as people write it: the wire's 3.0 is 3 (a secret one is named only as secret)."""
    if is_secret(value):
        return shown(value)
    return str(int(value)) if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 else shown(value)


@dataclass(frozen=True)
class Scaling:
    """How far a pool's node count may move, as its resource writes it."""

    #: The node count is bounded by the autoscaler (min and max are whole counts).
    bounded: bool
    min_count: Any
    max_count: Any
    #: The written values, in the kind's field names ("enableAutoScaling: true, minCount: 0, maxCount: 3").
    written: str
    #: How this kind bounds a pool, in its field names.
    fix: str
    #: The kind's names of the lower and upper bound.
    min_field: str = "minCount"
    max_field: str = "maxCount"


class PoolView(ABC):
    """One node pool of a resource, kind-neutral."""

    #: The pool's name (its Azure name, or `#<index>` for a nameless profile).
    name: str
    #: Where in the resource the pool is declared ("" for the whole resource).
    path: str

    @property
    def where(self) -> str:
        """Where a finding about the pool points in its resource."""
        return self.path or self.taints_path

    @property
    @abstractmethod
    def taints_path(self) -> str:
        """Where the pool's taints are written."""

    def taint_fix(self, taint: Mapping[str, str]) -> str:
        """How to give the pool `taint`, in the kind's own field names. The default writes the
        Kubernetes Taint object at `taints_path` (a karpenter.sh NodePool's `spec.template.spec.taints`);
        an AgentPool writes AKS's `nodeTaints` strings instead."""
        value = taint.get("value") or ""
        fields = f"key: {taint['key']}, " + (f"value: {value}, " if value else "") + f"effect: {taint['effect']}"
        return f"{self.taints_path}: [{{{fields}}}]"

    @abstractmethod
    def vm_sizes(self) -> tuple[str, ...]:
        """The VM sizes its nodes may have (one for an AgentPool; none when not written as text)."""

    @abstractmethod
    def taints(self) -> tuple[list[dict[str, str]], list[str]]:
        """The taints its nodes carry, those the platform adds included (AKS's Spot taint), and the
        syntax problems of those written."""

    @abstractmethod
    def scaling(self) -> Scaling: ...

    @abstractmethod
    def node_labels(self) -> Mapping[str, str]:
        """The labels its nodes carry: those written plus those the platform always adds."""

    @abstractmethod
    def mig(self) -> bool:
        """Its GPUs are partitioned with MIG."""

    @abstractmethod
    def served_by_nvidia_plugin(self) -> bool:
        """A self-installed NVIDIA device plugin must serve it: NVIDIA GPUs whose driver the platform
        installs and whose plugin nothing else manages."""
