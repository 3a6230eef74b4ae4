"""Stack config -> validated, frozen settings. The only package that knows the config keys.

Each key is declared once (`policies/declarations.py`), in the module of its section: `cluster`,
`access`, `pools` (systemPool, cpuPools, gpuPools), `device_plugin`, `admission_policy`, `smoke_test`,
`observability`.
Parsing, the unknown-key check with its did-you-mean, defaults, secret masking and
`docs/configuration.md` (`reference_markdown()`) all come from those declarations.

Keys follow the AKS API's names where one exists (`vmSize`, `minCount`, `maxCount`, `nodeTaints`,
`nodeLabels`, `gpuInstanceProfile`, `gpuProfile.driver`, `scaleSetPriority`, ...), so a reader who
knows AKS can read `Pulumi.<stack>.yaml` at a glance, and values are checked against what the AKS API
version this program sends accepts (`components/aks_api.py`). Every problem is collected and reported
at once, each naming the key as it appears in the stack file (pools by name:
`gpu-aks:gpuPools[gput4].minCount`), the bad value (masked when the key is secret) and what is
allowed; nothing is created until all are fixed. No Pulumi imports: `components/stack_config.py`
reads `pulumi.Config` and hands the raw values here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gpu_aks_policies.catalog import GPU_SKUS, UNSUPPORTED_GPU_SKUS
from gpu_aks_policies.declarations import Check, Document, Reader, Section, describe
from gpu_aks_policies.declarations import reference_markdown as _reference_markdown

from components.settings.access import ACCESS, DEFAULT_ROLE_PROPAGATION_SECONDS, AccessSettings
from components.settings.admission_policy import ADMISSION_POLICY, VALIDATION_ACTIONS, AdmissionPolicySettings
from components.settings.cluster import CLUSTER, DEFAULT_AUTOSCALER_PROFILE, KUBELOGIN_MODES, ClusterSettings
from components.settings.common import AKS_MAX_NODES_PER_POOL, PROJECT, ZONES, ParseContext, SettingsError
from components.settings.device_plugin import DEVICE_PLUGIN, DevicePluginSettings
from components.settings.node_baseline import SUBNETS_CHECK, all_subnets
from components.settings.observability import OBSERVABILITY, AlertSettings, ObservabilitySettings
from components.settings.pools import (
    CPU_POOLS,
    GPU_POOLS,
    SUFFIXED_NAME_LENGTH,
    SYSTEM_POOL,
    GpuNodePoolSettings,
    NodePoolSettings,
    SystemPoolSettings,
    azure_pool_name,
    create_only_properties,
    pool_key,
)
from components.settings.production import MAINTENANCE, MaintenanceSettings
from components.settings.smoke_test import SMOKE_TEST, SmokeTestSettings

__all__ = [
    "AKS_MAX_NODES_PER_POOL", "DEFAULT_AUTOSCALER_PROFILE", "DEFAULT_ROLE_PROPAGATION_SECONDS", "DOCUMENT",
    "KUBELOGIN_MODES", "PROJECT", "SUFFIXED_NAME_LENGTH", "TOP_LEVEL_KEYS", "VALIDATION_ACTIONS", "ZONES",
    "AccessSettings", "AdmissionPolicySettings", "AlertSettings", "ObservabilitySettings",
    "ClusterSettings", "DevicePluginSettings", "GpuNodePoolSettings",
    "NodePoolSettings", "PlatformSettings", "SettingsError", "SmokeTestSettings", "SystemPoolSettings",
    "azure_pool_name", "create_only_properties", "describe", "parse_settings", "pool_key", "reference_markdown",
]


@dataclass(frozen=True)
class PlatformSettings:
    stack: str
    cluster: ClusterSettings
    system_pool: SystemPoolSettings
    cpu_pools: tuple[NodePoolSettings, ...]
    gpu_pools: tuple[GpuNodePoolSettings, ...]
    device_plugin: DevicePluginSettings
    smoke_test: SmokeTestSettings
    access: AccessSettings = field(default_factory=AccessSettings)
    admission_policy: AdmissionPolicySettings = field(default_factory=AdmissionPolicySettings)
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    #: Things that are allowed but worth a look (a Kubernetes version close to its end of support).
    warnings: tuple[str, ...] = ()

    def subnets(self) -> tuple[str, ...]:
        """Every subnet the pools' nodes and pods join, once each (IDs compared without case): the
        control-plane identity's Network Contributor scopes."""
        baselines = [self.system_pool.baseline, *(pool.baseline for pool in (*self.cpu_pools, *self.gpu_pools))]
        return all_subnets(baselines)

    def served_gpu_pools(self) -> tuple[GpuNodePoolSettings, ...]:
        return tuple(pool for pool in self.gpu_pools if pool.device_plugin)


def _pool_names_are_unique(reader: Reader) -> None:
    seen: dict[str, str] = {reader.get("systemPool.name"): "systemPool"}
    for list_key in ("cpuPools", "gpuPools"):
        for index, pool in enumerate(reader.get(list_key)):
            # Two pools of one name: positions are the only unambiguous way to name them.
            key = f"{list_key}[{index}]"
            if pool["name"] in seen:
                reader.problem(f"{key}.name", f"{describe(pool['name'])} is already the name of {seen[pool['name']]}; "
                                              "pool names must be unique")
            else:
                seen[pool["name"]] = key


