"""The one pool model and the pool rules at both edges (issue 37): the settings and the pack cannot
disagree about the platform's own pools.

The pack judges each AgentPool and NodePool the program creates (`gpu-node-pools-are-tainted`) and
whether its device-plugin DaemonSets serve every GPU pool that needs one
(`device-plugin-tolerates-gpu-pools`); the settings run the same rules on the same resources before
anything is created. A property test generates pool configurations of every kind, with the device
plugin on or off and serving any of the GPU pools, and holds that what the settings accept passes both
rules on every resource the program creates, and that what they refuse for a rule is refused with the
rule's own reasons, one problem per reason, at the pool's config key (`devicePlugin.pools` for a pool
the plugin leaves out).
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from gpu_aks_policies.pool_rules import (
    UNSERVED,
    StackResource,
    check_device_plugin_coverage,
    check_gpu_node_pool,
    is_device_plugin_daemonset,
)
from gpu_aks_policies.pools import pools_of
from gpu_aks_policies.rule_config import DEVICE_PLUGIN_TOLERATES_POOLS, TAINTED_GPU_POOLS
from gpu_aks_policies.rules import default_rule_config, parse_rule_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.platform_settings import parse_settings
from components.pools import KINDS
from components.pools.rules import own_plugin_resources, resources_of
from components.settings import SettingsError
from tests.conftest import ROOT, run_stack
from tools.stacks import settings_from_stack_file

RULE = default_rule_config()[TAINTED_GPU_POOLS]
OFF = parse_rule_config({TAINTED_GPU_POOLS: {"enforcementLevel": "disabled"}})[TAINTED_GPU_POOLS]
PLUGIN_RULE = default_rule_config()[DEVICE_PLUGIN_TOLERATES_POOLS]
PLUGIN_OFF = parse_rule_config({DEVICE_PLUGIN_TOLERATES_POOLS: {"enforcementLevel": "disabled"}})[
    DEVICE_PLUGIN_TOLERATES_POOLS]
TODAY = date(2026, 11, 26)

taints = st.sampled_from([None, [], ["sku=gpu:NoSchedule"], ["team=ml:NoSchedule"], ["sku=gpu:PreferNoSchedule"],
                          ["nvidia.com/gpu=present:NoSchedule"], ["sku=gpu:NoSchedule", "team=ml:NoSchedule"],
                          ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]])



@st.composite
def count_range(draw: st.DrawFn, fixed: bool = False) -> dict[str, int]:
    """minCount and maxCount, either left out (the defaults), or a range (one count when `fixed`:
    under NAP AKS refuses autoscaling pools, and the settings say so before the rule runs)."""
    if not fixed and draw(st.integers(0, 4)) == 0:
        return {}
    low = draw(st.integers(0, 2))
    return {"minCount": low, "maxCount": low if fixed else low + draw(st.integers(0, 3))}


def _entry(**values: Any) -> dict[str, Any]:
    """A pool entry without the keys drawn as absent."""
    return {key: value for key, value in values.items() if value is not None}


@st.composite
def agent_pool(draw: st.DrawFn, name: str, sizes: list[str], fixed: bool) -> dict[str, Any]:
    return _entry(name=name, vmSize=draw(st.sampled_from(sizes)), **draw(count_range(fixed)),
                  nodeTaints=draw(taints), scaleSetPriority=draw(st.sampled_from([None, "Spot"])))


@st.composite
def gpu_agent_pool(draw: st.DrawFn, name: str, fixed: bool) -> dict[str, Any]:
    """A GPU AgentPool, sometimes MIG-partitioned (on the A100) or with its driver and plugin managed elsewhere."""
    pool = draw(agent_pool(name, ["Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4"], fixed))
    if pool["vmSize"] == "Standard_NC24ads_A100_v4" and draw(st.integers(0, 3)) == 0:
        pool["gpuInstanceProfile"] = "MIG2g"
    if draw(st.integers(0, 5)) == 0:
        pool["gpuProfile"] = {"driver": "None"}
    return pool


@st.composite
def node_pool(draw: st.DrawFn, name: str) -> dict[str, Any]:
    limits = draw(st.sampled_from([None, {"gpu": 0}, {"gpu": 4}, {"cpu": 96}]))
    return _entry(name=name, gpus=[draw(st.sampled_from(["T4", "A100", "H100"]))], limits=limits,
                  nodeTaints=draw(taints))


@st.composite
def device_plugin(draw: st.DrawFn, gpu_pools: list[dict[str, Any]]) -> dict[str, Any]:
    """The device plugin on (mostly) or off, serving its default pools or any of the GPU pools, in any MIG strategy."""
    names = [pool["name"] for pool in gpu_pools]
    served = draw(st.one_of(st.none(), st.lists(st.sampled_from(names), unique=True) if names else st.just([])))
    return _entry(enabled=draw(st.sampled_from([None, None, None, False])), pools=served,
                  migStrategy=draw(st.sampled_from([None, None, "single", "mixed"])))


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A stack of every pool kind: the system pool, CPU and GPU AgentPools, (NAP on) GPU NodePools, and
    gpu-aks's device plugin serving some of the GPU pools."""
    nap = draw(st.booleans())
    raw: dict[str, Any] = {"systemPool": {"minCount": 2, "maxCount": 2} if nap else {}}
    raw["cpuPools"] = [draw(agent_pool("cpu", ["Standard_D8ds_v5"], nap))] if draw(st.booleans()) else []
    raw["gpuPools"] = [draw(gpu_agent_pool(f"gpu{index}", nap)) for index in range(draw(st.integers(0, 2)))]
    if nap:
        raw["cluster"] = {"nodeProvisioningProfile": {"mode": "Auto"}}
        raw["gpuNodePools"] = [draw(node_pool(f"nap{index}")) for index in range(draw(st.integers(1, 2)))]
    raw["devicePlugin"] = draw(device_plugin([*raw["gpuPools"], *raw.get("gpuNodePools", [])]))
    return raw


