"""The multi-node reader reads back files a script writes itself and then sources
(verifier.shell.trace `Reader.note_written` / `source_generated`): a command whose whole output the
reader computes (a python3 data snippet over a repository YAML file, echo, printf, cat of a
here-document) written to one file, sourced later through the same path (a known path, or the very
`$(mktemp)` value a variable holds). Everything else stays a run-time file: sourcing it fails closed,
naming the write's line."""

from __future__ import annotations

from verifier.shell.text import Text, plain
from verifier.shell.trace import MAX_NAMING_PAIRS, Event, Reader, ReadResult, State

SETTINGS = (
    "# per-model settings\n"
    "tiny-model:\n"
    "  env: \"SPEED=high COLOR=blue\"\n"
    "  flags: \"--turbo --quiet\"\n"
    "other-model:\n"
    "  flags: \"--other\"\n"
)
FILES = {"conf/settings.yaml": SETTINGS}

# a snippet in the shape of the AMD launchers': yaml.safe_load of a repository file, dict.get with
# defaults, a one-line def, f-strings; its output is a file of NAME='value' lines that is sourced
SNIPPET = """\
out=$(mktemp)
python3 << PYEOF > "$out"
import yaml
with open('${CONF}/settings.yaml') as f:
    m = yaml.safe_load(f).get('${WHICH}', {})
def q(v): return v.replace("'", "")
print(f"MY_ENV='{q(m.get('env', ''))}'")
print(f"MY_FLAGS='{q(m.get('flags', ''))}'")
print(f"MY_SIZE='{q(m.get('size', 'medium'))}'")
PYEOF
"""
SERVE = 'for kv in $MY_ENV; do export "$kv"; done\nserve --size "$MY_SIZE" $MY_FLAGS\n'


def _load(path: Text, _state: State) -> tuple[str, str] | None:
    rel = plain(path).lstrip("/")
    return (rel, FILES[rel]) if rel in FILES else None


def _read(text: str, env: dict[str, str] | None = None) -> ReadResult:
    return Reader(load=_load).run("launch.sh", text, {"CONF": "/conf", "WHICH": "tiny-model", **(env or {})})


def _server(result: ReadResult) -> Event:
    found = [e for e in result.events if e.words()[:1] == ["serve"]]
    assert len(found) == 1, result.events
    return found[0]


def test_snippet_output_written_to_a_mktemp_file_is_sourced() -> None:
    result = _read(SNIPPET + 'source "$out"\nrm -f "$out"\n' + SERVE)
    server = _server(result)
    assert server.taint is None, server.taint
    assert server.words() == ["serve", "--size", "medium", "--turbo", "--quiet"]
    assert not [p for p in result.problems if "statically" in p[2]], result.problems
    # a value read from the YAML file points at its line there; the default at the snippet's line
    flag = server.argv[3]
    assert (flag[0].file, flag[0].line) == ("conf/settings.yaml", 4)
    size = server.argv[2]
    assert (size[0].file, size[0].line) == ("launch.sh", 2)
    assert plain(server.env["SPEED"]) == "high" and server.env["SPEED"][0].line == 3


def test_files_read_by_the_snippet_are_listed() -> None:
    reader = Reader(load=_load)
    reader.run("launch.sh", SNIPPET + 'source "$out"\n' + SERVE, {"CONF": "/conf", "WHICH": "tiny-model"})
    assert "conf/settings.yaml" in reader.files


def test_a_model_missing_from_the_yaml_takes_the_defaults() -> None:
    server = _server(_read(SNIPPET + 'source "$out"\n' + SERVE, {"WHICH": "absent-model"}))
    assert server.taint is None and server.words() == ["serve", "--size", "medium"]


def _tainted(result: ReadResult, line: int) -> None:
    server = _server(result)
    assert server.taint is not None and server.taint[1] == line, server.taint
    assert any(ln == line and "cannot be read statically" in m for _, ln, m in result.problems), result.problems


def test_a_snippet_the_reader_cannot_follow_stays_a_run_time_file() -> None:
    unknown_file = SNIPPET.replace("settings.yaml", "missing.yaml")
    _tainted(_read(unknown_file + 'source "$out"\n' + SERVE), 11)
    # a construct the snippet reader does not follow (a subprocess) is not guessed at
    spawned = SNIPPET.replace("import yaml\n", "import yaml\nimport subprocess\n")
    _tainted(_read(spawned + 'source "$out"\n' + SERVE), 12)


def test_a_run_time_value_in_the_snippet_code_is_not_read() -> None:
    result = Reader(load=_load).run("launch.sh", SNIPPET + 'source "$out"\n' + SERVE, {"WHICH": "tiny-model"})
    server = _server(result)  # CONF unset: a machine value inside the code, the file it opens is unknown
    assert server.taint is not None and server.taint[1] == 11


def test_another_temporary_file_is_not_the_generated_one() -> None:
    # a second $(mktemp) is another file, even though it is written the same way in the script
    text = SNIPPET + 'other=$(mktemp)\nsource "$other"\n' + SERVE
    _tainted(_read(text), 12)


def test_a_copy_of_the_same_value_names_the_same_file() -> None:
    server = _server(_read(SNIPPET + 'same="$out"\nsource "$same"\n' + SERVE))
    assert server.taint is None and server.words()[-2:] == ["--turbo", "--quiet"]


