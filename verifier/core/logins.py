"""GitHub logins as identities: only the ASCII form GitHub allows can name anyone.

A GitHub login is ASCII letters, digits and single hyphens (an App's account adds `[bot]`).
Anything else in a bundle or a CODEOWNERS line (a Kelvin sign `K` that lowercases to `k`, a
Cyrillic `о`, a zero-width joiner, a bidi control) is not a login GitHub could have issued, so
it matches nobody, instead of being folded by `str.lower()` into someone else's name.
"""

from __future__ import annotations

import re
from typing import TypeGuard

_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\[bot\])?")


def is_login(text: object) -> TypeGuard[str]:
    """True when text is a login GitHub could have issued (ASCII [A-Za-z0-9-], optional [bot])."""
    return isinstance(text, str) and text.isascii() and _LOGIN.fullmatch(text) is not None


def login_key(text: object) -> str | None:
    """The case-insensitive comparison key of a login, or None when it is not a valid login."""
    return text.lower() if is_login(text) else None


def same_login(a: object, b: object) -> bool:
    """True when both are valid logins naming the same account (GitHub logins ignore case)."""
    key = login_key(a)
    return key is not None and key == login_key(b)
