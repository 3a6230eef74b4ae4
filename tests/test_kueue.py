"""Kueue as the rules read it (`policies/workloads/kueue.py`): a queued workload's pods are judged with
what the flavors that may admit them add, and a queue that never admits them is said, by object and key.
Kueue's own example setups come from kubernetes-sigs/kueue @ff69552 (`site/static/examples/`)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from gpu_aks_policies.limits import MAX_ADMISSIONS, MAX_LISTED
from gpu_aks_policies.rule_config import ANALYZABLE, QUEUE_ADMITS, SELECT_GPU_NODES, TOLERATE_GPU_TAINT
from gpu_aks_policies.rules import POD_RULES
from gpu_aks_policies.workloads import context_of, pod_specs_of
from gpu_aks_policies.workloads.kueue import queue_name

from tests.helpers import DEFAULTS, findings, verdicts

ACCEPTANCE = Path(__file__).parent / "manifests" / "acceptance29"
SAMPLES = Path(__file__).parents[1] / "policies" / "rule_samples"


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _setup(*flavors: dict[str, Any], covered: tuple[str, ...] = ("cpu", "memory", "nvidia.com/gpu"),
           **queue: Any) -> list[dict[str, Any]]:
    """A ClusterQueue over `flavors` (in order), its LocalQueue team-a in default, and the flavors."""
    quotas = [{"name": name, "nominalQuota": "1Ti" if name == "memory" else 100} for name in covered]
    cluster_queue = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "gpu"},
                     "spec": {"namespaceSelector": {}, **queue, "resourceGroups": [
                         {"coveredResources": list(covered),
                          "flavors": [{"name": f["metadata"]["name"], "resources": quotas} for f in flavors]}]}}
    local = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
             "metadata": {"name": "team-a", "namespace": "default"}, "spec": {"clusterQueue": "gpu"}}
    return [*flavors, cluster_queue, local]


def _flavor(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


SKU_GPU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _job(**pod: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never", **pod, "containers": [
                {"name": "train", "image": "i", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                              "limits": {"nvidia.com/gpu": 1}}}]}}}}


def _messages(obj: dict[str, Any], rule: str, together: list[dict[str, Any]]) -> list[str]:
    return [f.message for f in findings(obj, rule, DEFAULTS[rule], together) if f.decided]


def test_kueues_own_provisioning_job_with_its_setup_is_judged_by_the_flavor_it_gets():
    """16 + 30: the setup's `default-flavor` adds no toleration and no node label, so the Job is judged as
    written, and the finding says which flavor admitted it."""
    [job] = _load(ACCEPTANCE / "16-kueue-provisioning-job.yaml")
    setup = _load(ACCEPTANCE / "30-kueue-provisioning-setup.yaml")
    got = verdicts(job, together=[job, *setup])
    assert got[TOLERATE_GPU_TAINT] == ["spec.template.spec.tolerations"]
    assert got[SELECT_GPU_NODES] == ["spec.template.spec.nodeSelector"]
    assert got[QUEUE_ADMITS] == [] and got[ANALYZABLE] == []
    [message] = _messages(job, TOLERATE_GPU_TAINT, [job, *setup])
    assert "when queue 'user-queue' (ClusterQueue 'cluster-queue') admits it to flavor 'default-flavor'" in message
    assert "ResourceFlavor's spec.tolerations" in message


def test_a_tolerating_flavor_passes_and_the_control_fails_naming_it():
    job = _job()
    assert verdicts(job, together=[job, *_setup(_flavor("t4", tolerations=[SKU_GPU]))])[TOLERATE_GPU_TAINT] == []
    [message] = _messages(job, TOLERATE_GPU_TAINT, [job, *_setup(_flavor("t4"))])
    assert "flavor 't4'" in message


def test_every_flavor_the_queue_may_choose_is_judged_and_only_the_untolerating_one_named():
    """Which flavor Kueue picks depends on the quota in use: each one it may pick must work."""
    job = _job()
    together = [job, *_setup(_flavor("t4", tolerations=[SKU_GPU]), _flavor("a100"))]
    [message] = _messages(job, TOLERATE_GPU_TAINT, together)
    assert "flavor 'a100'" in message and "flavor 't4'" not in message
    assert len([pod for pod in pod_specs_of(job, context_of(together))]) == 2


def test_a_flavor_whose_node_taints_the_pod_does_not_tolerate_is_passed_over():
    """`checkFlavorForPodSets`: nodeTaints against the pod's tolerations plus the flavor's own."""
    job = _job()
    spot = _flavor("spot", nodeTaints=[{"key": "spot", "value": "true", "effect": "NoSchedule"}])
    pods = pod_specs_of(job, context_of([job, *_setup(spot, _flavor("t4", tolerations=[SKU_GPU]))]))
    assert [pod.queued.admitted for pod in pods if pod.queued] == [
        "when queue 'team-a' (ClusterQueue 'gpu') admits it to flavor 't4'"]
    alone = [job, *_setup(spot)]
    [message] = _messages(job, QUEUE_ADMITS, alone)
    assert "flavor 'spot': its nodeTaints hold spot=true:NoSchedule" in message
    self_tolerated = _flavor("spot", nodeTaints=spot["spec"]["nodeTaints"],
                             tolerations=[{"key": "spot", "operator": "Exists"}, SKU_GPU])
    assert _messages(job, QUEUE_ADMITS, [job, *_setup(self_tolerated)]) == []


def test_node_labels_are_matched_on_the_groups_label_keys_only():
    """`flavorSelector` keeps only the keys the group's flavors use: a nodeSelector on another key passes every
    flavor; one on a flavor key picks the flavor, and its label joins the pod's nodeSelector."""
    t4 = _flavor("t4", nodeLabels={"gpu-aks.io/pool": "gput4"}, tolerations=[SKU_GPU])
    a100 = _flavor("a100", nodeLabels={"gpu-aks.io/pool": "a100"}, tolerations=[SKU_GPU])
    picked = _job(nodeSelector={"gpu-aks.io/pool": "a100", "team": "x"})
    [pod] = pod_specs_of(picked, context_of([picked, *_setup(t4, a100)]))
    assert pod.spec["nodeSelector"] == {"gpu-aks.io/pool": "a100", "team": "x"}
    unrelated = _job(nodeSelector={"team": "x"})
    assert len(pod_specs_of(unrelated, context_of([unrelated, *_setup(t4, a100)]))) == 2


