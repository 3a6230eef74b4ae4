"""A virtualenv that sees another one's packages: `python -m tools.overlay_venv TARGET [BASE]`.

`make setup` gives the policy pack `policies/venv` this way (BASE is the checkout's `venv`), and the engine tiers
give each Pulumi project of their copy of the checkout one. The Pulumi CLI names the virtualenv of a project in its
runtime options (`virtualenv: venv`), and Pulumi's Python host runs `python -m venv VENV` over it before installing
anything (`pulumi install`; sdk/v3 v3.274.0 python/toolchain/pip.go:483-491), which fails over a symbolic link
("Unable to create directory"). So TARGET is a real virtualenv, made without pip, whose site-packages hold one
.pth file that adds BASE's site-packages (and so the .pth files there, such as this checkout's editable install).
`python -m venv` over it keeps that file, and pip inside it finds BASE's packages already installed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PTH = "gpu-aks-overlay.pth"


def site_packages(venv: Path) -> Path:
    """The one site-packages folder of a virtualenv made by this Python (lib/pythonX.Y/site-packages)."""
    found = sorted((venv / "lib").glob("python3*/site-packages"))
    if len(found) != 1:
        raise SystemExit(f"overlay_venv: {venv} is not a virtualenv with one site-packages folder (found {found})")
    return found[0]


def overlay(target: Path, base: Path) -> None:
    """Make `target` a virtualenv that sees `base`'s packages; a link or an older overlay there is replaced."""
    if target.is_symlink():
        target.unlink()
    # The interpreter the base virtualenv was made from, so both have the same lib/pythonX.Y.
    python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([python, "-m", "venv", "--without-pip", str(target)], check=True, timeout=300)
    (site_packages(target) / PTH).write_text(f"import site; site.addsitedir({str(site_packages(base))!r})\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.overlay_venv", description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="the virtualenv to make, e.g. policies/venv")
    parser.add_argument("base", type=Path, nargs="?", default=ROOT / "venv",
                        help="the virtualenv whose packages it sees (default: this checkout's venv)")
    args = parser.parse_args(argv)
    overlay(args.target.absolute(), args.base.absolute())
    return 0


if __name__ == "__main__":
    sys.exit(main())
