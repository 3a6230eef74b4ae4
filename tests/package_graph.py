"""The program's resource graph under the mock runtime, in a form two runs can be compared by.

A run's URNs depend on the mock engine, so each resource is named by `type::name`, its parent and
provider likewise, and its dependencies as a sorted list of those names; inputs are the masked wire
inputs. `tests/fixtures/package/program-graph.json` holds the graph of the program as it was before
`GpuCluster` existed (gpu-aks 0.2's composition in `__main__.py`); `test_component_package.py`
checks today's program against it. When the graph changes on purpose (a new resource, a changed
input), review the diff of:

    venv/bin/python -m tests.package_graph

which rewrites the snapshot from today's program.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from components.pools import RENAMED_TYPES
from offline.mockrun import ProgramRun, RegisteredResource

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "fixtures" / "package" / "program-graph.json"
STACK_PARENT = "<stack>"
GPU_CLUSTER = "gpu-aks:index:GpuCluster"

#: A stack that exercises what dev and prod leave out: the smoke test, a Spot CPU pool, zones, mixed
#: MIG, a driver-less pool, an admin group, no admission policy grant.
FULL_STACK: dict[str, Any] = {"config": {
    "azure-native:location": "westeurope",
    "gpu-aks:cluster": {"name": "gpu-full", "skuTier": "Standard", "upgradeChannel": "rapid",
                        "aadProfile": {"adminGroupObjectIDs": ["44444444-4444-4444-4444-444444444444"]},
                        "kubeloginMode": "spn", "tags": {"team": "platform"},
                        "autoScalerProfile": {"scale-down-unneeded-time": "7m",
                                              "daemonset-eviction-for-empty-nodes": True}},
    "gpu-aks:access": {"rolePropagationSeconds": 60},
    "gpu-aks:systemPool": {"availabilityZones": ["1", "2"], "onlyCriticalAddonsEnabled": False},
    "gpu-aks:cpuPools": [{"name": "batch", "vmSize": "Standard_D8ds_v5", "scaleSetPriority": "Spot",
                          "nodeTaints": ["workload=batch:NoSchedule"], "nodeLabels": {"tier": "batch"}}],
    "gpu-aks:gpuPools": [
        {"name": "h100", "vmSize": "Standard_ND96isr_H100_v5", "gpuInstanceProfile": "MIG3g", "minCount": 1, "maxCount": 4,
         "nodeTaints": ["nvidia.com/gpu=present:NoSchedule"], "availabilityZones": [1]},
        {"name": "t4", "vmSize": "Standard_NC4as_T4_v3", "maxSurge": 1},
        {"name": "byo", "vmSize": "Standard_NC24ads_A100_v4", "gpuProfile": {"driver": "None"}},
    ],
    "gpu-aks:devicePlugin": {"migStrategy": "mixed"},
    "gpu-aks:admissionPolicy": {"enabled": False},
    "gpu-aks:smokeTest": {"enabled": True},
}}


def resource_graph(run: ProgramRun, root: str | None = None) -> list[dict[str, Any]]:
    """Every registered resource, named by type and name, sorted. `root` names a GpuCluster that
    stands in for the stack: it is left out and its children's parent is the stack. A renamed
    component type is written as it was (`RENAMED_TYPES`): an alias carries deployed pools over."""
    by_urn: dict[str, RegisteredResource] = {r.urn: r for r in run.resources}

    def name_of(reference: str) -> str:
        resource = by_urn.get(reference)
        if resource is None or (resource.type == GPU_CLUSTER and resource.name == root):
            return STACK_PARENT if reference else ""
        return f"{RENAMED_TYPES.get(resource.type, resource.type)}::{resource.name}"

    graph = []
    for resource in run.resources:
        if resource.type == GPU_CLUSTER and resource.name == root:
            continue
        graph.append({
            "type": RENAMED_TYPES.get(resource.type, resource.type), "name": resource.name, "parent": name_of(resource.parent),
            "custom": resource.custom, # A provider reference is `URN::ID`.
            "provider": name_of(resource.provider.rsplit("::", 1)[0]) if resource.provider else "",
            "inputs": resource.masked_inputs, "ignoreChanges": resource.ignore_changes,
            "replaceOnChanges": resource.replace_on_changes,
            "deleteBeforeReplace": resource.delete_before_replace,
            "dependencies": sorted(name_of(dependency) for dependency in resource.dependencies),
        })
    return sorted(graph, key=lambda entry: (entry["type"], entry["name"]))


def program_snapshot(run: ProgramRun, root: str | None = None) -> dict[str, Any]:
    return {"resources": resource_graph(run, root), "outputs": run.stack_outputs,
            "secretOutputs": sorted(run.secret_outputs)}


#: FULL_STACK's pack config: its h100 pool carries Flyte's GPU taint (docs/app-teams.md), so the pack is
#: told that taint too, as `policies/config.full.json` would for a real stack.
FULL_STACK_PACK_CONFIG = {"gpu-node-pools-are-tainted": {"gpuTaints": [
    {"key": "sku", "value": "gpu", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}}


@contextlib.contextmanager
def full_stack_pack_config() -> Iterator[None]:
    """The pack config the settings read for the `full` stack, in a folder of its own for the run."""
    from components.pools import rules

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "config.full.json").write_text(json.dumps(FULL_STACK_PACK_CONFIG))
        saved, rules.POLICIES = rules.POLICIES, Path(folder)
        try:
            yield
        finally:
            rules.POLICIES = saved


def stack_runs() -> dict[str, ProgramRun]:
    """Today's program on dev, prod and FULL_STACK."""
    from tests.conftest import run_stack

    runs = {"dev": run_stack("dev"), "prod": run_stack("prod")}
    with tempfile.TemporaryDirectory() as folder, full_stack_pack_config():
        stack_file = Path(folder) / "Pulumi.full.yaml"
        stack_file.write_text(json.dumps(FULL_STACK))
        runs["full"] = run_stack("full", stack_file)
    for stack, run in runs.items():
        if run.error is not None:
            raise SystemExit(f"{stack}: {run.error}")
    return runs


def main() -> int:
    snapshot = {stack: program_snapshot(run, root="gpu-aks") for stack, run in stack_runs().items()}
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(json.dumps(snapshot, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
