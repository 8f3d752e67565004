"""Turns findings into sentences, in English and Chinese, through the jinja2 templates.

Every str parameter is sanitized before a template sees it: folded onto one line, capped, and
wrapped in a Markdown code span, so that text taken from a PR (titles, quoted values, paths) can
never forge our marker, header or rows, start a new line, or @-mention anyone.

A template reads its params as `p.name` (or `p["name"]`), and that is always the param `name`, even
when it is called like a dict method (`keys`, `items`, `get`...): params reach templates as `Params`,
whose attributes are its params only. Rendering one finding never loses a verdict: if its template
raises, that sentence degrades to a fixed one naming the check and message id (`render_finding`).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from functools import cache
from importlib.machinery import SourceFileLoader
from pathlib import Path
from typing import Any, Literal

import jinja2
import jinja2.bccache

from verifier.core import cache as content_cache
from verifier.core.resources import TEMPLATE_DIR, TEMPLATE_OPTIONS
from verifier.core.results import CheckResult, Finding
from verifier.core.runner import NOT_RUN

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")
MAX_PARAM_CHARS = 200


# Characters that must never reach a PR comment or a terminal as themselves: C0/C1 controls
# (ANSI escape sequences start with ESC or CSI), bidi embeddings/overrides/isolates and marks
# (they reorder what a reviewer reads), and lone UTF-16 surrogates (no encoder can write them).
# Each is shown as a visible `[U+XXXX]` instead.
_INVISIBLE = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
              *range(0x2066, 0x206A), *range(0xD800, 0xE000)]
_NEUTRAL = {cp: f"[U+{cp:04X}]" for cp in _INVISIBLE}


def neutralize(text: str) -> str:
    """text with every control, bidi and lone-surrogate character replaced by a visible `[U+XXXX]`."""
    return text.translate(_NEUTRAL)


def code_span(value: str) -> str:
    """Render untrusted text as a single-line Markdown code span that nothing can break out of."""
    text = neutralize(" ".join(str(value).split()))
    if len(text) > MAX_PARAM_CHARS:
        text = text[: MAX_PARAM_CHARS - 1] + "…"
    # A backtick would close the span; U+02CB looks alike and cannot.
    text = text.replace("`", "\u02cb")
    # Even inside a code span, never carry an HTML comment opener: it could imitate our marker
    # to anything that searches the raw comment body.
    text = text.replace("<!--", "<!\u200c--").replace("-->", "-\u200c->")
    return f"`{text}`" if text else ""


def sanitize(value: Any) -> Any:
    """Sanitize template parameters recursively: strings become code spans, numbers stay numbers."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return code_span(value)
    if isinstance(value, int | float):
        return value
    if isinstance(value, Mapping):
        return {k: sanitize(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [sanitize(v) for v in items]
    return code_span(str(value))


class Params(dict[str, Any]):
    """A finding's sanitized params as a template sees them.

    A plain dict to Python; to a template (through `TemplateEnvironment`), `p.name` and `p["name"]`
    are the param `name` or, when there is none, the environment's Undefined (strict: an error),
    never a dict method: a param named `keys`, `items`, `values`, `get`, `update`, `pop`, `copy`...
    is that param. Nested mappings are Params too (`template_params`).
    """

    __slots__ = ()


def template_params(value: Any) -> Any:
    """Sanitized params as templates get them: every mapping, at any depth, a `Params`."""
    if isinstance(value, Mapping):
        return Params({k: template_params(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return [template_params(v) for v in value]
    return value


class TemplateEnvironment(jinja2.Environment):
    """A jinja2 environment in which attribute and item access on `Params` reach the params only."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, Params):
            if attribute in obj:
                return obj[attribute]
            return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, Params):
            try:
                return obj[argument]
            except (KeyError, TypeError):
                return self.undefined(obj=obj, name=argument)
        return super().getitem(obj, argument)


def _fmt_num(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _pct(value: Any) -> str:
    return f"{value:+.1f}%" if isinstance(value, int | float) else str(value)


class ContentBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates in the content-addressed cache (verifier.core.cache), named by their source's hash.

    Compiling the 40-odd message templates is the largest fixed cost of a cold verdict; jinja's own
    file cache names entries by template path, this one by the SHA-256 of the source and of the
    environment's options, so an edited template can never be served stale code.
    """

    def __init__(self, options: str) -> None:
        self.options = options

    def _path(self, key: str) -> Any:
        return content_cache.entry_path(f"jinja-{jinja2.__version__}", key, ".jbc")

    def get_bucket(self, environment: jinja2.Environment, name: str, filename: str | None, source: str) -> Any:
        key = content_cache.content_key("jinja", [self.options.encode(), source.encode("utf-8")])
        bucket = jinja2.bccache.Bucket(environment, key, self.get_source_checksum(source))
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Any) -> None:
        data = content_cache.read_bytes(self._path(bucket.key))
        if data is not None:
            bucket.bytecode_from_string(data)

    def dump_bytecode(self, bucket: Any) -> None:
        content_cache.write_bytes(self._path(bucket.key), bucket.bytecode_to_string())


class PrebuiltLoader(jinja2.FileSystemLoader):
    """The templates folder, each template taken compiled from the wheel's prebuilt layer when that was
    compiled from exactly this source by an environment like this one (verifier.core.cache); any other
    template (edited, or no prebuilt layer: a source checkout, an editable install) compiles as usual,
    through the environment's bytecode cache."""

    _signature: str | None = None

    def load(self, environment: jinja2.Environment, name: str,
             globals: MutableMapping[str, Any] | None = None) -> jinja2.Template:
        source, filename, uptodate = self.get_source(environment, name)
        if self._signature is None:
            self._signature = content_cache.template_signature(environment)
        module = content_cache.prebuilt_template(name, source, self._signature)
        if module is not None:
            try:
                loader = SourceFileLoader(f"_infx_template_{module.stem}", str(module))
                code = loader.get_code(loader.name)  # the .pyc pip wrote at install, else compiled (and cached) now
                namespace: dict[str, Any] = {"__name__": loader.name, "__file__": filename}
                exec(code, namespace)  # type: ignore[arg-type]  # noqa: S102 - our own shipped module
                template = environment.template_class.from_module_dict(environment, namespace, globals or {})
                template._uptodate = uptodate
                return template
            except Exception:  # a damaged prebuilt module only costs the compile below
                pass
        return super().load(environment, name, globals)


# The bytecode cache's key: these options (the same as before templates were prebuilt, so that a user cache stays valid).
_ENV_OPTIONS = {"undefined": "strict", **TEMPLATE_OPTIONS}


@cache
def environment() -> jinja2.Environment:
    """The jinja2 environment (strict: an unknown parameter is an error, not an empty string)."""
    return make_environment(TEMPLATE_DIR)


def make_environment(template_dir: Path) -> jinja2.Environment:
    """A jinja2 environment of the templates in template_dir, as `environment()` is of ours.

    Its options are verifier.core.resources.TEMPLATE_OPTIONS and its filters TEMPLATE_FILTERS: setup.py
    compiles the shipped templates with the same (PrebuiltLoader uses those only while they match).
    """
    env = TemplateEnvironment(
        loader=PrebuiltLoader(str(template_dir)),
        bytecode_cache=ContentBytecodeCache(repr(sorted(_ENV_OPTIONS.items()))),
        undefined=jinja2.StrictUndefined,
        **TEMPLATE_OPTIONS,
    )
    env.filters["num"] = _fmt_num
    env.filters["pct"] = _pct
    return env


@cache
def _module(name: str) -> Any:
    try:
        return environment().get_template(name).module
    except jinja2.TemplateNotFound:
        return None


def _macro_name(message_id: str) -> str:
    return message_id.replace("-", "_")


def message_macro(check_id: int, message_id: str, lang: Lang) -> Any:
    """The macro that renders a message id: the check's own template first, then the common one."""
    name = _macro_name(message_id)
    for template in (f"checks/c{check_id:02d}.{lang}.md.j2", f"common.{lang}.md.j2"):
        module = _module(template)
        if module is not None and hasattr(module, name):
            return getattr(module, name)
    return None


# The runner's own row for a check left out of the run (--only / --skip): no check says it, so it
# has no check template; `option` is the command-line option, an identifier (a code span).
NOT_RUN_TEXT: dict[Lang, str] = {
    "en": "Not run ({option}): this check was left out of the run, so the verdict is partial and says nothing "
          "about it.",
    "zh": "未运行（{option}）：本次运行未执行此检查，因此结论只是部分结论，不涵盖此项。",
}


# What a finding says when its template raised: a bug in the verifier, never in the PR. Fixed text, one
# line, no template, so it cannot fail itself; `check` is a number, `message` a code span.
UNRENDERABLE_TEXT: dict[Lang, str] = {
    "en": "Check {check}: the text of this finding could not be rendered (message id {message}); this is a bug "
          "in the verifier, and the row keeps the status the check gave it.",
    "zh": "检查 {check}：无法生成此发现项的文字（消息 ID {message}）；这是验证器的缺陷，本行保持该检查给出的状态。",
}

# Every render that degraded, by (check id, message id); each distinct failure is also reported once on stderr.
RENDER_FAILURES: Counter[tuple[int, str]] = Counter()
_REPORTED: set[tuple[int, str, str, str]] = set()


def render_failures() -> dict[tuple[int, str], int]:
    """How many finding sentences degraded to `UNRENDERABLE_TEXT` in this process, by (check id, message id)."""
    return dict(RENDER_FAILURES)


def unrenderable_text(check_id: int, message_id: str, lang: Lang) -> str:
    """The fixed sentence a finding degrades to when its template raised."""
    return UNRENDERABLE_TEXT[lang].format(check=check_id, message=code_span(str(message_id)))


def _guarded(check_id: int, message_id: str, lang: Lang, render: Callable[[], str]) -> str:
    """render(), or, if it raises, the fixed degraded sentence (counted, and reported once on stderr)."""
    try:
        return render()
    except Exception as error:  # any template error degrades one sentence, never the verdict
        RENDER_FAILURES[(check_id, str(message_id))] += 1
        key = (check_id, str(message_id), lang, type(error).__name__)
        if key not in _REPORTED:
            _REPORTED.add(key)
            detail = neutralize(" ".join(str(error).split())[:300])
            print(f"verify-pr: warning: could not render Check {check_id} message {message_id!r} ({lang}): "
                  f"{type(error).__name__}: {detail}; the row shows a fixed sentence instead", file=sys.stderr)
        return unrenderable_text(check_id, str(message_id), lang)


def _render_finding(check_id: int, item: Finding, lang: Lang) -> str:
    if item.message_id == NOT_RUN:
        return NOT_RUN_TEXT[lang].format(option=code_span(str(item.params.get("option", ""))))
    macro = message_macro(check_id, item.message_id, lang)
    params = template_params(sanitize(item.params))
    if macro is None:
        # A missing template is a bug in the project, not the PR: say so, never drop the finding.
        fallback = message_macro(check_id, "untranslated-message", lang)
        return " ".join(str(fallback(code_span(item.message_id), params)).split())
    return " ".join(str(macro(params)).split())


def render_finding(check_id: int, item: Finding, lang: Lang) -> str:
    """One finding as one sentence in one language; a template that raises degrades it to `UNRENDERABLE_TEXT`."""
    return _guarded(check_id, item.message_id, lang, lambda: _render_finding(check_id, item, lang))


def render_summary(check_id: int, result: CheckResult, lang: Lang) -> str:
    """The row text of one check: its findings' sentences joined."""
    sentences = [render_finding(check_id, f, lang) for f in result.findings]
    text = " ".join(s for s in sentences if s)
    if text:
        return text
    return _guarded(check_id, "no-findings", lang,
                    lambda: str(message_macro(check_id, "no-findings", lang)(Params())).strip())


def id_ranges(ids: Iterable[int]) -> str:
    """Check ids as a short list: `1-12, 14, 15` (runs of three or more as a range)."""
    ordered = sorted(set(ids))
    parts: list[str] = []
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 2:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts.extend(str(i) for i in ordered[start:end + 1])
        start = end + 1
    return ", ".join(parts)


def partial_note(skipped: Iterable[int], lang: Lang = "en") -> str:
    """What a partial verdict adds to its header: `partial: checks 14, 15 not run`."""
    ids = sorted(set(skipped))
    listed = id_ranges(ids)
    if lang == "zh":
        return f"部分结论：检查 {listed.replace(', ', '、')} 未运行"
    return f"partial: check{'s' if len(ids) > 1 else ''} {listed} not run"


_OVERRIDE_PARTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("applied", "Policy overrides applied from the base ({commit}): {files}"),
           ("refused", "refused: {files} (see Check 5)"),
           ("changed_by_pr", "changed by this PR, not applied: {files}")),
    "zh": (("applied", "已应用基线（{commit}）中的策略覆盖：{files}"),
           ("refused", "已拒绝：{files}（见检查 5）"),
           ("changed_by_pr", "本 PR 修改、未应用：{files}")),
}
_OVERRIDE_PUNCTUATION = {"en": ("; ", "."), "zh": ("；", "。")}


def overrides_note(overrides: Mapping[str, Any] | None, lang: Lang = "en") -> str | None:
    """One line naming the InferenceX policy overrides a verdict applied, refused, or saw the PR change
    (`verifier.documents.policy_overrides`); None when the base tree holds none."""
    if not overrides:
        return None
    commit = code_span(str(overrides.get("base_commit") or "")[:12])
    parts = [template.format(commit=commit, files=", ".join(code_span(str(item.get("file", "")))
                                                           for item in overrides[key]))
             for key, template in _OVERRIDE_PARTS[lang] if overrides.get(key)]
    joiner, end = _OVERRIDE_PUNCTUATION[lang]
    return joiner.join(parts) + end if parts else None
