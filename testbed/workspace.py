"""The one engine workspace both real tiers run the Pulumi CLI in: a copy of this checkout with a virtualenv
the runtimes find, a `file://` backend and `PULUMI_HOME` of its own (the user's global login and the tracked
stack files stay as they are), and the CLI `make engines` built, first on PATH.

The CLI runs as a subprocess with a timeout, stdout and stderr together as a user sees them. The SDK's
`pulumi.automation.PulumiCommand` runs the same binary but has no timeout and sets `PULUMI_AUTOMATION_API`,
which changes what the CLI prints; the tiers assert on what a user sees."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .build import BIN, ROOT

PASSPHRASE = "engine-tier-passphrase"
#: Names the stand-in Azure's "cloud" file (testbed/standins/azure_cloud.py, testbed/README.md).
CLOUD_ENV = "GPU_AKS_AZURE_STANDIN_STATE"


def copy_checkout(target: Path) -> None:
    """Copy this checkout's files (tracked, and untracked but not ignored) into `target`, with a virtualenv
    for the runtimes: what the engine tiers and benchmarks/engine_preview.py run the real CLI in."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True, timeout=60).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    # The virtualenvs the runtimes name (`virtualenv: venv` in Pulumi.yaml and PulumiPolicy.yaml, `../venv`
    # in PulumiPlugin.yaml, `venv` in the app examples) are one virtualenv that sees this checkout's packages
    # (a .pth file adds its site-packages, with their own .pth files). It is a real directory, not a link:
    # `pulumi package get-schema ./gpu_aks_plugin` installs the plugin, and the toolchain's first step,
    # `python -m venv ../venv`, refuses a link ("Unable to create directory").
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip",
                    str(target / "venv")], check=True, timeout=120)
    site_packages = next((ROOT / "venv" / "lib").glob("python3*/site-packages"))
    for pth in (target / "venv" / "lib").glob("python3*/site-packages"):
        (pth / "gpu-aks-checkout.pth").write_text(f"import site; site.addsitedir({str(site_packages)!r})\n")
    for link in ("policies/venv", "examples/gpu-job/venv", "examples/gpu-inference/venv"):
        (target / link).symlink_to(target / "venv")
    # The copy's modules compiled as `make setup` compiles the checkout's: where PYTHONDONTWRITEBYTECODE is set
    # (this project's machines) nothing else writes their bytecode, and every run of the program and of the
    # policy pack compiled its modules again (0.1-0.15 s of the pack's start), which a user's second run never does.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", r"(^|/)(venv|\.git)(/|$)", str(target)],
                   check=True, capture_output=True, timeout=300)


def engine_env(root: Path, state: Path, record: Path | None = None, kubeconfig: Path | None = None,
               cloud: Path | None = None) -> dict[str, str]:
    """The environment the real CLI runs with over a copy at `root`: bin/ first on PATH, a file:// backend at
    `state`, nothing downloaded, the stand-ins' calls recorded in `record`, the stand-in Azure's resources
    kept in `cloud` (GPU_AKS_AZURE_STANDIN_STATE); with `kubeconfig`, the stand-in Azure hands out that local
    API server and the real pulumi-kubernetes provider talks to it."""
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_HOME": str(root.parent / "pulumi-home"),
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DIY_BACKEND_NO_LEGACY_WARNING": "true",
        # A plugin the engine cannot find is an error, not a download.
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_BACKEND_URL": f"file://{state}",
        # The app examples import the app helper, which their requirements.txt installs from app_sdk/.
        "PYTHONPATH": str(root / "app_sdk"),
        # The Python that runs dynamic providers (pulumi-resource-pulumi-python) where the program is not
        # Python: a YAML program using the component package (docs/component-package.md).
        "PULUMI_RUNTIME_VIRTUALENV": str(root / "venv"),
        "NO_COLOR": "1",
    }
    if record is not None:
        env["GPU_AKS_STANDIN_LOG"] = str(record)
    for name in ("GPU_AKS_LOCAL_KUBECONFIG", "PULUMI_IGNORE_AMBIENT_PLUGINS", CLOUD_ENV):
        env.pop(name, None)
    if cloud is not None:
        env[CLOUD_ENV] = str(cloud)
    if kubeconfig is not None:
        env["GPU_AKS_LOCAL_KUBECONFIG"] = str(kubeconfig)
    return env


@dataclass
class Result:
    returncode: int
    output: str  # stdout and stderr together, as a user sees them


class PulumiCommandError(AssertionError):
    """A `pulumi` command a test expected to succeed exited non-zero: the message ends with what it printed."""


class Workspace:
    """A copy of the repository with a `file://` backend; `pulumi(...)` runs the built CLI in it. Made by
    `new(base)`: `base/repo` is the copy, `base/state` the backend, `base/standin-calls.jsonl` what the
    stand-ins were asked."""

    def __init__(self, root: Path, kubeconfig: Path | None = None) -> None:
        self.root = root
        self.state = root.parent / "state"
        self.record = root.parent / "standin-calls.jsonl"
        #: The stand-in Azure's resources, as ARM would return them (testbed/standins/azure_cloud.py).
        self.cloud = root.parent / "azure-cloud.json"
        self.env = engine_env(root, self.state, self.record, kubeconfig, self.cloud)

    @classmethod
    def new(cls, base: Path, kubeconfig: Path | None = None) -> Workspace:
        root = base / "repo"
        root.mkdir(parents=True)
        copy_checkout(root)
        space = cls(root, kubeconfig)
        space.state.mkdir()
        space.pulumi("login", f"file://{space.state}")
        return space

    def pulumi(self, *args: str, cwd: Path | None = None, check: bool = True, timeout: int = 600) -> Result:
        """Run the CLI; with `check`, a non-zero exit raises PulumiCommandError."""
        done = subprocess.run([str(BIN / "pulumi"), *args, "--non-interactive"], cwd=cwd or self.root,
                              env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        if check and done.returncode != 0:
            raise PulumiCommandError(f"pulumi {' '.join(args)} exited {done.returncode}:\n{done.stdout[-6000:]}")
        return Result(done.returncode, done.stdout)

    def calls(self) -> list[dict[str, Any]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def export(self, stack: str, cwd: Path | None = None) -> dict[str, Any]:
        return json.loads(self.pulumi("stack", "export", "--stack", stack, cwd=cwd).output)

    def outputs(self, stack: str, cwd: Path | None = None) -> dict[str, Any]:
        return json.loads(self.pulumi("stack", "output", "--json", "--stack", stack, cwd=cwd).output)

    def init(self, stack: str, cwd: Path | None = None, config: Sequence[tuple[str, str]] = (),
             extra: Sequence[str] = ()) -> None:
        """`pulumi stack init` and one `config set --path` per pair."""
        self.pulumi("stack", "init", stack, cwd=cwd)
        for key, value in config:
            self.pulumi("config", "set", "--path", key, value, "--stack", stack, *extra, cwd=cwd)
