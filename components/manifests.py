"""Kubernetes objects the platform creates, as plain dicts from small, named builders. Pure.

Hardened by default, after NVIDIA's own manifests: no privilege escalation, every capability dropped,
`system-node-critical`, resource requests set. The exception is NVIDIA's own: its device-plugin
chart gives the plugin `SYS_ADMIN` and `NVIDIA_MIG_MONITOR_DEVICES=all` whenever the MIG strategy is
not `none` (NVIDIA/k8s-device-plugin `deployments/helm/nvidia-device-plugin/templates/_helpers.tpl`,
`requiresCapSysAdmin`; `daemonset-device-plugin.yml`), so MIG pools get a DaemonSet of their own and
the others keep the restricted one. A pool that shares its GPUs (`gpuPools[].sharing`) gets a
DaemonSet of its own that reads NVIDIA's config file from a ConfigMap (`CONFIG_FILE`, as the chart
names it), and an MPS pool also gets NVIDIA's MPS control daemon. The Pulumi components pass these
dicts straight to pulumi-kubernetes, and the tests validate the same dicts against the Kubernetes
schemas and hold the sharing pieces to a copy of NVIDIA's source (`tests/fixtures/nvidia_device_plugin/`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import yaml
from gpu_aks_policies.catalog import DEVICE_PLUGIN_CONFIG_FILE, MPS_ROOT, POOL_LABEL
from gpu_aks_policies.dra_driver import DRA_DRIVER_NAME
from gpu_aks_policies.pools.model import Pool
from gpu_aks_policies.scheduling import parse_taint, toleration_for

PART_OF = {"app.kubernetes.io/part-of": "gpu-aks", "app.kubernetes.io/managed-by": "pulumi"}
#: Every device-plugin pod gpu-aks runs carries this label (the doctor finds them by it).
DEVICE_PLUGIN_APP_LABEL = ("app.kubernetes.io/name", "nvidia-device-plugin")
DEVICE_PLUGIN_NAME = "nvidia-device-plugin-daemonset"
MIG_DEVICE_PLUGIN_NAME = "nvidia-device-plugin-mig-daemonset"
KUBELET_DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"

MPS_CONTROL_DAEMON_APP = "nvidia-mps-control-daemon"
#: A hash of a shared pool's config on its pods' template: the plugin and the MPS daemon read the
#: file only when they start, so a change of replicas rolls them.
CONFIG_HASH_ANNOTATION = "gpu-aks.io/device-plugin-config-sha256"
_CONFIG_KEY = DEVICE_PLUGIN_CONFIG_FILE.rsplit("/", 1)[1]
_CONFIG_DIR = DEVICE_PLUGIN_CONFIG_FILE.rsplit("/", 1)[0]

#: What NVIDIA's plugin and its MPS control daemon ask of each node (and may use at most).
PLUGIN_RESOURCES = {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
#: What gpu-aks's DCGM exporter asks of each node it runs on (`components/dcgm_exporter.py`).
EXPORTER_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "200m", "memory": "512Mi"}}

RESTRICTED_SECURITY_CONTEXT = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
#: What NVIDIA's chart sets when a MIG strategy is in use (`requiresCapSysAdmin`).
MIG_SECURITY_CONTEXT = {"capabilities": {"add": ["SYS_ADMIN"]}}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(PART_OF)}}


def pool_tolerations(pools: Iterable[Pool]) -> list[dict[str, str]]:
    """One toleration per distinct taint of the pools, so a new pool taint can never strand a pod."""
    tolerations: list[dict[str, str]] = []
    for pool in pools:
        for text in pool.taints:
            toleration = toleration_for(parse_taint(text))
            if toleration not in tolerations:
                tolerations.append(toleration)
    return tolerations


def pin_to_pools(pool_names: Sequence[str]) -> dict[str, Any]:
    """Required node affinity on gpu-aks's pool label: the pods run on these pools' nodes only, and
    keep doing so when a pool is replaced under a new Azure name."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": POOL_LABEL, "operator": "In", "values": list(pool_names)}]},
    ]}}}


