"""The Python and Node.js language hosts under the real CLI, doing what Pulumi's own hosts do for a user
(testbed/engines/pulumi/langhost/; testbed/README.md lists where they differ): `pulumi install` in the policy
pack's folder, a type checker a project asks for, `pulumi package add` of the component package into a Python
and a TypeScript program. A new app project that `pulumi up` installs deploys a Job, so it runs where Jobs run:
tests/engine/test_apps.py, on the local cluster."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from testbed import build
from testbed.tiers import required_program
from tests.engine.conftest import Workspace
from tools.overlay_venv import overlay

HERE = Path(__file__).resolve().parent


def test_pulumi_install_in_the_policy_pack_folder_works_over_its_virtualenv(workspace: Workspace) -> None:
    """Pulumi's install runs `python -m venv venv` over policies/venv first (sdk/v3 python/toolchain/pip.go:483-491):
    make setup's virtualenv there (tools/overlay_venv.py) takes it, where the link it used to be did not."""
    pack = workspace.root / "policies"
    installed = workspace.pulumi("install", cwd=pack)
    assert "Finished installing dependencies" in installed.output, installed.output[-3000:]
    done = subprocess.run([str(pack / "venv" / "bin" / "python"), "-c", "import gpu_aks_policies, pulumi_policy"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _project(root: Path, name: str, options: str, program: str) -> Path:
    project = root / name
    project.mkdir()
    (project / "Pulumi.yaml").write_text(f"name: {name}\nruntime:\n  name: python\n  options:\n{options}")
    (project / "__main__.py").write_text(program)
    return project


def test_a_type_checker_the_project_names_runs_first_and_its_failure_stops_the_run(workspace: Workspace) -> None:
    project = _project(workspace.root, "typed", f"    toolchain: pip\n    virtualenv: {workspace.root / 'venv'}\n"
                       "    typechecker: mypy\n", 'replicas: int = "two"\n')
    workspace.init("check", cwd=project)
    refused = workspace.pulumi("preview", "--stack", "check", cwd=project, check=False)
    assert refused.returncode != 0
    assert "mypy failed" in refused.output and "Incompatible types in assignment" in refused.output, \
        refused.output[-3000:]
    (project / "__main__.py").write_text("replicas: int = 2\n")
    workspace.pulumi("preview", "--stack", "check", cwd=project)


def _gpu_cluster_instructions(output: str, language: str) -> None:
    assert "Successfully generated an SDK for the gpu-aks package" in output, output[-4000:]
    assert f"You can import the SDK in your {language} code with:" in output, output[-4000:]


def test_pulumi_package_add_links_the_component_into_a_python_program(workspace: Workspace) -> None:
    project = _project(workspace.root, "py-consumer", "    toolchain: pip\n    virtualenv: venv\n",
                       "import pulumi_gpu_aks\n")
    (project / "requirements.txt").write_text("pulumi==3.272.0\n")
    overlay(project / "venv", build.ROOT / "venv")  # pulumi already there: pip installs only the linked SDK
    added = workspace.pulumi("package", "add", str(workspace.root / "gpu_aks_plugin"), cwd=project, timeout=1200)
    _gpu_cluster_instructions(added.output, "Python")
    assert "import pulumi_gpu_aks as gpu_aks" in added.output
    assert "sdks/gpu-aks" in (project / "requirements.txt").read_text().splitlines()
    assert "gpu-aks" in (project / "Pulumi.yaml").read_text()  # recorded under packages:
    done = subprocess.run([str(project / "venv" / "bin" / "python"), "-c",
                           "from pulumi_gpu_aks import GpuCluster; print(GpuCluster.__name__)"],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "GpuCluster", done.stderr


TYPESCRIPT_PROGRAM = """import * as gpuaks from "@pulumi/gpu-aks";

const platform = new gpuaks.GpuCluster("platform", {
    location: "eastus2",
    cluster: { name: "gpu-platform-dev", skuTier: "Standard" },
    gpuPools: [{ name: "gput4", vmSize: "Standard_NC4as_T4_v3", maxCount: 2 }],
});

export const kubeconfig = platform.kubeconfig;
"""


def test_pulumi_package_add_links_the_component_into_a_typescript_program(workspace: Workspace) -> None:
    """docs/component-package.md's TypeScript example, after `pulumi package add`, compiles with tsc."""
    required_program("npm", "linking the component package into a TypeScript program")
    project = workspace.root / "ts-consumer"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: ts-consumer\nruntime: nodejs\n")
    manifest = json.loads((HERE / "typescript" / "package.json").read_text())
    manifest["name"] = "ts-consumer"
    (project / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.copyfile(HERE / "typescript" / "package-lock.json", project / "package-lock.json")
    (project / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
        "strict": True, "target": "es2020", "module": "commonjs", "moduleResolution": "node", "noEmit": True,
        "skipLibCheck": True}, "files": ["index.ts"]}))
    (project / "index.ts").write_text(TYPESCRIPT_PROGRAM)
    added = workspace.pulumi("package", "add", str(workspace.root / "gpu_aks_plugin"), cwd=project, timeout=1200)
    _gpu_cluster_instructions(added.output, "TypeScript")
    assert 'import * as gpuAks from "@pulumi/gpu-aks";' in added.output
    assert json.loads((project / "package.json").read_text())["dependencies"]["@pulumi/gpu-aks"] == "file:sdks/gpu-aks"
    compiled = subprocess.run([str(project / "node_modules" / ".bin" / "tsc"), "-p", "."], cwd=project,
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stdout[-4000:] + compiled.stderr[-2000:]


def test_the_engine_is_told_each_provider_at_the_version_its_sdk_asks_for(workspace: Workspace) -> None:
    """Pulumi's host lists every installed Pulumi SDK with the version its pulumi-plugin.json names (so the engine
    warns when the provider it loads is older, and the tiers fail on it: testbed.workspace); `pulumi about` shows
    what the engine was told."""
    about = workspace.pulumi("about", "--json")
    told = {plugin["name"]: plugin["version"] for plugin in json.loads(about.output[about.output.index("{"):])["plugins"]
            if plugin["kind"] == "resource"}
    asked = build.sdk_plugin_versions()
    assert {"azure-native", "kubernetes"} <= asked.keys()
    assert told == asked, about.output[-3000:]


COMPONENT = '''"""A component package with no __main__.py: Pulumi runs it as `python -m pulumi.run.plugin tiny-components`."""
from typing import TypedDict

import pulumi


class GreetingArgs(TypedDict):
    name: pulumi.Input[str]


class Greeting(pulumi.ComponentResource):
    message: pulumi.Output[str]

    def __init__(self, name: str, args: GreetingArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("tiny-components:index:Greeting", name, {}, opts)
        self.message = pulumi.Output.from_input(args["name"]).apply(lambda who: f"hello {who}")
        self.register_outputs({"message": self.message})
'''


def test_a_plugin_that_is_a_pyproject_package_is_installed_and_run(workspace: Workspace) -> None:
    """A source-based plugin with a buildable pyproject.toml and no __main__.py: Pulumi's host pip-installs the
    package into the plugin's virtualenv, then runs it through `pulumi.run.plugin` (main.go:1311-1377,
    :1528-1728)."""
    plugin = workspace.root / "tiny"
    (plugin / "tiny_components").mkdir(parents=True)
    (plugin / "tiny_components" / "__init__.py").write_text(COMPONENT)
    (plugin / "PulumiPlugin.yaml").write_text("runtime: python\n")
    (plugin / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "tiny-components"\nversion = "0.1.0"\n')
    overlay(plugin / "venv", build.ROOT / "venv")  # the plugin's default virtualenv, with pulumi in it
    output = workspace.pulumi("package", "get-schema", str(plugin), timeout=1200).output
    schema = json.loads(output[output.index("\n{") + 1:] if not output.startswith("{") else output)
    assert "tiny-components:index:Greeting" in schema["resources"], output[-3000:]
    installed = subprocess.run([str(plugin / "venv" / "bin" / "python"), "-m", "pip", "show", "tiny-components"],
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0 and "Version: 0.1.0" in installed.stdout, installed.stderr
