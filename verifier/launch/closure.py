"""The executed closure of a point: every file its launch and its run execute or read, and why.

A run's artifacts (result.json, eval results, server logs) are only as trustworthy as the files that
produced them. Those files are found from trusted roots, never from a path denylist:

* the workflows that run a point (`policies/ci.yaml` `result_producers.closure.workflows`, plus the
  benchmark workflows the launch policies name) as the BASE tree defines them, and every file their
  `run:` steps and local `uses:` name (scripts, result and eval writers, `python3 -m` packages);
* the runner script of every cluster the point's runner label covers (`runners/launch_<cluster>.sh`),
  the libraries it sources, the scripts and injectors it runs (the golden-AL injector beside it),
  the folders it copies or mounts, the Python modules those import (parsed with `ast`, never run);
* the launch itself (`verifier.launch.launches`, on each side): its recipe, the lane's shared block,
  the launch scripts and libraries the static shell reader followed (`Launch.files`), the scripts a
  recipe's command keys run (the benchmark client, `benchmark.command`) and its setup scripts;
* the files every launch runs whatever the bundle holds (policy `closure.always`: the golden-AL
  injector and the runner library), listed even when the bundle does not hold them.

Harness files (workflow, runner, libraries, injectors, clients, result writers, Python modules, data
the harness reads) are found from the BASE tree: a PR that changes any of them changes how its own
run's evidence was produced. Launch files are found on each side (the head is what the PR's run
executed) and are read by launch resolution (`modelled`); a recipe's command keys are constructs the
recipe model does not cover unless they are a plain `bash|sh|python3 [-m] <file>` call.

`point_closures(ctx)` returns a `PointClosure` per affected point and side, each `Member` naming its
role and the file and line that brought it in. No path is skipped for where it sits (tests/, docs/):
membership comes from what names the file, never from its folder.
"""

from __future__ import annotations

import ast
import hashlib
import posixpath
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from verifier.configs import master_entries, points
from verifier.configs.points import Point, launch_policy
from verifier.core import processcache, shellwords
from verifier.core.context import CheckContext
from verifier.core.errors import InputError, VerifierError
from verifier.core.layout import repo_relative
from verifier.core.model import Tree

# Roles, and whether a change to a member of that role rewrites how the run's evidence is produced.
PRODUCER_ROLES = frozenset({"workflow", "action", "runner", "library", "injector", "result-writer", "client",
                            "python-module", "script", "mount", "data"})
LAUNCH_ROLES = frozenset({"recipe", "shared-block", "launch-script", "setup-script"})
# The harness around a launch: a file of these roles that names the golden-AL injector runs it.
HARNESS_ROLES = frozenset({"workflow", "action", "runner", "library"})

_SHELL_EXT = (".sh", ".bash")
_FILE_EXT = (".sh", ".bash", ".py", ".yaml", ".yml", ".json", ".jinja", ".j2", ".toml", ".cfg", ".txt", ".patch",
             ".diff", ".jsonl", ".csv", ".conf", ".ini")
_TOKEN = re.compile(r"""[^\s'"`;|&()<>=]+""")
# `$(dirname "${BASH_SOURCE[0]}")`, `$(dirname "$0")`, `${BASH_SOURCE%/*}` and friends: the script's folder.
_SCRIPT_DIR = re.compile(r"""\$\(\s*dirname\s+["']?\$\{?(?:BASH_SOURCE(?:\[0\])?|0)\}?["']?\s*\)"""
                         r"""|\$\{BASH_SOURCE(?:\[0\])?%/\*\}|\$\{0%/\*\}""")
# `python3 -m pkg.mod`: the tree's own package runs (also how recorders choose the packages to record)
PYTHON_MODULE = re.compile(r"\bpython[0-9.]*\s+(?:-[A-Za-z]+\s+)*-m\s+([A-Za-z_][\w.]*)")
# a package's test modules (pytest's discovery names): never imported by what a launch runs
_TEST_MODULE = re.compile(r"(?:^|/)(?:tests?/.*|test_[^/]*\.py|[^/]*_test\.py|conftest\.py)$")
_WORKFLOW_CALL = re.compile(r"^\./(\.github/workflows/[\w./-]+\.ya?ml)$")
_MAX_MEMBERS = 20000  # a hostile tree cannot make the closure unbounded (linear in the files it names)


