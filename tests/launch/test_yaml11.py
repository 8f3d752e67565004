"""YAML 1.1 loading with line numbers (verifier.core.yaml11)."""

from __future__ import annotations

import pytest

from verifier.core.errors import InputError
from verifier.core.yaml11 import parse_yaml11


def test_yaml11_scalars_match_pyyaml_safe_load() -> None:
    doc = parse_yaml11("a: on\nb: 1e-3\nc: 1.0e-3\nd: 0.80\ne: 1_000\nf: '08'\ng: ~\nh: no\n", "x.yaml")
    assert doc.data == {"a": True, "b": "1e-3", "c": 0.001, "d": 0.8, "e": 1000, "f": "08", "g": None, "h": False}


def test_lines_of_keys_and_items() -> None:
    doc = parse_yaml11("top:\n  list:\n  - 1\n  - {x: 2}\n  key: v\n", "x.yaml")
    assert doc.line("top") == 1
    assert doc.line("top", "list") == 2
    assert doc.line("top", "list", 1) == 4
    assert doc.line("top", "list", 1, "x") == 4
    assert doc.line("top", "key") == 5
    assert doc.get("top", "list", 1, "x") == 2
    assert doc.get("top", "missing", default="d") == "d"


def test_merge_keys_order_precedence_and_lines() -> None:
    text = (
        "a:\n"
        "  <<: &anchor\n"
        "    k1: 1\n"
        "    k2: 2\n"
        "  k2: 20\n"
        "  k3: 3\n"
        "b:\n"
        "  <<: *anchor\n"
        "  k0: 0\n"
    )
    doc = parse_yaml11(text, "x.yaml")
    assert list(doc.data["a"].items()) == [("k1", 1), ("k2", 20), ("k3", 3)]
    assert list(doc.data["b"]) == ["k1", "k2", "k0"]
    assert doc.line("a", "k2") == 5  # the explicit key next to << wins, with its line
    assert doc.line("b", "k1") == 3  # merged keys keep the anchor's definition line
    assert doc.data["a"] is not doc.data["b"]


def test_merge_list_earlier_mapping_wins() -> None:
    doc = parse_yaml11("x: &x {v: 1}\ny: &y {v: 2, w: 3}\nz:\n  <<: [*x, *y]\n", "x.yaml")
    assert doc.data["z"] == {"v": 1, "w": 3}


def test_duplicates_are_recorded_last_wins() -> None:
    doc = parse_yaml11("a: 1\nb: 2\na: 3\n", "x.yaml")
    assert doc.data == {"a": 3, "b": 2}
    assert doc.duplicates == [(("a",), 3)]
    assert doc.line("a") == 3


def test_line_offset() -> None:
    assert parse_yaml11("a: 1\n", "x.yaml", line_offset=10).line("a") == 11


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("a: !!python/object:os.system x\n", "unsupported YAML tag"),
        ("a: !custom {b: 1}\n", "unsupported YAML tag"),
        ("a: [1, 2\n", "invalid YAML"),
        ("a: *missing\n", "invalid YAML"),
    ],
)
def test_hostile_or_broken_input_is_refused(text: str, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        parse_yaml11(text, "x.yaml")


def test_alias_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier.core.yaml11 as mod

    monkeypatch.setattr(mod, "MAX_NODES", 10_000)
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    with pytest.raises(InputError, match="alias bomb"):
        parse_yaml11("\n".join(lines) + "\n", "bomb.yaml")


def test_empty_document() -> None:
    assert parse_yaml11("# only a comment\n", "x.yaml").data is None
