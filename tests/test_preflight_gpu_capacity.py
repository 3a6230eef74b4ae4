"""The preflight for GPU capacity the catalog does not know: a declared GPU checked against Azure's SKU list."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tools import preflight

compute = pytest.importorskip("azure.mgmt.compute.models", reason="azure-mgmt-compute is the test oracle")


def sku(name: str, family: str, vcpus: int, gpus: int | None) -> dict:
    capabilities = [compute.ResourceSkuCapabilities(name="vCPUs", value=str(vcpus))]
    if gpus is not None:
        capabilities.append(compute.ResourceSkuCapabilities(name="GPUs", value=str(gpus)))
    return compute.ResourceSku(
        resource_type="virtualMachines", name=name, tier="Standard", family=family, locations=["eastus2"],
        location_info=[compute.ResourceSkuLocationInfo(location="eastus2", zones=["1"])],
        capabilities=capabilities).as_dict()


def usage(name: str, current: int, limit: int) -> dict:
    return compute.Usage(current_value=current, limit=limit,
                         name=compute.UsageName(value=name, localized_value=name)).as_dict()


STACK = """config:
  azure-native:location: eastus2
  gpu-aks:gpuPools:
    - name: b200
      vmSize: Standard_ND128isr_B200_v7
      maxCount: 1
      gpu: {model: B200, count: 8, memoryGiB: 180}
"""
USAGE = [usage("cores", 0, 1000), usage("standardDDSv5Family", 0, 500), usage("standardNDB200v7Family", 0, 512)]
CPU = [sku("Standard_D4ds_v5", "standardDDSv5Family", 4, None)]


def _run(tmp_path: Path, skus: list[dict]) -> tuple[int, str]:
    (tmp_path / "Pulumi.next.yaml").write_text(STACK)
    (tmp_path / "usage.json").write_text(json.dumps(USAGE))
    (tmp_path / "skus.json").write_text(json.dumps(skus))
    out = io.StringIO()
    code = preflight.main(["next", "--usage", str(tmp_path / "usage.json"), "--skus", str(tmp_path / "skus.json")],
                          root=tmp_path, out=out)
    return code, out.getvalue()


def test_a_declaration_azure_agrees_with_passes(tmp_path):
    code, out = _run(tmp_path, [*CPU, sku("Standard_ND128isr_B200_v7", "standardNDB200v7Family", 128, 8)])
    assert code == 0, out


@pytest.mark.parametrize("gpus, message", [
    (4, "gpuPools[b200].gpu.count: 8 declared, but Azure's SKU list gives Standard_ND128isr_B200_v7 4 GPUs; "
        "declare count: 4"),
    (None, "gpuPools[b200].gpu: Azure's SKU list gives Standard_ND128isr_B200_v7 no GPUs capability"),
])
def test_a_declaration_azure_contradicts_is_a_problem(tmp_path, gpus, message):
    code, out = _run(tmp_path, [*CPU, sku("Standard_ND128isr_B200_v7", "standardNDB200v7Family", 128, gpus)])
    assert code == 1 and f"problem: {message}" in out, out
