"""The inference example under the mock runtime, reading a StackReference shaped exactly like the
platform's dev and prod outputs, the policy pack (default config) over what it creates, every
Kubernetes object against the official schema, and the example's own tests with only the helper."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from offline.analyzer import PolicyPackProcess, wire_struct
from offline.mockrun import PlatformMocks, run_program
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "gpu-inference"
PLATFORM_STACK = "organization/gpu-aks/dev"


def run_example(platform_run, **config: str):
    mocks = PlatformMocks(stack_references={PLATFORM_STACK: platform_run.stack_outputs})
    settings = {"gpu-inference:platformStack": PLATFORM_STACK, **{f"gpu-inference:{k}": v for k, v in config.items()}}
    return run_program(EXAMPLE, "dev", settings, project="gpu-inference", mocks=mocks)


@pytest.mark.parametrize(("stack", "config", "pool"), [("dev", {}, "gput4"), ("prod", {"spot": "true"}, "t4spot")])
def test_the_server_lands_on_a_fitting_pool_behind_a_service_and_passes_the_pack(stack, config, pool, dev_run, prod_run):
    platform = {"dev": dev_run, "prod": prod_run}[stack]
    run = run_example(platform, **config)
    assert run.error is None, run.error
    assert run.stack_outputs["gpuPool"] == pool
    deployment = run.one("kubernetes:apps/v1:Deployment")
    spec = deployment.inputs["spec"]["template"]["spec"]
    expected = platform.stack_outputs["gpuPools"][pool]
    assert spec["tolerations"] == expected["tolerations"]
    assert spec["nodeSelector"] == expected["nodeSelector"]
    assert spec["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}
    service = run.one("kubernetes:core/v1:Service")
    assert service.inputs["spec"]["selector"] == deployment.inputs["spec"]["selector"]["matchLabels"]
    provider = run.one("pulumi:providers:kubernetes")
    assert provider.masked_inputs["kubeconfig"] == "[secret]", "the platform's kubeconfig stays secret"
    with PolicyPackProcess() as pack:
        for resource in run.resources:
            diagnostics = pack.analyze(resource.type, resource.name, wire_struct(resource.wire_inputs), resource.urn)
            assert diagnostics == [], (resource.type, diagnostics)


def test_the_objects_pass_the_official_kubernetes_schema(dev_run):
    import kubernetes_validate

    from tests.conftest import KUBERNETES_SCHEMA_VERSION

    run = run_example(dev_run)
    for type_ in ("kubernetes:apps/v1:Deployment", "kubernetes:core/v1:Service"):
        resource = run.one(type_)
        kind = type_.rsplit(":", 1)[-1]
        group_version = type_.split(":")[1].replace("core/", "")
        manifest = {"apiVersion": group_version, "kind": kind, "metadata": {"name": resource.name},
                    **{k: v for k, v in resource.inputs.items() if k not in ("apiVersion", "kind", "metadata")}}
        kubernetes_validate.validate(manifest, KUBERNETES_SCHEMA_VERSION, strict=True)


def test_the_example_reports_what_the_platform_lacks(dev_run):
    run = run_example(dev_run, gpuModel="H100")
    assert run.error is not None
    assert "the platform has no pool with H100 GPUs" in str(run.error)
    assert not run.by_type("kubernetes:apps/v1:Deployment")


@pytest.mark.slow
def test_the_examples_own_tests_pass_with_only_the_app_helper():
    """A fresh pytest process, as an app repository runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "app_sdk")}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_gpu_inference.py"],
                            cwd=EXAMPLE, env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
    assert "../../app_sdk" in (EXAMPLE / "requirements.txt").read_text().splitlines()


@pytest.mark.parametrize("example", ["gpu-job", "gpu-inference"])
def test_each_example_readme_gives_the_three_commands_that_run_it(example):
    text = (ROOT / "examples" / example / "README.md").read_text()
    assert "The three commands" in text
    for command in ("pulumi stack init dev && pulumi config set platformStack", "pulumi up",
                    "pip install -r requirements.txt pytest && python -m pytest"):
        assert command in text, command
