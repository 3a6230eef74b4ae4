"""The pack half of pools: one module per backend (the resource a pool is written as: an AKS
AgentPool, a Karpenter NodePool) recognises the resources that declare its pools and reads each into
the one pool model (`model.Pool`), fact by fact, and returns it with its reading (`model.PoolReading`:
where each fact is written and which ones a preview hides). Adding a backend is one module here plus its tests: it
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
    read_fact,
)

#: The modules of this package that are not backends: the pool model (`model.Pool`) and the registry.
_NOT_BACKENDS = {"model", "registry"}
# Every backend module of this package registers its backend on import; sorted, so the order is stable.
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _module.name not in _NOT_BACKENDS:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["BACKENDS", "BackendRegistration", "NodeFacts", "backend_named", "backend_of", "is_gpu_node",
           "is_pool_resource", "node_backend", "node_taint_prefixes", "pools_of", "read_fact"]
