"""The doctor against a real cluster: the platform's own DaemonSets stored by kube-apiserver, their pods
made by kube-controller-manager's DaemonSet controller, placed by kube-scheduler on nodes shaped as AKS
brings up the pools, and run by kwok as their kubelets would; `python -m tools.doctor` reads it all with
kubectl, as on a real cluster. Nothing here writes a node's or a pod's status: a pod that does not start
is one labelled for kwok's crash-loop stage (testbed/localcluster/stages/pod-crash-loop.yaml), a node
whose device plugin advertises no GPU is one registered without them."""

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

from testbed.build import BIN, ROOT
from testbed.localcluster import Client, Cluster, register, stack_nodes
from tests.cluster.stacks import forget_stack, outputs_of, preview_of, use_stack, whole

#: What a stack's preview declares, in the order it must be created, and where it is stored.
APPLIED = {"kubernetes:core/v1:Namespace": "/api/v1/namespaces",
           "kubernetes:core/v1:ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
           "kubernetes:apps/v1:DaemonSet": "/apis/apps/v1/namespaces/{ns}/daemonsets"}
#: The label kwok's crash-loop stage of this repository selects.
CRASH_LOOP = {"crash-loop.stage.gpu-aks.io": "true"}


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


def apply(api: Client, stack: str, pod_labels: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The stack's Namespace, ConfigMaps and DaemonSets, as stored (validated and defaulted by the API
    server), with `pod_labels` added to each DaemonSet's pod template; returns the DaemonSets once the
    DaemonSet controller has made every pod they want and observed their state."""
    stored = []
    for path, obj in platform_objects(stack):
        if obj["kind"] == "Namespace":
            api.ensure_namespace(obj["metadata"]["name"], obj["metadata"].get("annotations"),
                                 obj["metadata"].get("labels"))
            continue
        if obj["kind"] == "DaemonSet" and pod_labels:
            obj = copy.deepcopy(obj)
            obj["spec"]["template"]["metadata"].setdefault("labels", {}).update(pod_labels)
        stored.append(api.create(path, obj))
    daemonsets = [obj for obj in stored if obj["kind"] == "DaemonSet"]
    for daemonset in daemonsets:
        api.wait_for(f"DaemonSet {daemonset['metadata']['name']} to settle",
                     lambda d=daemonset: settled(api, d, ready=not pod_labels), timeout=60, every=0.2)
    return daemonsets


def settled(api: Client, daemonset: Mapping[str, Any], ready: bool = True) -> bool:
    """The DaemonSet controller has seen this generation and made a pod on every node that should run one,
    and it counts them all Ready; with `ready=False`, every one of its pods is crash-looping instead."""
    metadata = daemonset["metadata"]
    status = api.get(f"/apis/apps/v1/namespaces/{metadata['namespace']}/daemonsets/{metadata['name']}").get("status", {})
    desired = status.get("desiredNumberScheduled", 0)
    if not (status.get("observedGeneration", 0) >= metadata.get("generation", 1) and desired > 0
            and status.get("currentNumberScheduled") == desired and status.get("updatedNumberScheduled") == desired):
        return False
    if ready:
        return bool(status.get("numberReady") == desired)
    pods = owned_pods(api, daemonset)
    return len(pods) == desired and all(
        (container.get("state") or {}).get("waiting", {}).get("reason") == "CrashLoopBackOff"
        for pod in pods for container in (pod.get("status") or {}).get("containerStatuses") or [{}])


def owned_pods(api: Client, daemonset: Mapping[str, Any]) -> list[dict[str, Any]]:
    metadata = daemonset["metadata"]
    return [pod for pod in api.get(f"/api/v1/namespaces/{metadata['namespace']}/pods")["items"]
            if any(owner.get("uid") == metadata["uid"] for owner in pod["metadata"].get("ownerReferences") or [])]


def daemon_nodes(api: Client, daemonset: Mapping[str, Any]) -> list[str]:
    """The nodes the DaemonSet's pods are bound to."""
    return sorted(pod["spec"].get("nodeName", "") for pod in owned_pods(api, daemonset))


def doctor(cluster: Cluster, stack: str, tmp_path: Path) -> tuple[int, dict[str, Any]]:
    """`python -m tools.doctor --platform OUTPUTS.json --json`, reading the cluster with kubectl."""
    outputs = tmp_path / f"outputs-{stack}.json"
    outputs.write_text(json.dumps(outputs_of(stack)))
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig),
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "tools.doctor", "--platform", str(outputs), "--json"], cwd=ROOT,
                            env=env, capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.fixture
def platform(api: Client) -> Iterator[Client]:
    """Nodes this test may change, registered afresh before; after, the platform's namespace is deleted (the
    namespace controller removes its DaemonSets, whose pods the garbage collector removes) and the nodes."""
    forget_stack(api)
    yield api
    api.delete("/api/v1/namespaces/gpu-resources")
    api.wait_for("namespace gpu-resources to go", lambda: not api.exists("/api/v1/namespaces/gpu-resources"),
                 timeout=120, every=0.2)
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
        nodes = daemon_nodes(api, daemonset)
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
    apply(api, "dev", pod_labels=CRASH_LOOP)
    code, report = doctor(cluster, "dev", tmp_path)
    assert code == 1
    nodes = {node["name"] for node in _pool(report, "gput4")["nodes"]}
    flagged = {p["node"] for p in report["problems"] if "CrashLoopBackOff" in p["message"]}
    assert flagged == nodes and len(nodes) == 2, report["problems"]


def test_a_node_advertising_no_gpus_is_reported(cluster, platform, tmp_path):
    api = platform
    nodes = stack_nodes(outputs_of("dev"), copies=2)
    broken = sorted(node["metadata"]["name"] for node in nodes
                    if "nvidia.com/gpu" in node["status"]["allocatable"])[0]
    for node in nodes:  # its device plugin advertises nothing: its kubelet registers no GPU
        if node["metadata"]["name"] == broken:
            for resources in (node["status"]["allocatable"], node["status"]["capacity"]):
                del resources["nvidia.com/gpu"]
    register(api, nodes)
    apply(api, "dev")
    code, report = doctor(cluster, "dev", tmp_path)
    assert code == 1
    assert [p["node"] for p in report["problems"]] == [broken], report["problems"]
    assert "nvidia.com/gpu" in report["problems"][0]["message"]


def test_kubectl_sees_the_nodes_the_doctor_reads(cluster, platform):
    use_stack(platform, "dev")
    result = subprocess.run([str(BIN / "kubectl"),
                             "--kubeconfig", str(cluster.kubeconfig), "get", "nodes", "-o", "json"],
                            capture_output=True, text=True, check=True, timeout=60)
    nodes = json.loads(result.stdout)["items"]
    assert len(nodes) == 4 and all(any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"]["conditions"])
                                   and not any(t["key"].startswith("node.kubernetes.io/") for t in n["spec"].get("taints") or [])
                                   for n in nodes)

