"""GPU sharing (`gpuPools[].sharing`): the setting, NVIDIA's config and the MPS control daemon, held
to a copy of NVIDIA's own source (`tests/fixtures/nvidia_device_plugin/`, tag v0.20.0)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pulumi_kubernetes as k8s
import pytest
import yaml
from gpu_aks_app import GpuRequest, PlacementError, place
from gpu_aks_policies.catalog import (
    DEVICE_PLUGIN_CONFIG_FILE,
    DEVICE_PLUGIN_IMAGE,
    MIN_SHARING_REPLICAS,
    MPS_MAX_REPLICAS,
    MPS_ROOT,
    POOL_LABEL,
    SHARING_STRATEGIES,
)
from gpu_aks_policies.check import main as check_main
from gpu_aks_policies.contract import PlatformContract
from gpu_aks_policies.explain import explain
from gpu_aks_policies.explain import main as explain_main
from gpu_aks_policies.fit import platform_from_outputs, render
from gpu_aks_policies.pool_rules import is_device_plugin_daemonset
from gpu_aks_policies.pools.model import Pool
from gpu_aks_policies.rules import POD_RULES
from hypothesis import given, settings
from hypothesis import strategies as st

from components.contract import platform_contract
from components.dcgm_exporter import exporter_daemonset
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.manifests import (
    CONFIG_HASH_ANNOTATION,
    device_plugin_daemonset,
    device_plugin_daemonsets,
    device_plugin_manifests,
    mps_control_daemon,
    sharing_config,
    sharing_config_map,
)
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.settings import SettingsError
from observability.dashboard import grafana_dashboard
from observability.metrics import KNOWN_METRICS
from observability.rules import metric_names
from observability.settings import DCGM_EXPORTER_IMAGE
from offline.mockrun import run_pulumi
from tests.conftest import KUBERNETES_SCHEMA_VERSION, ROOT, run_stack
from tests.helpers import findings
from tests.test_observability import dashboard_queries
from tools import preview
from tools.doctor import diagnose

NVIDIA = Path(__file__).parent / "fixtures" / "nvidia_device_plugin"
CHART = NVIDIA / "deployments" / "helm" / "nvidia-device-plugin"
IMAGE = DEVICE_PLUGIN_IMAGE

T4 = {"name": "t4", "vmSize": "Standard_NC4as_T4_v3"}
T4X4 = {"name": "t4x4", "vmSize": "Standard_NC64as_T4_v3"}
A100_MIG = {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g", "minCount": 1}


def platform(*pools: dict[str, Any], **extra: Any):
    return parse_settings({"gpuPools": list(pools), **extra}, "unit", "westeurope")


def facts(*pools: dict[str, Any], **extra: Any) -> tuple[Pool, ...]:
    """The GPU pools' facts, as the components build from them."""
    return platform_pools(platform(*pools, **extra)).gpu


def problems(*pools: dict[str, Any], **extra: Any) -> list[str]:
    with pytest.raises(SettingsError) as raised:
        platform(*pools, **extra)
    return raised.value.problems


def shared(pool: dict[str, Any], strategy: str, replicas: Any) -> dict[str, Any]:
    return {**pool, "sharing": {"strategy": strategy, "replicas": replicas}}


# --- NVIDIA's source, read -------------------------------------------------------------------------


def go_json_tags(path: Path, struct: str) -> list[str]:
    """The `json:"..."` names of a Go struct's fields, in order."""
    body = re.search(rf"type {struct} struct {{(.*?)\n}}", path.read_text(), re.S)
    assert body, f"{struct} not in {path}"
    return re.findall(r'json:"([^",]+)', body.group(1))


def render_chart_template(path: Path, true: set[str], values: dict[str, str]) -> dict[str, Any]:
    """A small stand-in for `helm template` on one of NVIDIA's templates: an `if`/`with` block is kept
    when its condition is in `true` (the others are off or empty by the chart's defaults), lines that
    only set a variable or include a helper are dropped, and `{{ expr }}` takes its value from
    `values` (else "x"). Anything else fails, so a changed template is noticed."""
    out, keep, comment = [], [True], False
    for line in path.read_text().splitlines():
        if comment or "{{- /*" in line:
            comment = "*/" not in line
            continue
        directive = re.fullmatch(r"\s*{{-?\s*(.*?)\s*-?}}\s*", line)
        if directive:
            text = directive.group(1)
            if text.startswith(("if ", "with ")):
                keep.append(keep[-1] and text.split(" ", 1)[1] in true)
            elif text == "end":
                keep.pop()
            elif not text.startswith(("$", "include ", "toYaml ")):
                raise AssertionError(f"the stand-in renderer does not know {line!r}; extend it")
            continue
        if keep[-1]:
            out.append(re.sub(r"{{\s*(.*?)\s*}}", lambda m: values.get(m.group(1), "x"), line))
    documents = [doc for doc in yaml.safe_load_all("\n".join(out)) if doc]
    assert len(documents) == 1
    return documents[0]


CHART_VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
TEMPLATE_VALUES = {'include "nvidia-device-plugin.fullimage" .': IMAGE, ".Values.mps.root": CHART_VALUES["mps"]["root"],
                   ".Values.priorityClassName": CHART_VALUES["priorityClassName"], ".Values.migStrategy": "none"}
