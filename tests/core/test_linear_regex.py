"""verifier.core.linear_regex: the matches `re` finds, in time linear in the text."""

from __future__ import annotations

import random
import re

import pytest

from verifier.core.linear_regex import compile_pattern

# patterns of the kinds InferenceX scripts give grep, sed and [[ =~ ]]
_REAL = [
    r"--tensor-parallel-size\s+[0-9]+", r".*_tp([0-9]+).*", r"^([0-9]+)x([0-9]+)$", r"enable-dp-attention",
    r"(fp8|fp4|bf16)", r"--(tp|dp|ep)[-_]size[= ]([0-9]+)", r"^\s*#", r"[A-Za-z_][A-Za-z0-9_]*=", r"\bmtp\b",
    r"(?i)SGLANG", r"model: *([^ ]+)", r"(a|ab)(c|bcd)(d*)", r"x{2,3}?y", r"^$", r"(\d+)\.(\d+)(\.(\d+))?",
]
_TEXTS = ["", "--tensor-parallel-size 8 --dp-size 2", "dsr1_fp4_tp8_ep8_conc64.json", "8x1024", "  # note",
          "MODEL=x Y=1", "sglang mtp=on", "model: deepseek-ai/DeepSeek-R1", "abcd", "xxxy\nxxy", "0.4.10\n", "SGLang\n"]


def _spans(m: object, groups: int) -> object:
    return None if m is None else (m.start(), m.end(), tuple(m.group(i) for i in range(groups + 1)))  # type: ignore[attr-defined]


@pytest.mark.parametrize("pattern", _REAL)
def test_real_patterns_match_as_re_does(pattern: str) -> None:
    expected, linear = re.compile(pattern), compile_pattern(pattern)
    assert linear is not None
    for text in _TEXTS:
        assert _spans(linear.search(text), expected.groups) == _spans(expected.search(text), expected.groups), text
        assert [(m.start(), m.end()) for m in linear.finditer(text)] == [m.span() for m in expected.finditer(text)]


def _pattern(rnd: random.Random, depth: int, nullable: bool = True) -> str:
    """A random pattern (`nullable`: it may match nothing); a repeated body always matches something
    (where it can match nothing in more than one way, the VM's match may differ from `re`'s:
    verifier.core.linear_regex)."""
    leaves = ["a", "b", ".", "[ab]", "[^a]", "\\d", "\\w", "x"] + (["\\b", "^", "$", ""] if nullable else [])
    r = rnd.random()
    if depth <= 0 or r < 0.3:
        return rnd.choice(leaves)
    if r < 0.5:
        return _pattern(rnd, depth - 1, nullable) + _pattern(rnd, depth - 1, True)
    if r < 0.65:
        return "(" + _pattern(rnd, depth - 1, nullable) + ")"
    if r < 0.8:
        return "(" + _pattern(rnd, depth - 1, nullable) + "|" + _pattern(rnd, depth - 1, nullable) + ")"
    body = _pattern(rnd, depth - 1, False)
    counts = ["*", "+", "?", "{1,2}", "{2}", "*?", "+?", "??", "{0,2}?"] if nullable else ["+", "{1,2}", "{2}", "+?"]
    return f"({body}){rnd.choice(counts)}"


def test_random_patterns_match_as_re_does() -> None:
    rnd = random.Random(7)
    checked = 0
    for _ in range(3000):
        text_pattern = _pattern(rnd, 4)
        expected, linear = re.compile(text_pattern), compile_pattern(text_pattern)
        assert linear is not None, text_pattern
        for _ in range(4):
            text = "".join(rnd.choice("ab1 \n") for _ in range(rnd.randint(0, 7)))
            got, want = linear.search(text), expected.search(text)
            assert _spans(got, expected.groups) == _spans(want, expected.groups), (text_pattern, text)
            assert [(m.start(), m.end()) for m in linear.finditer(text)] == [m.span() for m in expected.finditer(text)]
            checked += 1
    assert checked == 12000


