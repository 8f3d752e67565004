"""The bash constructs the static evaluator follows (verifier.shell), one test per construct."""

from __future__ import annotations

import pytest

from tests.shell.helpers import argv, env_of, run, server, servers
from verifier.shell import ShellSyntaxError
from verifier.shell.parser import parse
from verifier.shell.values import Opaque, Unknown

SERVE = "python3 -m sglang.launch_server"


def test_case_on_a_known_value_takes_its_arm() -> None:
    text = """case "$KV_OFFLOAD_BACKEND" in
    mooncake|lmcache) ARGS=(--kv-transfer-config "$KV_OFFLOAD_BACKEND") ;;
    "") ARGS=() ;;
    *) echo bad; exit 1 ;;
esac
""" + SERVE + """ "${ARGS[@]}" --tp "$TP"
"""
    assert argv(run(text)) == ["--tp", "4"]
    assert argv(run(text, {"KV_OFFLOAD_BACKEND": "lmcache"})) == ["--kv-transfer-config", "lmcache", "--tp", "4"]
    ev = run(text, {"KV_OFFLOAD_BACKEND": "other"})
    assert not servers(ev) and ev.results[0].exit_loc == ("benchmarks/single_node/fixed_seq_len/x.sh", 4)


def test_case_on_a_run_time_value_gives_a_world_per_arm() -> None:
    text = f'GPU=$(nvidia-smi -L | head -1)\ncase "$GPU" in\n  *B200*) X=1 ;;\n  *) X=2 ;;\nesac\n{SERVE} --x "$X"\n'
    found = servers(run(text))
    assert sorted(s.argv[1] for s in found) == ["1", "2"]


def test_fall_through_arms() -> None:
    text = f'case a in\n a) X=1 ;&\n b) Y=2 ;;\n c) Z=3 ;;\nesac\n{SERVE} --x "$X$Y$Z"\n'
    assert argv(run(text)) == ["--x", "12"]


def test_loops_with_known_iterations() -> None:
    text = f"""ARGS=()
for flag in --a --b; do ARGS+=("$flag" 1); done
for ((i = 0; i < 3; i++)); do N=$i; done
i=0
while [ "$i" -lt 2 ]; do i=$((i + 1)); done
for x in {{1..3}}; do last=$x; done
{SERVE} "${{ARGS[@]}}" --n "$N" --i "$i" --last "$last"
"""
    assert argv(run(text)) == ["--a", "1", "--b", "1", "--n", "2", "--i", "2", "--last", "3"]


def test_loop_of_unknown_length_that_feeds_nothing_is_harmless() -> None:
    text = f"""for attempt in $(seq 1 60); do
    if curl -sf localhost:8888/health; then break; fi
    sleep 5
done
while ! grep -q ready "$LOG"; do tries=$((tries + 1)); done
{SERVE} --tp "$TP"
"""
    assert argv(run(text)) == ["--tp", "4"]


def test_loop_of_unknown_length_feeding_the_server_names_the_loop() -> None:
    text = f"""BS=1
while read -r line; do BS=$((BS * 2)); done < "$HOSTFILE"
{SERVE} --bs "$BS"
"""
    value = server(run(text)).argv[1]
    assert isinstance(value, Unknown) and value.loc[1] == 2 and "loop" in value.reason


def test_undecidable_branch_with_the_same_outcome_is_resolved() -> None:
    text = f'if [[ -n "$SLURM_JOB_ID" ]]; then echo "on $SLURMD_NODENAME"; fi\n{SERVE} --tp "$TP"\n'
    ev = run(text, machine_env=frozenset({"SLURM_JOB_ID", "SLURMD_NODENAME"}))
    assert argv(ev) == ["--tp", "4"]


def test_undecidable_branch_that_matters_gives_two_labelled_servers() -> None:
    text = f"""DRAFT=org/draft
if [[ "$MODEL" != /* ]]; then
  hf download "$DRAFT"
  DRAFT_PATH="$DRAFT"
else
  DRAFT_PATH="$(dirname "$MODEL")/${{DRAFT##*/}}"
fi
{SERVE} --speculative-draft-model-path "$DRAFT_PATH"
"""
    assert argv(run(text)) == ["--speculative-draft-model-path", "org/draft"]
    assert argv(run(text, {"MODEL": "/models/m"})) == ["--speculative-draft-model-path", "/models/draft"]
    ev = run(text, {"MODEL": "$MODEL"}, machine_env=frozenset())
    assert len(servers(ev)) == 1  # a literal value: decided
    ptx = f'P=$(find / -name ptxas -print -quit)\nif [ -n "$P" ]; then export P; fi\n{SERVE}\n'
    ev = run(ptx)
    labels = sorted(str(a) for r in ev.results for a in r.assumptions)
    assert len(servers(ev)) == 2 and labels == ["x.sh:2 `[ -n \"$P\" ]` false", "x.sh:2 `[ -n \"$P\" ]` true"]


