"""Record what launches read into a bundle: tree files they need and files they fetch from other repos.

Launch resolution (verifier.launch) notes every file it wanted and did not find (`LaunchSet.needs`):
a runner script or launcher library of a tree, or a recipe / setup script a runner fetches from
another repository at a ref (`git clone` + `git checkout`). `complete_bundle` resolves the affected
keys, fetches those files through the recorder's own sources, adds them to the bundle and resolves
again, until nothing new is needed, so a recorded bundle is judged offline exactly like the live
run: the same resolution decides what is read, in both.

Fetched files are recorded in `github.yaml upstream_files` (repo, the ref the runner names, the
commit it resolved to, who fetches it, and per file its blob and sha256, or `absent: true`) with the
bytes under `upstream/<owner>/<repo>/<commit>/<path>`. A ref is resolved as of the PR: a commit or a
tag as written, a branch (and `HEAD`, the default branch of a plain clone) to the newest commit of its
first-parent history no later than `when` (replay: the PR's merge commit date; record-git: the head
commit's date; live collection: the sign-off's time; `verify-pr local`: now). A repository no source
serves (a fork nobody cloned) stays unrecorded: Check 18 then names the repo, ref and path.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from verifier.core.errors import UsageError, VerifierError
from verifier.core.model import Bundle, Tree, UpstreamFile, UpstreamFiles

MAX_UPSTREAM_FILE = 4 * 1024 * 1024
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")

TreeFetch = Callable[[str, list[str]], Mapping[str, bytes]]


class UpstreamSource(Protocol):
    """Where a recorder reads other repositories from (a local clone, the GitHub API)."""

    def serves(self, repo: str) -> bool:
        """True when this source can read the repository."""

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        """The commit a ref names as of `when` (None: the ref is not found)."""

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        """(content, blob id) of a file at a commit; None when the file does not exist there."""


class GitUpstream:
    """Other repositories read from local clones (`--upstream OWNER/NAME=PATH`), through git plumbing."""

    def __init__(self, clones: Mapping[str, Any]) -> None:
        self.clones = {k.lower(): v for k, v in clones.items()}
        # (repo, commit) -> path -> (mode, type, object id): one `ls-tree -r` per commit read from, where a
        # `ls-tree` per file cost a git process each (a large PR reads hundreds of recipes of a few commits)
        self._listings: OrderedDict[tuple[str, str], dict[str, tuple[bytes, bytes, str]]] = OrderedDict()

    def serves(self, repo: str) -> bool:
        return repo.lower() in self.clones

    def _refs(self, git: Any, ref: str) -> list[str]:
        if ref == "HEAD":
            head = git.run_bytes("symbolic-ref", "-q", "HEAD", ok=(0, 1)).decode().strip()
            return [head] if head else ["HEAD"]
        return [f"refs/heads/{ref}", f"refs/remotes/origin/{ref}"]

    def resolve(self, repo: str, ref: str, when: dt.datetime) -> str | None:
        git = self.clones[repo.lower()]
        if _SHA.match(ref):
            out = git.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", ok=(0, 1))
            sha = out.decode().strip()
            return sha if _SHA.match(sha) else None
        if ref.startswith("-") or ".." in ref:
            return None
        tag = git.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"refs/tags/{ref}^{{commit}}",
                            ok=(0, 1)).decode().strip()
        if _SHA.match(tag):
            return tag
        stamp = when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name in self._refs(git, ref):
            exists = git.run_bytes("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}",
                                   ok=(0, 1)).decode().strip()
            if not _SHA.match(exists):
                continue
            out = git.run_bytes("rev-list", "-1", "--first-parent", f"--before={stamp}", exists, "--",
                                ok=(0,)).decode().strip()
            return out if _SHA.match(out) else None
        return None

    def _listing(self, repo: str, commit: str) -> dict[str, tuple[bytes, bytes, str]]:
        """path -> (mode, type, object id) of every entry of a commit's tree, directories included
        (`git ls-tree -r -t`), read once per commit (the last few kept)."""
        key = (repo.lower(), commit)
        found = self._listings.get(key)
        if found is not None:
            self._listings.move_to_end(key)
            return found
        out = self.clones[key[0]].run_bytes("ls-tree", "-r", "-t", "-z", "--full-tree", commit, ok=(0, 128))
        listing: dict[str, tuple[bytes, bytes, str]] = {}
        for record in out.split(b"\0"):
            meta, _, name = record.partition(b"\t")
            fields = meta.split()
            if len(fields) == 3:
                listing[name.decode("utf-8", "surrogateescape")] = (fields[0], fields[1], fields[2].decode())
        self._listings[key] = listing
        if len(self._listings) > 4:
            self._listings.popitem(last=False)
        return listing

    def read(self, repo: str, commit: str, path: str) -> tuple[bytes, str] | None:
        git = self.clones[repo.lower()]
        listing = self._listing(repo, commit)
        for _ in range(4):  # follow a few symlinks inside the repository
            # the file git names by this path (`./a`, `a/../b` normalized; `/a` is outside the repository,
            # and `d/` names a folder's entries, not a file)
            name = "" if path.startswith("/") or path.endswith("/") else _normalize(path)
            entry = listing.get(name) if name else None
            if entry is None:
                return None
            mode, kind, oid = entry
            if kind != b"blob":
                return None
            data = git.blobs([oid]).get(oid)
            if data is None:
                return None
            if mode == b"120000":
                target = data.decode("utf-8", "replace")
                path = str(Path(path).parent / target) if not target.startswith("/") else ""
                path = _normalize(path)
                if not path:
                    return None
                continue
            return data, oid
        return None


def _normalize(path: str) -> str:
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return ""
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def parse_upstream_options(values: Iterable[str] | None) -> dict[str, Path]:
    """`--upstream OWNER/NAME=PATH` options (repeatable) as {repo: clone path}."""
    out: dict[str, Path] = {}
    for value in values or ():
        repo, sep, path = value.partition("=")
        if not sep or not _REPO.match(repo.strip()) or not path.strip():
            raise UsageError(f"usage error: --upstream takes OWNER/NAME=PATH, got {value!r}")
        out[repo.strip()] = Path(path.strip())
    return out


def git_sources(clones: Mapping[str, Path]) -> GitUpstream:
    """A source over local clones (opened with verifier.record.git.repo.GitRepo)."""
    from verifier.record.git.repo import GitRepo

    return GitUpstream({repo: GitRepo(path) for repo, path in clones.items()})


@dataclass
class Completion:
    """What completing a bundle did: rounds, tree files and upstream files added, and notes."""

    rounds: int = 0
    tree_files: int = 0
    upstream_files: int = 0
    notes: list[str] = field(default_factory=list)
    # the pass's launches by memo key, when the completed bundle answers every question it asked
    # (verifier.core.watch): a verdict on that bundle under the same policies starts from them
    launches: dict[str, Any] = field(default_factory=dict)
    # (side, key) of the launches the pass left out (`complete_bundle`'s `defer`): the bundle may lack
    # what they read, so a verdict on it must not resolve them (`deferred_facts`)
    deferred: tuple[tuple[str, str], ...] = ()
    # the questions each pass asked of the bundle (verifier.core.watch.TreeQuestions): the launches
    # are handed on while the bundle answers all of them alike
    questions: tuple[Any, ...] = ()

    def deferred_facts(self) -> frozenset[str]:
        """The memo keys of the deferred launches (verifier.core.context.CheckContext.defer)."""
        from verifier.launch.resolve import KEY_MEMO

        return frozenset(f"{KEY_MEMO}{side}.{key}" for side, key in self.deferred)


def _may_fetch(entry: Any) -> bool:
    """Entries whose launches can read runner scripts or fetched files (multi-node or CONFIG_FILE rows)."""
    try:
        return bool(entry.get("multinode")) or "CONFIG_FILE=" in entry.text
    except (VerifierError, ValueError):
        return False


class Recorder:
    """The recorder's source during one resolution pass: files launches read are fetched on demand.

    Launch resolution asks it for every tree file it does not find (`tree`) and every file a runner
    fetches from another repository (`upstream`); what it returns is remembered and added to the
    bundle afterwards (`apply`), so the recorded bundle holds exactly what the resolution read.
    """

    def __init__(self, bundle: Bundle, tree_fetch: TreeFetch | None, upstream: UpstreamSource | None,
                 when: dt.datetime, report: Completion) -> None:
        self.tree_fetch = tree_fetch
        self.source = upstream
        self.when = when
        self.report = report
        self.trees: dict[str, dict[str, bytes]] = {"base": {}, "head": {}}
        self.missing: dict[str, set[str]] = {"base": set(), "head": set()}
        self.facts = {(u.repo.lower(), u.ref or "HEAD"): u for u in bundle.github.upstream_files}
        # what this pass adds to a repository's facts, made into them once (`_facts`): the facts as
        # they were, the files by path in the order they were last recorded, and who reads them
        # (rebuilding the facts on every file made a PR's hundreds of recipes cost their square)
        self.adding: dict[tuple[str, str], tuple[Any, dict[str, Any], list[str]]] = {}
        self.contents: dict[str, bytes] = {}
        self.resolved: dict[tuple[str, str], str | None] = {}
        self.tried: dict[tuple[str, str, str], Any] = {}

    def tree(self, side: str, path: str) -> bytes | None:
        """A file of one side's repository tree (None: the repository has no such file)."""
        if path in self.trees[side]:
            return self.trees[side][path]
        if path in self.missing[side] or self.tree_fetch is None:
            return None
        got = self.tree_fetch(side, [path]).get(path)
        if got is None:
            self.missing[side].add(path)
            return None
        self.trees[side][path] = got
        self.report.tree_files += 1
        return got

    def upstream(self, repo: str, ref: str, path: str, used_by: str, kind: str = "file") -> Any:
        """The UpstreamHit of a file another repository serves at a ref (None: no source serves it);
        `kind` (recipe, setup-script) is recorded as the file's fact, `used_by` as who reads it."""
        from verifier.core.model import UpstreamHit

        key = (repo.lower(), ref)
        if (*key, path) in self.tried:
            return self.tried[(*key, path)]
        self.tried[(*key, path)] = None
        if self.source is None or not self.source.serves(repo):
            self.report.notes.append(f"{repo}@{ref}:{path} is fetched by {used_by}; no source serves {repo} "
                                     "(not recorded)")
            return None
        if key not in self.resolved:
            try:
                self.resolved[key] = self.source.resolve(repo, ref, self.when)
            except (VerifierError, OSError) as exc:
                self.report.notes.append(f"{repo}@{ref}: cannot be resolved ({exc})")
                self.resolved[key] = None
        commit = self.resolved[key]
        if commit is None:
            self.report.notes.append(f"{repo}@{ref} is not found in its source (not recorded)")
            return None
        try:
            got = self.source.read(repo, commit, path)
        except (VerifierError, OSError) as exc:
            self.report.notes.append(f"{repo}@{commit[:12]}:{path}: cannot be read ({exc})")
            return None
        data = None
        if got is None:
            item = UpstreamFile(path=path, absent=True, facts={"kind": kind})
        else:
            data, blob = got
            if len(data) > MAX_UPSTREAM_FILE:
                self.report.notes.append(f"{repo}@{commit[:12]}:{path} is over {MAX_UPSTREAM_FILE} bytes")
                return None
            item = UpstreamFile(path=path, blob=blob, sha256=hashlib.sha256(data).hexdigest(), facts={"kind": kind})
        adding = self.adding.get(key)
        if adding is None:
            facts = self.facts.get(key) or UpstreamFiles(repo=repo, ref=ref, commit=commit)
            self.facts.setdefault(key, facts)  # where a new repository's facts stand among the others
            users = facts.used_by if isinstance(facts.used_by, tuple) else \
                ((facts.used_by,) if facts.used_by else ())
            # the recorded files by path (a recording lists each path once)
            adding = self.adding[key] = (facts, {f.path: f for f in facts.files}, list(users))
        facts, by_path, users_now = adding
        if used_by and used_by not in users_now:
            users_now.append(used_by)
        if data is not None:
            self.contents[f"{facts.repo}/{commit}/{path}"] = data
        by_path.pop(path, None)
        by_path[path] = item
        self.report.upstream_files += 1
        hit = UpstreamHit(status="absent" if data is None else "content", repo=repo, ref=ref, path=path,
                          commit=commit, data=data)
        self.tried[(*key, path)] = hit
        return hit

    def _facts(self) -> tuple[Any, ...]:
        """Every repository's facts with the files and readers this pass recorded."""
        return tuple(self.facts[key].model_copy(update={"files": tuple(self.adding[key][1].values()),
                                                         "used_by": tuple(self.adding[key][2])})
                     if key in self.adding else self.facts[key] for key in self.facts)

    def apply(self, bundle: Bundle) -> Bundle:
        """The bundle with everything fetched."""
        facts = self._facts()
        if not any(self.trees.values()) and not self.contents and facts == bundle.github.upstream_files:
            return bundle
        return _with_tree_files(bundle, self.trees).model_copy(update={
            "github": bundle.github.model_copy(update={"upstream_files": facts}),
            "upstream": {**bundle.upstream, **self.contents},
        })


