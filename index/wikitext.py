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

# Marks the start of a list item inside a section buffer; resolved when the section is flushed.
_ITEM = "\x00"

_MEDIA_LINK = re.compile(r"\s*:?\s*(?:file|image|media)\s*:", re.IGNORECASE)
_CATEGORY_LINK = re.compile(r"\s*category\s*:", re.IGNORECASE)
# Interlanguage links: "fr:", "zh-yue:", "simple:" ... (only without a leading colon).
_INTERLANG_LINK = re.compile(r"\s*(?:[a-z]{2,3}(?:-[a-z]+)*|simple)\s*:")
# Short interwiki prefixes that are visible links, not interlanguage links.
_VISIBLE_INTERWIKI: frozenset[str] = frozenset({"mw", "voy", "doi", "wmf", "arxiv"})

_APOSTROPHES = re.compile(r"'{2,}")  # bold/italic markup (style tags are not parsed, see below)
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
_TEMPLATE_NAME = re.compile(r"\{\{\s*([^{}|<>\[\]\n]+?)\s*(?:\||\}\})")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HAS_WORD = re.compile(r"\w")
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
# Section assembly (shared by the parser walk and the regex fallback)
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


# --------------------------------------------------------------------------------------------
# Fallback: crude regex strip, used only if the parser walk fails
# --------------------------------------------------------------------------------------------

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
