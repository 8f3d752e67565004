#!/usr/bin/env bash
# Install the real SGLang 0.5.23 server-argument parser into a venv, CPU only, idempotently.
#
#   bash .ci/install-sglang.sh .venv
#
# Used by the equivalence tests (tests/sglang/test_equivalence.py), which compare the committed
# arg spec (policies/sglang-argspec/) with SGLang's own parser. The verifier itself never needs
# this: its runtime path parses with the committed spec and imports no torch.
#
# CPU torch comes from, in order:
#   1. the pinned wheel torch==2.13.0+cpu, when pip can find it (a find-links folder or an index
#      that carries it);
#   2. PyTorch's CPU wheel index (https://download.pytorch.org/whl/cpu, override with
#      TORCH_CPU_INDEX_URL), never the multi-GB CUDA build on PyPI.
# Then the small import-time dependencies of sglang.srt.server_args, triton (imported at module
# level) and sglang itself with --no-deps (its own pins would pull CUDA torch). About 30-90 s and
# ~2 GB on a 2-core machine.
#
# When neither torch source works (offline, no CPU index reachable), the script prints the reason,
# writes it to $VENV/infx-sglang-unavailable.txt (the equivalence tests skip with that reason) and
# exits 0 -- except under CI=true, where the tests must run: then it exits 1.
set -euo pipefail

VENV="${1:?usage: install-sglang.sh VENV_DIR}"
PY="$VENV/bin/python"
SGLANG_VERSION="0.5.23"
TORCH_VERSION="2.13.0"
TORCH_PINNED="$TORCH_VERSION+cpu"
TRITON_VERSION="3.8.0"
TORCH_CPU_INDEX_URL="${TORCH_CPU_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
UNAVAILABLE="$VENV/infx-sglang-unavailable.txt"
export PIP_DISABLE_PIP_VERSION_CHECK=1

if [ ! -x "$PY" ]; then
  echo "install-sglang: $PY not found (create the venv first)" >&2
  exit 2
fi

installed() {  # installed version of a distribution, or nothing (no import of the package)
  "$PY" - "$1" <<'PYEOF' 2>/dev/null || true
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    print(version(sys.argv[1]))
except PackageNotFoundError:
    pass
PYEOF
}

pip_install() {  # pip install, without the find-links "is ignored" noise some images print
  "$VENV/bin/pip" install --quiet "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

unavailable() {  # record why the real parser is missing; fatal only under CI=true
  echo "install-sglang: $1" >&2
  printf '%s\n' "$1" > "$UNAVAILABLE"
  if [ "${CI:-}" = "true" ]; then
    echo "install-sglang: CI=true requires the real parser; failing" >&2
    exit 1
  fi
  echo "install-sglang: the real-parser equivalence tests will be skipped with this reason" >&2
  exit 0
}

install_cpu_torch() {  # 0 when a CPU torch is installed; the reason on stdout otherwise
  local why_pinned why_index
  if why_pinned=$("$VENV/bin/pip" install --quiet --no-deps "torch==$TORCH_PINNED" 2>&1); then
    return 0
  fi
  echo "install-sglang: pinned wheel torch==$TORCH_PINNED not found by pip; trying $TORCH_CPU_INDEX_URL" >&2
  if why_index=$("$VENV/bin/pip" install --quiet --no-deps --index-url "$TORCH_CPU_INDEX_URL" \
      --timeout 20 --retries 1 "torch==$TORCH_VERSION" 2>&1); then
    return 0
  fi
  echo "no CPU torch $TORCH_VERSION: pinned wheel: $(echo "$why_pinned" | grep -m1 ERROR || echo "$why_pinned" | tail -1);" \
       "CPU index $TORCH_CPU_INDEX_URL: $(echo "$why_index" | grep -m1 ERROR || echo "$why_index" | tail -1)"
  return 1
}

torch_ok() { case "$(installed torch)" in "$TORCH_VERSION"|"$TORCH_VERSION+cpu") return 0;; *) return 1;; esac; }

if [ "$(installed sglang)" = "$SGLANG_VERSION" ] && torch_ok \
   && [ -n "$(installed triton)" ] && [ -n "$(installed msgspec)" ]; then
  echo "install-sglang: sglang $SGLANG_VERSION and CPU torch already installed"
else
  start=$(date +%s)
  if ! torch_ok; then
    reason=$(install_cpu_torch) || unavailable "$reason"
  fi
  # torch's own small dependencies, then what sglang.srt.server_args imports
  pip_install filelock typing-extensions sympy networkx jinja2 fsspec \
    numpy orjson psutil pybase64 requests packaging pillow starlette pyzmq tqdm msgspec pydantic \
    || unavailable "the import-time dependencies of sglang.srt.server_args could not be installed"
  pip_install "triton==$TRITON_VERSION" || unavailable "triton==$TRITON_VERSION could not be installed"
  pip_install --no-deps "sglang==$SGLANG_VERSION" || unavailable "sglang==$SGLANG_VERSION could not be installed"
  echo "install-sglang: installed sglang $SGLANG_VERSION in $(( $(date +%s) - start )) s"
fi
rm -f "$UNAVAILABLE"

# Smoke test: build the real parser the way the verifier does (no sglang/__init__, no GPU).
"$PY" - <<'PYEOF'
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
PYEOF
