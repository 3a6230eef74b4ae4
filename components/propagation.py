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
        # Azure never assigns the all-zero subscription; the engine tier's stand-in for Azure issues every ID
        # under it (testbed/standins/azure_native.py, docs/azure-only.md). Nothing propagates there.
        if not all(assignment.startswith("/subscriptions/00000000-0000-0000-0000-000000000000/")
                   for assignment in str(props["roleAssignmentId"]).split(",")):
            time.sleep(max(0.0, min(float(props["seconds"]), 1800.0)))
        return pulumi.dynamic.CreateResult(id_=f"waited-{props['roleAssignmentId']}", outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        replaced = olds.get("roleAssignmentId") != news.get("roleAssignmentId")
        return pulumi.dynamic.DiffResult(changes=replaced or olds.get("seconds") != news.get("seconds"),
                                         replaces=["roleAssignmentId"] if replaced else [])

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(outs=news)


def _pickled_by_value(cls: type) -> type:
    """`cls` and its methods, marked to be serialized by value.

    Pulumi stores a dynamic resource's provider as `dill.dumps(provider, recurse=True)` (pulumi
    `sdk/python/lib/pulumi/dynamic/dynamic.py`, `serialize_provider`), and the engine runs it in a separate
    process, `pulumi-resource-pulumi-python`, started in the *program's* folder. dill pickles a class or
    function of an importable module by reference, so that process must import `components.propagation`:
    it can from this repository's root, but not from a YAML or TypeScript program using the component
    package, where the real engine failed with `No module named 'components'` (tests/engine). dill pickles
    what belongs to `__main__` by value, with the globals it uses (`time`, `pulumi`)."""
    for member in vars(cls).values():
        if callable(member) and hasattr(member, "__module__"):
            member.__module__ = "__main__"
    cls.__module__ = "__main__"
    return cls


_pickled_by_value(_WaitProvider)


class RolePropagationWait(pulumi.dynamic.Resource):
    def __init__(self, name: str, role_assignment_id: pulumi.Input[str], seconds: int,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(_WaitProvider(), name, {"roleAssignmentId": role_assignment_id, "seconds": seconds}, opts)
