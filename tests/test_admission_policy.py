"""The admission policy's CEL, evaluated by cel-python, gives the same verdict as the Python toleration
rule on every pod of the corpus the rules are tested on.

Each pod the workload adapters find is turned into the Pod the API server hands a
ValidatingAdmissionPolicy: after mutating admission (ExtendedResourceToleration, the namespace's
default tolerations), with requests defaulted from limits and quantities in their canonical string
form (the API server serialises `resource.Quantity` that way). Pods the API server refuses before
validating admission (fractional or limit-less GPUs, a namespace whitelist) never reach the policy
and are left out; so are pods that ask for GPUs through DRA claims, which a Pod alone cannot show
(the README says so)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from celpy import celtypes
from gpu_aks_policies.admission import admit
from gpu_aks_policies.admission_policy import validating_admission_policy, validating_admission_policy_binding
from gpu_aks_policies.pod_rules import check_gpu_limits, check_gpu_tolerations
from gpu_aks_policies.podspecs import ABSENT, PodSpec, asks_by_container
from gpu_aks_policies.quantities import format_amount, parse_quantity
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT, WHOLE_GPU_LIMITS, RuleConfig
from gpu_aks_policies.rules import default_rule_config, parse_rule_config
from gpu_aks_policies.workloads import Context, context_of, pod_specs_of

MANIFESTS = Path(__file__).parent / "manifests"
CORPUS_DIRS = ("corpus", "seeds", "workloads", "acceptance29")


def _gpu_pod(name: str, tolerations: list[dict[str, Any]] | None = None, namespace: str = "team",
             resources: Mapping[str, Any] | None = None, init: bool = False) -> dict[str, Any]:
    container = {"name": "c", "image": "i", "resources": resources or {"limits": {"nvidia.com/gpu": 1}}}
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "i"}]}
    if init:
        spec["initContainers"] = [container]
    else:
        spec["containers"].append(container)
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


#: Edge cases of Kubernetes' ToleratesTaint and of what counts as asking, beside the corpus files.
EDGE_CASES = [
    _gpu_pod("exists-any-key", [{"operator": "Exists"}]),
    _gpu_pod("exists-key-no-effect", [{"key": "sku", "operator": "Exists"}]),
    _gpu_pod("equal-no-operator", [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]),
    _gpu_pod("wrong-value", [{"key": "sku", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}]),
    _gpu_pod("wrong-effect", [{"key": "sku", "operator": "Exists", "effect": "NoExecute"}]),
    _gpu_pod("no-tolerations"),
    _gpu_pod("zero-gpus", resources={"limits": {"nvidia.com/gpu": 0}}),
    _gpu_pod("zero-gpus-milli", resources={"limits": {"nvidia.com/gpu": "0m"}, "requests": {"nvidia.com/gpu": "0"}}),
    _gpu_pod("milli-whole", resources={"limits": {"nvidia.com/gpu": "2000m"}}),
    _gpu_pod("init-container", init=True),
    _gpu_pod("mig", resources={"limits": {"nvidia.com/mig-1g.10gb": 1}}),
    _gpu_pod("float-from-the-wire", resources={"limits": {"nvidia.com/gpu": 1.0}}),
    _gpu_pod("namespace-default", namespace="gpu-team"),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-team", "annotations": {
        "scheduler.alpha.kubernetes.io/defaultTolerations":
            '[{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]'}}},
]


def corpus_files() -> Iterator[tuple[str, Any]]:
    """Every document of the rule corpus's manifest folders, with its path under tests/manifests/."""
    for folder in CORPUS_DIRS:
        for path in sorted((MANIFESTS / folder).rglob("*")):
            if path.suffix in (".yaml", ".yml"):
                for document in yaml.safe_load_all(path.read_text()):
                    yield path.relative_to(MANIFESTS).as_posix(), document
            elif path.suffix == ".json":
                yield path.relative_to(MANIFESTS).as_posix(), yaml.safe_load(path.read_text())


def corpus() -> Iterator[tuple[str, Any]]:
    yield from corpus_files()
    for obj in EDGE_CASES:
        yield "edge cases", obj


