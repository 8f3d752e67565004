"""One chain-script reading shared by the environments it holds for (verifier/launch/follow.py
`_Template`, verifier/shell/trace.py Stand-ins), and python3 data snippets run once per answers
(verifier/shell/trace.py `Reader.snippet_again`).

Every shared reading must equal the reading made with the environment's own values in a context
that shares nothing (`_fresh`); the tests count how many times the script was read.
"""

from __future__ import annotations

import pytest

from tests.launch.multinode_kit import TRT_KEY, make_bundle, srt_tree
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch.follow import _Reading, _template, _Walker
from verifier.launch.job import KeyJob
from verifier.shell import trace
from verifier.shell.text import Text, plain, text_of

SCRIPT = "benchmarks/multi_node/x/server.sh"
SERVER = """#!/usr/bin/env bash
PORT=8000
if [ "$NODE_RANK" -eq 0 ]; then
    ROLE=prefill
else
    ROLE=decode
fi
export EXTRA="--max-batch $MAX_BATCH"
vllm serve "$MODEL" --port $PORT --tp "$TP" $EXTRA --role $ROLE --first "$1"
bench --conc "$CONC_LIST"
"""


def _job(files: dict[str, bytes]) -> KeyJob:
    from verifier.configs import master_entries

    ctx = CheckContext(make_bundle({**srt_tree(), **files}), load_policies())
    return KeyJob(ctx, "head", master_entries(ctx, "head")[TRT_KEY])


def _env(**values: str) -> dict[str, Text]:
    base = {"MODEL": "org/model", "TP": "8", "NODE_RANK": "0", "MAX_BATCH": "256", "CONC_LIST": "1 2 4 8"}
    return {name: text_of(value, "<env>", None) for name, value in {**base, **values}.items()}


def _args(first: str) -> list[Text]:
    return [text_of(first, "caller.sh", 3)]


def _read(walker: _Walker, script: str, env: dict[str, Text], args: list[Text]) -> _Reading:
    return walker.read(script, SERVER if script == SCRIPT else "", env, args, "/workspace", script, {})


def _fresh(env: dict[str, Text], args: list[Text], text: str = SERVER) -> _Reading:
    """The reading with the environment's own values, in a context that shares nothing."""
    job = _job({SCRIPT: text.encode()})

    def run(reader: trace.Reader, run_env: dict[str, Text], run_args: list[Text]) -> trace.ReadResult:
        return reader.run(SCRIPT, text, run_env, run_args, cwd="/workspace", zero=SCRIPT)

    return _template(job, {**env, **{str(i): a for i, a in enumerate(args, 1)}}, {}, run, None).reading


def _same(got: _Reading, want: _Reading) -> None:
    assert [(e.file, e.line, e.argv, e.env, e.cwd, e.guards, e.stdin, e.taint) for e in got.events] == \
        [(e.file, e.line, e.argv, e.env, e.cwd, e.guards, e.stdin, e.taint) for e in want.events]
    assert list(got.events[0].env) == list(want.events[0].env)  # the order a launch lists them in
    assert (got.stopped, got.problems, got.files) == (want.stopped, want.problems, want.files)


def test_environments_differing_in_word_values_share_one_reading(readings: list[str]) -> None:
    walker = _Walker(_job({SCRIPT: SERVER.encode()}))
    cases = [(_env(), _args("a")), (_env(TP="4", MODEL="org/other", MAX_BATCH="64"), _args("b")),
             (_env(CONC_LIST="16 32", TP="2"), _args("c"))]
    _read(walker, SCRIPT, *cases[0])
    first = len(readings)
    got = [_read(walker, SCRIPT, *cases[1])]
    assert len(readings) == first  # the second environment reuses the first reading
    got.append(_read(walker, SCRIPT, *cases[2]))
    assert len(readings) == first + 1  # a value with a blank that the script expands is read with it
    for reading, (env, args) in zip(got, cases[1:], strict=True):
        _same(reading, _fresh(env, args))
        words = [plain(a) for a in reading.events[0].argv]
        assert words[words.index("--tp") + 1] == plain(env["TP"])
        assert plain(reading.events[0].env["EXTRA"]) == f"--max-batch {plain(env['MAX_BATCH'])}"


