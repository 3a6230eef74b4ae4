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


def _steps(job: str) -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"][job]["steps"]


def _engine_cli_version() -> str:
    """The version the engine and cluster tiers' CLI is built as (testbed/engines/pulumi/mains.txt)."""
    from testbed import build

    cli = next(main for main in build.read_mains(build.ENGINES / "pulumi") if main.name == "pulumi")
    [stamp] = [flag for flag in cli.ldflags if flag.startswith("github.com/pulumi/pulumi/sdk/v3/go/common/version.")]
    return stamp.split("=", 1)[1].removeprefix("v")


def _go_directive(go_mod: Path) -> tuple[int, ...]:
    [version] = [line.split()[1] for line in go_mod.read_text().splitlines() if line.startswith("go ")]
    return tuple(int(part) for part in version.split("."))


def test_the_real_preview_runs_the_cli_version_the_engine_tiers_ran():
    installs = [step for step in _steps("pulumi-preview") if str(step.get("uses", "")).startswith("pulumi/actions@")]
    assert [step.get("with", {}).get("pulumi-version") for step in installs] == [_engine_cli_version()]


def test_the_test_job_installs_the_go_every_engine_module_needs_before_make_test():
    steps = _steps("test")
    [setup_go] = [i for i, step in enumerate(steps) if str(step.get("uses", "")).startswith("actions/setup-go@")]
    [make_test] = [i for i, step in enumerate(steps) if step.get("run") == "make test"]
    assert setup_go < make_test
    installed = _go_directive(ROOT / steps[setup_go]["with"]["go-version-file"])
    needed = {path.parent.name: _go_directive(path) for path in (ROOT / "testbed" / "engines").glob("*/go.mod")}
    assert needed and all(version <= installed for version in needed.values()), (installed, needed)
