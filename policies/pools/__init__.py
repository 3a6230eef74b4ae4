"""The pack half of pools: one module per backend (the resource a pool is written as: an AKS
AgentPool, a Karpenter NodePool) recognises the resources that declare its pools and answers the pool
rules' questions about each (`PoolView`). Adding a backend is one module here plus its tests: it
registers itself (`registry.register`) and is imported below without being named. The platform's pool
kinds (`components.pools.KINDS`) each write their pools as one of these backends; contract v2's
`kind` field names the backend."""

import importlib
import pkgutil

from .registry import (
    BACKENDS,
    BackendRegistration,
    NodeFacts,
    backend_named,
    backend_of,
    is_gpu_node,
    is_pool_resource,
    node_backend,
    node_taint_prefixes,
    pools_of,
)
from .view import PoolView, Scaling, shown_count

#: The modules of this package that are not backends: the pool model (`model.Pool`, which the light
#: package's checker does not need), the registry and the view.
_NOT_BACKENDS = {"model", "registry", "view"}
# Every backend module of this package registers its backend on import; sorted, so the order is stable.
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _module.name not in _NOT_BACKENDS:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["BACKENDS", "BackendRegistration", "NodeFacts", "PoolView", "Scaling", "backend_named", "backend_of",
           "is_gpu_node", "is_pool_resource", "node_backend", "node_taint_prefixes", "pools_of", "shown_count"]
