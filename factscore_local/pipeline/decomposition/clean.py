"""What a generation holds that is not a claim, taken out before the sentence split.

Answers from search-backed LMs and chat models carry citation markers ("Egypt[1].",
"[1][2]", "the 1950s[2018]", "[citation needed]"), footnote marks ("born in 1950^3",
"¹²"), URLs and markdown (list bullets and numbers, headings, bold and italics, links).
Left in, they end up inside atomic facts ("McAndrew played Irene Molloy [1][2].") and in
the verifier's prompt. ``clean_generation`` removes them under every abstention rule and
keeps a map from the cleaned text back to the generation as written, so that a fact's
sentence can be shown as the user wrote it (``original_span``).

Headings are dropped whole (a title is not a claim); list items keep their text without
the bullet; a link keeps its words; a bare URL goes entirely, with the parentheses that
held only it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Cleaned", "clean_generation"]

# Each kind of markup: a pattern of what is removed (or, for links and emphasis, of what
# is replaced by its group 1).
_CITATION = re.compile(
    r"[ \t]*(?:\[\s*\d{1,4}(?:\s*[-–,;]\s*\d{1,4})*\s*\])+"  # [1] [1][2] [1, 2] [3-5] [2018]
    r"|[ \t]*\[(?:citation|clarification|source|verification) needed\]",
    re.IGNORECASE,
)
_FOOTNOTE = re.compile(r"(?<=[\w.,;:)\"'])(?:\^\d+|\^\[\d+\]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|[†‡]+)")
_URL_IN_PARENS = re.compile(r"[ \t]*[(<]\s*(?:https?://|www\.)[^\s)>]+\s*[)>]")
_URL = re.compile(r"[ \t]*(?:https?://|www\.)[^\s)\]>]*[^\s)\]>.,;:!?'\"]")
_LINK = re.compile(r"\[([^\]\n]+)\]\((?:https?://|www\.|/|#)[^)\s]*\)")
_HEADING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+[^\n]*|=+|-{3,}|\*{3,}|_{3,})[ \t]*(?:\n|$)", re.M)
_BULLET = re.compile(r"^[ \t]*(?:[-*+•‣▪◦]|\d{1,3}[.)])(?:[ \t]+|$)", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1")
# A line with nothing a claim could be made of (a bullet alone, a lone marker).
_NO_WORD = re.compile(r"[^\W_]")


@dataclass
class Cleaned:
    """A generation without its markup: the text, what was removed (counted by kind), and
    for each character of ``text`` the index of the character it came from."""

    text: str
    original: str
    removed: dict[str, int] = field(default_factory=dict)
    origin: list[int] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.removed)

    def original_span(self, sentence: str, start: int = 0) -> tuple[str, int]:
        """The generation as written behind ``sentence`` (a piece of ``text`` found from
        ``start``), and where to look for the next one; the sentence itself when it is not
        a piece of ``text`` (the splitter's repairs join pieces with a space)."""
        at = self.text.find(sentence, start)
        if at < 0 or not sentence:
            return sentence, start
        end = at + len(sentence)
        first, last = self.origin[at], self.origin[end - 1]
        return self.original[first : last + 1], end


def _apply(text: str, origin: list[int], pattern: re.Pattern, keep_group: int | None):
    """text with every match of pattern replaced by its group keep_group (or removed),
    origin kept in step; and how many matches there were."""
    out: list[str] = []
    out_origin: list[int] = []
    last = 0
    count = 0
    for m in pattern.finditer(text):
        out.append(text[last : m.start()])
        out_origin.extend(origin[last : m.start()])
        if keep_group is not None:
            a, b = m.span(keep_group)
            out.append(text[a:b])
            out_origin.extend(origin[a:b])
        last = m.end()
        count += 1
    out.append(text[last:])
    out_origin.extend(origin[last:])
    return "".join(out), out_origin, count


def clean_generation(generation: str) -> Cleaned:
    """The generation without citation markers, footnote marks, URLs and markdown."""
    text, origin = generation, list(range(len(generation)))
    removed: dict[str, int] = {}
    steps = (
        ("links", _LINK, 1),
        ("urls", _URL_IN_PARENS, None),
        ("urls", _URL, None),
        ("citations", _CITATION, None),
        ("footnotes", _FOOTNOTE, None),
        ("headings", _HEADING, None),
        ("list markers", _BULLET, None),
        ("emphasis", _EMPHASIS, 2),
    )
    for name, pattern, group in steps:
        text, origin, count = _apply(text, origin, pattern, group)
        if count:
            removed[name] = removed.get(name, 0) + count
    # Lines left with no word (a bullet alone, a line that held only a URL) go, so that
    # the sentence split sees no empty claim; blank lines stay (paragraph breaks).
    lines, kept_text, kept_origin, at = text.split("\n"), [], [], 0
    for i, line in enumerate(lines):
        end = at + len(line)
        if _NO_WORD.search(line) or not line.strip():
            kept_text.append(line + ("\n" if i < len(lines) - 1 else ""))
            kept_origin.extend(origin[at : end + (1 if i < len(lines) - 1 else 0)])
        at = end + 1
    text = "".join(kept_text)
    return Cleaned(text, generation, removed, kept_origin)