def test_a_later_write_or_change_spoils_the_generated_text() -> None:
    # overwritten by a command whose output is unknown
    _tainted(_read(SNIPPET + 'curl -fsSL https://example.invalid/x > "$out"\nsource "$out"\n' + SERVE), 12)
    # changed in place by a command that names it
    _tainted(_read(SNIPPET + 'sed -i s/turbo/slow/ "$out"\nsource "$out"\n' + SERVE), 12)
    # deleted before it is read
    _tainted(_read(SNIPPET + 'rm -f "$out"\nsource "$out"\n' + SERVE), 12)
    # a write to a path only the run knows may be the same file
    _tainted(_read(SNIPPET + 'echo x > "$LOG_DIR/notes"\nsource "$out"\n' + SERVE), 12)
    # stderr written to it
    _tainted(_read(SNIPPET + 'ls 2> "$out"\nsource "$out"\n' + SERVE), 12)


def test_a_write_under_an_undecided_condition_is_not_taken_as_done() -> None:
    text = ('rm -f /tmp/s.sh\nif [ -e /dev/gpu0 ]; then\n  echo "MY_FLAGS=--gpu" > /tmp/s.sh\nfi\n'
            'source /tmp/s.sh\nserve $MY_FLAGS\n')
    server = _server(Reader(load=_load).run("launch.sh", text))
    assert server.taint is not None and server.taint[1] == 5
    # written before the condition, rewritten only on one branch: the first text is no longer known
    text = ('echo "MY_FLAGS=--cpu" > /tmp/s.sh\nif [ -e /dev/gpu0 ]; then\n  echo "MY_FLAGS=--gpu" > /tmp/s.sh\n'
            'fi\nsource /tmp/s.sh\nserve $MY_FLAGS\n')
    server = _server(Reader(load=_load).run("launch.sh", text))
    assert server.taint is not None and server.taint[1] == 5


def test_written_inside_a_command_substitution_still_counts() -> None:
    text = ('echo "MY_FLAGS=--a" > /tmp/s.sh\nx=$(echo "MY_FLAGS=--b" > /tmp/s.sh; echo done)\n'
            'source /tmp/s.sh\nserve $MY_FLAGS\n')
    server = _server(Reader(load=_load).run("launch.sh", text))
    assert server.taint is not None  # the outer state does not know the rewrite: it fails closed


def test_echo_printf_and_cat_outputs_are_generated_text() -> None:
    cases = {
        'echo "MY_FLAGS=--one" > /tmp/g.sh\n': ["--one"],
        "printf '%s\\n' 'MY_FLAGS=--two' 'MY_SIZE=big' > /tmp/g.sh\n": ["--two"],
        "cat > /tmp/g.sh <<'EOF'\nMY_FLAGS=\"--three --four\"\nEOF\n": ["--three", "--four"],
        'echo "MY_FLAGS=--five" > /tmp/g.sh\necho "MY_SIZE=huge" >> /tmp/g.sh\n': ["--five"],
        'cd /tmp\necho "MY_FLAGS=--six" > g.sh\n': ["--six"],
    }
    for script, flags in cases.items():
        server = _server(Reader(load=_load).run("launch.sh", script + "source /tmp/g.sh\nserve $MY_FLAGS\n"))
        assert server.taint is None and server.words()[1:] == flags, (script, server)


def test_a_run_time_value_written_into_the_file_stays_unknown() -> None:
    text = 'echo "MY_FLAGS=--host=$HOSTNAME" > /tmp/g.sh\nsource /tmp/g.sh\nserve $MY_FLAGS\n'
    server = _server(Reader(load=_load).run("launch.sh", text))
    assert server.taint is None
    word = server.argv[1]
    assert plain(word) == "--host=${HOSTNAME}" and not all(seg.known for seg in word)


def test_a_relative_path_under_an_unknown_directory_is_not_tracked() -> None:
    text = 'cd "$WORKDIR"\necho "MY_FLAGS=--x" > g.sh\nsource g.sh\nserve $MY_FLAGS\n'
    result = Reader(load=_load).run("launch.sh", text)
    server = _server(result)
    assert server.taint is not None and server.taint[1] == 3


def test_a_snippet_reading_a_run_time_value_in_its_code_is_not_guessed() -> None:
    # the here-document's source text `${HOSTNAME}` is not what Python would read
    text = 'FLAGS=$(python3 - <<PY\nprint("--host=${HOSTNAME}")\nPY\n)\nserve $FLAGS\n'
    server = _server(Reader(load=_load).run("launch.sh", text))
    assert not all(seg.known for word in server.argv[1:] for seg in word), server.argv
    quoted = "FLAGS=$(python3 - <<'PY'\nprint(\"--host=${HOSTNAME}\")\nPY\n)\nserve $FLAGS\n"
    server = _server(Reader(load=_load).run("launch.sh", quoted))  # quoted: Python reads these characters
    assert server.words() == ["serve", "--host=${HOSTNAME}"] and all(s.known for s in server.argv[1])


def test_a_command_of_more_arguments_than_the_reader_compares_spoils_every_generated_text() -> None:
    # each generated file is compared with each argument of a later command (`_names_file`); past
    # MAX_NAMING_PAIRS pairs every generated file may have been named, and reading one back fails
    # closed, so a script of many files and long commands costs no more than its length
    files = "".join(f'echo "MY_FLAGS=--f{k}" > /tmp/g{k}.sh\n' for k in range(200))
    few = " ".join(f"a{k}" for k in range(50))
    many = " ".join(f"a{k}" for k in range(MAX_NAMING_PAIRS // 200 + 1))
    server = _server(_read(files + f"tool {few}\nsource /tmp/g7.sh\nserve $MY_FLAGS\n"))
    assert server.taint is None and server.words() == ["serve", "--f7"]
    _tainted(_read(files + f"tool {many}\nsource /tmp/g7.sh\nserve $MY_FLAGS\n"), 202)
