"""The GPU rules, as pure functions over plain dicts in the Kubernetes (or azure-native) JSON shape.

Each rule returns Findings; the policy pack, `policies.check`, the offline preview and the app-stack
helper's tests are thin layers over these functions. No Pulumi imports.
"""

from __future__ import annotations

import re
from collections import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from components.catalog import SPOT_TAINT, aks_node_labels, gpu_sku, is_gpu_vm_size
from policies.podspecs import (
    UNKNOWN,
    GpuAsk,
    PodSpec,
    UndecidableError,
    find_pod_specs,
    gpu_asks,
    join,
    known,
    list_at,
    mapping_at,
)
from policies.quantities import QuantityError, format_amount, parse_quantity
from policies.rule_config import (
    DEVICE_PLUGIN_TOLERATES_POOLS,
    SELECT_GPU_NODES,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    RuleConfig,
)
from policies.scheduling import (
    TaintSyntaxError,
    format_taint,
    parse_taint,
    required_node_terms,
    selects_node,
    tolerates_any,
    toleration_for,
    untolerated_taints,
)


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one place. `decided` is False when an unknown preview value hid the
    answer; `subject` names the resource a stack rule blames (empty for resource rules)."""

    policy: str
    path: str
    message: str
    decided: bool = True
    subject: str = ""


def _undecided(policy: str, error: UndecidableError, subject: str = "") -> Finding:
    return Finding(policy, error.path, f"could not decide: {error}; the rule runs again on `pulumi up`",
                   decided=False, subject=subject)


def _yaml_list(items: Iterable[Mapping[str, str]], indent: str) -> str:
    lines = []
    for item in items:
        first = True
        for key, value in item.items():
            lines.append(f"{indent}{'- ' if first else '  '}{key}: {value}")
            first = False
    return "\n".join(lines)


def _amount(value: Any) -> Fraction | None:
    """A GPU amount, or None when it is not a quantity at all."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def asks_for_gpu(ask: GpuAsk) -> bool:
    """Whether a container really asks for a GPU: anything but an explicit 0 (a limit alone sets the
    request, so the limit decides when both are written). Unknown or malformed amounts count."""
    written = ask.limit if ask.limit is not None else ask.request
    if written is UNKNOWN:
        return True
    amount = _amount(written)
    return amount is None or amount != 0


def _run_per_pod(
    policy: str, obj: Any, config: RuleConfig,
    check: Callable[[PodSpec, list[GpuAsk]], list[Finding]], pods: Sequence[PodSpec] | None,
) -> list[Finding]:
    findings: list[Finding] = []
    for pod in find_pod_specs(obj) if pods is None else pods:
        try:
            asks = [ask for ask in gpu_asks(pod, config.gpu_resources) if asks_for_gpu(ask)]
            if asks:
                findings.extend(check(pod, asks))
        except UndecidableError as error:
            findings.append(_undecided(policy, error))
    return findings


def _asks_summary(asks: Sequence[GpuAsk]) -> str:
    return ", ".join(f"container '{ask.container.name}' asks for {ask.resource}" for ask in asks)


# --- Rule 1: gpu-pods-tolerate-gpu-taint -------------------------------------------------------


def check_gpu_tolerations(obj: Any, config: RuleConfig, pods: Sequence[PodSpec] | None = None) -> list[Finding]:
    """A pod spec with a GPU ask must tolerate at least one of the configured GPU taints."""

    def check(pod: PodSpec, asks: list[GpuAsk]) -> list[Finding]:
        tolerations_path = join(pod.path, "tolerations")
        written = list_at(pod.spec.get("tolerations"), tolerations_path)
        tolerations = [t for t in written if isinstance(t, abc.Mapping)]
        if any(tolerates_any(tolerations, taint) for taint in config.gpu_taints):
            return []
        # No toleration matched; if part of one is unknown, it might have.
        for index, toleration in enumerate(written):
            known(toleration, join(tolerations_path, index))
            for key in ("key", "operator", "value", "effect"):
                known(toleration.get(key) if isinstance(toleration, abc.Mapping) else None,
                      join(join(tolerations_path, index), key))
        wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
        fix = _yaml_list([toleration_for(config.gpu_taints[0])], "  ")
        return [Finding(
            TOLERATE_GPU_TAINT, tolerations_path,
            f"{_asks_summary(asks)} (pod spec at {pod.path or '<root>'}), but the pod does not tolerate the "
            f"GPU taint {wanted}: GPU nodes carry that taint and no other node has GPUs, so the pod stays "
            f"Pending forever. Add to {pod.path or 'the pod spec'}:\ntolerations:\n{fix}",
        )]

    return _run_per_pod(TOLERATE_GPU_TAINT, obj, config, check, pods)


