"""The GPU VM catalog: the facts other modules rely on."""

import pytest
from gpu_aks_policies.catalog import (
    GPU_SKUS,
    UNSUPPORTED_GPU_SKUS,
    arm64_image_problem,
    gpu_sku,
    image_repository,
    is_gpu_vm_size,
    skus_with_gpu,
    unsupported_gpu_sku,
)


@pytest.mark.parametrize("vm_size, model, gpus, memory, mig, accelerator", [
    ("Standard_NC4as_T4_v3", "T4", 1, 16, False, "nvidia-tesla-t4"),
    ("Standard_NC64as_T4_v3", "T4", 4, 16, False, "nvidia-tesla-t4"),
    ("Standard_NC24ads_A100_v4", "A100 80GB", 1, 80, True, "nvidia-a100-80gb"),
    ("Standard_NC96ads_A100_v4", "A100 80GB", 4, 80, True, "nvidia-a100-80gb"),
    ("Standard_ND96asr_v4", "A100 40GB", 8, 40, True, "nvidia-tesla-a100"),
    ("Standard_ND96amsr_A100_v4", "A100 80GB", 8, 80, True, "nvidia-a100-80gb"),
    ("Standard_NC40ads_H100_v5", "H100 NVL", 1, 94, True, "nvidia-h100-nvl"),
    ("Standard_ND96isr_H100_v5", "H100 80GB", 8, 80, True, "nvidia-h100-80gb"),
    ("Standard_ND96isr_H200_v5", "H200", 8, 141, True, "nvidia-h200-141gb"),
    ("Standard_NC80adis_H100_v5", "H100 NVL", 2, 94, True, "nvidia-h100-nvl"),
    ("Standard_ND128isr_NDR_GB200_v6", "GB200", 4, 192, False, "nvidia-gb200"),
    ("Standard_ND128isr_GB300_v6", "GB300", 4, 288, False, "nvidia-gb300"),
    ("Standard_NC8ads_A10_v4", "A10", 1, 8, False, "nvidia-a10"),
    ("Standard_NC32ads_A10_v4", "A10", 1, 24, False, "nvidia-a10"),
    ("Standard_NC288ds_xl_RTXPRO6000BSE_v6", "RTX PRO 6000", 2, 96, False, "nvidia-rtx-pro-6000"),
])
def test_supported_sizes(vm_size, model, gpus, memory, mig, accelerator):
    sku = gpu_sku(vm_size)
    assert sku is not None
    assert (sku.model, sku.gpus, sku.gpu_memory_gib, sku.supports_mig, sku.accelerator) == \
        (model, gpus, memory, mig, accelerator)


def test_lookup_ignores_case_as_azure_does():
    assert gpu_sku("standard_nc4as_t4_v3") is gpu_sku("Standard_NC4as_T4_v3")


@pytest.mark.parametrize("vm_size, retired_on, replacement", [
    ("Standard_NC6", "2023-09-06", "Standard_NC4as_T4_v3"),
    ("Standard_NC6s_v2", "2023-09-06", "Standard_NC24ads_A100_v4"),
    ("Standard_ND6s", "2023-09-06", "Standard_NC24ads_A100_v4"),
    ("Standard_NV6", "2023-09-06", "Standard_NC4as_T4_v3"),
    ("Standard_NC6s_v3", "2025-09-30", "Standard_NC24ads_A100_v4"),
])
def test_retired_sizes_say_when_and_what_replaced_them(vm_size, retired_on, replacement):
    unsupported = unsupported_gpu_sku(vm_size)
    assert unsupported is not None and gpu_sku(vm_size) is None
    assert retired_on in unsupported.reason
    assert replacement in unsupported.replacement


def test_amd_sizes_are_refused_with_a_reason():
    assert "not supported on AKS" in unsupported_gpu_sku("Standard_NV16as_v4").reason
    assert "amd.com/gpu" in unsupported_gpu_sku("Standard_ND96isr_MI300X_v5").reason


def test_mig_partitions_and_instances():
    a100 = gpu_sku("Standard_NC24ads_A100_v4")
    assert a100.mig_partition("MIG1g") == "1g.10gb"
    assert a100.gpus_per_node("MIG1g") == 7
    assert a100.gpus_per_node("MIG2g") == 3
    assert a100.gpus_per_node(None) == 1
    nd_a100 = gpu_sku("Standard_ND96asr_v4")
    assert nd_a100.mig_partition("MIG2g") == "2g.10gb"
    assert nd_a100.gpus_per_node("MIG3g") == 16
    assert gpu_sku("Standard_NC4as_T4_v3").mig_partitions == {}


def test_catalog_tables_do_not_overlap():
    assert not set(GPU_SKUS) & set(UNSUPPORTED_GPU_SKUS)


