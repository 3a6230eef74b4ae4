"""What this run would replace or delete, against the record of the last update (`clusterIdentity`).

Pulumi replaces a resource (creates the new one, deletes the old, or the other way round) when an
input the provider marks "replace on changes" changes; for the resources gpu-aks cares most about a
replacement is a new cluster or a GPU pool that loses its nodes. Each run records the identity of the
cluster and of every GPU pool as the stack output `clusterIdentity` (`identity_record`); the next run
reads it back (components/previous_run.py) and `identity_changes` says what would go:

- **Refused** (a `pulumi.RunError` at preview, before any step): a change that replaces the cluster or
  its resource group. pulumi-azure-native replaces a `ManagedCluster` on a new `resourceName`,
  `resourceGroupName`, `location` or `dnsPrefix`, and a `ResourceGroup` on a new name or `location`
  (resource names and the resource group are path parameters of the resource's ID; `location` and
  `dnsPrefix` are in the provider's `forceNewMap`: pulumi/pulumi-azure-native
  `provider/pkg/gen/replacement.go` at 1b7112af33c62b247daed1028686bf279f4d5e69, and the generated
  schema marks each `willReplaceOnChanges`: `provider/pkg/gen/__snapshots__/gen_managedcluster_test.snap`
  at 080cda17eb4b5115258d794289841cd79404b64d). Deleting the old resource group deletes everything in
  it, the cluster included. With `cluster.protect` Pulumi stops such a plan itself, but only at the
  replace step and without saying which key moved; without it the plan goes ahead.
- **Refused**: replacing a GPU pool that deletes the old pool first (`keepAzureName: true`: the two
  would share an Azure name) while `cluster.protect` is on: the pool has no GPU nodes in between.
- **Warned** (`pulumi.log.warn`): a GPU pool that this run replaces (a create-only property changed:
  `vmSize` and `gpuInstanceProfile` force it in the provider's `forceNewMap` for `AgentPool`, the rest
  through gpu-aks's `replace_on_changes`, components/node_pools.py) or deletes (gone from the config,
  or moved to another kind), and `cluster.protect` going from true to false.

A stack with no record (its first deploy, or one last updated by a gpu-aks without it) and a record
with fields missing or of the wrong type pass silently; values are quoted in bounded, escaped form
and masked as `[secret]` when the record is or was secret (Pulumi's marking, or its own `secret` field,
which survives `pulumi stack output --json --show-secrets`) or the config section is secret now. Pure: no Pulumi imports.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from gpu_aks_policies.limits import MAX_RECORDED_POOLS, MAX_RECORDED_PROPERTIES
from gpu_aks_policies.pools.model import BACKEND_NAMES

from components.aks_api import dns_prefix_for
from components.pools import PlatformPools
from components.settings import PROJECT
from components.settings.cluster import ClusterSettings
from components.settings.common import RECORD_SECRET, shown
from components.settings.node_baseline import NODE_BASELINE_KEYS

#: The inputs on which pulumi-azure-native replaces each resource (the `willReplaceOnChanges` of its
#: schema: the path parameters of the resource's ID, and the provider's `forceNewMap` in
#: `provider/pkg/gen/replacement.go`; commits in the module docstring). tests/test_replacements.py
#: holds that every one of them gpu-aks sends is recorded, here or in `clusterNetwork`.
MANAGED_CLUSTER_REPLACED_ON = ("resourceName", "resourceGroupName", "location", "dnsPrefix", "diskEncryptionSetID",
                               "fqdnSubdomain", "linuxProfile", "networkProfile", "nodeResourceGroup", "windowsProfile")
RESOURCE_GROUP_REPLACED_ON = ("resourceGroupName", "location")
AGENT_POOL_REPLACED_ON = ("agentPoolName", "resourceGroupName", "resourceName", "vmSize", "gpuInstanceProfile",
                          "nodePublicIPTags")

#: The stack output holding the record, read back on the next run (components/previous_run.py).
IDENTITY_OUTPUT = "clusterIdentity"
#: The record's shape; a later shape adds fields, and every reader skips what it does not find.
RECORD_VERSION = 1
#: How a recorded pool names its config key (`gpuPools[gput4]`); anything else is quoted instead.
_POOL_KEY = re.compile(r"[A-Za-z]{1,32}\[[a-z][a-z0-9]{0,11}\]")


def identity_record(cluster: ClusterSettings, pools: PlatformPools, secret: bool = False) -> dict[str, Any]:
    """What this run records for the next one: the cluster's create-only identity, `protect`, and each
    GPU pool's kind, Azure name and create-only properties; `secret`: whether it is exported secret
    (`RECORD_SECRET`)."""
    return {
        "version": RECORD_VERSION,
        RECORD_SECRET: secret,
        "cluster": {"resourceName": cluster.name, "resourceGroupName": cluster.resource_group_name,
                    "location": cluster.location, "dnsPrefix": dns_prefix_for(cluster.name)},
        "protect": cluster.protect,
        "gpuPools": {pool.name: {"key": pool.key, "kind": pool.backend, "azureName": pool.azure_name,
                                 "deletesBeforeReplace": pool.deletes_before_replace,
                                 "createOnly": dict(pool.create_only)} for pool in pools.gpu},
    }


@dataclass(frozen=True)
class IdentityChanges:
    #: Changes refused at preview: each names the key, the recorded and the new value, and the way out.
    refused: tuple[str, ...] = ()
    #: Changes the preview announces.
    warnings: tuple[str, ...] = ()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _same_location(old: str, new: str) -> bool:
    """Azure compares regions without case or spaces (`East US 2` is `eastus2`)."""
    return old.replace(" ", "").lower() == new.replace(" ", "").lower()


#: The way out of a cluster replacement that is meant.
_MOVE_OUT = ("To move to a new cluster, deploy it as a new stack and move the workloads; to replace this one on "
             "purpose, run `pulumi destroy` on this stack first")
#: The cluster's create-only identity: the record's key, the config key that sets it, and what a new
#: value replaces with the way out.
_CLUSTER_IDENTITY = (
    ("resourceName", f"{PROJECT}:cluster.name",
     "a new name is a new cluster: Pulumi creates it and deletes the old one with everything running on it. "
     "Put {old} back. " + _MOVE_OUT),
    ("resourceGroupName", f"{PROJECT}:cluster.resourceGroupName",
     "a new resource group is a new group and a new cluster: Pulumi deletes the old group, and with it the "
     "cluster and everything in it. Put {old} back. " + _MOVE_OUT),
    ("location", "azure-native:location",
     "a new region replaces the resource group and the cluster (both are created in the new region and the "
     "old ones deleted). Put {old} back. " + _MOVE_OUT),
    ("dnsPrefix", f"{PROJECT}:cluster.name",
     "this version of gpu-aks derives another DNS prefix from the same cluster name, and the prefix is fixed "
     "when the cluster is created: Pulumi would replace the cluster. Stay on the gpu-aks version that deployed "
     "it and report this as a gpu-aks bug"),
)


def _cluster_problems(previous: Mapping[str, Any], current: Mapping[str, Any], masked: bool) -> list[str]:
    problems = []
    for key, config_key, why in _CLUSTER_IDENTITY:
        old, new = previous.get(key), current.get(key)
        if not isinstance(old, str) or not isinstance(new, str) or old == new:
            continue
        if key == "location" and _same_location(old, new):
            continue
        if key == "dnsPrefix" and previous.get("resourceName") != current.get("resourceName"):
            continue  # the name's own problem says it
        what = "the cluster's DNS prefix" if key == "dnsPrefix" else "the cluster"
        problems.append(f"{config_key}: {what} has {shown(old, masked)} (its last update), this run says "
                        f"{shown(new, masked)}; " + why.format(old=shown(old, masked)))
    return problems


def _pool_changes(name: str, old: Mapping[str, Any], new: Mapping[str, Any] | None, protect: bool,
                  masked: bool) -> tuple[list[str], list[str]]:
    """(refused, warnings) for one GPU pool the last update recorded."""
    key = new.get("key") if new else old.get("key")
    where = f"{PROJECT}:{key}" if isinstance(key, str) and _POOL_KEY.fullmatch(key) else f"the GPU pool {shown(name)}"
    old_azure = old.get("azureName")
    old_name = (f"AgentPool {shown(old_azure, masked)}" if isinstance(old_azure, str) else
                "its NodePool" if old.get("kind") == "nodePool" else "the pool")
    if new is None:
        return [], [f"{where}: no longer a GPU pool of this stack: this run deletes {old_name} and its GPU "
                    "nodes (pods on them are evicted). If that is not meant, put the pool back"]
    old_kind, new_kind = old.get("kind"), new.get("kind")
    if isinstance(old_kind, str) and old_kind != new_kind:
        return [], [f"{where}: the GPU pool moves from {BACKEND_NAMES.get(old_kind, shown(old_kind))} to "
                    f"{BACKEND_NAMES.get(str(new_kind), shown(new_kind))}: this run deletes {old_name} and creates "
                    "the new one; pods move once it has nodes"]
    old_props, new_props = old.get("createOnly"), _mapping(new.get("createOnly"))
    changed = []
    if isinstance(old_props, Mapping) and len(old_props) <= MAX_RECORDED_PROPERTIES:
        for prop in sorted(set(old_props) | set(new_props), key=str):
            # The node baseline's keys are recorded only when set (absent: AKS's default, so a new one
            # is a change); any other key missing from the record was not recorded: unknown, skipped.
            if prop not in old_props and prop not in NODE_BASELINE_KEYS:
                continue
            if old_props.get(prop) != new_props.get(prop):
                named = prop if isinstance(prop, str) and prop.isalnum() and len(prop) <= 40 else shown(prop)
                changed.append(f"{named} "
                               f"{shown(old_props.get(prop), masked)} -> {shown(new_props.get(prop), masked)}")
    new_azure = new.get("azureName")
    if isinstance(old_azure, str) and isinstance(new_azure, str) and old_azure != new_azure and not changed:
        changed.append(f"Azure name {shown(old_azure, masked)} -> {shown(new_azure, masked)}")
    if not changed:
        return [], []
    what = "; ".join(changed)
    if new.get("deletesBeforeReplace") is True:
        how = (f"Pulumi deletes {old_name} first and then creates it again (keepAzureName: the two would share "
               "a name), so the pool has no GPU nodes in between")
        if protect:
            return [f"{where}: this run replaces the GPU pool ({what}); {how}, and cluster.protect is on. Put the "
                    "old values back; or set keepAzureName: false (a new Azure name: the new pool is created "
                    "first); or turn gpu-aks:cluster.protect off for this update"], []
    else:
        how = (f"Pulumi creates {shown(new_azure, masked)} first, then deletes {old_name}: its nodes are drained "
               "and GPU pods move to the new pool")
    return [], [f"{where}: this run replaces the GPU pool ({what}); {how}"]


def identity_changes(previous: Any, current: Mapping[str, Any], masked: bool = False) -> IdentityChanges:
    """What moving from `previous` (the last update's `clusterIdentity`; None or anything else before
    the first deploy) to `current` (`identity_record` of this run) would replace or delete. Never
    raises, whatever `previous` holds."""
    if not isinstance(previous, Mapping):
        return IdentityChanges()
    refused = _cluster_problems(_mapping(previous.get("cluster")), _mapping(current.get("cluster")), masked)
    warnings = []
    protect = current.get("protect") is True
    if previous.get("protect") is True and current.get("protect") is False:
        warnings.append(f"{PROJECT}:cluster.protect: true (the last update) -> false: this update takes Pulumi's "
                        "protection off the cluster and its resource group, so a later `pulumi destroy` or a change "
                        "that replaces them goes ahead without stopping")
    old_pools, new_pools = _mapping(previous.get("gpuPools")), _mapping(current.get("gpuPools"))
    for name, old in islice(old_pools.items(), MAX_RECORDED_POOLS):
        if not isinstance(old, Mapping):
            continue
        new = new_pools.get(name)
        pool_refused, pool_warnings = _pool_changes(name, old, _mapping(new) if new is not None else None,
                                                    protect, masked)
        refused += pool_refused
        warnings += pool_warnings
    return IdentityChanges(tuple(refused), tuple(warnings))
