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
