"""The verb registry (verifier/app/commands), the legacy forms, option errors, --version and the table's terminal rules."""

from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit import CASES, PROJECT
from verifier import __version__
from verifier.app.cli import main
from verifier.app.commands import COMMANDS, by_name
from verifier.record.github.client import CONNECT_ATTEMPTS, CollectStats, RetryPolicy, Transport

PR4524 = str(CASES / "pr4524")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_verb_module_has_the_shape() -> None:
    names = [m.NAME for m in COMMANDS]
    assert len(names) == len(set(names))
    assert {"bundle", "pr", "precommit", "explain", "sglang-spec", "action"} <= set(names)
    for module in COMMANDS:
        assert isinstance(module.NAME, str) and isinstance(module.HELP, str) and module.HELP
        parser = argparse.ArgumentParser()
        module.add_arguments(parser)
        assert callable(module.run)


def test_verb_modules_import_only_the_standard_library() -> None:
    """Importing the registry (every verb) loads none of the heavy dependencies."""
    code = ("import sys, verifier.app.cli\n"
            "heavy = {'pydantic', 'jinja2', 'ruamel', 'rich', 'github', 'requests', 'jsonschema', 'torch', 'yaml'}\n"
            "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


@pytest.mark.parametrize(("legacy", "verb"), [
    (["--bundle", PR4524, "--format", "json"], ["bundle", PR4524, "--format", "json"]),
    (["--bundle", PR4524, "--only", "13", "--format", "json"], ["bundle", PR4524, "--only", "13", "--format", "json"]),
    (["--explain", "13"], ["explain", "13"]),
])
def test_legacy_and_verb_forms_print_the_same(legacy: list[str], verb: list[str],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(legacy, capsys) == _run(verb, capsys)


def test_misspelled_option_is_named_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["--bundel", "x"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == ("verify-pr: usage error: unrecognised argument --bundel, did you mean --bundle? "
                           "(see verify-pr --help)")
    code, _, err = _run(["bundle", PR4524, "--formt", "json"], capsys)
    assert code == 2 and "unrecognised argument --formt, did you mean --format?" in err and err.count("\n") == 1


def test_unknown_verb_and_abbreviations(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["bundel", PR4524], capsys)
    assert code == 2 and "unknown command or PR number 'bundel', did you mean bundle?" in err
    code, out, _ = _run(["--bundle", PR4524, "--form", "json", "--only", "0"], capsys)  # unique prefix still works
    assert code in (0, 1) and json.loads(out)["pr"] == 4524


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"verify-pr {__version__}"


def test_version_is_the_distribution_version() -> None:
    from importlib.metadata import version

    assert version("infx-verifier") == __version__


def test_every_verb_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for name in by_name():
        with pytest.raises(SystemExit) as stop:
            main([name, "--help"])
        assert stop.value.code == 0
        assert f"usage: verify-pr {name}" in capsys.readouterr().out


def _table(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str) -> str:
    for key in ("COLUMNS", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    main(["--bundle", PR4524])
    return capsys.readouterr().out


def test_table_honours_columns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # an evidence item that is one whole path is printed whole, on its own line; the rest fits
    narrow = _table(monkeypatch, capsys, COLUMNS="90").splitlines()
    assert [line for line in narrow if len(line) > 90 and not re.fullmatch(r"\s*(- )?\S+", line)] == []
    assert max(len(line) for line in _table(monkeypatch, capsys).splitlines()) == 160  # a pipe: stable width


def test_table_colour_rules(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert "\x1b[" not in _table(monkeypatch, capsys)
    forced = _table(monkeypatch, capsys, FORCE_COLOR="1")
    assert "\x1b[1;31mFAIL" in forced and "\x1b[1;32mPASS" in forced
    assert "\x1b[" not in _table(monkeypatch, capsys, FORCE_COLOR="1", NO_COLOR="")


def test_table_renders_code_spans(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    out = _table(monkeypatch, capsys)
    assert "`" not in out
    assert "nvpohanh is a listed owner" in out


def test_offline_live_path_gives_up_after_connect_attempts() -> None:
    """A refused connection is tried CONNECT_ATTEMPTS times, not the whole retry budget."""
    import requests

    sleeps: list[float] = []
    stats = CollectStats()
    transport = Transport(stats, RetryPolicy(attempts=5, base_delay=1), sleeps.append)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        with pytest.raises(Exception, match="cannot reach"):
            transport.perform("GET", f"http://127.0.0.1:{port}/x",
                              lambda: requests.get(f"http://127.0.0.1:{port}/x", timeout=5))  # type: ignore[arg-type, return-value]
    assert stats.requests == CONNECT_ATTEMPTS and sleeps == [1]


def test_offline_pr_names_the_token_and_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        code, out, err = _run(["4524", "--api-url", f"http://127.0.0.1:{port}", "-q"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cannot reach" in err and "GITHUB_TOKEN" in err and "--bundle" in err


def test_python_m_verifier_runs_the_hook(tmp_path: Path) -> None:
    path = tmp_path / "launch.sh"
    path.write_text("#!/bin/bash\nexport SGLANG_GLM_NEXTN_MOE_PTPC=1\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "verifier", "precommit", str(path)], capture_output=True, text=True,
                          cwd=PROJECT, timeout=120)
    assert done.returncode == 1 and "SGLANG_GLM_NEXTN_MOE_PTPC=1 is prohibited" in done.stdout


def test_table_text_escapes_terminal_controls() -> None:
    from verifier.render.terminal import markdown_text

    text = markdown_text("a `x\x1b[2Jy` b \u202egnp.exe **\x07bold**").plain
    # One escaping for every renderer (verifier.render.text.neutralize): controls and bidi become visible.
    assert text == "a x[U+001B][2Jy b [U+202E]gnp.exe [U+0007]bold"
