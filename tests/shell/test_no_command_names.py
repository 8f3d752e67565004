"""The shell reader names no engine and no launcher: what it recognises is handed in.

verifier/shell/ is the static bash reader; the commands that start servers and scripts (the
engines' server entry points, the wrapper commands and their option grammar) are one table in the
launch layer (verifier/launch/commands.py over verifier/engines/commands.py), given to the reader
as a `verifier.shell.launchers.Commands`. Every string literal of verifier/shell/*.py (read from the
syntax tree: docstrings, f-string parts and constants alike) is searched for an engine's name and
for the name of a wrapper command of that table (bash's own words, which the reader implements as
bash, and `env`, its word for an environment, excepted).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from verifier.engines import ENGINE_MODULES
from verifier.engines.commands import SERVERS
from verifier.launch.commands import WRAPPERS, shell_commands

SHELL = Path(__file__).resolve().parents[2] / "verifier" / "shell"
# the engines, their server packages and programs, and an engine framework the recipes name
ENGINE_WORDS = frozenset({*ENGINE_MODULES, "tensorrt", "tensorrt_llm", "dynamo",
                          *(m.split(".")[0] for s in SERVERS for m in s.modules),
                          *(p.program for s in SERVERS for p in s.programs)})
# wrapper names that are bash's own builtins and keywords (the reader runs them as bash does), and
# `env`, also the reader's word for an environment (`<env>`, `env0`)
BASH_WORDS = frozenset({"exec", "command", "builtin", "time", "env"})


def _literals(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def _pattern(words: frozenset[str]) -> re.Pattern[str]:
    # a name as a word of its own: `atom` is not in `atomic`, `nice` is not in `nicely`
    return re.compile(r"(?<![A-Za-z0-9_-])(?:" + "|".join(map(re.escape, sorted(words))) + r")(?![A-Za-z0-9_-])",
                      re.I)


def _hits(words: frozenset[str]) -> list[str]:
    rx = _pattern(words)
    return [f"{path.name}:{line}: {m.group(0)!r} in {text[:80]!r}"
            for path in sorted(SHELL.glob("*.py")) for line, text in _literals(path) for m in rx.finditer(text)]


def test_the_names_are_the_tables() -> None:
    launchers = {w.name for w in WRAPPERS} - BASH_WORDS
    assert {"mpirun", "srun", "sbatch", "docker", "numactl", "trtllm-llmapi-launch"} <= launchers
    assert {"sglang", "vllm", "trtllm", "trtllm-serve", "tensorrt_llm", "atom", "tilert", "dynamo"} <= ENGINE_WORDS
    commands = shell_commands()
    assert set(commands.programs) <= ENGINE_WORDS and set(commands.wrappers) == {w.name for w in WRAPPERS}
    assert _hits(frozenset({"python3"})), "the scan reads the shell reader's literals"


def test_no_engine_name_in_the_shell_reader() -> None:
    found = _hits(ENGINE_WORDS)
    assert not found, "engine names in verifier/shell/ (hand them in through Commands):\n" + "\n".join(found)


def test_no_launcher_name_in_the_shell_reader() -> None:
    found = _hits(frozenset({w.name for w in WRAPPERS}) - BASH_WORDS)
    assert not found, "launcher names in verifier/shell/ (hand them in through Commands):\n" + "\n".join(found)
