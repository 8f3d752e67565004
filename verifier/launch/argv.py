"""A server command line read as flags: the `Launch.args` mapping of script launches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier.core import processcache
from verifier.engines.common import is_number

# Whether a token is a flag, by the token: the argvs of a PR's launches repeat a few hundred words
# (#1571: 393 distinct in 42,708), and `is_number` parses each as a float.
_FLAGS: processcache.ByText[str, bool] = processcache.ByText("launch.argv-flags", 1 << 13)


def _is_flag(token: str) -> bool:
    got = _FLAGS.get(token)
    if got is None:
        got = _FLAGS.put(token, token.startswith("-") and token not in ("-", "--") and not is_number(token))
    return got


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