#: The chart rendered with a config (`config.map`), the defaults otherwise, and `migStrategy: none` as gpu-aks sets it.
CHART_TRUE = {".Values.devicePlugin.enabled", "$options.hasConfigMap", ".Values.priorityClassName",
              ".Values.mps.enableHostPID", 'typeIs "string" .Values.migStrategy'}


def chart_pod(template: str) -> dict[str, Any]:
    rendered = render_chart_template(CHART / "templates" / template, CHART_TRUE, TEMPLATE_VALUES)
    return rendered["spec"]["template"]["spec"]


def by_name(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in items}


# --- The setting -----------------------------------------------------------------------------------


def test_a_shared_pool_reads_its_strategy_and_replicas_and_advertises_gpus_times_replicas():
    settings = platform(shared(T4X4, "timeSlicing", 4), shared(T4, "mps", 3), A100_MIG)
    pools = {pool.name: pool for pool in settings.gpu_pools}
    assert (pools["t4x4"].sharing.strategy, pools["t4x4"].sharing.replicas) == ("timeSlicing", 4)
    assert pools["t4x4"].advertised_per_node == 16 and pools["t4"].advertised_per_node == 3
    assert pools["a100"].sharing is None and pools["a100"].advertised_per_node == 3


def test_sharing_is_not_create_only_so_it_never_replaces_the_pool():
    plain, time_sliced = platform(T4).gpu_pools[0], platform(shared(T4, "timeSlicing", 4)).gpu_pools[0]
    assert plain.azure_name == time_sliced.azure_name


P = "gpu-aks:gpuPools[t4].sharing"


@pytest.mark.parametrize(("pools", "extra", "expected"), [
    ([shared(T4, "timeSlicing", 1)], {},
     f'{P}.replicas: 1 is below 2: NVIDIA\'s device plugin refuses fewer replicas ("number of replicas must be >= 2"); '
     "to give pods whole GPUs, remove sharing"),
    ([shared(T4, "timeSlicing", 10**9)], {},
     f"{P}.replicas: 1000000000 is above 250: no AKS node runs more pods than that, so the extra replicas could never "
     "be used"),
    ([shared(T4, "mps", 49)], {},
     f"{P}.replicas: 49 is above 48 for mps: NVIDIA's MPS control daemon serves at most 48 clients per GPU and "
     'refuses more ("maximum allowed replicas exceeded"); lower replicas or use timeSlicing'),
    ([shared(T4, "timeSlicing", 2.5)], {}, f"{P}.replicas: 2.5 is not a whole number of replicas"),
    ([shared(T4, "timeSlicing", True)], {}, f"{P}.replicas: true is not a whole number of replicas"),
    ([shared(T4, "timeSlicing", "4")], {}, f"{P}.replicas: '4' is not a whole number of replicas"),
    ([shared(T4, "time-slicing", 4)], {}, f"{P}.strategy: 'time-slicing' is not allowed; allowed: timeSlicing, mps"),
    ([{**T4, "sharing": {"replicas": 4}}], {},
     f"{P}.strategy: is missing; with replicas set, say how to share: timeSlicing, mps"),
    ([{**T4, "sharing": {"strategy": "mps"}}], {},
     f"{P}.replicas: is missing; how many pods share one GPU (2 or more), e.g. replicas: 4"),
    ([{**T4, "sharing": "mps"}], {}, f"{P}: expected an object of settings, got 'mps'"),
    ([{**T4, "sharing": {"strategy": "mps", "replicas": 4, "rename": "x"}}], {},
     f"{P}.rename: unknown setting; allowed: strategy, replicas"),
    ([shared(A100_MIG, "mps", 2)], {},
     "gpu-aks:gpuPools[a100].sharing.strategy: 'mps' cannot share the MIG instances of gpuInstanceProfile 'MIG2g': "
     "NVIDIA's device plugin refuses it (\"sharing using MPS is not supported for MIG devices\"); use strategy: "
     "timeSlicing, or drop the sharing (MIG already splits each GPU)"),
    ([shared(T4, "mps", 2)], {"devicePlugin": {"enabled": False}},
     f"{P}: 'mps' is set up in gpu-aks's device plugin, which does not serve pool 't4': devicePlugin.enabled is "
     "false; serve the pool or remove its sharing"),
    ([shared(T4, "timeSlicing", 2), A100_MIG], {"devicePlugin": {"pools": ["a100"]}},
     f"{P}: 'timeSlicing' is set up in gpu-aks's device plugin, which does not serve pool 't4': devicePlugin.pools "
     "(a100) does not list it; serve the pool or remove its sharing"),
    ([{**shared(T4, "timeSlicing", 2), "gpuProfile": {"driver": "None"}}], {},
     f"{P}: 'timeSlicing' is set up in gpu-aks's device plugin, which does not serve pool 't4': it has "
     "gpuProfile.driver: None, so its device plugin is managed elsewhere (e.g. the GPU Operator); remove its sharing "
     "and share through that plugin's own config"),
], ids=["one replica", "a billion replicas", "mps above 48", "a fraction", "a boolean", "a string", "unknown strategy",
        "no strategy", "no replicas", "not an object", "unknown key", "mps on MIG", "plugin disabled", "pool not served",
        "driver None"])
def test_each_bad_sharing_is_refused_naming_the_key(pools, extra, expected):
    assert problems(*pools, **extra) == [expected]


