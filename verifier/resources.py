"""Locations of the data that ships with the package: policies, templates, fixtures, schemas."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent
POLICY_DIR = PROJECT_DIR / "policies"
TEMPLATE_DIR = PROJECT_DIR / "templates"
FIXTURE_DIR = PROJECT_DIR / "fixtures"
SCHEMA_DIR = PACKAGE_DIR / "schemas"
DEFAULT_BUNDLE = FIXTURE_DIR / "pr4524"
