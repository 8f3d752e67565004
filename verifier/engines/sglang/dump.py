"""Dump SGLang's real server-argument parser into a JSON "arg spec".

`dump_spec()` imports the installed sglang's `ServerArgs` (skipping `sglang/__init__`, which would
pull IPython and aiohttp), builds a fresh `argparse.ArgumentParser(prog="sglang serve")`, lets
`ServerArgs.add_cli_args` populate it, and records every action losslessly enough for
`verifier.engines.sglang.argspec` to rebuild an equivalent parser with the standard library alone.

This file needs only the standard library, the sglang under inspection and its sibling
`verifier/engines/argspec/dumpcore.py` (what the vLLM dumper shares): the `--image` form mounts both into a
container and runs them there with the image's own Python.

CLI (wired as `verify-pr sglang-spec dump`):

    dump [--out FILE] [--image IMAGE] [--stub MODULE[=VERSION]] ...

Without `--image` the sglang installed next to this Python is dumped. `--stub torchvision=0.29.1`
pre-registers an empty module (old sglang versions import torchvision at import time only for a
JPEG decoder that the parser never uses).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import types
from pathlib import Path
from typing import Any

try:
    from verifier.engines.argspec import dumpcore
except ImportError:  # run as a file by sglang's own Python (a container), where the verifier is not installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "argspec"))
    dumpcore = importlib.import_module("dumpcore")

SPEC_FORMAT = 1
ACTION_EXTRAS = ("new_flag", "const_value", "error_message")
json_safe = dumpcore.json_safe
spec_json = dumpcore.spec_json


class _DummyMeta(type):
    """Classes whose every public attribute is another dummy class (enums, constants, …)."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _DummyMeta(name, (), {})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Meta-path finder that serves empty modules for a fixed set of top-level names."""

    def __init__(self, stubs: dict[str, str | None]) -> None:
        self.stubs = stubs

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".")[0] in self.stubs:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        version = self.stubs.get(spec.name.split(".")[0])
        if version:
            module.__version__ = version

        def _missing(name: str) -> Any:  # any attribute: a dummy class, enough for import-time use
            if name.startswith("__"):
                raise AttributeError(name)
            return _DummyMeta(name, (), {})

        module.__getattr__ = _missing  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install_stubs(specs: list[str]) -> None:
    """Register stub modules (`name` or `name=version`) before sglang is imported."""
    stubs: dict[str, str | None] = {}
    for item in specs:
        name, _, version = item.partition("=")
        stubs[name.strip()] = version.strip() or None
    if stubs:
        sys.meta_path.insert(0, _StubFinder(stubs))


def _bare_sglang() -> None:
    """Register `sglang` as a bare package so `sglang/__init__` (IPython, aiohttp) is not run."""
    if "sglang" in sys.modules:
        return
    spec = importlib.util.find_spec("sglang")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("sglang is not installed in this Python environment")
    pkg = types.ModuleType("sglang")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__file__ = spec.origin
    pkg.__package__ = "sglang"
    sys.modules["sglang"] = pkg


def installed_version() -> str | None:
    """The installed sglang's version string, read without importing sglang (None if absent)."""
    return dumpcore.installed_version("sglang")


