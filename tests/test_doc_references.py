"""No document names a ref, file, section or command the repository lacks (issue #28, item 6).

0.3.1's docs named `@v0.3.0` (a tag this checkout lacks), "the README's "Outputs" section" (there is
none) and `python -m observability` after it moved. These tests read every page a user reads, the
examples' Pulumi programs and the app-repository templates, and check each such name against the
checkout. Placeholders (`<org>`, `v<version>`, `$VAR`) are left alone."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import project_files

PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "policies" / "README.md",
         *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").glob("*/README.md"))]
PROGRAMS = [*sorted((ROOT / "examples").glob("*/Pulumi.yaml")), ROOT / "examples" / "app-repo" / ".pre-commit-config.yaml",
            *sorted((ROOT / "examples" / "app-repo" / ".github" / "workflows").glob("*.yaml"))]
#: `github.com/<owner>/<repo>[/<folder>]@<ref>`: pip's git URLs, `pulumi package add`, `packages:`.
GIT_REF = re.compile(r"github\.com/[^@\s\"'`]+@(?P<ref>[^#\s\"'`)\]]+)")
#: `<file>.md ... "<section>"` or `the README's "<section>"`: a section named by its title.
SECTION = re.compile(r"(?:(?P<file>[\w./-]+\.md)|(?P<readme>the README)'s)[^\"\n]{0,12}?[,(]?\s*\"(?P<section>[^\"\n]{2,60})\"")
#: Modules run with `python -m`; third-party ones are not this repository's to check.
THIRD_PARTY = {"pip", "pytest", "venv", "mkdocs", "twine", "build", "pulumi", "pulumi_policy", "http", "json",
               "pre_commit", "kubernetes_validate", "ruff", "mypy", "site", "pydoc", "cProfile", "timeit"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def checkout_refs() -> set[str]:
    listed = subprocess.run(["git", "-C", str(ROOT), "for-each-ref", "--format=%(refname:short)", "refs/tags",
                             "refs/heads", "refs/remotes"], capture_output=True, text=True, check=True, timeout=60)
    refs = set(listed.stdout.split())
    return refs | {ref.split("/", 1)[1] for ref in refs if "/" in ref} | {"main"}


def is_commit(ref: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]{7,40}", ref)) and subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{ref}^{{commit}}"], capture_output=True, check=False,
        timeout=60).returncode == 0


def missing_refs(text: str) -> list[str]:
    refs = checkout_refs()
    return sorted({m.group("ref") for m in GIT_REF.finditer(text)
                   if not any(c in m.group("ref") for c in "<$") and m.group("ref") not in refs
                   and not is_commit(m.group("ref"))})


def titles(path: Path) -> set[str]:
    """A page's section titles: its headings and its bold paragraph labels (`**Pools during an upgrade.**`)."""
    text = path.read_text()
    found = {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}
    found |= set(re.findall(r"\*\*([^*\n]+?)\.?\*\*", text))
    return {title.strip("` .").lower() for title in found}


def missing_sections(page: Path) -> list[str]:
    missing = []
    for match in SECTION.finditer(page.read_text()):
        target = ROOT / "README.md" if match.group("readme") else None
        if target is None:
            name = match.group("file")
            candidates = [page.parent / name, ROOT / name, ROOT / "docs" / name]
            target = next((c for c in candidates if c.is_file()), None)
            if target is None:
                missing.append(f"{name} (no such file)")
                continue
        if match.group("section").strip(" .").lower() not in titles(target):
            missing.append(f"{_rel(target)}: \"{match.group('section')}\"")
    return missing


def module_exists(module: str) -> bool:
    parts = module.split(".")
    if parts[0] == "gpu_aks_policies":
        parts[0] = "policies"
    base = ROOT.joinpath(*parts)
    return base.with_suffix(".py").is_file() or (base / "__main__.py").is_file()


def missing_modules(text: str) -> list[str]:
    modules = set(re.findall(r"python3? -m ([A-Za-z_][\w.]*)", text))
    return sorted(m for m in modules if m.split(".")[0] not in THIRD_PARTY and not module_exists(m))


@pytest.mark.parametrize("path", [p for p in PAGES + PROGRAMS if p.is_file()], ids=_rel)
def test_every_git_ref_a_document_names_exists_here(path):
    assert missing_refs(path.read_text()) == []


