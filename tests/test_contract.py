"""The typed outputs contract: what the program exports, how every tool reads it, and its schema."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import replace
from datetime import date
from pathlib import Path

import jsonschema
import pytest
from gpu_aks_policies.catalog import POOL_LABEL, SPOT_TAINT
from gpu_aks_policies.contract import (
    CONTRACT_VERSION,
    READABLE_CONTRACT_VERSIONS,
    ContractError,
    GpuPoolEntry,
    PlatformContract,
    contract_markdown,
    json_schema,
)

from components.contract import contract_of, platform_contract
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.pricing import read_price_table
from components.smoke_test import smoke_job_spec
from tests.helpers import FLYTE_TAINT_RULE

ROOT = Path(__file__).resolve().parent.parent
#: The contract as gpu-aks exported it before it had a type (commit 1203a3a): the typed contract
#: must export exactly these values.
EXPORTED = json.loads((ROOT / "tests" / "fixtures" / "contract" / "exported-at-1203a3a.json").read_text())


def _list_price(vm_size: str, region: str | None) -> dict | None:
    """The offer's hourly list price as the platform writes it, from the shipped price table (#38)."""
    table = read_price_table()
    on_demand, spot = table.hourly(region or "", vm_size, "onDemand"), table.hourly(region or "", vm_size, "spot")
    if on_demand is None and spot is None:
        return None
    return {"onDemand": on_demand, "spot": spot, "currency": table.currency, "asOf": table.as_of.isoformat()}


def with_offers(document: dict) -> dict:
    """An exported contract as this release writes it: each GPU pool gains `kind`, `offers` (its one
    VM size, from the single-size fields) and `sharing`, and nothing else changes."""
    gained = json.loads(json.dumps(document))
    for pool in gained.get("gpuPools", gained).values():
        pool["kind"] = "agentPool"
        pool["offers"] = [{"vmSize": pool["vmSize"], "gpuModel": pool["gpuModel"], "gpuMemoryGiB": pool["gpuMemoryGiB"],
                           "gpusPerVm": pool["gpusPerVm"], "resource": pool["gpuResource"],
                           "perNode": pool["gpusPerNode"], "migPartition": pool["migPartition"],
                           "capacityTypes": ["spot"] if pool["spot"] else ["onDemand"]}]
        pool["sharing"] = None
        pool["capacityTypes"] = ["spot"] if pool["spot"] else ["onDemand"]  # #38: capacity types per pool
        pool["offers"][0]["hourlyPrice"] = _list_price(pool["vmSize"], document.get("location"))  # #38
    return gained


WRITTEN = {name: with_offers(document) for name, document in EXPORTED.items()}
#: A NodePool-backed pool (NAP): two VM sizes, Spot with on-demand fallback, time-sliced.
NODE_POOL = {
    "name": "nap", "kind": "nodePool", "taints": ["sku=gpu:NoSchedule"], "labels": {"accelerator": "nvidia"},
    "vmSize": None, "gpusPerNode": 4, "gpuResource": "nvidia.com/gpu",
    "offers": [
        {"vmSize": "Standard_NC4as_T4_v3", "gpuModel": "T4", "gpuMemoryGiB": 16, "gpusPerVm": 1,
         "resource": "nvidia.com/gpu", "perNode": 4, "migPartition": None, "capacityTypes": ["spot", "onDemand"],
         "hourlyPrice": {"onDemand": 0.526, "spot": 0.0789, "currency": "USD", "asOf": "2026-06-18"}},
        {"vmSize": "Standard_NC64as_T4_v3", "gpuModel": "T4", "gpuMemoryGiB": 16, "gpusPerVm": 4,
         "resource": "nvidia.com/gpu", "perNode": 16, "migPartition": None, "capacityTypes": ["spot", "onDemand"],
         "hourlyPrice": None},
    ],
    "sharing": {"strategy": "timeSlicing", "replicas": 4},
}
#: Version 2's keys, which version 3 still writes as before (from the pool model).
CONTRACT_KEYS = ("location", "kubernetesVersion", "gpuNamespace", "migStrategy", "gpuPools", "cpuPools")


def v2_fields(document: dict) -> dict:
    return {key: document[key] for key in CONTRACT_KEYS}


