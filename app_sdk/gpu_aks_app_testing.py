"""Test an app stack against a gpu-aks platform under Pulumi's mock runtime, without the platform.

    import pulumi
    from gpu_aks_app_testing import PlatformMocks, platform_outputs

    mocks = PlatformMocks({"my-org/gpu-aks/dev": platform_outputs()})
    pulumi.runtime.set_mocks(mocks, project="my-app", stack="dev", preview=False)
    # ... run or import the program, then assert on mocks.resources

`platform_outputs()` is shaped like a gpu-aks platform's outputs contract (version 2): a T4 pool by
default, or the pools you describe with `gpu_pool(...)`. A StackReference delivers numbers as floats
(`1` arrives as `1.0`) and the kubeconfig as a secret; these mocks do the same, so what passes here
passes against a real platform stack. Needs only the Pulumi SDK the app stack already uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

CONTRACT_VERSION = 3
POOL_LABEL = "gpu-aks.io/pool"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"


def _toleration(taint: str) -> dict[str, str]:
    head, _, effect = taint.rpartition(":")
    key, _, value = head.partition("=")
    if value:
        return {"key": key, "operator": "Equal", "value": value, "effect": effect}
    return {"key": key, "operator": "Exists", "effect": effect}


def gpu_pool(name: str = "gput4", vm_size: str = "Standard_NC4as_T4_v3", gpu_model: str = "T4",
             accelerator: str = "nvidia-tesla-t4", gpus_per_vm: int = 1, gpu_memory_gib: int = 16,
             taints: Sequence[str] = ("sku=gpu:NoSchedule",), spot: bool = False, mig_partition: str | None = None,
             mig_instances_per_gpu: int = 1, mig_strategy: str = "none", min_count: int = 0,
             max_count: int = 2, sharing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One GPU pool as the platform's contract describes it; `sharing`: {"strategy": "timeSlicing" or
    "mps", "replicas": N}, and a node then advertises its GPUs times N."""
    taints = [*taints, SPOT_TAINT] if spot and SPOT_TAINT not in taints else list(taints)
    labels = {"accelerator": "nvidia", "nvidia.com/gpu.accelerator": accelerator, POOL_LABEL: name}
    if mig_partition:
        labels["nvidia.com/gpu.partition-size"] = mig_partition
    # An AgentPool-backed pool: one offer, which the single-size fields repeat.
    offer = {
        "vmSize": vm_size, "gpuModel": gpu_model, "gpuMemoryGiB": gpu_memory_gib, "gpusPerVm": gpus_per_vm,
        "resource": f"nvidia.com/mig-{mig_partition}" if mig_partition and mig_strategy == "mixed" else "nvidia.com/gpu",
        "perNode": gpus_per_vm * (mig_instances_per_gpu if mig_partition else 1) * (sharing or {}).get("replicas", 1),
        "migPartition": mig_partition, "capacityTypes": ["spot" if spot else "onDemand"], "hourlyPrice": None,
    }
    return {
        "name": name, "kind": "agentPool", "azureName": name + "0000", "poolLabel": {POOL_LABEL: name},
        "vmSize": vm_size, "gpuModel": gpu_model, "gpuMemoryGiB": gpu_memory_gib, "gpusPerVm": gpus_per_vm,
        "gpusPerNode": offer["perNode"], "gpuResource": offer["resource"],
        "gpuInstanceProfile": f"MIG{mig_partition.split('g.')[0]}g" if mig_partition else None,
        "migPartition": mig_partition, "accelerator": accelerator, "spot": spot,
        "minCount": min_count, "maxCount": max_count, "taints": taints, "labels": labels,
        "devicePlugin": "gpu-aks", "dcgmExporter": "none", "tolerations": [_toleration(t) for t in taints],
        "nodeSelector": {"accelerator": "nvidia", POOL_LABEL: name}, "offers": [offer],
        "sharing": dict(sharing) if sharing else None, "capacityTypes": list(offer["capacityTypes"]),
    }


