"""Regular expressions a PR writes, matched in time linear in the text.

Python's `re` backtracks: `(a+)+b` against 30 `a`s, or `.*a.*a.*a.*b` against a long line, takes
minutes to hours. A script the verifier reads may apply such a pattern (`grep`, `sed`, `[[ =~ ]]`)
to text it knows, so those patterns are matched here instead: parsed by `re`'s own parser (the
syntax is `re`'s), compiled to a program of a few instructions and run by a Pike VM (every way
through the pattern advanced one character at a time, in the order a backtracking matcher tries
them), so the match found is the one `re` finds. Cost is the text's length times the program's
size. As `re` does, a pass of a loop that matched nothing ends the loop. Where a loop's body can
match nothing in more than one way (`(x|\\b|.)*`, `(a??)*`), the match found may differ from `re`'s
(0.2% of random patterns and texts in a comparison with `re`); scripts do not write those.

Only what the VM runs is accepted (an allowlist): literals, `.`, classes, groups, alternation,
repetition, `^ $ \\A \\Z \\b \\B`, and the ignore-case flag. Back-references, look-arounds, atomic
groups, possessive repeats, conditionals and other flags are not: `compile_pattern` returns None,
as it does for text `re` cannot parse, and the caller leaves the value unknown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

MAX_PROGRAM = 20_000  # instructions (a repeat count is unrolled): a larger pattern is not matched
MAX_STATES = 2_000  # states of a pattern's lazy DFA (`LinearPattern._may_match`) kept with their moves
MAX_MOVES = 50_000  # moves kept (a state's move is kept per character: a text of many distinct ones)

_CHAR, _SPLIT, _JMP, _SAVE, _ASSERT, _MATCH, _MARK, _CHECK = range(8)
Predicate = Callable[[str], bool]
Thread = tuple[int, tuple[int, ...]]  # an instruction and the slots (group spans, where loop passes began)


class _Unsupported(Exception):
    pass


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


_CATEGORIES: dict[Any, Predicate] = {
    sre.CATEGORY_DIGIT: str.isdecimal,
    sre.CATEGORY_NOT_DIGIT: lambda c: not c.isdecimal(),
    sre.CATEGORY_SPACE: str.isspace,
    sre.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
    sre.CATEGORY_WORD: _is_word,
    sre.CATEGORY_NOT_WORD: lambda c: not _is_word(c),
}


def _caseless(test: Predicate, icase: bool) -> Predicate:
    if not icase:
        return test
    return lambda c: test(c) or test(c.lower()) or test(c.upper())


def _in_range(lo: int, hi: int) -> Predicate:
    return lambda c: lo <= ord(c) <= hi


def _set(items: Sequence[tuple[Any, Any]], icase: bool) -> Predicate:
    """A class (`[...]`) as a test of one character."""
    negate = False
    tests: list[Predicate] = []
    chars: set[str] = set()
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            chars.add(chr(av))
        elif op is sre.RANGE:
            tests.append(_in_range(*av))
        elif op is sre.CATEGORY and av in _CATEGORIES:
            tests.append(_CATEGORIES[av])
        else:
            raise _Unsupported(str(op))

    def member(c: str) -> bool:
        return c in chars or any(t(c) for t in tests)

    found = _caseless(member, icase)
    return (lambda c: not found(c)) if negate else found


class _Compiler:
    """The parsed pattern as a program: [op, a, b] instructions, jumps by index."""

    def __init__(self, icase: bool, groups: int) -> None:
        self.icase = icase
        self.program: list[list[Any]] = []
        self.slots = 2 * groups  # the groups' start and end, then where each pass of a loop began
        self.pending: list[int] = []  # checks of an unrolled repeat's passes, to point past its last

    def emit(self, op: int, a: Any = None, b: Any = None) -> int:
        if len(self.program) >= MAX_PROGRAM:
            raise _Unsupported("too large")
        self.program.append([op, a, b])
        return len(self.program) - 1

    def sequence(self, items: Any) -> None:
        for op, av in items:
            self.node(op, av)

    def node(self, op: Any, av: Any) -> None:
        icase = self.icase
        if op is sre.LITERAL:
            self.emit(_CHAR, _caseless(chr(av).__eq__, icase))
        elif op is sre.NOT_LITERAL:
            same = _caseless(chr(av).__eq__, icase)
            self.emit(_CHAR, lambda c: not same(c))
        elif op is sre.ANY:
            self.emit(_CHAR, "\n".__ne__)
        elif op is sre.IN:
            self.emit(_CHAR, _set(av, icase))
        elif op is sre.AT:
            if av not in (sre.AT_BEGINNING, sre.AT_BEGINNING_STRING, sre.AT_END, sre.AT_END_STRING,
                          sre.AT_BOUNDARY, sre.AT_NON_BOUNDARY):
                raise _Unsupported(str(av))
            self.emit(_ASSERT, av)
        elif op is sre.SUBPATTERN:
            group, add_flags, del_flags, body = av
            if add_flags or del_flags:
                raise _Unsupported("scoped flags")
            if group is not None:
                self.emit(_SAVE, 2 * group)
            self.sequence(body)
            if group is not None:
                self.emit(_SAVE, 2 * group + 1)
        elif op is sre.BRANCH:
            self.branch(av[1])
        elif op is sre.MAX_REPEAT or op is sre.MIN_REPEAT:
            low, high, body = av
            self.repeat(low, high, body, op is sre.MAX_REPEAT)
        else:
            raise _Unsupported(str(op))

    def branch(self, alternatives: list[Any]) -> None:
        """`a|b|c`: each alternative tried before the next."""
        jumps = []
        for alternative in alternatives[:-1]:
            split = self.emit(_SPLIT, len(self.program) + 1)
            self.sequence(alternative)
            jumps.append(self.emit(_JMP))
            self.program[split][2] = len(self.program)
        self.sequence(alternatives[-1])
        for jump in jumps:
            self.program[jump][1] = len(self.program)

    def repeat(self, low: int, high: Any, body: Any, greedy: bool) -> None:
        """`x{low,high}` (`*`, `+`, `?`), greedy or lazy: the required passes unrolled, then a loop
        (unbounded) or the optional passes unrolled. As in `re`, a pass beyond the minimum that
        matched nothing ends the repeat (its groups keep what that pass set): a body that can match
        nothing marks where each such pass began and checks it at the pass's end."""
        for _ in range(low):
            self.sequence(body)
        slot = None
        if body.getwidth()[0] == 0:
            slot, self.slots = self.slots, self.slots + 1
        if high is sre.MAXREPEAT:
            loop = self.emit(_SPLIT)
            self.one_pass(body, slot, loop)
            self.choose(loop, loop + 1, len(self.program), greedy)
            return
        outer, self.pending = self.pending, []
        splits = []
        for _ in range(high - low):
            splits.append(self.emit(_SPLIT))
            self.one_pass(body, slot, None)
        for split in splits:
            self.choose(split, split + 1, len(self.program), greedy)
        for check in self.pending:
            self.program[check][2] = len(self.program)
        self.pending = outer

    def one_pass(self, body: Any, slot: int | None, loop: int | None) -> None:
        """One optional pass of a repeat's body, then back to the loop's choice at `loop` (None: on
        to the next unrolled pass); with a `slot`, a pass that matched nothing leaves the repeat."""
        if slot is not None:
            self.emit(_MARK, slot)
        self.sequence(body)
        if slot is None:
            if loop is not None:
                self.emit(_JMP, loop)
            return
        check = self.emit(_CHECK, slot)  # a pass that matched something goes on to the next instruction
        if loop is None:
            self.pending.append(check)  # on to the next pass; past the last when empty
        else:
            self.emit(_JMP, loop)
            self.program[check][2] = len(self.program)  # the repeat's end

    def choose(self, at: int, take: int, skip: int, greedy: bool) -> None:
        self.program[at][1], self.program[at][2] = (take, skip) if greedy else (skip, take)


