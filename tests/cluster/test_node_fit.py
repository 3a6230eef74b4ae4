"""CPU and memory fit against kube-scheduler (#48): on nodes that give pods what the contract says, with
gpu-aks's DaemonSets running on them (tests/cluster/room.py), a GPU pod lands where the explainer says, and
`--platform` (`gpu-pods-fit-a-pool`) says it fits no pool exactly when kube-scheduler leaves it unschedulable.

Per GPU pool and VM size: a pod asking exactly what a node of that size has left for pods, and one asking a
millicore or a MiB more (which still lands where a larger size of the pool has room: a NAP pool's), counted as
kube-scheduler counts a pod's requests (k8s.io/component-helpers `resource.PodRequests`): the app containers
summed, an init container's request when it is larger, a restartable init container (sidecar) added to both."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from gpu_aks_policies.contract import PlatformContract
from gpu_aks_policies.explain import explain
from gpu_aks_policies.fit import check_fit, platform_from_outputs
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import context_of

from tests.cluster.room import forget_contract_nodes, use_contract_nodes
from tests.cluster.stacks import no_policy, outputs_of
from tests.cluster.test_scheduler import REFUSED, UNSCHEDULABLE, scheduled

MIB = 1024 * 1024
FIT_STACKS = ("dev", "nap")


def _container(name: str, cpu_milli: int, memory: int, gpu: bool = False, **extra: Any) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": f"{cpu_milli}m", "memory": str(memory)}}
    if gpu:
        resources["limits"] = {"nvidia.com/gpu": 1}
    return {"name": name, "image": "i", "resources": resources, **extra}


def _pod(name: str, pool: Mapping[str, Any], cpu_milli: int, memory: int, shape: str) -> dict[str, Any]:
    """A pod of `pool` asking `cpu_milli` and `memory` in all, laid out as `shape` says."""
    half_cpu, half_memory = cpu_milli // 2, memory // 2
    spec: dict[str, Any] = {"tolerations": [{"operator": "Exists"}], "nodeSelector": dict(pool["nodeSelector"])}
    if shape == "app":
        spec["containers"] = [_container("app", cpu_milli, memory, gpu=True)]
    elif shape == "init":  # the init container asks it all; the app less
        spec["initContainers"] = [_container("init", cpu_milli, memory)]
        spec["containers"] = [_container("app", half_cpu, half_memory, gpu=True)]
    else:  # "sidecar": a restartable init container runs beside the app: both count
        spec["initContainers"] = [_container("sidecar", cpu_milli - half_cpu, memory - half_memory,
                                             restartPolicy="Always")]
        spec["containers"] = [_container("app", half_cpu, half_memory, gpu=True)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team"}, "spec": spec}


def cases(outputs: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    contract = PlatformContract.from_json(outputs)
    written = outputs["gpuPools"]
    for pool in contract.pool_models().values():
        if pool.role != "gpu":
            continue
        for index, offer in enumerate(pool.offers):
            room = offer.allocatable.for_pods if offer.allocatable else None
            if room is None or room.cpu_milli is None or room.memory is None:
                continue
            for shape in ("app", "init", "sidecar"):
                for what, cpu, memory in (("all", room.cpu_milli, room.memory),
                                          ("cpu+1m", room.cpu_milli + 1, room.memory),
                                          ("memory+1Mi", room.cpu_milli, room.memory + MIB)):
                    name = f"{pool.name}-{index}-{shape}-{what}".lower().replace("+", "-")
                    yield (f"{pool.name} {offer.vm_size} {shape} asks {what}",
                           _pod(name, written[pool.name], cpu, memory, shape))


@pytest.fixture(scope="module")
def nodes(api):
    yield
    forget_contract_nodes(api)


@pytest.mark.parametrize("stack", FIT_STACKS)
def test_pods_sized_to_a_node_land_where_the_explainer_says(api, nodes, stack):
    outputs = outputs_of(stack)
    use_contract_nodes(api, stack, outputs)
    no_policy(api)
    platform = platform_from_outputs(outputs)
    configs = default_rule_config()
    disagreements, outcomes = [], set()
    for source, pod in cases(outputs):
        context = context_of([pod])
        [explanation] = explain(pod, platform, configs["gpu-pods-tolerate-gpu-taint"], context)
        fits_none = bool(check_fit([explanation.pod], "Pod", pod["metadata"]["name"], platform,
                                   configs["gpu-pods-fit-a-pool"], context))
        pool, message = scheduled(api, pod)
        outcomes.add(pool == UNSCHEDULABLE)
        lands = pool not in (UNSCHEDULABLE, REFUSED)
        if pool == REFUSED or (lands and pool not in explanation.lands_on) or (not lands and explanation.lands_on):
            disagreements.append(f"{source}: kube-scheduler: {pool} ({message[:200]}); the explainer: "
                                 f"{'/'.join(explanation.lands_on) or 'fits no pool'}")
        if fits_none == lands:
            disagreements.append(f"{source}: --platform says it {'fits no pool' if fits_none else 'fits'}, "
                                 f"kube-scheduler: {pool}")
    assert disagreements == []
    assert outcomes == {True, False}, "both outcomes are compared"
