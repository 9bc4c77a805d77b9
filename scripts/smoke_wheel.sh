#!/usr/bin/env bash
# Installs factscore-local the way a user does, from its wheel, and runs it for real:
# builds the wheel, installs it with the 'llama' extra only (the core plus the embedded
# models' backend) into a fresh virtual environment, then, from a folder outside the
# checkout, builds an index from the real dump excerpt (per-page BM25 only: no Lucene, no
# dense) and scores one bio with the embedded 0.5B model.
#
# Usage: scripts/smoke_wheel.sh [WORKDIR]   (default: a temporary folder, removed after)
# Needs: the project's .venv (scripts/setup.sh: it builds the wheel, and leaves the compiled
# llama-cpp-python wheel in .venv/.llama-wheel) and the 0.5B model in the model store.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
MODEL="qwen2.5-coder-0.5b-instruct-q4_k_m"
if [[ -n "${1:-}" ]]; then
  WORK="$(mkdir -p "$1" && cd "$1" && pwd)"
else
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
fi
START=$SECONDS
STAGE_START=$SECONDS
stage_done() {
  echo "smoke: $1 took $((SECONDS - STAGE_START)) s" >&2
  STAGE_START=$SECONDS
}

# 1. The wheel, built from a copy of the package's sources (the checkout stays clean).
rm -rf "$WORK/src" "$WORK/dist"
mkdir -p "$WORK/src"
cp "$ROOT/pyproject.toml" "$ROOT/README.md" "$WORK/src/"
for folder in factscore_local index npm data; do
  cp -r "$ROOT/$folder" "$WORK/src/"
done
find "$WORK/src" -name __pycache__ -prune -exec rm -rf {} +
"$VENV/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$WORK/dist" "$WORK/src"
WHEEL="$(ls "$WORK"/dist/factscore_local-*.whl)"
stage_done "wheel $(basename "$WHEEL")"

# 2. A fresh environment with the wheel and the 'llama' extra: llama-cpp-python from the
# wheel setup.sh compiled (kept in the venv; else pip's cache; a miss compiles it again).
# No bytecode compile at install: the modules the run imports compile as they load.
rm -rf "$WORK/venv"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --no-compile --find-links "$VENV/.llama-wheel" "$WHEEL[llama]"
stage_done "fresh environment"
FSCORE="$WORK/venv/bin/fscore"
# The installed package, not the checkout: nothing of the repository on the path.
mkdir -p "$WORK/run"
cd "$WORK/run"
"$WORK/venv/bin/python" - <<'EOF'
import factscore_local

assert "site-packages" in factscore_local.__file__, factscore_local.__file__
EOF

# 3. A tiny index from the real dump excerpt (found beside the checkout, else downloaded).
SHARED="$ROOT/../shared/data"
[[ -d "$SHARED" ]] && export FSCORE_SHARED_DATA="$SHARED"
DUMP="$("$WORK/venv/bin/python" -c \
  'from factscore_local.index.demo_data import find_dump; print(find_dump())')"
"$FSCORE" build-index --source "$DUMP" --out index --dense none --no-bm25 --quiet
stage_done "index from $(basename "$DUMP")"

# 4. One bio scored with the embedded 0.5B model (a fresh cache: the model really runs).
"$WORK/venv/bin/python" - <<'EOF'
import json
from importlib.resources import files

line = files("factscore_local.data").joinpath("demo_bios.jsonl").read_text("utf-8")
bio = json.loads(line.splitlines()[0])
assert bio["topic"] == "Albert Einstein"
with open("bio.jsonl", "w", encoding="utf-8") as f:
    f.write(json.dumps(bio) + "\n")
EOF
# (1024-token evidence blocks against the default's 7000: the installed package runs, faster)
"$FSCORE" eval --index index --input bio.jsonl --lm "$MODEL" --cache cache.db \
  --evidence-budget 1024 --out scored.jsonl --quiet --json > summary.json
"$WORK/venv/bin/python" - <<'EOF'
import json

row = json.loads(open("scored.jsonl", encoding="utf-8").readline())
assert row.get("error") is None, row
assert row["n_facts"] > 0 and row["decisions"], row
summary = json.load(open("summary.json", encoding="utf-8"))
print(f"smoke: {row['topic']}: {row['n_facts']} facts, FActScore {summary['score']}")
EOF
stage_done "one bio scored with $MODEL"
echo "smoke: wheel install and run OK in $((SECONDS - START)) s" >&2
