"""The kubeconfig AKS hands out for an Azure AD cluster (`listClusterUserCredential?format=exec`), pointing at a
local API server: a kubelogin exec user with `--login devicecode` (offline/mockrun.py's `fake_aad_kubeconfig`, the
shape the program's tests hold components/kubeconfig.py to), with the local server's address and CA.

The azure-native stand-in hands out the file GPU_AKS_LOCAL_KUBECONFIG names as it is; written by this function,
the platform's kubelogin conversion (components/kubeconfig.py) runs on it, and the real pulumi-kubernetes provider
then runs `kubelogin get-token` (testbed/standins/kubelogin.py) for every request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from offline.mockrun import fake_aad_kubeconfig


def aks_user_kubeconfig(local: Mapping[str, Any], cluster_name: str = "gpu-aks-dev") -> str:
    """AKS's kubeconfig for `cluster_name`, whose cluster entry is the first of the local kubeconfig `local`."""
    config = yaml.safe_load(fake_aad_kubeconfig(cluster_name))
    config["clusters"][0]["cluster"] = dict(local["clusters"][0]["cluster"])
    return yaml.safe_dump(config, sort_keys=False)
