"""Recognising the commands that start a server or a script, by a table handed in (`Commands`).

The reader names no engine and no launcher: the launch layer builds the table
(verifier/launch/commands.py: the engines' server entry points and the wrapper commands with their
option grammar) and hands it in, as `Options.commands` to the worlds evaluator and as
`Reader(commands=...)` to the multi-node trace.

* A *server start* (`match_server`): `python* [interpreter flags] -m <server module> ...`, or a
  server program (`<program> <subcommand> ...`; the subcommand may be optional), directly or behind
  the wrappers whose `server` reading passes over them: `next` (the command follows), a wrapper that
  `assigns` (`NAME=VALUE` words and its `valued` options first) or `scan` (options of unknown arity:
  the command is looked for in the words that follow). Environment assignments the wrappers pass
  (`NAME=VALUE` words, a scanned wrapper's `env_options NAME=VALUE`) belong to the server.
* A *benchmark script start* (`match_child`): `bash [opts] FILE.sh` (or `sh`, or a `.sh` path run
  directly), behind a wrapper with a `child` reading, which says which environment reaches the child
  (`all`, an `export` list option, a `container`'s `env_options`, or `assign` words) and its working
  directory (`workdir_options`); a container whose entrypoint is a shell runs the script after the image.
* `may_launch`: could a part of a script still start a server or run another script (a cheap
  over-approximation that lets the evaluator stop a world early)?
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from verifier.core.processcache import ByText
from verifier.shell.lexer import Word
from verifier.shell.nodes import AndOr, ArithFor, Case, For, FuncDef, Group, If, Pipeline, Simple, While
from verifier.shell.values import Opaque, Val

_PYTHON = re.compile(r"(?:.*/)?python(?:3(?:\.\d+)?)?")
_ENV_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.S)
SHELLS = ("bash", "sh")
_SHELL_HEADS = frozenset({"source", ".", "eval"})  # run shell code of their own
MAX_WRAPPER_WORDS = 64


@dataclass(frozen=True)
class Program:
    """A server started by a program of its own: `NAME SUBCOMMAND ARGS` (`NAME [SUBCOMMAND] ARGS`
    when the subcommand is optional)."""

    engine: str
    module: str  # what the launch records as the server's module
    subcommand: str
    optional: bool = False


@dataclass(frozen=True)
class Wrapper:
    """A command that runs another command given in its arguments (`WRAPPER [OPTIONS] CMD ARGS`):
    its option grammar, and how each reading looks behind it (an empty reading: it does not)."""

    name: str
    # option grammar
    valued: frozenset[str] = frozenset()  # options whose value is the next word
    positionals: int = 0  # words after its options and before the command (a duration, ...)
    assigns: bool = False  # `NAME=VALUE` words before the command set its environment
    env_options: frozenset[str] = frozenset()  # options whose value (`NAME=VALUE`) is environment for the command
    subcommand: str = ""  # the word naming what it does, before its options (`<container tool> run`)
    export_option: str = ""  # `OPT=ALL|NONE|NAME[=VALUE],...`: the environment that reaches the command
    workdir_options: frozenset[str] = frozenset()  # options naming the command's working directory
    entrypoint_option: str = ""  # the option naming the program the image runs first
    # single-node server start (match_server): "next", "scan"; see the module docstring
    server: str = ""
    # could a server still start (may_launch): "walk" (its options and NAME=VALUE words are passed
    # over), "opaque" (options of unknown arity: any other word may be the command)
    launch: str = ""
    in_text: bool = False  # a command assigned as text that names it may start a server
    queries: str = ""  # option letters with which it only reports and runs no command (`command -v`)
    unsets: frozenset[str] = frozenset()  # options naming a variable the command does not get (`-u NAME`)
    clears: frozenset[str] = frozenset()  # options with which the command gets only the wrapper's assignments
    # a benchmark script behind it (match_child): "all" (every exported variable reaches the script),
    # "export" (`export_option` says), "container" (only `env_options` do), "assign" (`NAME=VALUE` words add)
    child: str = ""
    keeps_env: bool = False  # the multi-node trace keeps the environment of a command it heads
    # the multi-node follower (verifier/launch/follow.py): "step" (over its options by the grammar
    # above), "ranks" (runs the command once per rank), "submit" (runs a batch script), "container"
    follow: str = ""

    def queried_by(self, word: str) -> bool:
        """Whether this option makes it report and run no command (`command -v`, `queries`)."""
        return bool(self.queries) and word.startswith("-") and any(c in self.queries for c in word[1:])

    def unset_by(self, word: str) -> tuple[bool, str | None]:
        """Whether this word takes a variable out of the command's environment (`unsets`), and the
        variable when the word names it (`--unset=NAME`; None: the next word does, `-u NAME`)."""
        option, eq, name = word.partition("=")
        if eq and option in self.unsets:
            return True, name
        return word in self.unsets, None


@dataclass(frozen=True, eq=False)
class Commands:
    """What the shell reader recognises (compared and hashed by identity: keep one per table)."""

    modules: Mapping[str, str] = field(default_factory=dict)  # `python3 -m MODULE` -> engine
    programs: Mapping[str, Program] = field(default_factory=dict)  # program name -> server it starts
    wrappers: Mapping[str, Wrapper] = field(default_factory=dict)  # name -> wrapper
    # addresses of code a shell or Python may run from a download (`trusted_download`)
    downloads: frozenset[str] = frozenset()

    @cached_property
    def server_wrappers(self) -> frozenset[str]:
        """Wrappers a single-node server start may stand behind."""
        return frozenset(n for n, w in self.wrappers.items() if w.server)

    @cached_property
    def child_wrappers(self) -> frozenset[str]:
        """Wrappers a benchmark script start may stand behind."""
        return frozenset(n for n, w in self.wrappers.items() if w.child)

    @cached_property
    def subcommands(self) -> frozenset[str]:
        """Words that name what a wrapper does (passed over when looking behind it)."""
        return frozenset(w.subcommand for w in self.wrappers.values() if w.subcommand)

    @cached_property
    def env_heads(self) -> frozenset[str]:
        """Commands whose environment the multi-node trace keeps: server programs and wrappers that may run one."""
        return frozenset(self.programs) | frozenset(n for n, w in self.wrappers.items() if w.keeps_env)

    @cached_property
    def launch_text(self) -> re.Pattern[str]:
        """A command written as text (an assignment) that may start a server or a script."""
        alternatives: list[str] = []
        packages = sorted({module.split(".", 1)[0] for module in self.modules})
        if packages:
            alternatives.append(r"python[\d.]*\s+(?:-\S+\s+)*-m\s+\S*(?:" + "|".join(map(re.escape, packages)) + ")")
        for name, program in self.programs.items():
            alternatives.append(re.escape(name) if program.optional else
                                re.escape(name) + r"\s+" + re.escape(program.subcommand))
        alternatives.extend(re.escape(n) for n, w in self.wrappers.items() if w.in_text)
        alternatives.append("bash")
        return re.compile(r"(?:^|[\s/\"'(])(?:" + "|".join(alternatives) + r")\b|\.sh\b")


@dataclass(frozen=True)
class ServerMatch:
    """Where the server command starts in the words and what it is."""

    start: int  # index of the launcher head (the interpreter or the server program)
    argv_start: int  # index of the first server argument
    engine: str
    module: str
    env: tuple[tuple[str, int], ...]  # (name, index of the word) for wrapper env assignments
    # variables a wrapper takes away before (None: a name only the run knows), and whether it
    # starts the server from an empty environment (`env -u NAME`, `env -i`)
    unset: tuple[str | None, ...] = ()
    cleared: bool = False


def _text(v: Val) -> str | None:
    return v if isinstance(v, str) else None


def _head(words: list[Val], i: int, commands: Commands) -> ServerMatch | None:
    modules = commands.modules
    w = _text(words[i]) if i < len(words) else None
    if w is None:
        # an interpreter found at run time ("$(command -v python3)" -m <module> ...)
        if i + 2 < len(words) and isinstance(words[i], Opaque) and words[i + 1] == "-m" and \
                _text(words[i + 2]) in modules:
            module = str(words[i + 2])
            return ServerMatch(i, i + 3, modules[module], module, ())
        return None
    program = commands.programs.get(w.rsplit("/", 1)[-1])
    if program is not None:
        sub = i + 1 < len(words) and words[i + 1] == program.subcommand
        if sub or program.optional:
            return ServerMatch(i, i + 2 if sub else i + 1, program.engine, program.module, ())
    if _PYTHON.fullmatch(w):
        j = i + 1
        while j < len(words) and isinstance(words[j], str) and str(words[j]).startswith("-") and words[j] != "-m":
            j += 2 if words[j] in ("-X", "-W") else 1
        if j + 1 < len(words) and words[j] == "-m" and _text(words[j + 1]) in modules:
            module = str(words[j + 1])
            return ServerMatch(i, j + 2, modules[module], module, ())
    return None


_PLAIN: ByText[tuple[Commands, str], bool] = ByText("shell.plain-commands", 16384)


def plain_command(head: str, commands: Commands) -> bool:
    """True when a command whose first word is this text is neither a server start
    (`match_server`) nor a script start (`match_child`), whatever its other words: neither looks
    past a first word that is not a server program, an interpreter, a wrapper or a shell script.
    Decided once per word (most commands a script runs are neither)."""
    got = _PLAIN.get((commands, head))
    if got is None:
        base = head.rsplit("/", 1)[-1]
        wrapper = commands.wrappers.get(base)
        got = (commands.programs.get(base) is None and not _PYTHON.fullmatch(head)
               and (wrapper is None or not wrapper.server)
               and base not in commands.child_wrappers and base not in SHELLS and not head.endswith(".sh"))
        _PLAIN.put((commands, head), got)
    return got


def match_server(words: list[Val], commands: Commands) -> ServerMatch | None:
    """The server start in a command's words, or None."""
    env: list[tuple[str, int]] = []
    unset: list[str | None] = []
    cleared = False
    i = 0
    n = len(words)
    while i < n:
        found = _head(words, i, commands)
        if found is not None:
            return ServerMatch(found.start, found.argv_start, found.engine, found.module, tuple(env), tuple(unset),
                               cleared)
        w = _text(words[i])
        wrapper = commands.wrappers.get(w.rsplit("/", 1)[-1]) if w is not None else None
        if wrapper is None or not wrapper.server:
            return None
        i += 1
        if wrapper.assigns:
            while i < n and isinstance(words[i], str):
                t = str(words[i])
                if t in wrapper.clears:
                    env.clear()  # what the wrapper assigned before goes too
                    unset.clear()
                    cleared = True
                taken, name = wrapper.unset_by(t)
                if taken:
                    if name is None:
                        name = _text(words[i + 1]) if i + 1 < n else None
                    unset.append(name)
                    env[:] = [pair for pair in env if pair[0] != name]
                if t in wrapper.valued:
                    i += 2
                elif t.startswith("-"):
                    i += 1
                elif _ENV_ASSIGN.fullmatch(t):
                    env.append((_ENV_ASSIGN.fullmatch(t).group(1), i))  # type: ignore[union-attr]
                    i += 1
                else:
                    break
            continue
        if wrapper.server == "scan":
            # options of unknown arity: scan ahead for the launcher (`OPT NAME=VALUE` is env)
            limit = min(n, i + MAX_WRAPPER_WORDS)
            j = i
            while j < limit:
                if _head(words, j, commands) is not None or (
                        _text(words[j]) in commands.server_wrappers and j > i and not str(words[j - 1]).startswith("-")):
                    break
                t = _text(words[j])
                if t in wrapper.env_options and j + 1 < n and isinstance(words[j + 1], str) and \
                        _ENV_ASSIGN.fullmatch(words[j + 1]):
                    env.append((_ENV_ASSIGN.fullmatch(words[j + 1]).group(1), j + 1))  # type: ignore[union-attr]
                j += 1
            if j >= limit:
                return None
            i = j
    return None


