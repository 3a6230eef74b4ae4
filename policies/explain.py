"""Which GPU pools of the platform could a pod land on, and for every other pool, why not.

    python -m policies.explain --platform OUTPUTS.json MANIFEST

OUTPUTS.json is the platform stack's outputs (`pulumi stack output --json` in the platform project,
or the `gpuPools` map alone). MANIFEST is a YAML/JSON file or `-`. For each pod spec in it, the
explainer says where it fits and, per pool, every reason it does not: an untolerated taint (the Spot
one named as such), a nodeSelector or required affinity no node label satisfies, more GPUs than a
node has, a GPU or MIG resource the pool does not offer, and GPUs Azure no longer sells. Exit code:
0 every GPU pod fits somewhere, 1 one fits nowhere, 2 bad input. No Pulumi imports.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import abc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO

import yaml

from components.catalog import RETIRED_ACCELERATORS, SPOT_LABEL, aks_node_labels
from policies.podspecs import PodSpec, find_pod_specs, gpu_asks, object_identity
from policies.quantities import QuantityError, format_amount, parse_quantity
from policies.rule_config import DEFAULT_GPU_RESOURCES
from policies.scheduling import (
    format_taint,
    node_selector_term_matches,
    parse_taint,
    required_node_terms,
    toleration_for,
    untolerated_taints,
)


@dataclass(frozen=True)
class PoolVerdict:
    pool: str
    fits: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class PodExplanation:
    kind: str
    name: str
    path: str
    gpu_asks: Mapping[str, Fraction]
    verdicts: tuple[PoolVerdict, ...]

    @property
    def lands_on(self) -> list[str]:
        return [v.pool for v in self.verdicts if v.fits]


def pod_gpu_asks(pod: PodSpec, gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES) -> dict[str, Fraction]:
    """What the pod asks of one node, per GPU resource: its app containers together, or its largest
    init container if that is more (init containers run one at a time, before the app)."""
    app: dict[str, Fraction] = {}
    init: dict[str, Fraction] = {}
    for ask in gpu_asks(pod, gpu_resources):
        if ".ephemeralContainers[" in ask.container.path:
            continue
        try:
            # A limit alone also sets the request, so the limit decides when both are written.
            amount = parse_quantity(ask.limit if ask.limit is not None else ask.request)
        except QuantityError:
            continue
        if ".initContainers[" in ask.container.path:
            init[ask.resource] = max(init.get(ask.resource, Fraction(0)), amount)
        else:
            app[ask.resource] = app.get(ask.resource, Fraction(0)) + amount
    return {r: max(app.get(r, Fraction(0)), init.get(r, Fraction(0)))
            for r in {*app, *init} if max(app.get(r, Fraction(0)), init.get(r, Fraction(0))) > 0}


def _selector_reasons(pod: Mapping[str, Any], labels: Mapping[str, str]) -> list[str]:
    reasons = []
    selector = pod.get("nodeSelector")
    for key, value in (selector.items() if isinstance(selector, abc.Mapping) else []):
        if labels.get(key) != str(value):
            have = f"{key}={labels[key]}" if key in labels else f"no {key} label"
            reasons.append(f"its nodeSelector needs {key}={value}, but the pool's nodes have {have}")
    terms = required_node_terms(pod)
    if terms and not any(node_selector_term_matches(term, labels) for term in terms):
        wanted = []
        for term in terms:
            expressions = term.get("matchExpressions") if isinstance(term, abc.Mapping) else None
            for expression in expressions if isinstance(expressions, list) else []:
                if isinstance(expression, abc.Mapping):
                    values = ",".join(str(v) for v in expression.get("values") or [])
                    wanted.append(f"{expression.get('key')} {expression.get('operator')} [{values}]".replace(" []", ""))
        reasons.append(f"its required node affinity ({'; '.join(wanted)}) matches no label of the pool's nodes")
    return reasons


def _retired_requests(pod: Mapping[str, Any]) -> list[str]:
    """Accelerator values the pod selects that no Azure size has any more."""
    wanted: list[str] = []
    selector = pod.get("nodeSelector")
    if isinstance(selector, abc.Mapping):
        wanted += [str(v) for v in selector.values()]
    for term in required_node_terms(pod) or []:
        expressions = term.get("matchExpressions") if isinstance(term, abc.Mapping) else None
        for expression in expressions if isinstance(expressions, list) else []:
            if isinstance(expression, abc.Mapping) and expression.get("operator") == "In":
                wanted += [str(v) for v in expression.get("values") or []]
    return [f"no pool offers {value}: {RETIRED_ACCELERATORS[value]}" for value in dict.fromkeys(wanted)
            if value in RETIRED_ACCELERATORS]


def explain_pool(pod: Mapping[str, Any], asks: Mapping[str, Fraction], pool: Mapping[str, Any]) -> PoolVerdict:
    name = str(pool.get("name"))
    labels = aks_node_labels(name, pool.get("labels") or {}, bool(pool.get("spot")))
    tolerations = [t for t in pod.get("tolerations") or [] if isinstance(t, abc.Mapping)]
    reasons = []
    for taint in untolerated_taints(tolerations, [parse_taint(t) for t in pool.get("taints") or []]):
        fix = json.dumps(toleration_for(taint))
        if taint["key"] == SPOT_LABEL:
            reasons.append(f"it does not tolerate the Spot taint {format_taint(taint)} that AKS puts on every Spot "
                           f"node; add the toleration {fix} if the pod may be evicted")
        else:
            reasons.append(f"it does not tolerate the taint {format_taint(taint)}; add the toleration {fix}")
    reasons += _selector_reasons(pod, labels)
    offered, per_node = pool.get("gpuResource"), pool.get("gpusPerNode")
    partition = pool.get("migPartition")
    for resource, amount in asks.items():
        if resource != offered:
            what = f"MIG {partition} slices as {offered}" if partition else f"whole GPUs as {offered}"
            reasons.append(f"it asks for {resource}, which this pool does not offer (it offers {what})")
        elif isinstance(per_node, (int, float)) and amount > per_node:
            reasons.append(f"it asks for {format_amount(amount)} {resource} but a node of this pool has "
                           f"{format_amount(Fraction(per_node))} ({pool.get('vmSize')})")
    return PoolVerdict(name, not reasons, tuple(reasons))


def explain(obj: Any, platform: Mapping[str, Any]) -> list[PodExplanation]:
    """One explanation per pod spec in a Kubernetes object, against the platform's GPU pools."""
    pools = platform.get("gpuPools", platform)
    kind, name = object_identity(obj)
    explanations = []
    for pod in find_pod_specs(obj):
        asks = pod_gpu_asks(pod)
        retired = _retired_requests(pod.spec)
        verdicts = []
        for pool in pools.values():
            verdict = explain_pool(pod.spec, asks, pool)
            if retired:
                verdict = PoolVerdict(verdict.pool, False, (*retired, *verdict.reasons))
            verdicts.append(verdict)
        explanations.append(PodExplanation(kind, name, pod.path, asks, tuple(verdicts)))
    return explanations


