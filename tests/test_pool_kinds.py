"""Pool kinds (components/pools/): each kind is one module listed once in KINDS, and everything else
reads the kind-neutral Pool: the settings document, the pools' resources, the contract and the
capacity a stack asks of Azure."""

from __future__ import annotations

import ast
import re
from datetime import date
from pathlib import Path

import pulumi
import pytest
from gpu_aks_policies.catalog import gpu_sku
from gpu_aks_policies.pools.model import Offer, Pool
from pulumi_azure_native import resources

from components.cluster import ClusterTarget
from components.contract import contract_of
from components.node_pools import PoolArgs, PoolComponent
from components.platform_settings import DOCUMENT, TOP_LEVEL_KEYS, parse_settings
from components.pools import KINDS, KubernetesObjectsSpec, platform_pools
from components.pools.agentpool import AgentPoolBody, agent_pool_properties
from components.pools.document import DocumentPoolsOfKinds
from components.settings import SettingsError
from components.settings.common import ParseContext
from offline.mockrun import run_pulumi
from tests.conftest import ROOT

RAW = {"cpuPools": [{"name": "cpu", "vmSize": "Standard_D8ds_v5"}],
       "gpuPools": [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot", "maxCount": 4},
                    {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG1g",
                     "minCount": 1, "maxCount": 3}]}


def settings():
    return parse_settings(RAW, "unit", "eastus2")


def test_every_kind_is_a_config_key_of_the_document_and_a_list_of_pools():
    assert [kind.config_key for kind in KINDS] == ["systemPool", "cpuPools", "gpuPools", "gpuNodePools"]
    assert all(kind.config_key in TOP_LEVEL_KEYS for kind in KINDS)
    sections = {id(kind.section) for kind in KINDS}
    assert [item for item in DOCUMENT.root.items if id(item) in sections] == [kind.section for kind in KINDS], \
        "the document lists each kind's own section, in KINDS order"
    parsed = settings()
    assert {key: [pool.name for pool in pools] for key, pools in parsed.pools.items()} == {
        "systemPool": ["system"], "cpuPools": ["cpu"], "gpuPools": ["t4", "a100"], "gpuNodePools": []}


def test_pool_names_are_unique_across_every_kind():
    with pytest.raises(SettingsError) as caught:
        parse_settings({**RAW, "cpuPools": [{"name": "t4", "vmSize": "Standard_D8ds_v5"}]}, "unit", "eastus2")
    assert any(problem.startswith("gpu-aks:gpuPools[0].name: 't4' is already the name of cpuPools[0]")
               for problem in caught.value.problems)
    with pytest.raises(SettingsError) as caught:
        parse_settings({"cpuPools": [{"name": "system", "vmSize": "Standard_D8ds_v5"}]}, "unit", "eastus2")
    assert any("is already the name of systemPool" in problem for problem in caught.value.problems)


def test_facts_are_computed_once_per_pool_in_kind_order():
    pools = platform_pools(settings())
    assert [(pool.name, pool.role, pool.backend) for pool in pools.pools] == [
        ("system", "system", "agentPool"), ("cpu", "cpu", "agentPool"), ("t4", "gpu", "agentPool"),
        ("a100", "gpu", "agentPool")]
    t4, a100 = pools.gpu
    assert [(offer.vm_size, offer.resource, offer.per_node, offer.capacity_types) for offer in t4.offers] == [
        ("Standard_NC4as_T4_v3", "nvidia.com/gpu", 1, ("spot",))]
    assert a100.mig and not t4.mig and a100.offers[0].mig_partition == "1g.10gb" and a100.offers[0].per_node == 7
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in t4.taints, "AKS's Spot taint, declared"


def test_capacity_counts_the_upgrade_surge_except_on_spot():
    needs = {need.key: need for need in platform_pools(settings()).capacity()}
    assert (needs["gpuPools[a100]"].max_count, needs["gpuPools[a100]"].surge) == (3, 1), "33% of 3, rounded up"
    assert (needs["gpuPools[t4]"].surge, needs["gpuPools[t4]"].spot) == (0, True), "Spot pools get no surge nodes"
    assert needs["gpuPools[a100]"].vcpus() == 24 * 4 and needs["systemPool"].nodes == 3 + 1


