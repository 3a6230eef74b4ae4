"""Kubernetes objects the platform creates, as plain dicts from small, named builders. Pure.

Hardened by default, after NVIDIA's own manifest: no privilege escalation, every capability dropped,
`system-node-critical`, resource requests set. The Pulumi components pass these dicts straight to
pulumi-kubernetes, and the tests validate the same dicts against the Kubernetes schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from components.catalog import AGENTPOOL_LABEL
from components.settings import GpuNodePoolSettings
from policies.scheduling import parse_taint, toleration_for

PART_OF = {"app.kubernetes.io/part-of": "gpu-aks", "app.kubernetes.io/managed-by": "pulumi"}
DEVICE_PLUGIN_NAME = "nvidia-device-plugin-daemonset"
DEVICE_PLUGIN_LABELS = {"app.kubernetes.io/name": "nvidia-device-plugin", "name": "nvidia-device-plugin-ds"}
KUBELET_DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"

RESTRICTED_SECURITY_CONTEXT = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(PART_OF)}}


def pool_tolerations(pools: Iterable[GpuNodePoolSettings]) -> list[dict[str, str]]:
    """One toleration per distinct taint of the pools, so a new pool taint can never strand a pod."""
    tolerations: list[dict[str, str]] = []
    for pool in pools:
        for text in pool.taints:
            toleration = toleration_for(parse_taint(text))
            if toleration not in tolerations:
                tolerations.append(toleration)
    return tolerations


def pin_to_pools(pool_names: Sequence[str]) -> dict[str, Any]:
    """Required node affinity on the AKS agentpool label: the pods run on these pools' nodes only."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": AGENTPOOL_LABEL, "operator": "In", "values": list(pool_names)}]},
    ]}}}


def device_plugin_daemonset(
    namespace_name: str, image: str, mig_strategy: str, pools: Sequence[GpuNodePoolSettings],
) -> dict[str, Any]:
    """NVIDIA's device-plugin DaemonSet, restricted to the GPU pools it serves and tolerating their taints."""
    env = [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}]
    if mig_strategy != "none":
        env.append({"name": "MIG_STRATEGY", "value": mig_strategy})
    tolerations = [
        # Lets the pod run while a node is in "critical add-ons only" mode (seed 001's manifest).
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        *pool_tolerations(pools),
    ]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DEVICE_PLUGIN_NAME, "namespace": namespace_name,
                     "labels": {**DEVICE_PLUGIN_LABELS, **PART_OF}},
        "spec": {
            "selector": {"matchLabels": dict(DEVICE_PLUGIN_LABELS)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {**DEVICE_PLUGIN_LABELS, **PART_OF}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "affinity": pin_to_pools([pool.name for pool in pools]),
                    "tolerations": tolerations,
                    "containers": [{
                        "name": "nvidia-device-plugin-ctr",
                        "image": image,
                        "env": env,
                        "securityContext": dict(RESTRICTED_SECURITY_CONTEXT),
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                        "volumeMounts": [{"name": "device-plugin", "mountPath": KUBELET_DEVICE_PLUGINS}],
                    }],
                    "volumes": [{"name": "device-plugin",
                                 "hostPath": {"path": KUBELET_DEVICE_PLUGINS, "type": "Directory"}}],
                },
            },
        },
    }