def test_a_deciding_value_gets_its_own_reading(readings: list[str]) -> None:
    walker = _Walker(_job({SCRIPT: SERVER.encode()}))
    zero, one = (_env(NODE_RANK="0"), _args("a")), (_env(NODE_RANK="1"), _args("a"))
    _read(walker, SCRIPT, *zero)
    first = len(readings)
    reading = _read(walker, SCRIPT, *one)
    assert len(readings) > first
    _same(reading, _fresh(*one))
    assert "decode" in [plain(a) for a in reading.events[0].argv]
    _same(_read(walker, SCRIPT, *zero), _fresh(*zero))  # the first reading still holds for its own


def test_a_blank_value_that_is_split_is_read_with_its_value() -> None:
    text = SERVER.replace('bench --conc "$CONC_LIST"', "bench --conc $CONC_LIST")
    walker = _Walker(_job({SCRIPT: text.encode()}))

    def read(env: dict[str, Text]) -> _Reading:
        return walker.read(SCRIPT, text, env, _args("a"), "/workspace", SCRIPT, {})

    read(_env())
    for conc in ("16 32 64", "8"):
        env = _env(CONC_LIST=conc)
        reading = read(env)
        _same(reading, _fresh(env, _args("a"), text))
        assert [plain(a) for a in reading.events[-1].argv][2:] == conc.split()


def test_a_value_that_makes_a_pathname_pattern_shares_only_with_values_that_do(readings: list[str]) -> None:
    # `$EXTRA` is expanded unquoted: a field holding `*`, `?` or `[...]` is a pattern only the run's
    # file system expands, so whether the field of a stand-in is one is what the value makes it, a
    # test re-checked for every value (verifier/shell/trace.py `Reader.globs`)
    walker = _Walker(_job({SCRIPT: SERVER.encode()}))
    batches = ("64", "6*", "[12]", "128")
    got, counts = [], []
    for batch in batches:
        got.append(_read(walker, SCRIPT, _env(MAX_BATCH=batch), _args("a")))
        counts.append(len(readings))
    assert counts[1] > counts[0] and counts[3] == counts[2] == counts[1]  # one reading per outcome
    for batch, reading in zip(batches, got, strict=True):
        _same(reading, _fresh(_env(MAX_BATCH=batch), _args("a")))
        known = [seg.known for a in reading.events[0].argv for seg in a if plain((seg,)) == batch]
        assert known == [batch.isdigit()]


def test_a_value_split_on_the_scripts_ifs_is_read_with_its_value(readings: list[str]) -> None:
    # with IFS=, an unquoted expansion of a value holding a comma is several words, while a stand-in
    # holds no comma: whether the value holds one of IFS's characters is re-checked for every value
    text = SERVER.replace('bench --conc "$CONC_LIST"', 'IFS=,\nbench --conc $CONC_LIST')
    walker = _Walker(_job({SCRIPT: text.encode()}))
    lists = ("1", "4", "16,32", "8,64,128")
    got, counts = [], []
    for conc in lists:
        got.append(walker.read(SCRIPT, text, _env(CONC_LIST=conc), _args("a"), "/workspace", SCRIPT, {}))
        counts.append(len(readings))
    assert counts[1] == counts[0]  # a value without a comma shares the first reading
    for conc, reading in zip(lists, got, strict=True):
        _same(reading, _fresh(_env(CONC_LIST=conc), _args("a"), text))
        assert [plain(a) for a in reading.events[-1].argv][2:] == conc.split(",")


