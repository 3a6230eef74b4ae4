"""The azure-native stand-in behind the real Pulumi CLI, driven by a program that uses `pulumi_azure_native`
directly (not gpu-aks): a refusal is an error diagnostic on the resource that names the property, and the
resource is absent from the state; a named pool is replaced delete-first unless the program says otherwise;
a change made in the stand-in's cloud shows in `refresh` and `preview --refresh`; an existing cluster can
be imported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testbed.build import BIN
from testbed.workspace import run_in_own_group
from tests.engine.conftest import Workspace, new_workspace

POOL = "azure-native:containerservice:AgentPool"
CLUSTER_TYPE = "azure-native:containerservice:ManagedCluster"
GROUP = "azure-native:resources:ResourceGroup"
PROGRAM = '''"""A platform of three resources, written by tests/engine/test_azure_standin.py; `pool` config overrides
the pool's arguments, `createFirst` sets delete_before_replace=False, `location` moves everything."""
import json

import pulumi
from pulumi_azure_native import containerservice, resources

config = pulumi.Config()
# One stand-in cloud holds every stack's resources, as one subscription would: each stack names its own.
stack = pulumi.get_stack()
location = config.get("location") or "eastus2"
group = resources.ResourceGroup("group", resource_group_name=f"rg-{stack}", location=location)
cluster = containerservice.ManagedCluster(
    "cluster", resource_group_name=group.name, resource_name_=f"c-{stack}", location=location, dns_prefix="probe",
    identity={"type": "SystemAssigned"}, kubernetes_version="1.37",
    agent_pool_profiles=[{"name": "system", "mode": "System", "vm_size": "Standard_D4ds_v5", "count": 1}])
pool = {"agent_pool_name": "gpu", "vm_size": "Standard_NC4as_T4_v3", "mode": "User", "count": 1,
        "enable_auto_scaling": True, "min_count": 0, "max_count": 2, **json.loads(config.get("pool") or "{}")}
