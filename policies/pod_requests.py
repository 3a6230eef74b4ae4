"""What a pod asks of one node's CPU, memory and ephemeral storage, as kube-scheduler's `NodeResourcesFit`
counts it. Pure; no Pulumi imports.

kube-scheduler (k8s.io/kubernetes v1.37.2 `pkg/scheduler/framework/plugins/noderesources/fit.go`,
`computePodResourceRequest`) takes `resource.PodRequests` (k8s.io/component-helpers v0.37.2
`resource/helpers.go`):

- each container's requests, after the API server's defaulting: a limit without a request sets the
  request (`pkg/apis/core/v1/defaults.go` `SetDefaults_Pod`);
- the app containers summed; restartable init containers (`restartPolicy: Always`, sidecars) added to
  that sum too; then the larger, per resource, of that sum and each ordinary init container's requests
  plus the sidecars started before it (`aggregateContainerResourcesByFn`);
- pod-level `resources.requests` (PodLevelResources, beta and on since 1.34) replace the containers' CPU,
  memory and hugepages when set (`applyPodLevelResources`); pod-level limits alone default the pod-level
  requests (`defaultPodRequests`: to the containers' sum where they ask, else to the limit);
- plus `spec.overhead` (the RuntimeClass admission plugin writes it from the pod's RuntimeClass).

The filter then refuses a node whose allocatable, less what the node's pods already ask, is smaller
(`fitsRequest`), and one whose pods are at its `pods` allocatable. CPU counts in millicores and memory in
bytes, each rounded up (`Quantity.MilliValue`, `Value`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .podspecs import UNKNOWN, Container, PodSpec, as_mapping, is_mapping, pod_spec
from .quantities import QuantityError, QuantityTooLargeError, QuantityUnreadError, parse_quantity, shown

CPU, MEMORY, EPHEMERAL_STORAGE = "cpu", "memory", "ephemeral-storage"
_COUNTED = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True)
class PodRequests:
    """CPU (millicores), memory and ephemeral storage (bytes) one pod asks of its node. `unknown`: the
    path of what could not be read (a value the preview does not know yet, a quantity past what is read
    here), so the amounts may be short and a pool is not counted out on them. `refused`: each request or
    limit of these resources the API server refuses ("path: why"), so no pod is ever created. `beyond`: the
    resources a valid request of which is too large to count (its amount is then `BEYOND_ANY_NODE`)."""

    cpu_milli: int
    memory: int
    ephemeral_storage: int
    unknown: str = ""
    refused: tuple[str, ...] = ()
    beyond: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.cpu_milli or self.memory or self.ephemeral_storage)


#: What a request too large to count stands for: more than any node's allocatable, which the kubelet reports
#: as a 64-bit count (millicores for CPU, bytes for the rest).
BEYOND_ANY_NODE = Fraction(2**63)


@dataclass
class _Reading:
    """What reading the requests found besides their amounts (`PodRequests`' `unknown`, `refused`, `beyond`)."""

    unknown: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    beyond: list[str] = field(default_factory=list)


def _amount(value: Any, path: str, name: str, reading: _Reading) -> Fraction | None:
    """One request or limit, or None when it counts for nothing. The API server refuses what is not a
    quantity and a negative one (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation/validation.go
    `validateResourceRequirements` -> `ValidateResourceQuantityValue` -> `ValidateNonnegativeQuantity`); only
    the counted resources are judged here (the limits rules judge GPU amounts)."""
    judged = name in _COUNTED
    try:
        amount = parse_quantity(value)
    except QuantityTooLargeError as error:
        if error.negative and judged:
            reading.refused.append(f"{path}: {error}, and negative; the API server refuses a negative amount")
            return None
        if error.negative:
            reading.unknown.append(path)
            return None
        # A valid quantity ("1e308": apimachinery v0.37.2 pkg/api/resource/quantity.go `ParseQuantity` takes
        # any int32 exponent) larger than any node has. kube-scheduler counts it through `MilliValue()` and
        # `Value()`, which overflow int64 (`scale_int.go` `scaledValue`: "1e308" reads as 0 there), so where it
        # lands is an accident of overflow; it is judged here as what it asks for: more than any node.
        reading.beyond.append(name)
        return BEYOND_ANY_NODE
    except QuantityUnreadError:
        reading.unknown.append(path)
        return None
    except QuantityError as error:
        if judged:
            reading.refused.append(f"{path}: {error}; the API server refuses it")
        else:
            reading.unknown.append(path)
        return None
    if amount < 0 and judged:
        reading.refused.append(f"{path}: {shown(value)} is negative; the API server refuses a negative amount "
                               "(\"must be greater than or equal to 0\")")
        return None
    return amount


def _amounts(resources: Any, path: str, reading: _Reading, names: tuple[str, ...] | None = _COUNTED) -> dict[str, Fraction]:
    """The requests of a container (or of the pod) per resource, defaulted from its limits, for `names`
    (None: every resource named); what cannot be read goes to `reading`."""
    if resources is UNKNOWN:
        reading.unknown.append(path)
        return {}
    resources = as_mapping(resources)
    amounts: dict[str, Fraction] = {}
    for part in ("limits", "requests"):  # requests second: a request wins over its limit
        values = resources.get(part)
        if values is UNKNOWN:
            reading.unknown.append(f"{path}.{part}")
            continue
        values = as_mapping(values)
        for name in names if names is not None else [key for key in values if isinstance(key, str)]:
            value = values.get(name)
            if value is None:
                continue
            if value is UNKNOWN:
                reading.unknown.append(f"{path}.{part}.{name}")
                continue
            amount = _amount(value, f"{path}.{part}.{name}", name, reading)
            if amount is not None:
                amounts[name] = amount
    return amounts


def _container_amounts(container: Container, reading: _Reading, names: tuple[str, ...] | None) -> dict[str, Fraction]:
    spec = container.spec
    if spec is UNKNOWN:
        reading.unknown.append(container.path)
        return {}
    return _amounts(as_mapping(spec).get("resources"), container.resources_at, reading, names)


def _restartable(container: Container) -> bool:
    return is_mapping(container.spec) and container.spec.get("restartPolicy") == "Always"


def _add(total: dict[str, Fraction], more: Mapping[str, Fraction]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, Fraction(0)) + amount


def _larger(total: dict[str, Fraction], other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        total[name] = max(total.get(name, Fraction(0)), amount)


def _aggregate(containers: tuple[Container, ...], reading: _Reading, names: tuple[str, ...] | None) -> dict[str, Fraction]:
    """`aggregateContainerResourcesByFn` over the containers' requests of `names` (None: every resource)."""
    total: dict[str, Fraction] = {}
    for container in containers:
        if container.role == "app":
            _add(total, _container_amounts(container, reading, names))
    sidecars: dict[str, Fraction] = {}
    init: dict[str, Fraction] = {}
    for container in containers:
        if container.role != "init":
            continue
        amounts = _container_amounts(container, reading, names)
        if _restartable(container):
            _add(total, amounts)
            _add(sidecars, amounts)
            amounts = dict(sidecars)
        else:
            amounts = dict(amounts)
            _add(amounts, sidecars)
        _larger(init, amounts)
    _larger(total, init)
    return total


def _pod_level(spec: Mapping[str, Any], total: dict[str, Fraction], path: str, reading: _Reading) -> None:
    """`applyPodLevelResources` after `defaultPodRequests`: pod-level CPU and memory requests replace the
    containers' (pod-level limits alone default them; hugepages are not counted here)."""
    resources = spec.get("resources")
    if resources is None:
        return
    written = as_mapping(resources)
    requests = _amounts({"requests": written.get("requests")}, path, reading)
    limits = _amounts({"limits": written.get("limits")}, path, reading)
    for name in (CPU, MEMORY):
        if name in requests:
            total[name] = requests[name]
        elif name not in total and name in limits:
            total[name] = limits[name]


def _rounded(amounts: Mapping[str, Fraction], reading: _Reading) -> PodRequests:
    def up(value: Fraction) -> int:
        return math.ceil(value)  # never negative: `_amount` refuses a negative amount rather than count it

    return PodRequests(up(amounts.get(CPU, Fraction(0)) * 1000), up(amounts.get(MEMORY, Fraction(0))),
                       up(amounts.get(EPHEMERAL_STORAGE, Fraction(0))), reading.unknown[0] if reading.unknown else "",
                       tuple(dict.fromkeys(reading.refused)), tuple(dict.fromkeys(reading.beyond)))


def resource_requests(pod: PodSpec, names: tuple[str, ...] | None = None) -> tuple[dict[str, Fraction], list[str]]:
    """The pod's requests per resource (`names`, or every one named), exactly, as `resource.PodRequests`
    totals them; and the paths of what could not be read."""
    total, reading = _requests(pod, names)
    return total, reading.unknown


def _requests(pod: PodSpec, names: tuple[str, ...] | None) -> tuple[dict[str, Fraction], _Reading]:
    reading = _Reading()
    total = _aggregate(pod.containers, reading, names)
    spec = pod.spec if is_mapping(pod.spec) else {}
    _pod_level(spec, total, f"{pod.path}.resources" if pod.path else "resources", reading)
    overhead = spec.get("overhead")
    if overhead is not None:
        _add(total, _amounts({"requests": overhead}, f"{pod.path}.overhead", reading, names))
    return total, reading


def pod_requests(pod: PodSpec) -> PodRequests:
    """What the pod's adapter says it asks of its node (`PodRequests`), as `NodeResourcesFit` counts it."""
    return _rounded(*_requests(pod, _COUNTED))


def spec_requests(spec: Mapping[str, Any]) -> PodRequests:
    """The same for a plain pod spec (a DaemonSet's template the platform writes)."""
    return pod_requests(pod_spec(spec, "spec"))


#: Whole parts of at least this many digits are cut in messages ("10000000…(309 digits)"), as
#: `quantities.format_amount` cuts an amount: no node has that much, and 300 digits tell nobody anything.
_SHOWN_DIGITS = 24


def _whole_part(whole: int) -> str | None:
    """A whole part too long to print whole, cut; None when it is short enough."""
    if whole < 10**_SHOWN_DIGITS:
        return None
    text = str(whole)
    return f"{text[:8]}…({len(text)} digits)"


def cpus(milli: int) -> str:
    """Millicores as people read CPUs: 3860 -> "3.86", 10000 -> "10"; a count of 24 digits or more cut."""
    whole, part = divmod(milli, 1000)
    cut = _whole_part(whole)
    if cut is not None:
        return cut
    return f"{whole}.{part:03d}".rstrip("0") if part else str(whole)


def gib(amount: int) -> str:
    """Bytes in GiB for a message: "22.97 GiB" (two decimals, rounded down so a node is never flattered); a
    count of 24 digits or more cut."""
    hundredths = amount * 100 // 2**30
    whole, part = divmod(hundredths, 100)
    cut = _whole_part(whole)
    if cut is not None:
        return f"{cut} GiB"
    return f"{whole}.{part:02d}".rstrip("0").rstrip(".") + " GiB"
