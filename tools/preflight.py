"""Check Azure capacity for a stack before `pulumi up`: quota, region and zone offers, restrictions.

    python -m tools.preflight STACK [--usage USAGE.json --skus SKUS.json]

USAGE.json is `az vm list-usage --location L -o json`; SKUS.json is `az vm list-skus --location L
--resource-type virtualMachines -o json` (L is the stack's `azure-native:location`). Without the
files it runs those two `az` commands itself, as the doctor runs kubectl. For each pool it reports
the quota family, the vCPUs the pool needs at `maxCount` plus its upgrade surge (Spot pools: against
the regional low-priority quota), the family's headroom, whether the size is offered in the region
and the pool's zones, and any restriction (`NotAvailableForSubscription`).

Exit codes: 0 everything fits; 1 problems, each naming the pool, the family, the vCPUs needed and
available, and where to ask for more; 2 bad input (unreadable stack or files, wrong shapes, no `az`).

`capacity_needs(settings)` is the per-pool summary without live numbers, from each pool kind's
capacity (`components/pools/`); the offline preview prints it (`capacity_lines`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_aks_policies.catalog import gpu_sku
from gpu_aks_policies.documents import DocumentError, Limits, load_json, read_file
from gpu_aks_policies.limits import MAX_QUOTA_COUNT, MAX_SHOWN_CHARS, clipped, is_int
from gpu_aks_policies.pools.model import CapacityNeed, Pool
from gpu_aks_policies.terminal import escape_field, escape_line, escape_text, run_cli

from components.platform_settings import PlatformSettings
from components.pools import platform_pools
from components.settings import SettingsError
from tools.stacks import STACK_NAME, STACK_NAME_RULE, StackFileError, settings_from_stack_file

ROOT = Path(__file__).resolve().parent.parent
#: Where a subscription owner asks for more vCPU quota (learn.microsoft.com/azure/quotas/
#: per-vm-quota-requests: Azure portal, Quotas, Compute).
QUOTA_PAGE = "https://portal.azure.com/#view/Microsoft_Azure_Capacity/QuotaMenuBlade/~/myQuotas"
#: Usage names of the regional quotas (`az vm list-usage`: "Total Regional vCPUs" and "Total
#: Regional Low-priority vCPUs"; Spot VMs count against the latter, learn.microsoft.com/azure/
#: virtual-machines/spot-vms, "Pricing").
REGIONAL_CORES = "cores"
LOW_PRIORITY_CORES = "lowPriorityCores"
#: `az` prints a few MB for list-skus in a large region: bound it all the same.
INPUT_LIMITS = Limits(max_bytes=64 * 1024 * 1024, max_depth=32, max_nodes=5_000_000)
AZ_TIMEOUT_SECONDS = 180


class PreflightInputError(ValueError):
    """Input preflight cannot use (exit 2)."""


# --- What the stack needs (no Azure) -----------------------------------------------------------------


def capacity_needs(settings: PlatformSettings) -> list[CapacityNeed]:
    """Per pool: size, priority, zones, nodes at maxCount plus surge, vCPUs from the size name; each
    pool's kind says what it needs."""
    return list(platform_pools(settings).capacity())


def capacity_lines(settings: PlatformSettings, config_file: Path | None = None) -> list[str]:
    """The capacity summary the offline preview prints: what each pool will ask Azure for, and the
    preflight command that checks it (with the preview's `--config-file`, if it had one)."""
    lines = []
    for need in capacity_needs(settings):
        vcpus = need.vcpus()
        quota = "regional low-priority (Spot) vCPUs" if need.spot else "its VM family's vCPUs"
        lines.append(f"{need.key}: {need.vm_size} x {need.nodes} ({need.max_count} at maxCount + {need.surge} upgrade "
                     f"surge) = {vcpus if vcpus is not None else '?'} vCPUs of {quota} in {settings.cluster.location}"
                     f"{' zones ' + ','.join(need.zones) if need.zones else ''}")
    config = f" --config-file {config_file}" if config_file is not None else ""
    lines.append(f"check them against the subscription's quota: python -m tools.preflight {settings.stack}{config}")
    return lines


