"""The pool rules, as pure functions over the resources that declare pools (any pool kind, as
`gpu_aks_policies.pools` sees it) and NVIDIA device-plugin DaemonSets: a GPU pool is tainted for GPUs
and autoscales within bounds, and a self-installed device plugin serves every GPU pool it must. Each
returns `Finding`s, through the registry (`rules.py`). The pod rules are `pod_rules.py`. No Pulumi
imports.
"""

from __future__ import annotations

from collections import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .catalog import is_gpu_vm_size
from .dra_driver import RELEASE_TYPES, is_dra_driver_release, kubelet_plugin_pod
from .findings import Finding, undecided, yaml_list
from .podspecs import (
    PodSpec,
    UndecidableError,
    as_list,
    as_mapping,
    find_pod_specs,
    join,
    list_at,
)
from .pools import pools_of
from .quantities import shown
from .rule_config import (
    DEVICE_PLUGIN_TOLERATES_POOLS,
    TAINTED_GPU_POOLS,
    RuleConfig,
)
from .scheduling import (
    format_taint,
    parse_taint,
    selects_node,
    shown_taint,
    toleration_for,
    untolerated_taints,
)
from .terminal import escape_line

if TYPE_CHECKING:
    from .pools.model import AsWritten, Pool, PoolFact, PoolReading

# --- Pools and the device plugin -----------------------------------------------------------------
# The pools come from the backend readers (`gpu_aks_policies.pools`), each as the one pool model
# (`pools.model.Pool`) with its reading (`PoolReading`: where each fact is written, which a preview
# hides): these rules never read a backend's properties, so a pool of a new backend is judged by the
# same rules.

DAEMONSET_TYPES = ("kubernetes:apps/v1:DaemonSet",)
#: The resource types that may serve a pool's GPUs: device-plugin DaemonSets, and releases of NVIDIA's DRA driver.
SERVING_TYPES = (*DAEMONSET_TYPES, *RELEASE_TYPES)


#: Sizes a message names: a NodePool may list thousands (repeated ones too); the rest are counted.
_NAMED_SIZES = 8


def _pool_named(pool: Pool, sizes: Sequence[str]) -> str:
    """`GPU node pool 'name' (sizes)` as a message starts: the name and sizes as the resource writes
    them, each on one line and short (a NodePool's name and requirement values are any text until the
    API server sees them), the sizes once each and at most `_NAMED_SIZES` of them."""
    unique = list(dict.fromkeys(sizes))
    named = ", ".join(escape_line(shown(size, 64).strip("'")) for size in unique[:_NAMED_SIZES])
    more = f" and {len(unique) - _NAMED_SIZES} more" if len(unique) > _NAMED_SIZES else ""
    return f"GPU node pool {shown(pool.name, 64)} ({named}{more})"


#: What a pool rule's problem is about, for whoever maps it back to where the pool was written (the
#: platform's settings map it to a config key: `nodeTaints`, `maxCount`, `limits`).
PoolAspect = Literal["taints", "scaling"]


@dataclass(frozen=True)
class PoolProblem:
    """One reason the mandatory pool rule refuses a GPU pool: what it is about, why, and the fix in the
    resource's own field names."""

    aspect: PoolAspect
    reason: str
    fix: str = ""

    @property
    def text(self) -> str:
        return f"{self.reason}. Fix: {self.fix}" if self.fix else self.reason


def require(read: PoolReading, *facts: PoolFact) -> None:
    """Raises UndecidableError, at the path of the value not known yet, for the first of `facts` the
    preview hides in this pool: the rule then reports this one pool as undecided."""
    for fact in facts:
        if fact in read.unknown:
            raise UndecidableError(read.unknown[fact])


def _taint_fix(written: AsWritten, taint: Mapping[str, str]) -> str:
    """How to give the pool `taint`, in its backend's field: AKS's `nodeTaints` strings, or a
    Kubernetes Taint object (a karpenter.sh NodePool's `spec.template.spec.taints`)."""
    if written.taints_as_text:
        return f'{written.taints_field}: ["{format_taint(taint)}"]'
    value = taint.get("value") or ""
    fields = f"key: {taint['key']}, " + (f"value: {value}, " if value else "") + f"effect: {taint['effect']}"
    return f"{written.taints_field}: [{{{fields}}}]"


def pool_problems(read: PoolReading, config: RuleConfig) -> list[PoolProblem]:
    """Why `gpu-node-pools-are-tainted` refuses a GPU pool (none when it passes). The pack reports each
    at the pool's resource; the platform runs the same on its own pools before anything is created
    (`components/pools/rules.py`), reported at the config key. Raises UndecidableError."""
    require(read, "taints")
    pool, written = read.pool, read.written
    problems = [PoolProblem("taints", problem) for problem in written.taint_problems]
    taints = [parse_taint(taint) for taint in pool.taints]
    if not any(taint == dict(gpu_taint) and taint["effect"] == "NoSchedule"
               for taint in taints for gpu_taint in config.gpu_taints):
        wanted = " or ".join(format_taint(t) for t in config.gpu_taints)
        problems.append(PoolProblem(
            "taints", f"carries no NoSchedule GPU taint ({wanted}), so any pod may land on its expensive nodes and "
                      f"GPU pods cannot rely on it", _taint_fix(written, config.gpu_taints[0])))
    require(read, "count")
    if not written.autoscaled:
        problems.append(PoolProblem(
            "scaling", f"is not autoscaled within bounds ({written.bounds}); GPU pools should scale, to zero when idle",
            written.bounds_fix))
    elif (pool.min_count or 0) > (pool.max_count or 0):
        problems.append(PoolProblem(
            "scaling", f"has {' '.join(written.lower)} above {' '.join(written.upper)}",
            f"{written.lower[0]} <= {written.upper[0]}"))
    return problems