def build_real_parser(parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> Any:
    """A parser populated by the installed sglang's `ServerArgs.add_cli_args` (imports torch)."""
    _bare_sglang()
    from sglang.srt.server_args import ServerArgs  # noqa: PLC0415 - heavy, on purpose lazy

    parser = parser_class(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def _choices(choices: Any) -> Any:
    if choices is None:
        return None
    if isinstance(choices, set | frozenset):
        return sorted((json_safe(c) for c in choices), key=lambda v: json.dumps(v, sort_keys=True))
    return [json_safe(c) for c in choices]


def _rejects(func: Any, raw: str) -> bool:
    """Whether an argparse type function refuses a value (probed, not assumed)."""
    try:
        func(raw)
    except Exception:
        return True
    return False


def _type_info(type_name: str | None, func: Any) -> dict[str, Any] | None:
    """Data a custom argparse type needs to be re-implemented faithfully."""
    if type_name is None or func is None:
        return None
    short = type_name.rsplit(".", 1)[-1]
    module = sys.modules.get(getattr(func, "__module__", "") or "")
    backend = getattr(module, "Backend", None) if module is not None else None
    candidates = [backend.TC_PIECEWISE] if backend is not None and hasattr(backend, "TC_PIECEWISE") else []
    if short == "parse_cuda_graph_config_arg" and module is not None:
        phase = getattr(module, "Phase", None)
        allowed = getattr(module, "ALLOWED_KEYS_PER_PHASE", None)
        info: dict[str, Any] = {}
        if phase is not None:
            info["phases"] = list(getattr(phase, "ALL", ()))
        if isinstance(allowed, dict):
            info["allowed_keys"] = {str(k): list(v) for k, v in allowed.items()}
        first = info.get("phases", ["decode"])[0]
        info["retired_backends"] = [
            b for b in candidates if _rejects(func, json.dumps({first: {"backend": b}}))
        ]
        return info
    if short == "parse_cuda_graph_backend_arg":
        return {"retired_backends": [b for b in candidates if _rejects(func, b)]}
    return None


def spec_of_parser(parser: argparse.ArgumentParser, version: str | None) -> dict[str, Any]:
    """The JSON-safe spec of an argparse parser (help action excluded)."""
    actions: list[dict[str, Any]] = []
    type_info: dict[str, Any] = {}
    for action, action_name in dumpcore.spec_actions(parser):
        type_name = dumpcore.qualname(action.type)
        record = dumpcore.action_record(action, action_name, type_name, _choices(action.choices))
        for extra in ACTION_EXTRAS:
            if hasattr(action, extra):
                record[extra] = json_safe(getattr(action, extra))
        info = _type_info(type_name, action.type)
        if info and type_name:
            type_info[type_name] = info
        actions.append(record)
    return {
        "format": SPEC_FORMAT,
        "sglang_version": version,
        "prog": parser.prog,
        "allow_abbrev": parser.allow_abbrev,
        "prefix_chars": parser.prefix_chars,
        "python": dumpcore.python_version(),
        "type_info": dict(sorted(type_info.items())),
        "actions": actions,
    }


def dump_spec() -> dict[str, Any]:
    """Dump the installed sglang's server-argument parser (imports sglang, torch and triton)."""
    parser = build_real_parser()
    version = installed_version()
    try:
        from sglang.version import __version__ as module_version  # noqa: PLC0415

        version = module_version
    except ImportError:
        pass
    return spec_of_parser(parser, version)


def _docker_dump(image: str, stubs: list[str]) -> str:
    import subprocess  # noqa: PLC0415 - only a dump inside an image runs a program; a verdict never does

    docker = shutil.which("docker")
    if docker is None:
        raise RuntimeError("--image needs a docker engine, and no `docker` command is installed here")
    probe = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=60, check=False)
    if probe.returncode != 0:
        raise RuntimeError(f"--image needs a running docker engine: `docker info` failed: {probe.stderr.strip()[:300]}")
    here = Path(__file__).resolve()
    core = Path(dumpcore.__file__).resolve()
    cmd = [
        docker, "run", "--rm", "--network", "none", "--entrypoint", "python3",
        "-v", f"{here}:/tmp/infx_dump/sglang_dump.py:ro", "-v", f"{core}:/tmp/infx_dump/dumpcore.py:ro",
        image, "/tmp/infx_dump/sglang_dump.py",
    ]
    for stub in stubs:
        cmd += ["--stub", stub]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dump inside {image} failed (exit {done.returncode}): {done.stderr.strip()[-800:]}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    """`dump [--out FILE] [--image IMAGE] [--stub MODULE[=VERSION]]...`; returns an exit status."""
    cli = argparse.ArgumentParser(prog="verify-pr sglang-spec dump", description="Dump SGLang's server-arg spec.")
    cli.add_argument("--out", help="write the spec here (default: stdout)")
    cli.add_argument("--image", help="dump the sglang inside this container image (needs docker)")
    cli.add_argument("--stub", action="append", default=[], metavar="MODULE[=VERSION]",
                     help="serve an empty module for an import the parser does not use (e.g. torchvision=0.29.1)")
    args = cli.parse_args(argv)
    try:
        if args.image:
            text = _docker_dump(args.image, args.stub)
            spec_json(json.loads(text))  # validate that the container printed a spec
        else:
            install_stubs(args.stub)
            text = spec_json(dump_spec())
    except Exception as exc:  # a CLI: one line on stderr, status 2
        return dumpcore.cli_error("sglang-spec dump", exc)
    dumpcore.emit(text, args.out)
    return 0


def sglang_spec_main(argv: list[str]) -> int:
    """`verify-pr sglang-spec dump [--out FILE] [--image IMAGE]`: dump a version's arg spec."""
    if not argv or argv[0] != "dump":
        print("usage: verify-pr sglang-spec dump [--out FILE] [--image IMAGE] [--stub MODULE[=VERSION]]",
              file=sys.stderr)
        return 2
    return main(argv[1:])


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main(sys.argv[1:]))
