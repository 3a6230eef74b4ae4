"""`GpuMetricsExporter`: NVIDIA's DCGM exporter on every GPU pool gpu-aks serves, and the PodMonitor
through which Azure Monitor managed Prometheus scrapes it.

Configured as NVIDIA's dcgm-exporter Helm chart 4.8.2 configures it (github.com/NVIDIA/dcgm-exporter,
tag `4.5.3-4.8.2`, `deployment/values.yaml` and `deployment/templates/daemonset.yaml`): image
`nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless`, `-f /etc/dcgm-exporter/default-counters.csv`
from a ConfigMap (`metrics-configmap.yaml`), `DCGM_EXPORTER_KUBERNETES=true` with the kubelet's
`/var/lib/kubelet/pod-resources` socket mounted read-only (how the exporter learns which pod holds
which GPU and labels the metrics with it), `NODE_NAME` from the downward API, port `metrics` 9400
with `/health` probes, root with only `SYS_ADMIN` (the chart: "Required for profiling metrics
(DCGM_FI_PROF_*)") and no privilege escalation, `system-node-critical`, rolling updates one node at
a time. Departures: no ServiceAccount of its own (the chart's gets no token unless pod labels are on,
so `automountServiceAccountToken: false` is the same thing) and no Service (the PodMonitor scrapes
pods directly, so a node's series carry its own pod and node).

One DaemonSet per pool, pinned and tolerating as the device plugin is (`pin_to_pools`,
`pool_tolerations`), MIG pools included, and labelled with the pool: the PodMonitor turns that label
into a `pool` label on every GPU series, which the alerts and the dashboard group by. Pools whose
driver is external (`gpuProfile.driver: None`) are not served: their GPU Operator runs its own
exporter. Plain resources, not a Helm release, so the preview and the policy pack see them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.pools.model import Pool

from components.manifests import EXPORTER_RESOURCES, PART_OF, pin_to_pools, pool_tolerations
from components.settings import ObservabilitySettings
from observability.metrics import metrics_csv
from observability.settings import (
    DCGM_EXPORTER_CHART_VERSION,
    EXPORTER_APP_LABEL,
    EXPORTER_NAME_PREFIX,
    exporter_name,
)

METRICS_CONFIG_MAP = "dcgm-exporter-metrics"
#: The chart's `service.port` and container port name.
METRICS_PORT = 9400
METRICS_PORT_NAME = "metrics"
KUBELET_POD_RESOURCES = "/var/lib/kubelet/pod-resources"
COUNTERS_PATH = "/etc/dcgm-exporter/default-counters.csv"
#: The chart's `securityContext`.
EXPORTER_SECURITY_CONTEXT = {
    "runAsNonRoot": False, "runAsUser": 0, "allowPrivilegeEscalation": False,
    "capabilities": {"add": ["SYS_ADMIN"], "drop": ["ALL"]},
}
#: Azure's CRD group, which the managed Prometheus add-on watches; it ignores upstream's
#: `monitoring.coreos.com` (learn.microsoft.com/azure/azure-monitor/containers/prometheus-metrics-scrape-crd).
POD_MONITOR_API_VERSION = "azmonitoring.coreos.com/v1"
#: What Azure's PodMonitor template sets "so that they are not dropped during processing" (same page).
AZURE_LABEL_LIMITS = {"labelLimit": 63, "labelNameLengthLimit": 511, "labelValueLengthLimit": 1023}
SCRAPE_INTERVAL = "30s"


def metrics_config_map(namespace_name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": METRICS_CONFIG_MAP, "namespace": namespace_name, "labels": dict(PART_OF)},
            "data": {"metrics": metrics_csv()}}


def _exporter_env(pool: Pool) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [
        {"name": "DCGM_EXPORTER_KUBERNETES", "value": "true"},
        {"name": "DCGM_EXPORTER_LISTEN", "value": f":{METRICS_PORT}"},
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    ]
    if pool.sharing is not None:
        # On a shared GPU the device plugin hands out replica IDs (`<GPU UUID>::<n>`); without this the
        # exporter attributes the GPU to one of the pods sharing it. With it, every pod on the GPU gets
        # its copy of each metric, labelled `vgpu` (NVIDIA/dcgm-exporter 4.5.3-4.8.2 `pkg/cmd/app.go`
        # `KUBERNETES_VIRTUAL_GPUS`, `internal/pkg/transformation/kubernetes.go`); the values stay the
        # physical GPU's, as DCGM measures nothing finer (docs/observe.md).
        env.append({"name": "KUBERNETES_VIRTUAL_GPUS", "value": "true"})
    return env


def exporter_daemonset(namespace_name: str, image: str, pool: Pool) -> dict[str, Any]:
    """The DCGM exporter on one pool's nodes."""
    labels = {EXPORTER_APP_LABEL[0]: EXPORTER_APP_LABEL[1], POOL_LABEL: pool.name}
    probe = {"httpGet": {"path": "/health", "port": METRICS_PORT, "scheme": "HTTP"}, "initialDelaySeconds": 45}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": exporter_name(pool.name), "namespace": namespace_name,
                     "labels": {**labels, **PART_OF, "app.kubernetes.io/version": DCGM_EXPORTER_CHART_VERSION}},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "template": {
                "metadata": {"labels": {**labels, **PART_OF}},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "automountServiceAccountToken": False,
                    "affinity": pin_to_pools([pool.name]),
                    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}, *pool_tolerations([pool])],
                    "containers": [{
                        "name": "exporter",
                        "image": image,
                        "args": ["-f", COUNTERS_PATH],
                        "env": _exporter_env(pool),
                        "ports": [{"name": METRICS_PORT_NAME, "containerPort": METRICS_PORT}],
                        "securityContext": dict(EXPORTER_SECURITY_CONTEXT),
                        "resources": dict(EXPORTER_RESOURCES),
                        "livenessProbe": {**probe, "periodSeconds": 5},
                        "readinessProbe": probe,
                        "volumeMounts": [
                            {"name": "pod-gpu-resources", "mountPath": KUBELET_POD_RESOURCES, "readOnly": True},
                            {"name": "exporter-metrics", "mountPath": COUNTERS_PATH, "subPath": "default-counters.csv"},
                        ],
                    }],
                    "volumes": [
                        {"name": "pod-gpu-resources", "hostPath": {"path": KUBELET_POD_RESOURCES}},
                        {"name": "exporter-metrics", "configMap": {
                            "name": METRICS_CONFIG_MAP, "items": [{"key": "metrics", "path": "default-counters.csv"}]}},
                    ],
                },
            },
        },
    }


