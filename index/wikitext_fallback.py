"""Crude regex-based wikitext stripper: ``wikitext.clean_page``'s fallback if the parser fails.

Used only for the rare input mwparserfromhell cannot handle, so that callers never see an
exception; it yields the same section shape as the main parser walk.
"""

from __future__ import annotations

import html
import re

from factscore_local.index.wikitext_sections import (
    _APOSTROPHES,
    _COMMENT,
    _ITEM,
    _MAGIC_WORD,
    _SectionBuilder,
    _tidy,
)

_CR_REF = re.compile(r"<ref[^>/]*/>|<ref[^>]*>.*?(?:</ref\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_CR_DROP_BLOCK = re.compile(
    r"<(gallery|math|table|timeline|imagemap|score|chem|ce)\b.*?(?:</\1\s*>|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_CR_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
# Captions may hold single-bracket text ("[above]"); nested [[links]] are resolved first.
_CR_MEDIA = re.compile(
    r"\[\[\s*:?\s*(?:file|image|media|category)\s*:(?:[^\[\]]|\[[^\[\]]*\])*\]\]", re.IGNORECASE
)
_CR_INTERLANG = re.compile(r"\[\[[a-z]{2,3}(?:-[a-z]+)*:[^\[\]]*\]\]")
_CR_LINK = re.compile(r"\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_CR_EXT_TITLED = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]+\s+([^\]]*)\]")
_CR_EXT_BARE = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]+\]")
_CR_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_CR_TAG = re.compile(r"</?[a-zA-Z][^<>]*>")
_CR_HEADING = re.compile(r"^(={1,6})\s*(.+?)\s*\1\s*$")
_CR_LIST = re.compile(r"^[*#;:]+\s*")


def _repeat_sub(pattern: re.Pattern[str], repl: str, text: str, limit: int = 50) -> str:
    # Innermost-first removal handles nesting without a real parser.
    for _ in range(limit):
        new = pattern.sub(repl, text)
        if new == text:
            break
        text = new
    return text


def _crude_inline(text: str) -> str:
    text = _COMMENT.sub("", text)
    text = _CR_REF.sub("", text)
    text = _CR_DROP_BLOCK.sub("", text)
    text = _repeat_sub(_CR_TEMPLATE, "", text)
    # Links innermost first, dropping file/category/interlanguage links at each round, so a
    # file whose caption holds links goes away whole.
    for _ in range(20):
        new = _CR_MEDIA.sub("", text)
        new = _CR_INTERLANG.sub("", new)
        new = _CR_LINK.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(1), new)
        if new == text:
            break
        text = new
    text = _CR_EXT_TITLED.sub(r"\1", text)
    text = _CR_EXT_BARE.sub("", text)
    text = _CR_BR.sub(" ", text)
    text = _CR_TAG.sub("", text)
    text = _MAGIC_WORD.sub("", text)
    text = _APOSTROPHES.sub("", text)
    return html.unescape(text)


def _crude_sections(title: str, wikitext: str) -> list[str]:
    out = _SectionBuilder(title)
    # Strip multi-line constructs on the whole text first, then handle headings line by line.
    text = _crude_inline(wikitext)
    table_depth = 0  # tables are dropped line-wise: cells may contain any character
    for line in text.split("\n"):
        stripped = line.lstrip(" \t:")
        if stripped.startswith("{|"):
            table_depth += 1
            continue
        if table_depth:
            if stripped.startswith("|}"):
                table_depth -= 1
            continue
        heading = _CR_HEADING.match(line)
        if heading:
            out.heading(len(heading.group(1)), _tidy(heading.group(2)))
            continue
        marker = _CR_LIST.match(line)
        if marker:
            out.write("\n" + _ITEM + line[marker.end() :] + "\n")
        else:
            out.write(line + "\n")
    out.flush()
    return out.sections
