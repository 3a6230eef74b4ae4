"""`GpuCluster`: the whole gpu-aks platform as one component, usable from any Pulumi language.

Its inputs are the stack config's keys, spelled and nested the same (`components/gpu_cluster_args.py`,
generated from them); its outputs are the outputs contract app stacks read. The constructor turns
the inputs back into the raw config shape and hands them to the settings layer's own parser, so an
input from Python, TypeScript or YAML is refused exactly as a stack config value is, with the same
message naming its path (`gpuPools[gput4].minCount: 3 is above maxCount 1; ...`), every problem at
once and before anything is registered. Then it composes AksCluster -> ClusterAccess -> CpuAgentPool /
GpuAgentPool (one per pool, by its kind: components/pools/) -> GpuDevicePlugin -> GpuAdmissionPolicy ->
(GpuSmokeTest), as `__main__.py` did.

Inputs must be known when the program runs (they decide which resources exist): an output of
another resource, a secret or an unknown value is refused with a message naming where it is.

No `from __future__ import annotations`: Pulumi's component host reads the annotations below
(outputs and the `args` parameter) as objects to build the package schema.
"""

import enum
import os
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

import pulumi
from gpu_aks_policies.limits import MAX_INPUT_DEPTH, MAX_INPUT_NODES, MAX_PATH_CHARS, MAX_REASON_CHARS, MAX_REPORTED_CHARS
from gpu_aks_policies.terminal import escape_field
from pulumi.errors import InputPropertiesError, InputPropertyErrorDetails
from pulumi.output import Unknown

from components.access import DEPLOYER_OUTPUT, ClusterAccess, ClusterAccessArgs
from components.admission_policy import GpuAdmissionPolicy, GpuAdmissionPolicyArgs
from components.cluster import NETWORK_OUTPUT, AksCluster, AksClusterArgs
from components.contract import platform_contract
from components.dcgm_exporter import GpuMetricsExporter, GpuMetricsExporterArgs
from components.device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.dra_driver import GpuDraDriver, GpuDraDriverArgs
from components.gpu_cluster_args import CONFIG_KEYS, GpuClusterArgs
from components.gpu_cluster_outputs import CpuPoolContract, GpuPoolContract, PoolContract
from components.node_pools import PoolArgs, PoolComponent
from components.observability import (
    GpuObservability,
    GpuObservabilityArgs,
    agent_daemonsets,
    azure_monitor_profile,
    exporter_pools,
)
from components.platform_settings import PlatformSettings, parse_settings
from components.pools import KINDS, platform_pools
from components.previous_run import PreviousRun
from components.queues import GpuQueues, GpuQueuesArgs
from components.replacements import IDENTITY_OUTPUT, identity_changes, identity_record
from components.settings import PROJECT, SettingsError, pool_key
from components.settings.common import recorded_secret
from components.smoke_test import GpuSmokeTest, GpuSmokeTestArgs
from components.stack_config import read_raw_config, today
from observability.dashboard import dashboard_json

TYPE_TOKEN = f"{PROJECT}:index:GpuCluster"
#: The stack config key the `location` input stands for.
LOCATION_CONFIG_KEY = "azure-native:location"
TOO_LARGE = f"is larger or deeper than gpu-aks accepts ({MAX_INPUT_NODES} values, {MAX_INPUT_DEPTH} levels)"


# --- Outputs: the contract, typed (components/gpu_cluster_outputs.py, generated from policies/contract.py) ---


# --- Inputs -> raw config ------------------------------------------------------------------------


