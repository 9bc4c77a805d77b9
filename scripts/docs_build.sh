#!/usr/bin/env bash
# Builds the documentation site into site/ in strict mode (a warning fails the build),
# offline. The site reads from a file too: open site/index.html (navigation and search
# work on file://, no server). Extra arguments go to mkdocs (e.g. --site-dir DIR).
#   --update (first argument): regenerate docs/benchmarks/, the guides' generated blocks and
#   the README's tables from scripts/results/ (python -m docs.generate) before building.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
cd "$ROOT"
if [[ "${1:-}" == "--update" ]]; then
  shift
  "$VENV/bin/python" -m docs.generate >/dev/null
fi
# mkdocs-material prints a banner about MkDocs 2.0 on every build; it is not a warning.
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict "$@"
