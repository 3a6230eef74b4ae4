"""DRA pools (`gpu-aks:dra`): which GPU pools NVIDIA's DRA driver serves instead of the device plugin, and
the pools it must refuse, each with the reason its owner gives."""

from __future__ import annotations

import copy
from typing import Any

from gpu_aks_policies.explain import explain_all
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import context_of, pod_specs_of
from gpu_aks_policies.workloads.dra import pod_claims

from components.contract import platform_contract
from components.manifests import dra_driver_values
from components.pools import platform_pools
from components.settings.dra import EXTENDED_DEVICE_CLASS, GPU_DEVICE_CLASS, MIG_DEVICE_CLASS
from tests.test_settings import BASE, problems, settings

NAP_POOL = {"name": "h100", "gpus": ["H100"], "gpuCount": [1], "limits": {"gpu": 8}}


def _with(**sections: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE), **sections}


def test_a_dra_pool_leaves_the_device_plugin_and_gets_the_drivers_classes():
    result = settings(_with(dra={"pools": ["gput4"]}))
    assert result.dra.pools == ("gput4",) and result.device_plugin.pools == ()
    assert result.dra.device_classes() == (GPU_DEVICE_CLASS, EXTENDED_DEVICE_CLASS)
    assert settings(_with(dra={"pools": ["gput4"], "extendedResource": False})).dra.device_classes() == \
        (GPU_DEVICE_CLASS,)
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


# --- The pack: a release of NVIDIA's DRA driver serves the pools its kubelet plugin runs on ----------------


def _agent_pool(name: str) -> StackResource:
    return StackResource(f"urn:{name}", "azure-native:containerservice:AgentPool", {
        "agentPoolName": name, "vmSize": "Standard_NC24ads_A100_v4", "enableAutoScaling": True, "minCount": 0,
        "maxCount": 1, "nodeTaints": ["sku=gpu:NoSchedule"], "nodeLabels": {"gpu-aks.io/pool": name}})


def _release(values: dict[str, Any]) -> StackResource:
    return StackResource("urn:dra", "kubernetes:helm.sh/v3:Release", {"chart": "nvidia-dra-driver-gpu", "values": values})


def _coverage(*resources: StackResource) -> list[str]:
    config = default_rule_config()["device-plugin-tolerates-gpu-pools"]
    return [finding.message for finding in check_device_plugin_coverage(resources, config)]


def test_the_dra_drivers_kubelet_plugin_serves_the_pools_gpu_aks_pins_it_to():
    pools = [pool for pool in platform_pools(settings(_with(dra={"pools": ["gput4"]}))).gpu if pool.name == "gput4"]
    values = dra_driver_values(pools)
    pool = _agent_pool("gput4")
    assert _coverage(pool, _release(values)) == []
    # The chart's own affinity wants NFD's labels, which AKS nodes lack: the pool is left unserved.
    [unserved] = _coverage(pool, _release({"kubeletPlugin": {"tolerations": values["kubeletPlugin"]["tolerations"]}}))
    assert "not served by any NVIDIA device plugin or DRA driver" in unserved
    assert "urn:dra does not select its nodes" in unserved
    [untolerated] = _coverage(pool, _release({"kubeletPlugin": {"affinity": values["kubeletPlugin"]["affinity"]}}))
    assert "urn:dra does not tolerate sku=gpu:NoSchedule" in untolerated


# --- The contract and --platform: will this claim get a GPU here ---------------------------------------------

DRA_POOL = {"name": "a100dra", "vmSize": "Standard_NC24ads_A100_v4", "maxCount": 1}
CLAIM_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                  "metadata": {"name": "single-gpu", "namespace": "default"},
                  "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
                                                              "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}
SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _pod(name: str, **resources: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"tolerations": [SKU], "containers": [{"name": "c", "image": "i", "resources": resources}]}
    if "claims" in resources:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def _platform(extended: bool = True) -> dict[str, Any]:
    raw = _with(dra={"pools": ["a100dra"], "extendedResource": extended})
    raw["gpuPools"].append(DRA_POOL)
    return platform_contract(settings(raw))


def test_the_contract_publishes_each_pools_device_classes_and_the_mapping():
    pools = _platform()["pools"]
    assert pools["a100dra"]["dra"] == {"deviceClasses": [GPU_DEVICE_CLASS, EXTENDED_DEVICE_CLASS],
                                       "extendedResource": "nvidia.com/gpu"}
    assert pools["a100dra"]["devicePlugin"] is None and "dra" not in pools["gput4"]
    assert _platform(extended=False)["pools"]["a100dra"]["dra"]["extendedResource"] is None
    read = platform_from_outputs(_platform()).pools["a100dra"]
    assert read.dra is not None and read.dra.extended_resource == "nvidia.com/gpu"


def test_a_mig_pools_devices_are_mig_devices_only():
    """NVIDIA's driver publishes a GPU in MIG mode as its MIG devices only (v25.8.1 `cmd/gpu-kubelet-plugin/
    nvlib.go`, enumerateGpusAndMigDevices): a MIG DRA pool serves mig.nvidia.com, neither gpu.nvidia.com nor
    the KEP-5004 class (whose selector is gpu.nvidia.com's), so nvidia.com/gpu is not mapped there."""
    raw = _with(dra={"pools": ["a100dra"]})
    raw["gpuPools"].append({**DRA_POOL, "gpuInstanceProfile": "MIG1g"})
    pool = platform_contract(settings(raw))["pools"]["a100dra"]
    assert pool["dra"] == {"deviceClasses": [MIG_DEVICE_CLASS], "extendedResource": None}
    whole = {**CLAIM_TEMPLATE, "metadata": {"name": "single-gpu", "namespace": "default"}}
    [claimed] = explain_all([whole, _pod("claim", claims=[{"name": "gpu"}])], platform_from_outputs(
        platform_contract(settings(raw))))
    assert claimed.lands_on == []