@dataclass(frozen=True)
class ChildMatch:
    """A repository shell script the command runs, and how its environment is passed."""

    script: int  # index of the script path word
    passthrough: bool  # every exported variable reaches the child
    names: tuple[str, ...]  # variables passed by name (a container's `-e NAME`, an export list's NAME)
    sets: tuple[tuple[str, str], ...]  # variables set by the wrapper (NAME=VALUE)
    cwd: str | None


def match_child(words: list[Val], commands: Commands) -> ChildMatch | None:
    """`bash FILE.sh` (possibly wrapped), or None."""
    n = len(words)
    if not n:
        return None
    first = _text(words[0])
    # a word after the first can start the script only behind a wrapper with a child reading
    span = n if first is not None and first.rsplit("/", 1)[-1] in commands.child_wrappers else 1
    for k in range(span):
        w = _text(words[k])
        if w is None:
            continue
        base = w.rsplit("/", 1)[-1]
        target: int | None = None
        if base in SHELLS:
            j = k + 1
            while j < n and isinstance(words[j], str) and str(words[j]).startswith("-"):
                if words[j] in ("-c", "--rcfile", "--init-file"):
                    return None
                j += 1
            if j < n and isinstance(words[j], str) and str(words[j]).endswith(".sh"):
                target = j
        elif k == 0 and w.endswith(".sh"):
            target = 0
        elif k > 0 and w.endswith(".sh") and _shell_entrypoint(words[:k], commands):
            target = k  # a container started with a shell as its entrypoint: IMAGE script.sh
        if target is None:
            continue
        return _child_env(words, k, target, commands)
    return None


