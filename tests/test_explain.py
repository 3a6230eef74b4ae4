"""The scheduling explainer, and the compatibility of Flyte and Kubeflow requests with the platform."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml
from gpu_aks_policies.explain import explain, main

from components.contract import platform_contract
from components.platform_settings import parse_settings
from tests.helpers import FLYTE_TAINT_RULE

SEEDS = Path(__file__).parent / "manifests" / "seeds"

# A platform with a T4 pool, an A100 pool split into MIG 2g.10gb slices, and a Spot T4 pool.
PLATFORM = platform_contract(parse_settings({"gpuPools": [
    {"name": "t4", "vmSize": "Standard_NC4as_T4_v3"},
    {"name": "a100mig", "vmSize": "Standard_ND96asr_v4", "gpuInstanceProfile": "MIG2g"},
    {"name": "t4spot", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot"},
]}, "test", "eastus2"))


def seed(name: str) -> dict:
    return yaml.safe_load((SEEDS / name).read_text())


def reasons(name: str) -> dict[str, tuple[str, ...]]:
    [explanation] = explain(seed(name), PLATFORM)
    return {v.pool: v.reasons for v in explanation.verdicts}


def test_aks_mnist_job_lands_on_on_demand_pools_and_is_told_about_spot():
    [explanation] = explain(seed("aks-mnist-job.yaml"), PLATFORM)
    assert explanation.lands_on == ["t4", "a100mig"]
    [spot_reason] = reasons("aks-mnist-job.yaml")["t4spot"]
    assert spot_reason.startswith("it does not tolerate the Spot taint kubernetes.azure.com/scalesetpriority=spot:"
                                  "NoSchedule that AKS puts on every Spot node")


def test_generic_gpu_pod_is_told_which_taint():
    for pool_reasons in reasons("generic-gpu-pod.yaml").values():
        assert "it does not tolerate the taint sku=gpu:NoSchedule; add the toleration {\"key\": \"sku\", " \
               "\"operator\": \"Equal\", \"value\": \"gpu\", \"effect\": \"NoSchedule\"}" in pool_reasons


def test_kubeflow_selector_and_two_gpus():
    by_pool = reasons("kubeflow-gpu-op.yaml")
    assert "it asks for 2 nvidia.com/gpu but a node of this pool has 1 (Standard_NC4as_T4_v3)" in by_pool["t4"]
    assert not any("asks for 2" in r for r in by_pool["a100mig"]), "8 GPUs x 3 slices per node"


def test_v100_request_is_told_plainly_that_no_pool_offers_it():
    for pool_reasons in reasons("flyte-v100.yaml").values():
        assert pool_reasons[0] == ("no pool offers nvidia-tesla-v100: Azure retired its V100 sizes (NCv3) on "
                                   "2025-09-30; NC A100 v4 (nvidia-a100-80gb) replaces them")


def test_flyte_a100_partition_needs_only_the_toleration_on_the_mig_pool():
    by_pool = reasons("flyte-a100-2g10gb.yaml")
    assert by_pool["a100mig"] == (
        "it does not tolerate the taint sku=gpu:NoSchedule; add the toleration {\"key\": \"sku\", \"operator\": "
        "\"Equal\", \"value\": \"gpu\", \"effect\": \"NoSchedule\"}",)
    assert any("required node affinity (nvidia.com/gpu.accelerator In [nvidia-tesla-a100]; "
               "nvidia.com/gpu.partition-size In [2g.10gb]) matches no label" in r for r in by_pool["t4"])


def test_resource_the_pool_does_not_offer():
    pod = {"kind": "Pod", "metadata": {"name": "mig"}, "spec": {
        "tolerations": [{"key": "sku", "operator": "Exists"}],
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]}}
    [explanation] = explain(pod, PLATFORM)
    assert explanation.lands_on == []
    assert ("it asks for nvidia.com/mig-1g.5gb, which this pool does not offer (it offers MIG 2g.10gb slices as "
            "nvidia.com/gpu)") in {v.pool: v.reasons for v in explanation.verdicts}["a100mig"]


def test_cli(tmp_path):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(PLATFORM))
    out = io.StringIO()
    assert main(["--platform", str(outputs), str(SEEDS / "flyte-v100.yaml")], stdout=out) == 1
    assert "lands on: no GPU pool" in out.getvalue() and "no pool offers nvidia-tesla-v100" in out.getvalue()
    out = io.StringIO()
    assert main(["--platform", str(outputs), "-"], stdin=io.BytesIO((SEEDS / "aks-mnist-job.yaml").read_bytes()),
                stdout=out) == 0
    assert "lands on: t4 (Standard_NC4as_T4_v3); a100mig (Standard_ND96asr_v4)" in out.getvalue()
    assert main(["--platform", str(tmp_path / "missing.json"), "-"], stdin=io.BytesIO(b"")) == 2


# --- Compatibility: what Flyte and Kubeflow ask for lands on a platform configured for them -------

# The platform config the README documents for Flyte: the GPU taint Flyte tolerates on its own
# (`nvidia.com/gpu`), and pools whose accelerator labels use Flyte's constants.
FLYTE_PLATFORM = platform_contract(parse_settings({"gpuPools": [
    {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
    {"name": "a100", "vmSize": "Standard_ND96asr_v4", "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
    {"name": "a100mig", "vmSize": "Standard_ND96asr_v4", "gpuInstanceProfile": "MIG2g",
     "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
    {"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
]}, "flyte", "eastus2", pool_rule=FLYTE_TAINT_RULE))


def flyte_pod(accelerator: str, partition: str | None = None) -> dict:
    """The pod spec flytepropeller writes for `accelerator=...` (seed 003), gpu-device-node-label and
    gpu-partition-size-node-label set to the platform's label keys."""
    expressions = [{"key": "nvidia.com/gpu.accelerator", "operator": "In", "values": [accelerator]}]
    tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                   {"key": "nvidia.com/gpu.accelerator", "operator": "Equal", "value": accelerator,
                    "effect": "NoSchedule"}]
    if partition:
        expressions.append({"key": "nvidia.com/gpu.partition-size", "operator": "In", "values": [partition]})
        tolerations.append({"key": "nvidia.com/gpu.partition-size", "operator": "Equal", "value": partition,
                            "effect": "NoSchedule"})
    return {"kind": "Pod", "metadata": {"name": "flyte"}, "spec": {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]}}},
        "tolerations": tolerations,
        "containers": [{"name": "primary", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


@pytest.mark.parametrize("accelerator, partition, pools", [
    ("nvidia-tesla-t4", None, ["t4"]),                   # flytekit T4
    ("nvidia-tesla-a100", None, ["a100", "a100mig"]),    # flytekit A100 (40GB; MIG pools serve whole-GPU asks too)
    ("nvidia-h100-80gb", None, ["h100"]),                # GPUAccelerator("nvidia-h100-80gb")
    ("nvidia-tesla-a100", "2g.10gb", ["a100mig"]),       # flytekit A100.partition_2g_10gb
])
def test_flyte_accelerator_requests_land_on_the_matching_pool(accelerator, partition, pools):
    [explanation] = explain(flyte_pod(accelerator, partition), FLYTE_PLATFORM)
    assert explanation.lands_on == pools


def test_kubeflow_accelerator_selector_lands_once_it_tolerates_the_taint():
    pod = seed("kubeflow-gpu-op.yaml")
    pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1"
    # KFP: op.add_toleration(V1Toleration(key="sku", operator="Equal", value="gpu", effect="NoSchedule"))
    pod["spec"]["tolerations"] = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    [explanation] = explain(pod, PLATFORM)
    assert explanation.lands_on == ["t4", "a100mig"]


# --- What the API server refuses, MIG slices, and the fractional-GPU hint ---------------------


def _pod(resources: dict, **spec: object) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        "containers": [{"name": "c", "resources": resources}], **spec}}


