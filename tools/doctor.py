"""Whether a running gpu-aks cluster's GPUs work, pool by pool.

    python -m tools.doctor --platform OUTPUTS.json [--nodes NODES.json] [--pods PODS.json] [--json]

OUTPUTS.json is the platform stack's outputs (`pulumi stack output --json`). NODES.json and PODS.json
are `kubectl get nodes -o json` and `kubectl get pods -A -o json`; a file not given is read with
kubectl itself (the current context). For each GPU pool of the contract, every node of the pool
(found by the contract's pool label) is checked:

- it is Ready, and advertises the pool's GPU resource (`nvidia.com/gpu`, or `nvidia.com/mig-<profile>`
  under the `mixed` MIG strategy) as allocatable, `gpusPerNode` of them: what the scheduler counts. On a
  pool that shares its GPUs that is GPUs x replicas; a node advertising its GPUs alone, or another
  multiple, runs a plugin that did not read the pool's sharing config, and an MPS pool's node needs a
  Ready MPS control daemon;
- a Ready pod of gpu-aks's device plugin runs on it (pools whose plugin is external are judged by
  their allocatable GPUs alone: the GPU Operator or AKS's managed GPU install run theirs); a DRA pool
  (`gpu-aks:dra`) advertises no GPU resource, and its node needs a Ready kubelet plugin of NVIDIA's DRA
  driver instead, which publishes the node's GPUs in ResourceSlices;
- its allocatable CPU and memory are what the contract's `allocatable` says pods get (memory within the
  kernel's margin);
- it carries the contract's taints and labels, and no other taint the contract's tolerations miss;
- none of the GPU conditions AKS's node problem detector sets is true (GPUMissing, XIDErrors, ...).

A pool with no nodes and `minCount: 0` is reported as scaled to zero. Exit code: 0 healthy, 1 a
problem (each names the node and what to do), 2 bad input. The checks are pure functions over the
JSON; only `main` runs kubectl.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from gpu_aks_policies.catalog import GPU_RESOURCE, MIG_RESOURCE_PREFIX, POOL_LABEL, SPOT_LABEL, sharing_name
from gpu_aks_policies.documents import DocumentError, Limits, decode, load_json, read_file, safe_text
from gpu_aks_policies.fit import Platform, PlatformError, read_platform
from gpu_aks_policies.limits import MAX_LISTED, MAX_SHOWN_CHARS, listed
from gpu_aks_policies.node_capacity import KARPENTER_VM_MEMORY_OVERHEAD
from gpu_aks_policies.pod_requests import cpus, gib
from gpu_aks_policies.podspecs import as_list, as_mapping, as_str, object_identity
from gpu_aks_policies.pools import NodeFacts, is_gpu_node, node_backend, node_taint_prefixes
from gpu_aks_policies.pools.model import Offer, Pool, pool_named
from gpu_aks_policies.quantities import QuantityError, parse_quantity
from gpu_aks_policies.quantities import shown as shown_value
from gpu_aks_policies.scheduling import TaintSyntaxError, parse_taint, shown_taint
from gpu_aks_policies.terminal import escape_field, escape_json, escape_line, run_cli

from components.manifests import DEVICE_PLUGIN_APP_LABEL, MPS_CONTROL_DAEMON_APP, mps_daemon_name, shared_plugin_name
from observability.conditions import GPU_CONDITIONS
from observability.settings import EXPORTER_APP_LABEL

#: `kubectl get pods -A -o json` of a large cluster runs to tens of megabytes.
CLUSTER_FILE_LIMITS = Limits(max_bytes=512 * 1024 * 1024)


#: The VM size of a node (Kubernetes' well-known `node.kubernetes.io/instance-type` label, which AKS and
#: Karpenter set): which of a pool's offers the node is.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

#: Taints the control plane and the cluster autoscaler manage; a node carrying one is not misconfigured
#: (Kubernetes' well-known `node.kubernetes.io/*` and `node.cloudprovider.kubernetes.io/*` taints,
#: kubernetes.io/docs/reference/labels-annotations-taints; cluster-autoscaler's scale-down taints,
#: kubernetes/autoscaler `cluster-autoscaler/utils/taints/taints.go`). Each pool kind adds its own
#: controller's taints (`gpu_aks_policies.pools`, `NodeFacts.taint_prefixes`).
SYSTEM_TAINT_PREFIXES = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/", "ToBeDeletedByClusterAutoscaler",
                         "DeletionCandidateOfClusterAutoscaler")


class DoctorInputError(Exception):
    """Bad input: exit code 2."""


@dataclass(frozen=True)
class Problem:
    pool: str
    node: str
    check: str
    message: str
    fix: str


@dataclass
class NodeReport:
    name: str
    ready: bool
    allocatable: str
    device_plugin: str
    problems: list[Problem] = field(default_factory=list)


@dataclass
class PoolReport:
    name: str
    gpu_resource: str
    gpus_per_node: int
    min_count: int
    nodes: list[NodeReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def scaled_to_zero(self) -> bool:
        return not self.nodes and self.min_count == 0


@dataclass
class Diagnosis:
    pools: list[PoolReport]
    #: GPU nodes that belong to no pool of the contract (informational).
    unmatched_gpu_nodes: list[str]

    @property
    def problems(self) -> list[Problem]:
        return [p for pool in self.pools for p in [*pool.problems, *(q for n in pool.nodes for q in n.problems)]]


# --- Reading the cluster ------------------------------------------------------------------------


def items_of(document: Any, what: str, source: str) -> list[Mapping[str, Any]]:
    """The objects of a `kubectl get ... -o json` List."""
    items = document.get("items") if isinstance(document, Mapping) else None
    if not isinstance(items, list) or not all(isinstance(item, Mapping) for item in items):
        raise DoctorInputError(f"{source}: expected `kubectl get {what} -o json` output (a List with items)")
    return items


def read_list_file(path: str, what: str) -> list[Mapping[str, Any]]:
    try:
        return items_of(load_json(read_file(path, CLUSTER_FILE_LIMITS), CLUSTER_FILE_LIMITS), what, path)
    except DocumentError as problem:
        raise DoctorInputError(problem.at(path)) from None


def read_list_with_kubectl(what: str) -> list[Mapping[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        raise DoctorInputError(f"kubectl is not on PATH: install it (az aks install-cli) or pass --{what} "
                               f"{what.upper()}.json from `kubectl get {what}{' -A' if what == 'pods' else ''} -o json`")
    command = [kubectl, "get", what, *(["-A"] if what == "pods" else []), "-o", "json"]
    result = subprocess.run(command, capture_output=True, check=False)
    if result.returncode != 0:
        raise DoctorInputError(f"`{' '.join(command[1:])}` failed: {decode(result.stderr[-2000:]).strip()}")
    try:
        return items_of(load_json(decode(result.stdout), CLUSTER_FILE_LIMITS), what, "kubectl")
    except DocumentError as problem:
        raise DoctorInputError(f"kubectl output:{problem.line}: {problem.message}") from None


# --- The checks -----------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    """A label key or value as a message quotes it: any text (the contract, the node), so cut and on one line."""
    return escape_field(str(value), MAX_SHOWN_CHARS)


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(as_mapping(obj.get("metadata")).get("labels"))


def _name(obj: Mapping[str, Any]) -> str:
    return object_identity(obj)[1] or "<unnamed>"


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    for condition in as_list(as_mapping(obj.get("status")).get("conditions")):
        if as_mapping(condition).get("type") == kind:
            return as_mapping(condition)
    return {}


#: More of one GPU resource than any node advertises (the contract's own bound on a count).
_MOST_ADVERTISED = 10**6


def _allocatable(node: Mapping[str, Any], resource: str) -> int | None:
    """How many of `resource` the node advertises; None when what it writes is no such count (not a
    quantity, fractional, negative, or a million or more): said as such, not read as none."""
    value = as_mapping(as_mapping(node.get("status")).get("allocatable")).get(resource)
    try:
        amount = parse_quantity(value) if value is not None else 0
    except QuantityError:
        return None
    return int(amount) if amount.denominator == 1 and 0 <= amount < _MOST_ADVERTISED else None


def _gpu_resources_advertised(node: Mapping[str, Any]) -> dict[str, int | None]:
    allocatable = as_mapping(as_mapping(node.get("status")).get("allocatable"))
    return {str(name): _allocatable(node, str(name)) for name in allocatable
            if str(name) == GPU_RESOURCE or str(name).startswith(MIG_RESOURCE_PREFIX)}


def _node_taints(node: Mapping[str, Any]) -> list[dict[str, str]]:
    taints = []
    for taint in as_list(as_mapping(node.get("spec")).get("taints")):
        taint = as_mapping(taint)
        taints.append({"key": as_str(taint.get("key")), "value": as_str(taint.get("value")),
                       "effect": as_str(taint.get("effect"))})
    return taints


def _shown_taints(taints: Iterable[Mapping[str, str]]) -> str:
    """A node's taints for the report: the first MAX_LISTED, each cut past the longest valid taint, the rest counted
    (a node listing is input, and its taints are checked by nothing before this)."""
    return listed([shown_taint(t) for t in taints]) or "none"


def _plugin_pods(pods: Sequence[Mapping[str, Any]], namespace: str | None,
                 label: tuple[str, str] = DEVICE_PLUGIN_APP_LABEL) -> dict[str, list[Mapping[str, Any]]]:
    """gpu-aks's device-plugin pods (or, by `label`, its MPS control daemons; with no namespace, the DRA
    driver's kubelet plugins wherever they run) by the node they run on."""
    key, value = label
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        metadata = as_mapping(pod.get("metadata"))
        if (namespace is None or metadata.get("namespace") == namespace) and _labels(pod).get(key) == value:
            node = as_str(as_mapping(pod.get("spec")).get("nodeName"))
            by_node.setdefault(node, []).append(pod)
    return by_node


