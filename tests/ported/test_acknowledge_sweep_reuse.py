"""InferenceX's reuse-command acknowledgement expectations, ported as facts against verifier.facts.ci.reuse_command
(the decision Check 4 renders).

Source: SemiAnalysisAI/InferenceX `inferencex-e2e/infx/tests/workflows/test_acknowledge_sweep_reuse.py`
at 954a9aa600417289c6967f4cd96a3e9279a09c77. Ported: acceptance of `/reuse-sweep-run`,
`/reuse-sweep-run <id>` and `/use <id>` with or without `full-sweep-enabled`; a pinned source that
concluded failure or cancelled stays accepted; the rejection reasons (unauthorized association,
bad syntax, another workflow, not completed, a head outside the PR's commits, no or expired result
artifact, the reuse-incompatible modifier label, the run unreadable, a bare command with no
successful run, a number on the next line); unrelated comments are not commands. Not ported: the
reaction bookkeeping (redelivery, edits during validation), which has no counterpart in a verdict,
and "PR not open", because closed and draft PRs are not verified at all (see the report).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.kit import CASES
from verifier.core.bundle import read_bundle
from verifier.core.context import CheckContext
from verifier.core.model import Artifact, Bundle, Comment
from verifier.core.policy import load_policies
from verifier.facts import ci

BUNDLE = read_bundle(CASES / "pr4524-approved")
POLICIES = load_policies()
RUN = 40739166138
COMMAND = next(c for c in BUNDLE.comments if f"/use {RUN}" in c.body)


def _variant(body: str | None = None, association: str | None = None, labels: tuple[str, ...] | None = None,
             run: Callable[[Any], Any] | None = None, drop_run: bool = False) -> Bundle:
    comment = COMMAND.model_copy(update={k: v for k, v in
                                         {"body": body, "author_association": association}.items() if v is not None})
    comments = tuple(comment if c.id == COMMAND.id else c for c in BUNDLE.comments
                     if not (c.id != COMMAND.id and ci.find_commands((c,))))
    runs = dict(BUNDLE.runs)
    if drop_run:
        runs.pop(RUN)
    elif run is not None:
        runs[RUN] = run(runs[RUN])
    pr = BUNDLE.pr if labels is None else BUNDLE.pr.model_copy(update={"labels": labels})
    return BUNDLE.model_copy(update={"comments": comments, "runs": runs, "pr": pr})


def _decide(bundle: Bundle) -> ci.ReuseCommand:
    return ci.reuse_command(CheckContext(bundle, POLICIES))


def _run(**changes: Any) -> Callable[[Any], Any]:
    return lambda r: r.model_copy(update=changes)


@pytest.mark.parametrize("body", ["/reuse-sweep-run", f"/reuse-sweep-run {RUN}", f"/use {RUN}"])
@pytest.mark.parametrize("labels", [(), ("full-sweep-enabled",)], ids=["no-label", "full-sweep-enabled"])
def test_accepts_valid_reuse_without_full_sweep_label(body: str, labels: tuple[str, ...]) -> None:
    command = _decide(_variant(body=body, labels=labels))
    assert command.status == "valid" and command.run_id == RUN


@pytest.mark.parametrize("conclusion", ["failure", "cancelled"])
def test_explicit_partial_source_keeps_existing_acceptance(conclusion: str) -> None:
    command = _decide(_variant(run=_run(conclusion=conclusion)))
    assert command.status == "valid" and command.pinned


def _expired(r: Any) -> Any:
    return r.model_copy(update={"artifacts": tuple(a.model_copy(update={"expired": True, "files": {}})
                                                   for a in r.artifacts)})


@pytest.mark.parametrize("problem,change,expect", [
    ("unauthorized", {"association": "CONTRIBUTOR"}, ("absent", None)),
    ("syntax", {"body": "/use nope"}, ("absent", None)),
    ("workflow", {"run": _run(path=".github/workflows/other.yml")}, ("invalid", "workflow")),
    ("running", {"run": _run(status="in_progress")}, ("invalid", "status")),
    ("orphan", {"run": _run(head_sha="d" * 40)}, ("invalid", "commit")),
    ("empty", {"run": _run(artifacts=(Artifact(name="run-stats"),))}, ("invalid", "artifact")),
    ("expired", {"run": _expired}, ("invalid", "artifact")),
    ("modifier", {"labels": ("full-sweep-fail-fast", "agentx-fast")}, ("invalid", "label")),
    ("unavailable", {"drop_run": True}, ("unverifiable", None)),
    ("unpinned-failure", {"body": "/reuse-sweep-run", "run": _run(conclusion="failure")}, ("unverifiable", None)),
])
def test_rejects_invalid_requests_without_approving(problem: str, change: dict[str, Any],
                                                    expect: tuple[str, str | None]) -> None:
    command = _decide(_variant(**change))
    status, kind = expect
    assert command.status == status and command.pinned_run_id is None
    if kind is not None:
        assert kind in [k for k, _ in command.problems]
    if problem == "unauthorized":
        assert [h.ignored_because for h in command.ignored] == ["association"]


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_number_on_next_line_does_not_authorize_partial_run(newline: str) -> None:
    command = _decide(_variant(body=f"/reuse-sweep-run{newline}{RUN}", run=_run(conclusion="failure")))
    assert command.pinned_run_id is None and not command.pinned


@pytest.mark.parametrize("body", ["withdrawn", "/use", "hello", "please use /reuse-sweep-run later",
                                  "![screenshot](https://github.com/user-attachments/assets/example)",
                                  "Updated screenshot"])
def test_unrelated_or_withdrawn_comments_are_not_commands(body: str) -> None:
    assert _decide(_variant(body=body)).status == "absent"


def test_comment_model_is_the_bundle_one() -> None:
    assert isinstance(COMMAND, Comment) and COMMAND.author_association == "COLLABORATOR"
