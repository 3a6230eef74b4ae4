"""The PR pipeline users copy: valid against the GitHub workflow schema, and doing what the README says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from gpu_aks_policies.rules import parse_rule_config

from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pr.yaml"


def test_workflow_passes_the_github_workflow_schema():
    result = subprocess.run(
        [str(Path(sys.executable).with_name("check-jsonschema")), "--builtin-schema", "vendor.github-workflows",
         str(WORKFLOW)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_is_not_vacuous(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n")
    result = subprocess.run(
        [str(Path(sys.executable).with_name("check-jsonschema")), "--builtin-schema", "vendor.github-workflows",
         str(broken)], capture_output=True, text=True, check=False)
    assert result.returncode == 1


def test_workflow_runs_tests_checker_with_sarif_preview_and_gated_pulumi_preview():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    steps = {name: " ".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in job["steps"])
             for name, job in jobs.items()}
    assert "make test" in steps["test"]
    assert "gpu_aks_policies.check --platform dev-preview.json --format sarif" in steps["manifests"]
    assert "github/codeql-action/upload-sarif" in steps["manifests"]
    assert "make preview" in steps["offline-preview"]
    assert "--policy-pack policies" in steps["pulumi-preview"]
    assert "AZURE_CLIENT_ID" in jobs["pulumi-preview"]["if"], "runs only where credentials exist"


def test_every_policy_config_the_workflow_may_pass_parses():
    """The real preview passes policies/config.<stack>.json when the file exists."""
    configs = sorted((ROOT / "policies").glob("config.*.json"))
    assert configs
    for path in configs:
        parse_rule_config(json.loads(path.read_text()))
        assert (ROOT / f"Pulumi.{path.name.split('.')[1]}.yaml").is_file(), f"{path.name} names no stack"
