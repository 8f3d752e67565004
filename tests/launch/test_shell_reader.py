"""The multi-node trace of a script (verifier/shell/trace.py over verifier/shell's parser): nothing is ever executed."""

from __future__ import annotations

import pytest

from verifier.shell import ShellSyntaxError, parse
from verifier.shell.filters import apply_filter
from verifier.shell.pysnippet import SnippetUnreadable, run_snippet
from verifier.shell.text import blocking, plain, text_of
from verifier.shell.trace import Reader

YAML = "models.yaml"
MODELS = "m1:\n  flags: \"--tp 8 --kv-cache-dtype fp8\"\n  env: \"A=1 B=2\"\n"


def _load(path, _state):  # type: ignore[no-untyped-def]
    return ("cfg/models.yaml", MODELS) if plain(path).endswith("models.yaml") else None


def _read(script: str, env: dict[str, str] | None = None, args: tuple[str, ...] = (), unknown: bool = False):  # type: ignore[no-untyped-def]
    reader = Reader(load=_load, unknown=lambda name: unknown or name in ("HOSTNAME", "SLURM_PROCID"))
    return reader.run("s.sh", script, env or {}, args)


def _words(result) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [e.words() for e in result.events]


def test_conditions_choose_branches_with_the_known_environment() -> None:
    r = _read('''if [[ $FW == "dynamo-trt" && $P != "fp8" ]]; then
    git checkout a
elif [[ "$FW" == dynamo-* ]]; then
    git checkout b
else
    git checkout c
fi
[ -n "$EMPTY" ] && git checkout d
[[ -z "$EMPTY" ]] || git checkout e
''', {"FW": "dynamo-sglang", "P": "fp4"})
    assert _words(r) == [["git", "checkout", "b"]]


def test_parameter_expansions_arrays_and_arithmetic() -> None:
    r = _read('''A=(x "y z")
A+=(w)
E=()
NAME=CONFIG
CONFIG=recipes/a.yaml:override_1
N=$(( ${#A[@]} * 2 + 1 ))
run "${A[@]}" "${E[@]}" "${A[*]}" ${CONFIG%%:*} ${CONFIG#*/} ${UNSET:-dflt} ${!NAME} $N ${CONFIG/recipes/r}
''')
    assert _words(r) == [["run", "x", "y z", "w", "x y z w", "recipes/a.yaml", "a.yaml:override_1", "dflt",
                          "recipes/a.yaml:override_1", "7", "r/a.yaml:override_1"]]


def test_case_for_functions_and_command_substitution() -> None:
    r = _read('''pick() {
    case "$1" in
        a|b) echo first ;;
        *) echo other ;;
    esac
}
for i in $(seq 1 3); do
    OUT+="$(pick b)$i,"
done
echo_dir=$(dirname "$0")/lib.sh
run "$OUT" "$echo_dir" "$(basename /x/y.sh .sh)"
''')
    assert _words(r)[-1] == ["run", "first1,first2,first3,", "./lib.sh", "y"]


def test_an_undecidable_condition_merges_branches_and_names_its_line() -> None:
    r = _read('''FLAGS="--a 1"
if [[ "$(hostname)" == big* ]]; then
    FLAGS+=" --b 2"
fi
if [[ "$X" == "$(cat file)" ]] || [[ -n "$RANK_UNDECIDED" ]]; then
    MODE=one
else
    MODE=two
fi
run $FLAGS $MODE
''', {"RANK_UNDECIDED": ""})
    [event] = [e for e in r.events if e.words()[0] == "run"]
    # the branches agree on a prefix; the rest is unknown, set under a condition only the run decides
    assert event.words()[1] == "--a" and event.words()[2].startswith("1")
    tail = event.argv[2]
    bad = next(s for s in tail if not s.known)
    assert bad.why == "branch" and bad.line == 2


