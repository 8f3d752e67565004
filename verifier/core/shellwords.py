"""`shlex.split` (POSIX mode), word for word, without its character-by-character state machine.

Server logs, recipe pages and launch commands hold long command lines (a server's argv, hundreds of
words); `shlex` reads them one character at a time through Python code. `split` reads the same
words with one regular expression per piece (a run of plain characters, an escaped character, a
quoted string, a separator). Its grammar is shlex's in POSIX mode with `whitespace_split`:
separators are space, tab, CR and LF; `'...'` is literal; inside `"..."` a backslash escapes only
`"` and `\\` (before anything else it stays); outside quotes a backslash makes the next character
literal; with `comments=True` a `#` outside quotes (even inside a word) ends the word and skips the
rest of its line. Anything the expression does not read to the end (an unterminated quote, a
trailing backslash) is handed to `shlex.split` itself, so even the errors are shlex's own.
"""

from __future__ import annotations

import re
import shlex

_PIECE = r"""[^ \t\r\n'"\\{comment}]+|\\(.)|'([^']*)'|"((?:[^"\\]|\\.)*)"|([ \t\r\n]+{comment_sep})"""
_PIECES = re.compile(_PIECE.format(comment="", comment_sep=""), re.S)
_PIECES_COMMENTS = re.compile(_PIECE.format(comment="#", comment_sep="|#[^\n]*\n?"), re.S)
_DQ_ESCAPE = re.compile(r'\\(["\\])')


def split(text: str, comments: bool = False) -> list[str]:
    """The words of `text` exactly as `shlex.split(text, comments=comments, posix=True)` gives them
    (ValueError as it raises it)."""
    pieces = _PIECES_COMMENTS if comments else _PIECES
    words: list[str] = []
    word: str | None = None
    pos, end = 0, len(text)
    match = pieces.match
    while pos < end:
        m = match(text, pos)
        if m is None:  # an unterminated quote or a trailing backslash: shlex words the error
            return shlex.split(text, comments=comments, posix=True)
        escaped, single, double, separator = m.groups()
        if separator is not None:
            if word is not None:
                words.append(word)
                word = None
        elif escaped is not None:
            word = (word or "") + escaped
        elif single is not None:
            word = (word or "") + single
        elif double is not None:
            word = (word or "") + (_DQ_ESCAPE.sub(r"\1", double) if "\\" in double else double)
        else:
            word = (word or "") + m.group(0)
        pos = m.end()
    if word is not None:
        words.append(word)
    return words