def test_the_contract_is_written_from_the_facts():
    pools = platform_pools(settings())
    contract = contract_of(settings(), pools)
    for facts in pools.gpu:
        entry = contract.gpu_pools[facts.name]
        assert entry.kind == facts.backend and [offer.vm_size for offer in entry.offers] == list(facts.vm_sizes)
        assert (entry.gpu_resource, entry.gpus_per_node) == (facts.offers[0].resource, facts.offers[0].per_node)
    assert set(contract.cpu_pools) == {"cpu"} and "system" not in contract.gpu_pools


def test_one_body_builder_serves_the_inline_pool_and_the_child_pools():
    body = AgentPoolBody(mode="System", vm_size="Standard_D4ds_v5", os_sku="AzureLinux", min_count=1, max_count=3,
                         zones=(), node_taints=None, node_labels=None, upgrade_settings={"max_surge": "33%"})
    properties = agent_pool_properties(body, "1.34")
    assert "node_taints" not in properties and "scale_set_priority" not in properties
    assert properties["orchestrator_version"] == "1.34" and properties["availability_zones"] is None
    spot = AgentPoolBody(mode="User", vm_size="Standard_NC4as_T4_v3", os_sku="Ubuntu", min_count=0, max_count=2,
                         zones=("1",), node_taints=(), node_labels={}, upgrade_settings=None, priority="Spot",
                         spot_max_price=0.5, gpu_driver="Install")
    properties = agent_pool_properties(spot, None)
    assert (properties["scale_set_priority"], properties["scale_set_eviction_policy"], properties["spot_max_price"]) == (
        "Spot", "Delete", 0.5)
    assert "upgrade_settings" not in properties and properties["gpu_profile"] == {"driver": "Install"}
    assert properties["node_taints"] == [] and properties["orchestrator_version"] is None


def test_a_pool_of_kubernetes_objects_is_created_with_the_clusters_provider():
    """What a NodePool-backed kind (NAP) returns from `resources`: no AgentPool, its objects in-cluster."""
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "h100"}, "spec": {}}

    def program() -> None:
        import pulumi_kubernetes as k8s
        stub = resources.ResourceGroup("stub", resource_group_name="rg")
        target = ClusterTarget(pulumi.Output.from_input("rg"), pulumi.Output.from_input("aks"), "1.34", stub)
        PoolComponent("gpu-aks:index:TestNapPool", "h100", PoolArgs(
            (KubernetesObjectsSpec("h100", (nodepool,)),), target, k8s.Provider("k8s", kubeconfig="{}")))

    run = run_pulumi(program, "unit")
    assert run.error is None, run.error
    assert not run.by_type("azure-native:containerservice:AgentPool")
    created = run.one("kubernetes:karpenter.sh/v1:NodePool")
    assert created.name == "h100-nodepool" and created.parent == run.one("gpu-aks:index:TestNapPool").urn
    assert created.provider.startswith(run.one("pulumi:providers:kubernetes").urn)


class _WithAnExtraPool(DocumentPoolsOfKinds):
    """The document's pools and one of a kind the settings sections have never heard of: a MIG GPU pool at
    minCount 0, which gpu-aks's plugin may serve."""

    def models(self, root):
        sku = gpu_sku("Standard_NC24ads_A100_v4")
        offer = Offer.sized(sku.vm_size, sku, resource="nvidia.com/gpu", per_node=7, gpu_instance_profile="MIG1g",
                            mig_partition="1g.10gb")
        extra = Pool(name="extra", key="extraPools[extra]", role="gpu", backend="agentPool", azure_name="extra",
                     offers=(offer,), min_count=0, max_count=1, spot=False, zones=(), device_plugin="gpu-aks")
        return (*super().models(root), extra)


def _parse(raw, pools):
    return DOCUMENT.parse(raw, ParseContext("unit", "eastus2", date(2026, 1, 1), pools=pools))


def test_the_sections_read_every_kinds_pools_while_parsing_not_a_kinds_config_key():
    """devicePlugin reads the GPU pools of every kind in the parse's context, as the pool model
    (`components.pools.document`), so a new kind's pools are served, refused or warned about with no
    edit there."""
    assert _parse({}, DocumentPoolsOfKinds(KINDS)).values["devicePlugin"]["pools"] == []
    extra = _parse({}, _WithAnExtraPool(KINDS))
    assert extra.values["devicePlugin"]["pools"] == ["extra"]
    assert extra.values["devicePlugin"]["migStrategy"] == "single", "a served MIG pool of the new kind"
    assert any("0 on a MIG pool" in warning for warning in extra.problems.warnings)
    refused = _parse({"devicePlugin": {"pools": ["t4"]}}, _WithAnExtraPool(KINDS))
    assert "gpu-aks:devicePlugin.pools[0]: 't4' is not a GPU pool; GPU pools: extra" in refused.problems.items


