"""Node auto-provisioning settings: `cluster.nodeProvisioningProfile` and `gpuNodePools`, every refusal."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.platform_settings import parse_settings
from components.pools.nap import NAP as NAP_KIND
from components.settings import SettingsError
from components.settings.node_provisioning import NODE_PROVISIONING_MODES
from tests.test_network import GPU_SUBNET, POD_SUBNET

TODAY = date(2026, 11, 26)

NAP: dict[str, Any] = {
    "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
    "systemPool": {"minCount": 2, "maxCount": 2},
    "cpuPools": [{"name": "cpu", "minCount": 1, "maxCount": 1}],
    "gpuNodePools": [
        {"name": "h100", "gpus": ["H100"], "gpuCount": [1], "capacityTypes": ["spot", "on-demand"],
         "limits": {"gpu": 8}, "weight": 100},
        {"name": "a100", "gpus": ["A100"], "gpuCount": [1], "limits": {"gpu": 4}, "weight": 50},
    ],
}


def _parse(raw: dict[str, Any]) -> Any:
    return parse_settings(raw, "nap", "eastus2", today=TODAY)


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(SettingsError) as error:
        _parse(raw)
    return error.value.problems


def _with(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(NAP)
    for path, value in changes.items():
        keys = path.split("__")
        target = raw
        for key in keys[:-1]:
            target = target[int(key)] if isinstance(target, list) else target.setdefault(key, {})
        if value is None:
            del target[keys[-1]]
        else:
            target[keys[-1]] = value
    return raw


def test_a_nap_stack_parses_into_nodepools_with_offers():
    settings = _parse(NAP)
    assert settings.cluster.node_provisioning_profile.as_api() == {"mode": "Auto", "default_node_pools": "Auto"}
    h100, a100 = NAP_KIND.pools(settings)
    assert [sku.vm_size for sku in h100.candidates] == ["Standard_NC40ads_H100_v5"]
    assert h100.spot and not a100.spot
    assert [sku.vm_size for sku in a100.candidates] == ["Standard_NC24ads_A100_v4"]
    spec = h100.node_pool_spec()
    assert spec.labels["gpu-aks.io/pool"] == "h100" and spec.taints == ("sku=gpu:NoSchedule",)
    assert spec.limits == {"nvidia.com/gpu": "8"} and spec.weight == 100


def test_nap_is_off_by_default_and_its_modes_are_the_apis():
    assert _parse({}).cluster.node_provisioning_profile.mode == "Manual"
    assert NODE_PROVISIONING_MODES == ("Manual", "Auto")


@pytest.mark.parametrize("raw, key, message", [
    # gpuNodePools need NAP.
    (_with(cluster__nodeProvisioningProfile=None), "gpu-aks:gpuNodePools",
     "needs cluster.nodeProvisioningProfile.mode: Auto"),
    # Autoscaling AgentPools under NAP (NodeProvisioningMode.Auto's text), the system pool included.
    (_with(cpuPools=[{"name": "cpu", "minCount": 0, "maxCount": 3}]), "gpu-aks:cpuPools[cpu].maxCount",
     "\"Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be\""),
    (_with(gpuPools=[{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 2}]),
     "gpu-aks:gpuPools[gput4].maxCount", "declare the GPU capacity under gpuNodePools"),
    (_with(systemPool=None), "gpu-aks:systemPool.maxCount", "the system pool stays fixed-size"),
    # A pod subnet on any pool kind that names one.
    (_with(cpuPools=[{"name": "cpu", "minCount": 1, "maxCount": 1, "vnetSubnetID": GPU_SUBNET,
                      "podSubnetID": POD_SUBNET}]), "gpu-aks:cpuPools[cpu].podSubnetID",
     "dynamic pod-IP allocation (a pod subnet) is not supported with node auto-provisioning"),
    # The network NAP needs.
    (_with(cluster__networkProfile={"networkPlugin": "kubenet"}), "gpu-aks:cluster.networkProfile.networkPlugin",
     "needs Azure CNI"),
    (_with(cluster__networkProfile={"networkDataplane": "azure", "networkPolicy": "calico"}),
     "gpu-aks:cluster.networkProfile.networkPolicy", "'calico' is not supported with node auto-provisioning"),
    # The NodePool's own keys.
    (_with(gpuNodePools__0__limits=None), "gpu-aks:gpuNodePools[h100].limits", "needs a ceiling"),
    (_with(gpuNodePools__0__limits={"memory": 64}), "gpu-aks:gpuNodePools[h100].limits.memory",
     "use gpu or cpu"),
    (_with(gpuNodePools__0__limits={"gpu": 0}), "gpu-aks:gpuNodePools[h100].limits.gpu",
     "not a whole number of at least 1"),
    (_with(gpuNodePools__0__vmSizes=["Standard_NC40ads_H100_v5"]), "gpu-aks:gpuNodePools[h100].gpus", "not both"),
    (_with(gpuNodePools__0__gpus=None), "gpu-aks:gpuNodePools[h100].gpus", "one of the two"),
    (_with(gpuNodePools__0__gpus=None, gpuNodePools__0__gpuCount=None, gpuNodePools__0__vmSizes=["Standard_NC6s_v3"]),
     "gpu-aks:gpuNodePools[h100].vmSizes[0]", "retired by Azure on 2025-09-30"),
    (_with(gpuNodePools__0__gpus=None, gpuNodePools__0__gpuCount=None, gpuNodePools__0__vmSizes=["Standard_D8ds_v5"]),
     "gpu-aks:gpuNodePools[h100].vmSizes[0]", "is not a GPU size"),
    (_with(gpuNodePools__0__gpuCount=[3]), "gpu-aks:gpuNodePools[h100].gpuCount", "Azure sells 1, 2, 8 per VM"),
    (_with(gpuNodePools__0__gpuCount=[0]), "gpu-aks:gpuNodePools[h100].gpuCount", "from 1 to 16"),
    (_with(gpuNodePools__0__capacityTypes=["preemptible"]), "gpu-aks:gpuNodePools[h100].capacityTypes",
     "out of spot, on-demand"),
    (_with(gpuNodePools__0__consolidateAfter="5 minutes"), "gpu-aks:gpuNodePools[h100].consolidateAfter",
     "not a duration like 10m"),
    (_with(gpuNodePools__0__weight=101), "gpu-aks:gpuNodePools[h100].weight", "from 1 to 100"),
    (_with(gpuNodePools__0__nodeTaints=["sku=gpu:PreferNoSchedule"]), "gpu-aks:gpuNodePools[h100].nodeTaints",
     "has no NoSchedule taint"),
    (_with(gpuNodePools__0__nodeLabels={"accelerator": "nvidia"}), "gpu-aks:gpuNodePools[h100].nodeLabels.accelerator",
     "refused by Azure's NodePool CRD"),
    (_with(gpuNodePools__0__nodeLabels={"karpenter.sh/nodepool": "x"}),
     "gpu-aks:gpuNodePools[h100].nodeLabels.karpenter.sh/nodepool", "refused by Azure's NodePool CRD"),
    (_with(gpuNodePools__0__gpus=["GB200"], gpuNodePools__0__gpuCount=None, gpuNodePools__0__imageFamily="AzureLinux"),
     "gpu-aks:gpuNodePools[h100].imageFamily", "only on Ubuntu"),
    (_with(gpuNodePools__0__gpus=["GB200", "RTXPRO6000BSE"], gpuNodePools__0__gpuCount=None),
     "gpu-aks:gpuNodePools[h100].gpus", "declare them in two NodePools"),
    # #38: a name no size carries never brings a node (it was a warning).
    (_with(gpuNodePools__0__gpus=["H100-80GB"]), "gpu-aks:gpuNodePools[h100].gpus[0]",
     "'H100-80GB' is a GPU name Karpenter's Azure provider gives no size"),
    (_with(gpuNodePools__0__gpus=["H100-80GB"]), "gpu-aks:gpuNodePools[h100].gpus[0]", "did you mean H100?"),
    (_with(gpuNodePools__0__gpus=["B200"]), "gpu-aks:gpuNodePools[h100].gpus[0]", "did you mean GB200 or H200?"),
    # #38: limits that admit no node of any size the NodePool may bring.
    (_with(gpuNodePools__0__gpus=["H100"], gpuNodePools__0__gpuCount=[8], gpuNodePools__0__limits={"gpu": 4}),
     "gpu-aks:gpuNodePools[h100].limits", "admits no node: the smallest size the NodePool may bring, "
                                          "Standard_ND96isr_H100_v5, has 8 GPUs"),
    (_with(gpuNodePools__0__limits={"cpu": 8}), "gpu-aks:gpuNodePools[h100].limits", "admits no node"),
    (_with(gpuNodePools__1__name="cpu"), "gpu-aks:gpuNodePools[1].name", "already the name of cpuPools[0]"),
    (_with(gpuNodePools__1__name="A100"), "gpu-aks:gpuNodePools[1].name", "1-12 lowercase letters and digits"),
    # A Grace (Arm64) NodePool needs arm64 builds of the images the platform runs on GPU nodes.
    (_with(gpuNodePools__0__gpus=["GB300"], gpuNodePools__0__gpuCount=None,
           smokeTest={"enabled": True, "image": "registry.example.com/smoke:1"}),
     "gpu-aks:gpuNodePools[h100]", "run on Arm64 (Grace) hosts, and smokeTest.image registry.example.com/smoke:1 is "
                                   "not an image gpu-aks knows the architectures of"),
])
def test_every_refusal_names_its_key(raw, key, message):
    problems = _problems(raw)
    assert any(problem.startswith(f"{key}:") and message in problem for problem in problems), problems


def test_all_problems_are_reported_at_once():
    raw = _with(cpuPools=[{"name": "cpu", "minCount": 0, "maxCount": 3}], gpuNodePools__0__limits=None,
                gpuNodePools__1__weight=0)
    assert len(_problems(raw)) == 3


def test_a_gpu_name_karpenter_gives_but_the_catalog_lacks_is_usable_with_a_warning():
    """`RTXPRO6000BSE` is the name newer skewer versions give the RTX PRO sizes (karpenter-provider-azure
    moved to skewer v0.0.23); gpu-aks's catalog selects those by size."""
    settings = _parse(_with(gpuNodePools__0__gpus=["H100", "RTXPRO6000BSE"]))
    (warning,) = [w for w in settings.warnings if "gpuNodePools[h100].gpus[1]" in w]
    assert "'RTXPRO6000BSE' is not a GPU gpu-aks's catalog knows" in warning and "cannot price it" in warning
    pool = NAP_KIND.pools(settings)[0]
    assert pool.uncatalogued == ("RTXPRO6000BSE",)
    assert pool.node_pool_spec().gpu_names == ("H100", "RTXPRO6000BSE")