@dataclass(frozen=True, eq=False, repr=False)
class Member:
    """One file (or folder) of a point's executed closure."""

    path: str  # repository path; a folder ends with "/"
    role: str  # workflow | action | runner | library | injector | result-writer | client | python-module |
    #            script | mount | data | recipe | shared-block | launch-script | setup-script
    why: str  # how it is reached, e.g. "runs `bash ./runners/launch_${RUNNER_NAME%%_*}.sh`"
    via: str | None = None  # the file that names it (None: a root)
    line: int | None = None
    side: str = "base"  # the tree whose files named it
    modelled: bool = False  # launch resolution reads the whole file (a recipe, a followed launch script)

    @property
    def folder(self) -> bool:
        """A folder member covers every file below it."""
        return self.path.endswith("/")

    @property
    def producer(self) -> bool:
        """A change to this member rewrites how the run's evidence is produced."""
        return self.role in PRODUCER_ROLES

    def covers(self, path: str) -> bool:
        """True when this member is the path or a folder holding it."""
        return path == self.path or (self.folder and path.startswith(self.path))


@dataclass(frozen=True, eq=False, repr=False)
class Construct:
    """A construct of a launch file no model covers (a recipe command that is not a plain file call)."""

    path: str
    line: int | None
    text: str
    side: str


@dataclass(eq=False, repr=False)
class PointClosure:
    """The executed closure of one point on one side."""

    key: str
    exp_name: str
    side: str
    members: list[Member] = field(default_factory=list)
    constructs: list[Construct] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def member(self, path: str) -> Member | None:
        """The first member covering the path (a file before a folder), else None."""
        exact = next((m for m in self.members if m.path == path), None)
        return exact or next((m for m in self.members if m.covers(path)), None)

    @property
    def harness_injects(self) -> bool:
        """True when a harness file (workflow, action, runner, library) of this closure names the
        golden-AL injector: the trusted runner injects the golden AL into the recipe at run time
        (InferenceX's `inject_synthetic_acceptance "$CONFIG_FILE"` before `srtctl apply`)."""
        return _injects(self.members)

    def paths(self, role: str | None = None) -> list[str]:
        """Member paths, in order (of one role when given)."""
        return [m.path for m in self.members if role is None or m.role == role]


def _injects(members: Iterable[Member]) -> bool:
    """True when a harness member (workflow, action, runner, library) names the golden-AL injector."""
    members = list(members)
    roles = {m.path: m.role for m in members}
    return any(m.role == "injector" and m.via is not None and roles.get(m.via) in HARNESS_ROLES for m in members)


def head_harness_injects(ctx: CheckContext, point: Point) -> bool:
    """True when the head tree's harness of the point (what the PR's own run executes) still names the
    golden-AL injector: a PR that drops the injection from a runner it edits must not pass on the
    base runner's injection."""
    members, _ = _harness(ctx, point, "head")
    return _injects(members)


