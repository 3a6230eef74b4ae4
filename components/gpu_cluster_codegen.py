"""Writes `components/gpu_cluster_args.py`, the typed inputs of `GpuCluster`, from the config-key
declarations (`components/settings/`, `policies/declarations.py`), and
`components/gpu_cluster_outputs.py`, its typed outputs, from the outputs contract's dataclasses
(`policies/contract.py`: each field's JSON name, type and documentation).

The component's inputs are the stack config's keys, spelled the same, with the same nesting, types,
allowed values and descriptions: Pulumi's component host reads the generated TypedDicts (their
annotations and the docstring under each field) to build the package schema every SDK is generated
from. Regenerate it and the schema snapshot after adding or changing a config key:

    venv/bin/python -m gpu_aks_plugin.schema

`tests/test_component_package.py` fails while either committed file is stale. A key declared as an
`object` with a structure of its own declares it beside the key (`Key.shape`, e.g. a pool kind's keys in
its own module), or, for the cluster's keys typed from AKS's API, has an entry in STRUCTURED_KEYS (nothing
is typed Any). No pool kind's key is named here.

Every field is plain (no `pulumi.Input`): the values decide which resources exist (how many pools,
whether there is a device plugin), so they must be known when the program runs, exactly as stack
config is. The schema marks them `plain`, and each SDK asks for a prompt value instead of accepting
an output of another resource and failing later.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from gpu_aks_policies import contract_v2
from gpu_aks_policies.declarations import Document, Key, ListOf, Section, Shape
from gpu_aks_policies.fields import json_fields
from gpu_aks_policies.pools import model as pool_model

from components.aks_api import API_VERSION, AUTOSCALER_SETTINGS, EXPANDERS
from components.platform_settings import DOCUMENT
from components.settings import DEFAULT_AUTOSCALER_PROFILE
from components.settings.access import ADMIN_PRINCIPAL_TYPES

ARGS_MODULE = Path(__file__).resolve().parent / "gpu_cluster_args.py"
OUTPUTS_MODULE = Path(__file__).resolve().parent / "gpu_cluster_outputs.py"


@dataclass(frozen=True)
class EnumSpec:
    name: str
    doc: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class FieldSpec:
    """One input: `key` is the config key (and the schema property), `annotation` its Python type."""

    key: str
    annotation: str
    doc: str
    required: bool = False
    #: The config key when it is not the schema property (the autoscaler's kebab-case keys).
    config_key: str | None = None


@dataclass(frozen=True)
class TypeSpec:
    name: str
    doc: str
    fields: tuple[FieldSpec, ...]
    #: Where the type sits in the config (`cluster.autoScalerProfile`), for keys spelled differently.
    path: str = ""


@dataclass(frozen=True)
class ArgsModel:
    enums: tuple[EnumSpec, ...]
    #: Nested types first, the top-level args type last.
    types: tuple[TypeSpec, ...]


# --- The model: the config-key declarations ------------------------------------------------------------

GPU_CLUSTER_DOC = "The inputs of GpuCluster: the gpu-aks stack config keys, spelled and nested the same."
LOCATION = FieldSpec("location", "str", "The Azure region of the cluster and its resource group (the stack "
                     "config's `azure-native:location`). Required.", required=True)
_PLAIN_TYPES = {"string": "str", "boolean": "bool", "integer": "int", "number": "float"}


class CodegenError(ValueError):
    """A declaration the generator cannot type."""


def camel_from_kebab(key: str) -> str:
    head, *rest = key.split("-")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _pascal(name: str) -> str:
    name = name.removesuffix("[]")
    return name[:1].upper() + name[1:]


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _described(key: Key) -> str:
    doc = key.doc.rstrip()
    doc += "" if doc.endswith(".") else "."
    if key.required:
        doc += " Required."
    elif key.default_doc:
        doc += f" Default: {key.default_doc}."
    if key.create_only:
        doc += " Create-only: a change replaces the resource."
    if key.secret:
        doc += " Secret."
    return doc


class _Builder:
    """Walks the declarations and names the types and enums they need."""

    def __init__(self) -> None:
        self.enums: dict[str, EnumSpec] = {}
        self.types: list[TypeSpec] = []
        self.type_names: set[str] = {"GpuClusterArgs"}
        #: A section declared under two keys (`sharing` of gpuPools and gpuNodePools) is one type.
        self.sections: dict[int, str] = {}

    def _name(self, wanted: str, parent: str) -> str:
        return wanted if wanted not in self.type_names and wanted not in self.enums else parent + wanted

    def enum(self, key_name: str, values: tuple[str, ...], parent: str, path: str) -> str:
        base = _pascal(key_name)
        # A one-word key ("driver", "expander") says little alone: name it after its section.
        wanted = base if any(c.isupper() for c in key_name) else parent + base
        existing = self.enums.get(wanted)
        if existing is not None and existing.values == values:
            return wanted
        name = wanted if existing is None and wanted not in self.type_names else self._name(parent + base, parent)
        self.enums[name] = EnumSpec(name, f"The values `{path}` allows.", values)
        return name

    def key_field(self, key: Key, parent: str, path: str) -> FieldSpec:
        if key.shape is not None:
            return FieldSpec(key.name, self.shape_type(key.shape, parent, path), _described(key), key.required)
        structured = STRUCTURED_KEYS.get(path.split(":", 1)[-1])
        if structured is not None:
            return FieldSpec(key.name, structured(self, parent), _described(key), key.required)
        if key.type in _PLAIN_TYPES:
            annotation = self.enum(key.name, key.allowed, parent, path) if key.allowed else _PLAIN_TYPES[key.type]
        elif key.type == "list of strings":
            annotation = (f"list[{self.enum(_singular(key.name), key.allowed, parent, path)}]" if key.allowed
                          else "list[str]")
        elif key.type == "list of integers":
            annotation = "list[int]"
        elif key.type == "map of strings":
            annotation = "dict[str, str]"
        elif key.type == "map of integers":
            annotation = "dict[str, int]"
        else:
            raise CodegenError(f"{path} is declared as {key.type!r}: declare its structure beside it (Key.shape) "
                               "so GpuCluster's inputs can type it (no input may be typed Any)")
        return FieldSpec(key.name, annotation, _described(key), key.required)

    def shape_type(self, shape: Shape, parent: str, path: str) -> str:
        """An `object` key's declared `Shape`: one type, made once however many keys share it."""
        name = self._name(shape.type_name, parent)
        if name not in self.type_names:
            self.type_names.add(name)
            fields = tuple(self.key_field(key, name, f"{path}.{key.name}") for key in shape.keys)
            self.types.append(TypeSpec(name, shape.doc, fields))
        return name

    def section_type(self, section: Section, type_name: str, path: str) -> str:
        if id(section) in self.sections:
            return self.sections[id(section)]
        name = self._name(type_name, "")
        self.type_names.add(name)
        self.sections[id(section)] = name
        fields = tuple(self.item_field(section.declared(key), name, f"{path}.{key}" if path else key)
                       for key in section.key_names)
        self.types.append(TypeSpec(name, section.doc, fields))
        return name

    def item_field(self, item: Key | Section | ListOf, parent: str, path: str) -> FieldSpec:
        if isinstance(item, Key):
            return self.key_field(item, parent, path)
        if isinstance(item, Section):
            return FieldSpec(item.name, self.section_type(item, _pascal(item.name), path), item.doc)
        element = self.section_type(item.item, _pascal(_singular(item.name)), path + "[]")
        return FieldSpec(item.name, f"list[{element}]", item.doc)


