"""`gpu-aks:queues`: the Kueue objects gpu-aks makes, read back by the same Kueue reader the rules use, so a job
queued to a team's queue is judged by the flavor of the pool it names (`policies/workloads/kueue.py`)."""

from __future__ import annotations

import copy
from typing import Any

from gpu_aks_policies.rule_config import QUEUE_ADMITS, SELECT_GPU_NODES, TOLERATE_GPU_TAINT

from components.manifests import kueue_objects
from components.pools import platform_pools
from tests.helpers import verdicts
from tests.test_settings import BASE, problems, settings

TEAM = {"name": "team-a", "namespaces": ["ml"], "gpus": {"gput4": 2}}


def _with(**sections: Any) -> dict[str, Any]:
    return {**copy.deepcopy(BASE), **sections}


def test_the_teams_are_read_and_their_pools_checked():
    read = settings(_with(queues={"enabled": True, "teams": [TEAM]})).queues
    assert read.enabled and read.teams[0].gpus == {"gput4": 2} and read.teams[0].namespaces == ("ml",)
    got = problems(_with(queues={"enabled": True, "teams": [{**TEAM, "gpus": {"cpu": 1, "gput4": -1}},
                                                            {**TEAM, "namespaces": ["Not_A_Label"]}]}))
    assert "gpu-aks:queues.teams[0].gpus.cpu: 'cpu' is not a GPU pool; GPU pools: gput4" in got
    assert "gpu-aks:queues.teams[0].gpus.gput4: -1 is not a whole number of GPUs" in got
    assert any(p.endswith("holds 'Not_A_Label', which is not a namespace name (a DNS label)") for p in got)
    assert "gpu-aks:queues.teams[1].name: 'team-a' is already teams[0]; a team is one ClusterQueue" in got


def test_a_pool_whose_sizes_gpu_aks_cannot_measure_is_refused_a_queue():
    """Its ClusterQueue's CPU and memory quota would be 0 (no vCPUs and memory known for the size), and Kueue would
    admit no job that asks for either."""
    raw = _with(queues={"enabled": True, "teams": [{**TEAM, "gpus": {"h100": 8}}]})
    raw["gpuPools"] = [*raw["gpuPools"], {"name": "h100", "vmSize": "Standard_ND96is_H100_v5", "maxCount": 1}]
    assert problems(raw) == ["gpu-aks:queues.teams[0].gpus.h100: 'h100' runs Standard_ND96is_H100_v5, whose vCPUs and "
                             "memory gpu-aks does not know (policies/node_capacity.py), so its ClusterQueue could give "
                             "jobs no CPU or memory quota; queue a pool of a listed size"]


def test_a_job_queued_to_a_team_is_admitted_to_its_pools_flavor_and_tolerates_through_it():
    result = settings(_with(queues={"enabled": True, "teams": [TEAM]}))
    objects = kueue_objects(result.queues.teams, platform_pools(result).gpu, {"gput4": (3860, 20 * 2**30)})
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "train", "namespace": "ml", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
               {"name": "train", "image": "i", "resources": {"requests": {"cpu": "2", "memory": "8Gi"},
                                                             "limits": {"nvidia.com/gpu": 1}}}]}}}}
    got = verdicts(job, together=[job, *objects])
    assert got[TOLERATE_GPU_TAINT] == got[SELECT_GPU_NODES] == got[QUEUE_ADMITS] == []
    other_namespace = copy.deepcopy(job)
    other_namespace["metadata"]["namespace"] = "web"
    assert verdicts(other_namespace, together=[other_namespace, *objects])[QUEUE_ADMITS] == []  # no LocalQueue there


def test_the_program_installs_kueue_and_the_queues_with_room_for_the_teams_pools():
    """The platform installs Kueue's chart at the pinned version and the objects above, each after the release
    (their CRDs come with it), with the team namespaces; the ClusterQueue's CPU and memory quota is what the
    pool's nodes give pods (the contract's allocatable less gpu-aks's DaemonSets) times its maxCount."""
    import json

    from components.queues import queue_room
    from components.settings.queues import KUEUE_CHART, KUEUE_VERSION
    from offline.mockrun import run_program
    from tests.conftest import ROOT
    from tools.stacks import config_from_stack_file

    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", "gpu-aks")
    config["gpu-aks:queues"] = json.dumps({"enabled": True, "teams": [TEAM]})
    run = run_program(ROOT, "dev", config)
    assert run.error is None, run.error
    [release] = [r for r in run.by_type("kubernetes:helm.sh/v3:Release") if r.inputs.get("chart") == KUEUE_CHART]
    assert release.inputs["version"] == KUEUE_VERSION and release.inputs["namespace"] == "kueue-system"
    objects = {(r.inputs["kind"], r.inputs["metadata"]["name"]): r for r in run.resources
               if r.type.startswith("kubernetes:kueue.x-k8s.io/")}
    assert set(objects) == {("ResourceFlavor", "gput4"), ("ClusterQueue", "team-a"), ("LocalQueue", "team-a")}
    quotas = objects[("ClusterQueue", "team-a")].inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    cpu, memory = queue_room(platform_pools(settings(BASE)).gpu)["gput4"]
    assert cpu == (3860 - 50) * 2  # a T4 node's allocatable less the device plugin, on maxCount 2 nodes
    assert {q["name"]: q["nominalQuota"] for q in quotas} == {"cpu": f"{cpu}m", "memory": str(memory),
                                                              "nvidia.com/gpu": 2}
    assert any(r.type == "kubernetes:core/v1:Namespace" and r.inputs["metadata"]["name"] == "ml" for r in run.resources)


def test_a_teams_namespace_is_neither_kubernetes_own_nor_another_gpu_aks_components():
    """The platform creates each team namespace: one Kubernetes makes (kube-system, default) exists already, and
    one another component creates (gpu-resources, kueue-system, the DRA driver's) would be two Namespace resources."""
    team = {**TEAM, "namespaces": ["kube-system", "default", "gpu-resources", "kueue-system", "nvidia-dra-driver-gpu",
                                   "ml"]}
    got = problems(_with(queues={"enabled": True, "teams": [team]}))
    assert [p.split(": ", 1)[0] for p in got] == [f"gpu-aks:queues.teams[0].namespaces[{i}]" for i in range(5)], got
    assert "'kube-system' is a namespace Kubernetes makes itself" in got[0]
    assert "'gpu-resources' is gpu-aks's own namespace (devicePlugin.namespace)" in got[2]
    assert "'kueue-system' is gpu-aks's own namespace (Kueue's own namespace)" in got[3]
    assert "'nvidia-dra-driver-gpu' is gpu-aks's own namespace (dra.namespace)" in got[4]


def test_the_dra_driver_has_a_namespace_of_its_own():
    """Where the device plugin also serves a pool, both components create their namespace."""
    raw = _with(dra={"pools": ["gput4"], "namespace": "gpu-resources"})
    assert settings(raw).dra.namespace == "gpu-resources"  # the device plugin serves no pool: one namespace
    raw["gpuPools"] = [*raw["gpuPools"], {"name": "gpua10", "vmSize": "Standard_NC8ads_A10_v4", "maxCount": 1}]
    got = problems(raw)
    assert got == ["gpu-aks:dra.namespace: 'gpu-resources' is devicePlugin.namespace too; the DRA driver needs a "
                   "namespace of its own"]