def gpu_sizes(read: PoolReading) -> list[str]:
    """The pool's GPU VM sizes: a pool with none is no GPU pool, and the GPU pool rule passes it.
    Raises UndecidableError."""
    require(read, "offers")
    return [size for size in read.pool.vm_sizes if is_gpu_vm_size(size)]


def needs_device_plugin(read: PoolReading) -> bool:
    """A device plugin the stack installs must serve the pool (`PoolReading.needs_device_plugin`). Raises
    UndecidableError."""
    require(read, "plugin")
    return read.needs_device_plugin


def check_gpu_node_pool(resource_type: str, props: Mapping[str, Any], config: RuleConfig) -> list[Finding]:
    """A pool with a GPU VM size must be tainted for GPUs and autoscale within bounds."""
    findings = []
    try:
        pools = pools_of(resource_type, props)
    except UndecidableError as error:
        return [undecided(TAINTED_GPU_POOLS, error)]
    for read in pools:
        try:
            sizes = gpu_sizes(read)
            if not sizes:
                continue
            for problem in pool_problems(read, config):
                findings.append(Finding(TAINTED_GPU_POOLS, read.source["pool"],
                                        f"{_pool_named(read.pool, sizes)} {problem.text}"))
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


#: Why `device-plugin-tolerates-gpu-pools` refuses a pool, after the pool's name; the gaps follow.
UNSERVED = ("is not served by any NVIDIA device plugin or DRA driver, so its nodes never advertise nvidia.com/gpu "
            "nor publish their GPUs to claims, and GPU pods never schedule there")

#: A device-plugin DaemonSet with its pod specs.
Plugin = tuple[StackResource, list[PodSpec]]


def device_plugins(resources: Sequence[StackResource]) -> list[Plugin]:
    """What serves NVIDIA GPUs among `resources`, each with its pod specs: the device-plugin DaemonSets, and
    the kubelet plugin of each release of NVIDIA's DRA driver (`dra_driver`), which offers a node's GPUs to
    claims instead (`gpu-aks:dra`)."""
    plugins = [(r, find_pod_specs(r.props)) for r in resources if is_device_plugin_daemonset(r.type, r.props)]
    return plugins + [(r, [kubelet_plugin_pod(r.props)]) for r in resources if is_dra_driver_release(r.type, r.props)]


def plugin_gaps(read: PoolReading, plugins: Sequence[Plugin]) -> list[str]:
    """Why each plugin misses the pool's nodes, or [] when one of them serves it (one is enough). The
    pack reports the gaps at the pool's resource; the platform runs the same on its own pools before
    anything is created (`components/pools/rules.py`). Raises UndecidableError."""
    require(read, "taints", "labels", "mig")
    pool = read.pool
    taints = [parse_taint(taint) for taint in pool.taints]
    labels, mig = pool.labels, pool.mig
    gaps: list[str] = []
    for plugin, plugin_pods in plugins:
        gap = _plugin_gap(plugin, plugin_pods, labels, taints, mig)
        if gap is None:
            return []
        gaps.append(gap)
    return gaps


def check_device_plugin_coverage(resources: Sequence[StackResource], config: RuleConfig) -> list[Finding]:
    """Every NVIDIA pool a self-installed device plugin must serve is selected, tolerated and, for
    MIG pools, served with MIG support by one of the plugins."""
    plugins = device_plugins(resources)
    if not plugins:
        return []
    findings = []
    for resource in resources:
        try:
            pools = [p for p in pools_of(resource.type, resource.props) if needs_device_plugin(p)]
        except UndecidableError as error:
            findings.append(undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
            continue
        for read in pools:
            try:
                gaps = plugin_gaps(read, plugins)
            except UndecidableError as error:
                findings.append(undecided(DEVICE_PLUGIN_TOLERATES_POOLS, error, resource.urn))
                continue
            if gaps:
                findings.append(Finding(
                    DEVICE_PLUGIN_TOLERATES_POOLS, read.source["pool"],
                    f"{_pool_named(read.pool, read.pool.vm_sizes)} {UNSERVED}: " + "; ".join(gaps),
                    subject=resource.urn))
    return findings


def _env(container: Mapping[str, Any], name: str) -> Any:
    for item in as_list(container.get("env")):
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
        capabilities = as_mapping(as_mapping(spec.get("securityContext")).get("capabilities"))
        missing = []
        if _env(spec, "MIG_STRATEGY") in (None, "none"):
            missing.append("MIG_STRATEGY (single or mixed)")
        if _env(spec, "NVIDIA_MIG_MONITOR_DEVICES") != "all":
            missing.append("NVIDIA_MIG_MONITOR_DEVICES=all")
        if "SYS_ADMIN" not in as_list(capabilities.get("add")):
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
            return (f"{plugin.urn} does not tolerate {', '.join(shown_taint(t) for t in missing)}; add to "
                    f"{tolerations_path}:\n{yaml_list([toleration_for(t) for t in missing], '')}")
        return _mig_gap(plugin, pod) if mig else None
    return f"{plugin.urn} has no pod template"
