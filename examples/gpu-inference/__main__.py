"""An app stack on gpu-aks that serves a model: read the platform through a StackReference, ask for a
GPU, and run vLLM's OpenAI-compatible server as a Deployment behind a ClusterIP Service.

The Deployment is placed by `gpu_aks_app.place`, so it tolerates exactly the taints of the pool that
fits and pins that pool's nodes; the policy pack finds nothing to report in what it creates."""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_app import GpuRequest, Placement, place

#: vLLM's server image; vLLM needs compute capability 7.0 or higher (T4 and newer; docs.vllm.ai,
#: "Installation > GPU > Requirements").
DEFAULT_IMAGE = "vllm/vllm-openai:v0.14.0"
#: vLLM's OpenAI-compatible server listens here; `/health` answers once the engine is up (vLLM's
#: Kubernetes deployment guide probes it).
PORT = 8000
#: How long the startup probe lets vLLM start (60 probes 10 s apart: the first start downloads the model).
STARTUP_SECONDS = 60 * 10
#: Pulling vLLM's image, several GiB, onto a new node.
IMAGE_PULL_SECONDS = 10 * 60
#: GPUs without bfloat16 (compute capability below 8.0): vLLM refuses bfloat16 models there and asks
#: for `--dtype half` ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0").
NO_BFLOAT16 = {"T4"}

config = pulumi.Config()
platform = pulumi.StackReference(config.require("platformStack"))
provider = k8s.Provider("platform", kubeconfig=platform.require_output("kubeconfig"))
spot = config.get_bool("spot")
request = GpuRequest(gpus=1, model=config.get("gpuModel"), pool=config.get("gpuPool"), spot=spot)
placement = platform.require_output("pools").apply(lambda pools: place(pools, request))
labels = {"app.kubernetes.io/name": "gpu-inference"}


def pod_spec(placement: Placement) -> dict[str, Any]:
    dtype = "half" if placement.gpu_model in NO_BFLOAT16 else "auto"
    server = {
        "name": "vllm",
        "image": config.get("image") or DEFAULT_IMAGE,
        "args": ["--model", config.get("model") or "Qwen/Qwen2.5-0.5B-Instruct", "--dtype", dtype,
                 "--port", str(PORT)],
        "ports": [{"name": "http", "containerPort": PORT}],
        # The model downloads on first start: give it time before liveness counts, then probe health.
        "startupProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10,
                         "failureThreshold": STARTUP_SECONDS // 10},
        "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10},
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    # PyTorch's workers share tensors through /dev/shm, which is 64 MiB in a container by default.
    volumes = [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}]
    return placement.pod_spec([server], volumes=volumes)


deployment = k8s.apps.v1.Deployment(
    "gpu-inference",
    # `pulumi up` waits for the server to be ready: for a GPU node to come up (the pool may idle at zero), the
    # image to be pulled and the model to load, not the provider's default 10 minutes.
    metadata=placement.apply(lambda p: {"labels": labels,
                                        "annotations": p.await_annotations(IMAGE_PULL_SECONDS + STARTUP_SECONDS)}),
    spec=placement.apply(lambda placed: {
        "replicas": config.get_int("replicas") or 1,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec(placed)},
    }),
    opts=pulumi.ResourceOptions(provider=provider),
)
service = k8s.core.v1.Service(
    "gpu-inference",
    metadata={"labels": labels},
    spec={"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    opts=pulumi.ResourceOptions(provider=provider),
)

pulumi.export("gpuPool", placement.apply(lambda p: p.pool))
pulumi.export("serviceName", service.metadata["name"])
