"""The app-stack helper: every request kind lands where it should, passes the pack by construction,
and fails with a message that says what the platform lacks."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from gpu_aks_app import ContractError, GpuRequest, Placement, PlacementError, place
from gpu_aks_policies.rules import POD_RULES

from components.contract import platform_contract
from components.platform_settings import parse_settings
from tests.helpers import findings

PLATFORM = platform_contract(parse_settings({"gpuPools": [
    {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "maxCount": 4},
    {"name": "t4x4", "vmSize": "Standard_NC64as_T4_v3", "maxCount": 2},
    {"name": "a100mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g"},
    {"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "maxCount": 1},
    {"name": "t4spot", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot"},
]}, "test", "eastus2"))

REQUESTS = [
    ("1 GPU", GpuRequest(), "t4", "nvidia.com/gpu"),
    ("2 GPUs", GpuRequest(gpus=2), "t4x4", "nvidia.com/gpu"),
    ("2 GPUs of model T4", GpuRequest(gpus=2, model="T4"), "t4x4", "nvidia.com/gpu"),
    ("model by accelerator label", GpuRequest(model="nvidia-h100-80gb"), "h100", "nvidia.com/gpu"),
    ("model H100", GpuRequest(gpus=8, model="H100"), "h100", "nvidia.com/gpu"),
    ("pool P", GpuRequest(pool="t4spot"), "t4spot", "nvidia.com/gpu"),
    ("Spot", GpuRequest(spot=True), "t4spot", "nvidia.com/gpu"),
    ("a MIG partition", GpuRequest(mig_partition="2g.20gb"), "a100mig", "nvidia.com/gpu"),
    ("three MIG slices", GpuRequest(gpus=3, mig_partition="2g.20gb"), "a100mig", "nvidia.com/gpu"),
]


@pytest.mark.parametrize("request_, pool, resource", [(r, p, res) for _, r, p, res in REQUESTS],
                         ids=[r[0] for r in REQUESTS])
def test_each_request_kind_lands_and_passes_the_pack(request_, pool, resource):
    placement = place(PLATFORM, request_)
    assert (placement.pool, placement.resource) == (pool, resource)
    assert placement.node_selector["gpu-aks.io/pool"] == pool
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
           "spec": placement.pod_spec([{"name": "app", "image": "app:1", "resources": {"limits": {"memory": "1Gi"}}}])}
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"memory": "1Gi", resource: request_.gpus}
    for name in POD_RULES:
        assert findings(pod, name) == [], name


def test_mixed_strategy_asks_for_the_mig_resource():
    settings = parse_settings({"devicePlugin": {"migStrategy": "mixed"}, "gpuPools": [
        {"name": "a100mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG1g",
         "minCount": 1}]}, "test", "eastus2")
    placement = place(platform_contract(settings), GpuRequest(mig_partition="1g.10gb"))
    assert placement.limits == {"nvidia.com/mig-1g.10gb": 1}
    pod = {"kind": "Pod", "spec": placement.pod_spec([{"name": "c", "image": "x"}])}
    assert all(findings(pod, name) == [] for name in POD_RULES)


@pytest.mark.parametrize("request_, message", [
    (GpuRequest(model="V100"), "the platform has no pool with V100 GPUs; GPU pools: t4 (T4, 1 per node), "
     "t4x4 (T4, 4 per node), a100mig (A100 80GB, MIG 2g.20gb, 3 per node), h100 (H100 80GB, 8 per node), "
     "t4spot (T4, Spot, 1 per node)"),
    (GpuRequest(gpus=16), "16 GPUs is more than any matching node has (at most 8 per node)"),
    (GpuRequest(gpus=2, model="T4", spot=True), "2 GPUs is more than any matching node has (at most 1 per node)"),
    (GpuRequest(mig_partition="1g.10gb"), "the platform has no MIG pool with 1g.10gb partitions"),
    (GpuRequest(pool="gpunp"), "the platform has no GPU pool 'gpunp'"),
    (GpuRequest(gpus=0), "gpus must be a whole number of at least 1, got 0"),
    (GpuRequest(gpus=1.5), "gpus must be a whole number of at least 1, got 1.5"),  # type: ignore[arg-type]
])
def test_errors_name_what_the_platform_lacks(request_, message):
    with pytest.raises(PlacementError) as error:
        place(PLATFORM, request_)
    assert str(error.value).startswith(message)


def test_accepts_the_gpu_pools_map_alone_and_checks_the_contract_version():
    assert place(PLATFORM["gpuPools"], GpuRequest()).pool == "t4"
    assert place({**PLATFORM, "contractVersion": 2}, GpuRequest()).pool == "t4", "version 2 is still read"
    with pytest.raises(PlacementError, match="contract is version 4"):
        place({**PLATFORM, "contractVersion": 4}, GpuRequest())


def _unpriced(contract: dict) -> dict:
    """The contract with its offers' list prices and room left out: the testing helper writes no prices (#38),
    and what a node gives pods only where a test gives it (`allocatable` is optional, #48)."""
    for pool in [*contract["gpuPools"].values(), *contract["pools"].values()]:
        for offer in pool["offers"]:
            offer["hourlyPrice"] = None
            offer.pop("allocatable", None)
    return contract


def test_the_testing_helpers_platform_is_shaped_like_the_real_contract():
    """gpu_aks_app_testing must not drift from components/contract.py: same keys, same values for the
    same pool (a T4 pool, and an A100 MIG pool under the mixed strategy)."""
    from gpu_aks_app_testing import gpu_pool, platform_outputs

    real = _unpriced(platform_contract(parse_settings({"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3"}]},
                                                      "dev", "eastus2")))
    sample = platform_outputs()
    assert set(real) <= set(sample)
    real_pool, sample_pool = real["gpuPools"]["gput4"], sample["gpuPools"]["gput4"]
    assert set(real_pool) == set(sample_pool)
    # Version 3's pool, as the platform writes it (`Pool.to_json`).
    assert {k: v for k, v in sample["pools"]["gput4"].items() if k != "azureName"} == \
        {k: v for k, v in real["pools"]["gput4"].items() if k != "azureName"}
    assert {k: v for k, v in sample_pool.items() if k != "azureName"} == {k: v for k, v in real_pool.items()
                                                                          if k != "azureName"}
    mixed = _unpriced(platform_contract(parse_settings({"devicePlugin": {"migStrategy": "mixed"}, "gpuPools": [
        {"name": "a100mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG1g",
         "minCount": 1}]}, "dev", "eastus2")))
    sample_mig = gpu_pool("a100mig", "Standard_NC24ads_A100_v4", "A100 80GB", "nvidia-a100-80gb", 1, 80,
                          mig_partition="1g.10gb", mig_instances_per_gpu=7, mig_strategy="mixed",
                          min_count=1)
    assert {k: v for k, v in sample_mig.items() if k != "azureName"} == {
        k: v for k, v in mixed["gpuPools"]["a100mig"].items() if k != "azureName"}


