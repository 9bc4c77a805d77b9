#!/usr/bin/env bash
# Sets up the environment if needed, checks style, and runs the test suite.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
bash "$ROOT/scripts/setup.sh" --no-demo
# The report's browser test drives Debian's Chromium; it fails (not skips) when the
# browser is missing unless FSCORE_REQUIRE_BROWSER=0.
if [[ ! -x /usr/bin/chromium ]]; then
  echo "test: installing Chromium for the report's browser test" >&2
  if [[ $(id -u) -eq 0 ]]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
export FSCORE_REQUIRE_BROWSER="${FSCORE_REQUIRE_BROWSER:-1}"
cd "$ROOT"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
# With no arguments (as CI runs it) the 'heavy' checks are left out: they take minutes each
# and repeat what lighter tests cover; `bash scripts/test.sh -m heavy` runs them.
if [[ $# -eq 0 ]]; then
  # (the slowest tests are listed at the end: CI has a 30-minute budget to keep)
  "$VENV/bin/python" -m pytest -m "not heavy" --durations=25
else
  "$VENV/bin/python" -m pytest "$@"
fi
# The wheel installed into a fresh environment scores a bio (a few minutes): on a full run
# (no pytest arguments, as CI runs it) unless FSCORE_SMOKE=0; FSCORE_SMOKE=1 forces it.
if [[ "${FSCORE_SMOKE:-$([[ $# -eq 0 ]] && echo 1 || echo 0)}" == "1" ]]; then
  bash "$ROOT/scripts/smoke_wheel.sh"
fi
