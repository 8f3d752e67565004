"""The faster lexer and parser give exactly what the reference implementation gave.

The reference is the lexer/parser of commit `REFERENCE` (before the lexing fast paths), loaded from git
history into a temporary package, with the two deliberate changes since (subscripted assignments whose
subscript holds an expansion, and ASCII digits only after `$`, `_reference`). For every input both must return the same syntax tree (compared
by `repr`, which also shows `Word.start` and heredoc bodies, fields `==` ignores), the same tokens,
the same `lex_operand` / `lex_heredoc` words, or the same `ShellSyntaxError` (message and line).

Inputs: hand-written edge cases around every fast path (plain runs next to quotes, escapes,
continuations, `<(`, `NAME=(`, `2>`, `[[ =~ ]]`, heredocs, unterminated constructs), scripts generated
from those fragments, the string constants of the shell tests, the shared cases' scripts, and every
`*.sh` of InferenceX history when its mirror is on the machine (`test_real_corpus`, slow: opt in with
PARSE_IDENTITY_CORPUS=1). Two more deliberate changes: `select`, and an extended glob on the right of
`==` in `[[ ]]`, are refused (`_REFUSALS`).
"""

from __future__ import annotations

import ast
import importlib
import os
import random
import subprocess
import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import verifier.shell.lexer as new_lexer
import verifier.shell.parser as new_parser
from verifier.core import processcache

REFERENCE = "8890bd0b2c06393f4e2c5fd420b646d2b5e03417"
ROOT = Path(__file__).resolve().parents[2]
MIRRORS = ("/work/.mirror/SemiAnalysisAI+InferenceX/repo", "/work/.mirror/NVIDIA+srt-slurm/repo")


def _reference() -> tuple[Any, Any]:
    """The reference lexer and parser modules (a package `_refshell` built from git history)."""
    sources = {}
    for name in ("lexer", "parser"):
        try:
            sources[name] = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{REFERENCE}:verifier/shell/{name}.py"],
                capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            pytest.skip(f"reference commit {REFERENCE[:10]} is not in this checkout's history")
    sources["parser"] = sources["parser"].replace("from verifier.shell.lexer import", "from _refshell.lexer import")
    # a deliberate change since the reference: `$` before a digit of another script (`$٣`) is a `$`, as
    # bash reads it; the reference took any Unicode digit for a positional parameter (and an fd number)
    for digit_test in ("nxt.isdigit()", "lit.isdigit()"):
        sources["lexer"] = sources["lexer"].replace(digit_test, f"({digit_test.split('.')[0]}.isascii() and {digit_test})")
    package = types.ModuleType("_refshell")
    package.__path__ = []
    sys.modules["_refshell"] = package
    mods = []
    registered = len(processcache._ALL)
    for name in ("lexer", "parser"):
        mod = types.ModuleType(f"_refshell.{name}")
        sys.modules[mod.__name__] = mod
        exec(compile(sources[name], f"<{REFERENCE[:10]}:{name}.py>", "exec"), mod.__dict__)  # noqa: S102
        mods.append(mod)
    # the reference modules' caches carry the product's names: left registered, they would stand for
    # the product's own in every later test that reads the process caches by name
    del processcache._ALL[registered:]
    # the other deliberate change since the reference: `NAME[sub]=value` whose subscript holds an
    # expansion or quotes (`A[$i]=x`) is an assignment; the reference read it as a command word
    reference_assignment = mods[1]._assignment
    mods[1]._assignment = lambda word: reference_assignment(word) or new_parser._subscripted(word)
    return mods[0], mods[1]


@pytest.fixture(scope="module")
def ref() -> tuple[Any, Any]:
    return _reference()


def _outcome(fn: Callable[[], Any]) -> str:
    try:
        return repr(fn())
    except Exception as e:  # noqa: BLE001 - the error itself is the result compared
        if type(e).__name__ == "ShellSyntaxError":
            return f"ShellSyntaxError({e.message!r}, {e.line!r})"  # type: ignore[attr-defined]
        return f"{type(e).__name__}({e})"


def _tokens(lexer: Any, text: str) -> Callable[[], Any]:
    return lambda: [(t, t.heredoc) for t in lexer.tokenize(text, 3)]


# deliberate changes since the reference that refuse what bash reads otherwise than the walkers would
# (verifier.shell.unmodelled): `select` (its choice comes from standard input) and an extended glob on the
# right of `==` in `[[ ]]`; where the new code refuses with one of these, the reference may differ
_REFUSALS = ("ShellSyntaxError('`select` reads its choice", "ShellSyntaxError('an extended glob pattern")


