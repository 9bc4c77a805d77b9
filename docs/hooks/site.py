"""MkDocs hooks: the README's generated blocks (headline, contradictions, raw text, run time), read
inside the site.

``docs/benchmarks/headline.md`` is generated for the README, so its links are relative to
the repository root (``docs/benchmarks/x.md``); inside the site the page sits next to them.
"""

from __future__ import annotations

from typing import Any


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Rewrites the README-relative links of the generated README tables."""
    if page.file.src_uri in ("benchmarks/headline.md", "benchmarks/contradictions.md",
                             "benchmarks/raw-text.md", "benchmarks/run-time.md"):  # fmt: skip
        return markdown.replace("](docs/benchmarks/", "](").replace("](docs/", "](../")
    return markdown
