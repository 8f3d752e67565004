"""Structured check results: status, findings and typed evidence.

Checks never write sentences. A check returns a CheckResult holding Findings; each Finding is a
message id plus parameters plus evidence, and templates/ renders it in English and Chinese.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Status(StrEnum):
    """The status of one check row (OUTPUT.md)."""

    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    NA = "N/A"


class _Evidence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FileEvidence(_Evidence):
    """A file (and 1-based line) in the PR's head tree, base tree, or bundle."""

    kind: Literal["file"] = "file"
    path: str
    line: int | None = None
    text: str | None = None
    side: Literal["head", "base"] = "head"


class RunEvidence(_Evidence):
    """A GitHub Actions run (optionally one job or artifact of it)."""

    kind: Literal["run"] = "run"
    run_id: int
    url: str
    job: str | None = None
    artifact: str | None = None
    # a file inside the artifact, and its line: artifact files live in the run, not in the repository,
    # so they are linked through the run (a repository blob URL for them would not exist)
    path: str | None = None
    line: int | None = None
    text: str | None = None


class CommentEvidence(_Evidence):
    """A comment on the PR (the sign-off itself, a /use command, ...)."""

    kind: Literal["comment"] = "comment"
    id: int
    url: str
    author: str | None = None


class UrlEvidence(_Evidence):
    """An upstream page or pull request."""

    kind: Literal["url"] = "url"
    url: str
    text: str | None = None


def base_tree_evidence(repo: str, sha: str) -> UrlEvidence:
    """The base commit's whole tree on GitHub: the evidence of a file the base does not have."""
    return UrlEvidence(url=f"https://github.com/{repo}/tree/{sha}", text=f"base tree {sha[:12]}")


class MissingEvidence(_Evidence):
    """Evidence that should exist and does not: names what is missing."""

    kind: Literal["missing"] = "missing"
    what: str


Evidence = Annotated[
    FileEvidence | RunEvidence | CommentEvidence | UrlEvidence | MissingEvidence, Field(discriminator="kind")
]


class Finding(BaseModel):
    """One fact a check established: a message id, its parameters, and where it comes from."""

    model_config = ConfigDict(frozen=True)

    message_id: str
    params: dict[str, Any] = Field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()


class CheckResult(BaseModel):
    """What one check concluded."""

    model_config = ConfigDict(frozen=True)

    status: Status
    findings: tuple[Finding, ...] = ()
    name: str | None = None  # overrides the registry name when the row's name depends on the PR

    @property
    def evidence(self) -> tuple[Evidence, ...]:
        """All evidence of all findings, de-duplicated, in order."""
        # Evidence models are frozen, so hashable: a dict keeps first-seen order in linear time
        # (a list membership test made this quadratic in the number of findings).
        return tuple(dict.fromkeys(item for finding in self.findings for item in finding.evidence))


def finding(message_id: str, *evidence: Any, **params: Any) -> Finding:
    """Shorthand: Finding(message_id, params, evidence)."""
    return Finding(message_id=message_id, params=params, evidence=tuple(evidence))


def passed(*findings: Finding) -> CheckResult:
    """A PASS result with the findings that justify it."""
    return CheckResult(status=Status.PASS, findings=findings)


def failed(*findings: Finding) -> CheckResult:
    """A FAIL result."""
    return CheckResult(status=Status.FAIL, findings=findings)


def warned(*findings: Finding) -> CheckResult:
    """A WARN result (only advisory checks; the runner turns a blocking WARN into FAIL)."""
    return CheckResult(status=Status.WARN, findings=findings)


def not_applicable(*findings: Finding) -> CheckResult:
    """An N/A result: the rule does not apply to this PR."""
    return CheckResult(status=Status.NA, findings=findings)


def unverifiable(message_id: str, *evidence: Any, missing: str, **params: Any) -> CheckResult:
    """The check could not establish its facts: FAIL (the runner softens it to WARN for advisory checks).

    `message_id` is rendered by the check's templates in both languages; `missing` names the
    missing file, artifact or fact (an identifier, never translated) and becomes MissingEvidence.
    """
    items = (*evidence, MissingEvidence(what=missing))
    return CheckResult(
        status=Status.FAIL,
        findings=(Finding(message_id=message_id, params={"missing": missing, **params}, evidence=items),),
    )
