"""Entry point of the gpu-aks component package. This folder is the plugin (its `PulumiPlugin.yaml`).

The Pulumi CLI's Python host starts it as `python <this folder> <engine address> [flags]`, with the
repository's virtualenv and the consumer's folder as working directory, because the folder has this
`__main__.py` (pulumi/pulumi 1b5949891b3cefcb9974752b24a5ecef0acc86c8,
`sdk/python/cmd/pulumi-language-python/main.go`, RunPlugin), and reads the port it prints
(`pulumi.provider.server.main`). The folder is then `sys.path[0]`, not the repository root, so the root
is put on the path before `components` is imported.
"""

import importlib.util
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))
if importlib.util.find_spec("gpu_aks_policies") is None:
    # The rules are policies/ under the name pyproject.toml gives it. A checkout's virtualenv has it installed
    # (`make setup`); the one the CLI makes for a clone from requirements.txt does not, and installing the
    # repository there on every `pulumi package get-schema` took 16 s: the folder is loaded under that name.
    RULES = REPOSITORY / "policies"
    spec = importlib.util.spec_from_file_location("gpu_aks_policies", RULES / "__init__.py",
                                                  submodule_search_locations=[str(RULES)])
    assert spec is not None and spec.loader is not None
    sys.modules["gpu_aks_policies"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["gpu_aks_policies"])

from gpu_aks_plugin.provider import serve  # noqa: E402 - needs the path above

if __name__ == "__main__":
    serve(sys.argv[1:])
