"""Every adapter module of this package, imported the first time an adapter or a collector is asked
for: a new adapter is one module here, found without being named anywhere (as the pool backends of
`gpu_aks_policies.pools` are).

0.4.0 imported each module only when an object of an API group it serves was seen, from a table
every new adapter had to edit (`MODULE_GROUPS`). Importing all of them costs about 15 ms once per
process (measured on the 2-core CI machine: `python -c` importing `gpu_aks_policies.check`, then
`load_all`), which the checker's benchmark does not see against its floor; the table is gone.
"""

from __future__ import annotations

import importlib
import pkgutil

#: Modules of this package that are machinery, not adapters (the registry, the context, the shape
#: reader, the loader, the GPU-mention search).
MACHINERY = frozenset({"context", "loading", "mentions", "registry", "shapes"})

_LOADED: list[bool] = []


def load_all() -> None:
    """Import every adapter module of the package (once; a list check after that). Safe from several
    threads (the pack's): importlib waits for a module another thread is importing."""
    if _LOADED:
        return
    package = importlib.import_module(__package__ or "gpu_aks_policies.workloads")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if info.name not in MACHINERY:
            importlib.import_module(f"{package.__name__}.{info.name}")
    _LOADED.append(True)
