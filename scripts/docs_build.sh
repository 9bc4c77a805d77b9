#!/usr/bin/env bash
# Builds the documentation site into site/ in strict mode (a warning fails the build),
# offline. The site reads from a file too: open site/index.html (navigation and search
# work on file://, no server). Extra arguments go to mkdocs (e.g. --site-dir DIR).
#   --update (first argument): regenerate docs/benchmarks/ from scripts/results/ and the
#   README's headline table from it before building.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${FSCORE_VENV:-$ROOT/.venv}"
cd "$ROOT"
if [[ "${1:-}" == "--update" ]]; then
  shift
  "$VENV/bin/python" -m scripts.docs >/dev/null
  "$VENV/bin/python" -m scripts.readme_headline
fi
# mkdocs-material prints a banner about MkDocs 2.0 on every build; it is not a warning.
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict "$@"
