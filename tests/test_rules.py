"""The pure GPU rules, table-driven: the seeds' pod specs, every workload shape, every amount."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_aks_policies.fit import read_platform
from gpu_aks_policies.podspecs import UNKNOWN, find_pod_specs
from gpu_aks_policies.pool_rules import StackResource, check_device_plugin_coverage, check_gpu_node_pool
from gpu_aks_policies.rule_config import (
    ANALYZABLE,
    DEVICE_PLUGIN_TOLERATES_POOLS,
    QUEUE_ADMITS,
    SELECT_GPU_NODES,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    RuleConfigError,
)
from gpu_aks_policies.rules import POD_RULES, RULES, Rule, parse_rule_config, policies_markdown
from gpu_aks_policies.workloads import context_of, pod_specs_of

from tests.helpers import DEFAULTS, findings, verdicts

SEEDS = Path(__file__).parent / "manifests" / "seeds"


def seed(name: str) -> dict[str, Any]:
    return yaml.safe_load((SEEDS / name).read_text())


# Under the default config (the GPU taint is sku=gpu:NoSchedule, as the AKS docs use).
SEED_VERDICTS = [
    ("aks-mnist-job.yaml", {TOLERATE_GPU_TAINT: [], WHOLE_GPU_LIMITS: [],
                            SELECT_GPU_NODES: ["spec.template.spec.nodeSelector"], ANALYZABLE: [], QUEUE_ADMITS: []}),
    ("generic-gpu-pod.yaml", {TOLERATE_GPU_TAINT: ["spec.tolerations"], WHOLE_GPU_LIMITS: [], SELECT_GPU_NODES: [],
                              ANALYZABLE: [], QUEUE_ADMITS: []}),
    ("flyte-plain-gpu.yaml", {TOLERATE_GPU_TAINT: ["spec.tolerations"], WHOLE_GPU_LIMITS: [],
                              SELECT_GPU_NODES: ["spec.nodeSelector"], ANALYZABLE: [], QUEUE_ADMITS: []}),
    ("flyte-v100.yaml", {TOLERATE_GPU_TAINT: ["spec.tolerations"], WHOLE_GPU_LIMITS: [],
                         SELECT_GPU_NODES: ["spec.nodeSelector"], ANALYZABLE: [], QUEUE_ADMITS: []}),
    # Its required affinity selects nvidia.com/gpu.accelerator and nvidia.com/gpu.partition-size, which
    # only GPU nodes carry: it selects GPU nodes though not by accelerator=nvidia.
    ("flyte-a100-2g10gb.yaml", {TOLERATE_GPU_TAINT: ["spec.tolerations"], WHOLE_GPU_LIMITS: [],
                                SELECT_GPU_NODES: [], ANALYZABLE: [], QUEUE_ADMITS: []}),
    ("kubeflow-gpu-op.yaml", {TOLERATE_GPU_TAINT: ["spec.tolerations"], WHOLE_GPU_LIMITS: [], SELECT_GPU_NODES: [],
                              ANALYZABLE: [], QUEUE_ADMITS: []}),
    ("aks-device-plugin-ds.yaml", {TOLERATE_GPU_TAINT: [], WHOLE_GPU_LIMITS: [], SELECT_GPU_NODES: [], ANALYZABLE: [],
                                   QUEUE_ADMITS: []}),
]


@pytest.mark.parametrize("name, expected", SEED_VERDICTS, ids=[s[0] for s in SEED_VERDICTS])
def test_seed_pod_specs_under_the_default_config(name, expected):
    assert verdicts(seed(name)) == expected


def test_flyte_specs_pass_once_the_platform_taint_is_flytes():
    config = {TOLERATE_GPU_TAINT: {"gpuTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}
    assert verdicts(seed("flyte-plain-gpu.yaml"), config)[TOLERATE_GPU_TAINT] == []
    assert verdicts(seed("flyte-v100.yaml"), config)[TOLERATE_GPU_TAINT] == []


def test_with_the_aks_best_practice_taint_whole_gpu_pods_need_no_toleration():
    """AKS runs ExtendedResourceToleration: a pod asking for nvidia.com/gpu gets `nvidia.com/gpu
    (Exists, NoSchedule)` from the API server, which tolerates `nvidia.com/gpu=present:NoSchedule`."""
    config = {TOLERATE_GPU_TAINT: {"gpuTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}
    assert verdicts(seed("aks-mnist-job.yaml"), config)[TOLERATE_GPU_TAINT] == []
    assert verdicts(seed("generic-gpu-pod.yaml"), config)[TOLERATE_GPU_TAINT] == []
    without_aks = {TOLERATE_GPU_TAINT: {**config[TOLERATE_GPU_TAINT], "admissionPlugins": []}}
    assert verdicts(seed("generic-gpu-pod.yaml"), without_aks)[TOLERATE_GPU_TAINT] == ["spec.tolerations"]


def test_toleration_message_names_container_path_admission_and_the_fix():
    [finding] = findings(seed("generic-gpu-pod.yaml"), TOLERATE_GPU_TAINT)
    assert finding.message == (
        "container 'gpu-container' asks for nvidia.com/gpu (pod spec at spec), but the pod does not tolerate "
        "the GPU taint sku=gpu:NoSchedule: GPU nodes carry that taint and no other node has GPUs, so the pod "
        "stays Pending forever. The tolerations it gets without writing them (nvidia.com/gpu (Exists):NoSchedule, "
        "AKS's ExtendedResourceToleration) do not match it. Add to spec:\ntolerations:\n  - key: sku\n"
        "    operator: Equal\n    value: gpu\n    effect: NoSchedule")


TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
CONTAINER = {"name": "main", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": 1}}}


def pod_template(containers: list | None = None, tolerations: list | None = None) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "x"}},
            "spec": {"containers": containers or [copy.deepcopy(CONTAINER)], "tolerations": tolerations or []}}


WORKLOADS = [
    ("Pod", {"apiVersion": "v1", "kind": "Pod", "spec": pod_template()["spec"]}, "spec"),
    ("PodTemplate", {"apiVersion": "v1", "kind": "PodTemplate", "template": pod_template()}, "template.spec"),
    ("ReplicationController", {"kind": "ReplicationController", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("Deployment", {"kind": "Deployment", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("StatefulSet", {"kind": "StatefulSet", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("DaemonSet", {"kind": "DaemonSet", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("ReplicaSet", {"kind": "ReplicaSet", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("Job", {"kind": "Job", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("CronJob", {"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": pod_template()}}}},
     "spec.jobTemplate.spec.template.spec"),
    ("DeploymentPatch", {"kind": "Deployment", "spec": {"template": pod_template()}}, "spec.template.spec"),
    ("PyTorchJob", {"kind": "PyTorchJob", "spec": {"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": pod_template()},
        "Worker": {"replicas": 3, "template": pod_template()}}}},
     "spec.pytorchReplicaSpecs.Master.template.spec"),
    ("TFJob", {"kind": "TFJob", "spec": {"tfReplicaSpecs": {"Worker": {"template": pod_template()}}}},
     "spec.tfReplicaSpecs.Worker.template.spec"),
    ("MPIJob", {"kind": "MPIJob", "spec": {"mpiReplicaSpecs": {"Worker": {"template": pod_template()}}}},
     "spec.mpiReplicaSpecs.Worker.template.spec"),
    ("RayCluster", {"kind": "RayCluster", "spec": {"headGroupSpec": {"template": pod_template(
        containers=[{"name": "head", "image": "ray"}])}, "workerGroupSpecs": [{"groupName": "gpu", "template": pod_template()}]}},
     "spec.headGroupSpec.template.spec"),
    ("RayJob", {"kind": "RayJob", "spec": {"rayClusterSpec": {"workerGroupSpecs": [{"template": pod_template()}]}}},
     "spec.rayClusterSpec.workerGroupSpecs[0].template.spec"),
    ("RayService", {"kind": "RayService", "spec": {"rayClusterConfig": {"workerGroupSpecs": [{"template": pod_template()}]}}},
     "spec.rayClusterConfig.workerGroupSpecs[0].template.spec"),
    ("JobSet", {"kind": "JobSet", "spec": {"replicatedJobs": [
        {"name": "w", "template": {"spec": {"template": pod_template()}}}]}},
     "spec.replicatedJobs[0].template.spec.template.spec"),
    ("LeaderWorkerSet", {"kind": "LeaderWorkerSet", "spec": {"leaderWorkerTemplate": {
        "leaderTemplate": pod_template(), "workerTemplate": pod_template()}}},
     "spec.leaderWorkerTemplate.leaderTemplate.spec"),
    ("TrainJob runtime", {"kind": "ClusterTrainingRuntime", "spec": {"template": {"spec": {"replicatedJobs": [
        {"name": "node", "template": {"spec": {"template": pod_template()}}}]}}}},
     "spec.template.spec.replicatedJobs[0].template.spec.template.spec"),
]


@pytest.mark.parametrize("kind, obj, first_path", WORKLOADS, ids=[w[0] for w in WORKLOADS])
def test_every_workload_kind_is_found_and_checked(kind, obj, first_path):
    obj = copy.deepcopy(obj)
    paths = [pod.path for pod in find_pod_specs(obj)]
    assert paths[0] == first_path
    gpu_pods = [p for p in find_pod_specs(obj) if p.spec["containers"][0].get("resources")]
    assert [f.path for f in findings(obj, TOLERATE_GPU_TAINT)] == [f"{p.path}.tolerations" for p in gpu_pods]
    for pod in find_pod_specs(obj):
        pod.spec["tolerations"].append(dict(TOLERATION))
    assert findings(obj, TOLERATE_GPU_TAINT) == []


def test_a_decoy_containers_list_does_not_hide_the_template_below_it():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {
        "containers": [{"name": "x"}], "template": pod_template()}}
    assert [f.path for f in findings(deployment, TOLERATE_GPU_TAINT)] == ["spec.template.spec.tolerations"]
    custom = {"apiVersion": "example.com/v1", "kind": "Trainer", "spec": {
        "containers": [{"name": "x"}], "worker": {"template": pod_template()}}}
    assert [f.path for f in findings(custom, TOLERATE_GPU_TAINT)] == ["spec.worker.template.spec.tolerations"]


@pytest.mark.parametrize("list_name", ["initContainers", "ephemeralContainers"])
def test_init_and_ephemeral_containers_count(list_name):
    pod = {"kind": "Pod", "apiVersion": "v1", "spec": {"containers": [{"name": "app", "image": "x"}],
                                                       list_name: [{"name": "warmup", "image": "x",
                                                                    "resources": {"limits": {"nvidia.com/gpu": "0.5"}}}]}}
    tolerate = findings(pod, TOLERATE_GPU_TAINT)
    [limit] = findings(pod, WHOLE_GPU_LIMITS)
    if list_name == "initContainers":
        assert "container 'warmup'" in tolerate[0].message
    else:  # resources on an ephemeral container are refused by the API server: it never asks for a GPU
        assert tolerate == []
    assert limit.path == f"spec.{list_name}[0].resources.limits.nvidia.com/gpu"


def limits_pod(limits: dict | None = None, requests: dict | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    return {"kind": "Pod", "apiVersion": "v1", "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}],
                                                        "tolerations": [TOLERATION], "nodeSelector": {"accelerator": "nvidia"}}}


# What the API server's ValidateResourceRequirements accepts for an extended resource
# (kubernetes pkg/apis/core/validation), with quantities read as apimachinery's UnmarshalJSON reads them.
AMOUNTS = [
    # limits, requests, accepted?
    ({"nvidia.com/gpu": 1}, None, True),
    ({"nvidia.com/gpu": 1.0}, None, True),              # Pulumi's wire float
    ({"nvidia.com/gpu": "2"}, None, True),
    ({"nvidia.com/gpu": "1000m"}, None, True),
    ({"nvidia.com/gpu": "1e1"}, None, True),
    ({"nvidia.com/gpu": " 1 "}, None, True),            # UnmarshalJSON trims spaces
    ({"nvidia.com/gpu": 4}, {"nvidia.com/gpu": 4.0}, True),
    ({"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "2000m"}, True),
    ({"nvidia.com/mig-1g.10gb": 1}, None, True),
    ({"nvidia.com/gpu": 0}, None, True),                # a limit of 0 alone asks for nothing
    ({"nvidia.com/gpu": None}, None, True),             # null is the zero quantity
    ({"nvidia.com/gpu": 0}, {"nvidia.com/gpu": 0}, True),
    ({"nvidia.com/gpu": "0.5"}, None, False),
    ({"nvidia.com/gpu": "500m"}, None, False),
    ({"nvidia.com/gpu": 1.5}, None, False),
    ({"nvidia.com/gpu": "1500m"}, None, False),
    ({"nvidia.com/gpu": -1}, None, False),
    ({"nvidia.com/gpu": "one"}, None, False),
    ({"nvidia.com/gpu": True}, None, False),
    ({"nvidia.com/gpu": "inf"}, None, False),
    ({"nvidia.com/gpu": "1" + "0" * 5000}, None, False),   # readable violation, no crash
    ({"nvidia.com/gpu": "1." + "0" * 5000 + "1"}, None, False),
    ({"nvidia.com/gpu": "1e30"}, None, False),          # beyond the API server's 64-bit milli-value
    (None, {"nvidia.com/gpu": 1}, False),               # a request without a limit
    (None, {"nvidia.com/gpu": 0}, False),               # ... at any amount, 0 included
    (None, {"nvidia.com/gpu": None}, False),
    ({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1}, False),
    ({"nvidia.com/gpu": 0}, {"nvidia.com/gpu": 1}, False),
    ({"nvidia.com/mig-2g.20gb": "0.5"}, None, False),
    ({"cpu": "500m", "memory": "1.5Gi"}, None, True),   # not GPUs at all
]


@pytest.mark.parametrize("limits, requests, accepted", AMOUNTS)
def test_gpu_amounts_as_the_api_server_validates_them(limits, requests, accepted):
    result = findings(limits_pod(limits, requests), WHOLE_GPU_LIMITS)
    assert (result == []) is accepted, result
    assert all(len(f.message) < 1000 for f in result), "huge amounts are shown short"


def test_limit_messages_say_how_to_fix():
    [fraction] = findings(limits_pod({"nvidia.com/gpu": "500m"}), WHOLE_GPU_LIMITS)
    assert fraction.message.startswith("container 'c' at spec.containers[0] has limits.nvidia.com/gpu: '500m' (0.5 GPUs)")
    assert fraction.message.endswith("resources:\n  limits:\n    nvidia.com/gpu: 1")
    [no_limit] = findings(limits_pod(None, {"nvidia.com/gpu": 2}), WHOLE_GPU_LIMITS)
    assert "Limit must be set for non overcommitable resources" in no_limit.message
    assert no_limit.message.endswith("limits:\n    nvidia.com/gpu: 2")
    [zero] = findings(limits_pod(None, {"nvidia.com/gpu": 0}), WHOLE_GPU_LIMITS)
    assert "at any amount, 0 included" in zero.message
    [mismatch] = findings(limits_pod({"nvidia.com/gpu": 2}, {"nvidia.com/gpu": 1}), WHOLE_GPU_LIMITS)
    assert "requires the request to equal the limit" in mismatch.message
    [huge] = findings(limits_pod({"nvidia.com/gpu": "1" * 5000}), WHOLE_GPU_LIMITS)
    assert "(5000 characters) is too long to be a quantity" in huge.message


def test_a_zero_limit_is_not_a_gpu_pod():
    pod = limits_pod({"nvidia.com/gpu": 0})
    pod["spec"]["tolerations"] = []
    assert findings(pod, TOLERATE_GPU_TAINT) == []


def test_gpu_resource_names_are_configurable():
    pod = limits_pod({"amd.com/gpu": "0.5"})
    assert findings(pod, WHOLE_GPU_LIMITS) == []
    config = parse_rule_config({WHOLE_GPU_LIMITS: {"gpuResources": ["amd.com/gpu"]}})
    assert len(findings(pod, WHOLE_GPU_LIMITS, config[WHOLE_GPU_LIMITS])) == 1


def test_node_selection_accepts_required_affinity_on_the_label():
    pod = limits_pod({"nvidia.com/gpu": 1})
    del pod["spec"]["nodeSelector"]
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "accelerator", "operator": "In", "values": ["nvidia"]}]}]}}}
    assert findings(pod, SELECT_GPU_NODES) == []
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"].append(
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["1"]}]})
    assert len(findings(pod, SELECT_GPU_NODES)) == 1, "one term leaves GPU nodes open"


def test_unknown_preview_values_are_undecided_not_violations():
    pod = limits_pod({"nvidia.com/gpu": UNKNOWN})
    [finding] = findings(pod, WHOLE_GPU_LIMITS)
    assert not finding.decided and finding.path == "spec.containers[0].resources.limits.nvidia.com/gpu"
    pod = limits_pod({"nvidia.com/gpu": 1})
    pod["spec"]["tolerations"] = UNKNOWN
    [finding] = findings(pod, TOLERATE_GPU_TAINT)
    assert not finding.decided and finding.path == "spec.tolerations"
    pod = {"kind": "Pod", "apiVersion": "v1", "spec": {"containers": UNKNOWN}}
    [finding] = findings(pod, TOLERATE_GPU_TAINT)
    assert not finding.decided and finding.path == "spec.containers"


def test_one_unknown_container_does_not_hide_the_known_ones():
    pod = limits_pod({"nvidia.com/gpu": "0.5"})
    pod["spec"]["tolerations"] = []
    pod["spec"]["containers"].append(UNKNOWN)
    tolerate = findings(pod, TOLERATE_GPU_TAINT)
    limits = findings(pod, WHOLE_GPU_LIMITS)
    assert [f.decided for f in tolerate] == [True] and "container 'c'" in tolerate[0].message
    assert sorted(f.decided for f in limits) == [False, True]
    assert [f.path for f in limits if f.decided] == ["spec.containers[0].resources.limits.nvidia.com/gpu"]


AGENT_POOL = "azure-native:containerservice:AgentPool"
GOOD_POOL = {"agentPoolName": "gput4", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule"],
             "enableAutoScaling": True, "minCount": 0.0, "maxCount": 2.0}


@pytest.mark.parametrize("change, problem", [
    ({}, None),
    ({"vmSize": "Standard_D8ds_v5", "nodeTaints": []}, None),
    ({"nodeTaints": []}, "carries no NoSchedule GPU taint (sku=gpu:NoSchedule)"),
    ({"nodeTaints": ["sku=gpu:PreferNoSchedule"]}, "carries no NoSchedule GPU taint"),
    ({"nodeTaints": ["sku=gpu"]}, "taint 'sku=gpu' has no effect"),
    ({"enableAutoScaling": False}, "is not autoscaled within bounds"),
    ({"maxCount": None}, "is not autoscaled within bounds"),
    ({"minCount": 3.0}, "has minCount 3 above maxCount 2. Fix: minCount <= maxCount"),
    ({"vmSize": "Standard_NC6s_v3", "nodeTaints": []}, "carries no NoSchedule GPU taint"),
])
def test_gpu_node_pool_rule(change, problem):
    result = check_gpu_node_pool(AGENT_POOL, {**GOOD_POOL, **change}, DEFAULTS[TAINTED_GPU_POOLS])
    if problem is None:
        assert result == []
    else:
        assert any(problem in f.message for f in result), result
        assert all(f.message.startswith("GPU node pool 'gput4'") for f in result)


def test_gpu_node_pool_rule_reads_inline_profiles_of_a_managed_cluster():
    cluster = {"agentPoolProfiles": [{"name": "system", "vmSize": "Standard_D4ds_v5", "mode": "System"},
                                     {"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "nodeTaints": []}]}
    result = check_gpu_node_pool("azure-native:containerservice:ManagedCluster", cluster, DEFAULTS[TAINTED_GPU_POOLS])
    assert {f.path for f in result} == {"agentPoolProfiles[1]"}


def _plugin(tolerations: list, pools: list[str] | None = None, env: list | None = None,
            security: dict | None = None) -> StackResource:
    container: dict[str, Any] = {"name": "p", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.20.0", "env": env or [],
                                 "securityContext": security or {}}
    spec: dict[str, Any] = {"containers": [container], "tolerations": tolerations}
    if pools:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu-aks.io/pool", "operator": "In", "values": pools}]}]}}}
    return StackResource("urn:ds", "kubernetes:apps/v1:DaemonSet", {"spec": {"template": {"spec": spec}}})


def _pool(name: str, **props: Any) -> StackResource:
    labels = {"gpu-aks.io/pool": name}
    return StackResource(f"urn:{name}", AGENT_POOL, {**GOOD_POOL, "agentPoolName": name + "1a2b", "nodeLabels": labels,
                                                     **props})


def test_device_plugin_coverage():
    config = DEFAULTS[DEVICE_PLUGIN_TOLERATES_POOLS]
    sku_gpu = [TOLERATION]
    assert check_device_plugin_coverage([_pool("a"), _plugin(sku_gpu, pools=["a"])], config) == []
    [finding] = check_device_plugin_coverage([_pool("a"), _plugin([])], config)
    assert finding.subject == "urn:a" and "does not tolerate sku=gpu:NoSchedule" in finding.message
    spot = _pool("s", scaleSetPriority="Spot")
    [finding] = check_device_plugin_coverage([spot, _plugin(sku_gpu)], config)
    assert "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in finding.message
    assert check_device_plugin_coverage([_pool("a"), _plugin(sku_gpu, pools=["b"])], config)[0].message.count(
        "does not select its nodes") == 1
    operator = _pool("o", gpuProfile={"driver": "None"}, nodeTaints=["other=x:NoSchedule"])
    assert check_device_plugin_coverage([operator, _plugin(sku_gpu)], config) == [], "driver None is served elsewhere"
    assert check_device_plugin_coverage([_pool("a")], config) == [], "no plugin in the stack: nothing to check"


def test_a_mig_pool_needs_the_plugin_configured_as_nvidias_chart_does():
    config = DEFAULTS[DEVICE_PLUGIN_TOLERATES_POOLS]
    mig_pool = _pool("m", vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG2g")
    [finding] = check_device_plugin_coverage([mig_pool, _plugin([TOLERATION], pools=["m"])], config)
    assert ("serves a MIG pool without MIG_STRATEGY (single or mixed), NVIDIA_MIG_MONITOR_DEVICES=all, the SYS_ADMIN "
            "capability, which NVIDIA's chart sets for MIG") in finding.message
    chart_like = _plugin([TOLERATION], pools=["m"],
                         env=[{"name": "MIG_STRATEGY", "value": "single"},
                              {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"}],
                         security={"capabilities": {"add": ["SYS_ADMIN"]}})
    assert check_device_plugin_coverage([mig_pool, chart_like], config) == []


def test_rule_config_reports_every_problem():
    with pytest.raises(RuleConfigError) as error:
        parse_rule_config({
            "gpu-pods-tolerate-gpu-taints": {},
            TOLERATE_GPU_TAINT: {"gpuTaints": [{"key": "sku", "value": "gpu", "effect": "Never"}], "enforcementLevel": "loud",
                                 "admissionPlugins": ["AlwaysPullImages"]},
            WHOLE_GPU_LIMITS: {"nodeLabel": {"key": "a", "value": "b"}},
            SELECT_GPU_NODES: {"nodeLabels": {"key": "a", "value": "b"}},
        })
    assert error.value.problems == [
        "'gpu-pods-tolerate-gpu-taints' is not a policy of this pack; known: gpu-pods-tolerate-gpu-taint, "
        "gpu-limits-are-whole-numbers, gpu-pods-select-gpu-nodes, gpu-node-pools-are-tainted, "
        "device-plugin-tolerates-gpu-pools, gpu-workloads-are-analyzable, gpu-pods-fit-a-pool, "
        "gpu-training-pods-not-disruptible, queued-gpu-pods-are-admitted",
        "gpu-pods-tolerate-gpu-taint.enforcementLevel: 'loud' is not one of advisory, mandatory, disabled",
        "gpu-pods-tolerate-gpu-taint.gpuTaints[0].effect: 'Never' is not one of NoSchedule, PreferNoSchedule, NoExecute",
        "gpu-pods-tolerate-gpu-taint.admissionPlugins: 'AlwaysPullImages' not allowed; allowed: "
        "ExtendedResourceToleration, PodTolerationRestriction, PodNodeSelector",
        # The config engine's wording (gpu_aks_policies.declarations), as for the platform's settings.
        "gpu-limits-are-whole-numbers.nodeLabel: unknown setting; allowed: enforcementLevel, gpuResources, "
        "workloadShapes",
        "gpu-pods-select-gpu-nodes.nodeLabels: unknown setting; did you mean 'nodeLabel'? allowed: enforcementLevel, "
        "gpuResources, nodeLabel, gpuDeviceClasses, namespaces, gpuMarkers, workloadShapes",
    ]


# --- Every rule's own samples (policies/rule_samples/<rule>/suite.yaml) ---------------------------

def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if isinstance(doc, dict)]


def _identity(doc: dict[str, Any], rule: Rule) -> str:
    if rule.subject == "pods":
        return f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"
    return f"{doc['type'].rsplit(':', 1)[1]}/{doc['name']}"


def _suite_paths(rule: Rule, case: dict[str, Any], suite: dict[str, Any]) -> list[str]:
    docs = _documents(rule.samples / case["file"])
    config = parse_rule_config({rule.name: suite.get("config", {})})[rule.name]
    if rule.subject == "stack-resources":
        assert case["object"] == "stack"
        resources = [StackResource(f"urn:{d['type']}::{d['name']}", d["type"], d["props"]) for d in docs]
        found = rule.check(resources, config)
    else:
        [doc] = [d for d in docs if _identity(d, rule) == case["object"]]
        if rule.subject == "aks-pools":
            found = rule.check(doc["type"], doc["props"], config)
        else:
            context = context_of(docs)
            platform = read_platform(str(rule.samples / suite["platform"])) if "platform" in suite else None
            found = rule.check_pods(pod_specs_of(doc, context), config, context, platform,
                                    (doc.get("kind", ""), (doc.get("metadata") or {}).get("name", "")))
    assert all(f.policy == rule.name for f in found)
    return [f.path for f in found if f.decided]


SUITE_CASES = [(rule, case, yaml.safe_load((rule.samples / "suite.yaml").read_text()))
               for rule in RULES.values() if (rule.samples / "suite.yaml").is_file()
               for case in yaml.safe_load((rule.samples / "suite.yaml").read_text())["cases"]]


@pytest.mark.parametrize("rule, case, suite", SUITE_CASES,
                         ids=[f"{rule.name}:{case['file']}:{case['object']}" for rule, case, _ in SUITE_CASES])
def test_each_rule_gives_its_samples_the_verdicts_its_suite_expects(rule, case, suite):
    assert _suite_paths(rule, case, suite) == case["paths"]


@pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))
def test_every_rule_has_samples_that_pass_and_fail_it_and_no_sample_is_unused(rule):
    suite = yaml.safe_load((rule.samples / "suite.yaml").read_text())
    cases = suite["cases"]
    assert any(case["paths"] for case in cases) and any(not case["paths"] for case in cases)
    named = {case["file"] for case in cases} | {suite.get("platform")}
    assert {p.name for p in rule.samples.iterdir()} - named == {"suite.yaml"}


def test_docs_policies_md_is_generated_from_the_declarations():
    page = Path(__file__).parent.parent / "docs" / "policies.md"
    assert page.read_text() == policies_markdown(), "stale: regenerate it from gpu_aks_policies.rules.policies_markdown()"


def test_every_consumer_derives_from_the_registry():
    from gpu_aks_policies.check import sarif_rules

    assert [r["id"] for r in sarif_rules()] == list(RULES)
    defaults = parse_rule_config({})
    assert {name: config.level for name, config in defaults.items()} == {name: rule.level for name, rule in RULES.items()}
    assert set(POD_RULES) == {TOLERATE_GPU_TAINT, WHOLE_GPU_LIMITS, SELECT_GPU_NODES, ANALYZABLE, QUEUE_ADMITS}
    assert all(rule.check is RULES[name].check for name, rule in POD_RULES.items())


# --- GPU pods without an extended GPU resource; the advice for a fractional GPU -------------------


def _kai_deployment(annotations: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "share"}, "spec": {"template": {
        "metadata": {"annotations": annotations},
        "spec": {"schedulerName": "kai-scheduler", "containers": [{"name": "c", "image": "x"}]}}}}


@pytest.mark.parametrize("annotations", [{"gpu-fraction": "0.5"}, {"gpu-memory": "2000"}])
def test_a_kai_or_runai_share_must_tolerate_the_gpu_taint(annotations):
    obj = _kai_deployment(annotations)
    [finding] = findings(obj, TOLERATE_GPU_TAINT)
    assert f"annotation {next(iter(annotations))} puts it on GPU nodes" in finding.message
    assert findings(obj, WHOLE_GPU_LIMITS) == []
    no_markers = {TOLERATE_GPU_TAINT: {"gpuMarkers": {"annotations": [], "resources": []}}}
    assert verdicts(obj, no_markers)[TOLERATE_GPU_TAINT] == []


def test_marker_resources_count_for_tolerations_never_for_whole_numbers():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "hami"}, "spec": {"containers": [{
        "name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpumem": 3000, "nvidia.com/gpucores": 30}}}]}}
    assert verdicts(pod)[TOLERATE_GPU_TAINT] == ["spec.tolerations"]
    every_nvidia = {WHOLE_GPU_LIMITS: {"gpuResources": ["nvidia.com/*"]}}
    assert verdicts(pod, every_nvidia)[WHOLE_GPU_LIMITS] == [], "a share is not a count of GPUs"


def test_gpu_markers_config_is_validated():
    with pytest.raises(RuleConfigError) as error:
        parse_rule_config({TOLERATE_GPU_TAINT: {"gpuMarkers": {"annotation": ["x"], "resources": "volcano"},
                                                "namespaces": {"ml": {"a": 1}, "": {}}}})
    assert error.value.problems == [
        "gpu-pods-tolerate-gpu-taint.namespaces.ml: expected an object of annotation -> string, got {\"a\": 1}",
        "gpu-pods-tolerate-gpu-taint.namespaces: namespace names are non-empty strings, got ''",
        "gpu-pods-tolerate-gpu-taint.gpuMarkers: unknown key(s) 'annotation'; takes annotations, resources",
        "gpu-pods-tolerate-gpu-taint.gpuMarkers.resources: expected a list of names, got 'volcano'",
    ]


def test_the_fractional_advice_offers_only_what_the_platform_has():
    from types import SimpleNamespace

    from gpu_aks_policies.demand import GpuSharing

    half = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "half"}, "spec": {
        "containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 0.5}}}]}}
    config = DEFAULTS[WHOLE_GPU_LIMITS]
    context = context_of([half])
    pods = pod_specs_of(half, context, config.workload_shapes)

    def on(sharing: GpuSharing) -> list:
        # The rule takes the platform (`--platform`) and asks it what it offers instead of a fraction.
        return POD_RULES[WHOLE_GPU_LIMITS].check(pods, config, context, platform=SimpleNamespace(gpu_sharing=lambda: sharing))

    [unknown] = findings(half, WHOLE_GPU_LIMITS, config)
    assert "time-slicing" not in unknown.message and "nvidia.com/mig-<profile>" in unknown.message
    [none] = on(GpuSharing())
    assert "this platform offers no GPU sharing (no MIG or shared pools): ask for a whole GPU" in none.message
    [mig] = on(GpuSharing(("nvidia.com/mig-2g.20gb",)))
    assert "ask for a MIG partition (nvidia.com/mig-2g.20gb)" in mig.message and "time-sliced" not in mig.message
    shared = "nvidia.com/gpu: 1 on pool nb (1/4 of a T4, time-sliced)"
    [sliced] = on(GpuSharing((), shared_pools=(shared,)))
    assert f"ask for {shared}" in sliced.message and "MIG" not in sliced.message


# --- Issue 28, item 6: the SARIF help link comes from the package metadata, not a hard-coded fork ------


def test_sarif_help_links_follow_the_packages_repository_url(monkeypatch):
    import importlib.metadata
    import tomllib

    from gpu_aks_policies import check

    repository = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"]["urls"][
        "Repository"]
    check.repository_url.cache_clear()
    assert check.repository_url() == repository, "the installed metadata is stale: run `make setup`"
    assert all(entry["helpUri"] == f"{repository}/blob/main/docs/policies.md#{entry['id']}"
               for entry in check.sarif_rules())

    class Fork:
        @staticmethod
        def get_all(_name):
            return ["Homepage, https://example.org", "Repository, https://github.com/acme/gpu-aks/"]

    monkeypatch.setattr(importlib.metadata, "metadata", lambda _name: Fork)
    check.repository_url.cache_clear()
    try:
        assert {entry["helpUri"] for entry in check.sarif_rules()} == {
            f"https://github.com/acme/gpu-aks/blob/main/docs/policies.md#{name}" for name in RULES}

        def missing(_name):
            raise importlib.metadata.PackageNotFoundError(_name)

        monkeypatch.setattr(importlib.metadata, "metadata", missing)
        check.repository_url.cache_clear()
        assert all("helpUri" not in entry for entry in check.sarif_rules()), "the pack copied elsewhere: no link"
    finally:
        monkeypatch.undo()
        check.repository_url.cache_clear()


def test_no_source_names_a_github_fork():
    root = Path(__file__).parent.parent
    sources = [*root.glob("policies/**/*.py"), *root.glob("components/**/*.py"), *root.glob("tools/*.py")]
    assert [str(path) for path in sources if "github.com/gpu-aks/" in path.read_text()] == []
