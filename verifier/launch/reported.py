"""Evidence scoping: a launch that cannot be resolved is reported once, by Check 18.

Check 18 (Recipe/image/sweep consistency) owns "this point does not generate a launch": it names the
file, line and construct. The content checks (8, 9, 11, 13, 17) judge the points whose launches
resolve and list the others with `reported_by_check18`, so one root cause yields one FAIL row
instead of five. Because Check 18 FAILs whenever any head launch is unresolved, such a PR can never
be APPROVED: scoping moves the report, it never lets a point pass unjudged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from verifier.core.results import FileEvidence, Finding, finding
from verifier.launch import LaunchError

MAX_POINTS = 4
MESSAGE_ID = "launch-reported-by-check18"


def reported_by_check18(errors: Iterable[LaunchError],
                        skip: Callable[[LaunchError], bool] | None = None) -> list[Finding]:
    """One finding per config key whose points have no launch (those this check would judge)."""
    by_key: dict[str, list[LaunchError]] = {}
    for error in errors:
        if skip is not None and skip(error):
            continue
        by_key.setdefault(error.key, []).append(error)
    out: list[Finding] = []
    for key, errs in by_key.items():
        first = errs[0]
        labels = list(dict.fromkeys(e.exp_name or e.key for e in errs))
        where = f"{first.file}:{first.line}" if first.line else first.file
        out.append(finding(MESSAGE_ID, FileEvidence(path=first.file, line=first.line), key=key,
                           points=labels[:MAX_POINTS], more=max(0, len(labels) - MAX_POINTS), count=len(labels),
                           where=where))
    return out


def is_scoping_note(item: Finding) -> bool:
    """True for the findings `reported_by_check18` makes."""
    return item.message_id == MESSAGE_ID
