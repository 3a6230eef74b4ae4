"""`gpu-aks-check --platform OUTPUTS.json`: the mandatory `gpu-pods-fit-a-pool` fails a GPU pod no pool
of that platform takes, in every output format, and the GPU taints come from the platform."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_aks_policies.check import main
from gpu_aks_policies.explain import explain
from gpu_aks_policies.explain import main as explain_main
from gpu_aks_policies.podspecs import gpu_asks
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import context_of, pod_specs_of

from tools.doctor import main as doctor_main

PROD_OUTPUTS = Path(__file__).parent / "fixtures" / "doctor" / "platform-prod.json"  # kept in sync by test_doctor

T4_CRONJOB = """apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-embed, namespace: ml}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          nodeSelector:
            accelerator: nvidia
            nvidia.com/gpu.accelerator: nvidia-tesla-t4
          tolerations:
          - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
          containers:
          - name: embed
            image: registry.example.com/embed:1
            resources:
              limits: {nvidia.com/gpu: 1}
"""
SPOT_TOLERATION = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
                   "effect": "NoSchedule"}


def check(tmp_path: Path, manifest: str | dict[str, Any], *options: str, platform: Path = PROD_OUTPUTS) -> tuple[int, str]:
    path = tmp_path / "manifest.yaml"
    path.write_text(manifest if isinstance(manifest, str) else yaml.safe_dump(manifest))
    out = io.StringIO()
    code = main(["--platform", str(platform), *options, str(path)], stdout=out)
    return code, out.getvalue()


def pod_template(cronjob: dict[str, Any]) -> dict[str, Any]:
    return cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def test_the_spot_t4_cronjob_the_checker_once_passed_fits_no_pool(tmp_path):
    code, out = check(tmp_path, T4_CRONJOB)
    assert code == 1
    assert "CronJob/nightly-embed [mandatory] gpu-pods-fit-a-pool" in out
    assert "fits no GPU pool of the platform, so it stays Pending forever" in out
    assert "not t4spot:\n      - it does not tolerate the Spot taint kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in out
    assert "not a100mig:\n      - its nodeSelector needs nvidia.com/gpu.accelerator=nvidia-tesla-t4" in out
    # Without --platform the same manifest passes: only the platform knows its T4s are Spot.
    out_plain = io.StringIO()
    assert main([str(tmp_path / "manifest.yaml")], stdout=out_plain) == 0


def test_fixed_as_the_message_says_it_fits(tmp_path):
    cronjob = yaml.safe_load(T4_CRONJOB)
    pod_template(cronjob)["tolerations"].append(SPOT_TOLERATION)
    code, out = check(tmp_path, cronjob)
    assert code == 0, out


def _gpu_pod(**spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "i", "resources": {"limits": spec.pop("limits", {"nvidia.com/gpu": 1})}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [container],
        "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}, SPOT_TOLERATION],
        **spec}}


@pytest.mark.parametrize(("pod", "reason"), [
    (_gpu_pod(nodeSelector={"accelerator": "nvidia", "nvidia.com/gpu.accelerator": "nvidia-tesla-v100"}),
     "no pool offers nvidia-tesla-v100: Azure retired its V100 sizes (NCv3)"),
    (_gpu_pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu-aks.io/pool", "operator": "In", "values": ["h100"]}]}]}}}),
     "not t4spot:\n      - its required node affinity (gpu-aks.io/pool In [h100]) matches no label of the pool's nodes"),
    (_gpu_pod(limits={"nvidia.com/gpu": 4}), "not t4spot:\n      - it asks for 4 nvidia.com/gpu but a node of this pool has 1"),
    (_gpu_pod(limits={"nvidia.com/mig-1g.10gb": 1}),
     "not t4spot:\n      - it asks for nvidia.com/mig-1g.10gb, which this pool does not offer (it offers whole GPUs as "
     "nvidia.com/gpu)"),
    (_gpu_pod(tolerations=[]), "not t4spot:\n      - it does not tolerate"),
])
def test_every_reason_a_pool_refuses_a_pod_is_named(tmp_path, pod, reason):
    code, out = check(tmp_path, pod)
    assert code == 1
    assert "gpu-pods-fit-a-pool" in out
    assert reason in out, out  # one reason a line, under the pool's name, as the explainer writes them


def test_json_and_sarif_carry_the_fit_policy_with_its_reason(tmp_path):
    code, out = check(tmp_path, T4_CRONJOB, "--format", "json")
    [violation] = [v for v in json.loads(out)["violations"] if v["policy"] == "gpu-pods-fit-a-pool"]
    assert code == 1 and violation["level"] == "mandatory" and "Spot taint" in violation["message"]
    code, out = check(tmp_path, T4_CRONJOB, "--format", "sarif")
    run = json.loads(out)["runs"][0]
    assert "gpu-pods-fit-a-pool" in {rule["id"] for rule in run["tool"]["driver"]["rules"]}
    [result] = [r for r in run["results"] if r["ruleId"] == "gpu-pods-fit-a-pool"]
    assert result["level"] == "error" and "Spot taint" in result["message"]["text"]


def test_the_gpu_taints_come_from_the_platform(tmp_path):
    outputs = json.loads(PROD_OUTPUTS.read_text())
    for pool in outputs["gpuPools"].values():
        pool["taints"] = ["nvidia.com/gpu.present=true:NoSchedule" if t == "sku=gpu:NoSchedule" else t
                          for t in pool["taints"]]
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(outputs))
    code, out = check(tmp_path, T4_CRONJOB, platform=platform)
    assert code == 1
    assert "does not tolerate the GPU taint nvidia.com/gpu.present=true:NoSchedule" in out


@pytest.mark.parametrize("shape", ["pulumi stack output --json", "tools.preview --json", "gpuPools alone"])
def test_every_outputs_shape_gives_the_same_verdict(tmp_path, shape):
    outputs = json.loads(PROD_OUTPUTS.read_text())
    document = {"pulumi stack output --json": outputs,
                "tools.preview --json": {"stack": "prod", "resources": [], "violations": [], "outputs": outputs},
                "gpuPools alone": outputs["gpuPools"]}[shape]
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(document))
    code, out = check(tmp_path, T4_CRONJOB, platform=platform)
    assert code == 1 and "not t4spot:\n      - it does not tolerate the Spot taint" in out


@pytest.mark.parametrize(("text", "expected"), [
    ('{"clusterName": "x"}', "expected the platform stack's outputs (with gpuPools)"),
    ('{"gpuPools": {"t4": {"taints": []}}}', "gpuPools.t4 has no labels"),
    ("[unclosed", "outputs.json:1:"),
])
def test_a_bad_outputs_file_exits_2(tmp_path, capsys, text, expected):
    platform = tmp_path / "outputs.json"
    platform.write_text(text)
    code, out = check(tmp_path, T4_CRONJOB, platform=platform)
    assert code == 2 and out == ""
    assert expected in capsys.readouterr().err


def test_pods_whose_nodes_the_controller_provisions_are_not_judged(tmp_path):
    """KAITO provisions its own GPU nodes: the platform's pools are not where its pods go."""
    text = (Path(__file__).parent / "manifests" / "workloads" / "kaito-workspace.yaml").read_text()
    workspaces = [d for d in yaml.safe_load_all(text) if d]
    assert {d["kind"] for d in workspaces} == {"Workspace", "InferenceSet"}
    context = context_of(workspaces)
    kaito_pods = [pod for obj in workspaces for pod in pod_specs_of(obj, context) if pod.own_nodes == "KAITO"]
    assert kaito_pods and all(gpu_asks(pod, ("nvidia.com/gpu",)) for pod in kaito_pods)
    _, out = check(tmp_path, text)
    assert "gpu-pods-fit-a-pool" not in out


