"""Regression tests for the issue 9 DoS, crash and smaller findings, one per cause."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest

from verifier.core.errors import InputError
from verifier.core.logins import is_login, same_login
from verifier.core.model import Comment
from verifier.core.textscan import paired_spans
from verifier.core.yaml11 import parse_yaml11
from verifier.core.yamlio import load_json, load_yaml
from verifier.render.text import code_span, neutralize

# ---------------------------------------------------------------- (a) quadratic inputs


@pytest.mark.parametrize(("opening", "closing"), [(r"<!--", r"-->"), (r"<details\b", r"</details\s*>")])
def test_paired_spans_find_what_the_lazy_regex_found(opening: str, closing: str) -> None:
    """The linear scanner pairs exactly like `opening.*?closing` (DOTALL) on random small texts."""
    rng = random.Random(9)
    alphabet = ["<!--", "-->", "<details", "<details>", "</details>", "</details >", "x", "\n", " ", "-", ">"]
    lazy = re.compile(opening + r".*?" + closing, re.DOTALL | re.IGNORECASE)
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        spans = paired_spans(text, re.compile(opening, re.I), re.compile(closing, re.I))
        assert [(s.start, s.end) for s in spans] == [m.span() for m in lazy.finditer(text)], text


def test_merge_keys_resolve_like_pyyaml() -> None:
    """Memoized, per-key reduced merges keep PyYAML's result: explicit keys win, earlier sources win."""
    import yaml

    text = ("a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc: {<<: [*a, *b], y: 3}\n"
            "e: &e {<<: [*a, *a], w: 0}\nf: {<<: [*e, *b]}\n")
    assert parse_yaml11(text, "m.yaml").data == yaml.safe_load(text)


def test_merge_key_cycle_is_refused() -> None:
    with pytest.raises(InputError):
        parse_yaml11("a: &a {k: 1}\nb: &b {<<: *a, self: *a}\n" + "c: &c {<<: [*b, *b]}\n" * 1, "m.yaml")
        parse_yaml11("&r {<<: *r}\n", "m.yaml")


# ---------------------------------------------------------------- (b) crashes without a row


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param('{"image": "\\ud800x"}', "lone UTF-16 surrogate", id="lone-high-surrogate"),
        pytest.param('["\\udc00"]', "lone UTF-16 surrogate", id="lone-low-surrogate"),
        pytest.param('{"\\ud800": 1}', "lone UTF-16 surrogate", id="surrogate-key"),
        pytest.param('{"tput": ' + "9" * 100_000 + "}", "digits refused", id="huge-int"),
        pytest.param('{"p90": 1e400}', "overflows a float", id="float-overflow"),
        pytest.param('{"p90": NaN}', "not a finite number", id="nan"),
        pytest.param("[" * 100_000 + "]" * 100_000, "invalid JSON", id="deep-nesting"),
    ],
)
def test_hostile_json_is_an_input_error_naming_the_file(text: str, reason: str) -> None:
    with pytest.raises(InputError, match=reason) as info:
        load_json(text, "runs/1/bmk/result.json")
    assert info.value.path == "runs/1/bmk/result.json"


def test_a_surrogate_pair_is_still_text() -> None:
    assert load_json('["\\ud83d\\ude80"]', "x.json") == ["\U0001f680"]


def test_huge_yaml_ints_are_refused() -> None:
    with pytest.raises(InputError, match="out of range"):
        parse_yaml11("tp: " + "9" * 400 + "\n", "m.yaml")
    with pytest.raises(InputError, match="out of range"):
        load_yaml("tp: " + "9" * 400 + "\n", "m.yaml")


def test_naive_times_are_read_as_utc() -> None:
    naive = Comment(id=1, author="a", author_association="NONE", body="", created_at="2026-10-29T10:00:00")
    aware = Comment(id=2, author="a", author_association="NONE", body="", created_at="2026-10-29T11:00:00Z")
    assert naive.created_at.tzinfo is not None
    assert sorted([aware.created_at, naive.created_at])[0] == dt.datetime(2026, 10, 29, 10, tzinfo=dt.UTC)


# ---------------------------------------------------------------- (c) bidi, ANSI, logins


@pytest.mark.parametrize("char", ["\u202e", "\u202a", "\u2066", "\u2069", "\u200e", "\u200f", "\x1b", "\x9b",
                                  "\x07", "\ud800"])
def test_code_spans_neutralize_bidi_ansi_and_surrogates(char: str) -> None:
    span = code_span(f"a{char}[31mb")
    assert char not in span and f"[U+{ord(char):04X}]" in span
    span.encode("utf-8")


def test_neutralize_keeps_ordinary_text() -> None:
    assert neutralize("数据 🚀 ünï -- x") == "数据 🚀 ünï -- x"


@pytest.mark.parametrize(
    ("login", "valid"),
    [("nvpohanh", True), ("kedarpotdar-nv", True), ("github-actions[bot]", True), ("Oseltamivir", True),
     ("\u212aedarpotdar-nv", False), ("nvp\u043ehanh", False), ("nvpohanh\u200d", False), ("-lead", False),
     ("a--b", False), ("a" * 40, False), ("", False)],
)
def test_logins_are_ascii_or_nobody(login: str, valid: bool) -> None:
    assert is_login(login) is valid


def test_a_kelvin_sign_does_not_fold_into_an_owner() -> None:
    assert "\u212aedarpotdar-nv".lower() == "kedarpotdar-nv"  # why str.lower() was not enough
    assert not same_login("\u212aedarpotdar-nv", "kedarpotdar-nv")
    assert same_login("KedarPotdar-NV", "kedarpotdar-nv")