def complete_bundle(
    bundle: Bundle,
    policies: Mapping[str, Any],
    *,
    tree_fetch: TreeFetch | None = None,
    upstream: UpstreamSource | None = None,
    when: dt.datetime | None = None,
    defer: Collection[str] = (),
    after: Completion | None = None,
) -> tuple[Bundle, Completion]:
    """The bundle with every file its launches read (see module docstring): one resolution pass of the
    affected keys that can read such files, with the recorder's sources answering what is missing.

    The pass watches the questions it asks of the bundle (verifier.core.watch). When the completed
    bundle answers every one of them the same way, the launches it resolved are the ones a verdict on
    the completed bundle resolves: they are handed on (`Completion.launches`) so that a verdict under
    the same policies resolves each launch once.

    `defer`: sides whose launches the pass leaves out, to be recorded only if a verdict asks for
    them: most verdicts never read a base launch (only a run's executed closure, an append-only
    comparison and Check 18's baseline do). They are listed (`Completion.deferred`); a verdict on the
    bundle is judged with them deferred (verifier.core.context.CheckContext.defer). `after`: the
    completion of an earlier pass over `bundle` that deferred some: this pass records those, starting
    from the launches that pass handed on, which are handed on again when the bundle this pass
    completes answers that pass's questions alike too."""
    from verifier.core.context import CheckContext
    from verifier.core.watch import TreeQuestions, unwatch, watch
    from verifier.launch import launches_for_key
    from verifier.launch.job import READ_TALLY, RECORDING, reads_refused
    from verifier.launch.resolve import KEY_MEMO

    report = Completion(rounds=1)
    if after is None:
        bundle = _with_harness(bundle, policies, tree_fetch, report)
        # Which keys to resolve is decided in a context of its own: those are the recorder's questions,
        # not the launches' (only the launches' are watched).
        choosing = CheckContext(bundle, policies)
        try:
            chosen = _chosen(choosing)
        except (VerifierError, ValueError, LookupError):
            return bundle, report
        finally:
            choosing.release()  # its parsed configs are not needed past the choice (see CheckContext.release)
        report.deferred = tuple((side, key) for side, key in chosen if side in defer)
        chosen = [(side, key) for side, key in chosen if side not in defer]
    else:
        chosen = list(after.deferred)
    questions = TreeQuestions()
    watched = watch(bundle, questions)
    recorder = Recorder(watched, tree_fetch, upstream, when or dt.datetime.now(dt.UTC), report)
    ctx = CheckContext(watched, policies)
    ctx.memo(RECORDING, lambda: recorder)
    if after is not None:
        ctx.seed(after.launches)
    try:
        for side, key in chosen:
            try:
                launches_for_key(ctx, side, key)
            except (VerifierError, ValueError, LookupError):
                continue
        questions.close()
        if report.deferred and tree_fetch is not None:
            _mirror(recorder, bundle, defer, tree_fetch)
        completed = unwatch(_with_python_packages(recorder.apply(watched), tree_fetch))
        report.questions = (*(after.questions if after is not None else ()), questions)
        # a pass refused a file for the bound on launch reads names the one its own order reached: a
        # verdict resolving in its own order judges afresh, as one on the saved bundle does. The
        # files the launches handed on read go on counting against the verdict's bound (READ_TALLY):
        # the verdict reads at least what one on the saved bundle reads, never less
        if all(q.hold_for(completed) for q in report.questions) and not reads_refused(ctx):
            report.launches = {name: value for name, value in ctx.memo_entries().items()
                               if name.startswith(KEY_MEMO) or name == READ_TALLY}
    finally:
        ctx.release()  # the launches handed on are kept; the rest of what the pass derived is not
    return completed, report


