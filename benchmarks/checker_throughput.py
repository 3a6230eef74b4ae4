"""The manifest checker over 10,000 generated manifests, next to PyYAML's C loader parsing the same
files and nothing else (the floor), in the same run: on a realistic corpus (mostly CPU services, some
GPU pods, a few wrong), on one where most manifests break a rule, so that building and writing the
report weighs most, and on small manifests of about 16 lines (two or three containers, nearly all
breaking a rule) as two processes, start-up included; how its time grows with the number of
documents in one file; and the offline preview's wall time next to the time it takes only to import
the SDK modules it needs.

    python -m benchmarks.checker_throughput [--manifests 10000] [--runs 3] [--no-preview]

The checker is timed as its command runs it (`gpu_aks_policies.check.main`: read, check, render the report),
in process so that interpreter start-up does not blur the ratio, in CPU seconds; where most manifests break a
rule, once per report format (text, JSON, SARIF); on the small manifests as a process against a process that
only imports PyYAML and parses them, wall and CPU time, the best of several interleaved runs (a shared
machine's noise falls on both). Targets: within 1.5x of parsing alone, in every corpus and format; time per
document flat from 10,000 to 100,000 documents in one file (linear); the preview within 2x of its imports.
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from gpu_aks_policies.check import check_paths
from gpu_aks_policies.check import main as check_main
from gpu_aks_policies.rules import default_rule_config

ROOT = Path(__file__).resolve().parent.parent
OBJECT_KINDS = ("Deployment", "StatefulSet", "Job", "Pod", "CronJob")


def manifest(index: int, rng: random.Random, violating: bool = False) -> str:
    """A realistic workload: most are CPU services, some ask for GPUs, some get it wrong. With
    `violating`, nearly every one asks for GPUs and most break a rule (no toleration, a fraction)."""
    kind = OBJECT_KINDS[index % len(OBJECT_KINDS)]
    gpus = rng.choice([1, 2, "500m", "1500m", 4, None] if violating else [None, None, None, 1, 2, "500m"])
    resources = {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}
    if gpus is not None:
        resources["limits"]["nvidia.com/gpu"] = gpus
    pod = {"containers": [{"name": f"app-{index}", "image": f"registry.example.com/app:{index}",
                           "ports": [{"containerPort": 8080}], "env": [{"name": "MODE", "value": "prod"}],
                           "resources": resources}]}
    if gpus is not None and rng.random() < (0.2 if violating else 0.7):
        pod["tolerations"] = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
        pod["nodeSelector"] = {"accelerator": "nvidia"}
    template = {"metadata": {"labels": {"app": f"app-{index}"}}, "spec": pod}
    metadata = {"name": f"app-{index}", "namespace": "team-a", "labels": {"app": f"app-{index}", "tier": "backend"}}
    if kind == "Pod":
        body = {"spec": pod}
    elif kind == "CronJob":
        body = {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}}}
    else:
        body = {"spec": {"selector": {"matchLabels": {"app": f"app-{index}"}}, "template": template}}
    api = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1", "Pod": "v1", "CronJob": "batch/v1"}
    return yaml.safe_dump({"apiVersion": api[kind], "kind": kind, "metadata": metadata, **body}, sort_keys=False)


SMALL_KINDS = ("Pod", "Job", "CronJob", "Deployment", "List", "PodTemplate")


def _container(index: int, number: int, gpu: bool, rng: random.Random) -> str:
    # Limits alone, in block style. Requests too, on one line, gave the floor more scalars to parse
    # per finding and lowered the ratio: an easier corpus, so they are left out.
    gpus = rng.choice(['"1"', "2", '"500m"', "1", "1500m"])
    limits = f"{{nvidia.com/gpu: {gpus}, cpu: {rng.choice(['500m', '2', '1500m'])}, memory: {rng.choice(['1Gi', '512Mi'])}}}" \
        if gpu else f"{{cpu: 250m, memory: {rng.choice(['256Mi', '1G'])}}}"
    return (f"- name: c{number}\n  image: registry.example.com/app{index}:{number}\n"
            f"  resources:\n    limits: {limits}\n")


def small_manifest(index: int, rng: random.Random) -> str:
    """A small manifest of about 16 lines: a Pod, Job, CronJob, Deployment, List or pod template,
    with two or three containers whose resources are quantity strings, any one of them asking for a
    GPU; nearly every one breaks a rule (a GPU asked for with no toleration, or a fraction of one),
    and none selects GPU nodes."""
    kind = SMALL_KINDS[index % len(SMALL_KINDS)]
    count = rng.choice((2, 2, 3))
    gpu_at = rng.randrange(count)
    containers = "".join(_container(index, number, number == gpu_at, rng) for number in range(count))
    tolerations = "tolerations: [{key: sku, operator: Exists}]\n" if rng.random() < 0.1 else ""

    def pod(indent: int) -> str:
        pad = " " * indent
        return "".join(f"{pad}{line}\n" for line in f"{tolerations}containers:\n{containers}".splitlines())

    if kind == "Pod":
        return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{index}}}\nspec:\n{pod(2)}"
    if kind == "PodTemplate":
        return f"apiVersion: v1\nkind: PodTemplate\nmetadata: {{name: t{index}}}\ntemplate:\n  spec:\n{pod(4)}"
    if kind == "Job":
        return f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j{index}}}\nspec:\n  template:\n    spec:\n{pod(6)}"
    if kind == "CronJob":
        return (f"apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: cj{index}}}\nspec:\n  schedule: '0 * * * *'\n"
                f"  jobTemplate:\n    spec:\n      template:\n        spec:\n{pod(10)}")
    if kind == "Deployment":
        return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{index}}}\nspec:\n"
                f"  selector: {{matchLabels: {{app: d{index}}}}}\n  template:\n    metadata: {{labels: {{app: d{index}}}}}\n"
                f"    spec:\n{pod(6)}")
    return f"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {{name: l{index}}}\n  spec:\n{pod(4)}"


def small_corpus(directory: Path, count: int) -> list[Path]:
    rng = random.Random(2)
    directory.mkdir()
    files = []
    for index in range(count):
        path = directory / f"s{index:05d}.yaml"
        path.write_text(small_manifest(index, rng))
        files.append(path)
    return files


PARSE_ONLY_PROCESS = ("import sys, os, yaml\n"
                      "for name in sorted(os.listdir(sys.argv[1])):\n"
                      "    with open(os.path.join(sys.argv[1], name), encoding='utf-8') as f:\n"
                      "        list(yaml.load_all(f.read(), Loader=yaml.CSafeLoader))\n")


def child_times(command: list[str]) -> tuple[float, float]:
    """Wall seconds of a command, and the CPU seconds (user and system) it used: on a shared
    machine the CPU time shows what the wall time blurs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = wall_time(command)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def process_to_process(directory: Path, runs: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds, the best of `runs`, of a process that only imports PyYAML and parses the
    files with its C loader, and of the checker as a command over the folder; interleaved run by run
    so that a slower stretch of the machine weighs on both."""
    python = sys.executable
    return floor_against(runs, [python, "-c", PARSE_ONLY_PROCESS, str(directory)],
                         [python, "-m", "gpu_aks_policies.check", "--format", "text", str(directory)])


def floor_against(runs: int, floor: list[str], command: list[str]) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds, the best of `runs`, of `floor` and of `command`, interleaved run by run."""
    floor_times, command_times = best_of(runs, floor, command)
    return floor_times, command_times


def best_of(runs: int, *commands: list[str]) -> list[tuple[float, float]]:
    """(wall, CPU) seconds, the best of `runs`, of each command, interleaved run by run so that a
    slower stretch of the machine weighs on every one."""
    for command in commands:
        wall_time(command)  # warm the page cache
    times: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(runs):
        for command, measured in zip(commands, times, strict=True):
            measured.append(child_times(command))
    return [(min(wall for wall, _ in measured), min(cpu for _, cpu in measured)) for measured in times]


def parse_only(files: list[Path]) -> int:
    documents = 0
    for path in files:
        documents += sum(1 for _ in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader))
    return documents


