"""The offline preview ends with a summary of what differs between stacks (issue: a newcomer could not
see the admission actions, pool sizes or maintenance windows in the tree)."""

from __future__ import annotations

import io

import pytest
from gpu_aks_policies.catalog import vcpus_in_size_name

from tools import preview


@pytest.fixture(scope="module")
def summaries(dev_run, prod_run) -> dict[str, str]:
    return {stack: "\n".join(preview.render_summary(stack, run)) for stack, run in (("dev", dev_run), ("prod", prod_run))}


def test_the_summary_names_pools_with_size_model_counts_spot_and_taints(summaries):
    prod = summaries["prod"]
    assert "    t4spot: Standard_NC4as_T4_v3, T4, 1 nvidia.com/gpu per node, 0-10 nodes, Spot; taints: sku=gpu:NoSchedule, " \
           "kubernetes.azure.com/scalesetpriority=spot:NoSchedule" in prod
    assert "a100mig: Standard_NC24ads_A100_v4, A100 80GB, 3 nvidia.com/gpu per node (MIG 2g.20gb), 0-8 nodes;" in prod
    assert "system: Standard_D8ds_v5, system (CPU), 3-5 nodes; taints: CriticalAddonsOnly=true:NoSchedule" in prod
    assert "gput4: Standard_NC4as_T4_v3, T4, 1 nvidia.com/gpu per node, 0-2 nodes; taints: sku=gpu:NoSchedule" in summaries["dev"]


def test_a_nodepool_of_several_sizes_names_each_gpu_once():
    # The line said "H100 NVL, 1 nvidia.com/gpu per node; H100 NVL, 2 nvidia.com/gpu per node" and, for an H100
    # NodePool without a count, "H100, 8 nvidia.com/gpu per node" once per ND96 variant (issue 50).
    from datetime import date

    from components.platform_settings import parse_settings
    from components.pools import platform_pools
    settings = parse_settings({"cluster": {"nodeProvisioningProfile": {"mode": "Auto"}},
                               "systemPool": {"minCount": 2, "maxCount": 2},
                               "gpuNodePools": [{"name": "h100", "gpus": ["H100"], "limits": {"gpu": 64}}]},
                              "nap", "eastus2", today=date(2026, 11, 26))
    [line] = [line for line in preview._pool_lines(platform_pools(settings)) if line.startswith("    h100: ")]
    sizes, rest = line.split(", H100", 1)
    assert sizes.count("Standard_ND96") >= 4, "the ND96is/isf/isrf variants are among the sizes"
    assert "H100" + rest.split(", 0-", 1)[0] == "H100 NVL, 1 or 2 nvidia.com/gpu per node; H100 80GB, 8 nvidia.com/gpu per node"


def test_the_summary_shows_the_admission_actions_that_differ_between_stacks(summaries):
    assert ": Deny; exempt namespaces: kube-system, gpu-resources" in summaries["prod"]
    assert ": Warn, Audit; exempt namespaces: kube-system, gpu-resources" in summaries["dev"]


def test_the_summary_shows_the_kubernetes_version_with_its_end_of_support(summaries):
    assert "Kubernetes 1.36: end of AKS support 2027-06" in summaries["prod"]
    assert "Kubernetes 1.37: end of AKS support 2027-10" in summaries["dev"]


def test_the_summary_shows_maintenance_windows_or_says_there_are_none(summaries):
    for text in summaries.values():
        assert "Maintenance windows:" in text


def test_the_summary_shows_the_capacity_the_pools_need_with_the_upgrade_surge(summaries):
    """One computation, the pool kinds' (the preflight's): maxCount plus the upgrade surge; none on Spot."""
    assert "Capacity (preflight, before `pulumi up`):" in summaries["prod"]
    assert ("gpuPools[a100mig]: Standard_NC24ads_A100_v4 x 9 (8 at maxCount + 1 upgrade surge) = 216 vCPUs of its VM "
            "family's vCPUs") in summaries["prod"]
    assert ("gpuPools[t4spot]: Standard_NC4as_T4_v3 x 10 (10 at maxCount + 0 upgrade surge) = 40 vCPUs of regional "
            "low-priority (Spot) vCPUs") in summaries["prod"]


@pytest.mark.parametrize(("size", "vcpus"), [("Standard_NC4as_T4_v3", 4), ("Standard_NC24ads_A100_v4", 24),
                                             ("Standard_ND96isr_H100_v5", 96), ("Standard_D8ds_v5", 8), ("weird", None)])
def test_vcpus_come_from_azures_size_names(size, vcpus):
    assert vcpus_in_size_name(size) == vcpus


def test_the_preview_prints_the_summary_last():
    out = io.StringIO()
    assert preview.main(["dev"], stdout=out) == 0
    text = out.getvalue()
    assert text.index("Policies:") < text.index("Summary of gpu-aks/dev:")


@pytest.mark.slow
def test_make_outputs_writes_the_document_platform_and_the_doctor_read():
    import json
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import ROOT

    venv = Path(sys.executable).parent.parent
    made = subprocess.run(["make", "-s", "-o", f"{venv}/bin/.installed", f"VENV={venv}", "outputs", "STACK=dev"],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stdout + made.stderr
    document = json.loads((ROOT / "build" / "outputs-dev.json").read_text())
    assert document["outputs"]["gpuPools"]["gput4"]["vmSize"] == "Standard_NC4as_T4_v3"
    assert document["outputs"]["kubeconfig"] == "[secret]"
    checked = subprocess.run([sys.executable, "-m", "gpu_aks_policies.check", "--platform", "build/outputs-dev.json",
                              "tests/manifests/corpus/good"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert checked.returncode in (0, 1), checked.stderr
    assert "error" not in checked.stderr.lower(), checked.stderr
