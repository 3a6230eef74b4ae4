"""The toleration rule as a Kubernetes ValidatingAdmissionPolicy, for objects that never pass
through `pulumi preview`: applied with kubectl, Helm or Argo CD, or created by controllers.

It is generated from the toleration rule's own configuration (GPU resources, GPU taints) and judges
every Pod on CREATE after mutating admission has run: ExtendedResourceToleration and the namespace's
default tolerations are already in `object.spec.tolerations`, and requests are already defaulted
from limits, so the policy sees what the scheduler will see (Kubernetes admission order: mutating,
then validating). The API server itself already refuses fractional and limit-less GPU amounts.
On a DRA pool (`gpu-aks:dra`) a pod written for the device plugin still asks for `nvidia.com/gpu`, which
kube-scheduler serves through the KEP-5004 DeviceClass: the policy judges it as on any pool, and the DRA
pool's taints are among the GPU taints it is generated with. A GPU asked for through a DRA claim is not
visible here (the claim, and the DeviceClass it names, are other objects, which a ValidatingAdmissionPolicy
cannot read); the pack, the checker and the explainer judge claims. The `gpuMarkers` are seen as the rules
see them: a marker resource counts as a GPU resource, and a marker annotation on the Pod as a GPU ask.

The CEL is standard CEL only (macros, `has`, `size`, `startsWith`, `matches`, string concatenation),
no Kubernetes CEL libraries, so `cel-python` evaluates it in the tests exactly as written. No Pulumi
imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .rule_config import RuleConfig
from .scheduling import format_taint, toleration_for

POLICY_NAME = "gpu-aks-gpu-pods-tolerate-gpu-taint"


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def gpu_resource_cel(variable: str, patterns: Sequence[str]) -> str:
    """Whether `variable` (a resource name) is one of the GPU resources (names or shell patterns)."""
    terms = []
    for pattern in patterns:
        if not any(char in pattern for char in "*?["):
            terms.append(f"{variable} == {_quoted(pattern)}")
        elif pattern.endswith("*") and not any(char in pattern[:-1] for char in "*?["):
            terms.append(f"{variable}.startsWith({_quoted(pattern[:-1])})")
        else:
            terms.append(f"{variable}.matches({_quoted(shell_pattern_regex(pattern))})")
    return "(" + " || ".join(terms) + ")"


def shell_pattern_regex(pattern: str) -> str:
    """A shell-style pattern (`fnmatch`: `*`, `?`, `[A-Z]`, `[!a]`) as an anchored RE2 regex."""
    parts, index = [], 0
    while index < len(pattern):
        char = pattern[index]
        end = pattern.find("]", index + 2 if pattern[index + 1:index + 2] in ("!", "]") else index + 1)
        if char == "[" and end != -1:
            body = pattern[index + 1:end]
            negated = body.startswith("!")
            body = body[1:] if negated else body
            parts.append("[" + ("^" if negated else "") + body.replace("\\", "\\\\").replace("^", "\\^") + "]")
            index = end + 1
            continue
        parts.append(".*" if char == "*" else "." if char == "?" else re.escape(char))
        index += 1
    return "^" + "".join(parts) + "$"


def toleration_cel(t: str, taint: Mapping[str, str]) -> str:
    """Kubernetes' `Toleration.ToleratesTaint` for one taint, in CEL (empty effect matches every
    effect, empty key every key, `Exists` any value, `Equal` or no operator the same value)."""
    effect, key, value = taint["effect"], taint["key"], taint.get("value", "")
    return (f"((!has({t}.effect) || {t}.effect == '' || {t}.effect == {_quoted(effect)})"
            f" && (!has({t}.key) || {t}.key == '' || {t}.key == {_quoted(key)})"
            f" && ((has({t}.operator) && {t}.operator == 'Exists')"
            f" || ((!has({t}.operator) || {t}.operator == '' || {t}.operator == 'Equal')"
            f" && (has({t}.value) ? {t}.value : '') == {_quoted(value)})))")


def policy_variables(config: RuleConfig) -> list[dict[str, str]]:
    # A `gpuMarkers` resource (HAMi's nvidia.com/gpumem, Volcano's vgpu-*) puts a pod on GPU nodes as
    # a GPU resource does; a marker annotation (KAI Scheduler's and Run:ai's gpu-fraction) does too.
    resources = (*config.gpu_resources, *config.gpu_markers.resources)
    asks = (f"has(c.resources) && has(c.resources.requests) && c.resources.requests.exists(r, "
            f"{gpu_resource_cel('r', resources)} && string(c.resources.requests[r]) != '0')")
    tolerates = " || ".join(toleration_cel("t", taint) for taint in config.gpu_taints)
    annotations = "[" + ", ".join(_quoted(name) for name in config.gpu_markers.annotations) + "]"
    return [
        {"name": "containers",
         "expression": "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])"},
        {"name": "gpuContainers", "expression": f"variables.containers.filter(c, {asks})"},
        {"name": "gpuAnnotations",
         "expression": f"has(object.metadata.annotations) ? {annotations}.filter(a, a in object.metadata.annotations)"
                       " : []"},
        {"name": "tolerated",
         "expression": f"has(object.spec.tolerations) && object.spec.tolerations.exists(t, {tolerates})"},
    ]


def validation_expression() -> str:
    return "(size(variables.gpuContainers) == 0 && size(variables.gpuAnnotations) == 0) || variables.tolerated"


def message_expression(config: RuleConfig) -> str:
    wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
    fix = ", ".join(f"{k}: {v}" for k, v in toleration_for(config.gpu_taints[0]).items())
    name = ("(has(object.metadata.name) && object.metadata.name != '' ? object.metadata.name : "
            "(has(object.metadata.generateName) ? object.metadata.generateName : ''))")
    reason = ("(size(variables.gpuContainers) > 0 ? 'container ' + variables.gpuContainers[0].name + ' asks for a GPU' "
              ": 'its annotation ' + variables.gpuAnnotations[0] + ' puts it on GPU nodes')")
    return (f"'pod ' + {name} + ': ' + {reason} + ', but the pod "
            f"does not tolerate the GPU taint {wanted}, so it would stay Pending forever; add to spec.tolerations: "
            f"{{{fix}}}'")


def validating_admission_policy(config: RuleConfig, name: str = POLICY_NAME) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/part-of": "gpu-aks"}},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"],
            }]},
            "variables": policy_variables(config),
            "validations": [{
                "expression": validation_expression(),
                "messageExpression": message_expression(config),
                "reason": "Forbidden",
            }],
        },
    }


def validating_admission_policy_binding(validation_actions: Sequence[str], exempt_namespaces: Sequence[str],
                                        name: str = POLICY_NAME) -> dict[str, Any]:
    binding: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/part-of": "gpu-aks"}},
        "spec": {"policyName": name, "validationActions": list(validation_actions)},
    }
    if exempt_namespaces:
        binding["spec"]["matchResources"] = {"namespaceSelector": {"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": list(exempt_namespaces)}]}}
    return binding
