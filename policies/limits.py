"""Input limits that the owners of the APIs gpu-aks writes to enforce (AKS, Karpenter, Kubernetes, Go),
and gpu-aks's own bounds against hostile input, each with its source. No Pulumi imports: both halves
(the program's settings and the pack) read them."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeGuard

# --- Messages ----------------------------------------------------------------------------------------

#: How much of a value a message quotes. Ours, because a message names the value to find it, not to
#: print it whole: a name or a size fits in 80 characters, and input may hold megabytes in one field.
MAX_SHOWN_CHARS = 80


def clipped(text: str, most: int, kept: int, mark: str = "…") -> str:
    """`text` whole if it has at most `most` characters, else its first `kept` and `mark`: the one rule
    every message that quotes a value cuts it by (the lengths are each message's own, and unchanged)."""
    return text if len(text) <= most else text[:kept] + mark


def listed(items: Sequence[str], separator: str = ", ") -> str:
    """The first MAX_LISTED of `items` joined, the rest counted: the one rule a message that names items of the
    input by the dozen (flavors, pools, taints) lists them by, since a file may hold thousands."""
    more = f"{separator}and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return separator.join(items[:MAX_LISTED]) + more

# --- Numbers -----------------------------------------------------------------------------------------


def is_int(value: Any) -> TypeGuard[int]:
    """An int that is not a bool. Python's `bool` is an `int` (True == 1), but YAML's and JSON's `true`
    is no count, index or version; this is the one place that says so."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> TypeGuard[int | float]:
    """An int or a float that is not a bool, NaN and the infinities included: for code that sorts a value
    by its type and treats those on its own (`is_finite_number` refuses them)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite_number(value: Any) -> TypeGuard[int | float]:
    """An int or a float that is neither a bool, NaN nor infinite. An int of any size is finite:
    `math.isfinite` would convert it to a float and raise OverflowError (a YAML or JSON integer of
    hundreds of digits is legal input)."""
    return is_int(value) or (isinstance(value, float) and math.isfinite(value))


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
#: The most nodes of each kind `python -m tools.localcluster nodes --copies` registers. Ours: the cluster tier
#: uses 2; each node is an object kwok keeps Ready on a 2-core machine, and a million of them would never come up.
MAX_LOCAL_NODE_COPIES = 20

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


#: A decimal integer as Go's `strconv.ParseInt(text, 10, 64)` reads it: ASCII digits after an optional sign
#: (no `_`, no spaces, no other Unicode digits, all of which Python's `int()` takes).
_GO_INT = re.compile(r"[+-]?[0-9]+")


def go_int(text: str) -> int | None:
    """`text` as Go's `strconv.ParseInt(text, 10, 64)` reads it, or None where Go refuses it (not a decimal
    integer, or outside int64). Kubernetes reads `Gt`/`Lt` bounds this way (kubernetes/apimachinery
    pkg/labels/selector.go, `NewRequirement`), and a bound it cannot read matches no node."""
    if not isinstance(text, str) or _GO_INT.fullmatch(text) is None:
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:
        return None  # past int64, and `int()` of more than 4300 digits raises ValueError
    number = -int(digits) if text[0] == "-" else int(digits)
    return number if -2**63 <= number <= 2**63 - 1 else None


def go_duration_ns(text: str) -> int | None:
    """The nanoseconds of a whole-number Go duration ("10m", "1h30m"), or GO_MAX_DURATION_NS + 1 for
    any longer one; None if `text` is not one. Whether Go can hold it is `<= GO_MAX_DURATION_NS`."""
    total, position = 0, 0
    for part in _GO_PART.finditer(text):
        if part.start() != position:
            return None
        # Leading zeros count for nothing, as in Go's `leadingInt`; past 19 digits the part alone is
        # longer than Go can hold, and `int()` of more than 4300 digits raises ValueError (issue 41:
        # "the program failed" for `consolidateAfter: 000…01s`, which Go reads as 1s).
        digits = part.group(1).lstrip("0") or "0"
        total += (int(digits) if len(digits) <= 19 else GO_MAX_DURATION_NS + 1) * _GO_UNITS[part.group(2)]
        total = min(total, GO_MAX_DURATION_NS + 1)
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

# --- Used by components/aks_api.py ------------------------------------------------------------------

#: AKS: `ManagedClusterIdentity.userAssignedIdentities` (API 2025-09-01): "Only one user assigned identity is
#: allowed."
MAX_CONTROL_PLANE_IDENTITIES = 1
#: AKS: `maxPods` per node by network plugin: AKS's minimum is 10 and its maximum 250 for kubenet, Azure CNI
#: (node subnet, dynamic pod IP allocation) and Azure CNI Overlay alike; only the defaults differ (kubenet
#: 110, Azure CNI 30, Overlay 250) (learn.microsoft.com/azure/aks/azure-cni-overview and azure-cni-overlay,
#: "Maximum pods per node"; learn.microsoft.com/azure/aks/configure-kubenet).
MAX_PODS_BOUNDS: Mapping[str, tuple[int, int]] = {"azure": (10, 250), "kubenet": (10, 250), "none": (10, 250)}

# --- Used by components/azure_catalog.py ------------------------------------------------------------

#: Ours, because it is longer than any region name (components/azure_catalog.py REGION_NAME): a longer one is
#: quoted cut, with no did-you-mean.
MAX_REGION_CHARS = 60

# --- Used by components/gpu_cluster.py --------------------------------------------------------------

#: Ours, because config is small: these bound the walk over the inputs (hostile input is refused, never
#: recursed).
MAX_INPUT_DEPTH = 32
MAX_INPUT_NODES = 100_000
#: Ours, because a path holds map keys as the caller wrote them, and the engine prints paths and reasons as
#: they are.
MAX_PATH_CHARS = 300
MAX_REASON_CHARS = 2000
#: Ours, because the engine receives the per-property errors in one gRPC trailer (`grpc-status-details-bin`),
#: and gRPC C-core clients refuse received metadata past 16 KiB (8 KiB soft), losing every detail, so the
#: problems listed stop within this many characters and a last one counts the rest.
MAX_REPORTED_CHARS = 6000

# --- Used by components/platform_settings.py --------------------------------------------------------

#: AKS's limit on node pools per cluster (learn.microsoft.com/azure/aks/quotas-skus-regions, "Maximum node
#: pools per cluster: 100"). Past it Azure refuses the pools one by one, after a preview and a deployment that
#: registered each of them (10,000 pools took the component provider past its deadline).
MAX_NODE_POOLS = 100
#: gpu-aks's own bound on the Karpenter NodePools of the kinds that are not agent pools (Karpenter sets none,
#: and AKS's limit above does not count them): each is a NodePool and an AKSNodeClass the provider registers,
#: so a hostile list of 10,000 is refused before anything is created.
MAX_NON_AGENT_POOLS = 100

# --- Used by components/pricing.py ------------------------------------------------------------------

#: A captured answer is read up to this many pages and items. Ours, because a real region's VM answer is a few
#: thousand items at 1,000 per page.
MAX_PAGES = 1000
MAX_ITEMS = 1_000_000
#: The dearest hourly price the Retail Prices API's answer may list. Ours, because it is above any VM's in any
#: currency the API answers in (its dearest sizes cost a few hundred USD an hour, and a KRW price is about
#: 1,400 times the USD one). A price past it is not a price, and would make the cost figures overflow to inf
#: (JSON has no inf).
MAX_LISTED_HOURLY_PRICE = 10_000_000
#: At most this many capped sizes are named one by one in a table's notes; the rest are counted. Ours, because
#: an answer holds up to MAX_ITEMS rows and a note is read by a person.
MAX_NAMED_CAPS = 5

# --- Used by components/replacements.py -------------------------------------------------------------

#: Ours, because a record is small: these bound what is read of a hostile one (entries beyond are ignored).
MAX_RECORDED_POOLS = 1000
MAX_RECORDED_PROPERTIES = 100

# --- Used by components/settings/api_server.py ------------------------------------------------------

#: At most this many authorized IP ranges (AKS: "You can specify up to 200 authorized IP ranges",
#: learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges).
MAX_AUTHORIZED_RANGES = 200

# --- Used by components/settings/cluster.py ---------------------------------------------------------

#: Azure's limits on a resource's tags
#: (learn.microsoft.com/azure/azure-resource-manager/management/tag-resources, "Limitations"): 50 name-value
#: pairs; a name of at most 512 characters without the characters of components/settings/cluster.py
#: TAG_NAME_FORBIDDEN, a value of at most 256; names are case-insensitive ("Tag names are case-insensitive for
#: operations").
MAX_TAGS = 50
MAX_TAG_NAME_CHARS = 512
MAX_TAG_VALUE_CHARS = 256

# --- Used by components/settings/common.py ----------------------------------------------------------

#: Docker distribution's `NameTotalLengthMax` (reference/reference.go); ours for a whole reference, because
#: with a tag (128) and a digest (sha512: 135) a reference fits 520.
MAX_IMAGE_NAME_CHARS = 255
MAX_IMAGE_CHARS = 520

# --- Used by gpu_aks_plugin/provider.py -------------------------------------------------------------

#: The longest name taken. Ours, because a name is in every child's URN.
MAX_NAME_CHARS = 1000

# --- Used by observability/settings.py --------------------------------------------------------------

#: Azure Monitor: "You can have up to 1,000 email actions in an action group"
#: (learn.microsoft.com/azure/azure-monitor/ alerts/action-groups, "Email").
MAX_EMAILS = 1000

# --- Used by policies/admission.py ------------------------------------------------------------------

#: Tolerations named one by one in a message; the rest are counted. Ours, because a person reads it.
MAX_LISTED = 10

# --- Used by policies/contract.py -------------------------------------------------------------------

#: The dearest hourly price a pool contract may state. Ours, because it is dearer than any VM hour Azure lists
#: (the dearest GPU sizes cost about 120 USD an hour).
MAX_CONTRACT_HOURLY_PRICE = 10_000

# --- Used by policies/demand.py ---------------------------------------------------------------------

#: How many containers, claims and markers a finding's summary names. Ours, because a person reads it.
MAX_SUMMARY_PARTS = 5

# --- Used by policies/documents.py ------------------------------------------------------------------

#: Duplicate keys reported per file. Ours, because each one is an input error; a file of thousands needs no
#: more).
MAX_DUPLICATES_REPORTED = 100

# --- Used by policies/scheduling.py -----------------------------------------------------------------

#: The longest taint key and value a message quotes whole: what a valid taint can hold (k8s.io/kubernetes
#: v1.37.2 pkg/apis/core/validation/validation.go `validateNodeTaints`: the key a qualified name, a DNS-subdomain
#: prefix of at most 253 characters, '/', a name of at most 63; the value a label value, at most 63).
MAX_TAINT_KEY_CHARS = 253 + 1 + 63
MAX_TAINT_VALUE_CHARS = 63

# --- Used by policies/podspecs.py -------------------------------------------------------------------

#: Ours, because longer Kubernetes resource names (a valid one has at most 253 + 1 + 63 characters) are
#: answered afresh, not remembered: 4,096 megabyte-long names would hold gigabytes.
MAX_REMEMBERED_NAME = 320

# --- Used by policies/fields.py ---------------------------------------------------------------------

#: The most bytes (or millicores) a contract may say one node gives pods. Ours, because it is more than any VM's
#: memory or disk (Azure's largest sizes have a few TiB of memory): a figure above it is not a real node's.
MAX_NODE_AMOUNT = 2**50

# --- Used by policies/device_classes.py -------------------------------------------------------------

#: Kubernetes: a DRA CEL selector has at most 10 Ki characters (k8s.io/api v0.37.2 `resource/v1/types.go`,
#: `CELSelectorExpressionMaxLength`); the API server refuses longer ones.
MAX_CEL_SELECTOR_CHARS = 10 * 1024
#: cel-go: the parser refuses an expression nested deeper than this ("max recursion depth exceeded", "expression
#: recursion limit exceeded: 250"; cel-go v0.29.2 `parser/parser.go:54-55`, `NewParser`'s default, counted per
#: nested parenthesis and list (its `recursionListener`, :203-220) and per chained index and member selection
#: (`checkAndIncrementRecursionDepth`, :993-997).
#: k8s.io/apiserver v0.37.2 requires that cel-go (`go.mod:17`) and sets neither `ParserRecursionLimit` nor
#: `ParserExpressionSizeLimit` anywhere under `pkg/cel` (its `environment/base.go` env options), so the default holds.
MAX_CEL_NESTING = 250

# --- Used by policies/workloads/kueue.py ------------------------------------------------------------

#: The ways one queued pod may be admitted that are judged (flavor combinations across a ClusterQueue's resource
#: groups). Ours, because a real ClusterQueue has a handful of flavors and a pod asks from one or two groups.
MAX_ADMISSIONS = 16

# --- Used by policies/quantities.py -----------------------------------------------------------------

#: Ours, because no real Kubernetes quantity is longer: anything longer is refused before a digit is
#: converted.
MAX_QUANTITY_CHARS = 64
#: Kubernetes: the API server checks extended resources through their 64-bit milli-value (`MilliValue()`), so
#: an amount at or above this cannot be represented.
MAX_AMOUNT = Fraction(2**63 - 1, 1000)

# --- Used by policies/workloads/mentions.py ---------------------------------------------------------

#: Nodes visited at most. Ours, because the checker already bounds documents: an object bigger than this is
#: not searched further (this bounds the pack's inputs too).
MAX_NODES = 200_000

# --- Used by policies/workloads/shapes.py -----------------------------------------------------------

#: Ours: places a declared path may reach in one object before its walk asks whether it walks a node twice.
#: YAML aliases repeat one node under many paths (nine levels of nine aliases, and `*` at each, reach 9**9
#: places from a file of ten lines: the checker grew past 16 GB); past this, such an object is an input error,
#: not walked. A tree (every object the pack sees, and YAML without aliases) is walked whole: each of its
#: places is a node of its own, so the walk is as long as the object.
MAX_PLACES = 100_000

# --- Used by tools/preview.py -----------------------------------------------------------------------

#: The most JSON values one record the program reads back may hold. Ours, because the records gpu-aks writes
#: are small (the largest, `clusterIdentity`, is about 25 values per pool and AKS allows 100 pools: some
#: 3,000), and the SDK spends about 23 kB per value it reads back.
MAX_RECORD_VALUES = 20_000

# --- Used by tools/prices.py ------------------------------------------------------------------------

#: Ours, because it is more regions than Azure has (about 60), and each is one query of the Retail Prices API.
MAX_REGIONS = 100
