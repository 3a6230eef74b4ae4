"""The extension recipes of README.md and CONTRIBUTING.md are true (issue 37): a checked dry run adds a
made-up pool kind and a made-up workload adapter to a copy of the product, touching only the files
each recipe lists, and the copy then serves them end to end (settings, pools, contract, cost, the
program's resources; the adapter's pod specs and the reference page).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: What the recipes say a new kind and a new adapter touch (README.md, "Extending"; CONTRIBUTING.md): an
#: AgentPool-backed kind and a NodePool-backed one alike.
KIND_RECIPE = {"components/pools/batch.py": "new", "components/pools/cpunap.py": "new",
               "components/pools/__init__.py": "its entry in KINDS"}
ADAPTER_RECIPE = {"policies/workloads/widget.py": "new"}

#: A made-up kind: Spot CPU AgentPools for batch jobs, under a key of their own. It brings its own
#: section (the shared pool keys) and class; everything else (the document, the unique-name check,
#: the pools' facts, the own-pool rule, the contract, cost, the Pulumi components) takes it from KINDS.
BATCH_KIND = '''
"""A made-up pool kind (tests/test_recipes.py): `gpu-aks:batchPools`, CPU AgentPools for batch jobs."""

from gpu_aks_policies.declarations import ListOf

from components.pools.cpu import CPU_POOL, CpuPoolKind
from components.settings.pools import pool_key

BATCH_POOLS = ListOf("batchPools", "CPU pools for batch jobs, each an AgentPool of its own.", CPU_POOL, pool_key,
                     noun="pools")


class BatchPoolKind(CpuPoolKind):
    config_key = "batchPools"
    section = BATCH_POOLS
    component_type = "gpu-aks:index:BatchAgentPool"
    former_types: tuple[str, ...] = ()


BATCH = BatchPoolKind()
'''

#: A made-up NodePool-backed kind: CPU Karpenter NodePools under node auto-provisioning. Its pools are
#: Kubernetes objects (a NodePool and its AKSNodeClass); the pack's NodePool reader gives their facts, as it
#: gives the NAP kind's.
CPU_NAP_KIND = '''
"""A made-up pool kind (tests/test_recipes.py): `gpu-aks:cpuNodePools`, CPU NodePools of the sizes named."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gpu_aks_policies.declarations import Key, ListOf, Reader, Section, string_list_problem
from gpu_aks_policies.pools.model import Pool
from gpu_aks_policies.pools.nodepool import node_pools

from components.pools.karpenter import aks_node_class
from components.pools.kind import KubernetesObjectsSpec
from components.settings.pools import POOL_NAME, pool_key


@dataclass(frozen=True)
class CpuNodePoolSettings:
    name: str
    vm_sizes: tuple[str, ...]
    cpus: int


def _settings(reader: Reader, **extra: Any) -> CpuNodePoolSettings:
    return CpuNodePoolSettings(reader.get("name"), tuple(reader.get("vmSizes")), reader.get("cpus"))


CPU_NODE_POOL = Section("cpuNodePools[]", "One CPU NodePool.", (
    POOL_NAME,
    Key("vmSizes", "The sizes it may bring.", "list of strings", [], check=string_list_problem),
    Key("cpus", "Its ceiling in vCPUs.", "integer", 64),
), build=_settings)


class CpuNodePoolKind:
    config_key = "cpuNodePools"
    section = ListOf("cpuNodePools", "CPU NodePools (NAP).", CPU_NODE_POOL, pool_key, noun="NodePools")
    inline = False
    agent_pools = False
    component_type = "gpu-aks:index:CpuNapPool"
    former_types: tuple[str, ...] = ()
    root_checks = ()
    rule_keys: Mapping[str, str] = {"taints": "vmSizes", "scaling": "cpus"}

    def read(self, reader: Reader, built: Mapping[str, Any]) -> CpuNodePoolSettings:
        return reader.build()

    def pools(self, settings: Any) -> Sequence[CpuNodePoolSettings]:
        return settings.pools[self.config_key]

    def node_pool(self, pool: CpuNodePoolSettings) -> dict[str, Any]:
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": pool.name}, "spec": {
            "limits": {"cpu": str(pool.cpus)}, "template": {
                "metadata": {"labels": {"gpu-aks.io/pool": pool.name}},
                "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": pool.name},
                         "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                           "values": list(pool.vm_sizes)}]}}}}

    def facts(self, pool: CpuNodePoolSettings, settings: Any) -> Pool:
        # The pack's reading of the NodePool the kind writes, named by the kind's key.
        [read] = node_pools("kubernetes:karpenter.sh/v1:NodePool", self.node_pool(pool))
        return replace(read.pool, key=f"{self.config_key}[{pool.name}]")

    def resources(self, pool: CpuNodePoolSettings) -> tuple[KubernetesObjectsSpec, ...]:
        return (KubernetesObjectsSpec(pool.name, (aks_node_class(pool.name), self.node_pool(pool))),)

    def cluster_properties(self, pools: Sequence[CpuNodePoolSettings]) -> Mapping[str, Any]:
        return {}

    def reference_markdown(self) -> str:
        return ""