def test_an_unknown_array_has_an_unknown_length_and_exits_in_undecided_branches_are_dropped() -> None:
    r = _read('''missing=()
for v in "$@"; do
    [[ -z "${!v:-}" ]] && missing+=("$v")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    exit 1
fi
git clone https://github.com/o/r.git
''', {"SET": "1"}, args=("SET", "HOSTNAME"))
    assert r.stopped is None
    assert _words(r) == [["git", "clone", "https://github.com/o/r.git"]]


def test_a_function_that_returns_on_an_undecided_path_has_an_unknown_status() -> None:
    r = _read('''check() {
    if [[ "$(ulimit -l)" == unlimited ]]; then
        return 1
    fi
    return 0
}
check || exit 1
run after
''')
    assert r.stopped is None and _words(r)[-1] == ["run", "after"]


def test_eval_keeps_the_origin_of_every_word_and_unknown_values_stay_values() -> None:
    r = _read('''host=$(ip route get 1.1.1.1 | awk '/src/ {print $7}')
FLAGS="--kv-cache-dtype fp8"
CMD="vllm serve /m --cfg '{\\"ip\\": \\"${host}\\"}' \\
    ${FLAGS}"
eval "$CMD"
''')
    [event] = [e for e in r.events if e.words()[:2] == ["vllm", "serve"]]
    assert event.words()[4] == '{"ip": "$(ip route get 1.1.1.1 | awk \'/src/ {print $7}\')"}'
    assert event.argv[4][-2].known is False and event.argv[4][-2].why == "runtime"
    origins = {event.words()[i]: event.argv[i][0].line for i in range(len(event.argv))}
    assert origins["--kv-cache-dtype"] == 2 and origins["vllm"] == 3


def test_eval_of_a_commands_output_is_the_named_construct() -> None:
    r = _read('eval "$(curl -s http://example/config)"\nvllm serve /m\n')
    [event] = r.events[-1:]
    assert event.taint is not None and event.taint[1] == 1
    assert any("evaluates the output of" in m for _, _, m in r.problems)


def test_python_snippets_read_yaml_statically_with_origins() -> None:
    r = _read('''eval "$(python3 -c "
import yaml
with open('/w/models.yaml') as f:
    models = yaml.safe_load(f)
m = models['m1']
print(f'FLAGS=\\"{m.get(\\"flags\\", \\"\\")}\\"')
print(f'ENVS=\\"{m.get(\\"env\\")}\\"')
")"
for pair in ${ENVS}; do export "$pair"; done
vllm serve /m $FLAGS
''')
    [event] = [e for e in r.events if e.words()[:2] == ["vllm", "serve"]]
    assert event.words()[3:] == ["--tp", "8", "--kv-cache-dtype", "fp8"]
    assert event.argv[5][0].file == "cfg/models.yaml" and event.argv[5][0].line == 2
    assert plain(event.env["A"]) == "1" and plain(event.env["B"]) == "2"


def test_python_snippets_outside_the_data_subset_are_unreadable() -> None:
    with pytest.raises(SnippetUnreadable):
        run_snippet("import subprocess\nprint(subprocess.check_output(['id']))\n", lambda p: None, {}, "s", 1)
    out = run_snippet("import os\nns = {}\nfor k, v in os.environ.items():\n    try:\n        ns[k] = int(v)\n"
                      "    except ValueError:\n        pass\nprint(eval('A * B + 1', {}, ns))\n",
                      lambda p: None, {"A": "3", "B": "4", "C": "x"}, "s", 1)
    assert plain(out) == "13\n"


def test_text_filters_on_known_text_keep_origins() -> None:
    text = text_of("--tensor-parallel-size 8 --x", "f.yaml", 4)
    out, ok = apply_filter(["sed", "-E", "s/--tensor-parallel-size[[:space:]]+[0-9]+/--tensor-parallel-size 4/g"],
                           text, ("s.sh", 9))  # type: ignore[misc]
    assert plain(out) == "--tensor-parallel-size 4 --x" and ok
    assert [(s.text, s.line) for s in out] == [("--tensor-parallel-size 4", 9), (" --x", 4)]
    assert apply_filter(["grep", "-q", "--", "--x"], text, ("s.sh", 1))[1] is True  # type: ignore[index]
    assert apply_filter(["grep", "-q", "--", "--y"], text, ("s.sh", 1))[1] is False  # type: ignore[index]
    assert apply_filter(["awk", "{print}"], text, ("s.sh", 1)) is None


