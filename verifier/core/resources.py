"""Locations of the data that ships with the package: policies, templates, schemas.

policies/ and templates/ are kept at the top of the source tree (where contributors edit them) and
are copied into the wheel as package data, `verifier/_data/{policies,templates}` (setup.py
`build_py`). They are found through importlib.resources, so an install with `--prefix`, `--user`, a
pre-commit hook environment or a zip-free site-packages anywhere reads the same files; a source
checkout or an editable install (which has no `_data` next to the package) reads the tree itself.

A wheel also carries `verifier/_data/prebuilt` (written by setup.py at build time, see
verifier/core/cache.py): the policies already validated and the templates already compiled, each
used only after it is checked against the bytes it was made from. An editable install or a source
checkout has none, and does that work at run time (kept in the user's cache).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # verifier/ (this file is verifier/core/resources.py)
PROJECT_DIR = PACKAGE_DIR.parent
PACKAGED_DATA = "_data"


def data_dir() -> Path:
    """The directory holding policies/ and templates/: packaged data, else the source tree."""
    packaged = files("verifier") / PACKAGED_DATA
    if packaged.is_dir():
        return Path(str(packaged))
    if (PROJECT_DIR / "policies").is_dir() and (PROJECT_DIR / "templates").is_dir():
        return PROJECT_DIR
    raise RuntimeError(f"infx-verifier data missing: neither {packaged} nor {PROJECT_DIR / 'policies'} exists "
                       "(a broken install; reinstall the package)")


DATA_DIR = data_dir()
POLICY_DIR = DATA_DIR / "policies"
TEMPLATE_DIR = DATA_DIR / "templates"
SCHEMA_DIR = Path(str(files("verifier") / "core" / "schemas"))
# Only a packaged install has prebuilt artifacts: a source checkout's own tree is never taken for them.
PREBUILT_DIR = DATA_DIR / "prebuilt" if DATA_DIR != PROJECT_DIR else None

# How the message templates are read. verifier.render.text builds its jinja2 environment from these, and
# setup.py compiles the shipped templates with the same ones (a prebuilt template records them and is used
# only while they are still these). Plain data, so that a build can read them without the verifier's
# runtime dependencies. TEMPLATE_FILTERS: the names of the filters verifier.render.text registers.
TEMPLATE_OPTIONS: dict[str, Any] = {
    "autoescape": False,
    "keep_trailing_newline": False,
    "trim_blocks": True,
    "lstrip_blocks": True,
}
TEMPLATE_FILTERS: tuple[str, ...] = ("num", "pct")
FIXTURE_DIR = PROJECT_DIR / "fixtures"  # source checkout only: the fixtures are not shipped
DEFAULT_BUNDLE = FIXTURE_DIR / "pr4524"
