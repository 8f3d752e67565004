"""Python benchmark clients, read statically: which endpoint a client drives and whether it renders
prompts with the chat template (Check 9).

InferenceX's clients are Python modules run from shell wrappers and recipes
(`exec env ... python3 -m infx.bench agentic "$@"`, `python3 -m infx.bench fixed-seq srt-single`).
`invocations(text, args)` finds the `python3 -m <module>` / `python3 <path>.py` commands of a shell
text (continuation lines joined, comments skipped, `"$@"` replaced by the arguments the caller
passes). `read_client(invocation, ...)` follows one of them through the tree's own Python sources,
parsed with `ast` and never imported or run:

1. `-m pkg` opens `pkg/__main__.py` (else `pkg.py`); a path opens that file;
2. a module-level dispatch table (`COMMANDS = {"agentic": "infx.bench.agentic.run", ...}`: string keys,
   values that name modules of the tree) takes the next argument to the module it names, repeatedly;
3. an `argparse` sub-command (`modes.add_parser("srt-single")` ... `.set_defaults(run=srt_single)`)
   takes the next argument to the function it names; otherwise the module's `main` is the entry;
4. from that entry, every function it calls or names is read, across the modules of the tree it
   imports (`from infx.bench.agentic.replay import replay_argv`, `env.flag`, `Plan.from_env`).

What the reachable code shows decides (policy chat_template `python_clients`); a chat-template flag
the command itself passes (`benchmark_serving.py --use-chat-template`) decides first, and a flag
string that is only declared (`parser.add_argument("--use-chat-template")`) shows nothing:
  * an argv list literal, built outside any `if`, that passes an endpoint flag the chat endpoint
    (`"--endpoint", "/v1/chat/completions"`), with no raw-completion endpoint passed anywhere: `chat`;
  * a chat-template flag (`"--use-chat-template"`) outside any `if`: `chat`; inside `if x.field:`, the
    values the reachable code gives `field` (keyword arguments, dataclass defaults) decide: all `True`
    is `chat`, an environment read (`env.flag("USE_CHAT_TEMPLATE")`, `os.environ.get(V) == "true"`)
    is `env` (the chat template iff that variable holds that value);
  * a raw-completion endpoint passed with no chat evidence: `raw`;
  * anything else: `unknown`, naming what could not be read or shown.

A client file that is absent, not UTF-8 or not valid Python is `unknown` naming the file; sizes and
the number of functions read are bounded, so the cost stays linear in the sources read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from verifier.core import processcache, shellwords

MAX_SOURCE_CHARS = 1_000_000
MAX_FUNCTIONS = 400
MAX_MODULES = 60
MAX_DISPATCH = 6

State = Literal["chat", "raw", "env", "unknown"]
Reader = Callable[[str], "str | None"]

_INTERPRETER = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")
# interpreter options that take a value (`-X dev`, `-W ignore`)
_VALUED_OPTIONS = frozenset({"-X", "-W", "-Q"})
_STOP_WORDS = frozenset({";", "&&", "||", "|", "&", ")", "}"})
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True, eq=False, repr=False)
class Invocation:
    """One `python3 -m <module> ...` or `python3 <path>.py ...` command of a shell text."""

    module: str | None
    script: str | None  # the path as written (workspace prefix and variables left to the caller)
    argv: tuple[str, ...]
    line: int  # first line of the (joined) command in the shell text
    text: str  # the command as written, for evidence

    @property
    def target(self) -> str:
        """`-m module` or the script path."""
        return f"-m {self.module}" if self.module else str(self.script)


@dataclass(frozen=True, eq=False, repr=False)
class ClientRead:
    """What a Python client shows about its endpoint and chat template."""

    state: State
    file: str | None = None  # the file of the deciding evidence (or the file that could not be read)
    line: int | None = None
    marker: str = ""  # the endpoint, flag or condition that decides
    env: str | None = None  # state env: the variable that turns the chat template on
    value: str | None = None  # ... and the value that does
    files: tuple[str, ...] = ()  # the Python files read, entry first
    missing: str | None = None  # state unknown: what could not be read or shown
    via: str = "endpoint"  # chat / env: "endpoint" (the chat endpoint) or "template" (a chat-template flag)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined."""
    pending, start = "", 0
    for number, line in enumerate(text.split("\n"), 1):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


