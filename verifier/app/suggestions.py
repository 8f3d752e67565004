"""Fixes a reviewer can apply: GitHub ```suggestion blocks for findings whose fix is mechanical.

`FIXES` is the one table of that knowledge: which finding (check and message id) has a fix, how the
line its evidence points at is rewritten, and the words said about it (English, then Chinese). A
rewrite is checked against the line's actual text and gives up (no suggestion) whenever the line
is not exactly the shape it knows, so a suggestion never edits more than the finding names:

* Check 13, a draft-only KV-cache dtype override (`draft-kv-*`): delete the `flag: value` line (a
  YAML key with a sibling, so the mapping stays a mapping) or the `--flag value \\` line (a
  continued command line, so the command stays one command);
* Check 13, a prohibited environment variable enabled (`prohibited-env`): set it off, to the first
  non-empty off value of policies/prohibited_settings.yaml, keeping its quoting;
* Check 6, an image that is not upstream (`image-not-upstream`): the same image name, tag and
  digest under the one upstream repository the image policy names with that name.

`plan_suggestions` turns a report into suggestions for head-side file evidence on lines the PR adds
(`added_lines` of GitHub's patch of that file), one per line. Publishing (`verifier.app.action`)
posts each as a pull-request review comment keyed by `Suggestion.key` in its marker.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from verifier.core.results import FileEvidence, Finding, Status
from verifier.engines.images import parse_image

MAX_SUGGESTIONS = 20
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class Site:
    """The line a finding's evidence points at, with its file's other lines for context."""

    lines: tuple[str, ...]
    index: int  # 0-based
    finding: Finding
    evidence: FileEvidence
    policies: Mapping[str, Any]

    @property
    def text(self) -> str:
        """The line itself."""
        return self.lines[self.index]


@dataclass(frozen=True)
class Edit:
    """The lines that replace the evidence line (none: delete it) and the words' parameters."""

    lines: tuple[str, ...]
    words: Mapping[str, str]


@dataclass(frozen=True)
class Fix:
    """One mechanical fix: the findings it applies to, the rewrite, and what the comment says."""

    check: int
    message_ids: tuple[str, ...]
    rewrite: Callable[[Site], Edit | None]
    en: str
    zh: str


@dataclass(frozen=True)
class Suggestion:
    """One suggested change on one line of the PR head."""

    check: int
    check_name: str
    message_id: str
    path: str
    line: int
    original: str
    replacement: tuple[str, ...]
    en: str
    zh: str

    @property
    def key(self) -> str:
        """Identifies the finding's fix on this line (re-runs update or skip a comment with this key)."""
        text = "\0".join((str(self.check), self.message_id, self.path, str(self.line), self.original))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def body(self, marker_prefix: str) -> str:
        """The review comment: marker, what and why in both languages, the ```suggestion block."""
        fence = "```"
        while any(fence in line for line in self.replacement):
            fence += "`"
        block = "".join(f"{line}\n" for line in self.replacement)
        return (f"{marker_prefix}-fix fix={self.key} -->\n"
                f"**Check {self.check} ({self.check_name})**: {self.en}\n\n"
                f"检查 {self.check}（{self.check_name}）：{self.zh}\n\n"
                f"{fence}suggestion\n{block}{fence}\n")


def code_span(text: str) -> str:
    """A code span for a value read from the PR (no backticks or line breaks can escape it)."""
    clean = " ".join(text.replace("`", "'").split())[:200]
    return f"`{clean}`"