def _differences(ref: tuple[Any, Any], text: str) -> list[str]:
    old_lexer, old_parser = ref
    old_parser._CACHE.clear()
    new_parser._CACHE.clear()
    out = []
    pairs = [
        ("parse", lambda: old_parser.parse(text, "a/b.sh"), lambda: new_parser.parse(text, "a/b.sh")),
        ("tokenize", _tokens(old_lexer, text), _tokens(new_lexer, text)),
        ("lex_operand", lambda: old_lexer.lex_operand(text, 7), lambda: new_lexer.lex_operand(text, 7)),
        ("lex_heredoc", lambda: old_lexer.lex_heredoc(text, 7), lambda: new_lexer.lex_heredoc(text, 7)),
    ]
    for what, old, new in pairs:
        a, b = _outcome(old), _outcome(new)
        if a != b and not b.startswith(_REFUSALS):
            out.append(f"{what} of {text[:200]!r}:\n  reference {a[:400]}\n  new       {b[:400]}")
    return out


EDGE_CASES = [
    "", " ", "\n", "\t\r\n", "a", "a b", "a\tb\r\nc", "a;b", "a&b", "a|b", "a(", "a)", "a<b", "a>b", "a<(b)",
    "a>(b c)", "cat <(x) >(y)", "a\\\nb", "a \\\n b", "a\\ b", "a\\", "\\", "'a'b", "a'b'", "a'b", "a\"b\"c",
    'a"b', '"a\\"b"', '"a\nb"', '"a\\\nb"', '"$a b${c}d$(e)`f`"', '"x$"', '"\\$x"', "a$", "a$1b", "a$@", "$'a\\nb'",
    "$'x", '$"a b"', "a$((1+2))b", "$(( (a) ))", "$( (a) )", "${a:-b c}", "${a", "$(a", "`a", "`a`b", "a`b`",
    "x=(1 2 3)", "x+=(4)", "x[1]=(a)", "'x'=(1)", "x=$(a)(", "declare -a x=(1 2)", "f() { a; }", "function f { a; }",
    "2>x", "2>&1", "2> x", "a 2>>x 1<&0", "12>x", "'2'>x", "<<EOF\na\nEOF\n", "cat <<-'E'\n\tx $y\n\tE\nz\n",
    "cat <<EOF\n$x `y` \\$z\nEOF", "cat <<", "cat <<E1 <<E2\na\nE1\nb\nE2\n", "[[ a == b ]]", "[[ $a =~ ^(x|y)$ ]]",
    "[[ a =~ (b) && c ]]", "[[ ! ( a < b ) || c > d ]]", "[[ a\nb ]]", "[[ a ]", "if [[ -n $x ]]; then a; fi",
    "((x++))", "(( x = (1+2) ))", "for ((i=0;i<3;i++)); do a; done", "for ((i=0;i<3)); do a; done",
    "for x in a b; do c; done", "for x; { a; }", "case $a in a) b;; (c|d) e;& f) g;;& esac",
    "case a in\n a)\n b\n ;;\nesac", "case a in a) b", "x=$(case a in a) b;; esac)", "echo $(echo \"a\nb\")",
    "if a; then b; elif c; then d; else e; fi", "if a; then", "while a; do b; done > f", "until a; do b; done",
    "{ a; } 2>&1 | b |& c", "( a ) && b || c &", "! time a", "a && \n b", "a |\n b", "fi", ")", ";;", "a b ]]",
    "x=1 y=$2 cmd", "x[$i]=v", "export A=1 B=(2)", "a=b=c", "#c\na # c\nb#c", "a\fb", "a\u00a0b", "é=1",
    "echo \"$(a \"$(b)\")\"", "a <<< \"$x\"", "a &>> f", "a >| f", "a <> f", "time", "select x in a; do b; done",
    "a=(\n 1 # c\n 2\n)", "a=(1 ; 2)", "a=(1", "$(( 1 ))) ", "a )) b", "echo ${a//\\//x}", "\\\n\\\n",
    # the scanners' runs of ordinary characters: comments, quotes, backquotes, nested brackets, `case`
    "x=$(a # c )\n)", "x=$(a#b)", "x=$(echo ')' \"(\" `)`)", "${a:-{b}}", "${a:-$(b)}c", "$(( a + $(b) ))",
    "$((a)", "$(( a ) )", "x=$(case $a in\n a) b;;\n esac)", "x=\"$(case a in a) b;; esac)\"",
    "x=$( (a) )", "x=$(echo \"a(b\" 'c)d' \\) )", "x=\"a\\\"b$c\"", "x=\"$(a)\\", "y=$(\n#(\n)",
]

