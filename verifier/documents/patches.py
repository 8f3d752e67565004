"""Engine-patch signatures in scripts, recipes and patch files, and the readings behind them (Check 10).

A patch is anything that changes the inference engine or serving stack inside the pinned image:
a `.patch` file, `git apply` / `patch`, `sed -i` or a heredoc writing into site-packages or engine
paths, an inline program that locates the engine and rewrites its files, sitecustomize hooks,
`pip install` of engine packages, wheels or git forks, and recipe setup scripts. Signatures are
data (`policies/patches.yaml`); this module only applies them to text, line by line, so every hit
names its file and 1-based line. Harness and eval dependencies are not patches.

Beyond line signatures, shell texts are read as commands (the static shell reader,
`verifier.shell.parse`; nothing is executed): `setup_script_reading` judges a setup script command by
command against the allowlist of benign operations (`setup_allowlist`), `programs_run` /
`program_of` name the repository programs a script runs so the check can follow them,
`upstream_ref_hits` names engine sources at non-release refs (`upstream_refs`), and
`python_patch_hits` reads a Python program with `ast` for monkeypatching of engine modules.
`waiver_problems` says whether a waiver's required sections (`waiver_sections`) have content.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from verifier.core import shellwords
from verifier.core.layout import short_path
from verifier.core.processcache import ByText
from verifier.core.textscan import replace_links

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip)\s+install\b(.*)", re.IGNORECASE)
_PROGRAMS = re.compile(r"\b(python3?|bash|sh|perl|ruby|node)\b")
_WRITERS = re.compile(r"\b(cat|tee)\b")


@dataclass(frozen=True)
class PatchHit:
    """One patch signature found in one file."""

    path: str
    line: int | None
    text: str
    signature: str
    side: str = "head"
    source: str = ""  # the line as written, when `text` adds what was found in it (preexisting lines compare it)

    @property
    def written(self) -> str:
        """The text to look for in another version of the file: the line as written."""
        return self.source or self.text

    @property
    def basename(self) -> str:
        """The file's base name."""
        return self.path.rsplit("/", 1)[-1]


@lru_cache(maxsize=256)
def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def is_scanned(path: str, policy: Mapping[str, Any]) -> bool:
    """True when Check 10 scans this repository path (layout-neutral patterns of the policy)."""
    rel = short_path(path)
    if any(fnmatch.fnmatch(rel, pat) for pat in policy["skip_paths"]):
        return False
    if is_patch_file(rel, policy):
        return True
    if any(fnmatch.fnmatch(rel, pat) for pat in policy.get("not_serving_stack") or ()):
        return False
    return any(fnmatch.fnmatch(rel, pat) for pat in policy["scan_paths"])


def is_patch_file(path: str, policy: Mapping[str, Any]) -> bool:
    """True for `.patch` / `.diff` files."""
    return any(path.lower().endswith(sfx) for sfx in policy["patch_file_suffixes"])


def _pip_is_harness(line: str, policy: Mapping[str, Any]) -> bool:
    match = _PIP_INSTALL.search(line)
    if match is None:
        return False
    try:
        words = shellwords.split(match.group(1).split("&&")[0].split(";")[0], comments=True)
    except ValueError:
        words = match.group(1).split()
    packages = []
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word in ("-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
                    "-f", "--find-links", "--target", "-t", "--prefix", "--root"):
            if word in ("-r", "--requirement", "-c", "--constraint"):
                return False  # a requirements file may hold anything
            skip_next = True
            continue
        if word.startswith("-"):
            continue
        packages.append(re.split(r"[<>=!~\[@ ;]", word, maxsplit=1)[0].lower())
    harness = {p.lower() for p in policy["harness_packages"]}
    return bool(packages) and all(p in harness for p in packages)


