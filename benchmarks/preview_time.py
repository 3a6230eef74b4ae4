"""The offline preview's wall time next to importing the SDK modules it needs (the floor), and where
the rest goes.

    python -m benchmarks.preview_time [--stack prod] [--runs 5]

Three commands, each the best of several interleaved runs, wall and CPU (the process and its
children, the policy pack's process included):
- the floor: `import pulumi` and the azure-native and pulumi-kubernetes modules the program uses, as
  #30 defines it (target: the preview within 2x). azure-native's subpackages load lazily, so this
  import runs none of their code;
- the same with those azure-native packages loaded, as the program loads them by using a class
  (each loads every module it has): what the SDK alone costs before the program declares anything;
- `python -m tools.preview STACK`.

Then, in one fresh process, the CPU seconds of each phase of the preview: the interpreter with
the floor's imports, the repository's modules, the SDK packages the program loads, the program's
run under the mock engine (settings, components, registration), the pools' cost, the wait for the
pack, the policy pass over gRPC, and the report.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from benchmarks.checker_throughput import ROOT, SDK_IMPORTS, best_of, preview_command

#: The SDK packages the program loads (by using one of their classes), each loading all its modules.
LOADED_PACKAGES = ("pulumi_azure_native.containerservice", "pulumi_azure_native.authorization",
                   "pulumi_azure_native.monitor", "pulumi_azure_native.alertsmanagement",
                   "pulumi_azure_native.resources")

#: Any attribute read loads a lazy package (pulumi `_utils._LazyModule`): `hasattr` reads one that is not there.
LOAD_PACKAGES = "; ".join(f"import {name}; hasattr({name}, 'not_an_attribute')" for name in LOADED_PACKAGES)

#: One preview, phase by phase, printing CPU seconds per phase as JSON.
PHASES = '''
import gc, json, sys, time, io
gc.disable()  # as the command does before its imports (tools/preview.py, run_cli)
marks = [("start", time.process_time())]
def mark(name): marks.append((name, time.process_time()))
{floor}
mark("interpreter and the floor's imports")
import tools.preview as preview
from offline.analyzer import PolicyPackProcess
mark("the repository's modules")
{load}
import pulumi_kubernetes.admissionregistration.v1, pulumi_kubernetes.meta.v1, pulumi_kubernetes.apiextensions
mark("the SDK packages the program loads")
pack = PolicyPackProcess().start()
run = preview.run_stack_program(sys.argv[1])
mark("the program under the mock engine (settings, components, registration)")
cost = preview.stack_cost(sys.argv[1], preview.load_prices(None))
mark("the cost of the pools")
pack.__enter__()
mark("waiting for the pack's process")
diagnostics = preview.in_print_order(run, preview.analyze(run, None, pack))
mark("the policy pass over gRPC")
text = "\\n".join(preview.render_tree(sys.argv[1], run) + preview.render_violations(diagnostics)
                 + preview.render_summary(sys.argv[1], run, None, cost))
mark("the report")
print(json.dumps([(name, now - before) for (_, before), (name, now) in zip(marks, marks[1:])]))
'''


def phases(stack: str) -> list[tuple[str, float]]:
    script = PHASES.format(floor=SDK_IMPORTS, load=LOAD_PACKAGES)
    result = subprocess.run([sys.executable, "-c", script, stack], cwd=ROOT, capture_output=True, text=True,
                            check=True)
    return [(name, seconds) for name, seconds in json.loads(result.stdout.splitlines()[-1])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="prod")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    python = sys.executable
    (floor_wall, floor_cpu), (loaded_wall, loaded_cpu), (preview_wall, preview_cpu) = best_of(
        args.runs, [python, "-c", SDK_IMPORTS], [python, "-c", f"{SDK_IMPORTS}; {LOAD_PACKAGES}"],
        preview_command(args.stack))
    print(f"Offline preview ({args.stack}), best of {args.runs} runs, interleaved, wall (CPU of the process and its children):")
    print(f"  importing the SDK modules it needs (the floor)        {floor_wall:6.2f} s  ({floor_cpu:5.2f} s)")
    print(f"  the same, with the azure-native packages loaded       {loaded_wall:6.2f} s  ({loaded_cpu:5.2f} s)")
    print(f"  python -m tools.preview {args.stack:<29s} {preview_wall:6.2f} s  ({preview_cpu:5.2f} s)")
    print(f"  ratio to the floor                                    {preview_wall / floor_wall:6.2f}x  "
          f"({preview_cpu / floor_cpu:5.2f}x)  (target <= 2x)")
    print(f"  ratio to the floor with the packages loaded           {preview_wall / loaded_wall:6.2f}x  "
          f"({preview_cpu / loaded_cpu:5.2f}x)")
    print("Where a preview's CPU time goes (one fresh process, this process only; the pack starts in its own):")
    measured = phases(args.stack)
    total = sum(seconds for _, seconds in measured)
    for name, seconds in measured:
        print(f"  {name:<72s} {seconds:5.2f} s  {seconds / total:5.1%}")
    print(f"  {'total':<72s} {total:5.2f} s")


if __name__ == "__main__":
    main()