def _nap_pool():
    """A NodePool-backed (NAP) pool as the contract describes it: one offer per size it may choose, the
    single-size fields its first offer's."""
    from gpu_aks_app_testing import gpu_pool

    def offer(vm_size, model, memory, gpus):
        return {"vmSize": vm_size, "gpuModel": model, "gpuMemoryGiB": memory, "gpusPerVm": gpus,
                "resource": "nvidia.com/gpu", "perNode": gpus, "migPartition": None,
                "capacityTypes": ["spot", "onDemand"]}

    entry = gpu_pool("nap", "Standard_NC40ads_H100_v5", "H100 NVL", "nvidia-h100-nvl", 1, 94)
    return {**entry, "kind": "nodePool", "azureName": None, "minCount": None, "maxCount": None, "offers": [
        offer("Standard_NC40ads_H100_v5", "H100 NVL", 94, 1), offer("Standard_NC80adis_H100_v5", "H100 NVL", 94, 2),
        offer("Standard_NC24ads_A100_v4", "A100 80GB", 80, 1)]}


MULTI = {"gpuPools": {"t4": PLATFORM["gpuPools"]["t4"], "nap": _nap_pool()}}


@pytest.mark.parametrize("request_, size", [
    (GpuRequest(model="A100"), "Standard_NC24ads_A100_v4"),
    (GpuRequest(gpus=2), "Standard_NC80adis_H100_v5"),
    (GpuRequest(gpus=2, model="H100 NVL"), "Standard_NC80adis_H100_v5"),
    (GpuRequest(pool="nap"), None),
])
def test_a_pool_of_several_sizes_serves_a_request_from_the_offers_that_fit(request_, size):
    """A NAP pool's offers are read one by one: a model or count only one size has lands on the pool,
    pinned to that size (so the NodePool provisions it); a request every size serves is not pinned."""
    from gpu_aks_app_testing import as_delivered
    from gpu_aks_policies.contract import PlatformContract

    PlatformContract.from_json(MULTI)  # a contract this release reads
    placement = place(as_delivered(MULTI), request_)
    assert (placement.pool, placement.resource) == ("nap", "nvidia.com/gpu")
    assert placement.node_selector.get("node.kubernetes.io/instance-type") == size
    assert placement.node_selector["gpu-aks.io/pool"] == "nap"
    pod = {"kind": "Pod", "spec": placement.pod_spec([{"name": "c", "image": "x"}])}
    assert all(findings(pod, name) == [] for name in POD_RULES)


