"""The whole stack config: `DOCUMENT` (every `gpu-aks:*` key, each pool kind's section included, from
`components.pools.KINDS`), `parse_settings` and the `PlatformSettings` it returns.

Above the settings sections (`components/settings/`) and the pool kinds (`components/pools/`), so a
new pool kind is one module and one entry in `KINDS`: its section joins the document, its pools join
`PlatformSettings.pools` and the unique-name check, its `root_checks` (rules across sections) run after
every section. No kind module or kind's config key is named here (tests/test_pool_kinds.py).

Keys follow the AKS API's names where one exists (`vmSize`, `minCount`, `maxCount`, `nodeTaints`,
`nodeLabels`, `gpuInstanceProfile`, `gpuProfile.driver`, `scaleSetPriority`, ...), so a reader who
knows AKS can read `Pulumi.<stack>.yaml` at a glance, and values are checked against what the AKS API
version this program sends accepts (`components/aks_api.py`). Every problem is collected and reported
at once, each naming the key as it appears in the stack file (pools by name:
`gpu-aks:<pools>[<name>].minCount`), the bad value (masked when the key is secret) and what is
allowed; nothing is created until all are fixed. No Pulumi imports: `components/stack_config.py`
reads `pulumi.Config` and hands the raw values here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, TypeVar

from gpu_aks_policies.declarations import Check, Document, Reader, Section, describe
from gpu_aks_policies.declarations import reference_markdown as _reference_markdown
from gpu_aks_policies.limits import MAX_NODE_POOLS, MAX_NON_AGENT_POOLS
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, RuleConfig

from components.pools import KINDS, PoolKind, own_plugin_problems, own_pool_problems, stack_pool_rule
from components.pools.document import DOCUMENT_POOLS, pool_readers
from components.settings.access import ACCESS, AccessSettings
from components.settings.admission_policy import ADMISSION_POLICY, AdmissionPolicySettings
from components.settings.cluster import CLUSTER, ClusterSettings
from components.settings.common import PROJECT, ParseContext, SettingsError
from components.settings.device_plugin import DEVICE_PLUGIN, DevicePluginSettings
from components.settings.dra import DRA, DraSettings
from components.settings.maintenance import MAINTENANCE, MaintenanceSettings
from components.settings.node_baseline import SUBNETS_CHECK
from components.settings.observability import OBSERVABILITY, ObservabilitySettings
from components.settings.pools import GpuAgentPoolSettings, SystemPoolSettings, UserAgentPoolSettings
from components.settings.queues import QUEUES, QueuesSettings
from components.settings.smoke_test import SMOKE_TEST, SmokeTestSettings

__all__ = ["DOCUMENT", "TOP_LEVEL_KEYS", "PlatformSettings", "parse_settings", "reference_markdown"]

_Pool = TypeVar("_Pool")


@dataclass(frozen=True)
class PlatformSettings:
    stack: str
    cluster: ClusterSettings
    #: Each pool kind's pools (its settings objects, in config order), by the kind's config key.
    pools: Mapping[str, tuple[Any, ...]]
    device_plugin: DevicePluginSettings
    smoke_test: SmokeTestSettings
    access: AccessSettings = field(default_factory=AccessSettings)
    admission_policy: AdmissionPolicySettings = field(default_factory=AdmissionPolicySettings)
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    dra: DraSettings = field(default_factory=DraSettings)
    queues: QueuesSettings = field(default_factory=QueuesSettings)
    #: Things that are allowed but worth a look (a Kubernetes version close to its end of support).
    warnings: tuple[str, ...] = ()

    # The pools of the AgentPool-backed kinds by their settings type, for the readers of one kind's
    # settings (each kind reads its own with `kind.pools(settings)`); no kind is named here.

    def _pools_of(self, settings_type: type[_Pool]) -> tuple[_Pool, ...]:
        return tuple(pool for pools in self.pools.values() for pool in pools if type(pool) is settings_type)

    @property
    def system_pool(self) -> SystemPoolSettings:
        return self._pools_of(SystemPoolSettings)[0]

    @property
    def cpu_pools(self) -> tuple[UserAgentPoolSettings, ...]:
        return self._pools_of(UserAgentPoolSettings)

    @property
    def gpu_pools(self) -> tuple[GpuAgentPoolSettings, ...]:
        return self._pools_of(GpuAgentPoolSettings)


def _pool_names_are_unique(reader: Reader) -> None:
    seen: dict[str, str] = {}
    for kind in KINDS:
        value = reader.get(kind.config_key)
        # A list of pools is named by position (two pools of one name: the only unambiguous way); a
        # single pool by its key.
        named = [(f"{kind.config_key}[{index}]", pool) for index, pool in enumerate(value)] \
            if isinstance(value, list) else [(kind.config_key, value)]
        for key, pool in named:
            if pool["name"] in seen:
                reader.problem(f"{key}.name", f"{describe(pool['name'])} is already the name of {seen[pool['name']]}; "
                                              "pool names must be unique")
            else:
                seen[pool["name"]] = key




def _pool_count(reader: Reader, kind: PoolKind) -> int:
    """How many pools the kind's key declares (the inline system pool is always one)."""
    if kind.inline:
        return 1
    return len(value) if isinstance(value := reader.get(kind.config_key), list) else 0