@dataclass(frozen=True)
class ShellMatch:
    """A shell the command starts on code `match_child` does not read: its `-c` word (`inline`), its
    standard input (`stdin`: no script operand, `-s`, or `-`), or a script operand that is no `.sh`
    path (`file`). `child.script` is the index of the code or file word (-1 for `stdin`); the rest of
    `child` says which environment reaches the shell, as for a script start."""

    child: ChildMatch
    source: str  # inline | stdin | file
    rest: int  # the first word after the code or file: `bash -c CODE NAME ARGS` has its $0 here, the others $1


def match_shell(words: list[Val], commands: Commands) -> ShellMatch | None:
    """`bash -c CODE`, `bash` reading its standard input or `bash FILE` (possibly wrapped), or None.

    Only a shell where the command itself starts, or where a child wrapper's options end
    (`_after_wrapper`): `command -v bash` names a shell and starts none."""
    n = len(words)
    k = _command_start(words, commands)
    if k is None:
        return None
    shell = _text(words[k]) if k < n else None
    if shell is None or shell.rsplit("/", 1)[-1] not in SHELLS:
        return None
    j = k + 1
    inline = from_stdin = False
    while j < n:
        t = _text(words[j])
        if t is None or t in ("-", "--") or not t.startswith(("-", "+")):
            break
        if t in ("--version", "--help"):
            return None  # `bash --version`: it prints and runs nothing
        if t in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            j += 2  # an option taking the next word
            continue
        if not t.startswith("--"):
            inline = inline or "c" in t[1:]
            from_stdin = from_stdin or "s" in t[1:]
        j += 1
    if j < n and _text(words[j]) in ("-", "--"):
        from_stdin = from_stdin or _text(words[j]) == "-"
        j += 1
    if inline:
        return ShellMatch(_child_env(words, k, j, commands), "inline", j + 1) if j < n else None
    if from_stdin or j >= n:
        return ShellMatch(_child_env(words, k, -1, commands), "stdin", j)
    return ShellMatch(_child_env(words, k, j, commands), "file", j + 1)