def render(explanations: Iterable[PodExplanation]) -> str:
    lines = []
    for explanation in explanations:
        asks = ", ".join(f"{format_amount(a)} {r}" for r, a in explanation.gpu_asks.items()) or "no GPU"
        lines.append(f"{explanation.kind}/{explanation.name} at {explanation.path or '<root>'} asks for {asks}")
        lines.append(f"  lands on: {', '.join(explanation.lands_on) or 'no GPU pool'}")
        for verdict in explanation.verdicts:
            if not verdict.fits:
                lines.append(f"  not {verdict.pool}:")
                lines.extend(f"    - {reason}" for reason in verdict.reasons)
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policies.explain", description=__doc__.splitlines()[0])
    parser.add_argument("--platform", required=True, help="the platform stack's outputs as JSON")
    parser.add_argument("manifest", help="a Kubernetes YAML/JSON file, or - for stdin")
    args = parser.parse_args(list(argv) if argv is not None else None)
    out = stdout or sys.stdout
    try:
        platform = json.loads(Path(args.platform).read_text(encoding="utf-8"))
        pools = platform.get("gpuPools", platform) if isinstance(platform, dict) else None
        if not isinstance(pools, dict) or not all(isinstance(p, dict) for p in pools.values()):
            raise ValueError("expected the platform outputs (with gpuPools) or the gpuPools map")
        text = (stdin or sys.stdin).read() if args.manifest == "-" else Path(args.manifest).read_text(encoding="utf-8")
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except (OSError, ValueError, yaml.YAMLError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    explanations = [e for document in documents for e in explain(document, platform)]
    print(render(explanations), file=out)
    stranded = [e for e in explanations if e.gpu_asks and not e.lands_on]
    return 1 if stranded else 0


if __name__ == "__main__":
    sys.exit(main())
