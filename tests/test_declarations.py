"""The declaration engine on its own: a small document exercising each kind of declaration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from gpu_aks_policies.declarations import (
    Check,
    Default,
    Document,
    Key,
    ListOf,
    Reader,
    Section,
    boolean,
    choice,
    reference_markdown,
    text,
)


@dataclass(frozen=True)
class Pool:
    name: str
    size: int
    fast: bool


@dataclass(frozen=True)
class Db:
    password: str
    mode: str
    replicas: int


def _replicas_fit(reader: Reader) -> None:
    if reader.get("mode") == "single" and reader.get("replicas") > 1:
        reader.reject("replicas", "must be 1 with mode: single")


def _old_mode(reader: Reader) -> None:
    if reader.get("mode") == "legacy":
        reader.warn("mode", "'legacy' is deprecated; use 'single'")


DB = Section("db", "The database.", (
    text("password", "The admin password.", None, secret=True, attr="password", required=True),
    choice("mode", "How it runs.", ("single", "replicated", "legacy"), "single", attr="mode"),
    Check(_old_mode, reads=("mode",)),
    Key("replicas", "How many.", "integer", Default(lambda r: 3 if r.get("mode") == "replicated" else 1,
                                                     "3 when replicated, else 1"),
        check=lambda v: None if isinstance(v, int) and v > 0 else "is not a positive whole number", attr="replicas"),
    Check(_replicas_fit, reads=("mode", "replicas"), doc="`replicas` is 1 with `mode: single`."),
), cls=Db)

POOL = Section("pools[]", "A pool.", (
    text("name", "Its name.", None, attr="name", required=True),
    Key("size", "Its size.", "integer", 1, check=lambda v: None if isinstance(v, int) else "is not a whole number",
        attr="size"),
    Section("speed", "How fast.", (boolean("fast", "Fast or not.", False, attr="fast"),), flatten=True),
), cls=Pool)

DOC = Document("demo", "A demo.", Section("", "", (DB, ListOf("pools", "The pools.", POOL, noun="pools"))),
               misplaced={"region": "the region is read from cloud:region"})


def parse(raw: dict[str, Any], secret: tuple[str, ...] = ()) -> Reader:
    return DOC.parse(raw, None, secret)


def test_defaults_computed_defaults_and_flattened_sections_build_objects_once():
    reader = parse({"db": {"password": "x", "mode": "replicated"}, "pools": [{"name": "a", "speed": {"fast": True}}]})
    assert reader.problems.items == []
    assert reader.children["db"].build() == Db("x", "replicated", 3)
    assert [pool.build() for pool in reader.lists["pools"]] == [Pool("a", 1, True)]


def test_problems_name_the_key_mask_secrets_and_suggest_the_close_name():
    reader = parse({"db": {"password": 42, "mdoe": "x"}, "pool": [], "region": "eu",
                    "pools": [{"name": "a", "size": "big", "speed": {"fats": 1}}, "nope"]})
    assert reader.problems.items == [
        "demo:pool: unknown config key; did you mean 'demo:pools'? demo takes db, pools",
        "demo:region: the region is read from cloud:region",
        "demo:db.mdoe: unknown setting; did you mean 'mode'? allowed: password, mode, replicas",
        "demo:db.password: [secret] is not a non-empty string",
        "demo:pools[0].size: 'big' is not a whole number",
        "demo:pools[0].speed.fats: unknown setting; did you mean 'fast'? allowed: fast",
        "demo:pools[1]: expected an object of settings, got 'nope'",
        "demo:pools[1].name: is missing; its name.",
    ]


def test_a_secret_section_masks_every_value_under_it():
    reader = parse({"db": {"password": "x", "mode": "clustered"}}, secret=("db",))
    assert reader.problems.items == ["demo:db.mode: [secret] is not allowed; allowed: single, replicated, legacy"]


def test_a_check_runs_only_on_cleanly_parsed_keys_and_reject_falls_back_to_the_default():
    reader = parse({"db": {"password": "x", "replicas": 2}})
    assert reader.problems.items == ["demo:db.replicas: must be 1 with mode: single"]
    assert reader.children["db"].get("replicas") == 1
    assert parse({"db": {"password": "x", "mode": "bad", "replicas": 2}}).problems.items == [
        "demo:db.mode: 'bad' is not allowed; allowed: single, replicated, legacy"], "no knock-on problem"


def test_warnings_are_collected_apart_from_problems():
    reader = parse({"db": {"password": "x", "mode": "legacy"}})
    assert reader.problems.items == [] and reader.problems.warnings == ["demo:db.mode: 'legacy' is deprecated; use 'single'"]


def test_a_required_key_is_required():
    assert parse({"db": {}}).problems.items == ["demo:db.password: is missing; the admin password."]


def test_a_list_that_is_not_a_list_is_named():
    assert parse({"db": {"password": "x"}, "pools": {"name": "a"}}).problems.items == [
        "demo:pools: expected a list of pools, got {\"name\": \"a\"}"]


def test_the_reference_page_and_schema_come_from_the_same_declarations():
    page = reference_markdown(DOC)
    assert "| `password` | string | required |  | The admin password. **Secret.** |" in page
    assert "| `speed.fast` | boolean | `false` |" in page and "3 when replicated, else 1" in page
    assert "- `replicas` is 1 with `mode: single`." in page
    schema = DB.json_schema()
    assert schema["properties"]["mode"] == {"description": "How it runs.", "type": "string",
                                            "enum": ["single", "replicated", "legacy"], "default": "single"}
    assert schema["additionalProperties"] is False


def test_a_section_refuses_a_listed_order_that_is_not_its_keys():
    with pytest.raises(ValueError):
        Section("x", "", (text("a", "", None),), listed=("a", "b"))


def _replicas_within_pools(reader: Reader) -> None:
    pools = reader.root.lists.get("pools", [])
    if reader.get("replicas") > len(pools):
        reader.problem("replicas", f"is more than the {len(pools)} pools declared after it")


def test_a_check_declared_after_document_runs_once_the_document_is_read():
    """A check across sections (#49: those that ask about the document's pools) is declared and documented in its
    section, and runs after the whole document: it sees sections declared after its own, still only on keys that
    parsed cleanly, and its problems join the others'."""
    db = Section("db", "The database.", (
        Key("replicas", "How many.", "integer", 1, attr="replicas",
            check=lambda v: None if isinstance(v, int) else "is not a whole number"),
        Check(_replicas_within_pools, reads=("replicas",), doc="At most one replica per pool.", after_document=True),
    ), cls=lambda replicas: replicas)
    document = Document("demo", "A demo.", Section("", "", (db, ListOf("pools", "The pools.", POOL, noun="pools"))))
    one_pool = {"pools": [{"name": "a"}]}
    assert document.parse({"db": {"replicas": 1}, **one_pool}).problems.items == []
    problems = document.parse({"db": {"replicas": 2}, "pools": [{"name": "a", "size": "x"}]}).problems.items
    assert problems == ["demo:pools[0].size: 'x' is not a whole number",
                        "demo:db.replicas: is more than the 1 pools declared after it"]
    assert document.parse({"db": {"replicas": "x"}, **one_pool}).problems.items == [
        "demo:db.replicas: 'x' is not a whole number"], "not on a key that failed"
    assert "At most one replica per pool." in reference_markdown(document)
