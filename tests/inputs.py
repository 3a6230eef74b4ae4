"""What the tests of hostile input share: the inputs they build, how they run a tool as a user runs it, and how
they count work (in function calls, never in time: speed belongs in benchmarks/)."""

from __future__ import annotations

import copy
import cProfile
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpu_aks_policies.rules import parse_rule_config
from hypothesis import strategies as st

from components.settings import SettingsError
from tests.conftest import ROOT
from tools.stacks import settings_from_stack_file

HANG_GUARD_S = 120


POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  tolerations: [{{key: sku, operator: Exists}}]
  containers:
  - name: c
    image: i
    resources: {{limits: {{nvidia.com/gpu: {amount}}}}}
"""


def pod_yaml(name: str = "p", amount: str = "1") -> str:
    return POD.format(name=name, amount=amount)


def alias_bomb(levels: int = 9, width: int = 9, indent: str = "") -> str:
    """The "billion laughs": each level an anchored list of `width` aliases of the level below, so
    expanding the last one means width**levels leaves from a few hundred bytes."""
    lines = [f'{indent}l0: &l0 [{", ".join(["lol"] * width)}]']
    for level in range(1, levels):
        lines.append(f"{indent}l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def run(module: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, check=False,
                            input=stdin, timeout=HANG_GUARD_S)
    completed = subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode("utf-8", "replace"),
                                            result.stderr.decode("utf-8", "replace"))
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed


def check_files(*paths: Path | str, fmt: str = "text", extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return run("gpu_aks_policies.check", "--format", fmt, *extra, *map(str, paths))


#
# Quadratic paths are counted, not timed: the function calls (Python's and the built-ins', as cProfile
# counts them) the same work makes at n and at 4n; a linear path makes about 4x as many, a quadratic
# one 16x. A count does not move with the machine: CPU-time ratios did (a CI run once measured 8.07x
# for a path that measures 3.9x to 4.4x). What a count cannot see is work inside one built-in call (a
# list's `in`, `str.find`): a test for such a path counts that work itself (the bytes scanned, the
# items looked at). Speed belongs in benchmarks/.

GROWTH_LIMIT = 8.0


def calls_made(work: Callable[[], object]) -> int:
    """How many function calls `work()` makes, built-ins included (cProfile's count)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        work()
    finally:
        profiler.disable()
    return sum(entry.callcount for entry in profiler.getstats())


def growth(prepare: Callable[[int], Callable[[], object]], n: int) -> float:
    """How many times the calls at n the same work makes at 4n (inputs built outside the count)."""
    small, large = prepare(n), prepare(4 * n)
    small(), large()  # warm caches and imports, which the counts then leave out
    return calls_made(large) / max(calls_made(small), 1)


def numbered_tolerations(prefix: str, count: int) -> list[dict[str, object]]:
    return [{"key": f"{prefix}{i}.example.com/t", "operator": "Equal", "value": f"v{i}", "effect": "NoSchedule"}
            for i in range(count)]


def namespaced_pod(tolerations: list[dict[str, object]], annotations: dict[str, str]) -> list[dict[str, object]]:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "annotations": annotations}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "many", "namespace": "team"},
           "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "i", "resources": {
               "limits": {"nvidia.com/gpu": 1, "cpu": "1"}}}]}}
    return [namespace, pod]


PLATFORM_T4 = {"contractVersion": 2, "gpuPools": {"t4": {"taints": ["sku=gpu:NoSchedule"], "labels": {"accelerator": "nvidia"},
                                                         "gpuResource": "nvidia.com/gpu", "gpusPerNode": 1}}}


TOLERATION_STRATEGY = st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(["", "a", "b"]), "operator": st.sampled_from(["", "Equal", "Exists", "Other"]),
    "value": st.sampled_from(["", "1", "2"]), "effect": st.sampled_from(["", "NoSchedule", "NoExecute"]),
    "tolerationSeconds": st.one_of(st.none(), st.integers(0, 3))})


# Class 3: no tag or scalar crashes the parser.

SECRET = "hunter2-S3CRET"


# Class 5: text output cannot be steered by the input.

HOSTILE_NAME = "a\x1b[2J\x1b[Hb\r\n::error file=x::ALL CLEAN\u2028##[error]forged\x9b\x7f\u202e"


def assert_inert(text: str) -> None:
    """No control character, no line a GitHub Actions runner would run as a command."""
    assert not any(ord(char) < 32 and char != "\n" or 0x7f <= ord(char) <= 0x9f or char in "\u2028\u2029\u202e"
                   for char in text), repr(text)
    for line in text.splitlines():
        assert not line.lstrip().startswith("::") and "##[" not in line, line


ESCAPES = "\x1b[2J\r\n::error::pwned\x1b]0;title\x07"


def assert_one_line(problem: str) -> None:
    assert "\x1b" not in problem and "\n" not in problem and "\r" not in problem and "\x07" not in problem, problem
    assert len(problem) < 400, problem


RULES = parse_rule_config({})


SECRET_TEXT = "hunter2-do-not-print"


