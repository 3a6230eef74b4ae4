"""The dev and prod stacks register the same resources, with the same URNs, inputs and options, and
export the same outputs as gpu-aks 0.3.1 (b20571f) did: the pool-kind restructuring (issue 31) moved
code, not resources. The snapshots in tests/fixtures/stack_snapshot/ were written at b20571f by
`python -m tests.test_stack_snapshot` and are compared as data.

The one allowed difference: the contract's pool entries gained `kind` and `offers` (and may gain
`sharing`), which 0.3.1 did not write; they are dropped before the comparison and checked apart.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tools.mockrun import ProgramRun

SNAPSHOTS = Path(__file__).parent / "fixtures" / "stack_snapshot"
#: Contract pool fields added after 0.3.1 (INTERFACE: the kind-neutral pool entry).
NEW_POOL_FIELDS = ("kind", "offers", "sharing")


def snapshot(run: ProgramRun) -> dict[str, Any]:
    """Everything the engine would see of a run, in a stable order: each resource by URN with its
    inputs on the wire, options and mock outputs, and the stack's exports."""
    resources = {}
    for resource in run.resources:
        resources[resource.urn] = {
            "type": resource.type, "parent": resource.parent, "custom": resource.custom,
            "provider": resource.provider, "inputs": resource.wire_inputs,
            "ignoreChanges": sorted(resource.ignore_changes), "replaceOnChanges": sorted(resource.replace_on_changes),
            "deleteBeforeReplace": resource.delete_before_replace, "dependencies": sorted(resource.dependencies),
            "outputs": resource.outputs,
        }
    return {"resources": dict(sorted(resources.items())), "stackOutputs": run.stack_outputs,
            "secretOutputs": sorted(run.secret_outputs)}


def without_new_pool_fields(outputs: dict[str, Any]) -> dict[str, Any]:
    outputs = json.loads(json.dumps(outputs))
    for key in ("gpuPools", "cpuPools"):
        for pool in (outputs.get(key) or {}).values():
            for name in NEW_POOL_FIELDS:
                pool.pop(name, None)
    return outputs


def _stable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_is_what_0_3_1_registered(stack: str, dev_run: ProgramRun, prod_run: ProgramRun) -> None:
    run = dev_run if stack == "dev" else prod_run
    expected = json.loads((SNAPSHOTS / f"{stack}.json").read_text())
    actual = _stable(snapshot(run))
    assert sorted(actual["resources"]) == sorted(expected["resources"]), "the set of URNs changed"
    for urn, resource in expected["resources"].items():
        assert actual["resources"][urn] == resource, urn
    assert actual["secretOutputs"] == expected["secretOutputs"]
    assert without_new_pool_fields(actual["stackOutputs"]) == expected["stackOutputs"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_only_the_new_contract_fields_differ(stack: str, dev_run: ProgramRun, prod_run: ProgramRun) -> None:
    """The comparison above drops `kind`/`offers`; this keeps that from hiding a pool or key that vanished."""
    run = dev_run if stack == "dev" else prod_run
    expected = json.loads((SNAPSHOTS / f"{stack}.json").read_text())["stackOutputs"]
    for key in ("gpuPools", "cpuPools"):
        assert set(run.stack_outputs[key]) == set(expected[key])
        for name, pool in run.stack_outputs[key].items():
            assert set(pool) - set(expected[key][name]) <= set(NEW_POOL_FIELDS), (key, name)


def write_snapshots() -> None:  # pragma: no cover - run by hand, at the commit the snapshots pin
    from tests.conftest import run_stack

    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    for stack in ("dev", "prod"):
        run = run_stack(stack)
        assert run.error is None, run.error
        (SNAPSHOTS / f"{stack}.json").write_text(json.dumps(_stable(snapshot(run)), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(write_snapshots())
