"""What every settings section shares: the project name, the error, the context of one parse, and the
checks several sections use (node counts, zones, surge, namespace names)."""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

from gpu_aks_policies.catalog import (  # noqa: F401 (the limits are re-exported)
    AKS_MAX_NODES_PER_CLUSTER,
    AKS_MAX_NODES_PER_POOL,
    node_count_problem,
)
from gpu_aks_policies.declarations import SECRET, Key, describe, is_whole_number, whole_as_int
from gpu_aks_policies.limits import MAX_IMAGE_CHARS, MAX_IMAGE_NAME_CHARS, MAX_SHOWN_CHARS, clipped, is_int, listed
from gpu_aks_policies.quantities import shown as quoted
from gpu_aks_policies.terminal import escape_text

from components.aks_api import API_VERSION

if TYPE_CHECKING:
    from gpu_aks_policies.declarations import Reader
    from gpu_aks_policies.pools.model import Pool

#: The Pulumi project, and the namespace of its config keys (`gpu-aks:cluster`).
PROJECT = "gpu-aks"
#: Set to an ISO date to judge Kubernetes versions as of that day (reproducible previews and tests).
TODAY_VARIABLE = "GPU_AKS_TODAY"
ZONES = ("1", "2", "3")


class SettingsError(ValueError):
    """Every problem in the stack config, each on its own line."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(
            f"the stack config has {len(self.problems)} problem(s); nothing was created:\n"
            + "\n".join(f"  - {problem}" for problem in self.problems))


@dataclass(frozen=True)
class ParseContext:
    """What one parse knows besides the `gpu-aks:*` keys."""

    stack: str
    location: Any
    today: date
    secret_sections: Collection[str] = ()
    #: The deployer's environment (`access.deployerPrincipalType`'s default reads ARM_CLIENT_ID/AZURE_CLIENT_ID).
    environ: Mapping[str, str] = field(default_factory=dict)
    #: The document's pools, as the model, for the sections parsed after them that ask about them
    #: (`components.pools.document`: the kinds sit above the sections, which never import them).
    pools: DocumentPools | None = None


class DocumentPools(Protocol):
    """The pools of the document being parsed (`components.pools.document.DocumentPoolsOfKinds`)."""

    def models(self, root: Reader) -> tuple[Pool, ...]:
        """Every pool whose own section parsed without a problem, as the model; gpu-aks's device plugin
        provisionally serves every GPU pool it may serve."""

    def unread(self, root: Reader) -> frozenset[str]:
        """The names of the pools whose own sections have problems (each reported already)."""

    def readers(self, root: Reader) -> list[Reader]:
        """Every pool's section reader, of any kind."""

    def raw(self, root: Reader) -> list[Mapping[str, Any]]:
        """Every pool as written (for a section parsed before the pools)."""


def document_pools(reader: Reader) -> DocumentPools:
    """The document's pools, from the parse's context (a context without pools has none)."""
    return reader.context.pools if reader.context.pools is not None else _NO_POOLS


class _NoPools:
    def models(self, root: Reader) -> tuple[Pool, ...]:
        return ()

    def unread(self, root: Reader) -> frozenset[str]:
        return frozenset()

    def readers(self, root: Reader) -> list[Reader]:
        return []

    def raw(self, root: Reader) -> list[Mapping[str, Any]]:
        return []


_NO_POOLS = _NoPools()


def document_gpu_pools(reader: Reader) -> tuple[dict[str, Pool], frozenset[str]]:
    """The document's GPU pools by name, and the names of the pools whose own sections have problems: a section
    that names one of those says nothing of it, since its own problems name it."""
    pools = document_pools(reader)
    return {pool.name: pool for pool in pools.models(reader.root) if pool.gpu}, pools.unread(reader.root)


def not_a_gpu_pool(name: Any, gpu_pools: Collection[str]) -> str:
    """What a section that names GPU pools (devicePlugin.pools, dra.pools, a queue's gpus) says of another name:
    the first MAX_LISTED GPU pools named, the rest counted."""
    return f"{describe(name)} is not a GPU pool; GPU pools: {listed(list(gpu_pools)) or 'none'}"


