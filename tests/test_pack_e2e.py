"""The policy pack over its real gRPC Analyzer interface, started exactly as the Pulumi CLI starts it."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
import yaml
from google.protobuf import json_format
from gpu_aks_policies.rules import RULES

from offline.analyzer import PolicyPackProcess, struct, wire_struct
from offline.mockrun import SECRET_SIG, SECRET_VALUE_SIG

SEEDS = Path(__file__).parent / "manifests" / "seeds"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
POD = "kubernetes:core/v1:Pod"


@pytest.fixture(scope="module")
def pack_process():
    with PolicyPackProcess() as process:
        yield process


@pytest.fixture
def pack(pack_process):
    """The pack, at the start of a new operation (a `Configure` starts one: the CLI runs one analyzer
    process per operation, and the pack remembers the Namespaces and claims registered in it)."""
    pack_process.configure({})
    return pack_process


def seed(name: str) -> dict:
    return yaml.safe_load((SEEDS / name).read_text())


def stack(*resources: tuple[str, str, dict]) -> list[tuple[str, str, str, dict]]:
    return [(f"urn:pulumi:dev::gpu-aks::{type_}::{name}", type_, name, props) for type_, name, props in resources]


def test_analyzer_info_lists_every_policy_with_its_level_and_schema(pack):
    info = pack.info()
    assert info.name == "gpu-aks-policies" and info.supportsConfig
    policies = {p.name: p for p in info.policies}
    pack_policy_names = [name for name, rule in RULES.items() if rule.scope != "checker-only"]
    assert set(policies) == set(pack_policy_names)
    levels = {name: policy.enforcementLevel for name, policy in policies.items()}
    assert levels == {"gpu-pods-tolerate-gpu-taint": 1, "gpu-limits-are-whole-numbers": 1,
                      "gpu-pods-select-gpu-nodes": 0, "gpu-node-pools-are-tainted": 1,
                      "device-plugin-tolerates-gpu-pools": 1, "gpu-workloads-are-analyzable": 0,
                      "queued-gpu-pods-are-admitted": 1}
    for name in pack_policy_names:
        assert set(policies[name].configSchema.properties) == set(RULES[name].parameters)
    taints = policies["gpu-pods-tolerate-gpu-taint"].configSchema.properties["gpuTaints"]
    assert taints["default"][0] == {"key": "sku", "value": "gpu", "effect": "NoSchedule"}


def test_defaults_apply_when_configure_was_never_sent():
    with PolicyPackProcess() as fresh:
        diagnostics = fresh.analyze(POD, "gpu-pod", seed("generic-gpu-pod.yaml"))
        assert [(d.policy, d.level) for d in diagnostics] == [("gpu-pods-tolerate-gpu-taint", "mandatory")]
        assert "Pod 'gpu-pod': container 'gpu-container' asks for nvidia.com/gpu" in diagnostics[0].message
        assert "tolerations:\n  - key: sku\n    operator: Equal\n    value: gpu" in diagnostics[0].message
        assert fresh.analyze_stack(stack((POD, "gpu-pod", seed("generic-gpu-pod.yaml")))) == [], "said once, in Analyze"


def test_numbers_arrive_as_floats_and_whole_ones_pass(pack):
    job = seed("aks-mnist-job.yaml")
    struct = wire_struct(job)
    limits = struct["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert isinstance(limits["nvidia.com/gpu"], float) and limits["nvidia.com/gpu"] == 1.0
    diagnostics = pack.analyze("kubernetes:batch/v1:Job", "mnist", struct)
    assert [(d.policy, d.level) for d in diagnostics] == [("gpu-pods-select-gpu-nodes", "advisory")]


def test_fractional_gpu_is_mandatory_violation(pack):
    pod = copy.deepcopy(seed("aks-mnist-job.yaml"))
    pod["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 0.5
    policies = [d.policy for d in pack.analyze("kubernetes:batch/v1:Job", "half", pod) if d.level == "mandatory"]
    assert policies == ["gpu-limits-are-whole-numbers"]


def test_custom_resources_adapters_and_patches_are_checked(pack):
    ray = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "rc"}, "spec": {
        "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray"}]}}},
        "workerGroupSpecs": [{"groupName": "gpu", "template": {"spec": {
            "containers": [{"name": "worker", "image": "ray", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}]}}
    [diagnostic] = [d for d in pack.analyze("kubernetes:ray.io/v1:RayCluster", "rc", ray) if d.level == "mandatory"]
    assert "spec.workerGroupSpecs[0].template.spec" in diagnostic.message
    isvc = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "metadata": {"name": "llm"},
            "spec": {"predictor": {"model": {"resources": {"limits": {"nvidia.com/gpu": 1}}}}}}
    [diagnostic] = [d for d in pack.analyze("kubernetes:serving.kserve.io/v1beta1:InferenceService", "llm", isvc)
                    if d.level == "mandatory"]
    assert "container 'kserve-container' asks for nvidia.com/gpu (KServe predictor at spec.predictor)" in diagnostic.message
    patch = {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1500m"}}}]}}}}
    assert "gpu-limits-are-whole-numbers" in {d.policy for d in pack.analyze("kubernetes:apps/v1:DeploymentPatch", "p", patch)}


NAMESPACE = "kubernetes:core/v1:Namespace"
SKU_GPU_DEFAULT = {"scheduler.alpha.kubernetes.io/defaultTolerations":
                   '[{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]'}


def _ml_namespace(annotations: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml", "annotations": annotations or SKU_GPU_DEFAULT}}


def _pod_in(namespace: str) -> dict:
    pod = copy.deepcopy(seed("generic-gpu-pod.yaml"))
    pod["metadata"]["namespace"] = namespace
    return pod


def test_a_namespace_registered_before_its_pods_counts_in_analyze(pack):
    assert pack.analyze(NAMESPACE, "ml", _ml_namespace()) == []
    assert pack.analyze(POD, "p", _pod_in("ml")) == [], "the namespace's default toleration is added on admission"
    [violation] = pack.analyze(POD, "elsewhere", _pod_in("team-b"))
    assert violation.level == "mandatory", "a namespace neither registered nor configured has no annotations"


def test_namespaces_the_platform_knows_come_from_the_config(pack):
    pack.configure({"gpu-pods-tolerate-gpu-taint": {"namespaces": {"ml": SKU_GPU_DEFAULT}}})
    assert pack.analyze(POD, "p", _pod_in("ml")) == []
    whitelist = {"ml": {"scheduler.alpha.kubernetes.io/tolerationsWhitelist":
                        '[{"key": "CriticalAddonsOnly", "operator": "Exists"}]'}}
    pack.configure({"gpu-pods-tolerate-gpu-taint": {"namespaces": whitelist}})
    pod = _pod_in("ml")
    pod["spec"]["tolerations"] = [{"key": "sku", "operator": "Exists"}]
    [refused] = [d for d in pack.analyze(POD, "p", pod) if d.policy == "gpu-pods-tolerate-gpu-taint"]
    assert "tolerationsWhitelist does not cover" in refused.message and refused.level == "mandatory"


def test_a_namespace_registered_after_its_pod_is_an_advisory_at_the_end(pack):
    """A pod naming its namespace by a literal is judged as the engine registers it; if the program
    registers that Namespace later, AnalyzeStack says what the complete stack changes."""
    resources = stack((POD, "p", _pod_in("ml")), (NAMESPACE, "ml", _ml_namespace()))
    [early] = pack.analyze(POD, "p", _pod_in("ml"), resources[0][0])
    assert early.level == "mandatory"
    pack.analyze(NAMESPACE, "ml", _ml_namespace(), resources[1][0])
    [late] = pack.analyze_stack(resources)
    assert late.level == "advisory" and late.policy == "gpu-workloads-are-analyzable"
    assert "before Namespace 'ml', which the program registers later" in late.message
    assert "no longer says: container 'gpu-container' asks for nvidia.com/gpu" in late.message


def test_a_namespace_unknown_during_preview_leaves_the_toleration_undecided(pack):
    pod = _pod_in(UNKNOWN_STRING)
    [diagnostic] = pack.analyze(POD, "p", pod)
    assert diagnostic.level == "advisory" and "metadata.namespace can't be known during preview" in diagnostic.message


def test_claims_registered_before_their_pods_count_in_analyze(pack):
    claimed = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "claimed"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
        "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "single-gpu"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}
    assert pack.analyze("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", "t", template) == []
    [mandatory] = [d for d in pack.analyze(POD, "claimed", claimed) if d.level == "mandatory"]
    assert "claim 'gpu' (ResourceClaimTemplate 'single-gpu': gpu.nvidia.com) asks for a GPU" in mandatory.message
    pack.configure({})
    assert [d for d in pack.analyze(POD, "claimed", claimed) if d.level == "mandatory"] == [], "not known yet"
    [advisory] = pack.analyze_stack(stack((POD, "claimed", claimed)))
    assert advisory.policy == "gpu-workloads-are-analyzable" and advisory.level == "advisory"
    assert "ResourceClaimTemplate 'single-gpu' (claim 'gpu'), which is not among the objects checked" in advisory.message


def test_unknown_values_during_preview_are_advisory_and_say_where(pack):
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": UNKNOWN_STRING}}}],
        "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        "nodeSelector": {"accelerator": "nvidia"}}}
    diagnostics = pack.analyze(POD, "u", pod)
    assert [(d.policy, d.level) for d in diagnostics] == [("gpu-pods-tolerate-gpu-taint", "advisory"),
                                                          ("gpu-limits-are-whole-numbers", "advisory"),
                                                          ("gpu-pods-select-gpu-nodes", "advisory")]
    assert "can't run policy 'gpu-limits-are-whole-numbers'" in diagnostics[1].message
    assert ".spec.containers.0.resources.limits.nvidia.com/gpu can't be known during preview" in diagnostics[1].message


def _secret(value: object) -> dict:
    return {SECRET_SIG: SECRET_VALUE_SIG, "value": value}


def _secret_pod(limit: object, name: object = "c", env: list | None = None) -> dict:
    container = {"name": name, "image": "x", "resources": {"limits": {"nvidia.com/gpu": limit}}, "env": env or []}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "s"}, "spec": {
        "containers": [container], "tolerations": [{"key": "sku", "operator": "Exists"}],
        "nodeSelector": {"accelerator": "nvidia"}}}


def _limits_messages(pack, pod: dict) -> list[str]:
    diagnostics = [d for d in pack.analyze(POD, "s", pod) if d.policy == "gpu-limits-are-whole-numbers"]
    assert [d.level for d in diagnostics] == ["mandatory"], "the verdict stands"
    return [d.message for d in diagnostics]


def test_secret_marked_properties_never_appear_in_messages(pack):
    [message] = _limits_messages(pack, _secret_pod(_secret("0.5")))
    assert "0.5" not in message and "[secret]" in message
    assert "limits.nvidia.com/gpu: [secret]" in message, "a secret value is named by its path"


def test_a_long_secret_amount_prints_no_fragment(pack):
    """A secret over 64 characters used to be shortened to its first 11 and last 3 characters."""
    secret = "7" * 70 + "m"
    [message] = _limits_messages(pack, _secret_pod(_secret(secret)))
    assert "777" not in message and "71 characters" not in message and "[secret]" in message


def test_nothing_derived_from_a_secret_amount_is_printed(pack):
    """A secret 1500m used to be masked but described as "(1.5 GPUs)"."""
    [message] = _limits_messages(pack, _secret_pod(_secret("1500m")))
    assert "1.5" not in message and "1500" not in message and "[secret]" in message
    no_limit = _secret_pod(1.0)
    no_limit["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": _secret("3")}}
    [message] = _limits_messages(pack, no_limit)
    assert "3" not in message.split("without a limit")[1], message


@pytest.mark.slow
def test_secret_tracking_is_per_request_and_has_no_cap(pack):
    """Tracking used to be process-wide and stop at 10,000 texts; after a resource with more secrets,
    a later secret container name printed in clear."""
    many = [{"name": f"E{index}", "value": _secret(f"s{index}")} for index in range(10_050)]
    pack.analyze(POD, "many", _secret_pod(1.0, env=many))
    [message] = _limits_messages(pack, _secret_pod(0.5, name=_secret("topsecretname")))
    assert "topsecretname" not in message and "container '[secret]'" in message


def test_odd_structs_get_a_verdict_or_an_advisory(pack):
    odd = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": {"name": "not a list"}, "tolerations": "x"}}
    assert pack.analyze(POD, "odd", odd) == []
    huge = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1e300}}}], "tolerations": [{"operator": "Exists"}]}}
    [diagnostic] = [d for d in pack.analyze(POD, "huge", huge) if d.level == "mandatory"]
    assert "more than the API server can count" in diagnostic.message
    digits = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "9" * 5000}}}], "tolerations": [{"operator": "Exists"}]}}
    [diagnostic] = [d for d in pack.analyze(POD, "digits", digits) if d.level == "mandatory"]
    assert "(5000 characters) is too long to be a quantity" in diagnostic.message
    nested: dict = {"leaf": 1}
    for _ in range(60):
        nested = {"spec": nested}
    assert pack.analyze(POD, "deep", {"apiVersion": "v1", "kind": "Pod", **nested}) == []


#: pulumi-policy 1.21 deserializes a request's Struct recursively in Python, about five frames a
#: level, so its own code hits Python's recursion limit past this depth, before any policy runs.
#: The README documents it; Kubernetes objects nest about 30 levels.
SDK_MAX_DEPTH = 196


def _nested(depth: int) -> dict:
    nested: dict = {"leaf": 1}
    for _ in range(depth - 1):
        nested = {"spec": nested}
    return nested


def test_the_sdk_depth_limit_is_where_the_readme_says_and_the_pack_keeps_serving(pack):
    assert pack.analyze(POD, "deepest", {"apiVersion": "v1", "kind": "Pod", "x": _nested(SDK_MAX_DEPTH)}) == []
    with pytest.raises(grpc.RpcError, match="maximum recursion depth exceeded"):
        pack.analyze(POD, "too-deep", {"apiVersion": "v1", "kind": "Pod", "x": _nested(SDK_MAX_DEPTH + 1)})
    half = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 0.5}}}], "tolerations": [{"operator": "Exists"}]}}
    assert [d.policy for d in pack.analyze(POD, "next", half) if d.level == "mandatory"] == ["gpu-limits-are-whole-numbers"]


@pytest.mark.parametrize("number", [float("inf"), float("nan")])
def test_non_finite_numbers_fail_in_the_sdk_first_and_the_pack_keeps_serving(pack, number):
    """pulumi-policy converts each request with protobuf's json_format, which refuses Infinity and
    NaN before any policy runs (the README documents it); a huge finite number gets its verdict."""
    pool = {"agentPoolName": "g", "vmSize": "Standard_NC4as_T4_v3", "enableAutoScaling": True,
            "minCount": number, "maxCount": 2.0, "nodeTaints": ["sku=gpu:NoSchedule"]}
    with pytest.raises(grpc.RpcError, match="Fail to serialize"):
        pack.analyze("azure-native:containerservice:AgentPool", "g", pool)
    [diagnostic] = pack.analyze("azure-native:containerservice:AgentPool", "g", {**pool, "minCount": 1e300})
    assert "minCount: 1e+300, maxCount: 2; minCount is above the AKS limit of 1000 nodes per pool" in diagnostic.message


def test_azure_gpu_pool_rule(pack):
    pool = {"agentPoolName": "gpunp", "vmSize": "Standard_NC24ads_A100_v4", "enableAutoScaling": True,
            "minCount": 3.0, "maxCount": 1.0, "nodeTaints": []}
    diagnostics = pack.analyze("azure-native:containerservice:AgentPool", "gpunp", pool)
    messages = [d.message for d in diagnostics if d.policy == "gpu-node-pools-are-tainted"]
    assert len(messages) == 2
    assert any("has minCount 3 above maxCount 1" in m for m in messages)


def test_declared_workload_shapes_reach_the_pack(pack):
    """The worked example of docs/workloads.md: not evaluated without its declaration, judged with it."""
    from gpu_aks_policies.workloads.shapes import EXAMPLE_OBJECT, example_config

    fleet_type = "kubernetes:fleet.example.com/v1:InferenceFleet"
    fleet = yaml.safe_load(EXAMPLE_OBJECT)
    assert pack.analyze(fleet_type, "chat", fleet) == []
    [note] = pack.analyze_stack(stack((fleet_type, "chat", fleet)))
    assert note.policy == "gpu-workloads-are-analyzable" and "not evaluated: declare this kind's shape" in note.message
    pack.configure(example_config())
    try:
        verdicts = sorted((d.policy, d.level) for d in pack.analyze(fleet_type, "chat", fleet))
        assert verdicts == [("gpu-limits-are-whole-numbers", "mandatory"), ("gpu-pods-select-gpu-nodes", "advisory"),
                            ("gpu-pods-select-gpu-nodes", "advisory"), ("gpu-pods-tolerate-gpu-taint", "mandatory"),
                            ("gpu-pods-tolerate-gpu-taint", "mandatory")]
        assert pack.analyze_stack(stack((fleet_type, "chat", fleet))) == []
    finally:
        pack.configure({})


def test_configure_with_a_non_default_taint_then_stack_analysis(pack):
    flyte_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    pack.configure({
        "gpu-pods-tolerate-gpu-taint": {"enforcementLevel": "mandatory", "gpuTaints": flyte_taint},
        "gpu-pods-select-gpu-nodes": {"enforcementLevel": "disabled"},
        "gpu-node-pools-are-tainted": {"enforcementLevel": "mandatory", "gpuTaints": flyte_taint},
        "gpu-limits-are-whole-numbers": {"enforcementLevel": "mandatory"},
        "device-plugin-tolerates-gpu-pools": {"enforcementLevel": "mandatory"},
    })
    try:
        assert pack.analyze(POD, "flyte", seed("flyte-plain-gpu.yaml")) == []
        # AKS's ExtendedResourceToleration tolerates nvidia.com/gpu for a pod asking for it: no toleration needed.
        assert pack.analyze(POD, "plain", seed("generic-gpu-pod.yaml")) == []

        pool_props = {"agentPoolName": "gput4", "vmSize": "Standard_NC4as_T4_v3", "enableAutoScaling": True,
                      "minCount": 0.0, "maxCount": 2.0, "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]}
        plugin = seed("aks-device-plugin-ds.yaml")
        resources = stack(("azure-native:containerservice:AgentPool", "gput4", pool_props),
                          ("kubernetes:apps/v1:DaemonSet", "plugin", plugin))
        assert pack.analyze_stack(resources) == [], "the seed's DaemonSet tolerates nvidia.com/gpu Exists"
        plugin["spec"]["template"]["spec"]["tolerations"] = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
        [diagnostic] = pack.analyze_stack(resources)
        assert diagnostic.policy == "device-plugin-tolerates-gpu-pools" and diagnostic.urn == resources[0][0]
        assert "does not tolerate nvidia.com/gpu=present:NoSchedule" in diagnostic.message
    finally:
        pack.configure({})


def test_every_resource_of_the_programs_passes_the_pack(pack, dev_run, prod_run):
    for run in (dev_run, prod_run):
        for resource in run.resources:
            diagnostics = pack.analyze(resource.type, resource.name, wire_struct(resource.wire_inputs), resource.urn)
            assert [d for d in diagnostics if d.level == "mandatory"] == [], resource.type
        resources = [(r.urn, r.type, r.name, wire_struct(r.outputs)) for r in run.resources if r.custom]
        assert pack.analyze_stack(resources) == []


def _pod_with_gpus(amount: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "same"}, "spec": {
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": amount}}}],
        "tolerations": [{"operator": "Exists"}], "nodeSelector": {"accelerator": "nvidia"}}}


def test_conversions_are_shared_within_a_call_and_never_across_calls(pack):
    """The pack converts a request once for all its policies; the next request, even for the same
    URN, and concurrent requests on the SDK's thread pool, get their own verdicts."""
    verdicts = [pack.analyze(POD, "same", _pod_with_gpus(amount)) for amount in (0.5, 1.0, 0.5, 2.0)]
    assert [[d.policy for d in v] for v in verdicts] == [
        ["gpu-limits-are-whole-numbers"], [], ["gpu-limits-are-whole-numbers"], []]
    with ThreadPoolExecutor(max_workers=4) as pool:
        amounts = [0.5 if index % 3 == 0 else float(index % 4 + 1) for index in range(60)]
        results = list(pool.map(lambda amount: pack.analyze(POD, "same", _pod_with_gpus(amount)), amounts))
    assert [bool(r) for r in results] == [amount == 0.5 for amount in amounts]
    first = pack.analyze(POD, "a", _pod_with_gpus(1.0) | {"spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1.0}}}]}})
    second = pack.analyze(POD, "a", _pod_with_gpus(1.0))
    assert [d.policy for d in first if d.level == "mandatory"] == ["gpu-pods-tolerate-gpu-taint"] and second == []


# --- `pulumi up --skip-preview`: every mandatory verdict before its object exists -----------------

MANIFESTS = Path(__file__).parent / "manifests"
CORPUS_DIRS = ("seeds", "workloads", "corpus", "acceptance29")
#: Kinds whose objects other objects' pods rest on: a program that references them (a pod's
#: `metadata.namespace=ns.metadata.name`, a claim template's name) registers them first.
CONTEXT_KINDS = ("Namespace", "ResourceClaim", "ResourceClaimTemplate", "TrainingRuntime", "ClusterTrainingRuntime",
                 "VirtualMachineInstancetype", "VirtualMachineClusterInstancetype")


def _corpus_programs() -> list[tuple[str, list[dict]]]:
    """Each manifest file of the corpus as one program: its Kubernetes objects in registration order."""
    from gpu_aks_policies.check import load_objects
    from gpu_aks_policies.documents import DEFAULT_LIMITS

    programs = []
    for directory in CORPUS_DIRS:
        for path in sorted((MANIFESTS / directory).rglob("*")):
            if path.suffix not in (".yaml", ".yml", ".json"):
                continue
            errors: list = []
            objects = [o.obj for o in load_objects(path.read_text(), str(path), DEFAULT_LIMITS, errors)
                       if isinstance(o.obj.get("apiVersion"), str) and isinstance(o.obj.get("kind"), str)]
            objects.sort(key=lambda obj: obj["kind"] not in CONTEXT_KINDS)  # stable: file order otherwise
            # As the engine sends them (every number a double), so the checker judges the same values.
            objects = [json_format.MessageToDict(struct(obj)) for obj in objects]
            if objects:
                programs.append((str(path.relative_to(MANIFESTS)), objects))
    return programs


def _type_token(obj: dict) -> str:
    api = obj["apiVersion"]
    return f"kubernetes:{api if '/' in api else 'core/' + api}:{obj['kind']}"


def _without_identity(message: str) -> str:
    """A diagnostic's message as the rule wrote it: without the policy's description the SDK puts
    first, on a line of its own, and the "Kind 'name': " the pack puts before the rule's text."""
    text = message.split("\n", 1)[1]
    return text.split("': ", 1)[1]


def test_up_skip_preview_stops_every_mandatory_violation_before_its_object_exists(pack_process):
    """As the engine drives the pack in `pulumi up --skip-preview` (the Automation API, pulumi/actions):
    `Analyze` for each resource in registration order, each before its step would create it, then one
    `AnalyzeStack`. Every mandatory verdict the checker gives (all objects known, namespace-aware) comes
    from `Analyze`, for the object it concerns, and `Analyze` gives none the checker does not."""
    from gpu_aks_policies.check import check_object
    from gpu_aks_policies.rules import default_rule_config
    from gpu_aks_policies.workloads import context_of

    configs = default_rule_config()
    expected_total = raised_in_analyze = 0
    for program, objects in _corpus_programs():
        pack_process.configure({})  # one operation per program
        context = context_of(objects)
        resources = []
        for index, obj in enumerate(objects):
            name = f"{index}-{(obj.get('metadata') or {}).get('name', 'unnamed')}"
            type_ = _type_token(obj)
            urn = f"urn:pulumi:dev::corpus::{type_}::{name}"
            resources.append((urn, type_, name, obj))
            expected = sorted((policy, message) for policy, level, message, _path in check_object(obj, configs, context)
                              if level == "mandatory")
            # The engine calls Analyze here; a mandatory diagnostic stops the update before the create.
            raised = sorted((d.policy, _without_identity(d.message)) for d in pack_process.analyze(type_, name, obj, urn)
                            if d.level == "mandatory")
            assert raised == expected, f"{program}: {obj['kind']} {name}"
            expected_total += len(expected)
            raised_in_analyze += len(raised)
        after = [d for d in pack_process.analyze_stack(resources) if d.level == "mandatory"]
        assert after == [], f"{program}: mandatory verdicts after the objects exist"
    assert raised_in_analyze == expected_total and expected_total >= 20
