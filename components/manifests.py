"""Kubernetes objects the platform creates, as plain dicts from small, named builders. Pure.

Hardened by default, after NVIDIA's own manifests: no privilege escalation, every capability dropped,
`system-node-critical`, resource requests set. The exception is NVIDIA's own: its device-plugin
chart gives the plugin `SYS_ADMIN` and `NVIDIA_MIG_MONITOR_DEVICES=all` whenever the MIG strategy is
not `none` (NVIDIA/k8s-device-plugin `deployments/helm/nvidia-device-plugin/templates/_helpers.tpl`,
`requiresCapSysAdmin`; `daemonset-device-plugin.yml`), so MIG pools get a DaemonSet of their own and
the others keep the restricted one. The Pulumi components pass these dicts straight to
pulumi-kubernetes, and the tests validate the same dicts against the Kubernetes schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.scheduling import parse_taint, toleration_for

from components.pools import PoolFacts

PART_OF = {"app.kubernetes.io/part-of": "gpu-aks", "app.kubernetes.io/managed-by": "pulumi"}
#: Every device-plugin pod gpu-aks runs carries this label (the doctor finds them by it).
DEVICE_PLUGIN_APP_LABEL = ("app.kubernetes.io/name", "nvidia-device-plugin")
DEVICE_PLUGIN_NAME = "nvidia-device-plugin-daemonset"
MIG_DEVICE_PLUGIN_NAME = "nvidia-device-plugin-mig-daemonset"
KUBELET_DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"

RESTRICTED_SECURITY_CONTEXT = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
#: What NVIDIA's chart sets when a MIG strategy is in use (`requiresCapSysAdmin`).
MIG_SECURITY_CONTEXT = {"capabilities": {"add": ["SYS_ADMIN"]}}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(PART_OF)}}


def pool_tolerations(pools: Iterable[PoolFacts]) -> list[dict[str, str]]:
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


def device_plugin_daemonset(
    namespace_name: str, image: str, mig_strategy: str, pools: Sequence[PoolFacts], mig: bool = False,
) -> dict[str, Any]:
    """NVIDIA's device-plugin DaemonSet, restricted to the GPU pools it serves and tolerating their
    taints; with `mig`, configured as NVIDIA's chart configures it for a MIG strategy."""
    name = MIG_DEVICE_PLUGIN_NAME if mig else DEVICE_PLUGIN_NAME
    # The whole-GPU DaemonSet keeps gpu-aks 0.1's selector labels: a selector cannot change in place.
    labels = {DEVICE_PLUGIN_APP_LABEL[0]: DEVICE_PLUGIN_APP_LABEL[1],
              "name": "nvidia-device-plugin-mig-ds" if mig else "nvidia-device-plugin-ds"}
    # No FAIL_ON_INIT_ERROR=false: NVIDIA dropped it from its static manifests because with it
    # "failures in loading GPU information is silently ignored" and the plugin still looks Ready
    # (NVIDIA/k8s-device-plugin `deployments/static/`); failing keeps a broken GPU node visible.
    env = [{"name": "MIG_STRATEGY", "value": mig_strategy if mig else "none"}]
    if mig:
        env.append({"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"})
    tolerations = [
        # Lets the pod run while a node is in "critical add-ons only" mode (the AKS doc's manifest).
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        *pool_tolerations(pools),
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace_name, "labels": {**labels, **PART_OF}},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {**labels, **PART_OF}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": pin_to_pools([pool.name for pool in pools]),
                    "tolerations": tolerations,
                    "containers": [{
                        "name": "nvidia-device-plugin-ctr",
                        "image": image,
                        "env": env,
                        "securityContext": dict(MIG_SECURITY_CONTEXT if mig else RESTRICTED_SECURITY_CONTEXT),
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                        "volumeMounts": [{"name": "device-plugin", "mountPath": KUBELET_DEVICE_PLUGINS}],
                    }],
                    "volumes": [{"name": "device-plugin",
                                 "hostPath": {"path": KUBELET_DEVICE_PLUGINS, "type": "Directory"}}],
                },
            },
        },
    }


def device_plugin_daemonsets(namespace_name: str, image: str, mig_strategy: str,
                             pools: Sequence[PoolFacts]) -> list[dict[str, Any]]:
    """One DaemonSet for the whole-GPU pools and one for the MIG pools, each only where needed."""
    whole = [pool for pool in pools if not pool.mig]
    mig = [pool for pool in pools if pool.mig]
    return ([device_plugin_daemonset(namespace_name, image, mig_strategy, whole)] if whole else []) + \
        ([device_plugin_daemonset(namespace_name, image, mig_strategy, mig, mig=True)] if mig else [])
