"""The GPU rules, as pure functions over pod specs and plain dicts in the Kubernetes (or
azure-native) JSON shape.

Each rule returns Findings; the policy pack, `gpu_aks_policies.check`, the offline preview and the
explainer are thin layers over these functions. The pod rules take the pod specs a workload adapter
found (`policies/workloads/`) and the objects checked together (a `Context`). No Pulumi imports.
"""

from __future__ import annotations

from collections import abc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .admission import WRITTEN, Admitted, admit, describe
from .catalog import GPU_MODEL_LABEL, POOL_LABEL, is_gpu_vm_size
from .demand import GpuDemand, amount_verdicts, gpu_demand
from .podspecs import (
    UNKNOWN,
    PodSpec,
    UndecidableError,
    as_mapping,
    find_pod_specs,
    join,
    list_at,
    mapping_at,
)
from .pools import PoolView, pools_of, shown_count
from .rule_config import (
    ANALYZABLE,
    DEVICE_PLUGIN_TOLERATES_POOLS,
    SELECT_GPU_NODES,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    RuleConfig,
)
from .scheduling import (
    format_taint,
    is_extended_resource_name,
    required_node_terms,
    selects_node,
    tolerates,
    toleration_for,
    untolerated_taints,
)
from .workloads import Context, pod_claims


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one place. `decided` is False when an unknown preview value hid the
    answer; `subject` names the resource a stack rule blames (empty for resource rules)."""

    policy: str
    path: str
    message: str
    decided: bool = True
    subject: str = ""


def undecided(policy: str, error: UndecidableError, subject: str = "") -> Finding:
    return Finding(policy, error.path, f"could not decide: {error}; the rule runs again on `pulumi up`",
                   decided=False, subject=subject)


def yaml_list(items: Iterable[Mapping[str, str]], indent: str) -> str:
    lines = []
    for item in items:
        first = True
        for key, value in item.items():
            lines.append(f"{indent}{'- ' if first else '  '}{key}: {value}")
            first = False
    return "\n".join(lines)


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))


# --- What a pod asks for ------------------------------------------------------------------------


def gpu_tolerations(admitted: Admitted, config: RuleConfig) -> list[Any]:
    return [t for t in admitted.tolerations if any(tolerates(t.toleration, taint) for taint in config.gpu_taints)]


def _has_unknown_field(admitted: Admitted) -> bool:
    return any(value is UNKNOWN for t in admitted.tolerations for value in t.toleration.values())


# --- Rule 1: gpu-pods-tolerate-gpu-taint -------------------------------------------------------


def _tolerate_message(pod: PodSpec, demand: GpuDemand, config: RuleConfig, admitted: Admitted) -> str:
    wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
    fix = yaml_list([toleration_for(config.gpu_taints[0])], "  ")
    given = [t for t in admitted.tolerations
             if t.source != WRITTEN and t.toleration.get("key") != "node.kubernetes.io/memory-pressure"]
    note = ""
    if given:
        note = (" The tolerations it gets without writing them (" + "; ".join(f"{describe(t.toleration)}, {t.source}"
                                                                              for t in given) + ") do not match it.")
    return (f"{demand.summary()} ({pod.where}), but the pod does not tolerate the GPU taint {wanted}: GPU nodes carry "
            f"that taint and no other node has GPUs, so the pod stays Pending forever.{note} Add to "
            f"{pod.path or 'the pod spec'}:\n{pod.tolerations_key}:\n{fix}")


def check_gpu_tolerations(pods: Sequence[PodSpec], config: RuleConfig, context: Context) -> list[Finding]:
    """A pod that asks for a GPU must tolerate one of the GPU taints once admission has run, and its
    namespace must not refuse it."""
    findings = []
    for pod in pods:
        if pod.tolerations_from:
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
            findings.append(Finding(TOLERATE_GPU_TAINT, path, f"{demand.summary()} ({pod.where}), but the API server "
                                                              f"refuses the pod: {'; '.join(admitted.refusals)}"))
        elif not gpu_tolerations(admitted, config):
            ert_could_match = any(is_extended_resource_name(t["key"]) for t in config.gpu_taints)
            if _has_unknown_field(admitted) or (admitted.incomplete and ert_could_match):
                findings.append(undecided(TOLERATE_GPU_TAINT, UndecidableError(path)))
            else:
                findings.append(Finding(TOLERATE_GPU_TAINT, path, _tolerate_message(pod, demand, config, admitted)))
    return _dedupe(findings)


# --- Rule 2: gpu-limits-are-whole-numbers ------------------------------------------------------


def check_gpu_limits(pods: Sequence[PodSpec], config: RuleConfig, context: Context | None = None) -> list[Finding]:
    """Every GPU amount is what the API server accepts: a whole, non-negative number in limits,
    equal to any request. Containers whose GPU amounts the controller writes are not judged."""
    findings = []
    for pod in pods:
        for verdict in amount_verdicts(pod, config):
            if verdict.unknown is not None:
                findings.append(undecided(WHOLE_GPU_LIMITS, verdict.unknown))
            else:
                findings.append(Finding(WHOLE_GPU_LIMITS, verdict.where, f"container '{verdict.container.name}' at "
                                                                         f"{verdict.container.path} {verdict.problem}"))
    return _dedupe(findings)


# --- Rule 3: gpu-pods-select-gpu-nodes ---------------------------------------------------------


def _term_pins(term: Any, key: str, value: str) -> bool:
    if not isinstance(term, abc.Mapping):
        return False
    expressions = term.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else []:
        if not isinstance(expression, abc.Mapping) or expression.get("key") != key:
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
GPU_ONLY_LABEL_KEYS = ("kubernetes.azure.com/accelerator", POOL_LABEL, GPU_MODEL_LABEL)
GPU_ONLY_LABEL_PREFIXES = ("nvidia.com/gpu.",)


def _gpu_only_key(key: Any) -> bool:
    return isinstance(key, str) and (key in GPU_ONLY_LABEL_KEYS or key.startswith(GPU_ONLY_LABEL_PREFIXES))


def _term_selects_gpu_only_label(term: Any) -> bool:
    for expression in as_mapping(term).get("matchExpressions") or []:
        expression = as_mapping(expression)
        if _gpu_only_key(expression.get("key")) and expression.get("operator") in ("In", "Exists"):
            return True
    return False


def pins_to_gpu_nodes(pod_spec: Mapping[str, Any], node_selector: Mapping[str, str], key: str, value: str) -> bool:
    if node_selector.get(key) == value or any(_gpu_only_key(k) for k in node_selector):
        return True
    terms = required_node_terms(pod_spec)
    return bool(terms) and all(_term_pins(term, key, value) or _term_selects_gpu_only_label(term) for term in terms or [])


def _node_selection_fix(node_selection_key: str, key: str, value: str) -> str:
    if node_selection_key == "nodeSelectorTerms":
        return f"nodeSelectorTerms:\n- matchExpressions:\n  - key: {key}\n    operator: In\n    values: [{value}]"
    return f"nodeSelector:\n  {key}: {value}"


def check_gpu_node_selection(pods: Sequence[PodSpec], config: RuleConfig, context: Context) -> list[Finding]:
    """A GPU pod should pin itself to GPU nodes (nodeSelector, its namespace's, or required affinity)."""
    key, value = config.node_label["key"], config.node_label["value"]
    findings = []
    for pod in pods:
        if pod.own_nodes:
            continue
        demand = gpu_demand(pod, config, context)
        try:
            if not demand.any:
                if demand.unknown:
                    raise demand.unknown
                continue
            mapping_at(pod.spec.get("affinity"), join(pod.path, "affinity"))
            admitted = admit(pod, context, config.admission_plugins, config.namespaces)
        except UndecidableError as error:
            findings.append(undecided(SELECT_GPU_NODES, error))
            continue
        if pins_to_gpu_nodes(pod.spec, admitted.node_selector, key, value):
            continue
        findings.append(Finding(
            SELECT_GPU_NODES, join(pod.path, pod.node_selection_key),
            f"{demand.summary()} ({pod.where}) but the pod does not select GPU nodes by the label {key}={value}; with "
            f"a toleration alone it may also land on other tolerated nodes. Add to {pod.path or 'the pod spec'}:\n"
            f"{_node_selection_fix(pod.node_selection_key, key, value)}"))
    return _dedupe(findings)


# --- Rule 4: gpu-workloads-are-analyzable ------------------------------------------------------


def check_analyzable(pods: Sequence[PodSpec], config: RuleConfig, context: Context) -> list[Finding]:
    """Say what the rules cannot see: adapter notes, and DRA claims not among the objects checked
    when nothing else already tolerates the GPU taint."""
    findings: list[Finding] = []
    for pod in pods:
        findings.extend(Finding(ANALYZABLE, pod.path, f"{pod.where}: {note}") for note in pod.notes)
        claims = pod_claims(pod, context, config.gpu_device_classes)
        if not claims.unresolved or claims.gpu:
            continue
        try:
            if gpu_tolerations(admit(pod, context, config.admission_plugins, config.namespaces), config):
                continue
        except UndecidableError:
            continue
        scope = "among the objects checked" if context.complete else "visible to a check of this object alone"
        wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
        findings.append(Finding(
            ANALYZABLE, join(pod.path, "resourceClaims"),
            f"{pod.where} uses {', '.join(claims.unresolved)}, which is not {scope}. If it asks for a GPU device class "
            f"({', '.join(config.gpu_device_classes)}), the pod lands on GPU nodes and must tolerate {wanted}; check it "
            f"together with its claim, or add:\ntolerations:\n{yaml_list([toleration_for(config.gpu_taints[0])], '  ')}"))
    return _dedupe(findings)


# --- Pools and the device plugin -----------------------------------------------------------------
# The pools come from the pool kinds (`gpu_aks_policies.pools`): these rules never read a kind's
# properties, so a new kind of pool is judged by the same rules.

DAEMONSET_TYPES = ("kubernetes:apps/v1:DaemonSet",)


def _pool_problems(pool: PoolView, config: RuleConfig) -> list[str]:
    problems = []
    taints, syntax_problems = pool.taints()
    problems.extend(syntax_problems)
    if not any(taint == dict(gpu_taint) and taint["effect"] == "NoSchedule"
               for taint in taints for gpu_taint in config.gpu_taints):
        wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
        problems.append(
            f"carries no NoSchedule GPU taint ({wanted}), so any pod may land on its expensive nodes and "
            f"GPU pods cannot rely on it. Fix: nodeTaints: [\"{format_taint(config.gpu_taints[0])}\"]")
    scaling = pool.scaling()
    if not scaling.bounded:
        problems.append(
            f"is not autoscaled within bounds ({scaling.written}); GPU pools should scale, to zero when idle. "
            f"Fix: {scaling.fix}")
    elif scaling.min_count > scaling.max_count:
        problems.append(f"has {scaling.min_field} {shown_count(scaling.min_count)} above {scaling.max_field} "
                        f"{shown_count(scaling.max_count)}. Fix: {scaling.min_field} <= {scaling.max_field}")
    return problems


def check_gpu_node_pool(resource_type: str, props: Mapping[str, Any], config: RuleConfig) -> list[Finding]:
    """A pool with a GPU VM size must be tainted for GPUs and autoscale within bounds."""
    findings = []
    try:
        pools = pools_of(resource_type, props)
    except UndecidableError as error:
        return [undecided(TAINTED_GPU_POOLS, error)]
    for pool in pools:
        try:
            gpu_sizes = [size for size in pool.vm_sizes() if is_gpu_vm_size(size)]
            if not gpu_sizes:
                continue
            for problem in _pool_problems(pool, config):
                findings.append(Finding(
                    TAINTED_GPU_POOLS, pool.where, f"GPU node pool '{pool.name}' ({', '.join(gpu_sizes)}) {problem}"))
        except UndecidableError as error:
            findings.append(undecided(TAINTED_GPU_POOLS, error))
    return findings


#: Other programs NVIDIA's device-plugin image runs (`cmd/` of NVIDIA/k8s-device-plugin): a
#: DaemonSet running only these, such as the MPS control daemon, advertises no GPUs.
_NOT_THE_PLUGIN = ("mps-control-daemon", "config-manager", "gpu-feature-discovery")


def is_device_plugin_daemonset(resource_type: str, props: Mapping[str, Any]) -> bool:
    if resource_type not in DAEMONSET_TYPES:
        return False
    try:
        for pod in find_pod_specs(props):
            for container in pod.containers:
                spec = container.spec if isinstance(container.spec, abc.Mapping) else {}
                image, command = spec.get("image"), spec.get("command")
                program = command[0] if isinstance(command, abc.Sequence) and command and \
                    not isinstance(command, str) else None
                if isinstance(image, str) and "nvidia/k8s-device-plugin" in image and program not in _NOT_THE_PLUGIN:
                    return True
    except UndecidableError:
        return False
    return False


@dataclass(frozen=True)
class StackResource:
    urn: str
    type: str
    props: Mapping[str, Any]


def check_device_plugin_coverage(resources: Sequence[StackResource], config: RuleConfig) -> list[Finding]:
    """Every NVIDIA pool a self-installed device plugin must serve is selected, tolerated and, for
    MIG pools, served with MIG support by one of the plugins."""
    plugins = [(r, find_pod_specs(r.props)) for r in resources if is_device_plugin_daemonset(r.type, r.props)]
    if not plugins:
        return []
    findings = []
    for resource in resources:
        try:
            pools = [p for p in pools_of(resource.type, resource.props) if p.served_by_nvidia_plugin()]
        except UndecidableError as error:
            findings.append(undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
            continue
        for pool in pools:
            try:
                taints, _ = pool.taints()
                labels = pool.node_labels()
                mig = pool.mig()
                gaps: list[str] = []
                for plugin, plugin_pods in plugins:
                    gap = _plugin_gap(plugin, plugin_pods, labels, taints, mig)
                    if gap is None:
                        break  # one plugin serving the pool is enough
                    gaps.append(gap)
            except UndecidableError as error:
                findings.append(undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
                continue
            if len(gaps) == len(plugins):
                findings.append(Finding(
                    DEVICE_PLUGIN_TOLERATES_POOLS, pool.where,
                    f"GPU node pool '{pool.name}' ({', '.join(pool.vm_sizes())}) is not served by any NVIDIA "
                    f"device plugin, so its nodes never advertise nvidia.com/gpu and GPU pods never "
                    f"schedule there: " + "; ".join(str(gap) for gap in gaps),
                    subject=resource.urn))
    return findings


def _env(container: Mapping[str, Any], name: str) -> Any:
    for item in container.get("env") or []:
        if isinstance(item, abc.Mapping) and item.get("name") == name:
            return item.get("value")
    return None


def _mig_gap(plugin: StackResource, pod: PodSpec) -> str | None:
    """NVIDIA's chart (`templates/_helpers.tpl`, `requiresCapSysAdmin`; `daemonset-device-plugin.yml`)
    runs the plugin with a MIG strategy, `NVIDIA_MIG_MONITOR_DEVICES=all` and the SYS_ADMIN capability
    whenever the strategy is not `none`; without them a MIG node may advertise nothing."""
    for container in pod.containers:
        spec = container.spec if isinstance(container.spec, abc.Mapping) else {}
        if "nvidia/k8s-device-plugin" not in str(spec.get("image", "")):
            continue
        capabilities = (spec.get("securityContext") or {}).get("capabilities") or {}
        missing = []
        if _env(spec, "MIG_STRATEGY") in (None, "none"):
            missing.append("MIG_STRATEGY (single or mixed)")
        if _env(spec, "NVIDIA_MIG_MONITOR_DEVICES") != "all":
            missing.append("NVIDIA_MIG_MONITOR_DEVICES=all")
        if "SYS_ADMIN" not in (capabilities.get("add") or []):
            missing.append("the SYS_ADMIN capability")
        if missing:
            return f"{plugin.urn} serves a MIG pool without {', '.join(missing)}, which NVIDIA's chart sets for MIG"
    return None


def _plugin_gap(plugin: StackResource, pods: Sequence[PodSpec], labels: Mapping[str, str],
                taints: Sequence[Mapping[str, str]], mig: bool) -> str | None:
    """Why one device-plugin DaemonSet (with its pod specs) misses a pool's nodes, or None when it
    runs there."""
    for pod in pods:
        tolerations_path = join(pod.path, "tolerations")
        tolerations = [t for t in list_at(pod.spec.get("tolerations"), tolerations_path) if isinstance(t, abc.Mapping)]
        if not selects_node(pod.spec, labels):
            return f"{plugin.urn} does not select its nodes (nodeSelector/affinity)"
        missing = untolerated_taints(tolerations, taints)
        if missing:
            return (f"{plugin.urn} does not tolerate {', '.join(format_taint(t) for t in missing)}; add to "
                    f"{tolerations_path}:\n{yaml_list([toleration_for(t) for t in missing], '')}")
        return _mig_gap(plugin, pod) if mig else None
    return f"{plugin.urn} has no pod template"
