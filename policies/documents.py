"""Read YAML and JSON that anyone may have written, with bounded work and documented errors.

Pull requests bring manifests from anyone, so every input is treated as hostile:

- size: a file over `Limits.max_bytes` is refused before it is read whole;
- nesting: libyaml's composer recurses in C, and deep enough nesting crashes the process. A cheap
  upper bound on the nesting depth (from indicator counts, then line indentation and flow
  brackets, `_nesting_bound`) is taken first; only when it exceeds the cap are the parser's events walked, iteratively, to find
  the exact depth and its line. Deeper than `Limits.max_depth` is an input error, found before
  the composer runs;
- aliases: the loader builds an alias as the same Python object, so a 651-byte "billion laughs"
  file is a small graph. Documents that use anchors are walked once, iteratively, each node visited
  once: a recursive alias and a graph over `Limits.max_nodes` are input errors. Callers that expand
  aliases (stack config becomes JSON) pass `expanded=True`, which counts every path instead;
- merge keys (`<<`): expanding one copies every merged entry, so a chain of them builds N**2/2
  entries from N lines. They are flattened iteratively, and each copied entry counts against the
  same `max_nodes` budget before it is copied (go-yaml refuses such documents: "excessive aliasing");
- tags and scalars: explicit `!!float`/`!!bool`/`!!timestamp` whose text does not fit, and tags
  this reader does not know, are YAML errors at their line that quote neither the text nor the
  tag; plain scalars that look like YAML 1.1 timestamps stay strings, as Kubernetes keeps them;
- numbers: Python refuses to convert decimal integers of over 4300 digits, and prints no longer
  one in any base; such a scalar (hexadecimal, octal, binary or base 60 too) stays text, and the
  rules report it as an unusable quantity instead of crashing;
- duplicate keys are recorded with both lines (`SourceIndex.duplicates`; the API server's strict
  field validation refuses them), or refused when the caller keeps no index (stack files: go-yaml
  v3 refuses them);
- where each mapping and key was written is recorded while loading (`SourceIndex`), so a finding
  names the line and column of its field, not the first line of its document;
- files: only regular files are read, and nothing blocks: a FIFO, a device or a directory is an
  input error found by fstat on a descriptor opened without waiting (O_NONBLOCK);
- text: bytes that are not UTF-8 are an input error naming the offset, raw control characters
  name their line and code; error messages never quote the offending line (it may belong to a
  Secret), only its line and column.

Every problem is an `DocumentError` with a 1-based line (0 when no line applies). No Pulumi imports.
"""

from __future__ import annotations

import bisect
import functools
import gc
import json
import os
import re
import stat
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml

from .limits import MAX_DUPLICATES_REPORTED, clipped
from .terminal import escape_text

_CLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Limits:
    #: Bytes per file (or standard input).
    max_bytes: int = 16 * 1024 * 1024
    #: Levels of nesting; Kubernetes objects rarely pass 30, CRD schemas about 80.
    max_depth: int = 256
    #: Distinct nodes per file (with `expanded`, nodes counting every path through aliases).
    max_nodes: int = 2_000_000


DEFAULT_LIMITS = Limits()


