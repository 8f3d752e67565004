"""verifier.core.shellwords.split gives exactly what shlex.split gives (POSIX mode), errors included."""

from __future__ import annotations

import random
import shlex

import pytest

from verifier.core.shellwords import split

ALPHABET = ["a", "b", "-", "=", " ", "  ", "\t", "\n", "\r", "'", '"', "\\", "#", "$", "{", "}", ",", "é", "\x0b", "\x00"]

CASES = [
    "", " ", "a b  c", "--tp 8 --model-path '/m o'", 'x"a\\"b"y', '"\\\\"', '"\\x"', "a\\ b", "a\\\nb",
    "''", "a''", '""', "a#b c", "#x\ny", "'unterminated", '"unterminated', "trailing\\", "a 'b\\' c",
    "--json '{\"k\": [1, 2]}' --x=\"y z\"",
]


def _outcome(fn, text: str, comments: bool) -> tuple[str, object]:
    try:
        return "ok", fn(text, comments=comments)
    except ValueError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("comments", [False, True])
@pytest.mark.parametrize("text", CASES)
def test_known_cases_match_shlex(text: str, comments: bool) -> None:
    assert _outcome(split, text, comments) == _outcome(lambda t, comments: shlex.split(t, comments=comments), text,
                                                       comments)


@pytest.mark.parametrize("comments", [False, True])
def test_random_texts_match_shlex(comments: bool) -> None:
    rng = random.Random(4524)
    for _ in range(4000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 24)))
        expected = _outcome(lambda t, comments: shlex.split(t, comments=comments), text, comments)
        assert _outcome(split, text, comments) == expected, repr(text)
