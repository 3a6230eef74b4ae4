"""`gpu-aks:smokeTest`: an opt-in GPU check Job per served pool after `pulumi up`."""

from __future__ import annotations

from dataclasses import dataclass

from gpu_aks_policies.declarations import Check, Reader, Section, boolean, text

from components.settings.common import image_problem
from components.settings.device_plugin import served_pools
from components.settings.dra import dra_pool_names

DEFAULT_SMOKE_TEST_IMAGE = "nvcr.io/nvidia/pytorch:25.10-py3"


@dataclass(frozen=True)
class SmokeTestSettings:
    enabled: bool = False
    image: str = DEFAULT_SMOKE_TEST_IMAGE


def _something_to_test(reader: Reader) -> None:
    if reader.get("enabled") and not served_pools(reader.root.children["devicePlugin"]) and \
            not dra_pool_names(reader.root.raw):
        reader.problem("enabled", "true, but no GPU pool is served by gpu-aks's device plugin "
                                  "(devicePlugin.enabled or devicePlugin.pools) nor by the DRA driver (dra.pools), so "
                                  "there is nothing to test")


SMOKE_TEST = Section("smokeTest", "One GPU check Job per served GPU pool after `pulumi up`.", (
    boolean("enabled", "Run the smoke test.", False, attr="enabled"),
    Check(_something_to_test, reads=("enabled",), doc="`enabled: true` needs a GPU pool served by the device plugin."),
    text("image", "The image of the check Job (has PyTorch with CUDA).", DEFAULT_SMOKE_TEST_IMAGE, attr="image",
         check=image_problem,
         source="NVIDIA NGC nvcr.io/nvidia/pytorch"),
), cls=SmokeTestSettings)
