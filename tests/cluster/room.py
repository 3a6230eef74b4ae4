"""Nodes with gpu-aks's DaemonSets running on them (#48), for the cluster tests that compare CPU and memory fit.

`testbed.localcluster.pool_nodes` registers each node with the allocatable its offer publishes
(`offers[].allocatable`: the VM size's vCPUs and memory less AKS's, or on a NAP pool Karpenter's,
reservations). Here what gpu-aks's own DaemonSets ask of each pool's nodes (`daemonSet*`) runs there too, as
the pods of one DaemonSet, made by kube-controller-manager's DaemonSet controller and counted by
kube-scheduler as any pod is.

What this proves is the model's arithmetic and placement against kube-scheduler's (NodeResourcesFit over the
pod's requests, init containers, sidecars and overhead, the DaemonSets' pods, the NAP pool's choice of size),
not the reservations themselves: those come from AKS's and Karpenter's documentation and code
(`policies/node_capacity.py`), and the doctor compares them with a live cluster's nodes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpu_aks_policies.contract import PlatformContract

from testbed.localcluster import Client, register, stack_nodes
from tests.cluster import stacks

DAEMONS_NAMESPACE = "gpu-aks-daemons"


def daemon_sets(outputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per pool whose nodes run gpu-aks's DaemonSets, one DaemonSet whose pod asks what they ask together."""
    contract = PlatformContract.from_json(outputs)
    found = []
    for pool in contract.pool_models().values():
        room = next((o.allocatable for o in pool.offers if o.allocatable is not None), None)
        if room is None or not (room.daemon_set_cpu_millicores or room.daemon_set_memory_bytes):
            continue
        labels = {"app": f"daemons-{pool.name}"}
        requests = {"cpu": f"{room.daemon_set_cpu_millicores}m", "memory": str(room.daemon_set_memory_bytes or 0)}
        found.append({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": f"daemons-{pool.name}", "namespace": DAEMONS_NAMESPACE},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "nodeSelector": {"gpu-aks.io/pool": pool.name}, "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "daemons", "image": "i", "resources": {"requests": requests}}]}}}})
    return found


def use_contract_nodes(api: Client, name: str, outputs: Mapping[str, Any]) -> None:
    """Registers `outputs`' nodes as the contract says they give pods, with gpu-aks's DaemonSets running on
    them, replacing any other nodes (`stacks.use_stack` registers its own again afterwards)."""
    if stacks._current.get("stack") == f"room:{name}":
        return
    forget_contract_nodes(api)
    api.ensure_namespace(DAEMONS_NAMESPACE)
    names = register(api, stack_nodes(outputs))
    expected = 0
    for daemon_set in daemon_sets(outputs):
        api.create(f"/apis/apps/v1/namespaces/{DAEMONS_NAMESPACE}/daemonsets", daemon_set)
        pool = daemon_set["spec"]["template"]["spec"]["nodeSelector"]["gpu-aks.io/pool"]
        expected += sum(1 for node in names if api.get(f"/api/v1/nodes/{node}")["metadata"]["annotations"]
                        .get("gpu-aks.io/test-pool") == pool)

    def running() -> bool:
        pods = api.get(f"/api/v1/namespaces/{DAEMONS_NAMESPACE}/pods")["items"]
        return sum(1 for p in pods if p.get("spec", {}).get("nodeName")
                   and p.get("status", {}).get("phase") == "Running") >= expected

    api.wait_for(f"{expected} DaemonSet pods to run", running, timeout=60, every=0.2)
    stacks._current["stack"] = f"room:{name}"


def forget_contract_nodes(api: Client) -> None:
    """No DaemonSet of `use_contract_nodes` and no node: the next test registers the nodes it needs."""
    if api.exists(f"/api/v1/namespaces/{DAEMONS_NAMESPACE}"):
        for item in api.get(f"/apis/apps/v1/namespaces/{DAEMONS_NAMESPACE}/daemonsets")["items"]:
            api.delete(f"/apis/apps/v1/namespaces/{DAEMONS_NAMESPACE}/daemonsets/{item['metadata']['name']}")
    stacks.forget_stack(api)
