"""What a run would replace or delete, against the last update's `clusterIdentity` (issue 30: "a change
that would replace the cluster or a GPU pool, or drop `protect`, accepted without a word").

Refused at preview: a new cluster name, resource group, region or DNS prefix (pulumi-azure-native
replaces the ManagedCluster and the ResourceGroup on them: `provider/pkg/gen/replacement.go` at
1b7112af33c62b247daed1028686bf279f4d5e69, and the generated schema's `willReplaceOnChanges` in
`provider/pkg/gen/__snapshots__/gen_managedcluster_test.snap` at
080cda17eb4b5115258d794289841cd79404b64d), and a GPU pool replacement that deletes first while
`cluster.protect` is on. Warned: a GPU pool replaced or removed, `protect` turned off, and the
network upgrades AKS makes in place but the provider carries out as a replacement.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
from gpu_aks_policies.limits import MAX_SHOWN_CHARS
from hypothesis import given, settings
from hypothesis import strategies as st

from components.pools import platform_pools
from components.replacements import (
    AGENT_POOL_REPLACED_ON,
    IDENTITY_OUTPUT,
    MANAGED_CLUSTER_REPLACED_ON,
    RESOURCE_GROUP_REPLACED_ON,
    identity_changes,
    identity_record,
)
from components.settings.common import RECORD_SECRET
from components.settings.network import NETWORK_UPGRADES, PROVIDER_REPLACES_ON, network_upgrade_warnings
from offline.mockrun import PlatformMocks, own_stack_reference, run_program
from tests.conftest import ROOT
from tools.preview import load_previous_outputs, main, run_stack_program
from tools.stacks import config_from_stack_file, settings_from_stack_file


def _record(stack: str = "dev") -> dict[str, Any]:
    settings = settings_from_stack_file(ROOT / f"Pulumi.{stack}.yaml", stack)
    return identity_record(settings.cluster, platform_pools(settings))


DEV = _record("dev")
PROD = _record("prod")


def _with(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """`record` with the value at the dotted `path` replaced (`gpuPools.gput4.createOnly.vmSize`)."""
    changed = copy.deepcopy(record)
    *parents, last = path.split(".")
    target = changed
    for key in parents:
        target = target[key]
    target[last] = value
    return changed


# --- The record -----------------------------------------------------------------------------------


def test_the_record_holds_the_cluster_identity_protect_and_each_gpu_pool():
    assert DEV["cluster"] == {"resourceName": "gpu-aks-dev", "resourceGroupName": "rg-gpu-aks-dev",
                              "location": "eastus2", "dnsPrefix": "gpu-aks-dev"}
    assert DEV["protect"] is False and PROD["protect"] is True
    gput4 = DEV["gpuPools"]["gput4"]
    assert gput4["kind"] == "agentPool" and gput4["key"] == "gpuPools[gput4]"
    assert gput4["azureName"].startswith("gput4") and gput4["createOnly"]["vmSize"] == "standard_nc4as_t4_v3"
    assert set(PROD["gpuPools"]) == {"a100mig", "t4spot"}, "GPU pools only: the CPU and system pools are not recorded"
    assert PROD["gpuPools"]["a100mig"]["createOnly"]["gpuInstanceProfile"] == "MIG2g"
    json.dumps(DEV)  # a stack output: plain JSON


def test_the_program_exports_the_record_for_its_next_run(dev_run, prod_run):
    assert dev_run.stack_outputs[IDENTITY_OUTPUT] == DEV
    assert prod_run.stack_outputs[IDENTITY_OUTPUT] == PROD
    assert IDENTITY_OUTPUT not in dev_run.secret_outputs


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_input_the_provider_replaces_on_is_recorded(stack, dev_run, prod_run):
    run = {"dev": dev_run, "prod": prod_run}[stack]
    record = run.stack_outputs[IDENTITY_OUTPUT]
    [cluster] = run.by_type("azure-native:containerservice:ManagedCluster")
    sent = set(cluster.inputs) & set(MANAGED_CLUSTER_REPLACED_ON)
    assert sent == {"resourceName", "resourceGroupName", "location", "dnsPrefix", "networkProfile"}
    assert sent - {"networkProfile"} == set(record["cluster"]), "networkProfile is clusterNetwork's"
    assert set(run.stack_outputs["clusterNetwork"]) - {RECORD_SECRET} == set(cluster.inputs["networkProfile"]) - {
        "loadBalancerSku"}
    [group] = run.by_type("azure-native:resources:ResourceGroup")
    assert set(group.inputs) & set(RESOURCE_GROUP_REPLACED_ON) == {"resourceGroupName", "location"}
    for pool in run.by_type("azure-native:containerservice:AgentPool"):
        recorded = next((entry for entry in record["gpuPools"].values()
                         if entry["azureName"] == pool.inputs["agentPoolName"]), None)
        if recorded is None:
            continue  # a CPU pool
        sent = set(pool.inputs) & set(AGENT_POOL_REPLACED_ON)
        assert sent - {"agentPoolName", "resourceGroupName", "resourceName"} <= set(recorded["createOnly"]), pool.name
        assert recorded["createOnly"]["vmSize"] == pool.inputs["vmSize"].lower()
        assert {"vmSize", "gpuInstanceProfile"} <= set(pool.replace_on_changes)


# --- Nothing to say -------------------------------------------------------------------------------


@pytest.mark.parametrize("previous", [None, "[secret]", 0, [], {}, {"version": 1}, {"cluster": 5, "gpuPools": []},
                                      {"cluster": {"resourceName": 5}, "gpuPools": {"gput4": "x"}, "protect": "yes"},
                                      {"gpuPools": {"gput4": {"createOnly": [1, 2]}}},
                                      {"gpuPools": {"gput4": {"kind": "agentPool"}}}])
def test_first_deploys_older_records_and_garbage_pass_silently(previous):
    assert identity_changes(previous, DEV) == identity_changes(DEV, DEV)
    assert not identity_changes(previous, DEV).refused and not identity_changes(previous, DEV).warnings


def test_an_unchanged_stack_and_a_region_spelled_otherwise_say_nothing():
    assert not identity_changes(PROD, PROD).refused and not identity_changes(PROD, PROD).warnings
    spelled = _with(DEV, "cluster.location", "East US 2")
    assert identity_changes(spelled, DEV).refused == ()


def test_a_record_of_an_older_shape_skips_the_keys_it_lacks():
    older = copy.deepcopy(DEV)
    del older["gpuPools"]["gput4"]["createOnly"]["osSKU"], older["cluster"]["dnsPrefix"]
    assert identity_changes(older, DEV) == identity_changes(DEV, DEV)


# --- Refused: the cluster and its resource group ---------------------------------------------------


def test_a_new_cluster_name_is_refused_naming_key_old_new_and_the_way_out():
    changes = identity_changes(_with(DEV, "cluster.resourceName", "aks-old"), DEV)
    [problem] = changes.refused
    assert problem.startswith("gpu-aks:cluster.name: the cluster has 'aks-old' (its last update), this run says "
                              "'gpu-aks-dev'")
    assert "Put 'aks-old' back" in problem and "new stack" in problem and "pulumi destroy" in problem


def test_every_cluster_replacement_is_refused_at_once():
    previous = _with(_with(DEV, "cluster.resourceGroupName", "rg-old"), "cluster.location", "westeurope")
    refused = identity_changes(previous, DEV).refused
    assert [problem.split(":")[0] + ":" + problem.split(":")[1] for problem in refused] == [
        "gpu-aks:cluster.resourceGroupName", "azure-native:location"]
    assert "deletes the old group, and with it the cluster" in refused[0] and "'westeurope'" in refused[1]


def test_a_dns_prefix_derived_otherwise_is_refused_but_not_twice_with_a_new_name():
    refused = identity_changes(_with(DEV, "cluster.dnsPrefix", "gpu-aks-dev-1"), DEV).refused
    assert len(refused) == 1 and "DNS prefix" in refused[0] and "gpu-aks bug" in refused[0]
    renamed = _with(_with(DEV, "cluster.resourceName", "old"), "cluster.dnsPrefix", "old")
    assert len(identity_changes(renamed, DEV).refused) == 1


# --- GPU pools and protect ------------------------------------------------------------------------


def test_a_replaced_gpu_pool_is_warned_with_each_create_only_change():
    previous = _with(_with(DEV, "gpuPools.gput4.createOnly.vmSize", "standard_nc8as_t4_v3"),
                     "gpuPools.gput4.azureName", "gput4abcd")
    changes = identity_changes(previous, DEV)
    assert changes.refused == ()
    [warning] = changes.warnings
    assert warning.startswith("gpu-aks:gpuPools[gput4]: this run replaces the GPU pool (vmSize "
                              "'standard_nc8as_t4_v3' -> 'standard_nc4as_t4_v3')")
    assert f"creates '{DEV['gpuPools']['gput4']['azureName']}' first, then deletes AgentPool 'gput4abcd'" in warning


def test_a_node_baseline_key_set_for_the_first_time_replaces_the_pool():
    current = _with(DEV, "gpuPools.gput4.createOnly.maxPods", 50)
    [warning] = identity_changes(DEV, current).warnings
    assert "maxPods None -> 50" in warning


def test_a_removed_gpu_pool_and_a_pool_that_changes_kind_are_warned():
    removed = _with(DEV, "gpuPools.gput4", None)
    del removed["gpuPools"]["gput4"]
    [gone] = identity_changes(DEV, removed).warnings
    assert gone.startswith("gpu-aks:gpuPools[gput4]: no longer a GPU pool of this stack: this run deletes AgentPool")
    nap = _record("nap")
    [gone] = identity_changes(nap, {**nap, "gpuPools": {"a100": nap["gpuPools"]["a100"]}}).warnings
    assert gone.startswith("gpu-aks:gpuNodePools[h100]: no longer a GPU pool of this stack: this run deletes its "
                           "NodePool")
    moved = _with(DEV, "gpuPools.gput4.kind", "nodePool")
    [kind] = identity_changes(DEV, moved).warnings
    assert "moves from an AKS agent pool to a NAP (Karpenter) NodePool" in kind


def test_a_delete_first_replacement_is_refused_under_protect_and_warned_without():
    keeps = _with(_with(PROD, "gpuPools.t4spot.deletesBeforeReplace", True), "gpuPools.t4spot.azureName", "t4spot")
    previous = _with(keeps, "gpuPools.t4spot.createOnly.vmSize", "standard_nc8as_t4_v3")
    [problem] = identity_changes(previous, keeps).refused
    assert problem.startswith("gpu-aks:gpuPools[t4spot]: this run replaces the GPU pool (vmSize")
    assert "deletes AgentPool 't4spot' first" in problem and "cluster.protect is on" in problem
    assert "keepAzureName: false" in problem
    unprotected = _with(keeps, "protect", False)
    changes = identity_changes(_with(previous, "protect", False), unprotected)
    assert changes.refused == () and "no GPU nodes in between" in changes.warnings[0]


def test_protect_turned_off_is_warned_and_turned_on_is_not():
    [warning] = identity_changes(PROD, _with(PROD, "protect", False)).warnings
    assert warning.startswith("gpu-aks:cluster.protect: true (the last update) -> false")
    assert identity_changes(DEV, _with(DEV, "protect", True)).warnings == ()


# --- Hostile records --------------------------------------------------------------------------------


def test_secret_values_are_masked():
    previous = _with(_with(DEV, "cluster.resourceName", "hidden-name"), "gpuPools.gput4.azureName", "hiddenpool")
    changes = identity_changes(previous, DEV, masked=True)
    text = "\n".join(changes.refused + changes.warnings)
    assert "hidden" not in text and "gpu-aks-dev" not in text and "[secret]" in text


@pytest.mark.slow
def test_hostile_values_are_escaped_and_bounded():
    hostile = "\x1b[31m::error::" + "x" * 10_000
    previous = _with(_with(DEV, "cluster.resourceName", hostile), "gpuPools.gput4.createOnly.vmSize", [hostile] * 1000)
    previous["gpuPools"]["\x1b]8;;evil\x07"] = {"kind": "agentPool", "azureName": hostile, "createOnly": {},
                                               "key": "gpuPools[\x1b[2J]"}
    previous["gpuPools"].update({f"p{index}": {"kind": 7, "createOnly": {str(i): i for i in range(1000)}}
                                 for index in range(5000)})
    changes = identity_changes(previous, DEV)
    for message in changes.refused + changes.warnings:
        assert "\x1b" not in message and "\x07" not in message
        assert len(message) < 1200
    assert len(changes.warnings) <= 1001, "at most MAX_RECORDED_POOLS pools are read"
    quoted = changes.refused[0].split(" the cluster has ")[1].split(" (its last update)")[0]
    assert quoted.startswith("'\\x1b[31m::error::xxx") and quoted.endswith("…") and len(quoted) == MAX_SHOWN_CHARS + 1


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                     lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children,
                                                                                         max_size=4), max_leaves=20)
#: A record whose every field may be garbage: the keys a reader looks for, with any JSON under them.
_RECORDS = st.fixed_dictionaries({}, optional={
    "cluster": _JSON | st.fixed_dictionaries({}, optional={key: _JSON for key in DEV["cluster"]}),
    "protect": _JSON,
    "gpuPools": _JSON | st.dictionaries(st.sampled_from(["gput4", "other"]), _JSON | st.fixed_dictionaries(
        {}, optional={key: _JSON for key in DEV["gpuPools"]["gput4"]}), max_size=2)})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(previous=_RECORDS | _JSON, masked=st.booleans())
def test_any_recorded_value_gives_messages_never_a_traceback(previous, masked):
    changes = identity_changes(previous, DEV, masked)
    for message in changes.refused + changes.warnings:
        assert message.startswith(("gpu-aks:", "azure-native:location:", "the GPU pool "))
        assert not any(ord(char) < 32 for char in message)
        if masked:
            assert "gpu-aks-dev" not in message and "standard_nc4as_t4_v3" not in message


def test_a_secret_cluster_section_makes_the_record_secret(dev_run):
    config, _ = config_from_stack_file(ROOT / "Pulumi.dev.yaml", "gpu-aks")
    run = run_program(ROOT, "dev", config, ["gpu-aks:cluster"])
    assert run.error is None, run.error
    assert {IDENTITY_OUTPUT, "clusterNetwork"} <= run.secret_outputs
    previous = {**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(DEV, "cluster.resourceName", "old-name")}
    mocks = PlatformMocks(stack_references={own_stack_reference("dev"): previous})
    refused = run_program(ROOT, "dev", config, ["gpu-aks:cluster"], mocks=mocks)
    assert isinstance(refused.error, pulumi.RunError)
    assert "gpu-aks:cluster.name: the cluster has [secret]" in str(refused.error) and "old-name" not in str(refused.error)
    network = {**dev_run.stack_outputs, "clusterNetwork": {**dev_run.stack_outputs["clusterNetwork"],
                                                           "serviceCidr": "10.99.0.0/16"}}
    mocks = PlatformMocks(stack_references={own_stack_reference("dev"): network})
    moved = run_program(ROOT, "dev", config, ["gpu-aks:cluster"], mocks=mocks)
    assert isinstance(moved.error, pulumi.RunError)
    assert "serviceCidr: the cluster has [secret]" in str(moved.error) and "10.99" not in str(moved.error)


# --- Network upgrades AKS makes in place, which the provider replaces ---------------------------------


def test_network_upgrades_aks_allows_are_warned_as_replacements():
    assert set(NETWORK_UPGRADES) <= set(PROVIDER_REPLACES_ON)
    before = {"networkPlugin": "kubenet", "networkPluginMode": None, "networkDataplane": "azure", "networkPolicy": "none"}
    after = {"networkPlugin": "azure", "networkPluginMode": "overlay", "networkDataplane": "cilium",
             "networkPolicy": "cilium"}
    warnings = network_upgrade_warnings(before, after)
    assert [warning.split(":")[1] for warning in warnings] == [
        "cluster.networkProfile.networkPlugin", "cluster.networkProfile.networkPluginMode",
        "cluster.networkProfile.networkDataplane", "cluster.networkProfile.networkPolicy"]
    assert "pulumi-azure-native replaces the cluster" in warnings[0]
    assert network_upgrade_warnings(after, after) == [] and network_upgrade_warnings(None, after) == []


# --- The program and the offline preview ------------------------------------------------------------


def _dev_after(previous_outputs: dict[str, Any], secret_outputs: tuple[str, ...] = ("kubeconfig",)) -> Any:
    config, secret_keys = config_from_stack_file(ROOT / "Pulumi.dev.yaml", "gpu-aks")
    mocks = PlatformMocks(stack_references={own_stack_reference("dev"): previous_outputs}, secret_outputs=secret_outputs)
    return run_program(ROOT, "dev", config, secret_keys, mocks=mocks)


def _identity_warnings(run: Any) -> list[str]:
    return [warning for warning in run.warnings if "gpuPools[" in warning or "cluster.protect" in warning]


def test_the_program_refuses_a_replaced_cluster_and_warns_before_it(dev_run):
    previous = {**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(_with(DEV, "cluster.resourceName", "aks-old"),
                                                                "protect", True)}
    run = _dev_after(previous)
    assert isinstance(run.error, pulumi.RunError)
    assert "gpu-aks:cluster.name: the cluster has 'aks-old'" in str(run.error)
    assert [warning.split(":")[1] for warning in _identity_warnings(run)] == ["cluster.protect"]


@pytest.mark.slow
def test_the_program_warns_of_a_replaced_gpu_pool_and_stays_silent_when_unchanged(dev_run):
    replaced = _dev_after({**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(
        DEV, "gpuPools.gput4.createOnly.vmSize", "standard_nc8as_t4_v3")})
    assert replaced.error is None, replaced.error
    assert [warning.split(": ")[0] for warning in _identity_warnings(replaced)] == ["gpu-aks:gpuPools[gput4]"]
    unchanged = _dev_after(dev_run.stack_outputs)
    assert unchanged.error is None and _identity_warnings(unchanged) == []
    assert unchanged.stack_outputs[IDENTITY_OUTPUT] == DEV
    garbage = _dev_after({**dev_run.stack_outputs, IDENTITY_OUTPUT: {"cluster": ["\x1b"], "gpuPools": 3}})
    assert garbage.error is None and _identity_warnings(garbage) == []


def test_a_secret_record_is_never_printed(dev_run):
    previous = {**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(DEV, "cluster.resourceName", "secret-old-name")}
    run = _dev_after(previous, secret_outputs=("kubeconfig", IDENTITY_OUTPUT))
    assert isinstance(run.error, pulumi.RunError)
    assert "secret-old-name" not in str(run.error) and "[secret]" in str(run.error)
    assert IDENTITY_OUTPUT not in run.stack_outputs


def test_preview_reads_previous_outputs_from_a_file(tmp_path: Path, dev_run):
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps({**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(DEV, "protect", True)}))
    run = run_stack_program("dev", previous_outputs=load_previous_outputs(path))
    assert run.error is None and [w.split(":")[1] for w in _identity_warnings(run)] == ["cluster.protect"]
    assert _identity_warnings(run_stack_program("dev")) == [], "no file: a first deploy"


@pytest.mark.parametrize("content, message", [
    ("{not json", "invalid JSON"), ("[1, 2]", "holds a JSON list"), ("[" * 5000 + "]" * 5000, "nested more than"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
])
def test_a_bad_previous_outputs_file_exits_2(tmp_path: Path, capsys, content: str, message: str):
    path = tmp_path / "outputs.json"
    path.write_text(content)
    assert main(["dev", "--previous-outputs", str(path)], stdout=io.StringIO()) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --previous-outputs: ") and message in error
    assert main(["dev", "--previous-outputs", str(tmp_path / "missing.json")], stdout=io.StringIO()) == 2


@pytest.mark.slow
def test_preview_exits_2_on_a_replaced_cluster_and_lists_warnings_otherwise(tmp_path: Path, dev_run, capsys):
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps({**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(DEV, "cluster.location", "westus")}))
    assert main(["dev", "--previous-outputs", str(path)], stdout=io.StringIO()) == 2
    assert "azure-native:location: the cluster has 'westus'" in capsys.readouterr().err
    path.write_text(json.dumps({**dev_run.stack_outputs, IDENTITY_OUTPUT: _with(
        DEV, "gpuPools.gput4.createOnly.vmSize", "standard_nc8as_t4_v3")}))
    out = io.StringIO()
    assert main(["dev", "--previous-outputs", str(path)], stdout=out) == 0
    assert "\nWarnings:\n    warning: " in out.getvalue()
    assert "\n    warning: gpu-aks:gpuPools[gput4]: this run replaces the GPU pool" in out.getvalue()
    out = io.StringIO()
    main(["dev", "--json", "--previous-outputs", str(path)], stdout=out)
    assert any(w.startswith("gpu-aks:gpuPools[gput4]") for w in json.loads(out.getvalue())["warnings"])