@lru_cache(maxsize=32)
def _any_signature(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One alternation of every signature: a line none of them matches is skipped at C speed (None
    when the patterns cannot be joined, e.g. a backreference, and each is tried in turn)."""
    if any(re.search(r"\\[1-9]|\(\?P=", p) for p in patterns):
        return None
    try:
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    except re.error:
        return None


def _line_hits(path: str, lines: list[str], policy: Mapping[str, Any], side: str) -> list[PatchHit]:
    hits: list[PatchHit] = []
    signatures = policy["signatures"]
    prefilter = _any_signature(tuple(signatures.values()))
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#") and not line.startswith("#!"):
            continue
        if prefilter is not None and prefilter.search(line) is None:
            continue
        for name, pattern in signatures.items():
            if _rx(pattern).search(line):
                if name == "pip-install-engine" and _pip_is_harness(line, policy):
                    continue
                if name == "git-apply" and any(t in line for t in policy.get("harness_patch_targets") or ()):
                    continue
                if name == "sitecustomize" and _patches_harness_only(line, _heredoc_body(lines, number), policy):
                    continue
                hits.append(PatchHit(path, number, line[:300], name, side))
                break
    return hits


_ENGINE_MODULES = re.compile(r"\b(sglang|vllm|tensorrt_llm|flashinfer|torch|triton|transformers)\b", re.IGNORECASE)


def _heredoc_body(lines: list[str], number: int) -> str:
    """The heredoc a 1-based line opens ("" when it opens none)."""
    match = _HEREDOC.search(lines[number - 1])
    if match is None:
        return ""
    body = []
    for line in lines[number:]:
        if line.strip() == match.group(2):
            break
        body.append(line)
    return "\n".join(body)


def heredoc_around(lines: list[str], number: int) -> list[str] | None:
    """The body lines of the heredoc that contains 1-based line `number`, or None outside one."""
    for opening, _line, body in _heredocs(lines):
        if opening < number <= opening + len(body):
            return body
    return None


def _patches_harness_only(line: str, body: str, policy: Mapping[str, Any]) -> bool:
    """True when a sitecustomize hook customizes only a harness package (lm-eval's filters, say):
    the line or its heredoc names a harness package and no engine module."""
    text = line + "\n" + body
    harness = {p.lower().replace("-", "_") for p in policy["harness_packages"]}
    names = {w.lower().replace("-", "_") for w in re.findall(r"[A-Za-z][\w-]*", text)}
    mentions_harness = bool(harness & names) or any(h in text.lower().replace("-", "_") for h in harness
                                                     if len(h) > 4)
    return mentions_harness and _ENGINE_MODULES.search(text) is None


def _heredocs(lines: list[str]) -> Iterable[tuple[int, str, list[str]]]:
    """(opening line number, opening line, body lines) for each heredoc in a shell text."""
    i = 0
    while i < len(lines):
        match = _HEREDOC.search(lines[i])
        if match is None:
            i += 1
            continue
        word = match.group(2)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != word:
            body.append(lines[j])
            j += 1
        yield i + 1, lines[i], body
        i = j + 1


def _program_rewrites(text: str, policy: Mapping[str, Any]) -> bool:
    locates = any(_rx(p).search(text) for p in policy["engine_locators"])
    writes = any(_rx(p).search(text) for p in policy["write_markers"])
    return locates and writes


def _heredoc_hits(path: str, lines: list[str], policy: Mapping[str, Any], side: str) -> list[PatchHit]:
    hits: list[PatchHit] = []
    for number, opener, body in _heredocs(lines):
        head = opener.split("<<", 1)[0]
        after = opener.split("<<", 1)[1] if "<<" in opener else ""
        text = "\n".join(body)
        if _WRITERS.search(head):
            target = (head + " " + after).split(">")[-1].strip().split(" ")[0] if ">" in opener else ""
            if any(m in target for m in policy["engine_path_markers"]) and \
                    not _patches_harness_only(opener, text, policy):
                hits.append(PatchHit(path, number, opener.strip()[:300], "heredoc-into-engine", side))
        elif _PROGRAMS.search(head) and _program_rewrites(text, policy):
            hits.append(PatchHit(path, number, opener.strip()[:300], "inline-program-rewrites-engine", side))
    return hits


def scan_text(path: str, text: str, policy: Mapping[str, Any], side: str = "head") -> list[PatchHit]:
    """Every patch signature in one file's text (a patch file is one hit at line 1)."""
    if is_patch_file(path, policy):
        first = text.split("\n", 1)[0] if text else ""
        return [PatchHit(path, 1, first[:300], "patch-file", side)]
    lines = text.split("\n")
    hits = _line_hits(path, lines, policy, side)
    seen = {(h.line, h.signature) for h in hits}
    for hit in _heredoc_hits(path, lines, policy, side):
        if (hit.line, hit.signature) not in seen and not any(h.line == hit.line for h in hits):
            hits.append(hit)
    code = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#")) if path.endswith((".sh", ".bash")) \
        else text
    if path.endswith((".py", ".sh", ".bash")) and _program_rewrites(code, policy) and not hits:
        # A program or script that locates the installed engine (sglang.__file__, site-packages, ...)
        # and writes files (`sed -i "$SITE/..."`, open(..., "w")) rewrites engine sources.
        line = next((n for n, ln in enumerate(lines, 1) if not ln.lstrip().startswith("#")
                     and any(_rx(p).search(ln) for p in policy["engine_locators"])), None)
        hits.append(PatchHit(path, line, lines[line - 1].strip()[:300] if line else "", "program-rewrites-engine", side))
    return sorted(hits, key=lambda h: (h.line or 0, h.signature))


def setup_script_hits(path: str, doc: Any, lines: Mapping[tuple[Any, ...], int] | None,
                      policy: Mapping[str, Any], side: str = "head") -> list[PatchHit]:
    """Recipe keys that run a setup script in the serving container (any depth of the document)."""
    hits: list[PatchHit] = []
    keys = set(policy["setup_keys"])

    def walk(node: Any, prefix: tuple[Any, ...]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here = (*prefix, key)
                if key in keys and value not in (None, False, ""):
                    line = (lines or {}).get(here)
                    hits.append(PatchHit(path, line, f"{key}: {value}", "setup-script", side))
                walk(value, here)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, (*prefix, i))

    walk(doc, ())
    return hits


# ---------------------------------------------------------------- commands of a shell text
#
# Setup scripts are judged command by command (an allowlist of benign operations), and every shell
# text is searched for the repository programs it runs and the engine sources it fetches. Commands
# come from the static shell reader (verifier.shell.parse: never executed); a text it cannot read is
# reported as such, never passed.

_COMMAND_SEPARATOR = re.compile(r"&&|\|\||;|\|")
_SCRIPT_DIR = re.compile(
    r"""(?:cd\s+)?"?(?:\$\(\s*)?dirname\s+"?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|\{0\}|0)"?\s*\)?"?"""
    r"""(?:\s*&&\s*pwd(?:\s+-P)?)?""")
_DIR_MARK = "\x00dir/"  # a word that starts in the running script's own folder
MAX_FOLLOWED = 64  # repository programs followed from one scope (each read once)
MAX_NESTED = 8  # command substitutions read inside one another


@dataclass(frozen=True, eq=False, repr=False)
class Command:
    """One simple command of a shell text: its words (None where a word is not a literal the reader
    can spell out), the 1-based line, its source text, and the syntax node (None on the line
    fallback)."""

    line: int
    words: tuple[str | None, ...]
    text: str
    node: Any = None


@dataclass(frozen=True, eq=False, repr=False)
class Program:
    """A repository program a script runs: its bundle path, `shell` or `python`, and the command."""

    path: str
    kind: str
    source: str
    line: int
    text: str


def _word(word: Any, dir_vars: frozenset[str] = frozenset()) -> str | None:
    """A word's text when the reader can spell it out: literal parts, and the running script's folder
    (`$(dirname "$0")`, `$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`, or a variable assigned one
    of those) as `_DIR_MARK`; None for anything computed."""
    out: list[str] = []
    for i, part in enumerate(word.parts):
        if part.kind == "lit":
            out.append(part.text)
        elif i == 0 and (part.kind == "cmd" and _SCRIPT_DIR.fullmatch(part.text.strip())
                         or part.kind == "param" and part.text in dir_vars):
            out.append(_DIR_MARK.rstrip("/"))
        else:
            return None
    return "".join(out)


def _line_text(lines: list[str], line: int) -> str:
    return lines[line - 1].strip()[:300] if 0 < line <= len(lines) else ""


def _syntax(text: str, path: str) -> Any:
    """The syntax tree of a shell text (verifier.shell.parse), or the reason it cannot be read."""
    from verifier.shell import ShellLimit, ShellSyntaxError, parse

    try:
        return parse(text, path)
    except (ShellSyntaxError, ShellLimit) as exc:
        return f"line {getattr(exc, 'line', None) or '?'}: {getattr(exc, 'message', str(exc))}"
    except RecursionError:
        return "the script nests too deeply to read"


def _dir_vars(script: Any) -> frozenset[str]:
    """Variables assigned the running script's folder."""
    from verifier.shell.nodes import Simple, iter_nodes

    names = set()
    for node in iter_nodes(script.body):
        if isinstance(node, Simple):
            for a in node.assigns:
                if a.value is not None and len(a.value.parts) == 1 and a.value.parts[0].kind == "cmd" \
                        and _SCRIPT_DIR.fullmatch(a.value.parts[0].text.strip()):
                    names.add(a.name)
    return frozenset(names)


# The commands of a shell text by its path and text: Check 10 asks for them of every file it follows
# twice (the programs it runs, its engine sources), and the other checks' scans once more.
_COMMANDS: ByText[tuple[str, str], tuple[tuple[Command, ...], str | None]] = ByText("patches.commands", 512)


def commands(path: str, text: str) -> tuple[list[Command], str | None]:
    """The simple commands of a shell text in source order, and why the reader could not read it
    (None when it could; then the commands are read line by line with shell word splitting). Read
    once per path and text; each caller gets its own list."""
    key = (path, text)
    got = _COMMANDS.get(key)
    if got is None:
        found, why = _read_commands(path, text)
        got = _COMMANDS.put(key, (tuple(found), why))
    return list(got[0]), got[1]


def _read_commands(path: str, text: str) -> tuple[list[Command], str | None]:
    """`commands`, read."""
    from verifier.shell.nodes import Simple, iter_nodes

    lines = text.split("\n")
    tree = _syntax(text, path)
    if isinstance(tree, str):
        out = []
        for number, raw in enumerate(lines, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            # split on the operators alone (blanks around one, matched by the pattern, were tried
            # again from each blank of a run: the square of its length); the pieces are stripped
            for piece in map(str.strip, _COMMAND_SEPARATOR.split(line)):
                try:
                    words = shellwords.split(piece, comments=True)
                except ValueError:
                    words = piece.split()
                if words:
                    out.append(Command(number, tuple(words), line[:300]))
        return out, tree
    dirs = _dir_vars(tree)
    found = [Command(n.line, tuple(_word(w, dirs) for w in n.words), _line_text(lines, n.line), n)
             for n in iter_nodes(tree.body) if isinstance(n, Simple)]
    return sorted(found, key=lambda c: c.line), None


# ---------------------------------------------------------------- repository programs a script runs


def _python_word(word: str | None, policy: Mapping[str, Any]) -> bool:
    return word is not None and any(re.fullmatch(p, word.rsplit("/", 1)[-1]) for p in policy["programs"]["python"])


def resolve_program(script: str, written: str, has: Any, root: str, policy: Mapping[str, Any],
                    cwd: str | None = None) -> str | None:
    """The bundle path of a program a script names: under a container mount of the repository
    (policy programs.mounts), or relative to the folder the script last `cd`s into (`cwd`, a literal
    path), the script's folder or the repository root; None when no file of the tree is that program."""
    name = written.strip()
    folder = script.rsplit("/", 1)[0] + "/" if "/" in script else ""
    if not name or name.startswith("-"):
        return None
    if name.startswith(_DIR_MARK.rstrip("/")):
        candidates = [folder + name[len(_DIR_MARK):]]
    elif name.startswith("/"):
        mounts = policy["programs"]["mounts"]
        candidates = [root + sub + name[len(mount):] for mount, sub in mounts.items() if name.startswith(mount)]
    else:
        candidates = [folder + name, root + name]
        if cwd is not None:
            candidates = [c + "/" + name for c in _cwd_folders(cwd, folder, root, policy)] + candidates
    for candidate in candidates:
        normal = posixpath.normpath(candidate)
        if not normal.startswith("..") and has(normal):
            return normal
    return None


def _cwd_folders(cwd: str, folder: str, root: str, policy: Mapping[str, Any]) -> list[str]:
    """The bundle folders a literal `cd` target may be: under a mount, or relative to the script."""
    if cwd.startswith(_DIR_MARK.rstrip("/")):
        return [posixpath.normpath(folder + cwd[len(_DIR_MARK):] or ".")]
    if cwd.startswith("/"):
        mounts = policy["programs"]["mounts"]
        return [posixpath.normpath(root + sub + cwd[len(mount):]) for mount, sub in mounts.items()
                if (cwd.rstrip("/") + "/").startswith(mount)]
    return [posixpath.normpath(folder + cwd), posixpath.normpath(root + cwd)]


def _module_program(script: str, module: str, has: Any, root: str, policy: Mapping[str, Any],
                    cwd: str | None = None) -> str | None:
    """The repository file `python -m MODULE` runs (MODULE.py or MODULE/__main__.py), if the tree holds it."""
    if not re.fullmatch(r"[A-Za-z_][\w.]*", module):
        return None
    rel = module.replace(".", "/")
    for written in (rel + ".py", rel + "/__main__.py"):
        found = resolve_program(script, written, has, root, policy, cwd)
        if found is not None:
            return found
    return None


def program_of(script: str, cmd: Command, has: Any, root: str, policy: Mapping[str, Any],
               cwd: str | None = None) -> Program | None:
    """The repository program a command runs (`python3 FILE.py`, `python3 -m MODULE`, `bash FILE`,
    `sh FILE`, `./FILE.sh`), or None."""
    words = list(cmd.words)
    if not words or words[0] is None:
        return None
    head = words[0]
    stops: tuple[str, ...]
    if _python_word(head, policy):
        kind, stops = "python", ("-c", "-")
    elif head.rsplit("/", 1)[-1] in policy["programs"]["shells"]:
        kind, stops = "shell", ("-c", "-s")
    else:
        kind, stops = "", ()
    if kind:
        # the interpreter's options, up to the program it runs (`-m MODULE` for Python); code given
        # inline (`-c`, stdin) is no repository program
        i = 1
        while i < len(words) and words[i] is not None and str(words[i]).startswith("-"):
            if kind == "python" and words[i] == "-m" and i + 1 < len(words) and words[i + 1] is not None:
                found = _module_program(script, str(words[i + 1]), has, root, policy, cwd)
                return Program(found, kind, script, cmd.line, cmd.text) if found else None
            if words[i] in stops:
                return None
            i += 1
        if i < len(words) and words[i] is not None:
            found = resolve_program(script, str(words[i]), has, root, policy, cwd)
            return Program(found, kind, script, cmd.line, cmd.text) if found else None
        return None
    if head.endswith((".sh", ".bash", ".py")):
        found = resolve_program(script, head, has, root, policy, cwd)
        if found is not None:
            return Program(found, "python" if found.endswith(".py") else "shell", script, cmd.line, cmd.text)
    return None


def _with_cwd(cmds: list[Command]) -> Iterable[tuple[Command, str | None]]:
    """Each command with the folder the script last `cd`ed into before it, in source order (a literal
    target; None before any, or after a computed one)."""
    cwd: str | None = None
    for cmd in cmds:
        yield cmd, cwd
        if cmd.words and cmd.words[0] == "cd":
            target = next((w for w in cmd.words[1:] if w is None or not w.startswith("-")), None)
            cwd = target.rstrip("/") if target else None


def programs_run(path: str, text: str, has: Any, root: str, policy: Mapping[str, Any]) -> list[Program]:
    """The repository programs a shell text runs (each once, first line)."""
    cmds, _ = commands(path, text)
    seen: dict[str, Program] = {}
    for cmd, cwd in _with_cwd(cmds):
        program = program_of(path, cmd, has, root, policy, cwd)
        if program is not None and program.path != path:
            seen.setdefault(program.path, program)
    return list(seen.values())


# ---------------------------------------------------------------- engine sources at run time


def _repo_of(url: str, patterns: Iterable[str]) -> str | None:
    """`owner/name` of a repository URL matching one of the patterns (searched, case-insensitive)."""
    match = re.search(r"github\.com[:/]+([\w.-]+/[\w.-]+?)(?:\.git)?(?:[/@#]|$)", url, re.I)
    name = match.group(1) if match else url
    return name if any(_rx(p).search(name) for p in patterns) else None


def _is_release(ref: str | None, policy: Mapping[str, Any]) -> bool:
    return ref is not None and _rx(policy["upstream_refs"]["release_ref"]).fullmatch(ref) is not None


def upstream_ref_hits(path: str, text: str, policy: Mapping[str, Any], side: str = "head") -> list[PatchHit]:
    """Commands that put an engine repository's source at a non-release ref into the serving stack:
    `git clone` (its `--branch`, else the default branch), `git fetch`, `git checkout`/`switch`/
    `reset --hard` after such a clone, `pip install git+URL@REF`; and the fetch of an unmerged pull
    request ref of any serving-stack repository (the harness whose recipes and setup scripts run in
    the container included). Each names its line and the ref (`?` when computed)."""
    rules = policy["upstream_refs"]
    engines, harness = rules["engine_repositories"], rules["harness_repositories"]
    cmds, _ = commands(path, text)
    hits: list[PatchHit] = []
    engine_clone: str | None = None
    serving_clone: str | None = None

    def hit(cmd: Command, repo: str, ref: str | None) -> None:
        hits.append(PatchHit(path, cmd.line, f"{cmd.text} [{repo}@{ref or '?'}]"[:300], "upstream-ref", side,
                             cmd.text))

    for cmd in cmds:
        words = list(cmd.words)
        if not words or words[0] is None:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if _PIP_INSTALL.search(" ".join(w or "" for w in words)):
            for w in words:
                if w and "git+" in w:
                    spec = w.split("git+", 1)[1]
                    repo = _repo_of(spec, engines)
                    ref = spec.rsplit("@", 1)[1] if "@" in spec.split("github.com", 1)[-1] else None
                    if repo and not _is_release(ref, policy):
                        hit(cmd, repo, ref or "default branch")
            continue
        if name != "git":
            continue
        rest = words[1:]
        while len(rest) >= 2 and rest[0] in ("-C", "-c"):
            rest = rest[2:]
        if not rest:
            continue
        sub, args = rest[0], rest[1:]
        plain = [a for a in args if a is None or not a.startswith("-")]
        if sub == "clone":
            url = next((a for a in args if a and ("://" in a or a.startswith("git@"))), None)
            branch: str | None = None
            for i, a in enumerate(args):
                if a in ("-b", "--branch") and i + 1 < len(args):
                    branch = args[i + 1] or "?"
                elif a and a.startswith("--branch="):
                    branch = a.split("=", 1)[1]
            if url is None:
                continue
            engine = _repo_of(url, engines)
            serving = engine or _repo_of(url, harness)
            engine_clone, serving_clone = engine, serving
            if engine and not _is_release(branch, policy):
                hit(cmd, engine, branch or "default branch")
        elif sub == "remote" and args[:1] == ["add"] and len(plain) >= 3 and plain[2]:
            engine = _repo_of(str(plain[2]), engines)
            engine_clone = engine or engine_clone
            serving_clone = engine or _repo_of(str(plain[2]), harness) or serving_clone
        elif sub == "fetch":
            url = next((a for a in plain if a and "://" in a), None)
            repo = (_repo_of(url, engines) or _repo_of(url, harness)) if url else serving_clone
            engine = _repo_of(url, engines) if url else engine_clone
            refs = plain[1:] if plain else []
            for ref in refs:
                if ref is not None and _rx(rules["pr_ref"]).search(ref) and repo:
                    hit(cmd, repo, ref)
                elif engine and not _is_release(ref, policy) and ref not in ("--tags", "--all"):
                    hit(cmd, engine, ref)
        elif sub in ("checkout", "switch") or (sub == "reset" and "--hard" in args):
            if engine_clone is None:
                continue
            refs = [a for a in plain if a != "--"]
            if "-b" in args or "-B" in args or "-c" in args:
                refs = refs[1:]
            ref = refs[-1] if refs else None
            if refs and not _is_release(ref, policy):
                hit(cmd, engine_clone, ref)
    return hits


# ---------------------------------------------------------------- setup scripts: benign operations only


def _expand_head(cmd: Command, arrays: Mapping[str, tuple[str, ...] | None]) -> tuple[str | None, ...]:
    """The command's words with a leading `"${NAME[@]}"` / `$NAME` replaced by the literal words
    every assignment of NAME gives (the reader's literal assignments; anything else stays None)."""
    words = cmd.words
    node = cmd.node
    if node is None or not words or words[0] is not None or not node.words:
        return words
    parts = node.words[0].parts
    if len(parts) != 1 or parts[0].kind != "param":
        return words
    name = re.sub(r"\[[@*]\]$", "", parts[0].text)
    values = arrays.get(name)
    return words if values is None else (*values, *words[1:])


def _literal_variables(cmds: list[Command]) -> dict[str, tuple[str, ...] | None]:
    """Variables every assignment of which is literal: name -> the words they hold together (an
    array's elements and its `+=` appends; a string split on blanks); None when any is computed or
    two string assignments differ."""
    arrays: dict[str, list[str] | None] = {}
    for cmd in cmds:
        if cmd.node is None:
            continue
        for a in cmd.node.assigns:
            held = arrays.get(a.name)
            if a.name in arrays and held is None:
                continue  # already computed
            if a.array is not None:
                items = [w.literal() for w in a.array]
                if any(i is None for i in items):
                    arrays[a.name] = None
                elif held is not None:
                    held.extend(str(i) for i in items)  # in place: n appends cost n, never n squared
                else:
                    arrays[a.name] = [str(i) for i in items]
            else:
                value = a.value.literal() if a.value is not None else ""
                words = value.split() if value is not None else None
                arrays[a.name] = None if words is None or a.append or (a.name in arrays and held != words) else words
    return {name: tuple(words) if words is not None else None for name, words in arrays.items()}


def _pip_reason(words: list[str | None], policy: Mapping[str, Any]) -> str | None:
    """Why a pip install is not benign (None: every package is allowed and pinned, every option known)."""
    allowed = policy["setup_allowlist"]["pip"]
    packages = {p.lower().replace("_", "-") for p in allowed["packages"]}
    start = next(i for i, w in enumerate(words) if w == "install") + 1
    if any(w in ("--help", "-h") for w in words[start:]):
        return None  # prints the usage and installs nothing
    found = 0
    for w in words[start:]:
        if w is None:
            return "a computed word"
        if w.startswith("-"):
            if w.split("=", 1)[0] not in allowed["options"]:
                return f"option {w}"
            continue
        match = re.fullmatch(r"([A-Za-z0-9][\w.-]*)==([\w.!+-]+)", w)
        if match is None:
            return f"{w} is not pinned with =="
        if match.group(1).lower().replace("_", "-") not in packages:
            return f"{match.group(1)} is not on the allowlist"
        found += 1
    return None if found else "no package"


def _is_pip(words: list[str | None]) -> bool:
    head = [w for w in words[:4] if w is not None]
    joined = " ".join(head)
    return bool(re.match(r"(?:\S*/)?(?:pip3?(?:\.\d+)?|uv pip|python3?(?:\.\d+)? -m pip) install\b", joined))


def _nested_reason(text: str, path: str, policy: Mapping[str, Any], functions: frozenset[str],
                   depth: int) -> str | None:
    """Why a command substitution's command is not benign (None when every command in it is)."""
    if depth > MAX_NESTED:
        return "command substitutions nest too deeply to read"
    tree = _syntax(text, path)
    if isinstance(tree, str):
        return f"$({text[:60]}) cannot be read"
    from verifier.shell.nodes import Simple, iter_nodes

    for node in iter_nodes(tree.body):
        if isinstance(node, Simple):
            cmd = Command(node.line, tuple(_word(w) for w in node.words), text[:200], node)
            reason = _command_reason(cmd, path, policy, functions, {}, depth + 1)
            if reason is not None:
                return f"$({text[:60]}): {reason}"
        else:
            reason = _compound_reason(node, path, policy, functions, depth + 1)
            if reason is not None:
                return f"$({text[:60]}): {reason}"
    return None


def _word_reason(word: Any, path: str, policy: Mapping[str, Any], functions: frozenset[str],
                 depth: int) -> str | None:
    """Why a word is not benign: a command substitution running something that is not, or an
    expansion the reader cannot see into."""
    for part in word.parts:
        if part.kind == "cmd":
            if _SCRIPT_DIR.fullmatch(part.text.strip()):
                continue
            reason = _nested_reason(part.text, path, policy, functions, depth)
            if reason is not None:
                return reason
        elif part.kind in ("param", "arith") and ("$(" in part.text or "`" in part.text):
            return f"an expansion runs a command ({part.text[:60]})"
        elif part.kind == "param" and (m := re.match(r"!?(\w+)(?:\[[^\]]*\])?:?=", part.text)) and \
                _engine_variable(m.group(1), policy):
            return f"sets {m.group(1)}, which the engine or its interpreter reads"
        elif part.kind == "param" and part.text.startswith("!"):
            return f"an indirect expansion (${{{part.text[:40]}}})"
        elif part.kind == "proc":
            return "a process substitution"
    return None


def _target_allowed(target: str | None, policy: Mapping[str, Any]) -> bool:
    if target is None or ".." in target.split("/"):
        return False  # computed, or climbing out of an allowed folder
    return any(fnmatch.fnmatch(target, p) for p in policy["setup_allowlist"]["write_targets"])


_READS = frozenset({"<", "<<", "<<-", "<<<"})


def _redirect_reason(redirects: Iterable[Any], policy: Mapping[str, Any]) -> str | None:
    for r in redirects:
        if r.heredoc is not None:
            if not r.heredoc.quoted and ("$(" in r.heredoc.body or "`" in r.heredoc.body):
                return "an unquoted heredoc runs a command substitution"
            continue
        target = r.target.literal() if r.target is not None else None
        if r.op in _READS:
            if r.op == "<<<" and r.target is not None and any(p.kind in ("cmd", "proc") for p in r.target.parts):
                return "a here-string runs a command substitution"
            continue  # reading a file or a string
        if r.op in (">&", "<&") and target is not None and re.fullmatch(r"\d+-?|-", target):
            continue  # duplicating or closing a descriptor
        if not _target_allowed(target, policy):
            return f"writes {target if target is not None else r.target.raw if r.target else '?'}"
    return None


def _node_redirect_reason(node: Any, policy: Mapping[str, Any]) -> str | None:
    return _redirect_reason(getattr(node, "redirects", ()) or (), policy)


def _compound_reason(node: Any, path: str, policy: Mapping[str, Any], functions: frozenset[str],
                     depth: int = 0) -> str | None:
    """Why a compound command (`if`, `for`, `case`, `[[ ]]`, `(( ))`, a group) is not benign: its
    redirections, and the words it expands itself (its inner commands are judged one by one)."""
    reason = _node_redirect_reason(node, policy)
    if reason is not None:
        return reason
    words = list(getattr(node, "words", None) or ())
    if getattr(node, "word", None) is not None:
        words.append(node.word)
    for arm in getattr(node, "arms", ()) or ():
        words += list(arm.patterns)
    for word in words:
        reason = _word_reason(word, path, policy, functions, depth)
        if reason is not None:
            return reason
    for field_name in ("expr", "init", "cond", "step"):
        value = getattr(node, field_name, None)
        if isinstance(value, str) and ("$(" in value or "`" in value):
            return f"an arithmetic expression runs a command ({value[:60]})"
    return None


def _engine_variable(name: str, policy: Mapping[str, Any]) -> bool:
    """A variable the engine or its interpreter reads (environment names are case-sensitive)."""
    return any(re.fullmatch(p, name) for p in policy["setup_allowlist"]["engine_variables"])


def _assign_reason(assigns: Iterable[Any], path: str, policy: Mapping[str, Any], functions: frozenset[str],
                   depth: int) -> str | None:
    for a in assigns:
        if _engine_variable(a.name, policy):
            return f"sets {a.name}, which the engine or its interpreter reads"
        for word in ([a.value] if a.value is not None else []) + list(a.array or ()) + \
                ([a.index] if a.index is not None else []):
            reason = _word_reason(word, path, policy, functions, depth)
            if reason is not None:
                return reason
    return None


def _command_reason(cmd: Command, path: str, policy: Mapping[str, Any], functions: frozenset[str],
                    arrays: Mapping[str, tuple[str, ...] | None], depth: int = 0) -> str | None:
    """Why one simple command of a setup script is not a benign operation (None when it is)."""
    node = cmd.node
    allow = policy["setup_allowlist"]
    if node is not None:
        reason = _assign_reason(node.assigns, path, policy, functions, depth) or \
            _redirect_reason(node.redirects, policy)
        if reason is None:
            for word in node.words:
                reason = _word_reason(word, path, policy, functions, depth)
                if reason is not None:
                    break
        if reason is not None:
            return reason
    words = list(_expand_head(cmd, arrays))
    if not words:
        return None  # an assignment or redirection alone, judged above
    head = words[0]
    if head is None:
        return "the command name is computed"
    name = head.rsplit("/", 1)[-1] if head.startswith("/usr/bin/") or head.startswith("/bin/") else head
    if name in functions:
        return None  # a function of this script: its body is judged where it is written
    if any(tuple(words[:len(p.split())]) == tuple(p.split()) for p in allow["prefixes"]):
        return None  # a look-up (`command -v NAME`): it runs nothing
    if name in allow["declarers"]:
        for w in words[1:]:
            if w is None:
                return "a computed declaration"
            if w.startswith("-") and "n" in w:
                return f"{name} {w} makes a name reference"
            if not w.startswith("-") and _engine_variable(w.split("=", 1)[0], policy):
                return f"sets {w.split('=', 1)[0]}, which the engine or its interpreter reads"
        return None
    if _is_pip(words):
        reason = _pip_reason(words, policy)
        return None if reason is None else f"pip install: {reason}"
    if name in allow["commands"]:
        denied = tuple(allow["denied_options"].get(name, ()))
        if denied:  # a command that can also change the machine: each word must be readable and allowed
            for w in words[1:]:
                if w is None:
                    return f"{name} with a computed word"
                if any(w == d or w.startswith(d + "=") for d in denied):
                    return f"{name} {w} changes the machine's settings"
        if name == "printf" and "-v" in words:
            target = words[words.index("-v") + 1] if words.index("-v") + 1 < len(words) else None
            if target is None or _engine_variable(target, policy):
                return f"printf -v sets {target or 'a computed name'}"
        return None
    return f"{name} is not a benign operation"


def setup_script_reading(path: str, text: str, policy: Mapping[str, Any], has: Any, root: str,
                         side: str = "head") -> tuple[list[PatchHit], list[Program]]:
    """Judge a setup script (it runs in the serving container before the engine starts) command by
    command: each is on the allowlist of benign operations (policy setup_allowlist) or is reported as
    a change to the serving stack, naming its line and why. A repository program it runs is returned
    to be followed: a shell script is a setup script too (judged the same way), a Python program is
    scanned for the patch it carries; running either is itself not a benign operation unless the
    followed shell script is entirely benign (the caller decides that)."""
    cmds, unreadable = commands(path, text)
    if unreadable is not None:
        # `source` is the whole text: the finding is preexisting only when the base holds the same script
        return [PatchHit(path, None, f"the shell reader cannot read it ({unreadable})"[:300],
                         "setup-script-unreadable", side, text)], \
            [p for c, cwd in _with_cwd(cmds) if (p := program_of(path, c, has, root, policy, cwd)) is not None]
    from verifier.shell.nodes import FuncDef, Simple, iter_nodes

    tree = _syntax(text, path)
    functions = frozenset(n.name for n in iter_nodes(tree.body) if isinstance(n, FuncDef))
    arrays = _literal_variables(cmds)
    hits: list[PatchHit] = []
    programs: list[Program] = []
    lines = text.split("\n")
    for node in iter_nodes(tree.body):
        if not isinstance(node, Simple):
            reason = _compound_reason(node, path, policy, functions)
            if reason is not None:
                hits.append(PatchHit(path, node.line, f"{_line_text(lines, node.line)} ({reason})"[:300],
                                     "setup-command-not-allowed", side, _line_text(lines, node.line)))
    for cmd, cwd in _with_cwd(cmds):
        program = program_of(path, cmd, has, root, policy, cwd)
        if program is not None:
            programs.append(program)
            if program.kind == "shell":
                continue  # benign when the script it runs is (judged by the caller)
            hits.append(PatchHit(path, cmd.line, f"{cmd.text} (runs {short_path(program.path)})"[:300],
                                 "setup-runs-program", side, cmd.text))
            continue
        reason = _command_reason(cmd, path, policy, functions, arrays)
        if reason is not None:
            hits.append(PatchHit(path, cmd.line, f"{cmd.text} ({reason})"[:300], "setup-command-not-allowed", side,
                                 cmd.text))
    return hits, programs


# ---------------------------------------------------------------- Python programs


def python_patch_hits(path: str, text: str, policy: Mapping[str, Any], side: str = "head") -> list[PatchHit]:
    """Monkeypatching in a Python program (read with `ast`, never run): an attribute of an imported
    engine module assigned or `setattr` on it, a `mock.patch` of an engine path, and an import by a
    computed name (what it imports cannot be read)."""
    import ast

    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    modules = tuple(policy["programs"]["engine_modules"])
    lines = text.split("\n")

    def engine(name: str) -> bool:
        return name.split(".", 1)[0] in modules

    bound: set[str] = set()
    try:
        nodes = list(ast.walk(tree))
    except RecursionError:
        return []
    for node in nodes:
        if isinstance(node, ast.Import):
            bound |= {(a.asname or a.name.split(".", 1)[0]) for a in node.names if engine(a.name)}
        elif isinstance(node, ast.ImportFrom) and node.module and engine(node.module):
            bound |= {a.asname or a.name for a in node.names}

    def root(expr: ast.AST) -> str | None:
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        return expr.id if isinstance(expr, ast.Name) else None

    hits: list[PatchHit] = []

    def add(node: ast.AST, what: str) -> None:
        line = getattr(node, "lineno", 0)
        hits.append(PatchHit(path, line or None, f"{_line_text(lines, line)} ({what})"[:300], "python-monkeypatch", side,
                             _line_text(lines, line)))

    for node in nodes:
        targets: list[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = list(node.targets) if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)) and root(target) in bound:
                add(node, "assigns into an engine module")
        if isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            first = node.args[0] if node.args else None
            if fname in ("setattr", "delattr") and first is not None and root(first) in bound:
                add(node, f"{fname} on an engine module")
            elif fname in ("patch", "patch_object") and isinstance(first, ast.Constant) and \
                    isinstance(first.value, str) and engine(first.value):
                add(node, "patches an engine path")
            elif fname in ("import_module", "__import__") and first is not None and \
                    not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                add(node, "imports a module by a computed name")
    return sorted(hits, key=lambda h: h.line or 0)


# ---------------------------------------------------------------- waivers


# a title's closing `#`s and blanks are cut after the match (`waiver_sections`): a lazy title before
# `\s*#*\s*$` tried that tail again from each character of a blank run (the square of its length)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")
_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?\*\*([^*\n]{2,80}?)\*\*\s*:?\s*(.*)$")
_PLAIN_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?([A-Za-z][\w /'()&-]{2,60}?)\s*:\s+(.*)$")
_PLACEHOLDER = re.compile(r"<[^<>\n]*>")
_TARGET_WORD = re.compile(r"[^)\s]*")
_WORD = re.compile(r"[^\W_][\w'./:#?=&%-]*")


def _label_and_target(label: str, target: str) -> str:
    """A link's label and the first word of its target (`[guide](https://x "title")`: `guide https://x`)."""
    word = _TARGET_WORD.match(target)
    assert word is not None  # it matches the empty text
    return f"{label} {word.group(0)}"


@dataclass(frozen=True, eq=False, repr=False)
class WaiverSection:
    """One section of a waiver: its title and its content (placeholders and markup left out)."""

    title: str
    content: str


def waiver_sections(text: str, titles: Iterable[str] = ()) -> list[WaiverSection]:
    """The sections of a waiver: Markdown headings (content up to the next heading of the same or a
    higher level) and bold labelled fields (`- **Removal plan:** ...`, up to the next field or
    heading); a plain `Label: ...` line starts a field only when the label matches one of `titles`
    (so prose with a colon stays prose). Text before the first section is a section with no title."""
    title_rx = [_rx(t) for t in titles]
    sections: list[tuple[str, int, list[str]]] = [("", 0, [])]  # title, heading level (0: a field), lines
    open_headings: list[tuple[str, int, list[str]]] = []
    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            open_headings = [h for h in open_headings if h[1] < level]
            entry: tuple[str, int, list[str]] = (heading.group(2).rstrip().rstrip("#").rstrip(), level, [])
            sections.append(entry)
            open_headings.append(entry)
            continue
        label = _LABEL.match(line)
        plain = None if label else _PLAIN_LABEL.match(line)
        if plain and not any(rx.search(plain.group(1)) for rx in title_rx):
            plain = None
        field = label or plain
        if field:
            entry = (field.group(1).strip().rstrip(":"), 0, [field.group(2)])
            sections.append(entry)
            for h in open_headings:
                h[2].append(field.group(0))
            continue
        # a line belongs to the field it follows and to every heading still open
        if sections[-1][1] == 0:
            sections[-1][2].append(line)
        for h in open_headings:
            h[2].append(line)
    out = []
    for title, _level, lines in sections:
        body = _PLACEHOLDER.sub(" ", "\n".join(lines))
        body = replace_links(body, _label_and_target, images=True)
        out.append(WaiverSection(title.strip(" *:"), re.sub(r"[*`|_>#]+", " ", body).strip()))
    return out


def waiver_problems(text: str, policy: Mapping[str, Any]) -> tuple[str, ...]:
    """Why a waiver is not filled out: each required section (policy waiver_sections) missing or
    without content, and each marker that it is not in force. A section's content counts its distinct
    words other than its title's (a keyword repeated is not content)."""
    rules = policy["waiver_sections"]
    sections = waiver_sections(text, [r["title"] for r in rules.values()])
    problems: list[str] = []
    for name, rule in rules.items():
        title = _rx(rule["title"])
        content_rx = _rx(rule["content"]) if rule.get("content") else None
        best = 0
        ok = False
        for section in sections:
            if not section.title or not title.search(section.title):
                continue
            own = {w.lower() for w in _WORD.findall(section.title)}
            words = {w.lower().rstrip(".,;:") for w in _WORD.findall(section.content)} - own - {""}
            best = max(best, len(words))
            if len(words) >= rule["min_words"] and (content_rx is None or content_rx.search(section.content)):
                ok = True
                break
        if not ok and content_rx is not None and rule.get("anywhere"):
            ok = any(content_rx.search(s.content) for s in sections)
        if not ok:
            problems.append(f"{name} (no section)" if best == 0 and not any(
                s.title and title.search(s.title) for s in sections) else f"{name} (no content)")
    low = text.lower()
    problems += [f"marked '{m}'" for m in policy["waiver_not_in_force"] if m.lower() in low]
    return tuple(problems)
