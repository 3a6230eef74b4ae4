"""The pack's pool rules, run by the platform on its own pools at settings time, before anything is created.

The pack judges every AgentPool and NodePool a stack creates (`gpu-node-pools-are-tainted`) and
whether a self-installed NVIDIA device plugin serves each GPU pool that needs one
(`device-plugin-tolerates-gpu-pools`): `gpu_aks_policies.pool_rules`. The platform's own pools are read
by the same backend readers (`gpu_aks_policies.pools`) from the very resources the kinds will create
(`PoolKind.resources`), its device-plugin DaemonSets are the ones `GpuDevicePlugin` will create (built
by the same `components.manifests` builders from the same served pools), and both are judged by the
same functions, so the settings and the pack cannot disagree about them: what the pack would refuse at
preview the settings refuse first, at the config key the problem is about, with the stack file's line
(`Pulumi.prod.yaml:98: gpu-aks:gpuPools[t4spot].nodeTaints: ...`).

Each rule's config is the pack's for the stack: `policies/config.<stack>.json`, the file CI gives
`pulumi preview --policy-pack-config` (.github/workflows/pr.yaml), else the rule's defaults. A
mandatory rule refuses; an advisory one warns; a disabled one is not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.dra_driver import RELEASE_TYPES
from gpu_aks_policies.pool_rules import (
    DAEMONSET_TYPES,
    UNSERVED,
    StackResource,
    device_plugins,
    gpu_sizes,
    needs_device_plugin,
    plugin_gaps,
    pool_problems,
)
from gpu_aks_policies.pools import pools_of
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, TAINTED_GPU_POOLS, RuleConfig, RuleConfigError
from gpu_aks_policies.rules import default_rule_config, parse_rule_config, read_rule_config_file
from gpu_aks_policies.scheduling import format_taint

from components.manifests import device_plugin_daemonsets, dra_driver_values
from components.pools.agentpool import AgentPoolSpec, agent_pool_properties
from components.pools.kind import KubernetesObjectsSpec
from components.settings.common import SettingsError
from components.settings.dra import DRA_CHART

if TYPE_CHECKING:
    from components.pools.kind import PlatformView, PoolKind

#: The policy pack's folder beside the program (`Pulumi.yaml` and `policies/` share the root).
POLICIES = Path(__file__).resolve().parents[2] / "policies"
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")

AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"


def stack_pool_rule(stack: str, policies: Path | None = None, rule: str = TAINTED_GPU_POOLS) -> RuleConfig:
    """A pool rule (`gpu-node-pools-are-tainted` unless named) as the pack runs it for this stack.
    Raises SettingsError naming the file when the stack's pack config is broken (the preview refuses it
    the same way)."""
    path = (policies or POLICIES) / f"config.{stack}.json"
    if not _STACK_NAME.fullmatch(stack) or not path.is_file():
        return default_rule_config()[rule]
    try:
        return parse_rule_config(read_rule_config_file(str(path)))[rule]
    except RuleConfigError as error:
        raise SettingsError(error.problems) from None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


#: Maps whose keys are names the user chose (labels, tags), not SDK property names.
_USER_KEYED = {"node_labels", "tags"}


def _wire(value: Any, user_keyed: bool = False) -> Any:
    """The SDK's keyword arguments as the engine sends them to the pack: camelCase keys, all the way down."""
    if isinstance(value, Mapping):
        return {(key if user_keyed else _camel(key)): _wire(item, key in _USER_KEYED) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_wire(item) for item in value]
    return value


