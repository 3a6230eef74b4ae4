"""Kinds that name GPUs but from which nothing creates pods: they get no verdict and no advisory.

Without these registrations the generic search would either read a pod template that is never run
(Kueue's `Workload`) or, finding a GPU name outside any pod spec, say "not evaluated" (`mentions`)
of objects that are quotas, node templates or device descriptions rather than workloads.

- Kueue (kubernetes-sigs/kueue `apis/kueue/v1beta1/workload_types.go`): the Job integration creates
  a `Workload` from a job (`pkg/controller/jobframework/reconciler.go`, `ConstructWorkload`) and
  copies its `podSets[].template`; admitting it unsuspends the *job*, which creates the pods. Nothing
  creates pods from the Workload itself, so judging its `podSets` would judge the job twice (once
  rightly, at the job). `ResourceFlavor` (`nodeLabels`, `nodeTaints`, `tolerations`), `ClusterQueue`
  (`coveredResources: [nvidia.com/gpu]`), `Cohort` (the same `resourceGroups`, `cohort_types.go`),
  `LocalQueue`, `AdmissionCheck`, `ProvisioningRequestConfig` (`managedResources: [nvidia.com/gpu]`,
  `provisioningrequestconfig_types.go`), `MultiKueueConfig`, `MultiKueueCluster` and `Topology` are
  quotas, admission settings and node descriptions.
- Dynamic Resource Allocation (`resource.k8s.io`): claims, templates, device classes and slices
  describe devices; a pod's claims are resolved from them (`dra.py`), they create no pods.
- Core quotas and nodes: `ResourceQuota` (`requests.nvidia.com/gpu`), `LimitRange`, `Node` (its
  GPU taint and capacity).
- Karpenter (`karpenter.sh` NodePool, NodeClaim; Azure/karpenter-provider-azure `AKSNodeClass`):
  they create nodes with GPU taints and requirements, not pods.
- Volcano (`scheduling.volcano.sh` Queue, PodGroup: `capability`, `minResources`): quotas for the
  pods other objects create.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..podspecs import PodSpec
from .context import Context
from .registry import register

_NEVER = "never (nothing creates pods from it)"


def _no_pods(obj: Mapping[str, Any], _: Context) -> list[PodSpec]:
    return []


register("kueue.x-k8s.io", "Workload", "ResourceFlavor", "ClusterQueue", "LocalQueue", "AdmissionCheck", "Topology",
         "WorkloadPriorityClass", "Cohort", "ProvisioningRequestConfig", "MultiKueueConfig", "MultiKueueCluster",
         gpus=_NEVER, tolerations="never: the job it was made from is judged",
         source="kubernetes-sigs/kueue `apis/kueue/v1beta1/workload_types.go`, "
                "`pkg/controller/jobframework/reconciler.go`")(_no_pods)
register("resource.k8s.io", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice", gpus=_NEVER,
         tolerations="never: the pods that name the claims are judged (`dra.py`)",
         source="Kubernetes API reference (`resource.k8s.io/v1`)")(_no_pods)
register("", "ResourceQuota", "LimitRange", "Node", gpus=_NEVER, tolerations="never",
         source="Kubernetes API reference (`core/v1`)")(_no_pods)
register("karpenter.sh", "NodePool", "NodeClaim", gpus=_NEVER, tolerations="never: it makes nodes, not pods",
         source="kubernetes-sigs/karpenter `pkg/apis/v1/nodepool.go`")(_no_pods)
register("karpenter.azure.com", "AKSNodeClass", gpus=_NEVER, tolerations="never: it makes nodes, not pods",
         source="Azure/karpenter-provider-azure `pkg/apis/v1beta1/aksnodeclass.go`")(_no_pods)
register("scheduling.volcano.sh", "Queue", "PodGroup", gpus=_NEVER,
         tolerations="never: quotas for pods other objects create",
         source="volcano-sh/apis `pkg/apis/scheduling/v1beta1/types.go`")(_no_pods)
