"""gpu-aks: a GPU-ready AKS cluster per stack.

settings -> AksCluster -> ClusterAccess -> NodePool / GpuNodePool -> GpuDevicePlugin
         -> (GpuMetricsExporter, GpuObservability) -> GpuAdmissionPolicy -> (GpuSmokeTest) -> outputs
"""

import pulumi

from components.access import ClusterAccess, ClusterAccessArgs
from components.admission_policy import GpuAdmissionPolicy, GpuAdmissionPolicyArgs
from components.cluster import AksCluster, AksClusterArgs
from components.contract import platform_contract
from components.dcgm_exporter import GpuMetricsExporter, GpuMetricsExporterArgs
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.node_pools import GpuNodePool, GpuNodePoolArgs, NodePool, NodePoolArgs
from components.observability import GpuObservability, GpuObservabilityArgs, azure_monitor_profile
from components.smoke_test import GpuSmokeTest, GpuSmokeTestArgs
from components.stack_config import load_settings
from observability.dashboard import dashboard_json
from observability.rules import agent_daemonsets, exporter_pools

settings = load_settings()

cluster = AksCluster("aks", AksClusterArgs(settings.cluster, settings.system_pool,
                                           azure_monitor_profile(settings.observability)))
access = ClusterAccess("access", ClusterAccessArgs(settings.access, cluster.managed_cluster.id,
                                                   settings.cluster.aad_enabled and settings.cluster.azure_rbac))
cpu_pools = [NodePool(pool.name, NodePoolArgs(pool, cluster.target)) for pool in settings.cpu_pools]
gpu_pools = [GpuNodePool(pool.name, GpuNodePoolArgs(pool, cluster.target)) for pool in settings.gpu_pools]

served_pools = settings.served_gpu_pools()
if settings.device_plugin.enabled and served_pools:
    device_plugin = GpuDevicePlugin("nvidia-device-plugin", GpuDevicePluginArgs(
        settings.device_plugin, served_pools, cluster.provider, after=access.ready))
    if settings.smoke_test.enabled:
        GpuSmokeTest("gpu-smoke-test", GpuSmokeTestArgs(
            settings.smoke_test, settings.device_plugin.namespace, served_pools, cluster.provider,
            after=[device_plugin, *gpu_pools, *access.ready]))
observability = settings.observability
#: Contract fields: the workspace's PromQL endpoint and the dashboard's URL, null where there is none.
query_endpoint: pulumi.Input[str | None] = None
dashboard_url: pulumi.Input[str | None] = None
if observability.enabled:
    watched_pools = exporter_pools(settings)
    if watched_pools:
        GpuMetricsExporter("dcgm-exporter", GpuMetricsExporterArgs(
            observability, settings.device_plugin.namespace, watched_pools, cluster.provider,
            after=[device_plugin, *access.ready]))
    monitoring = GpuObservability("observability", GpuObservabilityArgs(
        observability, settings.cluster, cluster.resource_group.name, cluster.managed_cluster.id, watched_pools,
        settings.device_plugin.namespace, agent_daemonsets(settings), dashboard_json(watched_pools, observability.alerts),
        settings.access.role_propagation_seconds))
    query_endpoint, dashboard_url = monitoring.query_endpoint, monitoring.dashboard_url
if settings.admission_policy.enabled and settings.gpu_pools:
    GpuAdmissionPolicy("gpu-admission", GpuAdmissionPolicyArgs(
        settings.admission_policy, settings.gpu_pools, cluster.provider, after=access.ready))

pulumi.export("clusterName", cluster.managed_cluster.name)
pulumi.export("resourceGroupName", cluster.resource_group.name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("prometheusQueryEndpoint", query_endpoint)
pulumi.export("grafanaDashboardUrl", dashboard_url)
for key, value in platform_contract(settings).items():
    pulumi.export(key, value)