def _pod_state(pod: Mapping[str, Any]) -> str:
    """Why a pod is not Ready, as `kubectl get pods` would show it."""
    status = as_mapping(pod.get("status"))
    for container in as_list(status.get("containerStatuses")):
        container = as_mapping(container)
        state = as_mapping(container.get("state"))
        waiting = as_mapping(state.get("waiting"))
        restarts = container.get("restartCount") or 0
        if waiting:
            return f"{as_str(waiting.get('reason'), 'Waiting')}, {restarts} restart(s)"
        terminated = as_mapping(state.get("terminated"))
        if terminated:
            return f"{as_str(terminated.get('reason'), 'Terminated')}, {restarts} restart(s)"
    return as_str(status.get("phase"), "unknown phase")


def _replace_node(node: Mapping[str, Any], pool: Pool) -> str:
    """How a broken node is replaced: its backend says (the backend whose own label it carries, else its pool's)."""
    labels = {str(k): as_str(v) for k, v in _labels(node).items()}
    backend = node_backend(labels, pool.backend)
    return (backend.nodes if backend is not None else NodeFacts()).replace_hint(_shown(_name(node)), labels)


def _offer_of(node: Mapping[str, Any], pool: Pool) -> Offer:
    """The pool's offer the node is (its VM size; a NAP pool brings several), else the first."""
    size = as_str(_labels(node).get(INSTANCE_TYPE_LABEL)).lower()
    return next((offer for offer in pool.offers if (offer.vm_size or "").lower() == size), pool.offers[0])


