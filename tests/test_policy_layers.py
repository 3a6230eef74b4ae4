"""The layers inside policies/ (issue 31): no module imports another in a loop, counting imports
inside functions; the rule registry (`rules.py`) sits on top of the rule implementations and is
the only module that imports the checks; a registry of kinds (`pools/`, `workloads/`) imports no
kind. (tests/test_layers.py holds the layers between the folders.)"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import parse_python, project_files

POLICIES = ROOT / "policies"
PACKAGE = "gpu_aks_policies"


def _module_name(path: Path) -> str:
    parts = path.relative_to(POLICIES).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join((PACKAGE, *parts))


MODULES = {_module_name(path): path for path in project_files(POLICIES)}


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imported_names(module: str) -> list[tuple[str, str]]:
    """(module, name) for every `from X import name` and `import X` the module runs anywhere."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(parse_python(path)):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found += [(base, alias.name) for alias in node.names]
    return found


def imports(module: str) -> set[str]:
    """The policies modules `module` imports (`from pkg import name` counts `pkg.name` when it is one)."""
    targets = set()
    for base, name in imported_names(module):
        for candidate in (f"{base}.{name}" if name else base, base):
            resolved = _resolve(candidate)
            if resolved is not None and resolved.startswith(PACKAGE) and resolved != module:
                targets.add(resolved)
                break
    return targets


GRAPH = {module: imports(module) for module in MODULES}


def _above(module: str) -> set[str]:
    """Every module that imports `module`, directly or through others."""
    found, todo = set(), [module]
    while todo:
        current = todo.pop()
        for importer, targets in GRAPH.items():
            if current in targets and importer not in found:
                found.add(importer)
                todo.append(importer)
    return found


def test_no_policies_modules_import_each_other_in_a_loop():
    graphlib.TopologicalSorter(GRAPH).prepare()  # raises CycleError naming the loop


def test_the_reader_sees_a_loop_through_a_deferred_import(tmp_path, monkeypatch):
    module = tmp_path / "rule_config.py"
    module.write_text("def _registry():\n    from .rules import RULES\n    return RULES\n")
    monkeypatch.setitem(MODULES, f"{PACKAGE}.rule_config", module)
    graph = {**GRAPH, f"{PACKAGE}.rule_config": imports(f"{PACKAGE}.rule_config")}
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(graph).prepare()


#: The rule implementations: over pod specs, and over pools of any kind.
RULE_MODULES = (f"{PACKAGE}.pod_rules", f"{PACKAGE}.pool_rules")
#: What runs the rules: the pack, the checker, the explainer and their entry points.
RUNNERS = {f"{PACKAGE}.{name}" for name in ("rules", "pack", "check", "explain", "__main__")}


def test_the_rule_registry_sits_on_top_of_the_rules():
    rules = f"{PACKAGE}.rules"
    assert {f"{PACKAGE}.pod_rules", f"{PACKAGE}.pool_rules", f"{PACKAGE}.fit", f"{PACKAGE}.rule_config"} <= GRAPH[rules]
    # Only what runs the rules imports the registry; no rule, parameter reader or adapter does.
    assert _above(rules) <= RUNNERS, sorted(_above(rules) - RUNNERS)
    assert not {f"{PACKAGE}.rules", *RULE_MODULES, f"{PACKAGE}.fit"} & GRAPH[f"{PACKAGE}.rule_config"]
    assert not {*RULE_MODULES, f"{PACKAGE}.fit"} & GRAPH[f"{PACKAGE}.demand"]


def test_the_pod_rules_and_the_pool_rules_are_apart():
    """Split along the kind line: the pod rules read pod specs and never the pools (any kind's), the
    pool rules read pools and never the pod rules; both return the Findings of findings.py."""
    pod, pool = f"{PACKAGE}.pod_rules", f"{PACKAGE}.pool_rules"
    assert pool not in GRAPH[pod] and pod not in GRAPH[pool]
    assert not {module for module in GRAPH[pod] if module.startswith(f"{PACKAGE}.pools")}
    assert f"{PACKAGE}.pools" in GRAPH[pool]
    assert f"{PACKAGE}.findings" in GRAPH[pod] & GRAPH[pool]


def test_only_the_registry_imports_the_checks():
    checks = {"check_fit", *(node.name for module in RULE_MODULES for node in parse_python(MODULES[module]).body
                             if isinstance(node, ast.FunctionDef) and node.name.startswith("check_"))}
    assert len(checks) == 8, sorted(checks)
    importers = sorted(module for module in MODULES for _, name in imported_names(module) if name in checks)
    assert set(importers) == {f"{PACKAGE}.rules"}, importers


@pytest.mark.parametrize("kinds", ["pools", "workloads"])
def test_a_registry_of_kinds_imports_no_kind(kinds):
    registry = f"{PACKAGE}.{kinds}.registry"
    below = {module for module in MODULES if module.startswith(f"{PACKAGE}.{kinds}.")} - {registry}
    reached, todo = set(), [registry]
    while todo:
        for target in GRAPH[todo.pop()] - reached:
            reached.add(target)
            todo.append(target)
    # The registry reaches only the shared modules of its package (the pool view, the workload
    # context), never a module that registers a kind.
    kind_modules = {module for module in below if "register(" in MODULES[module].read_text()
                    and module != f"{PACKAGE}.{kinds}"}
    assert kind_modules, f"the walk finds the {kinds} kinds"
    assert not reached & kind_modules, sorted(reached & kind_modules)
