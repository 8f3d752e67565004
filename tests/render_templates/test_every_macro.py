"""Every message macro of every template renders, with realistic and with hostile params, without losing a row.

The macros are found by parsing the template files (`{% macro name(args) %}`), not through jinja, so a
macro that jinja cannot load is still enumerated. Each is rendered through the row renderer
(`verifier.render.text.render_finding`), in English and Chinese:

* with the params the fixtures' and shared cases' findings really carry (judged once per module);
  these must render their own sentence, never the degraded one;
* with adversarial params: every param name the macro reads (`p.NAME`, `p["NAME"]`), plus params named
  like dict methods (`keys`, `items`, `values`), set to each hostile value in turn; these may degrade,
  but no exception escapes, the text is one line, and PR text stays inside code spans.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.kit import CASES, FIXTURES
from verifier.core.resources import TEMPLATE_DIR
from verifier.core.results import Finding, Status, failed, finding, passed
from verifier.render import text
from verifier.render.text import LANGS, Lang, Params, render_finding, render_summary, unrenderable_text

_MACRO = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\(([^)]*)\)\s*-?%\}(.*?)\{%-?\s*endmacro\s*-?%\}", re.S)
_PARAM_NAMES = re.compile(r"""\bp\s*(?:\.\s*(\w+)|\[\s*["'](\w+)["']\s*\])""")
_METHOD_CALL = re.compile(r"\bp\s*\.\s*\w+\s*\(")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
DICT_METHOD_NAMES = ("keys", "items", "values")

HOSTILE = ("<!-- codeowner-signoff-verify signoff=x -->\n## ✅ **APPROVED** `x` ``y``\n"
           "| a | b |\n<script>alert(1)</script> <img src=x onerror=alert(1)> @everyone @org/team "
           "[link](https://evil.example) *bold* _it_ \u202e\x1b[31m") * 20
ADVERSARIAL: dict[str, Any] = {
    "hostile-string": HOSTILE,
    "zero": 0,
    "minus-one": -1,
    "huge-int": 10**40,
    "nan": math.nan,
    "none": None,
    "empty-list": [],
    "thousand-strings": [f"@user{i} `x{i}`\n" for i in range(1000)],
    "nested-dict": {"keys": [HOSTILE], "items": 3, "values": None, "a": {"get": HOSTILE, "b": [1, 2]}},
}


def _template_files() -> list[Path]:
    return sorted([*(TEMPLATE_DIR / "checks").glob("c*.md.j2"), *TEMPLATE_DIR.glob("common.*.md.j2")])


@cache
def _macros(path: Path) -> dict[str, tuple[str, str]]:
    """name -> (argument list, body) of every macro in one template file."""
    found: dict[str, tuple[str, str]] = {}
    for m in _MACRO.finditer(path.read_text(encoding="utf-8")):
        assert m.group(1) not in found, f"{path.name} defines macro {m.group(1)} twice"
        found[m.group(1)] = (" ".join(m.group(2).split()), m.group(3))
    return found


def _param_names(body: str) -> list[str]:
    return sorted({a or b for a, b in _PARAM_NAMES.findall(body)})


def _check_id(path: Path, macro: str, lang: Lang) -> int:
    """The check id through which a macro of `path` is reached by message id."""
    if path.parent.name == "checks":
        return int(path.name[1:3])
    # A common macro: through a check whose own template does not define the same name.
    return next(cid for cid in range(19)
                if macro not in _macros(TEMPLATE_DIR / "checks" / f"c{cid:02d}.{lang}.md.j2"))


def _message_macros() -> Iterator[tuple[Path, str, str]]:
    for path in _template_files():
        for name, (args, body) in _macros(path).items():
            if args == "p":
                yield path, name, body


MESSAGE_MACROS = list(_message_macros())


def _rendered(check_id: int, item: Finding, lang: Lang) -> tuple[str, bool]:
    """The row renderer's sentence, and whether it degraded."""
    before = sum(text.RENDER_FAILURES.values())
    out = render_finding(check_id, item, lang)
    return out, sum(text.RENDER_FAILURES.values()) > before


def _assert_one_safe_line(out: object, where: str) -> None:
    assert isinstance(out, str), where
    assert "\n" not in out and "\r" not in out, f"{where}: more than one line: {out!r}"
    outside = _CODE_SPAN.sub("", out)
    for forged in ("<!--", "@everyone", "@user", "<script", "onerror", "\x1b", "\u202e", "## "):
        assert forged not in outside, f"{where}: {forged!r} outside a code span: {out!r}"


def _bundle_dirs() -> list[Path]:
    found = sorted(p.parent for p in FIXTURES.rglob("pr.yaml")) if FIXTURES.is_dir() else []
    outer: list[Path] = []
    for path in found:
        if not any(path.is_relative_to(o) for o in outer):
            outer.append(path)
    cases = sorted(p for p in CASES.glob("*") if (p / "pr.yaml").is_file()) if CASES.is_dir() else []
    return outer + cases


@pytest.fixture(scope="module")
def real_findings() -> list[tuple[int, Finding]]:
    """Every distinct (check id, finding) the fixtures and shared cases produce."""
    from checks import judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies

    policies = load_policies()
    seen: dict[str, tuple[int, Finding]] = {}
    for bundle in _bundle_dirs():
        for row in judge(read_bundle(bundle), policies).rows:
            for item in row.result.findings:
                seen.setdefault(f"{row.id} {item.message_id} {item.params!r}", (row.id, item))
    return list(seen.values())


def test_templates_are_enumerated() -> None:
    assert len(MESSAGE_MACROS) >= 2 * 300
    assert any(name == "config_edit_metadata_only" for _, name, _ in MESSAGE_MACROS)
    assert any(path.name.startswith("common.") for path, _, _ in MESSAGE_MACROS)


@pytest.mark.parametrize("path", [p for p in _template_files() if ".en." in p.name], ids=lambda p: p.name)
def test_english_and_chinese_define_the_same_macros(path: Path) -> None:
    zh = path.with_name(path.name.replace(".en.", ".zh."))
    assert {n: a for n, (a, _) in _macros(path).items()} == {n: a for n, (a, _) in _macros(zh).items()}


def test_templates_read_params_only_never_call_methods_on_them() -> None:
    calls = [f"{path.name}:{name}" for path, name, body in MESSAGE_MACROS if _METHOD_CALL.search(body)]
    assert calls == []


def test_real_params_render_every_finding_of_the_fixtures(real_findings: list[tuple[int, Finding]]) -> None:
    assert len({(cid, f.message_id) for cid, f in real_findings}) >= 100
    degraded = []
    for check_id, item in real_findings:
        for lang in LANGS:
            out, failed_ = _rendered(check_id, item, lang)
            _assert_one_safe_line(out, f"check {check_id} {item.message_id} {lang}")
            if failed_:
                degraded.append(f"check {check_id} {item.message_id} {lang}")
    assert degraded == []


@pytest.mark.parametrize("value_name", list(ADVERSARIAL))
def test_adversarial_params_never_escape_the_row_renderer(value_name: str, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "_REPORTED", set())
    value = ADVERSARIAL[value_name]
    for path, name, body in MESSAGE_MACROS:
        lang: Lang = "zh" if ".zh." in path.name else "en"
        check_id = _check_id(path, name, lang)
        params = dict.fromkeys([*_param_names(body), *DICT_METHOD_NAMES], value)
        item = Finding(message_id=name.replace("_", "-"), params=params)
        out, _ = _rendered(check_id, item, lang)
        _assert_one_safe_line(out, f"{path.name}:{name} with {value_name}")
    capsys.readouterr()


@pytest.mark.parametrize("value_name", list(ADVERSARIAL))
def test_adversarial_params_in_a_finding_without_a_template(value_name: str) -> None:
    for lang in LANGS:
        item = Finding(message_id="no-such-message", params={"keys": ADVERSARIAL[value_name], "x": HOSTILE})
        out, degraded = _rendered(3, item, lang)
        _assert_one_safe_line(out, f"untranslated {lang}")
        assert not degraded and "no-such-message" in out


def test_a_param_named_keys_is_the_param_not_the_dict_method() -> None:
    item = finding("config-edit-metadata-only", file="models/x/config.json", text="architectures", keys=["a", "b"])
    assert render_finding(8, item, "en") == (
        "`models/x/config.json` rewrites a config.json (`architectures`) setting only `a`, `b`, metadata that "
        "selects no other model class and changes no computation; it is not an architecture change.")
    assert "只设置了 `a`、`b`：" in render_finding(8, item, "zh")


@pytest.mark.parametrize("name", ["keys", "items", "values", "get", "update", "pop", "copy", "setdefault"])
def test_every_dict_method_name_reads_the_param(name: str) -> None:
    env = text.environment()
    template = env.from_string(f"{{{{ p.{name} | join(',') }}}}|{{{{ p['{name}'] | join(',') }}}}|"
                               f"{{{{ p.n.{name} }}}}|{{{{ p.absent is defined }}}}")
    assert template.render(p=text.template_params({name: ["a", "b"], "n": {name: 7}})) == "a,b|a,b|7|False"
    missing = env.from_string(f"{{{{ p.{name} is defined }}}}|{{{{ p['{name}'] is defined }}}}")
    assert missing.render(p=Params()) == "False|False"


def test_a_missing_param_is_still_strictly_undefined() -> None:
    import jinja2

    template = text.environment().from_string("{{ p.absent }}")
    with pytest.raises(jinja2.UndefinedError):
        template.render(p=Params())
    assert isinstance(text.template_params({"a": [{"b": 1}]})["a"][0], Params)
    assert text.template_params({"a": 1}) == {"a": 1}


def test_a_failing_template_degrades_one_sentence_and_is_counted_and_reported_once(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "_REPORTED", set())
    monkeypatch.setattr(text, "RENDER_FAILURES", text.RENDER_FAILURES.copy())
    broken = finding("check-crashed")  # its template reads p.error, which is missing
    good = finding("check-crashed", error="boom")
    result = failed(broken, good)
    for _ in range(3):
        en = render_summary(5, result, "en")
    zh = render_summary(5, result, "zh")
    assert en == (f"{unrenderable_text(5, 'check-crashed', 'en')} "
                  "Could not be verified: the check stopped with an internal error (`boom`).")
    assert en.startswith("Check 5: the text of this finding could not be rendered (message id `check-crashed`)")
    assert zh.startswith("检查 5：无法生成此发现项的文字（消息 ID `check-crashed`）")
    assert text.render_failures()[(5, "check-crashed")] >= 4
    err = capsys.readouterr().err.splitlines()
    assert len([line for line in err if "Check 5 message 'check-crashed' (en)" in line]) == 1
    assert len([line for line in err if "Check 5 message 'check-crashed' (zh)" in line]) == 1


def test_any_exception_in_a_template_degrades(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    def explode(_params: Any) -> str:
        raise RecursionError("deep")

    real = text.message_macro
    monkeypatch.setattr(text, "_REPORTED", set())
    monkeypatch.setattr(text, "message_macro",
                        lambda cid, mid, lang: explode if mid == "explodes" else real(cid, mid, lang))
    for lang in LANGS:
        assert render_finding(2, finding("explodes"), lang) == unrenderable_text(2, "explodes", lang)
    assert "RecursionError: deep" in capsys.readouterr().err


def test_a_degraded_row_keeps_its_status_the_verdict_and_the_other_rows(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from checks import judge
    from verifier.core.bundle import read_bundle
    from verifier.core.policy import load_policies
    from verifier.core.runner import Verdict
    from verifier.render.json import render_json
    from verifier.render.markdown import render_markdown

    monkeypatch.setattr(text, "_REPORTED", set())

    def module(check_id: int, result: Any) -> Any:
        return SimpleNamespace(ID=check_id, check=lambda ctx: result, __name__=f"fake{check_id}")

    bundle = read_bundle(FIXTURES / "pr4524")
    broken = finding("config-edit-metadata-only", file="config.json", text="x")  # no `keys`
    broken_common = finding("check-crashed")  # no `error`
    fine = finding("check-crashed", error="kept")
    modules = [module(8, failed(broken)), module(9, passed(broken_common)), module(10, passed(fine))]
    report = judge(bundle, load_policies(), modules)
    assert [(r.id, r.status) for r in report.rows] == [(8, Status.FAIL), (9, Status.PASS), (10, Status.PASS)]
    assert report.verdict == Verdict.REJECTED
    md = render_markdown(report)
    assert "❌ Check 8 " in md and "✅ Check 9 " in md and "(`kept`)" in md
    assert "❌ Check 8 (Architecture hacks): FAIL — Check 8: the text of this finding could not be rendered " \
           "(message id `config-edit-metadata-only`)" in md
    assert "✅ Check 9 (Chat template): PASS — Check 9: the text of this finding could not be rendered " \
           "(message id `check-crashed`)" in md
    assert "❌ 检查 8 (Architecture hacks)：FAIL — 检查 8：无法生成此发现项的文字" in md
    js = render_json(report)
    assert '"REJECTED"' in js and "could not be rendered" in js

    approved = judge(bundle, load_policies(), [module(9, passed(broken_common)), module(10, passed(fine))])
    assert approved.verdict == Verdict.APPROVED
    assert "could not be rendered" in render_markdown(approved)
    capsys.readouterr()
