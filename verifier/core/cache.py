"""A content-addressed cache for work that depends only on our own shipped files.

What it holds: the validated policies and the compiled message templates, both pure functions of
bytes that ship with the package. Every entry is named by the SHA-256 of the exact bytes it was
derived from (plus the format of the entry), never by a path or a time, so a stale entry can only be
missed, never used: a verdict stays a pure function of its bundle and of the project's files.
Nothing from a bundle is cached here.

Where: `$INFX_VERIFIER_CACHE` if set (`off`, `0` or an empty value disables the cache), else
`$XDG_CACHE_HOME/infx-verifier`, else `~/.cache/infx-verifier`. A cache that cannot be read or written
(read-only home, full disk) is skipped silently: it only ever saves time.

The prebuilt layer. A fresh machine (a GitHub Action runner) has an empty cache, so a wheel ships the same
work done once at build time: setup.py calls `build_prebuilt` on the built package (with
verifier.core.policy.prebuild_policies), which writes
`verifier/_data/prebuilt/` (verifier.core.resources.PREBUILT_DIR):
* `policies.json`: every policies/<topic>.yaml parsed and validated, with the SHA-256 of the policy file
  and of its schema (verifier.core.policy uses an entry only when both digests match the files it reads,
  so an edited policy or a `--policies` directory is validated as without it, and jsonschema is never
  imported for a file that matches);
* `templates/`: every message template compiled by jinja2 to a Python module (which pip byte-compiles at
  install), and `manifest.json` with the SHA-256 of each template's source and the signature of the
  jinja2 environment that compiled it (jinja2 version, lexer options, filter and test names). A template is
  taken from there only when its source and the running environment's signature match
  (verifier.render.text); otherwise it is compiled as without it. This layer is never written at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from verifier.core.resources import PREBUILT_DIR, TEMPLATE_DIR, TEMPLATE_FILTERS, TEMPLATE_OPTIONS

_DISABLED = {"", "0", "off", "false", "no"}


@cache
def cache_dir() -> Path | None:
    """The cache folder, or None when the cache is disabled."""
    configured = os.environ.get("INFX_VERIFIER_CACHE")
    if configured is not None:
        return None if configured.strip().lower() in _DISABLED else Path(configured)
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "infx-verifier"


def content_key(kind: str, blobs: Iterable[bytes]) -> str:
    """SHA-256 over the bytes an entry derives from, the entry kind and the Python version."""
    digest = hashlib.sha256(f"{kind}\0{sys.version_info[:2]}\0".encode())
    for blob in blobs:
        digest.update(len(blob).to_bytes(8, "big"))
        digest.update(blob)
    return digest.hexdigest()


def entry_path(kind: str, key: str, suffix: str) -> Path | None:
    """Where the entry of this kind and key lives (None when caching is off)."""
    root = cache_dir()
    return None if root is None else root / kind / f"{key}{suffix}"


def read_bytes(path: Path | None) -> bytes | None:
    """An entry's bytes, or None when absent or unreadable."""
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def write_bytes(path: Path | None, data: bytes) -> None:
    """Write an entry atomically (a reader never sees half a file); errors are ignored."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def read_json(kind: str, key: str) -> Any | None:
    """A JSON entry, or None when absent, unreadable or not valid JSON."""
    data = read_bytes(entry_path(kind, key, ".json"))
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def write_json(kind: str, key: str, value: Any) -> None:
    """Store a JSON entry (values that are not JSON data are not cached)."""
    try:
        data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError):
        return
    write_bytes(entry_path(kind, key, ".json"), data)


# --------------------------------------------------------------------------- the prebuilt layer

PREBUILT_FORMAT = 1  # bump when the layout or the meaning of a prebuilt file changes
PREBUILT_POLICIES = "policies.json"
PREBUILT_TEMPLATES = "templates"
TEMPLATE_MANIFEST = "manifest.json"

# The jinja2 environment attributes that shape the code a template compiles to.
_COMPILE_ATTRS = ("block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
                  "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
                  "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized",
                  "is_async", "autoescape", "finalize")


def sha256(data: bytes) -> str:
    """The hex SHA-256 of bytes (how prebuilt entries name what they were made from)."""
    return hashlib.sha256(data).hexdigest()


@cache
def prebuilt_json(name: str) -> dict[str, Any]:
    """A prebuilt JSON document of this install (`{}` when there is none, it is unreadable, or of another format)."""
    if PREBUILT_DIR is None:
        return {}
    try:
        document = json.loads((PREBUILT_DIR / name).read_bytes())
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) and document.get("format") == PREBUILT_FORMAT else {}


def prebuilt_policy(topic: str, policy: bytes, schema: bytes) -> Any | None:
    """The validated data of policies/<topic>.yaml prebuilt from exactly these policy and schema bytes, else None."""
    entry = prebuilt_json(PREBUILT_POLICIES).get("policies", {}).get(topic)
    if not isinstance(entry, dict) or entry.get("sha256") != sha256(policy) or entry.get("schema_sha256") != sha256(schema):
        return None
    return entry.get("data")


def template_signature(environment: Any) -> str:
    """What a compiled template depends on besides its source: the jinja2 version and the environment's
    lexer and code-generation options, extensions, filter and test names (compilation refuses an unknown
    filter or test), as one string."""
    import jinja2  # noqa: PLC0415 - only for templates; the policies path (and the pre-commit hook) never needs it

    fields: dict[str, Any] = {attr: repr(getattr(environment, attr, None)) for attr in _COMPILE_ATTRS}
    fields.update(jinja2=jinja2.__version__, code_generator=repr(environment.code_generator_class),
                  extensions=sorted(environment.extensions), filters=sorted(environment.filters),
                  tests=sorted(environment.tests))
    return json.dumps(fields, sort_keys=True)


def prebuilt_template(name: str, source: str, signature: str) -> Path | None:
    """The module compiled from template `name`, when this install ships one compiled from exactly this source
    by an environment of exactly this signature; else None (the caller compiles the template itself)."""
    manifest = prebuilt_json(f"{PREBUILT_TEMPLATES}/{TEMPLATE_MANIFEST}")
    if PREBUILT_DIR is None or manifest.get("signature") != signature:
        return None
    entry = manifest.get("templates", {}).get(name)
    if not isinstance(entry, dict) or entry.get("sha256") != sha256(source.encode("utf-8")):
        return None
    module = str(entry.get("module", ""))
    path = PREBUILT_DIR / PREBUILT_TEMPLATES / module
    return path if module == Path(module).name and path.suffix == ".py" and path.is_file() else None


def _build_only_filter(value: Any, *args: Any, **kwargs: Any) -> Any:
    """Stands for a filter of verifier.render.text at build time: compiling needs a filter's name, never its code."""
    raise AssertionError("a build-time environment renders nothing")


