"""How many resources per second the pack's `Analyze` handles over gRPC, next to a floor.

The floor is a pack with the same five policies (names, levels, config schemas) whose validators do
nothing: it costs the protocol, the SDK's deserialization and proxies, and its per-policy loop. The
ratio real/floor says what the rules themselves add. Target: within 1.25x. Median of several runs.

    python -m benchmarks.analyzer_throughput [--resources 400] [--runs 5]
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
SEEDS = ROOT / "tests" / "manifests" / "seeds"

NOOP_PACK_MAIN = f'''
import sys
sys.path.insert(0, {str(ROOT)!r})
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy
from policies.pack import PACK_NAME, build_policies

def nothing(args, report):
    return None

def noop(policy):
    kind = ResourceValidationPolicy if isinstance(policy, ResourceValidationPolicy) else StackValidationPolicy
    return kind(name=policy.name, description=policy.description, validate=nothing,
                enforcement_level=policy.enforcement_level, config_schema=policy.config_schema)

PolicyPack(name=PACK_NAME, policies=[noop(p) for p in build_policies()], enforcement_level=EnforcementLevel.MANDATORY)
'''


def workload() -> list[tuple[str, str, object]]:
    """A realistic mix: GPU workloads of several kinds, seeds, and an AKS GPU pool."""
    items = []
    for path in sorted(SEEDS.glob("*.yaml")):
        manifest = yaml.safe_load(path.read_text())
        group_version = manifest["apiVersion"] if "/" in manifest["apiVersion"] else "core/" + manifest["apiVersion"]
        items.append((f"kubernetes:{group_version}:{manifest['kind']}", path.stem, struct(manifest)))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=400)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    items = workload()
    with tempfile.TemporaryDirectory() as noop_dir:
        (Path(noop_dir) / "PulumiPolicy.yaml").write_text("runtime: python\n")
        (Path(noop_dir) / "__main__.py").write_text(NOOP_PACK_MAIN)
        with PolicyPackProcess() as real, PolicyPackProcess(Path(noop_dir)) as floor:
            real_rates, floor_rates = [], []
            for _ in range(args.runs):
                floor_rates.append(measure(floor, items, args.resources))
                real_rates.append(measure(real, items, args.resources))
    real_rate, floor_rate = statistics.median(real_rates), statistics.median(floor_rates)
    ratio = floor_rate / real_rate
    print(f"Analyze over gRPC, {args.resources} resources x {args.runs} runs (median):")
    print(f"  gpu-aks pack        {real_rate:8.1f} resources/s")
    print(f"  no-op floor         {floor_rate:8.1f} resources/s")
    print(f"  time ratio          {ratio:8.3f}x the floor (target <= 1.25x)")


if __name__ == "__main__":
    main()
