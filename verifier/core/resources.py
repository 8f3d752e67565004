"""Locations of the data that ships with the package: policies, templates, schemas.

policies/ and templates/ are kept at the top of the source tree (where contributors edit them) and
are copied into the wheel as package data, `verifier/_data/{policies,templates}` (setup.py
`build_py`). They are found through importlib.resources, so an install with `--prefix`, `--user`, a
pre-commit hook environment or a zip-free site-packages anywhere reads the same files; a source
checkout or an editable install (which has no `_data` next to the package) reads the tree itself.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

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
FIXTURE_DIR = PROJECT_DIR / "fixtures"  # source checkout only: the fixtures are not shipped
DEFAULT_BUNDLE = FIXTURE_DIR / "pr4524"
