"""Locations of the data that ships with the package: policies, templates, fixtures, schemas."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
# A non-editable install (pip install ., pre-commit's hook environment) has no project tree next to
# the package: policies/ and templates/ are installed as data files under <prefix>/share/infx-verifier
# (pyproject.toml [tool.setuptools.data-files]).
INSTALLED_DATA_DIR = Path(sys.prefix) / "share" / "infx-verifier"
DATA_DIR = PROJECT_DIR if (PROJECT_DIR / "policies").is_dir() or not (INSTALLED_DATA_DIR / "policies").is_dir() \
    else INSTALLED_DATA_DIR
POLICY_DIR = DATA_DIR / "policies"
TEMPLATE_DIR = DATA_DIR / "templates"
FIXTURE_DIR = PROJECT_DIR / "fixtures"
SCHEMA_DIR = PACKAGE_DIR / "schemas"
DEFAULT_BUNDLE = FIXTURE_DIR / "pr4524"
