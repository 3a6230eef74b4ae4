"""Second runs under the real engine: a GPU pool's new VM size replaces the pool, the new one created before
the old one goes (the program's own `delete_before_replace=False`: azure-native asks to delete a named
resource first); a change that would replace the cluster is stopped before any step, with the reason;
turning `protect` off is said; a secret set with `pulumi config set --secret` reaches the provider and is
printed nowhere."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from tests.engine.conftest import FAST, Workspace

POOL = "azure-native:containerservice:AgentPool"
PLATFORM_TYPES = ("azure-native:containerservice:ManagedCluster", "azure-native:resources:ResourceGroup")
SECRET = "cost-centre-4711-do-not-print"


def _deploy_dev_copy(workspace: Workspace, stack: str) -> list[str]:
    """A stack of its own with dev's settings, deployed with the pack; returns the args that address it."""
    shutil.copyfile(workspace.root / "Pulumi.dev.yaml", workspace.root / f"Pulumi.{stack}.yaml")
    workspace.init(stack, config=FAST)
    args = ["--policy-pack", "policies", "--stack", stack]
    workspace.pulumi("up", "--yes", "--skip-preview", *args)
    return args


def _pool_steps(calls: list[dict], pool: str) -> list[str]:
    return [call["method"] for call in calls if call.get("type") == POOL and call["method"] in ("Create", "Delete")
            and call.get("urn", "").endswith(f"::{pool}") and not call.get("preview")]


@pytest.fixture(scope="module")
def replace_stack(workspace: Workspace) -> list[str]:
    return _deploy_dev_copy(workspace, "replace")


def test_a_gpu_pool_vm_size_change_replaces_it_creating_the_new_pool_first(workspace: Workspace,
                                                                           replace_stack: list[str]) -> None:
    stack = replace_stack[-1]
    workspace.pulumi("config", "set", "--path", "gpu-aks:gpuPools[0].vmSize", "Standard_NC8as_T4_v3", "--stack", stack)
    preview = workspace.pulumi("preview", "--diff", *replace_stack)
    assert "this run replaces the GPU pool" in preview.output, preview.output[-3000:]
    assert "+-" in preview.output and "gput4-pool" in preview.output
    before = len(workspace.calls())
    workspace.pulumi("up", "--yes", "--skip-preview", *replace_stack)
    # Create-before-delete, although the stand-in asks to delete first as azure-native does for a named
    # resource (`Diff`: deleteBeforeReplace unless `__createBeforeDelete`): only the program's own
    # `delete_before_replace=spec.keeps_azure_name` (False for a suffixed Azure name) orders it so.
    replace_diff = [c for c in workspace.calls()[before:] if c["method"] == "Diff" and c.get("type") == POOL
                    and c["urn"].endswith("::gput4-pool") and c.get("replaces")]
    assert replace_diff and all(c["deleteBeforeReplace"] for c in replace_diff), replace_diff
    assert _pool_steps(workspace.calls()[before:], "gput4-pool") == ["Create", "Delete"]
    [pool] = [r for r in workspace.export(stack)["deployment"]["resources"]
              if r["type"] == POOL and r["urn"].endswith("::gput4-pool")]
    assert pool["inputs"]["vmSize"] == "Standard_NC8as_T4_v3"


def test_a_change_that_replaces_the_cluster_is_stopped_with_the_reason(workspace: Workspace,
                                                                        replace_stack: list[str]) -> None:
    stack = replace_stack[-1]
    workspace.pulumi("config", "set", "azure-native:location", "westus3", "--stack", stack)
    before = len(workspace.calls())
    for command in (["preview"], ["up", "--yes", "--skip-preview"]):
        run = workspace.pulumi(*command, *replace_stack, check=False)
        assert run.returncode != 0
        assert "eastus2" in run.output and "westus3" in run.output, run.output[-3000:]
        assert "replace" in run.output
    # Nothing happened to the cluster or its group: no step, only the engine's preview of one.
    steps = [c for c in workspace.calls()[before:] if c["method"] in ("Create", "Update", "Delete")
             and not c.get("preview")]
    assert [(c["method"], c["urn"]) for c in steps if c.get("type") in PLATFORM_TYPES] == []
    workspace.pulumi("config", "set", "azure-native:location", "eastus2", "--stack", stack)


def test_turning_protect_off_is_said(workspace: Workspace, replace_stack: list[str]) -> None:
    stack = replace_stack[-1]
    workspace.pulumi("config", "set", "--path", "gpu-aks:cluster.protect", "true", "--stack", stack)
    workspace.pulumi("up", "--yes", "--skip-preview", *replace_stack)
    workspace.pulumi("config", "set", "--path", "gpu-aks:cluster.protect", "false", "--stack", stack)
    preview = workspace.pulumi("preview", *replace_stack)
    assert "gpu-aks:cluster.protect: true (the last update) -> false" in preview.output, preview.output[-3000:]


def test_a_secret_reaches_the_provider_and_is_printed_nowhere(workspace: Workspace) -> None:
    stack = "secret"
    shutil.copyfile(workspace.root / "Pulumi.dev.yaml", workspace.root / f"Pulumi.{stack}.yaml")
    workspace.init(stack, config=FAST)
    workspace.pulumi("config", "set", "--secret", "--path", "gpu-aks:cluster.tags.costCenter", SECRET,
                     "--stack", stack)
    assert SECRET not in (workspace.root / f"Pulumi.{stack}.yaml").read_text()
    before = len(workspace.calls())
    outputs = [workspace.pulumi("preview", "--diff", "--policy-pack", "policies", "--stack", stack).output,
               workspace.pulumi("up", "--yes", "--skip-preview", "--diff", "--policy-pack", "policies",
                                "--stack", stack).output,
               workspace.pulumi("stack", "output", "--json", "--stack", stack).output,
               workspace.pulumi("stack", "export", "--stack", stack).output]
    for output in outputs:
        assert SECRET not in output
    assert all(SECRET.encode() not in path.read_bytes() for path in workspace.state.rglob("*") if path.is_file())
    # The provider received it, marked secret: a secret `gpu-aks:cluster` sends the cluster's tags as one
    # secret (the record keeps a digest of each secret, never the value).
    digest = hashlib.sha256(json.dumps({"costCenter": SECRET}, sort_keys=True).encode()).hexdigest()[:16]
    created = [c for c in workspace.calls()[before:] if c["method"] == "Create" and c.get("type") in PLATFORM_TYPES
               and not c["preview"]]
    assert [c["inputs"]["tags"] for c in created] == [f"[secret sha256:{digest}]"] * 2
