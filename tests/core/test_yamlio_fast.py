"""`load_yaml_data` (libyaml + ruamel's YAML 1.2 rules) reads exactly what `plain(load_yaml(...))` reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.bundle import _jsonable
from verifier.core.errors import InputError
from verifier.core.resources import PROJECT_DIR
from verifier.core.yamlio import load_yaml, load_yaml_data, plain

SHARED = PROJECT_DIR.parent / "shared"
EDGE_SCALARS = [
    "yes", "no", "on", "off", "y", "n", "true", "True", "FALSE", "null", "Null", "~", "",
    "017", "0o17", "0x1F", "0b101", "1_000", "+12", "-0", "12e4", "1.5e-3", ".5", "-.inf", ".NaN", "1:30",
    "2026-10-29", "2026-10-29T17:40:00Z", "2026-10-29 17:40:00.25 +02:00", "0.1.0", "v1", "1e", "0x", "'3'",
    '"4"', "4a65c8e3173ce0431e198734ff555e7cdc878d72", "1234567", "12e45", "0o", "++1",
]


def _yaml_files() -> list[Path]:
    roots = [PROJECT_DIR / "policies", PROJECT_DIR / "fixtures", SHARED / "cases", SHARED / "perf"]
    files: list[Path] = []
    for root in roots:
        if root.is_dir():
            files += [p for p in root.rglob("*.yaml") if "tree" not in p.relative_to(root).parts]
    return sorted(files)


def _both(text: str) -> tuple[object, object]:
    return _jsonable(load_yaml_data(text, "x")), _jsonable(plain(load_yaml(text, "x")))


@pytest.mark.parametrize("scalar", EDGE_SCALARS)
def test_edge_scalars_read_alike(scalar: str) -> None:
    fast, slow = _both(f"k: {scalar}\nl: [{scalar or '~'}]\n")
    assert repr(fast) == repr(slow)  # repr: NaN is not equal to itself


def test_every_shipped_yaml_file_reads_alike() -> None:
    files = _yaml_files()
    assert len(files) > 50
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            fast, slow = _both(text)
        except InputError:
            with pytest.raises(InputError):
                load_yaml_data(text, str(path))
            continue
        assert fast == slow, path


@pytest.mark.parametrize(
    "text",
    ["a: 1\na: 2\n", "a: &l [x, *l]\n", "a: [" * 300 + "]" * 300 + "\n", "a: b: c\n", "\t- x\n"],
)
def test_refuses_what_the_round_trip_loader_refuses(text: str) -> None:
    with pytest.raises(InputError):
        load_yaml_data(text, "x")


def test_merge_keys_follow_yaml() -> None:
    assert load_yaml_data("b: &x {p: 1, q: 3}\nc:\n  <<: *x\n  p: 2\n", "x") == {
        "b": {"p": 1, "q": 3},
        "c": {"p": 2, "q": 3},
    }


def test_unknown_tags_stay_opaque_and_are_never_executed() -> None:
    data = load_yaml_data('a: !!python/object/apply:os.system ["true"]\nb: !foo bar\n', "x")
    assert {type(v).__name__ for v in data.values()} == {"TaggedValue"}


def test_the_yaml_1_2_rules_are_ruamels() -> None:
    """IMPLICIT_12 (data, so that a verdict imports no ruamel) is ruamel's own YAML 1.2 table."""
    from ruamel.yaml import resolver

    from verifier.core.yamlio import _IMPLICIT_12_TAGS, _TAG, _Resolver12

    ours: dict[str, tuple[str, int, set[str]]] = {}
    for first, rules in _Resolver12.yaml_implicit_resolvers.items():
        for tag, regexp in rules:
            ours.setdefault(tag, (regexp.pattern, regexp.flags, set()))[2].add(first)
    theirs = {tag: (regexp.pattern, regexp.flags, set(first)) for versions, tag, regexp, first
              in resolver.implicit_resolvers if (1, 2) in versions and tag.removeprefix(_TAG) in _IMPLICIT_12_TAGS}
    assert ours == theirs


def test_key_lines_are_the_round_trip_lines() -> None:
    from verifier.core.yamlio import line_of, load_yaml_lines

    text = ("# thresholds\ndefault:\n  gsm8k: 0.9\n  gpqa: 0.3\nmodels:\n  dsr1:\n    gsm8k: 0.91\n"
            "  qwen3.5:\n\n    gsm8k: 0.8  # note\nlist:\n  - a\n  -\n    b: 1\n")
    data, lines = load_yaml_lines(text, "x")
    assert data == load_yaml_data(text, "x")
    doc = load_yaml(text, "x")
    assert lines[("default", "gpqa")] == line_of(doc["default"], "gpqa") == 4
    assert lines[("models", "qwen3.5", "gsm8k")] == line_of(doc["models"]["qwen3.5"], "gsm8k") == 10
    assert lines[("list", 1, "b")] == 14
