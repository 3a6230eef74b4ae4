"""DRA pools (`gpu-aks:dra`): which GPU pools NVIDIA's DRA driver serves instead of the device plugin, and
the pools it must refuse, each with the reason its owner gives."""

from __future__ import annotations

import copy
from typing import Any

from components.settings.dra import EXTENDED_DEVICE_CLASS, GPU_DEVICE_CLASS, MIG_DEVICE_CLASS
from tests.test_settings import BASE, problems, settings

NAP_POOL = {"name": "h100", "gpus": ["H100"], "gpuCount": [1], "limits": {"gpu": 8}}


def _with(**sections: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE), **sections}


def test_a_dra_pool_leaves_the_device_plugin_and_gets_the_drivers_classes():
    result = settings(_with(dra={"pools": ["gput4"]}))
    assert result.dra.pools == ("gput4",) and result.device_plugin.pools == ()
    assert result.dra.device_classes == (GPU_DEVICE_CLASS, MIG_DEVICE_CLASS, EXTENDED_DEVICE_CLASS)
    assert settings(_with(dra={"pools": ["gput4"], "extendedResource": False})).dra.device_classes == \
        (GPU_DEVICE_CLASS, MIG_DEVICE_CLASS)
    assert settings(BASE).device_plugin.pools == ("gput4",) and settings(BASE).dra.pools == ()


def test_a_pool_both_hand_out_is_refused_with_the_reason():
    [problem] = problems(_with(dra={"pools": ["gput4"]}, devicePlugin={"pools": ["gput4"]}))
    assert problem.startswith("gpu-aks:dra.pools[0]: 'gput4' is also in devicePlugin.pools")
    assert "NVIDIA/aicr#332" in problem


def test_a_nap_pool_is_refused_because_karpenter_provisions_nothing_for_claims():
    raw = _with(cluster={"nodeProvisioningProfile": {"mode": "Auto"}}, gpuNodePools=[NAP_POOL], gpuPools=[],
                systemPool={"vmSize": "Standard_D4ds_v5", "minCount": 2, "maxCount": 2},
                dra={"pools": ["h100"]})
    dra = [p for p in problems(raw) if p.startswith("gpu-aks:dra")]
    assert len(dra) == 1 and "ignoreDRARequests: true" in dra[0] and "kubernetes-sigs/karpenter#3228" in dra[0]


def test_pools_the_driver_cannot_serve_are_refused_by_name():
    got = problems(_with(gpuPools=[{**BASE["gpuPools"][0], "gpuProfile": {"driver": "None"}},
                                   {"name": "shared", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 1,
                                    "sharing": {"strategy": "timeSlicing", "replicas": 4}}],
                         dra={"pools": ["gput4", "shared", "cpu"]}))
    dra = [p for p in got if p.startswith("gpu-aks:dra")]
    assert dra[0].startswith("gpu-aks:dra.pools[0]: 'gput4' cannot be served through DRA: it has gpuProfile.driver: None")
    assert dra[1].startswith("gpu-aks:dra.pools[1]: 'shared' shares its GPUs (timeSlicing)")
    assert dra[2] == "gpu-aks:dra.pools[2]: 'cpu' is not a GPU pool; GPU pools: gput4, shared"