def compile_templates(template_dir: Path, out: Path) -> int:
    """Build time: compile every template under template_dir to a module in `out`, with the manifest; returns
    how many. A template that does not compile is left out (a run compiles it and reports the error)."""
    import jinja2  # noqa: PLC0415

    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(template_dir)),
                                     undefined=jinja2.StrictUndefined, **TEMPLATE_OPTIONS)
    for name in TEMPLATE_FILTERS:
        environment.filters[name] = _build_only_filter
    out.mkdir(parents=True, exist_ok=True)
    entries: dict[str, dict[str, str]] = {}
    for name in environment.list_templates():
        source, filename, _ = environment.loader.get_source(environment, name)  # type: ignore[union-attr]
        try:
            code = environment.compile(source, name, filename, raw=True, defer_init=True)
        except jinja2.TemplateError as error:
            print(f"infx-verifier build: template {name} not prebuilt: {error}", file=sys.stderr)
            continue
        module = f"t_{sha256(name.encode('utf-8'))[:32]}.py"
        (out / module).write_text(f"# Compiled from templates/{name} by jinja2 {jinja2.__version__}; generated, "
                                  f"do not edit.\n{code}\n", encoding="utf-8")
        entries[name] = {"sha256": sha256(source.encode("utf-8")), "module": module}
    manifest = {"format": PREBUILT_FORMAT, "signature": template_signature(environment), "templates": entries}
    (out / TEMPLATE_MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return len(entries)


def build_prebuilt(out: Path, policies: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Build time (setup.py, on the built package): write the prebuilt layer into `out`, with the validated
    policies (verifier.core.policy.prebuild_policies) and our templates compiled; returns what it holds."""
    out.mkdir(parents=True, exist_ok=True)
    document = {"format": PREBUILT_FORMAT, "policies": policies}
    (out / PREBUILT_POLICIES).write_text(json.dumps(document, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    return {"policies": len(policies), "templates": compile_templates(TEMPLATE_DIR, out / PREBUILT_TEMPLATES)}
