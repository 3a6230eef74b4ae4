"""The example stacks' outputs contracts, and which stack's nodes the session's control plane holds."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from functools import cache
from typing import Any

from gpu_aks_policies.admission_policy import POLICY_NAME

from testbed.build import ROOT
from testbed.localcluster import Client, register, stack_nodes

STACKS = ("dev", "prod", "nap")
_current: dict[str, str] = {}


@cache
def preview_of(stack: str) -> Mapping[str, Any]:
    """`python -m tools.preview STACK --json`: the resources' inputs and the outputs contract."""
    result = subprocess.run([sys.executable, "-m", "tools.preview", stack, "--json"], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def outputs_of(stack: str) -> Mapping[str, Any]:
    return preview_of(stack)["outputs"]  # type: ignore[no-any-return]


def use_stack(api: Client, stack: str, copies: int = 2) -> None:
    """Registers the stack's nodes (`copies` of each kind), replacing any other nodes."""
    if _current.get("stack") == f"{stack}x{copies}":
        return
    forget_stack(api)
    register(api, stack_nodes(outputs_of(stack), copies=copies))
    _current["stack"] = f"{stack}x{copies}"


def forget_stack(api: Client) -> None:
    """Deletes every node (a test that changed them leaves them to be registered afresh), once it is gone
    (the pods bound to it go too: the pod garbage collector deletes a gone node's pods)."""
    for node in api.get("/api/v1/nodes")["items"]:
        api.delete(f"/api/v1/nodes/{node['metadata']['name']}")
    api.wait_for("every node to go", lambda: not api.get("/api/v1/nodes")["items"])
    _current.clear()


def whole(value: Any) -> Any:
    """Numbers as the provider sends them: the preview's inputs carry every number as a float (the gRPC
    Struct has only doubles), and Go's JSON writes a whole float64 without a fraction."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole(v) for v in value]
    return value


def no_policy(api: Client) -> None:
    """No gpu-aks policy, and returns once the API server stops enforcing one (it drops a deleted
    policy asynchronously)."""
    for path in ("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                 "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"):
        for item in api.get(path)["items"]:
            if item["metadata"]["name"].startswith(POLICY_NAME):
                api.delete(f"{path}/{item['metadata']['name']}")
    api.ensure_namespace("team")
    probe = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "no-policy-probe", "namespace": "team"},
             "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    api.wait_for("the API server to drop the gpu-aks policy",
                 lambda: api.raw("POST", "/api/v1/namespaces/team/pods?dryRun=All", probe)[0] == 201,
                 timeout=30, every=0.2)