# --- Reading Azure's answers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Quota:
    current: int
    limit: int

    @property
    def headroom(self) -> int:
        return self.limit - self.current


@dataclass(frozen=True)
class SkuOffer:
    name: str
    family: str
    vcpus: int | None
    zones: tuple[str, ...]
    #: Human-readable restrictions: "NotAvailableForSubscription in the region", "... in zones 2".
    restrictions: tuple[str, ...]
    location_restricted: bool
    restricted_zones: tuple[str, ...]
    #: The size's `GPUs` capability (None when the SKU list gives none: not a GPU size).
    gpus: int | None = None


def _int(value: Any, where: str) -> int:
    # `az` prints currentValue/limit as numbers; older releases printed strings of digits.
    if not (is_int(value) or (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10)):
        raise PreflightInputError(f"{where}: {_shown(value)} is not a whole number from 0 to {MAX_QUOTA_COUNT}")
    number = int(value)
    if not 0 <= number <= MAX_QUOTA_COUNT:
        raise PreflightInputError(f"{where}: {_shown(value)} is not a whole number from 0 to {MAX_QUOTA_COUNT}")
    return number


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, int) or value.bit_length() < 64 else "a huge number"
    return escape_line(clipped(text, 60, 57, "..."))


def _listed(item: Mapping[str, Any], key: str, where: str) -> list[Any]:
    """`item[key]` as the list `az` prints there (absent or null: empty); another type is bad input."""
    value = item.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise PreflightInputError(f"{where}.{key}: expected a list, not {type(value).__name__}")
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PreflightInputError(f"{where}: expected an object, not {type(value).__name__}")
    return value


def parse_usage(document: Any) -> dict[str, Quota]:
    """`az vm list-usage -o json` (a list of azure-mgmt-compute `Usage`) -> usage name -> quota. A name
    listed twice with other numbers is bad input: neither answer can be trusted over the other."""
    if not isinstance(document, list):
        raise PreflightInputError("usage: expected the JSON list `az vm list-usage -o json` prints")
    quotas: dict[str, Quota] = {}
    first_at: dict[str, int] = {}
    for index, item in enumerate(document):
        where = f"usage[{index}]"
        name = item.get("name") if isinstance(item, dict) else None
        value = name.get("value") if isinstance(name, dict) else None
        if not isinstance(value, str):
            raise PreflightInputError(f"{where}: expected {{name: {{value}}, currentValue, limit}}")
        quota = Quota(_int(item.get("currentValue"), f"{where}.currentValue"), _int(item.get("limit"), f"{where}.limit"))
        key = value.lower()
        if key in quotas and quotas[key] != quota:
            raise PreflightInputError(f"{where}: the quota {_shown(value)} is listed twice with other numbers (also "
                                      f"usage[{first_at[key]}]); record the answer again")
        quotas[key] = quota
        first_at.setdefault(key, index)
    return quotas


def _capability(item: Mapping[str, Any], name: str, where: str) -> Any:
    """The value of a SKU's capability `name`, or None. Named twice with other values, it is bad input
    as a size listed twice is: taking the first would quietly drop the other."""
    values = [cap.get("value") for cap in _listed(item, "capabilities", where)
              if isinstance(cap, dict) and cap.get("name") == name]
    if any(value != values[0] for value in values[1:]):
        other = next(value for value in values[1:] if value != values[0])
        raise PreflightInputError(f"{where}.capabilities[{name}]: listed {len(values)} times with other values "
                                  f"({_shown(values[0])} and {_shown(other)}); record the answer again")
    return values[0] if values else None


