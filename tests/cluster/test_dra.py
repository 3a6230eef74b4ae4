"""DRA pools against kube-scheduler and the API server (#48): where the explainer says a claim, or a plain
`nvidia.com/gpu` pod under KEP-5004, gets a GPU is where kube-scheduler's DynamicResources plugin binds it; and
the DeviceClass selectors the checker refuses are those the API server refuses.

The platform is `tests/test_dra.py`'s: `gput4` served by the device plugin, `a100dra` (Standard_NC24ads_A100_v4)
by NVIDIA's DRA driver with the KEP-5004 class. Its nodes give pods what the contract says
(tests/cluster/room.py); the DRA pool's advertise no GPU resource. No kubelet plugin runs (kwok has none): each
DRA node's GPU is published here as the driver's kubelet plugin publishes it, and the DeviceClasses are the
chart's. kube-controller-manager's resourceclaim controller makes the claims of the pods' templates, and
kube-scheduler makes a KEP-5004 pod's claim itself (DRAExtendedResource, GA and locked on in 1.37)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from gpu_aks_policies.device_classes import device_class_refusals
from gpu_aks_policies.explain import explain
from gpu_aks_policies.fit import platform_from_outputs
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT
from gpu_aks_policies.rules import default_rule_config
from gpu_aks_policies.workloads import context_of

from components.manifests import extended_resource_device_class
from components.settings.dra import EXTENDED_DEVICE_CLASS
from testbed.localcluster import POOL_ANNOTATION, ApiError, Client
from tests.cluster.room import forget_contract_nodes, use_contract_nodes
from tests.cluster.stacks import no_policy
from tests.cluster.test_scheduler import REFUSED, UNSCHEDULABLE, scheduled
from tests.test_device_classes import ACCEPTED
from tests.test_device_classes import REFUSED as REFUSED_SELECTORS
from tests.test_dra import _platform

NAMESPACE = "claims"
RESOURCE = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.nvidia.com"
SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _device_class(name: str, expression: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


#: The chart's classes (kubernetes-sigs/dra-driver-nvidia-gpu v25.8.1
#: `deployments/helm/nvidia-dra-driver-gpu/templates/deviceclass-{gpu,mig}.yaml`) and gpu-aks's KEP-5004 class.
DEVICE_CLASSES = [
    _device_class("gpu.nvidia.com", f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'gpu'"),
    _device_class("mig.nvidia.com", f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == 'mig'"),
    extended_resource_device_class(EXTENDED_DEVICE_CLASS, "nvidia.com/gpu"),
]


def resource_slice(node: str, gpus: int) -> dict[str, Any]:
    """The ResourceSlice the driver's kubelet plugin publishes for `node`: one pool named after the node, a
    device `gpu-<minor>` per GPU with the attributes and capacity of v25.8.1 `cmd/gpu-kubelet-plugin/
    deviceinfo.go` (`GpuInfo.GetDevice`, `CanonicalName`) and `driver.go` (`Pools: {nodeName: ...}`); the values
    are an A100 80GB PCIe's."""
    devices = [{"name": f"gpu-{minor}", "attributes": {
        "type": {"string": "gpu"}, "uuid": {"string": f"GPU-{node[-6:]}-{minor:04d}-0000-0000-000000000000"},
        "productName": {"string": "NVIDIA A100 80GB PCIe"}, "brand": {"string": "Nvidia"},
        "architecture": {"string": "Ampere"}, "cudaComputeCapability": {"version": "8.0.0"},
        "driverVersion": {"version": "580.95.5"}, "cudaDriverVersion": {"version": "13.0.0"},
        "pcieBusID": {"string": f"0001:00:00.{minor}"}},
        "capacity": {"memory": {"value": "80Gi"}}} for minor in range(gpus)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                  "resourceSliceCount": 1}, "devices": devices}}


def _template(name: str, device_class: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]}}}}


TEMPLATES = [_template("whole-gpu", "gpu.nvidia.com"), _template("mig-device", "mig.nvidia.com")]


