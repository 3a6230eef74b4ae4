"""The README and the documentation pages work as written: the configuration block is a stack file
that previews cleanly, the app-stack snippet runs against the dev and prod contracts, every
`<!-- tested-commands -->` block's commands exit 0, and every make target, module and path they name
exists. A marker (`<!-- stack-file -->`, `<!-- app-stack -->`, `<!-- tested-commands -->`) may sit on
any page; the code block right after it is what the tests run."""

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

#: Every page a user reads: the front page, the documentation site's pages, the contributor notes,
#: the changelogs and the examples' READMEs.
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md")),
         *sorted((ROOT / "examples").glob("*/README.md"))]
USER_DOCS = [*PAGES, ROOT / "CHANGELOG.md", ROOT / "policies" / "README.md", ROOT / "policies" / "CHANGELOG.md"]


def blocks_after(marker: str) -> list[tuple[str, str]]:
    """(page, code block) for every `<!-- marker -->` on every page."""
    found = []
    for page in PAGES:
        if page.is_file():
            for match in re.finditer(rf"<!-- {re.escape(marker)} -->\n```[a-z]*\n(.*?)\n```", page.read_text(), re.DOTALL):
                found.append((str(page.relative_to(ROOT)), match.group(1)))
    return found


def block_after(marker: str) -> str:
    """The one block a marker that appears once marks."""
    found = blocks_after(marker)
    assert len(found) == 1, f"<!-- {marker} --> should mark exactly one code block, found {[page for page, _ in found]}"
    return found[0][1]


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


@pytest.mark.slow
def test_the_example_commands_exit_0():
    blocks = blocks_after("tested-commands")
    assert {"docs/getting-started.md", "docs/operations.md"} <= {page for page, _ in blocks}
    for page, block in blocks:
        for line in block.splitlines():
            result = subprocess.run(shlex.split(line), cwd=ROOT, capture_output=True, text=True, check=False)
            assert result.returncode == 0, f"{page}: {line}\n{result.stdout}{result.stderr}"


def test_user_docs_cite_public_sources_not_internal_document_numbers():
    for path in USER_DOCS:
        text = path.read_text()
        assert not re.search(r"\bseeds?\b", text, re.IGNORECASE), f"{path.relative_to(ROOT)} mentions the seeds"


@pytest.mark.parametrize("page", [page for page in PAGES if page.is_file()], ids=lambda page: str(page.relative_to(ROOT)))
def test_every_make_target_module_and_path_a_page_names_exists(page):
    text = page.read_text()
    makefile = (ROOT / "Makefile").read_text()
    # A command, not prose ("claims make a pod"): `make x` in backticks, or a line that starts with it.
    for target in set(re.findall(r"(?:`|^[ \t]*)make ([a-z-]+)", text, re.MULTILINE)):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), f"make {target}"
    for module in set(re.findall(r"python -m ((?:policies|tools|benchmarks)\.[a-z_]+)", text)):
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), module
    folders = "components|policies|tools|tests|examples|app_sdk|smoke|benchmarks|docs|observability|gpu_aks_plugin|\\.github"
    for path in set(re.findall(rf"`((?:{folders})/[^`\s]*)`", text)):
        path = path.split("::", 1)[0]  # a pytest node id names its file
        if "<" not in path and "*" not in path and "STACK" not in path:
            assert (ROOT / path).exists() or (page.parent / path).exists(), path


def test_the_readme_and_the_workflows_agree_on_kubelogin():
    from components.kubeconfig import KUBELOGIN_VERSION

    assert f"kubelogin-version: {KUBELOGIN_VERSION}" in (ROOT / "docs" / "operations.md").read_text()
    for workflow in (ROOT / ".github" / "workflows" / "pr.yaml",
                     ROOT / "examples" / "app-repo" / ".github" / "workflows" / "gpu-policy.yaml"):
        assert f"kubelogin-version: {KUBELOGIN_VERSION}" in workflow.read_text()