def assert_v3(document: dict) -> None:
    """Version 3: every pool in `pools`, agreeing with what version 2 says of it."""
    assert document["contractVersion"] == 3
    pools = document["pools"]
    assert set(document["gpuPools"]) | set(document["cpuPools"]) <= set(pools)
    for name, v2 in document["gpuPools"].items():
        pool = pools[name]
        assert (pool["role"], pool["backend"], pool["taints"], pool["labels"], pool["spot"], pool["sharing"]) == \
            ("gpu", v2["kind"], v2["taints"], v2["labels"], v2["spot"], v2["sharing"])
        assert [(o["vmSize"], o["resource"], o["perNode"], o["capacityTypes"]) for o in pool["offers"]] == \
            [(o["vmSize"], o["resource"], o["perNode"], o["capacityTypes"]) for o in v2["offers"]]
    for name, v2 in document["cpuPools"].items():
        assert (pools[name]["role"], pools[name]["offers"][0]["vmSize"], pools[name]["taints"]) == \
            ("cpu", v2["vmSize"], v2["taints"])
MIXED_SPOT_EXTERNAL = {
    "devicePlugin": {"migStrategy": "mixed"},
    "cpuPools": [{"name": "cpu", "scaleSetPriority": "Spot", "nodeTaints": ["a=b:NoSchedule"], "nodeLabels": {"team": "x"}}],
    "gpuPools": [
        {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG1g", "availabilityZones": ["1", 2],
         "minCount": 1},  # mixed MIG pools keep a node (Azure/AKS#5161)
        {"name": "h100", "vmSize": "Standard_NC40ads_H100_v5", "scaleSetPriority": "Spot", "spotMaxPrice": 3.5,
         "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
        {"name": "op", "vmSize": "Standard_ND96isr_H100_v5", "gpuProfile": {"driver": "None"}, "keepAzureName": True}],
}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_program_exports_the_contract_as_before_with_only_kind_offers_and_sharing_gained(stack, request):
    outputs = request.getfixturevalue(f"{stack}_run").stack_outputs
    assert v2_fields(outputs) == v2_fields(WRITTEN[stack])
    assert_v3(outputs)
    jsonschema.validate({key: outputs[key] for key in (*CONTRACT_KEYS, "contractVersion", "pools")}, json_schema())
    assert PlatformContract.from_json(outputs).pools == PlatformContract.from_json(
        {**outputs, "contractVersion": 3}).pools


def test_a_contract_with_mig_spot_and_an_external_plugin_is_exported_as_before():
    settings = parse_settings(MIXED_SPOT_EXTERNAL, "x", "westeurope", today=date(2026, 11, 22),
                              pool_rule=FLYTE_TAINT_RULE)
    written = platform_contract(settings)
    assert v2_fields(written) == v2_fields(WRITTEN["mixed-spot-external"])
    assert_v3(written)
    assert PlatformContract.from_json(written).to_json() == written, "version 3 round-trips"


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_from_json_and_to_json_round_trip_and_match_the_schema(name):
    document = WRITTEN[name]
    jsonschema.validate(document, json_schema())
    assert PlatformContract.from_json(document).to_json() == document


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_a_contract_written_before_offers_reads_with_its_one_offer_derived(name):
    contract = PlatformContract.from_json(EXPORTED[name])
    # A contract written before offers had prices reads with none (#38).
    unpriced = json.loads(json.dumps(WRITTEN[name]))
    for pool in unpriced["gpuPools"].values():
        pool["offers"][0]["hourlyPrice"] = None
    assert contract.to_json() == unpriced
    assert all(pool.kind == "agentPool" and pool.sharing is None and len(pool.offers) == 1
               for pool in contract.gpu_pools.values())


def test_a_node_pool_with_several_offers_and_sharing_reads_and_round_trips():
    document = {**WRITTEN["dev"], "gpuPools": {"nap": NODE_POOL}}
    pool = PlatformContract.from_json(document).gpu_pools["nap"]
    assert pool.kind == "nodePool" and pool.sharing is not None and pool.sharing.replicas == 4
    assert [(offer.vm_size, offer.per_node, offer.capacity_types) for offer in pool.offers] == [
        ("Standard_NC4as_T4_v3", 4, ("spot", "onDemand")), ("Standard_NC64as_T4_v3", 16, ("spot", "onDemand"))]
    written = PlatformContract.from_json(document).to_json()["gpuPools"]["nap"]
    assert {key: written[key] for key in NODE_POOL} == NODE_POOL
    # Offers given are read as given, never re-derived from the single-size fields.
    assert PlatformContract.from_json(json.loads(json.dumps(document).replace(": 4,", ": 4.0,"))).gpu_pools[
        "nap"].offers == pool.offers


@pytest.mark.parametrize(("change", "expected"), [
    ({"kind": "karpenter"}, "gpuPools.nap.kind: expected agentPool or nodePool, got 'karpenter'"),
    ({"offers": []}, "gpuPools.nap.offers: expected a non-empty list of objects (vmSize, gpuModel"),
    ({"offers": {"vmSize": "x"}}, "gpuPools.nap.offers: expected a non-empty list of objects"),
    ({"offers": [{"resource": "nvidia.com/gpu", "perNode": 1.5}]},
     "gpuPools.nap.offers[0].perNode: expected a whole number from 0 to 1000000, got 1.5"),
    ({"offers": [{"resource": "nvidia.com/gpu"}]},
     "gpuPools.nap.offers[0] has no perNode: this is not a gpu-aks outputs contract"),
    ({"offers": [{"resource": "nvidia.com/gpu", "perNode": 1, "capacityTypes": ["spot", "spot"]}]},
     "gpuPools.nap.offers[0].capacityTypes: expected a non-empty list of onDemand and spot, got ['spot', 'spot']"),
    ({"offers": [{"resource": "nvidia.com/gpu", "perNode": 1, "capacityTypes": ["reserved"]}]},
     "gpuPools.nap.offers[0].capacityTypes: expected a non-empty list of onDemand and spot"),
    ({"sharing": {"strategy": "mig", "replicas": 2}}, "gpuPools.nap.sharing.strategy: expected timeSlicing or mps, "
                                                        "got 'mig'"),
    ({"sharing": {"strategy": "mps", "replicas": 0}}, "gpuPools.nap.sharing.replicas: expected a whole number from 1"),
    ({"sharing": {"strategy": "mps"}}, "gpuPools.nap.sharing has no replicas: this is not a gpu-aks outputs contract"),
    ({"sharing": "timeSlicing"}, "gpuPools.nap.sharing: expected null or an object (strategy, replicas)"),
])
def test_each_bad_kind_offer_or_sharing_is_named_by_its_key(change, expected):
    with pytest.raises(ContractError, match=re.escape(expected)):
        PlatformContract.from_json({"gpuPools": {"nap": {**NODE_POOL, **change}}})


def test_a_stack_reference_delivers_floats_and_the_counts_come_back_whole():
    document = json.loads(json.dumps(EXPORTED["prod"]).replace(": 2,", ": 2.0,"))
    contract = PlatformContract.from_json(document)
    assert contract.contract_version == 2
    assert all(isinstance(pool.gpus_per_node, int) for pool in contract.gpu_pools.values())


@pytest.mark.parametrize("version", [99, "banana", True, 0, 2.5])
def test_unknown_contract_versions_are_refused_naming_the_versions_read(version):
    with pytest.raises(ContractError) as error:
        PlatformContract.from_json({**WRITTEN["dev"], "contractVersion": version})
    assert str(error.value).startswith("contractVersion: ") and "it reads 1, 2" in str(error.value)


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("gpusPerNode", float("inf"), "gpuPools.gput4.gpusPerNode: expected a whole number from 0 to 1000000, got inf"),
    ("gpusPerNode", float("nan"), "gpuPools.gput4.gpusPerNode: expected a whole number from 0 to 1000000, got nan"),
    ("minCount", 1.5, "gpuPools.gput4.minCount: expected a whole number from 0 to 1000000, got 1.5"),
    ("maxCount", "2", "gpuPools.gput4.maxCount: expected a whole number from 0 to 1000000, got '2'"),
    ("spot", "yes", "gpuPools.gput4.spot: expected true or false, got 'yes'"),
    ("taints", "sku=gpu:NoSchedule", "gpuPools.gput4.taints: expected a list of key=value:Effect strings"),
    ("labels", {"a": 1}, "gpuPools.gput4.labels: expected a map of label keys to values"),
    ("devicePlugin", "nvidia", "gpuPools.gput4.devicePlugin: expected gpu-aks or external or null, got 'nvidia'"),
])
def test_each_bad_pool_value_is_named_by_its_key(key, value, expected):
    document = json.loads(json.dumps(EXPORTED["dev"]))
    document["gpuPools"]["gput4"][key] = value
    with pytest.raises(ContractError, match=re.escape(expected)):
        PlatformContract.from_json(document)