# --- Rule 2: gpu-limits-are-whole-numbers ------------------------------------------------------


def _limit_problem(ask: GpuAsk) -> str | None:
    resource, limit, request = ask.resource, ask.limit, ask.request
    known(limit, join(join(ask.path, "limits"), resource))
    known(request, join(join(ask.path, "requests"), resource))
    if limit is None:
        amount = _amount(request)
        suggestion = format_amount(amount) if amount is not None and amount.denominator == 1 and amount > 0 else "1"
        return (f"sets requests.{resource}: {request!r} without a limit; the API server refuses that "
                f"(\"Limit must be set for non overcommitable resources\"). Put the amount in limits (a "
                f"limit alone also sets the request):\nresources:\n  limits:\n    {resource}: {suggestion}")
    limit_amount = _amount(limit)
    if limit_amount is None:
        return (f"has limits.{resource}: {limit!r}, which is not a Kubernetes quantity. Write a whole "
                f"number:\nresources:\n  limits:\n    {resource}: 1")
    if limit_amount < 0:
        return (f"has limits.{resource}: {limit!r}, a negative amount. Write a whole number of at least "
                f"1:\nresources:\n  limits:\n    {resource}: 1")
    if limit_amount.denominator != 1:
        whole = max(1, int(limit_amount))
        return (f"has limits.{resource}: {limit!r} ({format_amount(limit_amount)} GPUs); GPUs are whole "
                f"devices and the API server refuses fractions. To share a GPU use a MIG partition "
                f"resource (nvidia.com/mig-<profile>) or time-slicing; otherwise:\nresources:\n  limits:\n"
                f"    {resource}: {whole}")
    if request is not None:
        request_amount = _amount(request)
        if request_amount != limit_amount:
            return (f"has requests.{resource}: {request!r} but limits.{resource}: {limit!r}; for GPUs the "
                    f"request must equal the limit. Drop the request (the limit sets it) or write:\n"
                    f"resources:\n  limits:\n    {resource}: {format_amount(limit_amount)}\n  requests:\n"
                    f"    {resource}: {format_amount(limit_amount)}")
    return None


def check_gpu_limits(obj: Any, config: RuleConfig, pods: Sequence[PodSpec] | None = None) -> list[Finding]:
    """Every GPU amount is in limits, whole, at least 1, and equal to the request when both are set."""

    def check(pod: PodSpec, asks: list[GpuAsk]) -> list[Finding]:
        findings = []
        for ask in asks:
            try:
                problem = _limit_problem(ask)
            except UndecidableError as error:
                findings.append(_undecided(WHOLE_GPU_LIMITS, error))
                continue
            if problem:
                findings.append(Finding(
                    WHOLE_GPU_LIMITS, ask.path,
                    f"container '{ask.container.name}' at {ask.container.path} {problem}",
                ))
        return findings

    return _run_per_pod(WHOLE_GPU_LIMITS, obj, config, check, pods)


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


def pins_to_gpu_nodes(pod_spec: Mapping[str, Any], key: str, value: str) -> bool:
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, abc.Mapping) and selector.get(key) == value:
        return True
    terms = required_node_terms(pod_spec)
    return bool(terms) and all(_term_pins(term, key, value) for term in terms or [])


def check_gpu_node_selection(obj: Any, config: RuleConfig, pods: Sequence[PodSpec] | None = None) -> list[Finding]:
    """A GPU pod should pin itself to GPU nodes (nodeSelector or required node affinity)."""
    key, value = config.node_label["key"], config.node_label["value"]

    def check(pod: PodSpec, asks: list[GpuAsk]) -> list[Finding]:
        mapping_at(pod.spec.get("nodeSelector"), join(pod.path, "nodeSelector"))
        mapping_at(pod.spec.get("affinity"), join(pod.path, "affinity"))
        if pins_to_gpu_nodes(pod.spec, key, value):
            return []
        return [Finding(
            SELECT_GPU_NODES, join(pod.path, "nodeSelector"),
            f"{_asks_summary(asks)} but the pod does not select GPU nodes by the label {key}={value}; "
            f"with a toleration alone it may also land on other tolerated nodes. Add to "
            f"{pod.path or 'the pod spec'}:\nnodeSelector:\n  {key}: {value}",
        )]

    return _run_per_pod(SELECT_GPU_NODES, obj, config, check, pods)


