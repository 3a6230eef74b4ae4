"""The platform for real: the real Pulumi engine's `pulumi up` of dev, prod and nap, with the stand-in
Azure handing out the local cluster's kubeconfig (GPU_AKS_LOCAL_KUBECONFIG) for the deployer's identity, with
the Kubernetes rights the platform's role assignment gives it on AKS (tests/cluster/conftest.py), and the real
pulumi-kubernetes provider, creates every Kubernetes object of the stack in kube-apiserver and waits, as
the provider does, for its DaemonSets' pods, which kube-controller-manager makes on the stack's GPU nodes
and kwok runs; a second `up` changes nothing; `destroy` removes them all.

Server-side validation, defaulting and the CRDs' own CEL rules are the API server's: the local cluster
serves Karpenter's published CRDs (tests/fixtures/karpenter/) and a stand-in PodMonitor CRD
(`testbed.localcluster.control_plane`), as AKS serves them with NAP and managed Prometheus."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from testbed.localcluster import Client
from testbed.localcluster.nodes import node_ready
from testbed.workspace import Workspace
from tests.cluster.stacks import STACKS, forget_stack, no_policy, preview_of, use_stack, whole


def _path(type_name: str, obj: Mapping[str, Any]) -> str:
    """Where kube-apiserver stores an object the stack declares, from its Pulumi type
    (`kubernetes:apps/v1:DaemonSet`)."""
    group_version, kind = type_name.split(":")[1:3]
    plural = kind.lower() + ("es" if kind.lower().endswith("s") else "s")
    if plural.endswith("ys"):
        plural = plural[:-2] + "ies"
    base = f"/api/{group_version.removeprefix('core/')}" if group_version.startswith("core/") else f"/apis/{group_version}"
    namespace = obj.get("metadata", {}).get("namespace")
    return f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"


def objects(stack: str) -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object) for every Kubernetes object the stack declares, as the preview gives
    its inputs (numbers whole as the provider sends them)."""
    found = []
    for resource in preview_of(stack)["resources"]:
        if resource["type"].startswith("kubernetes:") and not resource["type"].startswith("kubernetes:index"):
            group_version, kind = resource["type"].split(":")[1:3]
            obj = {**whole(resource["inputs"]), "kind": kind, "apiVersion": group_version.removeprefix("core/")}
            found.append((_path(resource["type"], obj), obj))
    return found


def declared(stack: str) -> list[str]:
    """The API paths of every Kubernetes object the stack declares (names as the preview gives them)."""
    return [f"{path}/{obj['metadata']['name']}" for path, obj in objects(stack)]


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_the_stacks_declare_passes_the_api_servers_validation(api, stack):
    """Without the engine: each object through kube-apiserver's validation, defaulting and admission,
    and the Karpenter CRDs' OpenAPI and CEL rules (a dry-run server-side apply: nothing is stored)."""
    refused = []
    for path, obj in objects(stack):
        namespace = obj["metadata"].get("namespace")
        if namespace:
            api.ensure_namespace(namespace)
        # Server-side apply, as the provider does, dry run: whether or not another test left the object.
        status, body = api.raw("PATCH", f"{path}/{obj['metadata']['name']}?dryRun=All&fieldValidation=Strict"
                               "&fieldManager=gpu-aks-cluster-tier&force=true", obj, "application/apply-patch+yaml")
        if status >= 400:
            refused.append(f"{obj['kind']} {obj['metadata']['name']}: HTTP {status}: {body.get('message', body)}")
    assert refused == []


