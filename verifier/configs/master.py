"""Master configs (`configs/{nvidia,amd}-master.yaml`): entries, fields and line numbers.

The real `nvidia-master.yaml` is ~330 KB with ~150 top-level entries, and a verdict needs only a
few of them in detail. So the file is split into top-level entries by the lines that start at
column 0 (a key followed by `:`), and each entry is parsed on first use with the YAML 1.1 loader
of `verifier.core.yaml11`. An entry whose text is byte-identical on the base and head sides is
parsed once. Anything the splitter does not understand (a quoted or odd top-level key, document
markers) and a file where any entry uses an alias or merge key (which may point into another
entry) is parsed whole instead, so the result never depends on the shortcut. Either way every text
is parsed at most once per verdict: parses, and refusals (an alias bomb), are kept in the
verdict's cache keyed by the text.

Duplicate keys follow PyYAML's `safe_load`, which the generator uses: the LAST copy of a repeated
key wins, at the top level (a config key written twice) and inside an entry. Each repeat is a
MasterError naming both lines (`duplicates`); checks report them.

Schema (FORMATS.md §3.1-3.2, `infx/matrix/validation.py`): every top-level key is a config key;
keys are unique across both master files and never contain `*`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from verifier.core import processcache
from verifier.core.context import CheckContext
from verifier.core.errors import InputError
from verifier.core.yaml11 import Doc, parse_yaml11_shared
from verifier.core.yamlio import decode_text

Side = Literal["base", "head"]
VENDOR_FILES: tuple[tuple[str, str], ...] = (("nvidia", "nvidia_master"), ("amd", "amd_master"))
_SIMPLE_KEY = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.+/-]*)[ \t]*:(?:[ \t]|$)")
SCENARIOS = ("fixed-seq-len", "agentic-coding")
# The first master-config schema, until InferenceX #1201 (2026-05-01): an entry listed its blocks
# (`{isl, osl, search-space}`) under `seq-len-configs`, the one scenario there was, fixed-seq-len.
LEGACY_SCENARIOS = {"seq-len-configs": "fixed-seq-len"}


@dataclass(frozen=True)
class SearchRow:
    """One search-space row of one scenario block of a master entry."""

    key: str
    file: str
    scenario: str
    scenario_index: int
    index: int
    data: dict[str, Any]
    line: int | None
    scenario_data: dict[str, Any]
    scenario_line: int | None

    def __hash__(self) -> int:
        return hash((self.key, self.file, self.scenario, self.scenario_index, self.index))

    @property
    def isl(self) -> int | None:
        """Fixed-seq input length of the scenario block."""
        return self.scenario_data.get("isl")

    @property
    def osl(self) -> int | None:
        """Fixed-seq output length of the scenario block."""
        return self.scenario_data.get("osl")

    @property
    def dram_utilization(self) -> Any:
        """The agentic scenario block's dram-utilization (raw YAML value) or None."""
        return self.scenario_data.get("dram-utilization")