options = pulumi.ResourceOptions(delete_before_replace=False) if config.get_bool("createFirst") else None
containerservice.AgentPool("gpu", resource_group_name=group.name, resource_name_=cluster.name, **pool, opts=options)
'''


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    workspace = new_workspace(tmp_path_factory, "azure-standin")
    workspace.env["PULUMI_DEBUG_COMMANDS"] = "true"
    folder = workspace.root / "azure-probe"
    folder.mkdir()
    (folder / "Pulumi.yaml").write_text("name: azure-probe\nruntime:\n  name: python\n  options:\n"
                                        f"    toolchain: pip\n    virtualenv: {workspace.root / 'venv'}\n")
    (folder / "__main__.py").write_text(PROGRAM)
    return workspace


def _stack(probe: Workspace, stack: str, pool: dict[str, Any] | None = None, create_first: bool = False) -> Path:
    folder = probe.root / "azure-probe"
    if not (probe.state / ".pulumi" / "stacks" / "azure-probe" / f"{stack}.json").exists():
        probe.init(stack, cwd=folder)
    probe.pulumi("config", "set", "pool", json.dumps(pool or {}), "--stack", stack, cwd=folder)
    probe.pulumi("config", "set", "createFirst", str(create_first).lower(), "--stack", stack, cwd=folder)
    return folder


def _up(probe: Workspace, stack: str, folder: Path, events: Path) -> Any:
    return probe.pulumi("up", "--yes", "--skip-preview", "--event-log", str(events), "--stack", stack, cwd=folder,
                        check=False)


def _errors_on(events: Path, urn_suffix: str) -> list[str]:
    found = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        diagnostic = event.get("diagnosticEvent")
        if diagnostic and diagnostic.get("severity") == "error" and diagnostic.get("urn", "").endswith(urn_suffix):
            found.append(diagnostic["message"])
    return found


@pytest.mark.parametrize(("stack", "pool", "words"), [
    ("count-string", {"count": "three"}, "'count' should be of type 'integer' but got a string"),
    ("pool-name", {"agent_pool_name": "GPU_Pool-TooLong"}, "'agentPoolName' does not match expression"),
    ("pool-mode", {"mode": "Worker"}, "mode is invalid: 'Worker'"),
    ("min-over-max", {"min_count": 5, "max_count": 2}, "minCount 5 must be less than or equal to maxCount 2"),
])
def test_a_refused_pool_is_an_error_on_it_naming_the_property_and_is_not_created(
        probe: Workspace, tmp_path: Path, stack: str, pool: dict[str, Any], words: str) -> None:
    folder = _stack(probe, stack, pool)
    events = tmp_path / "events.jsonl"
    up = _up(probe, stack, folder, events)
    assert up.returncode != 0
    errors = _errors_on(events, "::gpu")
    assert any(words in error for error in errors), (errors, up.output[-3000:])
    types = [r["type"] for r in probe.export(stack, cwd=folder)["deployment"].get("resources", [])]
    assert POOL not in types and CLUSTER_TYPE in types


def _pool_steps(probe: Workspace, since: int) -> list[str]:
    return [f"{call['method']} {call.get('id') or call.get('inputs', {}).get('agentPoolName')}"
            for call in probe.calls()[since:] if call.get("type") == POOL and call["method"] in ("Create", "Delete")
            and not call.get("preview")]


def test_a_named_pool_is_replaced_delete_first_unless_the_program_says_otherwise(probe: Workspace,
                                                                                 tmp_path: Path) -> None:
    folder = _stack(probe, "replace")
    assert _up(probe, "replace", folder, tmp_path / "1.jsonl").returncode == 0
    _stack(probe, "replace", {"vm_size": "Standard_NC8as_T4_v3"})
    before = len(probe.calls())
    assert _up(probe, "replace", folder, tmp_path / "2.jsonl").returncode == 0
    steps = _pool_steps(probe, before)
    assert [step.split()[0] for step in steps] == ["Delete", "Create"], steps
    # delete_before_replace=False and a new name: the new pool first, then the old one goes.
    _stack(probe, "replace", {"vm_size": "Standard_NC16as_T4_v3", "agent_pool_name": "gpu2"}, create_first=True)
    before = len(probe.calls())
    assert _up(probe, "replace", folder, tmp_path / "3.jsonl").returncode == 0
    assert [step.split()[0] for step in _pool_steps(probe, before)] == ["Create", "Delete"]
    # The same name, create first: Azure holds one pool of that name, so the create is refused.
    _stack(probe, "replace", {"vm_size": "Standard_NC4as_T4_v3", "agent_pool_name": "gpu2"}, create_first=True)
    up = _up(probe, "replace", folder, tmp_path / "4.jsonl")
    assert up.returncode != 0 and "cannot create already existing resource" in up.output, up.output[-3000:]


def test_a_named_resource_groups_new_location_deletes_the_old_group_first(probe: Workspace, tmp_path: Path) -> None:
    """A location change replaces a resource group (ARM: create-only); its name is the program's, so
    azure-native deletes first, and the engine takes what is in it down before it (the new group cannot be
    created under the same ID while the old one stands)."""
    folder = _stack(probe, "move")
    assert _up(probe, "move", folder, tmp_path / "1.jsonl").returncode == 0
    probe.pulumi("config", "set", "location", "westeurope", "--stack", "move", cwd=folder)
    before = len(probe.calls())
    assert _up(probe, "move", folder, tmp_path / "2.jsonl").returncode == 0
    steps = [(call["method"], call["type"].rsplit(":", 1)[-1]) for call in probe.calls()[before:]
             if call["method"] in ("Create", "Delete") and not call.get("preview")]
    assert steps == [("Delete", "AgentPool"), ("Delete", "ManagedCluster"), ("Delete", "ResourceGroup"),
                     ("Create", "ResourceGroup"), ("Create", "ManagedCluster"), ("Create", "AgentPool")], steps
    group = [r for r in probe.export("move", cwd=folder)["deployment"]["resources"] if r["type"] == GROUP]
    assert [r["outputs"]["location"] for r in group] == ["westeurope"]


def test_a_change_in_the_cloud_shows_in_refresh_and_preview_refresh(probe: Workspace, tmp_path: Path) -> None:
    folder = _stack(probe, "drift")
    assert _up(probe, "drift", folder, tmp_path / "up.jsonl").returncode == 0
    cloud = json.loads(probe.cloud.read_text())
    [pool_id] = [key for key in cloud if key.endswith("/resourceGroups/rg-drift/providers/Microsoft.ContainerService"
                                                      "/managedClusters/c-drift/agentPools/gpu")]
    cloud[pool_id]["properties"]["maxCount"] = 7  # as someone in the portal would
    probe.cloud.write_text(json.dumps(cloud))
    refresh = probe.pulumi("refresh", "--preview-only", "--diff", "--stack", "drift", cwd=folder)
    assert "maxCount" in refresh.output and "7" in refresh.output, refresh.output[-3000:]
    preview = probe.pulumi("preview", "--refresh", "--diff", "--stack", "drift", cwd=folder)
    assert "maxCount" in preview.output and "~ 1 to update" in preview.output.replace("  ", " "), preview.output[-3000:]
    del cloud[pool_id]  # gone behind Pulumi's back
    probe.cloud.write_text(json.dumps(cloud))
    probe.pulumi("refresh", "--yes", "--stack", "drift", cwd=folder)
    assert POOL not in [r["type"] for r in probe.export("drift", cwd=folder)["deployment"]["resources"]]


def test_an_existing_cluster_is_imported(probe: Workspace, tmp_path: Path) -> None:
    folder = _stack(probe, "owner")
    assert _up(probe, "owner", folder, tmp_path / "up.jsonl").returncode == 0
    [cluster] = [r for r in probe.export("owner", cwd=folder)["deployment"]["resources"] if r["type"] == CLUSTER_TYPE]
    probe.init("importer", cwd=folder)
    probe.pulumi("import", CLUSTER_TYPE, "imported", cluster["id"], "--yes", "--generate-code=false",
                 "--stack", "importer", cwd=folder)
    [imported] = [r for r in probe.export("importer", cwd=folder)["deployment"]["resources"]
                  if r["type"] == CLUSTER_TYPE]
    assert imported["id"] == cluster["id"]
    assert imported["inputs"]["resourceName"] == "c-owner" and imported["inputs"]["dnsPrefix"] == "probe"
    assert "fqdn" not in imported["inputs"] and imported["outputs"]["fqdn"] == cluster["outputs"]["fqdn"]


def test_a_user_with_only_build_engines_bin_on_path_deploys_with_nothing_downloaded(probe: Workspace,
                                                                                     tmp_path: Path) -> None:
    """Run as a user would without the tiers' workspace: `build/engines/bin` first on PATH, an empty
    PULUMI_HOME (no plugin cache), ambient plugins allowed. The engine takes the stand-in provider from PATH
    (`make engines` writes its launcher there) instead of downloading azure-native 3.29.0."""
    folder = _stack(probe, "path-only")
    env = {**probe.env, "PULUMI_HOME": str(tmp_path / "empty-pulumi-home")}
    del env["PULUMI_IGNORE_AMBIENT_PLUGINS"]
    up = run_in_own_group([str(BIN / "pulumi"), "up", "--yes", "--skip-preview", "--stack", "path-only"], folder, env,
                          timeout=600)
    assert up.returncode == 0, up.stdout[-3000:]
    assert "using pulumi-resource-azure-native from $PATH" in up.stdout
    assert not (tmp_path / "empty-pulumi-home" / "plugins").exists() or not any(
        (tmp_path / "empty-pulumi-home" / "plugins").glob("resource-azure-native*")), "a provider was installed"