def _autoscaler_profile(builder: _Builder, parent: str) -> str:
    """`cluster.autoScalerProfile`: AKS's kebab-case keys (components/aks_api.py AUTOSCALER_SETTINGS) as
    camelCase properties, each typed as the API types it."""
    fields = []
    for key, setting in AUTOSCALER_SETTINGS.items():
        annotation = (builder.enum("expander", EXPANDERS, "AutoScalerProfile", "cluster.autoScalerProfile.expander")
                      if key == "expander" else setting.wire_type.__name__)
        default = DEFAULT_AUTOSCALER_PROFILE.get(key)
        doc = f"AKS autoscaler setting `{key}`: {setting.describe}." + (f" gpu-aks's default: {default}."
                                                                        if default is not None else "")
        fields.append(FieldSpec(camel_from_kebab(key), annotation, doc, config_key=key))
    name = builder._name("AutoScalerProfile", parent)
    builder.type_names.add(name)
    builder.types.append(TypeSpec(name, f"Cluster autoscaler settings, typed as AKS API {API_VERSION} types them; "
                                        "merged over gpu-aks's defaults.", tuple(fields), "cluster.autoScalerProfile"))
    return name


def _object_list(type_name: str, doc: str, fields: Callable[[_Builder, str], tuple[FieldSpec, ...]]
                 ) -> Callable[[_Builder, str], str]:
    """A key parsed as a list of small objects (`parse` in its declaration): the list of a named type."""
    def typed(builder: _Builder, parent: str) -> str:
        name = builder._name(type_name, parent)
        if name not in builder.type_names:
            builder.type_names.add(name)
            builder.types.append(TypeSpec(name, doc, fields(builder, name)))
        return f"list[{name}]"
    return typed


