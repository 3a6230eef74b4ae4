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
- numbers: Python refuses to convert integers of over 4300 digits; such a scalar stays text, and
  the rules report it as an unusable quantity instead of crashing;
- text: bytes that are not UTF-8 are an input error naming the offset; error messages never quote
  the offending line (it may belong to a Secret), only its line and column.

Every problem is an `DocumentError` with a 1-based line (0 when no line applies). No Pulumi imports.
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml

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
    """Text that any UTF-8 terminal can print: lone surrogates (from JSON `\\ud800` escapes or
    undecodable file names) become backslash escapes instead of crashing the write."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def decode(data: bytes) -> str:
    """UTF-8 text (a byte-order mark is dropped), or an DocumentError naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
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


def read_file(path: str, limits: Limits = DEFAULT_LIMITS, hint: str = "") -> str:
    """A file's text within `limits.max_bytes`: the one way every tool reads a file it was handed.
    Too large, unreadable (missing, a directory, no permission) or not UTF-8 is a DocumentError
    (line 0 unless a bad byte has one). A regular file over the limit is refused by its size before
    any read; otherwise it is read in one call, and a file that grew meanwhile is read on, bounded."""
    try:
        with open(path, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                return read_bounded(stream, limits, hint)
            if info.st_size > limits.max_bytes:
                raise DocumentError(0, f"{info.st_size} bytes, over the {limits.max_bytes}-byte limit{hint}")
            data = stream.read(info.st_size + 1)
            return decode(data) if len(data) <= info.st_size else read_bounded(stream, limits, hint, data)
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


class _BoundedLoader(_CLoader):  # type: ignore[misc, valid-type]
    """libyaml's safe loader that records where each document starts and keeps integers too long
    for Python as their text."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.document_lines: list[int] = []

    def construct_document(self, node: Any) -> Any:
        self.document_lines.append(node.start_mark.line + 1)
        return super().construct_document(node)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # libyaml's composer asks for the tag of every scalar. For a plain scalar the safe resolver's
        # answer depends on its text alone (no path resolvers are registered), and manifests repeat
        # the same keys and values thousands of times: remember the answers.
        if kind is yaml.ScalarNode and implicit[0]:
            tag = _PLAIN_SCALAR_TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= 64 and len(_PLAIN_SCALAR_TAGS) < 100_000:
                    _PLAIN_SCALAR_TAGS[value] = tag
            return tag
        return super().resolve(kind, value, implicit)

    def construct_yaml_int(self, node: Any) -> Any:
        try:
            return super().construct_yaml_int(node)
        except ValueError:
            return self.construct_scalar(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
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


def yaml_problem(error: yaml.YAMLError) -> DocumentError:
    """A YAML error as file line and problem, never with the snippet of the offending line."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or "not valid YAML"
    column = f", column {mark.column + 1}" if mark is not None else ""
    return DocumentError(mark.line + 1 if mark is not None else 0, f"invalid YAML{column}: {problem}")


def load_yaml(text: str, limits: Limits = DEFAULT_LIMITS, expanded: bool = False) -> list[tuple[int, Any]]:
    """(line, document) for every document in a YAML stream (empty documents included, as None)."""
    check_nesting(text, limits)
    loader = _BoundedLoader(text)
    documents: list[Any] = []
    try:
        while loader.check_data():
            documents.append(loader.get_data())
    except yaml.YAMLError as error:
        problem = yaml_problem(error)
        # libyaml may report a problem at the end of the stream, one line past the last.
        last_line = text.count("\n") + (0 if text.endswith("\n") else 1)
        complete = _checked(documents, loader.document_lines, text, limits, expanded)
        raise DocumentError(min(problem.line, max(last_line, 1)), problem.message, complete) from None
    except RecursionError:
        raise DocumentError(0, f"nested more than {limits.max_depth} levels deep") from None
    finally:
        loader.dispose()
    return _checked(documents, loader.document_lines, text, limits, expanded)


def _checked(documents: list[Any], lines: list[int], text: str, limits: Limits, expanded: bool) -> list[tuple[int, Any]]:
    pairs = [(lines[index] if index < len(lines) else 1, document) for index, document in enumerate(documents)]
    if expanded or "&" in text:
        for line, document in pairs:
            check_structure(document, line, limits, expanded)
    return pairs


# --- JSON -----------------------------------------------------------------------------------------


def _json_int(text: str) -> Any:
    return int(text) if len(text) < 4000 else text


_JSON_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n]')


def load_json(text: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """One JSON document. JSON has no aliases, so only its nesting needs a bound before parsing."""
    if text.count("[") + text.count("{") > limits.max_depth:
        deep_line = _json_deep_line(text, limits)
        if deep_line:
            raise DocumentError(deep_line, f"nested more than {limits.max_depth} levels deep")
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as error:
        raise DocumentError(error.lineno, f"invalid JSON, column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise DocumentError(0, f"nested more than {limits.max_depth} levels deep") from None


def _json_deep_line(text: str, limits: Limits) -> int:
    """The line where JSON nesting first passes the cap (strings skipped), or 0 if it never does."""
    depth, line = 0, 1
    for token in _JSON_TOKENS.finditer(text):
        char = token.group()
        if char == "\n":
            line += 1
        elif char in "[{":
            depth += 1
            if depth > limits.max_depth:
                return line
        elif char in "]}":
            depth -= 1
        else:
            line += char.count("\n")
    return 0


# --- Structure ------------------------------------------------------------------------------------


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield key
            yield value
    elif isinstance(node, (list, tuple)):
        yield from node


def check_structure(document: Any, line: int, limits: Limits = DEFAULT_LIMITS, expanded: bool = False) -> None:
    """Walk a loaded document iteratively: no recursive alias, at most `max_depth` levels, at most
    `max_nodes` nodes (distinct ones, or every path when `expanded`)."""
    visited: set[int] = set()
    on_path: set[int] = set()
    count = 0
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