@pytest.mark.parametrize(("key", "value"), [("gpusPerNode", "1e999"), ("gpusPerNode", "-1"), ("gpusPerNode", "1.5"),
                                            ("gpusPerNode", '"2"'), ("minCount", "NaN"), ("maxCount", "true")])
def test_counts_a_contract_cannot_have_exit_2_in_every_tool(tmp_path, capsys, key, value):
    """`1e999` is valid JSON for infinity; a count must be a whole number before anything compares it."""
    outputs = json.loads(PROD_OUTPUTS.read_text())
    outputs["gpuPools"]["t4spot"][key] = "<literal>"
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(outputs).replace('"<literal>"', value))  # the JSON text exactly as given
    code, out = check(tmp_path, T4_CRONJOB, platform=platform)
    assert code == 2 and out == ""
    assert f"gpuPools.t4spot.{key}: expected a whole number from 0 to 1000000" in capsys.readouterr().err
    empty = tmp_path / "empty.json"
    empty.write_text('{"items": []}')
    assert doctor_main(["--platform", str(platform), "--nodes", str(empty), "--pods", str(empty)]) == 2
    assert explain_main(["--platform", str(platform), str(tmp_path / "manifest.yaml")]) == 2


FRACTIONAL_POD = T4_CRONJOB.replace("limits: {nvidia.com/gpu: 1}", "limits: {nvidia.com/gpu: 500m}")


