"""The GPU rules, as pure functions over pod specs and plain dicts in the Kubernetes (or
azure-native) JSON shape.

Each rule returns Findings; the policy pack, `gpu_aks_policies.check`, the offline preview and the
explainer are thin layers over these functions. The pod rules take the pod specs a workload adapter
found (`policies/workloads/`) and the objects checked together (a `Context`). No Pulumi imports.
"""

from __future__ import annotations

import re
from collections import abc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .admission import WRITTEN, Admitted, admit, describe
from .catalog import GPU_MODEL_LABEL, POOL_LABEL, SPOT_TAINT, aks_node_labels, gpu_sku, is_gpu_vm_size
from .podspecs import (
    ABSENT,
    UNKNOWN,
    GpuAsk,
    PodSpec,
    UndecidableError,
    as_mapping,
    asks_by_container,
    derived,
    find_pod_specs,
    is_gpu_resource,
    join,
    known,
    list_at,
    mapping_at,
)
from .quantities import MAX_AMOUNT, QuantityError, format_amount, parse_quantity, shown
from .rule_config import (
    ANALYZABLE,
    DEVICE_PLUGIN_TOLERATES_POOLS,
    SELECT_GPU_NODES,
    TAINTED_GPU_POOLS,
    TOLERATE_GPU_TAINT,
    WHOLE_GPU_LIMITS,
    GpuSharing,
    RuleConfig,
)
from .scheduling import (
    TaintSyntaxError,
    format_taint,
    is_extended_resource_name,
    parse_taint,
    required_node_terms,
    selects_node,
    tolerates,
    toleration_for,
    untolerated_taints,
)
from .secrets import is_secret
from .workloads import Claims, Context, pod_claims


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


def amount_of(value: Any) -> Fraction | None:
    """A GPU amount, or None when it is not a quantity at all."""
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def asks_gpu(ask: GpuAsk) -> bool | None:
    """Whether a container asks the scheduler for a GPU: its request after defaulting (a limit alone
    sets the request) is more than 0. Malformed amounts count as asking; None when unknown."""
    written = ask.request if ask.request is not ABSENT else ask.limit
    if written is UNKNOWN:
        return None
    amount = amount_of(written)
    return amount is None or amount > 0


@dataclass(frozen=True)
class GpuDemand:
    asks: tuple[GpuAsk, ...]
    claims: Claims
    #: An unknown container or amount during preview that might also ask for a GPU.
    unknown: UndecidableError | None
    #: What else puts the pod on GPU nodes (`gpuMarkers`): "annotation gpu-fraction", "container 'x'
    #: asks for volcano.sh/vgpu-number". Counted for tolerations and node selection, never for limits.
    markers: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.asks or self.claims.gpu or self.markers)

    def summary(self) -> str:
        parts = [f"container '{ask.container.name}' asks for {ask.resource}" for ask in self.asks]
        parts += [f"{claim} asks for a GPU" for claim in self.claims.gpu]
        parts += [f"{marker} puts it on GPU nodes" for marker in self.markers]
        return ", ".join(parts)


def gpu_demand(pod: PodSpec, config: RuleConfig, context: Context) -> GpuDemand:
    key = ("gpu_demand", config.gpu_resources, config.gpu_device_classes, config.gpu_markers)
    return derived(pod, key, context, lambda: _gpu_demand(pod, config, context))


def _asks(pod: PodSpec, patterns: Sequence[str]) -> tuple[list[GpuAsk], UndecidableError | None]:
    asks: list[GpuAsk] = []
    unknown: UndecidableError | None = None
    for result in asks_by_container(pod, patterns):
        if isinstance(result, UndecidableError):
            unknown = unknown or result
            continue
        for ask in result:
            asking = asks_gpu(ask)
            if asking is None:
                unknown = unknown or UndecidableError(ask.limit_path if ask.request is ABSENT else ask.request_path)
            elif asking:
                asks.append(ask)
    return asks, unknown


def _gpu_demand(pod: PodSpec, config: RuleConfig, context: Context) -> GpuDemand:
    asks, unknown = _asks(pod, config.gpu_resources)
    markers = [f"annotation {name}" for name in config.gpu_markers.annotations if name in pod.annotations]
    if config.gpu_markers.resources:
        marked, _ = _asks(pod, config.gpu_markers.resources)
        markers += [f"container '{ask.container.name}' asking for {ask.resource}" for ask in marked
                    if not is_gpu_resource(ask.resource, config.gpu_resources)]
    return GpuDemand(tuple(asks), pod_claims(pod, context, config.gpu_device_classes), unknown, tuple(markers))


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