def exporter_pod_monitor(namespace_name: str) -> dict[str, Any]:
    """Scrapes every exporter pod. With `honorLabels: false` (the chart's default) the exporter's own
    `pod`/`namespace`/`container` labels, which name the pod holding the GPU, arrive as
    `exported_pod`/`exported_namespace`/`exported_container`; `node` and `pool` come from the scraped
    pod (`__meta_kubernetes_pod_node_name`, and its `gpu-aks.io/pool` label)."""
    pool_meta = "__meta_kubernetes_pod_label_" + "".join(c if c.isalnum() else "_" for c in POOL_LABEL)
    return {
        "apiVersion": POD_MONITOR_API_VERSION,
        "kind": "PodMonitor",
        "metadata": {"name": EXPORTER_NAME_PREFIX, "namespace": namespace_name, "labels": dict(PART_OF)},
        "spec": {
            **AZURE_LABEL_LIMITS,
            "selector": {"matchLabels": {EXPORTER_APP_LABEL[0]: EXPORTER_APP_LABEL[1]}},
            "podMetricsEndpoints": [{
                "port": METRICS_PORT_NAME,
                "interval": SCRAPE_INTERVAL,
                "honorLabels": False,
                "relabelings": [
                    {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"},
                    {"sourceLabels": [pool_meta], "targetLabel": "pool", "action": "replace"},
                ],
            }],
        },
    }


def exporter_manifests(namespace_name: str, image: str, pools: Sequence[Pool]) -> list[dict[str, Any]]:
    """Everything the exporter needs in the GPU namespace; nothing when no pool is served."""
    if not pools:
        return []
    return [metrics_config_map(namespace_name), *(exporter_daemonset(namespace_name, image, p) for p in pools),
            exporter_pod_monitor(namespace_name)]


@dataclass(frozen=True)
class GpuMetricsExporterArgs:
    settings: ObservabilitySettings
    namespace: str
    #: The pools gpu-aks's device plugin serves (the driver is AKS's).
    pools: Sequence[Pool]
    provider: k8s.Provider
    #: The GPU namespace and anything else in-cluster objects wait for.
    after: Sequence[pulumi.Resource] = ()


class GpuMetricsExporter(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuMetricsExporterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuMetricsExporter", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        self.resources: list[pulumi.CustomResource] = []
        config_map: list[pulumi.Resource] = []
        for manifest in exporter_manifests(args.namespace, args.settings.exporter_image, args.pools):
            kind, metadata = manifest["kind"], manifest["metadata"]
            if kind == "ConfigMap":
                resource: pulumi.CustomResource = k8s.core.v1.ConfigMap(
                    f"{name}-metrics", metadata=metadata, data=manifest["data"], opts=in_cluster)
                config_map = [resource]
            elif kind == "DaemonSet":
                # Named after this component (`dcgm-exporter-<pool>` in the program), so two GpuClusters in
                # one program do not register the same URN.
                resource = k8s.apps.v1.DaemonSet(
                    name + metadata["name"].removeprefix(EXPORTER_NAME_PREFIX), metadata=metadata,
                    spec=manifest["spec"], opts=(
                    pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=config_map))))
            else:
                # The CRD comes with the metrics add-on (azureMonitorProfile.metrics), not from Pulumi.
                resource = k8s.apiextensions.CustomResource(
                    f"{name}-pod-monitor", api_version=manifest["apiVersion"], kind=kind, metadata=metadata,
                    spec=manifest["spec"], opts=in_cluster)
            self.resources.append(resource)
        self.register_outputs({"daemonSets": [exporter_name(p.name) for p in args.pools]})
