"""The example app stack under the mock runtime, reading a StackReference shaped exactly like the
platform's dev outputs, and the policy pack (default config) over what it creates."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import pytest

from offline.analyzer import PolicyPackProcess, wire_struct
from offline.mockrun import PlatformMocks, run_program
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "gpu-job"
PLATFORM_STACK = "organization/gpu-aks/dev"


def run_example(dev_run, **config: str):
    mocks = PlatformMocks(stack_references={PLATFORM_STACK: dev_run.stack_outputs})
    settings = {"gpu-job:platformStack": PLATFORM_STACK, **{f"gpu-job:{k}": v for k, v in config.items()}}
    return run_program(EXAMPLE, "dev", settings, project="gpu-job", mocks=mocks)


def test_example_lands_its_job_on_the_dev_gpu_pool_and_passes_the_pack(dev_run):
    run = run_example(dev_run)
    assert run.error is None, run.error
    assert run.stack_outputs["gpuPool"] == "gput4"
    job = run.one("kubernetes:batch/v1:Job")
    pod = job.inputs["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    assert pod["nodeSelector"] == {"accelerator": "nvidia", "gpu-aks.io/pool": "gput4"}
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}
    provider = run.one("pulumi:providers:kubernetes")
    assert provider.masked_inputs["kubeconfig"] == "[secret]", "the platform's kubeconfig stays secret"
    assert job.provider.startswith(provider.urn)
    with PolicyPackProcess() as pack:
        for resource in run.resources:
            diagnostics = pack.analyze(resource.type, resource.name, wire_struct(resource.wire_inputs), resource.urn)
            assert diagnostics == [], (resource.type, diagnostics)


def test_example_reports_what_the_platform_lacks(dev_run):
    run = run_example(dev_run, gpuModel="H100")
    assert run.error is not None
    assert "the platform has no pool with H100 GPUs; GPU pools: gput4 (T4, 1 per node)" in str(run.error)
    assert not run.by_type("kubernetes:batch/v1:Job")


def test_example_imports_the_helper_the_way_its_requirements_install_it():
    requirements = (EXAMPLE / "requirements.txt").read_text().splitlines()
    assert "../../app_sdk" in requirements
    assert "from gpu_aks_app import" in (EXAMPLE / "__main__.py").read_text()
    packaged = tomllib.loads((ROOT / "app_sdk" / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]
    assert packaged["wheel"]["only-include"] == ["gpu_aks_app.py", "gpu_aks_app_testing.py"]


@pytest.mark.slow
def test_the_examples_own_tests_pass_with_only_the_app_helper():
    """What an app repository runs: its tests import gpu_aks_app_testing, not this repository."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "app_sdk")}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_gpu_job.py"],
                            cwd=EXAMPLE, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
    assert "tools" not in (EXAMPLE / "test_gpu_job.py").read_text().split('"""', 2)[2], "no import of this repo's tools/"