def test_an_unknown_n_series_size_is_usable_with_a_warning():
    settings = _parse(_with(gpuNodePools__0__gpus=None, gpuNodePools__0__gpuCount=None,
                            gpuNodePools__0__vmSizes=["Standard_ND128isr_NDR_GB400_v7"]))
    assert any("gpuNodePools[h100].vmSizes[0]" in w and "not in gpu-aks's catalog" in w for w in settings.warnings)
    assert NAP_KIND.pools(settings)[0].node_pool_spec().vm_sizes == ("Standard_ND128isr_NDR_GB400_v7",)


def test_switching_off_the_default_nodepools_warns():
    settings = _parse(_with(cluster__nodeProvisioningProfile={"mode": "Auto", "defaultNodePools": "None"}))
    assert any(w.startswith("gpu-aks:cluster.nodeProvisioningProfile.defaultNodePools:") and "drains their nodes" in w
               for w in settings.warnings)


def test_grace_sizes_are_selected_by_size_with_an_arm64_requirement():
    pool = NAP_KIND.pools(_parse(_with(gpuNodePools__0__gpus=["GB200"], gpuNodePools__0__gpuCount=None)))[0]
    spec = pool.node_pool_spec()
    assert pool.by_size and spec.vm_sizes == ("Standard_ND128isr_NDR_GB200_v6",) and spec.gpu_names == ()
    assert spec.architectures == ("arm64",)


