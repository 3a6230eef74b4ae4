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
from dataclasses import dataclass

from gpu_aks_policies.limits import MAX_REGION_CHARS

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
    if len(location) > MAX_REGION_CHARS:
        # Quoted whole, a megabyte-long value filled the message (and the provider's gRPC trailer).
        return (f"{location[:MAX_REGION_CHARS]!r}…({len(location)} characters) is not an Azure region; list them with "
                "`az account list-locations -o table`"), None
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


# --- Local disks: where an Ephemeral OS disk can go -------------------------------------------------

#: Sources of the disk sizes below:
#: - `TEMP_SOURCE`: the "Temp Disk Size (GiB)" column of each series' page on Microsoft Learn
#:   (MicrosoftDocs/azure-compute-docs `articles/virtual-machines/sizes/gpu-accelerated/ncast4v3-series.md`,
#:   `nca100v4-series.md`, `ncadsh100v5-series.md`, `sizes/general-purpose/ddsv5-series.md`);
#: - `CACHE_SOURCE`: `CachedDiskBytes` of the Azure Resource SKUs API (`az vm list-skus`), as captured in
#:   Azure/karpenter-provider-azure `pkg/fake/zz_generated.sku.southcentralus.go` (generated 2025-06-03);
#:   the Learn pages no longer list the cache. `0`: the size has no cache disk.
TEMP_SOURCE = "Microsoft Learn VM size pages, Temp Disk Size (GiB)"
CACHE_SOURCE = "Azure Resource SKUs API CachedDiskBytes (Azure/karpenter-provider-azure pkg/fake, 2025-06-03)"


@dataclass(frozen=True)
class LocalDisks:
    """A VM size's local disks in GiB. AKS places an Ephemeral OS disk in the VM's cache or on its
    temp (resource) disk, so it must fit in the larger of the two ("Size of Ephemeral OS disk depends
    on the local storage (cache disk, or temp disk) available on the VM", learn.microsoft.com/azure/
    virtual-machines/ephemeral-os-disks-faq; AKS refuses an explicit Ephemeral request that does not fit,
    learn.microsoft.com/azure/aks/concepts-storage, "Ephemeral OS disk": "If a user explicitly requested
    ephemeral OS, they would receive a validation error").

    `cache_gib`: the cache, when a source gives it (0: none). Otherwise `cache_at_most` may bound it by a
    larger size of the same series whose cache is known (`cache_bound_by`): Azure sizes a series' cache
    with its vCPUs (every series table that lists the cache grows with the size, e.g. Dsv3's 50, 100, 200
    ... GiB in MicrosoftDocs/azure-docs `includes/auto-updated-vm-sizes/dsv3.md`), so a smaller size has
    no more. Neither: the limit is not known, and a size above the temp disk only gets a warning."""

    temp_gib: int
    cache_gib: int | None = None
    cache_at_most: int | None = None
    cache_bound_by: str = ""

    @property
    def ephemeral_limit_gib(self) -> int | None:
        """The largest Ephemeral OS disk the size takes, when the cache is known or bounded."""
        cache = self.cache_gib if self.cache_gib is not None else self.cache_at_most
        return None if cache is None else max(self.temp_gib, cache)


_GIB = 1024 ** 3
LOCAL_DISKS: Mapping[str, LocalDisks] = {size.lower(): disks for size, disks in {
    # NCasT4_v3: temp 176/352/352/2816 GiB; NC16as_T4_v3's cache is 154618822656 bytes (144 GiB), which
    # bounds the cache of the smaller NC4as and NC8as.
    "Standard_NC4as_T4_v3": LocalDisks(176, cache_at_most=154618822656 // _GIB, cache_bound_by="Standard_NC16as_T4_v3"),
    "Standard_NC8as_T4_v3": LocalDisks(352, cache_at_most=154618822656 // _GIB, cache_bound_by="Standard_NC16as_T4_v3"),
    "Standard_NC16as_T4_v3": LocalDisks(352, 154618822656 // _GIB),
    "Standard_NC64as_T4_v3": LocalDisks(2816),
    # NC A100 v4: temp 64/128/256 GiB; NC24ads_A100_v4's cache is 274877906944 bytes (256 GiB), so
    # a 256 GiB Ephemeral OS disk fits there although its temp disk has 64.
    "Standard_NC24ads_A100_v4": LocalDisks(64, 274877906944 // _GIB),
    "Standard_NC48ads_A100_v4": LocalDisks(128),
    "Standard_NC96ads_A100_v4": LocalDisks(256),
    # NC H100 v5: temp 3576/7152 GiB, above the API's 2048 GiB maximum for osDiskSizeGB.
    "Standard_NC40ads_H100_v5": LocalDisks(3576),
    "Standard_NC80adis_H100_v5": LocalDisks(7152),
    # Ddsv5 (the system and CPU pools' default sizes): temp 75 to 3600 GiB, no cache disk (the v5
    # 'd' sizes report no CachedDiskBytes, e.g. Standard_E4d_v5 in the same capture).
    "Standard_D2ds_v5": LocalDisks(75, 0),
    "Standard_D4ds_v5": LocalDisks(150, 0),
    "Standard_D8ds_v5": LocalDisks(300, 0),
    "Standard_D16ds_v5": LocalDisks(600, 0),
    "Standard_D32ds_v5": LocalDisks(1200, 0),
    "Standard_D48ds_v5": LocalDisks(1800, 0),
    "Standard_D64ds_v5": LocalDisks(2400, 0),
    "Standard_D96ds_v5": LocalDisks(3600, 0),
}.items()}


def local_disks(vm_size: str) -> LocalDisks | None:
    return LOCAL_DISKS.get(vm_size.lower())


def ephemeral_os_disk_check(vm_size: str, size_gib: int | None) -> tuple[str | None, str | None]:
    """(problem, warning) for an Ephemeral OS disk of `size_gib` (None: AKS's default size) on `vm_size`."""
    disks = local_disks(vm_size)
    if disks is None or size_gib is None or size_gib == 0:
        return None, None
    limit = disks.ephemeral_limit_gib
    if limit is not None and size_gib > limit:
        if disks.cache_gib is not None:
            cache = f"its cache {disks.cache_gib} GiB" if disks.cache_gib else "it has no cache disk"
        else:
            cache = (f"its cache is at most {disks.cache_at_most} GiB (the cache of {disks.cache_bound_by}, a larger "
                     "size of its series)")
        return (f"{size_gib} GiB does not fit an Ephemeral OS disk on {vm_size}: its temp disk has {disks.temp_gib} GiB "
                f"and {cache} ({TEMP_SOURCE}; {CACHE_SOURCE}); use at most {limit}, or osDiskType: Managed"), None
    if limit is None and size_gib > disks.temp_gib:
        return None, (f"{size_gib} GiB is larger than {vm_size}'s {disks.temp_gib} GiB temp disk, and gpu-aks does not "
                      "know its cache size: AKS refuses the pool if the cache is smaller too (`az vm list-skus "
                      "--size <size>` shows CachedDiskBytes)")
    return None, None
