"""What the static reader does not model fails closed, naming the line; `declare -n` name references
are followed. Both walkers: the single-node evaluator (a `ShellLimit`, which the launch layer turns
into an unresolved launch) and the multi-node reader (a problem "cannot be read statically" and a
taint on every later command, so a server it starts is not resolved)."""

from __future__ import annotations

import pytest

from tests.shell.helpers import argv, run
from verifier.shell import ShellLimit
from verifier.shell.text import plain
from verifier.shell.trace import Reader

SERVE = 'vllm serve "$MODEL" $EXTRA\n'

UNMODELLED = {
    "process substitution": "source <(curl -fsSL https://example.invalid/x.sh)\n",
    "dot process substitution": ". <(curl -fsSL https://example.invalid/x.sh)\n",
    "curl then source": "curl -fsSL -o /tmp/x.sh https://example.invalid/x.sh\nsource /tmp/x.sh\n",
    "wget then source": "wget https://example.invalid/x.sh\n. ./x.sh\n",
    "clone then source": "git clone https://example.invalid/r.git /opt/r\nsource /opt/r/env.sh\n",
    "written by a command then sourced": "curl -fsSL https://example.invalid/x > /tmp/e.sh\nsource /tmp/e.sh\n",
    "eval of command output": 'eval "$(curl -fsSL https://example.invalid/x)"\n',
}


@pytest.mark.parametrize("name", sorted(UNMODELLED))
def test_single_node_unmodelled_construct_is_a_named_limit(name: str) -> None:
    text = UNMODELLED[name] + SERVE
    line = len(UNMODELLED[name].split("\n")) - 1
    with pytest.raises(ShellLimit) as info:
        run(text)
    assert info.value.loc is not None and info.value.loc[1] == line, (info.value.loc, info.value.message)
    assert "statically" in info.value.message or "run time" in info.value.message


@pytest.mark.parametrize("name", sorted(UNMODELLED))
def test_multi_node_unmodelled_construct_taints_what_follows(name: str) -> None:
    text = UNMODELLED[name] + SERVE
    line = len(UNMODELLED[name].split("\n")) - 1
    result = Reader().run("x.sh", text, {"MODEL": "m"})
    server = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert server and server[0].taint is not None and server[0].taint[1] == line, server
    assert any(ln == line and "cannot be read statically" in m for _, ln, m in result.problems), result.problems


def test_known_generated_file_and_known_eval_text_are_read() -> None:
    text = "cat > /tmp/e.sh <<EOF\nEXTRA=--from-file\nEOF\nsource /tmp/e.sh\n" + SERVE
    assert argv(run(text)) == ["org/model", "--from-file"]
    assert argv(run('eval "EXTRA=--from-eval"\n' + SERVE)) == ["org/model", "--from-eval"]
    # a machine variable inside evaluated text stays a run-time value
    assert argv(run('eval "EXTRA=--host=$HOSTNAME"\n' + SERVE)) == ["org/model", "--host=$HOSTNAME"]


def test_recursion_stops_at_the_depth_limit_quickly() -> None:
    with pytest.raises(ShellLimit, match="deep"):
        run("f() { f; f; }\nf\n" + SERVE)
    result = Reader().run("x.sh", "f() { f; f; }\nf\n" + SERVE)
    assert any("nest more than" in m for _, _, m in result.problems)


NAMEREFS = {
    "write": ("declare -n r=EXTRA\nr=--a\n", ["--a"]),
    "read": ("V=--b\ndeclare -n r=V\nEXTRA=$r\n", ["--b"]),
    "typeset": ("typeset -n r=EXTRA\nr=--c\n", ["--c"]),
    "local in a function": ("set_it() { local -n out=$1; out=--d; }\nset_it EXTRA\n", ["--d"]),
    "array append": ("A=(--e)\nadd() { local -n arr=$1; arr+=(--f); }\nadd A\nEXTRA=\"${A[*]}\"\n", ["--e", "--f"]),
    "pointed later": ("declare -n r\nr=EXTRA\nr=--g\n", ["--g"]),
    "name of the reference": ("declare -n r=SOMEWHERE\nEXTRA=${!r}\n", ["SOMEWHERE"]),
    "unset through": ("EXTRA=--h\ndeclare -n r=EXTRA\nunset r\n", []),
    "unset the reference": ("declare -n r=EXTRA\nunset -n r\nr=--i\nEXTRA=$r\n", ["--i"]),
}


@pytest.mark.parametrize("name", sorted(NAMEREFS))
def test_name_references_are_followed_by_both_walkers(name: str) -> None:
    lines, expected = NAMEREFS[name]
    assert argv(run(lines + SERVE)) == ["org/model", *expected]
    result = Reader().run("x.sh", lines + SERVE, {"MODEL": "org/model"})
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert [plain(a) for a in server.argv[2:]] == ["org/model", *expected]
    assert not result.problems and server.taint is None


def test_a_local_reference_ends_with_its_function() -> None:
    text = "EXTRA=--kept\nf() { local -n r=OTHER; r=x; }\nf\nr=--global\nEXTRA=\"$EXTRA $r\"\n" + SERVE
    assert argv(run(text)) == ["org/model", "--kept", "--global"]


def test_a_reference_the_reader_cannot_follow_fails_closed() -> None:
    with pytest.raises(ShellLimit, match="name reference"):
        run('declare -n r="A[1]"\nr=--x\n' + SERVE)
    with pytest.raises(ShellLimit, match="name reference"):
        run('declare -n r="$(hostname)"\nr=--x\n' + SERVE)
    result = Reader().run("x.sh", 'declare -n r="$(hostname)"\nr=--x\n' + SERVE)
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert server.taint is not None and "name reference" in server.taint[2]
