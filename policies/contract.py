"""The outputs contract of a gpu-aks platform stack, as one typed, frozen class.

The platform writes it (`components/contract.py` builds a `PlatformContract` from the settings and
the program exports `to_json()`'s keys); app stacks read it through a `StackReference`; the checker
(`--platform`), the explainer and the doctor read it from `pulumi stack output --json`. Every field
is declared once, with its JSON name, type and one line of documentation, and `from_json`,
`to_json`, `json_schema()` (`docs/contract.schema.json`) and `contract_markdown()`
(`docs/contract.md`) all derive from those declarations. Standard library only, no Pulumi.

`from_json` checks every type and names the key of each problem (`gpuPools.t4.gpusPerNode`), so no
tool meets a value it cannot use: JSON's `1e999` (infinity), NaN, fractions and strings where a
count belongs are refused. Counts may arrive as floats (a StackReference turns `1` into `1.0`).
It refuses contract versions this release does not know, naming the ones it reads, and a contract
whose version 3 (`pools`) and version 2 (`gpuPools`, `cpuPools`) say different things of a pool, naming
both keys: each reader would believe one of them. Version 3's pools are the pool model
(`pools/model.py`), read by the same field declarations (`fields.py`); versions 1 and 2 are read into it
by `contract_v2.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .catalog import DEVICE_PLUGIN_NAMESPACE, MIG_STRATEGIES
from .contract_v2 import (
    CpuPoolEntry,
    GpuOfferEntry,
    GpuPoolEntry,
    cpu_pool_model,
    disagreements,
    gpu_pool_model,
    read_pools,
)
from .fields import (
    OPTIONAL_TEXT,
    TEXT,
    Pools,
    Version,
    Written,
    choice,
    field_table,
    json_field,
    object_schema,
    read_complete,
    read_fields,
)
from .limits import is_number
from .pools.model import Allocatable, Offer, OfferPrice, Pool, PoolClaims, PoolSharing, pool_named
from .quantities import shown

#: The version this release writes. 2: pools carry `azureName` and `poolLabel`, and `nodeSelector`
#: pins with gpu-aks's pool label instead of AKS's agentpool label (whose value changes when a pool
#: is replaced). 3: `pools`, every pool as the one pool model itself (`gpu_aks_policies.pools.model.Pool`,
#: field for field); version 2's `gpuPools` and `cpuPools` are still written, from the same model
#: (`contract_v2.py`), until 0.7.0.
CONTRACT_VERSION = 3
#: The versions this release reads (1 lacks `azureName` and `poolLabel`; readers fall back to the name).
#: A new optional output is not a new version (docs/component-package.md, "What is a breaking change to `GpuCluster`"):
#: `kind`, `offers` and `sharing` joined version 2, and `from_json` derives them from the single-size
#: fields when a platform wrote none.
READABLE_CONTRACT_VERSIONS = (1, 2, 3)
_ABSENT = object()

#: The catalog's MIG_STRATEGIES as a type (tests/test_contract.py holds the two equal).
MigStrategy = Literal["none", "single", "mixed"]


class ContractError(ValueError):
    """The document is not a gpu-aks outputs contract this release reads; the message names each key."""


@dataclass(frozen=True)
class PlatformContract(Written):
    """What a gpu-aks platform stack exports for the app stacks and tools that read it."""

    contract_version: int | None = json_field(
        "contractVersion", Version({"type": "integer", "enum": list(READABLE_CONTRACT_VERSIONS)},
                                    "one of " + ", ".join(map(str, READABLE_CONTRACT_VERSIONS))),
        f"The contract's version; this release writes {CONTRACT_VERSION} and reads "
        f"{', '.join(map(str, READABLE_CONTRACT_VERSIONS))}. Absent when only the gpuPools map is given.", None)
    location: str | None = json_field("location", OPTIONAL_TEXT, "The Azure region.", None)
    kubernetes_version: str | None = json_field("kubernetesVersion", OPTIONAL_TEXT, "The pinned Kubernetes version.", None)
    gpu_namespace: str = json_field("gpuNamespace", TEXT, "The namespace of gpu-aks's device plugin.",
                                DEVICE_PLUGIN_NAMESPACE)
    mig_strategy: MigStrategy = json_field("migStrategy", choice(MIG_STRATEGIES, "one of " + ", ".join(MIG_STRATEGIES)),
                                       "The device plugin's MIG strategy.", "none")
    gpu_pools: dict[str, GpuPoolEntry] = json_field("gpuPools", Pools(GpuPoolEntry), "The GPU pools, by name.", {},
                                                   reader_needs=True)
    cpu_pools: dict[str, CpuPoolEntry] = json_field("cpuPools", Pools(CpuPoolEntry), "The CPU user pools, by "
                                                   "name.", {})
    pools: dict[str, Pool] | None = json_field("pools", Pools(Pool), "Every pool, by name, as the pool "
                                                "model (version 3; absent before).", None, since=3)
    cluster_name: str | None = json_field("clusterName", OPTIONAL_TEXT, "The AKS cluster's name.", None, program=True)
    resource_group_name: str | None = json_field("resourceGroupName", OPTIONAL_TEXT, "The cluster's resource group.",
                                             None, program=True)
    oidc_issuer_url: str | None = json_field("oidcIssuerUrl", OPTIONAL_TEXT, "The cluster's OIDC issuer URL (workload "
                                         "identity).", None, program=True)
    prometheus_query_endpoint: str | None = json_field(
        "prometheusQueryEndpoint", OPTIONAL_TEXT, "The Azure Monitor workspace's PromQL query endpoint, where GPU "
        "metrics land (`gpu-aks:observability`); null when observability is off.", None, program=True)
    grafana_dashboard_url: str | None = json_field(
        "grafanaDashboardUrl", OPTIONAL_TEXT, "The GPU dashboard in Azure Managed Grafana; null without "
        "`observability.grafana`.", None, program=True)

    def gpu_pool_models(self) -> dict[str, Pool]:
        """The GPU pools as the pool model (version 3's `pools`, each with the offers a pod asks for),
        whichever version wrote the contract: before version 3, read from `gpuPools`
        (`contract_v2.gpu_pool_model`)."""
        if self.pools is None:
            return {name: gpu_pool_model(pool) for name, pool in self.gpu_pools.items()}
        return {name: replace(pool, offers=tuple(offer for offer in pool.offers if offer.resource))
                for name, pool in self.pools.items() if pool.role == "gpu"}

    def pool_models(self) -> dict[str, Pool]:
        """Every GPU and CPU pool as the pool model, whichever version wrote the contract (before version 3,
        read from `gpuPools` and `cpuPools`: `contract_v2`). The system pool, which only version 3 lists, is
        left out: no workload of an app lands there."""
        if self.pools is None:
            return {**{name: gpu_pool_model(pool) for name, pool in self.gpu_pools.items()},
                    **{name: cpu_pool_model(pool) for name, pool in self.cpu_pools.items()}}
        return {name: pool for name, pool in self.pools.items() if pool.role in ("gpu", "cpu")}

    # --- Reading -------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, raw: Any) -> PlatformContract:
        """Read `pulumi stack output --json`, the offline preview's `--json` (its `outputs`), or the
        `gpuPools` map alone. Raises ContractError naming every problem's key. Keys this release does
        not know are ignored (newer platforms may add outputs within a version)."""
        if isinstance(raw, Mapping) and isinstance(raw.get("outputs"), Mapping):
            raw = raw["outputs"]
        pools = raw.get("gpuPools", raw) if isinstance(raw, Mapping) else None
        if not isinstance(pools, Mapping) or not all(isinstance(p, Mapping) for p in pools.values()):
            raise ContractError("expected the platform stack's outputs (with gpuPools), `python -m tools.preview STACK "
                                "--json` output, or the gpuPools map alone")
        document = raw if pools is not raw else {}
        # Absent means the gpuPools map alone; a null, like any other value, has to be a version we read.
        version = document.get("contractVersion", _ABSENT)
        if version is not _ABSENT and (not is_number(version) or version not in READABLE_CONTRACT_VERSIONS):
            raise ContractError(f"contractVersion: {shown(version)} is not a version this release reads; it reads "
                                f"{', '.join(map(str, READABLE_CONTRACT_VERSIONS))}: upgrade gpu-aks to read this "
                                "platform's outputs")
        problems: list[str] = []
        values = read_fields(cls, document, "", problems, skip=("gpuPools", "cpuPools", "pools"))
        values["gpu_pools"] = read_pools(GpuPoolEntry, pools, "gpuPools", problems)
        for key, field_name, read in (("cpuPools", "cpu_pools", _read_cpu_pools), ("pools", "pools", _read_model)):
            found = document.get(key)
            if isinstance(found, Mapping) and all(isinstance(p, Mapping) for p in found.values()):
                values[field_name] = read(found, key, problems)
            elif found is not None:
                problems.append(f"{key}: expected a map of pool names to pools")
        if not problems and values.get("pools") is not None:
            problems = disagreements(values["gpu_pools"], values.get("cpu_pools", {}), values["pools"])
        if problems:
            raise ContractError("; ".join(problems))
        return cls(**values)


def _read_cpu_pools(pools: Mapping[Any, Mapping[str, Any]], key: str, problems: list[str]) -> dict[str, Any]:
    return read_pools(CpuPoolEntry, pools, key, problems)


def _read_model(pools: Mapping[Any, Mapping[str, Any]], key: str, problems: list[str]) -> dict[str, Pool]:
    """Version 3's `pools`: each pool read into the model, its problems named by key."""
    read = {}
    for name, pool in pools.items():
        values = read_complete(Pool, pool, f"{key}.{pool_named(name)}.", problems, defaults={"name": str(name)})
        if values is None:
            continue
        if values.get("role") == "gpu" and values.get("offers") and not any(offer.resource for offer in values["offers"]):
            problems.append(f"{key}.{pool_named(name)}.offers: a GPU pool needs an offer with a resource (a GPU size); "
                            "none has one")
            continue
        read[str(name)] = Pool(**values)
    return read


# --- Derived documents -------------------------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the contract this release writes (`docs/contract.schema.json`). Readers
    (`from_json`) also accept version 1, which lacks azureName and poolLabel."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpu-aks platform outputs contract",
        **object_schema(PlatformContract, (PlatformContract.__doc__ or "").strip() + " Other outputs (kubeconfig, a "
                         "secret) may sit beside these.", True),
        "$defs": {cls.__name__: object_schema(cls, (cls.__doc__ or "").strip(), False)
                  for cls in (GpuPoolEntry, GpuOfferEntry, OfferPrice, PoolSharing, CpuPoolEntry, Pool, Offer,
                              Allocatable, PoolClaims)},
    }
    return schema