@pytest.mark.parametrize("vm_size, expected", [
    ("Standard_NC4as_T4_v3", True), ("Standard_NC6", True), ("Standard_NV4as_v4", True),
    ("Standard_NC999_future_v9", True), ("Standard_D4ds_v5", False), ("Standard_E8s_v5", False),
])
def test_is_gpu_vm_size(vm_size, expected):
    assert is_gpu_vm_size(vm_size) is expected


@pytest.mark.parametrize("vm_size, arch, share, ubuntu_only", [
    ("Standard_ND128isr_NDR_GB200_v6", "arm64", None, True),
    ("Standard_ND128isr_GB300_v6", "arm64", None, True),
    ("Standard_NC16ads_A10_v4", "amd64", "2/3", False),
    ("Standard_NC72ds_xl_RTXPRO6000BSE_v6", "amd64", "1/2", True),
    ("Standard_NC40ads_H100_v5", "amd64", None, False),
])
def test_grace_hosts_are_arm64_and_vgpu_sizes_name_their_share(vm_size, arch, share, ubuntu_only):
    sku = gpu_sku(vm_size)
    assert (sku.arch, sku.gpu_share, sku.ubuntu_only) == (arch, share, ubuntu_only)


def test_nv_a10_sizes_stay_refused_and_point_at_the_nc_sizes():
    assert "Standard_NC8ads_A10_v4" in unsupported_gpu_sku("Standard_NV36ads_A10_v5").replacement


def test_the_sizes_an_a10_label_admits_that_gpu_aks_refuses_are_the_nv_a10_v5_ones():
    """skewer parses `A10` from `Standard_NV6ads_A10_v5` as from `Standard_NC8ads_A10_v4` (#38)."""
    from gpu_aks_policies.catalog import refused_sizes_with_gpu_name
    assert refused_sizes_with_gpu_name("a10") == [
        "Standard_NV6ads_A10_v5", "Standard_NV12ads_A10_v5", "Standard_NV18ads_A10_v5", "Standard_NV36ads_A10_v5",
        "Standard_NV36adms_A10_v5", "Standard_NV72ads_A10_v5"]
    assert refused_sizes_with_gpu_name("H100") == []


@pytest.mark.parametrize("name, sizes", [
    # #38: the is, isf and isrf variants carry the same sku-gpu-name (supported-gpus.yaml, commit 021c778).
    ("H100", {"Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5", "Standard_ND96isr_H100_v5",
              "Standard_ND96is_H100_v5", "Standard_ND96isf_H100_v5", "Standard_ND96isrf_H100_v5"}),
    ("h200", {"Standard_ND96isr_H200_v5", "Standard_ND96is_H200_v5", "Standard_ND96isf_H200_v5",
              "Standard_ND96isrf_H200_v5"}),
    ("GB200", {"Standard_ND128isr_NDR_GB200_v6"}),
    ("B200", set()),
])
def test_sizes_by_gpu_name(name, sizes):
    assert {sku.vm_size for sku in skus_with_gpu(name)} == sizes


@pytest.mark.parametrize("image, problem", [
    ("nvcr.io/nvidia/k8s-device-plugin:v0.20.0", None),
    ("nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless", None),
    ("nvcr.io/nvidia/pytorch@sha256:abc", None),
    ("registry.example.com:5000/team/trainer:1.0", "cannot confirm an arm64 build"),
])
def test_arm64_builds_of_the_platform_images(image, problem):
    found = arm64_image_problem(image)
    assert (found is None) if problem is None else (problem in found)


def test_image_repository_keeps_a_registry_port():
    assert image_repository("registry.example.com:5000/team/trainer:1.0") == "registry.example.com:5000/team/trainer"
    assert image_repository("registry.example.com:5000/team/trainer") == "registry.example.com:5000/team/trainer"


def test_the_configuration_reference_lists_every_gpu_size_a_pool_accepts_with_gpus_and_mig():
    """Issue 28: until 0.3.1 the accepted sizes were listed only in the vmSize error message."""
    from gpu_aks_policies.catalog import GPU_SKUS, UNSUPPORTED_GPU_SKUS

    from tests.conftest import ROOT

    page = (ROOT / "docs" / "configuration.md").read_text()
    assert "## GPU sizes a GPU pool accepts" in page
    rows = {line.split("|")[1].strip(" `"): [cell.strip() for cell in line.split("|")[2:-1]]
            for line in page.splitlines() if line.startswith("| `Standard_")}
    for sku in GPU_SKUS.values():
        model, gpus, memory, mig, _notes = rows[sku.vm_size]
        assert (model, int(gpus), int(memory)) == (sku.model, sku.gpus, sku.gpu_memory_gib)
        assert (mig == "no") == (not sku.supports_mig)
        assert all(f"{profile}: {partition}" in mig for profile, partition in sku.mig_partitions.items())
    assert all(sku.vm_size in rows for sku in UNSUPPORTED_GPU_SKUS.values())
