"""What the release workflow (.github/workflows/release.yaml) needs to know, from the repository's files.

    python3 tools/release.py check            the versions agree; exit 1 naming each file that disagrees
    python3 tools/release.py plan             version=, tag= and new=true|false (no tag v<version> yet), for $GITHUB_OUTPUT
    python3 tools/release.py notes [VERSION]  that version's CHANGELOG.md section, the release notes
    python3 tools/release.py dist OUTDIR      build what a release ships and prove it installs and runs

One version for the program, the policy pack and the two packages: `pyproject.toml` (gpu-aks-policies),
`app_sdk/pyproject.toml` (gpu-aks-app), `policies/PulumiPolicy.yaml`, `policies/__init__.py`, and the
top entries of `CHANGELOG.md` and `policies/CHANGELOG.md`. Standard library only (it runs before
anything is installed). Exit codes: 0 fine, 1 the files disagree or the version has no CHANGELOG
section (or `dist` failed), 2 bad usage.

`dist` is the release workflow's build job and a test of `make test` alike (tests/test_release.py), so
the tag the workflow makes is on distributions CI has built and run: the sdist and wheel of both
packages (gpu-aks-policies from the repository root, gpu-aks-app from app_sdk/), `twine check --strict`
on each, then the wheels into one fresh virtualenv and the sdists into another, each running the
checker and the explainer over a GPU pod and the app helper placing one. Needs `build` and `twine`
(requirements-dev.txt; the workflow installs them) and the package index for PyYAML.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
import venv
from collections.abc import Iterable, Sequence
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


#: The packages a release ships: (the folder its pyproject.toml is in, its distribution name as built).
PACKAGES = ((".", "gpu_aks_policies"), ("app_sdk", "gpu_aks_app"))
#: A platform's outputs, as `--platform` and the app helper read them.
PLATFORM = Path("tests") / "fixtures" / "doctor" / "platform-prod.json"
#: A GPU pod that tolerates none of the platform's taints: the checker flags it, the explainer says why.
UNTOLERATED = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
#: What the installed app helper runs: a pod spec for one GPU on the platform, from its outputs.
PLACE = """
import json, sys
from gpu_aks_app import GpuRequest, place
placement = place(json.load(open(sys.argv[1])), GpuRequest())
spec = placement.pod_spec([{"name": "c", "image": "i"}])
assert spec["tolerations"] and spec["nodeSelector"], spec
print("placed on", placement.pool)
"""


class DistError(Exception):
    """A step of `dist` failed: what ran and what it printed."""


def _run(command: Sequence[str | Path], expect: int = 0, cwd: Path | None = None) -> str:
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, check=False, cwd=cwd)
    if result.returncode != expect:
        raise DistError(f"`{' '.join(map(str, command))}` exited {result.returncode}, not {expect}:\n"
                        f"{(result.stdout + result.stderr)[-3000:]}")
    return result.stdout


def build_distributions(root: Path, out: Path, version: str) -> list[Path]:
    """The sdist and wheel of each package, checked as PyPI checks them (`twine check --strict`)."""
    built = []
    for folder, name in PACKAGES:
        _run([sys.executable, "-m", "build", "--outdir", out, root / folder])
        built += [out / f"{name}-{version}.tar.gz", out / f"{name}-{version}-py3-none-any.whl"]
    missing = [path.name for path in built if not path.is_file()]
    if missing:
        raise DistError(f"the build wrote no {', '.join(missing)} (is every version {version}? `release.py check`)")
    _run([sys.executable, "-m", "twine", "check", "--strict", *built])
    return built


def try_distributions(root: Path, distributions: Sequence[Path], work: Path) -> list[str]:
    """Install the wheels into one fresh virtualenv and the sdists into another; in each, run what a user
    runs first. Returns a line per virtualenv."""
    platform = root / PLATFORM
    pod = work / "pod.json"
    pod.write_text(json.dumps(UNTOLERATED))
    said = []
    for kind, suffix in (("wheels", ".whl"), ("sdists", ".tar.gz")):
        bin_dir = work / f"venv-{kind}" / "bin"
        venv.EnvBuilder(with_pip=True, clear=True).create(bin_dir.parent)
        _run([bin_dir / "python", "-m", "pip", "install", "--disable-pip-version-check", "-q",
              *[path for path in distributions if path.name.endswith(suffix)]])
        checked = _run([bin_dir / "gpu-aks-check", pod], expect=1)
        explained = _run([bin_dir / "gpu-aks-explain", "--platform", platform, pod], expect=1)
        placed = _run([bin_dir / "python", "-c", PLACE, platform], cwd=work)
        if "gpu-pods-tolerate-gpu-taint" not in checked or "does not tolerate" not in explained:
            raise DistError(f"the installed {kind} do not judge the pod as this checkout does:\n{checked}\n{explained}")
        said.append(f"{kind}: gpu-aks-check and gpu-aks-explain flag an untolerated GPU pod; the app helper "
                    f"{placed.strip()}")
    return said


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 tools/release.py", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "plan", "notes", "dist"])
    parser.add_argument("version", nargs="?",
                        help="for notes: the version (default: pyproject.toml's); for dist: the folder to write")
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
    if args.command == "dist":
        if not args.version:
            parser.error("dist needs the folder to write the distributions to")
        out = Path(args.version).resolve()
        try:
            built = build_distributions(args.root, out, version)
            with tempfile.TemporaryDirectory(prefix="gpu-aks-dist-") as work:
                said = try_distributions(args.root, built, Path(work))
        except DistError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print("\n".join([*(f"built {path.name}" for path in built), *said]))
        return 0
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
