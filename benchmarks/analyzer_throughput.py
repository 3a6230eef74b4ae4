"""How many resources per second the pack's `Analyze` handles over gRPC, next to two floors, and how
long one `AnalyzeStack` of the same resources takes next to theirs, on several corpora.

The client is shaped like the Pulumi CLI (`pkg/resource/plugin/analyzer_plugin.go`, `analyzer.Analyze`
and `AnalyzeStack`; the step generator fills them):
- `Configure` first, with every policy's config (its level and its schema's defaults,
  `PolicyPackProcess.configure`): without it the validators see no config at all, a cheaper path the
  CLI never takes;
- one connection, one request at a time;
- each resource once, under its own URN and name (a stack never registers two alike), with the
  `options` the CLI always sends (`marshalResourceOptions`: custom timeouts, the parent) and its
  `provider` (`marshalProvider`: the provider resource's inputs; the platform's Kubernetes provider
  carries the cluster's kubeconfig as a secret).

The corpora (3,000 resources each by default):
- `manifests`: the repository's seed and workload manifests (KServe, Argo, Spark, Trainer, Dynamo,
  KAITO, DRA, ...) and an AKS GPU pool, repeated under distinct names;
- `small-violating`: small GPU workloads of about 16 lines (a Pod, Job, CronJob, Deployment or pod
  template with two or three containers whose amounts are quantity strings), nearly all breaking a
  rule (`benchmarks.checker_throughput.small_manifest`);
- `prod-stack`: what the offline preview of `Pulumi.prod.yaml` registers (`offline.mockrun`): the
  ManagedCluster, the AgentPools, the Prometheus rule groups, the components, the device plugin;
- `manifests-preview`: the manifests as a first `pulumi preview` sends them, with values not known
  yet (a namespace from `ns.metadata.name`, labels from another resource's outputs).

The floors are packs with the same policies (names, levels, config schemas) whose validators do
nothing: one with the SDK as shipped (it converts each request once per policy), one with the pack's
own SDK patches (once per request; the stricter). They cost the protocol, the SDK's deserialization
and proxies, and its per-policy loop; real/floor says what the rules add. Target (issue 37):
`Analyze` within 1.25x of the no-op pack as the SDK ships, on every corpus; speed machinery that is
not needed for that goes. Best of several runs, the packs measured alternately so that
machine noise falls on each. Beside wall time it prints each pack process's own CPU per request
(Linux): the server side alone, which another process's load on a shared machine does not count in.

    python -m benchmarks.analyzer_throughput [--resources 3000] [--runs 3] [--corpus NAME ...] [--pack DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from gpu_aks_policies.pools import is_pool_resource
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from benchmarks.checker_throughput import small_manifest
from offline.analyzer import PACK_DIR, PolicyPackProcess, struct, wire_struct

ROOT = Path(__file__).resolve().parent.parent
MANIFEST_DIRS = (ROOT / "tests" / "manifests" / "seeds", ROOT / "tests" / "manifests" / "workloads")
STACK = "urn:pulumi:bench::gpu-aks::pulumi:pulumi:Stack::gpu-aks-bench"

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

#: (type, name, the wire form of the inputs)
Resource = tuple[str, str, Mapping[str, Any]]


# --- Requests as the CLI builds them ---------------------------------------------------------------


class Providers:
    """The provider resource the CLI names in each request: the platform's Kubernetes provider for
    Kubernetes objects (as the program registers it, its kubeconfig a secret), azure-native's
    default provider for Azure resources, none for components."""

    def __init__(self, kubernetes_inputs: Mapping[str, Any]) -> None:
        self.kubernetes = analyzer_pb2.AnalyzerProviderResource(
            type="pulumi:providers:kubernetes", name="aks-k8s", properties=wire_struct(kubernetes_inputs),
            urn="urn:pulumi:bench::gpu-aks::gpu-aks:index:AksCluster$pulumi:providers:kubernetes::aks-k8s")
        self.azure = analyzer_pb2.AnalyzerProviderResource(
            type="pulumi:providers:azure-native", name="default_3_29_0", properties=struct({"version": "3.29.0"}),
            urn="urn:pulumi:bench::gpu-aks::pulumi:providers:azure-native::default_3_29_0")

    def of(self, type_: str) -> analyzer_pb2.AnalyzerProviderResource | None:
        if type_.startswith("kubernetes:"):
            return self.kubernetes
        if type_.startswith("azure-native:"):
            return self.azure
        return None


def _options() -> analyzer_pb2.AnalyzerResourceOptions:
    # `marshalResourceOptions` always sets the custom timeouts (zero when none) and the parent.
    return analyzer_pb2.AnalyzerResourceOptions(
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(), parent=STACK)


def urn_of(type_: str, name: str) -> str:
    return f"urn:pulumi:bench::gpu-aks::{type_}::{name}"


def analyze_request(resource: Resource, providers: Providers) -> analyzer_pb2.AnalyzeRequest:
    type_, name, inputs = resource
    request = analyzer_pb2.AnalyzeRequest(type=type_, name=name, urn=urn_of(type_, name),
                                          properties=wire_struct(inputs), options=_options())
    provider = providers.of(type_)
    if provider is not None:
        request.provider.CopyFrom(provider)
    return request


def stack_request(resources: list[Resource], providers: Providers) -> analyzer_pb2.AnalyzeStackRequest:
    request = analyzer_pb2.AnalyzeStackRequest()
    for type_, name, inputs in resources:
        resource = request.resources.add(type=type_, name=name, urn=urn_of(type_, name), parent=STACK,
                                         properties=wire_struct(inputs), options=_options())
        provider = providers.of(type_)
        if provider is not None:
            resource.provider.CopyFrom(provider)
    return request


# --- Corpora -------------------------------------------------------------------------------------


def _kubernetes_resource(manifest: Mapping[str, Any], name: str) -> Resource:
    api = manifest["apiVersion"]
    group_version = api if "/" in api else "core/" + api
    return f"kubernetes:{group_version}:{manifest['kind']}", name, manifest


def _is_kubernetes_object(document: Any) -> bool:
    # Only Kubernetes objects are Pulumi resources (a compiled Kubeflow pipeline is not one).
    return isinstance(document, dict) and isinstance(document.get("apiVersion"), str) \
        and isinstance(document.get("kind"), str)


def _renamed(manifest: dict[str, Any], suffix: str) -> dict[str, Any]:
    """The manifest under its own name, as a stack registers each object once."""
    metadata = manifest.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
        return {**manifest, "metadata": {**metadata, "name": f"{metadata['name']}-{suffix}"}}
    return manifest


def _repeated(templates: list[Resource], count: int,
              vary: Callable[[dict[str, Any], int], dict[str, Any]] = lambda manifest, _: manifest) -> list[Resource]:
    resources = []
    for index in range(count):
        type_, name, inputs = templates[index % len(templates)]
        if type_.startswith("kubernetes:"):
            inputs = vary(_renamed(dict(inputs), str(index)), index)
        resources.append((type_, f"{name}-{index}", inputs))
    return resources


def manifest_templates() -> list[Resource]:
    """The seed manifests, real controllers' GPU workloads, and an AKS GPU pool."""
    templates = []
    for path in sorted(p for directory in MANIFEST_DIRS for p in directory.glob("*.yaml")):
        for index, document in enumerate(yaml.safe_load_all(path.read_text())):
            if _is_kubernetes_object(document):
                templates.append(_kubernetes_resource(document, f"{path.stem}-{index}"))
    pool = {"agentPoolName": "gput4", "vmSize": "Standard_NC4as_T4_v3", "enableAutoScaling": True,
            "minCount": 0.0, "maxCount": 2.0, "nodeTaints": ["sku=gpu:NoSchedule"]}
    templates.append(("azure-native:containerservice:AgentPool", "gput4", pool))
    return templates