def test_heredocs_redirections_and_stderr() -> None:
    r = _read('''X=$(printf '%s\\n' "hi" 2>/dev/null)
Y=$(echo ignored > /tmp/f)
cat <<EOF > out.txt
value $X
EOF
run "$X" "$Y"
''')
    assert _words(r)[-1] == ["run", "hi", ""]
    assert r.events[0].stdin == "value hi\n"


def test_unsupported_syntax_names_its_line() -> None:
    with pytest.raises(ShellSyntaxError) as exc:
        parse("if [[ a ]]; then\n  echo 'unterminated\n")
    assert exc.value.line == 2


def test_blocking_segments() -> None:
    r = _read('if [[ -n "$(hostname)" ]]; then A=1; else A=2; fi\nrun "$A"\n')
    assert blocking(r.events[-1].argv[1]) is None  # decided only by the run: a run-time value
    r = _read('eval "$(python3 -c \'import subprocess\')"\nrun "$A"\n')
    assert r.events[-1].taint is not None


def test_pattern_replacement_splits_at_the_first_unescaped_slash() -> None:
    r = _read('X=${M//\\//--}\nY=${I//#//}\nZ=${M/#/pre-}\nW=${M//}\nrun "$X" "$Y" "$Z" "$W"\n',
              {"M": "org/name", "I": "nvcr.io#nvidia/x"})
    assert _words(r)[-1] == ["run", "org--name", "nvcr.io/nvidia/x", "pre-org/name", "org/name"]


def test_declaration_arguments_are_assignments_not_split() -> None:
    # (`local` outside a function assigns nothing, as in bash: tests/shell/test_unmodelled_options.py)
    r = _read('P="${A} ${B}"\nexport Q=$P\ndeclare -x R=$P S\nrun "[$Q]" "[$R]"\nbash job.sh\n', {"A": "1", "B": "2"})
    assert _words(r)[0] == ["run", "[1 2]", "[1 2]"]
    assert {"Q", "R"} <= set(r.events[-1].env)


def test_grouped_conditions_inside_double_brackets_are_read() -> None:
    r = _read('if [[ "$X" == 1 && ( "$Y" == a || "$Y" == b ) ]]; then run yes; else run no; fi\n'
              'if [[ "$X" == 2 || ( "$Y" == a ) ]]; then run two; fi\n', {"X": "1", "Y": "b"})
    assert _words(r) == [["run", "yes"]]


def test_command_substitution_lines_count_from_the_line_it_is_on() -> None:
    r = _read('A=1\nB=$(\n  echo x\n  other-cmd --flag\n)\n')
    assert [(e.line, e.words()[0]) for e in r.events] == [(4, "other-cmd")]


def test_patterns_are_the_shared_bash_globs() -> None:
    r = _read('case "$M" in "o"*) run quoted-prefix;; esac\n'
              'case "$M" in "*") run literal-star;; *) run any;; esac\n'
              'S=${M//[[:space:]]/_}\nrun "$S" "${M%/*}" "${M##*/}" "${M#"org"}"\n'
              '[[ "$M" == *"/"* ]] && run has-slash\n', {"M": "org/na me"})
    assert _words(r) == [["run", "quoted-prefix"], ["run", "any"], ["run", "org/na_me", "org", "na me", "/na me"],
                         ["run", "has-slash"]]


def test_arithmetic_is_bash_arithmetic() -> None:
    r = _read('i=0\n((i++))\n(( i += 2 ))\nrun "$i" "$((-7 / 2))" "$((0x10 + 010))" "$((N))"\n', {"N": "i * 2"})
    assert _words(r) == [["run", "3", "-3", "24", "6"]]
