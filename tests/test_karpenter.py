"""The NAP NodePool and AKSNodeClass builders against Karpenter's published CRD schemas.

The CRDs are copied, unchanged, into tests/fixtures/karpenter/ (README.md there names the commits).
Each object is checked against its version's `openAPIV3Schema` (jsonschema) and against every
`x-kubernetes-validations` CEL rule on the way (cel-python; the few rules that use Kubernetes' CEL
library functions cel-python lacks are counted, and must stay few).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import pytest
import yaml

from components.pools.karpenter import (
    CAPACITY_TYPE_LABEL,
    INSTANCE_TYPE_LABEL,
    NODE_CLASS_API_VERSION,
    NODEPOOL_API_VERSION,
    SKU_GPU_COUNT_LABEL,
    SKU_GPU_NAME_LABEL,
    GpuNodePoolSpec,
    aks_node_class,
    gpu_node_pool,
)

FIXTURES = Path(__file__).parent / "fixtures" / "karpenter"


def _schema(crd_file: str, version: str) -> dict[str, Any]:
    crd = yaml.safe_load((FIXTURES / crd_file).read_text())
    (found,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    assert found["served"], f"{crd_file} {version} is not served"
    schema: dict[str, Any] = found["schema"]["openAPIV3Schema"]
    return schema


def _api(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.partition("/")
    return group, version


NODEPOOL_SCHEMAS = {
    "azure": _schema("karpenter.sh_nodepools.yaml", _api(NODEPOOL_API_VERSION)[1]),
    "upstream": _schema("upstream.karpenter.sh_nodepools.yaml", _api(NODEPOOL_API_VERSION)[1]),
}
NODE_CLASS_SCHEMA = _schema("karpenter.azure.com_aksnodeclasses.yaml", _api(NODE_CLASS_API_VERSION)[1])


def _rules(schema: Mapping[str, Any], value: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """(path, rule, value) for every CEL rule that applies to a value present in the object."""
    for rule in schema.get("x-kubernetes-validations") or []:
        yield path, rule["rule"], value
    if isinstance(value, Mapping):
        properties = schema.get("properties") or {}
        for key, child in value.items():
            if key in properties:
                yield from _rules(properties[key], child, f"{path}.{key}")
            elif isinstance(schema.get("additionalProperties"), Mapping):
                yield from _rules(schema["additionalProperties"], child, f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _rules(schema["items"], item, f"{path}[{index}]")


def _cel_problems(schema: Mapping[str, Any], document: Mapping[str, Any]) -> tuple[list[str], int, int]:
    """(failed rules, rules evaluated, rules cel-python cannot run)."""
    env = celpy.Environment()
    failed, evaluated, unsupported = [], 0, 0
    for path, rule, value in _rules(schema, document):
        try:
            result = env.program(env.compile(rule)).evaluate({"self": celpy.json_to_cel(value)})
        except Exception:  # cel-python lacks Kubernetes' CEL extensions (find, ...)
            unsupported += 1
            continue
        if isinstance(result, Exception):
            unsupported += 1
            continue
        evaluated += 1
        if not bool(result):
            failed.append(f"{path}: {rule}")
    return failed, evaluated, unsupported


def _valid(schema: Mapping[str, Any], document: Mapping[str, Any]) -> None:
    jsonschema.Draft7Validator(schema).validate(document)
    failed, evaluated, unsupported = _cel_problems(schema, document)
    assert not failed, failed
    assert evaluated > unsupported, (evaluated, unsupported)


SPECS = {
    "h100 spot first": GpuNodePoolSpec(
        "h100", "gpu", gpu_names=("H100",), gpu_counts=(1, 2), capacity_types=("spot", "on-demand"),
        taints=("sku=gpu:NoSchedule",), labels={"gpu-aks.io/pool": "h100"}, limits={"nvidia.com/gpu": "16"},
        weight=100),
    "a100 on-demand": GpuNodePoolSpec(
        "a100", "gpu", gpu_names=("A100",), gpu_counts=(1,), capacity_types=("on-demand",),
        taints=("nvidia.com/gpu:NoSchedule",), labels={"gpu-aks.io/pool": "a100"}, limits={"cpu": "320"},
        weight=50),
    "gb200 by size": GpuNodePoolSpec(
        "gb200", "gpuarm", vm_sizes=("Standard_ND128isr_NDR_GB200_v6",), capacity_types=("on-demand",),
        taints=("sku=gpu:NoSchedule",), labels={"gpu-aks.io/pool": "gb200"}, architectures=("arm64",)),
}


@pytest.mark.parametrize("flavour", sorted(NODEPOOL_SCHEMAS))
@pytest.mark.parametrize("name", sorted(SPECS))
def test_gpu_node_pools_match_karpenters_v1_schema(flavour, name):
    _valid(NODEPOOL_SCHEMAS[flavour], gpu_node_pool(SPECS[name]))


def test_aks_node_class_matches_the_v1beta1_schema():
    _valid(NODE_CLASS_SCHEMA, aks_node_class("gpu", "Ubuntu2204", 256, tags={"team": "ml"}))
    _valid(NODE_CLASS_SCHEMA, aks_node_class("byo", "AzureLinux", gpu_mode="None"))


def test_the_schema_check_catches_what_karpenter_refuses():
    """The oracle can fail: objects Karpenter's API server refuses fail here too."""
    pool = gpu_node_pool(SPECS["h100 spot first"])
    pool["spec"]["disruption"]["consolidationPolicy"] = "WhenIdle"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(NODEPOOL_SCHEMAS["azure"]).validate(pool)
    pool = gpu_node_pool(SPECS["h100 spot first"])
    pool["spec"]["template"]["metadata"]["labels"]["karpenter.sh/nodepool"] = "x"
    failed, _, _ = _cel_problems(NODEPOOL_SCHEMAS["azure"], pool)
    assert any("karpenter.sh/nodepool" in rule for rule in failed), failed
    pool = gpu_node_pool(SPECS["h100 spot first"])
    pool["spec"]["template"]["metadata"]["labels"]["accelerator"] = "nvidia"
    failed, _, _ = _cel_problems(NODEPOOL_SCHEMAS["azure"], pool)
    assert any("'accelerator'" in rule for rule in failed), failed
    node_class = aks_node_class("gpu", "Windows2022")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(NODE_CLASS_SCHEMA).validate(node_class)


