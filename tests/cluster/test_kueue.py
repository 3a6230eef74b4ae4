"""Kueue's own controller (sigs.k8s.io/kueue v0.17.0, `testbed.localcluster.kueue`) against the explainer and
the checker (#48): for each queued Job, what the model says of it (`policies/workloads/kueue.py`) is what Kueue,
kube-controller-manager's Job controller and kube-scheduler do with it.

The model's answer is a set of outcomes, one per way Kueue may admit the Job (one per flavor it may assign):
"not admitted" when the queue never admits it, else where its pod lands ("bound to <pool>") or "unschedulable".
Kueue's choice among flavors depends on the quota in use, so the one outcome the cluster shows must be one of
them; every case here but one has a single possible outcome. The checker's `queued-gpu-pods-are-admitted`
must fail exactly for the Jobs Kueue leaves unadmitted.

The nodes are the dev stack's, giving pods what the contract says (tests/cluster/room.py): the GPU pool
`gput4` (Standard_NC4as_T4_v3, tainted `sku=gpu:NoSchedule`) and the CPU pool `cpu`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from gpu_aks_policies.explain import explain
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.rule_config import QUEUE_ADMITS, TOLERATE_GPU_TAINT
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import context_of

from testbed.localcluster import POOL_ANNOTATION, ApiError, Client, Cluster
from testbed.localcluster.kueue import running_kueue
from tests.cluster.room import forget_contract_nodes, use_contract_nodes
from tests.cluster.stacks import no_policy, outputs_of
from tests.helpers import findings

KUEUE_API = "kueue.x-k8s.io/v1beta2"
KUEUE_PATH = "/apis/kueue.x-k8s.io/v1beta2"
NAMESPACE = "queued"
SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
T4 = {"gpu-aks.io/pool": "gput4"}
NOT_ADMITTED = "not admitted"
UNSCHEDULABLE = "unschedulable"


def _flavor(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


FLAVORS = [
    _flavor("t4-tolerating", nodeLabels=T4, tolerations=[SKU]),
    _flavor("t4-bare", nodeLabels=T4),
    _flavor("t4-tainted", nodeLabels=T4, nodeTaints=[{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]),
    _flavor("cpu-pool", nodeLabels={"gpu-aks.io/pool": "cpu"}),
]
COVERED = ("cpu", "memory", "nvidia.com/gpu")


def _cluster_queue(name: str, flavors: Sequence[str], covered: Sequence[str] = COVERED,
                   selector: Mapping[str, Any] | None = None) -> dict[str, Any]:
    quotas = [{"name": r, "nominalQuota": "1Ti" if r == "memory" else 100} for r in covered]
    return {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": dict(selector or {}), "resourceGroups": [
                {"coveredResources": list(covered), "flavors": [{"name": f, "resources": quotas} for f in flavors]}]}}


#: Case -> its ClusterQueue (a LocalQueue of the case's name in NAMESPACE points at it), and what its Job asks.
CASES: dict[str, tuple[dict[str, Any], Mapping[str, str]]] = {
    # The flavor's toleration is written into the pod on admission (pkg/podset/podset.go, Merge).
    "tolerating": (_cluster_queue("tolerating", ["t4-tolerating"]), {}),
    # Admitted (the flavor declares no taint), then kept off the tainted node by kube-scheduler.
    "bare": (_cluster_queue("bare", ["t4-bare"]), {}),
    # The flavor's nodeTaints are not tolerated: Kueue passes it over and admits nothing.
    "tainted": (_cluster_queue("tainted", ["t4-tainted"]), {}),
    # Admitted to the CPU pool's flavor, whose nodes have no GPU.
    "cpu": (_cluster_queue("cpu", ["cpu-pool"]), {}),
    # The queue covers only GPUs; the Job asks CPU and memory too: "resource unavailable in ClusterQueue".
    "gpu-only": (_cluster_queue("gpu-only", ["t4-tolerating"], covered=("nvidia.com/gpu",)), {}),
    # The namespace lacks the label the queue selects.
    "selector": (_cluster_queue("selector", ["t4-tolerating"], selector={"matchLabels": {"team": "ml"}}), {}),
    # A flavor that does not exist: the ClusterQueue is inactive.
    "missing-flavor": (_cluster_queue("missing-flavor", ["no-such-flavor"]), {}),
    # Either flavor may be chosen: bare first, so Kueue takes it while it has quota.
    "either": (_cluster_queue("either", ["t4-bare", "t4-tolerating"]), {}),
    # More CPU than a T4 node gives pods (3.86 CPUs less the device plugin's 50m): admitted, never bound.
    "too-big": (_cluster_queue("too-big", ["t4-tolerating"]), {"cpu": "3900m"}),
    # What is left of it, with the device plugin's pod on the node: bound.
    "just-fits": (_cluster_queue("just-fits", ["t4-tolerating"]), {"cpu": "3810m"}),
}


def _job(case: str, requests: Mapping[str, str]) -> dict[str, Any]:
    asked = {"cpu": "500m", "memory": "512Mi", **requests}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": case, "namespace": NAMESPACE, "labels": {"kueue.x-k8s.io/queue-name": case}},
            "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "train", "image": "i", "resources": {"requests": asked,
                                                              "limits": {"nvidia.com/gpu": 1}}}]}}}}


def _local_queue(case: str) -> dict[str, Any]:
    return {"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": case, "namespace": NAMESPACE},
            "spec": {"clusterQueue": case}}


NAMESPACE_OBJECT = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def setup_objects() -> list[dict[str, Any]]:
    return [NAMESPACE_OBJECT, *FLAVORS, *(queue for queue, _ in CASES.values()), *map(_local_queue, CASES)]


# --- the model ------------------------------------------------------------------------------------

def model_outcomes(job: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every outcome the explainer allows the Job's pod."""
    platform = platform_from_outputs(outputs_of("dev"))
    config = default_rule_config()[TOLERATE_GPU_TAINT]
    outcomes: set[str] = set()
    for explanation in explain(job, platform, config, context_of([*objects, job])):
        if explanation.unjudged:
            outcomes.add(NOT_ADMITTED)
        elif explanation.lands_on:
            outcomes.update(f"bound to {pool}" for pool in explanation.lands_on)
        else:
            outcomes.add(UNSCHEDULABLE)
    return outcomes


