"""A server command line read as flags: the `Launch.args` mapping of script launches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier.engines.common import is_number


def _is_flag(token: str) -> bool:
    return token.startswith("-") and token not in ("-", "--") and not is_number(token)


def flag_map(argv: Sequence[str]) -> dict[str, Any]:
    """argv as `{flag: value}`: `True` for a bare flag, a list for several values, `--f=v` inline;
    dashes are dropped from the name and kept as written inside it; the last spelling wins."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if not _is_flag(token):
            i += 1
            continue
        name, eq, inline = token.lstrip("-").partition("=")
        if eq:
            out[name] = inline
            i += 1
            continue
        j = i + 1
        while j < len(argv) and not _is_flag(argv[j]):
            j += 1
        values = list(argv[i + 1:j])
        out[name] = True if not values else values[0] if len(values) == 1 else values
        i = j
    return out
