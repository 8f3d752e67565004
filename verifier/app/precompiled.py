"""Code every fresh process compiles the same way, compiled once when the wheel is built.

Before a verdict can start, every process compiles things that come out the same from the same input
every time:

* source text the standard library generates (SITES). `@dataclass` writes each method it generates
  (`__init__`, `__repr__`, `__eq__`, and for a frozen class `__setattr__`, `__delattr__`, `__hash__`) as
  Python source and compiles it with `exec` while the class is defined; `typing.ForwardRef` compiles every
  string annotation (pydantic's models and pydantic-core's TypedDicts have ~950); `namedtuple` evals its
  `__new__`. A verdict's imports define ~220 dataclasses: ~1,800 compilations, ~90 ms of CPU per process.
* regular expressions. `re.compile` parses a pattern and compiles it to the regex engine's code in pure
  Python (re._parser, re._compiler) before the C engine takes it: ~450 patterns, ~50 ms per verdict.

The wheel ships both results. At build time (setup.py calls `build` in a fresh interpreter on the built
package) every module of `verifier` and `checks` is imported, and the seed bundle judged when the source
tree has one, while those call sites record what they are given and what they make; the table goes to
`verifier/_data/prebuilt/precompiled.marshal`. At run time `install()` (called by `verifier.app`, before
the command line imports anything else) puts a lookup in front of them:

* each module of SITES gets its own `exec`/`eval`/`compile` (shadowing the builtin for that module only):
  source text found in the table is taken as the code object compiled from it, `compile(text, "<string>",
  mode, dont_inherit=True)`, which is what the builtin compiles there (none of those modules has a
  `__future__` import); it runs in the same namespaces, which carry every class-specific value (defaults,
  types), never the text. Other text is compiled as the builtin would.
* `re._compiler.compile(pattern, flags)` (what `re.compile` calls on a miss of its own cache): a (pattern,
  flags) found in the table goes straight to `_sre.compile` with the arguments re's compiler passed it for
  that pattern at build time (the same interpreter: the table records it), so the Pattern is equal to the
  one compiled here (same flags, pattern and engine code; tests/core/test_cold_path.py).

A table written by another interpreter (its `importlib.util.MAGIC_NUMBER` and version differ), of another
format or unreadable is not used, and a source checkout has none: nothing changes there. The table is read
from the package's own data, like its bytecode, never from a user-writable cache.
"""

from __future__ import annotations

import builtins
import importlib
import marshal
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

TABLE_NAME = "precompiled.marshal"
# The format, then the interpreter that compiled the table (marshal data and regex engine code are both
# specific to it).
HEADER = b"infx-verifier precompiled 2\n" + MAGIC_NUMBER + repr(sys.version_info[:3]).encode() + b"\n"

# Where the standard library compiles source text it generates, and how: (module, the builtin it calls,
# the mode it compiles in). None of these modules has a `__future__` import, so what they compile is
# `compile(source, "<string>", mode, dont_inherit=True)`.
SITES = (("dataclasses", "exec", "exec"),  # every generated method of a @dataclass
         ("collections", "eval", "eval"),  # a namedtuple's __new__
         ("typing", "compile", "eval"))  # a ForwardRef: every string annotation pydantic or TypedDict reads

# {"code": {(mode, source): code object}, "regex": {(pattern, flags): the engine's compile arguments}}
Table = dict[str, dict[Any, Any]]


def _compiled(source: str, mode: str) -> CodeType:
    """What the standard library's `exec`/`eval`/`compile` of generated source compiles (see SITES)."""
    return compile(source, "<string>", mode, dont_inherit=True)


