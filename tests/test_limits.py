"""Every input bound of the product code is declared in one place, policies/limits.py (issue #41): a
bound declared beside the code that uses it drifted from its twin (MAX_COUNT was 10**6 in the contract
and 10**9 in preflight), so a new `MAX_*` elsewhere fails here."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpu_aks_policies import limits, quantities
from gpu_aks_policies.terminal import escape_field

from tests.helpers import project_files

REPOSITORY = Path(__file__).resolve().parent.parent
#: The product code: what the program, the pack, the provider, the offline engine and the tools run.
PRODUCT = ("components", "policies", "offline", "tools", "observability", "gpu_aks_plugin", "app_sdk")
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
    return [path for folder in PRODUCT for path in project_files(REPOSITORY / folder)]


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


# --- Numbers: one test of what a number is ---------------------------------------------------------
# Python's bool is an int (True == 1) and a float may be NaN or infinite, so "is this a number" written by
# hand came out differently in each module (the 0.4.0 review counted 23 bool exclusions in 17 files and 7
# finite-number checks). The product code asks policies/limits.py (`is_int`, `is_number`,
# `is_finite_number`, `is_whole`); the tests below fail on a new hand-written one.

#: The `isinstance(…, bool)` tests left in the product code, by file and function: how many, and why each
#: stays. A new one fails `test_no_new_hand_written_bool_test`: call a limits helper, or add it here with why.
KEPT_BOOL_TESTS: dict[tuple[str, str], tuple[int, str]] = {
    ("app_sdk/gpu_aks_app.py", "_finite"): (1, "app_sdk stands alone (standard library only, vendored into app "
                                              "repositories): it cannot import gpu_aks_policies"),
    ("app_sdk/gpu_aks_app.py", "place"): (1, "app_sdk stands alone (the request's gpus: an int, not a bool)"),
    ("app_sdk/gpu_aks_app_testing.py", "as_delivered"): (1, "app_sdk stands alone; a bool is passed through "
                                                            "as it is, not made a float"),
    ("components/settings/common.py", "shown"): (1, "takes a bool too (every JSON scalar is quoted by repr)"),
    ("components/aks_api.py", "_boolean"): (1, "a boolean key: the value must be true or false"),
    ("policies/fields.py", "_Flag.read"): (1, "a boolean field: the value must be true or false"),
    ("policies/declarations.py", "bool_problem"): (1, "the boolean keys' check: true or false"),
    ("policies/quantities.py", "parse_quantity"): (1, "a bool gets its own message ('is a boolean, not a "
                                                      "quantity')"),
    ("policies/scheduling.py", "_hashable"): (1, "every JSON scalar, bool included, can be a lookup key"),
    ("policies/secrets.py", "secret_forms"): (1, "bool and null carry no secret text (any other value's str "
                                                 "is a form)"),
}

#: `math.isfinite` / `isnan` / `isinf` and `float.is_integer` left outside policies/limits.py, and why.
KEPT_FINITE_TESTS: dict[tuple[str, str], tuple[int, str]] = {
    ("app_sdk/gpu_aks_app.py", "_finite"): (1, "app_sdk stands alone (the same test as limits.is_finite_number)"),
    ("app_sdk/gpu_aks_app.py", "_whole"): (1, "app_sdk stands alone (the same test as limits.is_whole)"),
    ("policies/declarations.py", "whole_as_int"): (1, "the one conversion of the wire's whole floats to int"),
    ("policies/pools/agentpool.py", "shown_count"): (1, "a whole float shown as an int, below 1e15 (its digits "
                                                        "are exact)"),
    ("policies/secrets.py", "secret_forms"): (1, "the texts a secret float may print as (below 1e18)"),
    ("policies/demand.py", "asks_gpu"): (1, "a fast path for exactly `float` (secret numbers, a float subclass, "
                                            "take the quantity parser)"),
    ("policies/quantities.py", "parse_quantity"): (1, "NaN and the infinities get their own message"),
}

_FINITE_TESTS = {"isfinite", "isnan", "isinf", "is_integer"}


def _names_bool(node: ast.expr) -> bool:
    types = node.elts if isinstance(node, ast.Tuple) else [node]
    return any(isinstance(item, ast.Name) and item.id == "bool" for item in types)


def _calls(path: Path) -> Iterator[tuple[str, ast.Call]]:
    """Each call in `path`, with the qualified name of the function it is in ("<module>" outside any)."""
    stack: list[tuple[ast.AST, str]] = [(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")]
    while stack:
        node, scope = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            elif isinstance(child, ast.Call):
                yield scope or "<module>", child
            stack.append((child, inner))


def _hand_written_tests(path: Path) -> tuple[Counter[str], Counter[str]]:
    """The functions (by qualified name) of `path` with an `isinstance(…, bool)` test, and those with a
    `math.isfinite`/`isnan`/`isinf` or `.is_integer()` call, each counted."""
    bools: Counter[str] = Counter()
    finite: Counter[str] = Counter()
    for scope, call in _calls(path):
        function = call.func
        if isinstance(function, ast.Name) and function.id == "isinstance" and len(call.args) == 2 and _names_bool(
                call.args[1]):
            bools[scope] += 1
        if isinstance(function, ast.Attribute) and function.attr in _FINITE_TESTS:
            finite[scope] += 1
    return bools, finite


def _found(kind: int) -> dict[tuple[str, str], int]:
    found = {}
    for path in _product_files():
        if path == LIMITS:
            continue
        for function, count in _hand_written_tests(path)[kind].items():
            found[(str(path.relative_to(REPOSITORY)), function)] = count
    return found


def test_no_new_hand_written_bool_test() -> None:
    kept = {key: count for key, (count, _) in KEPT_BOOL_TESTS.items()}
    assert _found(0) == kept, ("an `isinstance(…, bool)` test outside policies/limits.py: call limits.is_int, is_number, "
                               "is_finite_number or is_whole, or add it to KEPT_BOOL_TESTS with why it stays")


def test_no_new_hand_written_finite_test() -> None:
    kept = {key: count for key, (count, _) in KEPT_FINITE_TESTS.items()}
    assert _found(1) == kept, ("a `math.isfinite`/`isnan`/`isinf` or `.is_integer()` outside policies/limits.py: call "
                               "limits.is_finite_number or is_whole (declarations.whole_as_int to convert), or add it "
                               "to KEPT_FINITE_TESTS with why it stays")


def test_the_number_scan_finds_a_hand_written_test(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("import math\n"
                      "def count(v):\n    return isinstance(v, int) and not isinstance(v, bool)\n"
                      "class Reader:\n    def read(self, v):\n"
                      "        return isinstance(v, (bool, int)) or math.isfinite(v) or math.isnan(v) or v.is_integer()\n"
                      "ok = isinstance(3, int)\n", encoding="utf-8")
    bools, finite = _hand_written_tests(module)
    assert bools == {"count": 1, "Reader.read": 1}
    assert finite == {"Reader.read": 3}


@pytest.mark.parametrize("value, is_int, is_number, is_finite, is_whole", [
    (3, True, True, True, True),
    (10**400, True, True, True, True),
    (3.0, False, True, True, True),
    (2.5, False, True, True, False),
    (float("nan"), False, True, False, False),
    (float("inf"), False, True, False, False),
    (True, False, False, False, False),
    (False, False, False, False, False),
    ("3", False, False, False, False),
    (None, False, False, False, False),
])
def test_what_a_number_is(value: object, is_int: bool, is_number: bool, is_finite: bool, is_whole: bool) -> None:
    assert (limits.is_int(value), limits.is_number(value), limits.is_finite_number(value), limits.is_whole(value)) == (
        is_int, is_number, is_finite, is_whole)


# --- Quoting: the helpers that cut by limits.clipped keep their words --------------------------------


@pytest.mark.parametrize(("text", "limit", "shown"), [
    ("abc", 3, "abc"),
    ("abcd", 3, "abc…(4 characters)"),
    ("::error::x" + "y" * 20, 12, "\\x3a:error::xyy…(30 characters)"),  # the cut part is escaped, the mark is not
    ("a\nb##[" + "c" * 10, 6, "a\\nb##\\x5b…(16 characters)"),
    ("é" * 100, 80, "é" * 80 + "…(100 characters)"),
])
def test_escape_field_cuts_then_escapes(text: str, limit: int, shown: str) -> None:
    assert escape_field(text, limit) == shown


@pytest.mark.parametrize(("value", "limit", "shown"), [
    ("1500m", 24, "'1500m'"),
    (10**30, 24, "1000000000000000000000000000000"[:12] + "…0000 (31 characters)"),
    ("x" * 40, 24, "'xxxxxxxxxxx…xxx' (40 characters)"),
    (2.5, 24, "2.5"),
])
def test_quantity_values_are_shown_short(value: object, limit: int, shown: str) -> None:
    assert quantities.shown(value, limit) == shown


#: The cuts that keep a length of their own (not MAX_SHOWN_CHARS), by file, function and length, and why:
#: changing one changes its message. A new cut names MAX_SHOWN_CHARS, or a bound with its why.
KEPT_CUT_LENGTHS: dict[tuple[str, str, int], str] = {
    ("components/aks_api.py", "_quoted", 60): "a segment of a resource ID, quoted by ascii() with its closing quote",
    ("policies/documents.py", "_shown_key", 64): "a YAML key named in a duplicate-key problem",
    ("policies/quantities.py", "format_amount", 24): "the digits of an amount in a verdict that may name several",
    ("tools/preflight.py", "_shown", 60): "a value of an `az` answer, in a one-line problem (tests/"
                                          "test_preflight_inputs.py holds them under 300 characters)",
    ("tools/preview.py", "load_previous_outputs", 200): "the Pulumi wire signature that marks an internal value",
    ("tools/prices.py", "_regions", 60): "a region name (MAX_REGION_CHARS, the same 60) or the list it is in",
}


def _literal_cuts(path: Path) -> set[tuple[str, int]]:
    """(function, length) for each `clipped(text, N, …)` or `escape_field(text, N)` of `path` with N written
    as a number."""
    return {(scope, call.args[1].value) for scope, call in _calls(path)
            if isinstance(call.func, ast.Name) and call.func.id in ("clipped", "escape_field") and len(call.args) >= 2
            and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, int)}


def test_quoted_values_are_cut_at_named_lengths() -> None:
    found = {(str(path.relative_to(REPOSITORY)), function, length) for path in _product_files()
             for function, length in _literal_cuts(path)}
    assert found == set(KEPT_CUT_LENGTHS), ("a value cut for a message at a length written as a number: use "
                                            "limits.MAX_SHOWN_CHARS (or a bound declared in limits.py with its why)")
    assert all(length != limits.MAX_SHOWN_CHARS for _, _, length in found)


def test_the_cut_scan_finds_a_length_written_as_a_number(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("def shown(v):\n    return clipped(v, 80, 60) + escape_field(v, MAX_SHOWN_CHARS) + escape_field(v, 7)\n",
                      encoding="utf-8")
    assert _literal_cuts(module) == {("shown", 80), ("shown", 7)}
