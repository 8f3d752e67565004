"""`verify-pr`: judge a PR bundle (offline) or a live PR, and print the verdict.

Exit status: 0 APPROVED or WARN, 1 REJECTED, 2 when the input could not be read (one line on stderr).
Subcommands: `precommit FILES` (the draft-KV pre-commit hook), `sglang-spec dump` (arg-spec JSON from
the real sglang package), `action` (GitHub Action entry point).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from verifier.errors import UsageError, VerifierError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"usage error: {message} (see verify-pr --help)")


def _ids(text: str) -> set[int]:
    try:
        ids = {int(x) for x in text.split(",") if x.strip()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated check ids, got {text!r}") from None
    if not ids or any(i < 0 or i > 18 for i in ids):
        raise argparse.ArgumentTypeError("check ids are 0 to 18")
    return ids


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the main command."""
    p = _Parser(prog="verify-pr", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pr", nargs="?", type=int, help="PR number to judge live on GitHub")
    p.add_argument("--bundle", type=Path, help="judge an offline bundle directory instead of live GitHub")
    p.add_argument("--repo", default="SemiAnalysisAI/InferenceX", help="OWNER/NAME (live mode)")
    p.add_argument("--signoff", help="sign-off URL (#issuecomment-, #pullrequestreview-, #discussion_r)")
    p.add_argument("--record", type=Path, help="write the collected bundle to this directory (live mode)")
    p.add_argument("--api-url", help="GitHub API base URL (GitHub Enterprise, tests)")
    p.add_argument("--docs-proxy", help="fetch allowlisted pages through URL?url=<encoded original>")
    p.add_argument("--format", choices=["table", "json", "markdown"], default="table")
    p.add_argument("--only", type=_ids, help="run only these check ids (comma-separated)")
    p.add_argument("--skip", type=_ids, help="skip these check ids (comma-separated)")
    p.add_argument("--explain", type=int, metavar="ID", help="print the rule of a check and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument("-v", "--verbose", action="store_true", help="timings and request counts on stderr")
    p.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    return p


def _explain(check_id: int) -> int:
    from checks import ALL_CHECKS

    module = next((m for m in ALL_CHECKS if check_id == m.ID), None)
    if module is None:
        raise UsageError(f"usage error: no check {check_id}")
    print((module.__doc__ or "").strip())
    return 0


def _collect_live(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from verifier.github.collect import collect_bundle

    token = os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN")
    show_progress = not args.quiet and sys.stderr.isatty()
    bundle, stats = collect_bundle(
        args.repo,
        args.pr,
        signoff_url=args.signoff,
        token=token,
        api_url=args.api_url,
        docs_proxy=args.docs_proxy,
        progress=show_progress,
    )
    if args.record:
        from verifier.github.record import write_bundle

        write_bundle(bundle, args.record)
    if args.verbose:
        print(f"GitHub API requests: {getattr(stats, 'requests', stats)}", file=sys.stderr)
    return bundle


def _judge(args: argparse.Namespace) -> int:
    from checks import select
    from verifier.bundle import read_bundle
    from verifier.policy import load_policies
    from verifier.render import OutputFormat, renderer
    from verifier.runner import Verdict, run_checks

    start = time.perf_counter()
    if args.bundle is not None and args.pr is not None:
        raise UsageError("usage error: give either a PR number or --bundle, not both")
    if args.bundle is None and args.pr is None:
        raise UsageError("usage error: give a PR number or --bundle DIR (for example --bundle fixtures/pr4524)")
    bundle = read_bundle(args.bundle) if args.bundle is not None else _collect_live(args)
    loaded = time.perf_counter()
    report = run_checks(bundle, load_policies(), select(args.only, args.skip))
    judged = time.perf_counter()
    sys.stdout.write(renderer(OutputFormat(args.format))(report))
    sys.stdout.flush()
    if args.verbose:
        print(f"read {loaded - start:.3f}s, judge {judged - loaded:.3f}s", file=sys.stderr)
        for row in report.rows:
            print(f"  check {row.id:2d} {row.status.value:4s} {row.seconds * 1000:7.1f} ms", file=sys.stderr)
    return 1 if report.verdict is Verdict.REJECTED else 0


def _subcommands() -> dict[str, Callable[[list[str]], int]]:
    def precommit(argv: list[str]) -> int:
        from verifier.hook import precommit_main

        return precommit_main(argv)

    def sglang_spec(argv: list[str]) -> int:
        from verifier.sglang.dump import sglang_spec_main

        return sglang_spec_main(argv)

    def action(argv: list[str]) -> int:
        from verifier.github.action import main as action_main

        return action_main(argv)

    commands = {"precommit": precommit, "sglang-spec": sglang_spec, "action": action}
    for module_name in ("record_git", "replay", "local"):
        commands.update(_verb(module_name))
    return commands


def _verb(module_name: str) -> dict[str, Callable[[list[str]], int]]:
    """A verb module of verifier/commands (NAME, HELP, add_arguments, run) as a subcommand."""
    import importlib

    module = importlib.import_module(f"verifier.commands.{module_name}")

    def call(argv: list[str]) -> int:
        parser = _Parser(prog=f"verify-pr {module.NAME}", description=module.__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(parser)
        return int(module.run(parser.parse_args(argv)))

    return {module.NAME: call}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `verify-pr`; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    try:
        sub = _subcommands().get(args_list[0]) if args_list else None
        if sub is not None:
            return sub(args_list[1:])
        args = build_parser().parse_args(args_list)
        if args.explain is not None:
            return _explain(args.explain)
        return _judge(args)
    except VerifierError as exc:
        print(f"verify-pr: {exc.one_line()}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("verify-pr: interrupted", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 2
    except Exception as exc:
        if debug:
            traceback.print_exc()
        message = " ".join(str(exc).split())[:300]
        print(f"verify-pr: internal error: {type(exc).__name__}: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
