"""An app stack on gpu-aks: read the platform through a StackReference, ask for GPUs, run a Job that
prints the CUDA devices it sees (the check the seeds run with `nvidia-smi` and PyTorch)."""

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_app import GpuRequest, place

config = pulumi.Config()
platform = pulumi.StackReference(config.require("platformStack"))
provider = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"))

request = GpuRequest(
    gpus=config.get_int("gpus") or 1,
    model=config.get("gpuModel"),
    pool=config.get("gpuPool"),
    mig_partition=config.get("migPartition"),
)
placement = platform.require_output("pools").apply(lambda pools: place(pools, request))

check = {
    "name": "cuda-devices",
    "image": "nvcr.io/nvidia/cuda:12.9.1-base-ubuntu24.04",
    "command": ["sh", "-c", "nvidia-smi -L && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv"],
    "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
}
job = k8s.batch.v1.Job(
    "gpu-check",
    # `pulumi up` waits for the Job to complete: first for a GPU node to come up (the pool may idle at zero).
    metadata=placement.apply(lambda p: {"labels": {"app": "gpu-check"}, "annotations": p.await_annotations()}),
    spec=placement.apply(lambda p: {
        "backoffLimit": 0,
        "template": {"metadata": {"labels": {"app": "gpu-check"}},
                     "spec": p.pod_spec([check], restartPolicy="Never")},
    }),
    opts=pulumi.ResourceOptions(provider=provider),
)

pulumi.export("gpuPool", placement.apply(lambda p: p.pool))
pulumi.export("jobName", job.metadata["name"])
