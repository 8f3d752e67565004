"""Property tests over generated hostile bundles (tests/hostile/generator.py, fixed seed).

Invariants, per class:
* the CLI prints exactly one contract JSON object (rc 0/1) or exits 2 with one stderr line,
  never a traceback, never a `check-crashed` row, and its output encodes as UTF-8;
* a class that breaks a blocking rule or makes a fact unreadable is never APPROVED (no unread
  fact yields PASS on every blocking check, no crash yields APPROVED);
* nothing a PR controls reaches the comment or the terminal as a control, bidi or ANSI character;
* judged work is linear in input size: a deterministic operation count (`sys.setprofile` call
  events) at size 4N stays within a generous bound of 4x the count at size N. No wall clock.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.hostile import generator as G
from tests.kit import CASES, call_events, clone_bundle
from tests.test_fuzz_bundles import run_cli

BASE = CASES / "pr4524-approved"
FORBIDDEN = {chr(c) for c in (0x1B, 0x9B, 0x07, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068,
                              0x2069, 0x200E, 0x200F)}


def _params() -> list[Any]:
    out = []
    for cls in G.CLASSES:
        out.append(pytest.param(cls, id=cls.name))
    return out


@pytest.mark.parametrize("cls", _params())
def test_hostile_class_keeps_the_contract(tmp_path: Path, cls: G.HostileClass) -> None:
    bundle = clone_bundle(BASE, tmp_path)
    G.make(bundle, cls)
    rc, out, err, report = run_cli(["--bundle", str(bundle), "--format", "json"])
    out.encode("utf-8")  # a real stdout must be able to write it (lone surrogates could not)
    assert rc in (0, 1, 2), (rc, err)
    if rc == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "internal error" not in err and "Traceback" not in err, err
        assert out.strip() == ""
        return
    doc = G.contract_document(out)
    assert [c["id"] for c in doc["checks"]] == list(range(19))
    crashed = [c["id"] for c in doc["checks"] if "internal error" in c["summary"]["en"]]
    assert not crashed, f"{cls.name}: check-crashed rows {crashed}"
    if cls.expect == "not-approved":
        assert doc["verdict"] != "APPROVED", f"{cls.name}: false APPROVED"
    if cls.expect == "rejected":
        assert doc["verdict"] == "REJECTED", f"{cls.name}: {doc['verdict']}, a trick against the trust boundary"
    from verifier.render.markdown import render_markdown
    from verifier.render.terminal import render_table

    assert report is not None
    for fmt, text in (("markdown", render_markdown(report)), ("table", render_table(report))):
        text.encode("utf-8")
        leaked = sorted({f"U+{ord(ch):04X}" for ch in text if ch in FORBIDDEN})
        assert not leaked, f"{cls.name}: {fmt} output carries {leaked}"


def test_the_base_is_approved() -> None:
    """The generator's classes mean something only because the unmutated base is APPROVED."""
    rc, out, _, _ = run_cli(["--bundle", str(BASE), "--format", "json"])
    assert rc == 0 and G.contract_document(out)["verdict"] == "APPROVED"


# ---------------------------------------------------------------- linear work




def _assert_linear(make: Callable[[int], Callable[[], Any]], n: int, factor: int = 4, bound: float = 6.0) -> None:
    small, large = call_events(make(n)), call_events(make(n * factor))
    assert large <= bound * max(small, 50), f"work {small} at n={n}, {large} at n={n * factor}"


