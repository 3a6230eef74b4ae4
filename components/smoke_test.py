"""`GpuSmokeTest`: opt-in proof, after `pulumi up`, that every GPU pool really runs GPU work.

One Job per GPU pool the device plugin or the DRA driver serves, asking for one GPU (on a DRA pool through a
claim of `gpu.nvidia.com`) with exactly the tolerations and nodeSelector of the outputs contract (what app stacks
will use), running `smoke/gpu_check.py`. It is
its own resource at the end of the graph: nothing depends on it, so a failing check fails only this
Job (reported by `pulumi up`), never the cluster or its pools, and the next `pulumi up` replaces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_policies.catalog import POOL_LABEL
from gpu_aks_policies.dra_driver import GPU_DEVICE_CLASS
from gpu_aks_policies.pools.model import Pool

from components.contract import gpu_pool_contract
from components.manifests import PART_OF, RESTRICTED_SECURITY_CONTEXT
from components.settings import SmokeTestSettings

CHECK_PROGRAM = Path(__file__).resolve().parent.parent / "smoke" / "gpu_check.py"
#: Long enough for the autoscaler to bring a GPU node up from zero and pull a large image.
DEADLINE_SECONDS = 1800
#: How long `pulumi up` waits for a Job. pulumi-kubernetes gives up on a Job that is not Ready after
#: 10 minutes unless `customTimeouts` or the `pulumi.com/timeoutSeconds` annotation says otherwise
#: (pulumi-kubernetes docs, "Job" await logic), which a GPU node scaling from zero plus a PyTorch
#: image pull often exceeds. Both are set, a little past the Job's own deadline, so Kubernetes
#: (not Pulumi) decides when the check has failed.
PULUMI_TIMEOUT_SECONDS = DEADLINE_SECONDS + 300


def smoke_claim_template(pool: Pool, namespace: str) -> dict[str, Any]:
    """A DRA pool's smoke test asks through a claim of one whole GPU (`gpu.nvidia.com`), as an app asks there: it
    proves NVIDIA's DRA driver publishes the node's GPUs and prepares one for the pod."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": f"gpu-smoke-{pool.name}", "namespace": namespace, "labels": dict(PART_OF)},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu",
                                                        "exactly": {"deviceClassName": GPU_DEVICE_CLASS}}]}}}}


def smoke_job_spec(pool: Pool, image: str, config_map: str) -> dict[str, Any]:
    contract = gpu_pool_contract(pool)
    # A DRA pool's GPU comes through a claim; a device-plugin pool's through its extended resource.
    asks: dict[str, Any] = {"claims": [{"name": "gpu"}]} if pool.dra is not None else \
        {"limits": {contract.gpu_resource: 1}}
    claims = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": f"gpu-smoke-{pool.name}"}]} \
        if pool.dra is not None else {}
    return {
        "backoffLimit": 0,
        "activeDeadlineSeconds": DEADLINE_SECONDS,
        "template": {
            # The platform's pool label (gpu-aks.io/pool), so the pods are found like any pod of the pool.
            "metadata": {"labels": {"app.kubernetes.io/name": "gpu-smoke-test", POOL_LABEL: pool.name}},
            "spec": {
                "restartPolicy": "Never",
                **claims,
                "tolerations": [dict(toleration) for toleration in contract.tolerations],
                "nodeSelector": dict(contract.node_selector),
                "containers": [{
                    "name": "gpu-check",
                    "image": image,
                    "command": ["python", "/opt/gpu-check/gpu_check.py"],
                    "resources": asks,
                    "securityContext": dict(RESTRICTED_SECURITY_CONTEXT),
                    "volumeMounts": [{"name": "gpu-check", "mountPath": "/opt/gpu-check", "readOnly": True}],
                }],
                "volumes": [{"name": "gpu-check", "configMap": {"name": config_map}}],
            },
        },
    }


@dataclass(frozen=True)
class GpuSmokeTestArgs:
    settings: SmokeTestSettings
    namespace: str
    pools: Sequence[Pool]
    provider: k8s.Provider
    #: The device plugin and the GPU pools: the Jobs start only once they exist.
    after: Sequence[pulumi.Resource]


class GpuSmokeTest(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuSmokeTestArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuSmokeTest", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        config_map_name = "gpu-smoke-check"
        self.program = k8s.core.v1.ConfigMap(
            f"{name}-program",
            metadata={"name": config_map_name, "namespace": args.namespace, "labels": dict(PART_OF)},
            data={"gpu_check.py": CHECK_PROGRAM.read_text(encoding="utf-8")},
            opts=in_cluster)
        self.claim_templates = [
            k8s.resource.v1.ResourceClaimTemplate(  # type: ignore[call-overload]
                f"{name}-{pool.name}-claim", metadata=template["metadata"], spec=template["spec"], opts=in_cluster)
            for pool in args.pools if pool.dra is not None
            for template in [smoke_claim_template(pool, args.namespace)]]
        self.jobs = [
            # Plain dicts do not match the SDK's TypedDict overloads for mypy; the tests check these inputs.
            k8s.batch.v1.Job(  # type: ignore[call-overload]
                f"{name}-{pool.name}",
                metadata=self._job_metadata(pool, args.namespace),
                spec=smoke_job_spec(pool, args.settings.image, config_map_name),
                opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(
                    depends_on=[self.program, *self.claim_templates],
                    custom_timeouts=pulumi.CustomTimeouts(create=f"{PULUMI_TIMEOUT_SECONDS}s",
                                                          update=f"{PULUMI_TIMEOUT_SECONDS}s"))))
            for pool in args.pools
        ]
        self.register_outputs({"jobs": [job.metadata["name"] for job in self.jobs]})

    @staticmethod
    def _job_metadata(pool: Pool, namespace: str) -> dict[str, Any]:
        # A failed check is replaced by the next `pulumi up` instead of blocking it.
        return {"name": f"gpu-smoke-{pool.name}", "namespace": namespace,
                "annotations": {"pulumi.com/replaceUnready": "true",
                                "pulumi.com/timeoutSeconds": str(PULUMI_TIMEOUT_SECONDS)},
                "labels": dict(PART_OF)}