def _pool_count_within_aks_limit(reader: Reader) -> None:
    counts = {kind.config_key: _pool_count(reader, kind) for kind in KINDS if kind.agent_pools}
    total = sum(counts.values())
    if total > MAX_NODE_POOLS:
        largest = max(counts, key=lambda key: counts[key])
        reader.problem(largest, f"{' + '.join(f'{count} in {key}' for key, count in counts.items())} make {total} node "
                                f"pools; AKS allows at most {MAX_NODE_POOLS} per cluster")
    for kind in KINDS:
        if not kind.agent_pools and (count := _pool_count(reader, kind)) > MAX_NON_AGENT_POOLS:
            reader.problem(kind.config_key, f"{count} entries; gpu-aks allows at most {MAX_NON_AGENT_POOLS} (its own "
                                            "bound: these are Karpenter NodePools, not AKS agent pools)")


#: How a refused secret section's message starts, whatever the section.
_IS_SECRET = "is a secret (`pulumi config set --secret`, or a `secure:` value inside it), but its "


def _pool_sections_are_not_secret(reader: Reader) -> None:
    """A pool section set with `pulumi config set --secret` (or holding a `secure:` value) is refused, and
    nothing of it is printed: its pool names become resource names, which Pulumi never encrypts (URNs),
    and Kubernetes label values, and its sizes, counts, labels and taints become the inputs of agent
    pools, Karpenter NodePools, the device plugin, the admission policy and the outputs contract. Marking
    each of them secret would still leave the URNs in plain text."""
    secret = reader.context.secret_sections
    for kind in KINDS:
        if kind.config_key in secret:
            reader.problem(kind.config_key, _IS_SECRET + "pool names become resource names (URNs), which Pulumi never "
                                            "encrypts, and its sizes, labels and taints are written as they are into "
                                            "the node pools and the outputs contract; set it in plain text")


#: The sections that may be secret: `cluster`, whose values are passed as secret inputs. Every other section
#: that is not a pool section is written as it is into the resources below, which Pulumi prints in every
#: preview and keeps unencrypted in state, so a secret one is refused as a secret pool section is (issue 41:
#: a secret `devicePlugin` image, `access` object IDs or `maintenance` window reached their resources in
#: plain text). A section added later is refused until it says how it keeps a secret.
SECRET_CAPABLE_SECTIONS = ("cluster",)
_WRITTEN_INTO = {
    "access": "the role assignments",
    "devicePlugin": "the device plugin's DaemonSets",
    "admissionPolicy": "the ValidatingAdmissionPolicy and its binding",
    "smokeTest": "the smoke-test Jobs",
    "maintenance": "the maintenance configurations",
    "observability": "the DCGM exporter, the alert rules and the dashboard",
}


def _plain_sections_are_not_secret(reader: Reader) -> None:
    pool_keys = {kind.config_key for kind in KINDS}
    for key in reader.context.secret_sections:
        if key in pool_keys or key in SECRET_CAPABLE_SECTIONS or key not in TOP_LEVEL_KEYS:
            continue
        reader.problem(key, _IS_SECRET + f"values are written as they are into "
                            f"{_WRITTEN_INTO.get(key, 'the resources it configures')}, which Pulumi prints in every "
                            "preview and keeps unencrypted in state; set it in plain text")


def _platform(reader: Reader) -> PlatformSettings:
    context: ParseContext = reader.context
    pool_keys = {kind.config_key for kind in KINDS}
    built = {key: child.build() for key, child in reader.children.items() if key not in pool_keys}
    return PlatformSettings(
        stack=context.stack,
        cluster=built["cluster"],
        pools={kind.config_key: tuple(kind.read(pool, built) for pool in pool_readers(reader, kind)) for kind in KINDS},
        device_plugin=built["devicePlugin"],
        smoke_test=built["smokeTest"],
        access=built["access"],
        admission_policy=built["admissionPolicy"],
        maintenance=built["maintenance"],
        observability=built["observability"],
        dra=built["dra"],
        queues=built["queues"],
        warnings=tuple(reader.problems.warnings),
    )