# --- Azure side: rules 4 and 5 -----------------------------------------------------------------

_AGENT_POOL_TYPE = re.compile(r"^azure-native:containerservice(/v[0-9a-z]+)?:AgentPool$")
_MANAGED_CLUSTER_TYPE = re.compile(r"^azure-native:containerservice(/v[0-9a-z]+)?:ManagedCluster$")
DAEMONSET_TYPES = ("kubernetes:apps/v1:DaemonSet",)


@dataclass(frozen=True)
class PoolView:
    """An AKS node pool as the rules see it, from an AgentPool or one `agentPoolProfiles` entry."""

    path: str
    name: str
    props: Mapping[str, Any]


def node_pools(resource_type: str, props: Mapping[str, Any]) -> list[PoolView]:
    if _AGENT_POOL_TYPE.match(resource_type):
        name = props.get("agentPoolName") or props.get("name") or ""
        return [PoolView("", name if isinstance(name, str) else "", props)]
    if _MANAGED_CLUSTER_TYPE.match(resource_type):
        profiles = list_at(props.get("agentPoolProfiles"), "agentPoolProfiles")
        return [
            PoolView(join("agentPoolProfiles", index), str(profile.get("name") or f"#{index}"), profile)
            for index, profile in enumerate(profiles) if isinstance(profile, abc.Mapping)
        ]
    return []


def _pool_taints(pool: PoolView) -> tuple[list[dict[str, str]], list[str]]:
    """The taints a pool's nodes carry (Spot's is added by AKS even if undeclared) and syntax problems."""
    taints, problems = [], []
    path = join(pool.path, "nodeTaints")
    for index, text in enumerate(list_at(pool.props.get("nodeTaints"), path)):
        known(text, join(path, index))
        try:
            taints.append(parse_taint(text))
        except TaintSyntaxError as error:
            problems.append(str(error))
    if known(pool.props.get("scaleSetPriority"), join(pool.path, "scaleSetPriority")) == "Spot":
        spot = parse_taint(SPOT_TAINT)
        if spot not in taints:
            taints.append(spot)
    return taints, problems


def _pool_problems(pool: PoolView, config: RuleConfig) -> list[str]:
    problems = []
    taints, syntax_problems = _pool_taints(pool)
    problems.extend(syntax_problems)
    if not any(taint == dict(gpu_taint) and taint["effect"] == "NoSchedule"
               for taint in taints for gpu_taint in config.gpu_taints):
        wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
        problems.append(
            f"carries no NoSchedule GPU taint ({wanted}), so any pod may land on its expensive nodes and "
            f"GPU pods cannot rely on it. Fix: nodeTaints: [\"{format_taint(config.gpu_taints[0])}\"]")
    autoscaling = known(pool.props.get("enableAutoScaling"), join(pool.path, "enableAutoScaling"))
    min_count = known(pool.props.get("minCount"), join(pool.path, "minCount"))
    max_count = known(pool.props.get("maxCount"), join(pool.path, "maxCount"))
    numbers = all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in (min_count, max_count))
    if autoscaling is not True or not numbers:
        problems.append(
            f"is not autoscaled within bounds (enableAutoScaling: {autoscaling!r}, minCount: {min_count!r}, "
            f"maxCount: {max_count!r}); GPU pools should scale, to zero when idle. Fix: enableAutoScaling: "
            f"true, minCount: 0, maxCount: <the most GPUs nodes you will pay for>")
    elif min_count > max_count:
        problems.append(f"has minCount {min_count:g} above maxCount {max_count:g}. Fix: minCount <= maxCount")
    return problems


def check_gpu_node_pool(resource_type: str, props: Mapping[str, Any], config: RuleConfig) -> list[Finding]:
    """An AKS pool with a GPU VM size must be tainted for GPUs and autoscale within bounds."""
    findings = []
    try:
        pools = node_pools(resource_type, props)
    except UndecidableError as error:
        return [_undecided(TAINTED_GPU_POOLS, error)]
    for pool in pools:
        try:
            vm_size = known(pool.props.get("vmSize"), join(pool.path, "vmSize"))
            if not isinstance(vm_size, str) or not is_gpu_vm_size(vm_size):
                continue
            for problem in _pool_problems(pool, config):
                findings.append(Finding(
                    TAINTED_GPU_POOLS, pool.path or "nodeTaints",
                    f"GPU node pool '{pool.name}' ({vm_size}) {problem}"))
        except UndecidableError as error:
            findings.append(_undecided(TAINTED_GPU_POOLS, error))
    return findings


