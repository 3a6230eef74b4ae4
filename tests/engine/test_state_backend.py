"""Team state on Azure Blob Storage, as docs/operations.md sets it up: the real CLI's `azblob://` backend
(pulumi `pkg/backend/diy`, gocloud.dev `blob/azureblob`) keeps a stack in a container of Microsoft's emulator,
Azurite (testbed/azurite.py), reached with `AZURE_STORAGE_ACCOUNT` and the `az login` token that
`DefaultAzureCredential` finds, no account key; while one `up` runs, a second is refused by the stack's lock."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testbed import azurite
from testbed.build import BIN
from testbed.tiers import Tier
from tests.engine.conftest import Workspace, new_workspace

CONTAINER = "pulumi-state"
PROJECT = "team-state"
GROUP = "azure-native:resources:ResourceGroup"
PROGRAM = '''"""One resource group; with `hold` config, `up` waits (holding the stack's lock) until `<hold>.release`
exists, after writing `<hold>.waiting` (tests/engine/test_state_backend.py)."""
import pathlib
import time

import pulumi
from pulumi_azure_native import resources

group = resources.ResourceGroup("state", resource_group_name="rg-team-state", location="westeurope")
pulumi.export("group", group.name)
hold = pulumi.Config().get("hold")
if hold:
    pathlib.Path(hold + ".waiting").touch()
    deadline = time.monotonic() + 300
    while not pathlib.Path(hold + ".release").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
'''
AZURITE = Tier("Azure Blob state", azurite.missing)


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, azurite.BlobService, Path]]:
    """A workspace logged in to `azblob://pulumi-state` in a running Azurite, and the program's folder."""
    AZURITE.require()
    space = new_workspace(tmp_path_factory, "state-backend")
    with azurite.blob_service(space.root.parent / "azurite") as blob:
        blob.create_container(CONTAINER)  # az storage container create -n pulumi-state --auth-mode login
        space.env.pop("PULUMI_BACKEND_URL")  # the login below names the backend, as the docs do
        space.env = blob.env(space.env)
        folder = space.root / PROJECT
        folder.mkdir()
        (folder / "Pulumi.yaml").write_text(f"name: {PROJECT}\nruntime:\n  name: python\n  options:\n"
                                            f"    toolchain: pip\n    virtualenv: {space.root / 'venv'}\n")
        (folder / "__main__.py").write_text(PROGRAM)
        login = space.pulumi("login", f"azblob://{CONTAINER}", cwd=folder)
        assert f"azblob://{CONTAINER}" in login.output, login.output
        yield space, blob, folder


def _wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the first up never reached its program:\n{(process.communicate()[0] or '')[-3000:]}")
        time.sleep(0.2)


def test_the_stack_lives_in_the_container_and_a_second_up_is_refused_by_the_lock(
        team: tuple[Workspace, azurite.BlobService, Path]) -> None:
    space, blob, folder = team
    space.pulumi("stack", "init", "team", cwd=folder)
    hold = folder.parent / "hold"
    space.pulumi("config", "set", "hold", str(hold), "--stack", "team", cwd=folder)
    first = subprocess.Popen([str(BIN / "pulumi"), "up", "--yes", "--skip-preview", "--stack", "team",
                              "--non-interactive"], cwd=folder, env=space.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for(Path(f"{hold}.waiting"), first)
        locks = [name for name in blob.blobs(CONTAINER) if name.startswith(f".pulumi/locks/organization/{PROJECT}/team/")]
        assert len(locks) == 1, blob.blobs(CONTAINER)
        second = space.pulumi("up", "--yes", "--skip-preview", "--stack", "team", cwd=folder, check=False)
        assert second.returncode != 0
        assert "the stack is currently locked by 1 lock(s)" in second.output, second.output[-3000:]
        assert locks[0].rsplit("/", 1)[-1] in second.output  # the lock's blob, for `pulumi cancel`
    finally:
        Path(f"{hold}.release").touch()
        output = first.communicate(timeout=300)[0]
    assert first.returncode == 0, output[-3000:]

    exported = space.export("team", cwd=folder)
    [group] = [r for r in exported["deployment"]["resources"] if r["type"] == GROUP]
    names = blob.blobs(CONTAINER)
    assert not [name for name in names if name.startswith(".pulumi/locks/")], names  # released after the up
    stored = json.loads(blob.read(CONTAINER, f".pulumi/stacks/{PROJECT}/team.json"))
    assert [r["urn"] for r in stored["checkpoint"]["latest"]["resources"] if r["type"] == GROUP] == [group["urn"]]
    # The token came from the `az login` session, through DefaultAzureCredential: no account key was set.
    assert blob.az_calls() and all(call.startswith("account get-access-token") for call in blob.az_calls())
    assert "AZURE_STORAGE_KEY" not in space.env
