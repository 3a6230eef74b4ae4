"""Pool kinds: each kind is one module here, listed once in `KINDS`.

A kind states, in its module: its settings section (shared pool keys: `components/settings/pools.py`), the
resources it creates as pure specs (`agentpool.AgentPoolSpec`), the labels and taints its nodes carry,
the GPUs it may bring (`Offer`s) and what it asks of Azure's quota (`CapacityNeed`). Everything else
reads one kind-neutral `Pool` per pool, from `platform_pools(settings)`, and never branches on the
kind: the device-plugin and exporter selectors, the admission policy, the smoke test, the outputs
contract, the preflight and the preview. Pure, no Pulumi; the Pulumi components in `components/`
create what the specs say.

Layering: this package sits above `components/settings/` (it reads settings objects) and below the
Pulumi components and `tools/`; the registry (this file) sits above the kinds, as kube-linter's
`pkg/templates/all` sits above its templates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpu_aks_policies.declarations import ListOf
from gpu_aks_policies.pools.model import CapacityNeed, Pool

from components.pools.agentpool import AgentPoolBody, AgentPoolSpec, agent_pool_properties
from components.pools.cpu import CPU
from components.pools.gpu import GPU
from components.pools.kind import AgentPoolKind, KubernetesObjectsSpec, PoolKind, surge_nodes
from components.pools.nap import NAP
from components.pools.rules import own_plugin_problems, own_pool_problems, stack_pool_rule
from components.pools.system import SYSTEM
from components.settings.pools import create_only_properties

if TYPE_CHECKING:
    from components.pools.kind import PlatformView

__all__ = ["AGENT_POOL_CREATE_ONLY", "AGENT_POOL_KINDS", "KINDS", "RENAMED_TYPES", "AgentPoolBody", "AgentPoolKind",
           "AgentPoolSpec", "KubernetesObjectsSpec", "PlatformPools", "PoolKind", "agent_pool_properties",
           "own_plugin_problems", "own_pool_problems", "platform_pools", "stack_pool_rule", "surge_nodes"]

#: Every pool kind, in the order their pools are created and listed.
KINDS: tuple[PoolKind, ...] = (SYSTEM, CPU, GPU, NAP)
#: The kinds whose pools are `AgentPool` resources of their own (the system pool is inline).
AGENT_POOL_KINDS: tuple[AgentPoolKind, ...] = (CPU, GPU)
#: The AgentPool properties Azure fixes at creation (a change needs a new pool), for every
#: AgentPool-backed kind alike (`replace_on_changes`): each kind's `create_only` keys, and those
#: gpu-aks sets without a key. A property another kind's pools never set is harmless in the list.
AGENT_POOL_CREATE_ONLY: tuple[str, ...] = tuple(dict.fromkeys(
    name for kind in reversed(AGENT_POOL_KINDS) for name in create_only_properties(
        kind.section.item if isinstance(kind.section, ListOf) else kind.section)))
#: Component types renamed since a release, new -> former (each an alias on the component).
RENAMED_TYPES: dict[str, str] = {kind.component_type: former for kind in AGENT_POOL_KINDS for former in kind.former_types}


@dataclass(frozen=True)
class PlatformPools:
    """Every pool of a platform, as facts, in `KINDS` order then config order."""

    pools: tuple[Pool, ...]

    @property
    def gpu(self) -> tuple[Pool, ...]:
        """The pools that bring GPUs."""
        return tuple(pool for pool in self.pools if pool.gpu)

    @property
    def user(self) -> tuple[Pool, ...]:
        """The CPU user pools: no GPUs, not the system pool."""
        return tuple(pool for pool in self.pools if pool.role == "cpu")

    @property
    def served(self) -> tuple[Pool, ...]:
        """The GPU pools gpu-aks's device plugin serves."""
        return tuple(pool for pool in self.pools if pool.served)

    def capacity(self) -> tuple[CapacityNeed, ...]:
        return tuple(need for pool in self.pools for need in pool.capacity)

    def subnets(self) -> tuple[str, ...]:
        """Every subnet the pools' nodes and pods join, in pool order, once each (IDs compared without
        case): the control-plane identity's Network Contributor scopes."""
        seen: dict[str, str] = {}
        for pool in self.pools:
            for subnet in pool.subnets:
                seen.setdefault(subnet.lower(), subnet)
        return tuple(seen.values())


def platform_pools(settings: PlatformView) -> PlatformPools:
    """The facts of every pool in `settings`, each computed once, by its kind."""
    return PlatformPools(tuple(kind.facts(pool, settings) for kind in KINDS for pool in kind.pools(settings)))
