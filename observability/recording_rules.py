"""Microsoft's recording rules for managed Prometheus: the node, Kubernetes and UX rule groups its
onboarding templates always create beside the data collection endpoint, rule and association. Azure
Managed Grafana's Kubernetes dashboards and the portal's views read the series they record. Pure.

The rules are data, copied verbatim from Azure/prometheus-collector
`AddonArmTemplate/FullAzureMonitorMetricsProfile.json` (the commit is in `microsoft_recording_rules.json`,
beside this file; the Bicep and Terraform templates create the same groups). tests/test_recording_rules.py
holds them to a copy of that template and runs them through `promtool check rules`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "microsoft_recording_rules.json"


@dataclass(frozen=True)
class RecordingRule:
    record: str
    expression: str


@dataclass(frozen=True)
class RecordingRuleGroup:
    #: gpu-aks's short name for the group (`node`, `kubernetes`, `ux`), in resource names.
    id: str
    #: The template's group name, with the cluster's name in it.
    name: str
    description: str
    #: ISO 8601, as the PrometheusRuleGroup API takes it (`PT1M`).
    interval: str
    rules: tuple[RecordingRule, ...]


def recording_rule_groups(cluster_name: str) -> tuple[RecordingRuleGroup, ...]:
    """The template's Linux recording rule groups for one cluster."""
    data = json.loads(DATA.read_text())
    return tuple(RecordingRuleGroup(
        id=group["id"], name=group["name"].format(cluster=cluster_name), description=group["description"],
        interval=group["interval"],
        rules=tuple(RecordingRule(rule["record"], rule["expression"]) for rule in group["rules"]))
        for group in data["groups"])


def azure_recording_rules(group: RecordingRuleGroup) -> list[dict[str, Any]]:
    """The group's rules as `PrometheusRuleGroup.rules` takes them (SDK names)."""
    return [{"record": rule.record, "expression": rule.expression} for rule in group.rules]


def prometheus_recording_rule_file(groups: tuple[RecordingRuleGroup, ...]) -> dict[str, Any]:
    """The groups in Prometheus's rule-file format (for `promtool check rules` or another Prometheus).
    `PT1M` becomes `1m`: the templates use no other interval."""
    intervals = {"PT1M": "1m"}
    return {"groups": [{"name": group.name, "interval": intervals[group.interval],
                        "rules": [{"record": rule.record, "expr": rule.expression} for rule in group.rules]}
                       for group in groups]}
