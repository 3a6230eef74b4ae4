"""The documentation: the README is a front page that links the site, the site builds with
`mkdocs build --strict` (broken links and anchors fail it), every page is in the navigation, and the
generated pages are what their generators print today."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tools import docs

BIN = Path(sys.executable).parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text()


class _MkdocsLoader(yaml.SafeLoader):
    """mkdocs.yml names Python callables (`!!python/name:`); reading the nav needs none of them."""


_MkdocsLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def nav_pages() -> list[str]:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_MkdocsLoader)  # a SafeLoader subclass
    pages: list[str] = []
    stack = [config["nav"]]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            pages.append(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return pages


def mkdocs_build(docs_dir: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    config = site_dir.parent / "mkdocs.yml"
    text = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs_dir}")
    config.write_text(text.replace("site_dir: site", f"site_dir: {site_dir}"))
    return subprocess.run([str(BIN / "mkdocs"), "build", "--strict", "-f", str(config)], capture_output=True, text=True,
                          check=False, env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(BIN), "HOME": str(site_dir.parent)})


# --- The front page -------------------------------------------------------------------------------


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 150
    assert "```mermaid" in README, "a diagram"
    assert "make preview" in README and "make test" in README, "the two commands"
    assert "## Three ways to run the rules" in README
    table = README.split("## Three ways to run the rules", 1)[1].split("\n\n", 2)[1]
    assert len([line for line in table.splitlines() if line.startswith("| ")]) == 2 + 3, "one table, three rows"


def test_the_readme_links_every_page_of_the_site():
    linked = set(re.findall(r"\]\(docs/([a-z-]+\.md)\)", README))
    assert set(nav_pages()) - {"index.md"} <= linked
    for page in linked:
        assert (DOCS / page).is_file(), page


def test_times_are_stated_with_the_machine_they_were_measured_on():
    for text in (README, (DOCS / "getting-started.md").read_text()):
        assert "2-core, 24 GiB" in text
        assert re.search(r"first install .*\d+ s|first `make setup`.*\| \d+ s", text, re.DOTALL)
        assert re.search(r"`make test`.*\d+ min \d+ s", text)


# --- The site -------------------------------------------------------------------------------------


def test_every_page_is_in_the_navigation_and_every_navigation_entry_exists():
    pages = nav_pages()
    on_disk = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(pages) == on_disk


def test_the_pages_state_the_contract_version_this_release_writes():
    # docs/app-teams.md said version 2 while the outputs said 3 (issue 50).
    from gpu_aks_policies.contract import CONTRACT_VERSION
    stated = {page.name: version for page in sorted((ROOT / "docs").glob("*.md"))
              for version in re.findall(r"contract version (\d+)|contractVersion (\d+)\)", page.read_text())}
    assert stated, "no page states the contract version"
    assert {name: "".join(version) for name, version in stated.items() if "".join(version) != str(CONTRACT_VERSION)} == {}


def test_the_architecture_page_has_a_mermaid_diagram_of_components_rules_and_the_contract():
    text = (DOCS / "architecture.md").read_text()
    diagram = text.split("```mermaid", 1)[1].split("```", 1)[0]
    for node in ("AksCluster", "GpuAgentPool", "GpuDevicePlugin", "GpuAdmissionPolicy", "pod_rules", "pool_rules", "contract"):
        assert node in diagram, node


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path):
    result = mkdocs_build(DOCS, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "operations" / "index.html").is_file()


@pytest.mark.slow
def test_a_broken_link_fails_the_build(tmp_path):
    broken = tmp_path / "docs"
    shutil.copytree(DOCS, broken)
    page = broken / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the missing page](missing.md) and [an anchor](operations.md#no-such-anchor).\n")
    result = mkdocs_build(broken, tmp_path / "site")
    assert result.returncode != 0
    assert "missing.md" in result.stdout + result.stderr


# --- Generated pages --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", docs.GENERATED, ids=lambda page: page.page)
def test_a_generated_page_is_what_its_generator_prints(page):
    text = page.render()
    if text is None:
        pytest.skip(f"{page.generator} is not on this branch yet")
    assert (ROOT / page.page).is_file(), f"{page.page} is missing: run `python -m tools.docs`"
    assert (ROOT / page.page).read_text() == text, f"{page.page} is stale: run `python -m tools.docs`"


def test_every_generated_page_is_in_the_navigation_or_linked():
    pages = set(nav_pages())
    for page in docs.GENERATED:
        name = page.page.removeprefix("docs/")
        assert name in pages or name.endswith(".json"), name


def sample_page() -> str:
    return "# Sample\n\ngenerated"


def test_the_staleness_check_reports_a_stale_page_and_skips_an_unmerged_generator(tmp_path):
    page = docs.GeneratedPage("docs/sample.md", "tests.test_docs:sample_page")
    missing = docs.GeneratedPage("docs/later.md", "tools.not_merged_yet:reference_markdown")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "sample.md").write_text("# Sample\n\nwritten by hand\n")
    assert docs.stale_pages([page, missing], root=tmp_path) == (
        ["docs/sample.md"], ["docs/later.md <- tools.not_merged_yet:reference_markdown"])
    (tmp_path / "docs" / "sample.md").write_text(page.render() or "")
    assert docs.stale_pages([page], root=tmp_path) == ([], [])


# --- The habits the docs promise --------------------------------------------------------------------


def test_ci_installs_from_the_repository_and_runs_lint_and_every_test():
    script = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install" in script and "prometheus" in script, "promtool for the alert-rule tests"
    commands = [line.strip() for line in script.splitlines() if line.strip().startswith("make ")]
    assert commands == ["make setup", "make lint", "make engines", "make test"]
    assert "export CI=true" in script, "the engine and cluster tiers fail, not skip, without their engines"


def test_mypy_does_not_follow_into_the_generated_pulumi_sdks():
    import tomllib

    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    skipped = {module for override in mypy["overrides"] if override.get("follow_imports") == "skip"
               for module in override["module"]}
    assert {"pulumi_azure_native.*", "pulumi_kubernetes.*"} <= skipped


def test_make_help_lists_every_target():
    result = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    phony = re.search(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert phony
    listed = {line.split()[0] for line in result.stdout.splitlines()[1:] if line.strip()}
    assert listed == set(phony.group(1).split())


def test_a_not_supported_page_names_every_kind_of_gpu_size_gpu_aks_refuses():
    """Issue 28: a platform team sees what gpu-aks does not do before adopting it."""
    from gpu_aks_policies.catalog import UNSUPPORTED_GPU_SKUS

    page = (DOCS / "not-supported.md").read_text()
    for series in {sku.reason.split(" ")[0].removesuffix("-series") for sku in UNSUPPORTED_GPU_SKUS.values()}:
        assert series in page, series
    topics = ("MI300X", "NV A10 v5", "Windows", "managementMode", "GPU Operator", "helm.v3.Release", "Azure/AKS#5161",
              "azure-only.md")
    for topic in topics:
        assert topic in page, topic


def test_the_architecture_page_and_the_observability_page_agree_on_managed_prometheus():
    """0.3.1's architecture page said the managed Prometheus stack is not installed; observe.md said it is."""
    architecture = " ".join((DOCS / "architecture.md").read_text().split())
    assert "which this project does not install" not in architecture
    assert "gpu-aks installs both when `observability.enabled` is true" in architecture
    assert "`enabled` | boolean | `false`" in (DOCS / "configuration.md").read_text()
