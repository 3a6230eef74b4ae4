"""What ARM and the AKS resource provider refuse when the PUT arrives, after azure-native's `Check` let the
request through: enum values, the regions and VM sizes Azure offers, and the cross-field rules AKS documents.
Each refusal is an `ArmError`, which the stand-in reports through the engine's normal failure path as
azure-native reports a failed PUT (`provider/pkg/azure/client_azcore.go`, `PulumiAzcoreResponseError`:
`Status=400 Code="InvalidParameter" Message="..."`), so the resource is never created.

Sources, rule by rule (each rule's function says its own):
- enums: the REST spec's enums, as the provider's SDK carries them (`azure_schema.py`), for the resource
  providers that validate them (AKS, and Microsoft.Authorization's `principalType`), although the provider's
  `Check` does not. Other enums are extensible ("Known values are: ..." in the REST models): Microsoft's own
  Managed Prometheus templates (Azure/prometheus-collector `AddonArmTemplate`) send the stream
  `Microsoft-PrometheusMetrics`, which the data collection rule's 2022-06-01 enum does not list;
- regions: `az account list-locations`, in the catalog this repository ships (`components/azure_catalog.py`,
  a data table with its source; no Azure REST model lists regions); ARM's answer for another name is
  `LocationNotAvailableForResourceType`;
- VM sizes: the GPU sizes of the shipped catalog (`policies/catalog.py`: supported and retired, each cited
  to Microsoft Learn) and Azure's size-name grammar (learn.microsoft.com/azure/virtual-machines/vm-naming-
  conventions); a made-up CPU size that follows the grammar is not caught (docs/azure-only.md);
- counts: the REST model's own text for `count` ("0 to 1000 for user pools and 1 to 1000 for system pools");
  min <= count <= max and both bounds set when autoscaling (learn.microsoft.com/azure/aks/cluster-autoscaler:
  "--min-count ... --max-count", 0-1000, at least 1 for a system pool);
- maxPods: 10 to 250 (learn.microsoft.com/azure/aks/azure-cni-overview, "Maximum pods per node"), at least 30
  on a System pool (learn.microsoft.com/azure/aks/use-system-pools);
- Spot: a Spot pool cannot be a System pool (learn.microsoft.com/azure/aks/spot-node-pool, "Limitations"),
  and `spotMaxPrice`/`scaleSetEvictionPolicy` need `scaleSetPriority: Spot` (the REST model's text: "This
  cannot be specified unless the scaleSetPriority is 'Spot'"). AKS gives a Spot pool no surge nodes on upgrade
  rather than refusing `maxSurge` (FACTS.md), so `maxSurge` is accepted there.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import Any

from provider import UNKNOWN


class ArmError(Exception):
    """A PUT that ARM answers with an error: status, code and message as the provider prints them."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(f'Status={status} Code="{code}" Message="{message}"')
        self.code = code


def checkout() -> Path:
    """This repository's checkout: named by the launcher `make engines` writes (GPU_AKS_CHECKOUT), else found
    from this file (testbed/standins/ in the checkout, or build/engines/libexec/standins/ under it)."""
    here = Path(__file__).resolve()
    named = os.environ.get("GPU_AKS_CHECKOUT")
    return Path(named) if named else here.parents[4] if here.parents[1].name == "libexec" else here.parents[2]