@pytest.mark.parametrize(("platform", "offered", "absent"), [
    # prod: the A100 pool is cut into MIG 2g slices under the single strategy (each slice is a nvidia.com/gpu).
    ("platform-prod.json", "ask for a MIG partition (nvidia.com/gpu on pool a100mig, where each is a 2g.20gb slice)",
     "nvidia.com/mig-"),
    ("platform-prod-mixed.json", "ask for a MIG partition (nvidia.com/mig-2g.20gb)", "on pool"),
])
def test_fractional_gpu_advice_offers_what_the_platform_has(tmp_path, platform, offered, absent):
    code, out = check(tmp_path, FRACTIONAL_POD, platform=PROD_OUTPUTS.parent / platform)
    assert code == 1 and offered in out and absent not in out
    assert "time-slic" not in out, "nothing in gpu-aks sets up time-slicing"


def test_a_platform_without_mig_pools_offers_no_gpu_sharing(tmp_path):
    outputs = json.loads(PROD_OUTPUTS.read_text())
    outputs["gpuPools"] = {"t4spot": outputs["gpuPools"]["t4spot"]}
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(outputs))
    code, out = check(tmp_path, FRACTIONAL_POD, platform=platform)
    assert code == 1 and "this platform offers no GPU sharing (no MIG or shared pools): ask for a whole GPU" in out


def test_pool_names_from_the_platform_cannot_steer_the_explainer(tmp_path, capsys):
    # Pool names are keys of the platform file: input. Every place the explainer prints one escapes it.
    outputs = json.loads(PROD_OUTPUTS.read_text())
    pools = outputs["gpuPools"]
    outputs["gpuPools"] = {"t4spot\n::error::fits": pools["t4spot"], "a100\n::error::not": pools["a100mig"]}
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(outputs))
    manifest = tmp_path / "manifest.yaml"
    spot = yaml.safe_load(T4_CRONJOB)
    spot["spec"]["jobTemplate"]["spec"]["template"]["spec"]["tolerations"].append(SPOT_TOLERATION)
    manifest.write_text(yaml.safe_dump(spot))
    explain_main(["--platform", str(platform), str(manifest)])
    out = capsys.readouterr().out
    assert "lands on: t4spot\\n::error::fits" in out, out
    assert not any(line.lstrip().startswith("::") for line in out.splitlines()), out