class DocumentError(Exception):
    def __init__(self, line: int, message: str, complete: list[tuple[int, Any]] | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        #: (line, document) for the documents of a stream read whole before the error, so a caller
        #: can still check them: a syntax error in document 3 loses nothing of documents 0-2.
        self.complete = complete or []

    def at(self, path: str) -> str:
        """The problem located in `path`: `path:line: message`, or `path: message` when no line applies."""
        return f"{path}:{self.line}: {self.message}" if self.line else f"{path}: {self.message}"


def safe_text(text: str) -> str:
    """Text that any UTF-8 terminal or CI log can show and that input cannot steer: controls, lone
    surrogates (from JSON `\\ud800` escapes or undecodable file names) and invisible characters
    become backslash escapes, and no line can be a GitHub Actions workflow command
    (`terminal.escape_text`)."""
    return escape_text(text)


#: Line breaks besides `\n` that PyYAML and libyaml count (YAML 1.1: CR alone, NEL, LINE SEPARATOR and
#: PARAGRAPH SEPARATOR; `\r\n` is one break): lines are counted as they count them, in JSON files too.
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
_AS_NEWLINE = str.maketrans({"\r": "\n", "\x85": "\n", "\u2028": "\n", "\u2029": "\n"})


def counting_text(text: str) -> str:
    """`text` of the same length with every line break the YAML reader counts as a `\n` (`\r\n` as
    ` \n`), so `count("\n")` over any slice of it is the number of breaks there."""
    if not any(brk in text for brk in _OTHER_BREAKS):
        return text
    return text.replace("\r\n", " \n").translate(_AS_NEWLINE)


def line_at(text: str, position: int) -> int:
    """The 1-based line of `position` in `text`, lines counted as the YAML reader counts them."""
    return counting_text(text).count("\n", 0, position) + 1


def decode(data: bytes) -> str:
    """UTF-8 text (a byte-order mark is dropped), or an DocumentError naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        before = data[:error.start].decode("utf-8-sig")
        line = line_at(before, len(before))
        raise DocumentError(line, f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset {error.start} "
                                 "cannot be decoded") from None


def read_bounded(stream: Any, limits: Limits = DEFAULT_LIMITS, hint: str = "", start: bytes = b"") -> str:
    """Read a binary stream (after the bytes `start` already read from it), refusing more than
    `limits.max_bytes`, and decode it. Reads in chunks: one `read(max_bytes + 1)` would allocate the
    whole limit for every small input. `hint` ends the too-large message (how to raise the limit)."""
    chunks: list[bytes] = [start]
    total = len(start)
    while total <= limits.max_bytes:
        chunk = stream.read(min(_CHUNK, limits.max_bytes + 1 - total))
        if not chunk:
            return decode(b"".join(chunks))
        chunks.append(chunk)
        total += len(chunk)
    raise DocumentError(0, f"larger than the {limits.max_bytes}-byte limit{hint}")


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "a special file"


def not_regular(kind: str) -> str:
    return f"not a regular file ({kind}): only regular files are read"


#: Open flags that never wait: a FIFO opened for reading blocks until a writer comes, unless
#: O_NONBLOCK; O_NOCTTY keeps a terminal device from becoming the controlling terminal.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


def read_file(path: str, limits: Limits = DEFAULT_LIMITS, hint: str = "") -> str:
    """A regular file's text within `limits.max_bytes`: the one way every tool reads a file it was
    handed. Missing, unreadable, not a regular file (a FIFO, a device, a directory: they would block
    or never end), too large or not UTF-8 is a DocumentError (line 0 unless a bad byte has one).
    Nothing blocks: the path is opened without waiting (O_NONBLOCK: a FIFO with no writer opens at
    once) and the open file is checked with fstat before any read (a stat before the open would
    cost a system call per file and could be raced anyway); a file over the limit is refused by its
    size before any read, and one that grows meanwhile is read on, bounded."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
        try:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode):
                raise DocumentError(0, not_regular(file_kind(info.st_mode)))
            if info.st_size > limits.max_bytes:
                raise DocumentError(0, f"{info.st_size} bytes, over the {limits.max_bytes}-byte limit{hint}")
            # One read of the descriptor itself: a buffered file object per manifest cost more than
            # the read when a directory holds thousands of them.
            data = os.read(descriptor, info.st_size + 1)
            if len(data) == info.st_size:
                return decode(data)
            # Grown since fstat, shrunk, or a short read (Linux returns at most 2 GiB from one read):
            # read on to the end, bounded.
            with open(descriptor, "rb", closefd=False) as stream:
                return read_bounded(stream, limits, hint, data)
        finally:
            os.close(descriptor)
    except OSError as error:
        raise DocumentError(0, f"cannot read: {error.strerror or error}") from None


_CHUNK = 1024 * 1024


