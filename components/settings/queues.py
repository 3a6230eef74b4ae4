"""`gpu-aks:queues`: Kueue on the platform, optional. Kueue (kubernetes-sigs/kueue) is installed from its own
Helm chart at a pinned version, and gpu-aks creates what Kueue admits jobs with:

- one ResourceFlavor per GPU pool, named after the pool: its `nodeLabels` select exactly that pool's nodes
  (`gpu-aks.io/pool: <pool>`) and its `tolerations` are the pool's taints', so Kueue writes both into every pod
  it admits to the flavor (kubernetes-sigs/kueue v0.17.0 `pkg/podset/podset.go`) and jobs need neither;
- one ClusterQueue per team, with the team's GPU quota on each pool it names, and on those flavors a CPU and
  memory quota of what the pool's nodes give pods at its largest: Kueue admits nothing that asks for a
  resource its ClusterQueue does not cover (`flavorassigner.go`, "resource unavailable in ClusterQueue");
- one LocalQueue per team and namespace, named after the team.

The team namespaces are created by the platform (labelled as gpu-aks's). The contract does not list the queue
objects: the checker and the explainer judge a queued job by its queue's flavors when the queue objects are checked
with it (`kubectl get resourceflavors,clusterqueues,localqueues -A -o yaml` beside the job's files); without them
the job's pods are left unjudged, with an advisory naming what to add.

AKS also offers Kueue as a managed extension; it is in preview and has no API version the azure-native provider
pinned here (3.29.0) can call, so gpu-aks installs Kueue's own chart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpu_aks_policies.declarations import (
    Check,
    Key,
    ListOf,
    Reader,
    Section,
    boolean,
    describe,
    is_whole_number,
    string_list_problem,
)

from components.settings.common import dns_label_problem, document_gpu_pools, not_a_gpu_pool

#: Kueue's chart (`charts/kueue` of the module; published to `oci://registry.k8s.io/kueue/charts/kueue`), at the
#: release whose code the rules follow.
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_VERSION = "0.17.0"
KUEUE_NAMESPACE = "kueue-system"
_SOURCE = "kubernetes-sigs/kueue v0.17.0 apis/kueue/v1beta2"


@dataclass(frozen=True)
class TeamQueue:
    name: str
    namespaces: tuple[str, ...]
    #: GPUs the team may use at once, per GPU pool (the flavor's nominal quota of the pool's GPU resource).
    gpus: Mapping[str, int]


@dataclass(frozen=True)
class QueuesSettings:
    enabled: bool = False
    teams: tuple[TeamQueue, ...] = ()


def _dns_labels(value: Any) -> str | None:
    if string_list_problem(value):
        return "must be a list of namespace names"
    bad = [name for name in value if dns_label_problem(name)]
    return f"holds {describe(bad[0])}, which is not a namespace name (a DNS label)" if bad else None


def _gpu_quota(reader: Reader, value: Any) -> dict[str, Any]:
    """The quota as written, its whole counts as ints; which pools it may name is judged after the document
    (`_quota_names_gpu_pools`)."""
    if not isinstance(value, Mapping) or not value:
        reader.problem("gpus", f"{reader.shown(value)} is not a map of GPU pool name to GPUs, e.g. {{gput4: 4}}")
        return {}
    return {str(pool): int(count) if is_whole_number(count) and count >= 0 else count for pool, count in value.items()}


def _quota_names_gpu_pools(reader: Reader) -> None:
    gpu_models, unread = document_gpu_pools(reader)
    for pool, count in reader.raw["gpus"].items():
        if pool in unread:
            continue
        if pool not in gpu_models:
            reader.problem(f"gpus.{pool}", not_a_gpu_pool(pool, gpu_models))
        elif not is_whole_number(count) or count < 0:
            reader.problem(f"gpus.{pool}", f"{reader.shown(count)} is not a whole number of GPUs")
        elif not any(offer.allocatable for offer in gpu_models[pool].gpu_offers):
            # The flavor's CPU and memory quota is what the pool's nodes give pods (components/queues.py): with no
            # size whose vCPUs and memory are known, it would be 0, and Kueue admits no job asking for either.
            sizes = ", ".join(offer.vm_size for offer in gpu_models[pool].gpu_offers)
            reader.problem(f"gpus.{pool}", f"{describe(pool)} runs {sizes}, whose vCPUs and memory gpu-aks does not "
                           "know (policies/node_capacity.py), so its ClusterQueue could give jobs no CPU or memory "
                           "quota; queue a pool of a listed size")


def _team(reader: Reader) -> TeamQueue:
    return TeamQueue(reader.get("name"), tuple(reader.get("namespaces")), reader.get("gpus"))


TEAM = Section("teams[]", "One team: its ClusterQueue, its GPU quota per pool, and a LocalQueue in each namespace.", (
    Key("name", "The team, named as its ClusterQueue and LocalQueues are (a DNS label).", "string", None, required=True,
        check=lambda value: "is not a DNS label" if dns_label_problem(value) else None),
    Key("namespaces", "The namespaces whose jobs the team's queue admits.", "list of strings", None, required=True,
        check=_dns_labels),
    Key("gpus", "GPUs per GPU pool the team may use at once, e.g. {gput4: 4}.", "map of integers", None, parse=_gpu_quota,
        required=True),
    Check(_quota_names_gpu_pools, reads=("gpus",), after_document=True,
          doc="`gpus` names GPU pools, each with a whole number of GPUs and of a size whose vCPUs and memory gpu-aks "
              "knows (its ClusterQueue's CPU and memory quota)."),
), build=_team)


#: Namespaces Kubernetes makes itself (k8s.io/kubernetes v1.37.2 pkg/apis/core/types.go NamespaceDefault,
#: NamespaceSystem, NamespacePublic, NamespaceNodeLease): the platform would try to create them.
KUBERNETES_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _own_namespaces(reader: Reader) -> dict[str, str]:
    """The namespaces gpu-aks creates for its own components, each with the key that names it."""
    owned = {KUEUE_NAMESPACE: "Kueue's own namespace"}
    for key in ("devicePlugin.namespace", "dra.namespace"):
        if reader.root.ok(key):
            owned.setdefault(reader.root.get(key), key)
    return owned


def _namespaces_are_the_teams(reader: Reader) -> None:
    """A team's namespaces are created by the platform for the team: not Kubernetes' own, which exist already,
    nor a namespace another gpu-aks component creates (two Namespace resources of one name)."""
    if not reader.get("enabled"):
        return
    owned = _own_namespaces(reader)
    for index, team in enumerate(reader.get("teams")):
        names = team.get("namespaces") if isinstance(team, Mapping) else None
        for position, name in enumerate(names if isinstance(names, list) else []):
            where = f"teams[{index}].namespaces[{position}]"
            if name in KUBERNETES_NAMESPACES:
                reader.problem(where, f"{describe(name)} is a namespace Kubernetes makes itself; a team's queue goes in "
                                      "a namespace the platform creates for it")
            elif name in owned:
                reader.problem(where, f"{describe(name)} is gpu-aks's own namespace ({owned[name]}); give the team a "
                                      "namespace of its own")


def _unique_teams(reader: Reader) -> None:
    seen: dict[str, int] = {}
    for index, team in enumerate(reader.get("teams")):
        if team["name"] in seen:
            reader.problem(f"teams[{index}].name", f"{describe(team['name'])} is already teams[{seen[team['name']]}]; "
                                                   "a team is one ClusterQueue")
        seen.setdefault(team["name"], index)


def _queues(reader: Reader) -> QueuesSettings:
    return QueuesSettings(reader.get("enabled"), tuple(child.build() for child in reader.lists.get("teams", [])))


QUEUES = Section(
    "queues", f"Kueue {KUEUE_VERSION} from its own chart, a ResourceFlavor per GPU pool and a ClusterQueue per team "
    "(docs/gpu-capacity.md, \"Queues\").", (
        boolean("enabled", "Install Kueue and the queues.", False, attr="enabled"),
        ListOf("teams", "The teams and their GPU quota.", TEAM, noun="teams"),
        Check(_unique_teams, reads=("teams",), doc="Team names are unique."),
        # After the document: it reads devicePlugin.namespace and dra.namespace, which a check after the document
        # may refuse (`dra._namespace_is_its_own`).
        Check(_namespaces_are_the_teams, reads=("enabled", "teams"), after_document=True,
              doc="A team's namespaces are neither Kubernetes' own nor a namespace another gpu-aks component creates."),
    ), build=_queues, listed=("enabled", "teams"))
