"""Build the owners' programs the engine tiers run, from the Go modules declared under testbed/engines/.

    python -m testbed.build build     build what changed (a second run takes seconds), printing progress
    python -m testbed.build status    say what is built, or why the engine tiers will be skipped

Every `testbed/engines/<name>/` with a `go.mod` is one Go module whose `mains.txt` lists its binaries, one a line:
`DEST NAME PACKAGE [LDFLAGS...]`, DEST `bin` (-> build/engines/bin/NAME, on PATH for the tiers) or
`libexec` (-> build/engines/libexec/NAME, started by a launcher); `ldflags.txt`, if present, adds its
linker flags to every one of them (a version stamp). `engines/<name>/prepare.sh`, if
present, runs first in that folder. `testbed/engines/<name>/files.txt` copies files the module's own dependencies
ship (`DEST NAME MODULE PATH`, PATH inside the module as the Go module proxy serves it), for the scripts a
Pulumi distribution carries beside its binaries. The Go build uses only the module proxy and go.sum
(`-mod=readonly`, `GOTOOLCHAIN=local`: no toolchain download), with `-trimpath`. A module's outputs are
rebuilt only when an input file of its folder (tracked by git, or untracked and not ignored) or `go version` changed
(stamps in build/engines/stamps/).

A `testbed/engines/<name>/` with a `package-lock.json` is an npm package set (Azurite, Microsoft's Azure Storage
emulator): `npm ci --ignore-scripts` installs exactly its lock into build/engines/node/<name>/, from the npm
registry npm is configured with, again only when a file of its folder changed. Without npm on PATH it is left out
with one line, and the tests that need it say so (they fail under CI).

`testbed/standins/` holds the stand-in providers (Python, run by this repository's virtualenv);
`testbed/standins/launchers.txt` names each provider's launcher (`pulumi-resource-NAME SCRIPT`), written to
build/engines/bin/ and build/engines/plugins/NAME/, and installed into build/engines/pulumi-home's plugin cache at
the version the Python SDK asks for (each test workspace installs them into its own PULUMI_HOME the same way). A launcher starts
`libexec/pulumi-resource-NAME` instead when GPU_AKS_LOCAL_KUBECONFIG is set and a module built the real program there.
testbed/README.md describes the layout.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ROOT / "testbed" / "engines"
OUT = ROOT / "build" / "engines"
BIN = OUT / "bin"
LIBEXEC = OUT / "libexec"
STAMPS = OUT / "stamps"
NODE_PACKAGES = OUT / "node"
STANDINS = ROOT / "testbed" / "standins"
#: One folder per provider plugin the tiers serve, holding its launcher (`pulumi plugin install --file` takes it).
PLUGINS = OUT / "plugins"
#: The PULUMI_HOME the README's engine section uses: its plugin cache holds those launchers at the versions the
#: Python SDKs ask for. Each test workspace installs them into a PULUMI_HOME of its own the same way.
PULUMI_HOME = OUT / "pulumi-home"
DESTS = {"bin": BIN, "libexec": LIBEXEC}
#: What the engine tiers need in bin/ and plugins/ (tests/engine/conftest.py checks for them).
REQUIRED = ("bin/pulumi", "bin/pulumi-language-python", "bin/pulumi-language-python-exec",
            "bin/pulumi-resource-azure-native", "bin/pulumi-resource-kubernetes",
            "plugins/azure-native/pulumi-resource-azure-native", "plugins/kubernetes/pulumi-resource-kubernetes")


class BuildError(Exception):
    """A module that cannot be built; the message says which and why."""


@dataclass(frozen=True)
class Main:
    dest: str
    name: str
    package: str
    ldflags: tuple[str, ...]


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    if not path.is_file():
        return []
    found = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        words = shlex.split(line, comments=True)
        if words:
            found.append((number, words))
    return found


def read_mains(module: Path) -> list[Main]:
    mains = []
    for number, words in _lines(module / "mains.txt"):
        if len(words) < 3 or words[0] not in DESTS:
            raise BuildError(f"{module / 'mains.txt'}:{number}: expected `bin|libexec NAME PACKAGE [LDFLAGS...]`, "
                             f"got {' '.join(words)!r}")
        mains.append(Main(words[0], words[1], words[2], tuple(words[3:])))
    return mains


def go_version() -> str:
    go = shutil.which("go")
    if go is None:
        raise BuildError("Go is not installed (no `go` on PATH): the engines are built from Go modules; "
                         "install Go 1.26 or later and run `make engines` again")
    return subprocess.run([go, "version"], capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def inputs(folder: Path) -> list[Path]:
    """The files of a module folder the build reads: what git tracks there, or would (untracked and not ignored).
    What the build writes into the folder is not an input: prepare.sh's copies of the provider's schema.json and
    terraform-mapping.json are ignored (the folder's .gitignore), or they would change the stamp on every run
    and rebuild the module each time. Outside a git checkout, every file of the folder counts."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                            cwd=folder, capture_output=True, text=True, timeout=60)
    if listed.returncode != 0:
        return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(path for name in filter(None, listed.stdout.split("\0")) if (path := folder / name).is_file())


def fingerprint(folder: Path, extra: str) -> str:
    digest = hashlib.sha256(extra.encode())
    for path in inputs(folder):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _outputs(module: Path) -> list[Path]:
    outputs = [DESTS[main.dest] / main.name for main in read_mains(module)]
    outputs += [DESTS[words[0]] / words[1] for _, words in _lines(module / "files.txt")]
    return outputs


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    # Never fetch a Go toolchain (a prebuilt binary) and never leave go.sum incomplete behind the build's back.
    env.update(GOTOOLCHAIN="local", GOFLAGS="-mod=readonly -buildvcs=false")
    return env


def _run(command: list[str], cwd: Path, what: str) -> str:
    done = subprocess.run(command, cwd=cwd, env=_go_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{what} failed ({' '.join(command)} in {cwd.relative_to(ROOT)}):\n"
                         f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


def build_module(module: Path, version: str, log: Callable[[str], None] = print) -> bool:
    """Build one module's mains and copy its files; False when its stamp says nothing changed."""
    key = fingerprint(module, version)
    stamp = STAMPS / f"{module.name}.sha256"
    outputs = _outputs(module)
    if stamp.is_file() and stamp.read_text().strip() == key and all(path.exists() for path in outputs):
        log(f"==> testbed/engines/{module.name}: up to date ({len(outputs)} programs)")
        return False
    started = time.monotonic()
    if (module / "prepare.sh").is_file():
        log(f"==> testbed/engines/{module.name}: prepare.sh")
        _run(["sh", "prepare.sh"], module, f"testbed/engines/{module.name}/prepare.sh")
    shared_ldflags = [word for _, words in _lines(module / "ldflags.txt") for word in words]
    for main in read_mains(module):
        target = DESTS[main.dest] / main.name
        target.parent.mkdir(parents=True, exist_ok=True)
        log(f"==> testbed/engines/{module.name}: go build {main.package} -> {target.relative_to(ROOT)}")
        begun = time.monotonic()
        command = ["go", "build", "-trimpath", "-o", str(target)]
        if main.ldflags or shared_ldflags:
            command += ["-ldflags", " ".join([*main.ldflags, *shared_ldflags])]
        _run(command + [main.package], module, f"building {main.name}")
        log(f"    {main.name}: {time.monotonic() - begun:.0f} s")
    for number, words in _lines(module / "files.txt"):
        if len(words) != 4 or words[0] not in DESTS:
            raise BuildError(f"{module / 'files.txt'}:{number}: expected `bin|libexec NAME MODULE PATH`")
        dest, name, dependency, inside = words
        directory = _run(["go", "list", "-m", "-f", "{{.Dir}}", dependency], module, f"locating {dependency}").strip()
        source = Path(directory) / inside
        if not directory or not source.is_file():
            raise BuildError(f"{module / 'files.txt'}:{number}: {dependency} has no file {inside}")
        target = DESTS[dest] / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        shutil.copyfile(source, target)
        target.chmod(0o755)
        log(f"==> testbed/engines/{module.name}: {target.relative_to(ROOT)} from {dependency}/{inside}")
    STAMPS.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key + "\n")
    log(f"==> testbed/engines/{module.name}: built in {time.monotonic() - started:.0f} s")
    return True


def install_packages(folder: Path, log: Callable[[str], None] = print) -> bool:
    """`npm ci` of one npm package set into build/engines/node/<name>/; False when nothing changed or no npm."""
    npm = shutil.which("npm")
    if npm is None:
        log(f"==> testbed/engines/{folder.name}: not installed (no `npm` on PATH; the tests that need it say so)")
        return False
    key = fingerprint(folder, "npm ci")
    stamp = STAMPS / f"{folder.name}.sha256"
    target = NODE_PACKAGES / folder.name
    if stamp.is_file() and stamp.read_text().strip() == key and (target / "node_modules").is_dir():
        log(f"==> testbed/engines/{folder.name}: up to date (npm)")
        return False
    started = time.monotonic()
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(folder / name, target / name)
    log(f"==> testbed/engines/{folder.name}: npm ci -> {target.relative_to(ROOT)}")
    # No package's install script runs: the set needs none (Azurite's one, protobufjs's postinstall, only
    # checks versions), and a script is code from outside the lock's hashes.
    _run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], target,
         f"installing testbed/engines/{folder.name}")
    STAMPS.mkdir(parents=True, exist_ok=True)
    stamp.write_text(key + "\n")
    log(f"==> testbed/engines/{folder.name}: installed in {time.monotonic() - started:.0f} s")
    return True


