"""pulumi-azure-native's `Check`, over plain dicts and the shapes of `azure_schema.py`: the provider's
`validateType`/`validateProperty` (pulumi/pulumi-azure-native `provider/pkg/provider/provider.go`), with its
messages word for word, so a refusal reads here as it would from the real provider.

What the provider checks, and so what this checks: required properties (after auto-naming and the default
location), each value's JSON type against the property's (a string where a number belongs: "should be of
type 'integer' but got a string"), whole numbers for integers, string length and pattern, number range,
each item of an array and each property of a typed object, and the URL (path) parameters with their own
rules. What it does not check, as the provider does not: enum values (the generator types an enum as a plain
string: `gen/properties.go`, `isEnum`), booleans (no case for them), the values of a map, and anything
unknown until apply (a `resource.Computed` is skipped).
"""

from __future__ import annotations

import math
import re
from typing import Any

from provider import UNKNOWN

Failure = str


def _go_float(value: float) -> str:
    """Go's `%f`."""
    return f"{value:f}"


def validate_type(context: str, type_name: str, values: dict[str, Any], types: dict[str, Any]) -> list[Failure]:
    shape = types[type_name]
    failures = []
    for name in shape["required"]:
        if name not in values:
            where = f"{context}.{name}" if context else name
            reason = f"missing required property '{where}'"
            if where == "location":
                reason += (". Either set it explicitly or configure it with 'pulumi config set azure-native:location "
                           "<value>'.")
            failures.append(reason)
    for name, prop in sorted(shape["properties"].items()):
        if name in values:
            failures += validate_property(f"{context}.{name}" if context else name, prop, values[name], types)
    return failures


def validate_property(context: str, prop: dict[str, Any], value: Any, types: dict[str, Any]) -> list[Failure]:
    kind = prop.get("type", "any")
    if value == UNKNOWN or kind == "any" or value is None:
        return []
    if isinstance(value, dict):
        ref = prop.get("ref")
        return validate_type(context, ref, value, types) if ref else []
    if isinstance(value, list):
        if kind != "array":
            return [f"'{context}' should be of type '{kind}' but got an array"]
        failures = []
        for index, item in enumerate(value):
            failures += validate_property(f"{context}[{index}]", prop.get("items") or {}, item, types)
        return failures
    if isinstance(value, bool):
        return []
    if isinstance(value, str):
        if kind != "string":
            return [f"'{context}' should be of type '{kind}' but got a string"]
        return string_failures(context, prop, value)
    if isinstance(value, (int, float)):
        if kind not in ("number", "integer"):
            return [f"'{context}' should be of type '{kind}' but got a number"]
        failures = []
        number = float(value)
        fraction = math.modf(abs(number))[0]
        if kind == "integer" and 1e-9 < fraction < 1.0 - 1e-9:
            failures.append(f"'{context}' must be an integer but got {_go_float(number)}")
        if "minimum" in prop and number < prop["minimum"]:
            failures.append(f"'{context}' is too low ({_go_float(number)} < {_go_float(prop['minimum'])})")
        if "maximum" in prop and number > prop["maximum"]:
            failures.append(f"'{context}' is too high ({_go_float(number)} > {_go_float(prop['maximum'])})")
        return failures
    return []


def string_failures(context: str, rule: dict[str, Any], value: str) -> list[Failure]:
    """Length and pattern, which the provider applies to empty strings too."""
    failures = []
    length = len(value.encode())  # Go's len(string) counts bytes
    if "minLength" in rule and length < rule["minLength"]:
        failures.append(f"'{context}' is too short ({length}): at least {rule['minLength']} characters required")
    if "maxLength" in rule and length > rule["maxLength"]:
        failures.append(f"'{context}' is too long ({length}): at most {rule['maxLength']} characters allowed")
    pattern = rule.get("pattern")
    if pattern:
        try:
            compiled = re.compile(pattern)
        except re.error:  # the provider skips a pattern Go cannot compile (pulumi-azure-native#164)
            compiled = None
        if compiled is not None and not compiled.search(value):
            failures.append(f"'{context}' does not match expression '{pattern}'")
    return failures


def validate_path_parameter(name: str, rule: dict[str, Any], value: Any) -> list[Failure]:
    """A URL parameter: its value against the operation's rules (provider.go: `validateProperty(name,
    param.Value, value)` over the PUT's path parameters, typed string)."""
    if value == UNKNOWN or value is None:
        return []
    if isinstance(value, (dict, list)):
        return [f"'{name}' should be of type 'string' but got {'an array' if isinstance(value, list) else 'an object'}"]
    if isinstance(value, bool):
        return []
    if not isinstance(value, str):
        return [f"'{name}' should be of type 'string' but got a number"]
    return string_failures(name, rule, value)