def _canonical(value: Any) -> str:
    return format_amount(parse_quantity(value))


def pod_as_admitted(pod: PodSpec, context: Context, config: RuleConfig) -> dict[str, Any] | None:
    """The Pod object the policy sees, or None when the API server refuses it before validating
    admission runs (or when its GPUs come through DRA claims)."""
    if pod.spec.get("resourceClaims"):
        return None
    if pod.tolerations_from:
        return None  # a template's pods (a Tekton Task's): the API server sees them only as their runs make them
    limits_config = default_rule_config()[WHOLE_GPU_LIMITS]
    if check_gpu_limits([pod], limits_config, context):
        return None
    admitted = admit(pod, context, config.admission_plugins)
    if admitted.refusals:
        return None
    lists: dict[str, list[dict[str, Any]]] = {"app": [], "init": []}
    resources = (*config.gpu_resources, *config.gpu_markers.resources)
    for container, asks in zip(pod.containers, asks_by_container(pod, resources), strict=True):
        assert isinstance(asks, list), "the corpus has no unknown values"
        if container.role not in lists:
            continue
        limits = {ask.resource: _canonical(ask.limit) for ask in asks if ask.limit is not ABSENT}
        requests = {ask.resource: _canonical(ask.request if ask.request is not ABSENT else ask.limit) for ask in asks}
        lists[container.role].append({"name": container.name, "image": "i",
                                      "resources": {"limits": limits, "requests": requests}})
    spec: dict[str, Any] = {"containers": lists["app"],
                            "tolerations": [dict(t.toleration) for t in admitted.tolerations]}
    if lists["init"]:
        spec["initContainers"] = lists["init"]
    metadata: dict[str, Any] = {"name": "p", "namespace": pod.namespace or "default"}
    if pod.annotations:
        metadata["annotations"] = {str(k): str(v) for k, v in pod.annotations.items()}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


class CompiledPolicy:
    """A ValidatingAdmissionPolicy's variables, validation and message compiled by cel-python."""

    def __init__(self, policy: Mapping[str, Any]) -> None:
        env = celpy.Environment()
        self.variables = [(v["name"], env.program(env.compile(v["expression"]))) for v in policy["spec"]["variables"]]
        (validation,) = policy["spec"]["validations"]
        self.validation = env.program(env.compile(validation["expression"]))
        self.message = env.program(env.compile(validation["messageExpression"]))

    def _activation(self, pod: Mapping[str, Any]) -> dict[str, Any]:
        obj = celpy.json_to_cel(pod)
        values: dict[celtypes.StringType, Any] = {}
        for name, program in self.variables:
            values[celtypes.StringType(name)] = program.evaluate({"object": obj, "variables": celtypes.MapType(values)})
        return {"object": obj, "variables": celtypes.MapType(values)}

    def admits(self, pod: Mapping[str, Any]) -> bool:
        result = self.validation.evaluate(self._activation(pod))
        assert isinstance(result, celtypes.BoolType), f"the validation must give a bool, not {result!r}"
        return bool(result)

    def message_for(self, pod: Mapping[str, Any]) -> str:
        return str(self.message.evaluate(self._activation(pod)))


CONFIGS = {
    "defaults": default_rule_config()[TOLERATE_GPU_TAINT],
    "two taints, a pattern": parse_rule_config({TOLERATE_GPU_TAINT: {
        "gpuTaints": ["sku=gpu:NoSchedule", "team=ml:NoSchedule"],
        "gpuResources": ["nvidia.com/gpu", "nvidia.com/mig-?g.*"]}})[TOLERATE_GPU_TAINT],
}