# Check 9 asks this of the same client script once per launch (hundreds per PR); Invocations are immutable
_INVOCATIONS: processcache.ByText[tuple[str, tuple[str, ...]], tuple[Invocation, ...]] = \
    processcache.ByText("launch.python_client.invocations", 256)


def invocations(text: str, script_args: Sequence[str] = ()) -> list[Invocation]:
    """The Python commands of a shell text, in order (`-c` code and unparsable lines are skipped)."""
    key = (text, tuple(script_args))
    found = _INVOCATIONS.get(key)
    if found is None:
        found = _INVOCATIONS.put(key, tuple(_scan_invocations(text, key[1])))
    return list(found)


def _scan_invocations(text: str, script_args: Sequence[str]) -> list[Invocation]:
    out: list[Invocation] = []
    for number, line in _logical_lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            words = shellwords.split(line, comments=True)
        except ValueError:
            continue
        for i, word in enumerate(words):
            if _INTERPRETER.match(word):
                found = _python_command(words[i + 1:], script_args, number, line.strip())
                if found is not None:
                    out.append(found)
                break
    return out


def _python_command(rest: list[str], script_args: Sequence[str], line: int, text: str) -> Invocation | None:
    module = script = None
    j = 0
    while j < len(rest):
        word = rest[j]
        if word == "-m" and j + 1 < len(rest):
            module, j = rest[j + 1], j + 2
            break
        if word.startswith("-m") and len(word) > 2:
            module, j = word[2:], j + 1
            break
        if word == "-c" or word == "-":
            return None  # inline code or stdin: nothing in the tree to follow
        if word in _VALUED_OPTIONS:
            j += 2
            continue
        if word.startswith("-"):
            j += 1
            continue
        script, j = word, j + 1
        break
    if module is None and script is None:
        return None
    if module is not None and not _DOTTED.match(module):
        return None
    argv: list[str] = []
    for word in rest[j:]:
        if word in _STOP_WORDS or word.startswith((">", "<", "1>", "2>", "&>")):
            break
        if word in ("$@", "$*", "${@}", "${*}"):
            argv.extend(script_args)
        else:
            argv.append(word)
    return Invocation(module=module, script=script, argv=tuple(argv), line=line, text=text[:300])


class _Unreadable(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(eq=False, repr=False)
class _Module:
    name: str  # dotted
    path: str
    tree: ast.Module
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # alias -> (module, name)


Fn = ast.FunctionDef | ast.AsyncFunctionDef


class _Tree:
    """The tree's Python sources, parsed on demand (each file once)."""

    def __init__(self, read: Reader, root: str) -> None:
        self.read = read
        self.root = root
        self.cache: dict[str, _Module | None] = {}

    def locate(self, dotted: str, main: bool = False) -> str | None:
        base = self.root + dotted.replace(".", "/")
        candidates = [base + "/__main__.py"] if main else []
        candidates += [base + ".py", base + "/__init__.py"]
        return next((c for c in candidates if self.read(c) is not None), None)

    def parse(self, dotted: str, path: str) -> _Module:
        if path in self.cache:
            cached = self.cache[path]
            if cached is None:
                raise _Unreadable(path, "not readable Python")
            return cached
        if len(self.cache) >= MAX_MODULES:
            raise _Unreadable(path, f"more than {MAX_MODULES} modules to read")
        text = self.read(path)
        if text is None:
            self.cache[path] = None
            raise _Unreadable(path, "absent from the tree or not UTF-8 text")
        if len(text) > MAX_SOURCE_CHARS:
            self.cache[path] = None
            raise _Unreadable(path, f"over {MAX_SOURCE_CHARS} characters")
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            self.cache[path] = None
            raise _Unreadable(path, f"not valid Python ({type(exc).__name__})") from None
        mod = _Module(dotted, path, tree)
        package = dotted if path.endswith(("/__init__.py", "/__main__.py")) else dotted.rpartition(".")[0]
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                mod.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                mod.classes[node.name] = node
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    mod.imports[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0], None)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".") if package else []
                    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
                    base = ".".join([*parts, *([base] if base else [])])
                for alias in node.names:
                    mod.imports[alias.asname or alias.name] = (base, alias.name)
        self.cache[path] = mod
        return mod

    def module(self, dotted: str) -> _Module | None:
        """A module of the tree by dotted name (None when the tree has no such module)."""
        path = self.locate(dotted)
        return None if path is None else self.parse(dotted, path)


