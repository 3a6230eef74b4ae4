"""AKS's admission plugins, as the rules apply them: ExtendedResourceToleration, PodTolerationRestriction
and PodNodeSelector (kubernetes plugin/pkg/admission/*), counted when the Namespace is checked together."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gpu_aks_policies.admission import merge_tolerations
from gpu_aks_policies.podspecs import Toleration
from gpu_aks_policies.rule_config import SELECT_GPU_NODES, TOLERATE_GPU_TAINT
from gpu_aks_policies.rules import parse_rule_config

from tests.helpers import findings

NVIDIA_TAINT = {TOLERATE_GPU_TAINT: {"gpuTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}


def pod(namespace: str = "ml", resource: str = "nvidia.com/gpu", tolerations: list | None = None,
        node_selector: dict | None = None, cpu: bool = False) -> dict[str, Any]:
    limits: dict[str, Any] = {resource: 1}
    if cpu:
        limits["cpu"] = "1"
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"limits": limits}}],
                            "tolerations": tolerations or []}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace}, "spec": spec}


def namespace(name: str = "ml", **annotations: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "annotations": {k: json.dumps(v) if not isinstance(v, str) else v
                                                       for k, v in annotations.items()}}}


def tolerate(obj: Any, config: dict | None = None, together: tuple = ()) -> list:
    configs = parse_rule_config(config or {})
    return [f for f in findings(obj, TOLERATE_GPU_TAINT, configs[TOLERATE_GPU_TAINT], together) if f.decided]


SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
DEFAULTS_KEY = "scheduler.alpha.kubernetes.io/defaultTolerations"
WHITELIST_KEY = "scheduler.alpha.kubernetes.io/tolerationsWhitelist"


def test_extended_resource_toleration_covers_whole_gpus_under_the_nvidia_taint():
    assert tolerate(pod(), NVIDIA_TAINT) == []


def test_it_does_not_cover_mig_resources_or_the_sku_taint():
    [mig] = tolerate(pod(resource="nvidia.com/mig-1g.10gb"), NVIDIA_TAINT)
    assert "nvidia.com/mig-1g.10gb (Exists):NoSchedule, AKS's ExtendedResourceToleration" in mig.message
    [sku] = tolerate(pod())
    assert "sku=gpu:NoSchedule" in sku.message


def test_namespace_default_tolerations_count_when_the_namespace_is_checked_together():
    ml = namespace(**{DEFAULTS_KEY: [SKU]})
    assert tolerate(pod(), together=(ml,)) == []
    assert len(tolerate(pod(namespace="other"), together=(ml,))) == 1, "only pods created in that namespace"
    assert len(tolerate(pod())) == 1, "without the Namespace nothing is known about it"
    assert len(tolerate(pod(), {TOLERATE_GPU_TAINT: {"admissionPlugins": []}}, together=(ml,))) == 1


def test_a_whitelist_that_refuses_the_pod_is_a_violation():
    ml = namespace(**{WHITELIST_KEY: [SKU]})
    [refused] = tolerate(pod(tolerations=[SKU]), together=(ml,))
    assert "the API server refuses the pod: namespace 'ml''s tolerationsWhitelist does not cover nvidia.com/gpu " \
           "(Exists):NoSchedule, node.kubernetes.io/not-ready (Exists):NoExecute" in refused.message
    # kube-apiserver's DefaultTolerationSeconds adds not-ready and unreachable (NoExecute, 300 s) to every
    # pod before the whitelist is checked: a real API server refused this pod (tests/cluster).
    gpu_only = namespace(**{WHITELIST_KEY: [SKU, {"key": "nvidia.com/gpu", "operator": "Exists"}]})
    [timed] = tolerate(pod(tolerations=[SKU]), together=(gpu_only,))
    assert "does not cover node.kubernetes.io/not-ready (Exists):NoExecute, node.kubernetes.io/unreachable " \
           "(Exists):NoExecute (PodTolerationRestriction)" in timed.message
    broad = namespace(**{WHITELIST_KEY: [SKU, {"key": "nvidia.com/gpu", "operator": "Exists"},
                                         {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
                                         {"key": "node.kubernetes.io/unreachable", "operator": "Exists"}]})
    assert tolerate(pod(tolerations=[SKU]), together=(broad,)) == []
    [memory] = tolerate(pod(tolerations=[SKU], cpu=True), together=(broad,))
    assert "node.kubernetes.io/memory-pressure" in memory.message, "a pod that is not BestEffort gets one more"


def test_a_malformed_annotation_is_a_refusal():
    [refused] = tolerate(pod(tolerations=[SKU]), together=(namespace(**{DEFAULTS_KEY: "not json"}),))
    assert "is not a JSON list of tolerations (PodTolerationRestriction)" in refused.message


def test_pod_node_selector_counts_for_gpu_node_selection():
    configs = parse_rule_config({})
    selected = namespace(**{"scheduler.alpha.kubernetes.io/node-selector": "accelerator=nvidia"})
    gpu_pod = pod(tolerations=[SKU])
    assert findings(gpu_pod, SELECT_GPU_NODES, configs[SELECT_GPU_NODES], (selected,)) == []
    assert len(findings(gpu_pod, SELECT_GPU_NODES, configs[SELECT_GPU_NODES])) == 1
    [conflict] = tolerate(pod(tolerations=[SKU], node_selector={"accelerator": "amd"}), together=(selected,))
    assert "its nodeSelector conflicts with namespace 'ml''s node selector on accelerator (PodNodeSelector)" in \
        conflict.message


# pkg/util/tolerations/tolerations_test.go TestIsSuperset, the cases that matter here.
@pytest.mark.parametrize("ss, t, superset", [
    ({"key": "foo", "operator": "Equal", "value": "bar"}, {"key": "foo", "operator": "Equal", "value": "bar"}, True),
    ({"key": "foo", "operator": "Exists"}, {"key": "foo", "operator": "Equal", "value": "bar"}, True),
    ({"key": "foo", "operator": "Equal", "value": "bar"}, {"key": "foo", "operator": "Exists"}, False),
    ({"operator": "Exists"}, {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}, True),
    ({"key": "foo", "operator": "Exists", "effect": "NoSchedule"}, {"key": "foo", "operator": "Exists"}, False),
    ({"key": "foo", "operator": "Exists"}, {"key": "foo", "operator": "Exists", "effect": "NoExecute"}, True),
    ({"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
     {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}, False),
    ({"key": "bar", "operator": "Exists"}, {"key": "foo", "operator": "Exists"}, False),
])
def test_a_toleration_that_tolerates_a_superset_covers_the_other_as_kubernetes_is_superset(ss, t, superset):
    # MergeTolerations drops a toleration when one kept before it tolerates a superset of it
    # (`isSuperset` of kubernetes pkg/util/tolerations).
    merged = merge_tolerations([Toleration(ss, "ss")], [Toleration(t, "t")])
    assert ("t" not in {item.source for item in merged}) is superset


@pytest.mark.parametrize("seconds", [float("inf"), 1e309])
def test_a_toleration_seconds_that_is_no_number_covers_no_other(seconds):
    # tolerationSeconds is an int64: +inf would have covered every finite one. The API server refuses an
    # infinity; here it covers nothing.
    ss = {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
    t = {"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
    merged = merge_tolerations([Toleration(ss, "ss")], [Toleration(t, "t")])
    assert "t" in {item.source for item in merged}


def test_merge_keeps_only_what_no_other_toleration_covers():
    merged = merge_tolerations([Toleration({"key": "foo", "operator": "Equal", "value": "bar"}, "pod")],
                               [Toleration({"key": "foo", "operator": "Exists"}, "namespace")])
    assert [t.toleration for t in merged] == [{"key": "foo", "operator": "Exists"}]


def test_admitted_pods_are_remembered_per_given_namespace_annotations():
    # Within one request the admitted pod is remembered; two rule configs naming the same namespace with
    # other default tolerations must each get their own answer.
    from gpu_aks_policies.admission import AKS_ADMISSION_PLUGINS, admit
    from gpu_aks_policies.scope import request_scope
    from gpu_aks_policies.workloads import Context, pod_specs_of
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    context = Context()
    [spec] = pod_specs_of(pod, context)
    tolerating = json.dumps([{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])
    with request_scope():
        plain = admit(spec, context, AKS_ADMISSION_PLUGINS, (("ml", {}),))
        defaulted = admit(spec, context, AKS_ADMISSION_PLUGINS, (("ml", {DEFAULTS_KEY: tolerating}),))
    keys = {t.toleration.get("key") for t in defaulted.tolerations}
    assert "sku" in keys and "sku" not in {t.toleration.get("key") for t in plain.tolerations}