def parse_skus(document: Any, location: str) -> dict[str, SkuOffer]:
    """`az vm list-skus --resource-type virtualMachines -o json` (azure-mgmt-compute `ResourceSku`)
    -> lowercased size name -> its offer in `location`. A size listed twice for the location with
    another offer is bad input: the second would hide a restriction of the first."""
    if not isinstance(document, list):
        raise PreflightInputError("skus: expected the JSON list `az vm list-skus -o json` prints")
    offers: dict[str, SkuOffer] = {}
    first_at: dict[str, int] = {}
    for index, item in enumerate(document):
        where = f"skus[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise PreflightInputError(f"{where}: expected a ResourceSku with a name")
        if item.get("resourceType", "virtualMachines") != "virtualMachines":
            continue
        infos = [info for info in _listed(item, "locationInfo", where) if isinstance(info, dict)
                 and str(info.get("location", "")).lower() == location.lower()]
        locations = [str(loc).lower() for loc in _listed(item, "locations", where)]
        if not infos and location.lower() not in locations:
            continue
        zones = tuple(sorted(str(z) for info in infos for z in _listed(info, "zones", f"{where}.locationInfo")))
        vcpus, gpus = _capability(item, "vCPUs", where), _capability(item, "GPUs", where)
        restrictions, location_restricted, restricted_zones = [], False, []
        for restriction in _listed(item, "restrictions", where):
            if not isinstance(restriction, dict):
                continue
            reason = str(restriction.get("reasonCode") or "restricted")[:100]
            info = _mapping(restriction.get("restrictionInfo"), f"{where}.restrictions.restrictionInfo")
            if restriction.get("type") == "Zone":
                bad = sorted(str(z) for z in _listed(info, "zones", f"{where}.restrictions.restrictionInfo"))
                restricted_zones.extend(bad)
                restrictions.append(f"{reason} in zones {','.join(bad)}")
            else:
                location_restricted = True
                restrictions.append(f"{reason} in {location}")
        offer = SkuOffer(
            item["name"], str(item.get("family") or "?")[:100],
            _int(vcpus, f"{where}.capabilities[vCPUs]") if vcpus is not None else None, zones, tuple(restrictions),
            location_restricted, tuple(sorted(set(restricted_zones))),
            _int(gpus, f"{where}.capabilities[GPUs]") if gpus is not None else None)
        key = item["name"].lower()
        if key in offers and offers[key] != offer:
            raise PreflightInputError(f"{where}: {_shown(item['name'])} is listed twice for {escape_line(location)} with "
                                      f"another offer (also skus[{first_at[key]}]); record the answer again")
        offers[key] = offer
        first_at.setdefault(key, index)
    return offers


# --- The check ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolReport:
    need: CapacityNeed  # what one pool asks of the quota (its kind's `capacity()`)
    family: str
    vcpus: int | None
    headroom: int | None
    problems: tuple[str, ...]