@pytest.mark.parametrize(("resources", "refusal"), [
    ({"limits": {"nvidia.com/gpu": 0.5}}, "GPUs are whole devices and the API server refuses fractions"),
    ({"limits": {"nvidia.com/gpu": "1500m"}}, "GPUs are whole devices and the API server refuses fractions"),
    ({"requests": {"nvidia.com/gpu": 1}}, "without a limit; the API server refuses that at any amount"),
    ({"limits": {"nvidia.com/gpu": 1}, "requests": {"nvidia.com/gpu": 2}}, "requires the request to equal the limit"),
])
def test_a_pod_the_api_server_refuses_lands_nowhere(resources, refusal):
    [explanation] = explain(_pod(resources), PLATFORM)
    assert explanation.lands_on == []
    assert any(refusal in r for r in explanation.refusals), explanation.refusals


def test_more_than_one_gpu_on_mig_slices_is_warned_about():
    [explanation] = explain(_pod({"limits": {"nvidia.com/gpu": 2}}, nodeSelector={"gpu-aks.io/pool": "a100mig"}),
                            PLATFORM)
    assert explanation.lands_on == ["a100mig"]
    [warning] = explanation.warnings
    assert warning.startswith("on a100mig the pod gets 2 MIG 2g.10gb slices: MIG instances have no peer-to-peer or "
                              "NVLink between them")
    [one] = explain(_pod({"limits": {"nvidia.com/gpu": 1}}, nodeSelector={"gpu-aks.io/pool": "a100mig"}), PLATFORM)
    assert one.warnings == ()


