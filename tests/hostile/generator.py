"""Hostile-input generator: seeded mutations of the public APPROVED case, one class at a time.

Each class takes a fresh copy of `cases/pr4524-approved` (a bundle the verifier APPROVES) and
makes it hostile in one way. `expect` says what the verdict may be afterwards:

* "any": the input is hostile to the parser (huge, malformed, quadratic) but breaks no rule, so
  any verdict is right as long as the contract holds (one JSON object, or rc 2 with one line);
* "not-approved": the input breaks a blocking rule or makes a fact unreadable, so APPROVED
  would be a false approval;
* "rejected": a trick against the trust boundary (issue 21's classes: the executed closure, the
  reading InferenceX's own tools make, sign-off identity, unmodelled shell): only REJECTED (or a
  refusal, rc 2) is right, never APPROVED or WARN.

Deterministic: every random choice comes from
`random.Random(seed)`.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tests.kit import edit_yaml, read_yaml

SEED = 20261201
PINNED_RUN = "40739166138"
MASTER = "tree/head/inferencex-e2e/configs/nvidia-master.yaml"
BIDI_ANSI = "\u202eevil\u202c \u2066x\u2069 \u200f \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link"

Expect = Literal["any", "not-approved", "rejected"]
Mutator = Callable[[Path, random.Random, int], None]


@dataclass(frozen=True)
class HostileClass:
    """One class of hostile input: how to make it, what the verdict may be, and its size knob."""

    name: str
    mutate: Mutator
    expect: Expect
    size: int = 0  # the size parameter at which the class is judged (0: not sized)


def _artifact_files(bundle: Path, name: str) -> list[Path]:
    return sorted((bundle / "runs" / PINNED_RUN).rglob(name))


def _add_comment(bundle: Path, body: str, author: str = "nvpohanh", association: str = "COLLABORATOR") -> None:
    def edit(comments: list[dict[str, Any]]) -> None:
        comments.append(dict(comments[-1], id=990000001, author=author, author_association=association,
                             is_bot=False, body=body))
    edit_yaml(bundle / "comments.yaml", edit)


def _set_body(bundle: Path, extra: str) -> None:
    def edit(pr: dict[str, Any]) -> None:
        pr["body"] = str(pr["body"]) + "\n" + extra
    edit_yaml(bundle / "pr.yaml", edit)


# ---------------------------------------------------------------- quadratic inputs (DoS)


def whitespace_comment(n: int) -> str:
    """A comment of whitespace runs (the reuse-command pattern backtracked over them)."""
    return "\n" * n + " \t" * n + "\n" + " " * n + "x"


def ws_comment(bundle: Path, rng: random.Random, n: int) -> None:
    _add_comment(bundle, whitespace_comment(n))


def unclosed_body(n: int) -> str:
    """PR-body text of unclosed `<details` / `<!--` openings and a long-blank rerun phrase."""
    return "<details " * n + "\n" + "<!-- " * n + "\n" + "full curve" + " " * n + "x\n"


def body_unclosed(bundle: Path, rng: random.Random, n: int) -> None:
    _set_body(bundle, unclosed_body(n))


def unclosed_page(n: int) -> str:
    """An upstream page of unclosed `<pre>` blocks, bare `<`, and a blank-run heading line."""
    return "<pre>" * n + "\n<pre>" + "<" * n + "</pre>\n" + " " * n + "additional details section x\n"


def page_unclosed(bundle: Path, rng: random.Random, n: int) -> None:
    page = sorted((bundle / "pages").iterdir())[0]
    page.write_text(page.read_text(encoding="utf-8") + unclosed_page(n), encoding="utf-8")


def signoff_unclosed(bundle: Path, rng: random.Random, n: int) -> None:
    def edit(so: dict[str, Any]) -> None:
        so["body"] = str(so["body"]) + "\n" + " " * n + "Additional detail section " + " " * n + "x\n"
    edit_yaml(bundle / "signoff.yaml", edit)


def long_line(bundle: Path, rng: random.Random, n: int) -> None:
    _add_comment(bundle, "/use " + "".join(rng.choice("0123456789 ") for _ in range(n)))


def deep_nesting(bundle: Path, rng: random.Random, n: int) -> None:
    target = _artifact_files(bundle, "result.json")[0]
    target.write_text("[" * n + "]" * n, encoding="utf-8")


def merge_bomb_text(levels: int, width: int = 4, distinct: bool = True) -> str:
    """A YAML 1.1 document whose `<<` merge keys expand exponentially (1.5 KB at 40 levels).

    With `distinct`, every level adds a key of its own (the merged result grows with the square
    of the levels); without, every level sets the same key (the result stays small).
    """
    lines = ["l0: &l0 {k0: 0, k1: 1, k2: 2, k3: 3}"]
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * width)
        key = f"x{i}" if distinct else "x"
        lines.append(f"l{i}: &l{i} {{<<: [{refs}], {key}: {i}}}")
    return "\n".join(lines) + "\n"


def merge_bomb(bundle: Path, rng: random.Random, n: int) -> None:
    master = bundle / MASTER
    bomb = merge_bomb_text(n).replace("l", "bomb-l")
    master.write_text(master.read_text(encoding="utf-8") + "\n" + bomb, encoding="utf-8")


def master_entries_text(text: str, n: int) -> str:
    """The head master config with n copies of its first entry under new keys."""
    first = text[: text.index("\n", text.index("\n") + 1)]
    entry = text[: text.index("dsv4-fp4-b200-sglang-agentic-hicache-mtp:")]
    key = first.split(":")[0]
    return text + "\n" + "".join(entry.replace(f"{key}:", f"{key}-x{i}:", 1) for i in range(n))


def many_entries(bundle: Path, rng: random.Random, n: int) -> None:
    master = bundle / MASTER
    master.write_text(master_entries_text(master.read_text(encoding="utf-8"), n), encoding="utf-8")


# ---------------------------------------------------------------- crashes without a row


def _edit_result(bundle: Path, change: Callable[[str], str]) -> None:
    target = _artifact_files(bundle, "result.json")[0]
    target.write_text(change(target.read_text(encoding="utf-8")), encoding="utf-8")


def surrogate_artifact(bundle: Path, rng: random.Random, n: int) -> None:
    target = _artifact_files(bundle, "results.json")[0]
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace('"task": "', '"task": "\\udc00', 1), encoding="utf-8")


def surrogate_result(bundle: Path, rng: random.Random, n: int) -> None:
    _edit_result(bundle, lambda t: t.replace('"image": "', '"image": "\\ud800', 1))


def non_utf8_artifact(bundle: Path, rng: random.Random, n: int) -> None:
    target = _artifact_files(bundle, "result.json")[0]
    target.write_bytes(target.read_bytes().replace(b'"', b'"\xff\xfe', 1))


def nul_artifact(bundle: Path, rng: random.Random, n: int) -> None:
    target = _artifact_files(bundle, "server.log")[0]
    target.write_bytes(target.read_bytes() + b"\x00" * 64 + b"\xed\xa0\x80\n")


def huge_int(bundle: Path, rng: random.Random, n: int) -> None:
    _edit_result(bundle, lambda t: re.sub(r'"tput_per_gpu": [0-9.]+', '"tput_per_gpu": ' + "9" * 100_000, t))


def float_overflow(bundle: Path, rng: random.Random, n: int) -> None:
    _edit_result(bundle, lambda t: re.sub(r'"p90_e2el": [0-9.]+', '"p90_e2el": 1e400', t))


def huge_yaml_int(bundle: Path, rng: random.Random, n: int) -> None:
    master = bundle / MASTER
    master.write_text(master.read_text(encoding="utf-8").replace("conc-end: 32", "conc-end: " + "9" * 400, 1),
                      encoding="utf-8")


def naive_datetimes(bundle: Path, rng: random.Random, n: int) -> None:
    # Half the times lose their zone: naive and aware times meet in every comparison.
    for name in ("comments.yaml", "signoff.yaml", "pr.yaml", f"runs/{PINNED_RUN}/run.yaml"):
        path = bundle / name
        text = path.read_text(encoding="utf-8")
        out = re.sub(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)Z", lambda m: f"'{m.group(1)}'" if rng.random() < 0.5
                     else m.group(0), text)
        path.write_text(out, encoding="utf-8")


def truncated_file(bundle: Path, rng: random.Random, n: int) -> None:
    target = _artifact_files(bundle, "results.json")[0]
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])


def truncated_master(bundle: Path, rng: random.Random, n: int) -> None:
    master = bundle / MASTER
    data = master.read_bytes()
    master.write_bytes(data[: len(data) // 3] + b"\n  image: [unclosed\n")


# ---------------------------------------------------------------- forged markers, bidi, ANSI, identity


def forged_text(bundle: Path, rng: random.Random, n: int) -> None:
    forged = ("<!-- codeowner-signoff-verify -->\n## Verdict: APPROVED\n| 13 | PASS |\n@everyone "
              + BIDI_ANSI)
    _add_comment(bundle, forged)

    def edit(pr: dict[str, Any]) -> None:
        pr["title"] = str(pr["title"]) + " " + BIDI_ANSI
    edit_yaml(bundle / "pr.yaml", edit)
    # A quoted value that a check echoes into its row: the recipe comment of the changed file.
    master = bundle / MASTER
    master.write_text(master.read_text(encoding="utf-8").replace("precision: fp4", "precision: fp4\u202e", 1),
                      encoding="utf-8")


def confusable_signer(bundle: Path, rng: random.Random, n: int) -> None:
    # KELVIN SIGN lowercases to "k": `str.lower()` used to fold it into the owner kedarpotdar-nv.
    def edit(so: dict[str, Any]) -> None:
        so["author"] = "\u212aedarpotdar-nv"
    edit_yaml(bundle / "signoff.yaml", edit)


def use_by_association(bundle: Path, rng: random.Random, n: int) -> None:
    # An OWNER association does not give write access: ispobock's recorded role is read.
    def edit(comments: list[dict[str, Any]]) -> None:
        for c in comments:
            if "/use" in str(c["body"]) and not c.get("is_bot"):
                c["author"] = "ispobock"
                c["author_association"] = "OWNER"
    edit_yaml(bundle / "comments.yaml", edit)


# ---------------------------------------------------------------- classes fixed on other branches


def ownership_unread(bundle: Path, rng: random.Random, n: int) -> None:
    # The signer's own permission cannot be read (partial API failure): not verified.
    def edit(gh: dict[str, Any]) -> None:
        gh["teams"] = {}
        gh["permissions"].pop("nvpohanh", None)
    edit_yaml(bundle / "github.yaml", edit)


def partial_api_failure(bundle: Path, rng: random.Random, n: int) -> None:
    # The baseline fact and the upstream PR could not be read.
    def edit(gh: dict[str, Any]) -> None:
        gh["upstream_prs"] = {}
        gh["pages"] = {}
    edit_yaml(bundle / "github.yaml", edit)


def truncated_listing(bundle: Path, rng: random.Random, n: int) -> None:
    # GitHub's file listing lost the master config, though both trees show it changed.
    def edit(pr: dict[str, Any]) -> None:
        pr["files"] = [f for f in pr["files"] if "nvidia-master.yaml" not in str(f.get("path", f))]
    edit_yaml(bundle / "pr.yaml", edit)


def workflow_rewrite(bundle: Path, rng: random.Random, n: int) -> None:
    # The PR edits the sweep workflow its own evidence ran on.
    rel = ".github/workflows/run-sweep.yml"
    for side, text in (("base", "name: Run Sweep\non: pull_request\n"),
                       ("head", "name: Run Sweep\non: pull_request\njobs: {fake: {runs-on: x, steps: []}}\n")):
        path = bundle / "tree" / side / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def edit(pr: dict[str, Any]) -> None:
        pr["files"] = [*pr["files"], {"path": rel, "status": "modified"}]
    edit_yaml(bundle / "pr.yaml", edit)


def head_policy_edit(bundle: Path, rng: random.Random, n: int) -> None:
    # The PR rewrites CODEOWNERS on its head side to own everything it touches.
    rel = ".github/CODEOWNERS"
    head = bundle / "tree" / "head" / rel
    base = bundle / "tree" / "base" / rel
    head.parent.mkdir(parents=True, exist_ok=True)
    head.write_text(base.read_text(encoding="utf-8") + "\n* @ispobock\n", encoding="utf-8")

    def edit(pr: dict[str, Any]) -> None:
        pr["files"] = [*pr["files"], {"path": rel, "status": "modified"}]
    edit_yaml(bundle / "pr.yaml", edit)

    def signer(so: dict[str, Any]) -> None:
        so["author"] = "ispobock"  # the PR author, owner only by the head-side CODEOWNERS
    edit_yaml(bundle / "signoff.yaml", signer)


def backdated_commit(bundle: Path, rng: random.Random, n: int) -> None:
    # A commit pushed after the sign-off whose (pusher-chosen) date precedes it becomes the head.
    def edit(pr: dict[str, Any]) -> None:
        late = "f" * 40
        pr["commits"] = [*pr["commits"], late]
        pr["head_sha"] = late
        pr["head_ref_oid"] = late
    edit_yaml(bundle / "pr.yaml", edit)


# ---------------------------------------------------------------- the trust boundary (issue 21)

ROOT = "inferencex-e2e/"
RUNNER = ROOT + "runners/launch_b300-dsxe.sh"
CLIENT = ROOT + "benchmarks/srt_agentic.sh"
KEY = "minimaxm31flash-fp4-b300-sglang-agentic-dspark"


def _tree(bundle: Path, side: str) -> dict[str, bytes]:
    root = bundle / "tree" / side
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def sync_files(bundle: Path) -> None:
    """pr.yaml `files` = the diff of the two trees (BUNDLE.md: they must agree)."""
    base, head = _tree(bundle, "base"), _tree(bundle, "head")
    files = []
    for path in sorted(base.keys() | head.keys()):
        if path not in base:
            files.append({"path": path, "status": "added"})
        elif path not in head:
            files.append({"path": path, "status": "removed"})
        elif base[path] != head[path]:
            files.append({"path": path, "status": "modified"})
    edit_yaml(bundle / "pr.yaml", lambda pr: pr.update(files=files))


def _signoff_id(bundle: Path) -> int:
    return int(read_yaml(bundle / "signoff.yaml")["id"])


def _head_file(bundle: Path, path: str, text: str) -> None:
    target = bundle / "tree" / "head" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def runner_rescales_results(bundle: Path, rng: random.Random, n: int) -> None:
    """The PR's own runner (what its pinned run executed) rewrites result.json after the benchmark."""
    scale = rng.choice(["9", "2", "1"])
    _head_file(bundle, RUNNER, "#!/usr/bin/bash\nsrtctl apply -f \"$CONFIG_FILE\"\n"
               f"sed -i 's/\"tput_per_gpu\": \\([0-9]*\\)/\"tput_per_gpu\": {scale}\\1/' outputs/*/result.json\n")
    sync_files(bundle)


