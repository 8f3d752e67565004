"""Values of the multi-node trace (verifier.shell.trace): text that remembers where every piece was written.

A `Text` is a tuple of `Seg`s. A segment is a piece of text, the file and line that wrote it, and
whether its content is known (`known=False`: a run-time value such as a command substitution or an
unset variable, kept as its source text, e.g. `${HOSTNAME}`). Field splitting keeps the origin of
the first character of each field, so a server flag built from several variables still points at
the line that wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from verifier.shell.expansion import field_spans
from verifier.shell.values import Opaque, Val


# Not frozen, but never changed once made (one object may stand in many texts, `known_seg`): a
# reading makes hundreds of thousands, and a frozen dataclass's __init__ (object.__setattr__ per
# field) cost four times a plain one's, 3-4% of the largest PRs' verdicts
@dataclass(slots=True, unsafe_hash=True)
class Seg:
    """A piece of text with its origin.

    An unknown segment says why: `runtime` (a value only the run has: a host name, an IP, a job id,
    a command's output), `undecided` (branches the reader could not decide set it differently; the
    origin is the condition's line) or `unreadable` (text the reader could not follow, e.g. `eval` of a
    command's output; the origin is that line). `many`: an unknown segment of an unquoted expansion,
    which the run may split into any number of words (a list holding it has no known length, nor
    known positions after it).
    """

    text: str
    file: str = ""
    line: int | None = None
    known: bool = True
    why: str = ""
    many: bool = False


Text = tuple[Seg, ...]


def text_of(value: str, file: str = "", line: int | None = None, known: bool = True) -> Text:
    """A Text of one segment."""
    if not value:
        return ()
    return (known_seg(value, file, line),) if known else (Seg(value, file, line, False),)


@lru_cache(maxsize=16384)
def known_seg(value: str, file: str, line: int | None) -> Seg:
    """A known segment, one object for each text and origin: every reading of a script writes the same
    literals again, and making a frozen segment cost more than finding it. Only an unknown segment's
    identity is ever asked (a run-time value, verifier.shell.trace `_file_key`), so an unknown one is
    never shared."""
    return Seg(value, file, line, True)


def plain(text: Text) -> str:
    """The characters of a Text (unknown segments as their source text)."""
    if len(text) == 1:
        return text[0].text
    return "".join([s.text for s in text])


def is_known(text: Text) -> bool:
    """True when every segment is known."""
    # a plain loop: the reader asks this of nearly every word, and a generator cost more than the test
    for s in text:  # noqa: SIM110
        if not s.known:
            return False
    return True


def blocking(text: Text) -> Seg | None:
    """The first segment whose value the reader could not establish (undecided, unreadable, or
    assigned in a loop it does not run)."""
    return next((s for s in text if not s.known and s.why in ("undecided", "unreadable", "loop")), None)


def origin(text: Text) -> tuple[str, int | None]:
    """(file, line) of the first non-blank segment (the one that wrote the value)."""
    for seg in text:
        if seg.text.strip():
            return seg.file, seg.line
    return (text[0].file, text[0].line) if text else ("", None)


def concat(*parts: Text) -> Text:
    """Concatenate Texts, merging adjacent segments of one origin."""
    if len(parts) == 1 and len(parts[0]) == 1:  # one segment (most words): what the loop below gives
        seg = parts[0][0]
        return (seg,) if seg.text else ()
    # each run of adjacent segments of one origin becomes one segment, made once from the run's texts
    # (joined, not added one by one: a long list joined with one origin, `${A[*]}` of a `$(seq ...)`,
    # made a segment per item, each copying the text so far); a run of one is the segment itself
    out: list[Seg] = []
    head: Seg | None = None
    texts: list[str] = []
    for part in parts:
        for seg in part:
            if not seg.text:
                continue
            if head is not None and head.file == seg.file and head.line == seg.line and head.known == seg.known \
                    and head.why == seg.why and head.many == seg.many:
                texts.append(seg.text)
                continue
            if head is not None:
                out.append(head if len(texts) == 1 else
                           Seg("".join(texts), head.file, head.line, head.known, head.why, head.many))
            head, texts = seg, [seg.text]
    if head is not None:
        out.append(head if len(texts) == 1 else Seg("".join(texts), head.file, head.line, head.known, head.why, head.many))
    return tuple(out)


def split_fields(text: Text, ifs: str = " \t\n") -> list[Text]:
    """Bash field splitting of an unquoted expansion (verifier.shell.expansion.field_spans): a
    segment the reader does not know stays whole inside its field (its content is not known)."""
    if ifs and ifs.strip(" \t\n"):
        return _split_delimited(text, ifs)
    fields: list[Text] = []
    current: list[Seg] = []
    runs = _ifs_runs(ifs) if ifs else None
    for seg in text:
        if not seg.known:  # an unknown value stays one field (its content is not known), which the run may split
            current.append(_many(seg))
            continue
        # the words of a known segment and the IFS runs between them (a regular expression: the
        # character loop it replaces cost more than the rest of an expansion); a run ends the field
        # being built, a word continues it
        for i, piece in enumerate(runs.split(seg.text) if runs is not None else (seg.text,)):
            if i and current:
                fields.append(tuple(current))
                current = []
            if piece:
                current.append(known_seg(piece, seg.file, seg.line))
    if current:
        fields.append(tuple(current))
    return fields


def _split_delimited(text: Text, ifs: str) -> list[Text]:
    """`split_fields` with an IFS holding a character other than white space: each such character
    delimits on its own (empty fields between two of them); a segment the reader does not know
    takes the place of characters that are no delimiter."""
    flat = "".join(seg.text if seg.known else "\x01" * len(seg.text) for seg in text)
    return [tuple(_many(seg) for seg in slice_text(text, a, b)) for a, b in field_spans(flat, ifs)]


def _many(seg: Seg) -> Seg:
    """An unknown segment of an unquoted expansion (`Seg.many`); a known one as it is."""
    return seg if seg.known or seg.many else Seg(seg.text, seg.file, seg.line, False, seg.why, True)


def shape_unknown(text: Text) -> bool:
    """Whether a list element may stand for any number of elements (`Seg.many`)."""
    return any(seg.many for seg in text)


@lru_cache(maxsize=16)
def _ifs_runs(ifs: str) -> re.Pattern[str]:
    """Runs of IFS characters (`split_fields`)."""
    return re.compile("[" + re.escape(ifs) + "]+")


def join_fields(fields: Iterable[Text], sep: str = " ") -> Text:
    """Fields joined by a separator (the separator takes the next field's origin)."""
    out: list[Text] = []
    for i, field in enumerate(fields):
        if i:
            file, line = origin(field)
            out.append(text_of(sep, file, line))
        out.append(field)
    return concat(*out)


def slice_text(text: Text, start: int, end: int | None = None) -> Text:
    """Characters [start:end] of a Text, keeping segment origins."""
    out: list[Seg] = []
    pos = 0
    stop = len(plain(text)) if end is None else end
    for seg in text:
        a, b = pos, pos + len(seg.text)
        lo, hi = max(a, start), min(b, stop)
        if lo < hi:
            out.append(Seg(seg.text[lo - a:hi - a], seg.file, seg.line, seg.known, seg.why, seg.many))
        pos = b
    return tuple(out)


_NOT_A_STAND_IN = re.compile(r"[\s\x00]")


def may_stand_in(value: str | None) -> bool:
    """Whether a stand-in (verifier.shell.trace, Stand-ins) may take a value's place: a stand-in is
    not empty and holds no blank, so a reading made with it holds only for values that are alike."""
    return bool(value) and _NOT_A_STAND_IN.search(value) is None  # type: ignore[arg-type]


# a stand-in (verifier.shell.trace, Stand-ins): the variable it stands for, the stand-in it derives
# from (None for a variable's own) and how its value is made from that one's (`Reader.derive`:
# `${X%%:*}`); chain readings and runner probes both compute the values with `stand_in_values`
Mark = tuple[str, int | None, Callable[[str], str] | None]


def stand_in_values(marks: Sequence[Mark], value_of: Callable[[str], str]) -> list[str] | None:
    """Every stand-in's value for an environment (`value_of` gives a variable's), a derived one made
    from its base's (None: a derived one may not take a stand-in's place, `may_stand_in`: the reading
    does not hold there)."""
    out: list[str] = []
    for name, base, how in marks:
        if base is None or how is None:
            out.append(value_of(name))
            continue
        value = how(out[base])
        if not may_stand_in(value):
            return None  # `${X%%:*}` of this value is empty or blank
        out.append(value)
    return out


def as_vals(texts: Iterable[Text], loc: tuple[str, int]) -> list[Val]:
    """Command words as the launcher tables read them (verifier.shell.launchers): the known ones as
    their text, any other as a value only the run knows (written at `loc`)."""
    return [plain(t) if is_known(t) else Opaque(plain(t), loc) for t in texts]
