"""GPU observability: the `gpu-aks:observability` settings, the DCGM exporter's manifests, the
dashboard's metrics, the generated files, the Azure resources under the mock runtime, and those
resources' bodies against Microsoft's REST models where a matching API version is installed."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import kubernetes_validate
import pytest

from components.dcgm_exporter import (
    KUBELET_POD_RESOURCES,
    METRICS_PORT,
    POD_MONITOR_API_VERSION,
    exporter_daemonset,
    exporter_manifests,
)
from components.manifests import device_plugin_daemonset
from components.observability import (
    DCE_NAME_LENGTH,
    DCR_NAME_LENGTH,
    action_group_short_name,
    azure_monitor_profile,
    exporter_pools,
    msprom_name,
    platform_alert_rules,
)
from components.platform_settings import parse_settings
from components.pools import platform_pools
from components.settings import ObservabilitySettings, SettingsError
from observability.dashboard import grafana_dashboard
from observability.metrics import DCGM_METRICS, KNOWN_METRICS, KUBE_STATE_METRICS, metrics_csv
from observability.rules import metric_names
from observability.settings import DCGM_EXPORTER_IMAGE
from offline.mockrun import PlatformMocks
from tests.conftest import KUBERNETES_SCHEMA_VERSION, ROOT
from tests.helpers import FLYTE_TAINT_RULE
from tools.observability import DASHBOARD_FILE, RECORDING_FILE, RULES_FILE
from tools.observability import main as generate
from tools.stacks import stacks

WORKSPACE_INVOKE = "azure-native:monitor:getAzureMonitorWorkspace"
ARM = json.loads((ROOT / "tests" / "fixtures" / "prometheus-collector" / "arm-template-excerpt.json").read_text())

POOLS = {"gpuPools": [{"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule"]},
                      {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "gpuInstanceProfile": "MIG2g",
                       "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"]},
                      {"name": "byo", "vmSize": "Standard_NC4as_T4_v3", "gpuProfile": {"driver": "None"}}]}


def settings(observability=None, **extra):
    return parse_settings({**POOLS, **extra, **({"observability": observability} if observability is not None else {})},
                          "unit", "eastus2", pool_rule=FLYTE_TAINT_RULE)


def problems(observability) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        settings(observability)
    return caught.value.problems


# --- Settings -------------------------------------------------------------------------------------


def test_off_by_default_and_defaults_when_on():
    assert settings().observability == ObservabilitySettings()
    on = settings({"enabled": True}).observability
    assert on.enabled and on.exporter_on and on.alerts_on and not on.grafana
    assert on.exporter_image == DCGM_EXPORTER_IMAGE and on.workspace_id is None
    assert azure_monitor_profile(ObservabilitySettings()) is None
    assert azure_monitor_profile(on) == {"metrics": {"enabled": True}}


@pytest.mark.parametrize(("raw", "expected"), [
    ({"enabled": "yes"}, "gpu-aks:observability.enabled: 'yes' is not true or false"),
    ({"grafana": True}, "gpu-aks:observability.grafana: true needs observability.enabled: true"),
    ({"azureMonitorWorkspaceResourceId": "/subscriptions/x/resourceGroups/rg/providers/Microsoft.Insights/components/a"},
     "is not an Azure Monitor workspace resource ID"),
    ({"alerts": {"emails": ["not-an-address"]}}, 'gpu-aks:observability.alerts.emails: ["not-an-address"] must be a list'),
    ({"alerts": {"gpuTemperatureCelsius": 300}}, "must be whole degrees Celsius from 40 to 120"),
    ({"alerts": {"idleGpuUtilizationPercent": 0}}, "must be whole percent from 1 to 99"),
    ({"alerts": {"pendingGpuPodMinute": 5}}, "gpu-aks:observability.alerts.pendingGpuPodMinute: unknown setting"),
    ({"dcgmExporter": {"image": "has space"}}, "is not a container image reference"),
    ("on", "expected an object of settings"),
])
def test_bad_settings_name_the_key_and_what_is_allowed(raw, expected):
    assert any(expected in problem for problem in problems(raw)), problems(raw)


def test_all_problems_at_once_and_thresholds_flow_into_the_rules():
    assert len(problems({"enabled": 1, "alerts": {"idleGpuMinutes": 1, "agentDownMinutes": "x"}})) == 3
    tuned = settings({"enabled": True, "alerts": {"gpuTemperatureCelsius": 80, "pendingGpuPodMinutes": 7,
                                                  "idleGpuUtilizationPercent": 10, "idleGpuMinutes": 30}})
    rules = {rule.name: rule for rule in platform_alert_rules(tuned)}
    assert len(rules) == len(platform_alert_rules(tuned)), "each alert is one rule"
    assert rules["GpuTemperatureHigh"].expr.endswith("> 80")
    assert rules["GpuPodPending"].for_minutes == 7
    idle = rules["GpuAllocatedButIdle"]
    assert idle.for_minutes == 30 and idle.expr == (
        '(DCGM_FI_DEV_GPU_UTIL{pool=~"t4",exported_pod!=""} < 10) or '
        '(DCGM_FI_PROF_GR_ENGINE_ACTIVE{pool=~"a100",exported_pod!=""} * 100 < 10)'), \
        "MIG reports no GPU_UTIL; the GPU Operator's pool (byo) is not ours to watch"


# --- The exporter ---------------------------------------------------------------------------------


def test_one_exporter_per_served_pool_pinned_and_tolerating_like_the_device_plugin():
    platform = settings({"enabled": True})
    manifests = exporter_manifests("gpu-resources", DCGM_EXPORTER_IMAGE, platform_pools(platform).served)
    kinds = [(m["kind"], m["metadata"]["name"]) for m in manifests]
    assert kinds == [("ConfigMap", "dcgm-exporter-metrics"), ("DaemonSet", "dcgm-exporter-t4"),
                     ("DaemonSet", "dcgm-exporter-a100"), ("PodMonitor", "dcgm-exporter")]
    for pool, manifest in zip(platform_pools(platform).served, manifests[1:3], strict=True):
        pod = manifest["spec"]["template"]["spec"]
        plugin = device_plugin_daemonset("gpu-resources", "x", "single", [pool], mig=pool.mig)
        plugin_pod = plugin["spec"]["template"]["spec"]
        assert pod["affinity"] == plugin_pod["affinity"] and pod["tolerations"] == plugin_pod["tolerations"]
        assert manifest["spec"]["template"]["metadata"]["labels"]["gpu-aks.io/pool"] == pool.name
    assert exporter_manifests("gpu-resources", DCGM_EXPORTER_IMAGE, []) == []


def test_exporter_is_configured_as_nvidias_chart():
    pool = platform_pools(settings()).served[0]
    manifest = exporter_daemonset("gpu-resources", DCGM_EXPORTER_IMAGE, pool)
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless"
    assert container["ports"] == [{"name": "metrics", "containerPort": METRICS_PORT}] and METRICS_PORT == 9400
    assert container["securityContext"]["capabilities"] == {"add": ["SYS_ADMIN"], "drop": ["ALL"]}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"} in container["env"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts[KUBELET_POD_RESOURCES]["readOnly"] is True
    assert container["args"] == ["-f", "/etc/dcgm-exporter/default-counters.csv"]
    assert manifest["spec"]["template"]["spec"]["priorityClassName"] == "system-node-critical"
    kubernetes_validate.validate(manifest, KUBERNETES_SCHEMA_VERSION, strict=True)


def test_pod_monitor_is_in_azures_group_and_labels_series_with_pool_and_node():
    monitor = exporter_manifests("gpu-resources", DCGM_EXPORTER_IMAGE, platform_pools(settings()).served)[-1]
    assert monitor["apiVersion"] == POD_MONITOR_API_VERSION == "azmonitoring.coreos.com/v1"
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    assert endpoint["port"] == "metrics"
    assert {r["targetLabel"]: r["sourceLabels"][0] for r in endpoint["relabelings"]} == {
        "node": "__meta_kubernetes_pod_node_name", "pool": "__meta_kubernetes_pod_label_gpu_aks_io_pool"}


def test_metrics_csv_has_what_the_alerts_need_in_nvidias_format():
    lines = [line for line in metrics_csv().splitlines() if not line.startswith("#")]
    fields = {line.split(",")[0] for line in lines}
    for needed in ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_GPU_TEMP",
                   "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"):
        assert needed in fields
    assert all(len(line.split(", ", 2)) == 3 and line.split(", ")[1] in ("gauge", "counter", "label") for line in lines)
    assert len(fields) == len(DCGM_METRICS)


# --- Rules and dashboard name only metrics that exist ---------------------------------------------


@pytest.mark.parametrize(("expr", "names"), [
    ('max by (pool, node) (DCGM_FI_DEV_XID_ERRORS{pool="a"}) > 0', {"DCGM_FI_DEV_XID_ERRORS"}),
    ('sum(rate(x_total[5m])) and on (namespace, pod) y{phase="Pending"} == 1', {"x_total", "y"}),
    ('count(a > 5 and {exported_pod!=""}) or vector(0)', {"a"}),
])
def test_metric_names_reads_promql(expr, names):
    assert metric_names(expr) == names


def dashboard_queries(board: dict[str, Any]) -> list[str]:
    """Every PromQL expression the dashboard runs (panels, rows' panels and variables)."""
    queries: list[str] = []
    stack = list(board.get("panels", []))
    while stack:
        panel = stack.pop()
        stack.extend(panel.get("panels", []))
        queries += [target["expr"] for target in panel.get("targets", [])]
    for variable in board.get("templating", {}).get("list", []):
        query = variable.get("query")
        if isinstance(query, dict):
            queries.append(query["query"].removeprefix("label_values(").rsplit(",", 1)[0])
    return queries


def test_every_dashboard_query_uses_exported_metrics_and_each_pool_has_a_row():
    platform = settings({"enabled": True})
    board = grafana_dashboard(list(exporter_pools(platform_pools(platform), platform.observability)))
    used = {name for query in dashboard_queries(board) for name in metric_names(query)}
    assert used and used <= KNOWN_METRICS, used - KNOWN_METRICS
    rows = [p["title"] for p in board["panels"] if p["type"] == "row"]
    assert rows == ["Cluster", "Pool t4 (Standard_NC4as_T4_v3, T4)", "Pool a100 (Standard_NC24ads_A100_v4, A100 80GB, MIG MIG2g)"]
    titles = {p["title"] for p in board["panels"]}
    for wanted in ("Power draw", "GPU temperature", "Framebuffer memory used", "Last XID error", "ECC errors (1h)",
                   "GPUs: allocatable, allocated, busy", "Pending GPU pods"):
        assert wanted in titles
    json.dumps(board)


def test_the_generator_writes_each_stacks_files_where_it_is_told(tmp_path, capsys):
    assert generate(["--out", str(tmp_path)]) == 0
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*") if path.is_file())
    files = sorted((DASHBOARD_FILE, RECORDING_FILE, RULES_FILE))
    # Every stack file, whichever exist (a team's new Pulumi.staging.yaml included).
    assert written == [f"{stack}/{name}" for stack in stacks(ROOT) for name in files]
    assert {"dev", "prod"} <= set(stacks(ROOT))
    assert "observability.enabled is true" in (tmp_path / "prod" / RULES_FILE).read_text()
    json.loads((tmp_path / "dev" / DASHBOARD_FILE).read_text())
    assert generate(["--out", str(tmp_path), "no-such-stack"]) == 2
    assert "error: stack no-such-stack" in capsys.readouterr().err


# --- Azure resources ------------------------------------------------------------------------------


def test_prod_creates_managed_prometheus_alerts_and_the_exporter(prod_run):
    types = {r.type for r in prod_run.resources}
    for wanted in ("azure-native:monitor:AzureMonitorWorkspace", "azure-native:monitor:DataCollectionEndpoint",
                   "azure-native:monitor:DataCollectionRule", "azure-native:monitor:DataCollectionRuleAssociation",
                   "azure-native:alertsmanagement:PrometheusRuleGroup", "azure-native:monitor:ActionGroup",
                   "kubernetes:azmonitoring.coreos.com/v1:PodMonitor"):
        assert wanted in types
    assert "azure-native:dashboard:Grafana" not in types, "Grafana is off unless asked for"
    cluster = prod_run.one("azure-native:containerservice:ManagedCluster").inputs
    assert cluster["azureMonitorProfile"] == {"metrics": {"enabled": True}}
    rule = prod_run.one("azure-native:monitor:DataCollectionRule").inputs
    assert rule["dataSources"]["prometheusForwarder"][0]["streams"] == ["Microsoft-PrometheusMetrics"]
    assert rule["dataFlows"] == [{"streams": ["Microsoft-PrometheusMetrics"], "destinations": ["MonitoringAccount1"]}]
    group = prod_run.one("azure-native:alertsmanagement:PrometheusRuleGroup", "observability-gpu-alerts").inputs
    assert group["clusterName"] == "gpu-aks-prod" and group["scopes"] == ["observability-workspace-id", "aks-cluster-id"]
    assert {r["alert"] for r in group["rules"]} == {
        "GpuXidError", "GpuUncorrectableEccErrors", "GpuTemperatureHigh", "GpuNodeCondition", "GpuNodeAgentDown",
        "GpuPodPending", "GpuAllocatedButIdle"}
    assert all(r["actions"] == [{"actionGroupId": "observability-action-group-id"}] for r in group["rules"])
    association = prod_run.one("azure-native:monitor:DataCollectionRuleAssociation", "observability-dcra").inputs
    assert association["resourceUri"] == "aks-cluster-id"
    exporters = [r.name for r in prod_run.resources if r.type == "kubernetes:apps/v1:DaemonSet" and "dcgm" in r.name]
    assert sorted(exporters) == ["dcgm-exporter-a100mig", "dcgm-exporter-t4spot"]
    assert "prometheusQueryEndpoint" in prod_run.stack_outputs


def test_dev_keeps_observability_off(dev_run):
    assert not [r for r in dev_run.resources if r.type.startswith(("azure-native:monitor", "azure-native:alerts"))]
    assert "azureMonitorProfile" not in dev_run.one("azure-native:containerservice:ManagedCluster").inputs
    assert dev_run.stack_outputs["prometheusQueryEndpoint"] is None and dev_run.stack_outputs["grafanaDashboardUrl"] is None


def test_grafana_and_a_given_workspace():
    from components.observability import GpuObservability, GpuObservabilityArgs
    from offline.mockrun import run_pulumi
    workspace = "/subscriptions/s/resourceGroups/mon/providers/Microsoft.Monitor/accounts/shared"
    platform = settings({"enabled": True, "grafana": True, "azureMonitorWorkspaceResourceId": workspace,
                         "alerts": {"actionGroupResourceId": "/subscriptions/s/resourceGroups/mon/providers/"
                                                             "microsoft.insights/actionGroups/oncall"}})
    run = run_pulumi(lambda: GpuObservability("obs", GpuObservabilityArgs(
        platform.observability, platform.cluster, "rg", "cluster-id",
        list(exporter_pools(platform_pools(platform), platform.observability)), "gpu-resources",
        ["nvidia-device-plugin-daemonset"], deployer_principal_type="ServicePrincipal")), "unit",
        mocks=PlatformMocks(extra_calls={WORKSPACE_INVOKE: lambda _args: {"location": "westeurope"}}))
    assert run.error is None, run.error
    types = sorted(r.type for r in run.resources if r.custom)
    assert "azure-native:monitor:AzureMonitorWorkspace" not in types and "azure-native:monitor:ActionGroup" not in types
    assert "azure-native:dashboard:Grafana" in types
    assert [r.name for r in run.resources if r.type == "pulumi-python:dynamic:Resource"] == [
        "obs-grafana-role-propagation", "obs-dashboard"]
    grafana = run.one("azure-native:dashboard:Grafana").inputs
    assert grafana["properties"]["grafanaIntegrations"]["azureMonitorWorkspaceIntegrations"] == [
        {"azureMonitorWorkspaceResourceId": workspace}]
    reader = run.one("azure-native:authorization:RoleAssignment", "obs-grafana-reads-workspace").inputs
    assert reader["scope"] == workspace and reader["principalType"] == "ServicePrincipal"
    editor = run.one("azure-native:authorization:RoleAssignment", "obs-deployer-edits-grafana").inputs
    assert editor["roleDefinitionId"].endswith("/a79a5197-3a5c-4973-a920-486035ffd60f")
    # CI deploys as a service principal: the provider's default principalType (User) would be refused.
    assert editor["principalType"] == "ServicePrincipal"
    assert len(editor["roleAssignmentName"]) == 36 and len(reader["roleAssignmentName"]) == 36
    assert reader["roleDefinitionId"].endswith("/b0d8363b-8ddd-447d-831f-62ca05bff136")
    group = run.one("azure-native:alertsmanagement:PrometheusRuleGroup", "obs-gpu-alerts").inputs
    assert group["scopes"] == [workspace, "cluster-id"]
    assert group["rules"][0]["actions"][0]["actionGroupId"].endswith("/actionGroups/oncall")
    assert [c.token for c in run.calls if "Workspace" in c.token] == ["azure-native:monitor:getAzureMonitorWorkspace"]


def test_dashboard_upload_is_grafanas_create_or_replace_call():
    from components.observability import dashboard_upload
    url, body = dashboard_upload("https://g-abc.eus2.grafana.azure.com/", '{"uid": "gpu-aks-gpus", "id": 7}')
    assert url == "https://g-abc.eus2.grafana.azure.com/api/dashboards/db"
    assert json.loads(body) == {"dashboard": {"uid": "gpu-aks-gpus", "id": None}, "overwrite": True,
                                "message": "gpu-aks: pulumi up"}


def test_names_follow_the_arm_templates_cuts():
    """`dceName` is cut to 44, `dcrName` to 64, `dcraName` not at all (AddonArmTemplate, copied in
    tests/fixtures/prometheus-collector/arm-template-excerpt.json)."""
    variables = ARM["variables"]
    assert "min(44," in variables["dceName"] and "min(64," in variables["dcrName"] and "min(" not in variables["dcraName"]
    assert "azureMonitorWorkspaceLocation" in variables["dceName"] + variables["dcrName"]
    assert "clusterLocation" in variables["dcraName"]
    assert msprom_name("eastus2", "x" * 63, DCE_NAME_LENGTH) == ("MSProm-eastus2-" + "x" * 63)[:44]
    assert msprom_name("eastus2", "x" * 63, DCR_NAME_LENGTH) == ("MSProm-eastus2-" + "x" * 63)[:64]
    assert msprom_name("eastus2", "x" * 63) == "MSProm-eastus2-" + "x" * 63
    assert action_group_short_name("gpu-aks-prod") == "gpuaksprod" and len(action_group_short_name("a" * 63)) == 12


# --- Microsoft's REST models as oracles -------------------------------------------------------------


def _deserialize(model_cls, body):
    """Microsoft's generated model of `body`; anything the API version does not define ends up in
    `additional_properties`, which these bodies must not have."""
    model = model_cls.deserialize(body)
    extra = getattr(model, "additional_properties", None) or {}
    assert not extra, f"{model_cls.__name__} does not know {sorted(extra)}"
    return model


def _camel(value):
    if isinstance(value, dict):
        return {k: _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def test_cluster_azure_monitor_profile_against_the_2025_09_01_model():
    from azure.mgmt.containerservice import models  # 40.1.0: API 2025-09-01 (tests/test_aks_api.py pins it)
    profile = models.ManagedClusterAzureMonitorProfile.deserialize({"metrics": {"enabled": True}})
    assert profile.metrics.enabled is True


def test_data_collection_bodies_against_the_2022_06_01_models(prod_run):
    models = pytest.importorskip(
        "azure.mgmt.monitor.v2022_06_01.models",
        reason="azure-mgmt-monitor 6.0.2 (the last with the 2022-06-01 data collection models) is not installed")
    rule = prod_run.one("azure-native:monitor:DataCollectionRule").inputs
    body = {"location": rule["location"], "kind": rule["kind"], "properties": {
        k: rule[k] for k in ("dataCollectionEndpointId", "dataSources", "destinations", "dataFlows", "description")}}
    model = _deserialize(models.DataCollectionRuleResource, body)
    assert model.data_sources.prometheus_forwarder[0].streams == ["Microsoft-PrometheusMetrics"]
    assert model.destinations.monitoring_accounts[0].account_resource_id == "observability-workspace-id"
    endpoint = prod_run.one("azure-native:monitor:DataCollectionEndpoint").inputs
    _deserialize(models.DataCollectionEndpointResource, {"location": endpoint["location"], "kind": endpoint["kind"]})
    association = prod_run.one("azure-native:monitor:DataCollectionRuleAssociation", "observability-dcra").inputs
    assert _deserialize(models.DataCollectionRuleAssociationProxyOnlyResource, {"properties": {
        "dataCollectionRuleId": association["dataCollectionRuleId"], "description": association["description"]}})


def test_rule_group_and_grafana_bodies_match_the_sdks_generated_types(prod_run):
    """No Microsoft Python model exists for PrometheusRuleGroup 2023-03-01 or Grafana 2024-10-01, so the
    bodies are checked against pulumi-azure-native 3.29.0's own types, generated from Microsoft's
    REST spec at exactly those API versions."""
    from pulumi_azure_native.alertsmanagement import _inputs as alerts
    allowed = set(alerts.PrometheusRuleArgsDict.__annotations__) | {"for"}
    group = prod_run.one("azure-native:alertsmanagement:PrometheusRuleGroup", "observability-gpu-alerts").inputs
    snake = {"resolveConfiguration": "resolve_configuration"}
    for rule in group["rules"]:
        assert {snake.get(k, k) for k in rule} <= allowed
        assert 0 <= rule["severity"] <= 4 and rule["for"].startswith("PT")


# --- The doctor -------------------------------------------------------------------------------------


def _node(name, pool):
    return {"metadata": {"name": name, "labels": {"gpu-aks.io/pool": pool, "accelerator": "nvidia",
                                                  "nvidia.com/gpu.accelerator": "nvidia-tesla-t4"}},
            "spec": {"taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"nvidia.com/gpu": "1"}}}


def _pod(name, node, app, ready=True):
    return {"metadata": {"name": name, "namespace": "gpu-resources", "labels": {"app.kubernetes.io/name": app}},
            "spec": {"nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": [] if ready else [{"state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                                               "restartCount": 4}]}}


def test_the_doctor_wants_a_ready_exporter_on_every_watched_gpu_node():
    from gpu_aks_policies.fit import platform_from_outputs

    from components.contract import platform_contract
    from tools.doctor import diagnose

    def exporter_problems(observability, pods):
        contract = platform_contract(settings(observability))
        if observability:  # what the contract gains with observability (see docs/observe.md)
            contract["gpuPools"]["t4"]["dcgmExporter"] = "gpu-aks"
        platform = platform_from_outputs(contract)
        nodes = [_node("n1", "t4"), _node("n2", "t4")]
        plugins = [_pod(f"plugin-{n}", n, "nvidia-device-plugin") for n in ("n1", "n2")]
        found = diagnose(platform, nodes, plugins + pods).problems
        return [(p.node, p.message.split(" (")[0]) for p in found if p.check == "dcgm-exporter"]

    healthy = [_pod("dcgm-1", "n1", "dcgm-exporter"), _pod("dcgm-2", "n2", "dcgm-exporter")]
    assert exporter_problems({"enabled": True}, healthy) == []
    assert exporter_problems({"enabled": True}, healthy[:1]) == [("n2", "no DCGM exporter pod runs on the node")]
    assert exporter_problems({"enabled": True}, [healthy[0], _pod("dcgm-2", "n2", "dcgm-exporter", ready=False)]) == [
        ("n2", "DCGM exporter pod dcgm-2 is not Ready")]
    assert exporter_problems(None, []) == [], "no exporter is expected where observability is off"
    assert exporter_problems(None, [{**healthy[0], "metadata": {**healthy[0]["metadata"], "labels": {
        "app.kubernetes.io/name": "dcgm-exporter", "gpu-aks.io/pool": "t4"}}}]) == [
        ("n2", "no DCGM exporter pod runs on the node")], "a pool with exporter pods is watched even without the key"


def test_kube_state_metrics_names_are_in_the_add_ons_minimal_keep_list():
    """The keep list is Go now (0.3.1 cited a Ruby file Azure/prometheus-collector deleted)."""
    from observability import metrics
    fixture = ROOT / "tests" / "fixtures" / "prometheus-collector" / "keep-list.kubestate-minimal.go.txt"
    source = fixture.read_text()
    assert "otelcollector/shared/configmap/mp/tomlparser-default-targets-metrics-keep-list.go" in source
    assert "tomlparser-default-targets-metrics-keep-list.go" in inspect.getsource(metrics)
    assert ".rb" not in inspect.getsource(metrics)
    keep = re.search(r'kubestateRegex_minimal_mac\s+= "([^"]+)"', source)
    assert keep
    pattern = re.compile(f"(?:{keep.group(1)})")
    assert [name for name in sorted(KUBE_STATE_METRICS) if not pattern.fullmatch(name)] == []
    assert not pattern.fullmatch("kube_pod_container_resource_requests_total"), "the check can fail"


@pytest.mark.parametrize("cluster", ["gpu-aks-prod", "gpu-aks-dev", "a", "x" * 63, "gpu_aks_prod_with_a_long_name",
                                     "9lives", "-", "gpu-aks-" + "y" * 14 + "-z", "Team.A-GPU"])
def test_grafana_names_are_valid_and_deterministic(cluster):
    from components.observability import GRAFANA_NAME_RE, grafana_name
    name = grafana_name(cluster)
    assert 2 <= len(name) <= 23 and GRAFANA_NAME_RE.fullmatch(name), name
    assert grafana_name(cluster) == name


def test_grafana_names_keep_long_clusters_apart_and_short_ones_readable():
    from components.observability import grafana_name
    assert grafana_name("gpu-aks-prod") == "gpu-aks-prod"
    assert grafana_name("x" * 40 + "a") != grafana_name("x" * 40 + "b")


def test_grafana_gets_its_explicit_name():
    platform = settings({"enabled": True, "grafana": True}, cluster={"name": "gpu-aks-" + "p" * 30})
    from components.observability import GpuObservability, GpuObservabilityArgs, grafana_name
    from offline.mockrun import run_pulumi
    run = run_pulumi(lambda: GpuObservability("obs", GpuObservabilityArgs(
        platform.observability, platform.cluster, "rg", "cluster-id",
        list(exporter_pools(platform_pools(platform), platform.observability)), "gpu-resources",
        ["nvidia-device-plugin-daemonset"])), "unit")
    assert run.error is None, run.error
    assert run.one("azure-native:dashboard:Grafana").inputs["workspaceName"] == grafana_name(platform.cluster.name)