@pytest.mark.parametrize(("pattern", "text", "span"), [
    (r"(a+)+b", "a" * 20_000, None),
    (r"(a|aa)+c", "a" * 20_000, None),
    (r".*a.*a.*a.*a.*b", "a" * 5_000, None),
    (r"(x+x+)+y", "x" * 5_000 + "y", (0, 5_001)),
])
def test_patterns_that_backtrack_are_matched_in_one_pass(pattern: str, text: str, span: tuple[int, int] | None) -> None:
    """With `re` each of these takes from minutes to longer than the age of the universe; here the
    cost is the text's length times the program's size (a regression is a run that does not end)."""
    linear = compile_pattern(pattern)
    assert linear is not None
    m = linear.search(text)
    assert (None if m is None else (m.start(), m.end())) == span


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)", r"(?<=a)b", r"(?>a)", r"a*+", r"(?s).", r"(?x) a",
                                     r"(", r"(?(1)a|b)", r"(?:a{1000}){30}"])
def test_what_the_vm_does_not_run_is_refused(pattern: str) -> None:
    assert compile_pattern(pattern) is None


def _any_pattern(rnd: random.Random, depth: int) -> str:
    """A random pattern whose repeated bodies may match nothing too (`_pattern` avoids those)."""
    r = rnd.random()
    if depth <= 0 or r < 0.3:
        return rnd.choice(["a", "b", ".", "[ab]", "\\w", "x", "\\b", "\\B", "^", "$", ""])
    if r < 0.5:
        return _any_pattern(rnd, depth - 1) + _any_pattern(rnd, depth - 1)
    if r < 0.65:
        return "(" + _any_pattern(rnd, depth - 1) + ")"
    if r < 0.8:
        return "(" + _any_pattern(rnd, depth - 1) + "|" + _any_pattern(rnd, depth - 1) + ")"
    return f"({_any_pattern(rnd, depth - 1)}){rnd.choice(['*', '+', '?', '{1,2}', '{0,3}', '*?', '+?', '??', '{2,}'])}"


def test_the_dfa_finds_a_match_exactly_where_the_vm_does() -> None:
    """`_may_match` (the lazy DFA that lets `search` skip the VM) answers as the VM does, also for
    patterns whose loops can match nothing in more than one way, where the VM may differ from `re`,
    from every start and with `must_advance`."""
    rnd = random.Random(11)
    checked = 0
    for _ in range(3000):
        linear = compile_pattern(_any_pattern(rnd, 4))
        assert linear is not None
        for _ in range(4):
            text = "".join(rnd.choice("ab1 \n") for _ in range(rnd.randint(0, 9)))
            pos, must_advance = rnd.randint(0, len(text)), rnd.random() < 0.5
            expected = linear._run(text, pos, must_advance) is not None
            assert linear._may_match(text, pos, must_advance) == expected, (text, pos, must_advance)
            checked += 1
    assert checked == 12000


def test_a_long_text_a_pattern_does_not_match_is_read_once_per_character() -> None:
    """The hostile scripts' patterns of nested repeats, on a text of 128 KiB they do not match: the
    DFA keeps a few states, so each character is a lookup (a regression is a run of seconds)."""
    for pattern in (r"(a+)+b", r"(a|aa)+c", r"(a|a)+b"):
        linear = compile_pattern(pattern)
        assert linear is not None
        assert linear.search("a" * 128 * 1024) is None
        assert len(linear.states) < 10, pattern


def test_the_dfa_keeps_a_bounded_table_on_a_text_of_many_characters() -> None:
    """A state's move is kept per character: a text of 100,000 distinct characters keeps at most
    MAX_MOVES of them, and the answer is the VM's."""
    from verifier.core import linear_regex

    text = "".join(chr(0x4E00 + i) for i in range(20_000)) + "".join(chr(0x10000 + i) for i in range(80_000))
    linear = compile_pattern(r"(.+)+\n")
    assert linear is not None
    assert linear.search(text) is None
    assert len(linear.moves) <= linear_regex.MAX_MOVES