def test_exiting_branches_leave_the_continuing_world() -> None:
    text = f'hf download "$MODEL" || exit 1\nif ! command -v python3; then exit 2; fi\n{SERVE} --tp "$TP"\n'
    ev = run(text)
    assert argv(ev) == ["--tp", "4"] and sum(1 for r in ev.results if r.exit_loc) >= 1


def test_heredoc_generates_a_file_with_script_lines() -> None:
    text = """CFG=cfg.yml
EXTRA=""
if [ "$DP_ATTENTION" = "true" ]; then EXTRA="
attention_dp_config:
    enable_balance: true"; fi
cat > "$CFG" << EOF
kv_cache_config:
    dtype: fp8
    max_tokens: $((CONC * 2))
enable_attention_dp: $DP_ATTENTION$EXTRA
EOF
cat <<-'RAW' > raw.txt
	$NOT_EXPANDED
	RAW
mpirun -n 1 --oversubscribe trtllm-serve "$MODEL" --tp_size "$TP" --config "$CFG"
"""
    start = server(run(text))
    gen = start.files["cfg.yml"]
    assert gen.text == "kv_cache_config:\n    dtype: fp8\n    max_tokens: 16\nenable_attention_dp: false\n"
    assert [loc[1] for _, loc in gen.lines or ()] == [7, 8, 9, 10]
    dp = server(run(text, {"DP_ATTENTION": "true"})).files["cfg.yml"]
    assert dp.text is not None and "enable_balance: true" in dp.text
    assert start.engine == "trtllm" and start.launcher[-1] == "trtllm-serve"
    raw = run(text + "cat raw.txt\n")
    assert raw.results


def test_command_substitution_known_and_opaque() -> None:
    text = f"""HERE="$(cd "$(dirname "$0")" && pwd)"
NAME=$(basename "$MODEL")
LEN=$(printf '%s' "$NAME" | wc -c)
COUNT=$(seq 1 3 | grep -c .)
{SERVE} --a "$HERE" --b "$NAME" --c "$LEN" --d "$COUNT" --e "$(nproc)"
"""
    start = server(run(text))
    assert [str(v) if isinstance(v, str) else type(v).__name__ for v in start.argv] == \
        ["--a", "/workspace/benchmarks/single_node/fixed_seq_len", "--b", "model", "--c", "Opaque", "--d", "3",
         "--e", "Opaque"]
    assert isinstance(start.argv[-1], Opaque) and start.argv[-1].text == "$(nproc)"


def test_functions_local_scoping_and_status() -> None:
    text = f"""X=outer
pick() {{
    local X="$1"
    RESULT="--picked $X"
    [ "$2" = "yes" ]
}}
function wants_dp {{ [[ "$DP_ATTENTION" == "true" ]]; }}
ARGS=()
if pick inner yes; then ARGS+=($RESULT); fi
if wants_dp; then ARGS+=(--dp); fi
{SERVE} "${{ARGS[@]}}" --x "$X"
"""
    assert argv(run(text)) == ["--picked", "inner", "--x", "outer"]
    assert argv(run(text, {"DP_ATTENTION": "true"}))[2] == "--dp"


def test_sourced_library_functions_run_and_are_listed() -> None:
    lib = """export PORT="${PORT:-8888}"
require_backend() {
    case "$KV_OFFLOADING" in
        none) return 1 ;;
        dram) [[ "$KV_OFFLOAD_BACKEND" == "$1" ]] || exit 1; return 0 ;;
    esac
}
"""
    text = f"""source "$(dirname "$0")/../../lib.sh"
CACHE=()
if require_backend hicache; then CACHE=(--enable-hierarchical-cache); fi
{SERVE} --port "$PORT" "${{CACHE[@]}}"
"""
    files = {"benchmarks/lib.sh": lib}
    ev = run(text, {"PORT": ""}, files=files)
    assert argv(ev) == ["--port", "8888"] and ev.sourced == ["benchmarks/lib.sh"]
    ev = run(text, {"KV_OFFLOADING": "dram", "KV_OFFLOAD_BACKEND": "hicache"}, files=files)
    assert argv(ev)[-1] == "--enable-hierarchical-cache"
    missing = run(text)  # the library is not readable: the call's status is unknown
    assert missing.unread and len(servers(missing)) == 2