def client_hides_a_flag(bundle: Path, rng: random.Random, n: int) -> None:
    """The benchmark client the launch runs, edited through an indirection the line scanners miss."""
    path = bundle / "tree" / "head" / CLIENT
    text = path.read_text(encoding="utf-8")
    name = rng.choice(["X", "CMD", "P"])
    path.write_text(text.replace("exit 1", f'{name}="ev""al"; ${name} "$(echo c2VkIC1pIHMvZnAvLyBsb2c= | base64 -d)"\nexit 1', 1),
                    encoding="utf-8")
    sync_files(bundle)


def regex_bomb(bundle: Path, rng: random.Random, n: int) -> None:
    """The benchmark client the launch runs filters a value it sets with patterns of nested repeats
    (`re`'s backtracking took minutes on 30 characters; the reader matches them in linear time)."""
    path = bundle / "tree" / "head" / CLIENT
    text = path.read_text(encoding="utf-8")
    value = "a" * rng.choice([64, 256, 4096])
    bomb = (f"PAD={value}\nPICK=$(echo \"$PAD\" | grep -E '(a+)+b' | sed -E 's/(a|aa)+c/x/')\n"
            "RX='(a|a)+b'\nif [[ $PAD =~ $RX ]]; then exit 3; fi\n")
    path.write_text(text.replace("exit 1", bomb + "exit 1", 1), encoding="utf-8")
    sync_files(bundle)