def test_a_pool_of_several_sizes_is_described_by_its_offers():
    with pytest.raises(PlacementError) as error:
        place(MULTI, GpuRequest(gpus=4))
    assert str(error.value) == ("4 GPUs is more than any matching node has (at most 2 per node); GPU pools: t4 (T4, 1 per "
                                "node), nap (H100 NVL x1 or H100 NVL x2 or A100 80GB x1, Spot or on-demand, 2 per node)")
    assert place(MULTI, GpuRequest(model="T4")).pool == "t4"


def test_a_contract_without_offers_is_read_from_its_single_size_fields():
    """Contracts written before pools had `offers` (gpu-aks 0.3) place as they always did."""
    older = {**PLATFORM, "gpuPools": {name: {k: v for k, v in pool.items() if k != "offers"}
                                      for name, pool in PLATFORM["gpuPools"].items()}}
    for _, request_, pool, resource in REQUESTS:
        placement = place(older, request_)
        assert (placement.pool, placement.resource) == (pool, resource)
        assert placement == place(PLATFORM, request_)


DAMAGED_COUNTS = [float("inf"), float("-inf"), float("nan"), "4", 2.5, True, None]


@pytest.mark.parametrize("value", DAMAGED_COUNTS)
def test_a_damaged_sharing_count_is_no_sharing_and_no_traceback(value):
    """A contract read through a StackReference may be damaged (hand-edited state, an older writer):
    a sharing `replicas` that is no whole number means no sharing, where `int()` raised OverflowError."""
    pool = copy.deepcopy(PLATFORM["gpuPools"]["t4"])
    pool["sharing"] = {"strategy": "timeSlicing", "replicas": value}
    assert place({"gpuPools": {"t4": pool}}, GpuRequest(gpus=1)).pool == "t4"


@pytest.mark.parametrize("value", DAMAGED_COUNTS)
def test_a_damaged_per_node_count_serves_nothing_and_says_so(value):
    pool = copy.deepcopy(PLATFORM["gpuPools"]["t4"])
    pool["gpusPerNode"] = value
    for offer in pool.get("offers") or []:
        offer["perNode"] = value
    with pytest.raises(PlacementError, match="t4"):
        place({"gpuPools": {"t4": pool}}, GpuRequest(gpus=1))


# --- What the helper reads: version 3 first, as the pool model's JSON says it ---------------------------------


def _stack_contracts() -> dict[str, dict]:
    from tools.observability import stack_settings

    return {stack: platform_contract(stack_settings(stack)) for stack in ("dev", "prod", "nap")}


CONTRACTS = _stack_contracts()
#: Requests of every kind: each lands, or fails with the same reason, whichever version the helper reads.
ASKED = [GpuRequest(), GpuRequest(gpus=2), GpuRequest(gpus=8), GpuRequest(model="T4"), GpuRequest(model="H100"),
         GpuRequest(model="A100"), GpuRequest(spot=True), GpuRequest(spot=False), GpuRequest(shared=True),
         GpuRequest(mig_partition="2g.20gb"), GpuRequest(mig_partition="1g.10gb"), GpuRequest(gpus=3, spot=True)]


def _outcome(platform: dict, request_: GpuRequest) -> object:
    try:
        return place(platform, request_)
    except PlacementError as error:
        return str(error)


@pytest.mark.parametrize("stack", CONTRACTS)
def test_the_helper_reads_version_3_as_the_platform_writes_version_2(stack):
    """Version 3's `pools` (the pool model's JSON: taints and labels, no tolerations or node selector) gives
    every request the placement version 2's `gpuPools` gives, so reading version 3 first changes nothing
    while the platform writes both, and nothing when it writes version 3 alone."""
    contract = CONTRACTS[stack]
    v3 = {key: value for key, value in contract.items() if key not in ("gpuPools", "cpuPools")}
    v2 = {key: value for key, value in contract.items() if key != "pools"} | {"contractVersion": 2}
    placed = 0
    for request_ in [*ASKED, *(GpuRequest(pool=name) for name in contract["gpuPools"])]:
        outcome = _outcome(contract, request_)
        assert outcome == _outcome(v3, request_) == _outcome(v2, request_) == _outcome(contract["pools"], request_), \
            request_
        placed += isinstance(outcome, Placement)
    assert placed


def test_a_contract_whose_two_versions_disagree_is_refused_naming_both_keys():
    contract = copy.deepcopy(CONTRACTS["prod"])
    name = next(iter(contract["gpuPools"]))
    contract["gpuPools"][name]["tolerations"] = []
    with pytest.raises(ContractError, match=rf"pools\.{name} and gpuPools\.{name} disagree"):
        place(contract, GpuRequest())


