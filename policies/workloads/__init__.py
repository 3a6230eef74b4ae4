"""Workload adapters: one small module per controller family turns its objects into the pod specs
the controller will create. Adding a controller is one module here, one line in `loading.py` and
its tests: the module registers its kinds (`registry.register`) and the context it needs from other
objects (`context.collects`), and `loading.MODULE_GROUPS` names the API groups it serves, so it is
imported the first time an object of one of them is read. A Kubernetes kind nobody registered falls
back to the generic `containers` search; a document that is not a Kubernetes object gets no pod
specs unless a document adapter recognises it."""

from .context import Context, context_of
from .dra import Claims, pod_claims
from .loading import load_all
from .registry import ADAPTERS, REGISTRATIONS, adapter_for, pod_specs_of

__all__ = ["ADAPTERS", "REGISTRATIONS", "Claims", "Context", "adapter_for", "context_of", "load_all", "pod_claims",
           "pod_specs_of"]
