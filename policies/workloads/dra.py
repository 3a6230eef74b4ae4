"""Dynamic Resource Allocation (`resource.k8s.io`, GA in Kubernetes 1.34): GPUs asked for through
claims rather than extended resources.

A pod lists `spec.resourceClaims[]`, each naming a ResourceClaim (`resourceClaimName`) or a
ResourceClaimTemplate (`resourceClaimTemplateName`) in the pod's namespace; the scheduler allocates
every claim of the pod before it binds (Kubernetes `pkg/apis/core/types.go` PodResourceClaim,
KEP-4381). A claim whose requests name a GPU device class (NVIDIA's DRA driver: `gpu.nvidia.com`,
`mig.nvidia.com`; kubernetes-sigs/dra-driver-nvidia-gpu demo specs) makes the pod a GPU pod: it lands
on GPU nodes, so it must tolerate their taint, and ExtendedResourceToleration adds nothing for it.
Limits do not apply to claims. Claims and templates are found among the objects checked together;
one that is not there may still be a GPU, which the rules say as an advisory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..podspecs import PodSpec, as_list, as_mapping, as_str
from .context import Context, namespace_of


@dataclass(frozen=True)
class Claims:
    #: "claim 'gpu' (ResourceClaimTemplate 'single-gpu': gpu.nvidia.com)" for each GPU claim.
    gpu: tuple[str, ...]
    #: "ResourceClaimTemplate 'x'" for each claim not among the objects checked.
    unresolved: tuple[str, ...]


def pod_claims(pod: PodSpec, context: Context, device_classes: Sequence[str]) -> Claims:
    gpu, unresolved = [], []
    namespace = namespace_of(pod.namespace)
    for claim in as_list(pod.spec.get("resourceClaims")):
        claim = as_mapping(claim)
        name = as_str(claim.get("name"))
        for key, kind, table in (("resourceClaimName", "ResourceClaim", context.claims),
                                 ("resourceClaimTemplateName", "ResourceClaimTemplate", context.claim_templates)):
            target = as_str(claim.get(key))
            if not target:
                continue
            requests = table.get((namespace, target))
            if requests is None:
                unresolved.append(f"{kind} '{target}' (claim '{name}')")
                continue
            classes = sorted({c for r in requests for c in r.device_classes
                              if any(fnmatchcase(c, pattern) for pattern in device_classes)})
            if classes:
                gpu.append(f"claim '{name}' ({kind} '{target}': {', '.join(classes)})")
    return Claims(tuple(gpu), tuple(unresolved))
