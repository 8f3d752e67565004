"""Vendor overview pages (`docs/overview/nvidia.md`, `amd.md`): which config keys each engine runs per model.

The data is the first Markdown table whose header row is exactly
`| Model | Prefix | SGLang | vLLM | TRT-LLM | Dynamo |` (cases/README.md), followed by a `|---|` row.
Each engine cell is a `, `-separated list of config keys, or an em dash when the engine runs none.
Cells are plain text, but a reviewer may wrap keys in backticks or links, so both are unwrapped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from verifier.core.model import Tree
from verifier.core.textscan import link_labels
from verifier.core.yamlio import decode_text

EMPTY_CELLS = frozenset({"—", "-", "–", "", "n/a", "N/A"})
# blanks matched possessively: tried again from each blank of a run, a row of blanks cost its square
_SEPARATOR = re.compile(r"^\s*+\|?\s*+:?-{3,}:?\s*+(?:\|\s*+:?-{3,}:?\s*+)*+\|?\s*+$")


@dataclass(frozen=True, eq=False, repr=False)
class OverviewRow:
    """One model row: its name, prefix, the keys of each engine column, and its 1-based line."""

    model: str
    prefix: str
    cells: Mapping[str, tuple[str, ...]]
    line: int
    text: str

    def column_of(self, key: str) -> str | None:
        """The engine column whose cell lists this key (None when no cell does)."""
        return next((column for column, keys in self.cells.items() if key in keys), None)


@dataclass(frozen=True, eq=False, repr=False)
class Overview:
    """A parsed overview page: rows by prefix (first row wins), and where the table starts."""

    path: str
    header_line: int | None
    columns: tuple[str, ...]
    rows: tuple[OverviewRow, ...] = ()
    duplicates: tuple[OverviewRow, ...] = field(default=())

    def row(self, prefix: str) -> OverviewRow | None:
        """The row whose Prefix column equals this model prefix."""
        return next((r for r in self.rows if r.prefix == prefix), None)


def _cells(line: str) -> list[str]:
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", text)]


def _plain(cell: str) -> str:
    return link_labels(cell).replace("`", "").replace("**", "").strip()


def _keys(cell: str) -> tuple[str, ...]:
    plain = _plain(cell)
    if plain in EMPTY_CELLS:
        return ()
    return tuple(k.strip() for k in plain.split(",") if k.strip() and k.strip() not in EMPTY_CELLS)


def parse_overview(text: str, path: str, header: Sequence[str]) -> Overview:
    """Parse the overview table. `header` is the exact column list; an absent table gives no rows."""
    lines = text.splitlines()
    wanted = [h.strip() for h in header]
    for index, line in enumerate(lines):
        if _cells(line) != wanted or "|" not in line:
            continue
        if index + 1 >= len(lines) or not _SEPARATOR.match(lines[index + 1]):
            continue
        rows: list[OverviewRow] = []
        duplicates: list[OverviewRow] = []
        seen: set[str] = set()
        for offset, row_line in enumerate(lines[index + 2 :], start=index + 3):
            if not row_line.strip().startswith("|"):
                break
            cells = _cells(row_line)
            if len(cells) != len(wanted):
                continue
            engines = {wanted[i]: _keys(cells[i]) for i in range(2, len(wanted))}
            row = OverviewRow(_plain(cells[0]), _plain(cells[1]), engines, offset, row_line.strip())
            if row.prefix in seen:
                duplicates.append(row)
            else:
                seen.add(row.prefix)
                rows.append(row)
        return Overview(path, index + 1, tuple(wanted), tuple(rows), tuple(duplicates))
    return Overview(path, None, tuple(wanted))


def read_overview(tree: Tree, path: str, header: Sequence[str]) -> Overview | None:
    """The overview of one vendor from a tree, or None when the tree does not hold the file.

    Raises InputError when the file is not UTF-8 text.
    """
    raw = tree.read(path)
    if raw is None:
        return None
    return parse_overview(decode_text(raw, path), path, header)