def checker_says_admitted(job: Mapping[str, Any], objects: Sequence[Mapping[str, Any]]) -> bool:
    return not [f for f in findings(job, QUEUE_ADMITS, together=objects) if f.decided]


# --- the cluster ----------------------------------------------------------------------------------

def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), {})


def cluster_outcome(api: Client, name: str) -> tuple[str, str]:
    """What became of the Job: NOT_ADMITTED (Kueue said why), UNSCHEDULABLE (kube-scheduler said why) or
    "bound to <pool>"; with the message."""
    result: dict[str, tuple[str, str]] = {}
    uid = api.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{name}")["metadata"]["uid"]

    def settled() -> bool:
        workloads = [w for w in api.get(f"{KUEUE_PATH}/namespaces/{NAMESPACE}/workloads")["items"]
                     if any(o.get("uid") == uid for o in w["metadata"].get("ownerReferences") or [])]
        if not workloads:
            return False
        reserved = _condition(workloads[0], "QuotaReserved")
        if reserved.get("status") == "False" and reserved.get("message"):
            result["outcome"] = (NOT_ADMITTED, str(reserved["message"]))
            return True
        if _condition(workloads[0], "Admitted").get("status") != "True":
            return False
        for pod in api.get(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=batch.kubernetes.io/job-name={name}")[
                "items"]:
            node = pod["spec"].get("nodeName")
            if node:
                pool = api.get(f"/api/v1/nodes/{node}")["metadata"]["annotations"].get(POOL_ANNOTATION, node)
                result["outcome"] = (f"bound to {pool}", "")
                return True
            scheduled = _condition(pod, "PodScheduled")
            if scheduled.get("status") == "False":
                result["outcome"] = (UNSCHEDULABLE, str(scheduled.get("message", "")))
                return True
        return False

    api.wait_for(f"Kueue and the scheduler to decide on Job {name}", settled, timeout=60, every=0.2)
    return result["outcome"]


