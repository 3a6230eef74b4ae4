"""How many resources per second the pack's `Analyze` handles over gRPC, next to a floor, and how
long one `AnalyzeStack` of the same resources takes next to the floor's.

The client is shaped like the Pulumi CLI: `Configure` first, with every policy's config (its level
and its schema's defaults, `PolicyPackProcess.configure`), then one connection and one request at
a time. Without `Configure` the validators see no config at all, a cheaper path the CLI never takes.

The floor is a pack with the same policies (names, levels, config schemas) and the same SDK patches
whose validators do nothing: it costs the protocol, the SDK's deserialization and proxies, and its
per-policy loop. The
ratio real/floor says what the rules themselves add. Target: `Analyze` within 1.15x. Best of
several runs, the packs measured alternately so that machine noise falls on each. Two floors: the
no-op pack with the SDK as shipped (it converts each request once per policy), and one with the
pack's own SDK patches (once per request), the stricter.

    python -m benchmarks.analyzer_throughput [--resources 3000] [--runs 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from tools.analyzer import PolicyPackProcess, struct

ROOT = Path(__file__).resolve().parent.parent
MANIFEST_DIRS = (ROOT / "tests" / "manifests" / "seeds", ROOT / "tests" / "manifests" / "workloads")

NOOP_PACK_MAIN = f'''
import sys
sys.path.insert(0, {str(ROOT)!r})
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy
from gpu_aks_policies.pack import OPERATION, PACK_NAME, build_policies
from gpu_aks_policies.sdk_patches import install

if {{patched}}:
    install(on_configure=OPERATION.reset)  # the pack's own SDK patches: one conversion per request

def nothing(args, report):
    return None

def noop(policy):
    kind = ResourceValidationPolicy if isinstance(policy, ResourceValidationPolicy) else StackValidationPolicy
    return kind(name=policy.name, description=policy.description, validate=nothing,
                enforcement_level=policy.enforcement_level, config_schema=policy.config_schema)

PolicyPack(name=PACK_NAME, policies=[noop(p) for p in build_policies()], enforcement_level=EnforcementLevel.MANDATORY)
'''


def workload() -> list[tuple[str, str, object]]:
    """A realistic mix: the seed manifests, real controllers' GPU workloads (KServe, Argo, Spark,
    Trainer, Dynamo, KAITO, DRA), and an AKS GPU pool."""
    items = []
    for path in sorted(p for directory in MANIFEST_DIRS for p in directory.glob("*.yaml")):
        for index, manifest in enumerate(yaml.safe_load_all(path.read_text())):
            # Only Kubernetes objects are Pulumi resources (a compiled Kubeflow pipeline is not one).
            if not isinstance(manifest, dict) or not isinstance(manifest.get("apiVersion"), str) \
                    or not isinstance(manifest.get("kind"), str):
                continue
            api = manifest["apiVersion"]
            group_version = api if "/" in api else "core/" + api
            items.append((f"kubernetes:{group_version}:{manifest['kind']}", f"{path.stem}-{index}", struct(manifest)))
    pool = {"agentPoolName": "gput4", "vmSize": "Standard_NC4as_T4_v3", "enableAutoScaling": True,
            "minCount": 0.0, "maxCount": 2.0, "nodeTaints": ["sku=gpu:NoSchedule"]}
    items.append(("azure-native:containerservice:AgentPool", "gput4", struct(pool)))
    return items


def measure(pack: PolicyPackProcess, items: list, count: int) -> float:
    for type_, name, props in items:  # warm-up
        pack.analyze(type_, name, props)
    start = time.perf_counter()
    for index in range(count):
        type_, name, props = items[index % len(items)]
        pack.analyze(type_, name, props)
    return count / (time.perf_counter() - start)


def measure_stack(pack: PolicyPackProcess, items: list) -> float:
    resources = [(f"urn:pulumi:bench::gpu-aks::{type_}::{name}", type_, name, props) for type_, name, props in items]
    start = time.perf_counter()
    pack.analyze_stack(resources)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    items = workload()
    stack_items = (items * (args.resources // len(items) + 1))[:args.resources]
    stack_items = [(type_, f"{name}-{index}", props) for index, (type_, name, props) in enumerate(stack_items)]
    floors = {"no-op pack, SDK as shipped": "False", "no-op pack with the pack's SDK patches": "True"}
    with tempfile.TemporaryDirectory() as directory:
        folders = []
        for number, patched in enumerate(floors.values()):
            folder = Path(directory) / f"noop{number}"
            folder.mkdir()
            (folder / "PulumiPolicy.yaml").write_text("runtime: python\n")
            (folder / "__main__.py").write_text(NOOP_PACK_MAIN.replace("{patched}", patched))
            folders.append(folder)
        with PolicyPackProcess() as real, PolicyPackProcess(folders[0]) as shipped, \
                PolicyPackProcess(folders[1]) as patched_floor:
            packs = {"gpu-aks pack": real, **dict(zip(floors, (shipped, patched_floor), strict=True))}
            for pack in packs.values():
                pack.configure({})  # as the CLI does: every policy's level and defaults
            rates: dict[str, list[float]] = {name: [] for name in packs}
            stacks: dict[str, list[float]] = {name: [] for name in packs}
            for _ in range(args.runs):  # interleaved, so that a slower stretch weighs on every pack
                for name, pack in packs.items():
                    rates[name].append(measure(pack, items, args.resources))
                for name, pack in packs.items():
                    stacks[name].append(measure_stack(pack, stack_items))
    best_rate = {name: max(values) for name, values in rates.items()}
    best_stack = {name: min(values) for name, values in stacks.items()}
    print(f"Analyze over gRPC, configured as the CLI does, {args.resources} resources ({len(items)} distinct), "
          f"one at a time, best of {args.runs} runs:")
    for name, rate in best_rate.items():
        ratio = "" if name == "gpu-aks pack" else \
            f"  pack at {rate / best_rate['gpu-aks pack']:6.3f}x its time (target <= 1.15x)"
        print(f"  {name:40s} {rate:8.1f} resources/s{ratio}")
    print(f"AnalyzeStack over gRPC, one stack of {args.resources} resources, best of {args.runs} runs:")
    for name, seconds in best_stack.items():
        ratio = "" if name == "gpu-aks pack" else f"  pack at {best_stack['gpu-aks pack'] / seconds:6.3f}x its time"
        print(f"  {name:40s} {seconds:8.3f} s{ratio}")


if __name__ == "__main__":
    main()
