"""Input limits that the owners of the APIs gpu-aks writes to enforce (AKS, Karpenter, Kubernetes, Go),
and gpu-aks's own bounds against hostile input, each with its source. No Pulumi imports: both halves
(the program's settings and the pack) read them."""

from __future__ import annotations

import math
import re
from typing import Any, TypeGuard

# --- Messages ----------------------------------------------------------------------------------------

#: How much of a value a message quotes. Ours, because a message names the value to find it, not to
#: print it whole: a name or a size fits in 80 characters, and input may hold megabytes in one field.
MAX_SHOWN_CHARS = 80

# --- Numbers -----------------------------------------------------------------------------------------


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    """An int or a float that is neither a bool, NaN nor infinite. An int of any size is finite:
    `math.isfinite` would convert it to a float and raise OverflowError (a YAML or JSON integer of
    hundreds of digits is legal input)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def is_whole(value: Any) -> TypeGuard[int | float]:
    """A finite number with no fraction (3 or the wire's 3.0)."""
    return is_finite_number(value) and (isinstance(value, int) or value.is_integer())


# --- Counts ------------------------------------------------------------------------------------------
# Two bounds, not one: a pool's GPUs or nodes and a subscription's quota are different quantities, and
# each message names its own bound, so one value for both would change what one of them accepts.

#: The most GPUs, nodes or replicas a pool contract may state. Ours, because no pool comes near it (AKS
#: caps a pool at 1,000 nodes, learn.microsoft.com/azure/aks/quotas-skus-regions): a count above it is
#: not a real contract's.
MAX_POOL_COUNT = 1_000_000
#: The largest quota figure `az vm list-usage` may give preflight. Ours, because no subscription's quota
#: or VM size comes near a billion vCPUs: a larger number is a wrong answer (and one of thousands of
#: digits would flood the report, or pass what Python converts).
MAX_QUOTA_COUNT = 10**9

# --- Go ----------------------------------------------------------------------------------------------

#: The longest Go `time.Duration`: an int64 of nanoseconds. `time.ParseDuration` refuses anything longer
#: ("invalid duration"; golang/go src/time/format.go, `ParseDuration`: `if v > 1<<63-1`), about
#: 2562047h47m16.854775807s. Karpenter (`consolidateAfter`, `expireAfter`, `terminationGracePeriod`:
#: kubernetes-sigs/karpenter pkg/apis/v1 `NillableDuration.UnmarshalJSON`) and the cluster autoscaler
#: (its duration flags) read their durations with it.
GO_MAX_DURATION_NS = 2**63 - 1
#: Nanoseconds per unit, as `time.ParseDuration` reads them (golang/go src/time/format.go `unitMap`).
_GO_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 10**9, "m": 60 * 10**9,
             "h": 3600 * 10**9}
_GO_PART = re.compile(r"([0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration_ns(text: str) -> int | None:
    """The nanoseconds of a whole-number Go duration ("10m", "1h30m"), however long; None if `text` is
    not one. Whether Go can hold it is `<= GO_MAX_DURATION_NS`."""
    total, position = 0, 0
    for part in _GO_PART.finditer(text):
        if part.start() != position:
            return None
        total += int(part.group(1)) * _GO_UNITS[part.group(2)]
        position = part.end()
    return total if text and position == len(text) else None


def go_duration_problem(text: str) -> str | None:
    """Why Go's `time.ParseDuration` refuses a duration that matched its key's pattern, or None."""
    nanoseconds = go_duration_ns(text)
    if nanoseconds is not None and nanoseconds > GO_MAX_DURATION_NS:
        return ("is longer than a Go duration can be (at most 2562047h47m16s, about 292 years; Go's "
                "time.ParseDuration refuses it)")
    return None


# --- Karpenter ---------------------------------------------------------------------------------------

#: The most labels a NodePool's nodes may carry: `spec.template.metadata.labels` has `maxProperties: 100`
#: (Azure/karpenter-provider-azure pkg/apis/crds/karpenter.sh_nodepools.yaml at 352646f5, copied in
#: tests/fixtures/karpenter/; the same in kubernetes-sigs/karpenter's CRD at 22664681).
NODEPOOL_MAX_LABELS = 100
