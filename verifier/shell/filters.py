"""Text filters the static shell reader evaluates when their input is known.

Launch scripts edit flag strings with pipelines such as
`echo "$CONFIG" | sed -E "s/--tensor-parallel-size[[:space:]]+[0-9]+/--tensor-parallel-size 4/g"` or
test them with `echo "$CONFIG" | grep -q -- '--enable-expert-parallel'`. When the text is known these
are pure functions of it: `apply_filter(words, text)` computes (output, exit status) for `grep`, `sed`
(`s///` with any delimiter, `-E` or basic regular expressions), `tr`, `head -n`, `tail -n`, `cut -d -f`,
`sort` and `wc -l`, keeping the origin of every unchanged piece of text (a `sed` replacement takes the
origin of the line that wrote it). Anything else returns None: the command stays a run-time fact.
"""

from __future__ import annotations

import re

from verifier.core.linear_regex import LinearPattern, compile_pattern
from verifier.shell.arith import is_integer, is_number
from verifier.shell.text import Seg, Text, concat, plain, slice_text, text_of
from verifier.shell.values import posix_regex


def _regex(pattern: str, extended: bool, ignore_case: bool = False) -> LinearPattern | None:
    """A `grep`/`sed` pattern (basic unless `extended`), matched in linear time (None: not read)."""
    return compile_pattern(posix_regex(pattern, extended), ignore_case)


def _sed(script: str, text: Text, extended: bool, origin: tuple[str, int | None]) -> Text | None:
    if len(script) < 2 or script[0] != "s":
        return None
    delim = script[1]
    parts: list[str] = []
    buf = ""
    i = 2
    while i < len(script):
        ch = script[i]
        if ch == "\\" and i + 1 < len(script) and script[i + 1] == delim:
            buf += delim
            i += 2
            continue
        if ch == "\\" and i + 1 < len(script):
            buf += script[i:i + 2]
            i += 2
            continue
        if ch == delim:
            parts.append(buf)
            buf = ""
            i += 1
            continue
        buf += ch
        i += 1
    parts.append(buf)
    if len(parts) != 3:
        return None
    pattern, replacement, flags = parts
    if set(flags) - {"g", "I"}:
        return None
    rx = _regex(pattern, extended, "I" in flags)
    if rx is None:
        return None
    source = plain(text)
    pieces: list[Text] = []
    last = 0
    for m in rx.finditer(source):
        pieces.append(slice_text(text, last, m.start()))
        rep = ""
        j = 0
        while j < len(replacement):
            ch = replacement[j]
            if ch == "\\" and j + 1 < len(replacement):
                nxt = replacement[j + 1]
                rep += m.group(int(nxt)) or "" if "0" <= nxt <= "9" else {"n": "\n", "t": "\t"}.get(nxt, nxt)
                j += 2
                continue
            rep += (m.group(0) or "") if ch == "&" else ch
            j += 1
        pieces.append(text_of(rep, *origin))
        last = m.end()
        if "g" not in flags:
            break
    pieces.append(slice_text(text, last))
    return concat(*pieces)


def _lines(text: Text) -> list[Text]:
    source = plain(text)
    out: list[Text] = []
    start = 0
    for i, ch in enumerate(source):
        if ch == "\n":
            out.append(slice_text(text, start, i))
            start = i + 1
    if start < len(source):
        out.append(slice_text(text, start))
    return out


def _join_lines(lines: list[Text]) -> Text:
    pieces: list[Text] = []
    for line in lines:
        pieces.append(line)
        pieces.append(text_of("\n"))
    return concat(*pieces)


def apply_filter(words: list[str], text: Text, origin: tuple[str, int | None]) -> tuple[Text, bool] | None:
    """(output, status) of one filter command on known input; None when it is not evaluated."""
    if not words:
        return None
    name, args = words[0], words[1:]
    if name == "grep":
        opts: set[str] = set()
        rest: list[str] = []
        ended = False
        for a in args:
            if a == "--" and not ended and not rest:
                ended = True
            elif a.startswith("-") and len(a) > 1 and not rest and not ended:
                opts.update(a[1:])
            else:
                rest.append(a)
        if not rest or opts - set("qEFvic"):
            return None
        pattern = rest[0]
        if "F" in opts:
            def test(line: str) -> bool:
                return (pattern.lower() in line.lower()) if "i" in opts else pattern in line
        else:
            rx = _regex(pattern, "E" in opts, "i" in opts)
            if rx is None:
                return None
            search = rx.search

            def test(line: str) -> bool:
                return search(line) is not None
        kept = [ln for ln in _lines(text) if test(plain(ln)) != ("v" in opts)]
        if "c" in opts:
            return text_of(f"{len(kept)}\n", *origin), bool(kept)
        return (() if "q" in opts else _join_lines(kept)), bool(kept)
    if name == "sed":
        extended = False
        scripts: list[str] = []
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-E", "-r"):
                extended = True
            elif a == "-e" and i + 1 < len(args):
                scripts.append(args[i + 1])
                i += 1
            elif a.startswith("-"):
                return None
            else:
                scripts.append(a)
            i += 1
        out: Text | None = text
        for script in scripts:
            if out is None:
                return None
            out = _sed(script, out, extended, origin)
        return (out, True) if out is not None else None
    if name == "tr" and len(args) == 2 and not args[0].startswith("-"):
        a, b = args[0].replace("\\n", "\n"), args[1].replace("\\n", "\n")
        if len(a) != len(b) or any(c in a + b for c in "[]-\\"):
            return None
        table = str.maketrans(a, b)
        return text_of(plain(text).translate(table), *origin), True
    if name == "tr" and len(args) == 2 and args[0] == "-d":
        chars = args[1].replace("\\n", "\n")
        return text_of("".join(c for c in plain(text) if c not in chars), *origin), True
    if name in ("head", "tail"):
        count = 10
        if args[:1] == ["-n"] and len(args) > 1 and is_integer(args[1]):
            count = int(args[1])
        elif args and re.fullmatch(r"-[0-9]+", args[0]):
            count = int(args[0][1:])
        elif args:
            return None
        lines = _lines(text)
        picked = lines[:count] if name == "head" else lines[-count:] if count else []
        return _join_lines(picked), True
    if name == "sort" and set(args) <= {"-n", "-u"}:
        lines = _lines(text)
        key = (lambda t: float(plain(t)) if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", plain(t).strip(" \t")) else 0.0) \
            if "-n" in args else (lambda t: plain(t))
        ordered = sorted(lines, key=key)
        if "-u" in args:
            seen: set[str] = set()
            ordered = [ln for ln in ordered if not (plain(ln) in seen or seen.add(plain(ln)))]
        return _join_lines(ordered), True
    if name == "wc" and args == ["-l"]:
        return text_of(f"{len(_lines(text))}\n", *origin), True
    if name == "cut" and args:
        delim, field = "\t", None
        for i, a in enumerate(args):
            if a.startswith("-d"):
                delim = a[2:] or (args[i + 1] if i + 1 < len(args) else "\t")
            if a.startswith("-f"):
                field = a[2:] or (args[i + 1] if i + 1 < len(args) else None)
        if field is None or not is_number(field):
            return None
        n = int(field) - 1
        out_lines = []
        for ln in _lines(text):
            pieces = plain(ln).split(delim)
            out_lines.append(text_of(pieces[n] if n < len(pieces) else "", *origin))
        return _join_lines(out_lines), True
    return None


def unknown(origin: tuple[str, int | None], source: str) -> Text:
    """A filter output that is a run-time value."""
    return (Seg(source, origin[0], origin[1], False, "runtime"),)
