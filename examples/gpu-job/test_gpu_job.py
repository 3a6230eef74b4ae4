"""The example app stack's own tests, with the platform mocked by `gpu_aks_app_testing`: no platform
repository, cloud or Pulumi CLI needed. In an app repository:

    pip install -r requirements.txt pytest
    python -m pytest
"""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pulumi
from gpu_aks_app_testing import PlatformMocks, gpu_pool, platform_outputs

HERE = Path(__file__).resolve().parent
PLATFORM = "organization/gpu-aks/dev"


def run(platform: dict[str, Any], **config: Any) -> tuple[PlatformMocks, dict[str, Any]]:
    mocks = PlatformMocks({PLATFORM: platform})
    pulumi.runtime.set_all_config({"gpu-job:platformStack": PLATFORM, **{f"gpu-job:{k}": str(v) for k, v in config.items()}})
    pulumi.runtime.set_mocks(mocks, project="gpu-job", stack="dev", preview=False)
    return mocks, runpy.run_path(str(HERE / "__main__.py"))


def job_pod(mocks: PlatformMocks) -> dict[str, Any]:
    """The Job's pod spec exactly as the program sent it."""
    [job] = mocks.of_type("kubernetes:batch/v1:Job")
    return job.inputs["spec"]["template"]["spec"]


@pulumi.runtime.test
def test_the_job_lands_on_the_platforms_t4_pool():
    mocks, program = run(platform_outputs())

    def check(_: Any) -> None:
        pod = job_pod(mocks)
        assert pod["nodeSelector"] == {"accelerator": "nvidia", "gpu-aks.io/pool": "gput4"}
        assert pod["tolerations"] == [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
        assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}
        # pulumi up awaits the Job for a GPU node (15 min) and then the provider's own 10 minutes.
        [job] = mocks.of_type("kubernetes:batch/v1:Job")
        assert job.inputs["metadata"]["annotations"] == {"pulumi.com/timeoutSeconds": "1500"}

    return program["job"].urn.apply(check)


@pulumi.runtime.test
def test_a_mig_slice_under_the_mixed_strategy():
    a100 = gpu_pool("a100mig", "Standard_NC24ads_A100_v4", "A100 80GB", "nvidia-a100-80gb", 1, 80,
                    mig_partition="1g.10gb", mig_instances_per_gpu=7, mig_strategy="mixed")
    mocks, program = run(platform_outputs([a100], mig_strategy="mixed"), migPartition="1g.10gb")

    def check(_: Any) -> None:
        assert job_pod(mocks)["containers"][0]["resources"]["limits"] == {"nvidia.com/mig-1g.10gb": 1}

    return program["job"].urn.apply(check)
