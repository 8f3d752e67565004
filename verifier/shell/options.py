"""How the worlds evaluator (verifier.shell.evaluator) sees the world outside a script, and the
limits past which it stops (a limit hit is `ShellLimit`: the launch is not resolved)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from verifier.shell.launchers import Commands
from verifier.shell.values import Loc

MAX_ITERATIONS = 256
MAX_FIXPOINT = 4
MAX_CALL_DEPTH = 48
MAX_SOURCE_DEPTH = 8
MAX_STEPS = 150_000


class ShellLimit(Exception):
    """The script is too large or too branchy to follow; names the line."""

    def __init__(self, message: str, loc: Loc | None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc


@dataclass
class Options:
    """How the evaluator sees the world outside the script."""

    reader: Callable[[str], str | None] = lambda path: None  # repository path -> text
    file_test: Callable[[str, str], bool | None] = lambda op, path: None  # (op, repository path)
    roots: tuple[str, ...] = ("/workspace/", "/ix/", "/infmax-workspace/")  # absolute prefixes of the repo
    mode: str = "server"  # server | child
    max_worlds: int = 32
    # the commands that start a server or a script (verifier.shell.launchers.Commands, built by
    # verifier.launch.commands): the evaluator names none itself
    commands: Commands = field(default_factory=Commands)
    machine_env: frozenset[str] = frozenset()
    follow_children: bool = True
    # functions of an unread library whose exit status follows from one variable:
    # name -> (VAR, op, value) meaning `[ "$VAR" op value ]`
    known_functions: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    # prefix sharing between evaluations of one script from environments that agree on what the
    # first statements read (verifier.shell.memo.Checkpoints)
    checkpoints: Any = None
    checkpoint_key: Any = None
    # every outside fact the evaluation asked `reader` / `file_test` for, with the answer, appended
    # by a caller that shares evaluations between the trees of a bundle (verifier.shell.memo.Shared);
    # None when nobody keeps them (or when a checkpoint resumed from did not keep them)
    accesses: list[tuple[Any, ...]] | None = None
