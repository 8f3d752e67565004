"""verifier.shell.text: the multi-node reader's value helpers give what their plain definitions give.

`split_fields` splits a known segment with a regular expression, `concat` of one segment and
`is_known` skip the general loop (the reader calls them on nearly every word): each is compared here
with the character-by-character definition it replaced, on many generated values (segments of
several origins, known or not, blank, holding IFS characters of several kinds, and IFS values
holding characters a regular expression's class treats specially)."""

from __future__ import annotations

import dataclasses
import random

from verifier.shell.expansion import field_spans
from verifier.shell.text import Seg, Text, concat, is_known, split_fields, text_of
from verifier.shell.trace import Reader


def _split_by_character(text: Text, ifs: str = " \t\n") -> list[Text]:
    """Field splitting as first written: one character at a time (an unknown segment is marked as one
    the run may split into any number of words, `Seg.many`)."""
    fields: list[Text] = []
    current: list[Seg] = []
    for seg in text:
        if not seg.known:
            current.append(dataclasses.replace(seg, many=True))
            continue
        piece = ""
        for ch in seg.text:
            if ch in ifs:
                if piece:
                    current.append(Seg(piece, seg.file, seg.line, True))
                    piece = ""
                if current:
                    fields.append(tuple(current))
                    current = []
            else:
                piece += ch
        if piece:
            current.append(Seg(piece, seg.file, seg.line, True))
    if current:
        fields.append(tuple(current))
    return fields


def _values(rng: random.Random, count: int) -> list[Text]:
    alphabet = "ab \t\n-]^\\x:,"
    return [tuple(Seg("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))), rng.choice("fg"),
                      rng.randint(1, 2), rng.random() < 0.8, rng.choice(["", "runtime"]))
                  for _ in range(rng.randint(0, 4)))
            for _ in range(count)]


def test_split_fields_is_the_character_definition() -> None:
    # IFS of white space only: runs of it separate fields (the regular-expression path)
    rng = random.Random(23)
    for text in _values(rng, 4000):
        for ifs in (" \t\n", "", " ", "\t"):
            assert split_fields(text, ifs) == _split_by_character(text, ifs), (text, ifs)


def test_split_fields_with_other_delimiters_is_word_splitting() -> None:
    """An IFS holding another character: each one delimits on its own, as bash's word splitting
    (verifier.shell.expansion.field_spans) of the known text; an unknown segment is never cut."""
    rng = random.Random(29)
    for text in _values(rng, 4000):
        for ifs in (",", ":", "-]", "^\\", " ,", ":\t"):
            fields = split_fields(text, ifs)
            if all(seg.known for seg in text):
                flat = "".join(seg.text for seg in text)
                assert ["".join(seg.text for seg in f) for f in fields] == \
                    [flat[a:b] for a, b in field_spans(flat, ifs)], (text, ifs)
            unknown = [dataclasses.replace(seg, many=True) for seg in text if not seg.known and seg.text]
            assert [seg for f in fields for seg in f if not seg.known] == unknown, (text, ifs)


def test_split_fields_keeps_origins_and_unknown_parts() -> None:
    host = Seg("${HOST}", "a.sh", 3, False, "runtime")
    text = (Seg("--x  1\t", "a.sh", 1), host, Seg(":80 y", "b.sh", 2))
    assert split_fields(text) == [(Seg("--x", "a.sh", 1),), (Seg("1", "a.sh", 1),),
                                  (dataclasses.replace(host, many=True), Seg(":80", "b.sh", 2)), (Seg("y", "b.sh", 2),)]


def _concat_one_by_one(*parts: Text) -> Text:
    """`concat` as first written: each segment added to the last when of one origin."""
    out: list[Seg] = []
    last: Seg | None = None
    for part in parts:
        for seg in part:
            if not seg.text:
                continue
            if last is not None and (last.file, last.line, last.known, last.why, last.many) == \
                    (seg.file, seg.line, seg.known, seg.why, seg.many):
                last = out[-1] = Seg(last.text + seg.text, seg.file, seg.line, seg.known, seg.why, seg.many)
            else:
                out.append(seg)
                last = seg
    return tuple(out)


def test_concat_is_the_one_by_one_definition() -> None:
    rng = random.Random(11)
    values = _values(rng, 6000)
    for i in range(0, len(values) - 4, 3):
        parts = values[i:i + rng.randint(0, 4)]
        got, want = concat(*parts), _concat_one_by_one(*parts)
        assert got == want, parts
        # a segment not merged with another is the very object (an unknown one's identity names its value)
        assert [g is w for g, w in zip(got, want, strict=True)] == \
            [any(g is seg for part in parts for seg in part) for g in got]


def test_concat_and_is_known_of_one_segment() -> None:
    rng = random.Random(5)
    for text in _values(rng, 2000):
        merged: list[Seg] = []
        for seg in text:
            if not seg.text:
                continue
            last = merged[-1] if merged else None
            if last is not None and (last.file, last.line, last.known, last.why) == \
                    (seg.file, seg.line, seg.known, seg.why):
                merged[-1] = Seg(last.text + seg.text, seg.file, seg.line, seg.known, seg.why)
            else:
                merged.append(seg)
        assert concat(text) == tuple(merged)
        assert is_known(text) == all(seg.known for seg in text)


def test_a_parameter_operand_read_again_is_the_same() -> None:
    # `${X:-...}` operands and here-documents are lexed once per text and line: a second reading of
    # the script gives the same commands
    script = 'A="${A:-"$B/x y"}"\nC=${C:=$A}\ncat <<EOF > f\n${C%/*} $A\nEOF\nrun "$A" "$C" "${A/x/z}"\n'
    first = Reader(unknown=lambda _name: False).run("s.sh", script, {"B": "/b"})
    again = Reader(unknown=lambda _name: False).run("s.sh", script, {"B": "/b"})
    assert [e.argv for e in first.events] == [e.argv for e in again.events]
    assert first.events[-1].words() == ["run", "/b/x y", "/b/x y", "/b/z y"]
    # each piece keeps the origin it had before the operands were kept (the environment, line 1)
    joined = (Seg("/b", "<env>", None), Seg("/x y", "s.sh", 1))
    assert first.events[-1].argv[1:] == (joined, joined, (Seg("/b/z y", "<env>", None),))


def test_a_known_segment_is_shared_an_unknown_one_never() -> None:
    # a run-time value is told apart by its segment's identity (trace `_file_key`: two `$(mktemp)`
    # are two files); a known text is only ever compared
    assert text_of("abc", "a.sh", 2)[0] is text_of("abc", "a.sh", 2)[0]
    assert text_of("abc", "a.sh", 2) == (Seg("abc", "a.sh", 2),)
    first, second = text_of("$(mktemp)", "a.sh", 2, known=False), text_of("$(mktemp)", "a.sh", 2, known=False)
    assert first == second and first[0] is not second[0]
    assert text_of("") == () and text_of("", known=False) == ()