@contextmanager
def gc_paused() -> Iterator[None]:
    """Parsed documents are kept (the checker reads every input before checking), and each one is
    thousands of small containers: the cyclic collector would rescan the growing heap again and
    again. YAML data holds no reference cycles except a recursive alias, which is refused anyway."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# --- YAML -----------------------------------------------------------------------------------------

_STR = yaml.resolver.BaseResolver.DEFAULT_SCALAR_TAG  # the very object the resolver returns
_SEQ = yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG
_MAP = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
#: Mapping keys are interned: manifests repeat a few keys thousands of times and every document is
#: kept until all are checked, so one string per distinct key spared a fifth of the reader's memory
#: (and the page faults of taking it), and the rules' lookups of literal keys match by identity.
#: Interned strings are freed with the last document that holds them.
_intern = sys.intern
_ScalarNode = yaml.ScalarNode
_MappingNode = yaml.MappingNode
_SequenceNode = yaml.SequenceNode
#: Python prints integers of at most 4300 decimal digits (`sys.int_info.str_digits_check_threshold`
#: aside); 2**14000 has 4215. Longer ones, in any base, stay text.
_MAX_INT_BITS = 14_000


def _shown_key(key: Any) -> str:
    text = key if isinstance(key, str) else repr(key)
    return repr(clipped(text, 64, 61, "..."))


def duplicate_key(key: Any, line: int, first: int | str) -> DocumentError:
    """A key given twice in one mapping or object, at `line`, first at line `first`."""
    return DocumentError(line, f"duplicate key {_shown_key(key)} (first at line {first}): the API server's strict "
                               "field validation refuses it; here the last value wins")


_PATH_SEPARATOR = re.compile(r"[.\[]")

#: The longest key a field path is looked up with. Field names are short, and the longest Kubernetes
#: qualified name (a resource, label or annotation key) is a 253-character DNS prefix, "/" and a
#: 63-character name. Longer candidates are never cut from the path, so a hostile key of thousands of
#: dots costs no more than a short one; a finding under such a key is located at its mapping.
_MAX_KEY_CHARS = 320
#: Longer paths (only a hostile key makes one) are planned afresh for each finding, not remembered.
_MAX_REMEMBERED_PATH = 4096

#: One step of a planned path from a position in it: the keys a mapping there may hold, shortest
#: first, each as (key, position after it, whether it ends the path); and the list index there, as
#: (index, position after it), when the path has `[N]` at that position.
_Step = tuple[tuple[tuple[str, int, bool], ...], "tuple[int, int] | None"]


class _PathPlan:
    """The steps `SourceIndex.locate` may take along `path` (`a.b[0].nvidia.com/gpu`), each worked
    out the first time a walk reaches its position. A key may hold dots, so at a mapping each run of
    parts up to a later `.` or `[` (within `_MAX_KEY_CHARS`) is a candidate key. A walk reaches at
    most one position per level of the object, so the work is bounded by the path's length times a
    constant, whatever the path holds."""

    __slots__ = ("path", "ends", "steps")

    def __init__(self, path: str) -> None:
        self.path = path
        #: Where each part may end: before each `.` or `[`, and at the end.
        self.ends = [*(match.start() for match in _PATH_SEPARATOR.finditer(path)), len(path)]
        self.steps: dict[int, _Step] = {}

    def step(self, start: int) -> _Step:
        step = self.steps.get(start)
        if step is None:
            step = self.steps[start] = self._plan(start)
        return step

    def _plan(self, start: int) -> _Step:
        path, ends = self.path, self.ends
        keys = []
        position = bisect.bisect_right(ends, start)
        while position < len(ends) and ends[position] - start <= _MAX_KEY_CHARS:
            end = ends[position]
            keys.append((path[start:end], end + 1 if path.startswith(".", end) else end, end == len(path)))
            position += 1
        item = None
        if path.startswith("[", start):
            close = path.find("]", start, start + 24)  # an index of up to 22 digits
            digits = path[start + 1:close] if close > 0 else ""
            if digits.isascii() and digits.isdigit():
                item = (int(digits), close + 2 if path.startswith(".", close + 1) else close + 1)
        return tuple(keys), item


@functools.lru_cache(maxsize=4096)
def _remembered_plan(path: str) -> _PathPlan:
    return _PathPlan(path)


def _path_plan(path: str) -> _PathPlan:
    """The same few paths come back for thousands of findings
    (`spec.template.spec.containers[0].resources.limits`): each is split once."""
    return _remembered_plan(path) if len(path) <= _MAX_REMEMBERED_PATH else _PathPlan(path)


class SourceIndex:
    """Where each mapping of a YAML stream and each of its keys was written, recorded while the
    documents are built (one list of line numbers per mapping), so a finding's field path leads to
    its line: `locate(obj, "spec.containers[0].resources.limits")`. Also the duplicate keys found,
    as DocumentErrors (the API server's strict field validation refuses them; the last value wins
    here, as in non-strict decoding).

    Entries are keyed by the identity of the built dicts, so they hold while the documents live."""

    def __init__(self, items: bool = False) -> None:
        #: id(mapping) -> [line, column (0 for a flow mapping), line of key 0, line of key 1, ...],
        #: keys in the dict's order; a key merged in (`<<`) from another mapping has its line negated
        #: (its column is not the mapping's).
        self.mappings: dict[int, list[int]] = {}
        #: With `items` (YAML only): id(sequence) -> the line of each item, so a problem about a plain
        #: value in a list (a CIDR, a principal) names its own line, not its key's. Off for the checker,
        #: whose findings name mappings, to keep reading manifests cheap.
        self.items: dict[int, list[int]] | None = {} if items else None
        self.duplicates: list[DocumentError] = []
        self._keys: dict[int, dict[Any, int]] = {}

    def _key_line(self, mapping: Mapping[Any, Any], key: Any) -> int:
        if len(mapping) <= 16:  # most mappings: a scan costs less than a lookup table
            entry = self.mappings.get(id(mapping), [])
            for position, candidate in enumerate(mapping):
                if candidate == key:
                    return entry[position + 2] if position + 2 < len(entry) else 0
            return 0
        lines = self._keys.get(id(mapping))
        if lines is None:
            entry = self.mappings.get(id(mapping), [])
            lines = self._keys[id(mapping)] = dict(zip(mapping, entry[2:], strict=False))
        return lines.get(key, 0)

    def locate(self, obj: Any, path: str) -> tuple[int, int] | None:
        """(line, column) of the deepest part of `path` (`a.b[0].c`) written in `obj`: the line of
        the last key found, or of the list item's mapping. Column 0: not known. None when not even
        the first step is found. A key may hold dots (`nvidia.com/gpu`): at each mapping the
        shortest key the path goes on with is taken, so one pass over the path suffices."""
        node, start = obj, 0
        # The deepest place found: (mapping, its entry, key) for a key, (None, entry, None) for an item.
        last: tuple[Any, list[int], Any] | None = None
        plan = _path_plan(path)
        planned = plan.steps  # read directly once planned: thousands of findings walk the same few paths
        mappings = self.mappings
        while start < len(path):
            keys, item = planned.get(start) or plan.step(start)
            if type(node) is dict:
                entry = mappings.get(id(node))
                if entry is None:
                    break
                chosen = None
                for key, after, final in keys:
                    if key in node:
                        chosen = key, after
                        # A shorter key whose value cannot hold the rest of the path is only a
                        # fallback for a longer one (`nvidia` beside `nvidia.com/gpu`).
                        if final or type(node[key]) in (dict, list):
                            break
                if chosen is None:
                    break
                key, start = chosen
                last = (node, entry, key)
                node = node[key]
            elif type(node) is list and item is not None and item[0] < len(node):
                item_lines = self.items.get(id(node)) if self.items is not None else None
                node, start = node[item[0]], item[1]
                entry = mappings.get(id(node)) if type(node) is dict else None
                if entry is not None:
                    last = (None, entry, None)
                elif item_lines is not None and item[0] < len(item_lines):
                    last = (None, [item_lines[item[0]], 0], None)
            else:
                break
        if last is None:
            return None
        mapping, entry, key = last
        if mapping is None:
            return entry[0], entry[1]
        line = self._key_line(mapping, key)
        return (-line, 0) if line < 0 else (line or entry[0], entry[1])


class _BoundedLoader(_CLoader):  # type: ignore[misc, valid-type]
    """libyaml's safe loader, read as Kubernetes reads YAML and with bounded work:

    - where each document starts, and each mapping and key (a SourceIndex), is recorded;
    - plain scalars that look like YAML 1.1 timestamps stay strings, as sigs.k8s.io/yaml keeps them
      (gopkg.in/yaml.v2 `decode.go`, `d.scalar`: a timestamp decoded into an interface{} is set
      "as a string" "for backward compatibility"), so `2023-02-30` is text;
    - explicit core tags whose text does not fit (`!!float TEXT`, `!!bool TEXT`, `!!timestamp TEXT`)
      and tags it does not know are YAML errors at their line, never quoting the text or the tag;
    - integers too long for Python to print, in any base, stay their text;
    - merge keys (`<<`) are expanded by copying, so their entries count against `max_nodes`, the
      alias budget, before they are copied (go-yaml refuses such documents: "excessive aliasing");
    - keys given twice in one mapping are recorded (SourceIndex.duplicates).
    """

    def __init__(self, stream: str, limits: Limits = DEFAULT_LIMITS, index: SourceIndex | None = None) -> None:
        super().__init__(stream)
        self.document_lines: list[int] = []
        # The caller's index is filled in place: a copy per file cost time and memory.
        self.index = index if index is not None else SourceIndex()
        self._item_lines = self.index.items
        self.merge_budget = limits.max_nodes
        self.merged_entries = 0
        self._flat: dict[int, list[Any]] = {}
        #: Whether child nodes are built directly: the stream holds no anchor (`_construct_direct`). A
        #: flag, not the bound method itself: that would be a reference cycle keeping every loader,
        #: and its text, alive while the collector is paused.
        self._direct = "&" not in stream

    def construct_document(self, node: Any) -> Any:
        self.document_lines.append(node.start_mark.line + 1)
        try:
            return super().construct_document(node)
        finally:
            self._flat = {}

    # libyaml's composer calls these two for every node (`_yaml.pyx`, `_compose_node`); without path
    # resolvers (asserted below) `BaseResolver`'s return at once, and their answer is not used. A
    # builtin taking the same arguments costs a fifth of a Python call, a million times per 10,000
    # small manifests.
    descend_resolver = staticmethod(slice)  # (parent, index)
    ascend_resolver = staticmethod(tuple)  # ()

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # libyaml's composer asks for the tag of every scalar. For a plain scalar the safe resolver's
        # answer depends on its text alone (no path resolvers are registered), and manifests repeat
        # the same keys and values thousands of times: remember the answers.
        if kind is _ScalarNode and implicit[0]:
            tag = _PLAIN_SCALAR_TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if tag == _TIMESTAMP:
                    tag = _STR
                if len(value) <= 64 and len(_PLAIN_SCALAR_TAGS) < 100_000:
                    _PLAIN_SCALAR_TAGS[value] = tag
            return tag
        # Without path resolvers the answer for anything else is the default tag of its kind
        # (BaseResolver.resolve), given here without the call.
        if kind is _ScalarNode:
            return _STR
        return _SEQ if kind is _SequenceNode else _MAP

    # Scalars ----------------------------------------------------------------------------------

    @staticmethod
    def _refuse(node: Any, what: str) -> yaml.constructor.ConstructorError:
        return yaml.constructor.ConstructorError(None, None, what, node.start_mark)

    def construct_yaml_int(self, node: Any) -> Any:
        text = self.construct_scalar(node)
        if len(text) > 4300:
            return text
        try:
            value = super().construct_yaml_int(node)
        except (ValueError, IndexError):
            return text
        return text if value.bit_length() > _MAX_INT_BITS else value

    def construct_yaml_float(self, node: Any) -> Any:
        try:
            return super().construct_yaml_float(node)
        except (ValueError, TypeError, OverflowError, IndexError):
            raise self._refuse(node, "a value tagged !!float is not a number") from None

    def construct_yaml_bool(self, node: Any) -> Any:
        try:
            return super().construct_yaml_bool(node)
        except (KeyError, AttributeError):
            raise self._refuse(node, "a value tagged !!bool is not true or false") from None

    def construct_yaml_timestamp(self, node: Any) -> Any:
        try:
            super().construct_yaml_timestamp(node)
        except (ValueError, TypeError, AttributeError, OverflowError, IndexError):
            raise self._refuse(node, "a value tagged !!timestamp is not a date or time") from None
        return self.construct_scalar(node)  # a valid one stays its text, as Kubernetes keeps it

    def construct_yaml_binary(self, node: Any) -> Any:
        super().construct_yaml_binary(node)  # a ConstructorError when it is not base64
        return self.construct_scalar(node)  # the text: Kubernetes objects carry base64 as strings

    def construct_undefined(self, node: Any) -> Any:
        raise self._refuse(node, "a tag this reader does not know (only YAML's standard tags, such as !!str and "
                                 "!!int, are read)")

    # Collections ------------------------------------------------------------------------------

    def construct_yaml_seq(self, node: Any) -> Any:
        data: list[Any] = []
        yield data
        self._fill_sequence(data, node)

    def _fill_sequence(self, data: list[Any], node: Any) -> None:
        construct = self._construct_direct if self._direct else self.construct_object
        data.extend([child.value if child.tag == _STR and type(child) is _ScalarNode else construct(child)
                     for child in node.value])
        if self._item_lines is not None:
            self._item_lines[id(data)] = [child.start_mark.line + 1 for child in node.value]

    def _construct_direct(self, node: Any) -> Any:
        """A child node built without `construct_object`'s bookkeeping, for documents with no anchor:
        there no node is reached twice, so nothing needs remembering, and no node can contain itself.
        Its generic dispatch, one generator per collection and the memo of every node cost more than
        building the dicts and lists (most manifests are small and break a rule, so reading weighs).
        Recursion is bounded: the nesting was checked against `Limits.max_depth` before composing."""
        kind, tag = type(node), node.tag
        if kind is _MappingNode and tag == _MAP:
            mapping: dict[Any, Any] = {}
            self._fill_mapping(mapping, node)
            return mapping
        if kind is _SequenceNode and tag == _SEQ:
            sequence: list[Any] = []
            self._fill_sequence(sequence, node)
            return sequence
        scalar = _DIRECT_SCALARS.get(tag) if kind is _ScalarNode else None
        return scalar(self, node) if scalar is not None else self.construct_object(node)

    def construct_yaml_map(self, node: Any) -> Any:
        data: dict[Any, Any] = {}
        yield data
        self._fill_mapping(data, node)

    def _fill_mapping(self, data: dict[Any, Any], node: Any) -> None:
        mark = node.start_mark
        lines = [mark.line + 1, 0 if node.flow_style else mark.column + 1]
        self.index.mappings[id(data)] = lines
        construct = self._construct_direct if self._direct else self.construct_object
        merges = False
        duplicates: list[tuple[Any, int]] = []
        for key_node, value_node in node.value:
            tag = key_node.tag
            if type(key_node) is _ScalarNode and tag in (_STR, _VALUE):
                key = _intern(key_node.value)
            elif tag == _MERGE:
                merges = True
                continue
            else:
                key = construct(key_node)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError("while constructing a mapping", mark, "found unhashable key",
                                                            key_node.start_mark) from None
            value = value_node.value if value_node.tag == _STR and type(value_node) is _ScalarNode \
                else construct(value_node)
            if key in data:
                duplicates.append((key, key_node.start_mark.line + 1))
            else:
                lines.append(key_node.start_mark.line + 1)
            data[key] = value
        if duplicates:
            self._duplicates(data, lines, duplicates)
        if merges:
            # Merged entries never override the mapping's own keys; the first source wins over later
            # ones (the YAML merge-key spec, as PyYAML and go-yaml read it).
            for key_node, value_node in reversed(self._flattened(node)):
                key = key_node.value if type(key_node) is _ScalarNode and key_node.tag == _STR else construct(key_node)
                if key not in data:
                    lines.append(-key_node.start_mark.line - 1)  # negative: written in another mapping
                    data[key] = construct(value_node)

    def _duplicates(self, data: Mapping[Any, Any], lines: list[int], duplicates: list[tuple[Any, int]]) -> None:
        first_lines = dict(zip(data, lines[2:], strict=False))
        for key, line in duplicates:
            if len(self.index.duplicates) >= MAX_DUPLICATES_REPORTED:
                return
            self.index.duplicates.append(duplicate_key(key, line, first_lines.get(key, "?")))

    def _sources(self, node: Any) -> list[Any]:
        """The mappings a mapping's `<<` keys merge, later sources first (so earlier ones win)."""
        sources = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                continue
            if type(value_node) is _MappingNode:
                sources.append(value_node)
            elif type(value_node) is _SequenceNode and all(type(item) is _MappingNode for item in value_node.value):
                sources.extend(reversed(value_node.value))
            else:
                raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                        "a merge key (<<) takes a mapping or a list of mappings",
                                                        value_node.start_mark)
        return sources

    def _flattened(self, node: Any) -> list[Any]:
        """The (key, value) node pairs a mapping's merge keys bring, in assignment order (later wins),
        sources' own merges included. Iterative and memoised per document; every copied pair counts
        against the alias budget before it is copied."""
        flat = self._flat
        stack = [(node, iter(self._sources(node)))]
        on_stack = {id(node)}
        while stack:
            current, sources = stack[-1]
            for source in sources:
                if id(source) in flat:
                    continue
                if not any(key.tag == _MERGE for key, _ in source.value):
                    flat[id(source)] = source.value
                    continue
                if id(source) in on_stack:
                    raise yaml.constructor.ConstructorError(None, None, "a merge key (<<) merges a mapping into "
                                                                        "itself", source.start_mark)
                stack.append((source, iter(self._sources(source))))
                on_stack.add(id(source))
                break
            else:
                merged: list[Any] = []
                for source in self._sources(current):
                    pairs = flat[id(source)]
                    self.merged_entries += len(pairs)
                    if self.merged_entries > self.merge_budget:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"more than {self.merge_budget} entries once merge keys (<<) are expanded (a "
                                        "merge bomb?)", current.start_mark)
                    merged.extend(pairs)
                if current is not node:
                    merged.extend((key, value) for key, value in current.value if key.tag != _MERGE)
                flat[id(current)] = merged
                stack.pop()
                on_stack.discard(id(current))
        return flat.pop(id(node))


