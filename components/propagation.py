"""`RolePropagationWait`: a bounded wait after a new Azure role assignment, before anything uses it.

Azure RBAC for Kubernetes authorizes through a webhook that learns of new role assignments late:
"New role assignments can take up to five minutes to propagate and be updated by the authorization
server" (learn.microsoft.com/azure/aks/manage-azure-rbac). Without a wait, the first `pulumi up`
creates the cluster and the GPU pools, then fails with Forbidden on the namespace. This resource
sleeps for the configured time when it is created, and again only when the role assignment is
replaced; later runs do not wait. It is a dynamic resource (plain Python, run by the Pulumi engine),
so it needs no extra provider or package.
"""

from __future__ import annotations

import time
from typing import Any

import pulumi
import pulumi.dynamic


class _WaitProvider(pulumi.dynamic.ResourceProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        time.sleep(max(0.0, min(float(props["seconds"]), 1800.0)))
        return pulumi.dynamic.CreateResult(id_=f"waited-{props['roleAssignmentId']}", outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        replaced = olds.get("roleAssignmentId") != news.get("roleAssignmentId")
        return pulumi.dynamic.DiffResult(changes=replaced or olds.get("seconds") != news.get("seconds"),
                                         replaces=["roleAssignmentId"] if replaced else [])

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(outs=news)


class RolePropagationWait(pulumi.dynamic.Resource):
    def __init__(self, name: str, role_assignment_id: pulumi.Input[str], seconds: int,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(_WaitProvider(), name, {"roleAssignmentId": role_assignment_id, "seconds": seconds}, opts)