def _platform_with(mig_strategy: str) -> dict:
    return platform_contract(parse_settings({
        "gpuPools": [{"name": "a100mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g",
                      "minCount": 1}],
        "devicePlugin": {"migStrategy": mig_strategy}}, "test", "eastus2"))


@pytest.mark.parametrize(("strategy", "hint"), [
    ("single", "pool a100mig offers MIG 2g.20gb slices under migStrategy single: ask for nvidia.com/gpu: 1 with "
               "nodeSelector nvidia.com/gpu.partition-size: 2g.20gb"),
    ("mixed", "pool a100mig offers MIG 2g.20gb slices: ask for nvidia.com/mig-2g.20gb: 1"),
])
def test_the_fractional_gpu_hint_follows_the_mig_strategy(strategy, hint):
    [explanation] = explain(_pod({"limits": {"nvidia.com/gpu": 0.5}}), _platform_with(strategy))
    assert explanation.hints == (hint,)
    whole = platform_contract(parse_settings({"gpuPools": [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3"}]},
                                             "test", "eastus2"))
    [no_mig] = explain(_pod({"limits": {"nvidia.com/gpu": 0.5}}), whole)
    assert no_mig.hints == ("this platform has no MIG or shared pools; ask for a whole GPU",)


@pytest.mark.parametrize("field", ["vmSize", "currency", "asOf", "pool name"])
@pytest.mark.parametrize("gpus", [1, 9], ids=["fits", "fits no pool"])
def test_contract_text_a_message_quotes_is_cut_and_inert(field, gpus):
    # `--platform` takes any contract: a VM size, a currency, a date or a pool name of 100,000 characters was
    # quoted whole, once per line that names it (issue 50; round 5 cut only gpuModel).
    from gpu_aks_policies.fit import render
    hostile = "\x1b[2J\n::error::" + "z" * 100_000
    outputs = json.loads(json.dumps(PLATFORM))
    for pools in (outputs["pools"], outputs["gpuPools"]):  # the contract's two versions must agree
        pool = pools["t4"]
        for offer in pool["offers"]:
            if field == "vmSize":
                offer["vmSize"] += hostile
            elif field in ("currency", "asOf"):
                offer["hourlyPrice"][field] += hostile
        if field == "pool name":
            pools["t4" + hostile] = {**pools.pop("t4"), "name": "t4" + hostile}
    pod = _pod({"limits": {"nvidia.com/gpu": gpus}}, tolerations=[{"operator": "Exists"}])
    text = render(explain(pod, outputs))
    assert max(map(len, text.splitlines())) < 600 and "\x1b" not in text
    assert not [line for line in text.splitlines() if line.lstrip().startswith("::")]


SKU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


@pytest.mark.parametrize(("tolerations", "must"), [
    ([], "must tolerate sku=gpu:NoSchedule, which it does not"), ([SKU_TOLERATION], "tolerates their taints")])
def test_a_pod_whose_claim_is_not_among_the_objects_is_not_sent_to_cpu_nodes(tolerations, must):
    """#48 (hostile e6, e7): a pod asking only through a ResourceClaimTemplate the input lacks was told "lands on: CPU
    nodes ... (do not add the GPU toleration)" while the checker advised the toleration. Such a claim may ask for a
    GPU: the explainer says it cannot tell, in the checker's terms."""
    from gpu_aks_policies.check import LoadedObject, check_objects
    from gpu_aks_policies.fit import platform_from_outputs, render
    from gpu_aks_policies.rules import default_rule_config

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": {
        "tolerations": tolerations, "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
        "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}}
    [explanation] = explain(pod, PLATFORM)
    text = render([explanation])
    assert "CPU nodes, not a GPU pool" not in text and "do not add the GPU toleration" not in text
    assert ("asks for what ResourceClaimTemplate 'single-gpu' (claim 'gpu') asks\n  lands on: not judged: it uses "
            "ResourceClaimTemplate 'single-gpu' (claim 'gpu'), which is not among the objects checked: if it asks for a "
            f"GPU device class (gpu.nvidia.com, mig.nvidia.com), the pod lands on GPU nodes and {must}") in text
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config(), platform_from_outputs(PLATFORM))
    advised = [v.message for v in report.violations if v.policy == "gpu-workloads-are-analyzable"]
    assert bool(advised) == (not tolerations)
