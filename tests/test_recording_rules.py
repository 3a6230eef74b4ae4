"""Microsoft's recording rules (issue #28, item 3): the node, Kubernetes and UX rule groups of
Microsoft's managed-Prometheus onboarding templates, created beside gpu-aks's GPU alert group with the
template's names and series, held to a copy of the template (tests/fixtures/prometheus-collector/,
Azure/prometheus-collector at the commit it names) and checked by `promtool check rules`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from observability.recording_rules import (
    DATA,
    prometheus_recording_rule_file,
    recording_rule_groups,
)
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "prometheus-collector"
ARM = json.loads((FIXTURES / "arm-template-excerpt.json").read_text())
TERRAFORM_RULES = (FIXTURES / "terraform-recording-rules.txt").read_text()
PROMTOOL = shutil.which("promtool")
GROUP = "azure-native:alertsmanagement:PrometheusRuleGroup"


def _arm_text(expression: str) -> str:
    """An ARM string expression of the template's two forms: `[variables('a')]`, `[concat(variables('a'), ...)]`."""
    names = re.findall(r"variables\('(\w+)'\)", expression)
    assert expression.startswith("[") and names, expression
    return "".join(ARM["variables"][name] for name in names)


def _arm_groups() -> dict[str, dict]:
    """The template's Linux recording rule groups, by the name they get for cluster `C`."""
    variables = ARM["variables"]
    names = {"[variables('nodeRecordingRuleGroupName')]": variables["nodeRecordingRuleGroup"] + "C",
             "[variables('kubernetesRecordingRuleGroupName')]": variables["kubernetesRecordingRuleGroup"] + "C",
             "[variables('uxRecordingRulesRuleGroup')]": "UXRecordingRulesRuleGroup - C"}
    assert variables["uxRecordingRulesRuleGroup"] == "[concat('UXRecordingRulesRuleGroup - ', variables('clusterName'))]"
    return {names[r["name"]]: r for r in ARM["resources"] if r["type"] == "Microsoft.AlertsManagement/prometheusRuleGroups"}


def test_the_data_names_the_template_commit_it_copies():
    source = json.loads(DATA.read_text())["source"]
    assert source == {**source, "repository": ARM["source"]["repository"], "path": ARM["source"]["path"],
                      "commit": ARM["source"]["commit"]}


def test_the_groups_are_the_templates_name_for_name_and_rule_for_rule():
    template = _arm_groups()
    ours = {group.name: group for group in recording_rule_groups("C")}
    assert list(ours) == ["NodeRecordingRulesRuleGroup-C", "KubernetesRecordingRulesRuleGroup-C",
                          "UXRecordingRulesRuleGroup - C"]
    assert set(ours) == set(template)
    for name, group in ours.items():
        properties = template[name]["properties"]
        assert [(rule.record, rule.expression) for rule in group.rules] == [
            (rule["record"], rule["expression"]) for rule in properties["rules"]], name
        assert group.interval == properties["interval"] == "PT1M"
        assert group.description == _arm_text(properties["description"])


def _terraform_groups() -> dict[str, list[str]]:
    """Group name -> records, from the grep of the Terraform template."""
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in TERRAFORM_RULES.splitlines()[1:]:
        text = line.split(":", 1)[1]
        if text.startswith('resource "azurerm_monitor_alert_prometheus_rule_group"'):
            current = None
        elif (name := re.fullmatch(r'  name\s+= "(.*)"', text)) and current is None and "RuleGroup" in name.group(1):
            current = groups.setdefault(name.group(1), [])
        elif (record := re.fullmatch(r'    record\s+= "(.*)"', text)) and current is not None:
            current.append(record.group(1))
    return groups


def test_the_terraform_template_creates_the_same_groups_and_series():
    terraform = _terraform_groups()
    for group in recording_rule_groups("${var.cluster_name}"):
        assert terraform[group.name] == [rule.record for rule in group.rules], group.name


def test_the_program_creates_microsofts_groups_beside_the_gpu_alerts(prod_run):
    groups = {r.inputs["ruleGroupName"]: r.inputs for r in prod_run.by_type(GROUP)}
    cluster = prod_run.one("azure-native:containerservice:ManagedCluster").inputs["resourceName"]
    expected = {group.name: group for group in recording_rule_groups(cluster)}
    assert set(expected) < set(groups) and len(groups) == len(expected) + 1  # + the GPU alert group
    for name, group in expected.items():
        created = groups[name]
        assert created["rules"] == [{"record": r.record, "expression": r.expression} for r in group.rules]
        assert created["clusterName"] == cluster and created["interval"] == "PT1M"
        assert created["scopes"] == ["observability-workspace-id", "aks-cluster-id"]
        assert created["description"] == group.description


def test_observability_off_creates_no_recording_rules(dev_run):
    assert dev_run.by_type(GROUP) == []


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian: apt-get install prometheus)")
def test_promtool_checks_microsofts_recording_rules_and_finds_every_series(tmp_path):
    groups = recording_rule_groups("gpu-aks-prod")
    (tmp_path / "recording.rules.yaml").write_text(yaml.safe_dump(prometheus_recording_rule_file(groups),
                                                                  sort_keys=False, width=200))
    assert PROMTOOL
    check = [PROMTOOL, "check", "rules", "recording.rules.yaml"]
    result = subprocess.run(check, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    # promtool's lint finds one thing, in Microsoft's rules as the template has them: the four
    # `namespace_workload_pod:kube_pod_owner:relabel` rules (one per owner kind) record one name with
    # the same labels (kubernetes-mixin tells them apart with a `workload_type` label; the template does not).
    assert re.findall(r"^Metric: (\S+)", result.stderr, re.MULTILINE) == ["namespace_workload_pod:kube_pod_owner:relabel"]
    assert "1 duplicate rule(s) found" in result.stderr
    result = subprocess.run([*check, "--lint=none"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    records = sum(len(group.rules) for group in groups)
    assert result.returncode == 0 and f"SUCCESS: {records} rules found" in result.stdout, result.stdout + result.stderr
    template_records = sum(len(r["properties"]["rules"]) for r in _arm_groups().values())
    assert records == template_records == 48
