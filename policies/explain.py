"""Which GPU pools of the platform a pod could land on, and for every other pool, why not.

    gpu-aks-explain --platform OUTPUTS.json PATH... | -
    python -m gpu_aks_policies.explain ...                 (the same, from this repository)

OUTPUTS.json is the platform stack's outputs (`pulumi stack output --json` in the platform project,
the `outputs` of `python -m tools.preview STACK --json`, or the `gpuPools` map alone). PATH is a
YAML/JSON file, a directory or `-`; they are read together, as the checker reads them. For each pod
spec the explainer says where it fits and, per pool, every reason it does not: an untolerated taint
(the Spot one named as such), a nodeSelector (its namespace's included) or required affinity no node
label satisfies, a DoNotSchedule topology spread over a label its nodes lack, more GPUs than a node
has, a GPU or MIG resource the pool does not offer, DRA claims, more than one share of a pool that shares
its GPUs, and GPUs Azure no longer sells. On each
pool a pod fits it says what the pod gets there and why: a whole GPU, a MIG slice (which), a share
of a GPU ("1/4 of a T4, time-sliced"), Spot eviction, and the wait while the pool brings up a node.
A pod the API server would refuse (fractional GPUs, a request without a limit, node selection or
topology spread it refuses, each named by its path) lands nowhere, with
hints for what serves it on this platform (a MIG slice, one share of a shared pool): the same offers
its reason names. When a fit rests on admission or on the controller ("tolerated through AKS's
ExtendedResourceToleration") it says so. Each pod is named by the file and line of its spec, as the
checker names its findings. Exit code: 0 every GPU pod fits somewhere, 1 one fits nowhere, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, BinaryIO, TextIO

from .check import InputError, LoadedObject, load_config, read_inputs
from .device_classes import device_class_refusals
from .documents import safe_text
from .fit import Platform, PlatformError, PodExplanation, explain_pod, platform_from_outputs, read_platform, render
from .podspecs import object_identity
from .rule_config import TOLERATE_GPU_TAINT, RuleConfig, RuleConfigError
from .rules import default_rule_config
from .terminal import escape_line, run_cli
from .workloads import Context, context_of, pod_specs_of
from .workloads.shapes import ShapeReachError


def explain(obj: Any, platform: Platform | Mapping[str, Any], config: RuleConfig | None = None,
            context: Context | None = None) -> list[PodExplanation]:
    """One explanation per pod spec the object leads to, against the platform's GPU pools (a
    Platform, or the outputs contract as a dict)."""
    platform = platform if isinstance(platform, Platform) else platform_from_outputs(platform)
    config = config or default_rule_config()[TOLERATE_GPU_TAINT]
    context = context or context_of([obj])
    kind, name = object_identity(obj)
    return [explain_pod(kind, name, pod, platform, config, context)
            for pod in pod_specs_of(obj, context, config.workload_shapes)]


def explain_all(objects: Iterable[Mapping[str, Any]], platform: Platform,
                configs: Mapping[str, RuleConfig] | None = None) -> list[PodExplanation]:
    """Every object's explanations; `configs` is the policy config (`--config`), whose toleration
    rule's settings (GPU resources, declared workload shapes) the explainer reads."""
    objects = list(objects)
    context = context_of(objects)
    config = (configs or default_rule_config())[TOLERATE_GPU_TAINT]
    return [e for obj in objects for e in explain(obj, platform, config, context)]


def explain_loaded(objects: Sequence[LoadedObject], platform: Platform,
                   configs: Mapping[str, RuleConfig] | None = None,
                   errors: list[InputError] | None = None) -> list[PodExplanation]:
    """`explain_all` over objects read from files: each explanation names the file and line of its
    pod spec, as the checker names those of a finding. An object that cannot be explained (a declared
    shape's path reaching too far) is an input error in `errors`."""
    context = context_of([loaded.obj for loaded in objects])
    config = (configs or default_rule_config())[TOLERATE_GPU_TAINT]
    explanations = []
    for loaded in objects:
        if errors is not None:
            errors.extend(InputError(loaded.file, loaded.locate(path)[0], message)
                          for path, message in device_class_refusals(loaded.obj))
        try:
            explained = explain(loaded.obj, platform, config, context)
        except ShapeReachError as error:
            if errors is None:
                raise
            errors.append(InputError(loaded.file, loaded.line, str(error)))
            continue
        for explanation in explained:
            line, _ = loaded.locate(explanation.pod.path)
            explanations.append(replace(explanation, location=f"{loaded.file}:{line}"))
    return explanations


def main(argv: Iterable[str] | None = None, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-aks-explain", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--platform", required=True, metavar="OUTPUTS.json", help="the platform stack's outputs as JSON")
    parser.add_argument("--config", help="policy config JSON, as for `gpu-aks-check --config` (workloadShapes, ...)")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a Kubernetes YAML/JSON file, a directory, or - for stdin")
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = stdout or sys.stdout
    try:
        platform = read_platform(args.platform)
        configs = load_config(args.config)
    except (PlatformError, RuleConfigError) as error:
        print(safe_text(f"error: {error}"), file=sys.stderr)
        return 2
    objects, errors = read_inputs(args.paths, stdin=stdin)
    explanations = explain_loaded(objects, platform, configs, errors)
    for problem in errors:
        print(safe_text(f"{escape_line(problem.file)}:{problem.line}: error: {problem.message}"), file=sys.stderr)
    print(safe_text(render(explanations)), file=out)
    if errors:
        return 2
    return 1 if any(e.asks_for_gpus and not e.lands_on and not e.pod.own_nodes and not e.unjudged
                    for e in explanations) else 0


def run() -> None:
    """The `gpu-aks-explain` command."""
    run_cli(main)


if __name__ == "__main__":
    run()
