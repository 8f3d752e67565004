#!/usr/bin/env bash
# Install the real SGLang 0.5.23 server-argument parser into a venv, CPU only, idempotently.
#
#   bash .ci/install-sglang.sh .venv
#
# Used by the equivalence tests (tests/sglang/test_equivalence.py), which compare the committed
# arg spec (policies/sglang-argspec/) with SGLang's own parser. The verifier itself never needs
# this: its runtime path parses with the committed spec and imports no torch.
#
# What it installs (see docs: SGLANG.md §2.3): the CPU torch wheel that this machine image keeps
# in pip's find-links folder (pinned as 2.13.0+cpu so that a missing wheel fails fast instead of
# pulling a multi-GB CUDA build), the small import-time dependencies of
# sglang.srt.server_args, triton (imported at module level), and sglang itself with --no-deps
# (its own pins would pull CUDA torch). About 30-90 s and ~2 GB on the 2-core CI machine.
set -euo pipefail

VENV="${1:?usage: install-sglang.sh VENV_DIR}"
PY="$VENV/bin/python"
SGLANG_VERSION="0.5.23"
TORCH_VERSION="2.13.0+cpu"
TRITON_VERSION="3.8.0"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [ ! -x "$PY" ]; then
  echo "install-sglang: $PY not found (create the venv first)" >&2
  exit 2
fi

installed() {  # installed version of a distribution, or nothing (no import of the package)
  "$PY" - "$1" <<'EOF' 2>/dev/null || true
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    print(version(sys.argv[1]))
except PackageNotFoundError:
    pass
EOF
}

pip_install() {  # pip install, without the find-links "is ignored" noise this image prints
  "$VENV/bin/pip" install --quiet "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

if [ "$(installed sglang)" = "$SGLANG_VERSION" ] && [ "$(installed torch)" = "$TORCH_VERSION" ] \
   && [ -n "$(installed triton)" ] && [ -n "$(installed msgspec)" ]; then
  echo "install-sglang: sglang $SGLANG_VERSION and CPU torch already installed"
else
  start=$(date +%s)
  pip_install "torch==$TORCH_VERSION" \
    numpy orjson psutil pybase64 requests packaging pillow starlette pyzmq tqdm msgspec pydantic
  pip_install "triton==$TRITON_VERSION"
  pip_install --no-deps "sglang==$SGLANG_VERSION"
  echo "install-sglang: installed sglang $SGLANG_VERSION in $(( $(date +%s) - start )) s"
fi

# Smoke test: build the real parser the way the verifier does (no sglang/__init__, no GPU).
"$PY" - <<'EOF'
import argparse, importlib.util, sys, time, types
t0 = time.time()
spec = importlib.util.find_spec("sglang")
pkg = types.ModuleType("sglang")
pkg.__path__ = list(spec.submodule_search_locations)
sys.modules["sglang"] = pkg
from sglang.srt.server_args import ServerArgs
parser = argparse.ArgumentParser(prog="sglang serve")
ServerArgs.add_cli_args(parser)
print(f"install-sglang: real parser has {len(parser._actions) - 1} actions ({time.time() - t0:.1f} s to load)")
EOF