def _cluster_admin_fields(builder: _Builder, parent: str) -> tuple[FieldSpec, ...]:
    return (FieldSpec("objectId", "str", "The principal's Azure AD object ID (a GUID). Required.", required=True),
            FieldSpec("principalType", builder.enum("principalType", ADMIN_PRINCIPAL_TYPES, parent,
                                                    "access.clusterAdmins[].principalType"),
                      "What the principal is; Azure refuses a role assignment whose type does not match. Required.",
                      required=True))


def _date_span_fields(builder: _Builder, parent: str) -> tuple[FieldSpec, ...]:
    return (FieldSpec("start", "str", "The first day nothing may start, YYYY-MM-DD. Required.", required=True),
            FieldSpec("end", "str", "The last day nothing may start, YYYY-MM-DD. Required.", required=True))


_NOT_ALLOWED_DATES = _object_list("DateSpan", "A span of dates on which no maintenance may start.", _date_span_fields)


#: Keys declared as an object with a structure of their own (a `parse` function): how to type them.
STRUCTURED_KEYS: dict[str, Callable[[_Builder, str], str]] = {
    "cluster.autoScalerProfile": _autoscaler_profile,
    "access.clusterAdmins": _object_list("ClusterAdmin", "A principal granted AKS RBAC Cluster Admin on the cluster.",
                                         _cluster_admin_fields),
    "maintenance.autoUpgrade.notAllowedDates": _NOT_ALLOWED_DATES,
    "maintenance.nodeOSUpgrade.notAllowedDates": _NOT_ALLOWED_DATES,
}


def model(document: Document = DOCUMENT) -> ArgsModel:
    """GpuCluster's inputs from the config-key declarations: a type per section, an enum per closed set,
    `location` for `azure-native:location`."""
    builder = _Builder()
    fields = [LOCATION]
    for name in document.root.key_names:
        field_spec = builder.item_field(document.root.declared(name), "", name)
        fields.append(replace(field_spec, doc=f"{field_spec.doc.rstrip('.')}. Stack config key: "
                                                 f"`{document.namespace}:{name}`."))
    builder.types.append(TypeSpec("GpuClusterArgs", GPU_CLUSTER_DOC, tuple(fields)))
    return ArgsModel(tuple(builder.enums.values()), tuple(builder.types))


# --- Rendering --------------------------------------------------------------------------------------

_HEADER = '''"""The typed inputs of `GpuCluster`: one field per gpu-aks config key, with its description.

GENERATED from the config-key declarations by `venv/bin/python -m gpu_aks_plugin.schema`; do not edit.
No `from __future__ import annotations`: Pulumi's component host reads these annotations as objects.
"""

# ruff: noqa: E501
from enum import StrEnum
from typing import NotRequired, Required, TypedDict'''


