"""Dump vLLM's real `vllm serve` argument parser into a JSON "arg spec", and record real parses.

`dump_spec()` imports the installed vllm's `make_arg_parser` (the parser of `vllm serve` and of
`python -m vllm.entrypoints.openai.api_server`), fills a fresh `FlexibleArgumentParser` with it and
records every action: option strings (aliases such as `-tp`, `--no-` forms), dest, action class,
nargs, const, default, choices, and the argparse *type* as a structured descriptor (vLLM wraps
its types in closures: `optional_type(int)`, `parse_type(json.loads)`, a pydantic-validated
dataclass, ...). It also records, by probing the real parser, how its `parse_args` rewrites the
command line before argparse sees it (`--a_b` == `--a-b`, dotted `--x.y v` JSON keys, `+` list
items, human-readable numbers, `-O3`). `verifier.engines.vllm.argspec` rebuilds an equivalent parser from
that with the standard library alone.

`record_outcomes(corpus)` parses command lines with the real parser and returns what it stored
(JSON-safe) or the error it raised: committed as data, these are what the spec parser is tested
against for every version that is not installed (tests/engines/test_vllm_equivalence.py).

vLLM decides a default device at import time and has no device on a CPU-only machine; the
parser itself does not depend on it, so the dump sets a stand-in CUDA platform (device type
`cuda`, the generic platform hooks) before the parser is built. Nothing here starts an engine.

This file needs only the standard library, the vllm under inspection and
`verifier/engines/argspec/dumpcore.py` (what the SGLang dumper shares), which it imports as a sibling file
when vllm's own Python runs it.

    dump [--out FILE] [--record CORPUS.json --record-out FILE]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

try:
    from verifier.engines.argspec import dumpcore
except ImportError:  # run as a file by vllm's own Python (a throwaway venv), where the verifier is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "argspec"))
    dumpcore = importlib.import_module("dumpcore")

SPEC_FORMAT = 1
json_safe = dumpcore.json_safe
spec_json = dumpcore.spec_json
PROBE_KEY = "infx_probe"


def installed_version() -> str | None:
    """The installed vllm's version, read from package metadata (no import); None if absent."""
    return dumpcore.installed_version("vllm")


def _stand_in_platform() -> None:
    """A CUDA-typed generic platform, so DeviceConfig's default can be built without a GPU."""
    import vllm.platforms as platforms  # noqa: PLC0415 - heavy, on purpose lazy
    from vllm.platforms.interface import Platform, PlatformEnum  # noqa: PLC0415

    if getattr(getattr(platforms, "_current_platform", None), "device_type", None):
        return  # a real platform was detected (a vLLM CPU build, or a GPU)

    class StandInCuda(Platform):  # type: ignore[misc, valid-type]
        _enum = PlatformEnum.CUDA
        device_name = "cuda"
        device_type = "cuda"
        dispatch_key = "CUDA"

    platforms._current_platform = StandInCuda()  # noqa: SLF001


def build_real_parser(raising: bool = True) -> Any:
    """vLLM's own serve parser (FlexibleArgumentParser + make_arg_parser); errors raise when `raising`."""
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    _stand_in_platform()
    from vllm.entrypoints.openai.cli_args import make_arg_parser  # noqa: PLC0415
    from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: PLC0415

    base: type = FlexibleArgumentParser
    if raising:
        class Raising(FlexibleArgumentParser):  # type: ignore[misc, valid-type]
            def error(self, message: str) -> Any:
                raise RealParseError(message)

            def exit(self, status: int = 0, message: str | None = None) -> Any:
                raise RealParseError(message.strip() if message else "help requested")

        base = Raising
    return make_arg_parser(base(prog="vllm serve"))


class RealParseError(Exception):
    """The real parser refused a command line (argparse's message)."""


def _closure(func: Any, name: str) -> Any:
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None) or ()
    if code is None:
        return None
    for var, cell in zip(code.co_freevars, cells, strict=False):
        if var == name:
            return cell.cell_contents
    return None


def type_descriptor(func: Any) -> Any:
    """A JSON descriptor of an argparse type callable (None, a name, or {kind: ...})."""
    if func is None:
        return None
    if func in (str, int, float):
        return func.__name__
    if func is json.loads:
        return "json.loads"
    qual = getattr(func, "__qualname__", "") or ""
    if qual.endswith("optional_type.<locals>._optional_type"):
        return {"optional": type_descriptor(_closure(func, "return_type"))}
    if qual.endswith("parse_type.<locals>._parse_type"):
        return {"parse": type_descriptor(_closure(func, "return_type"))}
    if qual.endswith("parse_dataclass"):
        defaults = getattr(func, "__defaults__", None) or ()
        cls = defaults[0] if defaults else _closure(func, "dataclass_cls")
        names = set(getattr(getattr(func, "__code__", None), "co_names", ()))
        return {"dataclass": dumpcore.qualname(cls) if cls is not None else None,
                "human_readable": "_expand_json_human_readable_numbers" in names}
    if qual.endswith("<lambda>"):
        code = func.__code__
        return {"lambda": sorted(set(code.co_names))}
    short = qual.rsplit(".", 1)[-1]
    if short in ("union_dict_and_str", "human_readable_int", "human_readable_int_or_auto"):
        return short
    return {"unknown": dumpcore.qualname(func)}


def _deprecated_actions() -> set[int]:
    try:
        from vllm.utils.argparse_utils import FlexibleArgumentParser  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        return set()
    return {id(a) for a in getattr(FlexibleArgumentParser, "_deprecated", ())}


