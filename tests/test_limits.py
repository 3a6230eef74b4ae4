"""Every input bound of the product code is declared in one place, policies/limits.py (issue #41): a
bound declared beside the code that uses it drifted from its twin (MAX_COUNT was 10**6 in the contract
and 10**9 in preflight), so a new `MAX_*` elsewhere fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from gpu_aks_policies import limits

REPOSITORY = Path(__file__).resolve().parent.parent
#: The product code: what the program, the pack, the provider and the tools run.
PRODUCT = ("components", "policies", "tools", "observability", "gpu_aks_plugin", "app_sdk")
LIMITS = REPOSITORY / "policies" / "limits.py"


def _declared(path: Path) -> list[str]:
    """The module-level `MAX_*` names that `path` assigns (an import is not a declaration)."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        names += [target.id for target in targets if isinstance(target, ast.Name) and target.id.startswith("MAX_")]
    return names


def _product_files() -> list[Path]:
    return sorted(path for folder in PRODUCT for path in (REPOSITORY / folder).rglob("*.py"))


def test_the_scan_sees_the_product_code() -> None:
    # The test must be able to fail: the scan reads the files that use the bounds.
    files = _product_files()
    assert REPOSITORY / "components" / "pricing.py" in files
    assert "MAX_POOL_COUNT" in _declared(LIMITS)


def test_no_max_bound_is_declared_outside_limits() -> None:
    outside = {f"{path.relative_to(REPOSITORY)}: {name}" for path in _product_files() if path != LIMITS
               for name in _declared(path)}
    assert not outside, f"declare these in policies/limits.py, with their source: {sorted(outside)}"


def test_each_bound_is_declared_once() -> None:
    names = _declared(LIMITS)
    assert len(names) == len(set(names))


def test_the_scan_finds_a_bound_declared_elsewhere(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("from x import MAX_A\nMAX_B = 3\nMAX_C: int = 4\n_MAX_D = 5\n", encoding="utf-8")
    assert _declared(module) == ["MAX_B", "MAX_C"]


def test_the_two_counts_keep_their_own_bounds() -> None:
    # A pool's count and a subscription's quota differ; each message names its own bound.
    assert (limits.MAX_POOL_COUNT, limits.MAX_QUOTA_COUNT) == (10**6, 10**9)


def test_clipped_keeps_a_short_text_and_cuts_a_long_one() -> None:
    assert limits.clipped("abc", 3, 1) == "abc"
    assert limits.clipped("abcd", 3, 1) == "a…"
    assert limits.clipped("x" * 100, 60, 57, "...") == "x" * 57 + "..."