def _gpu_tolerations(pools: Iterable[Pool]) -> list[dict[str, str]]:
    # CriticalAddonsOnly lets the pod run while a node is in "critical add-ons only" mode (the AKS doc's manifest).
    return [{"key": "CriticalAddonsOnly", "operator": "Exists"}, *pool_tolerations(pools)]


def device_plugin_daemonset(
    namespace_name: str, image: str, mig_strategy: str, pools: Sequence[Pool], mig: bool = False,
    shared: Pool | None = None,
) -> dict[str, Any]:
    """NVIDIA's device-plugin DaemonSet, restricted to the GPU pools it serves and tolerating their
    taints; with `mig`, configured as NVIDIA's chart configures it for a MIG strategy; with `shared`
    (that pool alone), reading the pool's sharing config as the chart mounts and names it."""
    name = MIG_DEVICE_PLUGIN_NAME if mig else DEVICE_PLUGIN_NAME
    # The whole-GPU DaemonSet keeps gpu-aks 0.1's selector labels: a selector cannot change in place.
    selector = "nvidia-device-plugin-mig-ds" if mig else "nvidia-device-plugin-ds"
    if shared is not None:
        name, selector = shared_plugin_name(shared.name), f"{shared_plugin_name(shared.name)}-ds"
    labels = {DEVICE_PLUGIN_APP_LABEL[0]: DEVICE_PLUGIN_APP_LABEL[1], "name": selector}
    # No FAIL_ON_INIT_ERROR=false: NVIDIA dropped it from its static manifests because with it
    # "failures in loading GPU information is silently ignored" and the plugin still looks Ready
    # (NVIDIA/k8s-device-plugin `deployments/static/`); failing keeps a broken GPU node visible.
    env = [{"name": "MIG_STRATEGY", "value": mig_strategy if mig else "none"}]
    if mig:
        env.append({"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"})
    container: dict[str, Any] = {
        "name": "nvidia-device-plugin-ctr",
        "image": image,
        "env": env,
        "securityContext": dict(MIG_SECURITY_CONTEXT if mig else RESTRICTED_SECURITY_CONTEXT),
        "resources": dict(PLUGIN_RESOURCES),
        "volumeMounts": [{"name": "device-plugin", "mountPath": KUBELET_DEVICE_PLUGINS}],
    }
    pod: dict[str, Any] = {
        "priorityClassName": "system-node-critical",
        "affinity": pin_to_pools([pool.name for pool in pools]),
        "tolerations": _gpu_tolerations(pools),
        "containers": [container],
        "volumes": [{"name": "device-plugin", "hostPath": {"path": KUBELET_DEVICE_PLUGINS, "type": "Directory"}}],
    }
    template_metadata: dict[str, Any] = {"labels": {**labels, **PART_OF}}
    if shared is not None:
        _read_sharing_config(shared, pod, container, template_metadata)
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace_name, "labels": {**labels, **PART_OF}},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": template_metadata, "spec": pod},
        },
    }


# --- Sharing (time-slicing and MPS) ------------------------------------------------------------


def shared_plugin_name(pool_name: str) -> str:
    """The device-plugin DaemonSet and ConfigMap of a shared pool: `shared-` keeps it apart from the
    unshared DaemonSets (`nvidia-device-plugin-daemonset`) whatever the pool is called."""
    return f"nvidia-device-plugin-shared-{pool_name}"


def mps_daemon_name(pool_name: str) -> str:
    return f"{MPS_CONTROL_DAEMON_APP}-{pool_name}"


