"""Shell options and builtins that change what later commands do in ways neither walker models.

`set -k` makes every later `NAME=value` word an environment assignment, `shopt -s lastpipe` runs
the last command of a pipeline in the shell itself, `shopt -s expand_aliases` lets an `alias`
rewrite later command lines, `hash -p FILE python3` makes `python3` run FILE, and a `trap` on DEBUG,
RETURN or ERR runs its action between later commands (any action: a function defined before the
trap fires runs in place of whatever command the action names, `:` and `echo` included). A walker
that read on past one of these would judge a command line the run never starts. Both walkers (the single-node evaluator,
verifier.shell.builtins, and the multi-node reader, verifier.shell.trace) ask `unmodelled` with
the known text of a builtin's arguments; the evaluator then stops with a `ShellLimit` naming the
line, the reader marks the construct (`Reader.unmodelled`), and a launch that needs the script
fails closed.

Allowlists: an option is read past only when it is listed as changing nothing the walkers model
(`SHOPT_INERT`, `SET_INERT`); an argument only the run knows is unmodelled too. Two deliberate
exceptions, each for what the walkers already do: `set -a` (allexport; the walkers export only what
`export` and `declare -x` name, and benchmarks/multi_node/amd_utils/env.sh uses it around the
`source` of a file the run writes) and the actions of EXIT and signal traps (they run once the
script ends or is stopped, after every command the walkers record).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifier.shell.utilities import Declaration

# `shopt` options whose setting changes nothing the walkers read: globbing the walkers leave to the
# run (a field that may make a pathname pattern is a run-time value), and interactive conveniences
SHOPT_INERT = frozenset({
    "nullglob", "failglob", "globstar", "dotglob", "nocaseglob", "globasciiranges", "checkwinsize", "histappend",
    "histreedit", "histverify", "cmdhist", "lithist", "promptvars", "progcomp", "progcomp_alias", "hostcomplete",
    "huponexit", "checkjobs", "checkhash", "interactive_comments", "execfail", "gnu_errfmt", "mailwarn",
    "no_empty_cmd_completion", "complete_fullquote", "direxpand", "dirspell", "cdspell", "force_fignore",
    "login_shell", "restricted_shell", "sourcepath",
})

# `set` options, by letter and by `-o` name, whose setting changes nothing the walkers read: failure
# handling and tracing, job control, history. `a` (allexport) is the documented exception above.
SET_INERT = frozenset({
    "e", "errexit", "u", "nounset", "x", "xtrace", "v", "verbose", "pipefail", "f", "noglob", "h", "hashall",
    "H", "histexpand", "m", "monitor", "b", "notify", "E", "errtrace", "T", "functrace", "P", "physical",
    "history", "ignoreeof", "emacs", "vi", "interactive-comments", "nolog", "i", "a", "allexport",
})
# options on by default: setting one again changes nothing (turning it off does)
_SET_DEFAULT_ON = frozenset({"B", "braceexpand"})

# the builtins `unmodelled` judges (a walker asks it for these alone)
OPTION_BUILTINS = frozenset({"set", "shopt", "trap", "hash", "enable"})

# the pseudo-signals whose trap runs between the commands of the script (before each one, after
# each function or sourced file returns, after each failing one)
TRAPS_BETWEEN_COMMANDS = frozenset({"DEBUG", "RETURN", "ERR", "SIGDEBUG", "SIGRETURN", "SIGERR"})


def unmodelled(name: str, args: Sequence[str | None]) -> str | None:
    """Why the builtin `name` with these arguments (None: an argument only the run knows) leaves the
    walkers unable to read on, in words naming the construct; None when they can."""
    if name == "set":
        return _set(args)
    if name == "shopt":
        return _shopt(args)
    if name == "trap":
        return _trap(args)
    if name == "hash" and any(a is None or (a.startswith("-") and "p" in a) for a in args):
        return "`hash -p` makes a command name run a file the reader does not follow"
    if name == "enable" and any(a is None or (a.startswith("-") and any(c in a for c in "nfd")) for a in args):
        return "`enable -n`/`-f`/`-d` changes which builtins the shell runs"
    return None


def _set(args: Sequence[str | None]) -> str | None:
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return "`set` with an option known only at run time"
        if arg in ("-", "--", "+") or not arg.startswith(("-", "+")):
            return None  # the positional parameters follow
        on = arg[0] == "-"
        for letter in arg[1:]:
            if letter == "o":  # `-o NAME` (also inside a cluster: `set -euo pipefail`) takes the next word
                i += 1
                if i >= len(args):
                    return None  # `set -o`: a listing
                option = args[i]
                if option is None:
                    return "`set -o` of an option known only at run time"
            else:
                option = letter
            why = _set_option(option, on)
            if why is not None:
                return why
        i += 1
    return None


def _set_option(option: str, on: bool) -> str | None:
    if option in SET_INERT or (on and option in _SET_DEFAULT_ON):
        return None
    flag = f"-o {option}" if len(option) > 1 else option
    return f"`set {'-' if on else '+'}{flag}` changes how bash reads later commands in a way the reader does not model"


def _shopt(args: Sequence[str | None]) -> str | None:
    flags = "".join(a[1:] for a in args if a is not None and a.startswith("-"))
    names = [a for a in args if a is None or not a.startswith("-")]
    if "s" not in flags and "u" not in flags:
        return None  # a listing or a query: nothing changes
    for option in names:
        if option is None:
            return "`shopt` of an option known only at run time"
        if "o" in flags:
            why = _set_option(option, "s" in flags)
            if why is not None:
                return why
        elif option not in SHOPT_INERT:
            return f"`shopt -{'s' if 's' in flags else 'u'} {option}` changes how bash reads later commands in a way " \
                   "the reader does not model"
    return None


def _trap(args: Sequence[str | None]) -> str | None:
    words = list(args)
    while words and words[0] is not None and words[0].startswith("-") and words[0] not in ("-", "--"):
        if any(c in words[0][1:] for c in "lp"):
            return None  # `trap -l`, `trap -p`: listings
        words = words[1:]
    if words and words[0] == "--":
        words = words[1:]
    if len(words) < 2:
        return None  # `trap SIGNAL`: its handler is reset
    action, signals = words[0], words[1:]
    if action in ("", "-"):
        return None  # ignored, or reset
    if any(s is None for s in signals):
        return "`trap` on a condition known only at run time"
    between = [s for s in signals if s is not None and s.upper() in TRAPS_BETWEEN_COMMANDS]
    if not between:
        return None  # EXIT and signals: after every command the walkers record (module docstring)
    if action is None:
        return f"`trap` of an action known only at run time on {between[0]}"
    # no action is safe to read past: whatever command it names, a function of that name defined
    # before the trap fires (even `:` or `echo`) runs instead
    return f"`trap` runs `{action[:80]}` on {between[0]}, between later commands, which the reader does not model"


def unmodelled_declaration(asked: Declaration, assigns: Sequence[str] = ()) -> str | None:
    """Why a declaration leaves the walkers unable to read on: `export -f NAME` (`declare -fx`) hands
    the function to every script this one starts, which the walkers read without it; `declare +i`
    (any `+` option but `+x`, which unexports) takes away an attribute they keep; `readonly NAME`
    (`declare -r`) makes every later assignment to NAME fail and keep the value, which the walkers
    would take (no serving script of InferenceX history declares one). `assigns`: the names the
    declaration's own assignment words set (`readonly X=1`, parsed as assignments)."""
    names = [n for _, n in asked.names] + [o.name for o in asked.assigned] + list(assigns)
    if not names:
        return None  # a listing
    name = names[0]
    unexport = asked.unexport or (asked.command == "export" and "n" in asked.flags)  # `export -fn`
    if "f" in asked.flags and (asked.command == "export" or "x" in asked.flags) and not unexport:
        return f"`{asked.command} -{asked.flags}` exports the function `{name}` to the scripts this one starts, " \
               "which the reader does not model"
    if set(asked.removed) - {"x"}:
        return f"`{asked.command} +{asked.removed}` takes an attribute away from `{name}`, which the reader does " \
               "not model"
    if asked.command == "readonly" or "r" in asked.flags:
        return f"`{asked.command}{' -' + asked.flags if asked.flags else ''}` makes `{name}` read-only: a later " \
               "assignment fails and keeps its value, which the reader does not model"
    return None