def test_every_problem_is_reported_and_a_missing_field_the_tools_need_is_named():
    with pytest.raises(ContractError) as error:
        PlatformContract.from_json({"migStrategy": "half", "gpuPools": {"t4": {"taints": []}}})
    assert str(error.value).split("; ") == [
        "migStrategy: expected one of none, single, mixed, got 'half'",
        "gpuPools.t4 has no gpusPerNode: this is not a gpu-aks outputs contract",
        "gpuPools.t4 has no gpuResource: this is not a gpu-aks outputs contract",
        "gpuPools.t4 has no labels: this is not a gpu-aks outputs contract",
    ]


def test_every_outputs_shape_reads_the_same_pools():
    document = EXPORTED["prod"]
    shapes = [document, {"stack": "prod", "outputs": document}, document["gpuPools"]]
    assert len({json.dumps(PlatformContract.from_json(s).to_json()["gpuPools"], sort_keys=True) for s in shapes}) == 1
    assert PlatformContract.from_json(document["gpuPools"]).contract_version is None


def test_a_version_1_contract_without_pool_labels_still_reads():
    document = json.loads(json.dumps(EXPORTED["dev"]))
    document["contractVersion"] = 1
    for pool in document["gpuPools"].values():
        del pool["azureName"], pool["poolLabel"]
    pool = PlatformContract.from_json(document).gpu_pools["gput4"]
    assert pool.azure_name is None and pool.pool_label == {}


