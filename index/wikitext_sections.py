"""Section assembly shared by ``wikitext``'s parser walk and its regex fallback.

Holds the list-item marker, the markup regexes both paths need, the punctuation/whitespace
tidy-up, and ``_SectionBuilder``, which collects text per section and names sections with
FActScore's ``".:"``-joined heading chain.
"""

from __future__ import annotations

import re

# Marks the start of a list item inside a section buffer; resolved when the section is flushed.
_ITEM = "\x00"
_APOSTROPHES = re.compile(r"'{2,}")  # bold/italic (style tags: see wikitext._Walker)
_MAGIC_WORD = re.compile(r"__[A-Z]+__")
_WS = re.compile(r"\s+")
# Markup debris that must never reach the output, whatever the input looked like.
_DEBRIS = re.compile(r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}|<!--|-->|'{2,}|</?ref\b[^<>]*>", re.I)
_PAREN_LEAD = re.compile(r"\(\s*(?:[;,]\s*)+")  # "( ; , born 1950)" -> "(born 1950)"
_PAREN_TRAIL = re.compile(r"\s*[;,]\s*\)")  # "(born 1950; )" -> "(born 1950)"
_DUP_COMMA = re.compile(r",(?:\s*,)+")  # "such as {{IPA|a}}, {{IPA|b}}, or" -> "such as, or"
# "{{As of|2011}}, the ..." at a sentence start leaves an orphan comma: "X. , the" -> "X. the".
# A space is required after the stop so that "e.g., the" is left alone.
_ORPHAN_COMMA = re.compile(r"(^|[.!?]\s)\s*[,;]+(?=\s|$)")
_PAREN_EMPTY = re.compile(r"\(\s*\)")
_PAREN_INNER_WS = re.compile(r"\(\s+|\s+\)")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?])(?=\s|$)")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HAS_WORD = re.compile(r"\w")


def _tidy(text: str) -> str:
    """Collapse whitespace and repair punctuation left behind by removed markup."""
    text = _DEBRIS.sub("", text)
    text = _WS.sub(" ", text)
    if "(" in text:
        text = _PAREN_LEAD.sub("(", text)
        text = _PAREN_TRAIL.sub(")", text)
        text = _PAREN_EMPTY.sub("", text)
        text = _PAREN_INNER_WS.sub(lambda m: m.group(0).strip(), text)
    if ",," in text or ", ," in text:
        text = _DUP_COMMA.sub(",", text)
    text = _ORPHAN_COMMA.sub(r"\1", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    return _WS.sub(" ", text).strip()


def _render_body(buffer: str) -> str:
    """Turn a section buffer (newlines + list-item markers) into one line of text."""
    parts: list[str] = []
    for line in buffer.split("\n"):
        # Lines (or list items) left without any word, e.g. "." after a removed template, are
        # noise; this also drops blank lines.
        if not _HAS_WORD.search(line):
            continue
        line = line.strip()
        if line[0] == _ITEM:
            # Nested bullets ("**", "#:") collapse into one item marker.
            parts.append("- " + line.lstrip(_ITEM + " \t"))
        else:
            parts.append(line)
    # ";term:definition" leaves a second marker mid-line; render it as "term: definition".
    return _tidy(" ".join(parts).replace(_ITEM, ": "))


class _SectionBuilder:
    """Collects text per section and tracks the heading chain for ``.:``-joined names."""

    def __init__(self, title: str) -> None:
        self.sections: list[str] = []
        self._title = title
        self._stack: list[tuple[int, str]] = []  # (heading level, cleaned heading)
        self._heading: str | None = None  # None while in the lead
        self.buf: list[str] = []

    def write(self, text: str) -> None:
        self.buf.append(text)

    def heading(self, level: int, text: str) -> None:
        self.flush()
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        # Headings that clean to nothing (e.g. only an {{anchor}}) are left out of the chain.
        self._heading = ".:".join(h for _, h in self._stack if h)

    def flush(self) -> None:
        body = _render_body("".join(self.buf))
        self.buf = []
        if self._heading is None:
            head = self._title  # lead: "{title} {text}"
        else:
            head = self._heading + "." if self._heading else ""  # "{Heading}. {text}"
        section = f"{head} {body}".strip() if body else head
        if section:
            self.sections.append(section)