def read_table(path: Path) -> Table:
    """The table at `path`, or {} when it is absent, unreadable, of another format or of another interpreter."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    if not data.startswith(HEADER):
        return {}
    try:
        table = marshal.loads(data[len(HEADER):])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(table, dict):
        return {}
    code, patterns = table.get("code"), table.get("regex")
    return {"code": code if isinstance(code, dict) else {}, "regex": patterns if isinstance(patterns, dict) else {}}


def _shadow(builtin: str, mode: str, code: dict[tuple[str, str], CodeType]) -> Callable[..., Any]:
    """The stand-in for `builtin` in one module: source text found in `code` is taken compiled; any other
    call is the builtin's own (compiled here without this module's `__future__` flags, as at the site)."""
    run = getattr(builtins, builtin)

    def shadow_compile(source: Any, filename: Any, mode: str, *rest: Any, **kwargs: Any) -> Any:
        if rest or kwargs or filename != "<string>" or type(source) is not str:
            return builtins.compile(source, filename, mode, *rest, **kwargs)
        found = code.get((mode, source))
        return found if found is not None else builtins.compile(source, filename, mode, 0, True)

    def shadow_run(source: Any, /, *args: Any, **kwargs: Any) -> Any:
        if type(source) is str:
            found = code.get((mode, source))
            source = found if found is not None else _compiled(source, mode)
        return run(source, *args, **kwargs)

    shadow: Any = shadow_compile if builtin == "compile" else shadow_run
    shadow.infx_table = code  # what is installed (tests, benchmarks)
    return shadow


def _regex_compile(patterns: dict[tuple[Any, int], tuple[Any, ...]], original: Callable[..., Any],
                   engine: Any) -> Callable[..., Any]:
    def compile(p: Any, flags: int = 0) -> Any:  # noqa: A001 - it stands for re._compiler.compile
        args = patterns.get((p, flags)) if type(p) in (str, bytes) and type(flags) is int else None
        if args is None:
            return original(p, flags)
        # The engine copies the code list into the Pattern and keeps the group-name mapping, which a Pattern
        # shows only read-only (`groupindex` is a mappingproxy): the table's entries stay as recorded.
        return engine.compile(*args)

    compile.infx_table = patterns  # type: ignore[attr-defined]
    compile.infx_original = original  # type: ignore[attr-defined]
    return compile


def installed() -> int:
    """How many entries of a table are in place (0: none)."""
    code = next((getattr(sys.modules.get(m), b, None) for m, b, _ in SITES
                 if hasattr(getattr(sys.modules.get(m), b, None), "infx_table")), None)
    regex = getattr(getattr(re, "_compiler", None), "compile", None)
    return len(getattr(code, "infx_table", ())) + len(getattr(regex, "infx_table", ()))


def install(path: Path | None = None) -> int:
    """Put the shipped table in front of the standard library's compilation (see the module docstring);
    returns how many entries it holds (0: nothing installed). Installing twice keeps the first table."""
    if installed():
        return installed()
    if path is None:
        from verifier.core.resources import PREBUILT_DIR  # noqa: PLC0415 - only here: the builder has no layer

        if PREBUILT_DIR is None:
            return 0
        path = PREBUILT_DIR / TABLE_NAME
    table = read_table(path)
    code, patterns = table.get("code", {}), table.get("regex", {})
    if code:
        for module, builtin, mode in SITES:
            setattr(importlib.import_module(module), builtin, _shadow(builtin, mode, code))
    compiler = getattr(re, "_compiler", None)
    engine = getattr(compiler, "_sre", None)
    if patterns and callable(getattr(compiler, "compile", None)) and callable(getattr(engine, "compile", None)):
        compiler.compile = _regex_compile(patterns, compiler.compile, engine)  # type: ignore[union-attr]
    return installed()


def uninstall() -> None:
    """Back to the builtins and re's own compiler (tests, the build)."""
    for module, builtin, _ in SITES:
        target = sys.modules.get(module)
        if hasattr(getattr(target, builtin, None), "infx_table"):
            delattr(target, builtin)
    compiler = getattr(re, "_compiler", None)
    original = getattr(getattr(compiler, "compile", None), "infx_original", None)
    if original is not None:
        compiler.compile = original  # type: ignore[union-attr]


# --------------------------------------------------------------------------- build time