def manifests(count: int) -> list[Resource]:
    return _repeated(manifest_templates(), count)


def manifests_preview(count: int) -> list[Resource]:
    """As a first preview sends them: labels from another resource's outputs are unknown in every
    object, and in every third the namespace (`ns.metadata.name` of a Namespace not created yet)."""
    def unknown_values(manifest: dict[str, Any], index: int) -> dict[str, Any]:
        metadata = manifest.get("metadata")
        if not isinstance(metadata, dict):
            return manifest
        metadata = {**metadata, "labels": {"app.kubernetes.io/instance": UNKNOWN_STRING_VALUE}}
        if index % 3 == 0:
            metadata["namespace"] = UNKNOWN_STRING_VALUE
        return {**manifest, "metadata": metadata}

    return _repeated(manifest_templates(), count, unknown_values)


def small_violating(count: int) -> list[Resource]:
    resources: list[Resource] = []
    rng = random.Random(2)
    for index in range(count):
        for document in yaml.safe_load_all(small_manifest(index, rng)):
            for item in document.get("items", []) if document.get("kind") == "List" else [document]:
                resources.append(_kubernetes_resource(item, f"small-{len(resources)}"))
        if len(resources) >= count:
            break
    return resources[:count]


def _prod_run() -> Any:
    """The prod program under the mock engine; what it logs (its warnings) is not the benchmark's."""
    from tools.preview import run_stack_program  # the program and its SDKs: imported only here

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return run_stack_program("prod")


def prod_stack(count: int, run: Any) -> list[Resource]:
    """Every resource the prod program registers (components too: the CLI analyzes them as well)."""
    return _repeated([(r.type, r.name, r.wire_inputs) for r in run.resources], count)


def kubernetes_provider_inputs(run: Any) -> Mapping[str, Any]:
    return next(r.wire_inputs for r in run.resources if r.type == "pulumi:providers:kubernetes")


# --- Measuring -------------------------------------------------------------------------------------


