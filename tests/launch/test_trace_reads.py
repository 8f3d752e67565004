"""What a multi-node trace records as read (verifier/shell/trace.py `Reader.reads`), which the runner
probe cache keys on, and the content-keyed parse caches of the snippet reader."""

from __future__ import annotations

from verifier.shell.pysnippet import _parsed, run_snippet
from verifier.shell.text import plain
from verifier.shell.trace import Reader, _yaml_doc


def _reads(script: str, env: dict[str, str]) -> set[str]:
    reader = Reader(unknown=lambda name: name == "HOSTNAME")
    reader.run("s.sh", script, env)
    return reader.reads


def test_a_variable_a_branch_sets_under_an_undecidable_condition_is_read() -> None:
    # the merged value is the common prefix of the environment's value and the branch's
    script = 'if [[ -n "$HOSTNAME" ]]; then\n    X=abc\nfi\n'
    assert "X" in _reads(script, {"X": "abd"})
    assert "Y" not in _reads(script, {"X": "abd", "Y": "1"})  # untouched: not read


def test_a_scalar_read_as_an_array_and_a_declared_local_are_read() -> None:
    assert "A" in _reads('echo "${A[@]}"\necho "${B[0]}"\n', {"A": "1"})
    assert "B" in _reads('echo "${A[@]}"\necho "${B[0]}"\n', {"A": "1"})
    assert "C" in _reads("f() {\n    local C\n}\nf\n", {"C": "1"})


def test_a_snippet_reading_the_environment_reads_those_variables() -> None:
    script = "V=$(python3 -c 'import os; print(os.environ.get(\"MODEL\", \"none\"))')\nrun \"$V\"\n"
    reader = Reader(load=lambda path, state: None)
    result = reader.run("s.sh", script, {"MODEL": "m1", "OTHER": "x"})
    assert result.events[-1].words() == ["run", "m1"]
    assert "MODEL" in reader.reads and "OTHER" not in reader.reads
    listing = "V=$(python3 -c 'import os; print(len(list(os.environ.items())))')\n"
    reader = Reader(load=lambda path, state: None)
    reader.run("s.sh", listing, {"MODEL": "m1", "OTHER": "x"})
    assert {"MODEL", "OTHER"} <= reader.reads  # listing the environment reads all of it


def test_a_yaml_file_is_parsed_once_per_path_and_content() -> None:
    first = _yaml_doc("cfg/models.yaml", "m1:\n  tp: 8\n")
    assert _yaml_doc("cfg/models.yaml", "m1:\n  tp: 8\n") is first  # the same text: reused
    other = _yaml_doc("cfg/models.yaml", "m1:\n  tp: 4\n")  # another text at the same path: parsed again
    assert other is not None and other[0] == {"m1": {"tp": 4}} and first is not None and first[0] == {"m1": {"tp": 8}}
    assert _yaml_doc("cfg/bad.yaml", "a: [\n") is None


def test_a_snippet_is_parsed_once_per_text_and_its_data_is_never_changed() -> None:
    code = "import yaml\nd = yaml.safe_load(open('m.yaml'))\nd['m1'] = 'x'\nprint(d['m1'])\n"
    assert _parsed(code) is _parsed(code) and _parsed("def (") is None
    data = {"m1": "orig"}

    def load(path: str):  # type: ignore[no-untyped-def]
        return data, {("m1",): 1}, "m.yaml"

    assert plain(run_snippet(code, load, {}, "s.sh", 1)) == "x\n"
    assert data == {"m1": "orig"}  # the loaded (cached) document is copied, not changed
