"""The component package under the real CLI: the schema it answers, the SDKs `pulumi package gen-sdk`
generates from it (TypeScript compiled with tsc from npm, Go with go build, Python imported), and the
YAML example previewing GpuCluster through it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from testbed.tiers import required_program
from tests.engine.conftest import Workspace

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def schema(workspace: Workspace) -> dict:
    output = workspace.pulumi("package", "get-schema", "./gpu_aks_plugin").output
    # stdout and stderr arrive together here: the install's progress lines come before the JSON.
    return json.loads(output[output.index("{"):] if output.startswith("{") else output[output.index("\n{") + 1:])


def test_the_plugin_answers_the_schema_it_publishes(schema: dict) -> None:
    published = json.loads((Path(__file__).resolve().parents[2] / "gpu_aks_plugin" / "schema.json").read_text())
    assert schema["name"] == "gpu-aks"
    assert "gpu-aks:index:GpuCluster" in schema["resources"]
    assert set(schema["resources"]["gpu-aks:index:GpuCluster"]["inputProperties"]) == \
        set(published["resources"]["gpu-aks:index:GpuCluster"]["inputProperties"])


def test_get_schema_again_leaves_the_repository_installed_as_it_was(workspace: Workspace, schema: dict) -> None:
    """The CLI installs the plugin's requirements.txt on every get-schema, gen-sdk and package add; it no longer
    names the repository, which pip rebuilt each time."""
    again = workspace.pulumi("package", "get-schema", "./gpu_aks_plugin").output
    assert "Installing dependencies" in again  # Pulumi's host installs on every run
    assert "gpu-aks-policies" not in again and "editable" not in again, again[-3000:]


def _gen(workspace: Workspace, language: str, out: Path) -> Path:
    workspace.pulumi("package", "gen-sdk", "./gpu_aks_plugin", "--language", language, "--out", str(out))
    return out / language


def test_the_typescript_sdk_compiles(workspace: Workspace, tmp_path: Path) -> None:
    npm = required_program("npm", "compiling the TypeScript SDK")
    sdk = _gen(workspace, "nodejs", tmp_path)
    assert (sdk / "gpuCluster.ts").is_file(), sorted(p.name for p in sdk.iterdir())
    tools = tmp_path / "typescript"
    shutil.copytree(HERE / "typescript", tools)
    subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=tools, check=True,
                   capture_output=True, timeout=600)
    (sdk / "node_modules").symlink_to(tools / "node_modules")
    done = subprocess.run([str(tools / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", "."], cwd=sdk,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_go_sdk_builds(workspace: Workspace, tmp_path: Path) -> None:
    sdk = _gen(workspace, "go", tmp_path)
    [module] = {path.parent for path in sdk.rglob("gpuCluster.go")}
    # The SDK imports its own internal package by the schema's Go import path (no `language.go` in the
    # schema: example.com/pulumi-gpu-aks/sdk/go/gpu-aks); `pulumi package add` writes the go.mod that names it.
    imported = re.search(r'"([^"]+)/internal"', (module / "gpuCluster.go").read_text())
    assert imported, "the SDK does not import its internal package"
    (module / "go.mod").write_text(f"module {imported.group(1)}\n\ngo 1.24\n")
    env = {**workspace.env, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
    for command in (["go", "mod", "tidy"], ["go", "build", "./..."]):
        done = subprocess.run(command, cwd=module, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{command}: {done.stderr[-4000:]}"


def test_the_python_sdk_compiles_with_gpu_cluster(workspace: Workspace, tmp_path: Path) -> None:
    sdk = _gen(workspace, "python", tmp_path)
    # Importing it needs it pip-installed (it reads its version from its distribution's metadata); compiling
    # every module and finding the class is what holds here.
    done = subprocess.run([str(workspace.root / "venv" / "bin" / "python"), "-m", "compileall", "-q", str(sdk)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    assert [path.name for path in sdk.rglob("*.py") if "class GpuCluster(" in path.read_text()] \
        == ["gpu_cluster.py"], sorted(p.name for p in sdk.rglob("*.py"))


def test_the_yaml_example_previews_gpu_cluster(workspace: Workspace) -> None:
    example = workspace.root / "examples" / "yaml-platform"
    workspace.pulumi("stack", "init", "dev", cwd=example)
    preview = workspace.pulumi("preview", "--stack", "dev", cwd=example)
    assert "gpu-aks:index:GpuCluster" in preview.output
    assert "azure-native:containerservice:ManagedCluster" in preview.output