def pool_entry(pool: Mapping[str, Any]) -> dict[str, Any]:
    """A GPU pool of `gpu_pool` as contract version 3's `pools` describes it (the pool model serialized)."""
    offers = [{"vmSize": offer["vmSize"], "capacityTypes": offer["capacityTypes"], "gpuModel": offer["gpuModel"],
               "gpuMemoryGiB": offer["gpuMemoryGiB"], "gpusPerVm": offer["gpusPerVm"], "resource": offer["resource"],
               "perNode": offer["perNode"], "gpuInstanceProfile": pool["gpuInstanceProfile"],
               "migPartition": offer["migPartition"], "hourlyPrice": offer["hourlyPrice"]} for offer in pool["offers"]]
    return {"name": pool["name"], "key": f"gpuPools[{pool['name']}]", "role": "gpu", "backend": pool["kind"],
            "azureName": pool["azureName"], "offers": offers, "minCount": pool["minCount"],
            "maxCount": pool["maxCount"], "spot": pool["spot"], "capacityTypes": list(pool["capacityTypes"]),
            "zones": [], "taints": pool["taints"],
            "labels": pool["labels"], "sharing": pool["sharing"], "devicePlugin": pool["devicePlugin"],
            "exporter": pool["dcgmExporter"] == "gpu-aks"}


def platform_outputs(pools: Sequence[Mapping[str, Any]] | None = None, mig_strategy: str = "none",
                     cluster_name: str = "gpu-aks-dev") -> dict[str, Any]:
    """A platform stack's outputs, as `pulumi stack output --json` shows them (kubeconfig aside)."""
    pools = list(pools) if pools is not None else [gpu_pool()]
    return {
        "contractVersion": CONTRACT_VERSION, "clusterName": cluster_name, "resourceGroupName": f"rg-{cluster_name}",
        "location": "eastus2", "kubernetesVersion": "1.37", "oidcIssuerUrl": "https://oidc.example/issuer/",
        "kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
        "gpuNamespace": "gpu-resources", "migStrategy": mig_strategy,
        "gpuPools": {pool["name"]: dict(pool) for pool in pools},
        "cpuPools": {},
        "pools": {pool["name"]: pool_entry(pool) for pool in pools},
    }


def as_delivered(value: Any) -> Any:
    """What a StackReference hands the program: numbers as floats."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, Mapping):
        return {k: as_delivered(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_delivered(v) for v in value]
    return value


@dataclass(frozen=True)
class MockedResource:
    type: str
    name: str
    inputs: Mapping[str, Any]


class PlatformMocks(pulumi.runtime.Mocks):
    """Answers StackReferences to the given platform stacks; records every other resource."""

    def __init__(self, platforms: Mapping[str, Mapping[str, Any]], secret_outputs: Sequence[str] = ("kubeconfig",)) -> None:
        self.platforms = dict(platforms)
        self.secret_outputs = tuple(secret_outputs)
        self.resources: list[MockedResource] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        if args.typ == "pulumi:pulumi:StackReference":
            name = args.inputs.get("name", args.name)
            if name not in self.platforms:
                raise KeyError(f"no mocked platform stack {name!r}; mocked: {', '.join(self.platforms)}")
            outputs = as_delivered(self.platforms[name])
            return name, {"name": name, "outputs": outputs,
                          "secretOutputNames": [k for k in self.secret_outputs if k in outputs]}
        state = dict(args.inputs)
        if args.typ.startswith("kubernetes:") and isinstance(state.get("metadata"), dict):
            # pulumi-kubernetes auto-names objects that set no name.
            state["metadata"] = {"name": args.name, **state["metadata"]}
        self.resources.append(MockedResource(args.typ, args.name, state))
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return {}, []

    def of_type(self, type_: str) -> list[MockedResource]:
        return [r for r in self.resources if r.type == type_]