def run_checker(paths: list[str], *options: str) -> None:
    check_main([*options, *paths], stdout=io.StringIO())


SMALL_POD = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{index}}}\nspec:\n  containers:\n  - name: c\n"
             "    image: i\n    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n")


def one_file_of(documents: int, directory: str) -> str:
    """Small pods, half of them asking for a GPU without tolerating the taint, in one stream."""
    path = Path(directory) / f"stream-{documents}.yaml"
    path.write_text("---\n".join(SMALL_POD.format(index=index, gpus=index % 2) for index in range(documents)))
    return str(path)


def timed(function, *args) -> float:
    """CPU seconds of this process: the machine running the benchmark may be shared, and both sides
    of every ratio run in this one thread, so CPU time compares them without other loads' noise."""
    start = time.process_time()
    function(*args)
    return time.process_time() - start


def wall_time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True)
    return time.perf_counter() - start


def corpus(directory: Path, count: int, violating: bool) -> list[Path]:
    rng = random.Random(1)
    directory.mkdir()
    files = []
    for index in range(count):
        path = directory / f"m{index:05d}.yaml"
        path.write_text(manifest(index, rng, violating))
        files.append(path)
    return files


def against_parsing(files: list[Path], directory: Path, runs: int, formats: tuple[str, ...]) -> tuple[float, dict[str, float]]:
    """Median seconds to parse the files alone, and to run the checker over them writing each report
    format, interleaved run by run so that a slower stretch of the machine weighs on every side."""
    parse_only(files)  # warm the page cache
    run_checker([str(directory)])
    parse_times: list[float] = []
    check_times: dict[str, list[float]] = {fmt: [] for fmt in formats}
    for _ in range(runs):
        parse_times.append(timed(parse_only, files))
        for fmt in formats:
            check_times[fmt].append(timed(run_checker, [str(directory)], "--format", fmt))
    return statistics.median(parse_times), {fmt: statistics.median(times) for fmt, times in check_times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifests", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-preview", action="store_true", help="skip the offline preview's timing")
    args = parser.parse_args()
    configs = default_rule_config()
    with tempfile.TemporaryDirectory() as directory:
        # Where most manifests break a rule the report weighs most: every format is timed there.
        for title, violating, formats in (("mostly clean", False, ("text",)),
                                          ("most break a rule", True, ("text", "json", "sarif"))):
            folder = Path(directory) / ("violating" if violating else "realistic")
            files = corpus(folder, args.manifests, violating)
            parse_time, check_times = against_parsing(files, folder, args.runs, formats)
            report = check_paths([str(folder)], configs)
            print(f"Manifest checker, {args.manifests} manifests, {title}, x {args.runs} runs (median CPU time):")
            print(f"  PyYAML C loader, parse only   {parse_time:7.2f} s  ({args.manifests / parse_time:8.0f} manifests/s)")
            for fmt, check_time in check_times.items():
                command = f"gpu-aks-check --format {fmt}"
                print(f"  {command:28s}  {check_time:7.2f} s  ({args.manifests / check_time:8.0f} manifests/s)  "
                      f"{check_time / parse_time:6.3f}x parsing alone (target <= 1.5x)")
            print(f"  ({report.checked} objects, {len(report.violations)} violations found)")
        small_folder = Path(directory) / "small"
        small_corpus(small_folder, args.manifests)
        (floor_wall, floor_cpu), (check_wall, check_cpu) = process_to_process(small_folder, args.runs)
        print(f"Manifest checker, {args.manifests} small manifests (Pod, Job, CronJob, Deployment, List, pod template; "
              f"two or three containers; nearly all break a rule), process to process, best of {args.runs} runs, "
              "wall (CPU):")
        print(f"  PyYAML C loader, parse only (python -c)       {floor_wall:6.2f} s  ({floor_cpu:5.2f} s)")
        print(f"  gpu-aks-check DIR                             {check_wall:6.2f} s  ({check_cpu:5.2f} s)")
        print(f"  ratio                                         {check_wall / floor_wall:6.3f}x  "
              f"({check_cpu / floor_cpu:5.3f}x)  (target <= 1.5x)")
        small, large = one_file_of(10_000, directory), one_file_of(100_000, directory)
        no_cap = ("--max-file-size", str(1 << 30))
        per_document = [timed(run_checker, [path], *no_cap) / count for path, count in ((small, 10_000), (large, 100_000))]
    print("Documents in one file, time per document:")
    print(f"  10,000 documents              {per_document[0] * 1e6:7.1f} us")
    print(f"  100,000 documents             {per_document[1] * 1e6:7.1f} us")
    print(f"  ratio                         {per_document[1] / per_document[0]:7.3f}x (linear: about 1x)")
    if args.no_preview:
        return

    (floor_wall, floor_cpu), (preview_wall, preview_cpu) = preview_against_imports(args.runs)
    print(f"Offline preview (prod), best of {args.runs} runs, interleaved, wall (CPU of the process and its children):")
    print(f"  importing the SDK modules it needs              {floor_wall:6.2f} s  ({floor_cpu:5.2f} s)")
    print(f"  python -m tools.preview prod                    {preview_wall:6.2f} s  ({preview_cpu:5.2f} s)")
    print(f"  ratio                                           {preview_wall / floor_wall:6.2f}x  "
          f"({preview_cpu / floor_cpu:5.2f}x)  (target <= 2x)")


#: What the preview cannot run without: the Pulumi SDK and the provider modules the program uses.
SDK_IMPORTS = ("import pulumi, pulumi_azure_native.containerservice, pulumi_azure_native.authorization, "
               "pulumi_azure_native.monitor, pulumi_azure_native.alertsmanagement, pulumi_kubernetes.apps.v1, "
               "pulumi_kubernetes.core.v1")


def preview_command(stack: str = "prod") -> list[str]:
    return [sys.executable, "-m", "tools.preview", stack]


def preview_against_imports(runs: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds, the best of `runs`, of importing the SDK modules and of the preview."""
    return floor_against(runs, [sys.executable, "-c", SDK_IMPORTS], preview_command())


if __name__ == "__main__":
    main()
