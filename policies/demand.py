"""What a pod asks of GPU nodes, and which GPU amounts the API server refuses.

Shared by the rules (`pod_rules`) and the fit (`fit`): a GPU pod's demand (extended GPU resources,
DRA claims, and the markers that put it on GPU nodes without one) and the API server's own check of
GPU amounts. Below every check; imports no rule. No Pulumi imports.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

from .limits import MAX_AMOUNT, MAX_SUMMARY_PARTS
from .podspecs import (
    ABSENT,
    UNKNOWN,
    Container,
    GpuAsk,
    PodSpec,
    UndecidableError,
    asks_by_container,
    derived,
    is_gpu_resource,
)
from .quantities import QuantityError, format_amount, parse_quantity, shown
from .rule_config import RuleConfig
from .secrets import is_secret
from .workloads import Claims, Context, pod_claims


def amount_of(value: Any) -> Fraction | None:
    """A GPU amount, or None when it is not a quantity at all."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def asks_gpu(ask: GpuAsk) -> bool | None:
    """Whether a container asks the scheduler for a GPU: its request after defaulting (a limit alone
    sets the request) is more than 0. Malformed amounts count as asking; None when unknown."""
    written = ask.request if ask.request is not ABSENT else ask.limit
    if type(written) is float and math.isfinite(written):
        return written > 0  # the wire's usual amount: exact as a Fraction, so compared as it is
    if written is UNKNOWN:
        return None
    amount = amount_of(written)
    # A Fraction's sign is its numerator's: comparing with 0 goes through the numbers ABCs.
    return amount is None or amount.numerator > 0




@dataclass(frozen=True)
class GpuDemand:
    asks: tuple[GpuAsk, ...]
    claims: Claims
    #: An unknown container or amount during preview that might also ask for a GPU.
    unknown: UndecidableError | None
    #: What else puts the pod on GPU nodes (`gpuMarkers`): "annotation gpu-fraction", "container 'x'
    #: asks for volcano.sh/vgpu-number". Counted for tolerations and node selection, never for limits.
    markers: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.asks or self.claims.gpu or self.markers)

    @cached_property
    def summary(self) -> str:
        """What puts the pod on GPU nodes, for messages (the toleration and node-selection findings both
        open with it, so it is written once per pod)."""
        parts = [f"container '{ask.container.name}' asks for {ask.resource}" for ask in self.asks[:MAX_SUMMARY_PARTS]]
        parts += [f"{claim} asks for a GPU" for claim in self.claims.gpu[:MAX_SUMMARY_PARTS]]
        parts += [f"{marker} puts it on GPU nodes" for marker in self.markers[:MAX_SUMMARY_PARTS]]
        # One finding names what puts the pod on GPU nodes; a pod of 100,000 GPU containers made it
        # megabytes long. The rest are counted.
        rest = len(self.asks) + len(self.claims.gpu) + len(self.markers) - MAX_SUMMARY_PARTS
        if rest > 0:
            return ", ".join(parts[:MAX_SUMMARY_PARTS]) + f" and {rest} more"
        return ", ".join(parts)


def gpu_demand(pod: PodSpec, config: RuleConfig, context: Context) -> GpuDemand:
    # The markers' fields, not the GpuMarkers itself: a tuple of strings hashes in C, a dataclass
    # through its Python `__hash__`, and every rule asks for the demand of every pod.
    markers = config.gpu_markers
    key = ("gpu_demand", config.gpu_resources, config.gpu_device_classes, markers.annotations, markers.resources)
    return derived(pod, key, context, lambda: _gpu_demand(pod, config, context))


def _asked_patterns(config: RuleConfig) -> tuple[str, ...]:
    """The GPU resources and the marker resources in one list: one pass over each container's
    resources finds both (`asks_by_container` remembers it per pod for the rules that follow)."""
    return config.gpu_resources + config.gpu_markers.resources