def test_parameter_expansions() -> None:
    text = f"""P=/models/org/Model-Name.tar
A=(x y z)
declare -A M=([fp8]=e4m3 [bf16]=auto)
M[fp4]=nvfp4
K=fp8
printf -v PADDED '%05d' 42
read -r -a PARTS <<< "a b  c"
N=PRECISION_VALUE; PRECISION_VALUE=deep
{SERVE} ${{P##*/}} ${{P%/*}} ${{P/Model/M}} ${{P//o/0}} ${{K^^}} ${{P,,}} ${{P:1:6}} ${{#A[@]}} ${{A[1]}} \\
    ${{M[$K]}} ${{M[fp4]}} ${{#P}} "${{UNSET:-dflt}}" "${{K:+set}}" $PADDED ${{PARTS[2]}} ${{!N}} ${{A[@]:1}}
"""
    assert argv(run(text)) == [
        "Model-Name.tar", "/models/org", "/models/org/M-Name.tar", "/m0dels/0rg/M0del-Name.tar", "FP8",
        "/models/org/model-name.tar", "models", "3", "y", "e4m3", "nvfp4", "26", "dflt", "set", "00042", "c",
        "deep", "y", "z"]


def test_arithmetic_and_tests() -> None:
    text = f"""MAX=$(( CONC > 16 ? CONC : 16 ))
PER=$(( 2 * ((CONC + TP - 1) / TP) ))
(( PER > 3 )) && BIG=yes
let "SHIFT = 1 << 3"
V=gfx950
[[ "$V" =~ ^gfx9(4|5)[0-9]$ ]] && MATCH=1
[[ "$MODEL" == org/* ]] && GLOB=1
[[ "$MODEL" == "org/*" ]] || QUOTED=literal
[ "$TP" -ge 4 -a "$EP_SIZE" -eq 1 ] && OLD=1
{SERVE} $MAX $PER $BIG $SHIFT $MATCH $GLOB $QUOTED $OLD
"""
    assert argv(run(text)) == ["16", "4", "yes", "8", "1", "1", "literal", "1"]


def test_export_unset_and_env_of_the_server() -> None:
    text = f"""export A=1 B=2
export -n B
export C
C=3
UNUSED=4 true
unset A
declare -x D=4
SGLANG_X=5 env FOO=bar numactl --interleave=all {SERVE} --tp "$TP"
"""
    start = server(run(text))
    assert env_of(start) == {"C": "3", "D": "4", "SGLANG_X": "5", "FOO": "bar"}
    assert start.launcher == ("env", "FOO=bar", "numactl", "--interleave=all", "python3", "-m",
                              "sglang.launch_server")


def test_redirections_background_wait_trap_and_set_x() -> None:
    text = f"""set -euo pipefail
set -x
trap 'kill $PID' EXIT
{{ echo "=== env ==="; env | sort; }} > "$RESULT_DIR/env.txt" 2>&1
"${{CMD[@]:-{SERVE}}}" > /dev/null 2>&1 &
PID=$!
wait "$PID"
"""
    ev = run(text.replace('"${CMD[@]:-' + SERVE + '}"', SERVE + " --tp 4"))
    assert argv(ev) == ["--tp", "4"]


@pytest.mark.parametrize(("command", "engine", "module"), [
    ("python3 -m sglang.launch_server --tp 4", "sglang", "sglang.launch_server"),
    ("sglang serve --tp 4", "sglang", "sglang.launch_server"),
    ("vllm serve org/model --tp 4", "vllm", "vllm.entrypoints.openai.api_server"),
    ("python3 -m vllm.entrypoints.openai.api_server --tp 4", "vllm", "vllm.entrypoints.openai.api_server"),
    ("exec trtllm-serve serve org/model --tp_size 4", "trtllm", "trtllm-serve"),
    ("mpirun -n 1 --allow-run-as-root -x NCCL_X=1 trtllm-llmapi-launch trtllm-serve org/model", "trtllm",
     "trtllm-serve"),
    ("srun --ntasks=1 --mpi=pmix trtllm-serve org/model", "trtllm", "trtllm-serve"),
    ("python3 -u -m atom.entrypoints.openai_server --model x", "atom", "atom.entrypoints.openai_server"),
    ('"$(command -v python3)" -m sglang.launch_server --tp 4', "sglang", "sglang.launch_server"),
    ("timeout 3600 nohup python -m sglang.launch_server --tp 4", "sglang", "sglang.launch_server"),
])
def test_server_commands_of_every_engine(command: str, engine: str, module: str) -> None:
    start = server(run(command + "\n"))
    assert (start.engine, start.module) == (engine, module)
    if "-x NCCL_X=1" in command:
        assert env_of(start) == {"NCCL_X": "1"}