def _probe(parser: Any, argv: list[str], dest: str) -> Any:
    try:
        ns = parser.parse_args(argv)
    except (RealParseError, Exception) as exc:  # noqa: BLE001 - a probe records any refusal
        return {"$error": str(exc)[:200]}
    return json_safe(getattr(ns, dest, None))


def features(parser: Any) -> dict[str, Any]:
    """How `FlexibleArgumentParser.parse_args` rewrites a command line, established by probing."""
    defaults = {a.dest: a.default for a in parser._actions}  # noqa: SLF001
    out: dict[str, Any] = {
        "underscore_flags": _probe(parser, ["--tensor_parallel_size", "2"], "tensor_parallel_size") == 2,
        "dotted": _probe(parser, [f"--hf-overrides.{PROBE_KEY}", "1"], "hf_overrides") == {PROBE_KEY: 1},
        "dotted_plus": _probe(parser, [f"--hf-overrides.{PROBE_KEY}+", "a,b"], "hf_overrides")
        == {PROBE_KEY: ["a", "b"]},
        "dotted_human_readable": _probe(parser, [f"--hf-overrides.{PROBE_KEY}", "2k"], "hf_overrides")
        == {PROBE_KEY: 2000},
    }
    o_flag: dict[str, Any] = {}
    for form in (["-O3"], ["-O", "3"], ["-O=3"]):
        try:
            ns = parser.parse_args(form)
        except Exception as exc:  # noqa: BLE001
            o_flag[" ".join(form)] = {"$error": str(exc)[:200]}
            continue
        changed = {d: json_safe(getattr(ns, d)) for d in vars(ns) if getattr(ns, d) != defaults.get(d)}
        o_flag[" ".join(form)] = changed
    out["o_flag"] = o_flag
    return out


def spec_of_parser(parser: Any, version: str | None) -> dict[str, Any]:
    """The JSON-safe spec of the real parser (help action excluded)."""
    deprecated = _deprecated_actions()
    actions = []
    for action, name in dumpcore.spec_actions(parser):
        choices = None if action.choices is None else [json_safe(c) for c in action.choices]
        record = dumpcore.action_record(action, name, type_descriptor(action.type), choices)
        record["deprecated"] = id(action) in deprecated or bool(getattr(action, "deprecated", False))
        actions.append(record)
    return {
        "format": SPEC_FORMAT,
        "vllm_version": version,
        "prog": "vllm serve",
        "allow_abbrev": parser.allow_abbrev,
        "python": dumpcore.python_version(),
        "features": features(parser),
        "actions": actions,
    }


def dump_spec() -> dict[str, Any]:
    """Dump the installed vllm's serve parser (imports vllm and torch)."""
    parser = build_real_parser()
    return spec_of_parser(parser, installed_version())


def _stable(message: str) -> str:
    """An error message without object addresses (`<function loads at 0x7f..>` -> `<function loads>`)."""
    return re.sub(r" at 0x[0-9a-f]+", "", message)


def real_outcome(parser: Any, argv: list[str]) -> dict[str, Any]:
    """What the real parser makes of one server argv: {"ok": the dests that differ from their
    defaults} (every other dest holds its recorded default) or {"error": message}."""
    try:
        ns = parser.parse_args(list(argv))
    except RealParseError as exc:
        return {"error": _stable(str(exc))}
    except Exception as exc:  # noqa: BLE001 - a type or action raising outside argparse
        return {"error": _stable(f"{type(exc).__name__}: {exc}")[:500]}
    defaults = {a.dest: a.default for a in parser._actions}  # noqa: SLF001
    changed = {}
    for key, value in sorted(vars(ns).items()):
        try:
            same = key in defaults and value == defaults[key] and type(value) is type(defaults[key])
        except Exception:  # noqa: BLE001 - a value whose == raises
            same = False
        if not same:
            changed[key] = json_safe(value)
    return {"ok": changed}


def record_outcomes(corpus: list[dict[str, Any]]) -> dict[str, Any]:
    """Real-parser outcomes for a corpus of `{label, argv}` items (argv = the server arguments)."""
    parser = build_real_parser()
    return {
        "format": SPEC_FORMAT,
        "vllm_version": installed_version(),
        "outcomes": [{"label": item["label"], "argv": list(item["argv"]), **real_outcome(parser, item["argv"])}
                     for item in corpus],
    }


def main(argv: list[str] | None = None) -> int:
    """`dump [--out FILE] [--record CORPUS --record-out FILE]`; returns an exit status."""
    cli = argparse.ArgumentParser(prog="verify-pr engine-spec dump vllm",
                                  description="Dump vLLM's serve arg spec (and record real parses).")
    cli.add_argument("--out", help="write the spec here (default: stdout)")
    cli.add_argument("--record", help="a corpus JSON ([{label, argv}]) to parse with the real parser")
    cli.add_argument("--record-out", help="where to write the recorded outcomes")
    args = cli.parse_args(argv)
    try:
        text = spec_json(dump_spec())
        recorded = None
        if args.record:
            corpus = json.loads(Path(args.record).read_text(encoding="utf-8"))
            recorded = spec_json(record_outcomes(corpus))
    except Exception as exc:  # a CLI: one line on stderr, status 2
        return dumpcore.cli_error("vllm-spec dump", exc, limit=500)
    dumpcore.emit(text, args.out)
    if recorded is not None:
        dumpcore.emit(recorded, args.record_out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
