"""`verify-pr`: judge a PR bundle (offline) or a live PR, and print the verdict.

  verify-pr bundle DIR [--format table|json|markdown] [--only IDS] [--skip IDS] [-v]
  verify-pr pr N [--repo OWNER/NAME] [--signoff URL] [--record DIR] [--api-url URL]
  verify-pr precommit FILE...      verify-pr explain ID      verify-pr sglang-spec dump
  verify-pr action                 (the GitHub Action entry point)

The earlier forms keep working: `verify-pr --bundle DIR ...`, `verify-pr N ...`, `verify-pr --explain ID`.
Exit status: 0 APPROVED or WARN, 1 REJECTED, 2 when the input could not be read (one line on stderr).
A partial verdict (--only/--skip left checks out) says so in every format: its header names the
checks not run, their rows say "not run", the JSON has "partial": true.
The table shows failures in full and passing rows on one line each; -v shows every row in full.
"""

from __future__ import annotations

import argparse
import atexit
import difflib
import gc
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import NoReturn

from verifier import __version__
from verifier.app.commands import by_name
from verifier.app.commands._judge import add_live_arguments, add_output_arguments
from verifier.core.errors import UsageError, VerifierError

# Import names of the `full` extra (pyproject.toml): absent in a hook-only install.
FULL_DEPENDENCIES = frozenset({"pydantic", "ruamel", "jsonschema", "github", "jinja2", "rich", "requests", "urllib3",
                               "markdown_it"})


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"usage error: {message} (see {self.prog} --help)")


def _verbs_help() -> str:
    lines = ["commands:"]
    lines += [f"  {name:12s} {module.HELP}" for name, module in by_name().items()]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The parser of the verb-less forms: `verify-pr --bundle DIR`, `verify-pr N`, `verify-pr --explain ID`."""
    p = _Parser(prog="verify-pr", description=__doc__, epilog=_verbs_help(),
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"verify-pr {__version__}")
    p.add_argument("pr", nargs="?", type=int, help="PR number to judge live on GitHub")
    p.add_argument("--bundle", type=Path, help="judge an offline bundle directory instead of live GitHub")
    add_live_arguments(p)
    add_output_arguments(p)
    p.add_argument("--explain", type=int, metavar="ID", help="print the rule of a check and exit")
    return p


def command_parser(module: ModuleType) -> argparse.ArgumentParser:
    """The parser of one verb."""
    parser = _Parser(prog=f"verify-pr {module.NAME}", description=module.__doc__ or module.HELP,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    module.add_arguments(parser)
    return parser


def check_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """Refuse an option the parser does not know, naming it (argparse would blame a positional first)."""
    known = [s for action in parser._actions for s in action.option_strings]
    for arg in argv:
        if arg == "--":
            return
        if not arg.startswith("-") or arg == "-" or arg[1:2].isdigit():
            continue
        name = arg.split("=", 1)[0]
        if name in known or (name.startswith("--") and sum(k.startswith(name) for k in known) == 1):
            continue
        if not name.startswith("--") and len(name) > 2 and name[:2] in known:
            continue  # a short option with its value attached (-qv is not used; -x VALUE forms)
        close = difflib.get_close_matches(name, [k for k in known if k.startswith("--")], n=1, cutoff=0.6)
        hint = f", did you mean {close[0]}?" if close else ""
        raise UsageError(f"usage error: unrecognised argument {name}{hint} (see {parser.prog} --help)")


def _legacy(argv: list[str]) -> int:
    parser = build_parser()
    check_options(parser, argv)
    positionals = [a for a in argv if not a.startswith("-")]
    if positionals and not positionals[0].lstrip("+").isdigit() and argv[0] == positionals[0]:
        close = difflib.get_close_matches(positionals[0], list(by_name()), n=1)
        hint = f", did you mean {close[0]}?" if close else ""
        raise UsageError(f"usage error: unknown command or PR number {positionals[0]!r}{hint} "
                         f"(commands: {', '.join(by_name())}; see verify-pr --help)")
    args = parser.parse_args(argv)
    verbs = by_name()
    if args.explain is not None:
        return verbs["explain"].run(args)
    if args.bundle is not None and args.pr is not None:
        raise UsageError("usage error: give either a PR number or --bundle, not both")
    if args.bundle is not None:
        return verbs["bundle"].run(args)
    if args.pr is not None:
        return verbs["pr"].run(args)
    raise UsageError("usage error: give a PR number or --bundle DIR (for example --bundle fixtures/pr4524)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `verify-pr`; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        module = by_name().get(args_list[0]) if args_list else None
        if module is None:
            return _legacy(args_list)
        parser = command_parser(module)
        check_options(parser, args_list[1:])
        return module.run(parser.parse_args(args_list[1:]))
    except VerifierError as exc:
        print(f"verify-pr: {exc.one_line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("verify-pr: interrupted", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 2
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in FULL_DEPENDENCIES:
            print(f"verify-pr: missing dependency {exc.name.split('.')[0]}: this command needs the full verifier, "
                  "pip install 'infx-verifier[full]' (the bare package carries only the pre-commit hook)",
                  file=sys.stderr)
            return 2
        if debug:
            traceback.print_exc()
        print(f"verify-pr: internal error: ModuleNotFoundError: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if debug:
            traceback.print_exc()
        message = " ".join(str(exc).split())[:300]
        print(f"verify-pr: internal error: {type(exc).__name__}: {message}", file=sys.stderr)
        return 2


# A verdict process allocates some hundred thousand objects that nearly all live until it ends
# (modules, models, parsed configs): CPython's default young-generation threshold (700) makes it
# walk them in some 140 collections that free almost nothing, and the interpreter walks them again
# at exit. The console script is one verdict in one process, so it collects rarely and ends without
# tearing down what is left (end_process). `main()` itself keeps the defaults: tests call it many times in
# one process.
ONE_SHOT_GC_THRESHOLD = 50_000


def console() -> NoReturn:
    """The `verify-pr` console script: `main()` in a process that ends with it."""
    gc.set_threshold(ONE_SHOT_GC_THRESHOLD, *gc.get_threshold()[1:])
    end_process(main())


def end_process(status: int) -> NoReturn:
    """End a one-shot process without tearing the interpreter down: what is left (hundreds of thousands of
    objects, module by module, ~15 ms of a cold verdict) would only be freed. What an exit must still do is
    done: the exit handlers (atexit, and through it weakref finalizers) run and the standard streams are
    flushed; a stream that cannot be flushed exits 120, as the interpreter's own exit does. A thread still
    running (none in a verdict) gets the interpreter's own exit, which waits for it."""
    threading = sys.modules.get("threading")
    if threading is not None and any(t is not threading.main_thread() and not t.daemon and t.is_alive()
                                     for t in threading.enumerate()):
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            status = 120
    os._exit(status)


if __name__ == "__main__":
    console()