def test_windows_and_service_principals_cannot_be_asked_for():
    """NAP needs managed identity and no Windows pools: gpu-aks offers neither, so there is nothing to refuse
    beyond a Windows osSKU, which every pool already refuses."""
    problems = _problems(_with(cpuPools=[{"name": "cpu", "minCount": 1, "maxCount": 1, "osSKU": "Windows2022"}]))
    assert any(p.startswith("gpu-aks:cpuPools[cpu].osSKU:") for p in problems), problems


# --- Fixed pools on sizes the catalog does not know yet, and the new catalog sizes -------------------

DECLARED = {"name": "b200", "vmSize": "Standard_ND128isr_B200_v7", "gpu": {"model": "B200", "count": 8, "memoryGiB": 180}}


def test_a_fixed_pool_may_declare_the_gpu_of_an_unknown_size_with_a_warning():
    settings = parse_settings({"gpuPools": [DECLARED]}, "next", "eastus2", today=TODAY)
    (pool,) = settings.gpu_pools
    assert (pool.gpu.model, pool.gpu.gpus, pool.gpu.gpu_memory_gib, pool.gpus_per_node) == ("B200", 8, 180, 8)
    assert pool.labels["nvidia.com/gpu.accelerator"] == "nvidia-b200"
    assert any(w.startswith("gpu-aks:gpuPools[b200].vmSize:") and "taken from this pool's gpu declaration" in w
               and "tools.preflight" in w for w in settings.warnings)


