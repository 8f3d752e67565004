"""One-server view of an old-layout launcher script, on top of verifier.shell.

`evaluate_script(text, env)` evaluates a script statically (verifier.shell: never executed) and
returns the server command when every way through the script starts the same one; it raises
`ScriptUnresolved` naming the line otherwise (the launch kind, verifier.launch.kinds.shell_script,
instead gives one launch per distinct server start). `sourced_libraries(path, text)` lists the
libraries a script sources relative to its own folder.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


class ScriptUnresolved(Exception):
    """The script's server command depends on something a static reading cannot decide."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True, eq=False, repr=False)
class ScriptLaunch:
    """The server command a script runs: argv after the launcher, env, and origins."""

    launcher: tuple[str, ...]
    module: str
    argv: tuple[str, ...]
    argv_lines: tuple[int, ...]
    env: dict[str, str]
    env_lines: dict[str, int]
    line: int
    opaque: tuple[tuple[str, int], ...] = ()
    unresolved_env: dict[str, int] = field(default_factory=dict)

    def flag_lines(self) -> dict[str, int]:
        """`flag name (no dashes) -> line` for every `--flag` in argv (the last occurrence wins)."""
        out: dict[str, int] = {}
        for token, line in zip(self.argv, self.argv_lines, strict=True):
            if token.startswith("--") and len(token) > 2:
                out[token[2:].split("=", 1)[0]] = line
        return out

    def args(self) -> dict[str, object]:
        """argv as `{flag: value}` (`True` for a bare flag, a list for several values)."""
        from verifier.launch.argv import flag_map

        return flag_map(self.argv)


def evaluate_script(text: str, env: Mapping[str, str], modules: Iterable[str] = (),
                    functions: Mapping[str, tuple[str, str, str]] | None = None,
                    path: str = "script.sh") -> ScriptLaunch:
    """The one server command a script starts (see the module docstring)."""
    # the shell reader is imported when a script is evaluated, not by every importer of this module
    from verifier.launch.commands import default_modules, shell_commands
    from verifier.shell import Options, ShellLimit, ShellSyntaxError, evaluate
    from verifier.shell.values import Opaque, Unknown, shown

    mods = default_modules()
    for m in modules:
        mods.setdefault(str(m), "")
    options = Options(commands=shell_commands(mods), known_functions=dict(functions or {}))
    try:
        ev = evaluate(text, path, dict(env), options)
    except ShellSyntaxError as exc:
        raise ScriptUnresolved(exc.message, exc.line) from exc
    except ShellLimit as exc:
        raise ScriptUnresolved(exc.message, exc.loc[1] if exc.loc else None) from exc
    servers = {}
    for result in ev.results:
        if result.server is not None:
            servers.setdefault(result.server.signature(), (result, result.server))
    if not servers:
        raise ScriptUnresolved("the script runs no recognised server command", None)
    if len(servers) > 1:
        results = [r for r, _ in servers.values()]
        shared = set.intersection(*(set(r.assumptions) for r in results))
        differing = [a for r in results for a in r.assumptions if a not in shared]
        line = differing[0].loc[1] if differing else None
        raise ScriptUnresolved(f"whether or how the server starts depends on line {line}, which cannot be "
                               "decided statically", line)
    _, server = next(iter(servers.values()))
    argv: list[str] = []
    lines: list[int] = []
    opaque: list[tuple[str, int]] = []
    for value, loc in zip(server.argv, server.argv_locs, strict=True):
        if isinstance(value, Unknown):
            raise ScriptUnresolved(f"a server argument written on line {loc[1]} depends on {value.reason} "
                                   f"(line {value.loc[1]})", value.loc[1])
        if isinstance(value, Opaque):
            opaque.append((value.text, loc[1]))
        argv.append(shown(value))
        lines.append(loc[1])
    env_out: dict[str, str] = {}
    env_lines: dict[str, int] = {}
    unresolved: dict[str, int] = {}
    for name, value, loc in server.env:
        if not loc[0]:
            continue
        if isinstance(value, Unknown):
            unresolved[name] = value.loc[1]
            continue
        if isinstance(value, Opaque) and value.loc[0] == "" and value.text == "$" + name:
            continue
        env_out[name] = shown(value)
        env_lines[name] = loc[1]
    for name, value, loc in server.env:
        if loc[0] and isinstance(value, Opaque) and name not in env_out and name not in unresolved:
            unresolved[name] = loc[1]
    return ScriptLaunch(server.launcher, server.module, tuple(argv), tuple(lines), env_out, env_lines,
                        server.loc[1], tuple(opaque), unresolved)


_SOURCE_LINE = re.compile(
    r'^\s*(?:source|\.)\s+"?\$\(dirname\s+"?\$(?:0|\{BASH_SOURCE\[0\]\}|BASH_SOURCE)"?\)"?/([\w./-]+)"?')


def sourced_libraries(path: str, text: str) -> list[tuple[str, int]]:
    """Repository paths (and lines) of the libraries a script `source`s relative to its own folder
    (`source "$(dirname "$0")/../../benchmark_lib.sh"`), read statically, never executed."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    out: list[tuple[str, int]] = []
    for number, line in enumerate(text.split("\n"), 1):
        match = _SOURCE_LINE.match(line)
        if match:
            target = posixpath.normpath(posixpath.join(folder, match.group(1)))
            if not target.startswith(".."):
                out.append((target, number))
    return out