def duplicate_master_key(bundle: Path, rng: random.Random, n: int) -> None:
    """A second copy of the reviewed entry further down (the generator, PyYAML, runs the last one)."""
    master = bundle / MASTER
    text = master.read_text(encoding="utf-8")
    entry = text[text.index(f"{KEY}:"):]
    fork = rng.choice(["ghcr.io/fork/sglang:fast", "docker.io/someone/sglang:tuned"])
    copy = re.sub(r"(?m)^(  image: ).*$", lambda m: m.group(1) + fork, entry, count=1)
    master.write_text(text + "\n# tuned copy\n" + copy, encoding="utf-8")
    sync_files(bundle)


def negated_checklist_item(bundle: Path, rng: random.Random, n: int) -> None:
    """A ticked checklist item rewritten to withdraw its claim, in the sign-off and its comment copy."""
    word = rng.choice(["NOT verified: ", "Not checked: ", "N/A - skipped. "])

    def change(body: str) -> str:
        return re.sub(r"(?m)^(- \[x\] )", lambda m: m.group(1) + word, body, count=1)

    edit_yaml(bundle / "signoff.yaml", lambda d: d.__setitem__("body", change(str(d["body"]))))
    signoff = _signoff_id(bundle)

    def edit(comments: list[dict[str, Any]]) -> None:
        for c in comments:
            if c["id"] == signoff:
                c["body"] = change(str(c["body"]))
    edit_yaml(bundle / "comments.yaml", edit)