def is_device_plugin_daemonset(resource_type: str, props: Mapping[str, Any]) -> bool:
    if resource_type not in DAEMONSET_TYPES:
        return False
    try:
        for pod in find_pod_specs(props):
            for container in list_at(pod.spec.get("containers"), pod.path):
                image = container.get("image") if isinstance(container, abc.Mapping) else None
                if isinstance(image, str) and "nvidia/k8s-device-plugin" in image:
                    return True
    except UndecidableError:
        return False
    return False


def served_by_nvidia_plugin(pool: PoolView) -> bool:
    """NVIDIA pools whose driver AKS installs and whose plugin nothing else manages: the ones a
    self-installed device plugin must reach (`gpuProfile.driver: None` means the GPU Operator or
    another owner runs driver and plugin; AKS-managed GPU pools run their own plugin)."""
    vm_size = pool.props.get("vmSize")
    if not isinstance(vm_size, str) or gpu_sku(vm_size) is None:
        return False
    gpu_profile = pool.props.get("gpuProfile")
    if isinstance(gpu_profile, abc.Mapping):
        if gpu_profile.get("driver") == "None":
            return False
        nvidia = gpu_profile.get("nvidia")
        if isinstance(nvidia, abc.Mapping) and nvidia.get("managementMode") == "Managed":
            return False
    return True


def pool_node_labels(pool: PoolView) -> dict[str, str]:
    """The labels a pool's nodes carry: its nodeLabels plus those AKS always adds."""
    labels = {k: str(v) for k, v in mapping_at(pool.props.get("nodeLabels"), join(pool.path, "nodeLabels")).items()}
    return aks_node_labels(pool.name, labels, pool.props.get("scaleSetPriority") == "Spot")


@dataclass(frozen=True)
class StackResource:
    urn: str
    type: str
    props: Mapping[str, Any]


def check_device_plugin_coverage(resources: Sequence[StackResource], config: RuleConfig) -> list[Finding]:
    """Every NVIDIA pool a self-installed device plugin must serve is selected and tolerated by one."""
    plugins = [r for r in resources if is_device_plugin_daemonset(r.type, r.props)]
    if not plugins:
        return []
    findings = []
    for resource in resources:
        try:
            pools = [p for p in node_pools(resource.type, resource.props) if served_by_nvidia_plugin(p)]
        except UndecidableError as error:
            findings.append(_undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
            continue
        for pool in pools:
            try:
                taints, _ = _pool_taints(pool)
                labels = pool_node_labels(pool)
                gaps = [_plugin_gap(plugin, labels, taints) for plugin in plugins]
            except UndecidableError as error:
                findings.append(_undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
                continue
            if all(gap is not None for gap in gaps):
                findings.append(Finding(
                    DEVICE_PLUGIN_TOLERATES_POOLS, pool.path or "nodeTaints",
                    f"GPU node pool '{pool.name}' ({pool.props.get('vmSize')}) is not served by any NVIDIA "
                    f"device plugin, so its nodes never advertise nvidia.com/gpu and GPU pods never "
                    f"schedule there: " + "; ".join(str(gap) for gap in gaps),
                    subject=resource.urn))
    return findings


def _plugin_gap(plugin: StackResource, labels: Mapping[str, str], taints: Sequence[Mapping[str, str]]) -> str | None:
    """Why one device-plugin DaemonSet misses a pool's nodes, or None when it runs there."""
    for pod in find_pod_specs(plugin.props):
        tolerations_path = join(pod.path, "tolerations")
        tolerations = [t for t in list_at(pod.spec.get("tolerations"), tolerations_path) if isinstance(t, abc.Mapping)]
        if not selects_node(pod.spec, labels):
            return f"{plugin.urn} does not select its nodes (nodeSelector/affinity)"
        missing = untolerated_taints(tolerations, taints)
        if missing:
            return (f"{plugin.urn} does not tolerate {', '.join(format_taint(t) for t in missing)}; add to "
                    f"{tolerations_path}:\n{_yaml_list([toleration_for(t) for t in missing], '')}")
        return None
    return f"{plugin.urn} has no pod template"


#: The per-object rules, by policy name. Each takes (object, config, pods=None); callers that run
#: several on one object pass `pods=list(find_pod_specs(obj))` to search it once.
POD_RULES: Mapping[str, Callable[..., list[Finding]]] = {
    TOLERATE_GPU_TAINT: check_gpu_tolerations,
    WHOLE_GPU_LIMITS: check_gpu_limits,
    SELECT_GPU_NODES: check_gpu_node_selection,
}