def test_the_smoke_test_pods_carry_the_platforms_pool_label_and_the_contract_placement():
    settings = parse_settings({"gpuPools": [{"name": "gput4", "vmSize": "Standard_NC4as_T4_v3"}]}, "dev", "eastus2",
                              today=date(2026, 11, 22))
    pool = platform_pools(settings).gpu[0]
    template = smoke_job_spec(pool, "img", "cm")["template"]
    contract: GpuPoolEntry = contract_of(settings).gpu_pools["gput4"]
    assert template["metadata"]["labels"][POOL_LABEL] == "gput4" and "gpu-aks/pool" not in template["metadata"]["labels"]
    assert template["spec"]["nodeSelector"] == contract.node_selector
    assert template["spec"]["containers"][0]["resources"]["limits"] == {contract.gpu_resource: 1}


# --- The published schema and page -------------------------------------------------------------


def test_the_published_schema_and_page_are_current():
    schema = ROOT / "docs" / "contract.schema.json"
    assert json.loads(schema.read_text()) == json_schema(), "regenerate docs/contract.schema.json (tools/docs.py)"
    assert schema.read_text() == json.dumps(json_schema(), indent=2) + "\n"
    assert (ROOT / "docs" / "contract.md").read_text() == contract_markdown(), "regenerate docs/contract.md"


def test_the_mig_strategy_type_is_the_catalogs_set():
    from typing import get_args

    from gpu_aks_policies.catalog import MIG_STRATEGIES
    from gpu_aks_policies.contract import MigStrategy

    assert get_args(MigStrategy) == MIG_STRATEGIES


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(json_schema())


# --- app_sdk reads the same contract (it stays standard-library-only, so it keeps its own reader) --


def test_the_app_helpers_testing_platform_matches_the_schema_and_the_reader():
    import gpu_aks_app_testing as testing

    variants = [testing.platform_outputs(),
                testing.platform_outputs([testing.gpu_pool(name="a100", vm_size="Standard_NC24ads_A100_v4",
                                                            gpu_model="A100 80GB", accelerator="nvidia-a100-80gb",
                                                            mig_partition="1g.10gb", mig_instances_per_gpu=7,
                                                            mig_strategy="mixed"),
                                          testing.gpu_pool(name="t4spot", spot=True)], mig_strategy="mixed")]
    for outputs in variants:
        jsonschema.validate(outputs, json_schema())
        jsonschema.validate(testing.as_delivered(outputs), json_schema())
        assert PlatformContract.from_json(testing.as_delivered(outputs)).to_json()["gpuPools"] == outputs["gpuPools"]
    assert (testing.CONTRACT_VERSION, testing.POOL_LABEL, testing.SPOT_TAINT) == (CONTRACT_VERSION, POOL_LABEL, SPOT_TAINT)


