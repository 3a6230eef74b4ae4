"""Node resource fit: what a pod asks of one node (`pod_requests`, kube-scheduler's `NodeResourcesFit`) and
what one node of a size gives pods (`node_capacity`, AKS's and Karpenter's reservations). The cases are the
owners' own: component-helpers v0.37.2 `resource/helpers_test.go` (`TestPodResourceRequests`), the AKS
docs' worked examples, and karpenter-provider-azure's `Tax Calculator` suite (`suite_test.go`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from gpu_aks_policies.check import LoadedObject, check_objects
from gpu_aks_policies.explain import explain
from gpu_aks_policies.fit import platform_from_outputs, render
from gpu_aks_policies.node_capacity import (
    GIB,
    MIB,
    agent_pool_allocatable,
    aks_kube_reserved_memory,
    daemon_set_requests,
    default_max_pods,
    karpenter_kube_reserved_memory,
    kube_reserved_cpu_milli,
    node_pool_allocatable,
    vm_shape,
)
from gpu_aks_policies.pod_requests import cpus, gib, spec_requests
from gpu_aks_policies.podspecs import UNKNOWN
from gpu_aks_policies.rules import default_rule_config

from components.contract import platform_contract
from tools.observability import stack_settings


def _container(name: str, cpu: str, restart: str | None = None, **more: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "resources": {"requests": {"cpu": cpu}}, **more}
    if restart:
        container["restartPolicy"] = restart
    return container


# (description, init containers, containers, overhead, expected CPU in millicores): TestPodResourceRequests.
HELPERS_CASES = [
    ("nil options, larger init container", [_container("i", "4")], [_container("c", "1")], None, 4000),
    ("nil options, larger containers", [_container("i", "2")], [_container("a", "2"), _container("b", "3")], None, 5000),
    ("pod overhead included", [_container("i", "2")], [_container("a", "2"), _container("b", "3")],
     {"cpu": "1", "memory": "1Gi"}, 6000),
    ("restartable init container", [_container("r", "1", "Always")], [_container("c", "1")], None, 2000),
    ("multiple restartable init containers",
     [_container("i1", "5"), _container("r1", "1", "Always"), _container("r2", "2", "Always"),
      _container("r3", "3", "Always")], [_container("c", "1")], None, 7000),
    ("multiple restartable and regular init containers",
     [_container("i1", "5"), _container("r1", "1", "Always"), _container("r2", "2", "Always"), _container("i2", "5"),
      _container("r3", "3", "Always")], [_container("c", "1")], None, 8000),
    ("restartable-init, init and regular", [_container("r", "10", "Always"), _container("i", "200")],
     [_container("c", "100")], None, 210000),
]


@pytest.mark.parametrize("description, init, containers, overhead, expected", HELPERS_CASES,
                         ids=[case[0] for case in HELPERS_CASES])
def test_pod_requests_are_component_helpers_sums(description, init, containers, overhead, expected):
    spec: dict[str, Any] = {"initContainers": init, "containers": containers}
    if overhead:
        spec["overhead"] = overhead
    asked = spec_requests(spec)
    assert asked.cpu_milli == expected
    assert asked.memory == (GIB if overhead else 0)


def test_a_limit_without_a_request_sets_the_request_and_a_request_wins_over_its_limit():
    """`SetDefaults_Pod`: limits are copied into requests that are absent, never over ones that are set."""
    asked = spec_requests({"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}},
        {"name": "b", "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "500m"}}}]})
    assert (asked.cpu_milli, asked.memory) == (2500, 4 * GIB)


def test_pod_level_requests_replace_the_containers_cpu_and_memory():
    """PodLevelResources (beta, on since 1.34): pod-level requests win; pod-level limits alone default the
    request only where no container asks (`defaultPodRequests`)."""
    containers = [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"}}}]
    asked = spec_requests({"containers": containers, "resources": {"requests": {"cpu": "3"}}})
    assert (asked.cpu_milli, asked.memory, asked.ephemeral_storage) == (3000, GIB, GIB)
    asked = spec_requests({"containers": [{"name": "a"}], "resources": {"limits": {"cpu": "2", "memory": "2Gi"}}})
    assert (asked.cpu_milli, asked.memory) == (2000, 2 * GIB)
    asked = spec_requests({"containers": containers, "resources": {"limits": {"cpu": "4"}}})
    assert asked.cpu_milli == 1000


def test_amounts_round_up_as_the_scheduler_counts_them_and_unreadable_ones_are_named():
    asked = spec_requests({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1.0001", "memory": "1.5"}}}]})
    assert (asked.cpu_milli, asked.memory) == (1001, 2)
    too_long = spec_requests({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1" * 65}}}]})
    assert too_long.unknown == "spec.containers[0].resources.requests.cpu" and too_long.cpu_milli == 0
    unknown = spec_requests({"containers": [{"name": "a", "resources": UNKNOWN}]})
    assert unknown.unknown == "spec.containers[0].resources"


def test_ephemeral_containers_ask_nothing_of_the_node():
    asked = spec_requests({"containers": [_container("a", "1")], "ephemeralContainers": [_container("debug", "8")]})
    assert asked.cpu_milli == 1000


# --- What a node gives --------------------------------------------------------------------------

AKS_CPU_TABLE = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}


@pytest.mark.parametrize("cores, reserved", sorted(AKS_CPU_TABLE.items()))
def test_kube_reserved_cpu_is_the_aks_table_at_its_columns(cores, reserved):
    assert kube_reserved_cpu_milli(cores) == reserved


def test_kube_reserved_cpu_between_the_columns_follows_karpenters_brackets():
    """karpenter-provider-azure's `Tax Calculator`: 3 cores, 120m; sizes the AKS table skips."""
    assert kube_reserved_cpu_milli(3) == 120
    assert kube_reserved_cpu_milli(24) == 340
    assert kube_reserved_cpu_milli(96) == 1060