def _asks(pod: PodSpec, config: RuleConfig) -> tuple[list[GpuAsk], list[GpuAsk], UndecidableError | None]:
    """The pod's asks for a GPU resource, its asks for a marker resource that is not one, and the
    first unknown container or amount that might hide another GPU ask."""
    asks: list[GpuAsk] = []
    marked: list[GpuAsk] = []
    unknown: UndecidableError | None = None
    for result in asks_by_container(pod, _asked_patterns(config)):
        if isinstance(result, UndecidableError):
            unknown = unknown or result
            continue
        for ask in result:
            if ask.container.role == "ephemeral":
                # The API server refuses `resources` on an ephemeral container ("cannot be set for an
                # Ephemeral Container": kubernetes `pkg/apis/core/validation`, validateEphemeralContainers),
                # so it never asks the scheduler for anything; ExtendedResourceToleration and the
                # generated admission policy skip it too.
                continue
            gpu = is_gpu_resource(ask.resource, config.gpu_resources)
            asking = asks_gpu(ask)
            if asking is None:
                if gpu:  # an unknown marker amount hides no GPU ask
                    unknown = unknown or UndecidableError(ask.limit_path if ask.request is ABSENT else ask.request_path)
            elif asking:
                (asks if gpu else marked).append(ask)
    return asks, marked, unknown


def _gpu_demand(pod: PodSpec, config: RuleConfig, context: Context) -> GpuDemand:
    asks, marked, unknown = _asks(pod, config)
    markers = [f"annotation {name}" for name in config.gpu_markers.annotations if name in pod.annotations]
    markers += [f"container '{ask.container.name}' asking for {ask.resource}" for ask in marked]
    return GpuDemand(tuple(asks), pod_claims(pod, context, config.gpu_device_classes), unknown, tuple(markers))


@dataclass(frozen=True)
class LimitProblem:
    """Why the API server refuses one GPU amount, and how to write it instead."""

    text: str
    advice: str

    def __str__(self) -> str:
        return f"{self.text}. {self.advice}"


@dataclass(frozen=True)
class GpuSharing:
    """What the platform offers to share a GPU, as its pools say (`fit.Platform.gpu_sharing`, with
    `--platform`): the resources its MIG pools advertise, and its pools that share each GPU between pods
    (time-slicing or MPS), each as "nvidia.com/gpu: 1 on pool notebooks (1/4 of a T4, time-sliced)". The
    fractional-GPU advice offers these only."""

    mig_resources: tuple[str, ...] = ()
    shared_pools: tuple[str, ...] = ()


def sharing_advice(sharing: GpuSharing | None) -> str:
    """How to share a GPU, as far as the platform offers it: nothing is suggested that nothing sets up
    (no time-slicing or MPS unless the platform's outputs say a pool shares its GPUs)."""
    if sharing is None:
        return ("to share a GPU, ask for a MIG partition resource (nvidia.com/mig-<profile>) where the platform has "
                "MIG pools; otherwise ask for a whole GPU")
    offers = []
    if sharing.mig_resources:
        offers.append(f"a MIG partition ({', '.join(sharing.mig_resources)})")
    offers += sharing.shared_pools
    if not offers:
        return "this platform offers no GPU sharing (no MIG or shared pools): ask for a whole GPU"
    return f"to share a GPU on this platform, ask for {' or '.join(offers)}"


#: The largest whole amount the API server can count, as an int: compared without the numbers ABCs.
_MAX_WHOLE_AMOUNT = math.floor(MAX_AMOUNT)


def _amount_problem(kind: str, resource: str, value: Any, sharing: GpuSharing | None = None) -> str | None:
    amount: Fraction | None = None
    try:
        amount = parse_quantity(value)
    except QuantityError as error:
        unreadable = error
    else:
        # Most amounts are whole and in range: nothing below, only the message, is needed for them.
        if amount.denominator == 1 and 0 <= amount.numerator <= _MAX_WHOLE_AMOUNT:
            return None
    # A secret amount is named only by its path: nothing derived from it is printed either.
    secret = is_secret(value)
    written = f"{kind}.{resource}: {shown(value)}"
    if amount is None:
        return f"has {written}, which is not a quantity" if secret else f"has {kind}.{resource}: {unreadable}"
    if amount.numerator < 0:  # a Fraction's sign is its numerator's (comparing with 0 goes through the numbers ABCs)
        return f"has {written}, a negative amount"
    if amount.denominator != 1:
        amount_text = "" if secret else f" ({format_amount(amount)} GPUs)"
        return (f"has {written}{amount_text}, a fraction; GPUs are whole devices and the API server refuses "
                f"fractions ({sharing_advice(sharing)})")
    return f"has {written}, more than the API server can count (it keeps extended resources in 64-bit thousandths)"