READERS = ["components/contract.py", "components/manifests.py", "components/dcgm_exporter.py",
           "components/smoke_test.py", "components/admission_policy.py", "components/device_plugin.py",
           "components/observability.py", "tools/preflight.py", "tools/preview.py",
           "components/settings/device_plugin.py", "components/settings/network.py",
           "components/settings/node_baseline.py"]


@pytest.mark.parametrize("path", READERS)
def test_no_reader_branches_on_the_kind(path):
    """The readers take Pool: none compares a pool's backend or role, nor imports a kind module."""
    tree = ast.parse((ROOT / path).read_text())
    kind_modules = {f"components.pools.{name}" for name in ("system", "cpu", "gpu", "user", "agentpool")}
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not imported & kind_modules
    compared = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Compare)
                and any(isinstance(side, ast.Attribute) and side.attr == "backend"
                        for side in (node.left, *node.comparators))]
    assert compared == []
    keyed = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
             and node.value in {kind.config_key for kind in KINDS if not kind.inline}]
    assert keyed == [], "reads a kind's pools by its config key"


#: The files that put the kinds together (the document, its root checks, GpuCluster's typed inputs): they
#: take every kind from KINDS and each key's structure from its declaration, so a new kind edits neither.
REGISTRY_READERS = ["components/platform_settings.py", "components/gpu_cluster_codegen.py"]
#: The kind modules: every module of components/pools/ but the registry, the protocol, and the document's
#: pools while it is parsed (which the document's context carries).
KIND_MODULES = {f"components.pools.{path.stem}" for path in (ROOT / "components" / "pools").glob("*.py")
                if path.stem not in {"__init__", "kind", "document"}}


@pytest.mark.parametrize("path", REGISTRY_READERS)
def test_the_registry_names_no_kind(path):
    """platform_settings and the codegen name no kind module and no kind's config key (`gpuPools`,
    `gpuNodePools[].limits`): a kind's root checks come from `kind.root_checks`, an object key's type from
    its `Key.shape`."""
    assert {"components.pools.nap", "components.pools.gpu", "components.pools.karpenter"} <= KIND_MODULES
    tree = ast.parse((ROOT / path).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not imported & KIND_MODULES
    keys = {kind.config_key for kind in KINDS}
    named = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and any(re.search(rf"\b{key}\b", node.value) for key in keys)]
    assert named == [], "names a kind's config key"


def test_a_kinds_root_checks_and_key_structures_come_from_its_declaration():
    """NAP's checks across sections sit in the document because NAP lists them, after every section; its
    `limits` is typed from the declared shape."""
    from components.gpu_cluster_codegen import model
    from components.pools.nap import LIMIT_RESOURCES, NAP
    checks = [kind_check for kind in KINDS for kind_check in kind.root_checks]
    assert checks and all(check in NAP.root_checks for check in checks)
    assert list(DOCUMENT.root.items[-len(checks):]) == checks
    limits = NAP.section.item.declared("limits")
    assert [key.name for key in limits.shape.keys] == list(LIMIT_RESOURCES)
    types = {spec.name: spec for spec in model().types}
    assert [(f.key, f.annotation) for f in types["NodePoolLimits"].fields] == [("gpu", "int"), ("cpu", "int")]
    node_pool = next(spec for spec in types.values() if any(f.key == "limits" for f in spec.fields))
    assert next(f.annotation for f in node_pool.fields if f.key == "limits") == "NodePoolLimits"


def test_the_recipe_names_the_files_a_kind_touches():
    recipe = (ROOT / "CONTRIBUTING.md").read_text()
    for path in ("components/pools/", "components/pools/__init__.py", "KINDS"):
        assert path in recipe
    assert Path(ROOT / "components" / "pools" / "kind.py").is_file()


def test_every_pool_backend_has_a_name_for_messages():
    from typing import get_args

    from gpu_aks_policies.pools.model import BACKEND_NAMES, PoolBackend

    assert set(BACKEND_NAMES) == set(get_args(PoolBackend))