def test_every_sharing_problem_is_reported_at_once():
    found = problems(shared(T4, "mps", 1), shared(A100_MIG, "mps", 2), shared(T4X4, "timeslicing", 2))
    assert [line.split(":")[1] for line in found] == ["gpuPools[t4].sharing.replicas", "gpuPools[a100].sharing.strategy",
                                                      "gpuPools[t4x4].sharing.strategy"]


def test_time_slicing_a_mig_pool_is_allowed_as_nvidia_allows_it():
    [pool] = platform(shared(A100_MIG, "timeSlicing", 2)).gpu_pools
    assert pool.advertised_per_node == 6


# --- NVIDIA's config -------------------------------------------------------------------------------


def test_the_config_uses_nvidias_field_names_and_version():
    config_go, sharing_go, replicas_go = (NVIDIA / "api/config/v1" / name for name in ("config.go", "sharing.go",
                                                                                       "replicas.go"))
    assert tuple(go_json_tags(sharing_go, "Sharing")) == SHARING_STRATEGIES
    for pool in facts(shared(T4, "timeSlicing", 4), shared(T4X4, "mps", 2)):
        config = sharing_config(pool)
        assert set(config) <= set(go_json_tags(config_go, "Config"))
        assert config["version"] == re.search(r'const Version = "(\w+)"', config_go.read_text()).group(1)
        [(strategy, replicated)] = config["sharing"].items()
        assert strategy == pool.sharing.strategy
        assert set(replicated) <= set(go_json_tags(replicas_go, "ReplicatedResources"))
        assert replicated["failRequestsGreaterThanOne"] is True
        [resource] = replicated["resources"]
        assert set(resource) <= set(go_json_tags(replicas_go, "ReplicatedResource"))
        assert resource == {"name": "nvidia.com/gpu", "replicas": pool.sharing.replicas}


def test_a_time_sliced_mig_pool_replicates_the_resource_its_strategy_advertises():
    [mixed] = facts(shared(A100_MIG, "timeSlicing", 2), devicePlugin={"migStrategy": "mixed"})
    [single] = facts(shared(A100_MIG, "timeSlicing", 2))
    assert sharing_config(mixed)["sharing"]["timeSlicing"]["resources"][0]["name"] == "nvidia.com/mig-2g.20gb"
    assert sharing_config(single)["sharing"]["timeSlicing"]["resources"][0]["name"] == "nvidia.com/gpu"


def test_the_limits_gpu_aks_repeats_are_nvidias():
    replicas_go = (NVIDIA / "api/config/v1/replicas.go").read_text()
    assert f"if s.Replicas < {MIN_SHARING_REPLICAS} {{" in replicas_go
    device_go = (NVIDIA / "cmd/mps-control-daemon/mps/device.go").read_text()
    assert re.search(r"if d.isAtLeastVolta\(\) {\s*return (\d+)", device_go).group(1) == str(MPS_MAX_REPLICAS)
    assert '"sharing using MPS is not supported for MIG devices"' in (NVIDIA / "internal/plugin/mps.go").read_text()
    assert '"using --mig-strategy=mixed is not supported with MPS"' in \
        (NVIDIA / "cmd/nvidia-device-plugin/main.go").read_text()
    assert "maximum request size for shared resources is 1" in (NVIDIA / "internal/rm/rm.go").read_text()
    assert CHART_VALUES["mps"]["root"] == MPS_ROOT


def test_the_config_map_holds_the_config_as_yaml_under_the_file_name_config_file_names():
    [pool] = facts(shared(T4, "timeSlicing", 4))
    config_map = sharing_config_map("gpu-resources", pool)
    [(key, text)] = config_map["data"].items()
    assert DEVICE_PLUGIN_CONFIG_FILE.endswith("/" + key)
    assert yaml.safe_load(text) == sharing_config(pool)
    kubernetes_validate.validate(config_map, KUBERNETES_SCHEMA_VERSION, strict=True)


# --- The DaemonSets --------------------------------------------------------------------------------


def test_pools_without_sharing_keep_exactly_the_daemonsets_they_had():
    pools = facts(T4, A100_MIG, shared(T4X4, "mps", 4))
    unshared = [pool for pool in pools if pool.sharing is None]
    manifests = device_plugin_manifests("gpu-resources", IMAGE, "single", pools)
    assert manifests[:2] == [device_plugin_daemonset("gpu-resources", IMAGE, "single", unshared[:1]),
                             device_plugin_daemonset("gpu-resources", IMAGE, "single", unshared[1:], mig=True)]
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests[2:]] == [
        ("ConfigMap", "nvidia-device-plugin-shared-t4x4"), ("DaemonSet", "nvidia-device-plugin-shared-t4x4"),
        ("DaemonSet", "nvidia-mps-control-daemon-t4x4")]
    assert device_plugin_manifests("gpu-resources", IMAGE, "single", facts(T4, A100_MIG)) == manifests[:2]


