"""`AksCluster`: resource group, managed cluster with its inline system pool, credentials, and the
Kubernetes provider everything in-cluster is created with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice, resources

from components.aks_api import dns_prefix_for
from components.kubeconfig import decode_kubeconfig, with_kubelogin_mode
from components.maintenance import PlannedMaintenance, PlannedMaintenanceArgs
from components.network_grants import NetworkGrants, NetworkGrantsArgs, network_grants, user_assigned_principal
from components.pools import agent_pool_properties
from components.pools.system import SYSTEM
from components.settings import ClusterSettings, SystemPoolSettings
from components.settings.api_server import ApiServerAccessSettings
from components.settings.common import RECORD_SECRET, recorded_secret
from components.settings.maintenance import MaintenanceSettings
from components.settings.network import (
    NetworkSettings,
    network_change_problems,
    network_record,
    network_upgrade_warnings,
)

#: The stack output recording the cluster's network, read back on the next run (see `AksCluster`).
NETWORK_OUTPUT = "clusterNetwork"


def _after_checks(checks: tuple[pulumi.Output[Any], ...], value: str) -> pulumi.Output[str]:
    """`value` once every check has passed. The SDK sends a resource's registration only when its inputs
    have resolved, so a check that raises stops it, and everything that needs the resource, before any
    step. Only an exported check was awaited before: under `pulumi up --skip-preview` (what the Automation
    API runs) the real engine created the new resource group and cluster of a refused location change
    before the refusal came (tests/engine/test_changes.py)."""
    # Awaited rather than applied: the value carries no dependency on what the checks read (the stack's
    # own StackReference), so the resources stay what a GpuCluster in another program registers.
    async def after() -> str:
        await pulumi.Output.all(*checks).future()
        return value

    return pulumi.Output.from_input(after())


def _as_is(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class AksClusterArgs:
    cluster: ClusterSettings
    system_pool: SystemPoolSettings
    #: When AKS may upgrade; None creates no maintenance configuration.
    maintenance: MaintenanceSettings | None = None
    #: The network this stack recorded on its last update (`clusterNetwork`), or None to skip the check.
    previous_network: pulumi.Output[Any] | None = None
    #: `azureMonitorProfile` (components.observability.azure_monitor_profile); None leaves it unset.
    azure_monitor_profile: dict[str, Any] | None = None
    #: Your subnets the pools' nodes and pods join (`vnetSubnetID`, `podSubnetID` of every pool): the
    #: control-plane identity is granted Network Contributor on each.
    subnets: tuple[str, ...] = ()
    #: What the pool kinds need of the managed cluster (`kind.cluster_properties`: NAP's
    #: `node_provisioning_profile`), as `ManagedCluster` keyword arguments.
    pool_properties: Mapping[str, Any] = field(default_factory=dict)
    #: Checks against the last update that refuse this run (an Output that raises `pulumi.RunError`):
    #: the resource group, and so everything in it, is registered only once they have passed.
    checks: tuple[pulumi.Output[Any], ...] = ()


def network_profile(network: NetworkSettings) -> dict[str, Any]:
    """`networkProfile`, stated in full instead of left to API defaults."""
    profile: dict[str, Any] = {
        "network_plugin": network.plugin,
        "network_dataplane": network.dataplane,
        "network_policy": network.policy,
        "service_cidr": network.service_cidr,
        "dns_service_ip": network.dns_service_ip,
        "outbound_type": network.outbound_type,
        "load_balancer_sku": "standard",
    }
    if network.plugin_mode:
        profile["network_plugin_mode"] = network.plugin_mode
    if network.pod_cidr:
        profile["pod_cidr"] = network.pod_cidr
    return profile


def api_server_access_profile(api_server: ApiServerAccessSettings) -> dict[str, Any] | None:
    if api_server.private_cluster:
        zone = {"private_dns_zone": api_server.private_dns_zone} if api_server.private_dns_zone else {}
        return {"enable_private_cluster": True, **zone}
    if api_server.authorized_ip_ranges:
        return {"authorized_ip_ranges": list(api_server.authorized_ip_ranges)}
    return None


def _refuse_network_change(previous_and_current: list[Any], masked: bool = False) -> dict[str, Any]:
    previous, current = previous_and_current
    problems = network_change_problems(previous, current, masked)
    if problems:
        # Raised during `pulumi preview`, before any step: the change is refused where Azure would
        # refuse it, instead of failing halfway through `pulumi up`.
        raise pulumi.RunError("the cluster's network cannot change this way in place:\n"
                              + "\n".join(f"  - {problem}" for problem in problems))
    for warning in network_upgrade_warnings(previous, current, masked):
        pulumi.log.warn(warning)
    return dict(current)


@dataclass(frozen=True)
class ClusterTarget:
    """What a node pool needs to attach itself to the cluster."""

    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    kubernetes_version: str
    cluster: pulumi.Resource
    #: AKS's auto-upgrade moves the version under the pinned value: pools send no orchestratorVersion.
    aks_moves_version: bool = False


def _system_pool_profile(
    pool: SystemPoolSettings, kubernetes_version: str | None,
) -> containerservice.ManagedClusterAgentPoolProfileArgs:
    """The inline `agentPoolProfiles[0]`: the system pool's body from the one AgentPool builder."""
    return containerservice.ManagedClusterAgentPoolProfileArgs(
        name=pool.name, **agent_pool_properties(SYSTEM.body(pool), kubernetes_version))


