"""What this stack recorded on its last update, for checks that compare a run with the one before.

Pulumi has no "previous inputs" API for a program, but a stack may read its own outputs through a
`StackReference` to itself: they are the outputs of its last completed update, so they are
"before this run", and the read works in `pulumi preview` too (a stack never deployed has none,
and every read gives None). gpu-aks records three things this way: the deployer's object ID
(`ClusterAccess` warns when the cluster-admin grant would move to another principal), the
cluster's network (`AksCluster` refuses, at preview, network changes AKS refuses in place) and what
a change would replace (`clusterIdentity`, components/replacements.py: a new cluster or resource
group is refused, a GPU pool replaced or removed and `protect` turned off are warned).
The alternatives were weaker: the RoleAssignment's own diff shows both principal IDs but raises no
warning, and a dynamic provider's diff cannot log to the engine.
"""

from __future__ import annotations

from typing import Any

import pulumi


class PreviousRun:
    def __init__(self) -> None:
        # The DIY backend's organization is "organization"; older engines report none.
        own = f"{pulumi.get_organization() or 'organization'}/{pulumi.get_project()}/{pulumi.get_stack()}"
        self._reference = pulumi.StackReference(f"{pulumi.get_stack()}-previous-run", stack_name=own)

    def output(self, name: str) -> pulumi.Output[Any]:
        """The value `name` had after the last update, or None."""
        return self._reference.get_output(name)