def _platform(reader: Reader) -> PlatformSettings:
    context: ParseContext = reader.context
    device_plugin = reader.children["devicePlugin"].build()
    return PlatformSettings(
        stack=context.stack,
        cluster=reader.children["cluster"].build(),
        system_pool=reader.children["systemPool"].build(),
        cpu_pools=tuple(pool.build() for pool in reader.lists["cpuPools"]),
        gpu_pools=tuple(pool.build(plugin=device_plugin) for pool in reader.lists["gpuPools"]),
        device_plugin=device_plugin,
        smoke_test=reader.children["smokeTest"].build(),
        access=reader.children["access"].build(),
        admission_policy=reader.children["admissionPolicy"].build(),
        maintenance=reader.children["maintenance"].build(),
        observability=reader.children["observability"].build(),
        warnings=tuple(reader.problems.warnings),
    )


#: Every `gpu-aks:*` key, in the order they are parsed (a section's checks may read the sections before it).
DOCUMENT = Document(
    PROJECT,
    "Every key of the `gpu-aks` Pulumi project, as written in `Pulumi.<stack>.yaml` (structured values under "
    "`config:`). All problems are reported at once before anything is created; values of secret keys are shown "
    "as `[secret]`. The Azure region is `azure-native:location`.",
    Section("", "", (CLUSTER, ACCESS, SYSTEM_POOL, CPU_POOLS, GPU_POOLS,
                     Check(_pool_names_are_unique, doc="Pool names are unique across systemPool, cpuPools and gpuPools."),
                     SUBNETS_CHECK,
                     DEVICE_PLUGIN, ADMISSION_POLICY, SMOKE_TEST, MAINTENANCE,
                     OBSERVABILITY), build=_platform),
    misplaced={"location": "the Azure region is read from azure-native:location; write "
                           "`azure-native:location: eastus2` in Pulumi.<stack>.yaml instead"},
)
TOP_LEVEL_KEYS = DOCUMENT.root.key_names


def parse_settings(raw: Mapping[str, Any], stack: str, location: Any = None, secret_keys: Collection[str] = (),
                   today: date | None = None, environ: Mapping[str, str] | None = None) -> PlatformSettings:
    """Validate the raw stack config (the `gpu-aks:*` keys, already decoded) and
    `azure-native:location`. `secret_keys` are the project keys whose values are secret.

    Raises SettingsError listing every problem.
    """
    context = ParseContext(stack, location, today or date.today(), frozenset(secret_keys), dict(environ or {}))
    reader = DOCUMENT.parse(raw, context, secret_keys)
    if reader.problems.items:
        raise SettingsError(reader.problems.items)
    settings: PlatformSettings = reader.build()
    return settings


def gpu_sizes_markdown() -> str:
    """The sizes `gpuPools[].vmSize` accepts and those it refuses, from the catalog the parser reads
    (`gpu_aks_policies.catalog`): until 0.3.1 they were listed only in an error message."""
    lines = ["## GPU sizes a GPU pool accepts", "",
             "`gpuPools[].vmSize` takes these sizes (`gpu_aks_policies.catalog`, which the parser reads). MIG: the "
             "`gpuInstanceProfile` values the size takes and the partition each makes; `gpusPerNode` is then GPUs x "
             "instances per GPU (MIG1g: 7, MIG2g: 3, MIG3g: 2, MIG4g and MIG7g: 1).", "",
             "| vmSize | GPU | GPUs per VM | GPU memory (GiB) | MIG (`gpuInstanceProfile`: partition) | notes |",
             "|---|---|---|---|---|---|"]
    for sku in GPU_SKUS.values():
        mig = ", ".join(f"{profile}: {partition}" for profile, partition in sku.mig_partitions.items()) or "no"
        notes = [note for note in (
            f"a {sku.gpu_share} share of one GPU (vGPU)" if sku.gpu_share and sku.gpu_share != "1" else "",
            f"{sku.arch} host" if sku.arch != "amd64" else "",
            "Ubuntu only" if sku.ubuntu_only else "") if note]
        lines.append(f"| `{sku.vm_size}` | {sku.model} | {sku.gpus} | {sku.gpu_memory_gib} | {mig} | "
                     f"{'; '.join(notes)} |")
    lines += ["", "Refused, with the reason and the replacement the error names:", "",
              "| vmSize | why | use instead |", "|---|---|---|"]
    for unsupported in UNSUPPORTED_GPU_SKUS.values():
        lines.append(f"| `{unsupported.vm_size}` | {unsupported.reason} | {unsupported.replacement} |")
    return "\n".join(lines) + "\n"


def reference_markdown() -> str:
    """`docs/configuration.md`, generated from the declarations and the GPU catalog."""
    return _reference_markdown(DOCUMENT, "Write keys as in `Pulumi.dev.yaml` and `Pulumi.prod.yaml`; run "
                                         "`python -m tools.preview` to see what a stack would create.") + \
        "\n" + gpu_sizes_markdown()