@dataclass(frozen=True)
class LimitProblem:
    """Why the API server refuses one GPU amount, and how to write it instead."""

    text: str
    advice: str

    def __str__(self) -> str:
        return f"{self.text}. {self.advice}"


def sharing_advice(sharing: GpuSharing | None) -> str:
    """How to share a GPU, as far as the platform offers it: nothing is suggested that nothing sets up
    (no time-slicing or MPS unless the platform's outputs say a pool shares its GPUs)."""
    if sharing is None:
        return ("to share a GPU, ask for a MIG partition resource (nvidia.com/mig-<profile>) where the platform has "
                "MIG pools; otherwise ask for a whole GPU")
    offers = []
    if sharing.mig_resources:
        offers.append(f"a MIG partition ({', '.join(sharing.mig_resources)})")
    offers += sharing.shared_pools
    if not offers:
        return "this platform offers no GPU sharing (no MIG or shared pools): ask for a whole GPU"
    return f"to share a GPU on this platform, ask for {' or '.join(offers)}"


def _amount_problem(kind: str, resource: str, value: Any, sharing: GpuSharing | None = None) -> str | None:
    # A secret amount is named only by its path: nothing derived from it is printed either.
    secret = is_secret(value)
    written = f"{kind}.{resource}: {shown(value)}"
    try:
        amount = parse_quantity(value)
    except QuantityError as error:
        return f"has {written}, which is not a quantity" if secret else f"has {kind}.{resource}: {error}"
    if amount < 0:
        return f"has {written}, a negative amount"
    if amount.denominator != 1:
        amount_text = "" if secret else f" ({format_amount(amount)} GPUs)"
        return (f"has {written}{amount_text}, a fraction; GPUs are whole devices and the API server refuses "
                f"fractions ({sharing_advice(sharing)})")
    if amount > MAX_AMOUNT:
        return f"has {written}, more than the API server can count (it keeps extended resources in 64-bit thousandths)"
    return None


def _amount_text(value: Any, amount: Fraction | None, fallback: str) -> str:
    if is_secret(value) or amount is None:
        return fallback
    return format_amount(amount)


def limit_problem(ask: GpuAsk, sharing: GpuSharing | None = None) -> LimitProblem | None:
    """What the API server's `ValidateResourceRequirements` (kubernetes pkg/apis/core/validation)
    refuses for a non-overcommitable extended resource: a quantity that is not a whole, non-negative
    number; a request without a limit (at any amount, 0 included); a request that is not the limit.
    Raises UndecidableError when an amount is unknown during preview."""
    resource = ask.resource
    limit = known(ask.limit, ask.limit_path)
    request = known(ask.request, ask.request_path)
    for kind, value in (("limits", limit), ("requests", request)):
        if value is not ABSENT:
            problem = _amount_problem(kind, resource, value, sharing)
            if problem:
                return LimitProblem(problem, f"Write a whole number:\nresources:\n  limits:\n    {resource}: 1")
    if request is not ABSENT and limit is ABSENT:
        amount = amount_of(request)
        suggestion = _amount_text(request, amount, "1") if amount is not None and amount > 0 else "1"
        return LimitProblem(
            f"sets requests.{resource}: {shown(request)} without a limit; the API server refuses that at any amount, "
            f"0 included (\"Limit must be set for non overcommitable resources\")",
            f"Put the amount in limits (a limit alone also sets the request):\nresources:\n  limits:\n"
            f"    {resource}: {suggestion}")
    if request is not ABSENT and amount_of(request) != amount_of(limit):
        equal = _amount_text(limit, amount_of(limit) or Fraction(0), "<the limit>")
        return LimitProblem(
            f"has requests.{resource}: {shown(request)} but limits.{resource}: {shown(limit)}; for GPUs the API server "
            f"requires the request to equal the limit",
            f"Drop the request (the limit sets it) or write:\nresources:\n  limits:\n    {resource}: {equal}\n"
            f"  requests:\n    {resource}: {equal}")
    return None


