"""What the release workflow (.github/workflows/release.yaml) needs to know, from the repository's files.

    python3 tools/release.py check            the versions agree; exit 1 naming each file that disagrees
    python3 tools/release.py plan             version=, tag= and new=true|false (no tag v<version> yet), for $GITHUB_OUTPUT
    python3 tools/release.py notes [VERSION]  that version's CHANGELOG.md section, the release notes

One version for the program, the policy pack and the two packages: `pyproject.toml` (gpu-aks-policies),
`app_sdk/pyproject.toml` (gpu-aks-app), `policies/PulumiPolicy.yaml`, `policies/__init__.py`, and the
top entries of `CHANGELOG.md` and `policies/CHANGELOG.md`. Standard library only (it runs before
anything is installed). Exit codes: 0 fine, 1 the files disagree or the version has no CHANGELOG
section, 2 bad usage.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: A CHANGELOG entry's heading: `## 0.2.0 (2026-11-22)` (the date may be missing on old entries).
HEADING = re.compile(r"^## (?P<version>\d+\.\d+\.\d+\S*)(?: \((?P<date>\d{4}-\d{2}-\d{2})\))?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class VersionSource:
    path: str
    version: str | None


def _toml_version(root: Path, path: str) -> VersionSource:
    return VersionSource(path, tomllib.loads((root / path).read_text())["project"]["version"])


def _line_version(root: Path, path: str, pattern: str) -> VersionSource:
    match = re.search(pattern, (root / path).read_text(), re.MULTILINE)
    return VersionSource(path, match.group(1) if match else None)


def _changelog_top(root: Path, path: str) -> VersionSource:
    match = HEADING.search((root / path).read_text())
    return VersionSource(f"{path} (top entry)", match.group("version") if match else None)


def version_sources(root: Path = ROOT) -> list[VersionSource]:
    return [
        _toml_version(root, "pyproject.toml"),
        _toml_version(root, "app_sdk/pyproject.toml"),
        _line_version(root, "policies/PulumiPolicy.yaml", r"^version:\s*['\"]?([^'\"\s]+)"),
        _line_version(root, "policies/__init__.py", r"^__version__\s*=\s*['\"]([^'\"]+)['\"]"),
        _changelog_top(root, "CHANGELOG.md"),
        _changelog_top(root, "policies/CHANGELOG.md"),
        # The README's closing line ("Version X ([CHANGELOG](CHANGELOG.md))"): 0.4.0 shipped saying 0.3.1.
        _line_version(root, "README.md", r"^.*\bVersion ([0-9][^\s(]*) \(\[CHANGELOG\]"),
    ]


def disagreements(root: Path = ROOT) -> list[str]:
    sources = version_sources(root)
    version = sources[0].version
    return [f"{source.path}: {source.version or 'no version found'} (pyproject.toml says {version})"
            for source in sources[1:] if source.version != version]


def changelog_section(text: str, version: str) -> str | None:
    """The body of `## <version> ...` up to the next `## ` heading, stripped; None if there is none."""
    headings = list(HEADING.finditer(text))
    for index, heading in enumerate(headings):
        if heading.group("version") == version:
            end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
            return text[heading.end():end].strip()
    return None


def existing_tags(root: Path = ROOT) -> set[str]:
    result = subprocess.run(["git", "-C", str(root), "tag", "--list"], capture_output=True, text=True, check=False)
    return set(result.stdout.split()) if result.returncode == 0 else set()


def plan(version: str, tags: Iterable[str]) -> dict[str, str]:
    """What a push to main does: release `v<version>` unless that tag exists."""
    tag = f"v{version}"
    return {"version": version, "tag": tag, "new": "false" if tag in set(tags) else "true"}


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 tools/release.py", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "plan", "notes"])
    parser.add_argument("version", nargs="?", help="for notes: the version (default: pyproject.toml's)")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv) if argv is not None else None)
    version = version_sources(args.root)[0].version or ""
    if args.command == "check":
        problems = disagreements(args.root)
        if changelog_section((args.root / "CHANGELOG.md").read_text(), version) is None:
            problems.append(f"CHANGELOG.md: no section '## {version} (YYYY-MM-DD)'")
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        if not problems:
            print(f"version {version}: pyproject.toml, app_sdk, the pack and both CHANGELOGs agree")
        return 1 if problems else 0
    if args.command == "plan":
        for key, value in plan(version, existing_tags(args.root)).items():
            print(f"{key}={value}")
        return 0
    notes = changelog_section((args.root / "CHANGELOG.md").read_text(), args.version or version)
    if notes is None:
        print(f"error: CHANGELOG.md has no section for {args.version or version}", file=sys.stderr)
        return 1
    print(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
