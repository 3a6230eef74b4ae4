"""The README works as written: its configuration block is a stack file that previews cleanly, its
app-stack snippet runs against the dev and prod contracts, its example commands exit 0, and what it
names exists."""

from __future__ import annotations

import io
import re
import runpy
import shlex
import subprocess
from typing import Any

import pulumi
import pytest
import yaml
from gpu_aks_app_testing import PlatformMocks

from tests.conftest import ROOT
from tools.preview import main as preview

README = (ROOT / "README.md").read_text()
USER_DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "policies" / "README.md", ROOT / "policies" / "CHANGELOG.md",
             *sorted((ROOT / "examples").glob("*/README.md"))]


def block_after(marker: str) -> str:
    match = re.search(rf"<!-- {re.escape(marker)} -->\n```[a-z]*\n(.*?)\n```", README, re.DOTALL)
    assert match, f"no code block after <!-- {marker} -->"
    return match.group(1)


def test_the_configuration_block_is_a_stack_file_that_previews_cleanly(tmp_path):
    stack_file = tmp_path / "Pulumi.readme.yaml"
    stack_file.write_text(block_after("stack-file") + "\n")
    config = yaml.safe_load(stack_file.read_text())["config"]
    assert {"gpu-aks:cluster", "gpu-aks:access", "gpu-aks:gpuPools", "gpu-aks:admissionPolicy"} <= set(config)
    out = io.StringIO()
    code = preview(["readme", "--config-file", str(stack_file)], stdout=out)
    assert code == 0, out.getvalue()
    assert "no violations" in out.getvalue()


@pytest.mark.parametrize("stack", ["dev", "prod"])
@pulumi.runtime.test
def test_the_app_stack_snippet_runs_against_the_example_stacks(stack, tmp_path, dev_run, prod_run):
    run = {"dev": dev_run, "prod": prod_run}[stack]
    program = tmp_path / "__main__.py"
    program.write_text(block_after("app-stack") + "\n")
    mocks = PlatformMocks({"my-org/gpu-aks/dev": dict(run.stack_outputs)})
    pulumi.runtime.set_mocks(mocks, project="app", stack="dev", preview=False)
    namespace = runpy.run_path(str(program))
    pools = run.stack_outputs["gpuPools"]
    expected = "gput4" if stack == "dev" else "t4spot"

    def check(_: Any) -> None:
        [job] = mocks.of_type("kubernetes:batch/v1:Job")
        pod = job.inputs["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == pools[expected]["nodeSelector"]
        assert pod["tolerations"] == pools[expected]["tolerations"]
        assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}

    return namespace["job"].urn.apply(check)


def test_the_example_commands_exit_0():
    for line in block_after("tested-commands").splitlines():
        result = subprocess.run(shlex.split(line), cwd=ROOT, capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"{line}\n{result.stdout}{result.stderr}"


def test_user_docs_cite_public_sources_not_internal_document_numbers():
    for path in USER_DOCS:
        text = path.read_text()
        assert not re.search(r"\bseeds?\b", text, re.IGNORECASE), f"{path.relative_to(ROOT)} mentions the seeds"


def test_every_make_target_module_and_path_the_readme_names_exists():
    makefile = (ROOT / "Makefile").read_text()
    for target in set(re.findall(r"\bmake ([a-z-]+)", README)):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), f"make {target}"
    for module in set(re.findall(r"python -m ((?:policies|tools|benchmarks)\.[a-z_]+)", README)):
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), module
    for path in set(re.findall(r"`((?:components|policies|tools|tests|examples|app_sdk|smoke|benchmarks|\.github)/[^`\s]*)`",
                               README)):
        if "<" not in path and "*" not in path:
            assert (ROOT / path).exists(), path


def test_the_readme_and_the_workflows_agree_on_kubelogin():
    from components.kubeconfig import KUBELOGIN_VERSION

    assert f"kubelogin-version: {KUBELOGIN_VERSION}" in README
    for workflow in (ROOT / ".github" / "workflows" / "pr.yaml",
                     ROOT / "examples" / "app-repo" / ".github" / "workflows" / "gpu-policy.yaml"):
        assert f"kubelogin-version: {KUBELOGIN_VERSION}" in workflow.read_text()
