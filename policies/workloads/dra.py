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

from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ..podspecs import PodSpec, as_list, as_mapping, as_str
from ..pools.model import pool_named
from .context import Context, collects, namespace_of, scoped_name

#: Tables of the objects checked together: (namespace, name) -> the claim's device requests.
CLAIMS = "dra.claims"
CLAIM_TEMPLATES = "dra.claim_templates"


@dataclass(frozen=True)
class DeviceRequest:
    """One request of a claim: the device classes it may be satisfied from."""

    name: str
    device_classes: tuple[str, ...]


def device_requests(claim_spec: Mapping[str, Any]) -> tuple[DeviceRequest, ...]:
    """The device classes of a claim spec's requests, in every version's shape: resource.k8s.io/v1
    `requests[].exactly.deviceClassName` and `firstAvailable[].deviceClassName`, v1beta1/v1alpha3
    `requests[].deviceClassName` (Kubernetes `pkg/apis/resource` types; DRA is GA in 1.34)."""
    requests = []
    for request in as_list(as_mapping(claim_spec.get("devices")).get("requests")):
        request = as_mapping(request)
        classes = [as_str(as_mapping(request.get("exactly")).get("deviceClassName")),
                   as_str(request.get("deviceClassName")),
                   *(as_str(as_mapping(sub).get("deviceClassName")) for sub in as_list(request.get("firstAvailable")))]
        requests.append(DeviceRequest(as_str(request.get("name")), tuple(c for c in classes if c)))
    return tuple(requests)


@collects(CLAIMS, "resource.k8s.io", "ResourceClaim")
def _claim(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield scoped_name(obj, name), device_requests(as_mapping(obj.get("spec")))


@collects(CLAIM_TEMPLATES, "resource.k8s.io", "ResourceClaimTemplate")
def _claim_template(obj: Mapping[str, Any], name: str) -> Iterator[tuple[Hashable, Any]]:
    yield scoped_name(obj, name), device_requests(as_mapping(as_mapping(obj.get("spec")).get("spec")))


@dataclass(frozen=True)
class Claims:
    """A pod's DRA claims as messages name them: each name cut and on one line (`pool_named`), since a claim's
    and a template's names are input."""

    #: "claim 'gpu' (ResourceClaimTemplate 'single-gpu': gpu.nvidia.com)" for each GPU claim.
    gpu: tuple[str, ...]
    #: "ResourceClaimTemplate 'x'" for each claim not among the objects checked.
    unresolved: tuple[str, ...]
    #: The GPU device classes the claims name, for where a pool serves them (`fit`).
    classes: tuple[str, ...] = ()


#: What a pod that names no claim has (most pods): one shared value, not one built per pod and rule.
NO_CLAIMS = Claims((), ())


def pod_claims(pod: PodSpec, context: Context, device_classes: Sequence[str]) -> Claims:
    if pod.spec.get("resourceClaims") is None:
        return NO_CLAIMS
    gpu, unresolved, named = [], [], []
    namespace = namespace_of(pod.namespace)
    for claim in as_list(pod.spec.get("resourceClaims")):
        claim = as_mapping(claim)
        name = as_str(claim.get("name"))
        for key, kind, table in (("resourceClaimName", "ResourceClaim", context.table(CLAIMS)),
                                 ("resourceClaimTemplateName", "ResourceClaimTemplate", context.table(CLAIM_TEMPLATES))):
            target = as_str(claim.get(key))
            if not target:
                continue
            requests = table.get((namespace, target))
            if requests is None:
                unresolved.append(f"{kind} '{pool_named(target)}' (claim '{pool_named(name)}')")
                continue
            classes = sorted({c for r in requests for c in r.device_classes
                              if any(fnmatchcase(c, pattern) for pattern in device_classes)})
            if classes:
                gpu.append(f"claim '{pool_named(name)}' ({kind} '{pool_named(target)}': "
                           f"{', '.join(pool_named(c) for c in classes)})")
                named += classes
    return Claims(tuple(gpu), tuple(unresolved), tuple(dict.fromkeys(named)))
