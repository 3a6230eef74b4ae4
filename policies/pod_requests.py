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
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .podspecs import UNKNOWN, Container, PodSpec, as_mapping, is_mapping
from .quantities import QuantityError, parse_quantity

CPU, MEMORY, EPHEMERAL_STORAGE = "cpu", "memory", "ephemeral-storage"
_COUNTED = (CPU, MEMORY, EPHEMERAL_STORAGE)


@dataclass(frozen=True)
class PodRequests:
    """CPU (millicores), memory and ephemeral storage (bytes) one pod asks of its node. `unknown`: the
    path of what could not be read (a value the preview does not know yet, a quantity the API server would
    refuse), so the amounts may be short and a pool is not counted out on them."""

    cpu_milli: int
    memory: int
    ephemeral_storage: int
    unknown: str = ""

    @property
    def any(self) -> bool:
        return bool(self.cpu_milli or self.memory or self.ephemeral_storage)


def _amounts(resources: Any, path: str, unknown: list[str], names: tuple[str, ...] | None = _COUNTED) -> dict[str, Fraction]:
    """The requests of a container (or of the pod) per resource, defaulted from its limits, for `names`
    (None: every resource named); what cannot be read goes to `unknown`."""
    if resources is UNKNOWN:
        unknown.append(path)
        return {}
    resources = as_mapping(resources)
    amounts: dict[str, Fraction] = {}
    for part in ("limits", "requests"):  # requests second: a request wins over its limit
        values = resources.get(part)
        if values is UNKNOWN:
            unknown.append(f"{path}.{part}")
            continue
        values = as_mapping(values)
        for name in names if names is not None else [key for key in values if isinstance(key, str)]:
            value = values.get(name)
            if value is None:
                continue
            if value is UNKNOWN:
                unknown.append(f"{path}.{part}.{name}")
                continue
            try:
                amounts[name] = parse_quantity(value)
            except QuantityError:
                unknown.append(f"{path}.{part}.{name}")
    return amounts


def _container_amounts(container: Container, unknown: list[str], names: tuple[str, ...] | None) -> dict[str, Fraction]:
    spec = container.spec
    if spec is UNKNOWN:
        unknown.append(container.path)
        return {}
    return _amounts(as_mapping(spec).get("resources"), container.resources_at, unknown, names)


def _restartable(container: Container) -> bool:
    return is_mapping(container.spec) and container.spec.get("restartPolicy") == "Always"


def _add(total: dict[str, Fraction], more: Mapping[str, Fraction]) -> None:
    for name, amount in more.items():
        total[name] = total.get(name, Fraction(0)) + amount


def _larger(total: dict[str, Fraction], other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        total[name] = max(total.get(name, Fraction(0)), amount)


def _aggregate(containers: tuple[Container, ...], unknown: list[str], names: tuple[str, ...] | None) -> dict[str, Fraction]:
    """`aggregateContainerResourcesByFn` over the containers' requests of `names` (None: every resource)."""
    total: dict[str, Fraction] = {}
    for container in containers:
        if container.role == "app":
            _add(total, _container_amounts(container, unknown, names))
    sidecars: dict[str, Fraction] = {}
    init: dict[str, Fraction] = {}
    for container in containers:
        if container.role != "init":
            continue
        amounts = _container_amounts(container, unknown, names)
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


def _pod_level(spec: Mapping[str, Any], total: dict[str, Fraction], path: str, unknown: list[str]) -> None:
    """`applyPodLevelResources` after `defaultPodRequests`: pod-level CPU and memory requests replace the
    containers' (pod-level limits alone default them; hugepages are not counted here)."""
    resources = spec.get("resources")
    if resources is None:
        return
    written = as_mapping(resources)
    requests = _amounts({"requests": written.get("requests")}, path, unknown)
    limits = _amounts({"limits": written.get("limits")}, path, unknown)
    for name in (CPU, MEMORY):
        if name in requests:
            total[name] = requests[name]
        elif name not in total and name in limits:
            total[name] = limits[name]


def _rounded(amounts: Mapping[str, Fraction], unknown: list[str]) -> PodRequests:
    def up(value: Fraction) -> int:
        return max(0, math.ceil(value))

    return PodRequests(up(amounts.get(CPU, Fraction(0)) * 1000), up(amounts.get(MEMORY, Fraction(0))),
                       up(amounts.get(EPHEMERAL_STORAGE, Fraction(0))), unknown[0] if unknown else "")


def resource_requests(pod: PodSpec, names: tuple[str, ...] | None = None) -> tuple[dict[str, Fraction], list[str]]:
    """The pod's requests per resource (`names`, or every one named), exactly, as `resource.PodRequests`
    totals them; and the paths of what could not be read."""
    unknown: list[str] = []
    total = _aggregate(pod.containers, unknown, names)
    spec = pod.spec if is_mapping(pod.spec) else {}
    _pod_level(spec, total, f"{pod.path}.resources" if pod.path else "resources", unknown)
    overhead = spec.get("overhead")
    if overhead is not None:
        _add(total, _amounts({"requests": overhead}, f"{pod.path}.overhead", unknown, names))
    return total, unknown


def pod_requests(pod: PodSpec) -> PodRequests:
    """What the pod's adapter says it asks of its node (`PodRequests`), as `NodeResourcesFit` counts it."""
    return _rounded(*resource_requests(pod, _COUNTED))


def spec_requests(spec: Mapping[str, Any]) -> PodRequests:
    """The same for a plain pod spec (a DaemonSet's template the platform writes)."""
    from .podspecs import pod_spec  # the adapters' reader: containers with their roles and paths

    return pod_requests(pod_spec(spec, "spec"))


def cpus(milli: int) -> str:
    """Millicores as people read CPUs: 3860 -> "3.86", 10000 -> "10"."""
    whole, part = divmod(milli, 1000)
    return f"{whole}.{part:03d}".rstrip("0") if part else str(whole)


def gib(amount: int) -> str:
    """Bytes in GiB for a message: "22.97 GiB" (two decimals, rounded down so a node is never flattered)."""
    hundredths = amount * 100 // 2**30
    whole, part = divmod(hundredths, 100)
    return f"{whole}.{part:02d}".rstrip("0").rstrip(".") + " GiB"