class _Chunk:
    """The text of one top-level entry (or of a whole file) and, once needed, its parsed form or the
    refusal parsing it gave (shared across sides and checks: a text is parsed once per verdict)."""

    __slots__ = ("_indirect", "doc", "error", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.doc: Doc | None = None
        self.error: InputError | None = None
        self._indirect: bool | None = None

    @property
    def indirect(self) -> bool:
        """True when a value of the entry may not be spelled out in its text: an alias (`*name`, which
        may point into another entry), a merge key (`<<`) or a double-quoted escape (`\\`) outside a
        comment line, or no text of its own (a file the splitter could not cut)."""
        if self._indirect is None:
            text = self.text
            self._indirect = not text or (any(m in text for m in _INDIRECT_MARKS) and any(
                any(m in line for m in _INDIRECT_MARKS) for line in text.split("\n")
                if not line.lstrip().startswith("#")))
        return self._indirect

    @property
    def aliased(self) -> bool:
        """True when the entry may use an alias or merge key outside a comment line (it may refer
        to an anchor of another entry, so only a parse of the whole file reads it right)."""
        text = self.text
        if not any(m in text for m in ("*", "<<")):
            return False
        found = _ALIASED.get(text)
        if found is None:
            found = _ALIASED.put(text, any(
                _ALIAS_OR_MERGE.search(line) for line in text.split("\n") if not line.lstrip().startswith("#")))
        return found

    def parse(self, path: str) -> Doc:
        """The parsed text (parsed on first use); raises the InputError of a refused text every time."""
        if self.doc is None and self.error is None:
            try:
                self.doc = parse_yaml11_shared(self.text, path)
            except InputError as exc:
                self.error = exc
        if self.error is not None:
            raise self.error
        assert self.doc is not None
        return self.doc


_INDIRECT_MARKS = ("*", "<<", "\\")
_ALIASED: processcache.ByText[str, bool] = processcache.ByText("configs.master.aliased", 4096)
# An alias (`*name` where a node starts) or a merge key (`<<:`); a `*` inside a scalar (a glob) is neither.
_ALIAS_OR_MERGE = re.compile(r"(?:^|[\s\[{,:?-])\*[^\s,\[\]{}]|(?:^|[\s{,?])<<\s*:")


@dataclass(eq=False, repr=False)
class ConfigEntry:
    """One top-level entry of a master config, parsed lazily.

    `line` is the 1-based line of the key in `file`; `field_line(*path)` gives the line of any
    field below it (e.g. `field_line("image")`, `field_line("scenarios", "agentic-coding", 0,
    "search-space", 1)`).
    """

    key: str
    vendor: str
    side: str
    file: str
    line: int
    _chunk: _Chunk = field(repr=False)
    _owner: _MasterFile = field(repr=False)

    @property
    def text(self) -> str:
        """The entry's raw text (its lines up to the next top-level key)."""
        return self._chunk.text

    @cached_property
    def _parsed(self) -> tuple[dict[str, Any], dict[tuple[Any, ...], int]]:
        return self._owner.parse_entry(self)

    @property
    def data(self) -> dict[str, Any]:
        """The entry's mapping (plain data, YAML 1.1 semantics). Raises InputError if unparsable."""
        return self._parsed[0]

    def field_line(self, *path: Any) -> int | None:
        """1-based line of a field below the entry (no path: the key's line)."""
        if not path:
            return self.line
        return self._parsed[1].get(tuple(path))

    def duplicates(self) -> list[tuple[tuple[Any, ...], int, int]]:
        """Keys repeated inside the entry: (path below the entry, first copy's line, the winning
        repeat's line). Raises InputError if the entry is unparsable."""
        return self._owner.duplicates(self)

    def doc_lines(self) -> dict[tuple[Any, ...], int]:
        """The line of every path as a parse of the whole file gives it: `(key,)` and `(key, *path)`."""
        return {(self.key,): self.line, **{(self.key, *p): ln for p, ln in self._parsed[1].items()}}

    def get(self, name: str, default: Any = None) -> Any:
        """A top-level field of the entry."""
        data = self.data
        return data.get(name, default) if isinstance(data, dict) else default

    @property
    def image(self) -> str | None:
        """Container image (str)."""
        return _str(self.get("image"))

    @property
    def model(self) -> str | None:
        """HF model id."""
        return _str(self.get("model"))

    @property
    def model_prefix(self) -> str | None:
        """Canonical model prefix (MODELS.md)."""
        return _str(self.get("model-prefix"))

    @property
    def runner(self) -> str | None:
        """runners.yaml label, e.g. `cluster:b300-dsxe`."""
        return _str(self.get("runner"))

    @property
    def precision(self) -> str | None:
        """fp4 | fp8 | bf16 | ..."""
        return _str(self.get("precision"))

    @property
    def framework(self) -> str | None:
        """sglang | vllm | trt | atom | dynamo-* | ..."""
        return _str(self.get("framework"))

    @property
    def multinode(self) -> bool:
        """The entry's multinode flag (False when absent)."""
        return self.get("multinode") is True

    @property
    def disagg(self) -> bool:
        """The entry's disagg flag (default False)."""
        return self.get("disagg") is True

    @property
    def sku(self) -> str | None:
        """Hardware family of the runner: drop `cluster:`, keep the text before the first `-`."""
        runner = self.runner
        if not runner:
            return None
        return runner.removeprefix("cluster:").split("-", 1)[0]

    def _scenario_blocks(self) -> tuple[dict[str, Any], dict[Any, tuple[Any, ...]]] | None:
        """The entry's scenario blocks by scenario, and the path under the entry where its schema writes
        each scenario: the `scenarios` mapping, or the first schema's list (`LEGACY_SCENARIOS`) as its
        one scenario; None when the entry writes its blocks in neither way."""
        value = self.get("scenarios")
        if isinstance(value, dict):
            return value, {scenario: ("scenarios", scenario) for scenario in value}
        for name, scenario in LEGACY_SCENARIOS.items():
            blocks = self.get(name)
            if isinstance(blocks, list):
                return {scenario: blocks}, {scenario: (name,)}
        return None

    @property
    def scenarios(self) -> dict[str, Any]:
        """The scenario blocks by scenario ({} when absent or malformed): the `scenarios` mapping, or
        an entry of the first schema's `seq-len-configs` list as its one scenario (`LEGACY_SCENARIOS`)."""
        found = self._scenario_blocks()
        return {} if found is None else found[0]

    @property
    def declares_scenarios(self) -> bool:
        """Whether the entry writes its blocks the way one of the known schemas does (a `scenarios`
        mapping, or the first schema's `seq-len-configs` list), even with no block in it."""
        return self._scenario_blocks() is not None

    def scenario_line(self, scenario: str, *path: Any) -> int | None:
        """1-based line of a scenario (or of a field below it: block index, ...) wherever the entry's
        schema writes it: `scenarios.<scenario>` or the first schema's `seq-len-configs`."""
        found = self._scenario_blocks()
        where = None if found is None else found[1].get(scenario)
        return None if where is None else self.field_line(*where, *path)

    @property
    def rows(self) -> tuple[SearchRow, ...]:
        """Every search-space row of every scenario block, in file order."""
        out: list[SearchRow] = []
        for scenario, blocks in self.scenarios.items():
            if not isinstance(blocks, list):
                continue
            for si, block in enumerate(blocks):
                if not isinstance(block, dict):
                    continue
                rows = block.get("search-space")
                if not isinstance(rows, list):
                    continue
                for ri, row in enumerate(rows):
                    if isinstance(row, dict):
                        out.append(SearchRow(
                            key=self.key, file=self.file, scenario=str(scenario), scenario_index=si, index=ri,
                            data=row, line=self.scenario_line(scenario, si, "search-space", ri),
                            scenario_data=block, scenario_line=self.scenario_line(scenario, si),
                        ))
        return tuple(out)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, eq=False, repr=False)