def check_gpu_limits(pods: Sequence[PodSpec], config: RuleConfig, context: Context | None = None) -> list[Finding]:
    """Every GPU amount is what the API server accepts: a whole, non-negative number in limits,
    equal to any request. Containers whose GPU amounts the controller writes are not judged."""
    findings = []
    for pod in pods:
        for container, result in zip(pod.containers, asks_by_container(pod, config.gpu_resources), strict=True):
            if isinstance(result, UndecidableError):
                findings.append(undecided(WHOLE_GPU_LIMITS, result))
                continue
            if container.limits_set_by_controller:
                continue
            for ask in result:
                if is_gpu_resource(ask.resource, config.gpu_markers.resources):
                    continue  # a share (Volcano vGPU, HAMi memory or cores), not a count of GPUs
                try:
                    problem = limit_problem(ask, config.gpu_sharing)
                except UndecidableError as error:
                    findings.append(undecided(WHOLE_GPU_LIMITS, error))
                    continue
                if problem:
                    where = ask.limit_path if ask.limit is not ABSENT else ask.request_path
                    findings.append(Finding(WHOLE_GPU_LIMITS, where,
                                            f"container '{container.name}' at {container.path} {problem}"))
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
            SELECT_GPU_NODES, join(pod.path, "nodeSelector"),
            f"{demand.summary()} ({pod.where}) but the pod does not select GPU nodes by the label {key}={value}; with "
            f"a toleration alone it may also land on other tolerated nodes. Add to {pod.path or 'the pod spec'}:\n"
            f"nodeSelector:\n  {key}: {value}"))
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


# --- Azure side: pools and the device plugin ----------------------------------------------------

_AGENT_POOL_TYPE = re.compile(r"azure-native:containerservice(/v[0-9a-z]+)?:AgentPool")
_MANAGED_CLUSTER_TYPE = re.compile(r"azure-native:containerservice(/v[0-9a-z]+)?:ManagedCluster")
DAEMONSET_TYPES = ("kubernetes:apps/v1:DaemonSet",)


@dataclass(frozen=True)
class PoolView:
    """An AKS node pool as the rules see it, from an AgentPool or one `agentPoolProfiles` entry."""

    path: str
    name: str
    props: Mapping[str, Any]


def node_pools(resource_type: str, props: Mapping[str, Any]) -> list[PoolView]:
    if _AGENT_POOL_TYPE.fullmatch(resource_type):
        name = props.get("agentPoolName") or props.get("name") or ""
        return [PoolView("", name if isinstance(name, str) else "", props)]
    if _MANAGED_CLUSTER_TYPE.fullmatch(resource_type):
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


def _is_count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: Any) -> str:
    """A count as people write it: the wire's 3.0 is 3 (a secret one is named only as secret)."""
    if is_secret(value):
        return shown(value)
    return str(int(value)) if isinstance(value, float) and value.is_integer() and abs(value) < 1e15 else shown(value)


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
    if autoscaling is not True or not (_is_count(min_count) and _is_count(max_count)):
        problems.append(
            f"is not autoscaled within bounds (enableAutoScaling: {shown(autoscaling)}, minCount: {_number(min_count)}, "
            f"maxCount: {_number(max_count)}); GPU pools should scale, to zero when idle. Fix: enableAutoScaling: "
            f"true, minCount: 0, maxCount: <the most GPUs nodes you will pay for>")
    elif min_count > max_count:
        problems.append(f"has minCount {_number(min_count)} above maxCount {_number(max_count)}. Fix: minCount <= maxCount")
    return problems


def check_gpu_node_pool(resource_type: str, props: Mapping[str, Any], config: RuleConfig) -> list[Finding]:
    """An AKS pool with a GPU VM size must be tainted for GPUs and autoscale within bounds."""
    findings = []
    try:
        pools = node_pools(resource_type, props)
    except UndecidableError as error:
        return [undecided(TAINTED_GPU_POOLS, error)]
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
    """Every NVIDIA pool a self-installed device plugin must serve is selected, tolerated and, for
    MIG pools, served with MIG support by one of the plugins."""
    plugins = [(r, find_pod_specs(r.props)) for r in resources if is_device_plugin_daemonset(r.type, r.props)]
    if not plugins:
        return []
    findings = []
    for resource in resources:
        try:
            pools = [p for p in node_pools(resource.type, resource.props) if served_by_nvidia_plugin(p)]
        except UndecidableError as error:
            findings.append(undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
            continue
        for pool in pools:
            try:
                taints, _ = _pool_taints(pool)
                labels = pool_node_labels(pool)
                mig = bool(known(pool.props.get("gpuInstanceProfile"), join(pool.path, "gpuInstanceProfile")))
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
                    DEVICE_PLUGIN_TOLERATES_POOLS, pool.path or "nodeTaints",
                    f"GPU node pool '{pool.name}' ({pool.props.get('vmSize')}) is not served by any NVIDIA "
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


def __getattr__(name: str) -> Any:
    """`POD_RULES`, policy name -> check function of each pod rule that needs nothing but the objects,
    derived from the rule declarations (`gpu_aks_policies.rules`) on first use."""
    if name == "POD_RULES":
        from .rules import RULES

        return {rule.name: rule.check for rule in RULES.values() if rule.subject == "pods" and not rule.needs_platform}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