class AksCluster(pulumi.ComponentResource):
    """The AKS control plane and its system (CPU) pool.

    Only the system pool is inline: a cluster needs one pool at creation, and adding pools inline to
    an existing cluster is refused ("Adding agent pools to an existing cluster is not allowed through
    managed cluster operations"). Every other pool is its own `AgentPool`, and the cluster ignores
    `agentPoolProfiles`: after creation Azure reports those pools in it too, and without the ignore
    every `pulumi up` would try to delete them again and put every pool into `Scaling`
    (pulumi-azure-native #4264; the Azure Verified Module does the same). The cost: later edits to the
    system pool are made with `az aks nodepool update`, not here.

    When `upgradeChannel` lets AKS move the version (`stable` and `rapid` move the minor, `patch` a
    pinned patch), `kubernetesVersion` is ignored after creation: otherwise the next `pulumi up` would
    try to move the cluster back, which AKS refuses (no downgrades). The pin is then the version the
    cluster is created with; upgrades are AKS's, or `az aks upgrade`.

    The network profile and API-server access are stated in full (`cluster.networkProfile`,
    `cluster.apiServerAccessProfile`); a network change AKS would refuse on an existing cluster is
    refused at preview against the `clusterNetwork` the last run exported. `cluster.protect` protects
    the cluster and its resource group; `PlannedMaintenance` adds the maintenance windows.
    """

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:AksCluster", name, None, opts)
        cluster = args.cluster
        child = pulumi.ResourceOptions(parent=self)
        # Under a secret `gpu-aks:cluster` every value it gives the cluster and its group is passed as a
        # secret input: Pulumi then shows it as [secret] in previews and encrypts it in state (issue 41:
        # the API server's authorized ranges and the version were printed in plain text).
        kept: Callable[[Any], Any] = pulumi.Output.secret if cluster.secret else _as_is
        tags = kept(dict(cluster.tags))

        #: What this run records for the next one's network check; exported, and awaited before the
        #: resource group is registered (`_after_checks`), so a refusal fails preview and up alike.
        #: Under a secret `gpu-aks:cluster` the record is secret too, and its values are masked in messages.
        record = {**network_record(cluster.network), RECORD_SECRET: cluster.secret}
        self.network_record: pulumi.Output[dict[str, Any]] = pulumi.Output.from_input(record)
        if args.previous_network is not None:
            # A recorded network that was secret stays masked in messages even if the config no longer
            # is (as `clusterIdentity`'s check does).
            was_secret: pulumi.Output[bool] = pulumi.Output.from_input(args.previous_network.is_secret())
            self.network_record = pulumi.Output.all(args.previous_network, record, was_secret).apply(
                lambda values: _refuse_network_change(
                    values[:2], cluster.secret or values[2] is True or recorded_secret(values[0])))
        self.network_record = kept(self.network_record)
        self.resource_group = resources.ResourceGroup(
            f"{name}-rg", resource_group_name=kept(_after_checks((self.network_record, *args.checks),
                                                                 cluster.resource_group_name)),
            location=cluster.location,
            # Deleting the group deletes the cluster in it: it is protected with the cluster.
            tags=tags, opts=pulumi.ResourceOptions(parent=self, protect=cluster.protect))

        aad_profile: dict[str, Any] | None = {
            "managed": True,
            "enable_azure_rbac": cluster.azure_rbac,
            "admin_group_object_ids": list(cluster.admin_group_object_ids),
        } if cluster.aad_enabled else None

        # The control-plane identity's roles on your network (components/network_grants.py): a
        # user-assigned identity is granted before the cluster, a system-assigned one after it.
        grants = tuple(network_grants(args.subnets, cluster.api_server.own_private_dns_zone))
        identity = cluster.identity
        self.network_grants: NetworkGrants | None = None
        if grants and identity.user_assigned_identity is not None:
            principal = user_assigned_principal(identity.user_assigned_identity, pulumi.InvokeOutputOptions(parent=self))
            self.network_grants = NetworkGrants(f"{name}-network-grants", NetworkGrantsArgs(principal, grants), child)

        # Plain dicts do not match the SDK's TypedDict overloads for mypy; the tests check these inputs.
        self.managed_cluster = containerservice.ManagedCluster(  # type: ignore[call-overload]
            f"{name}-cluster",
            resource_name_=kept(cluster.name),
            resource_group_name=self.resource_group.name,
            location=cluster.location,
            dns_prefix=kept(dns_prefix_for(cluster.name)),
            kubernetes_version=kept(cluster.kubernetes_version),
            sku=kept({"name": "Base", "tier": cluster.sku_tier}),
            identity=kept(identity.as_api()),
            enable_rbac=True,
            aad_profile=kept(aad_profile),
            disable_local_accounts=kept(cluster.disable_local_accounts),
            oidc_issuer_profile=kept({"enabled": cluster.oidc_issuer}),
            security_profile=kept({"workload_identity": {"enabled": cluster.workload_identity},
                                   **cluster.security_profile.as_api()}),
            auto_upgrade_profile=kept({
                "upgrade_channel": cluster.upgrade_channel,
                "node_os_upgrade_channel": cluster.node_os_upgrade_channel,
            }),
            # The API's kebab-case keys; booleans stay booleans (API version 2025-09-01 types them so).
            auto_scaler_profile=kept({key.replace("-", "_"): value for key, value in cluster.autoscaler_profile.items()}),
            network_profile=kept(network_profile(cluster.network)),
            api_server_access_profile=kept(api_server_access_profile(cluster.api_server)),
            azure_monitor_profile=args.azure_monitor_profile,
            **args.pool_properties,
            # Node auto-provisioning (AKS runs Karpenter); sent only when on, so other stacks' bodies stay as they were.
            **({"node_provisioning_profile": kept(cluster.node_provisioning_profile.as_api())}
               if cluster.node_provisioning_profile.auto else {}),
            # pulumi-azure-native#2094 and NotAllAgentPoolOrchestratorVersionSpecifiedAndUnchanged:
            # a managed-cluster PUT must not re-send a pool version AKS has since moved. When the
            # channel moves versions the inline pool gets none and starts at the control plane's.
            agent_pool_profiles=[_system_pool_profile(
                args.system_pool, None if cluster.aks_moves_version else cluster.kubernetes_version)],
            tags=tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=cluster.protect,
                depends_on=[self.network_grants] if self.network_grants else None,
                ignore_changes=["agentPoolProfiles", *(["kubernetesVersion"] if cluster.aks_moves_version else [])]),
        )
        if grants and self.network_grants is None:
            principal = self.managed_cluster.identity.apply(lambda found: found.principal_id if found else None)
            self.network_grants = NetworkGrants(f"{name}-network-grants", NetworkGrantsArgs(principal, grants),
                                                pulumi.ResourceOptions(parent=self, depends_on=[self.managed_cluster]))
        if args.maintenance is not None:
            self.maintenance = PlannedMaintenance(f"{name}-maintenance", PlannedMaintenanceArgs(
                args.maintenance, self.resource_group.name, self.managed_cluster.name, cluster.upgrade_channel,
                cluster.node_os_upgrade_channel), opts=pulumi.ResourceOptions(parent=self, depends_on=[self.managed_cluster]))

        credentials = containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=self.resource_group.name, resource_name=self.managed_cluster.name,
            format="exec" if cluster.aad_enabled else None,
        )
        self.kubeconfig: pulumi.Output[str] = pulumi.Output.secret(credentials.kubeconfigs[0].value.apply(
            lambda encoded: with_kubelogin_mode(decode_kubeconfig(encoded), cluster.kubelogin_mode)))
        self.oidc_issuer_url = self.managed_cluster.oidc_issuer_profile.apply(
            lambda profile: profile.issuer_url if profile else None)
        # Client-side apply: every in-cluster object is then created with a plain Create, which Kubernetes refuses
        # for an object that already exists (AlreadyExists), in every pulumi-kubernetes release. With server-side
        # apply, releases before 4.29.0 create by an apply that adopts an existing object, and a later destroy
        # deletes it: another team's `gpu-resources` namespace with everything in it (pulumi-kubernetes
        # provider/pkg/await/await.go:187-238 at f47bc2d6; from 4.29.0 only server-side apply with
        # upsertExistingObjects adopts, await.go:190-290). The cluster tier builds such a release
        # (tests/cluster/test_provider.py; testbed/README.md).
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, enable_server_side_apply=False,
                                     opts=child)
        self.target = ClusterTarget(
            self.resource_group.name, self.managed_cluster.name, cluster.kubernetes_version, self.managed_cluster,
            cluster.aks_moves_version)

        self.register_outputs({
            "clusterName": self.managed_cluster.name,
            "resourceGroupName": self.resource_group.name,
            "kubeconfig": self.kubeconfig,
            "oidcIssuerUrl": self.oidc_issuer_url,
        })
