"""The platform for real: the real Pulumi engine's `pulumi up` of dev, prod and nap, with the stand-in
Azure handing out the local API server's kubeconfig (GPU_AKS_LOCAL_KUBECONFIG) and the real
pulumi-kubernetes provider, creates every Kubernetes object of the stack in kube-apiserver; a second
`up` changes nothing; `destroy` removes them all.

Server-side validation, defaulting and the CRDs' own CEL rules are the API server's: Karpenter's
published CRDs (tests/fixtures/karpenter/) are installed first. Azure Managed Prometheus' PodMonitor
CRD (`azmonitoring.coreos.com`) is not among the fixtures, so a stand-in CRD that keeps every field
serves prod's PodMonitor (it proves the group, version and kind, not the schema)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from testbed.workspace import Workspace
from tests.cluster.stacks import STACKS, forget_stack, no_policy, preview_of, whole
from tools.localcluster import ROOT, Client, Cluster

CRD_FILES = ("karpenter.sh_nodepools.yaml", "karpenter.azure.com_aksnodeclasses.yaml")
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#: A PodMonitor CRD that keeps every field: the group, version, kind and scope Azure Managed Prometheus
#: watches (FACTS.md, "GPU observability on AKS").
POD_MONITOR_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "podmonitors.azmonitoring.coreos.com", "labels": {"gpu-aks.io/test": "stand-in"}},
    "spec": {"group": "azmonitoring.coreos.com", "scope": "Namespaced",
             "names": {"plural": "podmonitors", "singular": "podmonitor", "kind": "PodMonitor", "listKind": "PodMonitorList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


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
    install_crds(api)
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


def install_crds(api: Client) -> None:
    crds = [yaml.safe_load((ROOT / "tests" / "fixtures" / "karpenter" / name).read_text()) for name in CRD_FILES]
    for crd in [*crds, POD_MONITOR_CRD]:
        if not api.exists(f"{CRDS}/{crd['metadata']['name']}"):
            api.create(CRDS, crd)

        def established(name: str = crd["metadata"]["name"]) -> bool:
            conditions = api.get(f"{CRDS}/{name}").get("status", {}).get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        api.wait_for(f"CRD {crd['metadata']['name']} to be established", established)


@pytest.fixture(scope="module")
def workspace(cluster: Cluster, api: Client, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The engine workspace (testbed.workspace) with the stand-in Azure handing out this cluster's
    kubeconfig, so the real pulumi-kubernetes provider talks to it."""
    forget_stack(api)
    no_policy(api)  # only the stack's own policy judges pods here
    install_crds(api)
    # The platform creates gpu-resources, and its provider refuses one that is there (components/cluster.py):
    # the dry runs above and tests/cluster/test_doctor.py make it for themselves.
    if api.exists("/api/v1/namespaces/gpu-resources"):
        api.delete("/api/v1/namespaces/gpu-resources")
    api.wait_for("gpu-resources to go", lambda: not api.exists("/api/v1/namespaces/gpu-resources"), timeout=120)
    return Workspace.new(tmp_path_factory.mktemp("platform"), kubeconfig=cluster.kubeconfig)


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
    workspace.init(stack, config=[
        # The wait for Azure RBAC to propagate is a real sleep (components/propagation.py): nothing to wait for here.
        ("gpu-aks:access.rolePropagationSeconds", "0")])
    workspace.pulumi("up", "--yes", "--skip-preview", "--stack", stack)
    missing = [path for path in paths if not api.exists(path)]
    assert missing == [], f"pulumi up did not create {missing}"
    namespace = api.get("/api/v1/namespaces/gpu-resources")
    assert namespace["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpu-aks"
    enforces_its_policy(api, stack)
    workspace.pulumi("up", "--yes", "--expect-no-changes", "--stack", stack)
    # prod protects its cluster (cluster.protect): a destroy stops there until it is unprotected.
    workspace.pulumi("state", "unprotect", "--all", "--yes", "--stack", stack)
    workspace.pulumi("destroy", "--yes", "--stack", stack)
    left = [path for path in paths if api.exists(path)]
    assert left == [], f"pulumi destroy left {left}"
    workspace.pulumi("stack", "rm", "--yes", stack)