def member_name(value: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", value).strip("_").upper() or "EMPTY"
    name = "_" + name if name[0].isdigit() else name
    return name + "_" if keyword.iskeyword(name) else name


def _quoted(text: str) -> str:
    return '"""' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""'


def render(args_model: ArgsModel) -> str:
    lines = [_HEADER]
    for enum in args_model.enums:
        lines += ["", "", f"class {enum.name}(StrEnum):", f"    {_quoted(enum.doc)}", ""]
        lines += [f"    {member_name(value)} = {json.dumps(value)}" for value in enum.values]
    for spec in args_model.types:
        lines += ["", "", f"class {spec.name}(TypedDict, total=False):", f"    {_quoted(spec.doc)}", ""]
        for field_spec in spec.fields:
            annotation = f"Required[{field_spec.annotation}]" if field_spec.required else \
                f"NotRequired[{field_spec.annotation}]"
            lines += [f"    {field_spec.key}: {annotation}", f"    {_quoted(field_spec.doc)}"]
    config_keys = {spec.path: {f.key: f.config_key for f in spec.fields if f.config_key and f.config_key != f.key}
                   for spec in args_model.types}
    config_keys = {path: keys for path, keys in config_keys.items() if keys}
    lines += ["", "", "#: Properties whose stack config key is spelled differently, by their object's path in the config.",
              "CONFIG_KEYS: dict[str, dict[str, str]] = {"]
    for name, keys in config_keys.items():
        lines.append(f"    {json.dumps(name)}: {{")
        lines += [f"        {json.dumps(key)}: {json.dumps(config_key)}," for key, config_key in keys.items()]
        lines.append("    },")
    lines += ["}", ""]
    return "\n".join(lines)


# --- The outputs: the contract's pool entries as TypedDicts -----------------------------------------

#: Contract dataclass -> the TypedDict GpuCluster's outputs name it by (the package schema's type names).
OUTPUT_TYPES: dict[type, str] = {pool_model.OfferPrice: "OfferPriceContract", pool_model.Allocatable: "AllocatableContract",
                                 pool_model.PoolClaims: "PoolClaimsContract",
                                 contract_v2.GpuOfferEntry: "GpuOfferContract", pool_model.PoolSharing: "PoolSharingContract",
                                 contract_v2.CpuPoolEntry: "CpuPoolContract", contract_v2.GpuPoolEntry: "GpuPoolContract",
                                 pool_model.Offer: "OfferContract", pool_model.Pool: "PoolContract"}
#: The contract types a toleration as a map of strings; the schema gives it its keys.
TOLERATION = TypeSpec("Toleration", "A Kubernetes toleration of one of the pool's taints.", (
    FieldSpec("key", "str", "The taint key.", required=True),
    FieldSpec("operator", "str", "Equal (with a value) or Exists.", required=True),
    FieldSpec("value", "str", "The taint value, when the taint has one."),
    FieldSpec("effect", "str", "The taint effect, e.g. NoSchedule.", required=True),
))


def output_annotation(annotation: str, json_name: str) -> tuple[str, bool]:
    """A contract field's annotation (as `policies/contract.py` writes it) as the TypedDict's, and
    whether the field is always there (a field that may be null is NotRequired)."""
    required = not annotation.endswith(" | None")
    annotation = annotation.removesuffix(" | None").replace("Mapping[str, str]", "dict[str, str]")
    if json_name == "tolerations":
        return "list[Toleration]", required
    names = {cls.__name__: name for cls, name in OUTPUT_TYPES.items()}
    if annotation.startswith("tuple[") and annotation.endswith(", ...]"):
        inner, _ = output_annotation(annotation[len("tuple["):-len(", ...]")], "")
        return f"list[{inner}]", required
    if annotation in names:
        return names[annotation], required
    if typing.get_origin(getattr(pool_model, annotation, getattr(contract_v2, annotation, None))) is typing.Literal:
        return "str", required  # a closed set in the contract; the documentation names the values
    assert annotation in ("str", "int", "float", "bool", "dict[str, str]"), f"no output type for {annotation}"
    return annotation, required


def outputs_model() -> tuple[TypeSpec, ...]:
    """The output TypedDicts, nested types first, from the contract's dataclasses."""
    specs = [TOLERATION]
    for cls, name in OUTPUT_TYPES.items():
        fields = []
        for field in json_fields(cls):
            annotation, required = output_annotation(str(field.type), field.metadata["json"])
            fields.append(FieldSpec(field.metadata["json"], annotation, field.metadata["doc"], required=required))
        specs.append(TypeSpec(name, " ".join((cls.__doc__ or "").split()), tuple(fields)))
    return tuple(specs)


_OUTPUTS_HEADER = '''"""The typed outputs of `GpuCluster`: the outputs contract's pool entries, field by field.

GENERATED from the contract's dataclasses (policies/contract.py) by `venv/bin/python -m gpu_aks_plugin.schema`;
do not edit. No `from __future__ import annotations`: Pulumi's component host reads these annotations as objects.
"""

# ruff: noqa: E501
from typing import NotRequired, TypedDict'''


def render_outputs(specs: tuple[TypeSpec, ...]) -> str:
    lines = [_OUTPUTS_HEADER]
    for spec in specs:
        lines += ["", "", f"class {spec.name}(TypedDict):", f"    {_quoted(spec.doc)}", ""]
        for field_spec in spec.fields:
            annotation = field_spec.annotation if field_spec.required else f"NotRequired[{field_spec.annotation}]"
            lines += [f"    {field_spec.key}: {annotation}", f"    {_quoted(field_spec.doc)}"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ARGS_MODULE.write_text(render(model()))
    OUTPUTS_MODULE.write_text(render_outputs(outputs_model()))
    print(f"wrote {ARGS_MODULE.name}, {OUTPUTS_MODULE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
