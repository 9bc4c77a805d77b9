"""Turn the wikitext of one Wikipedia article into FActScore-style plain-text sections.

FActScore's knowledge source (KILT-style English Wikipedia) stores each article as a list of
single-line sections: the lead is ``"{title} {text}"`` and every later section is
``"{Heading}. {text}"``, where a sub-section's heading is the chain of its ancestors' headings
joined by ``".:"``.  This module reproduces that shape from raw dump wikitext.

The main path walks mwparserfromhell's node tree once (templates, refs, tables, files, ... are
skipped as whole subtrees, which is both correct and fast); a regex-based crude stripper is the
fallback for the rare input the parser cannot handle, so callers never see an exception.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import mwparserfromhell
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

from factscore_local.index.wikitext_fallback import _crude_sections
from factscore_local.index.wikitext_sections import (
    _APOSTROPHES,
    _COMMENT,
    _ITEM,
    _MAGIC_WORD,
    _WS,
    _SectionBuilder,
    _tidy,
)

__all__ = ["DISAMBIGUATION_TEMPLATES", "CleanPage", "clean_page", "is_disambiguation"]

# Template names (normalised: lower case, "_" -> " ", single spaces) that mark a disambiguation
# page.  Set-index / surname / given-name / ship-index pages are deliberately NOT included: they
# are real list articles in Wikipedia's sense, and FActScore keeps them as entities.
DISAMBIGUATION_TEMPLATES: frozenset[str] = frozenset(
    {
        "disambiguation",
        "disambiguation page",
        "disambig",
        "disamb",
        "dab",
        "dis",
        "hndis",
        "hndisambig",
        "geodis",
        "geodisambig",
        "numberdis",
        "human name disambiguation",
        "place name disambiguation",
        "letter disambiguation",
        "letter-number combination disambiguation",
        "number disambiguation",
        "mil-unit-dis",
        "hospital disambiguation",
        "school disambiguation",
        "road disambiguation",
        "airport disambiguation",
        "church disambiguation",
        "call sign disambiguation",
        "genus disambiguation",
        "species latin name disambiguation",
        "chinese title disambiguation",
        "disambiguation cleanup",
        "disambig-cleanup",
    }
)

# Tags whose whole content is invisible or non-prose in the rendered article.
_DROP_TAGS: frozenset[str] = frozenset(
    {
        "ref",
        "references",
        "table",
        "gallery",
        "math",
        "chem",
        "ce",
        "timeline",
        "imagemap",
        "score",
        "graph",
        "hiero",
        "mapframe",
        "maplink",
        "templatedata",
        "templatestyles",
        "inputbox",
        "categorytree",
        "includeonly",
        "indicator",
        "section",
        "style",
        "script",
    }
)
# Tags that render as a line break / paragraph break.
_BREAK_TAGS: frozenset[str] = frozenset({"br", "hr", "p"})
# Block elements: their content starts and ends its own line (so it never extends a list item).
_BLOCK_TAGS: frozenset[str] = frozenset(
    {"div", "blockquote", "center", "poem", "pre", "ul", "ol", "dl", "syntaxhighlight", "source"}
)
# Wiki list markup is parsed into these tags (with wiki_markup "*", "#", ";" or ":").
_LIST_TAGS: frozenset[str] = frozenset({"li", "dt", "dd"})


_MEDIA_LINK = re.compile(r"\s*:?\s*(?:file|image|media)\s*:", re.IGNORECASE)
_CATEGORY_LINK = re.compile(r"\s*category\s*:", re.IGNORECASE)
# Interlanguage links: "fr:", "zh-yue:", "simple:" ... (only without a leading colon).
_INTERLANG_LINK = re.compile(r"\s*(?:[a-z]{2,3}(?:-[a-z]+)*|simple)\s*:")
# Short interwiki prefixes that are visible links, not interlanguage links.
_VISIBLE_INTERWIKI: frozenset[str] = frozenset({"mw", "voy", "doi", "wmf", "arxiv"})

_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|<>\[\]\n]+?)\s*(?:\||\}\})")
_PIPE_TRICK = re.compile(r"\s*\([^()]*\)\s*$")

# Pre-parse stripping.  Most of an article's bytes are citations; building mwparserfromhell
# node objects for them dominates the run time, yet all of it is dropped.  So comments,
# <ref>s and balanced top-level templates are cut out with C-speed scans before parsing.
# A <ref> body may hold any tag except another <ref> (unrolled loop, no backtracking blow-up).
_REF = re.compile(
    r"<ref\b[^<>]*/>|<ref\b[^<>]*>[^<]*(?:<(?!/?ref\b)[^<]*)*</ref\s*>", re.IGNORECASE
)
# Brace tokens for the template scan.  Literal-content tags are matched whole so that braces
# inside <math>/<nowiki>/<pre>... are never counted; "\n|}" (a table end) is matched so that
# "|}}}" pairs as table-end + template-end, as the parser would.
_BRACE_SCAN = re.compile(
    r"<(nowiki|pre|math|syntaxhighlight|source|code|chem|ce|score|timeline|hiero|graph"
    r"|templatedata)\b[^<>]*?(?:/>|>.*?</\1\s*>)|\{\{|\}\}|\n\|\}",
    re.IGNORECASE | re.DOTALL,
)


@dataclass
class CleanPage:
    """Plain-text sections of one article (never empty strings) and its disambiguation flag."""

    sections: list[str] = field(default_factory=list)
    is_disambiguation: bool = False


def _normalise_template_name(name: str) -> str:
    name = _WS.sub(" ", name.replace("_", " ")).strip().lower()
    if name.startswith("template:"):
        name = name[len("template:") :].strip()
    return name


def is_disambiguation(title: str, wikitext: str) -> bool:
    """True for disambiguation pages: by title suffix or by a disambiguation template."""
    if title.strip().lower().endswith("(disambiguation)"):
        return True
    try:
        # A regex scan is far cheaper than a parse and good enough for template names; comments
        # are removed first so that a commented-out {{disambiguation}} does not count.
        text = _COMMENT.sub("", wikitext) if "<!--" in wikitext else wikitext
        for match in _TEMPLATE_NAME.finditer(text):
            if _normalise_template_name(match.group(1)) in DISAMBIGUATION_TEMPLATES:
                return True
    except Exception:  # noqa: BLE001 - must never raise on odd input
        return False
    return False


def clean_page(title: str, wikitext: str) -> CleanPage:
    """Convert one article's wikitext into FActScore-style sections; never raises."""
    title = _WS.sub(" ", title or "").strip()
    # NUL is our list-item marker; it has no business in wikitext anyway.
    wikitext = (wikitext or "").replace(_ITEM, "")
    disamb = is_disambiguation(title, wikitext)
    try:
        sections = _Walker(title).run(wikitext)
    except Exception:  # noqa: BLE001 - parser or recursion trouble: degrade, don't fail
        try:
            sections = _crude_sections(title, wikitext)
        except Exception:  # noqa: BLE001
            sections = [title] if title else []
    return CleanPage(sections=sections, is_disambiguation=disamb)


