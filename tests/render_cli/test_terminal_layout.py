"""`--format table` (the default) at any width: verdict first, failures in full, passing rows folded,
no path ever broken across lines, every path spelt as the repository does."""

from __future__ import annotations

import re
from functools import cache

import pytest

from tests.kit import FIXTURES
from tests.render_cli.support import PR4524, needs_cases, needs_script, verify_pr

pytestmark = [needs_script, needs_cases]

ROOT = "inferencex-e2e/"
ROW = re.compile(r"^(PASS|N/A |FAIL|WARN|SKIP)\s+(\d+)  ")
_TOKEN = re.compile(r"[^\s()]+")
_LINE_NO = re.compile(r":\d+$")


@cache

def _over_width(out: str, columns: int) -> list[str]:
    """Lines wider than the terminal, except an evidence line that is one whole token (a path, a URL, a
    job name: printed whole on its own line, so it can be copied; the terminal wraps it)."""
    return [line for line in out.splitlines() if len(line) > columns
            and not re.fullmatch(r"\s*(- )?\S+", line)]

def _repository_files() -> frozenset[str]:
    from verifier.core.bundle import read_bundle

    bundle = read_bundle(PR4524)
    return frozenset(bundle.head.files) | frozenset(bundle.base.files)


def _paths_in(line: str) -> list[str]:
    """The repository paths a line names (tokens from the repository root), punctuation and line numbers removed."""
    out = []
    for token in _TOKEN.findall(line):
        token = token.rstrip(",.;:")
        if token.startswith(ROOT):
            out.append(token)
    return out


def _whole_or_marked(token: str, files: frozenset[str]) -> bool:
    """True when `token` is a whole repository path (with its line), or one visibly shortened with `…`."""
    head, mark, tail = token.partition("…")
    if not mark:
        return _LINE_NO.sub("", token) in files
    tail = _LINE_NO.sub("", tail)
    return any(f.startswith(head) and f.endswith(tail) for f in files)


def _assert_no_path_split(out: str) -> None:
    files = _repository_files()
    lines = out.splitlines()
    for number, line in enumerate(lines, 1):
        for token in _paths_in(line):
            assert _whole_or_marked(token, files), f"line {number}: path {token!r} is broken or unknown\n{line}"
        # A layout-neutral spelling of a file the tree holds under inferencex-e2e/ is not written.
        for token in _TOKEN.findall(line):
            bare = _LINE_NO.sub("", token.rstrip(",.;:"))
            assert bare.startswith(ROOT) or ROOT + bare not in files, f"line {number}: {bare!r} lacks {ROOT}"


def test_80_columns_is_compact_and_puts_the_failure_first() -> None:
    done = verify_pr("--bundle", PR4524, "--format", "table", columns=80)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= 70, len(lines)  # was ~320 lines with the FAIL row at ~173
    assert _over_width("\n".join(lines), 80) == []
    assert lines[1].startswith("Verdict: REJECTED — 1 FAIL, 16 PASS, 2 N/A")
    fail = next(i for i, line in enumerate(lines) if line.startswith("FAIL"))
    assert fail < 10 and lines[fail].split() == ["FAIL", "13", "Draft", "precision"]
    assert fail < min(i for i, line in enumerate(lines) if ROW.match(line) and not line.startswith("FAIL"))
    # PASS and N/A rows: one line each, every check once.
    folded = [m for m in map(ROW.match, lines) if m and m.group(1) in ("PASS", "N/A ")]
    assert sorted(int(m.group(2)) for m in folded) == [i for i in range(19) if i != 13]
    assert lines[-1].startswith("Verdict: REJECTED")
    # The summary is wrapped at word boundaries: the FAIL row's words all arrive, in order.
    assert "speculative-draft-kv-cache-dtype: fp8_e4m3 in" in done.stdout
    _assert_no_path_split(done.stdout)


@pytest.mark.parametrize("columns", [40, 60, 80, 100, 119, 120, 200])
def test_no_line_is_wider_than_the_terminal_and_no_path_is_split(columns: int) -> None:
    done = verify_pr("--bundle", PR4524, columns=columns)
    assert done.returncode == 1, done.stderr
    assert _over_width(done.stdout, columns) == []
    _assert_no_path_split(done.stdout)