for _tag, _constructor in (("int", _BoundedLoader.construct_yaml_int), ("float", _BoundedLoader.construct_yaml_float),
                           ("bool", _BoundedLoader.construct_yaml_bool),
                           ("timestamp", _BoundedLoader.construct_yaml_timestamp),
                           ("binary", _BoundedLoader.construct_yaml_binary),
                           ("seq", _BoundedLoader.construct_yaml_seq), ("map", _BoundedLoader.construct_yaml_map)):
    _BoundedLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _constructor)
_BoundedLoader.add_constructor(None, _BoundedLoader.construct_undefined)
#: The scalar constructors `_construct_direct` calls itself (none of them is a generator).
_DIRECT_SCALARS = {f"tag:yaml.org,2002:{tag}": constructor for tag, constructor in (
    ("null", _BoundedLoader.construct_yaml_null), ("int", _BoundedLoader.construct_yaml_int),
    ("float", _BoundedLoader.construct_yaml_float), ("bool", _BoundedLoader.construct_yaml_bool),
    ("timestamp", _BoundedLoader.construct_yaml_timestamp), ("str", _BoundedLoader.construct_yaml_str))}
assert not _BoundedLoader.yaml_path_resolvers, "the scalar tag cache assumes no path resolvers"
_PLAIN_SCALAR_TAGS: dict[str, str] = {}