def test_what_makes_a_queue_never_admit_is_said_by_object_and_key():
    job = _job()
    t4 = _flavor("t4", tolerations=[SKU_GPU])
    cases = {
        "stopped": (_setup(t4, stopPolicy="Hold"), "ClusterQueue 'gpu' is stopped"),
        "no namespace selector": ([*_setup(t4)[:1], _without_selector(_setup(t4)[1]), _setup(t4)[2]],
                                  "has no namespaceSelector, which selects no namespace"),
        "gpu not covered": (_setup(t4, covered=("cpu", "memory")),
                            "it asks for nvidia.com/gpu, which no resource group of ClusterQueue 'gpu' covers"),
        "quota below one pod": (_quota(_setup(t4), "nvidia.com/gpu", 0),
                                "its nominalQuota of nvidia.com/gpu is less than one pod asks"),
    }
    for name, (setup, expected) in cases.items():
        messages = _messages(job, QUEUE_ADMITS, [job, *setup])
        assert len(messages) == 1 and expected in messages[0], name
        assert verdicts(job, together=[job, *setup])[TOLERATE_GPU_TAINT] == [], name


def _without_selector(cluster_queue: dict[str, Any]) -> dict[str, Any]:
    cluster_queue = copy.deepcopy(cluster_queue)
    del cluster_queue["spec"]["namespaceSelector"]
    return cluster_queue


