"""verifier.documents.checklist reads checkboxes as GitHub renders the comment (CommonMark), not by line regex.

Issue 11 defect 3: a `- [x]` inside an HTML comment, a fenced or indented code block or a blockquote
(quoted from another comment) is not checked on GitHub; an ordered-list `1. [x]` is.
"""

from __future__ import annotations

import pytest

from verifier.documents.checklist import (
    MAX_CHECKBOXES,
    MAX_MARKDOWN_CHARS,
    ChecklistTooLarge,
    checkboxes,
    detail_blocks,
)


def _checked(text: str) -> list[str]:
    return [i.text for i in checkboxes(text) if i.checked]


@pytest.mark.parametrize("body", [
    "intro\n<!--\n- [x] hidden item\n-->\n",
    "intro\n\n<!-- - [x] hidden item -->\n",
    "intro\n\n```\n- [x] hidden item\n```\n",
    "intro\n\n~~~markdown\n- [x] hidden item\n~~~\n",
    "intro\n\n    - [x] hidden item\n",
    "intro\n\n> - [x] hidden item\n",
    "> quoting the earlier sign-off:\n> - [x] hidden item\n>   - [x] nested too\n",
], ids=["html-comment-block", "html-comment-line", "fence", "tilde-fence", "indented-code", "blockquote",
        "quoted-nested"])
def test_invisible_or_quoted_checkboxes_do_not_count(body: str) -> None:
    assert _checked(body) == []


def test_ordered_list_items_count() -> None:
    items = checkboxes("As a PR reviewer:\n1. [x] first item\n2. [ ] second item\n3) [X] third item\n")
    assert [(i.text, i.checked, i.depth, i.line) for i in items] == [
        ("first item", True, 0, 2), ("second item", False, 0, 3), ("third item", True, 0, 4)]


def test_nested_items_keep_depth_and_lines() -> None:
    text = "As a PR reviewer:\n- [x] top\n  - [ ] nested\n    * [X] deeper\n- [x] next\n"
    assert [(i.text, i.checked, i.depth, i.line) for i in checkboxes(text, first_line=10)] == [
        ("top", True, 0, 11), ("nested", False, 1, 12), ("deeper", True, 2, 13), ("next", True, 0, 14)]


def test_not_a_checkbox_without_text_or_as_link() -> None:
    assert checkboxes("- [x]\n- [x](https://example.com) link\n- text [x] later\n") == []


def test_detail_section_skips_hidden_and_quoted_explanations() -> None:
    body = ("- [ ] item\n\n### Additional detail section:\n- **Scope:** one\n<!-- - **append-only:** N/A -->\n"
            "> - **waiver:** N/A (quoted)\n\n```\n- **dynamo:** N/A\n```\n- **Evals:** two\n  - nested\n\n"
            "Signed: someone\n- after\n")
    assert detail_blocks(body) == ["**Scope:** one", "**Evals:** two nested"]


def test_detail_section_paragraph_bullets_split() -> None:
    body = "**Additional detail section:**\n• **a:** N/A\n• **b:** ok\nSigned: x\n"
    assert detail_blocks(body) == ["• **a:** N/A", "• **b:** ok"]


def test_hostile_sizes_are_refused_not_slow() -> None:
    with pytest.raises(ChecklistTooLarge):
        checkboxes("- [x] a\n" * (MAX_MARKDOWN_CHARS // 8 + 1))
    with pytest.raises(ChecklistTooLarge):
        checkboxes("- [x] a\n" * (MAX_CHECKBOXES + 1))
    # Deep nesting and bracket runs within the size cap parse (maxNesting bounds the depth).
    assert checkboxes("> " * 20000 + "- [x] deep\n") == []
    assert len(checkboxes("- " * 20000 + "[x] deep\n")) <= 1
    assert checkboxes("[" * 60000) == []
