"""What the utilities both walkers model print for known arguments: `echo`, `printf`, `seq`,
`dirname` and `basename` (their GNU coreutils and bash builtin behaviour); how `read` splits a
line among names; what a declaration (`export`, `declare`, `local`, ...) was asked; which files a
command brings onto the machine at run time (`fetch_targets`). Written once
for the single-node evaluator (verifier.shell.builtins) and the multi-node reader
(verifier.shell.trace).

Each walker keeps its own values (a `Val`, a `Text` with per-character origins): these functions
take the known text of the arguments and give the text printed, without the final newline a command
substitution strips; `printf_pieces` passes a value it does not know through in its place.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple, TypeVar

from verifier.core.processcache import ByText
from verifier.shell.arith import C_SPACE, is_integer
from verifier.shell.expansion import DEFAULT_IFS, field_spans

V = TypeVar("V")

MAX_SEQ = 4096  # numbers a `seq` may print: its text is linear in it
_ECHO_FLAGS = re.compile(r"-[neE]+")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|0[0-7]{0,3}|[1-7][0-7]{0,2}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
            "f": "\f", "v": "\v"}
_PRINTF_SPEC = re.compile(r"%([-+ 0#]*)([0-9]+|\*)?(?:\.([0-9]+))?([sdiqbxXfFeEgGcou%])")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# (text before it, conversion, flags, width, precision) per conversion; the text after the last; and
# whether any conversion takes an argument
_Format = tuple[tuple[tuple[str, str, str, str | None, str | None], ...] | None, str, bool]
_FORMATS: ByText[str, _Format] = ByText("shell.printf-formats", 1024)
_FORMAT_TEXT_MAX = 4096


def unescape(text: str, octal: str = "0") -> str:
    """Backslash escapes as `echo -e` and `printf %b` read them (`octal` "0": `\\0NNN`), or as a
    printf format does (`octal` "": `\\NNN`): `\\n`, `\\t`, ..., `\\xHH`, `\\uHHHH`, `\\UHHHHHHHH`;
    `\\c` ends the text."""
    if "\\" not in text:  # nothing to unescape
        return text
    out: list[str] = []
    pos = 0
    for m in _ESCAPE.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        e = m.group(1)
        if e == "c":
            return "".join(out)
        if e[0] in "xuU" and len(e) > 1:
            out.append(chr(min(int(e[1:], 16), 0x10FFFF)))
        elif e[0] in "01234567" and octal == "0":  # `\\0NNN` (`\\NNN` is no escape here)
            out.append(chr(int(e[1:] or "0", 8) & 255) if e[0] == "0" else "\\" + e)
        elif e[0] in "01234567":  # a format's `\\NNN`: one to three octal digits
            out.append(chr(int(e[:3], 8) & 255) + e[3:])
        else:
            out.append(_ESCAPES.get(e, "\\" + e))
    out.append(text[pos:])
    return "".join(out)


def echo_options(words: Sequence[str | None]) -> tuple[int, bool, bool]:
    """`echo`'s leading options among its arguments' known texts (None: not known, so not an option):
    how many there are, whether a newline ends the output (no `-n`) and whether escapes are read
    (the last option holds an `e`)."""
    count, newline, escapes = 0, True, False
    for word in words:
        if word is None or not _ECHO_FLAGS.fullmatch(word):
            break
        count += 1
        newline = newline and "n" not in word
        escapes = "e" in word
    return count, newline, escapes


def _parsed_format(fmt: str) -> _Format:
    """A printf format split into its conversions, once per format text (a script prints with the
    same few formats in every evaluation)."""
    got = _FORMATS.get(fmt)
    if got is not None:
        return got
    specs: list[tuple[str, str, str, str | None, str | None]] = []
    pos = 0
    modelled = True
    for m in _PRINTF_SPEC.finditer(fmt):
        modelled = modelled and "%" not in fmt[pos:m.start()]  # a conversion it does not know (`%(..)T`)
        specs.append((unescape(fmt[pos:m.start()], ""), m.group(4), m.group(1) or "", m.group(2), m.group(3)))
        pos = m.end()
    modelled = modelled and "%" not in fmt[pos:]
    got = (tuple(specs) if modelled else None, unescape(fmt[pos:], ""), any(conv != "%" for _, conv, _, _, _ in specs))
    if len(fmt) <= _FORMAT_TEXT_MAX:
        _FORMATS.put(fmt, got)
    return got


def printf_pieces(fmt: str, args: Sequence[V]) -> list[str | V] | None:
    """bash `printf FORMAT ARGS` for %s %d %i %u %q %b %x %X %o %f %e %g %c %% with their flags,
    widths and precisions (the format is used again while arguments remain): the pieces printed, an
    argument that is not a `str` passed through whole. None when the walkers do not model it (another
    conversion such as `%(...)T`, a `*` width, a number bash would not read, `%q` of text holding a
    control character)."""
    specs, tail, consumes = _parsed_format(fmt)
    if specs is None:
        return None
    out: list[str | V] = []
    k = 0
    n = len(args)
    while True:
        for text, conv, flags, width, prec in specs:
            out.append(text)
            if conv == "%":
                out.append("%")
                continue
            arg: str | V = args[k] if k < n else ""
            k += 1
            if not isinstance(arg, str):
                out.append(arg)
                continue
            converted = _convert(conv, flags, width, prec, arg)
            if converted is None:
                return None
            out.append(converted)
        out.append(tail)
        if not consumes or k >= n:  # a format without conversions is printed once
            break
    return out


_INTEGER_ARG = re.compile(f"[{C_SPACE}]*" r"([-+]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)" f"[{C_SPACE}]*")
# what `%q` puts a backslash before: these characters anywhere, `~` at the start or after `=`/`:`,
# `#` at the start
_QUOTED = re.compile(r"[ \t\n'\"\\|&;()<>!{}*\[?\]^$`,]|(?:^|(?<=[=:]))~|^#")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def backslash_quoted(text: str) -> str | None:
    """`printf %q` of a text as bash quotes it: `''` for none, a backslash before each character the
    shell would read (`~` at the start or after `=`/`:`, `#` at the start); None for text holding a
    control character (bash prints `$'...'` then)."""
    if not text:
        return "''"
    if _CONTROL.search(text):
        return None
    return _QUOTED.sub(r"\\\g<0>", text)


def _integer(arg: str) -> int | None:
    """A numeric argument as bash's printf reads it (hex `0x..`, octal `0..`, a `'c` character's
    code; empty: 0); None for anything else (bash reports an error)."""
    if not arg:
        return 0
    if arg[:1] in "'\"" and len(arg) > 1:
        return ord(arg[1])
    m = _INTEGER_ARG.fullmatch(arg)
    if m is None:
        return None
    sign, digits = m.groups()
    value = int(digits, 16) if digits[:2] in ("0x", "0X") else int(digits, 8) if digits.startswith("0") else int(digits)
    return -value if sign == "-" else value


def _convert(conv: str, flags: str, width: str | None, prec: str | None, arg: str) -> str | None:
    """One conversion as C's printf makes it (Python's `%` operator follows it for these), or None."""
    if width == "*" or prec == "*":
        return None
    spec = "%" + flags + (width or "") + ("" if prec is None else "." + prec)
    if conv == "q":
        return None if width or prec else backslash_quoted(arg)
    if conv in "sbc":  # text: width and precision as %s takes them (no zero padding)
        text = unescape(arg) if conv == "b" else arg[:1] if conv == "c" else arg
        return ("%" + flags.replace("0", "") + (width or "") + ("" if prec is None or conv == "c" else "." + prec)
                + "s") % text
    number = _integer(arg) if conv in "diuxXo" else None
    if conv in "di":
        return None if number is None else (spec + "d") % number
    if conv in "uxXo":
        if number is None or (conv == "o" and "#" in flags):
            return None
        return (spec + ("d" if conv == "u" else conv)) % (number + (1 << 64) if number < 0 else number)
    if not arg.isascii() or "_" in arg:  # Python's float takes other digits and `1_0`; C's strtod does not
        return None
    try:
        value = float(arg) if arg else 0.0
    except ValueError:
        return None
    return (spec + conv) % value


def seq_numbers(words: Sequence[str]) -> range | None:
    """`seq LAST`, `seq FIRST LAST`, `seq FIRST STEP LAST` of integers (None: an option, which changes
    the text, a number that is not an integer, a zero step or more than `MAX_SEQ` numbers)."""
    if not 1 <= len(words) <= 3 or not all(map(is_integer, words)):
        return None
    ints = [int(w) for w in words]
    first, step, last = (1, 1, ints[0]) if len(ints) == 1 else (ints[0], 1, ints[1]) if len(ints) == 2 else \
        (ints[0], ints[1], ints[2])
    if step == 0 or abs(last - first) // abs(step) > MAX_SEQ:
        return None
    return range(first, last + (1 if step > 0 else -1), step)


class ReadCall(NamedTuple):
    """What `read` was asked: the names it assigns (`REPLY` when none and no `-a`), the array of
    `-a`, the character that ends its line (`-d`; "\\0" for `-d ''`), whether backslashes are
    literal (`-r`), and whether the walkers model the call (not with `-n`/`-N` counts, `-u` another
    descriptor, an option they do not know or a run-time word)."""

    names: tuple[str, ...]
    array: str | None
    delim: str
    raw: bool = False
    modelled: bool = True


_READ_VALUED = "adinNptu"  # options that take a value (the rest of the word, else the next word)


def read_operands(words: Sequence[str | None]) -> ReadCall:
    """`read`'s options (clustered as bash takes them: `-ra NAME`, `-rd ''`) and names from its
    arguments' known texts (None: a run-time word)."""
    names: list[str] = []
    array: str | None = None
    delim = "\n"
    raw, modelled = False, True
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word is None:
            modelled = False
        elif names or not word.startswith("-") or word == "-":
            names.append(word)
        elif word == "--":
            names.extend(w for w in words[i:] if w is not None)
            modelled = modelled and None not in words[i:]
            break
        else:
            for j, option in enumerate(word[1:], 1):
                if option in _READ_VALUED:
                    value = word[j + 1:] if j + 1 < len(word) else words[i] if i < len(words) else None
                    i += j + 1 == len(word)
                    if value is None or option in "nNu":
                        modelled = False
                    elif option == "a":
                        array = value
                    elif option == "d":
                        delim = value[:1] or "\0"
                    break  # -p, -t, -i change nothing a here-string's read gives
                if option == "r":
                    raw = True
                elif option not in "es":
                    modelled = False
    if not names and array is None:
        names = ["REPLY"]
    return ReadCall(tuple(names), array, delim, raw, modelled)


def read_line(call: ReadCall, text: str) -> tuple[str, bool] | None:
    """The line `read` takes from input `text` and whether its delimiter ended it (False: end of
    input); None when the walkers do not model it (`ReadCall.modelled`, or a backslash without `-r`)."""
    line, found, _rest = text.partition(call.delim if call.delim != "\0" else "\x00")
    if not call.modelled or (not call.raw and "\\" in line):
        return None
    return line, bool(found)


def read_fields(line: str, ifs: str, count: int | None) -> list[str]:
    """How `read` splits one line among `count` names (None: `read -a`, every field): as word
    splitting does (verifier.shell.expansion.field_spans), but the last name takes the rest of the
    line, without white space at its ends or a single trailing delimiter when the rest is one field."""
    if not ifs:
        return [line] if count is None else [line] + [""] * (count - 1)
    spans = field_spans(line, ifs)
    if count is None:
        return [line[a:b] for a, b in spans]
    if len(spans) <= count:
        fields = [line[a:b] for a, b in spans]
        return fields + [""] * (count - len(fields))
    white = "".join(c for c in DEFAULT_IFS if c in ifs)
    rest = line[spans[count - 1][0]:].rstrip(white) if white else line[spans[count - 1][0]:]
    if rest and rest[-1] in ifs and not any(c in ifs for c in rest[:-1]):
        rest = rest[:-1].rstrip(white) if white else rest[:-1]
    return [line[a:b] for a, b in spans[:count - 1]] + [rest]


class Operand(NamedTuple):
    """A `NAME=VALUE` (or `NAME+=VALUE`) operand of a declaration written as one word: which
    argument it is, the name, whether it appends, and where in the word its value starts."""

    position: int
    name: str
    append: bool
    offset: int


class Declaration(NamedTuple):
    """What `export`, `declare`, `typeset`, `local` or `readonly` was asked, from its arguments."""

    command: str
    flags: str  # the letters of its `-` options
    unexport: bool  # `export -n`, `declare +x`
    names: tuple[tuple[int, str], ...]  # NAME operands: which argument, the name
    assigned: tuple[Operand, ...]
    removed: str = ""  # the letters of its `+` options, which take an attribute away

    @property
    def refs(self) -> bool:
        """`declare -n` / `local -n` / `typeset -n`: name references (`export -n` unexports)."""
        return "n" in self.flags and self.command != "export"

    @property
    def exports(self) -> bool:
        return (self.command == "export" and not self.unexport) or "x" in self.flags

    def local(self, in_function: bool) -> bool:
        """Whether its names are local to the function running it (`declare -g` is global)."""
        return self.command == "local" or (self.command in ("declare", "typeset") and "g" not in self.flags
                                           and in_function)


# the conditions a `trap` handler runs on without a signal (at the shell's end, on a failure, ...)
TRAPS_WITHOUT_SIGNAL = frozenset({"EXIT", "0", "SIGEXIT", "ERR", "RETURN", "DEBUG"})

_ASSIGNED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")


class MapfileCall(NamedTuple):
    """What `mapfile`/`readarray` was asked: the array (`MAPFILE` when none is named), whether `-t`
    strips the newlines, and whether the walkers model the call (not with another option, a
    run-time word or more than one name: the array is then the run's)."""

    name: str
    strip: bool
    modelled: bool


def mapfile_operands(words: Sequence[str | None]) -> MapfileCall:
    """`mapfile`/`readarray`'s options and array name from its arguments' known texts (None: not known)."""
    names = [w for w in words if w is not None and _NAME.fullmatch(w)]
    modelled = len(names) <= 1 and all(w is not None and (w == "-t" or _NAME.fullmatch(w)) for w in words)
    return MapfileCall(names[-1] if names else "MAPFILE", "-t" in words, modelled)


def mapfile_lines(text: str, strip: bool) -> list[str]:
    """What `mapfile` puts in the array for input `text`: a line per element, with its newline
    unless `strip` (-t)."""
    lines = text.split("\n")
    last = lines.pop()
    out = lines if strip else [line + "\n" for line in lines]
    return [*out, last] if last else out


def declaration(command: str, words: Sequence[str | None]) -> Declaration:
    """A declaration's options and operands from its arguments' known texts (None: not known, skipped)."""
    flags, removed, unexport = "", "", False
    names: list[tuple[int, str]] = []
    assigned: list[Operand] = []
    for i, word in enumerate(words):
        if word is None:
            continue
        if word.startswith("-") and len(word) > 1:
            if command == "export" and word == "-n":
                unexport = True
            flags += word[1:]
        elif word.startswith("+") and len(word) > 1:
            removed += word[1:]
            unexport = unexport or "x" in word[1:]  # `declare +x NAME`: no longer exported
        elif "=" in word:  # `export "A=b"` written quoted: an assignment after all
            m = _ASSIGNED.match(word)
            if m is not None:
                assigned.append(Operand(i, m.group(1), bool(m.group(2)), m.end()))
        else:
            names.append((i, word))
    return Declaration(command, flags, unexport, tuple(names), tuple(assigned), removed)


def dirname(path: str) -> str:
    """`dirname PATH`: the path without its last component (`.` for a bare name, `/` for the root)."""
    if not path:
        return "."
    d = posixpath.dirname(path.rstrip("/") or "/")
    return (d.rstrip("/") or "/") if d else "."


def basename_operands(words: Sequence[V]) -> tuple[list[V], V | str]:
    """`basename`'s paths and the suffix it removes (`basename PATH SUFFIX`, `-s SUFFIX PATH...`,
    `-a PATH...`); a word that is not a `str` is an operand."""
    args = [w for w in words if w != "--"]
    if args and args[0] in ("-s", "--suffix") and len(args) >= 2:
        return args[2:], args[1]
    if args and args[0] in ("-a", "--multiple"):
        return args[1:], ""
    if len(args) == 2:
        return args[:1], args[1]
    return args, ""


def basename(path: str, suffix: str = "") -> str:
    """`basename PATH [SUFFIX]`: the last component, without `suffix` unless that is all of it."""
    if not path:
        return ""
    name = posixpath.basename(path.rstrip("/")) or "/"
    if suffix and name.endswith(suffix) and name != suffix:
        name = name[:-len(suffix)]
    return name


# commands that bring files onto the machine at run time, or put a fetched file somewhere else
FETCHERS = frozenset({"curl", "wget", "git", "scp", "rsync", "cp", "mv", "install", "ln", "tar", "unzip"})


def fetch_targets(head: str, words: Sequence[str], fetched: Mapping[str, object]) -> list[str]:
    """The files (or directories) a command of `FETCHERS` brings in at run time, as written: `curl -o F`
    / `--output=F` / `-O` (the URL's file name), `wget [-O F | --output-document=F] URL` (else the
    URL's file name; `-P DIR`), `scp`/`rsync` from a remote (`host:path`) to their last word, `git clone
    URL [DIR]`, and where `cp`/`mv`/`install`/`ln` put a file that is itself fetched (`fetched`: the
    paths fetched so far, `fetched_at`) or `tar`/`unzip` unpack a fetched archive. `words`: the arguments."""
    targets: list[str] = []
    if head == "curl":
        for i, v in enumerate(words):
            if v in ("-o", "--output") and i + 1 < len(words):
                targets.append(words[i + 1])
            elif v.startswith("--output="):
                targets.append(v.split("=", 1)[1])
            elif v in ("-O", "--remote-name"):
                targets += [posixpath.basename(u.split("?")[0]) for u in words if "://" in u]
    elif head == "wget":
        named = [words[i + 1] for i, v in enumerate(words) if v in ("-O", "--output-document") and i + 1 < len(words)]
        named += [v.split("=", 1)[1] for v in words if v.startswith("--output-document=")]
        targets += named or [posixpath.basename(u.split("?")[0]) for u in words if "://" in u]
        targets += [words[i + 1] for i, v in enumerate(words) if v in ("-P", "--directory-prefix") and i + 1 < len(words)]
    elif head in ("scp", "rsync"):
        plain_words = [v for v in words if not v.startswith("-")]
        if len(plain_words) >= 2 and any(":" in v for v in plain_words[:-1]):
            targets.append(plain_words[-1])
    elif head == "git":
        if words[:1] == ["clone"]:
            rest = [v for v in words[1:] if not v.startswith("-")]
            if len(rest) >= 2:
                targets.append(rest[1])
            elif rest:
                targets.append(posixpath.basename(rest[0].rstrip("/")).removesuffix(".git"))
    elif head in FETCHERS:  # copy / move / link / unpack a fetched file: where it lands is fetched too
        plain_words = [v for v in words if not v.startswith("-")]
        if head in ("tar", "unzip"):
            archive = next((words[i + 1] for i, v in enumerate(words[:-1]) if v in ("-f", "--file")),
                           plain_words[0] if head == "unzip" and plain_words else None)
            if archive is not None and fetched_at(fetched, archive) is not None:
                targets += [words[i + 1] for i, v in enumerate(words[:-1]) if v in ("-C", "-d", "--directory")]
        elif len(plain_words) >= 2 and any(fetched_at(fetched, v) is not None for v in plain_words[:-1]):
            targets.append(plain_words[-1])
    return [t for t in targets if t]


def note_fetches(fetched: dict[str, V], head: str, words: Sequence[str], where: V) -> None:
    """Add the files a command fetches (`fetch_targets`), normalised, to `fetched` (path -> where the
    command is); a path noted before keeps its first place."""
    for target in fetch_targets(head, words, fetched):
        fetched.setdefault(posixpath.normpath(target), where)


def fetched_at(fetched: Mapping[str, V], path: str) -> V | None:
    """What `fetched` (fetched paths, normalised, as `fetch_targets` gave them) holds for a path that is
    one of them or lies under one (a file of a cloned directory); None for any other."""
    norm = posixpath.normpath(path) if path else path
    for target, value in fetched.items():
        if norm == target or norm.startswith(target.rstrip("/") + "/"):
            return value
    return None


__all__ = ["FETCHERS", "MAX_SEQ", "TRAPS_WITHOUT_SIGNAL", "Declaration", "Operand", "ReadCall", "declaration", "basename", "basename_operands", "dirname", "echo_options", "fetch_targets", "fetched_at", "note_fetches", "printf_pieces",
           "MapfileCall", "mapfile_lines", "mapfile_operands", "read_fields", "read_line", "read_operands", "seq_numbers",
           "unescape"]
