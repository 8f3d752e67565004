"""Check 9 (Chat template): fixtures and the canonical cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import c09_chat_template as c09
from tests.checks.fixture_runner import assert_fixture, fixture_dirs, params, run_one
from verifier.core.policy import load_policies


@pytest.mark.parametrize("bundle", fixture_dirs(9), ids=lambda p: p.name)
def test_fixture(bundle: Path) -> None:
    assert_fixture(bundle, 9)


def test_docstring_and_identity() -> None:
    assert (c09.ID, load_policies()["checks"]["checks"][str(c09.ID)]["name"]) == (9, "Chat template")
    for heading in ("Rule:", "Why:", "Evidence:", "N/A when:", "Unverifiable when:", "Policy:"):
        assert heading in (c09.__doc__ or "")


@pytest.mark.parametrize("case", ["pr4524", "pr4524-approved"])
def test_cases_use_the_chat_client(case: str) -> None:
    from tests.kit import CASES

    result = run_one(CASES / case, 9)
    assert result.status.value == "PASS"
    p = params(result, "chat-client")
    assert (p["client"], p["marker"], p["points"], p["changed"]) == (
        "benchmarks/srt_agentic.sh", "/v1/chat/completions", 15, False)


def test_raw_completions_client_names_line() -> None:
    result = run_one(next(p for p in fixture_dirs(9) if p.name == "fail-raw-completions-client"), 9)
    assert params(result, "raw-completions-client")["marker"] == "/v1/completions"
    assert any(getattr(e, "line", None) == 2 for e in result.evidence)


@pytest.mark.parametrize(("command", "expected"), [
    ("bash /infmax-workspace/benchmarks/srt_agentic.sh", "benchmarks/srt_agentic.sh"),
    ("python3 /infmax-workspace/benchmarks/x.py --flag", "benchmarks/x.py"),
    ("aiperf profile --url http://x", None),
])
def test_script_of_command(command: str, expected: str | None) -> None:
    got = c09._script(command, "old")
    assert got == expected


def test_backend_client_with_chat_template_on_a_continuation_line_is_chat() -> None:
    """benchmark_lib.sh `run_benchmark_serving --backend vllm \\ ... --use-chat-template` (or `--dsv4`,
    which implies it) applies the chat template client-side; without it the prompts are raw."""
    from checks.c09_chat_template import _markers
    from verifier.core.policy import load_policies

    raw = load_policies()["chat_template"]["raw_completion_markers"]
    templated = "run_benchmark_serving \\\n    --backend vllm \\\n    --num-prompts 10 \\\n    --use-chat-template\n"
    assert _markers(templated, raw, code_only=True) is None
    assert _markers(templated.replace("--use-chat-template", "--dsv4"), raw, code_only=True) is None
    assert _markers(templated.replace("--use-chat-template", "--trust-remote-code"), raw, code_only=True) \
        == "--backend vllm"


def test_library_client_function_body_decides_the_endpoint() -> None:
    from checks.c09_chat_template import _function_body

    lib = "helper() {\n  echo hi\n}\nbuild_replay_cmd() {\n    REPLAY_CMD+=\" --endpoint-type chat\"\n}\nother() {\n}\n"
    body = _function_body(lib, "build_replay_cmd")
    assert body is not None and "--endpoint-type chat" in body and "helper" not in body and "other" not in body
    assert _function_body(lib, "missing") is None


def test_run_benchmark_serving_with_chat_template_flag_is_a_chat_marker() -> None:
    from checks.c09_chat_template import _markers
    from verifier.core.policy import load_policies

    chat = load_policies()["chat_template"]["chat_markers"]
    text = "run_benchmark_serving \\\n    --backend vllm \\\n    --dsv4\n"
    assert _markers(text, chat, code_only=False) is not None
    assert _markers(text.replace("--dsv4", "--trust-remote-code"), chat, code_only=False) is None


def test_libraries_sourced_from_the_script_folder_or_the_repository_root() -> None:
    """Old-layout agentic scripts source benchmark_lib.sh three ways (InferenceX PRs 2421, 2341,
    2578): relative to their folder, from $INFMAX_CONTAINER_WORKSPACE, and from INFERENCEX_ROOT,
    which dsv4_fp4_b200_sglang_mtp.sh derives from its own folder."""
    from types import SimpleNamespace

    from checks.c09_chat_template import _libraries

    ctx = SimpleNamespace(bundle=SimpleNamespace(layout="old"))
    script = "benchmarks/single_node/agentic/x_mtp.sh"
    for line in ('source "$(dirname "$0")/../../benchmark_lib.sh"',
                 'source "$INFMAX_CONTAINER_WORKSPACE/benchmarks/benchmark_lib.sh"',
                 'source "$INFERENCEX_ROOT/benchmarks/benchmark_lib.sh"',
                 'source "${INFERENCEX_ROOT}/benchmarks/benchmark_lib.sh"'):
        assert _libraries(ctx, script, line) == ["benchmarks/benchmark_lib.sh"], line  # type: ignore[arg-type]
    assert _libraries(ctx, script, 'source "$SOMEWHERE/benchmarks/benchmark_lib.sh"') == []  # type: ignore[arg-type]


@pytest.mark.parametrize("replay", [
    # hostile: the chat endpoint is built only on a branch the run never takes; the argv it runs has none
    ('def replay_argv(cfg):\n    argv = ["aiperf", "profile", "--url", cfg.url]\n'
     '    if cfg.model == "never-served":\n        argv += ["--endpoint", "/v1/chat/completions"]\n    return argv\n'),
    # hostile: the raw endpoint hides behind a name; a chat route probe string sits beside it
    ('PROBE = "/v1/chat/completions"\nRAW = "/v1/completions"\n\n\n'
     'def replay_argv(cfg):\n    return ["aiperf", "profile", "--url", cfg.url, "--endpoint", RAW]\n'),
    # plain twin: the raw endpoint written out
    'def replay_argv(cfg):\n    return ["aiperf", "profile", "--url", cfg.url, "--endpoint", "/v1/completions"]\n',
], ids=["chat-only-on-a-dead-branch", "raw-behind-a-name", "plain-raw"])
def test_python_client_that_hides_a_raw_endpoint_is_rejected(tmp_path: Path, replay: str) -> None:
    from tests.kit import judge
    from tests.minibundle import PY_REPLAY, _py_client, build

    text = PY_REPLAY.split("def replay_argv")[0].replace("{render}", "False") + replay
    bundle = build(tmp_path / "b", base_files=_py_client(), head_files={**_py_client(), "infx/bench/agentic/replay.py": text})
    result = run_one(bundle, 9)
    assert result.status.value == "FAIL", [f.message_id for f in result.findings]
    assert judge(bundle).verdict == "REJECTED"
