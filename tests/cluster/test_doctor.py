"""The doctor against a real API server: the platform's own DaemonSets stored by kube-apiserver, their
pods placed by kube-scheduler on nodes shaped as AKS brings up the pools, and status reported as a
kubelet would; `python -m tools.doctor` reads it all with kubectl, as on a real cluster.

No DaemonSet controller runs, so this module does its part: for each node it creates the pod the
controller would (the template, the controller's own tolerations, an owner reference), with the
template's required node affinity narrowed to that node, and lets the real scheduler decide. The
controller's own check (`NodeShouldRunDaemonPod`: the template's taints, nodeSelector and affinity
against the node) is the scheduler's filters, so a pod left unschedulable is one the controller
would not have created, and is deleted (kubernetes `pkg/controller/daemon/daemon_controller.go`,
`util.ReplaceDaemonSetPodNodeNameNodeAffinity`, `util.AddOrUpdateDaemonPodTolerations`)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.stacks import forget_stack, outputs_of, preview_of, use_stack, whole
from tools.localcluster import ENGINES_BIN, ROOT, Client, Cluster

#: The tolerations the DaemonSet controller adds to every pod it makes
#: (kubernetes `pkg/controller/daemon/util/daemonset_util.go`, AddOrUpdateDaemonPodTolerations).
DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]
#: What a stack's preview declares, in the order it must be created, and where it is stored.
APPLIED = {"kubernetes:core/v1:Namespace": "/api/v1/namespaces",
           "kubernetes:core/v1:ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
           "kubernetes:apps/v1:DaemonSet": "/apis/apps/v1/namespaces/{ns}/daemonsets"}


def platform_objects(stack: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for type_name, path in APPLIED.items():
        for resource in preview_of(stack)["resources"]:
            if resource["type"] == type_name:
                group_version, kind = type_name.split(":")[1], type_name.split(":")[2]
                obj = {**whole(resource["inputs"]), "kind": kind,
                       "apiVersion": group_version.removeprefix("core/")}
                found.append((path.format(ns=obj["metadata"].get("namespace", "")), obj))
    return found


def apply(api: Client, stack: str) -> list[dict[str, Any]]:
    """The stack's Namespace, ConfigMaps and DaemonSets, as stored (validated and defaulted by the API
    server); returns the DaemonSets."""
    stored = []
    for path, obj in platform_objects(stack):
        name = obj["metadata"]["name"]
        if obj["kind"] == "Namespace":
            # Kept between tests: without the namespace controller a deleted Namespace never goes.
            api.ensure_namespace(name, obj["metadata"].get("annotations"), obj["metadata"].get("labels"))
            continue
        if api.exists(f"{path}/{name}"):
            api.delete(f"{path}/{name}")
            api.wait_for(f"{path}/{name} to go", lambda p=f"{path}/{name}": not api.exists(p))
        stored.append(api.create(path, obj))
    return [obj for obj in stored if obj["kind"] == "DaemonSet"]


def _pinned(affinity: Mapping[str, Any] | None, node: str) -> dict[str, Any]:
    """The template's affinity, its required node terms each narrowed to `node`."""
    affinity = copy.deepcopy(dict(affinity or {}))
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    pin = {"key": "metadata.name", "operator": "In", "values": [node]}
    terms = required.get("nodeSelectorTerms") or [{}]
    required["nodeSelectorTerms"] = [{**term, "matchFields": [*term.get("matchFields", []), pin]} for term in terms]
    return affinity


def run_daemonset(api: Client, daemonset: Mapping[str, Any], ready: bool = True) -> list[str]:
    """What the DaemonSet controller and the kubelets would make of it: a pod on each node that
    should run it, Running and Ready (or failing to start, `ready=False`). Returns those nodes."""
    metadata, template = daemonset["metadata"], daemonset["spec"]["template"]
    namespace, name = metadata["namespace"], metadata["name"]
    api.ensure_namespace(namespace)
    nodes = []
    for index, node in enumerate(api.get("/api/v1/nodes")["items"]):
        node_name = node["metadata"]["name"]
        spec = copy.deepcopy(template["spec"])
        spec["affinity"] = _pinned(spec.get("affinity"), node_name)
        spec["tolerations"] = [*(spec.get("tolerations") or []), *DAEMON_TOLERATIONS]
        pod = {"apiVersion": "v1", "kind": "Pod", "spec": spec,
               "metadata": {"name": f"{name[:50].rstrip('-')}-{index}", "namespace": namespace,
                            "labels": template["metadata"].get("labels", {}),
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": name,
                                                 "uid": metadata["uid"], "controller": True,
                                                 "blockOwnerDeletion": True}]}}
        path = f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}"
        api.create(f"/api/v1/namespaces/{namespace}/pods", pod)
        decided: dict[str, str] = {}

        def settled(path: str = path, decided: dict[str, str] = decided) -> bool:
            current = api.get(path)
            if current["spec"].get("nodeName"):
                decided["node"] = current["spec"]["nodeName"]
                return True
            return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                       for c in current.get("status", {}).get("conditions") or [])

        api.wait_for(f"the scheduler to decide on {path}", settled, timeout=30)
        if not decided:
            api.delete(path, force=True)
            continue
        nodes.append(node_name)
        report_pod_status(api, path, ready)
    count = len(nodes)
    api.patch_status(f"/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}", {
        "currentNumberScheduled": count, "desiredNumberScheduled": count, "numberMisscheduled": 0,
        "numberReady": count if ready else 0, "numberAvailable": count if ready else 0,
        "updatedNumberScheduled": count, "observedGeneration": metadata.get("generation", 1)})
    return nodes


