"""The speed a user feels: `pulumi preview` of a stack on the real engine with the policy pack, against the
same preview without it, in the same run.

    python -m benchmarks.engine_preview [--stack prod] [--runs 5]

Needs `make engines` (build/engines/bin). The previews run in a temporary copy of the repository with a
`file://` backend and the stand-in providers, in rounds back to back (with the pack, with a no-op pack, without
one), each figure the best of `--runs` wall times. The no-op pack (one policy that finds nothing) is the floor
every Python pack sits on. Prints the three, their ratios (the pack's target is within 1.10x of no pack on a
quiet machine) and the machine's load average, then where the pack's time goes, each part measured apart from
the engine in the same run, best of `--runs`: the probe Pulumi's Python host runs in the pack's virtualenv
before it starts the pack (`python -c "import pulumi.run.plugin"`), the interpreter's start, the imports
`python -m pulumi.policy` and `pulumi_policy` make (the pulumi SDK), the rest of the start until the pack prints its
port (its own modules and `PolicyPack`), the handshake the engine makes before the program starts
(`GetAnalyzerInfo`, `Configure`: pulumi v3.274.0 pkg/engine/update.go, `newUpdateSource` calls
`loadPolicyPlugins`, which waits for every pack to load, before it starts the program, so all of this is on
the preview's path), and one `Analyze` per
resource of the stack and `AnalyzeStack`. The gRPC-level floor (benchmarks/analyzer_throughput.py) stays the
guard for the pack's own cost per request.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from offline.analyzer import PACK_DIR, PolicyPackProcess, wire_struct
from testbed import build
from testbed.workspace import Workspace
from tools.overlay_venv import overlay

TARGET = 1.10

#: The floor any Python pack sits on: one policy that finds nothing, as `pulumi policy new` writes a pack. What the
#: engine and Pulumi's Python host do for a pack, and the SDK's imports, it pays as gpu-aks's pack does.
NOOP_PACK = {
    "PulumiPolicy.yaml": "runtime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: venv\n",
    "__main__.py": "from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy\n\n"
                   "PolicyPack(name='noop', enforcement_level=EnforcementLevel.MANDATORY, policies=[\n"
                   "    ResourceValidationPolicy(name='nothing', description='Finds nothing.',\n"
                   "                             validate=lambda args, report_violation: None)])\n",
}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(env: dict[str, str], cwd: Path, *args: str) -> tuple[float, float]:
    """Wall seconds of one CLI run, and the CPU seconds of it and every process it started and reaped (the
    language host, the providers, the pack): a figure the machine's other work inflates far less."""
    cpu = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run([str(build.BIN / "pulumi"), *args, "--non-interactive"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pulumi {' '.join(args)} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    return elapsed, _children_cpu() - cpu


def _wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=PACK_DIR, check=True, capture_output=True)
    return time.perf_counter() - started


def _pack_start_and_calls(stack: str) -> tuple[float, float, float, int]:
    """One pack process as the engine drives it: seconds from its start to its port, the handshake, and
    the Analyze calls for every resource of the stack (its mock run's inputs) with AnalyzeStack; and how
    many resources."""
    from tools.preview import run_stack_program  # the program under the mock engine, as the offline preview runs it

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        run = run_stack_program(stack)
    requests = [(r.type, r.name, wire_struct(r.wire_inputs), r.urn) for r in run.resources]
    stack_request = [(r.urn, r.type, r.name, wire_struct(r.outputs)) for r in run.resources if r.custom]
    started = time.perf_counter()
    with PolicyPackProcess(python=str(PACK_DIR / "venv" / "bin" / "python")) as pack:
        ready = time.perf_counter()
        pack.info()
        pack.configure({})
        handshaken = time.perf_counter()
        for type_, name, properties, urn in requests:
            pack.analyze(type_, name, properties, urn)
        pack.analyze_stack(stack_request)
        done = time.perf_counter()
    return ready - started, handshaken - ready, done - handshaken, len(requests)


def pack_breakdown(stack: str, runs: int) -> list[tuple[str, float]]:
    """Where the pack's time goes, each part the best of `runs` (see the module's doc)."""
    python = str(PACK_DIR / "venv" / "bin" / "python")  # PulumiPolicy.yaml's `virtualenv: venv`
    interpreter = min(_wall([python, "-u", "-c", "pass"]) for _ in range(runs))
    # Pulumi's Python host runs this probe in the pack's virtualenv before it starts any pack or plugin
    # (sdk/python/cmd/pulumi-language-python main.go `RunPlugin`: "Check if the `pulumi.run.plugin` module
    # exists"; our host does the same, testbed/engines/pulumi/langhost/python.go): an interpreter importing
    # the SDK, on the preview's path as much as the pack's own start.
    probe = min(_wall([python, "-c", "import pulumi.run.plugin"]) for _ in range(runs))
    sdk = min(_wall([python, "-u", "-c", "import pulumi, pulumi.runtime, pulumi_policy"]) for _ in range(runs))
    measured = [_pack_start_and_calls(stack) for _ in range(runs)]
    to_port, handshake, calls, resources = (min(values) for values in zip(*measured, strict=True))
    return [("Pulumi's host probing the pack's SDK (a whole interpreter)", probe),
            ("the interpreter's start", interpreter),
            ("imports of pulumi and pulumi_policy", sdk - interpreter),
            ("the pack's own modules and PolicyPack, to its port", to_port - sdk),
            ("handshake (GetAnalyzerInfo, Configure)", handshake),
            (f"Analyze x {resources} and AnalyzeStack", calls)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine_preview", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", default="prod")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if build.missing():
        print(f"engines not built ({', '.join(build.missing())}): run `make engines`", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpu-aks-engine-bench-") as scratch:
        space = Workspace.new(Path(scratch))
        env, root = space.env, space.root
        _run(env, root, "stack", "init", args.stack)
        noop = root.parent / "noop-pack"
        noop.mkdir()
        for name, text in NOOP_PACK.items():
            (noop / name).write_text(text)
        overlay(noop / "venv", build.ROOT / "venv")
        _run(env, root, "preview", "--stack", args.stack)  # warm: plugin start-up caches, bytecode
        with_pack, with_noop, without = [], [], []
        for _ in range(args.runs):
            with_pack.append(_run(env, root, "preview", "--stack", args.stack, "--policy-pack", "policies"))
            with_noop.append(_run(env, root, "preview", "--stack", args.stack, "--policy-pack", str(noop)))
            without.append(_run(env, root, "preview", "--stack", args.stack))
    load = os.getloadavg()
    best_with, best_without = min(wall for wall, _ in with_pack), min(wall for wall, _ in without)
    cpu_with, cpu_without = min(cpu for _, cpu in with_pack), min(cpu for _, cpu in without)
    best_noop, cpu_noop = min(wall for wall, _ in with_noop), min(cpu for _, cpu in with_noop)
    ratio = best_with / best_without
    print(f"pulumi preview {args.stack} on the real engine ({build.BIN.relative_to(build.ROOT)}/pulumi), "
          f"best of {args.runs} rounds; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores:")
    print(f"  without a pack:    {best_without:.2f} s wall, {cpu_without:.2f} s CPU")
    print(f"  with a no-op pack: {best_noop:.2f} s wall, {cpu_noop:.2f} s CPU (the floor of any Python pack)")
    print(f"  with the pack:     {best_with:.2f} s wall, {cpu_with:.2f} s CPU")
    print(f"  ratio:             {ratio:.2f}x wall (target <= {TARGET:.2f}x on a quiet machine: "
          f"{'met' if ratio <= TARGET else 'NOT met'}), {cpu_with / cpu_without:.2f}x CPU")
    print(f"  a no-op pack:      {best_noop / best_without:.2f}x wall, {cpu_noop / cpu_without:.2f}x CPU; the pack to "
          f"the no-op pack: {best_with / best_noop:.2f}x wall, {cpu_with / cpu_noop:.2f}x CPU")
    parts = pack_breakdown(args.stack, args.runs)
    print(f"  where the pack's {best_with - best_without:.2f} s wall, {cpu_with - cpu_without:.2f} s CPU go (each part "
          f"measured apart, in wall seconds, best of {args.runs}):")
    for name, seconds in parts:
        print(f"    {name + ':':<60} {seconds:5.2f} s")
    print(f"    {'sum:':<60} {sum(seconds for _, seconds in parts):5.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
