"""How many resources per second the pack's `Analyze` handles over gRPC, next to a floor, and how
long one `AnalyzeStack` of the same resources takes next to the floor's.

The floor is a pack with the same policies (names, levels, config schemas) whose validators do
nothing: it costs the protocol, the SDK's deserialization and proxies, and its per-policy loop. The
ratio real/floor says what the rules themselves add. Target: `Analyze` within 1.25x. Median of
several runs, the two packs measured alternately so that machine noise falls on both.

    python -m benchmarks.analyzer_throughput [--resources 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
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
from gpu_aks_policies.pack import PACK_NAME, build_policies

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
    parser.add_argument("--resources", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    items = workload()
    stack_items = (items * (args.resources // len(items) + 1))[:args.resources]
    stack_items = [(type_, f"{name}-{index}", props) for index, (type_, name, props) in enumerate(stack_items)]
    with tempfile.TemporaryDirectory() as noop_dir:
        (Path(noop_dir) / "PulumiPolicy.yaml").write_text("runtime: python\n")
        (Path(noop_dir) / "__main__.py").write_text(NOOP_PACK_MAIN)
        with PolicyPackProcess() as real, PolicyPackProcess(Path(noop_dir)) as floor:
            real_rates, floor_rates, real_stack, floor_stack = [], [], [], []
            for _ in range(args.runs):
                floor_rates.append(measure(floor, items, args.resources))
                real_rates.append(measure(real, items, args.resources))
                floor_stack.append(measure_stack(floor, stack_items))
                real_stack.append(measure_stack(real, stack_items))
    real_rate, floor_rate = statistics.median(real_rates), statistics.median(floor_rates)
    ratio = floor_rate / real_rate
    print(f"Analyze over gRPC, {args.resources} resources ({len(items)} distinct) x {args.runs} runs (median):")
    print(f"  gpu-aks pack        {real_rate:8.1f} resources/s")
    print(f"  no-op floor         {floor_rate:8.1f} resources/s")
    print(f"  time ratio          {ratio:8.3f}x the floor (target <= 1.25x)")
    real_s, floor_s = statistics.median(real_stack), statistics.median(floor_stack)
    print(f"AnalyzeStack over gRPC, one stack of {args.resources} resources x {args.runs} runs (median):")
    print(f"  gpu-aks pack        {real_s:8.3f} s")
    print(f"  no-op floor         {floor_s:8.3f} s")
    print(f"  time ratio          {real_s / floor_s:8.3f}x the floor")


if __name__ == "__main__":
    main()