@pytest.fixture(scope="module")
def workspace(deployer_kubeconfig: Path, api: Client, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The engine workspace (testbed.workspace) with the stand-in Azure handing out the deployer's kubeconfig for
    this cluster, so the real pulumi-kubernetes provider talks to it as the deployer (tests/cluster/conftest.py)."""
    forget_stack(api)
    no_policy(api)  # only the stack's own policy judges pods here
    # The platform creates gpu-resources, and its provider refuses one that is there (components/cluster.py):
    # the dry runs above and tests/cluster/test_doctor.py make it for themselves.
    if api.exists("/api/v1/namespaces/gpu-resources"):
        api.delete("/api/v1/namespaces/gpu-resources")
    api.wait_for("gpu-resources to go", lambda: not api.exists("/api/v1/namespaces/gpu-resources"), timeout=120)
    return Workspace.new(tmp_path_factory.mktemp("platform"), kubeconfig=deployer_kubeconfig)


def _gpu_pod(namespace: str, tolerations: list[dict[str, str]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
                     "tolerations": tolerations}}


def enforces_its_policy(api: Client, stack: str) -> None:
    """The policy `pulumi up` installed judges pods: an untolerated GPU pod is refused where the
    stack's binding says Deny (prod) and admitted with a warning where it says Warn (dev, nap); its
    tolerating twin passes silently; gpu-resources, exempt, is not judged."""
    binding = next(obj for _, obj in objects(stack) if obj["kind"] == "ValidatingAdmissionPolicyBinding")
    deny = "Deny" in binding["spec"]["validationActions"]
    api.ensure_namespace("team")
    untolerated = _gpu_pod("team", [])
    pods = "/api/v1/namespaces/team/pods?dryRun=All"

    def judged() -> bool:
        status, _ = api.raw("POST", pods, untolerated)
        return status == 403 if deny else status == 201 and bool(api.warnings)

    api.wait_for(f"{stack}'s policy to be enforced", judged, timeout=30, every=0.2)
    status, body = api.raw("POST", pods, untolerated)
    message = body.get("message", "") if deny else " ".join(api.warnings)
    assert "container c asks for a GPU, but the pod does not tolerate the GPU taint sku=gpu:NoSchedule" in message
    status, _ = api.raw("POST", pods, _gpu_pod("team", [
        {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]))
    assert status == 201 and api.warnings == []
    api.ensure_namespace("gpu-resources")
    status, _ = api.raw("POST", "/api/v1/namespaces/gpu-resources/pods?dryRun=All", _gpu_pod("gpu-resources", []))
    assert status == 201 and api.warnings == [], "the binding exempts gpu-resources"


@pytest.mark.parametrize("stack", STACKS)
def test_up_creates_every_object_a_second_up_changes_nothing_and_destroy_removes_them(api, workspace, stack):
    paths = declared(stack)
    assert paths, "the stack declares Kubernetes objects"
    use_stack(api, stack)  # the pools' nodes, for the DaemonSets' pods
    workspace.init(stack, config=[
        # The wait for Azure RBAC to propagate is a real sleep (components/propagation.py): nothing to wait for here.
        ("gpu-aks:access.rolePropagationSeconds", "0")])
    workspace.pulumi("up", "--yes", "--skip-preview", "--stack", stack)
    missing = [path for path in paths if not api.exists(path)]
    assert missing == [], f"pulumi up did not create {missing}"
    namespace = api.get("/api/v1/namespaces/gpu-resources")
    assert namespace["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpu-aks"
    daemonsets = api.get("/apis/apps/v1/namespaces/gpu-resources/daemonsets")["items"]
    assert daemonsets, "the stack runs its device plugin"
    for daemonset in daemonsets:  # pulumi up returned once the provider saw every pod Ready
        status = daemonset["status"]
        assert status["desiredNumberScheduled"] > 0 and status["numberReady"] == status["desiredNumberScheduled"], \
            (daemonset["metadata"]["name"], status)
    enforces_its_policy(api, stack)
    # The nodes registered before `up` are still Ready and untainted a minute or more later: kwok renews their
    # Leases, so the node lifecycle controller has nothing to taint.
    for node in api.get("/api/v1/nodes")["items"]:
        assert node_ready(node), (node["metadata"]["name"], node["status"].get("conditions"), node["spec"])
    workspace.pulumi("up", "--yes", "--expect-no-changes", "--stack", stack)
    # prod protects its cluster (cluster.protect): a destroy stops there until it is unprotected.
    workspace.pulumi("state", "unprotect", "--all", "--yes", "--stack", stack)
    workspace.pulumi("destroy", "--yes", "--stack", stack)
    left = [path for path in paths if api.exists(path)]
    assert left == [], f"pulumi destroy left {left}"
    workspace.pulumi("stack", "rm", "--yes", stack)