def test_the_plugin_of_a_shared_pool_reads_the_config_where_nvidias_chart_puts_it():
    [time_sliced, mps] = facts(shared(T4, "timeSlicing", 4), shared(T4X4, "mps", 4))
    chart = chart_pod("daemonset-device-plugin.yml")
    chart_ctr = by_name(chart["containers"])["nvidia-device-plugin-ctr"]
    chart_env = {env["name"]: env.get("value") for env in chart_ctr["env"]}
    chart_mounts = {mount["name"]: mount["mountPath"] for mount in chart_ctr["volumeMounts"]}
    chart_volumes = by_name(chart["volumes"])
    for pool in (time_sliced, mps):
        daemon_set = device_plugin_daemonset("gpu-resources", IMAGE, "none", [pool], shared=pool)
        pod = daemon_set["spec"]["template"]["spec"]
        [container] = pod["containers"]
        env = {item["name"]: item["value"] for item in container["env"]}
        assert env["CONFIG_FILE"] == chart_env["CONFIG_FILE"] == DEVICE_PLUGIN_CONFIG_FILE
        mounts = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
        assert mounts["config"] == chart_mounts["config"]
        config_map = {"name": f"nvidia-device-plugin-shared-{pool.name}"}
        assert by_name(pod["volumes"])["config"] == {"name": "config", "configMap": config_map}
        assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
        assert daemon_set["spec"]["template"]["metadata"]["annotations"][CONFIG_HASH_ANNOTATION]
        assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == \
            [{"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": [pool.name]}]}]
        kubernetes_validate.validate(daemon_set, KUBERNETES_SCHEMA_VERSION, strict=True)
        mps_parts = {"mps-shm", "mps-root"}
        if pool.sharing.strategy == "mps":
            assert env["MPS_ROOT"] == chart_env["MPS_ROOT"] == MPS_ROOT
            assert {name: mounts[name] for name in mps_parts} == {name: chart_mounts[name] for name in mps_parts}
            assert {name: by_name(pod["volumes"])[name] for name in mps_parts} == \
                {name: chart_volumes[name] for name in mps_parts}
        else:
            assert "MPS_ROOT" not in env and not mps_parts & set(mounts)


def test_the_mps_control_daemon_is_shaped_as_nvidias_chart_deploys_it_but_lands_on_the_pool():
    [pool] = facts({**shared(T4X4, "mps", 4), "nodeTaints": ["sku=gpu:NoSchedule", "nvidia.com/gpu=present:NoSchedule"],
                    "scaleSetPriority": "Spot"})
    daemon_set = mps_control_daemon("gpu-resources", IMAGE, pool)
    ours, chart = daemon_set["spec"]["template"]["spec"], chart_pod("daemonset-mps-control-daemon.yml")
    # The chart's config-manager init container and sidecar pick one of several configs by a node
    # label; a gpu-aks ConfigMap holds one config, mounted where config-manager would write it.
    chart_init = [c for c in chart["initContainers"] if c["command"] != ["config-manager"]]
    chart_containers = [c for c in chart["containers"] if c["command"] != ["config-manager"]]
    assert [(c["name"], c["command"]) for c in ours["initContainers"]] == [(c["name"], c["command"]) for c in chart_init]
    assert [(c["name"], c["command"]) for c in ours["containers"]] == [(c["name"], c["command"]) for c in chart_containers]
    for mine, theirs in zip([*ours["initContainers"], *ours["containers"]], [*chart_init, *chart_containers], strict=True):
        assert mine["image"] == theirs["image"] == IMAGE
        assert mine["securityContext"] == theirs["securityContext"] == {"privileged": True}
        assert mine.get("env") == theirs.get("env")
        their_mounts = [m for m in theirs["volumeMounts"] if m["name"] != "available-configs"]
        assert [{**m, "readOnly": True} if m["name"] == "config" else m for m in their_mounts] == mine["volumeMounts"]
    chart_volumes = [v for v in chart["volumes"] if v["name"] not in ("available-configs", "config")]
    assert ours["volumes"] == [*chart_volumes, {"name": "config", "configMap": {"name": "nvidia-device-plugin-shared-t4x4"}}]
    assert ours["hostPID"] is chart["hostPID"] is True and "shareProcessNamespace" not in ours
    assert ours["priorityClassName"] == chart["priorityClassName"]
    # The chart selects nodes by a label only GPU Feature Discovery writes; gpu-aks pins to the pool.
    assert chart["nodeSelector"] == {"nvidia.com/mps.capable": "true"} and "nodeSelector" not in ours
    assert ours["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == \
        [{"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": ["t4x4"]}]}]
    plugin = device_plugin_daemonset("gpu-resources", IMAGE, "none", [pool], shared=pool)["spec"]["template"]
    spot = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    assert ours["tolerations"] == plugin["spec"]["tolerations"] and spot in ours["tolerations"]
    assert daemon_set["spec"]["template"]["metadata"]["annotations"] == plugin["metadata"]["annotations"]
    kubernetes_validate.validate(daemon_set, KUBERNETES_SCHEMA_VERSION, strict=True)


def test_a_change_of_replicas_rolls_the_shared_pods():
    def annotation(replicas: int) -> str:
        [pool] = facts(shared(T4, "mps", replicas))
        return mps_control_daemon("gpu-resources", IMAGE, pool)["spec"]["template"]["metadata"]["annotations"][
            CONFIG_HASH_ANNOTATION]
    assert annotation(2) != annotation(3) and annotation(2) == annotation(2)


def test_only_mps_pools_run_the_control_daemon_and_each_daemonset_is_listed_for_the_alerts():
    pools = facts(T4, shared(T4X4, "timeSlicing", 2))
    names = [m["metadata"]["name"] for m in device_plugin_daemonsets("gpu-resources", IMAGE, "none", pools)]
    assert names == ["nvidia-device-plugin-daemonset", "nvidia-device-plugin-shared-t4x4"]


def test_the_component_creates_the_config_map_before_the_daemonsets_that_mount_it():
    settings = platform(T4, shared(T4X4, "mps", 4))

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}")
        GpuDevicePlugin("nvidia-device-plugin", GpuDevicePluginArgs(settings.device_plugin,
                                                                    platform_pools(settings).served, provider))

    run = run_pulumi(program, "unit")
    assert run.error is None, run.error
    config_map = run.one("kubernetes:core/v1:ConfigMap")
    assert config_map.name == "nvidia-device-plugin-shared-t4x4"
    daemon_sets = {ds.name: ds for ds in run.by_type("kubernetes:apps/v1:DaemonSet")}
    assert set(daemon_sets) == {"nvidia-device-plugin-daemonset", "nvidia-device-plugin-shared-t4x4",
                                "nvidia-device-plugin-mps-control-daemon-t4x4"}
    assert config_map.urn not in daemon_sets["nvidia-device-plugin-daemonset"].dependencies
    for name in ("nvidia-device-plugin-shared-t4x4", "nvidia-device-plugin-mps-control-daemon-t4x4"):
        assert config_map.urn in daemon_sets[name].dependencies