_DOWNLOADERS = frozenset({"curl", "wget"})


def trusted_download(words: Sequence[str], commands: Commands) -> bool:
    """Whether a command piped into a shell or into Python downloads one of the trusted programs
    (`Commands.downloads`, policy `launcher.trusted-downloads`): `curl` or `wget` with options only
    (none taking a value) and the program's address, written out. What such a shell runs prepares
    the run and starts nothing the launch reads; any other download it runs is unread code."""
    if not words or words[0].rsplit("/", 1)[-1] not in _DOWNLOADERS:
        return False
    operands = [w for w in words[1:] if not w.startswith("-")]
    options_ok = all(w.startswith("-") and "=" not in w and w not in _VALUED_DOWNLOAD for w in words[1:]
                     if w not in operands)
    return options_ok and len(operands) == 1 and operands[0] in commands.downloads


# download options whose value is the next word: with one, the operand is not the address
_VALUED_DOWNLOAD = frozenset({"-o", "--output", "-H", "--header", "-d", "--data", "-x", "--proxy", "-u", "--user",
                              "-e", "--referer", "-A", "--user-agent", "-b", "--cookie", "-T", "--upload-file",
                              "--url", "-K", "--config"})


@dataclass(frozen=True)
class PythonCode:
    """Where a Python interpreter the command starts reads its program: its standard input (`-`, or
    no script operand) or a script operand (`file`, at word `index`)."""

    source: str  # stdin | file
    index: int  # the script word (-1 for stdin)


_PYTHON_VALUED = frozenset({"-W", "-X", "--check-hash-based-pycs"})