def _keys_read(function: object, name: str) -> set[str]:
    """The keys a helper function reads of `name` (`name.get("key")`, `name["key"]`)."""
    return set(re.findall(rf"""\b{name}(?:\.get\(|\[)["']([A-Za-z]+)["']""", inspect.getsource(function)))


def test_the_app_helper_reads_the_versions_and_only_the_pool_keys_the_schema_has():
    """The helper (standard library only) reads version 3's `pools` as the pool model's JSON names
    them (`Pool`, `Offer`), and version 2's `gpuPools` as its entries do."""
    import gpu_aks_app as app
    from gpu_aks_policies.fields import json_names
    from gpu_aks_policies.pools.model import Allocatable, Offer, Pool

    assert app.SUPPORTED_CONTRACT_VERSIONS == READABLE_CONTRACT_VERSIONS
    assert set(app.POOL_KEYS) <= set(json_names(Pool)) and set(app.OFFER_KEYS) <= set(json_names(Offer))
    assert _keys_read(app._v3_pool, "pool") == set(app.POOL_KEYS)
    assert _keys_read(app._v3_pool, "offer") == set(app.OFFER_KEYS)
    assert _keys_read(app._room, "allocatable") == set(app.ALLOCATABLE_KEYS) <= set(json_names(Allocatable))
    read = _keys_read(app._v2_pool, "pool") | _keys_read(app._v2_offers, "pool")
    assert read and read <= set(json_schema()["$defs"]["GpuPoolEntry"]["properties"]), read
    offer_read = _keys_read(app._v2_pool, "offer")
    assert offer_read and offer_read <= set(json_schema()["$defs"]["GpuOfferEntry"]["properties"]), offer_read
    for version in (99, "banana", True):
        with pytest.raises(app.PlacementError):
            app.place({**EXPORTED["dev"], "contractVersion": version}, app.GpuRequest())
        with pytest.raises(ContractError):
            PlatformContract.from_json({**WRITTEN["dev"], "contractVersion": version})


@pytest.mark.parametrize("stack", ["dev", "prod", "nap"])
def test_platform_readers_read_versions_2_and_3_alike(stack, request):
    """`--platform` (the checker, the explainer, the doctor) and the app helper read a version 3
    contract as its version 2 fields say, and a version 2 contract as before: both into the pool
    model serialized (`gpu_pool_models`), prices included, NodePool-backed pools too."""
    from gpu_aks_app import GpuRequest, place
    from gpu_aks_policies.fit import platform_from_outputs

    from tools.observability import stack_settings

    v3 = platform_contract(stack_settings(stack)) if stack == "nap" else \
        request.getfixturevalue(f"{stack}_run").stack_outputs
    v2 = {key: value for key, value in v3.items() if key != "pools"} | {"contractVersion": 2}
    # Version 2 has no `allocatable`: what a node gives pods is version 3's alone.
    read_v3 = {name: replace(pool, offers=tuple(replace(offer, allocatable=None) for offer in pool.offers))
               for name, pool in platform_from_outputs(v3).pools.items()}
    assert read_v3 == platform_from_outputs(v2).pools
    assert all(offer.hourly_price for pool in platform_from_outputs(v3).pools.values() for offer in pool.offers)
    assert place(v3, GpuRequest()) == place(v2, GpuRequest())
    assert PlatformContract.from_json(v2).pools is None and set(PlatformContract.from_json(v3).pools or ()) == \
        set(v3["pools"])


