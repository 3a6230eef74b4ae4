"""The speed a user feels: `pulumi preview` of a stack on the real engine with the policy pack, against the
same preview without it, in the same run.

    python -m benchmarks.engine_preview [--stack prod] [--runs 5]

Needs `make engines` (build/engines/bin). The previews run in a temporary copy of the repository with a
`file://` backend and the stand-in providers, interleaved (with, without, with, ...), each figure the best
of `--runs` wall times. Prints both and their ratio; the pack's target is within 1.10x. The gRPC-level
floor (benchmarks/analyzer_throughput.py) stays the guard for the pack's own cost.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from testbed import build
from testbed.workspace import copy_checkout, engine_env

TARGET = 1.10


def _run(env: dict[str, str], cwd: Path, *args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([str(build.BIN / "pulumi"), *args, "--non-interactive"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pulumi {' '.join(args)} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine_preview", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", default="prod")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    if build.missing():
        print(f"engines not built ({', '.join(build.missing())}): run `make engines`", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpu-aks-engine-bench-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        copy_checkout(root)
        state = Path(scratch) / "state"
        state.mkdir()
        env = engine_env(root, state)
        _run(env, root, "stack", "init", args.stack)
        _run(env, root, "preview", "--stack", args.stack)  # warm: plugin start-up caches, bytecode
        with_pack, without = [], []
        for _ in range(args.runs):
            with_pack.append(_run(env, root, "preview", "--stack", args.stack, "--policy-pack", "policies"))
            without.append(_run(env, root, "preview", "--stack", args.stack))
    best_with, best_without = min(with_pack), min(without)
    ratio = best_with / best_without
    print(f"pulumi preview {args.stack} on the real engine ({build.BIN.relative_to(build.ROOT)}/pulumi), "
          f"best of {args.runs}:")
    print(f"  without the pack: {best_without:.2f} s")
    print(f"  with the pack:    {best_with:.2f} s")
    print(f"  ratio:            {ratio:.2f}x (target <= {TARGET:.2f}x: {'met' if ratio <= TARGET else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
