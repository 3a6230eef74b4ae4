"""Whether a pod's CPU, memory, ephemeral storage and pod slot fit one node of an offer, as kube-scheduler's
`NodeResourcesFit` filter decides it (k8s.io/kubernetes v1.37.2 `pkg/scheduler/framework/plugins/noderesources/
fit.go`, `fitsRequest`), and the reason in words when they do not. Pure; no Pulumi imports.

A node's room for a pod is its allocatable (`Offer.allocatable`: the VM less what AKS or Karpenter reserves,
`node_capacity`) less what gpu-aks's own DaemonSets on the pool ask (`Allocatable.daemon_sets`), judged on
an empty node: whether the pod could ever run there, not whether it runs now. A resource the pod does not ask
for is not judged (`fitsRequest` skips a zero request); a figure the offer does not know (None) is not judged
either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .pod_requests import PodRequests, cpus, gib


class Room(Protocol):
    """What one node of an offer gives pods (`pools.model.Allocatable.for_pods`)."""

    @property
    def cpu_milli(self) -> int | None: ...
    @property
    def memory(self) -> int | None: ...
    @property
    def ephemeral_storage(self) -> int | None: ...
    @property
    def pods(self) -> int | None: ...


@dataclass(frozen=True)
class Shortfall:
    """One resource a node of the offer has too little of for the pod."""

    resource: str
    asked: str
    gives: str


def shortfalls(asked: PodRequests, room: Room | None) -> list[Shortfall]:
    """What the pod asks that one node of the offer cannot give it ([] when it fits, or when the offer's room
    is not known)."""
    if room is None:
        return []
    found = []
    if asked.cpu_milli and room.cpu_milli is not None and asked.cpu_milli > room.cpu_milli:
        found.append(Shortfall("cpu", _asked(asked, "cpu", f"{cpus(asked.cpu_milli)} CPUs"), f"{cpus(room.cpu_milli)} CPUs"))
    if asked.memory and room.memory is not None and asked.memory > room.memory:
        found.append(Shortfall("memory", _asked(asked, "memory", f"{gib(asked.memory)} of memory"), gib(room.memory)))
    if asked.ephemeral_storage and room.ephemeral_storage is not None and asked.ephemeral_storage > room.ephemeral_storage:
        found.append(Shortfall("ephemeral-storage",
                               _asked(asked, "ephemeral-storage", f"{gib(asked.ephemeral_storage)} of ephemeral storage"),
                               f"{gib(room.ephemeral_storage)} of ephemeral storage"))
    if room.pods is not None and room.pods < 1:
        found.append(Shortfall("pods", "a pod slot", "none (its DaemonSets take every slot maxPods allows)"))
    return found


def _asked(asked: PodRequests, resource: str, amount: str) -> str:
    """What the pod asks of `resource`, in words: a request too large to count (`PodRequests.beyond`) is said as
    such, not as the stand-in amount it is counted at."""
    return f"more {_WORDS[resource]} than any node has (a request too large to count)" if resource in asked.beyond else amount


_WORDS = {"cpu": "CPUs", "memory": "memory", "ephemeral-storage": "ephemeral storage"}


def fitting(asked: PodRequests, offers: Sequence[Any]) -> list[Any]:
    """The offers one node of which has room for the pod's CPU, memory and storage."""
    return [offer for offer in offers if not shortfalls(asked, room_of(offer))]


@dataclass(frozen=True)
class _NoRoom:
    cpu_milli: int | None = None
    memory: int | None = None
    ephemeral_storage: int | None = None
    pods: int | None = None


_NO_ROOM = _NoRoom()


def room_of(offer: Any) -> Room | None:
    allocatable = getattr(offer, "allocatable", None)
    return None if allocatable is None else allocatable.for_pods


def shortfall_reasons(asked: PodRequests, offers: Sequence[Any]) -> list[str]:
    """Why no offer has room for the pod ("asks 10 CPUs, a Standard_NC4as_T4_v3 node gives pods 3.86"), one
    reason for the whole pool (nothing when one offer has room)."""
    if not offers or fitting(asked, offers):
        return []
    # The offer that comes closest: the fewest resources short, then the most CPU (a NodePool's largest size).
    offer = min(offers, key=lambda each: (len(shortfalls(asked, room_of(each))),
                                          -((room_of(each) or _NO_ROOM).cpu_milli or 0)))
    short = shortfalls(asked, room_of(offer))
    node = f"a {offer.vm_size} node" if len(offers) == 1 else f"the largest node it may bring, {offer.vm_size},"
    allocatable = offer.allocatable
    reserved = (f"its allocatable, {cpus(allocatable.cpu_millicores)} CPUs and {gib(allocatable.memory_bytes)}, less "
                "what gpu-aks's DaemonSets there ask" if allocatable.cpu_millicores is not None
                and allocatable.memory_bytes is not None else "after what the node reserves")
    return [f"it asks for {' and '.join(item.asked for item in short)}, but {node} gives pods "
            f"{' and '.join(item.gives for item in short)} ({reserved})"]


def sizes_note(asked: PodRequests, offers: Sequence[Any], landing: Sequence[Any]) -> str:
    """For a pool of several sizes of which only some have room: which sizes the pod can get ("" otherwise)."""
    left_out = [offer for offer in offers if offer not in landing and shortfalls(asked, room_of(offer))]
    if not left_out or not landing:
        return ""
    first = left_out[0]
    short = shortfalls(asked, room_of(first))
    return (f"only {', '.join(dict.fromkeys(o.vm_size for o in landing))} has room for it: "
            f"{', '.join(dict.fromkeys(o.vm_size for o in left_out))} give{'s' if len(left_out) == 1 else ''} pods "
            f"{' and '.join(item.gives for item in short)}")
