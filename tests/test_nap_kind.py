"""The NAP pool kind (components/pools/nap.py): its facts, the objects it creates, the program and the
preflight on the nap stack."""

from __future__ import annotations

import io
import json
from datetime import date
from pathlib import Path

import pytest

from components.platform_settings import parse_settings
from components.pools import KubernetesObjectsSpec, platform_pools
from components.pools.nap import NAP
from tests.conftest import ROOT, run_stack
from tests.test_karpenter import NODE_CLASS_SCHEMA, NODEPOOL_SCHEMAS, _valid
from tools import preflight

STACK = {
    "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
    "systemPool": {"minCount": 2, "maxCount": 2},
    "gpuNodePools": [
        {"name": "h100", "gpus": ["H100"], "gpuCount": [1, 2], "capacityTypes": ["spot", "on-demand"],
         "limits": {"gpu": 8}, "weight": 100},
        {"name": "gb", "gpus": ["GB200"], "limits": {"gpu": 8}},
    ],
}


@pytest.fixture(scope="module")
def settings():
    return parse_settings(STACK, "nap", "eastus2", today=date(2026, 11, 26))


def test_a_nodepool_is_one_pool_with_one_offer_per_candidate_size(settings):
    h100 = next(pool for pool in platform_pools(settings).pools if pool.name == "h100")
    assert (h100.backend, h100.role, h100.azure_name, h100.min_count, h100.max_count) == ("nodePool", "gpu", None, 0, 8)
    assert [(o.vm_size, o.per_node, o.capacity_types) for o in h100.offers] == [
        ("Standard_NC40ads_H100_v5", 1, ("spot", "onDemand")), ("Standard_NC80adis_H100_v5", 2, ("spot", "onDemand"))]
    assert h100.served and h100.labels["gpu-aks.io/pool"] == "h100" and h100.taints == ("sku=gpu:NoSchedule",)
    # Each candidate at the most nodes the limits admit of it, as Spot and as on-demand.
    assert [(n.vm_size, n.max_count, n.spot) for n in h100.capacity] == [
        ("Standard_NC40ads_H100_v5", 8, True), ("Standard_NC40ads_H100_v5", 8, False),
        ("Standard_NC80adis_H100_v5", 4, True), ("Standard_NC80adis_H100_v5", 4, False)]


def test_the_objects_a_nodepool_is_made_of_are_valid_karpenter_objects(settings):
    for pool in NAP.pools(settings):
        (spec,) = NAP.resources(pool)
        assert isinstance(spec, KubernetesObjectsSpec)
        node_class, node_pool = spec.manifests
        _valid(NODE_CLASS_SCHEMA, node_class)
        _valid(NODEPOOL_SCHEMAS["azure"], node_pool)
        assert node_pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == node_class["metadata"]["name"]
    gb = NAP.pools(settings)[1]
    requirements = {r["key"]: r["values"] for r in NAP.resources(gb)[0].manifests[1]["spec"]["template"]["spec"]
                    ["requirements"]}
    assert requirements["node.kubernetes.io/instance-type"] == ["Standard_ND128isr_NDR_GB200_v6"]
    assert requirements["kubernetes.io/arch"] == ["arm64"]


@pytest.fixture(scope="module")
def nap_run():
    run = run_stack("nap")
    assert run.error is None, run.error
    return run


def test_the_nap_stack_turns_nap_on_and_keeps_the_system_pool_fixed(nap_run):
    cluster = nap_run.one("azure-native:containerservice:ManagedCluster").masked_inputs
    assert cluster["nodeProvisioningProfile"] == {"mode": "Auto", "defaultNodePools": "Auto"}
    (system,) = cluster["agentPoolProfiles"]
    assert system["enableAutoScaling"] is False and system["count"] == 2 and "minCount" not in system
    assert not nap_run.by_type("azure-native:containerservice:AgentPool")


def test_the_nap_stacks_nodepools_are_created_and_served_by_the_device_plugin(nap_run):
    pools = {r.masked_inputs["metadata"]["name"]: r.masked_inputs for r in nap_run.by_type("kubernetes:karpenter.sh/v1:NodePool")}
    assert set(pools) == {"h100", "a100"}
    assert {r.masked_inputs["metadata"]["name"] for r in
            nap_run.by_type("kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass")} == {"h100", "a100"}
    assert pools["h100"]["spec"]["weight"] > pools["a100"]["spec"]["weight"]
    (plugin,) = nap_run.by_type("kubernetes:apps/v1:DaemonSet")
    pod = plugin.masked_inputs["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["h100", "a100"]
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in pod["tolerations"]


# --- The preflight: every family a NodePool may use, its candidates counted once ----------------------

compute = pytest.importorskip("azure.mgmt.compute.models", reason="azure-mgmt-compute is the test oracle")


def _sku(name: str, family: str, vcpus: int) -> dict:
    return compute.ResourceSku(
        resource_type="virtualMachines", name=name, tier="Standard", family=family, locations=["eastus2"],
        location_info=[compute.ResourceSkuLocationInfo(location="eastus2", zones=["1"])],
        capabilities=[compute.ResourceSkuCapabilities(name="vCPUs", value=str(vcpus))]).as_dict()


def _usage(name: str, current: int, limit: int) -> dict:
    return compute.Usage(current_value=current, limit=limit,
                         name=compute.UsageName(value=name, localized_value=name)).as_dict()


SKUS = [_sku("Standard_D4ds_v5", "standardDDSv5Family", 4),
        _sku("Standard_NC40ads_H100_v5", "StandardNCadsH100v5Family", 40),
        _sku("Standard_NC80adis_H100_v5", "StandardNCadsH100v5Family", 80),
        _sku("Standard_NC24ads_A100_v4", "StandardNCADSA100v4Family", 24)]


def _preflight(tmp_path: Path, usage: list[dict]) -> tuple[int, str]:
    (tmp_path / "usage.json").write_text(json.dumps(usage))
    (tmp_path / "skus.json").write_text(json.dumps(SKUS))
    (tmp_path / "Pulumi.nap.yaml").write_text((ROOT / "Pulumi.nap.yaml").read_text())
    out = io.StringIO()
    code = preflight.main(["nap", "--usage", str(tmp_path / "usage.json"), "--skus", str(tmp_path / "skus.json")],
                          root=tmp_path, out=out)
    return code, out.getvalue()


def test_a_nodepools_candidate_sizes_are_alternatives_not_a_sum(tmp_path):
    # The h100 NodePool fills 8 GPUs with 8 x 40 or 4 x 80 vCPUs: 320 of the family, and 320 of Spot.
    code, out = _preflight(tmp_path, [_usage("cores", 0, 800), _usage("lowPriorityCores", 0, 320),
                                      _usage("standardDDSv5Family", 0, 100),
                                      _usage("StandardNCadsH100v5Family", 0, 320),
                                      _usage("StandardNCADSA100v4Family", 0, 96)])
    assert code == 0, out


def test_every_family_a_nodepool_may_use_is_checked(tmp_path):
    code, out = _preflight(tmp_path, [_usage("cores", 0, 800), _usage("lowPriorityCores", 0, 320),
                                      _usage("standardDDSv5Family", 0, 100),
                                      _usage("StandardNCadsH100v5Family", 0, 320)])
    assert code == 1
    assert "problem: gpuNodePools[a100]: no quota named StandardNCADSA100v4Family in the usage list" in out