def _quota(setup: list[dict[str, Any]], resource: str, amount: int) -> list[dict[str, Any]]:
    setup = copy.deepcopy(setup)
    for quota in setup[1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
        if quota["name"] == resource:
            quota["nominalQuota"] = amount
    return setup


def test_a_namespace_selector_is_read_against_the_namespaces_labels():
    job = _job()
    setup = _setup(_flavor("t4", tolerations=[SKU_GPU]))
    setup[1]["spec"]["namespaceSelector"] = {"matchLabels": {"team": "ml"}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"team": "web"}}}
    assert "namespaceSelector that does not select it" in _messages(job, QUEUE_ADMITS, [job, *setup, namespace])[0]
    namespace["metadata"]["labels"]["team"] = "ml"
    assert _messages(job, QUEUE_ADMITS, [job, *setup, namespace]) == []
    # Without the Namespace its labels are unknown: not a verdict. Its name label is always known.
    assert _messages(job, QUEUE_ADMITS, [job, *setup]) == []
    setup[1]["spec"]["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": "prod"}}
    assert "does not select it" in _messages(job, QUEUE_ADMITS, [job, *setup])[0]


def test_queue_objects_not_given_leave_the_pod_unjudged_with_an_advisory_naming_what_to_add():
    job = _job()
    for together, missing in (([job], "LocalQueue 'team-a' (in namespace 'default')"),
                              ([job, _setup(_flavor("t4"))[2]], "ClusterQueue 'gpu'"),
                              ([job, *_setup(_flavor("t4"))[1:]], "ResourceFlavor 't4'")):
        got = verdicts(job, together=together)
        assert got[TOLERATE_GPU_TAINT] == got[SELECT_GPU_NODES] == got[QUEUE_ADMITS] == []
        [advisory] = _messages(job, ANALYZABLE, together)
        assert missing in advisory and "not judged" in advisory


def test_the_queue_is_read_where_kueue_reads_it():
    job = _job()
    assert queue_name(job) == ("team-a", "metadata.labels")
    old = copy.deepcopy(job)
    old["metadata"]["annotations"] = old["metadata"].pop("labels")
    assert queue_name(old) == ("team-a", "metadata.annotations")
    [pod] = pod_specs_of(old, context_of([old]))
    assert any("v0.15 and later read the label alone" in note for note in pod.notes)
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "nightly"}},
                                     "spec": job["spec"]}}}
    assert queue_name(cron) == ("nightly", "spec.jobTemplate.metadata.labels")


def test_hostile_queues_stay_bounded():
    """Many flavors in many groups, and a Cohort chain thousands long: bounded work, bounded forms."""
    flavors = [_flavor(f"f{i}", tolerations=[SKU_GPU]) for i in range(40)]
    setup = _setup(*flavors, covered=("nvidia.com/gpu",))
    group = setup[40]["spec"]["resourceGroups"][0]
    setup[40]["spec"]["resourceGroups"] = [group, {**group, "coveredResources": ["cpu", "memory"]}]
    job = _job()
    assert len(pod_specs_of(job, context_of([job, *setup]))) == MAX_ADMISSIONS
    chain = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": f"c{i}"},
              "spec": {"parentName": f"c{i + 1}"}} for i in range(6400)]
    setup = _setup(_flavor("t4", tolerations=[SKU_GPU]), cohortName="c0")
    assert _messages(job, QUEUE_ADMITS, [job, *setup, *chain]) == []


def _cohorts(parents: dict[str, str]) -> list[dict[str, Any]]:
    return [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name},
             "spec": {"parentName": parent}} for name, parent in parents.items()]


def test_a_cohort_cycle_of_any_length_is_a_cycle():
    """Kueue walks a Cohort's parents with a seen set and no bound (v0.17.0 `pkg/cache/hierarchy/cycle.go:35-43`):
    a cycle of 65 or 1000 Cohorts, and a 100-long chain into a Cohort that is its own parent, leave the
    ClusterQueue out of what it admits from; the message names the first Cohorts and counts the rest."""
    job = _job()
    setup = _setup(_flavor("t4", tolerations=[SKU_GPU]), cohortName="c0")
    for parents, more in (({f"c{i}": f"c{(i + 1) % 65}" for i in range(65)}, 66 - MAX_LISTED),
                          ({f"c{i}": f"c{(i + 1) % 1000}" for i in range(1000)}, 1001 - MAX_LISTED),
                          ({**{f"c{i}": f"c{i + 1}" for i in range(100)}, "c100": "c100"}, 2 - MAX_LISTED)):
        [message] = _messages(job, QUEUE_ADMITS, [job, *setup, *_cohorts(parents)])
        assert "whose parentName chain is a cycle (" in message and len(message) < 2000
        assert (f"and {more} more)" in message) if more > 0 else "(c100 -> c100)" in message


