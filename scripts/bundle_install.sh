#!/usr/bin/env bash
# Installs factscore-local from this offline bundle (written by scripts/bundle.sh), with no
# network: checks every file against SHA256SUMS, creates VENV (default ./fscore-venv), runs
# `pip install --no-index --find-links wheels/`, puts the GGUF models where the model store
# reads them (FSCORE_MODEL_DIR, else ~/.cache/factscore-local/models) and the packaged
# source and demo dump in factscore-local's cache, then prints how to run.
#
# Usage: bash BUNDLE/install.sh [VENV] [--no-verify] [--models-in-place]
#   --no-verify        skip the sha256 check (a few seconds per GB)
#   --models-in-place  leave the models in the bundle (then export FSCORE_MODEL_DIR=BUNDLE/models)
# Environment: PYTHON (default: pythonX.Y of the bundle), FSCORE_MODEL_DIR, XDG_CACHE_HOME.
set -euo pipefail
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "install: $*" >&2; exit 2; }
log() { echo "install: $*" >&2; }
VENV=""; VERIFY=1; COPY_MODELS=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-verify) VERIFY=0; shift ;;
    --models-in-place) COPY_MODELS=0; shift ;;
    -*) die "unknown option $1 (usage: install.sh [VENV] [--no-verify] [--models-in-place])" ;;
    *) [[ -z "$VENV" ]] || die "one VENV only"; VENV="$1"; shift ;;
  esac
done
VENV="${VENV:-$PWD/fscore-venv}"
[[ -f "$BUNDLE/bundle.env" ]] || die "$BUNDLE has no bundle.env: not a bundle of scripts/bundle.sh"
# shellcheck source=/dev/null
source "$BUNDLE/bundle.env"
START=$SECONDS

if [[ $VERIFY -eq 1 ]]; then
  (cd "$BUNDLE" && sha256sum --quiet -c SHA256SUMS) || die "the bundle is damaged (above)"
  log "$(wc -l < "$BUNDLE/SHA256SUMS") files match SHA256SUMS ($((SECONDS - START)) s)"
fi

PY="${PYTHON:-python$PYTHON_VERSION}"
command -v "$PY" >/dev/null 2>&1 || die "no $PY: the bundle's wheels are for Python \
$PYTHON_VERSION (set PYTHON=/path/to/python$PYTHON_VERSION)"
HAVE="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
[[ "$HAVE" == "$PYTHON_VERSION" ]] || die "$PY is Python $HAVE; the wheels are for $PYTHON_VERSION"
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"

# Nothing but the bundle: no index, and none of this machine's pip settings (a configured
# index, find-links or constraints would be consulted or would clash).
export PIP_CONFIG_FILE=/dev/null
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_CONSTRAINT PIP_REQUIREMENT
DEPS=()
[[ "${NO_DEPS:-0}" -eq 1 ]] && DEPS=(--no-deps)
"$VENV/bin/python" -m pip install -q --no-index --find-links "$BUNDLE/wheels" \
  --disable-pip-version-check "${DEPS[@]}" "$REQUIREMENT"
log "$REQUIREMENT installed in $VENV ($((SECONDS - START)) s)"

# Where model_store.model_dir() and demo_data.cache_dir() look (the same variables).
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/factscore-local"
MODELS="${FSCORE_MODEL_DIR:-$CACHE/models}"
if compgen -G "$BUNDLE/models/*.gguf" >/dev/null; then
  if [[ $COPY_MODELS -eq 1 ]]; then
    mkdir -p "$MODELS"
    for gguf in "$BUNDLE"/models/*.gguf; do
      target="$MODELS/$(basename "$gguf")"
      # already there (same size, as the model store checks): keep it
      [[ -f "$target" && $(stat -c %s "$target") -eq $(stat -c %s "$gguf") ]] && continue
      cp "$gguf" "$target.part" && mv "$target.part" "$target"
    done
    log "models in $MODELS"
  else
    MODELS="$BUNDLE/models"
    log "models left in $MODELS: export FSCORE_MODEL_DIR=$MODELS"
  fi
fi
if [[ -d "$BUNDLE/sources" ]]; then
  mkdir -p "$CACHE/sources" "$CACHE/wiki-dumps"
  cp "$BUNDLE"/sources/* "$CACHE/sources/"
  cp "$BUNDLE"/wiki-dumps/* "$CACHE/wiki-dumps/"
  log "packaged source and demo dump in $CACHE"
fi
log "done in $((SECONDS - START)) s"

FSCORE="$VENV/bin/fscore"
ENVLINE=""
[[ $COPY_MODELS -eq 0 ]] && ENVLINE="export FSCORE_MODEL_DIR=$MODELS"$'\n'
DUMP="$CACHE/wiki-dumps/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
cat <<EOF

factscore-local is installed. To run it (offline):
${ENVLINE}  $FSCORE models list
  $FSCORE build-index --source $DUMP --out my-index --dense none --no-bm25
  $FSCORE eval --index my-index --input bios.jsonl --lm qwen2.5-coder-0.5b-instruct-q4_k_m
EOF
if [[ -d "$BUNDLE/index" ]]; then
  echo "Indexes carried by the bundle: $(ls -d "$BUNDLE"/index/*/ | tr '\n' ' ')"
fi