def _damaged(document: dict) -> Iterator[tuple[str, dict]]:
    """The document with one key at a time removed, or its value replaced by each kind of JSON value, in
    every pool and offer of both versions, and at the top."""
    junk = [None, True, -1, 1.5, float("nan"), "x", [], {}, [1], {"a": 1}]

    def variants(path: str, container: dict) -> Iterator[tuple[str, dict]]:
        for key in list(container):
            for value in [*junk, ...]:
                damaged = copy.deepcopy(document)
                target = damaged
                for part in path.split("/") if path else []:
                    target = target[int(part)] if isinstance(target, list) else target[part]
                if value is ...:
                    del target[key]
                else:
                    target[key] = value
                yield f"{path}/{key}={value!r}", damaged

    yield from variants("", document)
    for version in ("pools", "gpuPools"):
        for name, pool in document[version].items():
            yield from variants(f"{version}/{name}", pool)
            for index, offer in enumerate(pool.get("offers") or []):
                yield from variants(f"{version}/{name}/offers/{index}", offer)


@pytest.mark.parametrize("stack", ["dev", "nap"])
def test_a_damaged_contract_is_a_placement_error_never_a_traceback(stack):
    """Any key missing or of the wrong kind anywhere in a pool: `place` places, or raises PlacementError
    (ContractError naming the key where the contract is damaged), never AttributeError, KeyError,
    TypeError or a bare ValueError (#50)."""
    document = {key: value for key, value in CONTRACTS[stack].items() if key in (
        "contractVersion", "gpuPools", "cpuPools", "pools")}
    tried = 0
    for where, damaged in _damaged(document):
        for platform in (damaged, {k: v for k, v in damaged.items() if k != "gpuPools"}):
            try:
                place(platform, GpuRequest())
            except PlacementError as error:
                assert type(error) in (PlacementError, ContractError), where
            tried += 1
    assert tried > 500


@pytest.mark.parametrize("platform", [None, 3, "outputs", [], {"gpuPools": []}, {"pools": "x"},
                                      {"pools": {"t4": []}}, {"contractVersion": True, "gpuPools": {}},
                                      {"contractVersion": [2], "gpuPools": {}}])
def test_outputs_that_are_no_contract_are_refused_by_key(platform):
    with pytest.raises(ContractError):
        place(platform, GpuRequest())  # type: ignore[arg-type]


def test_a_request_for_cpu_and_memory_is_placed_where_a_node_gives_pods_that_much():
    """#48: `place()` judges CPU and memory as kube-scheduler's NodeResourcesFit would, from the contract's
    `allocatable` (less gpu-aks's DaemonSets), and pins a NAP pool to the size with room."""
    from gpu_aks_app import GpuRequest, PlacementError, place

    from tools.observability import stack_settings

    dev, nap = platform_contract(stack_settings("dev")), platform_contract(stack_settings("nap"))
    placed = place(dev, GpuRequest(cpu="2", memory="8Gi"))
    assert placed.pool == "gput4" and placed.requests == {"cpu": "2", "memory": "8Gi"}
    container = placed.pod_spec([{"name": "c", "image": "i"}])["containers"][0]
    assert container["resources"] == {"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": "2", "memory": "8Gi"}}
    with pytest.raises(PlacementError, match=r"10 CPUs and 64 GiB of memory is more than any matching node gives pods "
                                             r"\(the most: Standard_NC4as_T4_v3 gives 3.81 CPUs and 22.9 GiB"):
        place(dev, GpuRequest(cpu=10, memory="64Gi"))
    big = place(nap, GpuRequest(model="H100", cpu="50"))
    assert big.node_selector["node.kubernetes.io/instance-type"] == "Standard_NC80adis_H100_v5"
    with pytest.raises(PlacementError, match="cpu must be a Kubernetes quantity"):
        place(dev, GpuRequest(cpu="lots"))


@pytest.mark.parametrize("amount", [0, 1, 999, 1000, 3860, 3810, 10_000, 2**30 - 1, 2**30, 24_589_524_992, 64 * 2**30 + 1])
def test_the_helper_writes_cpus_and_memory_as_the_explainer_does(amount):
    """The helper is one standard-library file, so it writes figures with its own copy of the pack's
    (`gpu_aks_policies.pod_requests.cpus`, `gib`): a node's room reads the same in both."""
    from gpu_aks_app import _cpus, _gib
    from gpu_aks_policies.pod_requests import cpus, gib

    assert (_cpus(amount), _gib(amount)) == (cpus(amount), gib(amount))