def match_python_code(words: list[Val], commands: Commands) -> PythonCode | None:
    """`python3 -`, `python3` with no script, or `python3 FILE` (possibly wrapped), or None: `-c`
    text and `-m` modules are read elsewhere (verifier.shell.pysnippet, `match_server`)."""
    n = len(words)
    k = _command_start(words, commands)
    head = _text(words[k]) if k is not None and k < n else None
    if k is None or head is None or not _PYTHON.fullmatch(head):
        return None
    j = k + 1
    while j < n:
        t = _text(words[j])
        if t is None or t == "-" or not t.startswith("-"):
            break
        if t == "--":
            j += 1
            break
        if t in ("--version", "--help", "-V", "-VV", "-h"):
            return None  # `python3 --version`: it prints and runs nothing
        if not t.startswith("--") and ("c" in t[1:] or "m" in t[1:]):
            return None
        j += 2 if t in _PYTHON_VALUED else 1
    if j >= n or _text(words[j]) == "-":
        return PythonCode("stdin", -1)
    return PythonCode("file", j)


def program_code(words: list[Val], commands: Commands) -> tuple[str, int] | None:
    """Where a shell or Python interpreter the command starts reads its program (`match_shell`,
    `match_python_code`): `inline`, `stdin` or `file`, with the index of the code or file word (-1
    for standard input); None for any other command."""
    shell = match_shell(words, commands)
    if shell is not None:
        return shell.source, shell.child.script
    code = match_python_code(words, commands)
    return None if code is None else (code.source, code.index)


def _command_start(words: list[Val], commands: Commands) -> int | None:
    """The word where the command behind the command's child wrappers starts (wrappers stack, one
    running the next); None when a wrapper runs no command (`_after_wrapper`)."""
    n = len(words)
    if not n or _text(words[0]) is None:
        return None
    k = 0
    while k < n and (_text(words[k]) or "").rsplit("/", 1)[-1] in commands.child_wrappers:
        after = _after_wrapper(words, k, commands)
        if after is None:
            return None
        k = after
    return k


def _after_wrapper(words: list[Val], k: int, commands: Commands) -> int | None:
    """Where the command the child wrapper at word k runs starts, by its option grammar (None: the
    wrapper runs none, as `command -v NAME`, or a word only the run knows stands among its options)."""
    wrapper = commands.wrappers[(_text(words[k]) or "").rsplit("/", 1)[-1]]
    i = k + 1
    if wrapper.subcommand:
        if i >= len(words) or _text(words[i]) != wrapper.subcommand:
            return None
        i += 1
    while i < len(words):
        t = _text(words[i])
        if t is None:
            return None
        if wrapper.queried_by(t):
            return None  # `command -v NAME`: a query, nothing runs
        if t in wrapper.valued:
            i += 2
        elif t.startswith("-") or wrapper.assigns and _ENV_ASSIGN.fullmatch(t):
            i += 1
        else:
            break
    return i + wrapper.positionals


def _shell_entrypoint(prefix: list[Val], commands: Commands) -> bool:
    """A container started with a shell as its entrypoint: the first argument after the image is the script."""
    wrapper = commands.wrappers.get((_text(prefix[0]) or "").rsplit("/", 1)[-1])
    if wrapper is None or not wrapper.entrypoint_option:
        return False
    option = wrapper.entrypoint_option
    for i, w in enumerate(prefix):
        t = _text(w) or ""
        value = t.split("=", 1)[1] if t.startswith(option + "=") else (
            _text(prefix[i + 1]) if t == option and i + 1 < len(prefix) else None)
        if value is not None and (value or "").rsplit("/", 1)[-1] in SHELLS:
            return True
    return False


def _option_value(t: str, options: frozenset[str], prefix: list[Val], i: int, k: int,
                  attached: bool = False) -> tuple[str | None, int] | None:
    """The value of one of `options` written at word i (`OPT VALUE`, `--OPT=VALUE`, with `attached`
    also `-OVALUE`) and the index of its last word; None when word i is none of them."""
    if t in options and i + 1 < k:
        return _text(prefix[i + 1]), i + 1
    for option in options:
        if option.startswith("--") and t.startswith(option + "="):
            return t.split("=", 1)[1], i
    if attached:
        for option in options:
            if not option.startswith("--") and t.startswith(option) and len(t) > len(option):
                return t[len(option):], i
    return None


