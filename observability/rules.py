"""The GPU alert rules, defined once: the same definitions become Azure `PrometheusRuleGroup` rules
(`components/observability.py`) and a Prometheus rule file (`python -m tools.observability`) that
`promtool check rules` and `promtool test rules` run offline. Pure.

Every expression names only metrics in `observability.metrics.KNOWN_METRICS`: the DCGM exporter's
CSV and the kube-state-metrics series the managed Prometheus add-on keeps by default. GPU series carry
`pool` and `node` from the PodMonitor, and `exported_pod`/`exported_namespace` when a pod holds the
GPU (`components/dcgm_exporter.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gpu_aks_policies.pools.model import Pool

from observability.conditions import GPU_CONDITIONS
from observability.metrics import KNOWN_METRICS, KSM_GPU_RESOURCE_RE
from observability.settings import AlertSettings, mig_profile

GROUP_NAME = "gpu-aks-gpu-alerts"
#: How often Azure evaluates the group (ISO 8601, as `PrometheusRuleGroup.interval` takes it).
EVALUATION_INTERVAL = "PT1M"
#: Azure alert severities: 0 Critical, 1 Error, 2 Warning, 3 Informational, 4 Verbose
#: (Microsoft.AlertsManagement 2023-03-01 `PrometheusRule.severity`).
AZURE_SEVERITY = {"critical": 1, "warning": 2, "info": 3}


@dataclass(frozen=True)
class AlertRule:
    name: str
    expr: str
    for_minutes: int
    severity: str  # critical | warning | info
    summary: str
    #: What to do when it fires (the runbook line of docs/observe.md).
    runbook: str
    labels: dict[str, str] = field(default_factory=dict)

    def metrics(self) -> set[str]:
        return metric_names(self.expr)


#: PromQL words that are not metric names.
_PROMQL_WORDS = frozenset({
    "sum", "min", "max", "avg", "count", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or",
    "unless", "increase", "rate", "changes", "max_over_time", "avg_over_time", "min_over_time", "offset", "bool",
    "label_replace", "clamp_min", "absent", "vector", "time", "topk", "bottomk", "group",
})


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (identifiers outside braces, strings and label lists)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^{}]*\}", "{}", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", r"\1", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    names = set(re.findall(r"[A-Za-z_:][A-Za-z0-9_:]*", text))
    return {n for n in names if n not in _PROMQL_WORDS and not re.fullmatch(r"[0-9.e]+", n)}


def _regex(names: Sequence[str]) -> str:
    # Condition and DaemonSet names are letters, digits and '-': nothing to escape in a PromQL regex.
    assert all(re.fullmatch(r"[A-Za-z0-9-]+", n) for n in names), names
    return "|".join(names)


def alert_rules(alerts: AlertSettings, pools: Sequence[Pool], gpu_namespace: str,
                agent_daemonsets: Sequence[str]) -> list[AlertRule]:
    """The alerts for a platform: `pools` are the pools the exporter serves, `agent_daemonsets` the
    device-plugin and exporter DaemonSets that must be ready on every GPU node."""
    gpu = 'exported_pod!=""'
    rules = [
        AlertRule(
            "GpuXidError",
            "max by (pool, node, gpu, UUID) (DCGM_FI_DEV_XID_ERRORS) > 0",
            0, "critical",
            "GPU {{ $labels.gpu }} on {{ $labels.node }} (pool {{ $labels.pool }}) reported XID {{ $value }}",
            "look the XID up in NVIDIA's XID catalog (docs.nvidia.com/deploy/xid-errors); for 48, 63, 64, 74, 79, 94, "
            "95 or any that recurs cordon and drain the node, then delete it so the pool replaces it "
            "(az aks nodepool delete-machines)"),
        AlertRule(
            "GpuUncorrectableEccErrors",
            "sum by (pool, node, gpu, UUID) (increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[10m])) > 0 "
            "or max by (pool, node, gpu, UUID) (DCGM_FI_DEV_ROW_REMAP_FAILURE) > 0",
            0, "critical",
            "GPU {{ $labels.gpu }} on {{ $labels.node }} (pool {{ $labels.pool }}) has uncorrectable ECC errors",
            "the GPU's memory is failing: cordon and drain the node, delete it so the pool replaces it, and open an "
            "Azure support request if the same host comes back"),
        AlertRule(
            "GpuTemperatureHigh",
            f"max by (pool, node, gpu, UUID) (DCGM_FI_DEV_GPU_TEMP) > {alerts.gpu_temperature_celsius}",
            5, "warning",
            f"GPU {{{{ $labels.gpu }}}} on {{{{ $labels.node }}}} is above {alerts.gpu_temperature_celsius} degrees C",
            "hot GPUs throttle their clocks: check the node's GPUClockThrottling condition; if one host stays hot, "
            "drain it and delete it so the pool replaces it, and open an Azure support request"),
        AlertRule(
            "GpuNodeCondition",
            f'max by (node, condition) (kube_node_status_condition{{condition=~"{_regex(list(GPU_CONDITIONS))}",'
            f'status="true"}}) == 1',
            0, "critical",
            "node problem detector reports {{ $labels.condition }} on {{ $labels.node }}",
            "python -m tools.doctor names the node and the fix for each condition (tools/doctor.py GPU_CONDITIONS)"),
    ]
    if agent_daemonsets:
        selector = f'namespace="{gpu_namespace}",daemonset=~"{_regex(agent_daemonsets)}"'
        rules.append(AlertRule(
            "GpuNodeAgentDown",
            f"max by (namespace, daemonset) (kube_daemonset_status_desired_number_scheduled{{{selector}}}) - "
            f"max by (namespace, daemonset) (kube_daemonset_status_number_ready{{{selector}}}) > 0",
            alerts.agent_down_minutes, "critical",
            "{{ $value }} GPU node(s) lack a ready {{ $labels.daemonset }} pod",
            f"without the device plugin a node offers no GPUs; without the exporter it is unwatched: kubectl -n "
            f"{gpu_namespace} get pods -o wide, then python -m tools.doctor"))
    rules.append(AlertRule(
        "GpuPodPending",
        f'max by (namespace, pod) (kube_pod_container_resource_requests{{resource=~"{KSM_GPU_RESOURCE_RE}"}}) > 0 '
        f'and on (namespace, pod) max by (namespace, pod) (kube_pod_status_phase{{phase="Pending"}}) == 1',
        alerts.pending_gpu_pod_minutes, "warning",
        f"GPU pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} has been Pending for "
        f"{alerts.pending_gpu_pod_minutes} minutes",
        "kubectl describe pod shows why: no toleration of the pool's taint or no node selector "
        "(python -m gpu_aks_policies.explain), the pool at maxCount, or no GPU capacity in the region (the autoscaler's "
        "events)"))
    # One rule covers every pool, so each alert is one rule of the group: whole GPUs by utilisation,
    # MIG pools by graphics-engine activity, since DCGM reports no GPU_UTIL for MIG instances.
    limit = alerts.idle_gpu_utilization_percent
    whole = [pool.name for pool in pools if not mig_profile(pool)]
    mig = [pool.name for pool in pools if mig_profile(pool)]
    terms = ([f'(DCGM_FI_DEV_GPU_UTIL{{pool=~"{_regex(whole)}",{gpu}}} < {limit})'] if whole else []) + \
        ([f'(DCGM_FI_PROF_GR_ENGINE_ACTIVE{{pool=~"{_regex(mig)}",{gpu}}} * 100 < {limit})'] if mig else [])
    if terms:
        rules.append(AlertRule(
            "GpuAllocatedButIdle", " or ".join(terms), alerts.idle_gpu_minutes, "info",
            f"pod {{{{ $labels.exported_namespace }}}}/{{{{ $labels.exported_pod }}}} holds GPU {{{{ $labels.gpu }}}} "
            f"on {{{{ $labels.node }}}} (pool {{{{ $labels.pool }}}}) at under {limit}% for {alerts.idle_gpu_minutes} "
            "minutes",
            "a GPU held by an idle pod is billed for nothing: ask the pod's owner to scale it down or release it "
            "(notebooks and stuck jobs are the usual cause)"))
    unknown = {m for rule in rules for m in rule.metrics()} - KNOWN_METRICS
    assert not unknown, f"alert rules name metrics nobody exports: {sorted(unknown)}"
    return rules


def _labels(rule: AlertRule) -> dict[str, str]:
    return {"severity": rule.severity, "source": "gpu-aks", **rule.labels}


def prometheus_rule_file(rules: Sequence[AlertRule]) -> dict[str, Any]:
    """The rules as a Prometheus rule file (what `promtool check rules` reads)."""
    return {"groups": [{"name": GROUP_NAME, "interval": "1m", "rules": [
        {"alert": rule.name, "expr": rule.expr, **({"for": f"{rule.for_minutes}m"} if rule.for_minutes else {}),
         "labels": _labels(rule), "annotations": {"summary": rule.summary, "runbook": rule.runbook}}
        for rule in rules]}]}


def azure_rules(rules: Sequence[AlertRule], action_group_ids: Sequence[Any]) -> list[dict[str, Any]]:
    """The rules as `PrometheusRuleGroup.rules` (Microsoft.AlertsManagement 2023-03-01 `PrometheusRule`:
    `alert`, `expression`, `for` as an ISO 8601 duration, `severity` 0-4, `labels`, `annotations`,
    `actions[].actionGroupId`, `resolveConfiguration`), in the SDK's Python names."""
    return [{
        "alert": rule.name,
        "expression": rule.expr,
        "for_": f"PT{rule.for_minutes}M",
        "severity": AZURE_SEVERITY[rule.severity],
        "labels": _labels(rule),
        "annotations": {"summary": rule.summary, "runbook": rule.runbook},
        "enabled": True,
        "actions": [{"action_group_id": group} for group in action_group_ids],
        "resolve_configuration": {"auto_resolved": True, "time_to_resolve": "PT10M"},
    } for rule in rules]
