"""Output formats. Every renderer reads the structured Report; none of them re-parses text."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from verifier.runner import Report


class OutputFormat(StrEnum):
    """The formats `verify-pr --format` accepts."""

    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"
    SARIF = "sarif"


def renderer(fmt: OutputFormat) -> Callable[[Report], str]:
    """The render function of a format."""
    from verifier.render.json import render_json
    from verifier.render.markdown import render_markdown
    from verifier.render.sarif import render_sarif
    from verifier.render.terminal import render_table

    table: dict[OutputFormat, Callable[[Report], str]] = {
        OutputFormat.TABLE: render_table,
        OutputFormat.JSON: render_json,
        OutputFormat.MARKDOWN: render_markdown,
        OutputFormat.SARIF: render_sarif,
    }
    return table[fmt]
