"""The workload adapters against an acceptance set (issue #29), built independently of the adapters' own
fixtures: real manifests from the projects the issue names (each file's first lines cite its source and commit) and traps.
Each file is checked alone, as a user runs `gpu-aks-check FILE`; a file is right when the set of
(document, kind, name, policy, level) it gets is exactly the expected one. Expected verdicts follow
the owners' controllers (what pods they create, with which tolerations), as each file's header says.

DRA convention: a pod whose GPU comes only through a DRA claim also gets the node selection advisory,
as the plain DRA Pods of `tests/manifests/workloads/dra-gpu-test1.yaml` do (kept so earlier sets keep
their verdicts)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from gpu_aks_policies.check import main

ACCEPTANCE = Path(__file__).parent / "manifests" / "acceptance29"
T = ("gpu-pods-tolerate-gpu-taint", "mandatory")
L = ("gpu-limits-are-whole-numbers", "mandatory")
S = ("gpu-pods-select-gpu-nodes", "advisory")
A = ("gpu-workloads-are-analyzable", "advisory")


def _at(doc: int, kind: str, name: str, *verdicts: tuple[str, str]) -> set[tuple[int, str, str, str, str]]:
    return {(doc, kind, name, policy, level) for policy, level in verdicts}


EXPECTED: dict[str, set[tuple[int, str, str, str, str]]] = {
    # NIM operator: spec.resources / draResources on `<name>-ctr`, spec.tolerations as the pod's.
    "01-nim-dra-auto-minimal.yaml": _at(1, "NIMService", "meta-llama3-2-1b-instruct", T, S),
    "02-nim-dra-auto-cel-tolerated.yaml": _at(1, "NIMService", "meta-llama3-2-1b-instruct", S),
    "03-nim-multinode-rdma.yaml": _at(1, "NIMService", "deepseek-r1", T, S),
    "04-nim-guardrail-pipeline.yaml": _at(0, "NIMPipeline", "guardrail-pipeline", T, S),
    "05-nim-pipeline-tolerations-wrong-place.yaml": _at(0, "NIMPipeline", "rag-pipeline", T),
    "06-nim-service-full-tolerated.yaml": set(),
    "31-nim-pipeline-enabled-omitted.yaml": set(),
    # vLLM production-stack: deploymentConfig.resources.gpu, deploymentConfig.toleration (singular).
    "07-vllm-autoscaling.yaml": (_at(0, "VLLMRuntime", "vllmruntime-autoscaling-minimal", T, S)
                                 | _at(1, "VLLMRuntime", "vllmruntime-autoscaling-scale-to-zero", T, S)
                                 | _at(2, "VLLMRuntime", "vllmruntime-autoscaling-sample", T, S)),
    "08-vllm-fractional-gpu.yaml": _at(0, "VLLMRuntime", "vllmruntime-half", L),
    "09-vllm-correct.yaml": set(),
    "10-vllm-tolerations-plural.yaml": _at(0, "VLLMRuntime", "vllmruntime-plural", T, S),
    # Slinky: the GPU on spec.slurmd, the pod's fields in spec.template.spec.
    "11-slinky-nodeset-a3mega.yaml": _at(0, "NodeSet", "test-release-slurm-worker-a3mega", T, S),
    "12-slinky-nodeset-tolerations-on-slurmd.yaml": _at(0, "NodeSet", "slurm-worker-gpu", T),
    "13-slinky-nodeset-correct.yaml": set(),
    # Kueue: Workloads, queues and provisioning settings create no pods; the Job is judged. Checked alone, the
    # Job's queue is not among the objects (its setup is file 30): what the flavor adds is not guessed, the
    # advisory names what to add (checked with its setup: tests/test_kueue.py).
    "14-kueue-workload-gpu.yaml": set(),
    "15-kueue-tas-gpu-queues.yaml": set(),
    "16-kueue-provisioning-job.yaml": _at(0, "Job", "sample-job-", A),
    "30-kueue-provisioning-setup.yaml": set(),
    # KubeVirt: the virt-launcher asks for each deviceName; the VMI spec's tolerations are the pod's.
    "17-kubevirt-vm-hostdevice-wrong-place.yaml": _at(0, "VirtualMachine", "vm-cirros", T, S),
    "18-kubevirt-vmi-vgpu-correct.yaml": set(),
    "19-kubevirt-vmi-usb.yaml": set(),
    "20-kubevirt-vmpool-gpu.yaml": _at(0, "VirtualMachinePool", "vm-pool-cirros", T, S),
    "34-kubevirt-instancetype-gpu.yaml": _at(1, "VirtualMachine", "vm-cirros-clarge", T, S),
    "35-kubevirt-cluster-instancetype-tolerated.yaml": set(),
    # Run:ai (closed source; docs/workloads.md says what is decided).
    "21-runai-training.yaml": _at(0, "TrainingWorkload", "job-1", T, S),
    "22-runai-inference-fraction.yaml": set(),
    "32-runai-gpu-memory.yaml": _at(0, "TrainingWorkload", "job-mem", T, S),
    # Argo resource templates: the created object is judged; {{ }} in its scheduling fields is said.
    "23-argo-orchestration-gpu-job.yaml": _at(0, "Workflow", "k8s-orchestrate-", T, S),
    "24-argo-statefulset-gpu-tolerated.yaml": set(),
    "25-argo-volcano-templated.yaml": _at(0, "Workflow", "volcano-gpu-", A),
    "33-argo-templated-gpu-count.yaml": _at(0, "Workflow", "arguments-parameters-", A),
    # Tekton without a run: where the toleration must come from, no verdict.
    "26-tekton-task-gpu-no-run.yaml": _at(0, "Task", "steptemplate-env-merge", A),
    "27-tekton-pipeline-gpu-no-run.yaml": _at(0, "Pipeline", "echo-good-morning", A),
    # A List and a multi-document file: only the wrong object is reported.
    "28-list-mixed.json": _at(0, "NIMService", "listed-nim", T),
    "29-multidoc-fractional-nim.yaml": _at(2, "NIMService", "meta-llama-3-2-1b-instruct", L),
}


def verdicts_of(path: Path) -> tuple[set[tuple[int, str, str, str, str]], list[object]]:
    out = io.StringIO()
    main(["--format", "json", str(path)], stdin=io.BytesIO(b""), stdout=out)
    report = json.loads(out.getvalue())
    return {(v["doc"], v["kind"], v["name"], v["policy"], v["level"]) for v in report["violations"]}, report["errors"]


def test_every_file_of_the_set_has_an_expectation():
    assert sorted(p.name for p in ACCEPTANCE.iterdir()) == sorted(EXPECTED)
    assert len(EXPECTED) >= 27


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_acceptance_file(name):
    got, errors = verdicts_of(ACCEPTANCE / name)
    assert errors == []
    assert got == EXPECTED[name]


def test_the_vllm_node_selection_fix_names_the_field_the_kind_has():
    """DeploymentConfig has `nodeSelectorTerms` and no `nodeSelector`
    (operator/api/v1alpha1/vllmruntime_types.go): the fix is written there, as NodeSelectorTerms."""
    out = io.StringIO()
    main(["--format", "json", str(ACCEPTANCE / "10-vllm-tolerations-plural.yaml")], stdin=io.BytesIO(b""), stdout=out)
    [selection] = [v for v in json.loads(out.getvalue())["violations"] if v["policy"] == S[0]]
    assert selection["path"] == "spec.deploymentConfig.nodeSelectorTerms"
    assert "nodeSelectorTerms:\n- matchExpressions:\n  - key: " in selection["message"]
    assert "nodeSelector:\n" not in selection["message"]


def test_argo_expressions_outside_gpu_templates_keep_their_verdicts():
    """Only a template that names a GPU and holds `{{ }}` in its GPU asks or scheduling fields is said as
    not judged; a CPU template with expressions, and a GPU template whose expressions are elsewhere
    (args), keep the rules' verdicts."""
    from gpu_aks_policies.rule_config import ANALYZABLE, TOLERATE_GPU_TAINT

    from tests.helpers import verdicts

    def workflow(container: dict, **spec: object) -> dict:
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"},
                "spec": {**spec, "templates": [{"name": "t", "container": {"image": "i", **container}}]}}

    templated_taint = [{"key": "{{workflow.parameters.key}}", "operator": "Exists"}]
    gpu = {"resources": {"limits": {"nvidia.com/gpu": 1}}}
    assert verdicts(workflow(gpu, tolerations=templated_taint))[ANALYZABLE] == ["spec.templates[0]"]
    assert verdicts(workflow(gpu, tolerations=templated_taint))[TOLERATE_GPU_TAINT] == []
    cpu = {"resources": {"limits": {"cpu": "{{inputs.parameters.cpu}}"}}}
    assert not any(verdicts(workflow(cpu)).values())
    args = {**gpu, "args": ["{{inputs.parameters.message}}"]}
    assert verdicts(workflow(args))[TOLERATE_GPU_TAINT] == ["spec.templates[0].tolerations"]