def test_a_claim_gets_a_gpu_on_the_dra_pool_and_never_on_a_device_plugin_pool():
    claim, plain = _pod("claim", claims=[{"name": "gpu"}]), _pod("plain", limits={"nvidia.com/gpu": 1})
    [claimed, written] = explain_all([CLAIM_TEMPLATE, claim, plain], platform_from_outputs(_platform()))
    assert claimed.lands_on == ["a100dra"]
    [device_plugin] = [v for v in claimed.verdicts if v.pool == "gput4"]
    assert "publishes no devices to claims, so the claims are never allocated" in device_plugin.reasons[0]
    assert written.lands_on == ["gput4", "a100dra"]  # KEP-5004: nvidia.com/gpu served through DRA there
    [unmapped] = explain_all([plain], platform_from_outputs(_platform(extended=False)))
    assert unmapped.lands_on == ["gput4"]
    [reason] = [v for v in unmapped.verdicts if v.pool == "a100dra"][0].reasons
    assert "no device plugin advertises nvidia.com/gpu there; map it with gpu-aks:dra.extendedResource" in reason


def test_the_smoke_test_asks_a_dra_pool_through_a_claim_and_lands_there():
    """The smoke test proves what an app uses: on a DRA pool a claim of gpu.nvidia.com, judged by the same fit."""
    from components.smoke_test import smoke_claim_template, smoke_job_spec

    contract = _platform()
    pool = platform_from_outputs(contract).pools["a100dra"]
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "smoke", "namespace": "gpu-resources"},
           "spec": smoke_job_spec(pool, "nvcr.io/nvidia/pytorch:25.10-py3", "gpu-smoke-check")}
    template = smoke_claim_template(pool, "gpu-resources")
    assert job["spec"]["template"]["spec"]["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    [explained] = explain_all([template, job], platform_from_outputs(contract))
    assert explained.lands_on == ["a100dra"]


def test_a_stack_of_dra_pools_alone_runs_its_smoke_test_in_a_namespace_it_creates():
    """With every GPU pool a DRA pool there is no device plugin, so no `gpu-resources`: the smoke test's objects go
    into the DRA driver's namespace, which the stack creates (a namespace nobody creates fails the `up`)."""
    import json

    from offline.mockrun import run_program
    from tests.conftest import ROOT

    config = {f"gpu-aks:{key}": json.dumps(value) for key, value in
              _with(dra={"pools": ["gput4"]}, smokeTest={"enabled": True}).items()}
    config["azure-native:location"] = "eastus2"
    run = run_program(ROOT, "dev", config)
    assert run.error is None, run.error
    created = {r.inputs["metadata"]["name"] for r in run.by_type("kubernetes:core/v1:Namespace")}
    smoke = [r for r in run.resources if r.type.startswith("kubernetes:") and "smoke" in r.name]
    assert smoke and {r.inputs["metadata"]["namespace"] for r in smoke} <= created, (
        sorted(created), sorted((r.name, r.inputs["metadata"].get("namespace")) for r in smoke))


def test_claim_and_template_names_are_quoted_cut_and_on_one_line():
    """A claim's and a template's names are input: 100k characters with a forged workflow-command line are
    quoted cut and escaped (`pool_named`), whether the template is among the objects checked or not."""
    forged = "g\n::error::" + "c" * 100_000
    template = copy.deepcopy(CLAIM_TEMPLATE)
    template["metadata"]["name"] = forged
    pod = _pod("claim", claims=[{"name": forged}])
    pod["spec"]["resourceClaims"] = [{"name": forged, "resourceClaimTemplateName": forged}]
    context = context_of([template, pod])
    [spec] = pod_specs_of(pod, context)
    resolved = pod_claims(spec, context, ["gpu.nvidia.com"])
    unresolved = pod_claims(spec, context_of([pod]), ["gpu.nvidia.com"])
    for texts in (resolved.gpu, unresolved.unresolved):
        [text] = texts
        assert len(text) < 500 and "\n" not in text and "g\\n::error::" in text
    assert resolved.classes == ("gpu.nvidia.com",)


def test_a_refused_dra_pool_keeps_the_checks_on_its_namespace_as_they_were():
    """The checks across sections run after the document in the order they are declared (#49), so a check that
    reads `dra.pools` still skips when the pools' check refused them, and the queues' check still sees
    `dra.namespace` (both were found changed when only the pools' checks ran after the document)."""
    same_namespace = problems(_with(devicePlugin={"namespace": "nvidia-dra-driver-gpu"}, dra={"pools": ["nope"]}))
    assert [p for p in same_namespace if p.startswith("gpu-aks:dra")] == [
        "gpu-aks:dra.pools[0]: 'nope' is not a GPU pool; GPU pools: gput4"]
    team = {"name": "team-a", "namespaces": ["gpu-resources"], "gpus": {"gput4": 1}}
    got = problems(_with(devicePlugin={"namespace": "Bad_NS"}, dra={"pools": ["nope"], "namespace": "gpu-resources"},
                         queues={"enabled": True, "teams": [team]}))
    assert any(p.startswith("gpu-aks:queues.teams[0].namespaces[0]: 'gpu-resources' is gpu-aks's own namespace "
                            "(dra.namespace)") for p in got), got
    assert not any(p.startswith("gpu-aks:dra.namespace") for p in got), got
