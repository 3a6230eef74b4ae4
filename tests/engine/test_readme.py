"""The README's "Run the real engine offline" section, run as written (its folder `build/try` moved to a
temporary one): every command exits 0, and the checkout's tracked files and the user's Pulumi home are as they
were."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.engine.conftest import TIER

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Run the real engine offline"


def engine_section_commands() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index(HEADING):]
    start = section.index("```bash\n") + len("```bash\n")
    return section[start:section.index("```", start)]


def _pulumi_home_listing() -> list[tuple[str, float]]:
    home = Path.home() / ".pulumi"
    return sorted((str(path), path.stat().st_mtime) for path in home.rglob("*")) if home.exists() else []


def _tracked_changes() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_the_readme_engine_section_runs_as_written_and_changes_nothing_of_the_users(tmp_path: Path) -> None:
    TIER.require()
    commands = engine_section_commands()
    assert commands.startswith("make engines") and "pulumi login" not in commands
    script = commands.replace("build/try", str(tmp_path / "try"))
    before = (_tracked_changes(), _pulumi_home_listing())
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PULUMI_") and name != "GPU_AKS_LOCAL_KUBECONFIG"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=2400)
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    assert (_tracked_changes(), _pulumi_home_listing()) == before
    assert '"gpuPools"' in done.stdout  # pulumi stack output --json
    assert (tmp_path / "try" / "sdk" / "nodejs" / "gpuCluster.ts").is_file()
