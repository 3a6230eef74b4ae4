"""The example's own tests, with the platform mocked by `gpu_aks_app_testing`: no platform repository,
cloud or Pulumi CLI needed. In an app repository:

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
    pulumi.runtime.set_all_config({"gpu-inference:platformStack": PLATFORM,
                                   **{f"gpu-inference:{k}": str(v) for k, v in config.items()}})
    pulumi.runtime.set_mocks(mocks, project="gpu-inference", stack="dev", preview=False)
    return mocks, runpy.run_path(str(HERE / "__main__.py"))


def pod(mocks: PlatformMocks) -> dict[str, Any]:
    [deployment] = mocks.of_type("kubernetes:apps/v1:Deployment")
    return deployment.inputs["spec"]["template"]["spec"]


@pulumi.runtime.test
def test_the_server_lands_on_the_t4_pool_in_half_precision_behind_a_service():
    mocks, program = run(platform_outputs())

    def check(_: Any) -> None:
        spec = pod(mocks)
        assert spec["nodeSelector"] == {"accelerator": "nvidia", "gpu-aks.io/pool": "gput4"}
        assert spec["tolerations"] == [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
        [server] = spec["containers"]
        assert server["resources"]["limits"] == {"nvidia.com/gpu": 1}
        assert server["args"][server["args"].index("--dtype") + 1] == "half", "T4 has no bfloat16"
        [service] = mocks.of_type("kubernetes:core/v1:Service")
        [deployment] = mocks.of_type("kubernetes:apps/v1:Deployment")
        assert service.inputs["spec"]["selector"] == deployment.inputs["spec"]["selector"]["matchLabels"]
        assert service.inputs["spec"]["ports"][0]["targetPort"] == "http"
        # pulumi up awaits the server for a GPU node (15 min), the image (10 min) and the model (10 min).
        assert deployment.inputs["metadata"]["annotations"] == {"pulumi.com/timeoutSeconds": "2100"}

    # Both registered before the check looks (the Service registers after the Deployment).
    return pulumi.Output.all(program["deployment"].urn, program["service"].urn).apply(check)


@pulumi.runtime.test
def test_an_a100_pool_serves_in_the_models_own_precision():
    a100 = gpu_pool("a100", "Standard_NC24ads_A100_v4", "A100 80GB", "nvidia-a100-80gb", 1, 80)
    mocks, program = run(platform_outputs([a100]), gpuModel="A100 80GB")

    def check(_: Any) -> None:
        args = pod(mocks)["containers"][0]["args"]
        assert args[args.index("--dtype") + 1] == "auto"

    return program["deployment"].urn.apply(check)