@pytest.mark.slow
@pytest.mark.parametrize("config_name", CONFIGS)
def test_cel_and_python_rule_agree_on_every_pod_of_the_corpus(config_name):
    config = CONFIGS[config_name]
    policy = CompiledPolicy(validating_admission_policy(config))
    objects = list(corpus())
    context = context_of([obj for _, obj in objects])
    judged, refused, disagreements = {True: 0, False: 0}, 0, []
    for source, obj in objects:
        for pod in pod_specs_of(obj, context):
            admitted_pod = pod_as_admitted(pod, context, config)
            if admitted_pod is None:
                refused += 1
                continue
            python_admits = not [f for f in check_gpu_tolerations([pod], config, context) if f.decided]
            if policy.admits(admitted_pod) != python_admits:
                disagreements.append(f"{source} {pod.where}: Python admits={python_admits}")
            judged[python_admits] += 1
    assert disagreements == []
    # The corpus really exercises both verdicts (otherwise agreement proves nothing).
    assert judged[True] >= 20 and judged[False] >= 10, judged
    assert refused >= 3


def admitted(obj: Any) -> dict[str, Any]:
    context = context_of([obj])
    (pod,) = pod_specs_of(obj, context)
    result = pod_as_admitted(pod, context, CONFIGS["defaults"])
    assert result is not None
    return {**result, "metadata": obj["metadata"]}


def test_an_untolerated_gpu_pod_is_refused_with_the_toleration_to_add():
    policy = CompiledPolicy(validating_admission_policy(CONFIGS["defaults"]))
    pod = admitted(_gpu_pod("trainer"))
    assert not policy.admits(pod)
    message = policy.message_for(pod)
    assert message.startswith("pod trainer: container c asks for a GPU")
    assert "add to spec.tolerations: {key: sku, operator: Equal, value: gpu, effect: NoSchedule}" in message
    generated = {**pod, "metadata": {"generateName": "trainer-"}}  # a Job's pods have no name at CREATE
    assert policy.message_for(generated).startswith("pod trainer-: ")


def test_a_cpu_pod_and_a_tolerating_gpu_pod_are_admitted():
    policy = CompiledPolicy(validating_admission_policy(CONFIGS["defaults"]))
    cpu = {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "web", "image": "i"}]}}
    tolerating = admitted(_gpu_pod("ok", [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]))
    assert policy.admits(cpu) and policy.admits(tolerating)


def test_a_virt_launcher_pod_asking_for_a_passthrough_gpu_is_judged_in_the_cluster_too():
    """KubeVirt's virt-launcher asks for the device name (`nvidia.com/TU104GL_Tesla_T4`), not nvidia.com/gpu:
    the generated CEL counts it as the pack and the checker do (a character class, not a prefix)."""
    policy = CompiledPolicy(validating_admission_policy(CONFIGS["defaults"]))
    launcher = admitted(_gpu_pod("virt-launcher-vm-gpus", resources={"limits": {"nvidia.com/TU104GL_Tesla_T4": 1}}))
    assert launcher["spec"]["containers"][-1]["resources"]["requests"] == {"nvidia.com/TU104GL_Tesla_T4": "1"}
    assert not policy.admits(launcher)
    hami = {"metadata": {"name": "hami"}, "spec": {"containers": [{"name": "c", "image": "i", "resources": {
        "requests": {"nvidia.com/gpumem": "3000"}, "limits": {"nvidia.com/gpumem": "3000"}}}]}}
    no_markers = CompiledPolicy(validating_admission_policy(parse_rule_config({TOLERATE_GPU_TAINT: {
        "gpuMarkers": {"annotations": [], "resources": []}}})[TOLERATE_GPU_TAINT]))
    assert no_markers.admits(hami), "HAMi's lower-case memory share is no passthrough GPU name"


SKU = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize("metadata, resources, reason", [
    ({"name": "hami", "annotations": {}}, {"nvidia.com/gpumem": "3000"}, "container c asks for a GPU"),
    ({"name": "vgpu"}, {"volcano.sh/vgpu-number": "1"}, "container c asks for a GPU"),
    ({"name": "runai", "annotations": {"gpu-fraction": "0.5"}}, {}, "its annotation gpu-fraction puts it on GPU nodes"),
])
def test_gpu_markers_are_seen_in_the_cluster_as_the_rules_see_them(metadata, resources, reason):
    """`gpuMarkers`: a marker resource (HAMi, Volcano vGPU) or a marker annotation (KAI Scheduler,
    Run:ai GPU fractions) puts the pod on GPU nodes, so the Pod must tolerate the GPU taint there too;
    configured away, it is not asked."""
    spec = {"containers": [{"name": "c", "image": "i", "resources": {"requests": resources, "limits": resources}}]}
    pod = {"metadata": metadata, "spec": spec}
    policy = CompiledPolicy(validating_admission_policy(CONFIGS["defaults"]))
    assert not policy.admits(pod)
    assert policy.message_for(pod).startswith(f"pod {metadata['name']}: {reason}, but the pod does not tolerate")
    assert policy.admits({**pod, "spec": {**spec, "tolerations": SKU}})
    unmarked = CompiledPolicy(validating_admission_policy(parse_rule_config({TOLERATE_GPU_TAINT: {
        "gpuMarkers": {"annotations": [], "resources": []}}})[TOLERATE_GPU_TAINT]))
    assert unmarked.admits(pod)


