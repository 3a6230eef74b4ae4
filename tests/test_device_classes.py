"""DeviceClass selectors as the API server compiles them (`policies/device_classes.py`): a class it refuses is
an input error naming the class and the selector's key, in the checker and the explainer alike. The classes
of NVIDIA's DRA driver chart (kubernetes-sigs/dra-driver-nvidia-gpu v25.8.1
`deployments/helm/nvidia-dra-driver-gpu/templates/deviceclass-{gpu,mig}.yaml`) are accepted."""

from __future__ import annotations

import io
import json

import pytest
import yaml
from gpu_aks_policies.check import main
from gpu_aks_policies.device_classes import device_class, device_class_refusals, selector_problem
from gpu_aks_policies.limits import MAX_CEL_NESTING, MAX_CEL_SELECTOR_CHARS

NVIDIA_GPU = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
NVIDIA_MIG = "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"

ACCEPTED = [NVIDIA_GPU, NVIDIA_MIG, "true",
            "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H100')",
            "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
            "device.attributes['gpu.nvidia.com'].exists(key, key == 'uuid')",
            # cel-go v0.29.2's parser takes these (measured): 249 parentheses, 250 lists, a chain of 249, and runs
            # of `!` and `-`, which are one grammar rule and nest nothing; parentheses inside a string nest nothing.
            # (Well typed: the cluster tier sends them to a real API server.)
            "(" * (MAX_CEL_NESTING - 1) + "true" + ")" * (MAX_CEL_NESTING - 1),
            "[" * MAX_CEL_NESTING + "]" * MAX_CEL_NESTING + " == []",
            "'a'" + ".lowerAscii()" * (MAX_CEL_NESTING - 1) + " == 'a'", "!" * 10_000 + "true", "-" * 10_000 + "1 == 1",
            "device.driver == '" + "(" * 5000 + "'",
            # Nesting and chaining count apart: 200 parentheses around a chain of 100 parse.
            "(" * 200 + "'a'" + ".lowerAscii()" * 100 + ")" * 200 + " == 'a'"]
#: (expression, what the refusal says): the API server's own words (`cel/compile.go`).
REFUSED = [("device.driver ==", "Syntax error"), ("devce.driver == 'gpu.nvidia.com'", "undeclared reference to 'devce'"),
           ("device.driver", "must evaluate to bool"), ("'gpu'", "must evaluate to bool"),
           ("device.attributes['gpu.nvidia.com'].exists(k, j == 'uuid')", "undeclared reference to 'j'"),
           ("x" * (MAX_CEL_SELECTOR_CHARS + 1), f"at most {MAX_CEL_SELECTOR_CHARS}"),
           # cel-go's parser: "expression recursion limit exceeded: 250" / "max recursion depth exceeded" (measured
           # against v0.29.2, the version k8s.io/apiserver v0.37.2 builds with).
           *[(expression, f"deeper than {MAX_CEL_NESTING} levels") for expression in (
               "(" * 5000 + "true" + ")" * 5000, "[" * (MAX_CEL_NESTING + 1) + "]" * (MAX_CEL_NESTING + 1) + " == []",
               "device" + "['a']" * 2000 + " == 1", "device" + ".a" * (MAX_CEL_NESTING + 1) + " == 1",
               "!(" * 300 + "true" + ")" * 300, "'a'" + ".lowerAscii()" * (MAX_CEL_NESTING + 1) + " == 'a'",
               "[" * 200 + "(" * 200 + "1" + ")" * 200 + "]" * 200 + " == []")]]


@pytest.mark.parametrize("expression", ACCEPTED)
def test_selectors_the_api_server_accepts_pass(expression):
    assert selector_problem(expression) is None


@pytest.mark.parametrize("expression, problem", REFUSED, ids=[case[0][:24] for case in REFUSED])
def test_selectors_the_api_server_refuses_are_named(expression, problem):
    said = selector_problem(expression)
    assert said is not None and problem in said


def _class(name: str, *expressions: str, extended: str | None = None) -> dict:
    spec: dict = {"selectors": [{"cel": {"expression": e}} for e in expressions]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": spec}


def test_a_refused_class_is_an_input_error_naming_it_and_its_key(tmp_path):
    path = tmp_path / "classes.yaml"
    path.write_text(yaml.safe_dump_all([_class("gpu.nvidia.com", NVIDIA_GPU, extended="nvidia.com/gpu"),
                                        _class("typo", NVIDIA_GPU, "devce.driver == 'x'")]))
    out = io.StringIO()
    assert main(["--format", "json", str(path)], stdout=out) == 2
    [error] = json.loads(out.getvalue())["errors"]
    assert "DeviceClass 'typo' spec.selectors[1].cel.expression" in error["message"]
    assert "undeclared reference to 'devce'" in error["message"]
    path.write_text(yaml.safe_dump(_class("deep", NVIDIA_GPU, "(" * 5000 + "true" + ")" * 5000)))
    assert main(["--format", "json", str(path)], stdout=(out := io.StringIO())) == 2
    [error] = json.loads(out.getvalue())["errors"]
    assert f"DeviceClass 'deep' spec.selectors[1].cel.expression: the API server refuses this selector (it nests " \
        f"deeper than {MAX_CEL_NESTING} levels" in error["message"]


def test_a_class_reads_its_selectors_and_its_extended_resource():
    read = device_class(_class("gpu.nvidia.com", NVIDIA_GPU, extended="nvidia.com/gpu"), "gpu.nvidia.com")
    assert read.expressions == (NVIDIA_GPU,) and read.extended_resource_name == "nvidia.com/gpu"
    assert device_class_refusals({"kind": "DeviceClass", "apiVersion": "example.com/v1", "spec": {
        "selectors": [{"cel": {"expression": "devce"}}]}}) == []