def check_capacity(settings: PlatformSettings, usage: Mapping[str, Quota],
                   skus: Mapping[str, SkuOffer]) -> tuple[list[PoolReport], list[str]]:
    """Per-pool reports and every problem (pool, family, vCPUs needed and available, where to ask)."""
    location = settings.cluster.location
    reports: list[PoolReport] = []
    problems: list[str] = []
    by_family: dict[str, int] = {}
    # A pool's needs of one priority are alternatives (a NAP NodePool fills its limits with one candidate
    # size at a time): the regional totals count each pool's largest, not their sum.
    regional_by_pool: dict[tuple[bool, str], int] = {}
    family_by_pool: dict[tuple[str, str], int] = {}
    for need in capacity_needs(settings):
        offer = skus.get(need.vm_size.lower())
        pool_problems: list[str] = []
        if offer is None:
            pool_problems.append(f"{need.key}: {need.vm_size} is not offered in {location} (not in `az vm list-skus "
                                 f"--location {location}`); pick another size or region")
            reports.append(PoolReport(need, "?", None, None, tuple(pool_problems)))
            problems += pool_problems
            continue
        if offer.location_restricted:
            pool_problems.append(f"{need.key}: {need.vm_size} is restricted for this subscription in {location} "
                                 f"({'; '.join(offer.restrictions)}); ask for access at {QUOTA_PAGE}")
        missing = [zone for zone in need.zones if zone not in offer.zones or zone in offer.restricted_zones]
        if missing:
            usable = ",".join(z for z in offer.zones if z not in offer.restricted_zones) or "none"
            pool_problems.append(f"{need.key}: {need.vm_size} is not available in zone(s) {','.join(missing)} of "
                                 f"{location} (offered: {usable})")
        vcpus = need.vcpus(offer.vcpus)
        headroom = None
        if vcpus is not None:
            regional_by_pool[(need.spot, need.key)] = max(vcpus, regional_by_pool.get((need.spot, need.key), 0))
            if not need.spot:
                # Alternatives of one pool in one family (a NodePool's candidate sizes) count once, the largest.
                prior = family_by_pool.get((offer.family, need.key), 0)
                if vcpus > prior:
                    by_family[offer.family] = by_family.get(offer.family, 0) + vcpus - prior
                    family_by_pool[(offer.family, need.key)] = vcpus
                quota = usage.get(offer.family.lower())
                headroom = quota.headroom if quota else None
                if quota is None:
                    pool_problems.append(f"{need.key}: no quota named {offer.family} in the usage list; the family "
                                         f"has no vCPUs for this subscription in {location}; ask at {QUOTA_PAGE}")
                elif by_family[offer.family] > quota.headroom:
                    pool_problems.append(
                        f"{need.key}: {offer.family} needs {by_family[offer.family]} vCPUs ({need.vm_size} x {need.nodes}"
                        f"{' with the pools before it' if by_family[offer.family] != vcpus else ''}), {quota.headroom} "
                        f"available (limit {quota.limit}, in use {quota.current}); ask for more at {QUOTA_PAGE}")
        reports.append(PoolReport(need, offer.family, vcpus, headroom, tuple(pool_problems)))
        problems += pool_problems
    regional = {spot: sum(v for (s, _), v in regional_by_pool.items() if s == spot) for spot in (False, True)}
    for spot, name, label in ((False, REGIONAL_CORES, "Total Regional vCPUs"),
                              (True, LOW_PRIORITY_CORES, "Total Regional Low-priority vCPUs (Spot)")):
        quota = usage.get(name.lower())
        if regional[spot] and quota is not None and regional[spot] > quota.headroom:
            problems.append(f"{'Spot pools' if spot else 'all on-demand pools'}: {label} needed {regional[spot]}, "
                            f"{quota.headroom} available (limit {quota.limit}, in use {quota.current}); ask for more "
                            f"at {QUOTA_PAGE}")
        elif regional[spot] and quota is None and spot:
            problems.append(f"Spot pools: no {name} quota in the usage list, so no Spot vCPUs in {location}; ask at "
                            f"{QUOTA_PAGE}")
    return reports, problems


def declared_gpu_problems(pools: Sequence[Pool], skus: Mapping[str, SkuOffer]) -> list[str]:
    """A GPU pool on a size the catalog does not know declares its GPU (`gpuPools[].gpu`): Azure's SKU
    list (the `GPUs` capability of `az vm list-skus`) must agree with the declared count."""
    problems = []
    for pool in pools:
        # A GPU offer of a size the catalog lacks has the GPUs the stack declares.
        for offer in (offer for offer in pool.gpu_offers if gpu_sku(offer.vm_size) is None):
            listed = skus.get(offer.vm_size.lower())
            if listed is None:
                continue  # check_capacity already says the size is not offered
            if listed.gpus is None:
                problems.append(f"{pool.key}.gpu: Azure's SKU list gives {offer.vm_size} no GPUs capability, so it is "
                                "not a GPU size; pick an N-series size")
            elif listed.gpus != offer.gpus:
                problems.append(f"{pool.key}.gpu.count: {offer.gpus} declared, but Azure's SKU list gives "
                                f"{offer.vm_size} {listed.gpus} GPUs; declare count: {listed.gpus}")
    return problems


# --- Inputs ---------------------------------------------------------------------------------------------


def read_json_file(path: str) -> Any:
    """A recorded `az` answer: a regular file (`read_file` refuses a FIFO or device without blocking on
    it), bounded, parsed as JSON."""
    try:
        return load_json(read_file(path, INPUT_LIMITS), INPUT_LIMITS)
    except DocumentError as error:
        where = f"{escape_line(path)}:{error.line}" if error.line else escape_line(path)
        raise PreflightInputError(f"{where}: {escape_line(error.message)}") from None


