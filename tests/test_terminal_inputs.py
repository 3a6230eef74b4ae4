"""What a tool prints (`gpu_aks_policies.terminal`): escaped, with no control or workflow command.

The module they pin: `policies/terminal.py`. Each test failed on the code before its fix."""

from __future__ import annotations

import json

import pytest
from gpu_aks_policies.terminal import escape_json, escape_text

from tests.inputs import assert_inert


@pytest.mark.slow
@pytest.mark.parametrize(("text", "escaped"), [
    ("\x1b[31mred", "\\x1b[31mred"), ("a\rb", "a\\x0db"), ("\x00\x7f\x85\x9f", "\\x00\\x7f\\x85\\x9f"),
    ("x\u2028y\u2029z", "x\\u2028y\\u2029z"), ("::error::x", "\\x3a:error::x"), ("  \t::warning::x", "  \\x09::warning::x"),
    ("  ::set-output name=a::b", "  \\x3a:set-output name=a::b"), ("\u3000::debug::x", "\u3000\\x3a:debug::x"),
    ("say ##[error]x", "say ##\\x5berror]x"), ("#\u200b#[error]", "#\\u200b#[error]"), ("ok: a::b", "ok: a::b"),
    ("line\n::stop-commands::t", "line\n\\x3a:stop-commands::t"), ("\ud800", "\\ud800"),
])
def test_escape_text_neutralises_every_form(text, escaped):
    assert escape_text(text) == escaped
    assert_inert(escape_text(text))


@pytest.mark.slow
def test_escape_json_keeps_the_data_and_shows_no_command():
    data = {"name": "##[error]x\n::error::y", "other": ["##[", "#"]}
    shown = escape_json(json.dumps(data, indent=2))
    assert "##[" not in shown and json.loads(shown) == data