def _sharing_count_problem(count: int, expected: int, pool: Pool, resource: str, pool_name: str,
                           namespace: str) -> tuple[str, str] | None:
    """What a shared pool's node count says, when it disagrees with the contract: the node advertises its
    GPUs times the replicas (NVIDIA `internal/rm/device_map.go`); one advertising its GPUs alone, or
    another multiple of them, runs a plugin that did not read (or outran) the pool's config. On an
    unshared pool a count off the contract stays a `gpu-count` problem (a missing GPU, another size)."""
    sharing = pool.sharing
    if sharing is None or sharing.replicas < 2:
        return None
    devices = expected // sharing.replicas
    restart = (f"the plugin reads its config (ConfigMap {_shown(shared_plugin_name(pool_name))}, CONFIG_FILE) only when it "
               f"starts: kubectl -n {namespace} rollout restart daemonset {_shown(shared_plugin_name(pool_name))}; pulumi up "
               "restores the DaemonSet and its ConfigMap")
    if count == devices:
        return (f"advertises {count} {resource}, its {devices} device(s) unshared, but the contract says {expected} per "
                f"node ({devices} x {sharing.replicas} replicas, {sharing_name(sharing.strategy)}): pods get whole GPUs "
                "and fewer fit", restart)
    if devices and count % devices == 0:
        return (f"advertises {count} {resource} ({devices} device(s) x {count // devices} replicas), but the contract "
                f"says {sharing.replicas} replicas ({expected} per node)", restart)
    return None