#: A container image reference as the kubelet reads it (`reference.ParseNormalizedNamed`, whose grammar is
#: distribution/distribution `reference/regexp.go`, `ReferenceRegexp`): [host[:port]/]path[:tag][@digest],
#: path components lower case. Anything else is accepted by the API server and leaves every pod of the
#: DaemonSet or Job in InvalidImageName, after the deploy. Written without the grammar's empty separator
#: (`[-]*`), which Python's backtracking matcher would take exponential time over.
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_REFERENCE = re.compile(
    rf"(?P<name>(?:(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?/)?"
    rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?")


def image_problem(value: Any) -> str | None:
    """Why `value` is not a container image reference the kubelet can pull, or None."""
    if isinstance(value, str) and len(value) <= MAX_IMAGE_CHARS:
        match = IMAGE_REFERENCE.fullmatch(value)
        if match and len(match["name"]) <= MAX_IMAGE_NAME_CHARS:
            return None
    return ("is not a container image reference like nvcr.io/nvidia/k8s-device-plugin:v0.20.0 ([registry/]path[:tag]"
            "[@digest], the path in lower case)")


def zones_problem(value: Any) -> str | None:
    ok = isinstance(value, list) and all(zone_text(zone) in ZONES for zone in value)
    return None if ok else f"must be a list of zones out of {', '.join(ZONES)}"


def zone_text(zone: Any) -> str:
    """A zone as AKS names it ("1"), from a string, an int or a whole float (the component provider's
    numbers); "" for anything else."""
    zone = whole_as_int(zone)
    return str(zone) if isinstance(zone, str) or is_int(zone) else ""


def count_or_percent_text(value: Any) -> str:
    """A node count or a percentage as AKS takes it ("1", "33%"), from a string, an int or a whole float;
    "" for anything else."""
    value = whole_as_int(value)
    return str(value) if isinstance(value, str) or is_int(value) else ""


#: A node count or a percentage past this many digits (leading zeros aside) is past every bound here.
_UPGRADE_NODES_DIGITS = 6


def count_or_percent(value: Any) -> tuple[int, bool] | None:
    """A `maxSurge` or `maxUnavailable` value as (number, is a percentage), leading zeros aside, or None
    when it is neither a count nor a percentage. A number of more than `_UPGRADE_NODES_DIGITS` digits is
    read as 10**_UPGRADE_NODES_DIGITS, past every bound: `int()` refuses more than 4300 digits, leading
    zeros included (issue 41)."""
    match = re.fullmatch(r"([0-9]+)(%?)", count_or_percent_text(value))
    if match is None:
        return None
    digits = match.group(1).lstrip("0") or "0"
    number = int(digits) if len(digits) <= _UPGRADE_NODES_DIGITS else 10**_UPGRADE_NODES_DIGITS
    return number, bool(match.group(2))


def upgrade_nodes_problem(value: Any, least: int, form: str) -> str | None:
    """Why a `maxSurge` or `maxUnavailable` value is no node count from `least` to AKS's nodes per pool, or
    no percentage from `least`% to 100%, or None. AKS surges or takes down at most the pool's nodes
    ("the maximum number of nodes used for max surge won't be higher than the number of nodes in the pool",
    learn.microsoft.com/azure/aks/upgrade-cluster): a larger value means nothing more, and one of thousands
    of digits is no number Python's `int()` reads (issue 41)."""
    parsed = count_or_percent(value)
    if parsed is None:
        return form
    number, percent = parsed
    if least <= number <= (100 if percent else AKS_MAX_NODES_PER_POOL):
        return None
    return (f"must be a node count from {least} to {AKS_MAX_NODES_PER_POOL} or a percentage from {least}% to 100%: "
            "AKS never uses more nodes than the pool has (learn.microsoft.com/azure/aks/upgrade-cluster)")


def surge_problem(value: Any) -> str | None:
    return upgrade_nodes_problem(value, 1, "must be a node count (e.g. 1) or a percentage (e.g. 33%)")


def dns_label_problem(value: Any) -> str | None:
    ok = isinstance(value, str) and re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", value) is not None
    return None if ok else ("is not a namespace name: 1-63 lowercase letters, digits and '-', "
                            "starting and ending with a letter or digit")


def count_key(name: str, doc: str, default: int, source: str) -> Key:
    # The pack's answer too (the catalog's `node_count_problem`): the two halves cannot disagree.
    return Key(name, doc, "integer", default, check=node_count_problem, convert=int, attr=_attr(name), source=source)


def _attr(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def zones_key(source: str, create_only: bool = True) -> Key:
    return Key("availabilityZones", "Availability zones of the pool's nodes.", "list of strings", [],
               check=zones_problem, convert=lambda zones: tuple(zone_text(zone) for zone in zones),
               attr="availability_zones", source=source, create_only=create_only)


def surge_key(source: str) -> Key:
    return Key("maxSurge", "Extra nodes during an upgrade: a node count or a percentage.", "string", "33%",
               check=surge_problem, convert=count_or_percent_text, attr="max_surge", source=source)


#: The AKS API version's name for the models its keys come from (the `source` of a declaration).
CLUSTER_MODEL = f"ManagedCluster (API {API_VERSION})"
POOL_MODEL = f"AgentPool (API {API_VERSION})"
MAINTENANCE_MODEL = f"MaintenanceConfiguration (API {API_VERSION})"


def _api_choice(allowed: Sequence[str]) -> Callable[[Any], str | None]:
    return lambda value: None if isinstance(value, str) and value in allowed else \
        f"is not allowed; AKS API {API_VERSION} takes {', '.join(allowed)}"


def whole_in(bounds: tuple[int, int]) -> Callable[[Any], str | None]:
    """A check: a whole number within the AKS API's bounds."""
    return lambda value: None if is_whole_number(value) and bounds[0] <= value <= bounds[1] else \
        f"is not allowed; AKS API {API_VERSION} takes a whole number from {bounds[0]} to {bounds[1]}"


def api_choice(name: str, doc: str, allowed: Sequence[str], default: Any, **kwargs: Any) -> Key:
    """A string key whose values are an AKS API enum's."""
    return Key(name, doc, "string", default, check=_api_choice(allowed), allowed=tuple(allowed), **kwargs)


def ipv4_network(value: str | None) -> ipaddress.IPv4Network | None:
    """`value` as an IPv4 network (no bits after the prefix), or None."""
    try:
        return ipaddress.IPv4Network(value, strict=True) if value else None
    except ValueError:
        return None


def is_ipv4_interface(value: str) -> bool:
    """`value` is an IPv4 address, with or without a prefix length."""
    try:
        ipaddress.IPv4Interface(value)
        return True
    except ValueError:
        return False




#: The field of a recorded output (`clusterIdentity`, `clusterNetwork`) that says whether the run exported
#: it secret. Pulumi's own marking does not survive every copy: `pulumi stack output --json
#: --show-secrets`, which `tools.preview --previous-outputs` reads, prints a secret output as plain JSON.
RECORD_SECRET = "secret"


def recorded_secret(record: Any) -> bool:
    """Whether a record read back says it was exported secret (its values stay masked in messages)."""
    return isinstance(record, Mapping) and record.get(RECORD_SECRET) is True


def shown(value: Any, masked: bool = False) -> str:
    """A recorded or configured value as a message quotes it: `[secret]` when masked, otherwise its
    repr (which escapes control characters), cut to MAX_SHOWN_CHARS (a record read back from
    the last update may hold anything); containers are not quoted."""
    if masked:
        return SECRET
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, Mapping):
        return f"an object of {len(value)} keys"
    if isinstance(value, str):
        text = repr(value[:MAX_SHOWN_CHARS + 1])
    elif value is None or isinstance(value, (bool, int, float)):
        text = repr(value) if not isinstance(value, int) or abs(value) < 10 ** 30 else "a very large number"
    else:
        text = f"a {type(value).__name__}"
    # repr escapes controls but not `##[`, which the Actions runner reads as a command anywhere in a
    # line the engine prints (a warning, a RunError).
    return escape_text(clipped(text, MAX_SHOWN_CHARS, MAX_SHOWN_CHARS))


def today(environ: Mapping[str, str] = os.environ) -> date:
    """The day Kubernetes versions are judged as of: `GPU_AKS_TODAY` where set (an ISO date), else today."""
    value = environ.get(TODAY_VARIABLE)
    if not value:
        return date.today()
    try:
        return date.fromisoformat(value)
    except ValueError:
        # Quoted short: the variable may hold anything, thousands of characters included.
        raise SettingsError([f"{TODAY_VARIABLE}={quoted(value, 40)} is not an ISO date like 2026-11-22"]) from None
