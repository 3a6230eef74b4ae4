"""Workload adapters: one small module per controller family turns its objects into the pod specs
the controller will create. Adding a controller is one module here plus its tests: the module
registers its kinds (`registry.register`) and the context it needs from other objects
(`context.collects`), and it is imported below without being named. A Kubernetes kind nobody
registered falls back to the generic `containers` search; a document that is not a Kubernetes object
gets no pod specs unless a document adapter recognises it."""

import importlib
import pkgutil

from .context import Context, context_of
from .dra import Claims, pod_claims
from .registry import ADAPTERS, REGISTRATIONS, adapter_for, pod_specs_of

# Every module of this package registers its kinds on import; sorted, so registration order is stable.
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["ADAPTERS", "REGISTRATIONS", "Claims", "Context", "adapter_for", "context_of", "pod_claims",
           "pod_specs_of"]
