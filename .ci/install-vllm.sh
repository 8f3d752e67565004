#!/usr/bin/env bash
# Install the real vLLM serve-argument parser into its own venv, CPU only, idempotently.
#
#   bash .ci/install-vllm.sh .venv-vllm [VERSION]
#
# Used by the equivalence tests (tests/engines/test_vllm_equivalence.py): they run
# verifier/engines/vllm/dump.py with this venv's Python, which dumps the real parser's spec (it must equal
# the committed policies/vllm-argspec/vllm-<VERSION>.argspec.json) and parses the corpus with it
# (every outcome must equal the spec parser's). The verifier itself never imports vllm, and vllm
# is not one of its dependencies: it lives in this separate venv.
#
# vLLM's wheel pins a CUDA torch and a long list of serving dependencies. The parser needs none of
# the GPU parts: the script installs CPU torch (the pinned wheel torch==2.13.0+cpu when pip can find
# it, else PyTorch's CPU index), the ~30 small packages `vllm.entrypoints.openai.cli_args` imports,
# and vllm itself with --no-deps. On a CPU-only machine vLLM detects no platform; the dumper sets a
# stand-in CUDA platform before it builds the parser (see verifier/engines/vllm/dump.py). ~1-2 min, ~1.5 GB.
#
# When it cannot install (offline), it writes the reason to $VENV/infx-vllm-unavailable.txt (the
# tests skip with it) and exits 0 -- except under CI=true, where it exits 1.
set -euo pipefail

VENV="${1:?usage: install-vllm.sh VENV_DIR [VERSION]}"
VLLM_VERSION="${2:-0.27.1}"
TORCH_VERSION="2.13.0"
TORCH_CPU_INDEX_URL="${TORCH_CPU_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
UNAVAILABLE="$VENV/infx-vllm-unavailable.txt"
export PIP_DISABLE_PIP_VERSION_CHECK=1

unavailable() {
  echo "install-vllm: $1" >&2
  mkdir -p "$VENV" && printf '%s\n' "$1" > "$UNAVAILABLE"
  if [ "${CI:-}" = "true" ]; then
    echo "install-vllm: CI=true requires the real parser; failing" >&2
    exit 1
  fi
  exit 0
}

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || unavailable "cannot create $VENV"
PY="$VENV/bin/python"
pip_install() { "$VENV/bin/pip" install --quiet "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

have() { "$PY" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$1" 2>/dev/null || true; }

if [ "$(have vllm)" = "$VLLM_VERSION" ]; then
  echo "install-vllm: vllm $VLLM_VERSION already installed in $VENV"
else
  start=$(date +%s)
  case "$(have torch)" in
    "$TORCH_VERSION"|"$TORCH_VERSION+cpu") ;;
    *) pip_install --no-deps "torch==$TORCH_VERSION+cpu" 2>/dev/null \
         || pip_install --no-deps --index-url "$TORCH_CPU_INDEX_URL" --timeout 20 --retries 1 "torch==$TORCH_VERSION" \
         || unavailable "no CPU torch $TORCH_VERSION (pinned wheel or $TORCH_CPU_INDEX_URL)";;
  esac
  # torch's own small dependencies, then what vllm.entrypoints.openai.cli_args imports
  pip_install "setuptools>=77" filelock typing-extensions sympy networkx jinja2 fsspec packaging numpy \
    pydantic msgspec psutil requests pyyaml cachetools regex tqdm cloudpickle pyzmq huggingface_hub cbor2 \
    transformers aiohttp openai openai_harmony pillow pybase64 uvloop py-cpuinfo prometheus_client fastapi \
    partial_json_parser gguf \
    || unavailable "the import-time dependencies of vllm's argument parser could not be installed"
  pip_install --no-deps "vllm==$VLLM_VERSION" || unavailable "vllm==$VLLM_VERSION could not be installed"
  echo "install-vllm: installed vllm $VLLM_VERSION in $(( $(date +%s) - start )) s"
fi
rm -f "$UNAVAILABLE"
echo "$VLLM_VERSION" > "$VENV/infx-vllm-version.txt"