def test_a_pool_that_shares_its_gpus_is_offered_as_gpu_sharing(tmp_path):
    outputs = json.loads(PROD_OUTPUTS.read_text())
    outputs["gpuPools"] = {"t4spot": {**outputs["gpuPools"]["t4spot"], "sharing": {"strategy": "timeSlicing",
                                                                                   "replicas": 4}}}
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(outputs))
    code, out = check(tmp_path, FRACTIONAL_POD, platform=platform)
    assert code == 1 and "ask for nvidia.com/gpu: 1 on pool t4spot (1/4 of a T4, time-sliced)" in out


NAP_POOL = {
    "kind": "nodePool", "taints": ["sku=gpu:NoSchedule"], "labels": {"accelerator": "nvidia"},
    "gpusPerNode": 1, "gpuResource": "nvidia.com/gpu",
    "offers": [{"vmSize": "Standard_NC4as_T4_v3", "resource": "nvidia.com/gpu", "perNode": 1},
               {"vmSize": "Standard_NC64as_T4_v3", "resource": "nvidia.com/gpu", "perNode": 4},
               {"vmSize": "Standard_NC24ads_A100_v4", "resource": "nvidia.com/mig-1g.10gb", "perNode": 7,
                "migPartition": "1g.10gb"}],
}


@pytest.mark.parametrize(("limits", "reasons"), [
    ({"nvidia.com/gpu": 4}, []),  # only the single-size fields (1 per node) would refuse it
    ({"nvidia.com/mig-1g.10gb": 7}, []),
    ({"nvidia.com/gpu": 5}, ["it asks for 5 nvidia.com/gpu but the largest node this pool may bring has 4 "
                             "(Standard_NC64as_T4_v3)"]),
    ({"amd.com/gpu": 1}, ["it asks for amd.com/gpu, which this pool does not offer (it offers whole GPUs as "
                          "nvidia.com/gpu or MIG 1g.10gb slices as nvidia.com/mig-1g.10gb)"]),
    ({"nvidia.com/gpu": 1, "nvidia.com/mig-1g.10gb": 1},
     ["no one VM size this pool may bring offers all of 1 nvidia.com/gpu, 1 nvidia.com/mig-1g.10gb"]),
])
def test_a_pool_with_several_offers_is_judged_by_each_vm_size_it_may_bring(limits, reasons):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
           "spec": {"tolerations": [{"key": "sku", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{"name": "c", "image": "i", "resources": {"limits": limits}}]}}
    config = default_rule_config()["gpu-pods-fit-a-pool"]
    if "amd.com/gpu" in limits:
        config = replace(config, gpu_resources=("nvidia.com/*", "amd.com/gpu"))
    [explanation] = explain(pod, {"gpuPools": {"nap": NAP_POOL}}, config)
    [verdict] = explanation.verdicts
    assert (verdict.fits, list(verdict.reasons)) == (not reasons, reasons)


# --- The fit answers as the rules do (it calls their code) -------------------------------------

