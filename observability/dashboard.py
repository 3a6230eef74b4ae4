"""gpu-aks's Grafana dashboard, generated from the same settings as the pools: one row per GPU pool
the exporter serves (MIG pools chart DCGM's engine activity, since DCGM reports no GPU_UTIL for MIG
instances), a node picker, and a cluster row for Pending GPU pods. Pure; the panels use only the
metrics in `observability.metrics.KNOWN_METRICS` (tests/test_observability.py checks every query).

Written to `build/observability/<stack>/gpu-dashboard.json` by `python -m tools.observability` for any Grafana with the workspace
(or any Prometheus) as a data source, and provisioned into Azure Managed Grafana when
`observability.grafana` is on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from gpu_aks_policies.pools.model import Pool

from observability.metrics import KSM_GPU_RESOURCE_RE
from observability.settings import AlertSettings, mig_profile, pool_description, shares_per_gpu

DASHBOARD_UID = "gpu-aks-gpus"
DASHBOARD_TITLE = "gpu-aks: GPUs by pool and node"
#: Grafana's dashboard JSON schema version this layout was written for (Grafana 10/11).
SCHEMA_VERSION = 39
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def _panel(panel_id: int, title: str, unit: str, targets: Sequence[tuple[str, str]], x: int, y: int,
           kind: str = "timeseries", width: int = 8) -> dict[str, Any]:
    return {
        "id": panel_id, "type": kind, "title": title, "datasource": DATASOURCE,
        "gridPos": {"h": 8, "w": width, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": chr(ord("A") + index), "expr": expr, "legendFormat": legend, "datasource": DATASOURCE}
                    for index, (expr, legend) in enumerate(targets)],
    }


def _pool_panels(pool: Pool, first_id: int, y: int, idle_percent: int) -> list[dict[str, Any]]:
    sel = f'pool="{pool.name}",node=~"$node"'
    on_nodes = f'and on (node) group by (node) (DCGM_FI_DEV_GPU_TEMP{{{sel}}})'
    gpus = f'resource=~"{KSM_GPU_RESOURCE_RE}"'
    profile = mig_profile(pool)
    if profile:
        usage = f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{sel}}} * 100"
        usage_title = f"Engine activity per MIG instance ({profile})"
    else:
        usage = f"DCGM_FI_DEV_GPU_UTIL{{{sel}}}"
        usage_title = "Utilisation per GPU"
    replicas = shares_per_gpu(pool)
    shared = replicas > 1

    def per_node(metric: str) -> str:
        # A shared pool's exporter repeats each GPU's series once per pod sharing it (`vgpu`): count each
        # GPU (or MIG instance) once.
        series = f"{metric}{{{sel}}}"
        return f"sum by (node) ({f'max by (node, gpu, GPU_I_ID) ({series})' if shared else series})"

    specs: list[tuple[str, str, list[tuple[str, str]]]] = [
        (usage_title, "percent", [(f"avg by (node, gpu) ({usage})", "{{node}} GPU {{gpu}}")]),
        ("Framebuffer memory used", "decmbytes", [(per_node("DCGM_FI_DEV_FB_USED"), "{{node}}")]),
        ("Power draw", "watt", [(per_node("DCGM_FI_DEV_POWER_USAGE"), "{{node}}")]),
        ("GPU temperature", "celsius", [(f"max by (node, gpu) (DCGM_FI_DEV_GPU_TEMP{{{sel}}})", "{{node}} GPU {{gpu}}")]),
        ("Last XID error", "none", [(f"max by (node, gpu) (DCGM_FI_DEV_XID_ERRORS{{{sel}}})", "{{node}} GPU {{gpu}}")]),
        ("ECC errors (1h)", "short", [
            (f"sum by (node) (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{{sel}}}[1h]))", "{{node}} uncorrectable"),
            (f"sum by (node) (increase(DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{{{sel}}}[1h]))", "{{node}} corrected"),
        ]),
        ("Slices: allocatable, allocated, busy" if shared else "GPUs: allocatable, allocated, busy", "short", [
            (f"sum by (node) (kube_node_status_allocatable{{{gpus}}}) {on_nodes}", "{{node}} allocatable"),
            (f'sum by (node) (kube_pod_container_resource_requests{{{gpus}}} and on (namespace, pod) '
             f'(kube_pod_status_phase{{phase="Running"}} == 1)) {on_nodes}', "{{node}} allocated"),
            (f'count by (node) (({usage}) >= {idle_percent} and {{exported_pod!=""}})', "{{node}} busy"),
        ]),
    ]
    if shared:
        # The exporter labels each pod's copy of a shared GPU's series with its replica (`vgpu`).
        specs.append((f"Slices in use per GPU (of {replicas})", "short", [
            (f'count by (node, gpu) (DCGM_FI_DEV_GPU_TEMP{{{sel},vgpu!=""}})', "{{node}} GPU {{gpu}}"),
            (f"vector({replicas})", "slices per GPU"),
        ]))
    return [_panel(first_id + index, title, unit, targets, x=(index % 3) * 8, y=y + 1 + (index // 3) * 8)
            for index, (title, unit, targets) in enumerate(specs)]


def grafana_dashboard(pools: Sequence[Pool], alerts: AlertSettings | None = None) -> dict[str, Any]:
    """The dashboard for the pools the exporter serves (empty rows for none)."""
    idle = (alerts or AlertSettings()).idle_gpu_utilization_percent
    panels: list[dict[str, Any]] = []
    y = 0
    pending = (f'max by (namespace, pod) (kube_pod_container_resource_requests{{resource=~"{KSM_GPU_RESOURCE_RE}"}}) > 0 '
               f'and on (namespace, pod) max by (namespace, pod) (kube_pod_status_phase{{phase="Pending"}}) == 1')
    panels.append({"id": 1, "type": "row", "title": "Cluster", "collapsed": False, "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                   "panels": []})
    panels.append(_panel(2, "Pending GPU pods", "short", [(f"count({pending}) or vector(0)", "pending")], 0, y + 1,
                         kind="stat", width=8))
    panels.append(_panel(3, "Pending GPU pods by namespace", "short", [(f"count by (namespace) ({pending})", "{{namespace}}")],
                         8, y + 1, width=16))
    y += 9
    next_id = 10
    for pool in pools:
        panels.append({"id": next_id, "type": "row", "title": f"Pool {pool.name} ({pool_description(pool)})", "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        pool_panels = _pool_panels(pool, next_id + 1, y, idle)
        panels += pool_panels
        next_id += 20
        y += 1 + 8 * 3
    return {
        "uid": DASHBOARD_UID, "title": DASHBOARD_TITLE, "tags": ["gpu-aks", "gpu", "dcgm"], "timezone": "utc",
        "schemaVersion": SCHEMA_VERSION, "version": 1, "editable": True, "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus"},
            {"name": "node", "label": "Node", "type": "query", "datasource": DATASOURCE, "includeAll": True,
             "multi": True, "allValue": ".*", "refresh": 2,
             "query": {"query": "label_values(DCGM_FI_DEV_GPU_TEMP, node)", "refId": "node"},
             "definition": "label_values(DCGM_FI_DEV_GPU_TEMP, node)"},
        ]},
        "panels": panels,
    }


def dashboard_json(pools: Sequence[Pool], alerts: AlertSettings | None = None) -> str:
    return json.dumps(grafana_dashboard(pools, alerts), indent=2, sort_keys=True) + "\n"
