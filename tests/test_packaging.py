"""The wheel is releasable: data ships as package data, every import is declared, one version.

test_prefix_install_judges_identically builds the wheel, installs it with `pip install --prefix`
into an empty directory (offline: --no-deps, --no-build-isolation; the dependencies come from this
environment) and compares its JSON verdict on a copied bundle with the source tree's (~15 s, so
it is part of the fast suite).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from tests.kit import CASES, PROJECT

PYPROJECT = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
# import name -> distribution name, for the third-party packages the verifier imports
DISTRIBUTION = {"yaml": "PyYAML", "ruamel": "ruamel.yaml", "github": "PyGithub", "jinja2": "Jinja2",
                "pydantic": "pydantic", "jsonschema": "jsonschema", "rich": "rich", "requests": "requests",
                "urllib3": "urllib3", "markdown_it": "markdown-it-py"}
# imported only by the spec dumpers (`sglang-spec dump`, `engine-spec dump vllm`) and the equivalence tests,
# from the real sglang (.ci/install-sglang.sh) and vllm (.ci/install-vllm.sh, its own venv)
OPTIONAL = {"sglang", "torch", "vllm"}


def _imports(root: Path) -> set[str]:
    names: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_every_third_party_import_is_declared() -> None:
    imported = _imports(PROJECT / "verifier") | _imports(PROJECT / "checks")
    third_party = imported - set(sys.stdlib_module_names) - {"verifier", "checks", "__future__"} - OPTIONAL
    declared = {r.split(">")[0].split("=")[0].split("[")[0].strip().lower()
                for r in [*PYPROJECT["project"]["dependencies"], *PYPROJECT["project"]["optional-dependencies"]["full"]]}
    unknown = third_party - set(DISTRIBUTION)
    assert not unknown, f"map these imports to their distribution: {sorted(unknown)}"
    missing = sorted(DISTRIBUTION[m] for m in third_party if DISTRIBUTION[m].lower() not in declared)
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_constraints_pin_every_runtime_dependency() -> None:
    pins = {line.split("==")[0].strip().lower().replace("_", "-"): line.split("==")[1].strip()
            for line in (PROJECT / "constraints.txt").read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")}
    for requirement in PYPROJECT["project"]["optional-dependencies"]["full"]:
        name = requirement.split(">")[0].split("=")[0].split("[")[0].strip().lower().replace("_", "-")
        assert name in pins, f"{name} is not pinned in constraints.txt"
    assert all(v and v[0].isdigit() for v in pins.values())


def test_cli_names_the_full_extra_when_a_dependency_is_missing() -> None:
    from verifier.app.cli import FULL_DEPENDENCIES

    full = {r.split(">")[0].strip().lower() for r in PYPROJECT["project"]["optional-dependencies"]["full"]}
    assert {DISTRIBUTION[m].lower() for m in FULL_DEPENDENCIES} == full - {"pyyaml"}
    code = ("import sys; sys.modules['pydantic'] = None\n"  # None: import raises ModuleNotFoundError
            "from verifier.app.cli import main\n"
            f"sys.exit(main(['--bundle', {str(CASES / 'pr4524')!r}]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("verify-pr: missing dependency pydantic: this command needs the full verifier, "
                                   "pip install 'infx-verifier[full]' (the bare package carries only the "
                                   "pre-commit hook)")


def test_single_version_source() -> None:
    from importlib.metadata import version

    from verifier import __version__
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert version("infx-verifier") == __version__
    changelog = (PROJECT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{__version__}]" in changelog


def test_license_is_the_apache_text() -> None:
    text = (PROJECT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text


def test_data_is_found_through_importlib_resources() -> None:
    from verifier.core import resources
    source = (resources.PROJECT_DIR / "policies").is_dir()
    assert resources.POLICY_DIR.is_dir() and resources.TEMPLATE_DIR.is_dir()
    assert "sys.prefix" not in (PROJECT / "verifier" / "core" / "resources.py").read_text(encoding="utf-8")
    assert source  # this test runs from the source tree; the installed case is the test below


def test_prefix_install_judges_identically(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(PROJECT)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next(wheels.glob("infx_verifier-*.whl"))
    prefix = tmp_path / "prefix"
    # --ignore-installed: without it pip uninstalls this environment's own (editable) copy first
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed", "--prefix",
                           str(prefix), str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    site = Path(sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)}))
    assert (site / "verifier" / "_data" / "policies" / "checks.yaml").is_file()
    assert not (prefix / "share").exists()  # no data outside the package
    # the prebuilt layer (verifier/core/cache.py): policies validated and templates compiled at build time
    prebuilt = site / "verifier" / "_data" / "prebuilt"
    assert (prebuilt / "policies.json").is_file() and (prebuilt / "templates" / "manifest.json").is_file()
    assert len(list((prebuilt / "templates").glob("t_*.py"))) == len(list((PROJECT / "templates").rglob("*.j2")))
    bundle = tmp_path / "bundle"
    shutil.copytree(CASES / "pr4524", bundle)
    workdir = tmp_path / "elsewhere"  # not the source tree: nothing may be read from it
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # -S: no site-packages .pth, so the editable install of the source tree cannot be picked up;
    # the dependencies come from this environment's site-packages, added after the prefix.
    deps = [p for p in sys.path if p.endswith("site-packages")]
    env["PYTHONPATH"] = os.pathsep.join([str(site), *deps])
    code = ("import sys, verifier; assert verifier.__file__.startswith(sys.argv[1]), verifier.__file__; "
            "from verifier.app.cli import main; sys.exit(main(['--bundle', sys.argv[2], '--format', 'json']))")
    installed = subprocess.run([sys.executable, "-S", "-c", code, str(site), str(bundle)], capture_output=True,
                               text=True, cwd=workdir, env=env, timeout=300)
    assert installed.returncode == 1, installed.stderr
    source = subprocess.run([sys.executable, "-m", "verifier.app.cli", "--bundle", str(bundle), "--format", "json"],
                            capture_output=True, text=True, cwd=PROJECT, timeout=300)
    assert source.returncode == 1, source.stderr
    assert json.loads(installed.stdout) == json.loads(source.stdout)
    assert installed.stdout == source.stdout
    # ... and the installed package takes every policy and template from it, with no user cache: parsing a
    # policy here would fail, and every template's code is the shipped module's
    probe = ("import sys, verifier; from verifier.app import precompiled  # as the command line: the table first\n"
             "from verifier.core import cache, policy; from verifier.render import text\n"
             "policy._parsed = None\n"
             "topics = policy.load_policies()\n"
             "env = text.environment()\n"
             "files = {env.get_template(n).root_render_func.__code__.co_filename for n in env.list_templates()}\n"
             "print(len(topics), sorted({str(cache.PREBUILT_DIR / 'templates') == f.rsplit('/', 1)[0] for f in files}),"
             " 'jsonschema' in sys.modules, precompiled.installed() > 1000)")
    used = subprocess.run([sys.executable, "-S", "-c", probe], capture_output=True, text=True, cwd=workdir,
                          env={**env, "INFX_VERIFIER_CACHE": "off"}, timeout=300)
    # ... and the code a fresh process compiles comes precompiled (verifier/app/precompiled.py)
    assert used.stdout.split() == [str(len(list((PROJECT / "policies").glob("*.yaml")))), "[True]", "False", "True"], \
        used.stderr
