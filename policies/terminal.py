"""Text that input cannot steer: what every tool prints passes through here.

Names of files, objects, nodes and conditions come from whoever wrote the input. Printed raw they
could move the cursor and repaint the screen (ESC sequences), hide text (bidi and zero-width
characters), start new lines the reader takes for ours (CR, NEL, U+2028/2029), or run GitHub
Actions workflow commands in a CI log. The Actions runner reads a line as a command when, after
trimming leading white space, it starts with `::`, or when it contains `##[` anywhere
(actions/runner `src/Runner.Common/ActionCommand.cs`, `TryParseV2` and `TryParse`).

- `escape_text`: for text output. C0 controls other than the newline, DEL, C1 controls, U+2028/2029,
  bidi controls, zero-width and other invisible format characters, and lone surrogates become
  backslash escapes (`\\x1b`, `\\u2028`); a line that would start with `::` gets its first colon as
  `\\x3a`, and `##[` becomes `##\\x5b`. Our own newlines stay, and no output line can be a command.
- `escape_json`: for JSON and SARIF, which `json.dumps` already keeps ASCII and free of controls:
  `##[` inside a string becomes `##\\u005b`, which decodes to the same text, so the document stays
  valid and equal while a log that shows it runs nothing.

`json_output` writes a report as JSON with `escape_json` applied, its findings one to a line.

`run_cli` runs a command so that a reader that stops early (`| head -1`) ends it quietly.
No imports outside the standard library.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Collection
from typing import Any, NoReturn

from .limits import clipped

#: Characters a terminal or a log viewer acts on instead of showing: C0 (newline excepted), DEL, C1,
#: the soft hyphen and other invisible format characters, zero-width and bidi controls, line and
#: paragraph separators, interlinear annotation marks, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e"
                     "\u2060-\u206f\u3164\ufeff\ufff9-\ufffb\ud800-\udfff]")
_ASCII_UNSAFE = bytes([*range(0x0a), *range(0x0b, 0x20), 0x7f])
#: A line whose first non-blank characters are `::` (the runner trims Unicode white space first).
_COMMAND_LINE = re.compile(r"^(\s*):(?=:)", re.MULTILINE)
_LEGACY_COMMAND = "##["


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: str) -> str:
    """`text` as every terminal and CI log can show it, with nothing in it acting as a control or a
    workflow command. Newlines are kept: callers put input on one line by escaping it first with
    `escape_line`."""
    if not text.isascii() or len(text.encode("ascii").translate(None, _ASCII_UNSAFE)) != len(text):
        text = _UNSAFE.sub(_escaped, text)  # (ASCII text, nearly all output, is checked at C speed first)
    if "::" in text:
        text = _COMMAND_LINE.sub(r"\1\\x3a", text)
    return text.replace(_LEGACY_COMMAND, "##\\x5b") if _LEGACY_COMMAND in text else text


def escape_line(text: str) -> str:
    """One field of input (a file or object name) kept on one line: its newlines escaped too. (The
    output it goes into still passes `escape_text`, which neutralises workflow commands.)"""
    if text.isprintable():  # False for every control, separator and format character: the common fast path
        return text
    return _UNSAFE.sub(_escaped, text.replace("\n", "\\n"))


def escape_field(text: str, limit: int) -> str:
    """One field of input (a key, a name) for a line another program prints as it is (the Pulumi
    engine prints a provider's property paths and a program's messages): on one line, with no control
    and no workflow command (`escape_line`, then `escape_text`), and at most about `limit` characters
    of it, the rest counted, so a megabyte-long key cannot fill a log or overflow a gRPC trailer."""
    # The mark is printable and holds no `::`, `##[` or line break, so escaping leaves it as it is.
    return escape_text(escape_line(clipped(text, limit, limit, f"…({len(text)} characters)")))


def escape_json(text: str) -> str:
    """A `json.dumps` document (ASCII, the default) that shows no workflow command in a log and
    decodes to the same data."""
    return text.replace(_LEGACY_COMMAND, "##\\u005b") if _LEGACY_COMMAND in text else text


class EncodedJson(str):
    """Text that is already one JSON value, ASCII as `json.dumps` writes it: `json_output` writes it
    as it is. (For reports that write each finding directly, with `json_string` for their text.)"""


#: A string as a JSON string literal, ASCII: json's own (C) escaper, which `json.dumps` runs too.
json_string: Callable[[str], str] = json.encoder.encode_basestring_ascii


def json_output(document: Any, one_line: Collection[str] = ()) -> str:
    """`document` as JSON in `json.dumps(indent=2)`'s layout, except that each item of a list under
    a key named in `one_line` (a report's findings) is written on one line, and passed through
    `escape_json`. `json.dumps` with `indent` runs the pure-Python encoder, which took longer than
    checking when thousands of manifests broke a rule; each one-line item goes through the C
    encoder instead, and a finding per line is what `grep` and a diff want anyway."""
    parts: list[str] = []

    def write(value: Any, pad: str, items_on_one_line: bool) -> None:
        if type(value) is dict and value:
            inner = pad + "  "
            separator = "{\n"
            for key, item in value.items():
                parts.append(f"{separator}{inner}{json.dumps(str(key))}: ")
                write(item, inner, key in one_line)
                separator = ",\n"
            parts.append(f"\n{pad}}}")
        elif type(value) is list and value:
            inner = pad + "  "
            if items_on_one_line:
                parts.append(f"[\n{inner}" + f",\n{inner}".join(
                    item if type(item) is EncodedJson else json.dumps(item) for item in value) + f"\n{pad}]")
                return
            separator = "[\n"
            for item in value:
                parts.append(separator + inner)
                write(item, inner, False)
                separator = ",\n"
            parts.append(f"\n{pad}]")
        else:
            parts.append(value if type(value) is EncodedJson else json.dumps(value))

    write(document, "", False)
    return escape_json("".join(parts))


#: The status a shell reports for a command that SIGPIPE ended (128 + 13): what `cat`, `grep` or
#: `yes` give when the reader of their output (`| head -1`) has gone.
BROKEN_PIPE_STATUS = 141


def run_cli(main: Callable[[], int]) -> NoReturn:
    """Run a command's `main` and exit with its status. A reader that stops early (`| head -1`)
    ends the command quietly, as it ends conventional tools: no BrokenPipeError traceback, and the
    SIGPIPE status; standard output is pointed at the null device so that no later flush can fail.

    The process then ends without the interpreter's teardown (`os._exit`), once both standard
    streams are flushed. The teardown frees, one by one, every module, class and object the run
    built: with the Pulumi SDK loaded that was 0.45 s of the offline preview's 2.3 s. Nothing here waits
    for it: files are written and closed inside `with` blocks, child processes (the policy pack)
    are ended by their context managers, and no command registers `atexit` work."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        status = BROKEN_PIPE_STATUS
    sys.stderr.flush()
    os._exit(status)