def startup_file(value: str | None) -> str | None:
    """Why a script bash starts with `BASH_ENV` in its environment (its text; None: only the run
    knows it) cannot be read statically: bash sources that file before the script's first line."""
    if value == "":
        return None
    shown = "a value known only at run time" if value is None else value[:120]
    return f"BASH_ENV ({shown}) names a file bash sources before the script, which is not read statically"


def shadowed_declaration(name: str) -> str:
    """Why a script function named like a declaration builtin (`export() { ...; }`) cannot be read
    statically where it is called: the parser read that command's `NAME=value` words as the
    declaration's assignments, not as the function's arguments."""
    return f"a function named `{name}` runs in place of the builtin, with arguments the reader read as assignments"


def unread_code(program: str, source: str, shown: str) -> str:
    """Why a shell or Python interpreter the script starts runs code that is not read statically:
    its `-c` code (`inline`), its script operand (`file`) or its standard input (`stdin`) is known
    only at run time: output piped from another command (a download), a file the run makes, a word
    it computes."""
    what = {"inline": f"the code of `{program} -c`", "file": f"the script `{program}` runs",
            "stdin": f"the code `{program}` reads from its standard input"}[source]
    held = f" ({shown[:120]})" if shown else ""
    return f"{what} is known only at run time{held}, so what it starts is not read statically"


def fetched_code(program: str, path: str, where: str) -> str:
    """Why a script or program file a command runs is not read: the script fetches it at run time
    (`where`: the fetching command's file and line), so the repository's copy, if any, is not what runs."""
    return f"`{program}` runs {path[:200]}, which the script fetches at run time ({where}), so what it starts " \
           "is not read statically"


def unread_script(path: str, in_repo: bool) -> str:
    """Why a script the script starts cannot be followed: it is not a file of the repository (a
    file the run downloads or writes, or one of the image), or the repository does not hold it."""
    where = "which is not in the tree" if in_repo else "which is not a file of the repository"
    return f"runs {path[:200]}, {where}, so what it starts is not read statically"


def unknown_unset(program: str) -> str:
    """Why a server's environment is not known: a wrapper before it (`env -u "$NAME"`) takes out a
    variable only the run names."""
    return f"`{program}` takes a variable only the run names out of the environment of the command it starts"