def _conf(ctx: CheckContext) -> Mapping[str, Any]:
    return ctx.policy("ci")["result_producers"].get("closure") or {}


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every statement of a module, nested bodies included, in `ast.walk`'s order, without
    descending into expressions (an import is a statement; walking every expression node costs ten
    times as much)."""
    queue: deque[ast.AST] = deque([tree])
    while queue:
        node = queue.popleft()
        for name in node._fields:
            children = getattr(node, name, None)
            if isinstance(children, list):
                queue.extend(c for c in children if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)))
        if isinstance(node, ast.stmt):
            yield node


# An import statement of a Python file: (module, level, imported names, line); `module` is None
# for `import a, b` (the names are the modules) and "" for `from . import a`.
_Import = tuple[str | None, int, tuple[str, ...], int | None]
_IMPORTS: dict[bytes, tuple[_Import, ...] | None] = {}  # by the text's digest (the texts are not kept)
_IMPORTS_MAX = 1024
_UNPARSED = object()
processcache.register("launch.python-imports", _IMPORTS.clear)


def _imports(text: str) -> tuple[_Import, ...] | None:
    """The import statements of a Python file in `_statements` order (None: it does not parse).

    Parsed once per text: the closures of a bundle scan the same modules for every point and in
    both trees, and parsing costs far more than following the imports."""
    key = hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()
    got = _IMPORTS.get(key, _UNPARSED)
    if got is not _UNPARSED:
        return got  # type: ignore[return-value]
    try:
        tree = ast.parse(text)
    except MemoryError:
        return None  # not remembered: another try may have the memory
    except (SyntaxError, ValueError, RecursionError):
        out: tuple[_Import, ...] | None = None
    else:
        found: list[_Import] = []
        for node in _statements(tree):
            if isinstance(node, ast.Import):
                found.append((None, 0, tuple(a.name for a in node.names), getattr(node, "lineno", None)))
            elif isinstance(node, ast.ImportFrom):
                found.append((node.module or "", node.level or 0, tuple(a.name for a in node.names),
                              getattr(node, "lineno", None)))
        out = tuple(found)
    if len(_IMPORTS) >= _IMPORTS_MAX:
        _IMPORTS.pop(next(iter(_IMPORTS)))
    _IMPORTS[key] = out
    return out


class _Collector:
    """Walks references from roots over both trees (base first), one visit per file."""

    def __init__(self, ctx: CheckContext, side: str, harness: bool) -> None:
        self.ctx = ctx
        self.side = side
        self.harness = harness
        self.layout = ctx.bundle.layout
        # the harness is read from one tree (the base's is the trusted one; the head's is what the PR's
        # own run executes); launch files of the head fall back to the base for what the PR leaves alone
        self.trees: tuple[Tree, ...] = ((ctx.bundle.head,) if side == "head" else (ctx.bundle.base,)) if harness \
            else ((ctx.bundle.head, ctx.bundle.base) if side == "head" else (ctx.bundle.base,))
        conf = _conf(ctx)
        self.roots = tuple(str(r).rstrip("/") + "/" for r in conf.get("workspace-roots") or ())
        self.modelled = [re.compile(p) for p in conf.get("modelled") or ()]
        self.members: dict[str, Member] = {}
        self.constructs: list[Construct] = []

    # -- paths -------------------------------------------------------------------------------------------
    def read(self, path: str) -> str | None:
        for tree in self.trees:
            raw = tree.read(path)
            if raw is not None:
                return raw.decode("utf-8", "replace")
        return None

    def has_under(self, folder: str) -> bool:
        return any(next(tree.paths(folder), None) is not None for tree in (self.ctx.bundle.base, self.ctx.bundle.head))

    def exists(self, path: str) -> bool:
        return any(tree.has(path) for tree in (self.ctx.bundle.base, self.ctx.bundle.head))

    def resolve(self, raw: str, here: str) -> str | None:
        """A path written in `here` as a repository path (None: outside the checkout or run-time)."""
        text = _SCRIPT_DIR.sub(posixpath.dirname(here) or ".", raw)
        for prefix in ("${GITHUB_WORKSPACE}/", "$GITHUB_WORKSPACE/", "${INFMAX_WORKSPACE}/", "$INFMAX_WORKSPACE/",
                       *self.roots):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        else:
            if text.startswith("/"):
                return None
        if "$" in text or "://" in text or "*" in text or not text:
            return None
        text = posixpath.normpath(text)
        if text.startswith("..") or text in (".", "/"):
            return None
        # written relative to the InferenceX root (the runner's working directory) or to the repository
        candidates = dict.fromkeys([repo_relative(text, self.layout), text])
        for candidate in candidates:
            if self.exists(candidate) or self.has_under(candidate.rstrip("/") + "/"):
                return candidate
        return next(iter(candidates))

    def is_modelled(self, path: str) -> bool:
        from verifier.core.layout import short_path

        return any(rx.search(short_path(path)) for rx in self.modelled)

    # -- members -----------------------------------------------------------------------------------------
    def add(self, path: str, role: str, why: str, via: str | None, line: int | None,
            modelled: bool = False) -> bool:
        """Record a member; False when it was already there (or the closure is full)."""
        if path in self.members or len(self.members) >= _MAX_MEMBERS:
            return False
        if self.is_modelled(path) and role not in LAUNCH_ROLES:
            # a document a model reads whole (master config, recipe): judged by the checks, not a producer
            role, modelled = "recipe", True
        self.members[path] = Member(path, role, why, via, line, self.side, modelled)
        return True

    def follow(self, path: str, role: str, why: str, via: str | None, line: int | None) -> None:
        """Add a file and everything it names."""
        if not self.add(path, role, why, via, line):
            return
        if path.endswith("/"):
            return
        text = self.read(path)
        if text is None:
            return
        if path.endswith(_SHELL_EXT) or role in ("runner", "library"):
            self.scan_shell(text, path)
        elif path.endswith(".py"):
            self.scan_python(text, path, "injector" if role == "injector" else "python-module")

    def follow_module(self, module: str, via: str, line: int | None) -> None:
        """`python3 -m a.b`: the top-level package folder (any module of it may be imported)."""
        top = module.split(".", 1)[0]
        for base in dict.fromkeys([repo_relative(top, self.layout), top]):
            if self.has_under(base + "/") or self.exists(base + ".py"):
                folder = base + "/" if self.has_under(base + "/") else base + ".py"
                self.follow(folder, "python-module", f"runs `python3 -m {module}`", via, line)
                for path in self._package_files(base + "/"):
                    self.follow(path, "python-module", f"module of the `{top}` package", folder, None)
                return
        # not in the bundle: the package still belongs to the closure (a change to it is in a tree)
        self.follow(repo_relative(top, self.layout) + "/", "python-module", f"runs `python3 -m {module}`", via, line)

    def _package_files(self, folder: str) -> list[str]:
        """The package's modules a run may import: its tests are not (the folder member still covers
        them, so a change to one is in the closure)."""
        out: dict[str, None] = {}
        for tree in (self.ctx.bundle.base, self.ctx.bundle.head):
            for path in tree.paths(folder):
                if path.endswith(".py") and not _TEST_MODULE.search(path):
                    out[path] = None
        return list(out)

    # -- readers -----------------------------------------------------------------------------------------
    def scan_shell(self, text: str, path: str, line_offset: int = 0, role_sh: str = "library") -> None:
        """Files a shell text names (never run): scripts, sourced libraries, Python files, data, folders."""
        here = posixpath.dirname(path) or "."
        for n, raw_line in enumerate(text.splitlines(), 1 + line_offset):
            line = raw_line.split(" #", 1)[0] if not raw_line.lstrip().startswith("#") else ""
            if not line.strip():
                continue
            line = _SCRIPT_DIR.sub(lambda _m: here, line)  # the script's own folder, before tokenizing
            for m in PYTHON_MODULE.finditer(line):
                self.follow_module(m.group(1), path, n)
            for token in _TOKEN.findall(line):
                self._token(token, path, n, role_sh)

    def _token(self, token: str, path: str, line: int, role_sh: str) -> None:
        has_ext = token.endswith(_FILE_EXT)
        rooted = _SCRIPT_DIR.search(token) is not None or token.startswith(
            ("$GITHUB_WORKSPACE/", "${GITHUB_WORKSPACE}/", "$INFMAX_WORKSPACE/", "${INFMAX_WORKSPACE}/", *self.roots))
        if not has_ext and not rooted and "/" not in token:
            return
        target = self.resolve(token, path)
        if target is None:
            return
        if target.endswith(_FILE_EXT):
            if not (self.exists(target) or has_ext):
                return
            if target.endswith(_SHELL_EXT):
                self.follow(target, role_sh, f"named by {path}:{line}", path, line)
            elif target.endswith(".py"):
                name = posixpath.basename(target)
                role = "injector" if "inject" in name else ("result-writer" if self.harness and
                                                            path.startswith(".github/") else "script")
                self.follow(target, role, f"named by {path}:{line}", path, line)
            else:
                self.follow(target, "data", f"read by {path}:{line}", path, line)
        elif rooted and self.has_under(target.rstrip("/") + "/"):
            folder = target.rstrip("/") + "/"
            self.add(folder, "mount", f"copied or mounted by {path}:{line}", path, line)

    def scan_python(self, text: str, path: str, role: str = "python-module") -> None:
        """Local modules a Python file imports (parsed, never run); an injector's modules are the injector."""
        imports = _imports(text)
        if imports is None:
            return  # the file stays a member; what it would import cannot be read
        here = posixpath.dirname(path)
        for module, level, aliases, lineno in imports:
            names: list[str] = []
            if module is None:
                names = list(aliases)
            else:
                base = module
                if level:
                    parent = here
                    for _ in range(level - 1):
                        parent = posixpath.dirname(parent)
                    rel = parent + "/" + base.replace(".", "/") if base else parent
                    for candidate in (rel + ".py", rel + "/__init__.py", *(rel + "/" + a + ".py" for a in aliases)):
                        if self.exists(candidate):
                            self.follow(candidate, role, f"imported by {path}:{lineno}", path, lineno)
                    continue
                names = [base, *(f"{base}.{a}" for a in aliases)]
            for name in names:
                self._import(name, here, path, lineno, role)

    def _import(self, name: str, here: str, path: str, line: int | None, role: str) -> None:
        rel = name.replace(".", "/")
        for root in dict.fromkeys([here, repo_relative("", self.layout).rstrip("/"), ""]):
            prefix = root + "/" if root else ""
            for candidate in (prefix + rel + ".py", prefix + rel + "/__init__.py"):
                if self.exists(candidate):
                    self.follow(candidate, role, f"imported by {path}:{line}", path, line)
                    return

    def scan_workflow(self, path: str, why: str, via: str | None = None) -> None:
        """A workflow: its local actions, called workflows and every file its `run:` steps name."""
        if not self.add(path, "workflow", why, via, None):
            return
        text = self.read(path)
        if text is None:
            return
        from verifier.launch.recipes.files import parsed_doc

        try:
            doc = parsed_doc(self.ctx, text, path)  # the closures of every point read the workflows
        except (InputError, ValueError, RecursionError):
            # unreadable as YAML: every file its text names still belongs to the closure
            self.scan_shell(text, path, role_sh="script")
            return
        jobs = doc.data.get("jobs") if isinstance(doc.data, dict) else None
        for job_name, job in (jobs.items() if isinstance(jobs, dict) else ()):
            if not isinstance(job, dict):
                continue
            uses = job.get("uses")
            if isinstance(uses, str) and (m := _WORKFLOW_CALL.match(uses)):
                self.scan_workflow(m.group(1), f"called by {path} job {job_name}", path)
            steps = job.get("steps")
            for index, step in enumerate(steps if isinstance(steps, list) else ()):
                if not isinstance(step, dict):
                    continue
                uses = step.get("uses")
                if isinstance(uses, str) and uses.startswith("./"):
                    folder = posixpath.normpath(uses[2:])
                    line = doc.line("jobs", job_name, "steps", index, "uses")
                    for name in ("action.yml", "action.yaml"):
                        if self.exists(f"{folder}/{name}"):
                            self.follow(f"{folder}/{name}", "action", f"used by {path}:{line}", path, line)
                    self.add(folder + "/", "action", f"used by {path}:{line}", path, line)
                    for tree_path in self._files_under(folder + "/"):
                        self.follow(tree_path, "action", f"part of the action {folder}", path, line)
                run = step.get("run")
                if isinstance(run, str):
                    line = doc.line("jobs", job_name, "steps", index, "run") or 0
                    self.scan_shell(run, path, line_offset=line, role_sh="script")

    def _files_under(self, folder: str) -> list[str]:
        out: dict[str, None] = {}
        for tree in (self.ctx.bundle.base, self.ctx.bundle.head):
            out.update(dict.fromkeys(tree.paths(folder)))
        return list(out)

    def recipe_commands(self, path: str, data: Any, lines: Mapping[Any, int], keys: Iterable[str]) -> None:
        """The scripts a recipe's command keys run; a command that is not a plain file call is a construct."""
        wanted = {str(k) for k in keys}
        for where, value in _walk(data, ()):
            if not where or str(where[-1]) not in wanted or not isinstance(value, str) or not value.strip():
                continue
            line = lines.get(where)
            key = str(where[-1])
            if "setup" in key and "/" not in value.strip() and " " not in value.strip():
                continue  # a bare setup-script name: the launch policy's setup folder (verifier.launch.scope)
            target = _plain_call(value)
            if target is None:
                self.constructs.append(Construct(path, line, f"{'.'.join(map(str, where))}: {value.strip()}",
                                                 self.side))
                continue
            kind, name = target
            if kind == "module":
                self.follow_module(name, path, line)
                continue
            resolved = self.resolve(name, path)
            if resolved is None:
                self.constructs.append(Construct(path, line, f"{'.'.join(map(str, where))}: {value.strip()}",
                                                 self.side))
                continue
            role = "setup-script" if "setup" in key else "client"
            if role == "setup-script":
                self.add(resolved, role, f"{key} of {path}:{line}", path, line)
            else:
                self.follow(resolved, role, f"{key} of {path}:{line}", path, line)


