"""Brace and parameter expansions and the output of modelled utilities: one semantics
(verifier/shell/expansion.py, verifier/shell/utilities.py) for both walkers.

The worlds evaluator (single-node launches) and the multi-node trace hold values differently (`Val`,
`Text`) but expand braces and read `${...}` with one grammar and apply its operators, and `echo`,
`printf`, `seq`, `dirname`, `basename`, with one definition. Each case expands one word through
both and compares it with what bash 5 prints for it (`printf %s "<word>"` after the assignments),
written here.
"""

from __future__ import annotations

import pytest

from tests.shell.helpers import run, servers
from verifier.shell.text import plain
from verifier.shell.trace import Reader
from verifier.shell.values import shown

CASES: list[tuple[str, dict[str, str], str]] = [
    ("${X:-d}", {"X": ""}, "d"),
    ("${X:-d}", {}, "d"),
    ("${X-d}", {"X": ""}, ""),
    ("${X:+y}", {"X": "a"}, "y"),
    ("${X:+y}", {"X": ""}, ""),
    ("${X#*/}", {"X": "a/b/c"}, "b/c"),
    ("${X##*/}", {"X": "a/b/c"}, "c"),
    ("${X%/*}", {"X": "a/b/c"}, "a/b"),
    ("${X%%/*}", {"X": "a/b/c"}, "a"),
    ("${X/\\//_}", {"X": "a/b/c"}, "a_b/c"),
    ("${X//\\//_}", {"X": "a/b/c"}, "a_b_c"),
    ("${X/#a/z}", {"X": "a/b/c"}, "z/b/c"),
    ("${X/%c/z}", {"X": "a/b/c"}, "a/b/z"),
    ("${X//b}", {"X": "abcb"}, "ac"),
    ("${X:1:3}", {"X": "abcdef"}, "bcd"),
    ("${X: -2}", {"X": "abcdef"}, "ef"),
    ("${X: -9}", {"X": "abcdef"}, ""),  # an offset before the start keeps nothing
    ("${X:1:-2}", {"X": "abcdef"}, "bcd"),
    ("${X:N}", {"X": "abcdef", "N": "2"}, "cdef"),  # the offset is arithmetic
    ("${X:4:9}", {"X": "abcdef"}, "ef"),
    ("${X^}", {"X": "abc"}, "Abc"),
    ("${X^^}", {"X": "abc"}, "ABC"),
    ("${X,,}", {"X": "ABC"}, "abc"),
    ("${X,}", {"X": "ABC"}, "aBC"),
    ("${X@Q}", {"X": "abc"}, "'abc'"),
    ("${X@U}", {"X": "abc"}, "ABC"),
    ("${X@u}", {"X": "abc"}, "Abc"),
    ("${X@L}", {"X": "ABC"}, "abc"),
    ("${#X}", {"X": "abcdef"}, "6"),
    ("${1:-first}", {}, "first"),
    ("$(basename /a/b.sh .sh)", {}, "b"),
    ("$(basename .sh .sh)", {}, ".sh"),  # a suffix that is the whole name stays
    ("$(basename -s .sh x/a.sh)", {}, "a"),
    ("$(dirname a/b/)", {}, "a"),
    ("$(dirname /)", {}, "/"),
    ("$(dirname name)", {}, "."),
    ("$(seq 3)", {}, "1\n2\n3"),
    ("$(seq 2 2 6)", {}, "2\n4\n6"),
    ("$(printf '%03d' 7)", {}, "007"),
    ("$(printf '%s-%s' a b)", {}, "a-b"),
    ("$(printf '%s\\n' a b)", {}, "a\nb"),
    ("$(printf '%x|%5s|%-3s|' 255 ab c)", {}, "ff|   ab|c  |"),
    ("$(echo -e 'a\\tb')", {}, "a\tb"),
    ("$(echo -n x)", {}, "x"),
    ("$(echo {1..3})", {}, "1 2 3"),
    ("$(echo a{b,c}d)", {}, "abd acd"),
    ("$(echo '{1..3}')", {}, "{1..3}"),  # quoted: no brace expansion
]


def _after(script: str, word: str) -> tuple[list[str], str]:
    """What `"<word>"` holds after `script`: in the evaluator (one per server start) and in the trace."""
    found = servers(run(f'{script}\npython3 -m sglang.launch_server --value "{word}"\n', {}))
    (event,) = Reader(unknown=lambda _name: False).run("t.sh", f'{script}\nbranch "{word}"\n', {}).events
    return [shown(s.argv[-1]) for s in found], plain(event.argv[1])


