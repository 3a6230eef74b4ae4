"""Every stack file under the real engine with the policy pack: preview, up, a second preview that finds
nothing to change, the outputs app stacks read, and destroy (prod's protected cluster first refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import FAST, Workspace, new_workspace

ROOT = Path(__file__).resolve().parents[2]
STACK_FILES = {path.name[len("Pulumi."):-len(".yaml")]: path.relative_to(ROOT).as_posix()
               for path in [*ROOT.glob("Pulumi.*.yaml"), *ROOT.glob("examples/*/Pulumi.*.yaml")]
               if not (path.parent / "Pulumi.yaml").exists() or path.parent == ROOT}


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return new_workspace(tmp_path_factory, "engine-stacks")


def test_every_stack_file_of_the_program_is_covered() -> None:
    assert {"dev", "prod", "nap", "landing-zone"} <= set(STACK_FILES), STACK_FILES


@pytest.mark.parametrize("stack", sorted(STACK_FILES))
def test_a_stack_previews_deploys_and_destroys_with_the_pack(lifecycle: Workspace, stack: str) -> None:
    config_file = STACK_FILES[stack]
    # A stack file outside the project folder (examples/landing-zone) is named with --config-file, as
    # its header says; `pulumi config set` then writes the fast settings there.
    extra = [] if config_file == f"Pulumi.{stack}.yaml" else ["--config-file", config_file]
    lifecycle.init(stack, config=FAST, extra=extra)
    with_pack = ["--policy-pack", "policies", "--stack", stack, *extra]
    preview = lifecycle.pulumi("preview", *with_pack)
    assert "to create" in preview.output
    lifecycle.pulumi("up", "--yes", "--skip-preview", *with_pack)
    # A second run changes nothing: every input the program sends is stable, and the provider answers
    # no diff (the engine exits non-zero under --expect-no-changes otherwise).
    lifecycle.pulumi("preview", "--expect-no-changes", *with_pack)

    outputs = lifecycle.outputs(stack)
    assert outputs["gpuPools"], outputs
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["contractVersion"]

    destroy = lifecycle.pulumi("destroy", "--yes", "--stack", stack, *extra, check=False)
    protected = [r for r in lifecycle.export(stack)["deployment"].get("resources", []) if r.get("protect")]
    if protected:
        # cluster.protect: the engine stops at the protected cluster and its group and says so.
        assert destroy.returncode != 0
        assert "protect" in destroy.output, destroy.output[-3000:]
        lifecycle.pulumi("state", "unprotect", "--all", "--yes", "--stack", stack)
        lifecycle.pulumi("destroy", "--yes", "--stack", stack, *extra)
    else:
        assert destroy.returncode == 0, destroy.output[-3000:]
    assert [r["type"] for r in lifecycle.export(stack)["deployment"].get("resources", [])] == []