def test_kubevirt_instancetype_resolves_by_kind_and_namespace_and_never_overrides_the_vmi():
    """`pkg/instancetype/apply`: the instancetype's GPUs apply only where the VMI has none (else KubeVirt
    refuses the VM as a conflict); a namespaced instancetype resolves in the VM's namespace, the cluster
    kind (the default `kind`) anywhere."""
    from gpu_aks_policies.workloads import context_of, pod_specs_of

    def instancetype(kind: str, namespace: str = "") -> dict:
        metadata = {"name": "gpu", **({"namespace": namespace} if namespace else {})}
        return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind, "metadata": metadata,
                "spec": {"gpus": [{"name": "g", "deviceName": "nvidia.com/GA102GL_A10"}]}}

    def vm(namespace: str, kind: str | None = None, own_gpus: bool = False) -> dict:
        devices = {"gpus": [{"name": "own", "deviceName": "nvidia.com/TU104GL_Tesla_T4"}]} if own_gpus else {}
        return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v", "namespace": namespace},
                "spec": {"instancetype": {"name": "gpu", **({"kind": kind} if kind else {})},
                         "template": {"spec": {"domain": {"devices": devices}}}}}

    def asks(obj: dict, *others: dict) -> dict:
        [pod] = pod_specs_of(obj, context_of([obj, *others]))
        return dict(pod.containers[0].spec["resources"]["limits"])

    cluster = instancetype("VirtualMachineClusterInstancetype")
    namespaced = instancetype("VirtualMachineInstancetype", "team")
    assert asks(vm("team"), cluster) == {"nvidia.com/GA102GL_A10": 1}
    assert asks(vm("team"), namespaced) == {}, "the default kind is the cluster one"
    assert asks(vm("team", "VirtualMachineInstancetype"), namespaced) == {"nvidia.com/GA102GL_A10": 1}
    assert asks(vm("other", "VirtualMachineInstancetype"), namespaced) == {}
    assert asks(vm("team", own_gpus=True), cluster) == {"nvidia.com/TU104GL_Tesla_T4": 1}