def _create(api: Client, obj: Mapping[str, Any]) -> None:
    kind = obj["kind"]
    if kind == "Namespace":
        api.ensure_namespace(obj["metadata"]["name"])
        return
    plural = {"ResourceFlavor": "resourceflavors", "ClusterQueue": "clusterqueues", "LocalQueue": "localqueues",
              "Job": "jobs"}[kind]
    base = "/apis/batch/v1" if kind == "Job" else KUEUE_PATH
    namespace = obj["metadata"].get("namespace")
    api.create(f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}", obj)


def _delete_job(api: Client, name: str) -> None:
    api.delete(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{name}?propagationPolicy=Background")
    pods = f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=batch.kubernetes.io/job-name={name}"
    for pod in api.get(pods)["items"]:
        api.delete(f"/api/v1/namespaces/{NAMESPACE}/pods/{pod['metadata']['name']}", force=True)
    api.wait_for(f"Job {name}'s pods to go", lambda: not api.get(pods)["items"], timeout=30, every=0.1)


@pytest.fixture(scope="module")
def kueue(cluster: Cluster, api: Client) -> Iterator[None]:
    use_contract_nodes(api, "dev", outputs_of("dev"))
    no_policy(api)
    try:
        with running_kueue(cluster):
            for obj in setup_objects():
                _create(api, obj)
            for queue, _ in CASES.values():
                name = queue["metadata"]["name"]
                api.wait_for(f"ClusterQueue {name} to say whether it is active", lambda name=name: bool(
                    _condition(api.get(f"{KUEUE_PATH}/clusterqueues/{name}"), "Active")), timeout=60, every=0.2)
            yield
    finally:
        forget_contract_nodes(api)


def test_kueue_admits_and_the_scheduler_binds_queued_jobs_where_the_model_says(api, kueue):
    """One Job at a time (the node has one GPU), each deleted with its pods before the next."""
    objects = setup_objects()
    disagreements = []
    seen: dict[str, str] = {}
    for case, (_, requests) in CASES.items():
        job = _job(case, requests)
        expected = model_outcomes(job, objects)
        _create(api, job)
        try:
            outcome, message = cluster_outcome(api, case)
        finally:
            _delete_job(api, case)
        seen[case] = outcome
        if outcome not in expected:
            disagreements.append(f"{case}: the cluster: {outcome} ({message[:300]}); the model: {sorted(expected)}")
        if checker_says_admitted(job, objects) != (outcome != NOT_ADMITTED):
            disagreements.append(f"{case}: queued-gpu-pods-are-admitted says "
                                 f"{'admitted' if checker_says_admitted(job, objects) else 'never admitted'}, "
                                 f"the cluster: {outcome} ({message[:300]})")
    assert disagreements == []
    # The cases cover each outcome, so agreement is not agreement on one answer.
    assert seen["tolerating"] == seen["just-fits"] == "bound to gput4"
    assert seen["bare"] == seen["cpu"] == seen["too-big"] == UNSCHEDULABLE
    assert {seen[c] for c in ("tainted", "gpu-only", "selector", "missing-flavor")} == {NOT_ADMITTED}


def test_kueues_webhook_suspends_a_queued_job_on_create(api, kueue):
    """Kueue's own Job webhook runs (the admission the model assumes: a queued Job runs nothing until admitted):
    a Job created unsuspended in a queue whose ClusterQueue is inactive stays suspended."""
    job = _job("missing-flavor", {})
    job["metadata"]["name"] = "webhook-probe"
    try:
        created = api.create(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs", job)
    except ApiError as error:  # pragma: no cover - reported as the failure
        pytest.fail(f"the API server refused the Job: {error.message}")
    _delete_job(api, "webhook-probe")
    assert created["spec"].get("suspend") is True