def _reuse(n: int) -> Callable[[], Any]:
    from verifier.core.model import Comment
    from verifier.facts import ci

    body = "\n".join([G.whitespace_comment(64)] * n) + "\n/use 123\n"
    comment = Comment(id=1, author="a", author_association="NONE", body=body,
                      created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    return lambda: ci.find_commands((comment,))


def _claims(n: int) -> Callable[[], Any]:
    from verifier.documents import claims
    body = "".join(G.unclosed_body(16) + "Conc 4 to 8 use lpm. <details>x</details><!-- y -->\n" for _ in range(n))
    return lambda: list(claims._sentences(body))


def _pages(n: int) -> Callable[[], Any]:
    from verifier.documents import upstream
    page = "".join(G.unclosed_page(8) + "<pre>python -m sglang.launch_server --tp 2</pre>\n" for _ in range(n))
    return lambda: (upstream._code_blocks(page), upstream.detail_section(page))


def _merge_bomb(n: int) -> Callable[[], Any]:
    from verifier.core.errors import InputError
    from verifier.core.yaml11 import parse_yaml11

    text = G.merge_bomb_text(n, distinct=False)

    def run() -> None:
        with contextlib.suppress(InputError):
            parse_yaml11(text, "bomb.yaml")
    return run


def _many_entries(n: int) -> Callable[[], Any]:
    from verifier.core.yaml11 import parse_yaml11

    text = G.master_entries_text((BASE / G.MASTER).read_text(encoding="utf-8"), n)
    return lambda: parse_yaml11(text, "nvidia-master.yaml")


def _evidence(n: int) -> Callable[[], Any]:
    from verifier.core.results import CheckResult, FileEvidence, Status, finding

    findings = tuple(finding("x", FileEvidence(path=f"configs/{i}.yaml", line=i), FileEvidence(path="same"))
                     for i in range(n))
    result = CheckResult(status=Status.FAIL, findings=findings)
    return lambda: result.evidence


@pytest.mark.parametrize(
    ("make", "n"),
    [
        pytest.param(_reuse, 50, id="reuse-command-whitespace"),
        pytest.param(_claims, 50, id="pr-body-claims"),
        pytest.param(_pages, 50, id="upstream-page"),
        pytest.param(_merge_bomb, 10, id="yaml11-merge-bomb"),
        pytest.param(_many_entries, 50, id="master-entries"),
        pytest.param(_evidence, 500, id="evidence-dedup"),
    ],
)
def test_judged_work_is_linear_in_input_size(make: Callable[[int], Callable[[], Any]], n: int) -> None:
    _assert_linear(make, n)


def test_merge_key_work_is_capped() -> None:
    """A merge chain whose resolved mappings grow without bound is refused by the work cap."""
    from verifier.core import yaml11
    from verifier.core.errors import InputError

    text = G.merge_bomb_text(3000)
    with pytest.raises(InputError, match="merge-key bomb"):
        yaml11.parse_yaml11(text, "bomb.yaml")
    assert call_events(_merge_bomb(3000)) < 40 * yaml11.MAX_MERGE_WORK


_COMMENT_LIMIT = 65_536  # the most characters GitHub keeps of a comment (verifier.documents.checklist.MAX_MARKDOWN_CHARS)


@pytest.mark.parametrize("text", [
    pytest.param("[" * _COMMENT_LIMIT, id="brackets-without-close"),
    pytest.param("[a](" * (_COMMENT_LIMIT // 4), id="links-without-close"),
    pytest.param("1" * _COMMENT_LIMIT, id="one-long-word"),
    pytest.param(" " * _COMMENT_LIMIT, id="blank-run"),
    pytest.param("\u00a0" * (_COMMENT_LIMIT // 2) + "- " + " " * (_COMMENT_LIMIT // 2), id="blanks-around-a-bullet"),
])
def test_checklist_text_of_the_largest_comment_is_read_in_one_pass(text: str) -> None:
    """A sign-off comment's item text is read by patterns that do not backtrack over a run: at the
    largest text a comment can hold these took from 15 s (a `[` run, a long word) to about half an
    hour (a blank run before a label) when each was tried again from every position of the run.
    Call events do not see a regular expression's steps, so this asserts the answers only: a
    regression shows as a run that does not end."""
    from verifier.documents import checklist

    assert len(set(checklist.normalize(text))) <= 1  # one word (repeated) at most
    assert checklist.negations(text) == []
    assert checklist._label_words(text, frozenset()) == set()
    assert checklist.DETAIL_HEADING.match(text) is None


_LONG = _COMMENT_LIMIT  # a file a PR adds may be larger still: these read it in one pass all the same


def _overview(text: str) -> object:
    from verifier.documents.overview import parse_overview

    return [dict(row.cells) for row in parse_overview(f"| Model | Prefix | SGLang |\n{text}", "overview.md",
                                                        ["Model", "Prefix", "SGLang"]).rows]


def _overview_cell(text: str) -> object:
    return _overview(f"|---|---|---|\n| m | p | {text} |")


def _reuse(text: str) -> object:
    from verifier.record.github.links import reuse_run_id

    return reuse_run_id([{"body": text, "author_association": "MEMBER", "created_at": 1}])


def _waiver(text: str) -> object:
    from verifier.documents.patches import waiver_sections

    return [(s.title[:3], len(s.content)) for s in waiver_sections(text)]


def _setup_commands(text: str) -> object:
    from verifier.documents.patches import commands

    found, problem = commands("setup.sh", text + "\n'")  # an unclosed quote: read line by line
    assert problem is not None
    return [c.words for c in found]


def _override_line(text: str) -> object:
    from checks.c08_architecture_hacks import RULE_ARCH, _text_findings
    from verifier.core.policy import load_policies

    policy = load_policies()["prohibited_settings"]["architecture"]
    found = _text_findings("x.sh", f"--{policy['override_args'][0]} a{text}b", policy, frozenset({RULE_ARCH}))
    return [(mid, line, params["value"][:1] + params["value"][-1:]) for mid, _path, line, params in found]


def _assigned_command(text: str) -> object:
    from verifier.launch.commands import shell_commands
    from verifier.shell.launchers import _text_may_launch

    return _text_may_launch(text, shell_commands())


def _changelog_keys(text: str) -> object:
    from verifier.configs.changelog import match_config_keys

    return match_config_keys(text, ["a" * 200])


@pytest.mark.parametrize(("read", "text", "answer"), [
    pytest.param(_overview, "\u00a0" * _LONG, [], id="overview-separator-of-blanks"),
    pytest.param(_overview_cell, "[a" * (_LONG // 2), [{"SGLang": ("[a" * (_LONG // 2),)}], id="overview-cell-of-brackets"),
    pytest.param(_overview_cell, "a" + " " * _LONG + "b", [{"SGLang": ("a" + " " * _LONG + "b",)}], id="overview-cell-of-blanks"),
    pytest.param(_reuse, " \n" * (_LONG // 2), None, id="comment-of-blank-lines"),
    pytest.param(_waiver, "[a](" * (_LONG // 4), [("", _LONG)], id="waiver-links-without-close"),
    pytest.param(_waiver, "# a" + " " * _LONG + "b", [("", 0), ("a  ", 0)], id="waiver-heading-with-a-blank-run"),
    pytest.param(_setup_commands, "x" + "\t" * _LONG + "y", [("x", "y"), ("'",)], id="setup-line-with-a-blank-run"),
    pytest.param(_override_line, " " * _LONG, [("architecture-override", 1, "a ")], id="override-value-with-a-blank-run"),
    pytest.param(_assigned_command, "\u00a0" * _LONG, False, id="assigned-command-of-blanks"),
    pytest.param(_changelog_keys, "*a" * 30 + "*b", [], id="changelog-pattern-of-many-stars"),
])
def test_pr_text_is_read_in_one_pass(read: Callable[[str], object], text: str, answer: object) -> None:
    """Text a PR or a commenter controls (a vendor overview's table, a comment, a waiver, a setup
    script's line, a scanned file's line, a command a script assigns, a changelog entry's
    config-keys pattern) is read by patterns that do not try a run again from each of its
    positions: with those, these cases took from 3 s (the comment) to over 100 s (a waiver heading,
    an assigned command) each, a waiver of unclosed links grew with the cube of its length (28 s at
    8,000 characters) and a changelog pattern exponentially with its `*`s (26 s for 8 against a key
    of 60 characters). As in the checklist test, the answers are asserted: a regression is a run
    that does not end."""
    assert read(text) == answer
