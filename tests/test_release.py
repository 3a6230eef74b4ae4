"""Releases are made by the repository: the release workflow is valid and does what CONTRIBUTING.md
says, the versions agree, the distributions build and pass `twine check`, and no install line in the
docs names a ref this checkout does not have."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tools import release

BIN = Path(sys.executable).parent
WORKFLOWS = ROOT / ".github" / "workflows"


def _schema_check(path: Path) -> None:
    result = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def _steps(job: dict) -> str:
    return "\n".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in job["steps"])


# --- The workflows -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["release.yaml", "docs.yaml"])
def test_the_workflows_pass_the_github_workflow_schema(name):
    _schema_check(WORKFLOWS / name)


def test_the_release_workflow_tags_releases_builds_and_publishes_when_enabled():
    workflow = yaml.safe_load((WORKFLOWS / "release.yaml").read_text())
    on = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert on["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read"}, "write access only where a job needs it"
    jobs = workflow["jobs"]
    assert "tools/release.py check" in _steps(jobs["plan"]) and "tools/release.py plan" in _steps(jobs["plan"])
    assert jobs["plan"]["steps"][0]["with"]["fetch-depth"] == 0, "the plan must see the existing tags"
    for name in ("build", "release"):
        needs = jobs[name]["needs"]
        assert "plan" in (needs if isinstance(needs, list) else [needs])
    assert jobs["build"]["if"] == "${{ needs.plan.outputs.new == 'true' }}"
    # The command CI runs (test_the_release_is_built_checked_installed_and_run below), nothing else.
    assert "python3 tools/release.py dist dist" in _steps(jobs["build"]) and "python -m build" not in _steps(jobs["build"])
    steps = _steps(jobs["release"])
    assert 'git tag -a "$TAG"' in steps and 'git push origin "$TAG"' in steps
    assert "tools/release.py notes" in steps and "--notes-file release-notes.md" in steps
    assert jobs["release"]["permissions"] == {"contents": "write"}
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}, "trusted publishing, no stored token"
    assert "vars.PYPI_PUBLISH" in publish["if"], "only where the repository enables it"
    assert any(str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish@") for step in publish["steps"])
    assert "release" in publish["needs"], "never on PyPI without the tag and the GitHub release"


def test_the_pages_workflow_builds_strictly_and_deploys_from_main_only():
    workflow = yaml.safe_load((WORKFLOWS / "docs.yaml").read_text())
    jobs = workflow["jobs"]
    assert "mkdocs build --strict" in _steps(jobs["build"])
    assert "requirements-docs.txt" in _steps(jobs["build"])
    assert "actions/deploy-pages@" in _steps(jobs["deploy"])
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert "pull_request" in jobs["deploy"]["if"]


# --- One version ------------------------------------------------------------------------------


def test_the_version_the_changelogs_and_the_pack_agree():
    """When cutting a release, bump every file `tools/release.py check` names and add the CHANGELOG entry."""
    assert release.disagreements() == []
    version = release.version_sources()[0].version
    notes = release.changelog_section((ROOT / "CHANGELOG.md").read_text(), version)
    assert notes, f"CHANGELOG.md has no text under '## {version}'"
    assert release.HEADING.search((ROOT / "CHANGELOG.md").read_text()).group("date"), "the top entry is dated"
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), "check"], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_a_version_bumped_in_one_file_only_is_named(tmp_path):
    for path in ("pyproject.toml", "app_sdk/pyproject.toml", "policies/PulumiPolicy.yaml", "policies/__init__.py",
                 "CHANGELOG.md", "policies/CHANGELOG.md", "README.md"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text((ROOT / path).read_text())
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(re.sub(r'^version = ".*"$', 'version = "9.9.9"', pyproject.read_text(), flags=re.MULTILINE))
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "release.py"), "check", "--root", str(tmp_path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "policies/PulumiPolicy.yaml:" in result.stderr and "(pyproject.toml says 9.9.9)" in result.stderr
    assert "CHANGELOG.md: no section '## 9.9.9 (YYYY-MM-DD)'" in result.stderr
    assert f"README.md: {release.version_sources()[0].version} (pyproject.toml says 9.9.9)" in result.stderr


def test_the_readme_gives_the_package_version():
    [readme] = [source for source in release.version_sources() if source.path == "README.md"]
    assert readme.version == release.version_sources()[0].version


def test_the_release_notes_are_one_changelog_section():
    text = "# Changelog\n\nintro\n\n## 1.1.0 (2027-01-02)\n\nNew things.\n\n- a\n\n## 1.0.0 (2026-12-01)\n\nOld.\n"
    assert release.changelog_section(text, "1.1.0") == "New things.\n\n- a"
    assert release.changelog_section(text, "1.0.0") == "Old."
    assert release.changelog_section(text, "2.0.0") is None


def test_a_push_releases_only_a_version_without_a_tag():
    assert release.plan("0.3.0", {"v0.2.0"}) == {"version": "0.3.0", "tag": "v0.3.0", "new": "true"}
    assert release.plan("0.2.0", {"v0.2.0"})["new"] == "false"


# --- The distributions --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_release_is_built_checked_installed_and_run(tmp_path):
    """What the release workflow's build job runs before it tags (`tools/release.py dist`), on a clean
    export of the committed tree: both packages' sdists and wheels pass `twine check --strict`, install
    into fresh virtualenvs, and their checker, explainer and app helper run. Building leaves nothing in
    app_sdk/ (setuptools left build/ and an egg-info there, which then read as product code)."""
    source = tmp_path / "src"
    source.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    for name in filter(None, archive.decode().split("\0")):
        path = ROOT / name
        if path.is_file() and not path.is_symlink():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes(path.read_bytes())
    dist = tmp_path / "dist"
    done = subprocess.run([sys.executable, str(source / "tools" / "release.py"), "dist", str(dist)], capture_output=True,
                          text=True, check=False, cwd=source)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "wheels: gpu-aks-check and gpu-aks-explain flag" in done.stdout and "sdists: " in done.stdout
    version = release.version_sources()[0].version
    assert sorted(path.name for path in dist.iterdir()) == sorted(
        [f"gpu_aks_policies-{version}.tar.gz", f"gpu_aks_policies-{version}-py3-none-any.whl",
         f"gpu_aks_app-{version}.tar.gz", f"gpu_aks_app-{version}-py3-none-any.whl"])
    names = zipfile.ZipFile(dist / f"gpu_aks_policies-{version}-py3-none-any.whl").namelist()
    assert "gpu_aks_policies/check.py" in names and "gpu_aks_policies/workloads/__init__.py" in names
    assert not [n for n in names if n.startswith(("tests/", "components/", "tools/"))], "the light package only"
    with tarfile.open(dist / f"gpu_aks_policies-{version}.tar.gz") as tar:
        assert f"gpu_aks_policies-{version}/policies/README.md" in tar.getnames(), "the PyPI page's text"
    app = zipfile.ZipFile(dist / f"gpu_aks_app-{version}-py3-none-any.whl").namelist()
    assert {"gpu_aks_app.py", "gpu_aks_app_testing.py"} <= set(app) and not [n for n in app if n.startswith("tests/")]
    assert sorted(path.name for path in (source / "app_sdk").iterdir()) == [
        "README.md", "gpu_aks_app.py", "gpu_aks_app_testing.py", "pyproject.toml"], "the build left files in app_sdk/"


# --- Refs the docs name ---------------------------------------------------------------------------

#: Files whose install lines, pre-commit `rev:` and workflow refs users copy.
REF_DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "policies" / "README.md",
            *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").glob("*/README.md")),
            *sorted((ROOT / "examples").glob("*/requirements.txt")),
            ROOT / "examples" / "app-repo" / ".pre-commit-config.yaml", ROOT / "app_sdk" / "gpu_aks_app.py",
            *sorted((ROOT / "examples" / "app-repo" / ".github" / "workflows").glob("*.yaml"))]
REF_PATTERNS = [
    re.compile(r"git\+https://github\.com/[^@\s\"'`]+@(?P<ref>[^#\s\"'`]+)"),  # pip install ... @ git+https://...@REF
    re.compile(r"^\s*rev:\s*['\"]?(?P<ref>[^'\"\s#]+)", re.MULTILINE),         # pre-commit
    re.compile(r"^\s*GPU_AKS_REF:\s*['\"]?(?P<ref>[^'\"\s#]+)", re.MULTILINE),  # the app-repo workflow
]


def named_refs(text: str) -> set[str]:
    return {match.group("ref") for pattern in REF_PATTERNS for match in pattern.finditer(text)}


def checkout_refs() -> set[str]:
    result = subprocess.run(["git", "-C", str(ROOT), "for-each-ref", "--format=%(refname:short)",
                             "refs/tags", "refs/heads", "refs/remotes"], capture_output=True, text=True, check=False)
    refs = set(result.stdout.split())
    return refs | {ref.split("/", 1)[1] for ref in refs if "/" in ref} | {"main"}


def test_the_ref_scanner_finds_what_users_copy():
    text = ('pip install "gpu-aks-policies @ git+https://github.com/<org>/gpu-aks@v9.9.9"\n'
            "    rev: v8.8.8  # pin\n  GPU_AKS_REF: v7.7.7\n"
            "gpu-aks-app @ git+https://github.com/<org>/gpu-aks@main#subdirectory=app_sdk\n")
    assert named_refs(text) == {"v9.9.9", "v8.8.8", "v7.7.7", "main"}


def test_no_doc_names_a_ref_this_checkout_does_not_have():
    """Until the first release tag exists, install lines use @main (or a commit); `<placeholders>` are fine."""
    refs = checkout_refs()
    missing = []
    for path in REF_DOCS:
        if not path.is_file():
            continue
        for ref in sorted(named_refs(path.read_text())):
            if "<" in ref or "$" in ref or ref in refs:
                continue
            is_commit = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{ref}^{{commit}}"],
                                       capture_output=True, check=False).returncode == 0
            if not (re.fullmatch(r"[0-9a-f]{7,40}", ref) and is_commit):
                missing.append(f"{path.relative_to(ROOT)}: {ref}")
    assert not missing, f"refs this checkout does not have (tags: {sorted(r for r in refs if r.startswith('v'))}): {missing}"