def test_the_policy_pack_does_not_count_the_mps_daemon_as_a_device_plugin():
    [pool] = facts(shared(T4X4, "mps", 4))
    daemon, plugin = mps_control_daemon("gpu-resources", IMAGE, pool), device_plugin_daemonset(
        "gpu-resources", IMAGE, "none", [pool], shared=pool)
    assert not is_device_plugin_daemonset("kubernetes:apps/v1:DaemonSet", daemon)
    assert is_device_plugin_daemonset("kubernetes:apps/v1:DaemonSet", plugin)


# --- Observability ---------------------------------------------------------------------------------


def test_the_exporter_of_a_shared_pool_attributes_every_pod_sharing_a_gpu():
    env = {pool.name: {item["name"]: item.get("value") for item in exporter_daemonset(
        "gpu-resources", DCGM_EXPORTER_IMAGE, pool)["spec"]["template"]["spec"]["containers"][0]["env"]}
        for pool in facts(T4, shared(T4X4, "timeSlicing", 4))}
    assert env["t4x4"]["KUBERNETES_VIRTUAL_GPUS"] == "true" and "KUBERNETES_VIRTUAL_GPUS" not in env["t4"]
    # The flag is the dcgm-exporter image's own (4.5.3-4.8.2, pkg/cmd/app.go).
    assert DCGM_EXPORTER_IMAGE.endswith(":4.5.3-4.8.2-distroless")


def test_the_dashboard_shows_slices_per_gpu_and_counts_each_shared_gpu_once():
    board = grafana_dashboard(facts(T4, shared(T4X4, "mps", 4)))
    rows = [panel["title"] for panel in board["panels"] if panel["type"] == "row"]
    assert rows[1:] == ["Pool t4 (Standard_NC4as_T4_v3, T4)", "Pool t4x4 (Standard_NC64as_T4_v3, T4, 4 slices per GPU by MPS)"]
    by_title = {panel["title"]: panel for panel in board["panels"]}
    slices = by_title["Slices in use per GPU (of 4)"]["targets"]
    assert slices[0]["expr"] == 'count by (node, gpu) (DCGM_FI_DEV_GPU_TEMP{pool="t4x4",node=~"$node",vgpu!=""})'
    assert slices[1]["expr"] == "vector(4)"
    memory = [p for p in board["panels"] if p["title"] == "Framebuffer memory used"]
    assert [p["targets"][0]["expr"] for p in memory] == [
        'sum by (node) (DCGM_FI_DEV_FB_USED{pool="t4",node=~"$node"})',
        'sum by (node) (max by (node, gpu, GPU_I_ID) (DCGM_FI_DEV_FB_USED{pool="t4x4",node=~"$node"}))']
    assert {name for query in dashboard_queries(board) for name in metric_names(query)} <= KNOWN_METRICS
    assert "Slices: allocatable, allocated, busy" in by_title and "GPUs: allocatable, allocated, busy" in by_title


# --- The contract and the rules --------------------------------------------------------------------

TOLERATE_ALL = [{"operator": "Exists"}]


def pod(name: str, amount: Any, pool: str | None = None, containers: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"tolerations": TOLERATE_ALL, "containers": [
        {"name": f"c{index}", "image": "x", "resources": {"limits": {"nvidia.com/gpu": amount}}}
        for index in range(containers)]}
    if pool:
        spec["nodeSelector"] = {"accelerator": "nvidia", POOL_LABEL: pool}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def shared_platform(**sharing: Any) -> dict[str, Any]:
    return platform_contract(platform(
        {**T4, "minCount": 1, "sharing": sharing or {"strategy": "timeSlicing", "replicas": 4}},
        {**T4X4, "minCount": 1, "nodeLabels": {"team": "ml"}}))


def test_the_contract_carries_sharing_and_counts_shares_per_node():
    outputs = platform_contract(platform(shared(T4X4, "mps", 3), T4))
    shared_pool, whole = outputs["gpuPools"]["t4x4"], outputs["gpuPools"]["t4"]
    assert shared_pool["sharing"] == {"strategy": "mps", "replicas": 3}
    assert shared_pool["gpusPerNode"] == shared_pool["offers"][0]["perNode"] == 12
    assert whole["sharing"] is None and whole["gpusPerNode"] == 1
    assert PlatformContract.from_json(outputs).gpu_pools["t4x4"].sharing.replicas == 3


