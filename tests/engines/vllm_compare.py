"""Compare the spec parser's reading of a vLLM command line with a real-parser outcome.

A real outcome (verifier/engines/vllm/dump.py `real_outcome`) is `{"ok": {dest: value}}` with only the
dests that differ from their defaults, or `{"error": message}`. The spec parser's reading must
hold the same value for every dest (the recorded default for the others), or refuse with the same
argparse message. Two differences are by design, and only these are tolerated:

* a pydantic-validated dataclass argument (`--compilation-config`, `--kv-transfer-config`, ...):
  the real parser stores the dataclass (`{"$dataclass": ...}`), the spec parser the JSON object
  written; the real parser's validation errors are not reproduced (the spec parser accepts, and
  reports the dest as `unmodelled`, or refuses the command line at a later argument);
* object reprs (`$repr`) of values that are not data.
"""

from __future__ import annotations

import re
from typing import Any

from verifier.engines.vllm import resolve_vllm
from verifier.engines.vllm.argspec import load_argspec
from verifier.engines.vllm.dump import json_safe

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _norm_message(text: str) -> str:
    return _ADDRESS.sub("", text).strip()


def ours(argv: list[str], version: str) -> dict[str, Any]:
    """The spec parser's outcome in the recorded shape (full namespace) plus its unmodelled dests."""
    resolved = resolve_vllm(argv, version=version, raise_errors=False, serve_model=False)
    if resolved.error is not None:
        return {"error": resolved.error.message}
    return {"ok": {k: json_safe(v) for k, v in resolved.namespace.items()}, "unmodelled": sorted(resolved.unmodelled)}


def differences(argv: list[str], version: str, real: dict[str, Any]) -> list[str]:
    """What differs between the spec parser and one recorded real outcome (empty: equivalent)."""
    mine = ours(argv, version)
    if "error" in real:
        if "error" in mine:
            if _norm_message(mine["error"]) == _norm_message(real["error"]):
                return []
            if "validation error for" in real["error"]:
                return []  # both refuse; the real parser's pydantic validation stops it at an earlier argument
            return [f"messages differ: real {real['error']!r}, spec {mine['error']!r}"]
        if "validation error" in real["error"] and mine.get("unmodelled"):
            return []  # pydantic validation of a dataclass argument: not modelled (documented)
        return [f"real refuses ({real['error'][:160]!r}), spec accepts"]
    if "error" in mine:
        return [f"real accepts, spec refuses: {mine['error'][:200]!r}"]
    defaults = load_argspec(version).defaults()
    out = []
    for dest, value in mine["ok"].items():
        want = real["ok"].get(dest, defaults.get(dest))
        if isinstance(want, dict) and ("$dataclass" in want or "$repr" in want):
            continue
        if value != want:
            out.append(f"{dest}: real {want!r}, spec {value!r}")
    out += [f"{dest}: only the real namespace has it" for dest in real["ok"] if dest not in mine["ok"]]
    return out