class MasterError:
    """A problem with the master configs as a whole (duplicate key, `*` in a key, unparsable file)."""

    kind: str
    file: str
    line: int | None
    key: str | None
    message: str
    first_line: int | None = None  # duplicate-key in one file: the line of the copy that lost


class _MasterFile:
    """One master file on one side: its entries split by top-level key, parsed lazily."""

    def __init__(self, vendor: str, side: str, path: str, text: str, cache: dict[str, _Chunk]) -> None:
        self.vendor = vendor
        self.side = side
        self.path = path
        self.text = text
        self.entries: list[ConfigEntry] = []
        self._full: Doc | None = None
        self._cache = cache
        self.whole = False  # entries are read from a parse of the whole file
        self.top_duplicates: list[tuple[str, int, int]] = []  # (config key, first line, repeat line)
        if not self._split():
            self.entries = []
            self._split_full()
        elif any(e._chunk.aliased for e in self.entries):
            self.whole = True

    def _split(self) -> bool:
        pieces = _entry_texts(self.text)
        if pieces is None:
            return False
        for key, start, text in pieces:
            chunk = self._cache.get(text)
            if chunk is None:
                chunk = self._cache[text] = _Chunk(text)
            self.entries.append(ConfigEntry(key, self.vendor, self.side, self.path, start + 1, chunk, self))
        return True

    def _full_doc(self) -> Doc:
        if self._full is None:
            chunk = self._cache.get(self.text)
            if chunk is None:
                chunk = self._cache[self.text] = _Chunk(self.text)
            doc = chunk.parse(self.path)
            if doc.data is not None and not isinstance(doc.data, dict):
                raise InputError(self.path, "top level is not a mapping of config keys")
            self._full = doc
        return self._full

    def duplicates(self, entry: ConfigEntry) -> list[tuple[tuple[Any, ...], int, int]]:
        """Keys repeated inside an entry: (path below the entry, line of the first copy, line of
        the repeat that wins); parses the entry."""
        chunk = entry._chunk
        if not self.whole and chunk.text:
            try:
                doc = chunk.parse(self.path)
            except InputError:
                doc = None
            if doc is not None and isinstance(doc.data, dict) and list(doc.data) == [entry.key]:
                offset = entry.line - 1
                return [(p[1:], a + offset, b + offset) for p, a, b in doc.duplicate_pairs if len(p) > 1]
        full = self._full_doc()
        return [(p[1:], a, b) for p, a, b in full.duplicate_pairs if len(p) > 1 and p[0] == entry.key]

    def _split_full(self) -> None:
        doc = self._full_doc()
        data = doc.data or {}
        # The parse keeps the last copy of a repeated config key; its first copy is still an error.
        self.top_duplicates = [(str(p[0]), a, b) for p, a, b in doc.duplicate_pairs if len(p) == 1]
        for key in data:
            line = doc.line(key) or 1
            chunk = _Chunk("")
            self.entries.append(ConfigEntry(str(key), self.vendor, self.side, self.path, line, chunk, self))

    def parse_entry(self, entry: ConfigEntry) -> tuple[dict[str, Any], dict[tuple[Any, ...], int]]:
        chunk = entry._chunk
        doc: Doc | None = None
        if chunk.text and not self.whole:
            with contextlib.suppress(InputError):
                doc = chunk.parse(self.path)
        if doc is not None and isinstance(doc.data, dict) and list(doc.data) == [entry.key]:
            offset = entry.line - 1
            rel = {p[1:]: ln + offset for p, ln in doc.lines.items() if len(p) > 1}
            value = doc.data[entry.key]
            return (value if isinstance(value, dict) else {}), rel
        # Shortcut failed (alias into another entry, odd key): read the entry from the whole file.
        full = self._full_doc()
        data = full.data or {}
        if entry.key not in data:
            raise chunk.error or InputError(self.path, f"cannot read entry {entry.key!r}")
        rel = {p[1:]: ln for p, ln in full.lines.items() if len(p) > 1 and p[0] == entry.key}
        value = data[entry.key]
        return (value if isinstance(value, dict) else {}), rel