#: How much less memory than the contract says a node may report before the doctor says so: the kubelet's
#: capacity is the kernel's MemTotal, below the VM's listed memory by what the kernel keeps (a few percent, not
#: known offline); Karpenter's Azure provider assumes 7.5% (`--vm-memory-overhead-percent`).
MEMORY_MARGIN = KARPENTER_VM_MEMORY_OVERHEAD


#: The label of the DRA driver's kubelet-plugin pods (`selectorLabels` with componentName kubelet-plugin).
DRA_KUBELET_PLUGIN_LABEL = ("nvidia-dra-driver-gpu-component", "kubelet-plugin")


def _dra_plugin_state(name: str, pods: Sequence[Mapping[str, Any]], problem: Any) -> str:
    ready = [pod for pod in pods if _condition(pod, "Ready").get("status") == "True"]
    if ready:
        return f"DRA kubelet plugin {_name(ready[0])} ready"
    state = f"pod {_name(pods[0])} is not Ready ({_pod_state(pods[0])})" if pods else "no pod runs here"
    problem("dra-driver", f"the pool hands out its GPUs through DRA, but the DRA driver's kubelet plugin {state}: the "
                          "node publishes no GPUs, so claims are never allocated",
            f"kubectl get resourceslices --field-selector spec.nodeName={name}; kubectl describe daemonset -A -l "
            f"{DRA_KUBELET_PLUGIN_LABEL[0]}={DRA_KUBELET_PLUGIN_LABEL[1]}: it must select the pool and tolerate its "
            "taints; pulumi up restores it")
    return "no DRA kubelet plugin ready"


def _check_room(node: Mapping[str, Any], offer: Offer, problem: Any) -> None:
    """The node gives pods at least what the contract says (`Offer.allocatable`, which `--platform`, the
    explainer and the app helper place pods by): a node whose allocatable CPU (exact: vCPUs less kube-reserved)
    or memory (beyond the kernel's margin) is less leaves pods sized to the contract Pending (NodeResourcesFit)."""
    said = offer.allocatable
    allocatable = as_mapping(as_mapping(node.get("status")).get("allocatable"))
    if said is None:
        return
    short = []
    for resource, contract, scale, margin, shown in (
            ("cpu", said.cpu_millicores, 1000, 0.0, cpus), ("memory", said.memory_bytes, 1, MEMORY_MARGIN, gib)):
        try:
            live = parse_quantity(allocatable.get(resource)) * scale if allocatable.get(resource) is not None else None
        except QuantityError:
            live = None
        if contract is not None and live is not None and live < contract * (1 - margin):
            short.append(f"{resource} {shown(int(live))} where the contract says {shown(contract)}")
    if short:
        problem("allocatable", f"the node's allocatable is less than the contract's: {'; '.join(short)}: pods sized to "
                               "the contract (gpu-aks-check --platform, the app helper) may stay Pending here",
                f"kubectl describe node {_name(node)} (Allocatable); the contract follows AKS's documented reservations "
                "(node-resource-reservations): report the node image and size")