def _child_env(words: list[Val], k: int, target: int, commands: Commands) -> ChildMatch:
    wrapper = commands.wrappers.get(_text(words[0]) or "")
    kind = wrapper.child if wrapper is not None else ""
    names: list[str] = []
    sets: list[tuple[str, str]] = []
    passthrough = True
    cwd: str | None = None
    prefix = list(words[:k])
    if wrapper is not None and kind == "export":
        for w in prefix:
            t = _text(w) or ""
            if wrapper.export_option and t.startswith(wrapper.export_option + "="):
                passthrough = False
                for item in t[len(wrapper.export_option) + 1:].split(","):
                    if item == "ALL":
                        passthrough = True
                    elif item == "NONE":
                        passthrough = False
                    elif "=" in item:
                        name, _, value = item.partition("=")
                        sets.append((name, value))
                    elif item:
                        names.append(item)
            elif any(t.startswith(o + "=") for o in wrapper.workdir_options):
                cwd = t.split("=", 1)[1]
    elif wrapper is not None and kind == "container":
        passthrough = False
        i = 1
        while i < k:
            t = _text(prefix[i]) or ""
            passed: str | None = None
            env_option = _option_value(t, wrapper.env_options, prefix, i, k, attached=True)
            workdir_option = None if env_option is not None else _option_value(t, wrapper.workdir_options, prefix, i, k)
            if env_option is not None:
                passed, i = env_option
            elif workdir_option is not None:
                cwd, i = workdir_option
            elif t in wrapper.valued and i + 1 < k:
                i += 1
            if passed is not None:
                if "=" in passed:
                    name, _, v = passed.partition("=")
                    sets.append((name, v))
                else:
                    names.append(passed)
            i += 1
    elif kind == "assign":
        for w in prefix[1:]:
            t = _text(w) or ""
            m = _ENV_ASSIGN.fullmatch(t)
            if m:
                sets.append((m.group(1), m.group(2)))
    return ChildMatch(target, passthrough, tuple(names), tuple(sets), cwd)


# ------------------------------------------------------------------------------- may it launch?

_HEAD_PARAM = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*0]\])?\}?")
# blanks before and after the `(` matched possessively: a text of blanks was tried again from each
# blank (the square of its length)
_MODULE_TEXT = re.compile(r"""^\s*+\(?\s*+(?:"[^"]*"|'[^']*'|\S+)\s+(?:-\S+\s+)*-m\s+["']?([\w.]+)""")
_COMMAND_V = re.compile(r"""^\s*+\(?\s*+"?\$\(\s*(?:command\s+-v|which)\s+([\w.+-]+)\s*\)"?\s*$""")
_TOOL_PATH = re.compile(r"""^\s*+\(?\s*+"?[^\s"']*/(uv|pip3?|hf|huggingface-cli|curl|git|jq|aiperf)"?\s*$""")
_FIRST_PARAM = re.compile(r"""^\s*+\(?\s*+"?\$\{?([A-Za-z_][A-Za-z0-9_]*)(?:\[[@*0]\])?\}?"?(?=\s|$|")""")


def _text_may_launch(text: str, commands: Commands, assigned: Mapping[str, list[str]] | None = None,
                     depth: int = 0) -> bool:
    """Might a command assigned as text (`CMD=(python3 -m x ...)`) be a server start?"""
    m = _MODULE_TEXT.match(text)
    if m:
        return m.group(1) in commands.modules
    m = _COMMAND_V.match(text)
    if m:  # "$(command -v uv)": the tool found on PATH
        name = m.group(1)
        return bool(_PYTHON.fullmatch(name)) or name in commands.programs or name in SHELLS
    if _TOOL_PATH.match(text):
        return False
    m = _FIRST_PARAM.match(text)
    if m and assigned is not None and depth < 6 and m.group(1) in assigned:  # "$AIPERF_CLI profile ..."
        rest = text[m.end():].lstrip('" ')
        if rest.startswith("-m "):
            return rest[3:].split()[0].strip("\"'") in commands.modules if rest[3:].split() else True
        if rest.split()[:1] and rest.split()[0].strip("\"'").endswith(".py"):
            return False
        return any(_text_may_launch(t, commands, assigned, depth + 1) for t in assigned[m.group(1)])
    first = text.lstrip("( \n\t\"'")
    return first.startswith("$") or bool(commands.launch_text.search(text))


