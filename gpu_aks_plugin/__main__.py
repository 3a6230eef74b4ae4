"""Entry point of the gpu-aks component package. This folder is the plugin (its `PulumiPlugin.yaml`).

The Pulumi CLI's Python host starts it as `python <this folder> <engine address> [flags]`, with the
repository's virtualenv and the consumer's folder as working directory, because the folder has this
`__main__.py` (pulumi/pulumi 1b5949891b3cefcb9974752b24a5ecef0acc86c8,
`sdk/python/cmd/pulumi-language-python/main.go`, RunPlugin), and reads the port it prints
(`pulumi.provider.server.main`). The folder is then `sys.path[0]`, not the repository root, so the root
is put on the path before `components` is imported.
"""

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from gpu_aks_plugin.provider import serve  # noqa: E402 - needs the path above

if __name__ == "__main__":
    serve(sys.argv[1:])
