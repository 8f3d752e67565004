"""A static reader of the bash that InferenceX runners and multi-node launchers are written in.

Never executes anything. `parse(text, path)` turns a script into a small syntax tree
(`verifier.launch.shell.parse`); `Reader(...).run(...)` walks it with a known environment
(`verifier.launch.shell.run`) and returns the variables the script leaves behind and every command it
would run (`Event`: argv words with the file and line that wrote each one, the exported environment at
that moment, and whether an undecidable condition guards it). Values are `Text` sequences that
remember where each piece was written (`verifier.launch.shell.values`).

This reader is separate from the single-node evaluator (`verifier.recipes.legacy_script`): that one
looks for one server command in a per-config script; this one follows chains of scripts (runner ->
per-config script -> submit script -> job script -> server script), where every command matters.
"""

from __future__ import annotations

from verifier.launch.shell.parse import ShellSyntaxError, parse
from verifier.launch.shell.run import Event, Reader, ReadResult, Stop
from verifier.launch.shell.values import Seg, Text, join_fields, plain, text_of

__all__ = [
    "Event",
    "ReadResult",
    "Reader",
    "Seg",
    "ShellSyntaxError",
    "Stop",
    "Text",
    "join_fields",
    "parse",
    "plain",
    "text_of",
]
