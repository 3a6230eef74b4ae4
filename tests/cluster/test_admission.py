"""Admission as the API server runs it: the generated ValidatingAdmissionPolicy, installed in a real
kube-apiserver with AKS's admission plugins, creates or refuses every pod of the rule corpus, and
each verdict equals the Python rules' (the oracle here is the API server, not cel-python).

Each pod is submitted as its controller would create it (tests/cluster/pods.py), with a server-side
dry run: the whole admission chain runs (mutating plugins, validation, then validating policies) and
nothing is stored. Four verdicts are told apart:
- `invalid`: the API server's validation refuses it (HTTP 422); the rules' `gpu-limits-are-whole-numbers`;
- `forbidden`: an admission plugin refuses it (PodTolerationRestriction's whitelist, PodNodeSelector's
  conflicts); the rules' `admit(...).refusals`;
- `denied`: the gpu-aks policy refuses it; the rules' `gpu-pods-tolerate-gpu-taint`;
- `admitted`.
Pods whose GPUs come through DRA claims, or whose tolerations come from another object (a Tekton
Task's run), are left out of the corpus run as in tests/test_admission_policy.py: a Pod alone does not show
them. A DRA stack's own policy meets a claim pod and KEP-5004 pods in the last test."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from gpu_aks_policies.admission import admit
from gpu_aks_policies.admission_policy import (
    POLICY_NAME,
    validating_admission_policy,
    validating_admission_policy_binding,
)
from gpu_aks_policies.pod_rules import check_gpu_limits, check_gpu_tolerations
from gpu_aks_policies.podspecs import object_identity
from gpu_aks_policies.rule_config import WHOLE_GPU_LIMITS, RuleConfig
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import context_of, pod_specs_of

from testbed.localcluster import ApiError, Client
from tests.cluster.pods import dns_label, written_pod
from tests.cluster.stacks import no_policy
from tests.test_admission_policy import CONFIGS, DRA_STACK_PODS, EDGE_CASES, corpus_files, dra_stack_rule_config

VAP = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
PROBE_NAMESPACE = "gpu-aks-probe"


@pytest.fixture(autouse=True, scope="module")
def _leaves_no_policy(api: Client) -> Iterator[None]:
    yield
    no_policy(api)


def submit(api: Client, pod: Mapping[str, Any]) -> tuple[str, str]:
    """The API server's verdict on creating `pod` (dry run), with its message."""
    namespace = pod["metadata"]["namespace"]
    try:
        api.create(f"/api/v1/namespaces/{namespace}/pods", pod, dry_run=True)
    except ApiError as error:
        if error.status == 422:
            return "invalid", error.message
        if error.status == 403 and "ValidatingAdmissionPolicy" in error.message:
            return "denied", error.message
        if error.status == 403:
            return "forbidden", error.message
        if error.status == 500 and "conflict with its namespace whitelist" in error.message:
            # PodTolerationRestriction refuses with a plain error, which the API server answers as an
            # internal error (kubernetes plugin/pkg/admission/podtolerationrestriction/admission.go).
            return "forbidden", error.message
        raise
    return "admitted", ""


def _probe(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe", "namespace": PROBE_NAMESPACE},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


def install(api: Client, config: RuleConfig, name: str) -> None:
    """The policy and a Deny binding under `name`, replacing any other gpu-aks policy; returns once
    the API server enforces this one alone (policies are compiled asynchronously after they are
    stored)."""
    for path in (BINDINGS, VAP):
        for item in api.get(path)["items"]:
            if item["metadata"]["name"].startswith(POLICY_NAME) and item["metadata"]["name"] != name:
                api.delete(f"{path}/{item['metadata']['name']}")
    policy = validating_admission_policy(config, name)
    binding = validating_admission_policy_binding(["Deny"], [], name)
    for path, obj in ((VAP, policy), (BINDINGS, binding)):
        if api.exists(f"{path}/{name}"):
            api.delete(f"{path}/{name}")
        api.create(path, obj)
    api.ensure_namespace(PROBE_NAMESPACE)

    def enforced() -> bool:
        verdict, message = submit(api, _probe(name))
        return verdict == "denied" and f"'{name}'" in message and f"'{POLICY_NAME}'" not in message.replace(
            f"'{name}'", "")

    api.wait_for(f"the API server to enforce {name}", enforced, timeout=30, every=0.2)


def python_verdict(pod: Any, context: Any, config: RuleConfig) -> str:
    if check_gpu_limits([pod], default_rule_config()[WHOLE_GPU_LIMITS], context):
        return "invalid"
    if admit(pod, context, config.admission_plugins).refusals:
        return "forbidden"
    if [f for f in check_gpu_tolerations([pod], config, context) if f.decided]:
        return "denied"
    return "admitted"


SKU_GPU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _pod(name: str, namespace: str, tolerations: list[dict[str, Any]], selector: dict[str, str] | None = None,
         resources: dict[str, Any] | None = None) -> dict[str, Any]:
    container = {"name": "c", "image": "i", "resources": resources or {"limits": {"nvidia.com/gpu": 1}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [container], "tolerations": tolerations, "nodeSelector": selector or {}}}


#: What only a namespace's PodTolerationRestriction and PodNodeSelector annotations decide (AKS runs both
#: plugins): the rules' `admit` models the whitelist (which also sees the tolerations the plugins add)
#: and the node-selector conflicts.
NAMESPACE_CASES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-locked", "annotations": {
        "scheduler.alpha.kubernetes.io/tolerationsWhitelist":
            '[{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},'
            ' {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]'}}},
    _pod("whitelisted", "gpu-locked", [SKU_GPU]),
    _pod("not-whitelisted", "gpu-locked", [{"key": "team", "operator": "Exists", "effect": "NoSchedule"}]),
    _pod("whitelisted-cpu", "gpu-locked", [SKU_GPU], resources={"limits": {"cpu": "1"}}),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-open", "annotations": {
        "scheduler.alpha.kubernetes.io/tolerationsWhitelist":
            '[{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},'
            ' {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},'
            ' {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},'
            ' {"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]'}}},
    _pod("whitelisted-with-timed", "gpu-open", [SKU_GPU]),
    _pod("untolerated-in-open", "gpu-open", []),
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gpu-pinned", "annotations": {
        "scheduler.alpha.kubernetes.io/node-selector": "gpu-aks.io/pool=gput4"}}},
    _pod("pinned-agrees", "gpu-pinned", [SKU_GPU], {"gpu-aks.io/pool": "gput4"}),
    _pod("pinned-conflicts", "gpu-pinned", [SKU_GPU], {"gpu-aks.io/pool": "a100"}),
    _pod("pinned-untolerated", "gpu-pinned", []),
]


