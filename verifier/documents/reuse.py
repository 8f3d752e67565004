"""Reuse commands in PR comments (FORMATS §12.1): `/use <run id>` and `/reuse-sweep-run [<run id>]`,
each a whole line of its comment. One reading for the recorder (which run to fetch,
verifier.record.github.links) and the verdict (which run is evidence, verifier.facts.ci)."""

from __future__ import annotations

import re
from collections.abc import Iterator

# ASCII digits only: a run id is never written in other scripts. Matched against one stripped line at
# a time (`command_lines`): anchoring `\s*` runs across lines made a whole-body pattern quadratic on
# whitespace runs.
REUSE_COMMAND = re.compile(r"/reuse-sweep-run(?:[^\S\r\n]+([0-9]+))?|/use[^\S\r\n]+([0-9]+)")
# The longest line that can hold a command: "/reuse-sweep-run", separating blanks, a 15-digit id.
MAX_COMMAND_LINE = 256


def command_lines(body: str) -> Iterator[str]:
    """The stripped lines of a comment that could be a whole-line command (short, starting with '/').

    One pass over the body (linear in its size); a line longer than MAX_COMMAND_LINE is never a
    command, so the pattern only ever sees bounded text.
    """
    for raw in body.split("\n"):
        line = raw.strip()
        if line.startswith("/") and len(line) <= MAX_COMMAND_LINE:
            yield line


def last_command(body: str) -> re.Match[str] | None:
    """A comment's last whole-line reuse command (groups: the `/reuse-sweep-run` id, the `/use` id)."""
    last = None
    for line in command_lines(body):
        last = REUSE_COMMAND.fullmatch(line) or last
    return last