T4_POOL = {"gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {"accelerator": "nvidia"},
                               "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}
SKU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _pod(limits: dict[str, Any], tolerations: list[dict[str, str]] = (), **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml", **metadata},
            "spec": {"tolerations": list(tolerations),
                     "containers": [{"name": "c", "image": "i", "resources": {"limits": limits}}]}}


def _fit_and_rules(pod: dict[str, Any], raw_config: dict[str, Any]) -> tuple[list[str], dict[str, int]]:
    """Where the fit lands the pod, and how many decided findings each pod rule gives, under one config."""
    from gpu_aks_policies.fit import check_fit, platform_from_outputs
    from gpu_aks_policies.rules import POD_RULES, RULES, parse_rule_config

    configs = parse_rule_config({name: {key: value for key, value in raw_config.items() if key in RULES[name].parameters}
                                 for name in [*POD_RULES, "gpu-pods-fit-a-pool"]})
    context = context_of([pod])
    [explanation] = explain(pod, platform_from_outputs(T4_POOL), configs["gpu-pods-fit-a-pool"], context)
    pods = pod_specs_of(pod, context)
    fit_findings = check_fit(pods, "Pod", "p", platform_from_outputs(T4_POOL), configs["gpu-pods-fit-a-pool"], context)
    assert bool(fit_findings) == (explanation.asks_for_gpus and not any(v.fits for v in explanation.verdicts))
    rules = {name: len([f for f in rule.check(pods, configs[name], context) if f.decided])
             for name, rule in POD_RULES.items()}
    return explanation.lands_on, rules


def test_the_fit_honours_the_namespaces_the_config_names():
    # The namespace's default toleration (PodTolerationRestriction) lets the pod on the tainted pool.
    defaults = json.dumps([SKU_TOLERATION])
    config = {"namespaces": {"ml": {"scheduler.alpha.kubernetes.io/defaultTolerations": defaults}}}
    lands_on, rules = _fit_and_rules(_pod({"nvidia.com/gpu": 1}), config)
    assert lands_on == ["t4"] and rules["gpu-pods-tolerate-gpu-taint"] == 0
    lands_on, rules = _fit_and_rules(_pod({"nvidia.com/gpu": 1}), {})
    assert lands_on == [] and rules["gpu-pods-tolerate-gpu-taint"] == 1


def test_a_pod_that_only_a_gpu_marker_puts_on_gpu_nodes_must_fit_a_pool_too(tmp_path):
    marked = _pod({}, annotations={"gpu-fraction": "0.5"})
    lands_on, rules = _fit_and_rules(marked, {})
    assert lands_on == [] and rules["gpu-pods-tolerate-gpu-taint"] == 1
    lands_on, rules = _fit_and_rules(_pod({}, [SKU_TOLERATION], annotations={"gpu-fraction": "0.5"}), {})
    assert lands_on == ["t4"] and rules["gpu-pods-tolerate-gpu-taint"] == 0
    platform = tmp_path / "outputs.json"
    platform.write_text(json.dumps(T4_POOL))
    code, out = check(tmp_path, marked, platform=platform)
    assert code == 1 and "[mandatory] gpu-pods-fit-a-pool" in out and "does not tolerate the taint sku=gpu" in out


def test_custom_gpu_resources_give_the_fit_the_rules_answer():
    # HAMi: a GPU plus a share of its memory; with nvidia.com/* counted as GPUs the memory share is a
    # marker resource, which no rule counts as GPUs, so neither does the fit.
    hami = _pod({"nvidia.com/gpu": 1, "nvidia.com/gpumem": 3000}, [SKU_TOLERATION])
    lands_on, rules = _fit_and_rules(hami, {"gpuResources": ["nvidia.com/*"]})
    assert lands_on == ["t4"] and rules["gpu-limits-are-whole-numbers"] == 0
    # A fraction of a memory share is no fraction of a GPU: neither the limits rule nor the fit refuses it.
    share = _pod({"nvidia.com/gpu": 1, "nvidia.com/gpucores": "0.5"}, [SKU_TOLERATION])
    lands_on, rules = _fit_and_rules(share, {"gpuResources": ["nvidia.com/*"]})
    assert lands_on == ["t4"] and rules["gpu-limits-are-whole-numbers"] == 0
    # A real fraction of a GPU: both refuse it.
    lands_on, rules = _fit_and_rules(_pod({"nvidia.com/gpu": "0.5"}, [SKU_TOLERATION]), {})
    assert lands_on == [] and rules["gpu-limits-are-whole-numbers"] == 1


def test_a_marker_is_shown_where_the_explainer_says_what_the_pod_asks_for():
    from gpu_aks_policies.fit import platform_from_outputs, render

    explanations = explain(_pod({}, [SKU_TOLERATION], annotations={"gpu-fraction": "0.5"}),
                           platform_from_outputs(T4_POOL))
    assert render(explanations).splitlines()[:2] == [
        "Pod/p: pod spec at spec asks for no GPU count; annotation gpu-fraction puts it on GPU nodes", "  lands on: t4"]