def sharing_config(pool: Pool) -> dict[str, Any]:
    """NVIDIA's device-plugin config for a shared pool (NVIDIA/k8s-device-plugin `api/config/v1`:
    `Config{version, sharing}`, `Sharing{timeSlicing, mps}`, `ReplicatedResources{failRequestsGreaterThanOne,
    resources}`, `ReplicatedResource{name, replicas}`). `failRequestsGreaterThanOne`: a container asking
    for 2 shares fails at the kubelet (`internal/rm/rm.go`, `ValidateRequest`) instead of running on what
    is really one GPU's worth. The resource keeps its name (no `renameByDefault`), so pods still ask
    for `nvidia.com/gpu` (or the MIG resource under `mixed`)."""
    assert pool.sharing is not None
    return {
        "version": "v1",
        "sharing": {pool.sharing.strategy: {
            "failRequestsGreaterThanOne": True,
            # An AgentPool-backed pool has one offer; a NodePool's offers share the plugin's MIG strategy.
            "resources": [{"name": resource, "replicas": pool.sharing.replicas}
                          for resource in dict.fromkeys(offer.resource for offer in pool.gpu_offers)],
        }},
    }


def sharing_config_map(namespace_name: str, pool: Pool) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": shared_plugin_name(pool.name), "namespace": namespace_name, "labels": dict(PART_OF)},
        "data": {_CONFIG_KEY: yaml.safe_dump(sharing_config(pool), sort_keys=False)},
    }


def _config_hash(pool: Pool) -> str:
    return hashlib.sha256(yaml.safe_dump(sharing_config(pool), sort_keys=True).encode()).hexdigest()


def _mps_volumes() -> list[dict[str, Any]]:
    # The chart's `mps-root` and `mps-shm` volumes (daemonset-device-plugin.yml, daemonset-mps-control-daemon.yml).
    return [{"name": "mps-root", "hostPath": {"path": MPS_ROOT, "type": "DirectoryOrCreate"}},
            {"name": "mps-shm", "hostPath": {"path": f"{MPS_ROOT}/shm"}}]


def _read_sharing_config(pool: Pool, pod: dict[str, Any], container: dict[str, Any],
                         template_metadata: dict[str, Any]) -> None:
    """What the chart adds to the plugin for a config file: `CONFIG_FILE` naming it, the ConfigMap
    mounted at its folder, and for MPS `MPS_ROOT` with the daemon's folders (the plugin checks the
    daemon's health through its /dev/shm). The chart copies the file out of the ConfigMap with its
    config-manager sidecar, which picks one of several configs by a node label; a gpu-aks ConfigMap
    holds just this pool's config, so it is mounted directly."""
    assert pool.sharing is not None
    container["env"].append({"name": "CONFIG_FILE", "value": DEVICE_PLUGIN_CONFIG_FILE})
    container["volumeMounts"].append({"name": "config", "mountPath": _CONFIG_DIR, "readOnly": True})
    pod["volumes"].append({"name": "config", "configMap": {"name": shared_plugin_name(pool.name)}})
    if pool.sharing.strategy == "mps":
        container["env"].append({"name": "MPS_ROOT", "value": MPS_ROOT})
        container["volumeMounts"] += [{"name": "mps-shm", "mountPath": "/dev/shm"},
                                      {"name": "mps-root", "mountPath": "/mps"}]
        pod["volumes"] += _mps_volumes()
    template_metadata["annotations"] = {CONFIG_HASH_ANNOTATION: _config_hash(pool)}


