"""Entry point the Pulumi CLI runs: `python -u -m pulumi.policy ENGINE_ADDRESS .` inside this folder.

The CLI runs this file by path, with the folder on `sys.path` but not as a package, and a published
pack is unpacked under a directory whose name nobody controls. So the folder loads itself as the
package `gpu_aks_policies` (the name it has when pip-installed) and the rules' relative imports
resolve inside it: nothing outside this folder is needed. Constructing PolicyPack starts the
Analyzer, prints its port and never returns.
"""

import importlib.util
import sys
from pathlib import Path

PACKAGE = "gpu_aks_policies"


def _load_this_folder_as_package() -> None:
    here = Path(__file__).resolve().parent
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve().parent == here:
        return  # already this folder under its one name: a second copy would mean two rule registries
    spec = importlib.util.spec_from_file_location(PACKAGE, here / "__init__.py", submodule_search_locations=[str(here)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = module
    spec.loader.exec_module(module)


_load_this_folder_as_package()

from gpu_aks_policies.pack import OPERATION, PACK_NAME, build_policies  # noqa: E402
from gpu_aks_policies.sdk_patches import install  # noqa: E402
from gpu_aks_policies.workloads import load_all  # noqa: E402
from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

install(on_configure=OPERATION.reset)
# The pack serves every kind for as long as it runs: all workload adapters load now, not inside the
# first request.
load_all()
PolicyPack(name=PACK_NAME, policies=build_policies(), enforcement_level=EnforcementLevel.MANDATORY)