@pytest.mark.parametrize("pool, key, message", [
    ({"name": "x", "vmSize": "Standard_NC99_Z_v9"}, "gpu-aks:gpuPools[x].vmSize",
     "declare its GPU: gpu: {model: B200, count: 8, memoryGiB: 180}"),
    ({**DECLARED, "gpu": {"model": "B200", "count": 0, "memoryGiB": 180}}, "gpu-aks:gpuPools[b200].gpu.count",
     "from 1 to 16"),
    ({**DECLARED, "gpu": {"model": "B200", "count": 8}}, "gpu-aks:gpuPools[b200].gpu.memoryGiB", "null is not a GPU "
                                                                                                 "memory"),
    ({**DECLARED, "gpu": {"model": "B200", "count": 8, "memoryGiB": 180, "mig": True}},
     "gpu-aks:gpuPools[b200].gpu.mig", "unknown setting"),
    ({**DECLARED, "vmSize": "Standard_NC4as_T4_v3"}, "gpu-aks:gpuPools[b200].gpu", "is in the catalog (1 x T4, 16 GiB)"),
    ({**DECLARED, "gpuInstanceProfile": "MIG1g"}, "gpu-aks:gpuPools[b200].gpuInstanceProfile",
     "needs a MIG-capable GPU"),
    ({"name": "gb", "vmSize": "Standard_ND128isr_GB300_v6", "osSKU": "AzureLinux"}, "gpu-aks:gpuPools[gb].osSKU",
     "only on Ubuntu"),
])
def test_fixed_pool_refusals_for_new_and_declared_sizes(pool, key, message):
    with pytest.raises(SettingsError) as error:
        parse_settings({"gpuPools": [pool]}, "next", "eastus2", today=TODAY)
    assert any(p.startswith(f"{key}:") and message in p for p in error.value.problems), error.value.problems


# --- Hostile input: any value under the new keys is a problem list, never a traceback ------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 300) | st.floats(allow_nan=True) | st.text(max_size=12),
                     lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children,
                                                                                     max_size=4), max_leaves=12)
_KEYS = ("name", "gpus", "gpuCount", "vmSizes", "capacityTypes", "limits", "weight", "nodeTaints", "nodeLabels",
         "consolidateAfter", "imageFamily", "osDiskSizeGB")


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=6), _JSON)
def test_any_nodepool_or_profile_value_is_a_problem_or_a_setting(pool, profile):
    raw = {"cluster": {"nodeProvisioningProfile": profile}, "systemPool": {"minCount": 1, "maxCount": 1},
           "gpuNodePools": [pool]}
    try:
        parsed = _parse(raw)
    except SettingsError as error:
        # Every problem names a key (a key written with ':' in it is shown as written, as everywhere).
        assert error.problems and all(":" in p and "Traceback" not in p for p in error.problems)
    else:
        for nap in parsed.nap_gpu_pools:
            nap.node_pool_spec()


def _nodepool(name: str) -> dict[str, Any]:
    return {"name": name, "gpus": ["A100"], "gpuCount": [1], "limits": {"gpu": 1}}


def test_aks_limit_of_100_node_pools_counts_agent_pools_not_karpenter_nodepools():
    """AKS's "at most 100 node pools per cluster" counts agent pools: the system pool and 99 fixed CPU
    pools are 100, and NodePools beside them are Karpenter objects, not agent pools."""
    full = _with(cpuPools=[{"name": f"c{i}", "minCount": 1, "maxCount": 1} for i in range(99)],
                 gpuNodePools=[_nodepool(f"n{i}") for i in range(5)])
    settings = _parse(full)
    assert len(NAP_KIND.pools(settings)) == 5 and len(settings.pools["cpuPools"]) == 99
    one_more = _with(cpuPools=[{"name": f"c{i}", "minCount": 1, "maxCount": 1} for i in range(100)])
    assert [p for p in _problems(one_more) if "AKS allows at most 100" in p] == [
        "gpu-aks:cpuPools: 1 in systemPool + 100 in cpuPools + 0 in gpuPools make 101 node pools; AKS allows at "
        "most 100 per cluster"]


def test_nodepools_have_gpu_aks_own_bound_named_as_such():
    problems = _problems(_with(gpuNodePools=[_nodepool(f"n{i}") for i in range(101)]))
    assert [p for p in problems if "at most" in p] == [
        "gpu-aks:gpuNodePools: 101 entries; gpu-aks allows at most 100 (its own bound: these are Karpenter NodePools, "
        "not AKS agent pools)"]