def test_aks_memory_reservation_is_the_docs_worked_examples():
    """AKS 1.29+: 8 GB and 30 pods reserve 20 x 30 + 50 = 650; 4 GB and 70 pods reserve 25% (1000 of 1450)."""
    assert aks_kube_reserved_memory(8, 30) == 650 * MIB
    assert aks_kube_reserved_memory(4, 70) == GIB


@pytest.mark.parametrize("memory_gib, reserved_mib", [(7, 1638), (8, 1843), (64, 5611)])
def test_karpenter_memory_reservation_is_its_own_test_suite(memory_gib, reserved_mib):
    assert karpenter_kube_reserved_memory(memory_gib) == reserved_mib * MIB


def test_a_t4_agent_pool_node_gives_pods_what_aks_leaves():
    """Standard_NC4as_T4_v3 (4 vCPUs, 28 GiB) under Azure CNI Overlay (maxPods 250): 4 - 0.14 CPUs; 28 GiB less
    20 x 250 + 50 MiB and the 100Mi eviction threshold."""
    node = agent_pool_allocatable("Standard_NC4as_T4_v3", default_max_pods("azure", "overlay"))
    assert node is not None
    assert cpus(node.cpu_milli) == "3.86"
    assert node.memory == 28 * GIB - 5050 * MIB - 100 * MIB
    assert gib(node.memory) == "22.97 GiB"
    assert node.pods == 250 and node.ephemeral_storage is None