@functools.cache
def _catalog() -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(regions, the GPU sizes Azure sells, the GPU sizes ARM refuses and why) from the shipped catalog's
    data tables. Sizes the catalog lists as unsupported by gpu-aks's own choice (AMD, NV A10 v5) exist in
    Azure and are accepted; only Azure's retirements and AKS's own refusals are refused."""
    root = str(checkout())
    if root not in sys.path:
        sys.path.append(root)
    from gpu_aks_policies import catalog

    from components.azure_catalog import AZURE_REGIONS

    refused = {sku.vm_size.lower(): sku.reason for sku in catalog.UNSUPPORTED_GPU_SKUS.values()
               if "retired by Azure" in sku.reason or "not supported on AKS" in sku.reason}
    sold = frozenset([size.lower() for size in catalog.supported_vm_sizes()]
                     + [size for size in catalog.UNSUPPORTED_GPU_SKUS if size not in refused])
    return frozenset(AZURE_REGIONS), sold, refused


#: Azure's VM size names: `Standard_` (or `Basic_`), a family letter, vCPUs and feature letters, an
#: optional accelerator and version (learn.microsoft.com/azure/virtual-machines/vm-naming-conventions).
VM_SIZE_NAME = re.compile(r"^(Standard|Basic)_[A-Z]+[0-9]+(-[0-9]+)?[a-z]*(_[A-Za-z0-9]+)*$")


#: The azure-native modules whose resource providers refuse a value outside their REST enums.
CLOSED_ENUMS = frozenset({"containerservice", "authorization"})


def _known(value: Any) -> bool:
    return value is not None and value != UNKNOWN


def enum_errors(path: str, prop: dict[str, Any], value: Any, types: dict[str, Any]) -> list[str]:
    """Every value outside its REST enum, with the property's path (`agentPoolProfiles[0].mode`)."""
    if not _known(value):
        return []
    if isinstance(value, dict) and prop.get("ref"):
        shape = types[prop["ref"]]
        return [error for name, sub in sorted(shape["properties"].items()) if name in value
                for error in enum_errors(f"{path}.{name}", sub, value[name], types)]
    if isinstance(value, list) and prop.get("items"):
        return [error for index, item in enumerate(value)
                for error in enum_errors(f"{path}[{index}]", prop["items"], item, types)]
    allowed = prop.get("enum")
    if allowed and isinstance(value, str) and value.lower() not in {entry.lower() for entry in allowed}:
        return [f"The value of parameter {path} is invalid: '{value}' is not one of {', '.join(allowed)}."]
    return []


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def pool_errors(path: str, pool: dict[str, Any], default_pool: bool = False) -> list[str]:
    """The documented rules of one agent pool body (an AgentPool, or a cluster's inline profile)."""
    errors = []
    mode = str(pool.get("mode") or ("System" if default_pool else "User"))
    system = mode.lower() == "system"
    count, low, high = _number(pool.get("count")), _number(pool.get("minCount")), _number(pool.get("maxCount"))
    floor = 1 if system else 0
    autoscaled = pool.get("enableAutoScaling") is True
    for name, number in (("count", count), ("minCount", low if autoscaled else None),
                         ("maxCount", high if autoscaled else None)):
        if number is not None and not floor <= number <= 1000:
            errors.append(f"The value of parameter {path}.{name} is invalid: {number:g} is outside {floor} to 1000 "
                          f"for a {'system' if system else 'user'} pool.")
    if autoscaled:
        if _known(pool.get("minCount")) is False or _known(pool.get("maxCount")) is False:
            errors.append(f"The value of parameter {path}.minCount/maxCount is invalid: an autoscaling pool needs "
                          "both minCount and maxCount.")
        elif low is not None and high is not None:
            if low > high:
                errors.append(f"The value of parameter {path}.minCount is invalid: minCount {low:g} must be less than "
                              f"or equal to maxCount {high:g}.")
            elif count is not None and not low <= count <= high:
                errors.append(f"The value of parameter {path}.count is invalid: count {count:g} must be within "
                              f"minCount {low:g} and maxCount {high:g}.")
    pods = _number(pool.get("maxPods"))
    if pods is not None:
        least = 30 if system else 10
        if not least <= pods <= 250:
            errors.append(f"The value of parameter {path}.maxPods is invalid: {pods:g} is outside {least} to 250"
                          f"{' for a system pool' if system else ''}.")
    spot = str(pool.get("scaleSetPriority") or "Regular").lower() == "spot"
    if spot and (system or default_pool):
        errors.append(f"The value of parameter {path}.scaleSetPriority is invalid: a Spot pool cannot be a system "
                      "or default node pool.")
    for name in ("spotMaxPrice", "scaleSetEvictionPolicy"):
        if _known(pool.get(name)) and not spot and str(pool.get("scaleSetPriority") or "") != UNKNOWN:
            errors.append(f"The value of parameter {path}.{name} is invalid: it cannot be specified unless "
                          "scaleSetPriority is 'Spot'.")
    return errors


def vm_size_errors(path: str, vm_size: Any) -> list[str]:
    if not isinstance(vm_size, str) or vm_size == UNKNOWN:
        return []
    _, sold, refused = _catalog()
    if vm_size.lower() in refused:
        return [f"The VM size of {vm_size} in {path} is not supported: {refused[vm_size.lower()]}."]
    if not VM_SIZE_NAME.match(vm_size) or (vm_size.startswith("Standard_N") and vm_size.lower() not in sold):
        return [f"The VM size of {vm_size} in {path} is not allowed in your subscription in this location."]
    return []


def location_error(arm_type: str, location: Any) -> ArmError | None:
    if not isinstance(location, str) or location == UNKNOWN:
        return None
    regions, _, _ = _catalog()
    if location.replace(" ", "").lower() in regions or location.lower() == "global":
        return None
    return ArmError("LocationNotAvailableForResourceType",
                    f"The provided location '{location}' is not available for resource type '{arm_type}'. "
                    f"List of available regions for the resource type is '{','.join(sorted(regions))}'.")


def put_errors(token: str, arm_type: str, body: dict[str, Any], args_type: str,
               types: dict[str, Any]) -> ArmError | None:
    """What ARM answers to the PUT of `body` (a resource's inputs, path parameters left out), or None."""
    located = location_error(arm_type, body.get("location")) if "location" in types[args_type]["properties"] \
        else None
    if located is not None:
        return located
    shape = types[args_type]
    errors = [error for name, prop in sorted(shape["properties"].items()) if name in body
              for error in enum_errors(name, prop, body[name], types)] if token.split(":")[1] in CLOSED_ENUMS else []
    if token.endswith(":AgentPool"):
        errors += pool_errors("agentPool", body) + vm_size_errors("agentPool.vmSize", body.get("vmSize"))
    if token.endswith(":ManagedCluster"):
        for index, profile in enumerate(body.get("agentPoolProfiles") or []):
            if isinstance(profile, dict):
                where = f"agentPoolProfiles[{index}]"
                errors += pool_errors(where, profile, default_pool=index == 0)
                errors += vm_size_errors(f"{where}.vmSize", profile.get("vmSize"))
    if errors:
        return ArmError("InvalidParameter", " ".join(errors))
    return None