def test_a_version_3_contract_is_read_from_its_pool_model_and_a_gpu_pool_needs_a_gpu_offer(dev_run):
    """The readers read `pools` (the pool model) when a contract has it: `gpuPools` is then version 2's
    copy for older readers. A GPU pool whose offers bring no GPU is refused, by key."""
    from gpu_aks_policies.fit import platform_from_outputs

    outputs = json.loads(json.dumps(dev_run.stack_outputs))
    [name] = [name for name, pool in outputs["pools"].items() if pool["role"] == "gpu"][:1]
    outputs["pools"][name]["zones"] = ["2"]  # version 2 has no zones
    assert platform_from_outputs(outputs).pools[name].zones == ("2",)
    for offer in outputs["pools"][name]["offers"]:
        offer["resource"] = None
    with pytest.raises(ContractError, match=rf"pools\.{name}\.offers: a GPU pool needs an offer with a resource"):
        PlatformContract.from_json(outputs)


#: (how the contract is damaged, the problem named): each in one version only.
DISAGREEING = {
    "taints": (lambda o, gpu, cpu: o["pools"][gpu].update(taints=["team=ml:NoSchedule"]),
               r"pools\.{gpu} and gpuPools\.{gpu} disagree \(taints\)"),
    "perNode": (lambda o, gpu, cpu: o["gpuPools"][gpu]["offers"][0].update(perNode=7),
                r"pools\.{gpu} and gpuPools\.{gpu} disagree \(offers\)"),
    "plugin and count": (lambda o, gpu, cpu: o["gpuPools"][gpu].update(devicePlugin="external", maxCount=9),
                         r"pools\.{gpu} and gpuPools\.{gpu} disagree \(maxCount, devicePlugin\)"),
    # Version 2 pins pods to another pool's nodes than version 3's labels say the pool's nodes carry.
    "nodeSelector": (lambda o, gpu, cpu: o["gpuPools"][gpu]["nodeSelector"].update({"gpu-aks.io/pool": "other"}),
                     r"pools\.{gpu} and gpuPools\.{gpu} disagree \(nodeSelector\)"),
    "a GPU pool": (lambda o, gpu, cpu: o["pools"].pop(gpu), r"gpuPools\.{gpu}: a GPU pool that pools lacks"),
    "a CPU pool": (lambda o, gpu, cpu: o["cpuPools"].pop(cpu), r"pools\.{cpu}: a CPU pool that cpuPools lacks"),
    "a CPU size": (lambda o, gpu, cpu: o["cpuPools"][cpu].update(vmSize="Standard_D2ds_v5"),
                   r"pools\.{cpu} and cpuPools\.{cpu} disagree \(offers\)"),
}


@pytest.mark.parametrize(("edit", "keys"), DISAGREEING.values(), ids=DISAGREEING)
def test_a_contract_whose_two_versions_disagree_is_refused_naming_both_keys(dev_run, edit, keys):
    """The explainer reads `pools`, an app helper before version 3 `gpuPools`: where they disagree, one
    would place a pod the other says fits nowhere (#50), so the contract is refused, naming both keys."""
    outputs = json.loads(json.dumps(dev_run.stack_outputs))
    gpu = next(name for name, pool in outputs["pools"].items() if pool["role"] == "gpu")
    cpu = next(name for name, pool in outputs["pools"].items() if pool["role"] == "cpu")
    PlatformContract.from_json(outputs)  # as the platform writes it, the two agree
    edit(outputs, gpu, cpu)
    with pytest.raises(ContractError, match=keys.format(gpu=gpu, cpu=cpu)):
        PlatformContract.from_json(outputs)


def test_a_spot_price_above_on_demand_is_refused_by_key(dev_run):
    """Spot's default max price (-1) is the on-demand price: a contract that lists Spot dearer is no price
    Azure charges, and the explainer would state it to a pod (#50). Each version's price is refused."""
    outputs = json.loads(json.dumps(dev_run.stack_outputs))
    name = next(name for name, pool in outputs["gpuPools"].items() if pool["offers"][0]["hourlyPrice"])
    prices = [outputs[version][name]["offers"][0]["hourlyPrice"] for version in ("pools", "gpuPools")]
    for price in prices:
        price["spot"] = price["onDemand"]
    PlatformContract.from_json(outputs)  # at on-demand: the most Spot costs
    for price in prices:
        price["spot"] = price["onDemand"] + 0.01
    with pytest.raises(ContractError) as error:
        PlatformContract.from_json(outputs)
    for version in ("gpuPools", "pools"):
        assert re.search(rf"{version}\.{name}\.offers\[0\]\.hourlyPrice\.spot: [0-9.]+ is above onDemand",
                         str(error.value)), version