def _spelled(flag: str) -> str:
    """A pattern for a flag name with `-` and `_` read alike."""
    return "[-_]".join(re.escape(part) for part in re.split(r"[-_]", flag))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _significant(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _has_sibling(lines: tuple[str, ...], index: int) -> bool:
    """True when a YAML key line has another key at its indentation in the same mapping."""
    indent = _indent(lines[index])
    for step in (-1, 1):
        i = index + step
        while 0 <= i < len(lines) and not _significant(lines[i]):
            i += step
        if 0 <= i < len(lines) and _indent(lines[i]) == indent and not lines[i].lstrip().startswith("- "):
            return True
    return False


def delete_flag_line(site: Site) -> Edit | None:
    """Delete a line that sets only the finding's flag (a YAML key with siblings, or a continued CLI line)."""
    flag = str(site.finding.params.get("flag") or "")
    if not flag:
        return None
    name = _spelled(flag.lstrip("-"))
    words = {"flag": code_span(flag.lstrip("-"))}
    if re.fullmatch(rf"\s*['\"]?{name}['\"]?\s*:\s*[^\s#]+\s*(?:#.*)?", site.text) and _has_sibling(site.lines,
                                                                                                  site.index):
        return Edit((), words)
    if re.fullmatch(rf"\s*--{name}(?:=|\s+)[^\s\\]+\s*\\", site.text):
        return Edit((), words)
    return None


def env_off(site: Site) -> Edit | None:
    """Set an enabled prohibited variable to the policy's first non-empty off value, quoting kept."""
    name = str(site.finding.params.get("flag") or "")
    policy = site.policies["prohibited_settings"]["draft_precision"]
    off_values = [str(v) for v in policy["off_values"]]
    off = next((v for v in off_values if v), None)
    if not name or off is None:
        return None
    pattern = re.compile(rf"(?P<pre>(?:^|(?<=[\s;&|'\"{{,(\[]))(?:export\s+)?[\"']?{re.escape(name)}[\"']?\s*[=:]\s*)"
                         rf"(?P<q>[\"']?)(?P<value>[^\s,;}}\])#\"']*)(?P=q)")
    changed = False

    def off_value(m: re.Match[str]) -> str:
        nonlocal changed
        if m.group("value").lower() in {v.lower() for v in off_values}:
            return m.group(0)
        changed = True
        return f"{m.group('pre')}{m.group('q')}{off}{m.group('q')}"

    new = pattern.sub(off_value, site.text)
    return Edit((new,), {"name": code_span(name), "off": code_span(off)}) if changed else None


def upstream_image(site: Site) -> Edit | None:
    """The image under the one upstream repository of the same name the policy allows."""
    raw = (site.evidence.text or "").removeprefix("image:").strip().strip("'\"")
    allowed = [str(a).lower() for a in site.finding.params.get("allowed") or ()]
    if not raw or not allowed or site.text.count(raw) != 1:
        return None
    try:
        ref = parse_image(raw)
    except Exception:
        return None
    name = ref.repository.lower().rsplit("/", 1)[-1]
    same = [a for a in allowed if a.rsplit("/", 1)[-1] == name]
    if len(same) != 1 or ref.repository.lower().removeprefix("docker.io/") == same[0]:
        return None
    new = same[0] + (f":{ref.tag}" if ref.tag else "") + (f"@{ref.digest}" if ref.digest else "")
    return Edit((site.text.replace(raw, new),), {"old": code_span(raw), "new": code_span(new)})


FIXES: tuple[Fix, ...] = (
    Fix(13, ("draft-kv-below-target", "draft-kv-below-default", "draft-kv-pool-below-target"), delete_flag_line,
        "remove the draft-only KV-cache dtype override {flag}; without it the draft's KV cache takes the "
        "framework's default.",
        "删除仅针对 draft 的 KV cache dtype 覆盖 {flag}；去掉后 draft 的 KV cache 使用框架的默认值。"),
    Fix(13, ("prohibited-env",), env_off,
        "turn {name} off ({off}): it casts the draft's NextN/MTP MoE weights to FP8 on load, which is prohibited.",
        "将 {name} 关闭（{off}）：它会在加载时把 draft 的 NextN/MTP MoE 权重转换为 FP8，这是被禁止的。"),
    Fix(6, ("image-not-upstream",), upstream_image,
        "run the upstream image {new} instead of {old} (check that the tag is published upstream).",
        "改用上游镜像 {new}，而不是 {old}（请确认该 tag 已在上游发布）。"),
)
_BY_FINDING = {(fix.check, mid): fix for fix in FIXES for mid in fix.message_ids}


def added_lines(patch: str | None) -> frozenset[int]:
    """Head-side line numbers a unified-diff patch (GitHub's `patch` of one file) adds."""
    out: set[int] = set()
    number = 0
    for line in (patch or "").split("\n"):
        m = _HUNK.match(line)
        if m:
            number = int(m.group(1))
            continue
        if not number:
            continue
        if line.startswith("+"):
            out.add(number)
            number += 1
        elif line.startswith(" "):
            number += 1
    return frozenset(out)


def plan_suggestions(report: Any, policies: Mapping[str, Any], added: Mapping[str, frozenset[int]],
                     limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
    """Suggestions for the FAIL/WARN findings of `report` that `FIXES` knows, on lines in `added`
    (repository path -> head lines the PR adds; a file missing from it gets none), one per line."""
    out: list[Suggestion] = []
    seen: set[tuple[str, int]] = set()
    head = report.bundle.head
    for row in report.rows:
        if row.status not in (Status.FAIL, Status.WARN):
            continue
        for item in row.result.findings:
            fix = _BY_FINDING.get((row.id, item.message_id))
            if fix is None:
                continue
            for ev in item.evidence:
                if not isinstance(ev, FileEvidence) or ev.side != "head" or not ev.line:
                    continue
                where = (ev.path, int(ev.line))
                if where in seen or where[1] not in added.get(ev.path, frozenset()):
                    continue
                data = head.read(ev.path)
                try:
                    lines = tuple(line.removesuffix("\r") for line in (data or b"").decode("utf-8").split("\n"))
                except UnicodeDecodeError:
                    continue
                if data is None or where[1] > len(lines):
                    continue
                edit = fix.rewrite(Site(lines, where[1] - 1, item, ev, policies))
                if edit is None:
                    continue
                seen.add(where)
                out.append(Suggestion(row.id, " ".join(row.name.split()), item.message_id, ev.path, where[1],
                                      lines[where[1] - 1], edit.lines, fix.en.format(**edit.words),
                                      fix.zh.format(**edit.words)))
                if len(out) >= limit:
                    return out
    return out