def _const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dispatch(tree: _Tree, mod: _Module, word: str) -> tuple[str | None, list[str]]:
    """(module named for `word`, the table's keys) from a module-level table of sub-command -> module."""
    for node in mod.tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if not isinstance(value, ast.Dict) or not value.keys:
            continue
        pairs = [(_const_str(k), _const_str(v)) for k, v in zip(value.keys, value.values, strict=True)]
        # a table of sub-command -> dotted module names, at least one of them a module of the tree (a
        # bundle need not hold the modules of the other sub-commands)
        if not all(k is not None and v is not None and _DOTTED.match(v) and "." in v for k, v in pairs):
            continue
        top = mod.name.split(".")[0]
        if not any(str(v).split(".")[0] == top or tree.locate(str(v)) is not None for _, v in pairs):
            continue
        keys = [str(k) for k, _ in pairs]
        return dict(pairs).get(word), keys
    return None, []


def _subcommands(fn: ast.AST) -> dict[str, str | None]:
    """`add_parser("name")` -> the function its `set_defaults(<kw>=function)` names (None when none)."""
    names: dict[str, str] = {}  # variable -> sub-command
    out: dict[str, str | None] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            if isinstance(call.func, ast.Attribute) and call.func.attr == "add_parser" and call.args:
                name = _const_str(call.args[0])
                if name is not None:
                    out.setdefault(name, None)
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            names[target.id] = name
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "set_defaults"):
            continue
        owner = node.func.value
        sub: str | None = None
        if isinstance(owner, ast.Name):
            sub = names.get(owner.id)
        elif (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Attribute)
              and owner.func.attr == "add_parser" and owner.args):
            sub = _const_str(owner.args[0])
            if sub is not None:
                out.setdefault(sub, None)
        if sub is None:
            continue
        for kw in node.keywords:
            if isinstance(kw.value, ast.Name):
                out[sub] = kw.value.id
    return out


@dataclass(eq=False, repr=False)
class _Evidence:
    chat: list[tuple[str, int, str]] = field(default_factory=list)  # (path, line, marker)
    chat_guarded: list[tuple[str, int, str]] = field(default_factory=list)  # ... built under a condition
    raw: list[tuple[str, int, str]] = field(default_factory=list)
    flags: list[tuple[str, int, str, str | None]] = field(default_factory=list)  # (..., guard field)
    assigned: dict[str, list[tuple[str, int, ast.AST]]] = field(default_factory=dict)  # field -> values