def _evaluator(word: str, env: dict[str, str]) -> str:
    found = servers(run(f'python3 -m sglang.launch_server --value "{word}"\n', env))
    assert len(found) == 1
    return shown(found[0].argv[-1])


def _trace(word: str, env: dict[str, str]) -> str:
    # the starting environment is all there is (a name it lacks is unset, as in the evaluator's)
    result = Reader(unknown=lambda _name: False).run("t.sh", f'branch "{word}"\n', env)
    (event,) = result.events
    return plain(event.argv[1])


@pytest.mark.parametrize(("word", "env", "expected"), CASES)
def test_both_walkers_expand_a_word_as_bash_does(word: str, env: dict[str, str], expected: str) -> None:
    assert _evaluator(word, env) == expected
    assert _trace(word, env) == expected


def test_the_trace_keeps_where_a_sliced_value_was_written() -> None:
    (event,) = Reader().run("t.sh", 'X=abcdef\nbranch "${X:1:3}"\n', {}).events
    assert [(seg.text, seg.file, seg.line) for seg in event.argv[1]] == [("bcd", "t.sh", 1)]


READS: list[tuple[str, str]] = [  # (the `read` command and its input, what bash assigns to A B C)
    ('IFS=: read -r A B <<< "x:y:"', "[x][y][]"),  # the last name's one field loses its delimiter
    ('IFS=: read -r A B C <<< "x::y"', "[x][][y]"),
    ('IFS=: read -r A B <<< "a:b:c"', "[a][b:c][]"),
    ('read -r A B <<< "  a  b  c  "', "[a][b  c][]"),
    ('IFS=" :" read -r A B C <<< "a : b : c "', "[a][b][c]"),
    ('IFS=: read -r A <<< ":a"', "[:a][][]"),
    ('read -p prompt -r A B <<< "1 2"', "[1][2][]"),  # an option's value is no name
]


@pytest.mark.parametrize(("command", "expected"), READS)
def test_both_walkers_read_a_line_as_bash_does(command: str, expected: str) -> None:
    assert _after(command, "[$A][$B][$C]") == ([expected], expected)


DECLARATIONS: list[tuple[str, str]] = [  # (the declarations, what bash then holds in A B)
    ("A=x\ndeclare A+=y", "[xy][]"),  # `+=` appends
    ('export "A=q r" B=2', "[q r][2]"),  # a quoted operand is an assignment after all
    ("A=1\ndeclare -x B=$A", "[1][1]"),  # (`readonly` fails closed: tests/shell/test_unmodelled_options.py)
    ("declare -i A=3 B=4", "[3][4]"),
]


@pytest.mark.parametrize(("script", "expected"), DECLARATIONS)
def test_both_walkers_read_a_declaration_as_bash_does(script: str, expected: str) -> None:
    assert _after(script, "[$A][$B]") == ([expected], expected)


LISTS: list[tuple[str, str]] = [  # (a script that sets V from a list, what bash then holds in V)
    ('A=(x y)\nV=$(IFS=,; echo "${A[*]}")', "x,y"),  # "${A[*]}" joins with IFS's first character
    ('A=(x y)\nIFS=\nV="${A[*]}"', "xy"),
    ('set -- a b c\nIFS=-\nV="$*"', "a-b-c"),
    ('A=(x y)\nV=$(echo ${A[*]})', "x y"),  # unquoted: a word per element, as ${A[@]}
    ('A=(x y z)\nV="${A[@]:1}"', "y z"),  # a slice of the list, not of each element
    ('A=(x y z)\nV="${A[*]:1:1}"', "y"),
    ('set -- a b c\nV="${@:2}"', "b c"),  # the positional parameters from $2 on
    ('set -- a b c\nV="${*:2}"', "b c"),
    ('A=(x y z)\nV="${A[@]}"', "x y z"),  # an assignment joins the words of "${A[@]}"
    ("A=()\nV=${A[@]:-none}", "none"),
]


@pytest.mark.parametrize(("script", "expected"), LISTS)
def test_both_walkers_expand_a_list_as_bash_does(script: str, expected: str) -> None:
    assert _after(script, "$V") == ([expected], expected)