def _entry_starts(lines: list[str]) -> list[tuple[str, int]] | None:
    """(key, 0-based line) of every line that starts a top-level entry; None when a line at column 0
    is neither such a key, a comment nor blank (the file is then read whole)."""
    starts: list[tuple[str, int]] = []
    for i, line in enumerate(lines):
        if not line or line[0] in " \t#\r":
            continue
        match = _SIMPLE_KEY.match(line)
        if match is None:
            return None
        starts.append((match.group(1), i))
    return starts


_SPLITS: processcache.ByText[str, tuple[tuple[str, int, str], ...] | None] = \
    processcache.ByText("configs.master.entry_texts", 64)


def _entry_texts(text: str) -> tuple[tuple[str, int, str], ...] | None:
    """(key, 0-based line, text) of every top-level entry of a master file; () for a file of only
    comments and blank lines; None when the file does not split (it is read whole). Once per text
    in the process: every context of the recording pass and the verdict splits the same files."""
    if text in _SPLITS:
        return _SPLITS[text]
    lines = text.split("\n")
    starts = _entry_starts(lines)
    out: tuple[tuple[str, int, str], ...] | None
    if starts is None:
        out = None
    elif not starts:
        out = () if not text.strip() or _only_comments(lines) else None
    else:
        bounds = [start for _, start in starts[1:]] + [len(lines)]
        out = tuple((key, start, "\n".join(lines[start:end]) + "\n") for (key, start), end in zip(starts, bounds, strict=True))
    return _SPLITS.put(text, out)