def _check_node(node: Mapping[str, Any], pool_name: str, pool: Pool, platform: Platform,
                plugin_pods: Mapping[str, list[Mapping[str, Any]]],
                mps_pods: Mapping[str, list[Mapping[str, Any]]] | None = None) -> NodeReport:
    name = _name(node)
    shown = _shown(name)  # a file may name a node with any text; kubectl commands quote it cut, as messages do
    offer = _offer_of(node, pool)
    resource, expected = offer.resource or "", offer.per_node
    problems: list[Problem] = []

    def problem(check: str, message: str, fix: str) -> None:
        problems.append(Problem(pool_name, name, check, message, fix))

    ready = _condition(node, "Ready")
    is_ready = ready.get("status") == "True"
    if not is_ready:
        problem("node-ready", f"the node is not Ready ({as_str(ready.get('reason'), 'no Ready condition')})",
                f"kubectl describe node {shown}; a node that stays NotReady is replaced by deleting it "
                f"({_replace_node(node, pool)})")

    if pool.dra is not None:
        # A DRA pool advertises no extended resource: NVIDIA's DRA driver publishes its GPUs in ResourceSlices,
        # which its kubelet plugin (`nvidia-dra-driver-gpu` chart, `templates/kubeletplugin.yaml`) writes. The
        # rest of a node's checks (room, taints, labels, the node problem detector's conditions) hold as on any.
        plugin_state = _dra_plugin_state(name, plugin_pods.get(name, []), problem)
        shown_count = f"GPUs through DRA ({', '.join(pool.dra.device_classes)})"
    else:
        advertised = _gpu_resources_advertised(node)
        count = advertised.get(resource, 0)
        plugin_hint = (f"the device plugin registers GPUs with the kubelet: kubectl -n {platform.gpu_namespace} logs "
                       f"-l {DEVICE_PLUGIN_APP_LABEL[0]}={DEVICE_PLUGIN_APP_LABEL[1]} --field-selector spec.nodeName={shown}"
                       if pool.device_plugin != "external" else "the pool's external device plugin registers them")
        written = as_mapping(as_mapping(node.get("status")).get("allocatable")).get(resource)
        if count is None:
            problem("gpu-allocatable", f"advertises {shown_value(written, 40)} allocatable {resource}, which is no count of GPUs "
                                       f"(the contract says {expected} per node): the scheduler cannot place GPU pods by it",
                    f"{plugin_hint}; kubectl describe node {shown}")
        elif count == 0:
            others = {r: n for r, n in advertised.items() if r != resource and n}
            if others:
                shown = ", ".join(f"{n} {r}" for r, n in others.items())
                problem("gpu-resource", f"advertises {shown} but no {resource}, the resource the contract tells pods to ask "
                                        f"for: pods asking for {resource} never land here",
                        f"the device plugin's MIG strategy ({platform.mig_strategy} in the contract) and the pool's "
                        f"gpuInstanceProfile must agree; check MIG_STRATEGY in the plugin's DaemonSet and run pulumi up")
            else:
                problem("gpu-allocatable", f"advertises no allocatable {resource} (the contract says {expected} per node): "
                                           "pods asking for GPUs stay Pending",
                        f"{plugin_hint}; the GPU driver comes with AKS's GPU node image (kubectl describe node {shown})")
        elif count != expected:
            shared = _sharing_count_problem(count, expected, pool, resource, pool_name, platform.gpu_namespace)
            if shared is not None:
                problem("gpu-sharing", *shared)
            else:
                problem("gpu-count", f"advertises {count} {resource}, the contract says {expected} per node",
                        f"a missing GPU shows as the GPUMissing condition (kubectl describe node {shown}); a MIG node with "
                        f"another count has another partition profile than the pool's gpuInstanceProfile")

        plugin_state = "external"
        if pool.device_plugin != "external":
            pods = plugin_pods.get(name, [])
            ready_pods = [p for p in pods if _condition(p, "Ready").get("status") == "True"]
            if ready_pods:
                plugin_state = f"{_name(ready_pods[0])} ready"
            elif pods:
                plugin_state = f"{_name(pods[0])} not ready ({_pod_state(pods[0])})"
                problem("device-plugin", f"device-plugin pod {_name(pods[0])} is not Ready ({_pod_state(pods[0])})",
                        f"kubectl -n {platform.gpu_namespace} logs {_name(pods[0])} --previous; then "
                        f"kubectl -n {platform.gpu_namespace} describe pod {_name(pods[0])}")
            else:
                plugin_state = "none"
                problem("device-plugin", f"no device-plugin pod runs on the node (namespace {platform.gpu_namespace})",
                        f"kubectl -n {platform.gpu_namespace} describe daemonset: the DaemonSet must tolerate the pool's "
                        f"taints and select the pool ({POOL_LABEL}={pool_named(pool_name)}); pulumi up restores it")
        shown_count = f"{count if count is not None else shown_value(written, 40)} {resource}"

    if pool.sharing is not None and pool.sharing.strategy == "mps" and pool.device_plugin != "external":
        # NVIDIA's plugin serves MPS shares only while the node's MPS control daemon is healthy
        # (`internal/plugin/mps.go`, `waitForDaemon`).
        daemons = (mps_pods or {}).get(name, [])
        if not any(_condition(p, "Ready").get("status") == "True" for p in daemons):
            state = f"pod {_name(daemons[0])} is not Ready ({_pod_state(daemons[0])})" if daemons else "no pod runs here"
            problem("mps-control-daemon", f"the pool shares its GPUs through MPS, but its MPS control daemon {state}: "
                                          "the device plugin serves no MPS shares without it",
                    f"kubectl -n {platform.gpu_namespace} describe daemonset {_shown(mps_daemon_name(pool_name))}; it "
                    f"must select the pool ({POOL_LABEL}={pool_named(pool_name)}) and tolerate its taints; pulumi up restores it")

    _check_room(node, offer, problem)
    _check_taints(node, pool, problem)
    labels = _labels(node)
    wrong = {k: v for k, v in pool.labels.items() if labels.get(k) != v}
    if wrong:
        # At most MAX_LISTED named, each cut, and the rest counted: a contract of thousands of labels made this
        # list grow as labels times nodes (issue 50: 14 times the output at 4 times the input).
        shown = ", ".join(f"{_shown(k)}={_shown(v)} (node has {_shown(labels[k])})" if k in labels
                          else f"{_shown(k)}={_shown(v)} (missing)" for k, v in list(wrong.items())[:MAX_LISTED])
        more = f" and {len(wrong) - MAX_LISTED} more" if len(wrong) > MAX_LISTED else ""
        problem("labels", f"the node lacks the contract's labels: {shown}{more}: pods selecting them never land here",
                "labels changed outside Pulumi (az aks nodepool update --labels); pulumi up puts them back")

    for kind, fix in GPU_CONDITIONS.items():
        condition = _condition(node, kind)
        if condition.get("status") == "True":
            detail = as_str(condition.get("message")) or as_str(condition.get("reason"))
            problem(f"condition:{kind}", f"node problem detector reports {kind}{': ' + detail if detail else ''}", fix)

    return NodeReport(name, is_ready, shown_count, plugin_state, problems)