def test_a_gpu_pool_never_disrupts_a_node_under_a_job():
    pool = gpu_node_pool(SPECS["h100 spot first"])["spec"]
    assert pool["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert pool["template"]["spec"]["expireAfter"] == "Never"
    assert {"nodes": "0", "reasons": ["Drifted"]} in pool["disruption"]["budgets"]


def test_requirements_ask_for_nvidia_gpus_by_name_count_or_size_and_spot_before_on_demand():
    reqs = {r["key"]: r["values"] for r in gpu_node_pool(SPECS["h100 spot first"])["spec"]["template"]["spec"]
            ["requirements"]}
    assert reqs[SKU_GPU_NAME_LABEL] == ["H100"] and reqs[SKU_GPU_COUNT_LABEL] == ["1", "2"]
    assert reqs[CAPACITY_TYPE_LABEL] == ["spot", "on-demand"]
    assert reqs["karpenter.azure.com/sku-gpu-manufacturer"] == ["nvidia"]
    by_size = {r["key"]: r["values"] for r in gpu_node_pool(SPECS["gb200 by size"])["spec"]["template"]["spec"]
               ["requirements"]}
    assert by_size[INSTANCE_TYPE_LABEL] == ["Standard_ND128isr_NDR_GB200_v6"]
    assert by_size["kubernetes.io/arch"] == ["arm64"] and SKU_GPU_NAME_LABEL not in by_size


def test_taints_and_the_pool_label_are_declared_on_the_template():
    template = gpu_node_pool(SPECS["h100 spot first"])["spec"]["template"]
    assert template["spec"]["taints"] == [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]
    assert template["metadata"]["labels"] == {"gpu-aks.io/pool": "h100"}
    assert gpu_node_pool(SPECS["a100 on-demand"])["spec"]["template"]["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]


def test_the_fixtures_are_the_versions_aks_serves():
    crd = yaml.safe_load((FIXTURES / "karpenter.azure.com_aksnodeclasses.yaml").read_text())
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    assert versions["v1beta1"]["storage"] is True
    assert versions["v1alpha2"].get("deprecated") is True
    readme = (FIXTURES / "README.md").read_text()
    assert "352646f599290c3a6d2f9710fb535a7b288f88ed" in readme
    assert "2266468104f36373ed002241afaee2d3bbc26078" in readme


def test_requirement_keys_in_azures_label_domain_are_ones_its_crd_allows():
    """The domain rules use Kubernetes' CEL `find`, which cel-python lacks: read their allow-lists."""
    text = (FIXTURES / "karpenter.sh_nodepools.yaml").read_text()
    allowed = set(re.findall(r'"(karpenter\.azure\.com/[a-z-]+)"', text))
    assert {"karpenter.azure.com/sku-gpu-name", "karpenter.azure.com/sku-gpu-count"} <= allowed
    for spec in SPECS.values():
        keys = {r["key"] for r in gpu_node_pool(spec)["spec"]["template"]["spec"]["requirements"]}
        assert {key for key in keys if key.startswith("karpenter.azure.com/")} <= allowed