# A whole master file is read from its entries' parses only when it is at most this long: then,
# without aliases, it cannot build more values (MAX_NODES) or handle more pairs (MAX_MERGE_WORK)
# than parse_yaml11 allows, as every value and pair takes a character of its own.
_ASSEMBLED_MAX_TEXT = 1_000_000
# ... and when no entry nests deeper than this: a parse of the whole file, from another caller's
# stack, then nests no nearer Python's recursion limit than the entries' parses did.
_ASSEMBLED_MAX_DEPTH = 100
_SHARING_MARK = re.compile(r"[&*!]|<<")


def master_file_data(text: str, path: str) -> Any:
    """`parse_yaml11(text, path).data` of a whole master file (its InputError when refused), read
    from the parses of its top-level entries where that is sure to give the same data.

    Those parses are the ones the checks and the launch resolution use (`parse_yaml11_shared`, one
    per distinct entry text in the process), so the recorder's reading of every entry costs nothing
    more, and an entry the PR leaves alone on the base side is parsed once for both sides. The
    entries are read as the whole file only when the file splits at top-level keys with nothing but
    comments and blank lines before the first, no line outside a comment has an anchor, alias, merge
    key or tag (`&`, `*`, `<<`, `!`: the whole file's parse may resolve them, or refuse them, across
    entries, and its merge-work budget counts them over all entries),
    every entry parses on its own into exactly one key, and the file is small and shallow enough
    that parse_yaml11's budgets cannot refuse the whole file. A key repeated at the top level keeps
    its first position and last value, as the whole file's parse does. Otherwise the file is parsed
    whole (once per process as well)."""
    pieces = _entry_texts(text) if len(text) <= _ASSEMBLED_MAX_TEXT else None
    if pieces and _only_comments(text.split("\n", pieces[0][1])[:pieces[0][1]]) and not _sharing(text):
        data: dict[Any, Any] = {}
        for _, _, piece in pieces:
            try:
                doc = parse_yaml11_shared(piece, path)
            except InputError:
                break
            if not isinstance(doc.data, dict) or len(doc.data) != 1 or doc.depth > _ASSEMBLED_MAX_DEPTH:
                break
            data.update(doc.data)
        else:
            return data
    return parse_yaml11_shared(text, path).data


def _only_comments(lines: list[str]) -> bool:
    return all(not ln.strip() or ln.lstrip().startswith("#") for ln in lines)


def _sharing(text: str) -> bool:
    """True when a line outside a comment may hold an anchor, alias, merge key or tag."""
    for mark in _SHARING_MARK.finditer(text):
        at = mark.start()
        # a comment line is one whose first non-blank character is `#`: before this mark, then
        if not text[text.rfind("\n", 0, at) + 1:at].lstrip().startswith("#"):
            return True
    return False


@dataclass(eq=False, repr=False)
class MasterConfigs:
    """Both vendors' master configs on one side."""

    side: str
    entries: dict[str, ConfigEntry]
    files: dict[str, str]
    errors: list[MasterError]

    def __iter__(self) -> Iterator[ConfigEntry]:
        return iter(self.entries.values())