def run_az(arguments: Sequence[str]) -> Any:
    az = shutil.which("az")
    if az is None:
        raise PreflightInputError("`az` is not installed; install the Azure CLI and `az login`, or pass --usage and "
                                  "--skus files recorded elsewhere")
    try:
        result = subprocess.run([az, *arguments, "-o", "json"], capture_output=True, check=False,
                                timeout=AZ_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        raise PreflightInputError(f"`az {' '.join(arguments)}` took over {AZ_TIMEOUT_SECONDS} s") from None
    if result.returncode != 0:
        message = escape_line(result.stderr.decode("utf-8", "replace").strip()[-400:])
        raise PreflightInputError(f"`az {' '.join(arguments)}` failed: {message}")
    if len(result.stdout) > INPUT_LIMITS.max_bytes:
        raise PreflightInputError(f"`az {' '.join(arguments)}` printed over {INPUT_LIMITS.max_bytes} bytes")
    try:
        return load_json(result.stdout.decode("utf-8", "replace"), INPUT_LIMITS)
    except DocumentError as error:
        raise PreflightInputError(f"`az {' '.join(arguments)}` printed no JSON: {escape_line(error.message)}") from None


def load_stack(stack: str, root: Path = ROOT, environ: Mapping[str, str] = os.environ,
               config_file: Path | None = None) -> PlatformSettings:
    """The stack's settings, from `Pulumi.STACK.yaml` in `root` or from `config_file` (`--config-file`)."""
    if not STACK_NAME.fullmatch(stack):
        raise PreflightInputError(f"'{escape_field(stack, MAX_SHOWN_CHARS)}' is not a stack name: {STACK_NAME_RULE}")
    path = config_file if config_file is not None else root / f"Pulumi.{stack}.yaml"
    try:
        return settings_from_stack_file(path, stack, environ)
    except StackFileError as error:
        raise PreflightInputError(f"{path.name}: {escape_line(str(error))}") from None
    except SettingsError as error:
        raise PreflightInputError(str(error)) from None  # one problem a line; `main` prints it escaped


def main(argv: Sequence[str] | None = None, az: Callable[[Sequence[str]], Any] = run_az,
         root: Path = ROOT, out: Any = None) -> int:
    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="python -m tools.preflight",
                                     description="Check Azure vCPU quota and VM offers for a stack before `pulumi up`.")
    parser.add_argument("stack")
    parser.add_argument("--usage", help="`az vm list-usage --location L -o json` output")
    parser.add_argument("--skus", help="`az vm list-skus --location L --resource-type virtualMachines -o json` output")
    parser.add_argument("--config-file", metavar="FILE", type=Path,
                        help="stack config to use instead of Pulumi.STACK.yaml, as `pulumi preview --config-file`")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 2 if exit_.code else 0
    try:
        settings = load_stack(args.stack, root, config_file=args.config_file)
        location = settings.cluster.location
        usage_doc = read_json_file(args.usage) if args.usage else az(["vm", "list-usage", "--location", location])
        skus_doc = read_json_file(args.skus) if args.skus else az(
            ["vm", "list-skus", "--location", location, "--resource-type", "virtualMachines"])
        usage, skus = parse_usage(usage_doc), parse_skus(skus_doc, location)
    except PreflightInputError as error:
        print(escape_text(f"error: {error}"), file=sys.stderr)
        return 2
    reports, problems = check_capacity(settings, usage, skus)
    problems += declared_gpu_problems(platform_pools(settings).pools, skus)
    # Names come from the stack file and from `az`'s answers: escaped, one per line, and the whole
    # report neutralised for terminals and CI logs (policies/terminal.py).
    lines = [f"capacity for stack {escape_line(settings.stack)} in {escape_line(location)}:"]
    for report in reports:
        need = report.need
        status = "PROBLEM" if report.problems else "ok"
        family = "lowPriorityCores (Spot)" if need.spot else escape_line(str(report.family))
        lines.append(f"  {status:7} {escape_line(need.key)}: {escape_line(need.vm_size)} x {need.nodes} = "
                     f"{report.vcpus if report.vcpus is not None else '?'} vCPUs of {family}"
                     f"{'' if report.headroom is None else f', headroom {report.headroom}'}")
    lines.extend(f"problem: {escape_line(problem)}" for problem in problems)
    print(escape_text("\n".join(lines)), file=out)
    return 1 if problems else 0


if __name__ == "__main__":
    run_cli(main)