def _walk(node: Any, path: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], Any]]:
    stack: list[tuple[tuple[Any, ...], Any]] = [(path, node)]
    while stack:
        where, value = stack.pop()
        yield where, value
        if isinstance(value, dict):
            stack.extend(((*where, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*where, i), v) for i, v in reversed(list(enumerate(value))))


def _plain_call(command: str) -> tuple[str, str] | None:
    """("file", path) or ("module", name) for `[bash|sh|python3] [-m] <file|module> [args]`, else None."""
    if any(ch in command for ch in ";|&`<>\n") or "$(" in command:
        return None
    try:
        words = shellwords.split(command)
    except ValueError:
        return None
    if not words:
        return None
    if words[0] in ("bash", "sh"):
        words = words[1:]
    elif re.fullmatch(r"python[0-9.]*", words[0]):
        words = words[1:]
        if words[:1] == ["-m"] and len(words) > 1:
            return ("module", words[1]) if re.fullmatch(r"[A-Za-z_][\w.]*", words[1]) else None
    if not words or words[0].startswith("-"):
        return None
    return ("file", words[0]) if "/" in words[0] or words[0].endswith(_FILE_EXT) else None


def _clusters(ctx: CheckContext, point: Point) -> list[str]:
    """The runner clusters of a point's label (machine names up to their first underscore)."""
    from verifier.configs.runners import runners

    label = point.runner or ""
    machines: list[Any] = []
    # the base's label, else the one the PR declares (the run's matrix reads the PR's runners file; the
    # runner scripts its machines name are still read from the tree being judged)
    for side in ("base", "head"):
        try:
            machines = list(runners(ctx, side).labels.get(label) or [])
        except InputError:
            machines = []
        if machines:
            break
    clusters = sorted({str(m).split("_", 1)[0] for m in machines if m})
    return clusters or ([label.removeprefix("cluster:").split("_", 1)[0]] if label else [])


