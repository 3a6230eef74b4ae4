"""`GpuAdmissionPolicy`: the toleration rule enforced by the API server itself, on every pod whatever
created it (`admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy and its binding, GA since
Kubernetes 1.30). The CEL is generated from the same configuration as the pack's toleration rule
(`policies/admission_policy.py`): the GPU resources, and the GPU taints the platform's pools carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import pulumi
import pulumi_kubernetes as k8s
from gpu_aks_policies.admission_policy import validating_admission_policy, validating_admission_policy_binding
from gpu_aks_policies.fit import gpu_pool_taints
from gpu_aks_policies.pools.model import Pool
from gpu_aks_policies.rule_config import TOLERATE_GPU_TAINT, RuleConfig
from gpu_aks_policies.rules import default_rule_config

from components.settings import AdmissionPolicySettings


def platform_rule_config(pools: Sequence[Pool]) -> RuleConfig:
    """The toleration rule's config with the NoSchedule taints the GPU pools carry (not Spot's)."""
    taints = gpu_pool_taints(text for pool in pools for text in pool.taints)
    config = default_rule_config()[TOLERATE_GPU_TAINT]
    return replace(config, gpu_taints=taints) if taints else config


@dataclass(frozen=True)
class GpuAdmissionPolicyArgs:
    settings: AdmissionPolicySettings
    pools: Sequence[Pool]
    provider: k8s.Provider
    after: Sequence[pulumi.Resource] = ()


class GpuAdmissionPolicy(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuAdmissionPolicyArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-aks:index:GpuAdmissionPolicy", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=list(args.after))
        policy = validating_admission_policy(platform_rule_config(args.pools))
        binding = validating_admission_policy_binding(args.settings.validation_actions, args.settings.exempt_namespaces)
        self.policy = k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
            f"{name}-policy", metadata=policy["metadata"], spec=policy["spec"], opts=in_cluster)
        self.binding = k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            f"{name}-binding", metadata=binding["metadata"], spec=binding["spec"],
            opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[self.policy])))
        self.register_outputs({"policy": self.policy.metadata["name"]})