class GpuClusterInputError(ValueError):
    """Inputs the settings layer refused: `(path, reason)` pairs, paths named as the inputs spell them."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = [(escape_field(path, MAX_PATH_CHARS), escape_field(reason, MAX_REASON_CHARS))
                         for path, reason in problems]
        super().__init__(f"GpuCluster has {len(self.problems)} input problem(s); nothing was created:\n"
                         + "\n".join(f"  - {path}: {reason}" for path, reason in self.problems))

    def properties_error(self) -> InputPropertiesError:
        """The same problems as the engine reports bad inputs: one per property path."""
        errors, size = [], 0
        for number, (path, reason) in enumerate(self.problems):
            size += len(path) + len(reason)
            if size > MAX_REPORTED_CHARS and number:
                errors.append(InputPropertyErrorDetails(
                    property_path="(inputs)", reason=f"and {len(self.problems) - number} more problem(s) not listed "
                                                     "here: fix the ones above and run again"))
                break
            errors.append(InputPropertyErrorDetails(property_path=path, reason=reason))
        return InputPropertiesError(f"GpuCluster has {len(self.problems)} input problem(s); nothing was created",
                                    errors)


def _plain(value: Any, path: str, problems: list[tuple[str, str]]) -> Any:
    """`value` as plain JSON-like data (Enum members as their values, mappings as dicts, sequences as
    lists), walked iteratively within MAX_INPUT_DEPTH / MAX_INPUT_NODES. Outputs and unknowns are
    reported in `problems` and replaced by None."""
    root: list[Any] = [None]
    stack: list[tuple[Any, str, Any, Any, int]] = [(value, path, root, 0, 0)]
    nodes = 0
    while stack:
        item, where, container, slot, depth = stack.pop()
        nodes += 1
        if nodes > MAX_INPUT_NODES or depth > MAX_INPUT_DEPTH:
            # Named by its top-level input: the value the walk stopped at is only where it ran out.
            problems.append((where.split(".")[0].split("[")[0] or "(inputs)", TOO_LARGE))
            return None
        if isinstance(item, (pulumi.Output, Unknown)):
            problems.append((where or "(inputs)", "is an output of another resource, a secret or unknown: GpuCluster's "
                                                  "inputs decide which resources exist, so they must be plain values "
                                                  "known when the program runs"))
            converted: Any = None
        elif isinstance(item, enum.Enum):
            converted = item.value
        elif isinstance(item, Mapping):
            converted = {}
            for key, child in item.items():
                stack.append((child, f"{where}.{key}" if where else str(key), converted, key, depth + 1))
        elif isinstance(item, Sequence) and not isinstance(item, (str, bytes)):
            converted = [None] * len(item)
            for index, child in enumerate(item):
                # Named as the settings layer names list items (pools by name), so problems line up.
                stack.append((child, pool_key(where, index, child), converted, index, depth + 1))
        else:
            converted = item
        container[slot] = converted
    return root[0]


def _respelled(raw: dict[str, Any], path: str, spelling: Mapping[str, str]) -> dict[str, Any]:
    """`raw` with the keys of the object at `path` (dotted, through objects only) renamed by `spelling`;
    the objects along the path are copied, `raw` itself is left as it was."""
    head, _, rest = path.partition(".")
    value = raw.get(head)
    if not isinstance(value, Mapping):
        return raw
    if rest:
        return {**raw, head: _respelled(dict(value), rest, spelling)}
    return {**raw, head: {spelling.get(key, key) if isinstance(key, str) else key: item for key, item in value.items()}}


def stack_config_from_args(args: Mapping[str, Any]) -> tuple[dict[str, Any], Any, list[tuple[str, str]]]:
    """GpuCluster's inputs as the stack config spells them: the project keys, `azure-native:location`
    and the problems that keep them from being read (outputs, unknowns, hostile nesting)."""
    problems: list[tuple[str, str]] = []
    raw = _plain(args, "", problems)
    raw = dict(raw) if isinstance(raw, dict) else {}
    location = raw.pop("location", None)
    for path, spelling in CONFIG_KEYS.items():
        raw = _respelled(raw, path, spelling)
    return raw, location, problems


def args_from_stack_config(raw: Mapping[str, Any], location: Any) -> GpuClusterArgs:
    """The stack config (`gpu-aks:*` keys, decoded, and `azure-native:location`) as GpuCluster's inputs."""
    args: dict[str, Any] = {**raw, "location": location}
    for path, spelling in CONFIG_KEYS.items():
        args = _respelled(args, path, {config_key: key for key, config_key in spelling.items()})
    return cast(GpuClusterArgs, args)


def _input_path(problem: str) -> tuple[str, str]:
    """A settings-layer problem (`gpu-aks:gpuPools[gput4].minCount: reason`) as (input path, reason),
    every key in it spelled as the inputs spell it (`gpuPools[gput4].minCount`, `scaleDownUnneededTime`)."""
    key, separator, reason = problem.partition(": ")
    if not separator:
        return "(inputs)", problem
    key = "location" if key == LOCATION_CONFIG_KEY else key.removeprefix(f"{PROJECT}:")
    reason = reason.replace(f"'{PROJECT}:", "'").replace(f"`{PROJECT}:", "`")
    spellings = [(key, config_key) for spelling in CONFIG_KEYS.values() for key, config_key in spelling.items()]
    for input_key, config_key in sorted(spellings, key=lambda item: -len(item[1])):
        key, reason = key.replace(config_key, input_key), reason.replace(config_key, input_key)
    return key, reason


