#!/usr/bin/env bash
# Sets up the environment if needed, checks style, and runs the test suite.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
bash "$ROOT/scripts/setup.sh" --no-demo
cd "$ROOT"
"$VENV/bin/ruff" check .
"$VENV/bin/python" -m pytest "$@"
