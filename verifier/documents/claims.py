"""Concrete technical claims of a PR description, and their comparison with the assessed configuration.

Check 15 is advisory and must be conservative: a claim is extracted only when its shape is
unambiguous (a TP size with a concurrency range, `N GB per rank` of host cache, a `flag: value` code
span, an image reference, a named recipe file said to be new / changed / unchanged, a
scheduling policy with a concurrency range, a whole-curve rerun). Anything approximate ("about 10
GB") or negated is skipped. `evaluate` returns, per claim, `match`, `contradiction` (with the actual
value) or `unchecked` (the configuration has nothing to compare against); only contradictions warn.

The PR body is untrusted text: it is only matched with bounded regular expressions, line by line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from verifier.core.textscan import blank_spans

MAX_BODY_CHARS = 200_000
ClaimKind = Literal[
    "conc-range", "host-cache-per-rank", "dram-allocation", "setting", "recipe-status", "schedule-policy",
    "image", "rerun", "run",
]
Outcome = Literal["match", "contradiction", "unchecked"]

# Delimiters of the blocks claims skip, paired by verifier.core.textscan in linear time (the former
# `<!--.*?-->` and `<details\b.*?</details\s*>` patterns were quadratic on unclosed openings).
_DETAILS_OPEN = re.compile(r"<details\b", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)
_COMMENT_OPEN = re.compile(r"<!--")
_COMMENT_CLOSE = re.compile(r"-->")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_LABEL = re.compile(r"^\s*\*\*([^*]{1,120})\*\*\s*:?\s*")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\[])")
_TP = re.compile(r"\bTP\s?(\d{1,3})\b", re.IGNORECASE)
_RANGE = re.compile(
    r"\bconc(?:urrenc(?:y|ies))?\s+(\d{1,5})\s*(?:to|through|-|–|—|\.\.)\s*(\d{1,5})\b", re.IGNORECASE
)
_GB_PER_RANK = re.compile(r"\b(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,6}(?:\.\d+)?)\s*GB\s+(?:per|/|each)\s*(?:rank|GPU)\b", re.IGNORECASE)
_GB_ALLOC = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d{1,6})\s*GB\s+(?:DRAM\s+|host\s+|CPU\s+)?(?:allocation|budget|allowance)\b", re.I)
_UTIL = re.compile(r"\bDRAM[ -]utili[sz]ation\s*(?:of|=|:)?\s*(\d(?:\.\d+)?)\b", re.IGNORECASE)
_GPUS = re.compile(r"\b(one|two|four|eight|\d)[ -]GPU\b", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]{1,300})`")
_SETTING_CODE = re.compile(r"^--?([A-Za-z][\w-]{1,80})(?:[ =]|:\s*)([^\s`]{1,120})$|^([A-Za-z][\w-]{1,80}):\s+([^\s`]{1,120})$")
_RECIPE = re.compile(r"(?<![\w/.-])([\w.-]{1,120}\.ya?ml)\b")
_IMAGE = re.compile(
    r"(?<![\w/.-])((?:[a-z0-9.-]+[/#])?(?:lmsysorg|vllm|rocm|nvcr\.io[/#]nvidia)[\w./#-]*:[\w.-]{1,128}(?:@sha256:[0-9a-f]{6,64})?)"
)
_RUN = re.compile(r"\bruns?\s+#?(\d{9,15})\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|without|removes?|removed|drops?|dropped|instead of|unlike)\b", re.I)
_APPROX = re.compile(r"\b(?:about|around|roughly|approximately|~|up to|at most|at least)\s*$", re.IGNORECASE)
_RERUN = re.compile(
    r"\b(?:whole|entire|full)\s+curve\s+(?:(?:is|gets|will\s+be)\s+)?re-?run\b|\bre-?runs?\s+the\s+(?:whole|entire|full)\s+curve\b"
    r"|\ball\s+(?:(?:TP\d+|existing)\s+)?points\s+are\s+re-?run\b",
    re.IGNORECASE,
)
_POLICIES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\blongest[ -]prefix[ -]match\b|\blpm\b", re.I), "lpm"),
    (re.compile(r"\bfirst[ -]come[ ,-]+first[ -]serve[d]?\b|\bfcfs\b", re.I), "fcfs"),
    (re.compile(r"\blongest[ -]output[ -]first\b|\blof\b", re.I), "lof"),
    (re.compile(r"\bdfs[ -]weight\b", re.I), "dfs-weight"),
)
_NEW_RECIPE = re.compile(r"\bnew\b[^.]{0,40}$", re.IGNORECASE)
_EXISTING = re.compile(r"\b(?:existing|current)\b[^.]{0,40}$", re.IGNORECASE)
_CHANGED_AFTER = re.compile(r"^[^.]{0,60}?\b(?:also\s+)?(?:gains?|changes?|changed|modif(?:y|ies|ied)|updates?|updated|adds?|sets?)\b", re.I)
_UNCHANGED_AFTER = re.compile(r"^[^.]{0,30}?\b(?:is|stays|remains)\s+unchanged\b", re.IGNORECASE)
_WORD_NUMBERS = {"one": 1, "two": 2, "four": 4, "eight": 8}


@dataclass(frozen=True, eq=False, repr=False)
class Claim:
    """One concrete claim: its kind, the quoted sentence, the body line, and the claimed values."""

    kind: ClaimKind
    quote: str
    line: int
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, repr=False)
class PointFacts:
    """What the configuration says about one generated point (head side)."""

    key: str
    exp_name: str
    tp: int | None
    conc: int | None
    kv_offloading: str | None
    total_cpu_dram_gb: int | None
    gpus: int | None
    recipe: str | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    dram_utilization: float | None = None


@dataclass(frozen=True, eq=False, repr=False)
class ConfigFacts:
    """The facts claims are compared with."""

    points: tuple[PointFacts, ...]
    images: frozenset[str]
    changed_files: Mapping[str, str]
    append_only: bool | None
    runs: frozenset[int] = frozenset()
    default_settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False, repr=False)
class Judged:
    """A claim and what the configuration says about it."""

    claim: Claim
    outcome: Outcome
    actual: str = ""


def _sentences(body: str) -> Iterable[tuple[int, str, Mapping[str, Any]]]:
    """(line, sentence, bullet context) of the English body, details blocks and disclosures skipped."""
    text = body[:MAX_BODY_CHARS]
    text = blank_spans(text, _COMMENT_OPEN, _COMMENT_CLOSE)
    text = blank_spans(text, _DETAILS_OPEN, _DETAILS_CLOSE)
    skip = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        heading = _HEADING.match(raw)
        if heading:
            title = heading.group(1).lower()
            skip = "disclosure" in title or "ai model" in title or "中文" in title
            continue
        if skip or not raw.strip():
            continue
        line = raw
        bullet = _BULLET.match(raw)
        if bullet:
            line = bullet.group(1)
        context: dict[str, Any] = {}
        label = _LABEL.match(line)
        if label:
            tp = _TP.search(_RECIPE.sub(" ", label.group(1)))
            if tp:
                context["tp"] = int(tp.group(1))
            line = line[label.end() :]
        recipe = _RECIPE.search(line)
        if recipe:
            context["recipe"] = recipe.group(1)
        for sentence in _SENTENCE_SPLIT.split(line.strip()):
            if sentence.strip():
                yield lineno, sentence.strip(), context


def _quote(sentence: str) -> str:
    return sentence if len(sentence) <= 200 else sentence[:197] + "..."


def _context_tp(sentence: str, context: Mapping[str, Any]) -> int | None:
    # a recipe file name (`agentic-tp2.yaml`) is not a claim about the TP size
    tps = {int(m.group(1)) for m in _TP.finditer(_RECIPE.sub(" ", sentence))}
    if len(tps) == 1:
        return tps.pop()
    if not tps:
        return context.get("tp")
    return None


def _recipe_in(sentence: str, context: Mapping[str, Any]) -> str | None:
    found = {m.group(1) for m in _RECIPE.finditer(sentence)}
    if len(found) == 1:
        return found.pop()
    return None if found else context.get("recipe")


def extract_claims(body: str) -> list[Claim]:
    """Every concrete claim of a PR description, in body order."""
    claims: list[Claim] = []
    for line, sentence, context in _sentences(body):
        quote = _quote(sentence)
        negated = bool(_NEGATION.search(sentence))
        tp = _context_tp(sentence, context)
        recipe = _recipe_in(sentence, context)
        policy = next((name for pattern, name in _POLICIES if pattern.search(sentence)), None)
        for match in _RANGE.finditer(sentence):
            low, high = int(match.group(1)), int(match.group(2))
            if low > high:
                continue
            if policy and not negated:
                claims.append(Claim("schedule-policy", quote, line,
                                    {"policy": policy, "low": low, "high": high, "tp": tp, "recipe": recipe}))
            elif not negated and (tp is not None or recipe is not None):
                claims.append(Claim("conc-range", quote, line, {"tp": tp, "low": low, "high": high, "recipe": recipe}))
        if negated:
            claims.extend(_recipe_claims(sentence, quote, line))
            continue
        for match in _GB_PER_RANK.finditer(sentence):
            before = sentence[: match.start()]
            window = sentence[max(0, match.start() - 80) : match.end() + 40].lower()
            if _APPROX.search(before) or "hbm" in window:
                continue
            if "host" in window or "hicache" in window or "dram" in window or "cpu" in window:
                claims.append(Claim("host-cache-per-rank", quote, line,
                                    {"gb": float(match.group(1).replace(",", "")), "tp": tp, "recipe": recipe}))
        for match in _GB_ALLOC.finditer(sentence):
            if _APPROX.search(sentence[: match.start()]):
                continue
            util = _UTIL.search(sentence)
            gpus = _GPUS.search(sentence)
            gpu_count = None
            if gpus:
                word = gpus.group(1).lower()
                gpu_count = _WORD_NUMBERS.get(word) or (int(word) if word.isdigit() else None)
            claims.append(Claim("dram-allocation", quote, line, {
                "gb": int(match.group(1).replace(",", "")), "utilization": float(util.group(1)) if util else None,
                "gpus": gpu_count, "tp": tp,
            }))
        if policy and not _RANGE.search(sentence) and (recipe or tp):
            claims.append(Claim("schedule-policy", quote, line,
                                {"policy": policy, "low": None, "high": None, "tp": tp, "recipe": recipe}))
        for code in _CODE.finditer(sentence):
            setting = _SETTING_CODE.match(code.group(1).strip())
            if setting:
                name = setting.group(1) or setting.group(3)
                value = setting.group(2) or setting.group(4)
                if name.lower() in ("http", "https") or name.endswith((".yaml", ".yml")):
                    continue
                claims.append(Claim("setting", quote, line, {"name": name, "value": value, "recipe": recipe}))
        for image in _IMAGE.finditer(sentence):
            claims.append(Claim("image", quote, line, {"image": image.group(1).rstrip(".,;:…")}))
        for run in _RUN.finditer(sentence):
            claims.append(Claim("run", quote, line, {"run_id": int(run.group(1))}))
        if _RERUN.search(sentence):
            claims.append(Claim("rerun", quote, line, {"tp": tp}))
        claims.extend(_recipe_claims(sentence, quote, line))
    return claims


def _recipe_claims(sentence: str, quote: str, line: int) -> list[Claim]:
    out: list[Claim] = []
    for match in _RECIPE.finditer(sentence):
        name = match.group(1)
        before = sentence[: match.start()].replace("`", "")
        after = sentence[match.end() :].replace("`", "")
        if _UNCHANGED_AFTER.match(after):
            out.append(Claim("recipe-status", quote, line, {"recipe": name, "status": "unchanged"}))
        elif _NEW_RECIPE.search(before) and not _EXISTING.search(before):
            out.append(Claim("recipe-status", quote, line, {"recipe": name, "status": "added"}))
        elif _EXISTING.search(before) and _CHANGED_AFTER.match(after):
            out.append(Claim("recipe-status", quote, line, {"recipe": name, "status": "modified"}))
    return out


# ------------------------------------------------------------------------------------------------
# Comparison


def _points(facts: ConfigFacts, tp: int | None = None, recipe: str | None = None) -> list[PointFacts]:
    return [
        p for p in facts.points
        if (tp is None or p.tp == tp) and (recipe is None or (p.recipe or "").rsplit("/", 1)[-1] == recipe)
    ]


def _norm_image(image: str) -> str:
    return image.replace("#", "/", 1).rstrip("…").rstrip(".")


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _same_path(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def _fmt_tps(points: Sequence[PointFacts]) -> str:
    tps = sorted({p.tp for p in points if p.tp is not None})
    return ", ".join(f"TP{t}" for t in tps) if tps else "of unknown TP size"


def _fmt_utils(utils: Sequence[float]) -> str:
    return ", ".join(f"{u:g}" if u != int(u) else f"{u:.1f}" for u in utils)


def _fmt_range(points: Sequence[PointFacts]) -> str:
    concs = sorted({p.conc for p in points if p.conc is not None})
    if len(concs) < 2:
        return _fmt_concs(points)
    return f"{concs[0]}-{concs[-1]} ({_fmt_concs(points)})"


def _fmt_concs(points: Sequence[PointFacts]) -> str:
    concs = sorted({p.conc for p in points if p.conc is not None})
    return ", ".join(str(c) for c in concs) if concs else "none"


def _setting(point: PointFacts, name: str, defaults: Mapping[str, Any]) -> Any:
    key = name.lstrip("-").replace("_", "-")
    if key in point.settings:
        return point.settings[key]
    return defaults.get(key)


def _same(claimed: str, actual: Any) -> bool:
    if actual is None:
        return False
    if isinstance(actual, bool):
        return claimed.lower() == str(actual).lower()
    text = str(actual)
    if text == claimed:
        return True
    try:
        return float(text) == float(claimed)
    except ValueError:
        return False


def judge(claim: Claim, facts: ConfigFacts) -> Judged:
    """Compare one claim with the configuration."""
    v = claim.values
    kind = claim.kind
    if kind == "conc-range":
        points = _points(facts, v.get("tp"), v.get("recipe"))
        if not points:
            if v.get("tp") is None:
                return Judged(claim, "unchecked")
            scope = _points(facts, None, v.get("recipe"))
            if not scope:
                return Judged(claim, "unchecked")
            where = f"the {v['recipe']} points are" if v.get("recipe") else "the points are"
            return Judged(claim, "contradiction", f"no TP{v['tp']} points ({where} {_fmt_tps(scope)})")
        concs = sorted({p.conc for p in points if p.conc is not None})
        if concs and (concs[0] != v["low"] or concs[-1] != v["high"]):
            return Judged(claim, "contradiction", f"concurrencies {_fmt_range(points)}")
        return Judged(claim, "match", f"concurrencies {_fmt_concs(points)}")
    if kind == "host-cache-per-rank":
        points = [p for p in _points(facts, v.get("tp"), v.get("recipe")) if p.kv_offloading == "dram"]
        sizes = sorted({str(s) for p in points if (s := p.settings.get("hicache-size")) is not None})
        if not sizes:
            return Judged(claim, "unchecked")
        if any(_same(str(int(v["gb"])) if v["gb"] == int(v["gb"]) else str(v["gb"]), s) for s in sizes):
            return Judged(claim, "match", f"hicache-size {', '.join(sizes)}")
        return Judged(claim, "contradiction", f"hicache-size {', '.join(sizes)} (GB per rank)")
    if kind == "dram-allocation":
        points = [p for p in facts.points if p.kv_offloading == "dram" and p.total_cpu_dram_gb is not None]
        if v.get("gpus") is not None:
            points = [p for p in points if p.gpus == v["gpus"]]
        elif v.get("tp") is not None:
            points = [p for p in points if p.tp == v["tp"]]
        budgets = sorted({p.total_cpu_dram_gb for p in points if p.total_cpu_dram_gb is not None})
        if not budgets:
            return Judged(claim, "unchecked")
        util = v.get("utilization")
        utils = sorted({float(p.dram_utilization) for p in points if p.dram_utilization is not None})
        if v["gb"] not in budgets:
            return Judged(claim, "contradiction", "total-cpu-dram-gb " + ", ".join(str(b) for b in budgets)
                          + (" GB" + (f" at dram-utilization {_fmt_utils(utils)}" if utils else "")))
        if util is not None and utils and float(util) not in utils:
            return Judged(claim, "contradiction", f"total-cpu-dram-gb {v['gb']} at dram-utilization {_fmt_utils(utils)}")
        return Judged(claim, "match", f"total-cpu-dram-gb {v['gb']}")
    if kind == "schedule-policy":
        points = _points(facts, v.get("tp"), v.get("recipe"))
        if v.get("low") is not None:
            points = [p for p in points if p.conc is not None and v["low"] <= p.conc <= v["high"]]
        if not points:
            return Judged(claim, "unchecked")
        wrong = [p for p in points if str(_setting(p, "schedule-policy", facts.default_settings)) != v["policy"]]
        if wrong:
            actual = {str(_setting(p, "schedule-policy", facts.default_settings)) for p in wrong}
            return Judged(claim, "contradiction",
                          f"schedule-policy {', '.join(sorted(actual))} at conc {_fmt_concs(wrong)}")
        return Judged(claim, "match", f"schedule-policy {v['policy']} at conc {_fmt_concs(points)}")
    if kind == "setting":
        points = _points(facts, None, v.get("recipe"))
        if not points:
            return Judged(claim, "unchecked")
        name = str(v["name"]).replace("_", "-")
        values = {_setting(p, name, facts.default_settings) for p in points}
        known = {str(x) for x in values if x is not None}
        if any(_same(str(v["value"]), x) for x in values):
            return Judged(claim, "match", f"{name} {', '.join(sorted(known))}")
        if not any(name in p.settings for p in facts.points) and name not in facts.default_settings:
            # not a server setting the resolver knows (a master-config field, a typo): not comparable
            return Judged(claim, "unchecked")
        return Judged(claim, "contradiction", f"{name} {', '.join(sorted(known)) or 'unset'}")
    if kind == "recipe-status":
        recipe = str(v["recipe"])
        # every file of that name the PR changes or a point runs (several directories can hold an
        # `agentic.yaml`): the claim holds when one of them has the claimed status
        candidates = {path: status for path, status in facts.changed_files.items() if _basename(path) == recipe}
        for p in facts.points:
            if p.recipe and _basename(p.recipe) == recipe and not any(_same_path(p.recipe, f) for f in candidates):
                candidates[p.recipe] = "unchanged"
        if not candidates:
            return Judged(claim, "unchecked")
        claimed = v["status"]

        def agrees(status: str) -> bool:
            if claimed == "unchanged":
                return status == "unchanged"
            if claimed == "added":
                return status == "added"
            return status != "unchanged"

        found = sorted(set(candidates.values()))
        agreeing = [status for status in found if agrees(status)]
        if agreeing:
            return Judged(claim, "match", f"{recipe} {agreeing[0]}")
        return Judged(claim, "contradiction", f"{recipe} is {' / '.join(found)} in this PR")
    if kind == "image":
        claimed = _norm_image(str(v["image"]))
        images = {_norm_image(i) for i in facts.images}
        if not images:
            return Judged(claim, "unchecked")
        if any(i == claimed or i.startswith(claimed) for i in images):
            return Judged(claim, "match", claimed)
        repo = claimed.split(":", 1)[0]
        if not any(i.split(":", 1)[0] == repo for i in images):
            return Judged(claim, "unchecked")
        return Judged(claim, "contradiction", ", ".join(sorted(images)))
    if kind == "rerun":
        if facts.append_only is True:
            return Judged(claim, "contradiction", "append-only: true")
        if facts.append_only is None:
            return Judged(claim, "unchecked")
        return Judged(claim, "match", "no append-only entry")
    if kind == "run":
        return Judged(claim, "match" if v["run_id"] in facts.runs else "unchecked", str(v["run_id"]))
    return Judged(claim, "unchecked")


def evaluate(claims: Sequence[Claim], facts: ConfigFacts) -> list[Judged]:
    """Judge every claim (duplicates of the same kind and values are judged once)."""
    out: list[Judged] = []
    seen: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
    for claim in claims:
        key = (claim.kind, tuple(sorted((k, str(x)) for k, x in claim.values.items())))
        if key in seen:
            continue
        seen.add(key)
        out.append(judge(claim, facts))
    return out