def test_the_explainer_says_one_slice_of_a_shared_pool_is_a_share_of_which_gpu():
    [explanation] = explain(pod("one", 1, "t4"), shared_platform())
    assert explanation.lands_on == ["t4"]
    [verdict] = [v for v in explanation.verdicts if v.fits]
    assert verdict.gets[0].startswith("gets 1/4 of a T4, time-sliced (the pool shares each GPU 4 ways by time-slicing")
    [mps] = explain(pod("one", 1, "t4"), shared_platform(strategy="mps", replicas=2))
    assert [v for v in mps.verdicts if v.fits][0].gets[0].startswith("gets 1/2 of a T4, shared through MPS")


def test_two_shares_fit_no_shared_pool_but_a_whole_gpu_pool_still_takes_them():
    [explanation] = explain(pod("two", 2), shared_platform())
    assert explanation.lands_on == ["t4x4"]
    [refused] = [v for v in explanation.verdicts if v.pool == "t4"]
    assert refused.reasons == ("a container asks for 2 nvidia.com/gpu, but this pool shares each GPU 4 ways "
                               "(time-slicing) and gives a container at most one share: NVIDIA's device plugin refuses "
                               "more (failRequestsGreaterThanOne), so the kubelet fails the pod; ask for 1 here, or for "
                               "whole GPUs on an unshared pool",)
    # Two containers of one share each are two allocations of one: NVIDIA's plugin serves them.
    [two_containers] = explain(pod("pair", 1, "t4", containers=2), shared_platform())
    assert two_containers.lands_on == ["t4"]


def test_the_checker_admits_one_slice_and_refuses_two_on_a_shared_platform(tmp_path, capsys):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(shared_platform()))
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    one.write_text(yaml.safe_dump(pod("one", 1, "t4")))
    two.write_text(yaml.safe_dump(pod("two", 2, "t4")))
    assert check_main(["--platform", str(outputs), str(one)]) == 0
    capsys.readouterr()
    assert check_main(["--platform", str(outputs), str(two)]) == 1
    out = capsys.readouterr().out
    assert "[mandatory] gpu-pods-fit-a-pool" in out and "gives a container at most one share" in out


def test_the_fraction_advice_and_the_explainers_hints_name_the_same_shared_pools(tmp_path, capsys):
    outputs = shared_platform()
    [explanation] = explain(pod("half", 0.5), outputs)
    [refusal] = explanation.refusals
    assert "ask for nvidia.com/gpu: 1 on pool t4 (1/4 of a T4, time-sliced)" in refusal
    assert explanation.hints == ("pool t4 shares each GPU 4 ways (time-slicing): ask for nvidia.com/gpu: 1 and get "
                                 "1/4 of a T4, time-sliced",)
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    manifest = tmp_path / "half.yaml"
    manifest.write_text(yaml.safe_dump(pod("half", 0.5)))
    assert check_main(["--platform", str(path), str(manifest)]) == 1
    assert "ask for nvidia.com/gpu: 1 on pool t4 (1/4 of a T4, time-sliced)" in capsys.readouterr().out


def test_the_explainer_shows_file_and_line_like_the_checker(tmp_path, capsys):
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(shared_platform()))
    manifest = tmp_path / "pods.yaml"
    manifest.write_text(yaml.safe_dump(pod("first", 1, "t4")) + "---\n" + yaml.safe_dump(pod("second", 1, "t4")))
    assert explain_main(["--platform", str(outputs), str(manifest)]) == 0
    out = capsys.readouterr().out
    spec_lines = [number for number, line in enumerate(manifest.read_text().splitlines(), 1) if line == "spec:"]
    assert [line.split(": Pod/")[0] for line in out.splitlines() if ": Pod/" in line] == \
        [f"{manifest}:{number}" for number in spec_lines]


