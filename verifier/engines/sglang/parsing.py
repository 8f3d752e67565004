"""SGLang's launcher prefixes: `python3 -m sglang.launch_server ARGS`, `sglang serve ARGS`, Dynamo's."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Launcher prefixes in front of the server arguments (srtctl, InferenceX scripts, `sglang serve`).
_LAUNCHER_MODULES = ("sglang.launch_server", "sglang.launch_server_http", "dynamo.sglang")
_PYTHON = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")


def split_launcher(argv: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Split `python3 -m sglang.launch_server ARGS` / `sglang serve ARGS` into (prefix, ARGS).

    A command line that already starts with an option (or is empty) has no prefix.
    """
    tokens = tuple(argv)
    if not tokens or tokens[0].startswith("-"):
        return (), tokens
    if len(tokens) >= 3 and _PYTHON.match(tokens[0]) and tokens[1] == "-m" and tokens[2] in _LAUNCHER_MODULES:
        return tokens[:3], tokens[3:]
    if len(tokens) >= 2 and tokens[0].rsplit("/", 1)[-1] == "sglang" and tokens[1] in ("serve", "launch_server"):
        return tokens[:2], tokens[2:]
    return (), tokens
