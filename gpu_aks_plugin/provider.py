"""The gpu-aks package's provider: hosts `GpuCluster` as Pulumi's component host does, with one change.

`pulumi.provider.experimental.ComponentProvider` infers the schema from the annotations (token
`gpu-aks:index:GpuCluster`) and, before constructing (pulumi 3.272
`pulumi/provider/experimental/component.py`, `map_input_properties`), maps each input to its Python name, turns enum
strings into members (refusing unknown ones with its own message) and integers through `int()` (so
`minCount: 1.5` would silently become 1). GpuCluster's schema names are its config keys, so it
takes the inputs exactly as they arrived instead: the settings layer then sees what the caller sent
and refuses it with the stack config's own messages. Everything else (schema, state, errors) is the
SDK's, through its public methods.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pulumi
from gpu_aks_policies.limits import MAX_NAME_CHARS, MAX_SHOWN_CHARS
from gpu_aks_policies.terminal import escape_field, escape_text
from pulumi.errors import InputPropertiesError
from pulumi.provider import ConstructResult
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ComponentInitError, main

from components.gpu_cluster import GpuCluster, GpuClusterInputError
from components.settings import PROJECT

REPOSITORY = Path(__file__).resolve().parent.parent
COMPONENTS: list[type[pulumi.ComponentResource]] = [GpuCluster]


def package_version() -> str:
    """The release version: gpu-aks releases the program, the pack and this package under one tag
    (CHANGELOG.md), and `pyproject.toml` carries its number."""
    with (REPOSITORY / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


def without_null_enum_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with no enum value's `description: null`.

    The SDK writes every enum value as `{"name", "value", "description": None}` (pulumi 3.272
    `pulumi/provider/experimental/schema.py`, `EnumValue.to_json`; the same at pulumi/pulumi
    1b5949891b3cefcb9974752b24a5ecef0acc86c8), while Pulumi's package metaschema
    (`pkg/codegen/schema/pulumi.json`, copied in tests/fixtures/pulumi/) allows only a string there:
    gpu-aks 0.3.1's schema failed it 20 times for its 69 enum values. An absent description is valid.
    """
    for type_def in schema.get("types", {}).values():
        for value in type_def.get("enum", []):
            if value.get("description", "") is None:
                del value["description"]
    return schema


class GpuAksProvider(ComponentProvider):
    def __init__(self, version: str) -> None:
        super().__init__(COMPONENTS, PROJECT, version=version)
        assert self.schema is not None  # ComponentProvider always infers one
        self.schema = json.dumps(without_null_enum_descriptions(json.loads(self.schema)))
        self._by_name = {component.__name__: component for component in COMPONENTS}
        self._definitions = Analyzer(PROJECT).analyze(COMPONENTS)["component_definitions"]

    def construct(self, name: str, resource_type: str, inputs: pulumi.Inputs,
                  options: pulumi.ResourceOptions | None = None) -> ConstructResult:
        # The SDK's own checks raise plain exceptions, which its server sends back with a Python
        # traceback and the type token as written (controls, megabytes): refused here instead, as bad input.
        # (An empty list of property errors, not None: pulumi 3.272's server sends no status without one.)
        package, _, component_name = resource_type.partition(":index:") if ":index:" in resource_type else \
            resource_type.partition("::")
        component = self._by_name.get(component_name) if package == PROJECT else None
        if component is None:
            raise InputPropertiesError(f"'{escape_field(resource_type, MAX_SHOWN_CHARS)}' is not a component of {PROJECT}; "
                                       f"it has {', '.join(f'{PROJECT}:index:{known}' for known in self._by_name)}", [])
        if not name or len(name) > MAX_NAME_CHARS or not name.isprintable() or escape_text(name) != name:
            # The name is in every child's URN and name, which the engine prints as they are: no control,
            # no invisible character and no workflow command (`##[` anywhere, `::` first; `escape_text`).
            raise InputPropertiesError(f"the name '{escape_field(name, MAX_SHOWN_CHARS)}' of a {component_name} must be 1 "
                                       f"to {MAX_NAME_CHARS} printable characters that a CI log shows as they are "
                                       "(no `::` first, no `##` followed by `[`)", [])
        try:
            # Every hosted component takes (name, args, opts), as the SDK's host calls them.
            instance = component(name, dict(inputs), options)  # type: ignore[arg-type]
        except GpuClusterInputError as error:
            # Reported per property, as the engine reports any provider's bad inputs.
            raise error.properties_error() from None
        except Exception as error:
            raise ComponentInitError(error) from error
        return ConstructResult(instance.urn, self.get_state(instance, self._definitions[component_name]))


def serve(args: list[str]) -> None:
    """Start the gRPC provider, print its port and serve until the engine stops it."""
    main(GpuAksProvider(package_version()), args)
