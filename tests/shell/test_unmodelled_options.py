"""Shell options, traps and builtins that change later commands in ways neither walker models fail
closed, naming the line and the construct (verifier.shell.unmodelled); the ones real scripts use
that change nothing the walkers read leave the reading as it was. Both walkers: the single-node
evaluator stops (`ShellLimit`, or `ShellSyntaxError` for what the parser refuses) and the multi-node
reader reports a problem "cannot be read statically" and taints every later command.

Each case is what bash does differently from a reader that skipped the line: the server would start
with `--evil`, with other flags, or with another program."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.shell.helpers import argv, run, servers
from verifier.shell import ShellLimit, ShellSyntaxError
from verifier.shell.text import plain
from verifier.shell.trace import Reader
from verifier.shell.values import shown

SERVE = 'vllm serve "$MODEL" $EXTRA\n'

# name -> (lines before the server start, the line that fails closed, words its message names)
UNMODELLED = {
    "aliases expanded": ("shopt -s expand_aliases\nalias vllm='vllm --evil'\n", 1, "expand_aliases"),
    "last pipeline command in the shell": ("shopt -s lastpipe\necho --evil | read EXTRA\n", 1, "lastpipe"),
    "case-blind matching": ('shopt -s nocasematch\n[[ $MODEL == ORG/MODEL ]] && EXTRA=--evil\n', 1, "nocasematch"),
    "extended globs": ("shopt -s extglob\nEXTRA=${MODEL//+(o)/--evil}\n", 1, "extglob"),
    "keyword assignments": ("set -k\n", 1, "set -k"),
    "posix mode": ("set -o posix\n", 1, "posix"),
    "no brace expansion": ("set +B\n", 1, "set +B"),
    "an option only the run knows": ('shopt -s "$(cat /etc/opts)"\n', 1, "run time"),
    "trap before every command": ("trap 'EXTRA=--evil' DEBUG\n", 1, "DEBUG"),
    "trap calling a function on return": ("f() { EXTRA=--evil; }\ntrap f RETURN\n", 2, "RETURN"),
    "trap starting a script on failure": ("trap 'bash /workspace/x.sh' ERR\n", 1, "ERR"),
    # `:` changes nothing, until a function named `:` is defined: the trap then runs it before each command
    "an inert-looking trap": ("trap : DEBUG\n:() { EXTRA=--evil; }\n", 1, "DEBUG"),
    "a cleanup on return": ("cid=abc\ntrap \"docker rm -f '$cid' >/dev/null 2>&1 || true\" RETURN\n", 2, "RETURN"),
    "a command name hashed to a file": ("hash -p /workspace/evil vllm\n", 1, "hash -p"),
    "a builtin disabled": ("enable -n echo\n", 1, "enable"),
    "an exported function": ('vllm() { command vllm "$@" --evil; }\nexport -f vllm\n', 2, "export -f"),
    "select": ("select EXTRA in --a --b; do break; done\n", 1, "select"),
    "an extended glob in [[ ]]": ("if [[ $MODEL == +(org)/model ]]; then EXTRA=--evil; fi\n", 1, "extended glob"),
    "a read-only variable": ("readonly EXTRA=--evil\nEXTRA=\n", 1, "read-only"),
    "a function named like a declaration builtin": ("export() { EXTRA=--evil; }\nexport Y=1\n", 2, "function named"),
    "an attribute taken away": ("declare -i N\ndeclare +i N\nN=1+1\nEXTRA=--tp=$N\n", 2, "+i"),
}


@pytest.mark.parametrize("name", sorted(UNMODELLED))
def test_the_evaluator_stops_at_the_line(name: str) -> None:
    lines, line, named = UNMODELLED[name]
    with pytest.raises((ShellLimit, ShellSyntaxError)) as info:
        run(lines + SERVE)
    where = info.value.loc[1] if isinstance(info.value, ShellLimit) and info.value.loc else \
        getattr(info.value, "line", None)
    assert where == line, (where, info.value)
    assert named in str(getattr(info.value, "message", info.value)), info.value


@pytest.mark.parametrize("name", sorted(UNMODELLED))
def test_the_multi_node_reader_taints_what_follows(name: str) -> None:
    lines, line, named = UNMODELLED[name]
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model", "EXTRA": ""})
    assert any(ln == line and named in m and "cannot be read statically" in m for _, ln, m in result.problems), \
        result.problems
    # what the parser refuses is not read at all; anything else taints the server start after it
    for event in result.events:
        if plain(event.argv[0]) == "vllm":
            assert event.taint is not None and event.taint[1] == line


# the cases bash itself shows to matter here: the server line prints other words than it does with the
# unmodelled line left out (a reader that read past the line judged the words printed without it)
SHOWN_BY_BASH = ["aliases expanded", "last pipeline command in the shell", "case-blind matching", "extended globs",
                 "trap before every command", "an inert-looking trap", "select", "an extended glob in [[ ]]",
                 "a read-only variable", "a function named like a declaration builtin",
                 "an attribute taken away"]
BASH = shutil.which("bash")


def _bash_prints(script: str) -> str:
    """What bash prints for the server line after these lines: `vllm` is a function printing the
    words it is started with, one a line; nothing is read from standard input."""
    assert BASH is not None
    stub = 'vllm() { printf "%s\\n" "$@"; }\n'
    return subprocess.run([BASH, "-c", stub + script + SERVE], env={"MODEL": "org/model", "PATH": os.defpath},
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30, check=False).stdout


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("name", SHOWN_BY_BASH)
def test_bash_starts_another_command_than_a_reader_that_read_past_the_line(name: str) -> None:
    lines, line, _named = UNMODELLED[name]
    without = "".join(text + "\n" for number, text in enumerate(lines.splitlines(), 1) if number != line)
    assert _bash_prints(lines) != _bash_prints(without)


# what real scripts run that changes nothing the walkers read (the runners' `shopt -s nullglob`,
# cleanup traps at exit)
READ_PAST = {
    "a cleanup at exit": "cleanup() { EXTRA=--never-seen; }\ntrap cleanup EXIT INT TERM\n",
    "a trap reset": "trap - DEBUG RETURN\n",
    "a trap listing": "trap -p\n",
    "null globs": "shopt -s nullglob\nshopt -u nullglob\n",
    "a query": "shopt -q extglob\n",
    "strict mode": "set -euo pipefail\nset +e\nset -x -o errexit\n",
    "exports around a source": "set -a\nset +a\n",
    "a function export undone": "export -fn f\n",
    "positional parameters": "set -- a b\n",
    "an empty BASH_ENV": "BASH_ENV=\n",
}


@pytest.mark.parametrize("name", sorted(READ_PAST))
def test_what_changes_nothing_the_walkers_read_is_read_past(name: str) -> None:
    lines = READ_PAST[name]
    assert argv(run(lines + SERVE)) == ["org/model"]
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model", "EXTRA": ""})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert server.taint is None and not result.problems, result.problems


def test_a_script_started_with_bash_env_is_not_read() -> None:
    with pytest.raises(ShellLimit, match="BASH_ENV") as info:
        run(SERVE, {"BASH_ENV": "/workspace/startup.sh"})
    assert info.value.loc is not None
    result = Reader().run("x.sh", SERVE, {"MODEL": "org/model", "BASH_ENV": "/workspace/startup.sh"})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert server.taint is not None and "BASH_ENV" in server.taint[2]


def test_a_function_runs_in_place_of_the_command_it_shadows() -> None:
    """bash runs a script's function `vllm` for `vllm serve ...`: the evaluator no longer reports the
    command as written; what the function starts is judged instead (here a server with `--evil`)."""
    ev = run('vllm() { command vllm "$@" --evil; }\n' + SERVE)
    assert all("--evil" in [shown(v) for v in s.argv] for s in servers(ev))
    ev = run('vllm() { echo "no server"; }\n' + SERVE)
    assert not servers(ev)


def test_let_of_a_value_only_the_run_knows_leaves_its_names_unknown() -> None:
    """`let X=Y*2` unquoted is a word bash may expand as a pathname pattern: what it assigns is the
    run's, not the value before it."""
    ev = run("EXTRA=--x\nlet EXTRA=EXTRA*2\n" + SERVE)
    [start] = servers(ev)
    assert "--x" not in [shown(v) for v in start.argv]
    assert any("let" in shown(v) for v in start.argv), [shown(v) for v in start.argv]