def corpus() -> Iterator[tuple[str, Any]]:
    yield from corpus_files()
    for obj in EDGE_CASES:
        yield "edge cases", obj
    for obj in NAMESPACE_CASES:
        yield "namespace cases", obj


def judged(api: Client, config: RuleConfig) -> tuple[Counter[str], list[str]]:
    """Every corpus pod through the API server and the rules: the verdict counts, and the disagreements."""
    objects = list(corpus())
    context = context_of([obj for _, obj in objects])
    for name, found in context.namespaces.items():
        api.ensure_namespace(dns_label(str(name)), {str(k): str(v) for k, v in (found or {}).items()})
    counts: Counter[str] = Counter()
    disagreements = []
    index = 0
    for source, obj in objects:
        for pod in pod_specs_of(obj, context):
            if pod.spec.get("resourceClaims") or pod.tolerations_from:
                continue
            index += 1
            namespace = dns_label(pod.namespace or "default")
            api.ensure_namespace(namespace)
            server, message = submit(api, written_pod(pod, f"p{index}", config, namespace))
            ours = python_verdict(pod, context, config)
            counts[server] += 1
            if server != ours:
                disagreements.append(f"{source} {object_identity(obj)} {pod.where}: API server {server} "
                                     f"({message[:300]}), rules {ours}")
    return counts, disagreements


@pytest.mark.parametrize("config_name", CONFIGS)
def test_the_api_server_admits_exactly_the_pods_the_rules_admit(api, config_name):
    config = CONFIGS[config_name]
    install(api, config, f"{POLICY_NAME}-{dns_label(config_name)}")
    counts, disagreements = judged(api, config)
    assert disagreements == []
    # The corpus exercises every verdict the API server gives (otherwise agreement proves little).
    assert counts["admitted"] >= 20 and counts["denied"] >= 10 and counts["invalid"] >= 3, counts
    assert counts["forbidden"] >= 2, counts


def test_an_untolerated_gpu_pod_is_refused_with_the_toleration_to_add_and_its_twin_admitted(api):
    name = f"{POLICY_NAME}-defaults"
    install(api, CONFIGS["defaults"], name)
    api.ensure_namespace("team")
    untolerated = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "team"},
                   "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    verdict, message = submit(api, untolerated)
    assert verdict == "denied"
    assert "pod trainer: container c asks for a GPU" in message
    assert "add to spec.tolerations: {key: sku, operator: Equal, value: gpu, effect: NoSchedule}" in message
    twin = {**untolerated, "spec": {**untolerated["spec"], "tolerations": [
        {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}}
    assert submit(api, twin) == ("admitted", "")
    # Stored for real, the API server's mutating plugins are visible on it: ExtendedResourceToleration
    # added the toleration for nvidia.com/gpu, and requests were defaulted from limits.
    created = api.create("/api/v1/namespaces/team/pods", twin)
    try:
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in created["spec"]["tolerations"]
        assert created["spec"]["containers"][0]["resources"]["requests"] == {"nvidia.com/gpu": "1"}
    finally:
        api.delete("/api/v1/namespaces/team/pods/trainer", force=True)


def test_a_dra_stacks_policy_refuses_an_untolerated_kep5004_pod_and_admits_a_claim_only_pod(api):
    """#48: the policy a stack with a DRA pool generates, in the API server: a plain nvidia.com/gpu pod (served on
    the DRA pool through KEP-5004) tolerating no GPU taint is refused with the toleration to add, its twin
    tolerating the DRA pool's taint is admitted, and so is a pod whose GPU is a claim alone (the claim's
    DeviceClass is another object: the checker and the explainer judge it), as in tests/test_admission_policy.py."""
    name = f"{POLICY_NAME}-dra"
    install(api, dra_stack_rule_config(), name)
    verdict, message = submit(api, DRA_STACK_PODS["untolerated"])
    assert verdict == "denied" and f"'{name}'" in message
    assert "does not tolerate the GPU taint sku=gpu:NoSchedule or dra=gpu:NoSchedule" in message
    assert "add to spec.tolerations: {key: sku, operator: Equal, value: gpu, effect: NoSchedule}" in message
    assert submit(api, DRA_STACK_PODS["tolerated"]) == ("admitted", "")
    assert submit(api, DRA_STACK_PODS["claim"]) == ("admitted", "")
