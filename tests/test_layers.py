"""The layers of the product code, held against its imports (docs/architecture.md, "Layers").

    policies/  <  observability/  <  components/ (catalogs < settings < pools < platform_settings
               <  Pulumi components)
               <  offline/ (the offline engine), app_sdk/, gpu_aks_plugin/, __main__.py  <  tools/

A module imports only from its own layer or the layers below it, so components/ and observability/
meet in one direction (components -> observability), and nothing below tools/ (the commands) reaches up into it.
No product modules import each other in a loop, counting every import a module runs (those inside
functions too; not the ones under `if TYPE_CHECKING:`, which never run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.helpers import project_files

#: The product's top-level packages and modules, by the folder or file they live in. `policies/`
#: is imported as `gpu_aks_policies` (pyproject.toml's `package-dir`).
PRODUCT = {"policies": "gpu_aks_policies", "observability": "observability", "components": "components",
           "offline": "offline", "tools": "tools", "app_sdk": "", "gpu_aks_plugin": "gpu_aks_plugin", "__main__.py": "__main__"}

#: Layer of a module, by the longest prefix of its dotted name; higher layers may import lower ones.
LAYERS: dict[str, int] = {
    "gpu_aks_policies": 0,
    "observability": 1,
    # Pure catalogs of the AKS API and Azure's offers, misfiled among the components (the review, 2).
    "components.aks_api": 2, "components.azure_catalog": 2,
    # Pure builders of the Kubernetes objects the platform creates, from the pool model alone: the
    # settings build the device plugin's DaemonSets with them to run the pack's rule on them (issue 37).
    "components.manifests": 2,
    "components.settings": 3,
    "components.pools": 4,
    # The whole document: every section, each pool kind's from `KINDS`.
    "components.platform_settings": 5,
    "components": 6,
    "offline": 7, "gpu_aks_app": 7, "gpu_aks_app_testing": 7, "gpu_aks_plugin": 7, "__main__": 7,
    # The commands a user runs: no other product module imports them.
    "tools": 8,
}


def _modules() -> Iterator[tuple[str, Path]]:
    for folder, package in PRODUCT.items():
        path = ROOT / folder
        if path.is_file():
            yield package, path
            continue
        for file in project_files(path):
            parts = file.relative_to(path).with_suffix("").parts
            if "generated" in parts:
                continue
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            yield ".".join(p for p in (package, *parts) if p), file


MODULES = dict(_modules())


def _layer(module: str) -> int | None:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix]
    return None


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of import nodes under `if TYPE_CHECKING:` (they never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(child) for statement in node.body for child in ast.walk(statement)}
    return skipped


def _resolve(name: str) -> str | None:
    """The product module `name` (or the deepest package above it) refers to, or None outside the product."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports(module: str, runtime_only: bool = False) -> set[str]:
    """The product modules `module` imports (`from pkg import name` counts `pkg.name` when it is a module)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    skipped = _type_checking_only(tree) if runtime_only else set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        found |= {target for target in map(_resolve, names) if target is not None and target != module}
    return found


def test_every_product_module_has_a_layer():
    assert not [module for module in MODULES if _layer(module) is None]
    assert "components.pools.kind" in MODULES and "gpu_aks_policies.contract" in MODULES, "the walk finds them"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_from_a_layer_above_it(module):
    layer = _layer(module)
    above = sorted(target for target in imports(module) if (_layer(target) or 0) > (layer or 0))
    assert not above, f"{module} (layer {layer}) imports from above: {above}"


def test_components_and_observability_meet_in_one_direction():
    into_components = sorted((module, target) for module in MODULES if module.startswith("observability")
                             for target in imports(module) if target.startswith("components"))
    assert not into_components
    assert any(target.startswith("observability") for module in MODULES if module.startswith("components")
               for target in imports(module)), "components build resources from observability's builders"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_loop():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.slow
def test_no_product_modules_import_each_other_in_a_loop():
    graph = {module: imports(module, runtime_only=True) for module in MODULES}
    assert _cycles(graph) == []


def test_the_import_reader_sees_deferred_relative_and_from_imports(tmp_path, monkeypatch):
    """What 0.3.1 did (observability reaching into tools inside a function) is seen as reaching up."""
    module = tmp_path / "rules.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from components import gpu_cluster\n"
                      "def late():\n    from tools.doctor import GPU_CONDITIONS\n    from .metrics import KNOWN_METRICS\n"
                      "from components import manifests\n")
    monkeypatch.setitem(MODULES, "observability.rules", module)
    assert imports("observability.rules") == {"tools.doctor", "observability.metrics", "components.manifests",
                                              "components.gpu_cluster", "components"}
    assert "components.gpu_cluster" not in imports("observability.rules", runtime_only=True)


def test_one_registry_is_called_kinds():
    """"kind" has one meaning in the product: the platform's pool kinds (`components.pools.KINDS`).
    The resource a pool is written as (AgentPool, NodePool) is its backend (`gpu_aks_policies.pools.BACKENDS`)."""
    named = sorted(module for module, path in MODULES.items() for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, (ast.Assign, ast.AnnAssign))
                   and any(isinstance(target, ast.Name) and target.id == "KINDS"
                           for target in (node.targets if isinstance(node, ast.Assign) else [node.target])))
    assert named == ["components.pools"]


def test_what_an_install_leaves_in_the_tree_is_not_product_code():
    # `pip install ./app_sdk` with setuptools left app_sdk/build/lib/gpu_aks_app.py: read as a module with no
    # layer, it failed this file and the limits scans (issue 50). Ignored paths are not the project's.
    planted = ROOT / "app_sdk" / "build" / "lib" / "gpu_aks_app.py"
    existed = planted.exists()
    planted.parent.mkdir(parents=True, exist_ok=True)
    try:
        planted.write_text("import os\n")
        found = project_files(ROOT / "app_sdk")
        assert ROOT / "app_sdk" / "gpu_aks_app.py" in found and planted not in found
    finally:
        if not existed:
            planted.unlink()
            for folder in (planted.parent, planted.parent.parent):
                if not any(folder.iterdir()):
                    folder.rmdir()


def _runs_as_a_command(tree: ast.Module) -> bool:
    """The module has an `if __name__ == "__main__":` block."""
    return any(isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
               and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"
               and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in node.test.comparators)
               for node in tree.body)


def test_tools_holds_commands_only():
    """`tools/` is the commands a user runs (issue 49); a library the commands share lives in a layer below
    (`offline/`: the mock runtime, Azure's computed answers, the pack over gRPC)."""
    libraries = sorted(module for module, path in MODULES.items()
                       if module.startswith("tools.") and not _runs_as_a_command(ast.parse(path.read_text())))
    assert libraries == []


def test_no_pool_kind_imports_another():
    """Each kind of `KINDS` is one module, and what two kinds share lives below them (components/settings/pools.py,
    components/pools/user.py, kind.py): a kind added or removed touches no other kind (the structure review, 7.2)."""
    from components.pools import KINDS

    kind_modules = {type(kind).__module__ for kind in KINDS}
    assert len(kind_modules) == len(KINDS) >= 4
    assert {module: sorted(imports(module) & kind_modules) for module in kind_modules} == \
        {module: [] for module in kind_modules}