def _mirror(recorder: Recorder, bundle: Bundle, defer: Collection[str], tree_fetch: TreeFetch) -> None:
    """A deferred side holds the files the pass fetched for the other side, as its tree has them:
    what the PR changes is read by comparing the two trees' copies of a path, so a file recorded
    on one side only would look changed. A file the side already holds is not read again."""
    for side in defer:
        other = "head" if side == "base" else "base"
        held = (bundle.base if side == "base" else bundle.head).files
        wanted = sorted(p for p in recorder.trees[other] if p not in recorder.trees[side] and p not in held)
        if wanted:
            recorder.trees[side].update(tree_fetch(side, wanted))


def _chosen(choosing: Any) -> list[tuple[str, str]]:
    """(side, key) of the affected keys whose launches can read files the bundle lacks: fetched
    recipes, or launch files a legacy script names that were not recorded."""
    from verifier.configs import master_entries
    from verifier.launch.affected import affected_keys
    from verifier.launch.legacy_scripts import unrecorded_launch_files

    keys = list(affected_keys(choosing).keys)
    chosen: list[tuple[str, str]] = []
    for side in ("base", "head"):
        try:
            present = master_entries(choosing, side)
        except (VerifierError, ValueError, LookupError):
            continue
        for key in keys:
            # an entry that cannot be read (invalid YAML) is recorded as it is: Check 18 names it
            try:
                if key in present and (_may_fetch(present[key]) or
                                       unrecorded_launch_files(choosing, side, present[key])):
                    chosen.append((side, key))
            except (VerifierError, ValueError, LookupError):
                continue
    return chosen