def mps_control_daemon(namespace_name: str, image: str, pool: Pool) -> dict[str, Any]:
    """NVIDIA's MPS control daemon for one MPS pool, shaped as the chart deploys it
    (`templates/daemonset-mps-control-daemon.yml`: the privileged `mount-shm` init container, the
    privileged `mps-control-daemon` reading the same config, host PID as `mps.enableHostPID`
    defaults). Two changes for AKS: the chart selects nodes by `nvidia.com/mps.capable: "true"`, a
    label only GPU Feature Discovery writes, and its default affinity wants NFD labels AKS nodes
    lack, so the daemon is pinned to the pool's nodes by gpu-aks's pool label and tolerates the
    pool's taints, as the plugin is; and the config is mounted directly, as for the plugin."""
    labels = {"app.kubernetes.io/name": MPS_CONTROL_DAEMON_APP, "name": f"{mps_daemon_name(pool.name)}-ds"}
    resources = dict(PLUGIN_RESOURCES)
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": mps_daemon_name(pool.name), "namespace": namespace_name, "labels": {**labels, **PART_OF}},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {**labels, **PART_OF}, "annotations": {CONFIG_HASH_ANNOTATION: _config_hash(pool)}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    # The chart's default (`mps.enableHostPID: true`): the MPS server finds its own PID
                    # through /proc, and the driver runs in the host's PID namespace.
                    "hostPID": True,
                    "affinity": pin_to_pools([pool.name]),
                    "tolerations": _gpu_tolerations([pool]),
                    "initContainers": [{
                        "name": "mps-control-daemon-mounts",
                        "image": image,
                        "command": ["mps-control-daemon", "mount-shm"],
                        "securityContext": {"privileged": True},
                        "resources": resources,
                        "volumeMounts": [{"name": "mps-root", "mountPath": "/mps",
                                          "mountPropagation": "Bidirectional"}],
                    }],
                    "containers": [{
                        "name": "mps-control-daemon-ctr",
                        "image": image,
                        "command": ["mps-control-daemon"],
                        "env": [
                            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                             "fieldPath": "spec.nodeName"}}},
                            {"name": "MIG_STRATEGY", "value": "none"},
                            {"name": "CONFIG_FILE", "value": DEVICE_PLUGIN_CONFIG_FILE},
                            {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                            {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
                        ],
                        "securityContext": {"privileged": True},
                        "resources": resources,
                        "volumeMounts": [{"name": "mps-shm", "mountPath": "/dev/shm"},
                                         {"name": "mps-root", "mountPath": "/mps"},
                                         {"name": "config", "mountPath": _CONFIG_DIR, "readOnly": True}],
                    }],
                    "volumes": [*_mps_volumes(), {"name": "config", "configMap": {"name": shared_plugin_name(pool.name)}}],
                },
            },
        },
    }


def device_plugin_manifests(namespace_name: str, image: str, mig_strategy: str,
                            pools: Sequence[Pool]) -> list[dict[str, Any]]:
    """One DaemonSet for the whole-GPU pools and one for the MIG pools that do not share, each only
    where needed; then, per shared pool, its ConfigMap, its own DaemonSet and (MPS) the MPS control
    daemon. Pools that do not share get exactly the DaemonSets they had before sharing existed."""
    unshared = [pool for pool in pools if pool.sharing is None]
    whole = [pool for pool in unshared if not pool.mig]
    mig = [pool for pool in unshared if pool.mig]
    manifests = ([device_plugin_daemonset(namespace_name, image, mig_strategy, whole)] if whole else []) + \
        ([device_plugin_daemonset(namespace_name, image, mig_strategy, mig, mig=True)] if mig else [])
    for pool in pools:
        if pool.sharing is None:
            continue
        manifests += [sharing_config_map(namespace_name, pool),
                      device_plugin_daemonset(namespace_name, image, mig_strategy, [pool],
                                              mig=pool.mig, shared=pool)]
        if pool.sharing.strategy == "mps":
            manifests.append(mps_control_daemon(namespace_name, image, pool))
    return manifests


def device_plugin_daemonsets(namespace_name: str, image: str, mig_strategy: str,
                             pools: Sequence[Pool]) -> list[dict[str, Any]]:
    """The DaemonSets of `device_plugin_manifests` (the plugins and the MPS control daemons)."""
    return [manifest for manifest in device_plugin_manifests(namespace_name, image, mig_strategy, pools)
            if manifest["kind"] == "DaemonSet"]


# --- DRA (NVIDIA's DRA driver for GPUs) --------------------------------------------------------------


