"""The opt-in GPU smoke test, and the check program it runs."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from types import SimpleNamespace

import kubernetes_validate

from offline.mockrun import run_program
from tests.conftest import KUBERNETES_SCHEMA_VERSION, ROOT
from tools.stacks import config_from_stack_file

sys.path.insert(0, str(ROOT / "smoke"))
import gpu_check

JOB = "kubernetes:batch/v1:Job"


def test_off_by_default(dev_run, prod_run):
    assert not dev_run.by_type(JOB) and not prod_run.by_type("gpu-aks:index:GpuSmokeTest")


def test_one_job_per_gpu_pool_with_the_contract_placement():
    config, _ = config_from_stack_file(ROOT / "Pulumi.prod.yaml", "gpu-aks")
    config["gpu-aks:smokeTest"] = json.dumps({"enabled": True})
    run = run_program(ROOT, "prod", config)
    assert run.error is None, run.error
    jobs = {job.inputs["metadata"]["name"]: job for job in run.by_type(JOB)}
    assert set(jobs) == {"gpu-smoke-a100mig", "gpu-smoke-t4spot"}
    contract = run.stack_outputs["gpuPools"]
    for name, job in jobs.items():
        pool = contract[name.removeprefix("gpu-smoke-")]
        pod = job.inputs["spec"]["template"]["spec"]
        assert pod["tolerations"] == pool["tolerations"] and pod["nodeSelector"] == pool["nodeSelector"]
        assert pod["containers"][0]["resources"]["limits"] == {pool["gpuResource"]: 1}
        assert job.inputs["spec"]["backoffLimit"] == 0
    for resource in [*jobs.values(), run.one("kubernetes:core/v1:ConfigMap", "gpu-smoke-test-program")]:
        api_version = "batch/v1" if resource.type.endswith("Job") else "v1"
        manifest = {"apiVersion": api_version, "kind": resource.type.rsplit(":", 1)[1], **resource.inputs}
        kubernetes_validate.validate(manifest, KUBERNETES_SCHEMA_VERSION, strict=True)
    config_map = run.one("kubernetes:core/v1:ConfigMap", "gpu-smoke-test-program")
    assert config_map.inputs["data"]["gpu_check.py"] == (ROOT / "smoke" / "gpu_check.py").read_text()
    # prod serves a whole-GPU pool and a MIG pool, so NVIDIA's plugin runs as two DaemonSets; each
    # Job waits for the plugin before it asks for a GPU.
    daemon_sets = {ds.urn for ds in run.by_type("kubernetes:apps/v1:DaemonSet") if ds.name.startswith("nvidia-device-plugin")}
    assert len(daemon_sets) == 2
    assert all(daemon_sets <= set(job.dependencies) for job in jobs.values()), "the Jobs wait for the device plugin"
    job_urns = {job.urn for job in jobs.values()} | {run.one("gpu-aks:index:GpuSmokeTest").urn}
    for resource in run.resources:
        assert not job_urns & set(resource.dependencies), f"{resource.name} must not depend on the smoke test"


def test_check_program_without_a_gpu_exits_3_with_a_clear_message():
    result = subprocess.run([sys.executable, str(ROOT / "smoke" / "gpu_check.py")], capture_output=True,
                            text=True, check=False, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == gpu_check.EXIT_NO_GPU == 3
    assert "gpu-check: FAIL: no NVIDIA GPU is visible to this container" in result.stderr


class FakeTensor:
    """Just enough of torch.Tensor for the check: values kept as one number per reduction."""

    def __init__(self, kind: str, size: int, wrong: bool = False) -> None:
        self.kind, self.size, self.wrong = kind, size, wrong

    def __matmul__(self, other: FakeTensor) -> FakeTensor:
        return FakeTensor("product", self.size, self.wrong)

    def __mul__(self, other: FakeTensor) -> FakeTensor:
        return FakeTensor("squares", self.size, self.wrong)

    def mean(self) -> FakeTensor:
        return self

    def sum(self) -> FakeTensor:
        return self

    def item(self) -> float:
        n = self.size
        value = float(n) if self.kind == "product" else (n - 1) * n * (2 * n - 1) / 6
        return value + (1.0 if self.wrong else 0.0)


def fake_torch(wrong: bool = False) -> SimpleNamespace:
    cuda = SimpleNamespace(
        is_available=lambda: True, device_count=lambda: 1, get_device_name=lambda i: "NVIDIA H100 80GB HBM3",
        get_device_properties=lambda i: SimpleNamespace(total_memory=80 * 2**30), synchronize=lambda: None)
    return SimpleNamespace(
        cuda=cuda, version=SimpleNamespace(cuda="12.9"), float32="float32", float64="float64",
        ones=lambda shape, device, dtype: FakeTensor("ones", shape[0], wrong),
        arange=lambda n, device, dtype: FakeTensor("arange", n, wrong))


def fake_smi(*args: str) -> str:
    return "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)" if args == ("-L",) else "580.95.05"


def test_check_program_gpu_path_reports_and_passes():
    out, err = io.StringIO(), io.StringIO()
    assert gpu_check.main(fake_torch(), fake_smi, out, err) == 0
    text = out.getvalue()
    for expected in ("driver version: 580.95.05", "GPU 0: NVIDIA H100 80GB HBM3", "CUDA version (PyTorch build): 12.9",
                     "devices: 1", "cuda:0 NVIDIA H100 80GB HBM3, 80.0 GiB", "compute check: ok", "gpu-check: PASS"):
        assert expected in text


def test_check_program_wrong_result_and_missing_torch():
    err = io.StringIO()
    assert gpu_check.main(fake_torch(wrong=True), fake_smi, io.StringIO(), err) == gpu_check.EXIT_WRONG_RESULT
    assert "wrong result from the GPU" in err.getvalue()
    err = io.StringIO()
    assert gpu_check.main(None, fake_smi, io.StringIO(), err) in (gpu_check.EXIT_NO_TORCH, gpu_check.EXIT_OK)