def report_pod_status(api: Client, path: str, ready: bool) -> None:
    """The status a kubelet reports for a pod whose containers run (or crash at start)."""
    pod = api.get(path)
    now = "2026-11-22T00:00:00Z"
    statuses = []
    for container in pod["spec"]["containers"]:
        state = ({"running": {"startedAt": now}} if ready else
                 {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}})
        statuses.append({"name": container["name"], "image": container["image"], "imageID": "", "ready": ready,
                         "started": ready, "restartCount": 0 if ready else 7, "state": state})
    flag = "True" if ready else "False"
    api.patch_status(path, {
        "phase": "Running", "hostIP": "10.224.0.4", "podIP": "10.244.0.10", "startTime": now,
        "conditions": [{"type": kind, "status": "True" if kind in ("PodScheduled", "Initialized") else flag,
                        "lastTransitionTime": now} for kind in ("PodScheduled", "Initialized", "ContainersReady",
                                                                "Ready")],
        "containerStatuses": statuses})


def doctor(cluster: Cluster, stack: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """`python -m tools.doctor --platform OUTPUTS.json --json`, reading the cluster with kubectl."""
    outputs = tmp_path / f"outputs-{stack}.json"
    outputs.write_text(json.dumps(outputs_of(stack)))
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig),
           "PATH": f"{os.environ.get('GPU_AKS_ENGINES_BIN') or ENGINES_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "tools.doctor", "--platform", str(outputs), "--json"], cwd=ROOT,
                            env=env, capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _clear_pods(api: Client, namespace: str) -> None:
    if not api.exists(f"/api/v1/namespaces/{namespace}"):
        return
    for pod in api.get(f"/api/v1/namespaces/{namespace}/pods")["items"]:
        api.delete(f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}", force=True)


@pytest.fixture
def platform(api: Client) -> Iterator[Client]:
    """Nodes this test may change: registered afresh before, deleted after."""
    forget_stack(api)
    yield api
    _clear_pods(api, "gpu-resources")
    for path in ("/apis/apps/v1/namespaces/gpu-resources/daemonsets", "/api/v1/namespaces/gpu-resources/configmaps"):
        for item in api.get(path)["items"]:
            api.delete(f"{path}/{item['metadata']['name']}")
    forget_stack(api)


def _pool(report: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next(pool for pool in report["pools"] if pool["name"] == name)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_healthy_platform_is_healthy_and_its_plugins_run_on_its_gpu_pools_only(cluster, platform, stack, tmp_path):
    api = platform
    use_stack(api, stack)
    outputs = outputs_of(stack)
    gpu_nodes = {n["metadata"]["name"] for n in api.get("/api/v1/nodes")["items"]
                 if any(n["metadata"]["labels"].get("gpu-aks.io/pool") == p for p in outputs["gpuPools"])}
    placed: set[str] = set()
    for daemonset in apply(api, stack):
        nodes = run_daemonset(api, daemonset)
        assert set(nodes) <= gpu_nodes, f"{daemonset['metadata']['name']} runs off the GPU pools: {nodes}"
        placed |= set(nodes)
    assert placed == gpu_nodes, "every GPU node runs the platform's DaemonSets"
    code, report = doctor(cluster, stack, tmp_path)
    assert report["problems"] == [] and code == 0
    for name in outputs["gpuPools"]:
        pool = _pool(report, name)
        assert len(pool["nodes"]) >= 2 and all(node["healthy"] for node in pool["nodes"])


def test_a_pool_whose_device_plugin_does_not_start_is_reported_per_node(cluster, platform, tmp_path):
    api = platform
    use_stack(api, "dev")
    for daemonset in apply(api, "dev"):
        run_daemonset(api, daemonset, ready=False)
    code, report = doctor(cluster, "dev", tmp_path)
    assert code == 1
    nodes = {node["name"] for node in _pool(report, "gput4")["nodes"]}
    flagged = {p["node"] for p in report["problems"] if "CrashLoopBackOff" in p["message"]}
    assert flagged == nodes and len(nodes) == 2, report["problems"]


def test_a_node_advertising_no_gpus_is_reported(cluster, platform, tmp_path):
    api = platform
    use_stack(api, "dev")
    for daemonset in apply(api, "dev"):
        run_daemonset(api, daemonset)
    broken = sorted(node["name"] for node in _pool(doctor(cluster, "dev", tmp_path)[1], "gput4")["nodes"])[0]
    status = api.get(f"/api/v1/nodes/{broken}")["status"]
    allocatable = {k: v for k, v in status["allocatable"].items() if k != "nvidia.com/gpu"}
    # A strategic merge patch keeps keys it is not given: replace the whole map, as a kubelet's update does.
    api.patch(f"/api/v1/nodes/{broken}/status", [
        {"op": "replace", "path": "/status/allocatable", "value": allocatable},
        {"op": "replace", "path": "/status/capacity", "value": allocatable}], "json")
    code, report = doctor(cluster, "dev", tmp_path)
    assert code == 1
    assert [p["node"] for p in report["problems"]] == [broken], report["problems"]
    assert "nvidia.com/gpu" in report["problems"][0]["message"]


def test_kubectl_sees_the_nodes_the_doctor_reads(cluster, platform):
    use_stack(platform, "dev")
    result = subprocess.run([str(Path(os.environ.get("GPU_AKS_ENGINES_BIN") or ENGINES_BIN) / "kubectl"),
                             "--kubeconfig", str(cluster.kubeconfig), "get", "nodes", "-o", "json"],
                            capture_output=True, text=True, check=True, timeout=60)
    nodes = json.loads(result.stdout)["items"]
    assert len(nodes) == 4 and all(any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
                                   and not any(t["key"].startswith("node.kubernetes.io/") for t in n["spec"].get("taints") or [])
                                   for n in nodes)

