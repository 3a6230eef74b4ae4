"""Workload adapters: one small module per controller family turns its objects into the pod specs
the controller will create. Adding a controller is one module here (registered by API group and
kind) plus its tests; a kind nobody registered falls back to the generic `containers` search."""

from . import argo, core, dynamo, kaito, kserve, spark, trainer  # noqa: F401  (each registers its kinds)
from .context import Context, context_of
from .dra import Claims, pod_claims
from .registry import ADAPTERS, adapter_for, pod_specs_of

__all__ = ["ADAPTERS", "Claims", "Context", "adapter_for", "context_of", "pod_claims", "pod_specs_of"]
