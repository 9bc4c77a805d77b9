"""MkDocs hook: the command-line reference page, generated from the ``fscore`` commands
at every build (``docs/generate/cli_reference.py``), so it shows the code's options, help and
defaults as they are now."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]  # the repository: docs.generate imports from it
PAGE = "reference/cli.md"
MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Puts the generated reference where the CLI page holds its marker."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"docs/{PAGE} lost its {MARKER} marker")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from docs.generate.cli_reference import fscore_reference

    return markdown.replace(MARKER, fscore_reference())