def _text(ctx: CheckContext, side: str, path: str) -> str | None:
    tree = ctx.bundle.base if side == "base" else ctx.bundle.head
    raw = tree.read(path)
    return None if raw is None else decode_text(raw, path)


def _chunk_cache(ctx: CheckContext) -> dict[str, _Chunk]:
    return ctx.memo("configs.master.chunks", dict)


def load_master(ctx: CheckContext, side: str) -> MasterConfigs:
    """Split both master files of one side into entries (not memoized; see master_configs)."""
    entries: dict[str, ConfigEntry] = {}
    files: dict[str, str] = {}
    errors: list[MasterError] = []
    cache = _chunk_cache(ctx)
    for vendor, logical in VENDOR_FILES:
        path = ctx.bundle.side_path(logical, side)
        text = _text(ctx, side, path)
        if text is None:
            continue
        files[vendor] = path
        master = _MasterFile(vendor, side, path, text, cache)
        for key, first_line, line in master.top_duplicates:
            errors.append(MasterError("duplicate-key", path, line, key,
                                      f"config key {key!r} also defined at {path}:{first_line}", first_line))
        own: set[str] = set()
        for entry in master.entries:
            if "*" in entry.key:
                errors.append(MasterError("wildcard-key", path, entry.line, entry.key,
                                          f"config key {entry.key!r} contains '*'"))
            if entry.key in entries:
                first = entries[entry.key]
                errors.append(MasterError("duplicate-key", path, entry.line, entry.key,
                                          f"config key {entry.key!r} also defined at {first.file}:{first.line}",
                                          first.line if first.file == path else None))
                if entry.key not in own:
                    # Keys are unique across the vendor files (the generator refuses the pair): the
                    # other vendor's entry stays.
                    continue
            # Within one file PyYAML's safe_load keeps the LAST copy (the dict keeps the first
            # copy's position), so the generator runs the repeat: so does every check.
            own.add(entry.key)
            entries[entry.key] = entry
    return MasterConfigs(side=side, entries=entries, files=files, errors=errors)


def master_configs(ctx: CheckContext, side: str = "head") -> MasterConfigs:
    """Both master configs of one side, memoized per verdict (InputError if a file is unreadable)."""
    return ctx.memo(f"configs.master.{side}", lambda: load_master(ctx, side))


def master_entries(ctx: CheckContext, side: str = "head") -> dict[str, ConfigEntry]:
    """Config key -> ConfigEntry over both vendors' master configs of one side."""
    return master_configs(ctx, side).entries


def spelled_out(value: str) -> bool:
    """True when any field whose string form (`str(value)`) is `value` has `value` in its YAML text:
    not empty, no whitespace (a scalar may be folded there), no quote or bracket (escapes and the
    string form of a list differ from their text), not a number and not `True`/`False`/`None`
    (those strings come from values written `0x10`, `yes` or `~`)."""
    if not value or any(c.isspace() or c in "'\"[]{}" for c in value) or value in ("True", "False", "None"):
        return False
    try:
        float(value)
    except ValueError:
        return True
    return False


def candidate_entries(ctx: CheckContext, side: str,
                      needles: Iterable[str | tuple[str, ...]] | None) -> list[ConfigEntry]:
    """The entries of one side that may hold what the caller looks for, in file order, without parsing
    the others: each entry whose text contains a needle (a tuple: all of its strings), or whose values
    may not be spelled out in its text (`_Chunk.indirect`). A needle string must be part of every
    spelling of the value sought; `needles` None, or a string for which `spelled_out` is False,
    selects every entry. Raises InputError when the master configs are unreadable."""
    entries = list(master_entries(ctx, side).values())
    if needles is None:
        return entries
    groups = list(dict.fromkeys((n,) if isinstance(n, str) else tuple(n) for n in needles))
    if not all(spelled_out(n) for group in groups for n in group):
        return entries
    return [e for e in entries if e._chunk.indirect or any(all(n in e.text for n in g) for g in groups)]
