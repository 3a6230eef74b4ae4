"""The one engine workspace both real tiers run the Pulumi CLI in: a copy of this checkout with the virtualenvs
the runtimes find, a `file://` backend (PULUMI_BACKEND_URL: nothing logs in) and a `PULUMI_HOME` of its own whose
plugin cache holds the providers at the versions the SDKs ask for (the user's global login, plugins and the tracked
stack files stay as they are), and the CLI `make engines` built, first on PATH.

The CLI runs as a subprocess with a timeout, stdout and stderr together as a user sees them. The SDK's
`pulumi.automation.PulumiCommand` runs the same binary but has no timeout and sets `PULUMI_AUTOMATION_API`,
which changes what the CLI prints; the tiers assert on what a user sees."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.overlay_venv import overlay

from .build import BIN, ENGINES, ROOT, install_plugins, missing, read_mains

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
    # in PulumiPlugin.yaml, `venv` in the app examples) each see this checkout's packages (tools/overlay_venv.py,
    # as `make setup` makes policies/venv). Each is a real directory, not a link: Pulumi's host runs
    # `python -m venv VENV` before installing into it (`pulumi install`, or installing the plugin for
    # `pulumi package get-schema ./gpu_aks_plugin`), which refuses a link ("Unable to create directory").
    for venv in ("venv", "policies/venv", "examples/gpu-job/venv", "examples/gpu-inference/venv"):
        overlay(target / venv, ROOT / "venv")
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
    # PULUMI_DEV would silence the engine's warning about a provider version (pkg/v3 host/host.go:400-412), which
    # the tiers check (unlisted_version_warnings).
    for name in ("GPU_AKS_LOCAL_KUBECONFIG", "PULUMI_IGNORE_AMBIENT_PLUGINS", "PULUMI_DEV", CLOUD_ENV):
        env.pop(name, None)
    # The providers come from this workspace's plugin cache at the versions the SDKs ask for, as a user's do,
    # not from the launchers make engines also writes into bin/ (testbed/build.py install_standins); the
    # language hosts are bundled plugins, found beside bin/pulumi (sdk/v3 v3.274.0 plugins.go:2223-2250).
    env["PULUMI_IGNORE_AMBIENT_PLUGINS"] = "true"
    if cloud is not None:
        env[CLOUD_ENV] = str(cloud)
    if kubeconfig is not None:
        env["GPU_AKS_LOCAL_KUBECONFIG"] = str(kubeconfig)
    return env


#: The engine warns when a provider reports an older version than the SDK asks for (pkg/v3 v3.274.0
#: host/host.go:400-412), and carries on.
VERSION_WARNING = re.compile(r"resource plugin (\S+) is expected to have version >=(\S+), but has (\S*);")


def listed_version_differences() -> dict[str, str]:
    """The providers a module builds at another version than the SDK's, by plugin name, with the version they
    report: the pulumi-kubernetes provider the Go module proxy serves (testbed/engines/kubernetes-provider/mains.txt
    stamps it; testbed/README.md lists every behaviour in which it differs from the SDK's 4.34.2)."""
    [provider] = read_mains(ENGINES / "kubernetes-provider")
    [stamp] = [flag for flag in provider.ldflags if flag.startswith("main.providerVersion=")]
    return {"kubernetes": stamp.split("=", 1)[1]}


def unlisted_version_warnings(output: str) -> list[str]:
    """The engine's provider-version warnings in `output` that name a difference not listed: a provider the tiers
    did not expect to differ from its SDK, or one that now reports another version than was listed."""
    listed = listed_version_differences()
    return [found.group(0) for found in VERSION_WARNING.finditer(output)
            if listed.get(found.group(1)) != found.group(3)]


@dataclass
class Result:
    returncode: int
    output: str  # stdout and stderr together, as a user sees them


class PulumiCommandError(AssertionError):
    """A `pulumi` command a test expected to succeed exited non-zero, or the engine warned about a provider version
    nobody listed: the message ends with what it printed."""


def run_in_own_group(command: Sequence[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`command` with stdout and stderr together; past `timeout`, or when the test run is interrupted (Ctrl-C
    reaches only pytest: the command has a session of its own), it and every process it started (the CLI's
    language host and providers, which outlive a killed CLI) are killed before the exception goes on."""
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except BaseException:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(command, process.returncode, output)


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
        install_plugins(Path(space.env["PULUMI_HOME"]), log=lambda _: None)
        return space

    def pulumi(self, *args: str, cwd: Path | None = None, check: bool = True, timeout: int = 600) -> Result:
        """Run the CLI; with `check`, a non-zero exit raises PulumiCommandError. A provider-version warning that
        is not listed raises it whatever the exit code."""
        done = run_in_own_group([str(BIN / "pulumi"), *args, "--non-interactive"], cwd or self.root, self.env, timeout)
        if check and done.returncode != 0:
            raise PulumiCommandError(f"pulumi {' '.join(args)} exited {done.returncode}:\n{done.stdout[-6000:]}")
        unlisted = unlisted_version_warnings(done.stdout)
        if unlisted:
            raise PulumiCommandError(f"pulumi {' '.join(args)}: the engine warned of a provider version "
                                     f"testbed/README.md does not list: {unlisted}\n{done.stdout[-6000:]}")
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


#: What a shell needs from engine_env to run the built CLI in a workspace as the tiers do.
SHELL_VARIABLES = ("PATH", "PULUMI_HOME", "PULUMI_BACKEND_URL", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_SKIP_UPDATE_CHECK",
                   "PULUMI_DIY_BACKEND_NO_LEGACY_WARNING", "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION", "PYTHONPATH",
                   "PULUMI_RUNTIME_VIRTUALENV")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m testbed.workspace DIR`: the README's engine section. Makes the workspace the tiers use in DIR
    (DIR/repo the copy, DIR/state the backend, DIR/pulumi-home) and writes DIR/env, the variables to source."""
    import argparse
    import shlex

    parser = argparse.ArgumentParser(prog="python -m testbed.workspace", description=main.__doc__)
    parser.add_argument("directory", type=Path, help="a folder that does not exist yet, e.g. build/try")
    args = parser.parse_args(argv)
    base = args.directory.absolute()
    if base.exists():
        parser.error(f"{args.directory} exists: name a new folder (or remove it first)")
    if missing():
        parser.error(f"{', '.join(missing())} not built in build/engines: run `make engines`")
    space = Workspace.new(base)
    lines = [f"export {name}={shlex.quote(space.env[name])}" for name in SHELL_VARIABLES]
    (base / "env").write_text("# Written by `python -m testbed.workspace`: `. env` runs the built CLI as the engine "
                              "tiers do.\n" + "\n".join(lines) + "\n")
    print(f"{base / 'repo'}: a copy of this checkout; `. {base / 'env'}` sets the variables")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