FRAGMENTS = [
    "a", "bb", "-x", "--k=v", "'q w'", '"d $v q"', "$v", "${v:-x}", "$(c d)", "`c`", "$((1+n))", "\\;", "\\\n",
    " ", "  ", "\t", "\n", ";", "&&", "||", "|", "&", "(", ")", "<", ">", "2>", ">&", "<(p)", "x=", "y=(1 2)",
    "if", "then", "fi", "do", "done", "while", "for", "in", "case", "esac", ";;", "{", "}", "[[", "]]", "=~",
    "((", "))", "#c\n", "<<E\nb\nE\n", "$'e\\t'", "é", "\r",
    "\"", "'", "$(", "${", "#", "`", "\\", "}", "$((", "\"$(a)\"",
]


def _generated(count: int, seed: int) -> Iterator[str]:
    rnd = random.Random(seed)
    for _ in range(count):
        yield "".join(rnd.choice(FRAGMENTS) for _ in range(rnd.randint(1, 14)))


def _test_strings() -> Iterator[str]:
    """Every string constant of the shell and launch tests (scripts, commands, flags)."""
    for folder in ("tests/shell", "tests/launch"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                    yield node.value


def _assert_same(ref: tuple[Any, Any], texts: Iterator[str]) -> int:
    seen: set[str] = set()
    bad: list[str] = []
    for text in texts:
        if text in seen:
            continue
        seen.add(text)
        bad.extend(_differences(ref, text))
    assert not bad, "\n".join(bad[:10])
    return len(seen)


def test_edge_cases(ref: tuple[Any, Any]) -> None:
    assert _assert_same(ref, iter(EDGE_CASES)) > 100


def test_generated(ref: tuple[Any, Any]) -> None:
    assert _assert_same(ref, _generated(3000, 23)) > 2500


def test_strings_of_the_shell_tests(ref: tuple[Any, Any]) -> None:
    assert _assert_same(ref, _test_strings()) > 500


def test_shared_case_scripts(ref: tuple[Any, Any]) -> None:
    scripts = sorted(Path("/work/shared/cases").rglob("*.sh")) if Path("/work/shared/cases").is_dir() else []
    scripts += sorted((ROOT / "tests").rglob("*.sh"))
    if not scripts:
        pytest.skip("no shell scripts on this machine")
    _assert_same(ref, (p.read_text(encoding="utf-8", errors="replace") for p in scripts))


def _mirror_scripts() -> Iterator[str]:
    for repo in MIRRORS:
        if not Path(repo).is_dir():
            continue
        revs = subprocess.run(["git", "-C", repo, "rev-list", "--all"], capture_output=True, text=True,
                              check=True).stdout.split()
        blobs: set[str] = set()
        for rev in revs:
            tree = subprocess.run(["git", "-C", repo, "ls-tree", "-r", rev], capture_output=True, text=True,
                                  check=True).stdout
            blobs.update(line.split()[2] for line in tree.splitlines() if line.endswith(".sh"))
        for blob in sorted(blobs):
            yield subprocess.run(["git", "-C", repo, "cat-file", "blob", blob], capture_output=True,
                                 check=True).stdout.decode("utf-8", "replace")


@pytest.mark.skipif(not os.environ.get("PARSE_IDENTITY_CORPUS"), reason="slow (minutes): PARSE_IDENTITY_CORPUS=1")
def test_real_corpus(ref: tuple[Any, Any]) -> None:
    if not any(Path(repo).is_dir() for repo in MIRRORS):
        pytest.skip("no InferenceX mirror on this machine")
    assert _assert_same(ref, _mirror_scripts()) > 1000


def test_reference_is_really_the_old_code(ref: tuple[Any, Any]) -> None:
    """The harness would prove nothing if it compared the new code with itself."""
    old_lexer, _ = ref
    assert old_lexer.__name__ == "_refshell.lexer"
    assert not hasattr(old_lexer, "_WORD_END") and hasattr(new_lexer, "_WORD_END")
    assert importlib.import_module("verifier.shell.lexer") is new_lexer