def launcher(name: str, script: str, python: str) -> str:
    real = LIBEXEC / name
    return (
        "#!/bin/sh\n"
        f"# Written by `python -m testbed.build build` (testbed/standins/launchers.txt): the stand-in {script},\n"
        "# or the real program a module built into libexec/ when GPU_AKS_LOCAL_KUBECONFIG names a local cluster.\n"
        f'if [ -n "${{GPU_AKS_LOCAL_KUBECONFIG:-}}" ] && [ -x {shlex.quote(str(real))} ]; then\n'
        f'  exec {shlex.quote(str(real))} "$@"\n'
        "fi\n"
        # The stand-ins read this checkout's own modules (offline/azure_answers.py, the shipped catalog).
        f'GPU_AKS_CHECKOUT={shlex.quote(str(ROOT))} exec {shlex.quote(python)} '
        f'{shlex.quote(str(LIBEXEC / "standins" / script))} "$@"\n')


def install_standins(python: str, log: Callable[[str], None] = print) -> None:
    """Copy the stand-ins to libexec/standins/ and write each launcher into plugins/<plugin>/ and bin/.

    The tiers set PULUMI_IGNORE_AMBIENT_PLUGINS (testbed/workspace.py), so the engine finds their providers as it
    finds a user's, in the plugin cache at the version the SDK asks for (install_plugins): a plugin on PATH
    would be used whatever version was asked (sdk/v3 v3.274.0 go/common/workspace/plugins.go:2211-2281). The
    copies in bin/ serve whoever runs the CLI with only build/engines/bin first on PATH and an empty plugin
    cache: the engine takes them as ambient plugins ("using pulumi-resource-NAME from $PATH") and nothing is
    downloaded."""
    target = LIBEXEC / "standins"
    target.mkdir(parents=True, exist_ok=True)
    for source in sorted(STANDINS.glob("*.py")):
        shutil.copyfile(source, target / source.name)
    # The shapes azure-native's Check holds requests to, from the SDK and REST models in this virtualenv
    # (azure_schema.py): built once here, since importing the SDK's modules takes seconds per command.
    subprocess.run([python, str(STANDINS / "azure_schema.py"), str(target / "azure-schema.json")], check=True,
                   timeout=300)
    for number, words in _lines(STANDINS / "launchers.txt"):
        if len(words) != 2 or not words[0].startswith("pulumi-resource-") or not (STANDINS / words[1]).is_file():
            raise BuildError(f"{STANDINS / 'launchers.txt'}:{number}: expected `pulumi-resource-NAME SCRIPT` with "
                             "SCRIPT in testbed/standins/")
        for path in (PLUGINS / words[0].removeprefix("pulumi-resource-") / words[0], BIN / words[0]):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(launcher(words[0], words[1], python))
            path.chmod(0o755)
    # kubelogin, the exec credential plugin an AKS kubeconfig runs, is a program on PATH, not a provider.
    kubelogin = BIN / "kubelogin"
    kubelogin.parent.mkdir(parents=True, exist_ok=True)
    kubelogin.write_text("#!/bin/sh\n# Written by `python -m testbed.build build`: the kubelogin stand-in.\n"
                         f'exec {shlex.quote(python)} {shlex.quote(str(target / "kubelogin.py"))} "$@"\n')
    kubelogin.chmod(0o755)
    log(f"==> testbed/standins: launchers in {PLUGINS.relative_to(ROOT)}/ and {BIN.relative_to(ROOT)}/, kubelogin in "
        f"{BIN.relative_to(ROOT)}/ "
        f"(python {python})")