def test_child_script_runs_with_the_exported_environment() -> None:
    child = f'{SERVE} --tp "$TP" --mode "$MODE" --arg "$1"\n'
    text = 'export MODE=fast\nLOCAL=1\nbash "$(dirname "$0")/common.sh" first\n'
    ev = run(text, files={"benchmarks/single_node/fixed_seq_len/common.sh": child})
    assert argv(ev) == ["--tp", "4", "--mode", "fast", "--arg", "first"]
    assert ev.children == ["benchmarks/single_node/fixed_seq_len/common.sh"]


def test_runner_mode_records_the_benchmark_script_and_its_environment() -> None:
    text = """export PORT=8888
SCRIPT="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200_${FRAMEWORK}.sh"
if [[ ! -f "$SCRIPT" ]]; then SCRIPT="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200.sh"; fi
export MODEL="/models/${MODEL##*/}"
srun --jobid=1 --container-workdir=/ix --export=ALL,EXTRA=1 bash "$SCRIPT"
docker run -e MODEL -e TP=8 -w /workspace --entrypoint=/bin/bash img "$SCRIPT"
"""
    env = {"SCENARIO_SUBDIR": "fixed_seq_len/", "EXP_NAME": "dsv4_1k1k", "PRECISION": "fp4", "FRAMEWORK": "vllm"}
    ev = run(text, env, files={"benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200.sh": ""}, mode="child")
    (result,) = ev.results
    assert result.child is not None and result.child.path == "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200.sh"
    passed = {n: v for n, v, _ in result.child.env}
    assert passed["MODEL"] == "/models/model" and passed["EXTRA"] == "1" and passed["PORT"] == "8888"
    assert result.child.cwd == "/ix"
    docker = run(text.replace("srun --jobid=1 --container-workdir=/ix --export=ALL,EXTRA=1 bash \"$SCRIPT\"\n", ""),
                 env, files={"benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200.sh": ""}, mode="child")
    (result,) = docker.results
    assert result.child is not None and {n for n, _, _ in result.child.env} == {"MODEL", "TP"}
    assert result.child.cwd == "/workspace"


def test_eval_and_here_strings() -> None:
    text = f'CMD="{SERVE} --tp $TP"\neval "$CMD --x 1"\n'
    assert argv(run(text)) == ["--tp", "4", "--x", "1"]


def test_syntax_errors_name_the_line() -> None:
    with pytest.raises(ShellSyntaxError) as err:
        run("if true; then\n  echo\n")
    assert err.value.message.startswith("expected 'fi'") and err.value.line == 1
    with pytest.raises(ShellSyntaxError):
        run('echo "unterminated\n')


def test_world_limit_joins_and_names_the_line() -> None:
    forks = "".join(f'[ -n "$(probe {k})" ] && X{k}=1\n' for k in range(8))
    text = forks + f'{SERVE} --x "$X0$X1$X2$X3$X4$X5$X6$X7"\n'
    start = server(run(text, max_worlds=16))
    value = start.argv[1]
    assert isinstance(value, Unknown) and "ways through the script" in value.reason


def test_hf_download_into_a_local_directory_is_remembered() -> None:
    text = f"""DRAFT=Inferact/Draft-EAGLE3
DRAFT_PATH="$(dirname "$MODEL")/${{DRAFT##*/}}"
if [[ ! -d "$DRAFT_PATH" ]]; then
    hf download "$DRAFT" --local-dir "$DRAFT_PATH"
fi
{SERVE} --speculative-draft-model-path "$DRAFT_PATH"
"""
    ev = run(text, {"MODEL": "/staged/models/Target"})
    assert ev.downloads == {"/staged/models/Draft-EAGLE3": "Inferact/Draft-EAGLE3"}
    assert argv(ev) == ["--speculative-draft-model-path", "/staged/models/Draft-EAGLE3"]


def test_hostile_scripts_end_in_a_named_error() -> None:
    from verifier.shell import ShellLimit

    deep = "if true; then\n" * 3000 + "echo\n" + "fi\n" * 3000
    with pytest.raises((ShellSyntaxError, ShellLimit)):
        run(deep)
    with pytest.raises(ShellLimit, match="deep"):  # unbounded recursion fails closed at the depth limit
        run("f() { f; }\nf\n" + SERVE + "\n")
    loop = "X=0\nwhile [ $X -lt 100000 ]; do X=$((X+1)); done\n" + SERVE + ' --x "$X"\n'
    value = server(run(loop)).argv[1]  # a loop longer than the evaluator follows
    assert isinstance(value, Unknown) and value.loc[1] == 2
    with pytest.raises(ShellSyntaxError):
        run("x" * 600_000)


