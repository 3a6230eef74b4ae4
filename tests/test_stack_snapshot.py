"""The dev and prod stacks register the same resources, with the same URNs, inputs and options, and
export the same outputs as before the pool-kind restructuring (issue 31): it moved code, not
resources. The snapshots in tests/fixtures/stack_snapshot/ are compared as data.

They were first written at 0.3.1 (b20571f), and the restructuring matched them except for the
contract's new pool fields `kind` and `offers`. Since then they are the stacks as `main` registered
them when the restructuring merged it (other changes alter the stacks on purpose: the cluster's
identity and security profile, the contract's `kind`/`offers`/`sharing`), and the comparison is
exact. A change that means to alter the stacks regenerates them, in a commit of its own, with
`python -m tests.test_stack_snapshot`; a refactoring never does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from components.pools import RENAMED_TYPES
from offline.mockrun import ProgramRun

SNAPSHOTS = Path(__file__).parent / "fixtures" / "stack_snapshot"


#: What a dynamic resource's `__provider` input is compared as. It is the provider pickled by value
#: (components/propagation.py), and a pickled function carries its source file's absolute path, so the
#: bytes differ between two checkouts of the same commit (CI's clone is not the developer's). That the
#: provider still loads and runs is the engine tier's to show (tests/engine, the YAML program).
PICKLED_PROVIDER = "<the dynamic provider, pickled by value>"


def _comparable_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """Inputs or mock outputs (which echo the inputs) with the pickled provider as `PICKLED_PROVIDER`."""
    return {key: PICKLED_PROVIDER if key == "__provider" else value for key, value in values.items()}


def snapshot(run: ProgramRun) -> dict[str, Any]:
    """Everything the engine would see of a run, in a stable order: each resource by URN with its
    inputs on the wire, options and mock outputs, and the stack's exports."""
    resources = {}
    for resource in run.resources:
        resources[resource.urn] = {
            "type": resource.type, "parent": resource.parent, "custom": resource.custom,
            "provider": resource.provider, "inputs": _comparable_inputs(resource.wire_inputs),
            "ignoreChanges": sorted(resource.ignore_changes), "replaceOnChanges": sorted(resource.replace_on_changes),
            "deleteBeforeReplace": resource.delete_before_replace, "dependencies": sorted(resource.dependencies),
            "outputs": _comparable_inputs(resource.outputs),
        }
    return {"resources": dict(sorted(resources.items())), "stackOutputs": run.stack_outputs,
            "secretOutputs": sorted(run.secret_outputs)}


def _stable(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True))


def with_former_types(value: Any) -> Any:
    """`value` with each renamed component type (`RENAMED_TYPES`) written as it was: the URNs the
    snapshot holds are those an alias maps the renamed components and their children from."""
    text = json.dumps(value, sort_keys=True)
    for new, former in RENAMED_TYPES.items():
        text = text.replace(f'{new}"', f'{former}"').replace(f"{new}::", f"{former}::").replace(f"{new}$", f"{former}$")
    return json.loads(text)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_is_what_it_was_before_the_restructuring(stack: str, dev_run: ProgramRun, prod_run: ProgramRun) -> None:
    run = dev_run if stack == "dev" else prod_run
    expected = json.loads((SNAPSHOTS / f"{stack}.json").read_text())
    actual = with_former_types(snapshot(run))
    assert sorted(actual["resources"]) == sorted(expected["resources"]), "the set of URNs changed"
    for urn, resource in expected["resources"].items():
        assert actual["resources"][urn] == resource, urn
    assert actual["secretOutputs"] == expected["secretOutputs"]
    assert actual["stackOutputs"] == expected["stackOutputs"]


def write_snapshots() -> None:  # pragma: no cover - run by hand, at the commit the snapshots pin
    from tests.conftest import run_stack

    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    for stack in ("dev", "prod"):
        run = run_stack(stack)
        assert run.error is None, run.error
        # As the test compares: renamed component types written as they were (aliases keep those URNs).
        (SNAPSHOTS / f"{stack}.json").write_text(json.dumps(with_former_types(snapshot(run)), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(write_snapshots())
