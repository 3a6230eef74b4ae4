"""Workload adapters: what each controller's objects become, from each project's own samples (the
fixtures in tests/manifests/workloads/ cite them), in both verdict directions. Documents of a file are
checked together, as the checker reads files it is given together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from gpu_aks_policies.podspecs import UNKNOWN
from gpu_aks_policies.rule_config import ANALYZABLE, SELECT_GPU_NODES, TOLERATE_GPU_TAINT, WHOLE_GPU_LIMITS
from gpu_aks_policies.workloads import ADAPTERS, context_of, load_all, pod_specs_of
from gpu_aks_policies.workloads.kserve import ray_gpus
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import DEFAULTS, findings

WORKLOADS = Path(__file__).parent / "manifests" / "workloads"
load_all()  # the property tests below draw from every registered kind
T, L, S, A = TOLERATE_GPU_TAINT, WHOLE_GPU_LIMITS, SELECT_GPU_NODES, ANALYZABLE


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((WORKLOADS / name).read_text()) if d]


# (file, document, policy) -> the paths of its findings.
EXPECTED = [
    ("kserve-tensorflow-gpu.yaml", 0, T, ["spec.predictor.tolerations"]),
    ("kserve-tensorflow-gpu.yaml", 0, S, ["spec.predictor.nodeSelector"]),
    ("kserve-tensorflow-gpu.yaml", 1, T, []),
    ("kserve-tensorflow-gpu.yaml", 1, S, []),
    # The controller writes the multi-node GPU limits: requests alone are not a violation there.
    ("kserve-multinode.yaml", 0, T, []),
    ("kserve-multinode.yaml", 0, L, []),
    ("kserve-multinode.yaml", 1, T, ["spec.predictor.workerSpec.tolerations"]),
    ("kserve-multinode.yaml", 1, L, []),
    ("kserve-llmisvc.yaml", 0, T, ["spec.template.tolerations"]),
    ("kserve-llmisvc.yaml", 1, T, []),
    ("kserve-llmisvc.yaml", 2, T, ["spec.tolerations"]),
    # A template's own tolerations replace the workflow's (Argo addSchedulingConstraints).
    ("argo-gpu-workflow.yaml", 0, T, ["spec.templates[2].tolerations"]),
    ("argo-gpu-workflow.yaml", 0, L, ["spec.templates[3].containerSet.containers[0].resources.limits.nvidia.com/gpu"]),
    ("argo-gpu-workflow.yaml", 1, A, ["spec.templates[0]"]),
    ("argo-gpu-workflow.yaml", 1, T, []),
    ("spark-pi-gpu.yaml", 0, T, ["spec.executor.tolerations"]),
    ("spark-pi-gpu.yaml", 1, T, []),
    ("spark-pi-gpu.yaml", 1, S, []),
    ("spark-pi-gpu.yaml", 2, L, ["spec.template.executor.gpu.quantity"]),
    ("spark-pi-gpu.yaml", 2, T, []),
    ("trainer-runtime-patches.yaml", 0, T, ["spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
                                            ".template.spec.template.spec.tolerations"]),
    ("trainer-runtime-patches.yaml", 1, T, []),
    ("trainer-runtime-patches.yaml", 2, T, []),
    ("dynamo-agg.yaml", 0, T, ["spec.services.worker.extraPodSpec.tolerations"]),
    ("dynamo-agg.yaml", 0, L, []),
    ("dynamo-agg.yaml", 1, T, ["spec.components[1].podTemplate.spec.tolerations"]),
    ("dynamo-agg.yaml", 2, T, []),
    ("dynamo-agg.yaml", 2, L, ["spec.services.worker.resources.requests.gpu"]),
    ("kaito-workspace.yaml", 0, T, []),
    ("kaito-workspace.yaml", 0, L, []),
    ("kaito-workspace.yaml", 0, S, []),
    ("kaito-workspace.yaml", 1, T, []),
    ("kaito-workspace.yaml", 2, T, []),
    ("dra-gpu-test1.yaml", 1, T, ["spec.tolerations"]),
    ("dra-gpu-test1.yaml", 1, L, []),
    ("dra-gpu-test1.yaml", 2, T, []),
    ("dra-gpu-test1.yaml", 3, T, []),
    ("dra-gpu-test1.yaml", 3, A, ["spec.resourceClaims"]),
    ("dra-gpu-test1.yaml", 5, T, []),
    # NVIDIA NIM operator: the GPU ask is spec.resources (GetResources), the tolerations spec.tolerations.
    ("nim-service-basic.yaml", 0, T, []),
    ("nim-service-basic.yaml", 1, T, ["spec.tolerations"]),
    ("nim-service-basic.yaml", 1, L, []),
    ("nim-service-basic.yaml", 2, T, []),
    ("nim-service-basic.yaml", 2, S, []),
    ("nim-service-basic.yaml", 3, T, []),
    ("nim-service-basic.yaml", 3, A, ["spec"]),
    ("nim-service-multinode.yaml", 1, T, ["spec.tolerations"]),
    ("nim-service-multinode.yaml", 1, L, []),
    ("nim-service-dra-manual.yaml", 2, T, ["spec.tolerations"]),
    ("nim-service-dra-manual.yaml", 2, A, []),
    ("nim-service-dra-created.yaml", 1, T, ["spec.tolerations"]),
    ("nim-service-dra-created.yaml", 2, T, []),
    ("nim-pipeline-rag.yaml", 0, T, [f"spec.services[{i}].spec.tolerations" for i in range(3)]),
    ("nim-pipeline-rag.yaml", 1, T, []),
    # vLLM production stack: deploymentConfig.resources.gpu on `vllm`, deploymentConfig.toleration.
    ("vllm-runtime.yaml", 0, T, ["spec.deploymentConfig.toleration"]),
    ("vllm-runtime.yaml", 0, L, []),
    ("vllm-runtime.yaml", 1, T, []),
    ("vllm-runtime.yaml", 1, S, []),
    ("vllm-runtime.yaml", 2, T, []),
    ("vllm-runtime.yaml", 2, L, ["spec.deploymentConfig.resources.gpu"]),
    # Slinky: the GPU is on spec.slurmd, the tolerations in spec.template.spec.
    ("slinky-nodeset-gpu.yaml", 0, T, ["spec.template.spec.tolerations"]),
    ("slinky-nodeset-gpu.yaml", 1, T, []),
    ("slinky-nodeset-gpu.yaml", 1, S, []),
    # KubeVirt: the virt-launcher asks for each device name; the VMI's tolerations are the pod's.
    ("kubevirt-vmi-gpu.yaml", 0, T, ["spec.tolerations"]),
    ("kubevirt-vmi-gpu.yaml", 0, L, []),
    ("kubevirt-vmi-gpu.yaml", 1, T, []),
    ("kubevirt-vmi-gpu.yaml", 1, S, []),
    ("kubevirt-vmi-gpu.yaml", 2, T, []),
    ("kubevirt-vmi-gpu.yaml", 2, A, ["spec.resourceClaims"]),
]


@pytest.mark.parametrize("name, index, policy, paths", EXPECTED, ids=[f"{e[0]}#{e[1]}-{e[2]}" for e in EXPECTED])
def test_adapters_on_each_projects_samples(name, index, policy, paths):
    docs = documents(name)
    assert sorted(f.path for f in findings(docs[index], policy, together=docs) if f.decided) == sorted(paths)


def test_the_generic_search_alone_misses_what_adapters_see():
    """Before the adapters, the KServe `model`, Spark `gpu`, TrainJob `resourcesPerNode` and Dynamo
    `limits.gpu` asks were invisible: no containers list holds them."""
    from gpu_aks_policies.podspecs import find_pod_specs, gpu_asks
    for name, index in (("kserve-tensorflow-gpu.yaml", 0), ("spark-pi-gpu.yaml", 0), ("dynamo-agg.yaml", 0)):
        obj = documents(name)[index]
        assert not any(gpu_asks(p, DEFAULTS[T].gpu_resources) for p in find_pod_specs(obj))
        assert any(gpu_asks(p, DEFAULTS[T].gpu_resources) for p in pod_specs_of(obj))


def test_the_trainer_node_takes_the_runtime_when_it_is_checked_together():
    job, _, runtime = documents("trainer-runtime-patches.yaml")
    [alone] = pod_specs_of(job)
    assert "was not among the objects checked" in alone.workload
    [resolved] = pod_specs_of(job, context_of([job, runtime]))
    [node] = [c for c in resolved.containers if c.name == "node"]
    assert node.spec["image"] == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
    assert node.spec["resources"]["limits"]["nvidia.com/gpu"] == "2" and node.resources_path == "spec.trainer.resourcesPerNode"
    assert resolved.spec["nodeSelector"] == {"node-type": "training"}


def test_kserve_multi_node_gpu_counts_follow_the_controller():
    """computeRayNodeAndGPUs: (total, head request, worker request) -> (head, worker)."""
    assert ray_gpus(4, 1, 1) == (1, 1)
    assert ray_gpus(4, 0, 2) == (2, 2)
    assert ray_gpus(2, 2, 1) == (2, 0), "the head alone can serve it: no GPUs on workers"
    assert ray_gpus(4, 2, 0) == (2, 1)
    assert ray_gpus(3, 0, 0) == (1, 1)
    head, worker = pod_specs_of(documents("kserve-multinode.yaml")[0])
    assert head.containers[0].spec["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert worker.containers[0].name == "worker-container" and worker.containers[0].limits_set_by_controller


def test_kaito_pods_carry_what_kaito_adds():
    [pod] = pod_specs_of(documents("kaito-workspace.yaml")[0])
    assert {t.toleration["key"] for t in pod.added_tolerations} == {
        "nvidia.com/gpu", "sku", "kubernetes.azure.com/scalesetpriority"}
    assert pod.containers[0].spec["resources"]["limits"]["nvidia.com/gpu"] == 1, "NC24ads_A100_v4 has one GPU"
    assert pod.own_nodes == "KAITO"


def test_nim_pods_follow_the_operator():
    _, service, *_ = documents("nim-service-basic.yaml")
    [pod] = pod_specs_of(service)
    assert [c.name for c in pod.containers] == ["meta-llama-3-2-1b-instruct-ctr"]
    assert pod.containers[0].spec["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    docs = documents("nim-service-dra-created.yaml")
    [pod] = pod_specs_of(docs[1], context_of(docs))
    assert pod.spec["resourceClaims"] == [{"name": "draresources-0", "resourceClaimTemplateName":
                                           "meta-llama3-2-1b-instruct-draresources-0-generated"}]
    pipeline, fixed = documents("nim-pipeline-rag.yaml")
    assert len(pod_specs_of(pipeline)) == 3 and len(pod_specs_of(fixed)) == 2, "a disabled service runs no pods"


def test_vllm_runtime_reads_gpu_type_and_the_singular_toleration():
    runtime = documents("vllm-runtime.yaml")[0]
    runtime["spec"]["deploymentConfig"]["resources"]["gpuType"] = "nvidia.com/mig-3g.40gb"
    runtime["spec"]["deploymentConfig"]["sidecarConfig"]["resources"]["gpu"] = "1"
    [pod] = pod_specs_of(runtime)
    vllm, sidecar = pod.containers
    assert vllm.name == "vllm" and vllm.spec["resources"]["limits"] == {"nvidia.com/mig-3g.40gb": "1"}
    assert sidecar.name == "sidecar" and sidecar.spec["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert pod.tolerations_key == "toleration"
    [finding] = findings(runtime, T)
    assert "Add to spec.deploymentConfig:\ntoleration:\n" in finding.message


def test_slinky_and_kubevirt_pods_carry_what_their_controllers_add():
    [pod] = pod_specs_of(documents("slinky-nodeset-gpu.yaml")[1])
    assert [c.name for c in pod.containers] == ["slurmd", "dcgm-exporter-sidecar"]
    assert [t.toleration["key"] for t in pod.added_tolerations] == ["nodeset.slinky.slurm.net/worker"]
    [launcher] = pod_specs_of(documents("kubevirt-vmi-gpu.yaml")[1])
    assert launcher.containers[0].spec["resources"]["limits"] == {
        "nvidia.com/TU104GL_Tesla_T4": 1, "nvidia.com/GRID_T4-1Q": 1, "intel.com/qat": 1}
    assert launcher.path == "spec.template.spec"


def test_argo_boundary_templates_count():
    workflow = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "spec": {"templates": [
        {"name": "dag", "tolerations": [{"key": "sku", "operator": "Exists"}],
         "dag": {"tasks": [{"name": "t", "template": "gpu"}]}},
        {"name": "gpu", "container": {"image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}}]}}
    assert findings(workflow, T) == [], "the DAG template is the pod's boundary template"
    workflow["spec"]["templates"][0]["tolerations"] = []
    assert [f.path for f in findings(workflow, T)] == ["spec.templates[1].tolerations"]


def test_cron_workflow_reads_its_workflow_spec():
    cron = {"apiVersion": "argoproj.io/v1alpha1", "kind": "CronWorkflow", "spec": {"workflowSpec": {"templates": [
        {"name": "gpu", "container": {"image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}}]}}}
    assert [f.path for f in findings(cron, T)] == ["spec.workflowSpec.templates[0].tolerations"]


json_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=6) | st.just(UNKNOWN)
json_keys = st.sampled_from(["spec", "template", "templates", "containers", "resources", "limits", "requests",
                             "nvidia.com/gpu", "gpu", "predictor", "model", "workerSpec", "services", "components",
                             "extraPodSpec", "podTemplate", "trainer", "resourcesPerNode", "runtimeRef", "driver",
                             "executor", "tolerations", "resourceClaims", "inference", "resource", "containerSet",
                             "podTemplateOverrides", "runtimePatches", "name", "tensorParallelSize",
                             # Tekton, BentoML, Notebooks v2, Kubeflow Pipelines v2
                             "steps", "sidecars", "stepTemplate", "computeResources", "taskRunTemplate", "taskRunSpecs",
                             "pipelineTaskName", "taskPodTemplate", "taskSpec", "taskRef", "pipelineSpec", "pipelineRef",
                             "tasks", "finally", "stepSpecs", "sidecarSpecs", "resolver", "runners", "extraPodSpec",
                             "extra_pod_spec", "custom", "options", "podConfig", "values", "deploymentSpec", "executors",
                             "container", "accelerator", "type", "count", "resourceType", "resourceCount", "platforms",
                             "kubernetes", "platformSpec", "tolerationJson", "runtimeValue", "constant", "nodeSelector",
                             "labels", "pipelineInfo", "root", "stringData", "data",
                             # NIM, vLLM, Slinky, KubeVirt, Run:ai, Argo resource templates (issue 29)
                             "draResources", "claimCreationSpec", "devices", "deviceClassName", "resourceClaimName",
                             "resourceClaimTemplateName", "multiNode", "enabled", "deploymentConfig", "toleration",
                             "nodeSelectorTerms", "gpuType", "sidecarConfig", "slurmd", "domain", "gpus", "hostDevices",
                             "deviceName", "virtualMachineTemplate", "value", "items", "manifest", "action",
                             "amd.com/gpu", "gpu.nvidia.com"]) | st.text(max_size=4)
json_values = st.recursive(json_leaves, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(json_keys, children, max_size=5), max_leaves=40)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(ADAPTERS)), json_values, json_values)
def test_no_adapter_crashes_on_arbitrary_json(kind, spec, extra):
    group, name = kind
    obj = {"apiVersion": f"{group}/v1" if group else "v1", "kind": name, "spec": spec, "metadata": extra,
           "inference": extra, "resource": extra}
    context = context_of([obj, extra])
    pods = pod_specs_of(obj, context)
    for policy in (T, L, S, A):
        assert isinstance(findings(obj, policy, context=context), list)
    assert all(p.path is not None for p in pods)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(json_values, json_values)
def test_declared_shapes_and_unknown_kinds_never_crash(declaration, spec):
    """Any config value is a shape or a reported problem; any object of a declared or unknown kind
    gives pods or none."""
    from gpu_aks_policies.workloads.shapes import parse_shapes

    problems: list[str] = []
    shapes = parse_shapes(declaration, "workloadShapes", lambda where, message: problems.append(where))
    assert shapes or problems or declaration in ([], ())
    obj = {"apiVersion": "x.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": spec}
    fixed = parse_shapes([{"apiVersion": "x.example.com/v1", "kind": "Thing", "pods": [
        {"path": "spec.*[*].template", "form": "container", "gpu": "spec.*[*].gpu", "tolerations": "spec.tolerations"},
        {"path": "spec.template.spec", "nodeSelectorTerms": "spec.terms"}]}], "w", lambda *_: pytest.fail())
    for declared in (shapes, fixed, ()):
        pods = pod_specs_of(obj, context_of([obj]), declared)
        assert all(isinstance(p.path, str) for p in pods)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["Task", "TaskRun", "Pipeline", "PipelineRun", "BentoDeployment", "WorkspaceKind",
                        "PipelineVersion"]), json_values, json_values)
def test_adapters_resolving_other_objects_never_crash(kind, spec, other_spec):
    """Runs resolve Tasks and Pipelines, pipelines their platform specs: arbitrary ones on both sides."""
    groups = {"BentoDeployment": "serving.yatai.ai", "WorkspaceKind": "kubeflow.org",
              "PipelineVersion": "pipelines.kubeflow.org"}
    group = groups.get(kind, "tekton.dev")
    obj = {"apiVersion": f"{group}/v1", "kind": kind, "metadata": {"name": "x"}, "spec": spec}
    others = [{"apiVersion": "tekton.dev/v1", "kind": other, "metadata": {"name": "x"}, "spec": other_spec}
              for other in ("Task", "Pipeline")]
    context = context_of([obj, *others])
    pod_specs_of(obj, context)
    for policy in (T, L, S, A):
        assert isinstance(findings(obj, policy, context=context), list)


@settings(max_examples=150, deadline=None)
@given(json_values, json_values, json_values)
def test_documents_that_are_not_objects_never_crash_and_only_pipelines_lead_to_pods(deployment, platforms, extra):
    """Any document without a kind: a compiled pipeline (deploymentSpec beside pipelineInfo) may lead
    to pods; a pipeline job the same under pipelineSpec; anything else to none."""
    pipeline = {"pipelineInfo": extra, "deploymentSpec": deployment}
    platform = {"platforms": platforms}
    job = {"pipelineSpec": pipeline, "platformSpec": platform}
    context = context_of([pipeline, platform, job, extra])
    for document in (pipeline, platform, job):
        for policy in (T, L, S, A):
            assert isinstance(findings(document, policy, context=context), list)
    assert pod_specs_of(platform, context) == []
    if isinstance(extra, dict) and "kind" not in extra and "deploymentSpec" not in extra and "pipelineSpec" not in extra:
        assert pod_specs_of(extra, context) == []


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["Secret", "ConfigMap"]), json_values, json_values)
def test_secrets_and_config_maps_never_lead_to_pods(kind, data, spec):
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "s"}, "stringData": data, "data": data, "spec": spec}
    assert pod_specs_of(obj, context_of([obj])) == []


@pytest.mark.parametrize("where", ["workflow", "template"])
def test_argo_dra_claims_come_from_the_template_or_else_the_workflow(where):
    """Argo copies the template's resourceClaims into the pod, else the workflow's
    (argo-workflows workflow/controller/workflowpod.go)."""
    claim_template = documents("dra-gpu-test1.yaml")[0]
    claims = [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]
    template: dict[str, Any] = {"name": "train", "container": {"image": "ubuntu:22.04"}}
    spec: dict[str, Any] = {"entrypoint": "train", "templates": [template]}
    (template if where == "template" else spec)["resourceClaims"] = claims
    workflow = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
                "metadata": {"name": "dra", "namespace": "gpu-test1"}, "spec": spec}
    [finding] = findings(workflow, T, together=[claim_template])
    assert finding.path == "spec.templates[0].tolerations" and "ResourceClaimTemplate 'single-gpu'" in finding.message
    template["tolerations"] = [{"key": "sku", "operator": "Exists", "effect": "NoSchedule"}]
    assert findings(workflow, T, together=[claim_template]) == []


# --- A controller is one file: collectors, not a context module that names controllers -----------


def test_context_module_names_no_controller():
    """Issue 16 item 7: `context.py` names no controller; each adapter registers what it collects."""
    from gpu_aks_policies.workloads import context, registry
    source = Path(context.__file__).read_text()
    for group, _ in registry.ADAPTERS:
        if group:
            assert group not in source, f"context.py names {group}"
    for word in ("TrainingRuntime", "ResourceClaim", "Tekton", "trainer", "Bento"):
        assert word not in source
    tables = {c.table for collectors in context.COLLECTORS.values() for c in collectors}
    assert {"namespaces", "dra.claims", "dra.claim_templates", "trainer.runtimes"} <= tables


def test_a_new_controller_registers_its_adapter_and_its_context_in_one_place():
    """What a new adapter module does: register its kind and a collector for the objects it reads."""
    from gpu_aks_policies.podspecs import PodSpec, pod_spec
    from gpu_aks_policies.workloads import context, registry

    @context.collects("example.profiles", "example.dev", "GpuProfile")
    def _profile(obj, name):
        yield context.scoped_name(obj, name), obj.get("spec", {})

    @registry.register("example.dev", "GpuRun", gpus="the profile's pod", tolerations="the run's", source="test")
    def _run(obj, ctx) -> list[PodSpec]:
        profile = ctx.table("example.profiles").get(context.scoped_name(obj, obj["spec"]["profile"]), {})
        return [pod_spec({**profile, **obj["spec"].get("pod", {})}, "spec.pod", "")]

    try:
        profile = {"apiVersion": "example.dev/v1", "kind": "GpuProfile", "metadata": {"name": "a100"},
                   "spec": {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
        run = {"apiVersion": "example.dev/v1", "kind": "GpuRun", "metadata": {"name": "r"}, "spec": {"profile": "a100"}}
        assert [f.path for f in findings(run, T, together=[profile])] == ["spec.pod.tolerations"]
        run["spec"]["pod"] = {"tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}
        assert findings(run, T, together=[profile]) == []
    finally:
        del registry.ADAPTERS[("example.dev", "GpuRun")]
        registry.REGISTRATIONS[:] = [r for r in registry.REGISTRATIONS if r.group != "example.dev"]
        del context.COLLECTORS[("example.dev", "GpuProfile")]


#: Run in a fresh interpreter: imports each adapter module in turn and prints every (group, kind)
#: registered twice, and whether every module that registers is one `load_all` imports.
_WHAT_EACH_MODULE_REGISTERS = """
import importlib, json, pkgutil
import gpu_aks_policies.workloads as package
from gpu_aks_policies.workloads import context, loading, registry