def _computed_head_may_launch(word: Word, commands: Commands, assigned: Mapping[str, list[str]] | None) -> bool:
    """A command whose head is `"${CMD[@]}"` / `$CMD`: may it be a launcher? Only if something
    assigned to CMD anywhere looks like one (or is itself computed)."""
    if assigned is None:
        return True
    m = _HEAD_PARAM.fullmatch(word.raw.strip('"'))
    if not m:
        return True
    texts = assigned.get(m.group(1))
    if texts is None:
        return True  # set by the environment
    return any(_text_may_launch(text, commands, assigned) for text in texts)


def _words_may_launch(words: tuple[Word, ...], commands: Commands, funcs: Mapping[str, bool] | None,
                      assigned: Mapping[str, list[str]] | None, depth: int = 0) -> bool:
    if not words or depth > 8:
        return bool(words)
    lits = [w.literal() for w in words]
    lit = lits[0]
    if lit is None:
        if len(words) > 2 and lits[1] == "-m" and lits[2] is not None:  # "$PYTHON" -m module
            return lits[2] in commands.modules
        if len(words) > 1 and words[1].raw.strip("\"'").endswith(".py"):  # "$PYTHON" script.py
            return False
        return _computed_head_may_launch(words[0], commands, assigned)
    base = lit.rsplit("/", 1)[-1]
    if funcs is not None and lit in funcs:
        return funcs[lit]
    if base in SHELLS:  # a script, -c text, or code on its standard input (read or refused: `match_shell`)
        return True
    program = commands.programs.get(base)
    if base in _SHELL_HEADS or base.endswith(".sh") or (program is not None and program.optional):
        return True
    wrapper = commands.wrappers.get(base)
    if wrapper is not None and wrapper.launch:
        skip = wrapper.positionals
        for k in range(1, len(words)):
            t = lits[k]
            if skip and (t is None or not t.startswith("-")):
                skip -= 1
                continue
            if t is None:
                return _words_may_launch(words[k:], commands, funcs, assigned, depth + 1)
            if t.startswith("-") or "=" in t or t.replace(".", "").isdigit() or t in commands.subcommands:
                continue
            if wrapper.launch == "opaque":
                return True  # options of unknown arity: stay conservative
            return _words_may_launch(words[k:], commands, funcs, assigned, depth + 1)
        return False
    if program is not None:
        return len(words) > 1 and lits[1] in (None, program.subcommand)
    if _PYTHON.fullmatch(base):
        if "-m" in lits:
            k = lits.index("-m")
            module = lits[k + 1] if k + 1 < len(lits) else None
            return module is None or module in commands.modules
        return False
    return False


def may_launch(node: Any, commands: Commands, funcs: Mapping[str, bool] | None = None,
               assigned: Mapping[str, list[str]] | None = None) -> bool:
    """Could this node start a server or run another script? (A cheap over-approximation: any
    command with a computed head, a server program or module, a wrapper, `bash`/`source`/`eval`,
    or a call of a function `funcs` marks True.)"""
    if isinstance(node, Simple):
        return _words_may_launch(node.words, commands, funcs, assigned)
    if isinstance(node, (tuple, list)):
        return any(may_launch(n, commands, funcs, assigned) for n in node)
    if isinstance(node, AndOr):
        return any(may_launch(p, commands, funcs, assigned) for p in node.parts)
    if isinstance(node, Pipeline):
        return any(may_launch(c, commands, funcs, assigned) for c in node.cmds)
    if isinstance(node, If):
        return any(may_launch(c, commands, funcs, assigned) or may_launch(b, commands, funcs, assigned)
                   for c, b in node.clauses) or \
            (node.orelse is not None and may_launch(node.orelse, commands, funcs, assigned))
    if isinstance(node, While):
        return may_launch(node.cond, commands, funcs, assigned) or may_launch(node.body, commands, funcs, assigned)
    if isinstance(node, (For, ArithFor)):
        return may_launch(node.body, commands, funcs, assigned)
    if isinstance(node, Case):
        return any(may_launch(a.body, commands, funcs, assigned) for a in node.arms)
    if isinstance(node, Group):
        return may_launch(node.body, commands, funcs, assigned)
    return False


def launching_functions(funcs: Mapping[str, FuncDef], commands: Commands,
                        assigned: Mapping[str, list[str]] | None) -> dict[str, bool]:
    """name -> may this function (through the functions it calls) start a server?"""
    flags = dict.fromkeys(funcs, False)
    changed = True
    while changed:
        changed = False
        for name, func in funcs.items():
            if not flags[name] and may_launch(func.body, commands, flags, assigned):
                flags[name] = True
                changed = True
    return flags