def _pod(name: str, template: str | None = None, selector: Mapping[str, str] | None = None,
         tolerate: bool = True) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    spec: dict[str, Any] = {"containers": [container]}
    if template:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
        container["resources"]["claims"] = [{"name": "gpu"}]
    else:
        container["resources"]["limits"] = {"nvidia.com/gpu": 1}
    if tolerate:
        spec["tolerations"] = [SKU]
    if selector:
        spec["nodeSelector"] = dict(selector)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


DRA_POOL, PLUGIN_POOL = {"gpu-aks.io/pool": "a100dra"}, {"gpu-aks.io/pool": "gput4"}
PODS = [
    _pod("claim", "whole-gpu"),
    _pod("claim-on-plugin-pool", "whole-gpu", PLUGIN_POOL),
    _pod("claim-untolerated", "whole-gpu", tolerate=False),
    _pod("mig-claim", "mig-device"),
    _pod("kep5004-on-dra-pool", selector=DRA_POOL),
    _pod("plain-either-pool"),
]


@pytest.fixture(scope="module")
def dra(api: Client) -> Iterator[Mapping[str, Any]]:
    outputs = _platform()
    use_contract_nodes(api, "dra", outputs)
    no_policy(api)
    created: list[str] = []
    try:
        for device_class in DEVICE_CLASSES:
            api.create(f"{RESOURCE}/deviceclasses", device_class)
            created.append(f"{RESOURCE}/deviceclasses/{device_class['metadata']['name']}")
        for node in api.get("/api/v1/nodes")["items"]:
            if node["metadata"]["annotations"].get(POOL_ANNOTATION) == "a100dra":
                api.create(f"{RESOURCE}/resourceslices", resource_slice(node["metadata"]["name"], 1))
                created.append(f"{RESOURCE}/resourceslices/{node['metadata']['name']}-{DRIVER}")
        api.ensure_namespace(NAMESPACE)
        for template in TEMPLATES:
            api.create(f"{RESOURCE}/namespaces/{NAMESPACE}/resourceclaimtemplates", template)
        yield outputs
    finally:
        for path in reversed(created):
            api.delete(path)
        forget_contract_nodes(api)


def _no_claims(api: Client) -> bool:
    return not api.get(f"{RESOURCE}/namespaces/{NAMESPACE}/resourceclaims")["items"]


def test_claims_and_kep5004_pods_land_where_the_explainer_says(api, dra):
    platform = platform_from_outputs(dra)
    config = default_rule_config()[TOLERATE_GPU_TAINT]
    context = context_of([*TEMPLATES, *DEVICE_CLASSES, *PODS])
    disagreements, seen = [], {}
    for pod in PODS:
        [explanation] = explain(pod, platform, config, context)
        # One pod at a time, each claim gone (its device free) before the next.
        api.wait_for("the previous pod's claims to go", lambda: _no_claims(api), timeout=60, every=0.1)
        pool, message = scheduled(api, pod)
        seen[pod["metadata"]["name"]] = pool
        expected = explanation.lands_on
        if pool == REFUSED or (pool == UNSCHEDULABLE) != (not expected) or (pool != UNSCHEDULABLE
                                                                            and pool not in expected):
            disagreements.append(f"{pod['metadata']['name']}: kube-scheduler: {pool} ({message[:300]}); the "
                                 f"explainer: {'/'.join(expected) or 'fits no pool'}")
    assert disagreements == []
    assert seen["claim"] == seen["kep5004-on-dra-pool"] == "a100dra"
    assert seen["claim-on-plugin-pool"] == seen["mig-claim"] == seen["claim-untolerated"] == UNSCHEDULABLE


@pytest.mark.parametrize("expression", [*ACCEPTED, *(e for e, _ in REFUSED_SELECTORS)])
def test_the_api_server_refuses_exactly_the_selectors_the_checker_refuses(api, expression):
    device_class = _device_class("probe.gpu-aks.io", expression)
    try:
        api.create(f"{RESOURCE}/deviceclasses", device_class, dry_run=True)
        refused = ""
    except ApiError as error:
        refused = error.message
    said = device_class_refusals(device_class)
    assert bool(said) == bool(refused), f"the API server: {refused or 'accepts it'}; the checker: {said or 'accepts it'}"
