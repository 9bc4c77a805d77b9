"""A griffe extension: the project's docstrings, read as the API reference renders them.

The docstrings are Google style with a few habits of Sphinx, which griffe's Markdown
rendering would show verbatim; they are rewritten as each object is loaded:

- an ``Example:`` heading becomes ``Examples:`` (griffe reads only the plural as doctest
  examples; the singular becomes an admonition whose ``>>>`` lines render as quotes);
- a Sphinx role (``:func:`evaluate```) becomes a code span;
- a paragraph ending in ``::`` (reST's literal-block marker) ends in ``:``.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

EXAMPLE = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj):`~?([^`]+)`")
LITERAL = re.compile(r"::\n(?=\s*\n)")


def markdown(text: str) -> str:
    """A docstring's text with the Sphinx habits above rewritten."""
    text = EXAMPLE.sub(r"\1Examples:", text)
    text = ROLE.sub(r"`\1`", text)
    return LITERAL.sub(":\n", text)


class MarkdownDocstrings(griffe.Extension):
    """Rewrites every docstring as it is loaded (see the module's docstring)."""

    def on_instance(self, *, obj: griffe.Object, **_: Any) -> None:
        """Rewrites ``obj``'s docstring."""
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