def test_local_outside_a_function_assigns_nothing() -> None:
    """bash refuses `local` outside a function ("can only be used in a function"): the variable keeps
    what it held, in both walkers as in bash."""
    lines = "EXTRA=--kept\nlocal EXTRA=--evil\n"
    assert argv(run(lines + SERVE)) == ["org/model", "--kept"]
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model"})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert [plain(a) for a in server.argv[2:]] == ["org/model", "--kept"]
    assert argv(run("f() { local EXTRA=--inside; }\nEXTRA=--kept\nf\n" + SERVE)) == ["org/model", "--kept"]
    if BASH is not None:
        assert _bash_prints(lines).split() == ["serve", "org/model", "--kept"]


def test_declare_plus_x_unexports_in_both_walkers() -> None:
    """`declare +x NAME` takes the export away: the server's environment no longer holds it, as in bash."""
    lines = "export SGLANG_X=1\ndeclare +x SGLANG_X\n"
    [start] = servers(run(lines + SERVE))
    assert "SGLANG_X" not in {name for name, _value, _loc in start.env}
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model"})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert "SGLANG_X" not in server.env


@pytest.mark.parametrize("builtin", ["cd /tmp", "echo hi", "read Y <<< z", "printf -v Y x"])
def test_a_function_runs_in_place_of_the_builtin_of_its_name_in_both_walkers(builtin: str) -> None:
    """bash runs a script's function before a builtin of the same name: `cd() { EXTRA=--evil; }`
    then `cd /tmp` sets EXTRA."""
    name = builtin.split()[0]
    lines = f"{name}() {{ EXTRA=--evil; }}\n{builtin}\n"
    assert argv(run(lines + SERVE)) == ["org/model", "--evil"]
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model", "EXTRA": ""})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert [plain(a) for a in server.argv[2:]] == ["org/model", "--evil"]


# what bash prints for the server line after each, which both walkers now give too (the multi-node
# reader took `--` for printf's format, and kept calling a function after `unset -f`)
AGREEING = {
    "printf after --": ("EXTRA=$(printf -- '--%s ' a b)\n", ["--a", "--b"]),
    "printf -v after --": ("printf -v EXTRA -- '--%s' x\n", ["--x"]),
    "a function unset": ("f() { EXTRA=--evil; }\nunset -f f\nf 2>/dev/null\n", []),
}


@pytest.mark.parametrize("name", sorted(AGREEING))
def test_both_walkers_agree_with_bash(name: str) -> None:
    lines, expected = AGREEING[name]
    assert argv(run(lines + SERVE)) == ["org/model", *expected]
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model", "EXTRA": ""})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert [plain(a) for a in server.argv[2:]] == ["org/model", *expected]
    if BASH is not None:
        assert _bash_prints(lines).split() == ["serve", "org/model", *expected]