def read_stack_config() -> tuple[GpuClusterArgs, set[str]]:
    """This stack's config as GpuCluster's inputs, and which of them are secret (the program's way in)."""
    try:
        raw, secret_keys = read_raw_config()
    except SettingsError as error:
        raise pulumi.RunError(str(error)) from None
    return args_from_stack_config(raw, pulumi.Config("azure-native").get("location")), secret_keys


def settings_from_args(args: Mapping[str, Any], stack: str, secret_keys: Collection[str] = ()) -> PlatformSettings:
    """Validate GpuCluster's inputs with the settings layer. Raises GpuClusterInputError naming each
    problem by its input path."""
    raw, location, problems = stack_config_from_args(args)
    if any(reason == TOO_LARGE for _, reason in problems):
        # The walk stopped early, so every input after it reads as absent: no problem the settings
        # layer found now would be true.
        raise GpuClusterInputError(problems)
    try:
        # The deployer's principal type defaults from the environment (ARM_CLIENT_ID / AZURE_CLIENT_ID).
        settings = parse_settings(raw, stack, location, secret_keys, today(), os.environ)
    except SettingsError as error:
        # A value already refused above (an output, say) was read as absent: no knock-on problem for it.
        refused = tuple(path for path, _ in problems)
        problems += [(path, reason) for path, reason in map(_input_path, map(str, error.problems))
                     if not path.startswith(refused)]
    if problems:
        raise GpuClusterInputError(problems)
    return settings


# --- What a run would replace -----------------------------------------------------------------------


def _identity_output(record: dict[str, Any], previous: pulumi.Output[Any] | None, secret: bool) -> pulumi.Output[Any]:
    """The `clusterIdentity` this run exports (components/replacements.py), secret when a config section
    it records is. With the last update's record it is the output of the comparison, so the engine awaits
    it during preview: warnings are logged, and a refused change fails the preview before any step."""
    output: pulumi.Output[Any] = pulumi.Output.from_input(record)
    if previous is not None:
        # A recorded value that was secret stays masked in messages even if the config no longer is.
        was_secret: pulumi.Output[bool] = pulumi.Output.from_input(previous.is_secret())
        output = pulumi.Output.all(previous, was_secret, record).apply(
            lambda values: _check_identity(values[0], values[2],
                                           secret or values[1] is True or recorded_secret(values[0])))
    return pulumi.Output.secret(output) if secret else output


def _check_identity(previous: Any, current: dict[str, Any], masked: bool) -> dict[str, Any]:
    changes = identity_changes(previous, current, masked)
    for warning in changes.warnings:
        pulumi.log.warn(warning)
    if changes.refused:
        raise pulumi.RunError("this run would replace the cluster or leave a GPU pool without nodes; nothing was "
                              "changed:\n" + "\n".join(f"  - {problem}" for problem in changes.refused))
    return current


# --- The component --------------------------------------------------------------------------------