def _harness(ctx: CheckContext, point: Point, side: str = "base") -> tuple[list[Member], list[Construct]]:
    """Harness members of a point, from the base tree (the trusted one), or from the head (what the
    PR's own run executes; Check 11 asks both). Memoized per runner label, lane and side."""
    lane = "multi" if point.multinode else "single"

    def compute() -> tuple[list[Member], list[Construct]]:
        conf = _conf(ctx)
        col = _Collector(ctx, side, harness=True)
        launch = launch_policy(ctx)
        roots: list[str] = [str(w) for w in conf.get("workflows") or ()]
        single = str((launch.get("legacy-script") or {}).get("workflow") or "")
        multi = str(conf.get("multinode-workflow") or "")
        roots.append(multi if point.multinode else single)
        for path in dict.fromkeys(p for p in roots if p):
            col.scan_workflow(path, "runs the sweep" if path in conf.get("workflows", ()) else
                              f"runs the {lane}-node benchmark job")
        template = str(conf.get("runner") or "runners/launch_{cluster}.sh")
        for cluster in _clusters(ctx, point):
            runner = repo_relative(template.format(cluster=cluster), ctx.bundle.layout)
            col.follow(runner, "runner", f"the runner of cluster {cluster} (`{template}`)", None, None)
        for path, role in (conf.get("always") or {}).items():
            target = repo_relative(str(path), ctx.bundle.layout)
            if target.endswith("/"):
                col.add(target, str(role), "run by every launch's runner (policy ci result_producers.closure.always)",
                        None, None)
                for tree_path in col._files_under(target):
                    col.follow(tree_path, str(role), f"part of {target}", target, None)
            else:
                col.follow(target, str(role), "run by every launch's runner (policy ci result_producers.closure.always)",
                           None, None)
        return list(col.members.values()), col.constructs

    return ctx.memo(f"closure.harness.{side}.{point.runner}.{lane}", compute)  # type: ignore[no-any-return]


