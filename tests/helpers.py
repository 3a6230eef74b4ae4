"""Helpers the tests share: run the pod rules on whole objects, as the checker and the pack do."""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gpu_aks_policies.findings import Finding
from gpu_aks_policies.rule_config import RuleConfig
from gpu_aks_policies.rules import POD_RULES, default_rule_config, parse_rule_config
from gpu_aks_policies.workloads import Context, context_of, pod_specs_of

DEFAULTS = default_rule_config()


def findings(obj: Any, policy: str, config: RuleConfig | None = None, together: Iterable[Any] = (),
             context: Context | None = None) -> list[Finding]:
    """One policy's findings on one object, with `together` checked alongside it."""
    context = context or context_of([obj, *together])
    config = config or DEFAULTS[policy]
    return POD_RULES[policy].check(pod_specs_of(obj, context, config.workload_shapes), config, context)


def verdicts(obj: Any, config: Mapping[str, Any] | None = None, together: Iterable[Any] = ()) -> dict[str, list[str]]:
    """Policy -> paths of its decided findings, under the default config (or `config`)."""
    configs = parse_rule_config(config) if config else DEFAULTS
    return {name: [f.path for f in findings(obj, name, configs[name], together) if f.decided] for name in POD_RULES}


def project_files(folder: Path, suffix: str = ".py") -> list[Path]:
    """The files under `folder` that are the project's: tracked or not ignored (`git ls-files`), so that
    what an install or a build leaves in the tree (`pip install ./app_sdk`'s build/, a virtualenv, a
    site) is never read as product code. Outside a git checkout, every such file under `folder`."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
                                cwd=folder, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return sorted(path for path in folder.rglob(f"*{suffix}") if "venv" not in path.parts)
    return sorted(folder / name for name in listed.decode().split("\0") if name.endswith(suffix))


def parse_python(path: Path) -> ast.Module:
    """The module's syntax tree. CPython 3.11.7's AST validator can keep a wrong recursion depth after a
    RecursionError caught earlier in the same process (the hostile-input tests provoke some;
    python/cpython#106905): then it parses in a fresh interpreter."""
    try:
        return ast.parse(path.read_text())
    except SystemError:
        source = "import ast, pickle, sys; sys.stdout.buffer.write(pickle.dumps(ast.parse(open(sys.argv[1]).read())))"
        result = subprocess.run([sys.executable, "-c", source, str(path)], capture_output=True, check=True)
        tree = pickle.loads(result.stdout)
        assert isinstance(tree, ast.Module)
        return tree


#: `gpu-node-pools-are-tainted` as a pack configured for Flyte's GPU taint as well as the default one
#: (docs/app-teams.md): the stacks of tests whose pools carry `nvidia.com/gpu=present:NoSchedule` are
#: parsed with it, as such a stack's `policies/config.<stack>.json` would have them.
FLYTE_TAINT_RULE = parse_rule_config({"gpu-node-pools-are-tainted": {"gpuTaints": [
    {"key": "sku", "value": "gpu", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}})["gpu-node-pools-are-tainted"]
