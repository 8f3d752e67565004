"""The verbs of `verify-pr`, one module each.

Every module exposes `NAME: str`, `HELP: str` (one line for `verify-pr --help`),
`add_arguments(parser: argparse.ArgumentParser) -> None` and `run(args: argparse.Namespace) -> int`
(the exit status). Modules import only the standard library at import time: what a verb needs is
imported inside its `run`, so `verify-pr precommit` stays light. To add a verb, write its module and
add it to COMMANDS below -- nothing else changes.
"""

from __future__ import annotations

from types import ModuleType

from verifier.app.commands import (
    action,
    bundle,
    engine_spec,
    explain,
    local,
    pr,
    precommit,
    record_git,
    replay,
    sglang_spec,
)

COMMANDS: tuple[ModuleType, ...] = (
    bundle,
    pr,
    precommit,
    explain,
    local,
    record_git,
    replay,
    sglang_spec,
    engine_spec,
    action,
)


def by_name() -> dict[str, ModuleType]:
    """The registry as {verb: module}, in COMMANDS order."""
    return {module.NAME: module for module in COMMANDS}