# --------------------------------------------------------------------------------------------
# Pre-parse strip (section assembly is in wikitext_sections, the fallback in wikitext_fallback)
# --------------------------------------------------------------------------------------------


def _prestrip(wikitext: str) -> str:
    """Cut comments, refs and balanced top-level templates out before parsing (speed only)."""
    if "<!--" in wikitext:
        wikitext = _COMMENT.sub("", wikitext)
    wikitext = _REF.sub("", wikitext)
    if "{{" not in wikitext or "{{{" in wikitext:
        return wikitext  # template parameters ({{{1}}}) make brace pairing ambiguous
    opens: list[int] = []
    spans: list[tuple[int, int]] = []
    for match in _BRACE_SCAN.finditer(wikitext):
        token = match.group(0)
        if token == "{{":
            opens.append(match.start())
        elif token == "}}" and opens:
            start = opens.pop()
            if not opens:
                spans.append((start, match.end()))
        # Stray "}}" and literal-content tags are left for the parser.
    if not spans:
        return wikitext
    # Unclosed "{{" never produce spans (their inner templates stay nested), so whatever the
    # scan could not pair is handled by the parser exactly as before.
    pieces: list[str] = []
    prev = 0
    for start, end in spans:
        pieces.append(wikitext[prev:start])
        prev = end
    pieces.append(wikitext[prev:])
    return "".join(pieces)