def test_a_nap_node_gives_pods_what_karpenter_plans():
    """Karpenter plans with 7.5% less memory than the VM lists, its brackets and a 750Mi threshold; the
    ephemeral storage is the AKSNodeClass's OS disk (128 GB by default)."""
    node = node_pool_allocatable("Standard_NC24ads_A100_v4", 250)
    assert node is not None
    capacity = 220 * GIB - -(-220 * GIB * 75 // 1000)
    assert node.memory == capacity - karpenter_kube_reserved_memory(220) - 750 * MIB
    assert node.cpu_milli == 24000 - 340
    assert node.ephemeral_storage == 128 * 10**9


def test_sizes_without_a_listed_shape_are_not_judged():
    assert vm_shape("Standard_ND96is_H100_v5") is None
    assert agent_pool_allocatable("Standard_ND96is_H100_v5", 30) is None
    assert vm_shape("standard_nc4as_t4_v3") == vm_shape("Standard_NC4as_T4_v3")


def test_daemon_sets_take_their_requests_and_a_pod_slot_each():
    plugin = {"containers": [{"name": "p", "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}}]}
    exporter = {"containers": [{"name": "e", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    taken = daemon_set_requests([plugin, exporter])
    assert (taken.cpu_milli, taken.memory, taken.pods) == (150, 192 * MIB, 2)
    node = agent_pool_allocatable("Standard_NC4as_T4_v3", 250)
    assert node is not None and cpus(node.less(taken).cpu_milli) == "3.71"


def test_default_max_pods_follow_the_network():
    assert [default_max_pods(*network) for network in (("azure", "overlay"), ("azure", None), ("kubenet", None),
                                                       ("none", None))] == [250, 30, 110, 250]


# --- Where a pod is placed: --platform, the explainer ---------------------------------------------

SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _gpu_pod(cpu: str, memory: str, name: str = "p") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"tolerations": [SKU], "containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": cpu, "memory": memory}, "limits": {"nvidia.com/gpu": 1}}}]}}


def _fit_findings(pod: dict[str, Any], outputs: dict[str, Any]) -> list[str]:
    report = check_objects([LoadedObject("pod.yaml", 0, 1, pod)], default_rule_config(), platform_from_outputs(outputs))
    return [v.message for v in report.violations if v.policy == "gpu-pods-fit-a-pool"]


def test_a_pod_that_asks_more_cpu_than_a_t4_node_gives_fits_no_dev_pool():
    """#48: the explainer placed a 1-GPU pod asking for 10 CPUs and 64 GiB on dev's T4 pool; kube-scheduler's
    NodeResourcesFit leaves it Pending. The reason names the size and what its node gives pods."""
    dev = platform_contract(stack_settings("dev"))
    [explanation] = explain(_gpu_pod("10", "64Gi"), dev)
    assert explanation.lands_on == []
    [reason] = [v for v in explanation.verdicts if v.pool == "gput4"][0].reasons
    assert reason.startswith("it asks for 10 CPUs and 64 GiB of memory, but a Standard_NC4as_T4_v3 node gives pods "
                             "3.81 CPUs and 22.9 GiB (its allocatable, 3.86 CPUs and 22.97 GiB")
    [finding] = _fit_findings(_gpu_pod("10", "64Gi"), dev)
    assert "not gput4:\n  - it asks for 10 CPUs" in finding
    [fits] = explain(_gpu_pod("2", "8Gi"), dev)
    assert fits.lands_on == ["gput4"] and "lands on: gput4 (Standard_NC4as_T4_v3)" in render([fits])
    assert _fit_findings(_gpu_pod("2", "8Gi"), dev) == []


def test_a_nap_pool_whose_larger_size_fits_names_that_size():
    nap = platform_contract(stack_settings("nap"))
    [explanation] = explain(_gpu_pod("50", "64Gi"), nap)
    text = render([explanation])
    assert explanation.lands_on == ["h100"]
    assert "lands on: h100 (Standard_NC80adis_H100_v5): H100 x2" in text
    assert "only Standard_NC80adis_H100_v5 has room for it: Standard_NC40ads_H100_v5 gives pods 39.45 CPUs" in text
    assert "not a100:\n    - it asks for 50 CPUs, but a Standard_NC24ads_A100_v4 node gives pods 23.61 CPUs" in text


def test_a_pod_that_asks_more_cpu_than_any_size_has_is_a_mandatory_finding_naming_the_largest():
    nap = platform_contract(stack_settings("nap"))
    [finding] = _fit_findings(_gpu_pod("500", "1Gi"), nap)
    assert ("not h100:\n  - it asks for 500 CPUs, but the largest node it may bring, Standard_NC80adis_H100_v5, gives "
            "pods 79.05 CPUs") in finding


#: CPU and memory amounts the API server refuses (validation.go `ValidateResourceQuantityValue` ->
#: `ValidateNonnegativeQuantity`; a value that is no quantity fails `Quantity.UnmarshalJSON`).
REFUSED_AMOUNTS = {"-1": "is negative", "-1e308": "negative", "lots": "is not a Kubernetes quantity",
                   "1e60Ki": "is not a Kubernetes quantity", True: "is a boolean", float("nan"): "is not a finite number",
                   float("inf"): "is not a finite number", (1,): "is not a number or a quantity string"}


@pytest.mark.parametrize("value", list(REFUSED_AMOUNTS), ids=repr)
@pytest.mark.parametrize("field", ["cpu", "memory"])
def test_a_cpu_or_memory_amount_the_api_server_refuses_refuses_the_pod(field, value):
    """#48 (hostile q3, q6-q9, r4): such an amount was dropped, so the pod "fit" gput4. The API server refuses the
    pod, so it lands nowhere: the explainer says so and the checker's fit rule names the field."""
    dev = platform_contract(stack_settings("dev"))
    pod = _gpu_pod("1", "1Gi")
    amount = list(value) if isinstance(value, tuple) else value
    pod["spec"]["containers"][0]["resources"]["requests"][field] = amount
    [explanation] = explain(pod, dev)
    where = f"spec.containers[0].resources.requests.{field}"
    assert explanation.lands_on == []
    assert any(r.startswith(f"{where}: ") and REFUSED_AMOUNTS[value] in r for r in explanation.refusals)
    assert "lands on: nothing; the API server refuses this pod:" in render([explanation])
    [finding] = _fit_findings(pod, dev)
    assert finding.startswith("Pod/p container") or "is refused by the API server, so no pod is ever created" in finding
    assert f"refused: {where}: " in finding


@pytest.mark.parametrize(("amount", "asked"), [
    ("1e308", "more CPUs than any node has (a request too large to count)"), ("1e61", "more CPUs than any node has"),
    ("99999999999999999999999Gi", "10737418…(33 digits) CPUs"), (1e308, "10000000…(309 digits) CPUs"),
    (10**5000, "more CPUs than any node has")], ids=lambda value: value if isinstance(value, str) else "number")
def test_a_valid_request_too_large_to_count_fits_no_node(amount, asked):
    """#48 (hostile q1, q7): "1e308" is a quantity the API server takes (apimachinery quantity.go `ParseQuantity`:
    any int32 exponent), past what is read exactly: it is judged larger than any node, never dropped."""
    dev = platform_contract(stack_settings("dev"))
    [explanation] = explain(_gpu_pod(amount, "1Gi"), dev)
    assert explanation.lands_on == [] and explanation.refusals == ()
    [reason] = explanation.verdicts[0].reasons
    assert reason.startswith(f"it asks for {asked}") and len(reason) < 400
    [finding] = _fit_findings(_gpu_pod(amount, "1Gi"), dev)
    assert "fits no GPU pool of the platform" in finding


def test_huge_amounts_are_printed_cut():
    """#48 (hostile r1): YAML floats of 1.0e+308 printed two 300-digit numbers."""
    dev = platform_contract(stack_settings("dev"))
    [explanation] = explain(_gpu_pod(1e308, 1e308), dev)  # type: ignore[arg-type]
    [reason] = explanation.verdicts[0].reasons
    assert reason.startswith("it asks for 10000000…(309 digits) CPUs and 93132257…(299 digits) GiB of memory")
    assert (cpus(10**40), gib(10**40)) == ("10000000…(38 digits)", "93132257…(31 digits) GiB")
    assert (cpus(10**26 - 1), gib(2**30 * (10**24 - 1))) == ("99999999999999999999999.999", "999999999999999999999999 GiB")


def test_an_amount_not_read_leaves_the_room_undecided_and_says_so():
    """A quantity past what the checker reads (longer than MAX_QUANTITY_CHARS) is not counted as nothing silently:
    the pool is not counted out on it, and the explainer names the field."""
    dev = platform_contract(stack_settings("dev"))
    [explanation] = explain(_gpu_pod("1" * 65, "1Gi"), dev)
    assert explanation.lands_on == ["gput4"]
    assert ("gput4: cannot tell offline whether its node has room: spec.containers[0].resources.requests.cpu is not "
            "read") in render([explanation])


def test_init_containers_and_sidecars_count_as_the_scheduler_counts_them():
    """A 2-CPU app container with a 3-CPU init container asks for 3; with a 2-CPU sidecar before the init, 5."""
    dev = platform_contract(stack_settings("dev"))
    pod = _gpu_pod("2", "1Gi")
    pod["spec"]["initContainers"] = [{"name": "init", "image": "i", "resources": {"requests": {"cpu": "3"}}}]
    assert explain(pod, dev)[0].lands_on == ["gput4"]
    with_sidecar = copy.deepcopy(pod)
    with_sidecar["spec"]["initContainers"].insert(0, {"name": "proxy", "image": "i", "restartPolicy": "Always",
                                                      "resources": {"requests": {"cpu": "2"}}})
    [explanation] = explain(with_sidecar, dev)
    assert explanation.lands_on == [] and "it asks for 5 CPUs" in explanation.verdicts[0].reasons[0]
