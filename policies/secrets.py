"""Values the engine marked secret, kept usable by the rules and never printable.

The pack sees a secret-marked property's plain value (pulumi-policy unwraps secrets before
validators run), and the rules need that value: a secret `1500m` is still a fraction the API server
refuses, so the verdict stands. What must never happen is that any part of it, or anything derived
from it, reaches a message. So the pack hands the rules `SecretText`/`SecretNumber` in place of
each secret scalar: they compare, hash and parse as the value they hold, but format, print and
`repr` as `[secret]`, and the rules name such a value only by its path (`is_secret`). As a second
line, `redact` replaces any secret text of the request that still shows in a message (a secret
written into a key, or a value turned into text with `str()`).

Pure: no Pulumi imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .limits import is_number

SHOWN = "[secret]"


class SecretText(str):
    """A secret string: equal to its value for the rules, `[secret]` in any message."""

    __slots__ = ()

    def __repr__(self) -> str:
        return SHOWN

    def __format__(self, spec: str) -> str:
        return SHOWN


class SecretNumber(float):
    """A secret number (the wire carries every number as a double)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return SHOWN

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return SHOWN


def is_secret(value: Any) -> bool:
    return isinstance(value, (SecretText, SecretNumber))


def as_secret(value: Any) -> Any:
    """A secret-marked scalar as the rules get it (booleans and null stay as they are: they carry
    no text worth hiding and `bool` cannot be subclassed)."""
    if isinstance(value, str):
        return SecretText(value)
    if is_number(value):
        return SecretNumber(value)
    return value


def secret_forms(value: Any) -> Iterable[str]:
    """Every text a secret scalar may be printed as (a whole float also as an integer)."""
    if isinstance(value, bool) or value is None:
        return ()
    if isinstance(value, str):
        text = str.__str__(value)
    else:
        text = float.__repr__(float(value)) if isinstance(value, float) else str(value)
    forms = [text] if text.strip() else []
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
        forms.append(str(int(value)))
    return forms


_BOUNDARY_BEFORE = r"(?<![\w.-])"
_BOUNDARY_AFTER = r"(?![\w.-])"


def redact(message: str, secrets: Iterable[str]) -> str:
    """`message` with every secret text that stands alone in it (not inside a longer word) shown as
    `[secret]`, longest first. Linear in the number of secrets: each is a substring test first."""
    present = [text for text in secrets if text and text in message]
    if not present:  # nearly every message: no secret text in it at all
        return message
    present.sort(key=len, reverse=True)
    for text in present:
        message = re.sub(_BOUNDARY_BEFORE + re.escape(text) + _BOUNDARY_AFTER, SHOWN, message)
    return message


#: How `Redactor` reads a message: runs of the characters `redact` counts as one word (a secret stands
#: alone between them); and a key path: its segments between `.` and brackets (`nodeLabels.<key>`).
_WORD = re.compile(r"[\w.-]+")
_SEGMENT = re.compile(r"[^.\[\]]+")
_SEGMENT_BEFORE, _SEGMENT_AFTER = r"(?<![^.\[\]])", r"(?![^.\]\[])"


class Redactor:
    """`redact` against a fixed set of secret texts, for many messages, in time linear in each message
    however many texts there are: each text is indexed by its first word, and a message is looked up
    word by word (a stand-alone secret's first word is a whole word of the message). `path` does the
    same for a key path, where a secret map key stands between `.` and brackets."""

    def __init__(self, texts: Iterable[str]) -> None:
        unique = [text for text in dict.fromkeys(texts) if text.strip()]
        self._words = _index(unique, _WORD)
        self._segments = _index(unique, _SEGMENT)

    def __bool__(self) -> bool:
        return bool(self._words[0] or self._words[1])

    def __call__(self, message: str) -> str:
        return _redacted(message, self._words, _WORD, _BOUNDARY_BEFORE, _BOUNDARY_AFTER)

    def path(self, path: str) -> str:
        return _redacted(path, self._segments, _SEGMENT, _SEGMENT_BEFORE, _SEGMENT_AFTER)


_Index = tuple[dict[str, list[str]], list[str]]


def _index(texts: Iterable[str], word: re.Pattern[str]) -> _Index:
    by_word: dict[str, list[str]] = {}
    wordless: list[str] = []
    for text in texts:
        first = word.search(text)
        if first is None:
            wordless.append(text)
        else:
            by_word.setdefault(first.group(), []).append(text)
    return by_word, wordless


def _redacted(message: str, index: _Index, word: re.Pattern[str], before: str, after: str) -> str:
    by_word, wordless = index
    candidates = [text for found in dict.fromkeys(word.findall(message)) for text in by_word.get(found, ())]
    present = sorted((text for text in candidates + wordless if text in message), key=len, reverse=True)
    for text in present:
        message = re.sub(before + re.escape(text) + after, SHOWN, message)
    return message


def secret_strings(value: Any, limit: int = 100_000) -> list[str]:
    """The strings of a secret config value, its map keys included (at most `limit`, walked without
    recursion): what a message about it must not show."""
    found: list[str] = []
    pending = [value]
    while pending and len(found) < limit:
        node = pending.pop()
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            found += [key for key in node if isinstance(key, str)]
            pending += node.values()
        elif isinstance(node, list):
            pending += node
    return found