class _RecordingEngine:
    """Stands for `_sre` inside re._compiler while recording: passes every call on, and keeps the
    arguments of the last `compile`."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.last: tuple[Any, ...] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def compile(self, *args: Any) -> Any:
        self.last = args
        return self._engine.compile(*args)


def _modules(packages: Iterable[str]) -> Iterator[str]:
    import pkgutil  # noqa: PLC0415 - build time only

    for name in packages:
        package = importlib.import_module(name)
        yield name
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}.", onerror=lambda _: None):
            if info.name.rpartition(".")[2] != "__main__":  # `python -m` entry points run when imported
                yield info.name


def _marshallable(value: Any) -> bool:
    try:
        marshal.dumps(value)
    except ValueError:
        return False
    return True


def build(out: Path, bundles: Iterable[Path] = (), packages: Iterable[str] = ("verifier", "checks")) -> dict[str, int]:
    """Build time (setup.py runs it in a fresh interpreter on the built package): record while importing every
    module of `packages` and judging `bundles` (in every output format), then write the table to `out`.

    Run it before anything else defines a dataclass or compiles a pattern (a fresh interpreter that imported
    only this module): what happened earlier is simply not in the table. A module that does not import here
    (a dependency missing from the build environment) or a bundle that cannot be judged is skipped and named
    on stderr; what it would have recorded compiles at run time."""
    uninstall()
    code: dict[tuple[str, str], CodeType] = {}
    patterns: dict[tuple[Any, int], tuple[Any, ...]] = {}
    compiler: Any = re._compiler  # type: ignore[attr-defined]
    original, engine = compiler.compile, compiler._sre
    recording = _RecordingEngine(engine)

    def recorder(builtin: str, mode: str) -> Callable[..., Any]:
        run = getattr(builtins, builtin)

        def record_compile(source: Any, filename: Any, mode: str, *rest: Any, **kwargs: Any) -> Any:
            if rest or kwargs or filename != "<string>" or type(source) is not str:
                return run(source, filename, mode, *rest, **kwargs)
            return code.setdefault((mode, source), _compiled(source, mode))

        def record_run(source: Any, /, *args: Any, **kwargs: Any) -> Any:
            if type(source) is str:
                source = code.setdefault((mode, source), _compiled(source, mode))
            return run(source, *args, **kwargs)

        return record_compile if builtin == "compile" else record_run

    def compile(p: Any, flags: int = 0) -> Any:  # noqa: A001
        recording.last = None
        pattern = original(p, flags)
        if type(p) in (str, bytes) and type(flags) is int and recording.last is not None:
            # re's opcodes are int subclasses (named constants); the engine reads only their values
            args = tuple([int(op) for op in a] if type(a) is list else a for a in recording.last)
            if _marshallable(args):
                patterns[(p, flags)] = args
        return pattern

    sites = [(importlib.import_module(m), b) for m, b, _ in SITES]
    for (module, builtin), (_, _, mode) in zip(sites, SITES, strict=True):
        setattr(module, builtin, recorder(builtin, mode))
    compiler.compile, compiler._sre = compile, recording
    skipped: list[str] = []
    try:
        for name in list(_modules(packages)):
            try:
                importlib.import_module(name)
            except Exception as error:  # noqa: BLE001 - any module that cannot load here is left to run time
                skipped.append(f"{name} ({type(error).__name__}: {error})")
        for bundle in bundles:
            skipped += _judge_everywhere(bundle)
    finally:
        for module, builtin in sites:
            delattr(module, builtin)
        compiler.compile, compiler._sre = original, engine
    if skipped:
        print("infx-verifier build: not precompiled: " + "; ".join(skipped), file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    table = {"code": dict(sorted(code.items())), "regex": dict(sorted(patterns.items(), key=repr))}
    out.write_bytes(HEADER + marshal.dumps(table))
    return {"code objects": len(code), "patterns": len(patterns), "skipped": len(skipped)}


def _judge_everywhere(bundle: Path) -> list[str]:
    """Judge a bundle in every output format, output discarded (what a verdict compiles at run time)."""
    import contextlib  # noqa: PLC0415
    import io  # noqa: PLC0415

    try:
        from verifier.app.cli import main  # noqa: PLC0415

        for form in ("json", "markdown", "table"):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                main(["--bundle", str(bundle), "--format", form])
    except (Exception, SystemExit) as error:  # noqa: BLE001
        return [f"{bundle} ({type(error).__name__}: {error})"]
    return []