def registered():
    return (len(registry.ADAPTERS), len(registry.REGISTRATIONS), sum(map(len, context.COLLECTORS.values())),
            len(context.DOCUMENT_COLLECTORS))

registering = []
for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
    before = registered()
    importlib.import_module(f"gpu_aks_policies.workloads.{info.name}")
    if registered() != before:
        registering.append(info.name)
kinds = [(r.group, kind) for r in registry.REGISTRATIONS for kind in r.kinds]
print(json.dumps({"registering": registering, "machinery": sorted(loading.MACHINERY),
                  "twice": sorted({key for key in kinds if kinds.count(key) > 1})}))
"""


def test_every_module_that_registers_is_loaded_and_no_kind_twice():
    """`load_all` imports every module of the package but the machinery: a module that registers is
    never left unread (the 0.4.0 table, `MODULE_GROUPS`, had to name each), and no kind is registered
    by two modules (the order they load in changes nothing)."""
    import json
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _WHAT_EACH_MODULE_REGISTERS], capture_output=True, text=True,
                            check=True)
    report = json.loads(result.stdout)
    assert not set(report["registering"]) & set(report["machinery"]), report
    assert {"core", "kserve", "argo", "kfp"} <= set(report["registering"])
    assert report["twice"] == [], "a kind two modules register would depend on which loaded first"


def test_context_tables_can_be_seeded():
    """The pack can give Namespaces it knows from its config: `Context(namespaces=...)`."""
    from gpu_aks_policies.workloads import Context
    seeded = Context(complete=True, namespaces={"gpu": {"scheduler.alpha.kubernetes.io/defaultTolerations":
                                                        '[{"key": "sku", "operator": "Exists"}]'}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "gpu"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}
    assert findings(pod, T, context=seeded) == []
    assert [f.path for f in findings(pod, T, context=Context(complete=True))] == ["spec.tolerations"]


# --- Documents that are not Kubernetes objects, and objects that never create pods ----------------


def test_a_helm_values_file_gets_no_verdict():
    [values] = documents("helm-values-gpu.yaml")
    assert pod_specs_of(values) == []
    assert all(findings(values, policy) == [] for policy in (T, L, S, A))


@pytest.mark.parametrize("bad", [{"kind": 3, "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 1}}}]}},
                                 {"kind": "Pod", "apiVersion": 1, "spec": {"containers": [{}]}},
                                 {"kind": "", "containers": [{}]}])
def test_documents_without_a_usable_kind_have_no_pods(bad):
    assert pod_specs_of(bad) == []


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_secrets_and_configmaps_are_never_looked_inside(fmt, tmp_path, capsys):
    """Issue 19 item 7: a Secret's stringData holding a pod-shaped GPU object is not judged, and
    nothing of it appears in any output format; the GPU Job beside it still is."""
    import io

    from gpu_aks_policies.check import main
    path = tmp_path / "secret.yaml"
    path.write_text((WORKLOADS / "secret-with-pod.yaml").read_text())
    out = io.StringIO()
    code = main(["--format", fmt, str(path)], stdout=out)
    text = out.getvalue() + capsys.readouterr().err
    assert code == 1, text
    assert "TOPSECRET" not in text and "hunter2" not in text
    assert "template-store" not in text and "pod-templates" not in text
    assert "pi" in text and TOLERATE_GPU_TAINT in text
    secret, config_map, _ = documents("secret-with-pod.yaml")
    assert pod_specs_of(secret) == [] and pod_specs_of(config_map) == []


# --- Tekton ----------------------------------------------------------------------------------------

TEKTON = [
    # The Task has no place for tolerations: its runs are judged, the Task only for its amounts.
    (0, T, []), (0, S, []), (0, L, []),
    (1, T, ["spec.podTemplate.tolerations"]),
    (2, T, []), (2, S, []), (2, L, []),
    (3, T, []),
    (4, T, ["spec.taskRunTemplate.podTemplate.tolerations"]),
    (5, T, []),
    # v1beta1: spec.podTemplate tolerates; the task-specific taskPodTemplate replaces the tolerations.
    (6, T, ["spec.taskRunSpecs[0].taskPodTemplate.tolerations"]),
    (6, L, []),
    (7, A, ["spec.podTemplate"]), (7, T, []),
]


@pytest.mark.parametrize("index, policy, paths", TEKTON, ids=[f"#{i}-{p}" for i, p, _ in TEKTON])
def test_tekton(index, policy, paths):
    docs = documents("tekton-gpu.yaml")
    assert sorted(f.path for f in findings(docs[index], policy, together=docs) if f.decided) == sorted(paths)


def test_tekton_containers_follow_the_pod_builder():
    docs = documents("tekton-gpu.yaml")
    train, evaluate = pod_specs_of(docs[6], context_of(docs))
    assert [c.name for c in train.containers] == ["step-train", "sidecar-metrics"]
    assert train.containers[0].spec["resources"]["limits"] == {"nvidia.com/gpu": 1}, "stepTemplate merged in"
    assert train.spec["tolerations"][0]["key"] == "sku" and train.path == "spec.podTemplate"
    assert evaluate.spec == {"nodeSelector": {"accelerator": "nvidia"}, "tolerations": []}
    [alone] = pod_specs_of(docs[1])
    assert alone.containers == () and "not visible to a check of this object alone" in alone.notes[0]


def test_tekton_a_bad_amount_in_a_task_is_reported_at_the_task():
    task, run = documents("tekton-gpu.yaml")[:2]
    task["spec"]["steps"][0]["computeResources"]["limits"]["nvidia.com/gpu"] = "500m"
    assert [f.path for f in findings(task, L)] == ["spec.steps[0].computeResources.limits.nvidia.com/gpu"]
    assert findings(run, L, together=[task]) == [], "judged at the Task, not again at every run"


def test_tekton_run_level_compute_resources_are_judged_at_the_run():
    """tasklevel.ApplyTaskLevelComputeResources: every step gets the limits, and the requests are the
    limits divided among the steps: with two steps, 500m each, which the API server refuses."""
    task, run = documents("tekton-gpu.yaml")[:2]
    task["spec"]["steps"].append({"name": "second", "image": "ubuntu"})
    run["spec"]["computeResources"] = {"limits": {"nvidia.com/gpu": 1}}
    paths = [f.path for f in findings(run, L, together=[task])]
    assert paths == ["spec.computeResources.limits.nvidia.com/gpu"] * 2
    step_specs = {"stepSpecs": [{"name": "writesomething", "computeResources": {"limits": {"nvidia.com/gpu": "1.5"}}}]}
    run["spec"] = {**run["spec"], **step_specs}
    del run["spec"]["computeResources"]
    assert [f.path for f in findings(run, L, together=[task])] == ["spec.stepSpecs[0].computeResources.limits.nvidia.com/gpu"]


# --- BentoML ---------------------------------------------------------------------------------------

BENTOML = [
    (0, T, ["spec.runners[0].extraPodSpec.tolerations"]),
    (0, L, []),
    (1, T, []), (1, L, []),
    (1, S, ["spec.extraPodSpec.nodeSelector"]),
    (2, T, []),
    (2, L, ["spec.runners[0].resources.requests.custom.nvidia.com/gpu"]),
]


@pytest.mark.parametrize("index, policy, paths", BENTOML, ids=[f"#{i}-{p}" for i, p, _ in BENTOML])
def test_bentoml(index, policy, paths):
    docs = documents("bentoml-gpu.yaml")
    assert sorted(f.path for f in findings(docs[index], policy, together=docs) if f.decided) == sorted(paths)


def test_bentoml_limits_gpu_is_nvidia_and_requests_gpu_is_ignored():
    """getResourcesConfig maps limits.gpu to nvidia.com/gpu and has no branch for requests.gpu."""
    obj = {"apiVersion": "serving.yatai.ai/v2alpha1", "kind": "BentoDeployment", "metadata": {"name": "b"},
           "spec": {"resources": {"limits": {"gpu": "2"}, "requests": {"gpu": "1"}}}}
    [api] = pod_specs_of(obj)
    assert api.containers[0].name == "main"
    assert api.containers[0].spec["resources"] == {"limits": {"nvidia.com/gpu": "2"}}
    assert [f.path for f in findings(obj, T)] == ["spec.extraPodSpec.tolerations"]


# --- Kubeflow Notebooks v2 -------------------------------------------------------------------------

NOTEBOOKS = [
    (0, T, ["spec.podTemplate.options.podConfig.values[2].spec.tolerations"]),
    (0, L, []),
    (1, T, []), (1, S, []), (1, L, []),
]


@pytest.mark.parametrize("index, policy, paths", NOTEBOOKS, ids=[f"#{i}-{p}" for i, p, _ in NOTEBOOKS])
def test_notebooks_workspace_kind(index, policy, paths):
    docs = documents("notebooks-workspacekind.yaml")
    assert sorted(f.path for f in findings(docs[index], policy, together=docs) if f.decided) == sorted(paths)


def test_notebooks_sample_passes_where_the_gpu_taint_is_nvidia_com_gpu():
    """The published sample's big_gpu tolerates nvidia.com/gpu: right on a platform with that taint."""
    from gpu_aks_policies.rules import parse_rule_config
    config = parse_rule_config({T: {"gpuTaints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}})[T]
    sample = documents("notebooks-workspacekind.yaml")[0]
    assert findings(sample, T, config=config) == []
    pods = pod_specs_of(sample)
    assert [p.workload for p in pods][-1] == "WorkspaceKind 'jupyterlab' podConfig 'big_gpu'"
    assert pods[-1].containers[0].name == "main"


# --- Kubeflow Pipelines v2 -------------------------------------------------------------------------

KFP_EXECUTOR = "platforms.kubernetes.deploymentSpec.executors.exec-verify-gpu-scheduled"


def test_kfp_compiled_pipeline_is_judged_with_its_platform_spec():
    """The driver's pod: `main` with limits[accelerator type] = count, tolerations from the platform
    spec document beside it. The sample tolerates nvidia.com/gpu, not the default sku=gpu."""
    pipeline, platform = documents("kfp-gpu-ir.yaml")
    [pod] = pod_specs_of(pipeline, context_of([pipeline, platform]))
    assert pod.containers[0].name == "main"
    assert pod.containers[0].spec["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert [f.path for f in findings(pipeline, T, together=[platform])] == [f"{KFP_EXECUTOR}.tolerations"]
    assert pod_specs_of(platform) == [], "the platform spec creates nothing by itself"
    platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-verify-gpu-scheduled"]["tolerations"] = [
        {"effect": "NoSchedule", "key": "sku", "operator": "Equal", "value": "gpu"}]
    assert findings(pipeline, T, together=[platform]) == []
    assert [f.path for f in findings(pipeline, T)] == [f"{KFP_EXECUTOR}.tolerations"], "no platform spec: none"


def test_kfp_pipeline_version_holds_both_specs():
    pipeline, platform = documents("kfp-gpu-ir.yaml")
    version = {"apiVersion": "pipelines.kubeflow.org/v2beta1", "kind": "PipelineVersion",
               "metadata": {"name": "v1", "namespace": "kubeflow"},
               "spec": {"pipelineName": "gpu", "pipelineSpec": pipeline, "platformSpec": platform}}
    [finding] = findings(version, T)
    assert finding.path == f"spec.platformSpec.{KFP_EXECUTOR}.tolerations"
    job = {"pipelineSpec": pipeline, "platformSpec": platform, "runtimeConfig": {}}
    assert [f.path for f in findings(job, T)] == [f"platformSpec.{KFP_EXECUTOR}.tolerations"]
    pipeline["deploymentSpec"]["executors"]["exec-verify-gpu-scheduled"]["container"]["resources"]["accelerator"] = {
        "type": "nvidia.com/gpu", "count": "0.5"}
    [limit] = findings(version, L)
    assert limit.path == ("spec.pipelineSpec.deploymentSpec.executors.exec-verify-gpu-scheduled.container.resources."
                          "accelerator.count")


def test_kfp_accelerator_from_parameters_is_an_advisory():
    [pipeline] = documents("kfp-accelerator-parameter.yaml")
    assert findings(pipeline, T) == [] and findings(pipeline, L) == []
    [advisory] = findings(pipeline, A)
    assert "resolved from the run's parameters" in advisory.message


def test_kfp_compiled_argo_workflow_gets_the_pod_spec_patch_advisory():
    """The Argo form of the same pipeline: the GPU and toleration arrive only through podSpecPatch."""
    [workflow] = documents("kfp-gpu-argo.yaml")
    [advisory] = findings(workflow, A)
    assert advisory.path == "spec.templates[2]" and "podSpecPatch" in advisory.message
    assert findings(workflow, T) == [] and findings(workflow, L) == []


def test_kfp_toleration_json_constant_counts_and_a_parameter_is_an_advisory():
    pipeline, platform = documents("kfp-gpu-ir.yaml")
    config = platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]["exec-verify-gpu-scheduled"]
    config["tolerations"] = [{"tolerationJson": {"runtimeValue": {"constant": {
        "key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}}}}]
    assert findings(pipeline, T, together=[platform]) == [] and findings(pipeline, A, together=[platform]) == []
    config["tolerations"] = [{"tolerationJson": {"componentInputParameter": "pipelinechannel--tolerations"}}]
    [advisory] = findings(pipeline, A, together=[platform])
    assert "tolerationJson" in advisory.message
    assert findings(pipeline, T, together=[platform]) == [], "what the run supplies is not judged as missing"


# --- The generated reference page -----------------------------------------------------------------


def test_every_registration_documents_where_it_reads_and_its_source():
    from gpu_aks_policies.workloads import REGISTRATIONS
    for registration in REGISTRATIONS:
        assert registration.gpus and registration.tolerations and registration.source, registration


def test_docs_workloads_page_is_not_stale():
    """docs/workloads.md <- gpu_aks_policies.workloads.registry:workloads_markdown (see /work/coord/GENERATORS.md)."""
    from gpu_aks_policies.workloads.registry import workloads_markdown
    page = Path(__file__).parent.parent / "docs" / "workloads.md"
    assert page.read_text() == workloads_markdown(), (
        "docs/workloads.md is stale: python -c 'from gpu_aks_policies.workloads.registry import workloads_markdown; "
        "open(\"docs/workloads.md\", \"w\").write(workloads_markdown())'")
    for kind in ("Task", "PipelineRun", "BentoDeployment", "WorkspaceKind", "PipelineVersion", "Secret"):
        assert kind in page.read_text()


def test_tekton_parameters_in_pod_template_tolerations_are_an_advisory():
    """docs/podtemplates.md: `value: "$(params.workload)"` is known only when the run starts."""
    docs = documents("tekton-gpu.yaml")
    run = docs[4]
    run["spec"]["params"] = [{"name": "taint", "value": "gpu"}]
    run["spec"]["taskRunTemplate"]["podTemplate"]["tolerations"] = [
        {"key": "sku", "operator": "Equal", "value": "$(params.taint)", "effect": "NoSchedule"}]
    assert findings(run, T, together=docs) == []
    [advisory] = findings(run, A, together=docs)
    assert "spec.taskRunTemplate.podTemplate.tolerations[0]" in advisory.message


def test_kfp_platform_specs_sharing_a_first_label_are_all_candidates():
    """Two platform specs whose executors start with the same label (two pipelines that both configure
    `exec-verify-gpu-scheduled`): the pipeline still pairs with the one whose executors are all its own."""
    import copy
    pipeline, own = documents("kfp-gpu-ir.yaml")
    executors = own["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    executors["exec-verify-gpu-scheduled"]["tolerations"] = [
        {"effect": "NoSchedule", "key": "sku", "operator": "Equal", "value": "gpu"}]
    other = copy.deepcopy(own)
    other_executors = other["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    other_executors["exec-verify-gpu-scheduled"]["tolerations"] = []
    other_executors["exec-z-another-pipeline"] = {}
    for together in ([own, other], [other, own]):
        assert findings(pipeline, T, together=together) == [], together


# --- The long tail (issue 29): runs missing, Run:ai, Argo resource templates, unknown kinds ---------


def test_tekton_task_or_pipeline_asking_for_gpus_without_a_run_says_where_the_toleration_comes_from():
    docs = documents("tekton-gpu.yaml")
    task, pipeline = docs[0], docs[4 - 1]
    assert task["kind"] == "Task" and pipeline["kind"] == "Pipeline"
    [alone] = findings(task, A)
    assert alone.path == "spec" and "no TaskRun or PipelineRun that runs this Task" in alone.message
    assert "spec.taskRunTemplate.podTemplate" in alone.message and "among the objects checked" in alone.message
    assert findings(task, A, together=docs) == [], "its TaskRun is checked with it"
    assert findings(task, A, together=[pipeline, docs[4]]) == [], "a PipelineRun runs it through the Pipeline"
    assert findings(task, A, together=[pipeline]) != [], "a Pipeline alone runs nothing"
    inline = {"apiVersion": "tekton.dev/v1", "kind": "Pipeline", "metadata": {"name": "p"}, "spec": {"tasks": [
        {"name": "t", "taskSpec": {"steps": [{"name": "s", "image": "i",
                                              "computeResources": {"limits": {"nvidia.com/gpu": 1}}}]}}]}}
    [note] = findings(inline, A)
    assert note.path == "spec.tasks[0].taskSpec" and "runs this Pipeline" in note.message
    inline["spec"]["tasks"][0]["taskSpec"]["steps"][0]["computeResources"] = {"limits": {"cpu": 1}}
    assert findings(inline, A) == [], "no GPU, nothing to say"


RUNAI = {"apiVersion": "run.ai/v2alpha1", "kind": "TrainingWorkload", "metadata": {"name": "train", "namespace": "team"},
         "spec": {"image": {"value": "pytorch/pytorch"}}}
SKU = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize("gpu, tolerations, expected", [
    ("1", None, {T: ["spec.tolerations"], L: []}),
    ({"value": "2"}, SKU, {T: [], L: []}),
    # A Run:ai fraction is a GPU share the scheduler serves: a GPU pod, not a whole-GPU amount.
    ("0.5", None, {T: ["spec.tolerations"], L: []}),
    ({"value": "0.5"}, {"items": {"gpu": {"value": SKU[0]}}}, {T: [], L: []}),
    # Above one GPU, Run:ai asks for whole devices: 1.5 is refused.
    ("1.5", SKU, {T: [], L: ["spec.gpu"]}),
    ("0", None, {T: [], L: []}),
])
def test_runai_workloads_whole_gpus_and_fractions(gpu, tolerations, expected):
    workload = {**RUNAI, "spec": {**RUNAI["spec"], "gpu": gpu}}
    if tolerations is not None:
        workload["spec"]["tolerations"] = tolerations
    for policy, paths in expected.items():
        assert [f.path for f in findings(workload, policy) if f.decided] == paths, policy
    [pod] = pod_specs_of(workload)
    assert ("gpu-fraction" in pod.annotations) == (gpu in ("0.5", {"value": "0.5"}))


ARGO = [
    (0, T, []),
    (1, T, ["spec.templates[0].resource.manifest.spec.template.spec.tolerations"]),
    (1, L, []),
    (2, T, []),
    (2, A, ["spec.templates[0].resource.manifest"]),
    (3, T, []),
    (3, A, []),
]


@pytest.mark.parametrize("index, policy, paths", ARGO, ids=[f"#{i}-{p}" for i, p, _ in ARGO])
def test_argo_resource_templates_judge_the_object_they_create(index, policy, paths):
    docs = documents("argo-resource-gpu-job.yaml")
    assert sorted(f.path for f in findings(docs[index], policy, together=docs) if f.decided) == sorted(paths)


def test_argo_resource_template_manifests_that_cannot_be_read_are_said_only_when_they_name_a_gpu():
    def workflow(manifest: str, action: str = "create") -> dict[str, Any]:
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"},
                "spec": {"templates": [{"name": "t", "resource": {"action": action, "manifest": manifest}}]}}

    broken = "kind: Job\nspec: [nvidia.com/gpu: 1"
    [note] = findings(workflow(broken), A)
    assert "could not be judged: its manifest does not parse" in note.message
    assert findings(workflow("kind: Job\nspec: [cpu"), A) == []
    two = "apiVersion: v1\nkind: Pod\nspec: {}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: nvidia.com/x}\n"
    assert "is not one Kubernetes object" in findings(workflow(two), A)[0].message
    job = documents("argo-resource-gpu-job.yaml")[1]["spec"]["templates"][0]["resource"]["manifest"]
    assert findings(workflow(job, "delete"), T) == [], "delete creates nothing"
    [pod] = pod_specs_of(documents("argo-resource-gpu-job.yaml")[1])
    assert pod.namespace == "ml", "created in the workflow's namespace"


UNKNOWN_KIND = {"apiVersion": "serving.example.com/v1", "kind": "ModelServer", "metadata": {"name": "m"},
                "spec": {"accelerator": {"resource": "nvidia.com/gpu", "count": 1},
                         "sidecars": {"containers": [{"name": "proxy", "image": "envoy"}]}}}


def test_an_unknown_kind_naming_a_gpu_outside_every_pod_spec_is_not_evaluated():
    pods = pod_specs_of(UNKNOWN_KIND)
    assert [p.containers for p in pods] == [()], "no verdict: nothing to judge"
    [note] = findings(UNKNOWN_KIND, A)
    assert note.message.startswith("ModelServer at spec: not evaluated: declare this kind's shape")
    assert "'nvidia.com/gpu' at spec.accelerator.resource" in note.message
    assert all(findings(UNKNOWN_KIND, policy) == [] for policy in (T, L, S))


@pytest.mark.parametrize("mention", ["amd.com/gpu", "gpu.nvidia.com", "nvidia.com/gpu.product", "gpu.intel.com/i915"])
def test_gpu_names_that_make_an_unknown_kind_unevaluated(mention):
    obj = {"apiVersion": "x.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"a": [{"b": mention}]}}
    assert pod_specs_of(obj)[0].notes
    obj["spec"]["a"] = [{"b": "nvcr.io/nvidia/pytorch"}]
    assert pod_specs_of(obj) == [], "an image from NVIDIA's registry names no GPU"


def test_an_unknown_kind_whose_gpus_sit_in_the_pod_specs_found_keeps_its_verdicts():
    """PyTorchJob, RayCluster and the like write plain pod templates: the generic search judges them."""
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"}, "spec": {
        "pytorchReplicaSpecs": {"Worker": {"template": {"spec": {
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100"},
            "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}}}
    assert [f.path for f in findings(job, T)] == ["spec.pytorchReplicaSpecs.Worker.template.spec.tolerations"]


@pytest.mark.parametrize("api_version, kind, spec", [
    ("kueue.x-k8s.io/v1beta1", "Workload", {"podSets": [{"name": "main", "count": 1, "template": {"spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}]}),
    ("kueue.x-k8s.io/v1beta1", "ClusterQueue", {"resourceGroups": [{"coveredResources": ["nvidia.com/gpu"]}]}),
    ("kueue.x-k8s.io/v1beta1", "ResourceFlavor", {"nodeTaints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}),
    ("v1", "ResourceQuota", {"hard": {"requests.nvidia.com/gpu": 4, "nvidia.com/gpu": 4}}),
    ("karpenter.sh/v1", "NodePool", {"template": {"spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}}}),
    ("resource.k8s.io/v1", "DeviceClass", {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}),
])
def test_kinds_that_create_no_pods_get_no_verdict_and_no_advisory(api_version, kind, spec):
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec}
    assert pod_specs_of(obj) == []