def _launch_members(ctx: CheckContext, side: str, point: Point, launched: list[Any]) -> _Collector:
    """Launch members of a point on one side: recipe, shared block, followed scripts, command targets."""
    from verifier.launch.recipes.files import shared_block_path

    col = _Collector(ctx, side, harness=False)
    lane = "multi" if point.multinode else "single"
    block = shared_block_path(ctx, point.scenario, lane) if point.srt_recipe is not None else None
    recipes: dict[str, None] = {}
    for ref in (point.srt_recipe, point.eval_srt_recipe):
        if ref is not None:
            recipes[ref.path] = None
    if block:
        col.add(block, "shared-block", f"the {point.scenario} {lane}-node shared recipe block", None, None, True)
    for path in recipes:
        col.add(path, "recipe", f"srt-recipe of {point.exp_name} ({point.file}:{point.line})", point.file,
                point.line, True)
    for launch in launched:
        for name in launch.files:
            if "@" in name and ":" in name:
                continue  # a file fetched from another repository (verifier.launch.files)
            if name == launch.recipe_path:
                role = "recipe"
            elif name == block:
                role = "shared-block"
            elif name.endswith((".yaml", ".yml")):
                role = "recipe"
            else:
                role = "launch-script"
            col.add(name, role, f"run by the {launch.kind} launch of {point.exp_name}", None, None, True)
    # what the recipes run: command keys (the benchmark client) and setup scripts (once per recipe and side:
    # many points share a recipe, and the cost stays linear in the recipes, not points x recipe size)
    for path in [*(p for p in (block,) if p), *recipes]:
        members, found = _recipe_part(ctx, side, path)
        for member in members:
            col.members.setdefault(member.path, member)
        col.constructs.extend(found)
    return col


