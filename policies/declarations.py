"""Config declarations: each key is declared once, and everything else is derived from it.

A `Key` is one declaration: its name in the stack (or policy config) file, its type, default, allowed
values or check, the API version or source it follows, one line of documentation and whether it is
secret. A `Section` (an object of keys) and a `ListOf` (a list of objects, such as node pools) are
declarations too, and a `Check` declares a rule across keys of one section. From these come:

* parsing: `Document.parse` reads raw values (already decoded from YAML/JSON) and reports *every*
  problem at once, each naming the key as the file spells it (`gpu-aks:gpuPools[gput4].minCount`),
  the bad value (masked as `[secret]` for secret keys) and what is allowed;
* the unknown-key check with its did-you-mean;
* defaults, static or computed from what was parsed before (`Default`);
* warnings (allowed, but worth a look);
* the reference page (`reference_markdown`) and a JSON Schema (`Section.json_schema`).

Parsing goes through a section's items in the order they are declared, so a `Check` placed after the
keys it reads sees their values; it runs only when those keys parsed cleanly (no knock-on errors). A
check across sections (one that asks about the document's pools) is declared `after_document`: it stays
where it is declared (and documented), and runs once the whole document has been read.
Objects are built once, at the end, from the parsed values (`Section.build`).

Standard library only and no Pulumi: the platform's settings (`components/settings/`) and the policy
pack's configuration use the same machinery.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from .limits import MAX_SHOWN_CHARS, clipped, is_whole
from .secrets import Redactor, secret_strings
from .terminal import escape_line, escape_text

__all__ = [
    "MISSING", "Check", "Default", "Document", "Key", "ListOf", "Problems", "Reader", "Section", "Shape", "bool_problem",
    "boolean", "choice", "describe", "is_whole_number", "one_of", "reference_markdown", "string_list_problem",
    "string_map_problem", "string_problem", "text",
]


def _closest(name: str, names: Collection[str]) -> list[str]:
    """The one name of `names` most like `name`, if any is close (difflib's measure), for "did you mean"."""
    import difflib  # only a misspelt key needs it: not imported by every start-up of the checker

    return difflib.get_close_matches(name, names, n=1, cutoff=0.6)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: A key that is absent from the file (a YAML `null` counts as absent too).
MISSING: Any = _Missing()
SECRET = "[secret]"


def describe(value: Any) -> str:
    """A value as the file would show it: strings quoted, everything else as JSON, at most MAX_SHOWN_CHARS."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, sort_keys=True, default=str)
        except TypeError:  # keys of mixed types (a program's dict, not JSON) have no order
            try:
                text = json.dumps(value, default=str)
            except (TypeError, ValueError, RecursionError):
                text = "<unprintable>"
        except (ValueError, RecursionError):
            text = "<unprintable>"
    return clipped(text, MAX_SHOWN_CHARS, 60)


# --- Problems ----------------------------------------------------------------------------------


#: The longest key path a problem names whole (real ones are well under 200 characters).
_LONGEST_PATH = 240


class Problems:
    """Collects problems and warnings; each names its key as the file spells it.

    `namespace` prefixes keys (`gpu-aks:`); a key that already has a namespace (`azure-native:location`)
    keeps it. `secret_sections` are top-level keys whose values are secret (a Pulumi secret config value
    is a whole top-level key): no message shows any value under them.
    """

    def __init__(self, namespace: str = "", secret_sections: Collection[str] = (),
                 secret_texts: Redactor | None = None) -> None:
        self.namespace = namespace
        self.secret_sections = set(secret_sections)
        #: The strings of the secret sections: redacted from every line, wherever a check quoted one
        #: (a value in its message, a map key in its path).
        self.redact = secret_texts or Redactor(())
        self.items: list[str] = []
        self.warnings: list[str] = []

    def full_key(self, key: str) -> str:
        # Namespaced when its top-level name is (`azure-native:location`); a colon further in is part of
        # a map key as written (`cluster.tags.a:b`).
        top = key.split(".", 1)[0].split("[", 1)[0]
        return key if ":" in top or not self.namespace else f"{self.namespace}:{key}"

    def add(self, key: str, message: str) -> None:
        self.items.append(self._line(key, message))

    def warn(self, key: str, message: str) -> None:
        self.warnings.append(self._line(key, message))

    def _line(self, key: str, message: str) -> str:
        # A key path holds map keys as written (`nodeLabels.<key>`), and a message may quote a value:
        # each problem stays one line with no control character and no workflow command (`##[`),
        # wherever it is printed or sent (the component provider hands paths to the engine, and the
        # program's RunError reaches the Pulumi CLI's output, which print them as they are); a key
        # path of megabytes (a hostile map key) is cut.
        path = self.full_key(key)
        if len(path) > _LONGEST_PATH:
            path = f"{path[:_LONGEST_PATH - 40]}… ({len(path)} characters)"
        if self.redact:
            path, message = self.redact.path(path), self.redact(message)
        return escape_text(escape_line(f"{path}: {message}"))

    def is_secret(self, key: str) -> bool:
        return key.split(":")[-1].split(".")[0].split("[")[0] in self.secret_sections

    def shown(self, key: str, value: Any, secret: bool = False) -> str:
        """The value for a message; never the value of a secret key."""
        return SECRET if secret or self.is_secret(key) else describe(value)

    def mapping(self, raw: Any, key: str) -> Mapping[str, Any]:
        if raw is None or raw is MISSING:
            return {}
        if not isinstance(raw, Mapping):
            self.add(key, f"expected an object of settings, got {self.shown(key, raw)}")
            return {}
        return raw

    def unknown_keys(self, raw: Mapping[Any, Any], key: str, allowed: Sequence[str]) -> None:
        for name in raw:
            if not isinstance(name, str):
                self.add(key, f"has a key that is not a string ({self.shown(key, name)}); keys are setting names")
            elif name not in allowed:
                close = _closest(name, allowed)
                hint = f"did you mean '{close[0]}'? " if close else ""
                self.add(f"{key}.{name}", f"unknown setting; {hint}allowed: {', '.join(allowed)}")


# --- Declarations ------------------------------------------------------------------------------

#: A check of one value: None when fine, else the problem, worded to follow the value
#: ("is not true or false").
ValueCheck = Callable[[Any], str | None]


@dataclass(frozen=True)
class Default:
    """A default computed when parsing, from what was parsed before it or the run's context."""

    compute: Callable[[Reader], Any]
    #: How the reference page shows it, e.g. "gpu-aks-<stack>".
    doc: str


@dataclass(frozen=True)
class Key:
    """One setting, declared once."""

    #: The name in the file (`minCount`).
    name: str
    #: One line for the reference page.
    doc: str
    #: The type as the reference page names it ("string", "integer", "list of strings", ...).
    type: str = "string"
    #: The default, in the file's form (converted like a given value), or a `Default`.
    default: Any = None
    #: Checks a given value; None means anything goes.
    check: ValueCheck | None = None
    #: Turns a checked value (and the default) into the settings value.
    convert: Callable[[Any], Any] | None = None
    #: The closed set of values (shown on the reference page; `choice` checks against it).
    allowed: tuple[str, ...] = ()
    #: The API version, model field or document the key follows.
    source: str = ""
    #: Never shown in any message or output.
    secret: bool = False
    #: The field of the built object; "" when the key only feeds checks or a custom build.
    attr: str = ""
    #: A reader for values with a structure of their own (a list of taints, a map of labels): it gets
    #: the raw value (or MISSING), reports problems through the `Reader` and returns the value.
    parse: Callable[[Reader, Any], Any] | None = None
    #: Azure fixes it at creation: changing it needs a new resource.
    create_only: bool = False
    #: There is no default: the file must give it (its `parse` or `check` refuses a missing value).
    required: bool = False
    #: The structure of an `object` key its `parse` reads (a named object of plain keys), declared beside
    #: it: GpuCluster's typed inputs and the package schema type the key from it.
    shape: Shape | None = None

    def default_for(self, reader: Reader) -> Any:
        value = self.default.compute(reader) if isinstance(self.default, Default) else self.default
        if isinstance(value, (list, dict)):
            value = json.loads(json.dumps(value))  # a fresh copy: declarations are shared
        return self.convert(value) if self.convert and value is not None else value

    @property
    def default_doc(self) -> str:
        if self.required:
            return "required"
        if isinstance(self.default, Default):
            return self.default.doc
        if self.default is None:
            return ""
        return self.default if isinstance(self.default, str) else json.dumps(self.default, sort_keys=True)


@dataclass(frozen=True)
class Shape:
    """An `object` key's structure: its keys (each a plain `Key`: name, doc, type, required) and the name
    and description of the type they make (`components/gpu_cluster_codegen.py` generates it)."""

    type_name: str
    doc: str
    keys: tuple[Key, ...]


@dataclass(frozen=True)
class Check:
    """A rule across keys of one section, declared among them: it runs where it stands in the section,
    and only when every key in `reads` parsed cleanly. It reports through `Reader.problem`,
    `Reader.reject` (problem, and the key falls back to its default) or `Reader.warn`."""

    run: Callable[[Reader], None]
    #: Keys (dotted paths inside the section) that must have parsed cleanly.
    reads: tuple[str, ...] = ()
    #: One line for the reference page.
    doc: str = ""
    #: Runs after the whole document has been read (`Document.parse`), not where it stands: a check that asks
    #: about other sections, the document's pools above all, sees them all; its problems join the others.
    after_document: bool = False


Item = Union[Key, "Section", "ListOf", Check]


@dataclass(frozen=True)
class Section:
    """An object of settings (`gpu-aks:cluster`, a pool, `aadProfile`)."""

    name: str
    doc: str
    items: tuple[Item, ...]
    #: Builds the settings object from a parsed `Reader` (extra keyword arguments are passed on);
    #: default: `cls` with every key's `attr`.
    build: Callable[..., Any] | None = None
    cls: Callable[..., Any] | None = None
    #: The keys' attrs land on the parent's object (`aadProfile.managed` -> `ClusterSettings.aad_enabled`).
    flatten: bool = False
    source: str = ""
    #: The order keys are listed in (messages, the reference page) when it is not the parse order.
    listed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parsed = [item.name for item in self.items if not isinstance(item, Check)]
        if len(set(parsed)) != len(parsed):
            raise ValueError(f"section {self.name} declares a key twice")
        if self.listed and sorted(self.listed) != sorted(parsed):
            raise ValueError(f"section {self.name}: listed {self.listed} is not an order of its keys {parsed}")

    @property
    def key_names(self) -> tuple[str, ...]:
        return self.listed or tuple(item.name for item in self.items if not isinstance(item, Check))

    @functools.cached_property
    def declared_names(self) -> frozenset[str]:
        """Every setting name declared in the section and below it (shapes' keys included)."""
        names: set[str] = set()
        pending: list[Section] = [self]
        while pending:
            section = pending.pop()
            for item in section.items:
                if isinstance(item, Check):
                    continue
                names.add(item.name)
                if isinstance(item, Section):
                    pending.append(item)
                elif isinstance(item, ListOf):
                    pending.append(item.item)
                elif item.shape is not None:
                    names.update(key.name for key in item.shape.keys)
        return frozenset(names)

    def declared(self, name: str) -> Key | Section | ListOf:
        return next(item for item in self.items if not isinstance(item, Check) and item.name == name)

    def parse(self, reader: Reader) -> None:
        """Read every item of the section from `reader.raw`, in declaration order."""
        reader.problems.unknown_keys(reader.raw, reader.key, self.key_names)
        self.parse_items(reader)

    def parse_items(self, reader: Reader) -> None:
        for item in self.items:
            if isinstance(item, Check) and item.after_document:
                reader.root.after_document.append((item, reader))
            elif isinstance(item, Check):
                if all(reader.ok(name) for name in item.reads):
                    item.run(reader)
            elif isinstance(item, Key):
                reader.read(item)
            elif isinstance(item, Section):
                child = reader.child(item, reader.raw.get(item.name, MISSING))
                item.parse(child)
            else:
                item.parse(reader)

    def attrs(self, reader: Reader) -> dict[str, Any]:
        """The built object's fields: each key's attr, flattened sections' keys and built child sections."""
        values: dict[str, Any] = {}
        for item in self.items:
            if isinstance(item, Key) and item.attr:
                values[item.attr] = reader.values[item.name]
            elif isinstance(item, Section):
                child = reader.children[item.name]
                if item.flatten:
                    values.update(item.attrs(child))
                elif item.cls or item.build:
                    values[_snake(item.name)] = child.build()
        return values

    def json_schema(self) -> dict[str, Any]:
        """A JSON Schema of the section (the shape and closed sets; semantic checks stay in `parse`)."""
        properties: dict[str, Any] = {}
        for item in self.items:
            if isinstance(item, Key):
                properties[item.name] = _key_schema(item)
            elif isinstance(item, Section):
                properties[item.name] = item.json_schema()
            elif isinstance(item, ListOf):
                properties[item.name] = {"type": "array", "description": item.doc, "items": item.item.json_schema()}
        return {"type": "object", "description": self.doc, "additionalProperties": False, "properties": properties}


@dataclass(frozen=True)
class ListOf:
    """A list of objects, each a `Section` (node pools)."""

    name: str
    doc: str
    item: Section
    #: How an item is named in messages, from the list's key, its index and its raw value
    #: (default `list[index]`).
    item_key: Callable[[str, int, Any], str] | None = None
    #: What it is a list of, for "expected a list of pools, got ...".
    noun: str = "objects"

    def parse(self, reader: Reader) -> None:
        key = reader.path(self.name)
        raw = reader.raw.get(self.name, MISSING)
        items: list[Any] = []
        if raw is not MISSING and raw is not None:
            if isinstance(raw, list):
                items = raw
            else:
                reader.problem(self.name, f"expected a list of {self.noun}, got {reader.problems.shown(key, raw)}")
        readers = []
        for index, item in enumerate(items):
            item_key = self.item_key(key, index, item) if self.item_key else f"{key}[{index}]"
            child = Reader(self.item, reader.problems.mapping(item, item_key), item_key, reader.problems,
                           reader.context, parent=reader)
            self.item.parse(child)
            readers.append(child)
        reader.lists[self.name] = readers
        reader.values[self.name] = [child.values for child in readers]


# --- Parsing state -----------------------------------------------------------------------------


class Reader:
    """One section being parsed: its raw mapping, the values parsed so far, and which keys failed."""

    def __init__(self, section: Section, raw: Mapping[str, Any], key: str, problems: Problems, context: Any,
                 parent: Reader | None = None) -> None:
        self.section = section
        self.raw = raw
        #: The section's key in messages (`gpuPools[gput4]`); "" for a document's top level.
        self.key = key
        self.problems = problems
        #: Whatever the document's caller passed (the stack name, today's date, ...).
        self.context = context
        self.parent = parent
        self.values: dict[str, Any] = {}
        self.bad: set[str] = set()
        self.children: dict[str, Reader] = {}
        self.lists: dict[str, list[Reader]] = {}
        #: A document's top level: the `after_document` checks met, with the section reader each runs on.
        self.after_document: list[tuple[Check, Reader]] = []

    @property
    def root(self) -> Reader:
        reader = self
        while reader.parent is not None:
            reader = reader.parent
        return reader

    def path(self, name: str) -> str:
        return f"{self.key}.{name}" if self.key else name

    def child(self, section: Section, raw: Any) -> Reader:
        reader = Reader(section, self.problems.mapping(raw, self.path(section.name)), self.path(section.name),
                        self.problems, self.context, parent=self)
        self.children[section.name] = reader
        self.values[section.name] = reader.values
        return reader

    def shown(self, value: Any, secret: bool = False) -> str:
        return self.problems.shown(self.key, value, secret)

    def read(self, key: Key) -> None:
        value = self.raw.get(key.name, MISSING)
        if key.parse is not None:
            self.values[key.name] = key.parse(self, value)
            return
        if value is MISSING or value is None:
            if key.required:
                self.problem(key.name, f"is missing; {key.doc[:1].lower()}{key.doc[1:]}")
            self.values[key.name] = key.default_for(self)
            return
        problem = key.check(value) if key.check else None
        if problem:
            self.problem(key.name, f"{self.shown(value, key.secret)} {problem}")
            self.values[key.name] = key.default_for(self)
        else:
            self.values[key.name] = key.convert(value) if key.convert else value

    def get(self, path: str) -> Any:
        """A parsed value by its dotted path in the section (`gpuProfile.driver`)."""
        value: Any = self.values
        for part in path.split("."):
            value = value[part]
        return value

    def ok(self, path: str) -> bool:
        """Whether the key (dotted path) parsed without a problem."""
        head, _, rest = path.partition(".")
        if head in self.bad:
            return False
        return self.children[head].ok(rest) if rest else True

    def problem(self, name: str, message: str) -> None:
        """A problem with the key `name` of this section (a dotted path or `name[index]`; "" for the section)."""
        self.bad.add(name.split(".")[0].split("[")[0])
        self.problems.add(self.path(name) if name else self.key, message)

    def reject(self, name: str, message: str) -> None:
        """A problem with an already parsed key; it falls back to its default."""
        self.problem(name, message)
        declared = self.section.declared(name)
        if isinstance(declared, Key):
            self.values[name] = declared.default_for(self)

    def warn(self, name: str, message: str) -> None:
        self.problems.warn(self.path(name), message)

    def build(self, **extra: Any) -> Any:
        section = self.section
        if section.build is not None:
            return section.build(self, **extra)
        assert section.cls is not None, f"section {section.name} declares neither build nor cls"
        return section.cls(**section.attrs(self), **extra)


@dataclass(frozen=True)
class Document:
    """A whole configuration namespace (`gpu-aks:*`): top-level sections and their order."""

    namespace: str
    doc: str
    root: Section
    #: Top-level names that are not ours but that people write by mistake, and what to say instead.
    misplaced: Mapping[str, str] = field(default_factory=dict)

    def parse(self, raw: Mapping[str, Any], context: Any = None, secret_sections: Collection[str] = ()) -> Reader:
        """Parse everything; the caller raises on `reader.problems.items` or builds with `reader.build()`."""
        # A secret section's own setting names are no secret (`vmSize`); its values and map keys are.
        declared = self.root.declared_names
        problems = Problems(self.namespace, secret_sections, Redactor(
            text for name in secret_sections if name in raw for text in secret_strings(raw[name])
            if text not in declared))
        names = self.root.key_names
        for name in raw:
            if name in self.misplaced:
                problems.add(str(name), self.misplaced[name])
            elif name not in names:
                close = _closest(str(name), names)
                hint = f"did you mean '{self.namespace}:{close[0]}'? " if close else ""
                problems.add(str(name), f"unknown config key; {hint}{self.namespace} takes {', '.join(names)}")
        reader = Reader(self.root, _TopLevel(raw, names), "", problems, context)
        # The top level's unknown keys are reported above, with the project's own wording.
        self.root.parse_items(reader)
        for check, section in reader.after_document:
            if all(section.ok(name) for name in check.reads):
                check.run(section)
        return reader


class _TopLevel(Mapping[str, Any]):
    """The top level restricted to declared names (others were reported already)."""

    def __init__(self, raw: Mapping[str, Any], names: Collection[str]) -> None:
        self._raw = {name: value for name, value in raw.items() if name in names}

    def __getitem__(self, name: str) -> Any:
        return self._raw[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


# --- Common keys -------------------------------------------------------------------------------


def bool_problem(value: Any) -> str | None:
    return None if isinstance(value, bool) else "is not true or false"


def one_of(allowed: Sequence[str]) -> ValueCheck:
    return lambda value: None if isinstance(value, str) and value in allowed else f"is not allowed; allowed: {', '.join(allowed)}"


def string_problem(value: Any) -> str | None:
    return None if isinstance(value, str) and value.strip() == value and value else "is not a non-empty string"


def string_list_problem(value: Any) -> str | None:
    return None if isinstance(value, list) and all(isinstance(v, str) and v for v in value) else "must be a list of strings"


def string_map_problem(value: Any) -> str | None:
    ok = isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
    return None if ok else "must be a map of strings to strings"


def is_whole_number(value: Any) -> bool:
    """Config numbers may arrive as floats (1.0) from JSON: whole floats are whole numbers."""
    return is_whole(value)


def whole_as_int(value: Any) -> Any:
    """A whole float as the int it is (2.0 -> 2), anything else as it is. Every Pulumi SDK sends the
    component provider its numbers as floats (a protobuf `Struct` holds only doubles), so a key that
    reads an integer through `str()` or `isinstance(..., int)` takes it through this first."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def boolean(name: str, doc: str, default: bool | Default, **kwargs: Any) -> Key:
    return Key(name, doc, "boolean", default, check=bool_problem, **kwargs)


def choice(name: str, doc: str, allowed: Sequence[str], default: str | Default | None, **kwargs: Any) -> Key:
    return Key(name, doc, "string", default, check=one_of(allowed), allowed=tuple(allowed), **kwargs)


def text(name: str, doc: str, default: str | Default | None, check: ValueCheck = string_problem, **kwargs: Any) -> Key:
    return Key(name, doc, "string", default, check=check, **kwargs)


# --- Derived views -----------------------------------------------------------------------------

_JSON_TYPES = {"string": "string", "boolean": "boolean", "integer": "integer", "number": "number",
               "list of strings": "array", "map of strings": "object", "object": "object"}


def _key_schema(key: Key) -> dict[str, Any]:
    schema: dict[str, Any] = {"description": key.doc}
    json_type = _JSON_TYPES.get(key.type)
    if json_type:
        schema["type"] = json_type
    if key.type == "list of strings":
        schema["items"] = {"type": "string"}
    if key.type == "map of strings":
        schema["additionalProperties"] = {"type": "string"}
    if key.allowed:
        schema["enum"] = list(key.allowed)
    if key.default is not None and not isinstance(key.default, Default):
        schema["default"] = key.default
    return schema


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rows(section: Section, prefix: str) -> Iterator[tuple[str, ...]]:
    for item in (section.declared(name) for name in section.key_names):
        if isinstance(item, Key):
            allowed = ", ".join(f"`{value}`" for value in item.allowed)
            default = (item.default_doc if item.required or isinstance(item.default, Default) else
                       f"`{item.default_doc}`" if item.default_doc else "")
            doc = item.doc + (" **Secret.**" if item.secret else "") + (" Create-only: a change replaces the resource."
                                                                          if item.create_only else "")
            yield (f"`{prefix}{item.name}`", item.type, default, allowed, doc, item.source)
        elif isinstance(item, Section):
            yield from _rows(item, f"{prefix}{item.name}.")


def _section_markdown(section: Section, title: str, level: int) -> list[str]:
    lines = [f"{'#' * level} `{title}`", "", section.doc, ""]
    if section.source:
        lines += [f"Source: {section.source}", ""]
    rows = list(_rows(section, ""))
    if rows:
        lines += ["| key | type | default | allowed | description | source |", "|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
        lines.append("")
    checks = [item.doc for item in _walk_checks(section) if item.doc]
    if checks:
        lines += ["Checked together:", ""] + [f"- {doc}" for doc in checks] + [""]
    for item in section.items:
        if isinstance(item, ListOf):
            lines += _section_markdown(item.item, f"{title}.{item.name}[]" if title else item.name + "[]", level + 1)
    return lines


def _walk_checks(section: Section) -> Iterator[Check]:
    for item in section.items:
        if isinstance(item, Check):
            yield item
        elif isinstance(item, Section):
            yield from _walk_checks(item)


def reference_markdown(document: Document, intro: str = "") -> str:
    """The reference page of a document: one table per section, generated from the declarations."""
    lines = [f"# Configuration reference: `{document.namespace}`", "",
             "<!-- Generated from the declarations; do not edit. Regenerate with tools/docs.py. -->", "",
             document.doc, ""]
    if intro:
        lines += [intro, ""]
    for item in document.root.items:
        if isinstance(item, Section):
            lines += _section_markdown(item, f"{document.namespace}:{item.name}", 2)
        elif isinstance(item, ListOf):
            lines += [f"## `{document.namespace}:{item.name}`", "", item.doc, ""]
            lines += _section_markdown(item.item, f"{document.namespace}:{item.name}[]", 3)
        elif isinstance(item, Check) and item.doc:
            lines += [f"Checked across sections: {item.doc}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
