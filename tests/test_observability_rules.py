"""The GPU alert rules under promtool: the rule files `python -m tools.observability` writes are valid (`promtool check rules`),
and every alert fires on synthetic series that should fire it and stays quiet on series that should
not (`promtool test rules`), with each stack's own thresholds. promtool comes from Debian's
`prometheus` package; without it these tests skip and say so."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.observability import platform_alert_rules
from components.pools import platform_pools
from observability.rules import AlertRule
from tools.observability import rules_text, stack_settings

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool is not installed (Debian: apt-get install prometheus); the alert rules are "
                             "not checked or unit-tested here")
STACKS = ["dev", "prod"]


def _promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL
    return subprocess.run([PROMTOOL, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _expand(template: str, labels: dict[str, str], value: str) -> str:
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), template)
    return text.replace("{{ $value }}", value)


def _expected(rule: AlertRule, sample: dict[str, str], value: str) -> dict[str, Any]:
    labels = {**sample, "severity": rule.severity, "source": "gpu-aks", **rule.labels}
    return {"exp_labels": labels, "exp_annotations": {"summary": _expand(rule.summary, labels, value),
                                                      "runbook": rule.runbook}}


def _series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    shown = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{shown}}}", "values": values}


def _cases(rules: list[AlertRule], stack: str) -> list[dict[str, Any]]:
    """One promtool test per alert: series that fire it (checked after its `for`) and series that must not."""
    settings = stack_settings(stack)
    alerts = settings.observability.alerts
    by_name: dict[str, list[AlertRule]] = {}
    for rule in rules:
        by_name.setdefault(rule.name, []).append(rule)
    gpu = {"pool": "p", "node": "aks-p-1", "gpu": "0", "UUID": "GPU-1"}
    other = {"pool": "p", "node": "aks-p-2", "gpu": "0", "UUID": "GPU-2"}
    tests: list[dict[str, Any]] = []

    def test(name: str, series: list[dict[str, str]], at: int, fired: list[dict[str, Any]],
             quiet_at: int | None = None) -> None:
        checks = [{"eval_time": f"{at}m", "alertname": name, "exp_alerts": fired}]
        if quiet_at is not None:
            checks.insert(0, {"eval_time": f"{quiet_at}m", "alertname": name, "exp_alerts": []})
        tests.append({"interval": "1m", "input_series": series, "alert_rule_test": checks})

    xid = by_name["GpuXidError"][0]
    test(xid.name, [_series("DCGM_FI_DEV_XID_ERRORS", gpu, "0 0 79 79 79"),
                    _series("DCGM_FI_DEV_XID_ERRORS", other, "0x4")], 3, [_expected(xid, gpu, "79")], quiet_at=1)
    ecc = by_name["GpuUncorrectableEccErrors"][0]
    test(ecc.name, [_series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu, "0 0 2 2 2"),
                    _series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", other, "0x4"),
                    _series("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", other, "0 5 10 15 20"),
                    _series("DCGM_FI_DEV_ROW_REMAP_FAILURE", other, "0x4")], 3,
         [_expected(ecc, gpu, "2")], quiet_at=1)
    test(ecc.name, [_series("DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu, "0 1 1"),
                    _series("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", gpu, "0x2")], 2, [_expected(ecc, gpu, "1")], quiet_at=0)
    hot = by_name["GpuTemperatureHigh"][0]
    limit = alerts.gpu_temperature_celsius
    test(hot.name, [_series("DCGM_FI_DEV_GPU_TEMP", gpu, f"{limit + 5}x12"),
                    _series("DCGM_FI_DEV_GPU_TEMP", other, f"{limit}x12"),
                    _series("DCGM_FI_DEV_GPU_TEMP", {**other, "gpu": "1", "UUID": "GPU-3"},
                            f"{limit + 5}x3 {limit - 10}x9")],
         10, [_expected(hot, gpu, str(limit + 5))], quiet_at=4)
    condition = by_name["GpuNodeCondition"][0]
    node = {"node": "aks-p-1"}
    test(condition.name, [
        _series("kube_node_status_condition", {**node, "condition": "XIDErrors", "status": "true"}, "0 1 1"),
        _series("kube_node_status_condition", {**node, "condition": "XIDErrors", "status": "false"}, "1 0 0"),
        _series("kube_node_status_condition", {"node": "aks-p-2", "condition": "GPUMissing", "status": "false"}, "1x2"),
        _series("kube_node_status_condition", {"node": "aks-p-2", "condition": "Ready", "status": "true"}, "1x2")],
        2, [_expected(condition, {**node, "condition": "XIDErrors"}, "1")], quiet_at=0)
    down = by_name["GpuNodeAgentDown"][0]
    minutes = alerts.agent_down_minutes
    namespace = settings.device_plugin.namespace
    daemonset = {"namespace": namespace, "daemonset": f"dcgm-exporter-{platform_pools(settings).served[0].name}"}
    plugin = {"namespace": namespace, "daemonset": "nvidia-device-plugin-daemonset"}
    proxy = {"namespace": "kube-system", "daemonset": "kube-proxy"}
    span = f"x{minutes + 5}"
    test(down.name, [
        _series("kube_daemonset_status_desired_number_scheduled", daemonset, f"2{span}"),
        _series("kube_daemonset_status_number_ready", daemonset, f"1{span}"),
        _series("kube_daemonset_status_desired_number_scheduled", plugin, f"2{span}"),
        _series("kube_daemonset_status_number_ready", plugin, f"2{span}"),
        _series("kube_daemonset_status_desired_number_scheduled", proxy, f"3{span}"),
        _series("kube_daemonset_status_number_ready", proxy, f"0{span}")],
        minutes + 2, [_expected(down, daemonset, "1")], quiet_at=minutes - 2)
    pending = by_name["GpuPodPending"][0]
    wait = alerts.pending_gpu_pod_minutes
    stuck, cpu, running = ({"namespace": "ml", "pod": name} for name in ("train", "cpu-job", "serve"))
    span = f"x{wait + 5}"
    test(pending.name, [
        _series("kube_pod_container_resource_requests", {**stuck, "container": "c", "resource": "nvidia_com_gpu",
                                                         "unit": "integer"}, f"1{span}"),
        _series("kube_pod_status_phase", {**stuck, "phase": "Pending"}, f"1{span}"),
        _series("kube_pod_status_phase", {**stuck, "phase": "Running"}, f"0{span}"),
        _series("kube_pod_container_resource_requests", {**cpu, "container": "c", "resource": "cpu", "unit": "core"},
                f"1{span}"),
        _series("kube_pod_status_phase", {**cpu, "phase": "Pending"}, f"1{span}"),
        _series("kube_pod_container_resource_requests", {**running, "container": "c",
                                                         "resource": "nvidia_com_mig_2g_20gb", "unit": "integer"},
                f"1{span}"),
        _series("kube_pod_status_phase", {**running, "phase": "Pending"}, f"0{span}"),
        _series("kube_pod_status_phase", {**running, "phase": "Running"}, f"1{span}")],
        wait + 2, [_expected(pending, stuck, "1")], quiet_at=wait - 2)
    idle_minutes = alerts.idle_gpu_minutes
    span = f"x{idle_minutes + 5}"
    idle = by_name.get("GpuAllocatedButIdle", [])
    if idle:
        rule = idle[0]
        series, fired = [], []
        for pool in platform_pools(settings).served:
            # Both read 1 (percent) when idle: 1% utilisation, or an engine-activity ratio of 0.01 times 100.
            metric, low, high = (("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.01", "0.5") if pool.mig else
                                 ("DCGM_FI_DEV_GPU_UTIL", "1", "50"))
            held = {"pool": pool.name, "node": f"aks-{pool.name}-1", "gpu": "0", "UUID": f"GPU-{pool.name}-0",
                    "exported_namespace": "ml", "exported_pod": f"notebook-{pool.name}"}
            busy = {**held, "gpu": "1", "UUID": f"GPU-{pool.name}-1", "exported_pod": "trainer"}
            free = {"pool": pool.name, "node": held["node"], "gpu": "2", "UUID": f"GPU-{pool.name}-2"}
            series += [_series(metric, held, f"{low}{span}"), _series(metric, busy, f"{high}{span}"),
                       _series(metric, free, f"{low}{span}")]
            fired.append(_expected(rule, held, "1"))
        # A pool the rules do not know (another cluster's, or an external driver's) never fires.
        series.append(_series("DCGM_FI_DEV_GPU_UTIL", {"pool": "elsewhere", "node": "n", "gpu": "0", "UUID": "G",
                                                       "exported_namespace": "ml", "exported_pod": "x"}, f"1{span}"))
        test(rule.name, series, idle_minutes + 2, fired, quiet_at=idle_minutes - 2)
    return tests


@needs_promtool
@pytest.mark.parametrize("stack", STACKS)
def test_generated_rule_files_pass_promtool_check(stack, tmp_path):
    (tmp_path / "rules.yaml").write_text(rules_text(stack_settings(stack)))
    result = _promtool("check", "rules", "rules.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@needs_promtool
@pytest.mark.parametrize("stack", STACKS)
def test_every_alert_fires_on_its_series_and_not_on_others(stack, tmp_path):
    rules = platform_alert_rules(stack_settings(stack))
    tests = _cases(rules, stack)
    covered = {check["alertname"] for case in tests for check in case["alert_rule_test"]}
    assert covered == {rule.name for rule in rules}, "every alert has a promtool test"
    (tmp_path / "rules.yaml").write_text(rules_text(stack_settings(stack)))
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(
        {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}, sort_keys=False))
    result = _promtool("test", "rules", "tests.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@needs_promtool
def test_promtool_catches_a_rule_that_does_not_fire(tmp_path):
    """The harness can fail: a test expecting an alert on healthy series is refused."""
    rules = platform_alert_rules(stack_settings("prod"))
    xid = next(r for r in rules if r.name == "GpuXidError")
    case = {"interval": "1m", "input_series": [_series("DCGM_FI_DEV_XID_ERRORS", {"pool": "p", "node": "n", "gpu": "0",
                                                                                 "UUID": "G"}, "0x3")],
            "alert_rule_test": [{"eval_time": "2m", "alertname": xid.name,
                                 "exp_alerts": [_expected(xid, {"pool": "p", "node": "n", "gpu": "0", "UUID": "G"}, "0")]}]}
    (tmp_path / "rules.yaml").write_text(rules_text(stack_settings("prod")))
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "tests": [case]}))
    assert _promtool("test", "rules", "tests.yaml", cwd=tmp_path).returncode != 0
