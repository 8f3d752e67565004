"""`$(seq ...)` in the multi-node reader: integers only, up to the single-node evaluator's bound.

AMD disaggregated launchers build `--cuda-graph-bs` from `($(seq START END))` with END read from a
model YAML (512 for some decode configurations); the list is known text, so the server's arguments
and the conditions that test them (`[[ -n "$config" ]]`) are decided, not left to the run."""

from __future__ import annotations

from verifier.shell.text import is_known
from verifier.shell.trace import Reader

SCRIPT = """\
sizes=($(seq $FIRST $LAST))
flags="--graph-sizes ${sizes[*]}"
config=""
if [[ -n "$flags" ]]; then
    config="--base $flags"
fi
serve $config
"""


def _server(first: str, last: str) -> list[str]:
    result = Reader().run("s.sh", SCRIPT, {"FIRST": first, "LAST": last})
    found = [e for e in result.events if e.words()[:1] == ["serve"]]
    assert len(found) == 1 and not found[0].guards, found
    assert all(is_known(a) for a in found[0].argv), found[0].argv
    return found[0].words()


def test_a_long_known_range_is_expanded() -> None:
    words = _server("1", "512")
    assert words[:3] == ["serve", "--base", "--graph-sizes"]
    assert words[3:] == [str(i) for i in range(1, 513)]


def test_a_range_beyond_the_bound_or_an_option_is_not_expanded() -> None:
    for script in ("x=$(seq 1 100000)\nserve $x\n", "x=$(seq -w 1 10)\nserve $x\n", "x=$(seq -s , 1 3)\nserve $x\n"):
        result = Reader().run("s.sh", script)
        server = [e for e in result.events if e.words()[:1] == ["serve"]][0]
        assert not all(is_known(a) for a in server.argv), (script, server.words())


def test_a_value_with_known_characters_is_not_empty_whatever_the_run_adds() -> None:
    script = ('config="--base $(hostname)"\nif [[ -n "$config" ]]; then\n  flags="$config --on"\nfi\n'
              'if [ -z "$config" ]; then\n  flags="--off"\nfi\nserve $flags\n')
    result = Reader().run("s.sh", script)
    server = [e for e in result.events if e.words()[:1] == ["serve"]][0]
    assert not server.guards and server.words()[1] == "--base" and server.words()[-1] == "--on"
    # an unknown value alone stays undecided
    result = Reader().run("s.sh", 'x="$(hostname)"\nif [[ -n "$x" ]]; then\n  f=--on\nfi\nserve $f\n')
    server = [e for e in result.events if e.words()[:1] == ["serve"]][0]
    assert not is_known(server.argv[1])
