"""App stacks on the deployed dev platform, under the real engine and the policy pack: each example reads the
platform through StackReference from the same backend and lands its workload with the app helper; an
untolerated GPU Job is stopped before it exists, also under `up --skip-preview`; `--policy-pack-config`
makes that rule advisory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.conftest import Workspace

JOB = "kubernetes:batch/v1:Job"
UNTOLERATED = '''"""A GPU Job with no toleration for the GPU pools' taint (written by tests/engine/test_apps.py)."""
import pulumi_kubernetes as k8s

k8s.batch.v1.Job("untolerated", spec={"backoffLimit": 0, "template": {"spec": {
    "restartPolicy": "Never",
    "containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04",
                    "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}})
'''


def _jobs(workspace: Workspace, stack: str, cwd: Path) -> list[dict]:
    return [r for r in workspace.export(stack, cwd=cwd)["deployment"].get("resources", []) if r["type"] == JOB]


@pytest.fixture(scope="module")
def untolerated_app(deployed_dev: Workspace) -> Path:
    app = deployed_dev.root / "untolerated-app"
    app.mkdir()
    (app / "Pulumi.yaml").write_text("name: untolerated\nruntime:\n  name: python\n  options:\n"
                                     f"    toolchain: pip\n    virtualenv: {deployed_dev.root / 'venv'}\n")
    (app / "__main__.py").write_text(UNTOLERATED)
    deployed_dev.init("dev", cwd=app)
    return app


@pytest.mark.parametrize("example", ["gpu-job", "gpu-inference"])
def test_an_example_app_reads_the_platform_places_previews_deploys_and_destroys(deployed_dev: Workspace,
                                                                                example: str) -> None:
    app = deployed_dev.root / "examples" / example
    # The example's own Pulumi.dev.yaml names the platform stack: organization/gpu-aks/dev, this backend's.
    deployed_dev.init("dev", cwd=app)
    pack = ["--policy-pack", "../../policies", "--stack", "dev"]
    deployed_dev.pulumi("preview", *pack, cwd=app)
    deployed_dev.pulumi("up", "--yes", "--skip-preview", *pack, cwd=app)
    platform = deployed_dev.outputs("dev")
    placed = deployed_dev.outputs("dev", cwd=app)
    pool = platform["gpuPools"][placed["gpuPool"]]
    [workload] = [r for r in deployed_dev.export("dev", cwd=app)["deployment"]["resources"]
                  if r["type"] in (JOB, "kubernetes:apps/v1:Deployment")]
    pod = workload["inputs"]["spec"]["template"]["spec"]
    assert pod["tolerations"] == pool["tolerations"]
    assert pod["nodeSelector"].items() >= pool["nodeSelector"].items()
    deployed_dev.pulumi("destroy", "--yes", "--stack", "dev", cwd=app)


def test_an_untolerated_gpu_job_is_stopped_before_it_exists(deployed_dev: Workspace, untolerated_app: Path) -> None:
    before = len(deployed_dev.calls())
    # --skip-preview: the pack's verdict is the only thing between the program and the create.
    up = deployed_dev.pulumi("up", "--yes", "--skip-preview", "--policy-pack", str(deployed_dev.root / "policies"),
                             "--stack", "dev", cwd=untolerated_app, check=False)
    assert up.returncode != 0
    assert "gpu-pods-tolerate-gpu-taint" in up.output, up.output[-3000:]
    assert "mandatory" in up.output
    assert _jobs(deployed_dev, "dev", untolerated_app) == []
    assert [c for c in deployed_dev.calls()[before:] if c["method"] == "Create" and c.get("type") == JOB] == []


def test_policy_pack_config_makes_the_rule_advisory(deployed_dev: Workspace, untolerated_app: Path) -> None:
    config = untolerated_app / "advisory.json"
    config.write_text(json.dumps({"gpu-pods-tolerate-gpu-taint": "advisory"}))
    up = deployed_dev.pulumi("up", "--yes", "--skip-preview", "--policy-pack", str(deployed_dev.root / "policies"),
                             "--policy-pack-config", str(config), "--stack", "dev", cwd=untolerated_app)
    assert "gpu-pods-tolerate-gpu-taint" in up.output and "advisory" in up.output, up.output[-3000:]
    assert len(_jobs(deployed_dev, "dev", untolerated_app)) == 1
    deployed_dev.pulumi("destroy", "--yes", "--stack", "dev", cwd=untolerated_app)
