"""Azure facts outside the AKS API: region names and the CPU VM series Azure sells. Pure, no Pulumi.

Neither list is in a REST model (azure-mgmt-compute has no size list, and regions come from
`az account list-locations` at run time), so both are small cited tables. They are used to refuse
what is certainly wrong (a name no region or series has, with the nearest real ones), and to warn,
not refuse, about a well-formed name they do not know: Azure adds regions and series, and a table
must never block a real one. `python -m tools.preflight` asks Azure itself.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

#: Azure public-cloud region names (`az account list-locations --query "[?metadata.regionType==
#: 'Physical'].name"`, and learn.microsoft.com/azure/reliability/regions-list, checked 2026-11).
#: Sovereign clouds (usgov*, china*) have their own lists and are not covered.
AZURE_REGIONS: tuple[str, ...] = (
    "australiacentral", "australiacentral2", "australiaeast", "australiasoutheast", "austriaeast",
    "belgiumcentral", "brazilsouth", "brazilsoutheast", "canadacentral", "canadaeast", "centralindia",
    "centralus", "chilecentral", "eastasia", "eastus", "eastus2", "francecentral", "francesouth",
    "germanynorth", "germanywestcentral", "indonesiacentral", "israelcentral", "italynorth", "japaneast",
    "japanwest", "jioindiacentral", "jioindiawest", "koreacentral", "koreasouth", "malaysiawest",
    "mexicocentral", "newzealandnorth", "northcentralus", "northeurope", "norwayeast", "norwaywest",
    "polandcentral", "qatarcentral", "southafricanorth", "southafricawest", "southcentralus", "southeastasia",
    "southindia", "spaincentral", "swedencentral", "swedensouth", "switzerlandnorth", "switzerlandwest",
    "uaecentral", "uaenorth", "uksouth", "ukwest", "westcentralus", "westeurope", "westindia", "westus",
    "westus2", "westus3",
)
#: Region names are lowercase letters and digits (the `name` of `az account list-locations`).
REGION_NAME = re.compile(r"[a-z][a-z0-9]{1,39}")


def _squashed(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def region_check(location: str) -> tuple[str | None, str | None]:
    """(problem, warning) for an Azure region name: a problem when it cannot be a region (with the
    region it most likely means), a warning when it is well-formed but not in the table."""
    if location in AZURE_REGIONS:
        return None, None
    squashed = _squashed(location)
    if squashed in AZURE_REGIONS:
        return f"{location!r} is not an Azure region name; did you mean {squashed}? (region names are lowercase, " \
               "without spaces or '-')", None
    close = difflib.get_close_matches(squashed, AZURE_REGIONS, n=3, cutoff=0.8)
    if not REGION_NAME.fullmatch(location) or close:
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        return f"{location!r} is not an Azure region; {hint}list them with `az account list-locations -o table`", None
    return None, (f"{location!r} is not a region gpu-aks knows (checked 2026-11); if it is new, go on, else list "
                  "regions with `az account list-locations -o table`")


# --- CPU VM sizes ---------------------------------------------------------------------------------

#: Azure's size naming: family, sub-family, vCPUs, constrained vCPUs, additive features, version
#: (learn.microsoft.com/azure/virtual-machines/vm-naming-conventions), e.g. `Standard_D8ds_v5`,
#: `Standard_E8-4ds_v5`. Only versioned D, E and F sizes are checked.
CPU_SIZE_NAME = re.compile(r"Standard_(?P<family>[DEF])(?P<vcpus>[0-9]+)(-[0-9]+)?(?P<features>[a-z]*)_v(?P<version>[0-9]+)",
                           re.IGNORECASE)

#: The feature letters Azure sells per general-purpose (D), memory-optimized (E) and
#: compute-optimized (F) series version (learn.microsoft.com/azure/virtual-machines/sizes/
#: general-purpose/*, memory-optimized/*, compute-optimized/* series pages, checked 2026-11).
#: "" is the plain series (Dv5 = `Standard_D8_v5`).
CPU_SERIES: Mapping[str, Mapping[int, frozenset[str]]] = {
    "D": {
        2: frozenset({"", "s"}),
        3: frozenset({"", "s"}),
        4: frozenset({"", "s", "d", "ds", "a", "as"}),
        5: frozenset({"", "s", "d", "ds", "as", "ads", "ls", "lds", "ps", "pds", "pls", "plds"}),
        6: frozenset({"s", "ds", "as", "ads", "als", "alds", "ls", "lds", "ps", "pds", "pls", "plds"}),
    },
    "E": {
        3: frozenset({"", "s"}),
        4: frozenset({"", "s", "d", "ds", "a", "as"}),
        5: frozenset({"", "s", "d", "ds", "as", "ads", "bs", "bds", "ps", "pds"}),
        6: frozenset({"s", "ds", "as", "ads", "ps", "pds"}),
    },
    "F": {
        2: frozenset({"s"}),
        6: frozenset({"as", "als", "ams"}),
    },
}


#: The vCPU count at the start of an Azure size name (`Standard_NC24ads_A100_v4`: 24, `Standard_D8ds_v5`: 8).
SIZE_VCPUS = re.compile(r"Standard_[A-Za-z]+?(\d+)")


def vcpus_in_size_name(vm_size: str) -> int | None:
    """The vCPU count Azure's size name carries (`Standard_NC24ads_A100_v4`: 24), or None."""
    match = SIZE_VCPUS.match(vm_size)
    return int(match.group(1)) if match else None


def cpu_vm_size_problem(vm_size: str) -> str | None:
    """Why Azure sells no such D/E/F size (naming the nearest real ones), or None (also for every
    size this table does not cover)."""
    match = CPU_SIZE_NAME.fullmatch(vm_size)
    if match is None:
        return None
    family = match.group("family").upper()
    features = match.group("features").lower()
    version = int(match.group("version"))
    versions = CPU_SERIES[family]
    if version in versions and features in versions[version]:
        return None
    prefix = vm_size[:match.start("version")]
    offered = [v for v in sorted(versions) if features in versions[v]]
    if offered:
        nearest = sorted(offered, key=lambda v: (abs(v - version), -v))[:2]
        sizes = ", ".join(f"{prefix}{v}" for v in sorted(nearest))
        return (f"Azure sells no {family}{features}_v{version} series ({family}{features or ''} comes in "
                f"{', '.join(f'v{v}' for v in offered)}); nearest real sizes: {sizes}")
    shown = version if version in versions else max(versions)
    letters = ", ".join(repr(f) if f else "plain" for f in sorted(versions[shown]))
    return f"Azure sells no {family}{features}_v{version} series; {family}-series v{shown} comes with: {letters}"


def did_you_mean(name: str, known: list[str], cutoff: float = 0.85) -> str | None:
    """The closest known name, case-insensitively, when one is close (`Standard_NC40ads_H100_v4` ->
    `Standard_NC40ads_H100_v5`)."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[close[0]] if close else None