def test_the_explainer_says_what_a_pod_gets_on_each_pool_and_why():
    outputs = platform_contract(platform(
        {"name": "a100mig", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g", "minCount": 0},
        {"name": "t4spot", "vmSize": "Standard_NC4as_T4_v3", "scaleSetPriority": "Spot", "minCount": 0}))
    [explanation] = explain(pod("plain", 1), outputs)
    # The node's list price (#38) is told apart, as "its node ... costs": tests/test_node_labels.py.
    gets = {verdict.pool: tuple(line for line in verdict.gets if not line.startswith("its node "))
            for verdict in explanation.verdicts}
    assert gets["a100mig"][0] == ("gets a MIG 2g.20gb slice of an A100 80GB (the pool's GPUs are split into MIG "
                                  "instances; each is isolated in hardware)")
    assert "Azure/AKS#5161" in gets["a100mig"][1]
    assert gets["t4spot"] == (
        "gets a whole T4",
        "runs on Spot VMs: Azure can evict the node with 30 seconds' notice, stopping the pod mid-run",
        "waits while the pool scales up from zero when no node has room: a new GPU node takes minutes")
    rendered = render(explain(pod("plain", 1), outputs))
    assert "  t4spot: runs on Spot VMs" in rendered and "  a100mig: gets a MIG 2g.20gb slice" in rendered


# Whole-GPU and MIG pools of every catalog family gpu-aks can share, and pods asking 1 to 8 GPUs.
SIZES = ["Standard_NC4as_T4_v3", "Standard_NC64as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_NC48ads_A100_v4",
         "Standard_ND96isr_H100_v5"]


@st.composite
def pools_and_sharing(draw: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    count = draw(st.integers(1, 4))
    pools = []
    for index in range(count):
        size = draw(st.sampled_from(SIZES))
        pool: dict[str, Any] = {"name": f"p{index}", "vmSize": size, "minCount": draw(st.integers(0, 1)),
                                "scaleSetPriority": draw(st.sampled_from(["Regular", "Spot"]))}
        if "T4" not in size and draw(st.booleans()):
            # A served MIG pool keeps a node under `mixed` (Azure/AKS#5161): the settings refuse minCount 0.
            pool.update(gpuInstanceProfile=draw(st.sampled_from(["MIG1g", "MIG2g", "MIG7g"])), minCount=1)
        pools.append(pool)
    shared_pools = []
    for pool in pools:
        if draw(st.booleans()):
            strategy = "timeSlicing" if pool.get("gpuInstanceProfile") else draw(st.sampled_from(["timeSlicing", "mps"]))
            pool = {**pool, "sharing": {"strategy": strategy, "replicas": draw(st.integers(2, 48))}}
        shared_pools.append(pool)
    return pools, shared_pools


@pytest.mark.slow  # 60 generated platforms and pods: generated input at scale
@settings(max_examples=60, deadline=None)
@given(pools_and_sharing(), st.integers(1, 8), st.sampled_from(["single", "mixed"]), st.integers(1, 2))
def test_sharing_never_turns_a_fitting_pod_into_a_misfit_on_an_unshared_pool(drawn, amount, strategy, containers):
    pools, with_sharing = drawn
    plain = platform_contract(platform(*pools, devicePlugin={"migStrategy": strategy}))
    shared_outputs = platform_contract(platform(*with_sharing, devicePlugin={"migStrategy": strategy}))
    unshared = {pool["name"] for pool in with_sharing if "sharing" not in pool}
    for resource in ("nvidia.com/gpu", *(f"nvidia.com/mig-{p}" for p in ("1g.10gb", "2g.20gb"))):
        manifest = pod("p", amount, containers=containers)
        for container in manifest["spec"]["containers"]:
            container["resources"]["limits"] = {resource: amount}
        [before] = explain(manifest, plain)
        [after] = explain(manifest, shared_outputs)
        verdicts_before = {v.pool: v for v in before.verdicts}
        for verdict in after.verdicts:
            if verdict.pool in unshared:
                assert verdict == verdicts_before[verdict.pool]
        # One container: what fits a pool once it shares fits it whole, and only one share fits.
        for verdict in after.verdicts if containers == 1 else ():
            if verdict.fits and verdict.pool not in unshared:
                assert amount == 1 and verdicts_before[verdict.pool].fits


# --- The app helper --------------------------------------------------------------------------------


def test_the_app_helper_gives_one_share_only_when_asked_and_never_two():
    outputs = platform_contract(platform(shared(T4, "timeSlicing", 4), T4X4))
    placement = place(outputs, GpuRequest(shared=True))
    assert (placement.pool, placement.limits, placement.share) == ("t4", {"nvidia.com/gpu": 1},
                                                                   "1/4 of a T4, time-sliced")
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app"},
                "spec": placement.pod_spec([{"name": "app", "image": "app:1"}])}
    assert all(findings(manifest, name) == [] for name in POD_RULES)
    [explanation] = explain(manifest, outputs)
    assert explanation.lands_on == ["t4"]
    # A plain request gets a whole GPU; naming the shared pool gets a share.
    assert (place(outputs, GpuRequest()).pool, place(outputs, GpuRequest()).share) == ("t4x4", None)
    assert place(outputs, GpuRequest(pool="t4")).share == "1/4 of a T4, time-sliced"
    with pytest.raises(PlacementError, match=r"^2 GPUs from a shared pool: a container gets at most one share"):
        place(outputs, GpuRequest(gpus=2, shared=True))
    with pytest.raises(PlacementError, match="t4 \\(T4, 4 shares per node, each 1/4 of a T4, time-sliced\\)"):
        place(outputs, GpuRequest(gpus=2, pool="t4"))
    only_shared = platform_contract(platform(shared(T4, "mps", 2)))
    with pytest.raises(PlacementError, match="the platform has only shared pools for this request; ask with shared=True"):
        place(only_shared, GpuRequest())


def test_the_testing_helpers_shared_pool_is_the_real_contracts():
    from gpu_aks_app_testing import gpu_pool

    real = platform_contract(platform({**shared(T4X4, "mps", 3), "name": "gput4"}))["gpuPools"]["gput4"]
    for offer in real["offers"]:
        offer["hourlyPrice"] = None  # the testing helper writes no list price (#38)
    sample = gpu_pool(vm_size="Standard_NC64as_T4_v3", gpus_per_vm=4, sharing={"strategy": "mps", "replicas": 3})
    assert {k: v for k, v in sample.items() if k != "azureName"} == {k: v for k, v in real.items() if k != "azureName"}


# --- The doctor ------------------------------------------------------------------------------------


def gpu_node(name: str, pool: dict[str, Any], advertised: int) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name, "labels": {**pool["labels"]}},
            "spec": {"taints": [dict(zip(("key", "value", "effect"), re.split("[=:]", taint), strict=True))
                                for taint in pool["taints"]]},
            "status": {"allocatable": {"nvidia.com/gpu": str(advertised)}, "capacity": {"nvidia.com/gpu": str(advertised)},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def agent_pod(name: str, node: str, app: str, ready: bool = True) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "gpu-resources",
                                        "labels": {"app.kubernetes.io/name": app}},
            "spec": {"nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": str(ready)}]}}