def _parse(raw: dict[str, Any], rule: Any, plugin_rule: Any = PLUGIN_OFF) -> Any:
    return parse_settings(raw, "property", "eastus2", today=TODAY, environ={}, pool_rule=rule,
                          plugin_rule=plugin_rule)


def _resources(settings: Any) -> list[StackResource]:
    """What the program creates for the pools, each named by its pool's key, and its device-plugin DaemonSets."""
    return [StackResource(kind.facts(pool, settings).key, resource_type, props)
            for kind in KINDS for pool in kind.pools(settings)
            for resource_type, props in resources_of(kind.resources(pool))] + own_plugin_resources(KINDS, settings)


def _rule_reasons(settings: Any) -> list[tuple[str, str, str]]:
    """(rule, pool key, reason) for each finding of the pack's two pool rules on what the program creates."""
    found = []
    resources = _resources(settings)
    for resource in resources:
        for finding in check_gpu_node_pool(resource.type, resource.props, RULE):
            # "GPU node pool 'name' (sizes) <reason>. Fix: <fix in the resource's fields>"
            found.append((TAINTED_GPU_POOLS, resource.urn, finding.message.split(") ", 1)[1].split(". Fix: ", 1)[0]))
    for finding in check_device_plugin_coverage(resources, PLUGIN_RULE):
        assert finding.decided, finding
        # "GPU node pool 'name' (sizes) is not served by any NVIDIA device plugin, ...: <gaps>"
        found.append((DEVICE_PLUGIN_TOLERATES_POOLS, finding.subject, finding.message.split(f"{UNSERVED}: ", 1)[1]))
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks())
def test_what_the_settings_accept_passes_the_pool_rules_and_what_they_refuse_for_them_names_their_reasons(raw):
    try:
        document = _parse(raw, OFF)
    except SettingsError:
        return  # refused for the document itself: nothing is created, the pack sees nothing
    reasons = _rule_reasons(document)
    try:
        _parse(raw, RULE, PLUGIN_RULE)
    except SettingsError as error:
        problems = error.problems
    else:
        assert reasons == [], "the settings accepted pools the pack refuses"
        return
    assert reasons, f"the settings refused pools the pack accepts: {problems}"
    assert len(problems) == len(reasons)
    for (rule, key, reason), problem in zip(reasons, problems, strict=True):
        assert reason in problem and rule in problem, problem
        if rule == TAINTED_GPU_POOLS:
            assert problem.startswith(f"gpu-aks:{key}."), problem
        else:
            assert problem.startswith(f"gpu-aks:devicePlugin.pools: leaves out the GPU pool {key},"), problem