#: What a terminal or the Actions runner would act on in a line the engine prints.
INJECTIONS = ("\x1b", "\x07", "\r", "\n", "\u202e", "##[")


HOSTILE_KEY = "\x1b[31m\u202e\r::add-mask::x\n##[error]pwned"


def assert_no_injection(text: str) -> None:
    for bad in INJECTIONS:
        assert bad not in text, (bad, text[:300])


#: A GUID written in capitals is the same group (Entra ID object IDs are compared without case).
GROUP = "00000000-0000-0000-0000-0000000000a1"


def stack_problems(tmp_path: Path, text: str) -> list[str]:
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(text)
    with pytest.raises(SettingsError) as raised:
        settings_from_stack_file(stack_file, "prod", environ={})
    for problem in raised.value.problems:
        assert_inert(problem)
        assert len(problem) < 400, problem
    return [problem.split(f"{stack_file}:", 1)[-1] for problem in raised.value.problems]


NAP_WHOLE_NUMBERS: dict[str, Any] = {
    "cluster": {"skuTier": "Standard", "nodeProvisioningProfile": {"mode": "Auto", "defaultNodePools": "Auto"}},
    "systemPool": {"minCount": 2, "maxCount": 2},
    "gpuNodePools": [{"name": "h100", "gpus": ["H100"], "gpuCount": [1, 2], "limits": {"gpu": 8, "cpu": 400},
                      "weight": 100, "osDiskSizeGB": 256}],
}


def nap_pool_section(**changes: Any) -> dict[str, Any]:
    return {**NAP_WHOLE_NUMBERS, "gpuNodePools": [{**NAP_WHOLE_NUMBERS["gpuNodePools"][0], **changes}]}


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n") + 1


def checked(tmp_path: Path, name: str, text: str, *options: str) -> tuple[int, str, str]:
    """The checker as a command over one file: (exit code, stdout, stderr)."""
    path = tmp_path / name
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "gpu_aks_policies.check", *options, str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=HANG_GUARD_S)
    return result.returncode, result.stdout, result.stderr


SECRET_SIGNATURE = "4dabf18193072939515e22adb298388d"  # the engine's wire form of a secret


T4 = "Standard_NC4as_T4_v3"


TOLERATION_KEYS = ("", "sku", "nvidia.com/gpu", "team", "a.b/c", "other")


TOLERATION_VALUES = ("", "gpu", "ml-1", "d_e.f", "cpu")


tolerations = st.lists(st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(TOLERATION_KEYS), "operator": st.sampled_from(("Exists", "Equal", "")),
    "value": st.sampled_from(TOLERATION_VALUES), "effect": st.sampled_from(("", "NoSchedule", "NoExecute", "PreferNoSchedule")),
}), max_size=3)


# Pool names a contract may hold: megabytes, a line break that forges an output line, escape sequences.

LONG_POOL_NAME = "p" * 100_000
POOL_NAMES = (LONG_POOL_NAME, "a\nb", HOSTILE_NAME)


def pool_name_contracts(contract: dict[str, Any], names: tuple[str, ...] = POOL_NAMES) -> dict[str, dict[str, Any]]:
    """The contract with its first GPU pool copied under each of `names` (the original dropped), damaged each way
    that puts a pool's name into a message: both versions list the pools but disagree (maxCount), the pools are
    in version 3 only, and a field is bad in both (minCount "x"); and, undamaged, "agree"."""
    first = next(iter(contract["gpuPools"]))

    def renamed(versions: tuple[str, ...]) -> dict[str, Any]:
        document = copy.deepcopy(contract)
        for version in ("pools", "gpuPools"):
            pool = document[version].pop(first)
            for name in names if version in versions else ():
                document[version][name] = {**copy.deepcopy(pool), "name": name}
                # The pool's label names it too, wherever a version writes it (its nodes carry it).
                for key in ("nodeSelector", "poolLabel", "labels"):
                    if "gpu-aks.io/pool" in pool.get(key, {}):
                        document[version][name][key] = {**pool[key], "gpu-aks.io/pool": name}
        return document

    agree, disagree, one_version, bad_field = (renamed(("pools", "gpuPools")), renamed(("pools", "gpuPools")),
                                               renamed(("pools",)), renamed(("pools", "gpuPools")))
    for name in names:
        disagree["gpuPools"][name]["maxCount"] = (disagree["gpuPools"][name]["maxCount"] or 0) + 1
        for version in ("pools", "gpuPools"):
            bad_field[version][name]["minCount"] = "x"
    return {"agree": agree, "disagree": disagree, "one version": one_version, "bad field": bad_field}


def assert_pool_names_shown_bounded(text: str, names: tuple[str, ...] = POOL_NAMES) -> None:
    """`text` names the pools cut and escaped: no control character, no forged line, and none of the long
    name past MAX_SHOWN_CHARS."""
    from gpu_aks_policies.limits import MAX_SHOWN_CHARS

    assert_inert(text)
    assert "p" * (MAX_SHOWN_CHARS + 1) not in text and len(text) < 4000, len(text)
    assert not any(line.startswith("b") for line in text.splitlines()), text  # "a\nb" kept on its line