@pytest.mark.parametrize(("advertised", "mps_ready", "expected"), [
    (8, True, []),
    (4, True, [("gpu-sharing", "advertises 4 nvidia.com/gpu, its 4 device(s) unshared, but the contract says 8 per "
                               "node (4 x 2 replicas, MPS): pods get whole GPUs and fewer fit")]),
    (12, True, [("gpu-sharing", "advertises 12 nvidia.com/gpu (4 device(s) x 3 replicas), but the contract says 2 "
                                "replicas (8 per node)")]),
    (8, False, [("mps-control-daemon", "the pool shares its GPUs through MPS, but its MPS control daemon pod mps-0 is "
                                       "not Ready (Running): the device plugin serves no MPS shares without it")]),
], ids=["healthy", "plugin ignored the config", "stale replicas", "MPS daemon down"])
def test_the_doctor_accepts_gpus_times_replicas_and_checks_it_against_the_config(advertised, mps_ready, expected):
    outputs = platform_contract(platform({**shared(T4X4, "mps", 2), "minCount": 1}))
    node = gpu_node("aks-t4x4-0", outputs["gpuPools"]["t4x4"], advertised)
    pods = [agent_pod("plugin-0", "aks-t4x4-0", "nvidia-device-plugin"),
            agent_pod("mps-0", "aks-t4x4-0", "nvidia-mps-control-daemon", ready=mps_ready)]
    diagnosis = diagnose(platform_from_outputs(outputs), [node], pods)
    assert [(p.check, p.message) for p in diagnosis.problems] == expected
    if expected and expected[0][0] == "gpu-sharing":
        assert "rollout restart daemonset nvidia-device-plugin-shared-t4x4" in diagnosis.problems[0].fix


# --- The whole program -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_stack_with_a_time_sliced_and_an_mps_pool_runs_whole_and_the_preview_says_so(tmp_path):
    stack = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    stack["config"]["gpu-aks:gpuPools"] = [
        {"name": "slices", "vmSize": "Standard_NC4as_T4_v3", "sharing": {"strategy": "timeSlicing", "replicas": 4}},
        {"name": "mps", "vmSize": "Standard_NC64as_T4_v3", "sharing": {"strategy": "mps", "replicas": 3}}]
    stack_file = tmp_path / "Pulumi.share.yaml"
    stack_file.write_text(yaml.safe_dump(stack))
    run = run_stack("share", stack_file)
    assert run.error is None, run.error
    names = {(r.type, r.inputs["metadata"]["name"]) for r in run.resources if r.type.startswith("kubernetes:")
             and isinstance(r.inputs.get("metadata"), dict)}
    assert {("kubernetes:core/v1:ConfigMap", "nvidia-device-plugin-shared-slices"),
            ("kubernetes:core/v1:ConfigMap", "nvidia-device-plugin-shared-mps"),
            ("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-shared-slices"),
            ("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-shared-mps"),
            ("kubernetes:apps/v1:DaemonSet", "nvidia-mps-control-daemon-mps")} <= names
    assert ("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-daemonset") not in names, "no unshared pool"
    pools = run.stack_outputs["gpuPools"]
    assert pools["slices"]["sharing"] == {"strategy": "timeSlicing", "replicas": 4}
    assert pools["mps"]["offers"][0]["perNode"] == 12
    summary = "\n".join(preview.render_summary("share", run, stack_file))
    assert "slices: Standard_NC4as_T4_v3, T4, 4 nvidia.com/gpu per node (4 shares per GPU, time-slicing)," in summary
    assert "mps: Standard_NC64as_T4_v3, T4, 12 nvidia.com/gpu per node (3 shares per GPU, MPS)," in summary
    # The policy pack, over its real gRPC interface, finds nothing to refuse in the shared pools' objects.
    out = io.StringIO()
    assert preview.main(["share", "--config-file", str(stack_file)], stdout=out) == 0, out.getvalue()
    assert "no violations" in out.getvalue()


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_each_hint_for_a_fraction_offers_what_its_reason_offers(strategy):
    outputs = platform_contract(platform({**A100_MIG, "minCount": 1}, shared(T4, "mps", 2),
                                         devicePlugin={"migStrategy": strategy}))
    [explanation] = explain(pod("half", 0.5), outputs)
    [refusal] = explanation.refusals
    assert len(explanation.hints) == 2
    for hint in explanation.hints:
        pool, resource = re.search(r"^pool (\w+) .*ask for ([\w./-]+)", hint).groups()
        assert resource in refusal and (pool in refusal or resource.startswith("nvidia.com/mig-")), (hint, refusal)


def test_shares_beyond_max_pods_are_warned_about_not_refused():
    warned = platform({**shared(T4X4, "timeSlicing", 10), "maxPods": 30}).warnings
    assert "gpu-aks:gpuPools[t4x4].sharing.replicas: a node advertises 40 shares (10 per GPU), but maxPods is 30: at " \
           "most 30 pods, its DaemonSets included, run on it, so the rest can never be used; lower replicas or raise " \
           "maxPods" in warned
    assert not any("sharing" in warning for warning in platform({**shared(T4X4, "timeSlicing", 10),
                                                                  "maxPods": 50}).warnings)