def _check_taints(node: Mapping[str, Any], pool: Pool, problem: Any) -> None:
    expected = []
    for text in pool.taints:
        try:
            expected.append(parse_taint(text))
        except TaintSyntaxError:
            continue
    actual = _node_taints(node)
    # Sets, not list scans: a node or a contract with thousands of taints stays linear.
    actual_set = {_taint_id(t) for t in actual}
    expected_set = {_taint_id(t) for t in expected}
    missing = [t for t in expected if _taint_id(t) not in actual_set]
    # The contract's tolerations are one per pool taint (`components.manifests.pool_tolerations`): Equal on
    # key and value, any effect.
    tolerated = {(taint["key"], taint["value"]) for taint in expected}
    extra = [t for t in actual if _taint_id(t) not in expected_set and t["effect"] != "PreferNoSchedule"
             and not t["key"].startswith(SYSTEM_TAINT_PREFIXES + node_taint_prefixes()) and t["key"] != SPOT_LABEL
             and (t["key"], t["value"]) not in tolerated]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks {_shown_taints(missing)}")
        if extra:
            parts.append(f"carries {_shown_taints(extra)}, which the contract's tolerations do not tolerate")
        problem("taints", f"the node {' and '.join(parts)} (node taints: {_shown_taints(actual)})",
                "taints changed outside Pulumi (az aks nodepool update --node-taints); pulumi up puts the pool's "
                "taints back, and nodes made before the change keep theirs until replaced")


def _taint_id(taint: Mapping[str, str]) -> tuple[str, str, str]:
    return (taint.get("key", ""), taint.get("value", ""), taint.get("effect", ""))