CPU_NAP = CpuNodePoolKind()
'''

#: A made-up adapter: example.com Widgets run their pod template at spec.template.
WIDGET_ADAPTER = '''
"""A made-up adapter (tests/test_recipes.py): an example.com Widget runs `spec.template` once per replica."""

from ..podspecs import find_pod_specs, object_namespace
from .registry import register


@register("example.com", "Widget", gpus="spec.template.spec.containers[].resources",
          tolerations="spec.template.spec.tolerations", source="made up for the recipe test")
def widget(obj, context):
    return find_pod_specs(obj, namespace=object_namespace(obj))
'''

CHECK = '''
import json, sys
from datetime import date
from components.platform_settings import parse_settings, reference_markdown
from components.pools import platform_pools
from components.contract import platform_contract
from components.cost import cost_document
from components.pricing import read_price_table
from gpu_aks_policies.workloads import pod_specs_of
from gpu_aks_policies.workloads.registry import workloads_markdown
from offline.mockrun import run_program

raw = {"batchPools": [{"name": "batch", "vmSize": "Standard_D8ds_v5", "scaleSetPriority": "Spot",
                       "nodeTaints": ["workload=batch:NoSchedule"]}],
       "cpuNodePools": [{"name": "cpunap", "vmSizes": ["Standard_D16ds_v5"], "cpus": 64}]}
settings = parse_settings(raw, "recipe", "eastus2", today=date(2026, 11, 26), environ={})
pools = platform_pools(settings)
refused = []
try:
    parse_settings({"batchPools": [{"name": "system", "vmSize": "Standard_D8ds_v5"}]}, "recipe", "eastus2", environ={})
except Exception as error:
    refused = error.problems
run = run_program(__import__("pathlib").Path("."), "recipe", {
    "azure-native:location": "eastus2", "gpu-aks:batchPools": json.dumps(raw["batchPools"]),
    "gpu-aks:cpuNodePools": json.dumps(raw["cpuNodePools"])})
widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
          "spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