#: What may precede a block collection's first entry on its line: indentation and the `-`, `?`
#: and `:` indicators of enclosing entries (tabs too, which YAML forbids there but libyaml reads).
_LINE_LEAD = re.compile(r"^[ \t?:-]*", re.MULTILINE)
#: Document markers. A flow collection cannot span one (libyaml stops with an error there), so the
#: flow nesting of any document is bounded by the flow openers of the segment it lies in.
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=\s|$)", re.MULTILINE)


def _nesting_bound(text: str, enough: int = 0) -> int:
    """An upper bound on the nesting depth of every document, by C-speed scanning; stops refining
    once a bound is at most `enough`.

    First, every level needs an indicator of its own (`[`, `{`, `:`, `-`, `?`; a `[` may open two:
    a sequence and a single-pair mapping in it), so their count bounds the depth: small files stop
    here. Then, for large ones: a block collection's level starts on a new line further right, or
    after `- `/`? `/`: ` indicators at the start of a line, except a sequence under a mapping key,
    which may sit at the key's column, so a level costs at least one column of every two and the
    block depth is at most twice the longest line lead plus two; flow levels are bounded by the
    brackets of each document's segment (a flow collection cannot cross a document marker)."""
    count = sum(text.count(char) for char in "[{:-?") + text.count("[")
    if count <= enough:
        return count
    block = max(map(len, _LINE_LEAD.findall(text)), default=0)
    flow = max((segment.count("[") * 2 + segment.count("{") for segment in _DOCUMENT_MARKER.split(text)), default=0)
    return min(count, 2 * block + 2 + flow)