class _NodesByLabel:
    """Nodes indexed by each of their labels, so finding a pool's nodes costs the nodes that carry
    its rarest label, not every node: the doctor stays linear with thousands of pools and nodes."""

    def __init__(self, nodes: Sequence[Mapping[str, Any]]) -> None:
        self.by_label: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for node in nodes:
            for key, value in _labels(node).items():
                if isinstance(value, str):
                    self.by_label.setdefault((str(key), value), []).append(node)

    def matching(self, selector: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        if not selector or not all(isinstance(value, str) for value in selector.values()):
            return []
        candidates = min((self.by_label.get((str(key), value), []) for key, value in selector.items()), key=len)
        return [node for node in candidates if all(_labels(node).get(k) == v for k, v in selector.items())]


def diagnose(platform: Platform, nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]) -> Diagnosis:
    plugin_pods = _plugin_pods(pods, platform.gpu_namespace)
    mps_pods = _plugin_pods(pods, platform.gpu_namespace, ("app.kubernetes.io/name", MPS_CONTROL_DAEMON_APP))
    dra_pods = _plugin_pods(pods, None, DRA_KUBELET_PLUGIN_LABEL)
    reports = []
    matched: set[str] = set()
    nodes_by_label = _NodesByLabel(nodes)
    # The pools as the typed contract read them (checked types; counts are ints).
    for pool_name, typed in platform.pools.items():
        # gpu-aks's pool label with the pool's name (`poolLabel` in version 2; version 1 had none).
        members = nodes_by_label.matching({POOL_LABEL: pool_name})
        first = typed.offers[0]
        report = PoolReport(pool_name, first.resource or "", first.per_node, typed.min_count or 0)
        for node in sorted(members, key=_name):
            matched.add(_name(node))
            report.nodes.append(_check_node(node, pool_name, typed, platform,
                                            dra_pods if typed.dra is not None else plugin_pods, mps_pods))
        if not members and report.min_count > 0:
            report.problems.append(Problem(pool_name, "", "nodes", f"no node carries {POOL_LABEL}="
                                           f"{pool_named(pool_name)} although minCount is {report.min_count}",
                                           "az aks nodepool show shows the pool's provisioning state; a pool made "
                                           "before gpu-aks 0.2 gets the label on pulumi up"))
        reports.append(report)
    check_metrics_exporters(platform, reports, pods)
    unmatched = sorted(_name(n) for n in nodes if _name(n) not in matched and (
        _gpu_resources_advertised(n) or is_gpu_node({str(k): as_str(v) for k, v in _labels(n).items()})))
    return Diagnosis(reports, unmatched)


def check_metrics_exporters(platform: Platform, reports: Sequence[PoolReport], pods: Sequence[Mapping[str, Any]]) -> None:
    """A Ready DCGM exporter pod on every node of each pool gpu-aks's exporter watches: the contract
    says so (`pools.<pool>.exporter`; `gpuPools.<pool>.dcgmExporter: gpu-aks` before version 3), or an
    exporter pod of the pool runs somewhere. Without one a node's GPUs send no metrics and raise no alerts."""
    key, value = EXPORTER_APP_LABEL
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    pools_with_pods: set[str] = set()
    for pod in pods:
        if as_mapping(pod.get("metadata")).get("namespace") == platform.gpu_namespace and _labels(pod).get(key) == value:
            by_node.setdefault(as_str(as_mapping(pod.get("spec")).get("nodeName")), []).append(pod)
            pools_with_pods.add(as_str(_labels(pod).get(POOL_LABEL)))
    for report in reports:
        pool = platform.pools.get(report.name)
        if (pool is None or not pool.exporter) and \
                report.name not in pools_with_pods:
            continue
        for node in report.nodes:
            exporters = by_node.get(node.name, [])
            if any(_condition(p, "Ready").get("status") == "True" for p in exporters):
                continue
            if exporters:
                message = f"DCGM exporter pod {_name(exporters[0])} is not Ready ({_pod_state(exporters[0])})"
                fix = (f"kubectl -n {platform.gpu_namespace} logs {_name(exporters[0])}; the exporter needs the GPU "
                       "driver and /var/lib/kubelet/pod-resources on the node")
            else:
                message = f"no DCGM exporter pod runs on the node (namespace {platform.gpu_namespace}): its GPUs send no " \
                          "metrics and raise no alerts"
                daemonset = _shown(f"{value}-{report.name}")
                fix = (f"kubectl -n {platform.gpu_namespace} describe daemonset {daemonset}: it must tolerate "
                       f"the pool's taints and select the pool ({POOL_LABEL}={pool_named(report.name)}); pulumi up restores it")
            node.problems.append(Problem(report.name, node.name, "dcgm-exporter", message, fix))