def test_the_settings_refuse_a_device_plugin_that_leaves_out_a_gpu_pool_that_needs_it():
    """The pack refuses a stack whose device-plugin DaemonSets miss a GPU pool whose driver AKS installs;
    the settings refuse it first, at devicePlugin.pools."""
    raw = {"gpuPools": [{"name": name, "vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2}
                        for name in ("a", "b", "c")],
           "devicePlugin": {"pools": ["a"]}}
    document = _parse(raw, RULE)
    assert [(key, rule) for rule, key, _ in _rule_reasons(document)] == \
        [("gpuPools[b]", DEVICE_PLUGIN_TOLERATES_POOLS), ("gpuPools[c]", DEVICE_PLUGIN_TOLERATES_POOLS)]
    with pytest.raises(SettingsError) as error:
        _parse(raw, RULE, PLUGIN_RULE)
    assert [problem.split(",", 1)[0] for problem in error.value.problems] == [
        "gpu-aks:devicePlugin.pools: leaves out the GPU pool gpuPools[b]",
        "gpu-aks:devicePlugin.pools: leaves out the GPU pool gpuPools[c]"]
    assert "nvidia-device-plugin-daemonset does not select its nodes" in error.value.problems[0]
    assert "Fix: add 'b' to devicePlugin.pools" in error.value.problems[0]
    # Served, left to the default, or no DaemonSet at all (the pack then assumes another plugin): accepted.
    for plugin in ({"pools": ["a", "b", "c"]}, {}, {"enabled": False}, {"pools": []}):
        _parse({**raw, "devicePlugin": plugin}, RULE, PLUGIN_RULE)
    advisory = parse_rule_config({DEVICE_PLUGIN_TOLERATES_POOLS: {"enforcementLevel": "advisory"}})[
        DEVICE_PLUGIN_TOLERATES_POOLS]
    warnings = [text for text in _parse(raw, RULE, advisory).warnings if DEVICE_PLUGIN_TOLERATES_POOLS in text]
    assert len(warnings) == 2


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.integers(-3, 1003), st.floats(allow_nan=True, allow_infinity=True),
                 st.sampled_from([2.0, -0.0, 1000.0, 1001.0, 2.5, 1e30, 10**400, -10**400, True])))
def test_the_settings_and_the_pack_read_a_node_count_alike(count):
    """One answer to "is this a node count AKS keeps to" (the review's pair: the settings' count check
    and the pack's, each fixed on its own in c41f3dd): the settings refuse gpu-aks's own pool's
    maxCount exactly when the pack reads the same count on an AgentPool as no bound, for the same reason."""
    vm_size = "Standard_NC4as_T4_v3"
    try:
        _parse({"gpuPools": [{"name": "g", "vmSize": vm_size, "minCount": 0, "maxCount": count}]}, OFF)
        refused = []
    except SettingsError as error:
        refused = [problem for problem in error.problems if problem.startswith("gpu-aks:gpuPools[g].maxCount: ")]
    [pool] = pools_of("azure-native:containerservice:AgentPool", {
        "agentPoolName": "g", "vmSize": vm_size, "enableAutoScaling": True, "minCount": 0, "maxCount": count})
    assert pool.written is not None
    assert bool(refused) == (not pool.written.autoscaled), (refused, pool.written.bounds)
    # "enableAutoScaling: true, minCount: 0, maxCount: <count>; maxCount <why>" (no why for a value that
    # is no number at all: the pack reads it as no bound)
    for why in pool.written.bounds.split("; maxCount ", 1)[1:]:
        assert refused[0].endswith(f" {why}"), (refused, why)