def dra_driver_values(pools: Sequence[Pool]) -> dict[str, Any]:
    """The values gpu-aks gives NVIDIA's `nvidia-dra-driver-gpu` chart (25.8.1 `values.yaml`, `validation.yaml`):
    GPUs on (`gpuResourcesEnabledOverride`: the 25.8 chart refuses `resources.gpus.enabled` without it, saying
    NVIDIA does not yet support it), ComputeDomains (IMEX, for multi-node NVLink) off, and the kubelet plugin
    pinned to the DRA pools and tolerating their taints: its default affinity wants NFD's or GPU Feature
    Discovery's labels, which AKS nodes do not carry (as for the device plugin's chart)."""
    return {
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}},
        "kubeletPlugin": {"affinity": pin_to_pools([pool.name for pool in pools]),
                          "tolerations": _gpu_tolerations(pools)},
    }


def extended_resource_device_class(name: str, resource: str) -> dict[str, Any]:
    """The KEP-5004 DeviceClass: the chart's `gpu.nvidia.com` selector (25.8.1 `templates/deviceclass-gpu.yaml`)
    with `extendedResourceName`, so a pod asking for `resource` is served by these devices where no device plugin
    advertises it."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "labels": dict(PART_OF)},
            "spec": {"selectors": [{"cel": {"expression": NVIDIA_GPU_SELECTOR}}], "extendedResourceName": resource}}


#: NVIDIA's `gpu.nvidia.com` DeviceClass selector (dra-driver-nvidia-gpu v25.8.1 `templates/deviceclass-gpu.yaml`).
NVIDIA_GPU_SELECTOR = (f"device.driver == '{DRA_DRIVER_NAME}' && "
                       f"device.attributes['{DRA_DRIVER_NAME}'].type == 'gpu'")


# --- Kueue (gpu-aks:queues) ----------------------------------------------------------------------------

KUEUE_API = "kueue.x-k8s.io/v1beta2"


def kueue_objects(teams: Sequence[Any], pools: Sequence[Pool], room: Mapping[str, tuple[int, int]]) -> list[dict[str, Any]]:
    """The ResourceFlavors (one per GPU pool), ClusterQueues (one per team) and LocalQueues (one per team and
    namespace) of `gpu-aks:queues` (`components/settings/queues.py`). `room`: per pool, the CPU (millicores) and
    memory (bytes) its nodes give pods at its largest, the flavor's quota of each (None-free: 0 when unknown)."""
    objects: list[dict[str, Any]] = []
    for pool in pools:
        objects.append({"apiVersion": KUEUE_API, "kind": "ResourceFlavor",
                        "metadata": {"name": pool.name, "labels": dict(PART_OF)},
                        "spec": {"nodeLabels": {POOL_LABEL: pool.name}, "tolerations": pool_tolerations([pool])}})
    resources = {pool.name: pool.gpu_offers[0].resource for pool in pools if pool.gpu_offers}
    for team in teams:
        named = [pool for pool in pools if pool.name in team.gpus and pool.name in resources]
        covered = ["cpu", "memory", *dict.fromkeys(resources[pool.name] for pool in named)]
        flavors = []
        for pool in named:
            cpu, memory = room.get(pool.name, (0, 0))
            quotas = {"cpu": f"{cpu}m", "memory": str(memory), **{name: 0 for name in covered[2:]}}
            quotas[resources[pool.name]] = team.gpus[pool.name]
            flavors.append({"name": pool.name, "resources": [{"name": name, "nominalQuota": quotas[name]}
                                                               for name in covered]})
        objects.append({"apiVersion": KUEUE_API, "kind": "ClusterQueue",
                        "metadata": {"name": team.name, "labels": dict(PART_OF)},
                        "spec": {"namespaceSelector": {"matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(team.namespaces)}]},
                            "resourceGroups": [{"coveredResources": covered, "flavors": flavors}] if flavors else []}})
        objects += [{"apiVersion": KUEUE_API, "kind": "LocalQueue",
                     "metadata": {"name": team.name, "namespace": namespace_name, "labels": dict(PART_OF)},
                     "spec": {"clusterQueue": team.name}} for namespace_name in team.namespaces]
    return objects
