"""Typed JSON fields: a frozen dataclass whose fields carry their JSON name, kind and documentation, as
Karpenter's API types carry theirs (kubernetes-sigs/karpenter `pkg/apis/v1/nodepool.go`: `Limits Limits
json:"limits,omitempty"` with its validation markers, the CRD schema generated from the struct).

The pool model (`pools/model.py`: `Pool`, `Offer`) and the outputs contract (`contract.py`,
`contract_v2.py`) declare their fields here once; reading (`read_fields`, naming the key of each
problem), writing (`write_fields`), the JSON Schema (`object_schema`) and the reference tables
(`field_table`) all derive from the declarations. A dataclass field without a JSON name is internal:
read, written and documented nowhere. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, get_args

from .limits import (
    MAX_CONTRACT_HOURLY_PRICE,
    MAX_NODE_AMOUNT,
    MAX_POOL_COUNT,
    is_finite_number,
    is_whole,
)
from .quantities import shown

__all__ = ["COUNT", "FLAG", "LABELS", "OPTIONAL_AMOUNT", "OPTIONAL_COUNT", "OPTIONAL_TEXT", "PRICE", "REPLICAS",
           "NAMES", "RESOURCE", "TAINTS", "TEXT", "TOLERATIONS", "ZONES", "Choices", "Kind", "Nested", "Object", "Objects",
           "Pools", "Version", "Written", "choice", "field_table", "json_field", "json_fields", "json_names",
           "object_schema", "one_of", "read_fields", "write_fields"]


# --- Field kinds -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """How one field is read, written and described."""

    schema: Mapping[str, Any]
    #: What a reader expects, for "expected ..." messages.
    expected: str
    #: Say what was found ("got 1.5") after the expectation.
    show_value: bool = True

    def read(self, value: Any) -> Any:
        """The typed value, or raises ValueError when the value is not of this kind."""
        raise NotImplementedError

    def write(self, value: Any) -> Any:
        return value


class _Text(Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError
        return value


class _OptionalText(Kind):
    def read(self, value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise ValueError
        return value


class _Choice(Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, str) or value not in self.schema["enum"]:
            raise ValueError
        return value


class _Count(Kind):
    def read(self, value: Any) -> Any:
        if not is_whole(value) or not self.schema["minimum"] <= value <= self.schema["maximum"]:
            raise ValueError
        return int(value)


class _Flag(Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError
        return value


class _Texts(Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError
        return tuple(value)

    def write(self, value: Any) -> Any:
        return list(value)


class _TextMap(Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ValueError
        return dict(value)

    def write(self, value: Any) -> Any:
        return dict(value)


class _TextMaps(Kind):
    def read(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(
                isinstance(item, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in item.items())
                for item in value):
            raise ValueError
        return tuple(dict(item) for item in value)

    def write(self, value: Any) -> Any:
        return [dict(item) for item in value]


class Choices(Kind):
    """A non-empty list of distinct values of one closed set."""

    def read(self, value: Any) -> Any:
        allowed = self.schema["items"]["enum"]
        if not isinstance(value, list) or not value or len(set(map(str, value))) != len(value) or \
                not all(isinstance(item, str) and item in allowed for item in value):
            raise ValueError
        return tuple(value)

    def write(self, value: Any) -> Any:
        return list(value)


class Version(Kind):
    def read(self, value: Any) -> Any:
        return int(value)


class Pools(Kind):
    """A map of pool names to pools (read by the contract, which names each pool's problems)."""

    def __init__(self, pool: type) -> None:
        super().__init__({"type": "object", "additionalProperties": {"$ref": f"#/$defs/{pool.__name__}"}},
                         "a map of pool names to pools")

    def write(self, value: Any) -> Any:
        return {name: write_fields(pool) for name, pool in value.items()}


class Nested(Kind):
    """A field holding typed objects of its own; `read_fields` reads it through `read_nested`, which
    names each problem inside it (`gpuPools.t4.offers[0].perNode`). An object's class may refuse what
    its fields say together (`problems(key)`, each problem named by key)."""

    def read_nested(self, value: Any, key: str, problems: list[str]) -> Any:
        raise NotImplementedError


class UnreadableError(ValueError):
    """An object whose fields had problems, each already named in `problems`: it is not built (a field it
    needs may be missing), and nothing more is said of it."""


def _read_object(cls: type, value: Mapping[str, Any], key: str, problems: list[str]) -> Any:
    values = read_complete(cls, value, f"{key}.", problems)
    if values is None:
        raise UnreadableError
    read = cls(**values)
    problems.extend(read.problems(key) if hasattr(read, "problems") else ())
    return read


class Object(Nested):
    """One typed object, or null."""

    def __init__(self, cls: type) -> None:
        super().__init__({"oneOf": [{"type": "null"}, {"$ref": f"#/$defs/{cls.__name__}"}]},
                         f"null or an object ({', '.join(json_names(cls))})", show_value=False)
        self.cls = cls

    def read_nested(self, value: Any, key: str, problems: list[str]) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError
        return _read_object(self.cls, value, key, problems)

    def write(self, value: Any) -> Any:
        return write_fields(value)


class Objects(Nested):
    """A non-empty list of typed objects."""

    def __init__(self, cls: type) -> None:
        super().__init__({"type": "array", "minItems": 1, "items": {"$ref": f"#/$defs/{cls.__name__}"}},
                         f"a non-empty list of objects ({', '.join(json_names(cls))})", show_value=False)
        self.cls = cls

    def read_nested(self, value: Any, key: str, problems: list[str]) -> Any:
        if not isinstance(value, list) or not value or not all(isinstance(item, Mapping) for item in value):
            raise ValueError
        return tuple(_read_object(self.cls, item, f"{key}[{index}]", problems) for index, item in enumerate(value))

    def write(self, value: Any) -> Any:
        return [write_fields(item) for item in value]


class _Price(Kind):
    """A list price: a finite number from 0 up, or null (no price known)."""

    def read(self, value: Any) -> Any:
        if not is_finite_number(value) or not 0 <= value <= self.schema["maximum"]:
            raise ValueError
        return float(value)


_STRING_MAP_SCHEMA = {"type": "object", "additionalProperties": {"type": "string"}}
TEXT = _Text({"type": "string"}, "a string")
OPTIONAL_TEXT = _OptionalText({"type": ["string", "null"]}, "a string or null")
COUNT = _Count({"type": "integer", "minimum": 0, "maximum": MAX_POOL_COUNT}, f"a whole number from 0 to {MAX_POOL_COUNT}")
OPTIONAL_COUNT = _Count({"type": ["integer", "null"], "minimum": 0, "maximum": MAX_POOL_COUNT},
                        f"a whole number from 0 to {MAX_POOL_COUNT}, or null")
#: A node's bytes or millicores, or null (not known).
OPTIONAL_AMOUNT = _Count({"type": ["integer", "null"], "minimum": 0, "maximum": MAX_NODE_AMOUNT},
                         f"a whole number from 0 to {MAX_NODE_AMOUNT} or null")
REPLICAS = _Count({"type": "integer", "minimum": 1, "maximum": MAX_POOL_COUNT}, f"a whole number from 1 to {MAX_POOL_COUNT}")
FLAG = _Flag({"type": "boolean"}, "true or false")
TAINTS = _Texts({"type": "array", "items": {"type": "string"}}, "a list of key=value:Effect strings", show_value=False)
LABELS = _TextMap(_STRING_MAP_SCHEMA, "a map of label keys to values", show_value=False)
TOLERATIONS = _TextMaps({"type": "array", "items": _STRING_MAP_SCHEMA},
                        "a list of tolerations ({key, operator, value, effect} strings)")
RESOURCE = _Text({"type": "string"}, "a resource name such as nvidia.com/gpu", show_value=False)
PRICE = _Price({"type": ["number", "null"], "minimum": 0, "maximum": MAX_CONTRACT_HOURLY_PRICE},
               f"a price from 0 to {MAX_CONTRACT_HOURLY_PRICE}, or null")
NAMES = _Texts({"type": "array", "items": {"type": "string"}}, "a list of names")
ZONES = _Texts({"type": "array", "items": {"type": "string"}}, "a list of zone names")


def json_field(json_name: str, kind: Kind, doc: str, default: Any = MISSING, *, reader_needs: bool = False,
               program: bool = False, since: int | None = None, absent: Any = MISSING, init: bool = True) -> Any:
    """A field with its JSON name, kind and documentation. `reader_needs`: an object without it is
    not readable (the tools need it). `program`: written by the Pulumi layer (cluster outputs), not
    from settings; `since`: the version that added it. Either is left out of `write_fields` while
    unset, and not required by the schema. `absent`: what a reader takes when the JSON lacks the
    field, where the dataclass has no default (a fact the model always has, a document may not).
    `init=False`: a field the class derives from its others; a reader checks its type and the class
    derives it again."""
    metadata = {"json": json_name, "kind": kind, "doc": doc, "reader_needs": reader_needs,
                "program": program or since is not None, "absent": absent}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=metadata, init=init)
    return field(default=default, metadata=metadata, init=init)


