"""`make engines` (testbed/build.py): a module is rebuilt when its inputs change, and only then."""

from __future__ import annotations

import subprocess
from pathlib import Path

from testbed import build


def _module(tmp_path: Path) -> Path:
    """A module folder in a git checkout, as testbed/engines/kubernetes-provider is: a tracked main, and a
    .gitignore naming what prepare.sh copies in."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    module = tmp_path / "engines" / "provider"
    module.mkdir(parents=True)
    (module / "main.go").write_text("package main\n")
    (module / "prepare.sh").write_text("cp ../schema.json .\n")
    (module / ".gitignore").write_text("/schema.json\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    return module


def test_what_prepare_sh_writes_leaves_the_stamp_as_it_was(tmp_path: Path) -> None:
    module = _module(tmp_path)
    before = build.fingerprint(module, "go1.26")
    (module / "schema.json").write_text('{"version": "written by prepare.sh"}')
    assert build.fingerprint(module, "go1.26") == before
    assert [path.name for path in build.inputs(module)] == [".gitignore", "main.go", "prepare.sh"]


def test_a_changed_input_or_go_version_changes_the_stamp(tmp_path: Path) -> None:
    module = _module(tmp_path)
    before = build.fingerprint(module, "go1.26")
    assert build.fingerprint(module, "go1.27") != before
    (module / "main.go").write_text("package main\n\nfunc main() {}\n")
    assert build.fingerprint(module, "go1.26") != before
    (module / "main.go").write_text("package main\n")
    (module / "new.go").write_text("package main\n")  # untracked, not ignored: an input as soon as it exists
    assert build.fingerprint(module, "go1.26") != before


def test_the_repository_modules_list_no_generated_file_as_an_input() -> None:
    provider = build.ENGINES / "kubernetes-provider"
    assert {"schema.json", "terraform-mapping.json"}.isdisjoint(path.name for path in build.inputs(provider))
    assert "main.go" in {path.name for path in build.inputs(provider)}


def _warning(plugin: str, expected: str, has: str) -> str:
    """The engine's words (pkg/v3 v3.274.0 host/host.go:407-411)."""
    return (f"    warning: resource plugin {plugin} is expected to have version >={expected}, but has {has}; "
            "the wrong version may be on your path, or this may be a bug in the plugin\n")


def test_the_tiers_accept_only_the_provider_version_difference_they_list() -> None:
    from testbed.workspace import listed_version_differences, unlisted_version_warnings

    built = listed_version_differences()["kubernetes"]
    assert built.startswith("4.24.1-dev.") and built.endswith("+f47bc2d6")
    assert unlisted_version_warnings("Updating (dev)\n" + _warning("kubernetes", "4.34.2", built)) == []
    assert unlisted_version_warnings(_warning("azure-native", "3.29.0", "3.28.0")) != []
    assert unlisted_version_warnings(_warning("kubernetes", "4.34.2", "4.33.0")) != []
    assert unlisted_version_warnings(_warning("kubernetes", "4.34.2", "")) != []