def test_kueue_names_in_messages_are_cut_and_on_one_line():
    """Names are input: a 100k-character flavor, ClusterQueue or LocalQueue name, or a queue label that forges a
    line (a workflow command), is quoted cut and escaped in every finding, as `pool_named` quotes any name."""
    forged = "\n::error file=x::pwn" + "q" * 100_000
    long = "n" * 100_000
    job = _job()
    job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = forged
    setup = _setup(_flavor(long), _flavor("x" + long, nodeTaints=[SKU_GPU]))
    setup[2]["metadata"]["name"] = setup[3]["spec"]["clusterQueue"] = "c" + long
    setup[3]["metadata"]["name"] = forged
    for together in ([job, *setup], [job, *setup[1:]], [job, *setup[2:]], [job, *setup[3:]], [job]):
        messages = [f.message for rule in POD_RULES for f in findings(job, rule, DEFAULTS[rule], together)]
        assert messages and all(len(m) < 3000 and "\n::error" not in m for m in messages), together[1:]


def test_a_flavor_taint_in_a_message_is_cut_and_on_one_line():
    """A flavor's taint is input too: a 100k-character key or value, or one that forges a line, is quoted cut
    and escaped where the message says which taint the pod does not tolerate (`scheduling.shown_taint`)."""
    forged = "\n::error file=x::pwn" + "v" * 100_000
    for taint in ({"key": "k" * 100_000, "value": "x", "effect": "NoSchedule"},
                  {"key": "sku", "value": forged, "effect": "NoSchedule"},
                  {"key": forged, "effect": "NoExecute"}):
        job = _job()
        [message] = _messages(job, QUEUE_ADMITS, [job, *_setup(_flavor("t4", nodeTaints=[taint]))])
        assert "its nodeTaints hold " in message and len(message) < 3000 and "\n::error" not in message


def test_many_flavors_passed_over_or_missing_are_counted():
    """5000 flavors the pod cannot take, or 5000 the ClusterQueue names that do not exist: the first
    MAX_LISTED are named, the rest counted, as other messages list tolerations."""
    job = _job()
    tainted = [_flavor(f"f{i}", nodeTaints=[SKU_GPU]) for i in range(5000)]
    [message] = _messages(job, QUEUE_ADMITS, [job, *_setup(*tainted)])
    assert f"; and {5000 - MAX_LISTED} more" in message and len(message) < 3000
    setup = _setup(*tainted)
    [message] = _messages(job, QUEUE_ADMITS, [job, _flavor("t4"), *setup[5000:]])
    assert f", and {5000 - MAX_LISTED} more, which do not exist" in message and len(message) < 3000


def test_the_rule_samples_read_as_their_files_say():
    """The samples' own headers say why (`policies/rule_samples/queued-gpu-pods-are-admitted/`)."""
    messages = {}
    for name in ("flavor-missing.yaml", "cohort-cycle.yaml", "gpu-not-covered.yaml"):
        objects = _load(SAMPLES / QUEUE_ADMITS / name)
        job = next(obj for obj in objects if obj["kind"] == "Job")
        [messages[name]] = _messages(job, QUEUE_ADMITS, objects)
    assert "names ResourceFlavor 't4-spot', which does not exist (the ResourceFlavors are 't4')" in \
        messages["flavor-missing.yaml"]
    assert "(research -> org -> research)" in messages["cohort-cycle.yaml"]
    assert "nvidia.com/gpu, which no resource group of ClusterQueue 'cluster-queue' covers" in \
        messages["gpu-not-covered.yaml"]