def _keys(kinds: Sequence[PoolKind]) -> str:
    return ", ".join(kind.config_key for kind in kinds[:-1]) + (" and " if len(kinds) > 1 else "") + kinds[-1].config_key


_POOL_KEYS = _keys(KINDS)
_AGENT_POOL_KEYS = _keys([kind for kind in KINDS if kind.agent_pools])
_NON_AGENT_POOL_KEYS = _keys([kind for kind in KINDS if not kind.agent_pools])

#: Every `gpu-aks:*` key, in the order they are parsed (a section's checks may read the sections before it).
DOCUMENT = Document(
    PROJECT,
    "Every key of the `gpu-aks` Pulumi project, as written in `Pulumi.<stack>.yaml` (structured values under "
    "`config:`). All problems are reported at once before anything is created; values of secret keys are shown "
    "as `[secret]`. The Azure region is `azure-native:location`.",
    Section("", "", (CLUSTER, ACCESS, *(kind.section for kind in KINDS),
                     Check(_pool_names_are_unique, doc=f"Pool names are unique across {_POOL_KEYS}."),
                     Check(_pool_sections_are_not_secret, doc=f"{_POOL_KEYS} are not secret: pool names become "
                                                              "resource names, which are never encrypted."),
                     Check(_plain_sections_are_not_secret, doc="Of the other sections only `cluster` may be secret "
                                                               "(what it gives the cluster is passed as secret "
                                                               "inputs); the rest are written as they are into their "
                                                               "resources."),
                     Check(_pool_count_within_aks_limit, doc=f"At most {MAX_NODE_POOLS} node pools across "
                                                             f"{_AGENT_POOL_KEYS} (AKS's limit per cluster; "
                                                             "Karpenter NodePools are not agent pools), and at most "
                                                             f"{MAX_NON_AGENT_POOLS} in {_NON_AGENT_POOL_KEYS} "
                                                             "(gpu-aks's own bound)."),
                     SUBNETS_CHECK,
                     DEVICE_PLUGIN, DRA, QUEUES, ADMISSION_POLICY, SMOKE_TEST, MAINTENANCE,
                     OBSERVABILITY,
                     # Each kind's rules across sections, last: they may read any section.
                     *(check for kind in KINDS for check in kind.root_checks)),
            build=_platform),
    misplaced={"location": "the Azure region is read from azure-native:location; write "
                           "`azure-native:location: eastus2` in Pulumi.<stack>.yaml instead"},
)
TOP_LEVEL_KEYS = DOCUMENT.root.key_names


def parse_settings(raw: Mapping[str, Any], stack: str, location: Any = None, secret_keys: Collection[str] = (),
                   today: date | None = None, environ: Mapping[str, str] | None = None,
                   pool_rule: RuleConfig | None = None, plugin_rule: RuleConfig | None = None) -> PlatformSettings:
    """Validate the raw stack config (the `gpu-aks:*` keys, already decoded) and
    `azure-native:location`. `secret_keys` are the project keys whose values are secret. Once the
    document is valid, the pack's pool rules judge the platform's own pools and device-plugin
    DaemonSets (`pool_rule`: gpu-node-pools-are-tainted; `plugin_rule`: device-plugin-tolerates-gpu-pools;
    each by default as the pack runs it for this stack: `components/pools/rules.py`).

    Raises SettingsError listing every problem.
    """
    context = ParseContext(stack, location, today or date.today(), frozenset(secret_keys), dict(environ or {}),
                           DOCUMENT_POOLS)
    reader = DOCUMENT.parse(raw, context, secret_keys)
    if reader.problems.items:
        raise SettingsError(reader.problems.items)
    settings: PlatformSettings = reader.build()
    # The pack's pool rules on the platform's own pools, reported as the document reports (namespaced,
    # secret sections redacted, one line each).
    for rule, problems in (
            (pool_rule or stack_pool_rule(stack), own_pool_problems),
            (plugin_rule or stack_pool_rule(stack, rule=DEVICE_PLUGIN_TOLERATES_POOLS), own_plugin_problems)):
        report = reader.problems.add if rule.level == "mandatory" else reader.problems.warn
        for key, message in problems(KINDS, settings, rule):
            report(key, message)
    if reader.problems.items:
        raise SettingsError(reader.problems.items)
    return replace(settings, warnings=tuple(reader.problems.warnings))


def reference_markdown() -> str:
    """`docs/configuration.md`, generated from the declarations and what each pool kind adds (the GPU
    kind: the sizes it accepts, from the catalog)."""
    extra = "".join("\n" + text for text in (kind.reference_markdown() for kind in KINDS) if text)
    return _reference_markdown(DOCUMENT, "Write keys as in `Pulumi.dev.yaml` and `Pulumi.prod.yaml`; run "
                                         "`python -m tools.preview` to see what a stack would create.") + extra
