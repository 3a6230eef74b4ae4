"""GpuCluster's output TypedDicts (components/gpu_cluster_outputs.py) are the outputs contract's
dataclasses (policies/contract.py), generated from them: the same keys, the same types, the same
documentation, and what the dev and prod stacks export fits them value by value."""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any, NotRequired, get_args, get_origin

import pytest
from gpu_aks_policies.fields import json_fields

from components import gpu_cluster_codegen, gpu_cluster_outputs
from components.gpu_cluster import GpuCluster
from components.gpu_cluster_outputs import CpuPoolContract, GpuPoolContract


def test_the_generated_module_is_current():
    committed = gpu_cluster_codegen.OUTPUTS_MODULE.read_text()
    assert committed == gpu_cluster_codegen.render_outputs(gpu_cluster_codegen.outputs_model()), (
        "regenerate with `venv/bin/python -m gpu_aks_plugin.schema`")


def _plain(annotation: Any) -> Any:
    """A contract annotation as plain Python types: `X | None` -> (X, optional), tuples -> lists,
    Literals -> str, contract classes -> their TypedDicts."""
    if get_origin(annotation) in (types.UnionType, typing.Union):
        [inner] = [arg for arg in get_args(annotation) if arg is not type(None)]
        return _plain(inner)
    if get_origin(annotation) is typing.Literal:
        return str
    if get_origin(annotation) is tuple:
        return list[_plain(get_args(annotation)[0])]  # type: ignore[misc]
    if get_origin(annotation) is collections.abc.Mapping:
        return dict[get_args(annotation)]  # type: ignore[misc]
    if annotation in gpu_cluster_codegen.OUTPUT_TYPES:
        return getattr(gpu_cluster_outputs, gpu_cluster_codegen.OUTPUT_TYPES[annotation])
    return annotation


@pytest.mark.parametrize("cls", list(gpu_cluster_codegen.OUTPUT_TYPES), ids=lambda cls: cls.__name__)
def test_each_typed_dict_has_the_contract_fields_types_and_docs(cls):
    typed = getattr(gpu_cluster_outputs, gpu_cluster_codegen.OUTPUT_TYPES[cls])
    hints = typing.get_type_hints(typed)
    contract_hints = typing.get_type_hints(cls)
    specs = {spec.metadata["json"]: spec for spec in json_fields(cls)}
    assert list(hints) == list(specs)
    for name, spec in specs.items():
        expected = _plain(contract_hints[spec.name])
        if spec.metadata["json"] == "tolerations":
            expected = list[gpu_cluster_outputs.Toleration]
        assert hints[name] == expected, name
        nullable = type(None) in get_args(contract_hints[spec.name])
        assert (name in typed.__optional_keys__) == nullable, f"{name}: a field that may be null is NotRequired"
    fields = {f.key: f.doc for spec in gpu_cluster_codegen.outputs_model() if spec.name == typed.__name__
              for f in spec.fields}
    assert fields == {name: spec.metadata["doc"] for name, spec in specs.items()}


def test_the_component_declares_its_outputs_with_them():
    hints = GpuCluster.__annotations__  # objects: the module has no `from __future__ import annotations`
    assert get_args(get_args(hints["gpu_pools"])[0]) == (str, GpuPoolContract)
    assert get_args(get_args(hints["cpu_pools"])[0]) == (str, CpuPoolContract)


def fits(value: Any, annotation: Any, where: str = "") -> list[str]:
    """Where `value` does not fit `annotation` (a TypedDict, list, dict or plain type)."""
    if isinstance(annotation, type) and typing.is_typeddict(annotation):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = typing.get_type_hints(annotation)
        problems = [f"{where}.{key}: missing" for key in annotation.__required_keys__ if key not in value]
        problems += [f"{where}.{key}: not in {annotation.__name__}" for key in value if key not in hints]
        for key, item in value.items():
            if key in hints and not (item is None and key in annotation.__optional_keys__):
                problems += fits(item, hints[key], f"{where}.{key}")
        return problems
    if get_origin(annotation) is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        return [problem for index, item in enumerate(value)
                for problem in fits(item, get_args(annotation)[0], f"{where}[{index}]")]
    if get_origin(annotation) is dict:
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        return [problem for key, item in value.items() for problem in fits(item, get_args(annotation)[1], f"{where}.{key}")]
    if get_origin(annotation) is NotRequired:
        return fits(value, get_args(annotation)[0], where)
    if annotation is int:
        # Pulumi sends numbers as floats: a whole one is an integer.
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) and value == int(value) else [
            f"{where}: {value!r} is not an integer"]
    return [] if isinstance(value, annotation) else [f"{where}: {value!r} is not a {annotation.__name__}"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_what_the_stacks_export_fits_the_types(stack, dev_run, prod_run):
    outputs = (dev_run if stack == "dev" else prod_run).stack_outputs
    assert outputs["gpuPools"] and outputs["cpuPools"]
    for name, pool in outputs["gpuPools"].items():
        assert fits(pool, GpuPoolContract, name) == []
    for name, pool in outputs["cpuPools"].items():
        assert fits(pool, CpuPoolContract, name) == []


def test_a_value_of_another_type_does_not_fit(dev_run):
    pool = dict(next(iter(dev_run.stack_outputs["gpuPools"].values())))
    offer = {**pool["offers"][0], "perNode": "1"}
    assert fits({**pool, "offers": [offer], "spot": "no"}, GpuPoolContract, "p") == [
        "p.spot: 'no' is not a bool", "p.offers[0].perNode: '1' is not an integer"]
    assert fits({key: value for key, value in pool.items() if key != "name"}, GpuPoolContract, "p") == ["p.name: missing"]