def check_nesting(text: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise DocumentError if any YAML document nests deeper than the cap, before the composer runs."""
    if _nesting_bound(text, limits.max_depth) <= limits.max_depth:
        return
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_CLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > limits.max_depth:
                    raise DocumentError(event.start_mark.line + 1,
                                       f"nested more than {limits.max_depth} levels deep")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # the loader reports the syntax error itself, with its line


def yaml_problem(error: yaml.YAMLError, text: str = "") -> DocumentError:
    """A YAML error as file line and problem, never with the snippet of the offending line. A bad
    character (a raw control byte) is named by its code and line; libyaml gives its byte offset."""
    if isinstance(error, yaml.reader.ReaderError):
        before = text.encode("utf-8", "surrogatepass")[:error.position].decode("utf-8", "surrogatepass")
        line = line_at(before, len(before)) if text else 0
        character = error.character
        code = f" (0x{character:02x})" if isinstance(character, int) else ""
        return DocumentError(line, f"invalid YAML: {error.reason}{code}; YAML allows tab, line breaks and printable "
                                   "characters")
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or "not valid YAML"
    column = f", column {mark.column + 1}" if mark is not None else ""
    return DocumentError(mark.line + 1 if mark is not None else 0, f"invalid YAML{column}: {problem}")


def load_yaml(text: str, limits: Limits = DEFAULT_LIMITS, expanded: bool = False,
              index: SourceIndex | None = None) -> list[tuple[int, Any]]:
    """(line, document) for every document in a YAML stream (empty documents included, as None).

    With `index`, where each mapping and key was written and the duplicate keys are recorded in it;
    without, a duplicate key is a DocumentError, as go-yaml v3 (Pulumi's stack files) refuses it."""
    check_nesting(text, limits)
    loader = _BoundedLoader(text, limits, index)
    documents: list[Any] = []
    try:
        while loader.check_data():
            documents.append(loader.get_data())
    except (yaml.YAMLError, RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError,
            OverflowError, MemoryError) as error:
        if isinstance(error, yaml.YAMLError):
            problem = yaml_problem(error, text)
        elif isinstance(error, RecursionError):
            problem = DocumentError(0, f"nested more than {limits.max_depth} levels deep")
        else:  # a constructor's own error: its text may quote the value, so only its kind is told
            line = loader.document_lines[-1] if len(loader.document_lines) > len(documents) else 0
            problem = DocumentError(line, f"invalid YAML: a value in the document starting here cannot be read "
                                          f"({type(error).__name__})")
        # libyaml may report a problem at the end of the stream, one line past the last.
        last_line = counting_text(text).count("\n") + (0 if text.endswith(("\n", *_OTHER_BREAKS)) else 1)
        complete = _checked(documents, loader, text, limits, expanded, index)
        line = min(problem.line, max(last_line, 1))
        raise DocumentError(line, problem.message, complete) from None
    finally:
        loader.dispose()
    return _checked(documents, loader, text, limits, expanded, index)


def _checked(documents: list[Any], loader: _BoundedLoader, text: str, limits: Limits, expanded: bool,
             index: SourceIndex | None) -> list[tuple[int, Any]]:
    lines = loader.document_lines
    pairs = [(lines[number] if number < len(lines) else 1, document) for number, document in enumerate(documents)]
    if expanded or "&" in text:
        for line, document in pairs:
            check_structure(document, line, limits, expanded, start=loader.merged_entries)
    if index is None and loader.index.duplicates:
        raise loader.index.duplicates[0]
    return pairs


# --- JSON -----------------------------------------------------------------------------------------


def _json_int(text: str) -> Any:
    return int(text) if len(text) < 4000 else text


def _json_float(text: str) -> Any:
    """A JSON number with a fraction or exponent; one past the float range (`1e5000`) stays its
    text, as a too-long integer does, so a finding quotes what was written, not `inf`."""
    value = float(text)
    return value if value - value == 0 else text


def _json_constant(text: str) -> str:
    """`NaN`, `Infinity` and `-Infinity` are not JSON (RFC 8259; Go's encoding/json, and so the API
    server, refuses them), though Python's reader takes them: they stay text, an unusable value."""
    return text


#: A JSON string, opening quote to closing quote, with `stop` characters outside escapes (besides `"`
#: and `\`) ending it unmatched. Written as the unrolled loop `"[^"\\]*(?:\\.[^"\\]*)*"`, not as
#: `"(?:[^"\\]|\\.)*"`: for each repetition of a group the regex engine keeps a backtracking entry
#: until the match ends, about 115 bytes, so the group-per-character form took 475 MB for one 4 MB string
#: (issue 41, a large `--previous-outputs` record); unrolled, an entry per escape is left, and with
#: possessive quantifiers (Python 3.11+; the light package still runs on 3.10) none.
_POSSESSIVE = "+" if sys.version_info >= (3, 11) else ""


def _json_string(stop: str = "") -> str:
    body = "[^\"\\\\" + stop + "]*" + _POSSESSIVE
    return '"' + body + "(?:\\\\." + body + ")*" + _POSSESSIVE + '"'


#: What locating a JSON document needs from its text: strings (a key when a `:` follows), and the
#: braces of objects outside strings. Strings are matched whole so braces in them are skipped.
_JSON_LOCATED = re.compile(_json_string() + r"([ \t\r\n]*:)?|[{}]")


def load_json(text: str, limits: Limits = DEFAULT_LIMITS, index: SourceIndex | None = None) -> Any:
    """One JSON document. JSON has no aliases, so only its nesting needs a bound before parsing.

    With `index`, where each object and key was written and the duplicate keys are recorded in it,
    as `load_yaml` records them; without, a duplicate key is a DocumentError (the last value would
    silently win). Numbers past the float range and the non-JSON constants `NaN`/`Infinity` stay
    their text."""
    if text.count("[") + text.count("{") > limits.max_depth:
        deep_line = _json_deep_line(text, limits)
        if deep_line:
            raise DocumentError(deep_line, f"nested more than {limits.max_depth} levels deep")
    objects: list[dict[str, Any]] = []
    #: (position in `objects`, keys as written) of each object that holds a key twice.
    repeated: list[tuple[int, list[str]]] = []

    def built(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        data = dict(pairs)
        if len(data) != len(pairs):
            repeated.append((len(objects), [key for key, _ in pairs]))
        objects.append(data)
        return data

    try:
        document = json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant,
                              object_pairs_hook=built)
    except json.JSONDecodeError as error:
        # Python's reader counts `\n` only; a file with CR line ends was all "line 1".
        breaks = counting_text(text)
        line, column = breaks.count("\n", 0, error.pos) + 1, error.pos - breaks.rfind("\n", 0, error.pos)
        raise DocumentError(line, f"invalid JSON, column {column}: {error.msg}") from None
    except RecursionError:
        raise DocumentError(0, f"nested more than {limits.max_depth} levels deep") from None
    if index is None:
        if repeated:
            raise _json_duplicates(text, objects, repeated, SourceIndex())[0]
        return document
    index.duplicates.extend(_json_duplicates(text, objects, repeated, index))
    return document


def _json_duplicates(text: str, objects: list[dict[str, Any]], repeated: list[tuple[int, list[str]]],
                     index: SourceIndex) -> list[DocumentError]:
    """Record where each object of a parsed JSON document and each of its keys was written, in
    `index`, and return its duplicate keys with both lines. One pass over the text's strings and
    braces: objects close in the order the parser built them (`object_pairs_hook` runs as each one
    closes), so the n-th `}` belongs to the n-th object built."""
    open_objects: list[list[int]] = []
    closed: list[list[int]] = []
    line, counted = 1, 0
    breaks = counting_text(text)
    for token in _JSON_LOCATED.finditer(text):
        first = text[token.start()]
        if first == '"' and token.group(1) is None:
            continue  # a string value
        position = token.start()
        line += breaks.count("\n", counted, position)
        counted = position
        if first == '"':
            if open_objects:
                open_objects[-1].append(line)
        elif first == "{":
            open_objects.append([line, 0])
        elif open_objects:
            closed.append(open_objects.pop())
    if len(closed) != len(objects):  # cannot happen for text the parser took; locate nothing then
        return []
    duplicates: list[DocumentError] = []
    repeated_at = dict(repeated)
    mappings = index.mappings
    for number, (data, entry) in enumerate(zip(objects, closed, strict=True)):
        keys = repeated_at.get(number)
        if keys is None:
            mappings[id(data)] = entry
            continue
        first_lines: dict[str, int] = {}
        for key, key_line in zip(keys, entry[2:], strict=False):
            if key not in first_lines:
                first_lines[key] = key_line
            elif len(duplicates) < MAX_DUPLICATES_REPORTED:
                duplicates.append(duplicate_key(key, key_line, first_lines[key]))
        mappings[id(data)] = entry[:2] + list(first_lines.values())
    return duplicates


_JSON_TOKENS = re.compile(_json_string("\\n") + r"|[\[\]{}]")


def _json_deep_line(text: str, limits: Limits) -> int:
    """The line where JSON nesting first passes the cap (strings skipped), or 0 if it never does."""
    depth = 0
    for token in _JSON_TOKENS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > limits.max_depth:
                return line_at(text, token.start())
        elif char in "]}":
            depth -= 1
    return 0


# --- Structure ------------------------------------------------------------------------------------


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield key
            yield value
    elif isinstance(node, (list, tuple)):
        yield from node


def check_structure(document: Any, line: int, limits: Limits = DEFAULT_LIMITS, expanded: bool = False,
                    start: int = 0) -> None:
    """Walk a loaded document iteratively: no recursive alias, at most `max_depth` levels, at most
    `max_nodes` nodes (distinct ones, or every path when `expanded`), `start` of them already spent
    (on entries copied by merge keys)."""
    visited: set[int] = set()
    on_path: set[int] = set()
    count = start
    # Each entry: (node, depth, leaving). Containers are marked on the path while their children
    # are walked, so a child that is one of them is a recursive alias.
    stack: list[tuple[Any, int, bool]] = [(document, 1, False)]
    while stack:
        node, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            continue
        if not isinstance(node, (Mapping, list, tuple)):
            continue
        identity = id(node)
        if identity in on_path:
            raise DocumentError(line, "a recursive alias: a node contains itself")
        if not expanded:
            if identity in visited:
                continue
            visited.add(identity)
        count += 1
        if count > limits.max_nodes:
            what = "nodes once aliases are expanded" if expanded else "nodes"
            raise DocumentError(line, f"more than {limits.max_nodes} {what} (an alias bomb?)")
        if depth > limits.max_depth:
            raise DocumentError(line, f"nested more than {limits.max_depth} levels deep")
        on_path.add(identity)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))
