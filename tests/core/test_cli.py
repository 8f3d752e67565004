"""verify-pr's command line: exit codes, one-line errors, stdout holds only the chosen output."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.kit import CASES, FIXTURES, PROJECT, clone_bundle, edit_yaml
from verifier.app.cli import main


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_json_output_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--bundle", str(CASES / "pr4524"), "--format", "json"])
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert code in (0, 1) and doc["pr"] == 4524


def test_missing_bundle_dir_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--bundle", str(tmp_path / "nope")]) == 2
    assert "not a directory" in _one_line_error(capsys)


def test_malformed_bundle_names_file_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    edit_yaml(case / "pr.yaml", lambda d: d.__setitem__("head_sha", "51bb"))
    assert main(["--bundle", str(case), "--format", "json"]) == 2
    err = _one_line_error(capsys)
    assert "pr.yaml" in err and "head_sha" in err
    assert capsys.readouterr().out == ""


def test_alias_bomb_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(9)
    )
    (case / "github.yaml").write_text(bomb, encoding="utf-8")
    assert main(["--bundle", str(case)]) == 2
    assert "alias" in _one_line_error(capsys)


def test_non_utf8_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = clone_bundle(CASES / "pr4524", tmp_path)
    (case / "comments.yaml").write_bytes(b"- id: 1\n  body: \xff\xfe\n")
    assert main(["--bundle", str(case)]) == 2
    assert "UTF-8" in _one_line_error(capsys)


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--bundle", "x", "--only", "99"]) == 2
    assert "usage error" in _one_line_error(capsys)
    assert main([]) == 2
    assert "--bundle" in _one_line_error(capsys)


def test_explain_prints_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--explain", "0"]) == 0
    assert "Rule:" in capsys.readouterr().out


def test_table_is_default(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--bundle", str(CASES / "pr4524"), "--only", "0"])
    out = capsys.readouterr().out
    assert "CODEOWNER" in out and "Verdict:" in out


def test_console_script_runs_main_and_exits_with_its_status() -> None:
    """`verify-pr` (the console script) is `verifier.app.cli:console`: main() with the one-shot GC, same exit status."""
    scripts = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["verify-pr"] == "verifier.app.cli:console"
    done = subprocess.run([sys.executable, "-m", "verifier.app.cli", "--bundle", str(FIXTURES / "pr4524"),
                           "--format", "json"], capture_output=True, text=True, check=False, cwd=PROJECT)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["verdict"] == "REJECTED"