def signoff_copy_differs(bundle: Path, rng: random.Random, n: int) -> None:
    """signoff.yaml says one thing, the recorded comment with the same id another."""
    signoff = _signoff_id(bundle)

    def edit(comments: list[dict[str, Any]]) -> None:
        for c in comments:
            if c["id"] == signoff:
                c["body"] = str(c["body"]).replace("- [x]", "- [ ]", 1)
    edit_yaml(bundle / "comments.yaml", edit)


CLASSES: tuple[HostileClass, ...] = (
    HostileClass("ws-comment", ws_comment, "any", 65_536),
    HostileClass("body-unclosed", body_unclosed, "any", 20_000),
    HostileClass("page-unclosed", page_unclosed, "any", 50_000),
    HostileClass("signoff-heading-blanks", signoff_unclosed, "any", 50_000),
    HostileClass("long-line", long_line, "any", 200_000),
    HostileClass("deep-nesting", deep_nesting, "not-approved", 100_000),
    HostileClass("merge-bomb", merge_bomb, "not-approved", 40),
    HostileClass("many-entries", many_entries, "any", 300),
    HostileClass("surrogate-artifact", surrogate_artifact, "not-approved"),
    HostileClass("surrogate-result", surrogate_result, "not-approved"),
    HostileClass("non-utf8-artifact", non_utf8_artifact, "not-approved"),
    HostileClass("nul-server-log", nul_artifact, "any"),
    HostileClass("huge-int", huge_int, "not-approved"),
    HostileClass("float-overflow", float_overflow, "not-approved"),
    HostileClass("huge-yaml-int", huge_yaml_int, "not-approved"),
    HostileClass("naive-datetimes", naive_datetimes, "any"),
    HostileClass("truncated-artifact", truncated_file, "not-approved"),
    HostileClass("truncated-master", truncated_master, "not-approved"),
    HostileClass("forged-bidi-ansi", forged_text, "any"),
    HostileClass("confusable-signer", confusable_signer, "not-approved"),
    HostileClass("use-by-association", use_by_association, "not-approved"),
    HostileClass("ownership-unread", ownership_unread, "not-approved"),
    HostileClass("partial-api-failure", partial_api_failure, "not-approved"),
    HostileClass("truncated-listing", truncated_listing, "not-approved"),
    HostileClass("workflow-rewrite", workflow_rewrite, "not-approved"),
    HostileClass("head-policy-edit", head_policy_edit, "not-approved"),
    # Offline, pr.yaml head_sha is the pin our own recorder wrote, so a later commit in the list is not
    # an attack here: the contract must hold. The live attack (a pusher-chosen committer date) is
    # tests/github/test_fail_closed.py::test_backdated_commit_does_not_move_the_pin.
    HostileClass("backdated-commit", backdated_commit, "any"),
    HostileClass("runner-rescales-results", runner_rescales_results, "rejected"),
    HostileClass("client-hides-a-flag", client_hides_a_flag, "rejected"),
    HostileClass("duplicate-master-key", duplicate_master_key, "rejected"),
    HostileClass("regex-bomb", regex_bomb, "any"),
    HostileClass("negated-checklist-item", negated_checklist_item, "rejected"),
    HostileClass("signoff-copy-differs", signoff_copy_differs, "rejected"),
)


def make(bundle: Path, cls: HostileClass, seed: int = SEED) -> None:
    """Apply one class to a bundle copy, deterministically for (seed, class name)."""
    rng = random.Random(f"{seed}:{cls.name}")
    cls.mutate(bundle, rng, cls.size)


def contract_document(stdout: str) -> dict[str, Any]:
    """The one JSON object stdout must hold (raises when it is not exactly one object)."""
    decoder = json.JSONDecoder()
    doc, end = decoder.raw_decode(stdout.lstrip())
    if stdout.lstrip()[end:].strip():
        raise AssertionError("stdout holds more than one JSON object")
    if not isinstance(doc, dict):
        raise AssertionError("stdout is not a JSON object")
    return doc