# --------------------------------------------------------------------------------------------
# Main path: one walk over mwparserfromhell's node tree
# --------------------------------------------------------------------------------------------


class _Walker:
    def __init__(self, title: str) -> None:
        self._title = title

    def run(self, wikitext: str) -> list[str]:
        # Style tags ('' / ''') are left as text: parsing them is slow and brittle on unbalanced
        # quotes, and stripping apostrophe runs from text nodes gives the same result.
        code = mwparserfromhell.parse(_prestrip(wikitext), skip_style_tags=True)
        out = _SectionBuilder(self._title)
        self._walk(code, out)
        out.flush()
        return out.sections

    def _inline(self, code: Wikicode) -> str:
        """Plain text of a nested fragment (link text, heading, ...), on one line."""
        sub = _SectionBuilder("")
        self._walk(code, sub)
        return _WS.sub(" ", "".join(sub.buf).replace(_ITEM, " ")).strip()

    def _walk(self, code: Wikicode, out: _SectionBuilder) -> None:
        for node in code.nodes:
            if isinstance(node, Text):
                out.write(_clean_text(node.value))
            elif isinstance(node, Wikilink):
                out.write(self._link(node))
            elif isinstance(node, Template | Comment | Argument):
                continue  # templates render nothing we keep; see module docstring
            elif isinstance(node, Tag):
                self._tag(node, out)
            elif isinstance(node, ExternalLink):
                if node.brackets:
                    # "[url Title]" shows the title; "[url]" shows a footnote-like number.
                    if node.title is not None:
                        out.write(self._inline(node.title))
                else:
                    out.write(str(node.url))
            elif isinstance(node, HTMLEntity):
                try:
                    out.write(node.normalize())
                except ValueError:
                    out.write(html.unescape(str(node)))
            elif isinstance(node, Heading):
                out.heading(node.level, _tidy(self._inline(node.title)))
                out.write("\n")
            # Anything else (unknown node types) renders nothing.

    def _link(self, node: Wikilink) -> str:
        target = str(node.title)
        if _MEDIA_LINK.match(target):
            return ""  # images and their captions (nested links included)
        if target.lstrip()[:1] != ":":
            if _CATEGORY_LINK.match(target):
                return ""
            lang = _INTERLANG_LINK.match(target)
            if lang and lang.group(0).strip(" :") not in _VISIBLE_INTERWIKI:
                return ""
        if node.text is not None:
            text = self._inline(node.text)
            if text or str(node.text).strip():
                return text
            # Pipe trick "[[Paris (band)|]]" shows "Paris".
            return _PIPE_TRICK.sub("", _link_target_text(target))
        return _link_target_text(target)

    def _tag(self, node: Tag, out: _SectionBuilder) -> None:
        name = str(node.tag).strip().lower()
        if name in _DROP_TAGS or node.wiki_markup == "{|":
            return
        if name in _LIST_TAGS:
            if node.wiki_markup:
                # Wiki bullets are bare markers; the item's text follows on the same line.  A
                # marker at line start opens an item, one mid-line (";term:def") joins with ":".
                out.write(_ITEM)
            elif node.contents is not None:
                # HTML <li>/<dt>/<dd> carry their text inside and end at the closing tag.
                out.write("\n" + _ITEM)
                self._walk(node.contents, out)
                out.write("\n")
            return
        if name in _BREAK_TAGS:
            out.write("\n" if name != "br" else " ")
            if name == "p" and node.contents is not None:
                self._walk(node.contents, out)
                out.write("\n")
            return
        if name in _BLOCK_TAGS and node.contents is not None:
            out.write("\n")
            self._walk(node.contents, out)
            out.write("\n")
            return
        if node.contents is not None:
            # Formatting / container tags (<b>, <span>, <div>, <nowiki>, <pre>, ...): keep text.
            self._walk(node.contents, out)


def _clean_text(value: str) -> str:
    if "''" in value:
        value = _APOSTROPHES.sub("", value)
    if "__" in value:
        value = _MAGIC_WORD.sub("", value)
    return value


def _link_target_text(target: str) -> str:
    # Targets may hold entities ("[[OS&nbsp;X]]"); the rendered link text has them decoded.
    return _WS.sub(" ", html.unescape(target).strip().lstrip(":")).strip()