def test_verbose_shows_every_row_in_full_with_whole_paths() -> None:
    short = verify_pr("--bundle", PR4524, columns=80).stdout
    done = verify_pr("--bundle", PR4524, "-v", columns=80)
    assert done.returncode == 1
    assert len(done.stdout.splitlines()) > len(short.splitlines())
    lines = done.stdout.splitlines()
    heads = [m for m in map(ROW.match, lines) if m]
    assert [int(m.group(2)) for m in heads] == [13, *[i for i in range(19) if i != 13]]
    recipe = f"{ROOT}benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml:39"
    assert any(line.strip().removeprefix("- ") == recipe for line in lines)  # on its own line, whole
    assert "…" not in "".join(_paths_in(done.stdout))
    _assert_no_path_split(done.stdout)
    assert "check 13 FAIL" in done.stderr  # timings still go to stderr


def test_wide_pipe_keeps_a_table_without_borders() -> None:
    done = verify_pr("--bundle", PR4524)  # a pipe: 160 columns
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) == 160
    fail = next(i for i, line in enumerate(lines) if line.startswith("FAIL"))
    assert fail < 6 and "Draft KV-cache dtype override" in lines[fail]  # the summary beside the name
    assert not any(ch in done.stdout for ch in "│┃┏┗")
    folded = [line for line in lines if ROW.match(line) and not line.startswith("FAIL")]
    starts = {re.match(r"^\S+\s+\d+  \S.*?  +(?=\S)", line).end() for line in folded}  # type: ignore[union-attr]
    assert len(folded) == 18 and len(starts) == 1  # the folded rows' summaries start in one column
    _assert_no_path_split(done.stdout)


def test_failures_come_before_warnings() -> None:
    done = verify_pr("--bundle", FIXTURES / "c06" / "fail-fork-image", columns=80)
    lines = done.stdout.splitlines()
    statuses = [m.group(1).strip() for m in map(ROW.match, lines) if m]
    rank = {"FAIL": 0, "WARN": 1, "PASS": 2, "N/A": 2}
    assert statuses == sorted(statuses, key=rank.__getitem__)  # FAIL, then WARN, then the rest
    assert statuses.count("FAIL") > 1 and "WARN" in statuses
    assert _over_width("\n".join(lines), 80) == []


def test_json_summaries_spell_paths_from_the_repository_root() -> None:
    import json

    doc = json.loads(verify_pr("--bundle", PR4524, "--format", "json").stdout)
    files = _repository_files()
    for row in doc["checks"]:
        for lang in ("en", "zh"):
            for span in re.findall(r"`([^`]+)`", row["summary"][lang]):
                bare = _LINE_NO.sub("", span)
                assert bare.startswith(ROOT) or ROOT + bare not in files, (row["id"], lang, span)
    draft = next(row for row in doc["checks"] if row["id"] == 13)
    paths = {e["path"] for e in draft["evidence"] if e["kind"] == "file"}
    assert all(f"`{p}:" in draft["summary"]["en"] for p in paths if p.startswith(ROOT))  # as the evidence says


def test_shorten_token_keeps_the_first_directory_and_the_file() -> None:
    from verifier.render.terminal import shorten_token

    path = f"{ROOT}benchmarks/single_node/srt-slurm-recipes/minimaxm31flash/sglang/b300-fp4-mtp/agentic.yaml:39"
    head, tail = shorten_token(path, 60)
    shown = path[:head] + "…" + path[len(path) - tail:]
    assert shown == f"{ROOT}…/sglang/b300-fp4-mtp/agentic.yaml:39" and len(shown) <= 60
    url = "https://github.com/SemiAnalysisAI/InferenceX/pull/5101#issuecomment-5101000009"
    head, tail = shorten_token(url, 60)
    assert url[:head] == "https://github.com/" and head + tail + 1 <= 60
    head, tail = shorten_token("x" * 100, 30)
    assert head + tail + 1 <= 30 and head > 0 and tail > 0