def _amount_text(value: Any, amount: Fraction | None, fallback: str) -> str:
    if is_secret(value) or amount is None:
        return fallback
    return format_amount(amount)


def limit_problem(ask: GpuAsk, sharing: GpuSharing | None = None) -> LimitProblem | None:
    """What the API server's `ValidateResourceRequirements` (kubernetes pkg/apis/core/validation)
    refuses for a non-overcommitable extended resource: a quantity that is not a whole, non-negative
    number; a request without a limit (at any amount, 0 included); a request that is not the limit.
    Raises UndecidableError when an amount is unknown during preview."""
    resource = ask.resource
    limit, request = ask.limit, ask.request
    # A path is joined only for an unknown amount: most asks never need theirs.
    if limit is UNKNOWN:
        raise UndecidableError(ask.limit_path)
    if request is UNKNOWN:
        raise UndecidableError(ask.request_path)
    for kind, value in (("limits", limit), ("requests", request)):
        if value is not ABSENT:
            problem = _amount_problem(kind, resource, value, sharing)
            if problem:
                return LimitProblem(problem, f"Write a whole number:\nresources:\n  limits:\n    {resource}: 1")
    if request is not ABSENT and limit is ABSENT:
        amount = amount_of(request)
        suggestion = _amount_text(request, amount, "1") if amount is not None and amount > 0 else "1"
        return LimitProblem(
            f"sets requests.{resource}: {shown(request)} without a limit; the API server refuses that at any amount, "
            f"0 included (\"Limit must be set for non overcommitable resources\")",
            f"Put the amount in limits (a limit alone also sets the request):\nresources:\n  limits:\n"
            f"    {resource}: {suggestion}")
    if request is not ABSENT and amount_of(request) != amount_of(limit):
        equal = _amount_text(limit, amount_of(limit) or Fraction(0), "<the limit>")
        return LimitProblem(
            f"has requests.{resource}: {shown(request)} but limits.{resource}: {shown(limit)}; for GPUs the API server "
            f"requires the request to equal the limit",
            f"Drop the request (the limit sets it) or write:\nresources:\n  limits:\n    {resource}: {equal}\n"
            f"  requests:\n    {resource}: {equal}")
    return None


@dataclass(frozen=True)
class AmountVerdict:
    """The API server's verdict on one GPU amount a container writes: a problem, or an unknown value
    that hides the answer during preview (`unknown`)."""

    container: Container
    ask: GpuAsk | None
    problem: LimitProblem | None = None
    unknown: UndecidableError | None = None

    @property
    def where(self) -> str:
        """The field a finding points at."""
        if self.unknown is not None:
            return self.unknown.path
        assert self.ask is not None
        return self.ask.limit_path if self.ask.limit is not ABSENT else self.ask.request_path


def amount_verdicts(pod: PodSpec, config: RuleConfig, sharing: GpuSharing | None = None) -> Iterator[AmountVerdict]:
    """Every GPU amount of the pod the API server refuses, or cannot be judged yet, as
    `gpu-limits-are-whole-numbers` and the fit both judge them: containers whose GPU amounts the
    controller writes are not judged, nor the shares `gpuMarkers.resources` names (Volcano vGPU, HAMi
    memory or cores: not counts of GPUs). `sharing`: what the platform offers instead of a fraction,
    when the platform is known."""
    for container, result in zip(pod.containers, asks_by_container(pod, _asked_patterns(config)), strict=True):
        if isinstance(result, UndecidableError):
            yield AmountVerdict(container, None, unknown=result)
            continue
        if container.limits_set_by_controller:
            continue
        for ask in result:
            if not is_gpu_resource(ask.resource, config.gpu_resources) or \
                    is_gpu_resource(ask.resource, config.gpu_markers.resources):
                continue
            try:
                problem = limit_problem(ask, sharing)
            except UndecidableError as error:
                yield AmountVerdict(container, ask, unknown=error)
                continue
            if problem:
                yield AmountVerdict(container, ask, problem)
