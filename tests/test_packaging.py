"""The rules run where app teams are: the pack copied alone to a fresh virtualenv, the light package
installed from a git tag with PyYAML only, the pre-commit hook, and the app-repository workflow.

The fresh-virtualenv tests install from the package index as the CLI and pip would (the same
registries CI reaches); they take about half a minute each."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
import yaml
from gpu_aks_policies import __version__

from components.kubeconfig import KUBELOGIN_VERSION
from offline.analyzer import PolicyPackProcess
from tests.conftest import ROOT
from tests.helpers import parse_python

POLICIES = ROOT / "policies"
APP_REPO = ROOT / "examples" / "app-repo"
BIN = Path(sys.executable).parent
UNTOLERATED = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


def fresh_venv(path: Path) -> Path:
    """A new virtualenv with a current pip (the one bundled with Python 3.11 refuses `git+file:///`
    direct references, and users install with a current pip anyway)."""
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    pip(path / "bin", "--upgrade", "pip")
    return path / "bin"


def pip(bin_dir: Path, *args: str, cwd: Path | None = None) -> None:
    result = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                             *args], capture_output=True, text=True, check=False, cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr


def installed(bin_dir: Path) -> set[str]:
    result = subprocess.run([str(bin_dir / "python"), "-m", "pip", "list", "--format", "json"],
                            capture_output=True, text=True, check=True)
    return {package["name"].lower() for package in json.loads(result.stdout)}


# --- One direction of dependency -------------------------------------------------------------


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = parse_python(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


def test_policies_import_nothing_from_outside_their_folder():
    # celpy: the `cel` extra (pyproject.toml), imported where DeviceClass selectors are read; without it only
    # their length is checked.
    allowed_third_party = {"yaml", "pulumi_policy", "pulumi", "google", "grpc", "celpy"}
    for path in POLICIES.rglob("*.py"):
        if "venv" in path.parts:
            continue
        for level, module in _imports(path):
            top = module.split(".")[0]
            if level:
                continue
            assert top in sys.stdlib_module_names or top in allowed_third_party or top == "gpu_aks_policies", \
                f"{path.relative_to(ROOT)} imports {module}"


def test_components_depend_on_policies_never_the_reverse():
    uses_policies = [p for p in (ROOT / "components").glob("*.py")
                     if any(module.startswith("gpu_aks_policies") for level, module in _imports(p) if not level)]
    assert uses_policies, "the GPU facts come from policies/"
    assert not (ROOT / "components" / "catalog.py").exists()


# --- The pack, alone -------------------------------------------------------------------------


@pytest.mark.slow
def test_the_pack_copied_alone_installs_starts_and_flags_an_untolerated_gpu_pod(tmp_path):
    pack_dir = tmp_path / "gpu-aks-pack"
    shutil.copytree(POLICIES, pack_dir, ignore=shutil.ignore_patterns("venv", "__pycache__"))
    settings = yaml.safe_load((pack_dir / "PulumiPolicy.yaml").read_text())
    assert settings["runtime"]["options"]["virtualenv"] == "venv", "a virtualenv inside the pack's folder"
    bin_dir = fresh_venv(pack_dir / "venv")  # what the CLI does from PulumiPolicy.yaml
    pip(bin_dir, "-r", "requirements.txt", cwd=pack_dir)
    with PolicyPackProcess(pack_dir, python=str(bin_dir / "python")) as pack:
        assert pack.info().name == "gpu-aks-policies"
        # The toleration rule runs in Analyze, before the pod would be created (docs/enforcement.md).
        diagnostics = pack.analyze("kubernetes:core/v1:Pod", "p", UNTOLERATED)
    assert [d.policy for d in diagnostics if d.level == "mandatory"] == ["gpu-pods-tolerate-gpu-taint"]


def test_the_pack_folder_stands_alone():
    """(Its version agrees with the packages' and the CHANGELOGs': tests/test_release.py.)"""
    assert "../" not in (POLICIES / "PulumiPolicy.yaml").read_text()
    assert "venv/" in (POLICIES / ".gitignore").read_text(), "kept out of `pulumi policy publish`"


# --- The light package -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_light_package_installs_from_a_git_tag_with_pyyaml_only(tmp_path):
    """As the README installs it (`pip install "gpu-aks-policies @ git+<repo>@<tag>"`), from a clone
    of this repository's committed state tagged like a release."""
    clone = tmp_path / "gpu-aks"
    subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(clone)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(clone), "tag", "-f", f"v{__version__}"], check=True, capture_output=True)
    bin_dir = fresh_venv(tmp_path / "venv")
    pip(bin_dir, f"gpu-aks-policies @ git+file://{clone}@v{__version__}")
    assert installed(bin_dir) - {"pip", "setuptools"} == {"gpu-aks-policies", "pyyaml"}
    platform = ROOT / "tests" / "fixtures" / "doctor" / "platform-prod.json"
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(UNTOLERATED))
    checked = subprocess.run([str(bin_dir / "gpu-aks-check"), "--platform", str(platform), str(manifest)],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 1 and "[mandatory] gpu-pods-fit-a-pool" in checked.stdout, checked.stderr
    explained = subprocess.run([str(bin_dir / "gpu-aks-explain"), "--platform", str(platform), str(manifest)],
                               capture_output=True, text=True, check=False)
    assert explained.returncode == 1 and "t4spot" in explained.stdout, explained.stderr


def test_the_platform_runs_the_same_package_from_its_path():
    assert "-e ." in (ROOT / "requirements.txt").read_text().splitlines()
    result = subprocess.run([str(BIN / "gpu-aks-check"), str(ROOT / "tests" / "manifests" / "corpus" / "good")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    import gpu_aks_policies

    assert Path(gpu_aks_policies.__file__).resolve().parent == POLICIES


# --- pre-commit ------------------------------------------------------------------------------


def test_the_hook_manifest_and_the_example_config_are_what_pre_commit_accepts():
    for command, path in (("validate-manifest", ROOT / ".pre-commit-hooks.yaml"),
                          ("validate-config", APP_REPO / ".pre-commit-config.yaml")):
        result = subprocess.run([str(BIN / "pre-commit"), command, str(path)], capture_output=True, text=True,
                                check=False)
        assert result.returncode == 0, result.stdout + result.stderr
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "gpu-aks-check" and hook["entry"] == "gpu-aks-check" and hook["language"] == "python"
    config = yaml.safe_load((APP_REPO / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["rev"] == "main", "until a release tag exists (tests/test_release.py checks refs)"


@pytest.mark.slow
def test_pre_commit_runs_the_hook_from_this_repository(tmp_path):
    app = tmp_path / "app"
    (app / "k8s").mkdir(parents=True)
    shutil.copy(APP_REPO / "k8s" / "embed-cronjob.yaml", app / "k8s" / "embed-cronjob.yaml")
    (app / "k8s" / "broken.yaml").write_text(yaml.safe_dump(UNTOLERATED))
    subprocess.run(["git", "init", "-q", str(app)], check=True)
    subprocess.run(["git", "-C", str(app), "add", "."], check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": f"{BIN}:{os.environ['PATH']}"}

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(BIN / "pre-commit"), "try-repo", str(ROOT), "gpu-aks-check", "--files", *files],
                              cwd=app, env=env, capture_output=True, text=True, check=False)

    good = try_repo("k8s/embed-cronjob.yaml")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = try_repo("k8s/embed-cronjob.yaml", "k8s/broken.yaml")
    assert bad.returncode == 1 and "gpu-pods-tolerate-gpu-taint" in bad.stdout


# --- The app-repository pipeline -------------------------------------------------------------


def _schema_check(path: Path) -> None:
    result = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_app_repo_workflow_template(tmp_path):
    path = APP_REPO / ".github" / "workflows" / "gpu-policy.yaml"
    _schema_check(path)
    workflow = yaml.safe_load(path.read_text())
    assert workflow["env"]["GPU_AKS_REF"] == "main", "until a release tag exists (tests/test_release.py checks refs)"
    check_steps = workflow["jobs"]["check-manifests"]["steps"]
    runs = " ".join(str(step.get("run", "")) for step in check_steps)
    assert 'pip install "gpu-aks-policies @ git+https://github.com/${GPU_AKS_REPOSITORY}@${GPU_AKS_REF}"' in runs
    assert 'gpu-aks-check --platform "$PLATFORM_OUTPUTS" --format sarif k8s/' in runs
    [upload] = [step for step in check_steps if "upload-sarif" in str(step.get("uses", ""))]
    assert "visibility == 'public'" in upload["if"] and "vars.CODE_SCANNING" in upload["if"]
    preview = workflow["jobs"]["pulumi-preview"]
    assert "vars.AZURE_CLIENT_ID" in preview["if"]
    uses = [str(step.get("uses", "")) for step in preview["steps"]]
    kubelogin = uses.index("azure/use-kubelogin@v1")
    [(index, step)] = [(i, s) for i, s in enumerate(preview["steps"]) if "pulumi preview" in str(s.get("run", ""))]
    assert kubelogin < index and "--policy-pack ../.gpu-aks/policies" in step["run"]
    assert preview["steps"][kubelogin]["with"]["kubelogin-version"] == KUBELOGIN_VERSION
    [fetch] = [s for s in preview["steps"] if s.get("with", {}).get("sparse-checkout") == "policies"]
    assert fetch["with"]["ref"] == "${{ env.GPU_AKS_REF }}", "the pack released with the checker"


def test_the_app_repo_manifests_fit_its_committed_platform_outputs(prod_run):
    outputs = json.loads((APP_REPO / "platform" / "prod-outputs.json").read_text())
    assert outputs["gpuPools"] == prod_run.stack_outputs["gpuPools"], "regenerate platform/prod-outputs.json"
    assert outputs["kubeconfig"] == "[secret]", "as `pulumi stack output --json` prints a secret"
    result = subprocess.run([str(BIN / "gpu-aks-check"), "--platform", str(APP_REPO / "platform" / "prod-outputs.json"),
                             str(APP_REPO / "k8s")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 object(s) checked: 0 mandatory and 0 advisory" in result.stdout


# --- The platform's own pipeline -------------------------------------------------------------


@pytest.mark.parametrize("files", [["dev", "prod"], ["dev", "prod", "staging"], ["eu.dev", "prod"]])
def test_the_pr_matrix_is_the_stack_files_present(tmp_path, files):
    for name in files:
        (tmp_path / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    (tmp_path / "Pulumi.yaml").write_text("name: x\n")
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "stacks.py"), "--github-output", str(tmp_path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout == f"stacks={json.dumps(sorted(files))}\n"


def test_the_pr_workflow_builds_its_matrix_from_the_stacks_job():
    path = ROOT / ".github" / "workflows" / "pr.yaml"
    _schema_check(path)
    jobs = yaml.safe_load(path.read_text())["jobs"]
    assert "tools/stacks.py --github-output" in jobs["stacks"]["steps"][-1]["run"]
    for name in ("offline-preview", "pulumi-preview"):
        assert jobs[name]["needs"] == "stacks"
        assert jobs[name]["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    uses = [str(step.get("uses", "")) for step in jobs["pulumi-preview"]["steps"]]
    assert "azure/use-kubelogin@v1" in uses


def test_installing_the_packages_leaves_the_repository_clean():
    """pip builds in the source tree (`pip install -r examples/gpu-job/requirements.txt`, `-e .`):
    what it leaves behind is ignored, and `make lint` skips it."""
    left_behind = ["app_sdk/build/lib/gpu_aks_app.py", "app_sdk/gpu_aks_app.egg-info/PKG-INFO",
                   "gpu_aks_policies.egg-info/PKG-INFO", "build/lib/gpu_aks_policies/check.py", "policies/venv"]
    result = subprocess.run(["git", "-C", str(ROOT), "check-ignore", *left_behind], capture_output=True, text=True,
                            check=False)
    assert result.stdout.split() == left_behind
    assert "build" in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["exclude"]


def test_one_import_name_one_registry_for_the_cli_and_the_pack():
    """The checker's entry point and the pack's, in one process, share one package and one adapter
    registry; the folder cannot be imported under a second name."""
    script = """
import runpy, sys
import pulumi_policy
pulumi_policy.PolicyPack = lambda **kwargs: None  # constructing the real one serves gRPC forever
import gpu_aks_policies.check as cli
from gpu_aks_policies.workloads.registry import ADAPTERS
package = sys.modules["gpu_aks_policies"]
runpy.run_path(sys.argv[1], run_name="__main__")
assert sys.modules["gpu_aks_policies"] is package, "the pack loaded its folder a second time"
import gpu_aks_policies.workloads.registry as registry
assert sys.modules["gpu_aks_policies.check"] is cli, "the pack loaded a second copy of the checker"
assert registry.ADAPTERS is ADAPTERS and ADAPTERS, "two adapter registries"
sys.path.insert(0, sys.argv[2])
try:
    import policies
except ImportError as error:
    assert "gpu_aks_policies" in str(error)
else:
    raise AssertionError("the folder imported under a second name")
print("one registry")
"""
    result = subprocess.run([str(BIN / "python"), "-c", script, str(POLICIES / "__main__.py"), str(ROOT)],
                            capture_output=True, text=True, check=False, cwd=ROOT)
    assert result.returncode == 0 and "one registry" in result.stdout, result.stderr


def test_make_setup_compiles_every_module_the_commands_import():
    """`make setup` writes the bytecode an editable install never does (Makefile, BYTECODE_DIRS): a
    folder left out would be compiled from source on every command where PYTHONDONTWRITEBYTECODE is
    set. Examples and smoke are separate programs; tests run under pytest, which caches its own."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    line = next(line for line in makefile.splitlines() if line.startswith("BYTECODE_DIRS :="))
    compiled = set(line.split(":=", 1)[1].split())
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    tops = {path.split("/", 1)[0] for path in tracked.stdout.split()} - {"tests", "examples", "smoke"}
    assert tops <= compiled, f"add to BYTECODE_DIRS: {sorted(tops - compiled)}"
    assert "compileall -q $(BYTECODE_DIRS)" in makefile