@dataclass(frozen=True, eq=False)
class Match:
    """A match: where it starts and ends, and each group's span ((-1, -1): it took no part)."""

    string: str
    spans: tuple[int, ...]

    def start(self) -> int:
        return self.spans[0]

    def end(self) -> int:
        return self.spans[1]

    def group(self, index: int = 0) -> str | None:
        if not 0 <= 2 * index < len(self.spans):
            raise IndexError("no such group")
        a, b = self.spans[2 * index], self.spans[2 * index + 1]
        return None if a < 0 or b < 0 else self.string[a:b]


def _holds(kind: Any, text: str, pos: int) -> bool:
    n = len(text)
    if kind is sre.AT_BEGINNING or kind is sre.AT_BEGINNING_STRING:
        return pos == 0
    if kind is sre.AT_END:
        return pos == n or (pos == n - 1 and text[pos] == "\n")
    if kind is sre.AT_END_STRING:
        return pos == n
    before = pos > 0 and _is_word(text[pos - 1])
    after = pos < n and _is_word(text[pos])
    return (before != after) == (kind is sre.AT_BOUNDARY)


class LinearPattern:
    """A compiled pattern (`compile_pattern`); `search` and `finditer` answer as `re`'s do.

    Before the VM runs, `_may_match` answers whether it will find a match at all: the same walk
    without the slots, one state per ordered set of instructions the VM's threads are at, each
    state's successor on a character remembered (a lazy DFA, as RE2 runs one). A text the pattern
    does not match, the usual case for `grep` and `[[ =~ ]]` on long text, then costs a table
    lookup per character instead of the program's size per character."""

    def __init__(self, program: list[tuple[int, Any, Any]], groups: int, slots: int) -> None:
        self.program = program
        self.groups = groups
        self.slots = slots
        self.asserts = any(op == _ASSERT for op, _a, _b in program)
        self.unset = (-1,) * slots
        self.match_pc = len(program) - 1  # `compile_pattern` ends every program with its one match
        self.states: dict[tuple[int, ...], int] = {}  # the DFA's states, numbered as first made
        # (state, character, context): the next state (`_state`)
        self.moves: dict[tuple[int, str, object], tuple[tuple[int, ...], int | None, bool]] = {}

    def _closure(self, out: list[Thread], seen: set[int], pc: int, slots: tuple[int, ...], text: str,
                 pos: int) -> None:
        """Add the thread at `pc` to `out` after every instruction that reads no character, in
        priority order. A thread reaching an instruction another reached first at this position is
        dropped: the earlier one ranks higher and has the same future (a loop's check, once each
        way)."""
        program = self.program
        stack = [(pc, slots)]
        while stack:
            pc, slots = stack.pop()
            op, a, b = program[pc]
            # a check's way depends on where the pass began: a thread it sends the other way is not the same
            key = -1 - pc if op == _CHECK and slots[a] == pos else pc
            if key in seen:
                continue
            seen.add(key)
            if op == _JMP:
                stack.append((a, slots))
            elif op == _SPLIT:
                stack.append((b, slots))
                stack.append((a, slots))
            elif op in (_SAVE, _MARK):
                stack.append((pc + 1, slots[:a] + (pos,) + slots[a + 1:]))
            elif op == _CHECK:  # where the pass began: nothing matched, the repeat ends
                stack.append((b if slots[a] == pos else pc + 1, slots))
            elif op == _ASSERT:
                if _holds(a, text, pos):
                    stack.append((pc + 1, slots))
            else:
                out.append((pc, slots))

    def _at(self, out: list[int], seen: set[int], pc: int, text: str, pos: int) -> None:
        """The instructions (in priority order) `_closure` reaches from `pc`, without the slots the
        DFA does not keep. Every slot a thread brings to a position was set before it, so a loop's
        check finds its pass began here exactly when a mark on the way here set it, as it does from
        slots that start unset."""
        threads: list[Thread] = []
        self._closure(threads, seen, pc, self.unset, text, pos)
        out.extend(pc for pc, _slots in threads)

    def _context(self, text: str, pos: int) -> object:
        """What the assertions of the program can see at `pos` besides the character before it."""
        n = len(text)
        return (pos == n, pos == n - 1 and text[pos] == "\n", pos < n and _is_word(text[pos]))

    def _state(self, threads: tuple[int, ...]) -> tuple[tuple[int, ...], int | None, bool]:
        """A DFA state: its threads, its number (None past `MAX_STATES`: not kept) and whether a
        thread in it has matched."""
        number = self.states.get(threads)
        if number is None and len(self.states) < MAX_STATES:
            number = self.states[threads] = len(self.states)
        return threads, number, self.match_pc in threads

    def _may_match(self, text: str, pos: int, must_advance: bool) -> bool:
        """Whether `search` finds a match (see the class docstring): the VM's walk, in the same order
        and dropping the same threads, keeping only where each thread is. Past `MAX_STATES` states or
        `MAX_MOVES` moves the successors are worked out and not kept: still the program's size per
        character."""
        program, moves, asserts = self.program, self.moves, self.asserts
        n = len(text)
        first: list[int] = []
        self._at(first, set(), 0, text, pos)
        current, number, matched = self._state(tuple(first))
        if matched and not must_advance:
            return True
        i = pos
        while i < n:
            ch = text[i]
            key = (number, ch, self._context(text, i + 1) if asserts else None) if number is not None else None
            move = moves.get(key) if key is not None else None
            if move is None:
                seen: set[int] = set()
                out: list[int] = []
                for pc in current:
                    op, test, _ = program[pc]
                    if op != _MATCH and test(ch):  # a match at `pos` with must_advance: the VM goes on past it
                        self._at(out, seen, pc + 1, text, i + 1)
                self._at(out, seen, 0, text, i + 1)  # a match may start at the next character
                move = self._state(tuple(out))
                if key is not None and len(moves) < MAX_MOVES:
                    moves[key] = move
            current, number, matched = move
            if matched:
                return True
            i += 1
        return False

    def search(self, text: str, pos: int = 0, must_advance: bool = False) -> Match | None:
        """The first match starting at or after `pos` (`must_advance`: not an empty one at `pos`)."""
        return self._run(text, pos, must_advance) if self._may_match(text, pos, must_advance) else None

    def _run(self, text: str, pos: int, must_advance: bool) -> Match | None:
        """`search` by the VM: every thread with its slots."""
        program = self.program
        start = self.unset
        current: list[Thread] = []
        seen: set[int] = set()  # the instructions threads reached at this position
        found: tuple[int, ...] | None = None
        n = len(text)
        i = pos
        while True:
            if found is None:  # a thread starting here ranks below every thread started before
                self._closure(current, seen, 0, start, text, i)
            if not current:
                if found is not None or i >= n:
                    break
                i, seen = i + 1, set()
                continue
            following: list[Thread] = []
            seen = set()
            ch = text[i] if i < n else None
            for pc, slots in current:
                op, test, _ = program[pc]
                if op == _MATCH:
                    if must_advance and i == pos:
                        continue
                    found = slots
                    break  # the threads after this one rank lower
                if ch is not None and test(ch):
                    self._closure(following, seen, pc + 1, slots, text, i + 1)
            current = following
            if i >= n:
                break
            i += 1
        return Match(text, found[:2 * self.groups]) if found is not None else None

    def finditer(self, text: str) -> Iterator[Match]:
        """The matches `re.finditer` finds: left to right, none overlapping, and an empty one only
        where the match before did not end."""
        pos, must_advance = 0, False
        while pos <= len(text):
            m = self.search(text, pos, must_advance)
            if m is None:
                return
            yield m
            pos, must_advance = m.end(), m.end() == m.start()


@lru_cache(maxsize=512)
def compile_pattern(pattern: str, ignore_case: bool = False) -> LinearPattern | None:
    """The pattern as `re` reads it, ready to match in linear time; None when `re` cannot parse it
    or it uses what the VM does not run (see the module docstring)."""
    try:
        parsed = sre_parse.parse(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None
    if parsed.state.flags & ~(re.UNICODE | re.IGNORECASE):
        return None
    groups = parsed.state.groups
    compiler = _Compiler(bool(parsed.state.flags & re.IGNORECASE), groups)
    try:
        compiler.emit(_SAVE, 0)
        compiler.sequence(parsed)
        compiler.emit(_SAVE, 1)
        compiler.emit(_MATCH)
    except (_Unsupported, RecursionError):
        return None
    return LinearPattern([(op, a, b) for op, a, b in compiler.program], groups, compiler.slots)