SNIPPET = """#!/usr/bin/env bash
eval "$(python3 -c "
import os
print('SIZE=' + os.environ.get('SIZE', 'none'))
")"
vllm serve m --size "$SIZE" --tp "$TP"
"""


def test_a_snippet_is_run_once_per_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.shell import pysnippet

    runs: list[str] = []
    run = pysnippet.run_snippet

    def counted(code, *args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(code)
        return run(code, *args, **kwargs)

    monkeypatch.setattr(pysnippet, "run_snippet", counted)
    trace._SNIPPET_RUNS.clear()
    outs = []
    for size, tp in (("1", "8"), ("1", "4"), ("2", "8")):
        reader = trace.Reader()
        reader.load = lambda path, st: None  # noqa: ARG005 - no file is loaded by this snippet
        result = reader.run(SCRIPT, SNIPPET, {"SIZE": size, "TP": tp})
        outs.append([plain(a) for a in result.events[-1].argv])
    assert outs == [["vllm", "serve", "m", "--size", size, "--tp", tp]
                    for size, tp in (("1", "8"), ("1", "4"), ("2", "8"))]
    assert len(runs) == 2  # TP is not read by the snippet: the second run reuses the first
    with trace.snippets_afresh():  # a reading made the long way (verifier.launch.sharing) runs it again
        reader = trace.Reader()
        reader.load = lambda path, st: None  # noqa: ARG005
        again = reader.run(SCRIPT, SNIPPET, {"SIZE": "1", "TP": "8"})
    assert len(runs) == 3 and [plain(a) for a in again.events[-1].argv] == outs[0]


LISTING = """#!/usr/bin/env bash
eval "$(python3 -c "
import os
ns = {}
for k, v in os.environ.items():
    try:
        ns[k] = int(v)
    except ValueError:
        pass
print('SIZE=' + str(eval('TP * 2', {}, ns)))
")"
vllm serve m --size "$SIZE" --conc "$CONC" --rank "$RANK"
"""


def test_a_snippet_that_lists_the_environment_is_rerun_only_for_what_it_looked_at(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A listed value whose number the snippet never reads counts only by being an integer or not:
    other values of it reuse the run; a value it reads, or one that turns (non-)integer, runs it again.
    Every reading equals the one made with a fresh cache."""
    from verifier.shell import pysnippet

    runs: list[str] = []
    run = pysnippet.run_snippet

    def counted(code, *args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append(code)
        return run(code, *args, **kwargs)

    def read(env: dict[str, str]) -> tuple[list[str], frozenset[str]]:
        reader = trace.Reader()
        reader.load = lambda path, st: None  # noqa: ARG005 - no file is loaded by this snippet
        result = reader.run(SCRIPT, LISTING, env)
        return [plain(a) for a in result.events[-1].argv], frozenset(reader.reads)

    cases = [({"TP": "4", "CONC": "1x2x4", "RANK": "0"}, 1), ({"TP": "4", "CONC": "8x16", "RANK": "1"}, 1),
             ({"TP": "8", "CONC": "8x16", "RANK": "1"}, 2),  # TP is read by the formula
             ({"TP": "8", "CONC": "16", "RANK": "1"}, 3),  # CONC is an integer now: ns differs
             ({"TP": "8", "CONC": "32", "RANK": "3"}, 3),
             ({"TP": "8", "CONC": "32", "RANK": "3", "NEW": "x"}, 4)]  # another name is listed
    fresh = []
    monkeypatch.setattr(pysnippet, "run_snippet", run)
    for env, _ in cases:
        trace._SNIPPET_RUNS.clear()
        fresh.append(read(env))
    monkeypatch.setattr(pysnippet, "run_snippet", counted)
    trace._SNIPPET_RUNS.clear()
    for (env, count), expected in zip(cases, fresh, strict=True):
        assert read(env) == expected
        assert len(runs) == count
    assert fresh[2][0][4] == "16"