print(json.dumps({
    "keys": [pool.key for pool in pools.pools],
    "cpuPools": sorted(platform_contract(settings)["cpuPools"]),
    "cost": sorted(cost_document(pools.pools, read_price_table(), "eastus2")["pools"]),
    "reference": "batchPools" in reference_markdown(),
    "unique": [problem.split(": ", 1)[0] for problem in refused],
    "error": str(run.error) if run.error else None,
    "agentPools": sorted(r.inputs.get("agentPoolName", "")[:5] for r in run.resources
                         if r.type == "azure-native:containerservice:AgentPool"),
    "components": sorted(r.type for r in run.resources if r.type.startswith(("gpu-aks:index:Batch",
                                                                             "gpu-aks:index:CpuNap"))),
    "nodePools": sorted(r.inputs["metadata"]["name"] for r in run.resources
                        if r.type == "kubernetes:karpenter.sh/v1:NodePool"),
    "contract": {name: [pool["backend"], pool["role"], [offer["vmSize"] for offer in pool["offers"]]]
                 for name, pool in platform_contract(settings)["pools"].items() if name == "cpunap"},
    "widget": [pod.path for pod in pod_specs_of(widget)],
    "page": "example.com" in workloads_markdown(),
}))
'''

#: The product, as a copy the dry run edits (never the checkout itself).
PRODUCT = ("components", "policies", "observability", "offline", "tools", "app_sdk", "gpu_aks_plugin", "__main__.py",
           "Pulumi.yaml")


def _copy(destination: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "venv", "build", "*.egg-info")
    for name in PRODUCT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)


def _changed(before: Path, after: Path) -> dict[str, str]:
    """Files new or different in `after` (the product's own files; no bytecode)."""
    changed = {}
    for path in sorted(after.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.name == "gpu_aks_policies":
            continue
        relative = path.relative_to(after)
        if relative.parts[0] == "build":
            continue
        old = before / relative
        if not old.exists():
            changed[str(relative)] = "new"
        elif old.read_bytes() != path.read_bytes():
            changed[str(relative)] = "edited"
    return changed


@pytest.mark.slow
def test_a_made_up_kind_and_adapter_touch_only_the_files_their_recipes_list(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    _copy(before)
    _copy(after)
    # The kind recipe: its module, and its entry in KINDS (and AGENT_POOL_KINDS: its pools are AgentPools).
    (after / "components/pools/batch.py").write_text(textwrap.dedent(BATCH_KIND).lstrip())
    (after / "components/pools/cpunap.py").write_text(textwrap.dedent(CPU_NAP_KIND).lstrip())
    registry = after / "components/pools/__init__.py"
    text = registry.read_text()
    for old, new in (("from components.pools.cpu import CPU\n",
                      "from components.pools.batch import BATCH\nfrom components.pools.cpu import CPU\n"
                      "from components.pools.cpunap import CPU_NAP\n"),
                     ("KINDS: tuple[PoolKind, ...] = (SYSTEM, CPU, GPU, NAP)",
                      "KINDS: tuple[PoolKind, ...] = (SYSTEM, CPU, GPU, NAP, BATCH, CPU_NAP)"),
                     ("AGENT_POOL_KINDS: tuple[AgentPoolKind, ...] = (CPU, GPU)",
                      "AGENT_POOL_KINDS: tuple[AgentPoolKind, ...] = (CPU, GPU, BATCH)")):
        assert old in text, f"the recipe's anchor moved: {old!r}"
        text = text.replace(old, new)
    registry.write_text(text)
    # The adapter recipe: its module.
    (after / "policies/workloads/widget.py").write_text(textwrap.dedent(WIDGET_ADAPTER).lstrip())

    assert _changed(before, after) == {
        "components/pools/__init__.py": "edited", "components/pools/batch.py": "new", "components/pools/cpunap.py": "new",
        "policies/workloads/widget.py": "new"}
    assert set(_changed(before, after)) == set(KIND_RECIPE) | set(ADAPTER_RECIPE)

    # The copy's policies/ under its import name, ahead of the checkout's editable install.
    (after / "build").mkdir()
    (after / "build" / "gpu_aks_policies").symlink_to(after / "policies")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(after / "build"), str(after)]), "GPU_AKS_TODAY": "2026-11-26"}
    result = subprocess.run([sys.executable, "-c", CHECK], cwd=after, capture_output=True, text=True, env=environ,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["keys"] == ["systemPool", "batchPools[batch]", "cpuNodePools[cpunap]"]
    assert report["cpuPools"] == ["batch", "cpunap"] and {"batch", "cpunap"} <= set(report["cost"])
    assert report["reference"]
    assert report["unique"] == ["gpu-aks:batchPools[0].name"], "the unique-name check covers the new kind"
    assert report["error"] is None and report["agentPools"] == ["batch"]
    assert report["components"] == ["gpu-aks:index:BatchAgentPool", "gpu-aks:index:CpuNapPool"]
    # The NodePool-backed kind: its NodePool created, its pool in the contract as the pack reads it.
    assert report["nodePools"] == ["cpunap"]
    assert report["contract"] == {"cpunap": ["nodePool", "cpu", ["Standard_D16ds_v5"]]}
    assert report["widget"] == ["spec.template.spec"] and report["page"]


def test_the_recipes_name_the_files_the_dry_run_touches():
    recipes = (ROOT / "README.md").read_text() + (ROOT / "CONTRIBUTING.md").read_text()
    for anchor in ("components/pools/<kind>.py", "`KINDS`", "policies/workloads/<adapter>.py"):
        assert anchor in recipes, anchor
    assert "loading.py" not in recipes and "MODULE_GROUPS" not in recipes