def test_the_settings_refuse_every_kind_at_its_own_key():
    refused = {"gpuPools": [{"name": "g", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["team=ml:NoSchedule"]}],
               "cluster": {"nodeProvisioningProfile": {"mode": "Auto"}}, "systemPool": {"minCount": 2, "maxCount": 2},
               "gpuNodePools": [{"name": "n", "gpus": ["H100"], "limits": {"gpu": 8}, "nodeTaints": ["team=ml:NoSchedule"]}]}
    refused["gpuPools"][0].update(minCount=1, maxCount=1)
    with pytest.raises(SettingsError) as error:
        _parse(refused, RULE)
    keys = sorted(problem.split(": ", 1)[0] for problem in error.value.problems)
    assert keys == ["gpu-aks:gpuNodePools[n].nodeTaints", "gpu-aks:gpuPools[g].maxCount", "gpu-aks:gpuPools[g].nodeTaints"]


def test_an_advisory_or_disabled_rule_warns_or_says_nothing():
    raw = {"gpuPools": [{"name": "g", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["team=ml:NoSchedule"]}]}
    advisory = parse_rule_config({TAINTED_GPU_POOLS: {"enforcementLevel": "advisory"}})[TAINTED_GPU_POOLS]
    [warning] = [text for text in _parse(raw, advisory).warnings if TAINTED_GPU_POOLS in text]
    assert warning.startswith("gpu-aks:gpuPools[g].nodeTaints: the GPU pool carries no NoSchedule GPU taint")
    assert not [text for text in _parse(raw, OFF).warnings if TAINTED_GPU_POOLS in text]


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod", "nap"])
def test_the_pack_reads_the_programs_pools_as_the_settings_read_them(stack):
    """The resources the settings judge (`resources_of`) are the ones the program registers, as the pack
    receives them: each pool reads the same through the pack's backend readers on both."""
    run = run_stack(stack)
    assert run.error is None, run.error
    registered = {}
    for resource in run.resources:
        for read in pools_of(resource.type, resource.inputs):
            registered[read.pool.name] = read
    settings_ = settings_from_stack_file(ROOT / f"Pulumi.{stack}.yaml", stack, environ={})
    judged = {read.pool.name: read for kind in KINDS for pool in kind.pools(settings_)
              for resource_type, props in resources_of(kind.resources(pool)) for read in pools_of(resource_type, props)}
    assert judged and set(judged) <= set(registered)
    for name, read in judged.items():
        other = registered[name]
        assert (read.pool, read.needs_device_plugin, read.written, read.unknown) == \
            (other.pool, other.needs_device_plugin, other.written, other.unknown), name
    # The device-plugin DaemonSets the settings judge are the ones the program registers.
    plugins = {resource.inputs["metadata"]["name"]: resource.inputs for resource in run.resources
               if is_device_plugin_daemonset(resource.type, resource.inputs)}
    judged_plugins = {plugin.urn: plugin.props for plugin in own_plugin_resources(KINDS, settings_)}
    assert judged_plugins.keys() == plugins.keys() and (stack == "nap" or plugins)
    for name, props in judged_plugins.items():
        assert (props["metadata"], props["spec"]) == (plugins[name]["metadata"], plugins[name]["spec"]), name


@pytest.mark.slow
def test_the_program_refuses_a_prod_variant_that_loses_its_gpu_taint_before_registering_anything(tmp_path):
    text = (ROOT / "Pulumi.prod.yaml").read_text()
    anchor = "    - name: t4spot\n"
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text.replace(anchor, f'{anchor}      nodeTaints: ["team=batch:NoSchedule"]\n'))
    run = run_stack("prod", stack_file)
    assert run.error is not None and run.resources == []
    assert "gpu-aks:gpuPools[t4spot].nodeTaints: the GPU pool carries no NoSchedule GPU taint" in str(run.error)
    assert "nothing was created" in str(run.error)
