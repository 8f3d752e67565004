"""Values the static evaluator computes, and bash pattern matching.

A value is a `str` (known exactly), an `Opaque` (computed at run time, e.g. by a command
substitution the evaluator does not model: kept as its source text, usable as an argument but not
decidable in a condition) or an `Unknown` (the evaluator lost track of it: assigned inside a loop
whose iterations it cannot count, or different in ways it had to merge; it names the construct and
line). A `Loc` is (file, line): where a value was written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

Loc = tuple[str, int]


@dataclass(frozen=True)
class Opaque:
    """A run-time value (command output, `$RANDOM`, a file's contents): its source text;
    `nonempty` when it cannot be the empty string (an arithmetic result, a process id); `many` when
    it is a word of an unquoted expansion, which the run may split into any number of words (none,
    one or several): a list holding it has no known length, nor known positions after it."""

    text: str
    loc: Loc
    nonempty: bool = False
    many: bool = False


@dataclass(frozen=True)
class Unknown:
    """A value the evaluator cannot know: `reason` names the construct, `loc` its file and line."""

    reason: str
    loc: Loc


Val = str | Opaque | Unknown

# `declare -n` chains longer than this are not followed (a cycle, or a chain built to be expensive)
MAX_REF_HOPS = 8
_REF_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class RefNotFollowed(Exception):
    """A `declare -n` reference the readers do not follow: a cycle or long chain, an array element,
    a run-time name, one that differs between merged ways (`?`)."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name)
        self.name = name
        self.target = target


def follow_ref(refs: dict[str, str], name: str, reads: set[str]) -> str:
    """The variable `name` stands for through `declare -n` references (itself when it is none; "" for
    a reference not pointed anywhere yet); each reference passed is added to `reads`. Both walkers
    use it (verifier.shell.evaluator, verifier.shell.trace); each fails closed its own way on
    `RefNotFollowed`."""
    hops = 0
    while name in refs:
        reads.add(name)
        target = refs[name]
        hops += 1
        if not target:
            return ""
        if hops > MAX_REF_HOPS or not _REF_NAME.fullmatch(target):
            raise RefNotFollowed(name, target)
        name = target
    return name


def shape_unknown(value: Val) -> bool:
    """Whether a list element may stand for any number of elements (an Unknown, or an Opaque word of
    an unquoted expansion): the list's length and the positions after it are not known."""
    return isinstance(value, Unknown) or (isinstance(value, Opaque) and value.many)


def concat(pieces: list[Val], loc: Loc) -> Val:
    """Join value pieces: Unknown wins, then Opaque (with the joined source text), else the text."""
    if len(pieces) == 1:  # the common case, as the loop below joins it
        piece = pieces[0]
        if isinstance(piece, Opaque):
            return Opaque(piece.text, loc, piece.nonempty, piece.many)
        return piece
    for piece in pieces:
        if not isinstance(piece, str):
            break
    else:  # all text (the common case): what the loop below makes of it
        return "".join(pieces)  # type: ignore[arg-type]
    text: list[str] = []
    opaque = False
    nonempty = False
    many = False
    for piece in pieces:
        if isinstance(piece, Unknown):
            return piece
        if isinstance(piece, Opaque):
            opaque = True
            nonempty = nonempty or piece.nonempty
            many = many or piece.many
            text.append(piece.text)
        else:
            nonempty = nonempty or bool(piece)
            text.append(piece)
    if opaque:
        return Opaque("".join(text), loc, nonempty, many)
    return "".join(text)


def shown(value: Val) -> str:
    """A value as text for argv and messages (an Opaque value shows its source text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Opaque):
        return value.text
    return f"<unknown: {value.reason}>"


Pattern = tuple[tuple[str, bool], ...]  # (text, literal?) segments


_EXTGLOB = re.compile(r"[?*+@!]\(")


def has_extglob(pattern: Pattern) -> bool:
    """Whether an unquoted part of the pattern holds an extended glob (`+(a)`, `@(x|y)`, `!(z)`), which
    `[[ == ]]` always reads as one (bash matches there as if `extglob` were set) and the walkers do not
    model."""
    return any(not literal and _EXTGLOB.search(text) is not None for text, literal in pattern)


def pattern_is_literal(pattern: Pattern) -> bool:
    """True when no unquoted segment contains a glob character."""
    return all(literal or not any(c in text for c in "*?[") for text, literal in pattern)


def pattern_text(pattern: Pattern) -> str:
    """The pattern's characters (quoting dropped)."""
    return "".join(text for text, _ in pattern)


# POSIX character classes as the body of a Python class (`[[:digit:]]` is `[0-9]`), for globs and regular
# expressions alike (no `[` in a body: a glob escapes every `[` of a bracket's body after this)
_POSIX_CLASSES = {"[:space:]": r"\s", "[:digit:]": "0-9", "[:alpha:]": "A-Za-z", "[:alnum:]": "A-Za-z0-9",
                  "[:upper:]": "A-Z", "[:lower:]": "a-z", "[:xdigit:]": "0-9A-Fa-f", "[:blank:]": r" \t",
                  "[:punct:]": r"!-/:-@\x5b-`{-~"}


@lru_cache(maxsize=4096)
def _glob_tokens(pattern: Pattern) -> tuple[str | None, ...]:
    """A bash glob pattern (`*`, `?`, `[...]`, `[!...]`; quoted parts literal) as a sequence of
    one-character regular expressions, with None for each unquoted `*`."""
    out: list[str | None] = []
    for text, literal in pattern:
        if literal:
            out.extend(re.escape(c) for c in text)
            continue
        i = 0
        while i < len(text):
            c = text[i]
            if c == "*":
                out.append(None)
            elif c == "?":
                out.append(".")
            elif c == "[":
                j = i + 1
                if j < len(text) and text[j] in "!^":
                    j += 1
                if j < len(text) and text[j] == "]":
                    j += 1
                while j < len(text) and text[j] != "]":
                    if text.startswith("[:", j) and ":]" in text[j + 2:]:  # a POSIX class: [[:space:]]
                        j = text.index(":]", j + 2) + 2
                        continue
                    j += 1
                if j >= len(text):
                    out.append(re.escape(c))
                else:
                    body = text[i + 1:j]
                    if body[:1] in ("!", "^"):
                        body = "^" + body[1:]
                    body = body.replace("\\", "\\\\")
                    for posix, rx in _POSIX_CLASSES.items():
                        body = body.replace(posix, rx)
                    out.append("[" + body.replace("[", "\\[") + "]")
                    i = j
            elif c == "\\" and i + 1 < len(text):
                out.append(re.escape(text[i + 1]))
                i += 1
            else:
                out.append(re.escape(c))
            i += 1
    return tuple(out)


@lru_cache(maxsize=4096)
def _glob_regex(pattern: Pattern, longest: bool, reverse: bool = False, whole: bool = False) -> re.Pattern[str]:
    """A glob's regex matching from where it starts: the longest text it matches there (`longest`),
    else the shortest; `reverse`: the glob read backwards (for suffixes of the reversed value);
    `whole`: to the end of the text only.

    A glob is fixed-length pieces between `*`s. Each piece but the last is taken at its first place
    after the one before (an atomic group: never tried again), which leaves the most room for the
    rest, so some match exists exactly when this one does; the last piece is then at its last place
    (longest) or its first (shortest). With `.*` for each `*` tried again at every length, a value
    against a pattern of many `*`s took exponential time (`*a*a*a*a*a*a*a*a*a*a*b` against 61 `a`s
    did not end in a minute)."""
    tokens = _glob_tokens(pattern)
    if reverse:
        tokens = tokens[::-1]
    pieces: list[list[str]] = [[]]
    for token in tokens:
        if token is None:
            pieces.append([])
        else:
            pieces[-1].append(token)
    body = "".join(pieces[0])
    if len(pieces) > 1:
        body += "".join(f"(?>.*?{''.join(piece)})" for piece in pieces[1:-1])
        last = "".join(pieces[-1])
        body += f".*{last}" if longest else f"(?>.*?{last})"
    return re.compile(f"(?s:{body})\\Z" if whole else f"(?s:{body})")


def glob_match(value: str, pattern: Pattern) -> bool:
    """True when the whole value matches the pattern."""
    return _glob_regex(pattern, True, whole=True).match(value) is not None


def _prefix_end(value: str, pattern: Pattern, longest: bool) -> int | None:
    """Where the longest (else the shortest) prefix of value that the pattern matches ends."""
    m = _glob_regex(pattern, longest).match(value)
    return m.end() if m else None


def _suffix_start(value: str, pattern: Pattern, longest: bool) -> int | None:
    """Where the longest (else the shortest) suffix of value that the pattern matches starts."""
    m = _glob_regex(pattern, longest, reverse=True).match(value[::-1])
    return len(value) - m.end() if m else None


def strip_pattern(value: str, pattern: Pattern, op: str) -> str:
    """`${X#p}`, `${X##p}`, `${X%p}`, `${X%%p}`."""
    if op in ("#", "##"):
        end = _prefix_end(value, pattern, op == "##")
        return value if end is None else value[end:]
    start = _suffix_start(value, pattern, op == "%%")
    return value if start is None else value[:start]


def replace_pattern(value: str, pattern: Pattern, repl: str, mode: str) -> str:
    """`${X/p/r}` (mode ''), `${X//p/r}` ('/'), `${X/#p/r}` ('#'), `${X/%p/r}` ('%'): longest match.
    An empty pattern replaces nothing, except anchored (`${X/#/pre}` prefixes, `${X/%/suf}` suffixes).

    Unanchored modes replace, from left to right, the longest non-empty match starting at each
    position: the search finds the next position where a match starts (a position it skips starts
    none) and the longest match there; when that is empty, its character is kept."""
    if not pattern_text(pattern) and mode not in ("#", "%"):
        return value
    if mode == "#":
        end = _prefix_end(value, pattern, True)
        return value if end is None else repl + value[end:]
    if mode == "%":
        start = _suffix_start(value, pattern, True)
        return value if start is None else value[:start] + repl
    rx = _glob_regex(pattern, True)
    n = len(value)
    out: list[str] = []
    i = 0
    while i < n:
        found = rx.search(value, i)
        if found is None:
            break
        j, match_end = found.span()
        if match_end == j:  # only an empty match starts at j: keep its character
            out.append(value[i:j + 1])
            i = j + 1
            continue
        out.append(value[i:j])
        out.append(repl)
        i = match_end
        if mode != "/":
            break
    out.append(value[i:])
    return "".join(out)


def posix_regex(regex: str, extended: bool = True) -> str:
    """A POSIX regular expression (`grep`, `sed`, `[[ =~ ]]`) in Python's syntax: character classes
    translated and, in a basic one (not `extended`), the operators swapped: `\\( \\) \\{ \\} \\+ \\? \\|`
    are operators and the bare characters literal."""
    for name, body in _POSIX_CLASSES.items():
        regex = regex.replace(name, body)
    if extended:
        return regex
    out: list[str] = []
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex):
            nxt = regex[i + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    return "".join(out)
