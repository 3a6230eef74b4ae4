"""gpu-aks: a GPU-ready AKS cluster per stack.

settings -> AksCluster -> ClusterAccess -> NodePool / GpuNodePool -> GpuDevicePlugin
         -> GpuAdmissionPolicy -> (GpuSmokeTest) -> outputs
"""

import pulumi

from components.access import DEPLOYER_OUTPUT, ClusterAccess, ClusterAccessArgs
from components.admission_policy import GpuAdmissionPolicy, GpuAdmissionPolicyArgs
from components.cluster import NETWORK_OUTPUT, AksCluster, AksClusterArgs
from components.contract import platform_contract
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.node_pools import GpuNodePool, GpuNodePoolArgs, NodePool, NodePoolArgs
from components.previous_run import PreviousRun
from components.smoke_test import GpuSmokeTest, GpuSmokeTestArgs
from components.stack_config import load_settings

settings = load_settings()
previous = PreviousRun()

cluster = AksCluster("aks", AksClusterArgs(settings.cluster, settings.system_pool, settings.maintenance,
                                           previous.output(NETWORK_OUTPUT)))
access = ClusterAccess("access", ClusterAccessArgs(settings.access, cluster.managed_cluster.id,
                                                   settings.cluster.aad_enabled and settings.cluster.azure_rbac,
                                                   previous.output(DEPLOYER_OUTPUT)))
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
if settings.admission_policy.enabled and settings.gpu_pools:
    GpuAdmissionPolicy("gpu-admission", GpuAdmissionPolicyArgs(
        settings.admission_policy, settings.gpu_pools, cluster.provider, after=access.ready))

pulumi.export("clusterName", cluster.managed_cluster.name)
pulumi.export("resourceGroupName", cluster.resource_group.name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
# Read back by the next run (components/previous_run.py).
pulumi.export(NETWORK_OUTPUT, cluster.network_record)
pulumi.export(DEPLOYER_OUTPUT, access.deployer_object_id)
for key, value in platform_contract(settings).items():
    pulumi.export(key, value)