def _recipe_part(ctx: CheckContext, side: str, path: str) -> tuple[list[Member], list[Construct]]:
    """What one recipe's command keys and setup scripts bring into the closure. Memoized."""
    from verifier.launch.recipes.files import recipe_doc
    from verifier.launch.scope import SETUP_KEYS, setup_script_path

    def compute() -> tuple[list[Member], list[Construct]]:
        col = _Collector(ctx, side, harness=False)
        try:
            doc = recipe_doc(ctx, side, path)
        except InputError as exc:
            # no model reads a recipe that is not YAML: what it runs is unknown
            return [], [Construct(path, None, f"not readable as YAML ({exc.reason})", side)]
        if doc is None:
            return [], []
        col.recipe_commands(path, doc.data, doc.lines, _conf(ctx).get("command-keys") or ("command",))
        for where, line in doc.lines.items():
            if where and where[-1] in SETUP_KEYS:
                value = doc.get(*where)
                if isinstance(value, str) and value.strip():
                    target = setup_script_path(value, ctx.bundle.layout)
                    col.add(target, "setup-script", f"{where[-1]} of {path}:{line}", path, line)
        return list(col.members.values()), col.constructs

    return ctx.memo(f"closure.recipe.{side}.{path}", compute)  # type: ignore[no-any-return]


def _compute(ctx: CheckContext, side: str) -> list[PointClosure]:
    from verifier.launch import launches
    from verifier.launch.affected import submitted_entries

    out: list[PointClosure] = []
    try:
        keys = list(submitted_entries(ctx))
    except InputError as exc:  # named once, on the head side
        return [PointClosure("", "", "head", problems=[f"{exc.path}: {exc.reason}"])] if side == "head" else []
    try:
        entries = master_entries(ctx, side)
        side_keys = [k for k in keys if k in entries]
        launched = launches(ctx, side, side_keys) if side_keys else None
    except InputError as exc:
        return [PointClosure("", "", side, problems=[f"{exc.path}: {exc.reason}"])]
    for key in side_keys:
        for point in points(ctx, side, key):
            harness, constructs = _harness(ctx, point)
            mine = launched.by_exp_name(point.exp_name) if launched is not None else []
            col = _launch_members(ctx, side, point, [x for x in mine if x.key == key])
            members = list(col.members.values())
            seen = {m.path for m in members}
            members.extend(m for m in harness if m.path not in seen)
            out.append(PointClosure(key, point.exp_name, side, members, [*col.constructs, *constructs]))
    return out


