"""Workload adapters: one small module per controller family turns its objects into the pod specs
the controller will create. Adding a controller is one module here and its tests: the module
registers its kinds (`registry.register`) and the context it needs from other objects
(`context.collects`); `loading.load_all` imports every module of the package the first time an
adapter is asked for. A Kubernetes kind nobody registered falls
back to the generic `containers` search; a document that is not a Kubernetes object gets no pod
specs unless a document adapter recognises it."""

from .context import Context, context_of
from .dra import Claims, pod_claims
from .loading import load_all
from .registry import ADAPTERS, REGISTRATIONS, adapter_for, pod_specs_of

__all__ = ["ADAPTERS", "REGISTRATIONS", "Claims", "Context", "adapter_for", "context_of", "load_all", "pod_claims",
           "pod_specs_of"]