def _parents(fn: ast.AST) -> dict[ast.AST, ast.AST]:
    out: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def _guard(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> tuple[bool, str | None]:
    """(guarded?, the field an enclosing `if` tests: `if point.use_chat_template:` -> use_chat_template)."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If | ast.IfExp | ast.While) and child is not parent.test:
            test = parent.test
            if isinstance(test, ast.Attribute):
                return True, test.attr
            if isinstance(test, ast.Name):
                return True, test.id
            return True, None
        if isinstance(parent, ast.comprehension | ast.BoolOp):
            return True, None
        child, parent = parent, parents.get(parent)
    return False, None


def _scan(path: str, fn: ast.AST, patterns: Mapping[str, list[re.Pattern[str]]], ev: _Evidence) -> None:
    parents = _parents(fn)
    for node in ast.walk(fn):
        if isinstance(node, ast.List | ast.Tuple):
            items = [_const_str(e) for e in node.elts]
            for i, item in enumerate(items):
                if item is None:
                    continue
                flag, _, inline = item.partition("=")
                value = inline if inline else (items[i + 1] if i + 1 < len(items) else None)
                if any(p.fullmatch(flag) for p in patterns["endpoint_flags"]) and value:
                    if any(p.search(value) for p in patterns["chat_endpoints"]):
                        # only an argv built on every path shows the endpoint the client drives
                        guarded, _ = _guard(node, parents)
                        (ev.chat_guarded if guarded else ev.chat).append(
                            (path, node.elts[i].lineno, f"{flag} {value}"))
                    elif any(p.search(value) for p in patterns["raw_endpoints"]):
                        ev.raw.append((path, node.elts[i].lineno, f"{flag} {value}"))
        text = _const_str(node)
        declared = isinstance(parents.get(node), ast.Call) and _called(parents[node]) == "add_argument"
        if text is not None and not declared and any(p.fullmatch(text) for p in patterns["chat_template_flags"]):
            guarded, name = _guard(node, parents)
            ev.flags.append((path, getattr(node, "lineno", 0), text, name if guarded else ""))
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg:
                    ev.assigned.setdefault(kw.arg, []).append((path, kw.value.lineno, kw.value))
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(
                    target, ast.Name) else None
                if name:
                    ev.assigned.setdefault(name, []).append((path, node.lineno, node.value))


def _called(call: ast.AST) -> str | None:
    """The name a call calls (`parser.add_argument(...)` -> add_argument)."""
    func = call.func if isinstance(call, ast.Call) else None
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _field_defaults(mod: _Module, defaults: dict[str, list[tuple[str, int, ast.AST]]]) -> None:
    for cls in mod.classes.values():
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                defaults.setdefault(node.target.id, []).append((mod.path, node.lineno, node.value))


def _env_read(node: ast.AST) -> tuple[str, str] | None:
    """(variable, enabling value) when an expression reads one environment variable as a switch:
    `env.flag("V")`, `os.environ.get("V") == "true"`, `os.getenv("V", "0") == "1"`."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        inner = _env_read(node.left)
        value = _const_str(node.comparators[0])
        return (inner[0], value) if inner is not None and value is not None else None
    if isinstance(node, ast.Call) and node.args:
        name = _const_str(node.args[0])
        if name is not None and _ENV_NAME.match(name):
            return name, "true"
    if isinstance(node, ast.Subscript):
        name = _const_str(node.slice)
        if name is not None and _ENV_NAME.match(name):
            return name, "true"
    return None


class _Slice:
    """The functions reachable from an entry, across the tree's modules."""

    def __init__(self, tree: _Tree) -> None:
        self.tree = tree
        self.seen: set[int] = set()
        self.items: list[tuple[_Module, ast.AST]] = []
        self.modules: dict[str, _Module] = {}
        self.unreadable: list[_Unreadable] = []  # modules of the tree the code imports but that do not parse

    def _module(self, dotted: str) -> _Module | None:
        try:
            return self.tree.module(dotted)
        except _Unreadable as exc:
            if not any(u.path == exc.path for u in self.unreadable):
                self.unreadable.append(exc)
            return None

    def _imported(self, mod: _Module, alias: str) -> tuple[_Module, str | None] | None:
        """(module, name in it) an imported alias refers to; (module, None) for a module alias."""
        if alias not in mod.imports:
            return None
        base, name = mod.imports[alias]
        if name is not None:
            sub = self._module(f"{base}.{name}") if base else None
            if sub is not None:
                return sub, None
        target = self._module(base) if base else None
        return (target, name) if target is not None else None

    def _named(self, mod: _Module, name: str) -> list[tuple[_Module, ast.AST]]:
        if name in mod.functions:
            return [(mod, mod.functions[name])]
        if name in mod.classes:
            return [(mod, mod.classes[name])]
        found = self._imported(mod, name)
        if found is not None and found[1] is not None:
            return self._named_local(found[0], found[1])
        return []

    @staticmethod
    def _named_local(mod: _Module, name: str) -> list[tuple[_Module, ast.AST]]:
        if name in mod.functions:
            return [(mod, mod.functions[name])]
        if name in mod.classes:
            return [(mod, mod.classes[name])]
        return []

    def _method(self, mod: _Module, cls: ast.ClassDef, name: str) -> list[tuple[_Module, ast.AST]]:
        return [(mod, n) for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name]

    def _attribute(self, mod: _Module, owner: str, attr: str, cls: ast.ClassDef | None) -> list[tuple[_Module, ast.AST]]:
        if owner in ("self", "cls") and cls is not None:
            return self._method(mod, cls, attr)
        target = self._named(mod, owner)
        if target and isinstance(target[0][1], ast.ClassDef):
            return self._method(target[0][0], target[0][1], attr)
        found = self._imported(mod, owner)
        if found is not None and found[1] is None:
            return self._named_local(found[0], attr)
        return []

    def add(self, mod: _Module, node: ast.AST, cls: ast.ClassDef | None = None) -> None:
        queue: list[tuple[_Module, ast.AST, ast.ClassDef | None]] = [(mod, node, cls)]
        while queue and len(self.items) < MAX_FUNCTIONS:
            mod, node, cls = queue.pop(0)
            if id(node) in self.seen:
                continue
            self.seen.add(id(node))
            self.modules[mod.path] = mod
            if isinstance(node, ast.ClassDef):
                continue  # a class named or built: its methods are reached through attribute calls
            self.items.append((mod, node))
            owner = cls if cls is not None else self._owner(mod, node)
            for sub in ast.walk(node):
                targets: list[tuple[_Module, ast.AST]] = []
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    targets = self._named(mod, sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                    targets = self._attribute(mod, sub.value.id, sub.attr, owner)
                for tmod, target in targets:
                    queue.append((tmod, target, self._owner(tmod, target)))

    @staticmethod
    def _owner(mod: _Module, node: ast.AST) -> ast.ClassDef | None:
        return next((c for c in mod.classes.values() if node in c.body), None)


def _compile(policy: Mapping[str, Any]) -> dict[str, list[re.Pattern[str]]]:
    keys = ("endpoint_flags", "chat_endpoints", "raw_endpoints", "chat_template_flags")
    return {k: [re.compile(str(p)) for p in policy.get(k) or ()] for k in keys}


def _entry(tree: _Tree, inv: Invocation, script_path: str | None) -> tuple[_Module, list[str], list[str]]:
    """(the module the dispatch tables lead to, the arguments left, the files read)."""
    files: list[str] = []
    if inv.module is not None:
        path = tree.locate(inv.module, main=True)
        if path is None:
            raise _Unreadable(tree.root + inv.module.replace(".", "/"), f"module {inv.module} is not in the tree")
        mod = tree.parse(inv.module, path)
    else:
        if script_path is None or tree.read(script_path) is None:
            raise _Unreadable(script_path or str(inv.script), "client script absent from the tree")
        dotted = script_path.removeprefix(tree.root).removesuffix(".py").replace("/", ".")
        mod = tree.parse(dotted, script_path)
    files.append(mod.path)
    argv = list(inv.argv)
    for _ in range(MAX_DISPATCH):
        if not argv or argv[0].startswith("-"):
            break
        target, keys = _dispatch(tree, mod, argv[0])
        if not keys:
            break
        if target is None:
            raise _Unreadable(mod.path, f"sub-command {argv[0]!r} is not one of {', '.join(keys)}")
        path = tree.locate(target)
        if path is None:
            where = tree.root + target.replace(".", "/") + ".py"
            raise _Unreadable(where, f"module {target} (sub-command {argv[0]!r} of {mod.path}) is absent from the tree")
        mod = tree.parse(target, path)
        files.append(mod.path)
        argv = argv[1:]
    return mod, argv, files


def read_client(inv: Invocation, read: Reader, root: str, policy: Mapping[str, Any],
                script_path: str | None = None) -> ClientRead:
    """Follow one Python invocation into the tree and say what its client shows (see the module doc).

    `read(path)` gives a tree file's text (None when absent or unreadable); `root` is the folder the
    interpreter's import path starts at (`inferencex-e2e/` in the new layout); `script_path` is the
    repository path of a `python3 <path>.py` invocation's script, resolved by the caller."""
    tree = _Tree(read, root)
    patterns = _compile(policy)
    passed_flag = next((a for a in inv.argv if any(p.fullmatch(a) for p in patterns["chat_template_flags"])), None)
    if passed_flag is not None:
        # the command itself asks the client for the chat template (`benchmark_serving.py --use-chat-template`)
        return ClientRead("chat", None, None, f"{passed_flag} in the command", via="template")
    try:
        mod, argv, files = _entry(tree, inv, script_path)
        main = mod.functions.get("main")
        # sub-commands may be declared in a parser-building helper: read the whole module for them
        subs = _subcommands(mod.tree)
        entry: ast.AST = main if main is not None else mod.tree
        if subs:
            word = next((a for a in argv if not a.startswith("-")), None)
            if word is None or word not in subs:
                what = f"sub-command {word!r}" if word else "no sub-command"
                raise _Unreadable(mod.path, f"{what} (it has {', '.join(sorted(subs))})")
            name = subs[word]
            fn = mod.functions.get(name) if name else None
            if fn is None:
                raise _Unreadable(mod.path, f"sub-command {word!r} names no function of the module")
            entry = fn
        slc = _Slice(tree)
        if entry is mod.tree:
            for node in mod.tree.body:
                slc.add(mod, node)
        else:
            slc.add(mod, entry)
        if slc.unreadable:  # code the client reaches that cannot be read may drive any endpoint
            raise slc.unreadable[0]
    except _Unreadable as exc:
        return ClientRead("unknown", file=exc.path, missing=f"{exc.path}: {exc.reason}",
                          files=tuple(tree.cache))
    ev = _Evidence()
    for smod, item in slc.items:
        _scan(smod.path, item, patterns, ev)
    defaults: dict[str, list[tuple[str, int, ast.AST]]] = {}
    for smod in slc.modules.values():
        _field_defaults(smod, defaults)
    read_files = tuple(dict.fromkeys([*files, *(m.path for m in slc.modules.values())]))
    return _decide(ev, defaults, read_files, mod.path)


def _decide(ev: _Evidence, defaults: Mapping[str, list[tuple[str, int, ast.AST]]], files: tuple[str, ...],
            entry: str) -> ClientRead:
    if ev.chat and not ev.raw:
        path, line, marker = ev.chat[0]
        return ClientRead("chat", path, line, marker, files=files)
    conditions: list[tuple[str, int, str, str, str]] = []  # path, line, flag, var, value
    undecided: list[str] = []
    for path, line, flag, guard in ev.flags:
        if guard == "":
            return ClientRead("chat", path, line, flag, files=files, via="template")
        if guard is None:
            undecided.append(f"{path}:{line} {flag} under a condition that is not a field")
            continue
        values = ev.assigned.get(guard) or defaults.get(guard) or []
        kinds: set[str] = set()
        env: tuple[str, str] | None = None
        for _vpath, _vline, expr in values:
            if isinstance(expr, ast.Constant) and expr.value is True:
                kinds.add("on")
            elif (found := _env_read(expr)) is not None and (env is None or env == found):
                kinds.add("env")
                env = found
            else:
                kinds.add("other")
        if kinds == {"on"}:
            return ClientRead("chat", path, line, f"{flag} ({guard}=True)", files=files, via="template")
        if env is not None and kinds <= {"on", "env"}:
            conditions.append((path, line, flag, env[0], env[1]))
        else:
            undecided.append(f"{path}:{line} {flag} when {guard} (set to no readable value)")
    if conditions:
        path, line, flag, var, value = conditions[0]
        return ClientRead("env", path, line, flag, env=var, value=value, files=files, via="template")
    if ev.raw:
        path, line, marker = ev.raw[0]
        if not ev.chat:
            return ClientRead("raw", path, line, marker, files=files)
    undecided += [f"{path}:{line} {marker} only under a condition" for path, line, marker in ev.chat_guarded]
    missing = "; ".join(undecided) if undecided else (
        f"the endpoint or chat template the client {entry} drives (files read: {', '.join(files)})")
    return ClientRead("unknown", entry, None, missing=missing, files=files)