@pytest.mark.parametrize("page", [p for p in PAGES if p.is_file()], ids=_rel)
def test_every_section_a_page_names_exists(page):
    assert missing_sections(page) == []


@pytest.mark.parametrize("page", [p for p in PAGES if p.is_file() and p.name != "CHANGELOG.md"], ids=_rel)
def test_every_python_module_a_page_runs_exists(page):
    """The changelog keeps the commands of past releases (`python -m observability` until 0.3.1)."""
    assert missing_modules(page.read_text()) == []


#: `[text](target)` outside code; mkdocs checks the links of docs/ (`validation:` in mkdocs.yml), this the
#: pages it does not build (README, CONTRIBUTING, policies/README, the examples' READMEs).
LINK = re.compile(r"\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(path: Path) -> set[str]:
    """The `#anchor`s of a page's headings, as GitHub and mkdocs' toc both slug them (lower case, dashes)."""
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in path.read_text().splitlines() if line.startswith("#")}


def broken_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for match in LINK.finditer(text):
        target = match.group("target")
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = page.parent / path if path else page
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target} (no such section)")
    return broken


@pytest.mark.parametrize("page", [p for p in PAGES if p.is_file() and ROOT / "docs" not in p.parents], ids=_rel)
def test_every_link_and_anchor_a_page_outside_the_site_names_exists(page):
    assert missing_source_sections('f"... (docs/platform.md, \\"API server access\\")", (docs/component-package.md, '
                                   '"What is a breaking change"), (docs/gone.md, "Any")') == [
        'docs/component-package.md: "What is a breaking change"', "docs/gone.md (no such file)"]
    assert broken_links(page) == []


#: `(docs/<page>.md, "<section>"`: how the code's messages and comments send a reader to the docs.
SOURCE_SECTION = re.compile(r'\((?P<file>docs/[\w-]+\.md), \\?"(?P<section>[^"\\\n]{2,80})\\?"')
SOURCES = [p for folder in ("components", "policies", "offline", "tools", "observability", "gpu_aks_plugin", "app_sdk")
           for p in project_files(ROOT / folder)]


def missing_source_sections(text: str) -> list[str]:
    missing = []
    for match in SOURCE_SECTION.finditer(text):
        target = ROOT / match.group("file")
        if not target.is_file():
            missing.append(f"{match.group('file')} (no such file)")
        elif match.group("section").strip("` .").lower() not in titles(target):
            missing.append(f"{match.group('file')}: \"{match.group('section')}\"")
    return missing


def test_every_docs_section_the_code_names_exists():
    """Error messages say `(docs/platform.md, "API server access")`: the page and its section must exist."""
    assert {_rel(p): missing for p in SOURCES if (missing := missing_source_sections(p.read_text()))} == {}


def test_the_checks_can_fail(tmp_path):
    """0.3.1's docs/component-package.md lines, each caught."""
    assert missing_refs("pulumi package add github.com/your-org/gpu-aks@v0.3.0") == ["v0.3.0"]
    assert missing_refs("pulumi package add github.com/<org>/gpu-aks/gpu_aks_plugin@v<version>") == []
    page = tmp_path / "page.md"
    page.write_text('The outputs are the outputs contract app stacks read (the README\'s "Outputs" section).\n'
                    'See (docs/platform.md, "API server access") and docs/observe.md, "No such part".\n')
    assert missing_sections(page) == ['README.md: "Outputs"', 'docs/observe.md: "No such part"']
    assert missing_modules("run `python -m observability` or `python -m tools.observability`") == ["observability"]
    (tmp_path / "other.md").write_text("# Four recipes\n")
    page.write_text("[a](other.md#three-recipes), [b](other.md#four-recipes), [c](gone.md), [d](#four-recipes)\n"
                    "```\n[e](gone-in-code.md)\n```\n")
    assert missing_source_sections('f"... (docs/platform.md, \\"API server access\\")", (docs/component-package.md, '
                                   '"What is a breaking change"), (docs/gone.md, "Any")') == [
        'docs/component-package.md: "What is a breaking change"', "docs/gone.md (no such file)"]
    assert broken_links(page) == ["other.md#three-recipes (no such section)", "gone.md (no such file)",
                                  "#four-recipes (no such section)"]
