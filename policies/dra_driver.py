"""NVIDIA's DRA driver for GPUs as the pool rules and the fit read it: the chart that installs it, where its
kubelet plugin runs, and the DeviceClasses it makes. Pure; no Pulumi imports.

kubernetes-sigs/dra-driver-nvidia-gpu (formerly NVIDIA/k8s-dra-driver-gpu), released as NVIDIA's Helm chart
`nvidia-dra-driver-gpu` (tag v25.8.1, `deployments/helm/nvidia-dra-driver-gpu/`); its development chart is named
`dra-driver-nvidia-gpu`. The kubelet plugin (the DaemonSet of `templates/kubeletplugin.yaml`) runs where
`kubeletPlugin.nodeSelector`, `kubeletPlugin.affinity` and `kubeletPlugin.tolerations` let it, and publishes
each GPU of its node in a ResourceSlice of driver `gpu.nvidia.com` (`cmd/gpu-kubelet-plugin/deviceinfo.go`,
`driver.go`): a node it does not run on offers no device to a claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .podspecs import PodSpec, as_mapping, pod_spec

#: The chart's names: NVIDIA's release and the development chart.
DRA_DRIVER_CHARTS = ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu")
#: The driver's name, its ResourceSlices' `spec.driver` (`cmd/gpu-kubelet-plugin/main.go` `DriverName`).
DRA_DRIVER_NAME = "gpu.nvidia.com"
#: The DeviceClasses the chart makes with `resources.gpus.enabled` (`templates/deviceclass-{gpu,mig}.yaml`).
GPU_DEVICE_CLASS = "gpu.nvidia.com"
MIG_DEVICE_CLASS = "mig.nvidia.com"
#: How pulumi-kubernetes names a Helm release resource (the pack sees its inputs, never what it installs).
RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release",)
#: The kubelet plugin's default node affinity (`values.yaml` `kubeletPlugin.affinity`): NFD's and GPU Feature
#: Discovery's labels, which plain AKS GPU nodes do not carry.
CHART_DEFAULT_AFFINITY: Mapping[str, Any] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/pci-10de.present", "operator": "In",
                               "values": ["true"]}]},
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/cpu-model.vendor_id", "operator": "In",
                               "values": ["NVIDIA"]}]},
        {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]}}}


def is_dra_driver_release(resource_type: str, props: Mapping[str, Any]) -> bool:
    return resource_type in RELEASE_TYPES and props.get("chart") in DRA_DRIVER_CHARTS


def kubelet_plugin_pod(props: Mapping[str, Any]) -> PodSpec:
    """Where the release's kubelet plugin runs, as a pod spec with the scheduling fields the chart renders from
    its values (`kubeletPlugin.nodeSelector`, `.affinity`, `.tolerations`; the chart's default affinity when the
    values give none)."""
    plugin = as_mapping(as_mapping(props.get("values")).get("kubeletPlugin"))
    spec: dict[str, Any] = {"affinity": plugin.get("affinity", CHART_DEFAULT_AFFINITY), "containers": []}
    for key in ("nodeSelector", "tolerations"):
        if plugin.get(key) is not None:
            spec[key] = plugin[key]
    return pod_spec(spec, "values.kubeletPlugin")
