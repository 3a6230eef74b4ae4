"""The pack's pool rule, run by the platform on its own pools at settings time, before anything is created.

The pack judges every AgentPool and NodePool a stack creates (`gpu-node-pools-are-tainted`:
`gpu_aks_policies.pool_rules`). The platform's own pools are read by the same backend readers
(`gpu_aks_policies.pools`) from the very resources the kinds will create (`PoolKind.resources`), and
judged by the same function, so the settings and the pack cannot disagree about them: what the pack
would refuse at preview the settings refuse first, at the config key the problem is about, with the
stack file's line (`Pulumi.prod.yaml:98: gpu-aks:gpuPools[t4spot].nodeTaints: ...`).

The rule's config is the pack's for the stack: `policies/config.<stack>.json`, the file CI gives
`pulumi preview --policy-pack-config` (.github/workflows/pr.yaml), else the rule's defaults. A
mandatory rule refuses; an advisory one warns; a disabled one is not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_aks_policies.pool_rules import gpu_sizes, pool_problems
from gpu_aks_policies.pools import pools_of
from gpu_aks_policies.rule_config import TAINTED_GPU_POOLS, RuleConfig, RuleConfigError
from gpu_aks_policies.rules import default_rule_config, parse_rule_config, read_rule_config_file
from gpu_aks_policies.scheduling import format_taint

from components.pools.agentpool import AgentPoolSpec, agent_pool_properties
from components.pools.kind import KubernetesObjectsSpec
from components.settings.common import SettingsError

if TYPE_CHECKING:
    from components.pools.kind import PlatformView, PoolKind

#: The policy pack's folder beside the program (`Pulumi.yaml` and `policies/` share the root).
POLICIES = Path(__file__).resolve().parents[2] / "policies"
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")

AGENT_POOL_TYPE = "azure-native:containerservice:AgentPool"


def stack_pool_rule(stack: str, policies: Path | None = None) -> RuleConfig:
    """`gpu-node-pools-are-tainted` as the pack runs it for this stack. Raises SettingsError naming the
    file when the stack's pack config is broken (the preview refuses it the same way)."""
    path = (policies or POLICIES) / f"config.{stack}.json"
    if not _STACK_NAME.fullmatch(stack) or not path.is_file():
        return default_rule_config()[TAINTED_GPU_POOLS]
    try:
        return parse_rule_config(read_rule_config_file(str(path)))[TAINTED_GPU_POOLS]
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
                for view in pools_of(resource_type, props):
                    if not gpu_sizes(view):
                        continue
                    for problem in pool_problems(view, config):
                        # The taint fix in the stack file's form (`nodeTaints` holds strings in every kind).
                        fix = f'nodeTaints: ["{format_taint(config.gpu_taints[0])}"]' if problem.aspect == "taints" \
                            else problem.fix
                        found.append((f"{key}.{kind.rule_keys[problem.aspect]}",
                                      f"the GPU pool {problem.reason}; the policy pack's {TAINTED_GPU_POOLS} "
                                      f"({config.level}) would refuse it at preview. Fix: {fix}"))
    return found