# --- Output ---------------------------------------------------------------------------------------


def render(diagnosis: Diagnosis) -> str:
    node_count = sum(len(pool.nodes) for pool in diagnosis.pools)
    lines = [f"gpu-aks doctor: {len(diagnosis.pools)} GPU pool(s), {node_count} GPU node(s)"]
    for pool in diagnosis.pools:
        head = f"pool {pool_named(pool.name)} ({pool.gpus_per_node} {_shown(pool.gpu_resource)} per node)"
        if pool.scaled_to_zero:
            lines.append(f"{head}: scaled to zero (minCount 0); its nodes are checked once a GPU pod brings one up")
            continue
        lines.append(f"{head}: {len(pool.nodes)} node(s)")
        for node in pool.nodes:
            verdict = "ok" if not node.problems else f"{len(node.problems)} problem(s)"
            lines.append(f"  {_shown(node.name)}: {verdict}; {escape_line(node.allocatable)} allocatable, "
                         f"device plugin {escape_line(node.device_plugin)}")
    for name in diagnosis.unmatched_gpu_nodes:
        lines.append(f"note: GPU node {_shown(name)} belongs to no pool of this platform ({POOL_LABEL} does not match)")
    problems = diagnosis.problems
    if problems:
        lines.append(f"{len(problems)} problem(s):")
        for item in problems:
            named = pool_named(item.pool)
            where = f"node {_shown(item.node)} (pool {named})" if item.node else f"pool {named}"
            lines.append(f"- {where} [{escape_line(item.check)}]: {escape_line(item.message)}\n  do: {escape_line(item.fix)}")
    else:
        lines.append("healthy: every GPU node advertises its GPUs and runs a ready device plugin")
    return safe_text("\n".join(lines))


def as_json(diagnosis: Diagnosis) -> dict[str, Any]:
    return {
        "healthy": not diagnosis.problems,
        "pools": [{"name": pool.name, "gpuResource": pool.gpu_resource, "gpusPerNode": pool.gpus_per_node,
                   "minCount": pool.min_count, "scaledToZero": pool.scaled_to_zero,
                   "nodes": [{"name": n.name, "ready": n.ready, "allocatable": n.allocatable,
                              "devicePlugin": n.device_plugin, "healthy": not n.problems} for n in pool.nodes]}
                  for pool in diagnosis.pools],
        "unmatchedGpuNodes": diagnosis.unmatched_gpu_nodes,
        "problems": [asdict(problem) for problem in diagnosis.problems],
    }


def main(argv: Iterable[str] | None = None, stdout: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.doctor", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--platform", required=True, metavar="OUTPUTS.json",
                        help="the platform stack's outputs (pulumi stack output --json)")
    parser.add_argument("--nodes", metavar="NODES.json", help="kubectl get nodes -o json (default: run kubectl)")
    parser.add_argument("--pods", metavar="PODS.json", help="kubectl get pods -A -o json (default: run kubectl)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = stdout or sys.stdout
    try:
        platform = read_platform(args.platform)
        nodes = read_list_file(args.nodes, "nodes") if args.nodes else read_list_with_kubectl("nodes")
        pods = read_list_file(args.pods, "pods") if args.pods else read_list_with_kubectl("pods")
    except (PlatformError, DoctorInputError) as error:
        print(safe_text(f"error: {error}"), file=sys.stderr)
        return 2
    diagnosis = diagnose(platform, nodes, pods)
    print(escape_json(json.dumps(as_json(diagnosis), indent=2)) if args.json else safe_text(render(diagnosis)), file=out)
    return 1 if diagnosis.problems else 0


if __name__ == "__main__":
    run_cli(main)
