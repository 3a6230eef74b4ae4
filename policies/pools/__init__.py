"""The pack half of each pool kind: one module per kind recognises the resources that declare its
pools and answers the pool rules' questions about each (`PoolView`). Adding a kind is one module
here plus its tests: it registers itself (`registry.register`) and is imported below without being
named. The platform half of a kind (its settings, resources and contract entry) lives in the
platform's `components/pools/`; the contract's `kind` names the same kinds."""

import importlib
import pkgutil

from .registry import (
    KINDS,
    NodeFacts,
    PoolRegistration,
    is_gpu_node,
    is_pool_resource,
    kind_named,
    kind_of,
    node_kind,
    node_taint_prefixes,
    pools_of,
)
from .view import PoolView, Scaling, shown_count

# Every kind module of this package registers its kind on import; sorted, so the order is stable.
for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["KINDS", "NodeFacts", "PoolRegistration", "PoolView", "Scaling", "is_gpu_node", "is_pool_resource", "kind_named",
           "kind_of", "node_kind", "node_taint_prefixes", "pools_of", "shown_count"]