def resources_of(specs: Sequence[AgentPoolSpec | KubernetesObjectsSpec]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(resource type, properties as the pack receives them) of each resource a pool is made of."""
    for spec in specs:
        if isinstance(spec, AgentPoolSpec):
            yield AGENT_POOL_TYPE, {**_wire(agent_pool_properties(spec.body, None)), "agentPoolName": spec.azure_name}
            continue
        for manifest in spec.manifests:
            yield f"kubernetes:{manifest.get('apiVersion')}:{manifest.get('kind')}", manifest


def own_pool_problems(kinds: Sequence[PoolKind], settings: PlatformView, config: RuleConfig) -> list[tuple[str, str]]:
    """(config key, message) for each reason the pool rule gives against one of the platform's own GPU
    pools (none when the rule is disabled): the caller reports them as problems when the rule is
    mandatory, as warnings when advisory."""
    if config.level == "disabled":
        return []
    found = []
    for kind in kinds:
        for pool in kind.pools(settings):
            key = kind.facts(pool, settings).key
            for resource_type, props in resources_of(kind.resources(pool)):
                for read in pools_of(resource_type, props):
                    if not gpu_sizes(read):
                        continue
                    for problem in pool_problems(read, config):
                        # The taint fix in the stack file's form (`nodeTaints` holds strings in every kind).
                        fix = f'nodeTaints: ["{format_taint(config.gpu_taints[0])}"]' if problem.aspect == "taints" \
                            else problem.fix
                        found.append((f"{key}.{kind.rule_keys[problem.aspect]}",
                                      f"the GPU pool {problem.reason}; the policy pack's {TAINTED_GPU_POOLS} "
                                      f"({config.level}) would refuse it at preview. Fix: {fix}"))
    return found


def own_plugin_resources(kinds: Sequence[PoolKind], settings: PlatformView) -> list[StackResource]:
    """The device-plugin DaemonSets the program creates for these settings, as the pack receives them,
    each named by its object name: `GpuDevicePlugin`'s, from the same builder and the same served pools
    (`components/gpu_cluster.py` creates none when the plugin is disabled or serves no pool)."""
    plugin, dra = settings.device_plugin, settings.dra
    every = [kind.facts(pool, settings) for kind in kinds for pool in kind.pools(settings)]
    served = [facts for facts in every if facts.served]
    resources = [StackResource(manifest["metadata"]["name"], DAEMONSET_TYPES[0], manifest)
                 for manifest in device_plugin_daemonsets(plugin.namespace, plugin.image, plugin.mig_strategy, served)
                 ] if plugin.enabled and served else []
    through_dra = [facts for facts in every if dra.serves(facts.name)]
    if through_dra:  # `GpuDraDriver`'s release, as the pack receives it
        resources.append(StackResource(DRA_CHART, RELEASE_TYPES[0], {"chart": DRA_CHART,
                                                                      "values": dra_driver_values(through_dra)}))
    return resources


def own_plugin_problems(kinds: Sequence[PoolKind], settings: PlatformView, config: RuleConfig) -> list[tuple[str, str]]:
    """(config key, message) for each of the platform's own GPU pools that its device-plugin DaemonSets
    leave unserved while the pack's `device-plugin-tolerates-gpu-pools` says one must serve it (none
    when the rule is disabled, or no DaemonSet is created: the pack then assumes another plugin)."""
    plugins = device_plugins(own_plugin_resources(kinds, settings)) if config.level != "disabled" else []
    if not plugins:
        return []
    found = []
    for kind in kinds:
        for pool in kind.pools(settings):
            facts = kind.facts(pool, settings)
            for resource_type, props in resources_of(kind.resources(pool)):
                for read in pools_of(resource_type, props):
                    if not needs_device_plugin(read) or not (gaps := plugin_gaps(read, plugins)):
                        continue
                    found.append(("devicePlugin.pools",
                                  f"leaves out the GPU pool {facts.key}, which {UNSERVED}: {'; '.join(gaps)}; the "
                                  f"policy pack's {DEVICE_PLUGIN_TOLERATES_POOLS} ({config.level}) would refuse it at "
                                  f"preview. Fix: add {facts.name!r} to devicePlugin.pools, or leave devicePlugin.pools "
                                  "out (it then serves every GPU pool whose driver AKS installs)"))
    return found
