"""Output formats. Every renderer reads the structured Report; none of them re-parses text."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from enum import StrEnum

from verifier.core.runner import Report


class OutputFormat(StrEnum):
    """The formats `verify-pr --format` accepts."""

    TABLE = "table"
    JSON = "json"
    MARKDOWN = "markdown"
    SARIF = "sarif"


def renderer(fmt: OutputFormat) -> Callable[[Report], str]:
    """The render function of a format (only its own module is imported: rich is not needed for JSON)."""
    module, function = _RENDERERS[fmt]
    return getattr(importlib.import_module(module), function)  # type: ignore[no-any-return]


_RENDERERS: dict[OutputFormat, tuple[str, str]] = {
    OutputFormat.TABLE: ("verifier.render.terminal", "render_table"),
    OutputFormat.JSON: ("verifier.render.json", "render_json"),
    OutputFormat.MARKDOWN: ("verifier.render.markdown", "render_markdown"),
    OutputFormat.SARIF: ("verifier.render.sarif", "render_sarif"),
}