def contract_markdown() -> str:
    """`docs/contract.md`, generated from the field declarations."""
    lines = [
        "# The platform's outputs contract", "",
        "<!-- Generated from policies/contract.py; do not edit. Regenerate with tools/docs.py. -->", "",
        f"A gpu-aks platform stack exports this contract (version {CONTRACT_VERSION}); app stacks read it through a "
        "`StackReference`, and `gpu-aks-check --platform`, `gpu-aks-explain` and the doctor read it from `pulumi "
        "stack output --json`. `gpu_aks_policies.contract.PlatformContract.from_json` reads it, checking every type and "
        f"naming the key of each problem; it reads versions {', '.join(map(str, READABLE_CONTRACT_VERSIONS))} and "
        "refuses others. The JSON Schema is [contract.schema.json](contract.schema.json).", "",
        "Numbers may arrive as floats (a StackReference turns `1` into `1.0`); counts must still be whole. The "
        "`kubeconfig` output (a secret) sits beside these keys and is not part of the typed contract.", "",
        "## Top level", "", *field_table(PlatformContract), "",
        "## `gpuPools.<name>`", "", (GpuPoolEntry.__doc__ or "").strip(), "", *field_table(GpuPoolEntry), "",
        "## `gpuPools.<name>.offers[]`", "", (GpuOfferEntry.__doc__ or "").strip(), "", *field_table(GpuOfferEntry), "",
        "## `gpuPools.<name>.offers[].hourlyPrice`", "", (OfferPrice.__doc__ or "").strip(), "",
        *field_table(OfferPrice), "",
        "## `gpuPools.<name>.sharing`", "", (PoolSharing.__doc__ or "").strip(), "", *field_table(PoolSharing), "",
        "## `cpuPools.<name>`", "", (CpuPoolEntry.__doc__ or "").strip(), "", *field_table(CpuPoolEntry), "",
        "## `pools.<name>`", "", (Pool.__doc__ or "").strip(), "", *field_table(Pool), "",
        "## `pools.<name>.offers[]`", "", (Offer.__doc__ or "").strip(), "", *field_table(Offer), "",
        "## `pools.<name>.offers[].allocatable`", "", (Allocatable.__doc__ or "").strip(), "",
        *field_table(Allocatable), "",
        "## `pools.<name>.dra`", "", (PoolClaims.__doc__ or "").strip(), "", *field_table(PoolClaims), "",
        "A reader needs only `taints`, `labels`, `gpuResource` and `gpusPerNode` of a GPU pool; the rest fall back "
        "to null, empty or false when absent (older contracts). A pool without `offers` (written before pools "
        "had offers) reads as one offer made of its single-size fields, `kind` as agentPool and `sharing` as null.", "",
    ]
    return "\n".join(lines)
