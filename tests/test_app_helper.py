"""The app-stack helper: every request kind lands where it should, passes the pack by construction,
and fails with a message that says what the platform lacks."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import get_args

import pytest
from gpu_aks_app import ALLOCATABLE_KEYS, OFFER_KEYS, POOL_KEYS, ContractError, GpuRequest, Placement, PlacementError, place
from gpu_aks_policies.contract import ContractError as ReaderError
from gpu_aks_policies.contract import PlatformContract
from gpu_aks_policies.rules import POD_RULES

from components.contract import platform_contract
from components.platform_settings import parse_settings
from tests.helpers import findings
from tests.inputs import POOL_NAMES, assert_pool_names_shown_bounded, pool_name_contracts

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
    """Contracts written before pools had `offers` (gpu-aks 0.3, version 2: no `pools` yet, and no prices) place
    as they always did."""
    older = {**{k: v for k, v in PLATFORM.items() if k != "pools"}, "contractVersion": 2,
             "gpuPools": {name: {k: v for k, v in pool.items() if k != "offers"}
                          for name, pool in PLATFORM["gpuPools"].items()}}
    for _, request_, pool, resource in REQUESTS:
        placement = place(older, request_)
        assert (placement.pool, placement.resource) == (pool, resource)
        assert placement == place(PLATFORM, request_)


DAMAGED_COUNTS = [float("inf"), float("-inf"), float("nan"), "4", 2.5, True, None]


@pytest.mark.parametrize("value", DAMAGED_COUNTS)
def test_a_damaged_sharing_count_is_refused_naming_its_key(value):
    """A contract read through a StackReference may be damaged (hand-edited state, an older writer): a sharing
    `replicas` that is no whole number is refused as the contract reader refuses it (`PoolSharing`), where
    `int()` once raised OverflowError and a later helper read it as no sharing (#50)."""
    pool = copy.deepcopy(PLATFORM["gpuPools"]["t4"])
    pool["sharing"] = {"strategy": "timeSlicing", "replicas": value}
    if value is None:  # no count: one pod per GPU, as before
        assert place({"gpuPools": {"t4": pool}}, GpuRequest(gpus=1)).pool == "t4"
        return
    with pytest.raises(ContractError, match=r"^gpuPools\.t4\.sharing\.replicas: expected a whole number"):
        place({"gpuPools": {"t4": pool}}, GpuRequest(gpus=1))


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


# --- Refused as the contract reader refuses it (#50) --------------------------------------------------------

NAMED = pool_name_contracts(CONTRACTS["dev"])
NAMED["bad field, version 2 alone"] = {"contractVersion": 2, "gpuPools": NAMED["bad field"]["gpuPools"]}


@pytest.mark.parametrize("damage", ["disagree", "one version", "bad field", "bad field, version 2 alone", "agree"])
def test_a_pool_name_in_a_placement_error_is_cut_and_escaped(damage):
    """`place()` quoted a 100,000-character pool name whole (a 200,000-character ContractError where the versions
    disagree), and a name holding a line break forged a line of the app stack's error (#50)."""
    # Undamaged, the contract places nothing for an H100: the error lists every pool by name.
    with pytest.raises(ContractError if damage != "agree" else PlacementError) as raised:
        place(NAMED[damage], GpuRequest(model="H100"))
    assert_pool_names_shown_bounded(str(raised.value))
    assert "\n" not in str(raised.value) and "(100000 characters)" in str(raised.value)


@pytest.mark.parametrize("name", [*POOL_NAMES, "t4", "::add-mask::x", "  ::x", "x##[error]y", "é\u00ad"])
def test_the_helper_names_a_pool_as_the_pack_does(name):
    """The helper is standard library only, so it has its own copy of `pool_named` and of the bounds it reads by:
    held equal here."""
    import gpu_aks_app as app
    from gpu_aks_policies import limits
    from gpu_aks_policies.catalog import SharingStrategy
    from gpu_aks_policies.pools.model import CapacityType, PoolBackend, pool_named

    assert app._pool_named(name) == pool_named(name)
    assert (app._MAX_SHOWN_CHARS, app._MAX_POOL_COUNT, app._MAX_HOURLY_PRICE, app._MAX_NODE_AMOUNT,
            app._MAX_QUANTITY_CHARS) == (limits.MAX_SHOWN_CHARS, limits.MAX_POOL_COUNT, limits.MAX_CONTRACT_HOURLY_PRICE,
                                         limits.MAX_NODE_AMOUNT, limits.MAX_QUANTITY_CHARS)
    assert (set(app.BACKENDS), set(app.CAPACITY_TYPES), set(app.SHARING_STRATEGIES)) == (
        set(get_args(PoolBackend)), set(get_args(CapacityType)), set(get_args(SharingStrategy)))


def _first_gpu_pool(contract: dict) -> str:
    return next(iter(contract["gpuPools"]))


def _with(contract: dict, *changes: tuple[str, str, object]) -> dict:
    """The contract with `key` of the first GPU pool (`offers/0/...` of its first offer) set in each version given."""
    changed = copy.deepcopy(contract)
    name = _first_gpu_pool(changed)
    for version, path, value in changes:
        target = changed[version][name]
        *parents, key = path.split("/")
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        target[key] = value
    return changed


REFUSED_ALIKE = {
    "minCount x in both versions": (("pools", "minCount", "x"), ("gpuPools", "minCount", "x")),
    "maxCount differs": (("gpuPools", "maxCount", 99),),
    "Spot above on-demand": (("pools", "offers/0/hourlyPrice/spot", 9.0), ("gpuPools", "offers/0/hourlyPrice/spot", 9.0)),
    "sharing replicas 10**9": (("pools", "sharing", {"strategy": "timeSlicing", "replicas": 10**9}),
                               ("gpuPools", "sharing", {"strategy": "timeSlicing", "replicas": 10**9})),
    "capacity type unknown": (("pools", "offers/0/capacityTypes", ["cheap"]), ("gpuPools", "offers/0/capacityTypes", ["cheap"])),
}


@pytest.mark.parametrize("case", REFUSED_ALIKE)
def test_place_refuses_the_contracts_the_reader_refuses(case):
    """The explainer and `--platform` exited 2 on these while `place()` pinned a pod to a pool (#50)."""
    contract = _with(CONTRACTS["dev"], *REFUSED_ALIKE[case])
    with pytest.raises(ReaderError) as reader:
        PlatformContract.from_json(contract)
    with pytest.raises(ContractError) as helper:
        place(contract, GpuRequest())
    assert str(helper.value).split(":")[0] in str(reader.value) or "disagree" in str(helper.value), (helper, reader)


#: What the helper reads of a pool (by version) and of an offer: damage to any of them that the contract reader
#: refuses, the helper refuses too.
HELPER_READS = {"pools": set(POOL_KEYS), "gpuPools": {"kind", "spot", "sharing", "minCount", "maxCount", "tolerations",
                                                     "nodeSelector", "offers", "labels"},
                "offers": set(OFFER_KEYS) | set(ALLOCATABLE_KEYS)}


@pytest.mark.parametrize("stack", ["dev", "nap"])
def test_what_the_helper_reads_it_refuses_as_the_reader_does(stack):
    document = {key: value for key, value in CONTRACTS[stack].items() if key in (
        "contractVersion", "gpuPools", "cpuPools", "pools")}
    gpu = set(document["gpuPools"])
    checked = 0
    for where, damaged in _damaged(document):
        path, value = where.split("=", 1)
        version, name, *rest = path.strip("/").split("/") + [""]
        key = rest[-2] if len(rest) > 1 else ""
        read = HELPER_READS["offers" if "offers" in rest[:-2] else version] if version in HELPER_READS else set()
        if name not in gpu or key not in read or value == "Ellipsis":
            continue  # not read by the helper, or a key left out (see the test below)
        try:
            PlatformContract.from_json(damaged)
        except ReaderError:
            with pytest.raises(ContractError):
                place(damaged, GpuRequest())
            checked += 1
    assert checked > 100, checked


#: What is the contract reader's alone (the helper's module docstring says so): keys the helper does not read,
#: version 2's single-size fields where the pool has `offers`, and keys left out, which the helper reads as their
#: defaults. A contract damaged only there is refused by the explainer and still placed by `place()`.
READERS_ALONE = {
    "azureName": (("gpuPools", "azureName", 5),),
    "devicePlugin": (("pools", "devicePlugin", "x"),),
    "gpuMemoryGiB": (("pools", "offers/0/gpuMemoryGiB", "x"), ("gpuPools", "offers/0/gpuMemoryGiB", "x")),
    "currency": (("pools", "offers/0/hourlyPrice/currency", 5), ("gpuPools", "offers/0/hourlyPrice/currency", 5)),
    "pool-level capacityTypes": (("pools", "capacityTypes", "x"),),
    "version 2 gpusPerNode": (("gpuPools", "gpusPerNode", "x"),),
    "version 2 taints": (("gpuPools", "taints", []),),
}


@pytest.mark.parametrize("case", READERS_ALONE)
def test_what_the_helper_does_not_read_is_left_to_the_contract_reader(case):
    contract = _with(CONTRACTS["dev"], *READERS_ALONE[case])
    with pytest.raises(ReaderError):
        PlatformContract.from_json(contract)
    assert place(contract, GpuRequest()).pool == _first_gpu_pool(contract)


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


@pytest.mark.parametrize("amount", [0, 1, 999, 1000, 3860, 3810, 10_000, 2**30 - 1, 2**30, 24_589_524_992, 64 * 2**30 + 1,
                                    10**26 - 1, 10**26, 10**311, int(1e308) * 1000],
                         ids=lambda amount: f"{amount.bit_length()} bits")
def test_the_helper_writes_cpus_and_memory_as_the_explainer_does(amount):
    """The helper is one standard-library file, so it writes figures with its own copy of the pack's
    (`gpu_aks_policies.pod_requests.cpus`, `gib`): a node's room reads the same in both."""
    from gpu_aks_app import _cpus, _gib
    from gpu_aks_policies.pod_requests import cpus, gib

    assert (_cpus(amount), _gib(amount)) == (cpus(amount), gib(amount))


@pytest.mark.parametrize("field", ["cpu", "memory"])
@pytest.mark.parametrize("value", ["1" * 5000, 10**5000, -(10**5000), "1" * 65],
                         ids=["5000 digits", "10**5000", "-10**5000", "65 digits"])
def test_a_request_longer_than_any_quantity_is_refused_before_it_is_converted(field, value):
    """Python refuses to convert ints of over 4300 digits (to and from text): the helper bounds a request's length
    first, as the pack's `parse_quantity` does (MAX_QUANTITY_CHARS), and says so in a short PlacementError."""
    with pytest.raises(PlacementError, match=f"{field} must be a Kubernetes quantity of at most 64 characters") as raised:
        place(CONTRACTS["dev"], GpuRequest(**{field: value}))
    assert len(str(raised.value)) < 400


def test_a_huge_request_is_written_cut_in_the_placement_error():
    """A request that fits no node (a YAML float of 1e308) is named by its first digits and its length."""
    with pytest.raises(PlacementError, match=r"^10000000…\(309 digits\) CPUs and 93132257…\(299 digits\) GiB") as raised:
        place(CONTRACTS["dev"], GpuRequest(cpu=1e308, memory=1e308))
    assert len(str(raised.value)) < 1000


@pytest.mark.parametrize("case", ["gpuModel", "migPartition", "request.pool", "request.gpus", "request.cpu"])
def test_values_quoted_in_a_placement_error_are_cut_and_escaped(case):
    """Beside pool names, the helper's errors quote the contract's GPU model and MIG partition and the request's own
    values: each cut and kept on one line (#50)."""
    huge = "\x1b[2J\n::error::" + "x" * 100_000
    contract, request = CONTRACTS["dev"], GpuRequest(model="H100")
    if case in ("gpuModel", "migPartition"):
        contract = _with(contract, ("pools", f"offers/0/{case}", huge), ("gpuPools", f"offers/0/{case}", huge))
    else:
        request = GpuRequest(**{case.split(".")[1]: huge})
    with pytest.raises((PlacementError, ContractError)) as raised:
        place(contract, request)
    message = str(raised.value)
    assert len(message) < 2_000 and "\n" not in message and "\x1b" not in message, message[:300]
    assert "(100014 characters)" in message, message[:300]


@pytest.mark.parametrize(("field", "value"), [("cpuMillicores", -5), ("cpuMillicores", "lots"),
                                              ("memoryBytes", 2**60), ("daemonSetCpuMillicores", 1.5)])
def test_a_damaged_allocatable_is_refused_by_the_helper_as_by_the_reader(field, value):
    """`allocatable` is read by `place()` for a pod's CPU and memory (#48): damage the reader refuses, it refuses."""
    contract = _with(CONTRACTS["dev"], ("pools", f"offers/0/allocatable/{field}", value))
    with pytest.raises(ReaderError):
        PlatformContract.from_json(contract)
    with pytest.raises(ContractError, match=f"allocatable.{field}"):
        place(contract, GpuRequest())


def _quantity_texts() -> Iterator[object]:
    for sign in ("", "+", "-"):
        for number in ("0", "1", "3.5", ".5", "5.", "0.000", "12"):
            for suffix in ("", "m", "k", "Ki", "Gi", "Ei", "n", "u", "E", "e3", "E-2", "e+6", "e61", "e-61", "Mx", "i"):
                yield sign + number + suffix
    yield from (" " * 64 + "1", "\u3000" * 70 + "1", "1" + " " * 70)
    yield from (" 1 ", "\u20001\u3000", "\x1c1", "", ".", "1..", "1e", "e3", "1.5e3m", "1_000", "inf", "nan", "0x10",
                "1" * 65, 10, 0, -1, 2.5, -0.5, 1.0, float("nan"), float("inf"), True, None, [1])


def test_the_helper_reads_a_request_quantity_as_the_pack_does():
    """The app helper's quantity reader (standard library only) is apimachinery's grammar as the pack reads it
    (`gpu_aks_policies.quantities.parse_quantity`): the same amount for every non-negative quantity ("1e3",
    "+1", "3.5", ".5", "1Ei" included, which it once refused), and a PlacementError where the pack refuses
    the text or reads a negative amount."""
    from fractions import Fraction

    from gpu_aks_app import _amount
    from gpu_aks_policies.quantities import QuantityError, parse_quantity

    for value in _quantity_texts():
        try:
            expected: Fraction | None = parse_quantity(value)
        except QuantityError:
            expected = None
        if value is None or expected is not None and expected < 0:
            expected = None
        try:
            got: Fraction | None = _amount(value, "cpu")
        except PlacementError:
            got = None
        assert got == expected, value