def choice(values: tuple[str, ...], expected: str, nullable: bool = False) -> Kind:
    """One of `values` (`nullable`: or null)."""
    if nullable:
        return _Choice({"type": ["string", "null"], "enum": [*values, None]}, expected)
    return _Choice({"type": "string", "enum": list(values)}, expected)


def one_of(closed: Any) -> Kind:
    """A field whose value is one of a Literal's values."""
    values = get_args(closed)
    return choice(values, " or ".join(values) if len(values) == 2 else "one of " + ", ".join(values))


def json_fields(cls: Any) -> list[Field[Any]]:
    """The fields of `cls` that have a JSON name (the others are internal)."""
    return [spec for spec in fields(cls) if "json" in spec.metadata]


def json_names(cls: type) -> list[str]:
    return [spec.metadata["json"] for spec in json_fields(cls)]


class Written:
    def to_json(self) -> dict[str, Any]:
        """The JSON object as the contract writes it."""
        return write_fields(self)


def read_fields(cls: type, raw: Mapping[str, Any], prefix: str, problems: list[str], skip: tuple[str, ...] = (),
                defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The keyword arguments of `cls` read from `raw`; each problem is appended to `problems`, named by
    its key (`prefix` + the JSON name)."""
    values: dict[str, Any] = dict(defaults or {})
    for spec in json_fields(cls):
        name, kind = spec.metadata["json"], spec.metadata["kind"]
        if name in skip:
            continue
        if name not in raw:
            if spec.metadata["reader_needs"]:
                problems.append(f"{prefix.rstrip('.')} has no {name}: this is not a gpu-aks outputs contract")
            if spec.metadata["absent"] is not MISSING and spec.name not in values:
                values[spec.name] = spec.metadata["absent"]
            continue
        value = raw[name]
        if value is None and (spec.default is None or spec.metadata["absent"] is None):
            values[spec.name] = None
            continue
        try:
            values[spec.name] = kind.read_nested(value, f"{prefix}{name}", problems) if isinstance(kind, Nested) \
                else kind.read(value)
        except UnreadableError:
            continue
        except ValueError:
            got = f", got {shown(value)}" if kind.show_value else ""
            problems.append(f"{prefix}{name}: expected {kind.expected}{got}")
    # A derived field's type is checked above; the class derives its value again.
    return {name: value for name, value in values.items() if _init(cls, name)}


def read_complete(cls: type, raw: Mapping[str, Any], prefix: str, problems: list[str],
                  defaults: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """`read_fields`, or None when reading added a problem: an object with one is not built (a field it needs
    may be missing, and its class would raise), and each problem is already named."""
    before = len(problems)
    values = read_fields(cls, raw, prefix, problems, defaults=defaults)
    return None if len(problems) > before else values


def _init(cls: type, name: str) -> bool:
    spec = cls.__dataclass_fields__.get(name)  # type: ignore[attr-defined]
    return spec is None or spec.init


def write_fields(obj: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    document = {}
    for spec in json_fields(obj):
        name = spec.metadata["json"]
        value = getattr(obj, spec.name)
        if name in skip or (spec.metadata["program"] and value is None):
            continue
        document[name] = None if value is None else spec.metadata["kind"].write(value)
    return document


# --- Derived documents -------------------------------------------------------------------------


def object_schema(cls: type, description: str, additional: bool) -> dict[str, Any]:
    properties = {}
    for spec in json_fields(cls):
        properties[spec.metadata["json"]] = {"description": spec.metadata["doc"], **spec.metadata["kind"].schema}
    required = [spec.metadata["json"] for spec in json_fields(cls) if not spec.metadata["program"]]
    return {"type": "object", "description": description, "properties": properties, "required": required,
            "additionalProperties": additional}


def field_table(cls: type) -> list[str]:
    lines = ["| key | type | description |", "|---|---|---|"]
    for spec in json_fields(cls):
        kind = spec.metadata["kind"]
        lines.append(f"| `{spec.metadata['json']}` | {kind.expected} | {spec.metadata['doc']} |")
    return lines
