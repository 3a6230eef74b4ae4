"""Pulumi's Python language host, as far as it finds and starts a plugin, for the tests.

Held to copies of the owner's code (tests/fixtures/pulumi/, pulumi/pulumi at
1b5949891b3cefcb9974752b24a5ecef0acc86c8):
- `PluginProject` (sdk/go/common/workspace/project.go) is what PulumiPlugin.yaml is read into. Its fields
  are the only keys Pulumi reads; any other key (gpu-aks 0.3.1's `main:`) is dropped without a word.
- `RunPlugin` (sdk/python/cmd/pulumi-language-python/main.go) runs `python <plugin dir> ARGS` when the
  folder has a `__main__.py`, else `python -m pulumi.run.plugin <pyproject name> ARGS`, with the
  interpreter of the manifest's virtualenv (relative to the plugin folder) and the consumer's folder as
  working directory.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pulumi"
MANIFEST = "PulumiPlugin.yaml"


def plugin_project_fields() -> frozenset[str]:
    """The YAML keys of `PluginProject`, read from the copy of its Go declaration."""
    return frozenset(re.findall(r'yaml:"(\w+)', (FIXTURES / "project.go.PluginProject.txt").read_text()))


def plugin_dirs(root: Path) -> list[Path]:
    """Every folder of the repository that Pulumi would treat as a plugin: one holding PulumiPlugin.yaml."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", f"*{MANIFEST}"],
                            cwd=root, capture_output=True, text=True, check=True, timeout=60).stdout.split()
    return sorted((root / name).parent for name in listed if Path(name).name == MANIFEST)


def load_manifest(plugin_dir: Path) -> dict[str, Any]:
    manifest = yaml.safe_load((plugin_dir / MANIFEST).read_text())
    assert isinstance(manifest, dict), f"{plugin_dir / MANIFEST} is not a mapping"
    return manifest


def interpreter(plugin_dir: Path) -> str:
    """The python the host runs: the manifest's virtualenv, taken relative to the plugin folder. Where it
    has not been built (the CLI would build it from requirements.txt; nothing is installed here), the
    interpreter running the tests, which has the same requirements installed."""
    runtime = load_manifest(plugin_dir)["runtime"]  # ProjectRuntimeInfo: a name, or {name, options}
    options = (runtime.get("options") if isinstance(runtime, dict) else None) or {}
    virtualenv = options.get("virtualenv")
    if virtualenv:
        # normpath, not resolve(): venv/bin/python is a link, and the venv's site-packages follow its path.
        python = Path(os.path.normpath(plugin_dir / virtualenv / "bin" / "python"))
        if python.is_file():
            return str(python)
    return sys.executable


def run_plugin_command(plugin_dir: Path, args: list[str]) -> list[str]:
    """RunPlugin's command line for a resource plugin (not a policy pack)."""
    python = interpreter(plugin_dir)
    if (plugin_dir / "__main__.py").exists():
        return [python, str(plugin_dir), *args]
    with (plugin_dir / "pyproject.toml").open("rb") as file:  # else: "plugin is not runnable"
        name = tomllib.load(file)["project"]["name"]
    return [python, "-m", "pulumi.run.plugin", name, *args]