def test_the_cel_uses_standard_cel_only():
    """No Kubernetes CEL library (quantity(), isQuantity, url(), authorizer, format...): cel-python
    compiled every expression above; this guards the names it would also accept as plain calls."""
    policy = validating_admission_policy(CONFIGS["two taints, a pattern"])
    expressions = [v["expression"] for v in policy["spec"]["variables"]]
    expressions += [policy["spec"]["validations"][0]["expression"], policy["spec"]["validations"][0]["messageExpression"]]
    for banned in ("quantity(", "isQuantity(", "url(", "authorizer", "format(", "ip(", "cidr(", "optional."):
        assert not any(banned in expression for expression in expressions), banned


def test_binding_exempts_namespaces_through_its_namespace_selector():
    binding = validating_admission_policy_binding(["Deny"], ["kube-system", "gpu-resources"])
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"] == [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", "gpu-resources"]}]
    assert "matchResources" not in validating_admission_policy_binding(["Warn"], [])["spec"]


def dra_stack_rule_config() -> RuleConfig:
    """The rule config of a stack with a DRA pool tainted beyond the GPU pools' `sku=gpu` (`dra=gpu`), as the
    stack generates its admission policy (`components.admission_policy.platform_rule_config`)."""
    from components.admission_policy import platform_rule_config
    from components.pools import platform_pools
    from tests.test_dra import DRA_POOL, _with
    from tests.test_settings import settings

    raw = _with(dra={"pools": ["a100dra"]})
    raw["gpuPools"].append({**DRA_POOL, "nodeTaints": ["sku=gpu:NoSchedule", "dra=gpu:NoSchedule"]})
    return platform_rule_config(platform_pools(settings(raw)).gpu)


#: Pods on a DRA stack: one asking for `nvidia.com/gpu` (served on the DRA pool through KEP-5004) with no
#: toleration, its twin tolerating the DRA pool's taint, and one whose GPU is a claim alone.
DRA_STACK_PODS = {
    "untolerated": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "i",
                                             "resources": {"limits": {"nvidia.com/gpu": 1}}}]}},
    "tolerated": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain-tolerated", "namespace": "default"},
                  "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
                           "tolerations": [{"key": "dra", "operator": "Exists"}]}},
    "claim": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "claim", "namespace": "default"},
              "spec": {"containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}],
                       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]}},
}


def test_a_dra_platforms_policy_judges_nvidia_gpu_pods_and_leaves_claims_to_the_checker():
    """#48: on a platform with a DRA pool the policy is generated with every GPU pool's taints, judges a pod
    that asks for nvidia.com/gpu (served there through KEP-5004) as on any pool, and admits a pod whose GPU is a
    claim: the claim's DeviceClass is another object, which the checker and the explainer read. The cluster
    tier holds the same pods to the API server (tests/cluster/test_admission.py)."""
    config = dra_stack_rule_config()
    assert {t["key"] for t in config.gpu_taints} == {"sku", "dra"}
    policy = CompiledPolicy(validating_admission_policy(config))
    assert not policy.admits(admitted(DRA_STACK_PODS["untolerated"]))
    assert policy.admits(admitted(DRA_STACK_PODS["tolerated"]))
    assert policy.admits(DRA_STACK_PODS["claim"])  # as created: no admission plugin adds anything to it