def test_glob_posix_classes_and_anchored_empty_replacement() -> None:
    from verifier.shell.values import glob_match, replace_pattern

    assert glob_match("a b", (("a[[:space:]]b", False),))
    assert glob_match("x7", (("x[[:digit:]]", False),)) and not glob_match("xy", (("x[[:digit:]]", False),))
    assert glob_match("a[", (("a[[]", False),))
    assert replace_pattern("abc", (), "pre-", "#") == "pre-abc"
    assert replace_pattern("abc", (), "-suf", "%") == "abc-suf"
    assert replace_pattern("abc", (), "X", "/") == "abc"


@pytest.mark.parametrize(("text", "tp"), [
    ('if echo "a b" | grep -q "[[:space:]]"; then TP=2; else TP=1; fi\n', "2"),
    ('if echo "ab" | grep -q "[[:space:]]"; then TP=2; else TP=1; fi\n', "1"),
    ('if echo "a(b" | grep -q "a(b"; then TP=4; else TP=1; fi\n', "4"),  # a bare `(` is literal in a basic one
])
def test_posix_classes_and_basic_operators_in_the_evaluators_grep(text: str, tp: str) -> None:
    """POSIX character classes mean the same in `grep`, `sed`, `[[ =~ ]]` and globs (one table:
    `grep` in the single-node evaluator read `[[:space:]]` as a class of `[:space` before)."""
    assert argv(run(text + SERVE + ' --tp "$TP"\n'))[-2:] == ["--tp", tp]


@pytest.mark.parametrize(("words", "out"), [
    (["sed", "s/x-\\([[:digit:]]\\)/\\1/"], "8;\n"),  # basic: `\(` groups
    (["sed", "-E", "s/[[:punct:]]+$//"], "x-8\n"),
    (["sed", "s/\\\\(/</"], "x-8;\n"),  # an escaped backslash, then a literal `(`: nothing to replace
    (["grep", "[[:space:]]"], ""),
])
def test_posix_classes_and_basic_operators_in_filters(words: list[str], out: str) -> None:
    """The multi-node reader's `sed` and `grep` read POSIX classes and basic operators the same way."""
    from verifier.shell.filters import apply_filter
    from verifier.shell.text import plain, text_of

    got = apply_filter(words, text_of("x-8;\n", "f", 1), ("f", 1))
    assert got is not None and plain(got[0]) == out


@pytest.mark.parametrize("text, statements", [
    # a `case` the script closed before the substitution began says nothing about a `)` inside it
    ('case "$A" in a) x=1;; esac\nX="$(echo "a\nb")"\n', 2),
    ('case "$A" in\n  a) x=1;;\nesac\nOUT="$(python3 -c "\nprint(1)\n")"\n', 2),
    # a `case` inside the substitution: its patterns' `)` do not close it, on one line or many
    ('X=$(case $a in\n a) echo 1;;\n b|c) echo 2;;\nesac)\necho "$X"\n', 2),
    ('X="$(case $a in a) echo 1;; b) echo 2;; esac; echo "q\nr")"\n', 1),
    ('X=$(case $a in (a) echo 1;; esac)\n', 1),
    ('X=$(f login)\ny=$(case $q in\n (login) a;;\n "b") c;;\n esac)\n', 2),
])
def test_command_substitution_ends_at_its_own_parenthesis(text: str, statements: int) -> None:
    assert len(parse(text, "x.sh").body) == statements


def test_computed_subscript_assignments_build_the_server_arguments() -> None:
    """`A[$i]=x` and `M["$k"]=v` are assignments (they were read as commands named `A[$i]=x`)."""
    text = ('i=0\nARGS=()\nARGS[$i]=--tp\nARGS[$((i + 1))]="$TP"\ndeclare -A EXTRA\nk=mem\n'
            'EXTRA["${k}_fraction"]=0.8\n' + SERVE + ' "${ARGS[@]}" --mem-fraction-static "${EXTRA[mem_fraction]}"\n')
    assert argv(run(text)) == ["--tp", "4", "--mem-fraction-static", "0.8"]


def test_read_of_run_time_input_is_not_claimed() -> None:
    """`read -ra` of a command's output: neither the elements nor how many there are is known."""
    text = f'read -ra HOSTS <<< "$(scontrol show hostnames)"\n{SERVE} --host "${{HOSTS[1]}}" --n "${{#HOSTS[@]}}"\n'
    args = servers(run(text))[0].argv
    assert args[0::2] == ("--host", "--n") and all(isinstance(a, Unknown) for a in args[1::2]), args