def process_cpu_seconds(pid: int) -> float | None:
    """User and system CPU seconds of a running process (Linux `/proc/<pid>/stat`), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)
    except (OSError, IndexError, ValueError):
        return None


def measure(pack: PolicyPackProcess, requests: list[analyzer_pb2.AnalyzeRequest]) -> tuple[float, float | None]:
    """Resources per second, each request once, one at a time, and the pack process's CPU seconds
    per request (what its own work costs, whatever else the machine runs); the pack configured
    afresh first (a `Configure` starts a new operation, as each CLI run does)."""
    pack.configure({})
    analyze = pack.analyzer.Analyze
    for request in requests[:200]:  # warm-up
        analyze(request)
    pack.configure({})
    pid = pack.process.pid if pack.process is not None else None
    cpu_before = process_cpu_seconds(pid) if pid is not None else None
    start = time.perf_counter()
    for request in requests:
        analyze(request)
    rate = len(requests) / (time.perf_counter() - start)
    cpu_after = process_cpu_seconds(pid) if pid is not None else None
    cpu = (cpu_after - cpu_before) / len(requests) if cpu_before is not None and cpu_after is not None else None
    return rate, cpu


def measure_stack(pack: PolicyPackProcess, request: analyzer_pb2.AnalyzeStackRequest) -> float:
    start = time.perf_counter()
    pack.analyzer.AnalyzeStack(request)
    return time.perf_counter() - start


FLOORS = {"no-op pack, SDK as shipped": "False", "no-op pack with the pack's SDK patches": "True"}
REAL = "gpu-aks pack"
CORPORA = ("manifests", "small-violating", "prod-stack", "manifests-preview")


def corpus(name: str, count: int, run: Any) -> list[Resource]:
    if name == "prod-stack":
        return prod_stack(count, run)
    return {"manifests": manifests, "small-violating": small_violating, "manifests-preview": manifests_preview}[name](count)


def _noop_packs(directory: Path) -> Iterator[PolicyPackProcess]:
    for number, patched in enumerate(FLOORS.values()):
        folder = directory / f"noop{number}"
        folder.mkdir()
        (folder / "PulumiPolicy.yaml").write_text("runtime: python\n")
        (folder / "__main__.py").write_text(NOOP_PACK_MAIN.replace("{patched}", patched))
        yield PolicyPackProcess(folder)


def _ratios(values: Mapping[str, float], real_over: Callable[[float, float], float]) -> str:
    return "  ".join(f"{real_over(values[REAL], values[floor]):5.3f}x vs {floor}" for floor in FLOORS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--corpus", action="append", choices=CORPORA, help="only these corpora (repeatable)")
    parser.add_argument("--pack", type=Path, default=PACK_DIR,
                        help="the pack folder to measure (another version's policies/, to compare)")
    args = parser.parse_args()
    names = args.corpus or list(CORPORA)
    run = _prod_run()  # also the platform's Kubernetes provider, which every corpus's objects name
    providers = Providers(kubernetes_provider_inputs(run))
    corpora = {name: corpus(name, args.resources, run) for name in names}
    with tempfile.TemporaryDirectory() as directory:
        shipped, patched = _noop_packs(Path(directory))
        with PolicyPackProcess(args.pack) as real, shipped, patched:
            packs = {REAL: real, **dict(zip(FLOORS, (shipped, patched), strict=True))}
            for name, resources in corpora.items():
                requests = [analyze_request(resource, providers) for resource in resources]
                stack = stack_request(resources, providers)
                rates: dict[str, list[float]] = {pack: [] for pack in packs}
                cpus: dict[str, list[float]] = {pack: [] for pack in packs}
                stacks: dict[str, list[float]] = {pack: [] for pack in packs}
                for _ in range(args.runs):  # interleaved, so that a slower stretch weighs on every pack
                    for pack_name, pack in packs.items():
                        rate, cpu = measure(pack, requests)
                        rates[pack_name].append(rate)
                        if cpu is not None:
                            cpus[pack_name].append(cpu)
                    for pack_name, pack in packs.items():
                        stacks[pack_name].append(measure_stack(pack, stack))
                best_rate = {pack: max(values) for pack, values in rates.items()}
                best_stack = {pack: min(values) for pack, values in stacks.items()}
                pools = sum(1 for type_, _, _ in resources if is_pool_resource(type_))
                print(f"{name}: {len(resources)} resources ({pools} AKS pools), best of {args.runs} runs")
                print("  Analyze, one at a time: " + ", ".join(f"{pack} {rate:.0f}/s" for pack, rate in best_rate.items()))
                ratios = _ratios(best_rate, lambda real_rate, floor: floor / real_rate)
                print(f"    pack at {ratios} (target <= 1.25x vs the SDK as shipped)")
                if all(cpus.values()):
                    # The pack process's own CPU per request: the server side alone, and far steadier than
                    # wall time on a shared machine (another process's load does not count in it).
                    best_cpu = {pack: min(values) for pack, values in cpus.items()}
                    print("  pack process CPU per request: "
                          + ", ".join(f"{pack} {seconds * 1e6:.0f} us" for pack, seconds in best_cpu.items()))
                    print(f"    pack at {_ratios(best_cpu, lambda real_cpu, floor: real_cpu / floor)}")
                print("  AnalyzeStack, one stack: " + ", ".join(f"{pack} {s:.3f} s" for pack, s in best_stack.items()))
                print(f"    pack at {_ratios(best_stack, lambda real_s, floor: real_s / floor)}")


if __name__ == "__main__":
    main()