MAX_PACKAGE_FILES = 400
MAX_HARNESS_ROUNDS = 4  # workflow -> runner -> library -> library


def _with_harness(bundle: Bundle, policies: Mapping[str, Any], tree_fetch: TreeFetch | None,
                  report: Completion) -> Bundle:
    """The bundle with the harness files of every submitted point's executed closure (workflows,
    runners, the libraries they source; verifier.launch.closure.harness_files): whether the trusted
    harness injects the golden AL is read there (Check 11), and a harness file the bundle lacks
    leaves that unverified. Each round reads what the files of the previous one name; both sides hold
    the same selection."""
    if tree_fetch is None:
        return bundle
    from verifier.core.context import CheckContext
    from verifier.launch.closure import harness_files

    for _ in range(MAX_HARNESS_ROUNDS):
        round_ctx = CheckContext(bundle, policies)
        try:
            wanted = harness_files(round_ctx)
        finally:
            round_ctx.release()
        trees: dict[str, dict[str, bytes]] = {}
        for side in ("base", "head"):
            tree = bundle.base if side == "base" else bundle.head
            want = sorted(p for p in wanted if p not in tree.files and (tree.listing is None or p in tree.listing))
            if want:
                trees[side] = {p: data for p, data in tree_fetch(side, want).items() if data is not None}
        if not any(trees.values()):
            break
        report.tree_files += sum(len(t) for t in trees.values())
        bundle = _with_tree_files(bundle, trees)
    return bundle