def sdk_plugin_versions() -> dict[str, str]:
    """The provider version each installed Pulumi SDK asks for, by plugin name: its package's pulumi-plugin.json,
    which Pulumi's Python host reads to tell the engine (pulumi_azure_native: azure-native 3.29.0)."""
    versions = {}
    for dist in importlib.metadata.distributions():
        for file in dist.files or []:
            if file.name == "pulumi-plugin.json" and len(file.parts) == 2:
                manifest = json.loads(Path(str(dist.locate_file(file))).read_text())
                if manifest.get("resource") and manifest.get("name") and manifest.get("version"):
                    versions[manifest["name"]] = manifest["version"]
    return versions


def install_plugins(pulumi_home: Path, log: Callable[[str], None] = print) -> None:
    """Install each launcher of plugins/ into the plugin cache of `pulumi_home` at the version the SDK asks for,
    with the built CLI's own `pulumi plugin install resource NAME VERSION --file FOLDER` (nothing is downloaded).
    Installing a source-based plugin (`pulumi package get-schema ./gpu_aks_plugin`) first installs every package
    its SDKs ask for that the cache lacks (pkg/v3 v3.274.0 cmd/pulumi/packageinstallation/packageinstallation.go:
    1024-1067), so the cache must hold them here, where nothing can be downloaded."""
    versions = sdk_plugin_versions()
    env = {**os.environ, "PULUMI_HOME": str(pulumi_home), "PULUMI_SKIP_UPDATE_CHECK": "true", "NO_COLOR": "1"}
    for folder in sorted(path for path in PLUGINS.iterdir() if path.is_dir()):
        if folder.name not in versions:
            raise BuildError(f"no installed Pulumi SDK asks for a provider named {folder.name} "
                             f"(found: {', '.join(sorted(versions)) or 'none'}); run `make setup`")
        done = subprocess.run([str(BIN / "pulumi"), "plugin", "install", "resource", folder.name,
                               versions[folder.name], "--file", str(folder), "--reinstall"],
                              env=env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise BuildError(f"installing {folder.name} {versions[folder.name]} into {pulumi_home} failed:\n"
                             f"{(done.stderr or done.stdout).strip()}")
    log(f"==> plugins {', '.join(f'{name} {versions[name]}' for name in sorted(versions) if (PLUGINS / name).is_dir())}"
        f" installed in {pulumi_home}")


def modules() -> list[Path]:
    return sorted(path.parent for path in ENGINES.glob("*/go.mod"))


def package_sets() -> list[Path]:
    return sorted(path.parent for path in ENGINES.glob("*/package-lock.json"))


def build(log: Callable[[str], None] = print) -> None:
    started = time.monotonic()
    version = go_version()
    log(f"==> {version}; modules: {', '.join(m.name for m in modules())}")
    for module in modules():
        build_module(module, version, log)
    for folder in package_sets():
        install_packages(folder, log)
    # The virtualenv's interpreter by its own path (not resolved): its site-packages hold grpc and pulumi.
    install_standins(os.path.abspath(sys.executable), log)
    install_plugins(PULUMI_HOME, log)
    log(f"==> engines ready in {BIN.relative_to(ROOT)} ({time.monotonic() - started:.0f} s)")


def missing() -> list[str]:
    return [name for name in REQUIRED if not (OUT / name).exists()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["build", "status"])
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            build()
            return 0
        print(go_version())
    except BuildError as error:
        print(f"engines: {error}", file=sys.stderr)
        return 2
    absent = missing()
    print(f"missing in {OUT.relative_to(ROOT)}: {', '.join(absent)}" if absent else f"built: {OUT.relative_to(ROOT)}")
    return 1 if absent else 0


if __name__ == "__main__":
    sys.exit(main())