class GpuCluster(pulumi.ComponentResource):
    """A GPU-ready AKS cluster: system, CPU and GPU pools, NVIDIA's device plugin, a GPU admission
    policy and an optional GPU smoke test. Its outputs are the contract app stacks read."""

    cluster_name: pulumi.Output[str]
    """The AKS cluster's name."""
    resource_group_name: pulumi.Output[str]
    """The resource group the cluster is in."""
    kubeconfig: pulumi.Output[str]
    """Secret: a kubelogin exec kubeconfig in cluster.kubeloginMode."""
    oidc_issuer_url: pulumi.Output[str | None]
    """The cluster's OIDC issuer URL, for workload-identity federated credentials."""
    prometheus_query_endpoint: pulumi.Output[str | None]
    """The Azure Monitor workspace's PromQL query endpoint, where GPU metrics land; null when observability is off."""
    grafana_dashboard_url: pulumi.Output[str | None]
    """The GPU dashboard in Azure Managed Grafana; null without observability.grafana."""
    contract_version: pulumi.Output[int]
    """The version of this outputs contract."""
    location: pulumi.Output[str]
    """The Azure region."""
    kubernetes_version: pulumi.Output[str]
    """The Kubernetes version the cluster was created with."""
    gpu_namespace: pulumi.Output[str]
    """The namespace NVIDIA's device plugin runs in."""
    mig_strategy: pulumi.Output[str]
    """How the device plugin exposes MIG instances: none, single or mixed."""
    gpu_pools: pulumi.Output[dict[str, GpuPoolContract]]
    """The GPU pools by name."""
    cpu_pools: pulumi.Output[dict[str, CpuPoolContract]]
    """The CPU user pools by name."""
    pools: pulumi.Output[dict[str, PoolContract]]
    """Every pool by name, as the pool model (contract version 3)."""

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None,
                 *, secret_keys: Collection[str] = (), program_layout: bool = False) -> None:
        """`secret_keys`: top-level inputs whose values are secret (masked in messages, passed as secrets).
        `program_layout`: for this repository's own `__main__.py` only; children keep the names they
        had before GpuCluster existed (`aks`, `gput4`, ...) and an alias to their old parent, the stack,
        so stacks deployed by gpu-aks 0.2 update in place. Otherwise children are named
        `<name>-<child>`, so two GpuClusters can live in one program."""
        if program_layout:
            # The stack config's own messages: keys named as Pulumi.<stack>.yaml spells them.
            raw, location, _ = stack_config_from_args(args)
            try:
                settings = parse_settings(raw, pulumi.get_stack(), location, secret_keys, today(), os.environ)
            except SettingsError as error:
                raise pulumi.RunError(str(error)) from None
        else:
            settings = settings_from_args(args, pulumi.get_stack(), secret_keys)
        # Validated first: a refused input registers nothing, not even this component.
        super().__init__(TYPE_TOKEN, name, None, opts)
        for warning in settings.warnings:
            if program_layout:
                pulumi.log.warn(warning)
            else:
                pulumi.log.warn(": ".join(_input_path(warning)), resource=self)

        def child_name(child: str) -> str:
            return child if program_layout else f"{name}-{child}"

        top = pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]
                                     if program_layout else None)
        # The checks against the last update read this stack's own outputs (components/previous_run.py),
        # which only the program exports; a GpuCluster inside another program skips them.
        previous = PreviousRun() if program_layout else None
        pools = platform_pools(settings)
        # A secret pool section is refused before this (`platform_settings`): only the cluster's keys can be secret.
        identity = _identity_output(identity_record(settings.cluster, pools, settings.cluster.secret),
                                    previous.output(IDENTITY_OUTPUT) if previous else None,
                                    secret=settings.cluster.secret)
        cluster = AksCluster(child_name("aks"), AksClusterArgs(
            settings.cluster, settings.system_pool, settings.maintenance,
            previous.output(NETWORK_OUTPUT) if previous else None,
            azure_monitor_profile(settings.observability), pools.subnets(),
            {key: value for kind in KINDS for key, value in kind.cluster_properties(kind.pools(settings)).items()},
            (identity,)), top)
        access = ClusterAccess(child_name("access"), ClusterAccessArgs(
            settings.access, cluster.managed_cluster.id, settings.cluster.aad_enabled and settings.cluster.azure_rbac,
            previous.output(DEPLOYER_OUTPUT) if previous else None), top)
        self._recorded: dict[str, pulumi.Input[Any]] = {NETWORK_OUTPUT: cluster.network_record}
        if access.deployer_object_id is not None:
            self._recorded[DEPLOYER_OUTPUT] = access.deployer_object_id
        self._recorded[IDENTITY_OUTPUT] = identity
        brings_gpus = {pool.name: pool.gpu for pool in pools.pools}
        gpu_pools: list[pulumi.Resource] = []
        for kind in KINDS:
            for pool in kind.pools(settings):
                specs = kind.resources(pool)
                if not specs:
                    continue  # inline: the managed cluster's body carries it
                component = PoolComponent(kind.component_type, child_name(pool.name), PoolArgs(
                    specs, cluster.target, cluster.provider, after=access.ready), top, former_types=kind.former_types)
                if brings_gpus[pool.name]:
                    gpu_pools.append(component)

        served_pools = pools.served
        device_plugin: GpuDevicePlugin | None = None
        if settings.device_plugin.enabled and served_pools:
            device_plugin = GpuDevicePlugin(child_name("nvidia-device-plugin"), GpuDevicePluginArgs(
                settings.device_plugin, served_pools, cluster.provider, after=access.ready), top)
        dra_pools = [pool for pool in pools.gpu if pool.dra is not None]
        dra_driver: GpuDraDriver | None = None
        if dra_pools:
            dra_driver = GpuDraDriver(child_name("nvidia-dra-driver"), GpuDraDriverArgs(
                settings.dra, dra_pools, cluster.provider, after=[*gpu_pools, *access.ready]), top)
        if settings.smoke_test.enabled and (device_plugin or dra_driver):
            # Its objects go where a component of this stack made the namespace: the device plugin's, or on a
            # stack whose GPU pools are all DRA pools, the driver's.
            GpuSmokeTest(child_name("gpu-smoke-test"), GpuSmokeTestArgs(
                settings.smoke_test, settings.device_plugin.namespace if device_plugin else settings.dra.namespace,
                [*(served_pools if device_plugin else ()), *dra_pools], cluster.provider,
                after=[*([device_plugin] if device_plugin else []), *([dra_driver] if dra_driver else []), *gpu_pools,
                       *access.ready]), top)
        observability = settings.observability
        #: Contract fields: the workspace's PromQL endpoint and the dashboard's URL, null where there is none.
        query_endpoint: pulumi.Input[str | None] = None
        dashboard_url: pulumi.Input[str | None] = None
        if observability.enabled:
            watched_pools = exporter_pools(pools, observability)
            if watched_pools:
                GpuMetricsExporter(child_name("dcgm-exporter"), GpuMetricsExporterArgs(
                    observability, settings.device_plugin.namespace, watched_pools, cluster.provider,
                    after=[*([device_plugin] if device_plugin else []), *access.ready]), top)
            monitoring = GpuObservability(child_name("observability"), GpuObservabilityArgs(
                observability, settings.cluster, cluster.resource_group.name, cluster.managed_cluster.id,
                watched_pools, settings.device_plugin.namespace, agent_daemonsets(settings, pools),
                dashboard_json(watched_pools, observability.alerts), settings.access.role_propagation_seconds,
                settings.access.deployer_principal_type), top)
            query_endpoint, dashboard_url = monitoring.query_endpoint, monitoring.dashboard_url
        if settings.queues.enabled and pools.gpu:
            GpuQueues(child_name("kueue"), GpuQueuesArgs(settings.queues, pools.gpu, cluster.provider,
                                                         after=[*gpu_pools, *access.ready]), top)
        if settings.admission_policy.enabled and pools.gpu:
            GpuAdmissionPolicy(child_name("gpu-admission"), GpuAdmissionPolicyArgs(
                settings.admission_policy, pools.gpu, cluster.provider, after=access.ready), top)

        contract = platform_contract(settings, pools)
        self.cluster_name = cluster.managed_cluster.name
        self.resource_group_name = cluster.resource_group.name
        self.kubeconfig = cluster.kubeconfig
        self.oidc_issuer_url = cluster.oidc_issuer_url
        self.prometheus_query_endpoint = pulumi.Output.from_input(query_endpoint)
        self.grafana_dashboard_url = pulumi.Output.from_input(dashboard_url)
        self.contract_version = pulumi.Output.from_input(contract["contractVersion"])
        self.location = pulumi.Output.from_input(contract["location"])
        self.kubernetes_version = pulumi.Output.from_input(contract["kubernetesVersion"])
        if settings.cluster.secret:  # a secret `gpu-aks:cluster` gave it
            self.kubernetes_version = pulumi.Output.secret(self.kubernetes_version)
        self.gpu_namespace = pulumi.Output.from_input(contract["gpuNamespace"])
        self.mig_strategy = pulumi.Output.from_input(contract["migStrategy"])
        self.gpu_pools = pulumi.Output.from_input(contract["gpuPools"])
        self.cpu_pools = pulumi.Output.from_input(contract["cpuPools"])
        self.pools = pulumi.Output.from_input(contract["pools"])
        self.register_outputs(self.outputs())

    def outputs(self) -> dict[str, pulumi.Output[Any]]:
        """The outputs contract by its keys (what `__main__.py` exports)."""
        return {
            "clusterName": self.cluster_name, "resourceGroupName": self.resource_group_name,
            "kubeconfig": self.kubeconfig, "oidcIssuerUrl": self.oidc_issuer_url,
            "prometheusQueryEndpoint": self.prometheus_query_endpoint, "grafanaDashboardUrl": self.grafana_dashboard_url,
            "contractVersion": self.contract_version, "location": self.location,
            "kubernetesVersion": self.kubernetes_version, "gpuNamespace": self.gpu_namespace,
            "migStrategy": self.mig_strategy, "gpuPools": self.gpu_pools, "cpuPools": self.cpu_pools,
            "pools": self.pools,
        }

    def recorded_for_next_run(self) -> dict[str, pulumi.Input[Any]]:
        """What the program also exports so that its next run can compare (components/previous_run.py):
        the cluster's network, the deployer's object ID and what a change would replace (`clusterIdentity`:
        components/replacements.py). Not part of the outputs contract."""
        return dict(self._recorded)