def harness_files(ctx: CheckContext) -> set[str]:
    """The harness files (workflow, action, runner, library) of every submitted point's closure, read
    from the base tree: what a recorder holds so that a check can read what the harness runs (the
    golden-AL injection of Check 11). Cheap: no launch is resolved."""
    from verifier.launch.affected import submitted_entries

    try:
        keys = list(submitted_entries(ctx))
        entries = master_entries(ctx, "head")
    except (VerifierError, ValueError, LookupError):
        return set()  # an unreadable master config is recorded as it is: Check 18 names it
    out: set[str] = set()
    for key in keys:
        try:
            if key not in entries:
                continue
            for point in points(ctx, "head", key):
                members, _ = _harness(ctx, point)
                out.update(m.path for m in members if m.role in HARNESS_ROLES and not m.folder)
        except (VerifierError, ValueError, LookupError):
            continue  # an entry that cannot be read has no points to run
    return out


def point_closures(ctx: CheckContext, side: str | None = None) -> list[PointClosure]:
    """The executed closure of every affected point on one side, or on each (base first; see module
    docstring). Memoized per side: a check that reads the head's closures resolves no base launch."""
    if side is None:
        return [*point_closures(ctx, "base"), *point_closures(ctx, "head")]
    return ctx.memo(f"closure.points.{side}", lambda: _compute(ctx, side))  # type: ignore[no-any-return]


@dataclass(frozen=True, eq=False, repr=False)
class Hit:
    """A changed path inside the closure: the member it falls in and the points it reaches."""

    path: str
    member: Member
    keys: tuple[str, ...]


def changed_members(ctx: CheckContext, keys: Iterable[str] | None = None) -> list[Hit]:
    """Changed paths (either side of a rename) that fall in the closure of the given keys' points.

    One index over the members (files by path, folders by prefix), so the cost is linear in the
    members plus the changed files times the folders (a handful).
    """
    wanted = None if keys is None else set(keys)
    files: dict[str, tuple[Member, dict[str, None]]] = {}
    folders: dict[str, tuple[Member, dict[str, None]]] = {}
    for closure in point_closures(ctx):
        if wanted is not None and closure.key not in wanted:
            continue
        for member in closure.members:
            index = folders if member.folder else files
            have = index.get(member.path)
            if have is None or (member.producer and not have[0].producer):
                # a producer member wins over a launch member (its change rewrites the evidence)
                index[member.path] = (member, have[1] if have else {})
            index[member.path][1][closure.key] = None
    out: dict[str, Hit] = {}
    for path in changed_paths(ctx):
        if path not in out:
            found = files.get(path) or next((v for k, v in folders.items() if path.startswith(k)), None)
            if found is not None:
                out[path] = Hit(path, found[0], tuple(found[1]))
    return list(out.values())


def changed_paths(ctx: CheckContext) -> list[str]:
    """Every path the PR changes: both sides of each listed file, and any change the trees prove that
    the list leaves out (a different file on both sides, a file only the head holds), so a hidden edit
    to a closure file still counts (Check 0 reports the list itself)."""
    def compute() -> list[str]:
        bundle = ctx.bundle
        out: dict[str, None] = {}
        for f in bundle.pr.files:
            out.update(dict.fromkeys(p for p in (f.path, f.previous_path) if p))
        base, head = bundle.base.files, bundle.head.files
        for path, data in head.items():
            if path not in out and base.get(path) != data:
                out[path] = None
        return list(out)

    return ctx.memo("closure.changed_paths", compute)  # type: ignore[no-any-return]


def constructs(ctx: CheckContext, keys: Iterable[str] | None = None) -> list[Construct]:
    """Uncovered constructs in changed launch files of the given keys' points (head side)."""
    wanted = None if keys is None else set(keys)
    changed = {p for p in changed_paths(ctx) if ctx.bundle.head.has(p)}
    out: dict[tuple[str, int | None, str], Construct] = {}
    for closure in point_closures(ctx, "head"):
        if wanted is not None and closure.key not in wanted:
            continue
        for c in closure.constructs:
            if c.path in changed:
                out.setdefault((c.path, c.line, c.text), c)
    return list(out.values())