def _with_python_packages(bundle: Bundle, tree_fetch: TreeFetch | None) -> Bundle:
    """The bundle with the Python sources of every tree package its scripts and recipes run with
    `python3 -m` (InferenceX's benchmark clients, `python3 -m infx.bench ...`): Check 9 reads the client
    that actually runs (verifier.launch.python_client), so a recorded bundle holds it. Needs the
    side's tree listing; at most MAX_PACKAGE_FILES files per package and side."""
    if tree_fetch is None:
        return bundle
    from verifier.launch.closure import PYTHON_MODULE

    root = "inferencex-e2e/" if bundle.layout == "new" else ""
    trees: dict[str, dict[str, bytes]] = {}
    # the packages a file's text names, once per text: both sides hold most files alike
    named: dict[bytes, set[str]] = {}
    for side in ("base", "head"):
        tree = bundle.base if side == "base" else bundle.head
        if tree.listing is None:
            continue
        packages: set[str] = set()
        for path, data in tree.files.items():
            if path.endswith((".sh", ".bash", ".yaml", ".yml")):
                modules = named.get(data)
                if modules is None:
                    modules = named[data] = {m.group(1).split(".")[0]
                                             for m in PYTHON_MODULE.finditer(data.decode("utf-8", "replace"))}
                packages |= modules
        want: list[str] = []
        for package in sorted(packages):
            folder = f"{root}{package}/"
            found = sorted(p for p in tree.listing if p.startswith(folder) and p.endswith(".py"))
            want += [p for p in found[:MAX_PACKAGE_FILES] if p not in tree.files]
        if want:
            trees[side] = dict(tree_fetch(side, want))
    if not trees:
        return bundle
    return _with_tree_files(bundle, trees)


def _with_tree_files(bundle: Bundle, trees: Mapping[str, Mapping[str, bytes]]) -> Bundle:
    """The bundle with more files on each side (side -> path -> bytes); listings unchanged."""
    return bundle.model_copy(update={
        side: Tree(sha=tree.sha, files={**tree.files, **trees.get(side, {})}, listing=tree.listing)
        for side, tree in (("base", bundle.base), ("head", bundle.head))
    })
