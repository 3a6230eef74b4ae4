"""`gpu-training-pods-not-disruptible`: a training pod that may land on a NAP GPU NodePool should carry
`karpenter.sh/do-not-disrupt: "true"`.

Karpenter disrupts nodes on its own: consolidation, drift (a new node image, a changed NodePool),
expiry and interruption (karpenter.sh docs, Disruption). gpu-aks's NodePools never consolidate a node
with a pod on it and never expire one, but drift and Spot interruption remain, and a NodePool's owner
may change its policy. The pod annotation `karpenter.sh/do-not-disrupt: "true"` makes Karpenter leave
the pod's node alone while the pod runs ("Pod-Level Controls"). A training run that restarts from its
last checkpoint loses hours; an inference replica does not care. So this advice is for the kinds that
run to completion (batch Jobs and the training operators), on pools a NodePool backs (the contract's
`kind: nodePool`). Advisory: only the team knows whether its job checkpoints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .findings import Finding
from .podspecs import PodSpec, join
from .rule_config import NOT_DISRUPTIBLE, RuleConfig
from .workloads import Context

if TYPE_CHECKING:
    from .fit import Platform

#: The pod annotation Karpenter honours (karpenter.sh docs, Disruption, "Pod-Level Controls").
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"
#: Kinds whose pods run to completion: batch Jobs and the training operators' jobs (Kubeflow Trainer's
#: TrainJob and the training-operator v1 kinds, JobSet, KubeRay's RayJob; Volcano's Job is `Job`).
TRAINING_KINDS = frozenset({"Job", "CronJob", "TrainJob", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob",
                            "JAXJob", "JobSet", "RayJob"})


def annotations_path(pod: PodSpec) -> str:
    """Where the pod's annotations are written: beside its spec (`spec.template.spec` ->
    `spec.template.metadata.annotations`)."""
    head, _, last = pod.path.rpartition(".")
    return join(join(head, "metadata") if last == "spec" else join(pod.path, "metadata"), "annotations")


def check_not_disruptible(pods: Sequence[PodSpec], config: RuleConfig, context: Context, *, platform: Platform,
                          identity: tuple[str, str]) -> list[Finding]:
    kind, name = identity
    if kind not in TRAINING_KINDS and not any("tuning" in pod.workload or "Train" in pod.workload for pod in pods):
        return []
    node_pools = {pool for pool, entry in platform.pools.items() if entry.backend == "nodePool"}
    if not node_pools:
        return []
    # Only with a platform: the rule registry imports this module, and the plain check never loads the fit.
    from .fit import explain_pod

    findings = []
    for pod in pods:
        if pod.own_nodes or str(pod.annotations.get(DO_NOT_DISRUPT, "")).lower() == "true":
            continue
        explanation = explain_pod(kind, name, pod, platform, config, context)
        landing = [pool for pool in explanation.lands_on if pool in node_pools]
        if not landing:
            continue
        findings.append(Finding(
            NOT_DISRUPTIBLE, annotations_path(pod),
            f"{pod.where} may land on the NAP NodePool {', '.join(landing)}, where Karpenter may replace its node "
            "(drift, Spot interruption) while it runs; if the job cannot lose its progress, add to "
            f"{annotations_path(pod)}:\n  {DO_NOT_DISRUPT}: \"true\""))
    return findings
