"""The pod rules, as pure functions over the pod specs a workload adapter found
(`policies/workloads/`) and the objects checked together (a `Context`): what a GPU pod must say to
land on GPU nodes and nowhere else (tolerate the GPU taint, whole GPU limits, select GPU nodes, be
analyzable). Each returns `Finding`s; the policy pack, `gpu_aks_policies.check`, the offline
preview, the explainer and the admission policy's CEL are thin layers over them, through the
registry (`rules.py`). The pool rules are `pool_rules.py`. No Pulumi imports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .admission import WRITTEN, Admitted, admit, describe
from .catalog import ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE, GPU_MODEL_LABEL, POOL_LABEL, SKU_GPU_MANUFACTURER_LABEL
from .demand import GpuDemand, amount_verdicts, gpu_demand
from .findings import Finding, dedupe, undecided, yaml_list
from .podspecs import (
    UNKNOWN,
    PodSpec,
    UndecidableError,
    as_list,
    as_mapping,
    is_mapping,
    join,
)
from .rule_config import (
    ANALYZABLE,
    QUEUE_ADMITS,
    SELECT_GPU_NODES,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    RuleConfig,
)
from .scheduling import (
    format_taint,
    is_extended_resource_name,
    required_node_terms,
    tolerates,
    toleration_for,
)
from .workloads import Context, pod_claims

if TYPE_CHECKING:
    from .fit import Platform

# With `--platform` (the checker), the rules take the platform: its GPU pools say which taints a GPU pod
# must tolerate, which label every GPU node carries, and what it offers instead of a fraction of a GPU.

# --- What a pod asks for ------------------------------------------------------------------------


def gpu_taints(config: RuleConfig, platform: Platform | None) -> tuple[Mapping[str, str], ...]:
    """The GPU taints a GPU pod must tolerate: those the platform's GPU pools carry, else the config's
    `gpuTaints`."""
    return (platform.gpu_taints() if platform is not None else ()) or config.gpu_taints


def gpu_tolerations(admitted: Admitted, taints: Sequence[Mapping[str, str]]) -> list[Any]:
    return [t for t in admitted.tolerations if any(tolerates(t.toleration, taint) for taint in taints)]


def _has_unknown_field(admitted: Admitted) -> bool:
    return any(value is UNKNOWN for t in admitted.tolerations for value in t.toleration.values())


# --- Rule 1: gpu-pods-tolerate-gpu-taint -------------------------------------------------------


@lru_cache(maxsize=64)
def _taint_advice(taints: tuple[tuple[str, str, str], ...]) -> tuple[str, str]:
    """The GPU taints as the message names them, and the toleration to add (the first taint's): the
    same for every pod judged with one config, so written once."""
    as_dicts = [{"key": key, "value": value, "effect": effect} for key, value, effect in taints]
    return " or ".join(format_taint(t) for t in as_dicts), yaml_list([toleration_for(as_dicts[0])], "  ")


def _tolerate_message(pod: PodSpec, demand: GpuDemand, taints: Sequence[Mapping[str, str]], admitted: Admitted) -> str:
    wanted, fix = _taint_advice(tuple((t["key"], t.get("value") or "", t["effect"]) for t in taints))
    given = [t for t in admitted.tolerations
             if t.source != WRITTEN and t.toleration.get("key") != "node.kubernetes.io/memory-pressure"]
    note = ""
    if given:
        note = (" The tolerations it gets without writing them (" + "; ".join(f"{describe(t.toleration)}, {t.source}"
                                                                              for t in given) + ") do not match it.")
    if pod.queued is not None:
        # Kueue writes its flavors' tolerations into the pods it admits (`pkg/podset/podset.go`): a platform
        # team hands the toleration to the flavor once, not to every job.
        note += (" Add it to the ResourceFlavor's spec.tolerations (Kueue adds them to every pod it admits to the "
                 "flavor), or")
    else:
        note += " Add"
    return (f"{demand.summary} ({pod.where}), but the pod does not tolerate the GPU taint {wanted}: GPU nodes carry "
            f"that taint and no other node has GPUs, so the pod stays Pending forever.{note} to "
            f"{pod.path or 'the pod spec'}:\n{pod.tolerations_key}:\n{fix}")


def check_gpu_tolerations(pods: Sequence[PodSpec], config: RuleConfig, context: Context, *,
                          platform: Platform | None = None) -> list[Finding]:
    """A pod that asks for a GPU must tolerate one of the GPU taints once admission has run, and its
    namespace must not refuse it."""
    taints = gpu_taints(config, platform)
    findings = []
    for pod in pods:
        if pod.tolerations_from or pod.unjudged_queue:
            continue
        demand = gpu_demand(pod, config, context)
        if not demand.any:
            if demand.unknown:
                findings.append(undecided(TOLERATE_GPU_TAINT, demand.unknown))
            continue
        try:
            admitted = admit(pod, context, config.admission_plugins, config.namespaces)
        except UndecidableError as error:
            findings.append(undecided(TOLERATE_GPU_TAINT, error))
            continue
        path = pod.tolerations_at
        if admitted.refusals:
            findings.append(Finding(TOLERATE_GPU_TAINT, path, f"{demand.summary} ({pod.where}), but the API server "
                                                              f"refuses the pod: {'; '.join(admitted.refusals)}"))
        elif not gpu_tolerations(admitted, taints):
            ert_could_match = any(is_extended_resource_name(t["key"]) for t in taints)
            if _has_unknown_field(admitted) or (admitted.incomplete and ert_could_match):
                findings.append(undecided(TOLERATE_GPU_TAINT, UndecidableError(path)))
            else:
                findings.append(Finding(TOLERATE_GPU_TAINT, path, _tolerate_message(pod, demand, taints, admitted)))
    return dedupe(findings)


# --- Rule 2: gpu-limits-are-whole-numbers ------------------------------------------------------


def check_gpu_limits(pods: Sequence[PodSpec], config: RuleConfig, context: Context | None = None, *,
                     platform: Platform | None = None) -> list[Finding]:
    """Every GPU amount is what the API server accepts: a whole, non-negative number in limits,
    equal to any request. Containers whose GPU amounts the controller writes are not judged."""
    sharing = platform.gpu_sharing() if platform is not None else None
    findings = []
    for pod in pods:
        for verdict in amount_verdicts(pod, config, sharing):
            if verdict.unknown is not None:
                findings.append(undecided(WHOLE_GPU_LIMITS, verdict.unknown))
            else:
                findings.append(Finding(WHOLE_GPU_LIMITS, verdict.where, f"container '{verdict.container.name}' at "
                                                                         f"{verdict.container.path} {verdict.problem}"))
    return dedupe(findings)


# --- Rule 3: gpu-pods-select-gpu-nodes ---------------------------------------------------------


def _term_pins(term: Any, key: str, value: str) -> bool:
    if not is_mapping(term):
        return False
    expressions = term.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else []:
        if not is_mapping(expression) or expression.get("key") != key:
            continue
        operator, values = expression.get("operator"), expression.get("values")
        if operator == "Exists" or (operator == "In" and isinstance(values, list) and value in values):
            return True
    return False


#: Node labels only GPU nodes carry, whatever their value: AKS's `kubernetes.azure.com/accelerator`
#: (set on GPU nodes, AKS "use-nvidia-gpu"; see `catalog.aks_node_labels`), the platform's pool label
#: (only its GPU pools carry it, `catalog.POOL_LABEL`), and NVIDIA's `nvidia.com/gpu.*` labels (GPU
#: Feature Discovery's `nvidia.com/gpu.product`, `gpu.present`, ...; Flyte's `nvidia.com/gpu.accelerator`,
#: `catalog.GPU_MODEL_LABEL`).
#: Karpenter's Azure provider gives `sku-gpu-name` and `sku-gpu-manufacturer` only to GPU sizes (its
#: `computeRequirements`: DoesNotExist unless `setRequirementsGPU` sets them; karpenter-provider-azure
#: `pkg/providers/instancetype/instancetype.go`), so a NAP pod that selects one is pinned to GPU nodes.
GPU_ONLY_LABEL_KEYS = ("kubernetes.azure.com/accelerator", POOL_LABEL, GPU_MODEL_LABEL,
                       "karpenter.azure.com/sku-gpu-name", SKU_GPU_MANUFACTURER_LABEL)
GPU_ONLY_LABEL_PREFIXES = ("nvidia.com/gpu.",)


def _gpu_only_key(key: Any) -> bool:
    return isinstance(key, str) and (key in GPU_ONLY_LABEL_KEYS or key.startswith(GPU_ONLY_LABEL_PREFIXES))


def _term_selects_gpu_only_label(term: Any) -> bool:
    for expression in as_list(as_mapping(term).get("matchExpressions")):
        expression = as_mapping(expression)
        if _gpu_only_key(expression.get("key")) and expression.get("operator") in ("In", "Exists"):
            return True
    return False


def pins_to_gpu_nodes(pod_spec: Mapping[str, Any], node_selector: Mapping[str, str],
                      label: Mapping[str, str] | None) -> bool:
    """Whether the pod selects only GPU nodes: by the platform's GPU label (`label`; gpu-aks's AgentPool label
    `accelerator: nvidia` when none is known), or by a label only GPU nodes carry."""
    key, value = (label["key"], label["value"]) if label else (ACCELERATOR_LABEL, ACCELERATOR_LABEL_VALUE)
    if node_selector.get(key) == value or any(_gpu_only_key(k) for k in node_selector):
        return True
    terms = required_node_terms(pod_spec)
    return bool(terms) and all(_term_pins(term, key, value) or _term_selects_gpu_only_label(term) for term in terms or [])


#: What every GPU node carries, by who made it, when the platform is not known: AKS labels its GPU AgentPool
#: nodes `kubernetes.azure.com/accelerator: nvidia` (`catalog.aks_node_labels`); node auto-provisioning's
#: Karpenter labels its GPU nodes `karpenter.azure.com/sku-gpu-manufacturer: nvidia` and never the former
#: (Azure's NodePool CRD refuses labels under kubernetes.azure.com/, and `accelerator` on gpu-aks's NodePools).
#: Node-selector terms are ORed: one term each selects the GPU nodes of either kind.
GPU_NODE_TERMS: tuple[tuple[str, str], ...] = (("kubernetes.azure.com/accelerator", "nvidia"),
                                               (SKU_GPU_MANUFACTURER_LABEL, "nvidia"))


def _terms_text(labels: Sequence[tuple[str, str]], indent: str) -> str:
    return "\n".join(f"{indent}- matchExpressions:\n{indent}  - key: {key}\n{indent}    operator: In\n"
                     f"{indent}    values: [{value}]" for key, value in labels)


def _node_selection_fix(node_selection_key: str, label: Mapping[str, str] | None) -> str:
    if label is None:
        terms = _terms_text(GPU_NODE_TERMS, "      " if node_selection_key == "nodeSelector" else "")
        if node_selection_key == "nodeSelectorTerms":
            return f"nodeSelectorTerms:\n{terms}"
        return ("affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
                f"      nodeSelectorTerms:\n{terms}")
    if node_selection_key == "nodeSelectorTerms":
        return f"nodeSelectorTerms:\n{_terms_text([(label['key'], label['value'])], '')}"
    return f"nodeSelector:\n  {label['key']}: {label['value']}"


def _node_selection_message(pod: PodSpec, demand: GpuDemand, label: Mapping[str, str] | None) -> str:
    fix = _node_selection_fix(pod.node_selection_key, label)
    where = pod.path or "the pod spec"
    if label is not None:
        return (f"{demand.summary} ({pod.where}) but the pod does not select GPU nodes by the label "
                f"{label['key']}={label['value']}; with a toleration alone it may also land on other tolerated nodes. "
                f"Add to {where}:\n{fix}")
    return (f"{demand.summary} ({pod.where}) but the pod does not select GPU nodes; with a toleration alone it may also "
            "land on other tolerated nodes. Which label every GPU node carries depends on the platform: AKS labels "
            "its GPU AgentPool nodes kubernetes.azure.com/accelerator: nvidia, node auto-provisioning (Karpenter) "
            f"labels its GPU nodes {SKU_GPU_MANUFACTURER_LABEL}: nvidia and not the former, and gpu-aks's "
            "accelerator: nvidia is on its AgentPools only. Check with --platform for the label your pools' nodes "
            f"share, or add to {where} this, which selects GPU nodes of either kind:\n{fix}")


def check_gpu_node_selection(pods: Sequence[PodSpec], config: RuleConfig, context: Context, *,
                             platform: Platform | None = None) -> list[Finding]:
    """A GPU pod should pin itself to GPU nodes (nodeSelector, its namespace's, or required affinity). Where
    the config names no label, the platform's GPU nodes name one they all carry; with no platform either, the
    advice says it depends on the platform."""
    label = config.node_label
    if platform is not None and label is None:
        label = platform.gpu_node_label()
    findings = []
    for pod in pods:
        if pod.own_nodes or pod.unjudged_queue:
            continue
        demand = gpu_demand(pod, config, context)
        try:
            if not demand.any:
                if demand.unknown:
                    raise demand.unknown
                continue
            if pod.spec.get("affinity") is UNKNOWN:
                raise UndecidableError(join(pod.path, "affinity"))
            admitted = admit(pod, context, config.admission_plugins, config.namespaces)
        except UndecidableError as error:
            findings.append(undecided(SELECT_GPU_NODES, error))
            continue
        if pins_to_gpu_nodes(pod.spec, admitted.node_selector, label):
            continue
        findings.append(Finding(SELECT_GPU_NODES, join(pod.path, pod.node_selection_key),
                                _node_selection_message(pod, demand, label)))
    return dedupe(findings)


# --- Rule 4: gpu-workloads-are-analyzable ------------------------------------------------------


def _unknown_queue(pod: PodSpec, context: Context) -> str:
    assert pod.queued is not None
    scope = "among the objects checked" if context.complete else "visible to a check of this object alone"
    return (f"{pod.where} waits in Kueue queue '{pod.queued.queue}', and {pod.queued.unknown} is not {scope}: Kueue "
            "adds the admitting flavor's tolerations and nodeLabels to the pod, so its tolerations, node selection and "
            "fit are not judged. Check it together with its LocalQueue, ClusterQueue and ResourceFlavors, or with "
            "--platform when the platform provides the queues (gpu-aks:queues)")


def check_analyzable(pods: Sequence[PodSpec], config: RuleConfig, context: Context, *,
                     platform: Platform | None = None) -> list[Finding]:
    """Say what the rules cannot see: adapter notes, and DRA claims not among the objects checked
    when nothing else already tolerates the GPU taint."""
    taints = gpu_taints(config, platform)
    findings: list[Finding] = []
    for pod in pods:
        findings.extend(Finding(ANALYZABLE, pod.path, f"{pod.where}: {note}") for note in pod.notes)
        if pod.queued is not None and pod.queued.unknown and gpu_demand(pod, config, context).any:
            findings.append(Finding(ANALYZABLE, pod.queued.at, _unknown_queue(pod, context)))
        claims = pod_claims(pod, context, config.gpu_device_classes)
        if not claims.unresolved or claims.gpu:
            continue
        try:
            if gpu_tolerations(admit(pod, context, config.admission_plugins, config.namespaces), taints):
                continue
        except UndecidableError:
            continue
        scope = "among the objects checked" if context.complete else "visible to a check of this object alone"
        wanted = " or ".join(format_taint(t) for t in taints)
        findings.append(Finding(
            ANALYZABLE, join(pod.path, "resourceClaims"),
            f"{pod.where} uses {', '.join(claims.unresolved)}, which is not {scope}. If it asks for a GPU device class "
            f"({', '.join(config.gpu_device_classes)}), the pod lands on GPU nodes and must tolerate {wanted}; check it "
            f"together with its claim, or add:\ntolerations:\n{yaml_list([toleration_for(taints[0])], '  ')}"))
    return dedupe(findings)



# --- Rule 5: queued-gpu-pods-are-admitted --------------------------------------------------------


def check_queue_admission(pods: Sequence[PodSpec], config: RuleConfig, context: Context, *,
                          platform: Platform | None = None) -> list[Finding]:
    """A GPU pod whose workload waits in a Kueue queue is admitted by it in some way (`workloads/kueue.py`)."""
    findings = []
    for pod in pods:
        if pod.queued is None or not pod.queued.blocked or not gpu_demand(pod, config, context).any:
            continue
        reasons = "\n".join(f"  - {reason}" for reason in pod.queued.blocked)
        findings.append(Finding(QUEUE_ADMITS, pod.queued.at, (
            f"{pod.where} waits in Kueue queue '{pod.queued.queue}', which never admits it, so its pods are never "
            f"created:\n{reasons}")))
    return dedupe(findings)
