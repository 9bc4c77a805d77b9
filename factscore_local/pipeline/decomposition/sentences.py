"""Paragraph and sentence splitting for atomic-fact decomposition.

FActScore splits each paragraph with NLTK Punkt and then repairs the result with a small
set of rules (``fix_sentence_splitter``). Punkt data cannot be fetched offline, so we use
pysbd (rule based, ships with its rules) as the base splitter and re-implement the same
repair rules on top. Sentence boundaries therefore differ from the reference now and then
(pysbd and Punkt disagree on some abbreviations), but the repair logic is the reference's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pysbd

__all__ = ["Sentence", "detect_initials", "repair_sentences", "split_sentences", "split_paragraphs"]

# Two capital initials such as "J. K." or "J.K." (the reference's pattern).
_INITIALS_RE = re.compile(r"[A-Z]\. ?[A-Z]\.")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a generation, with the paragraph it came from."""

    text: str
    paragraph: int
    # True for the first sentence of every paragraph, including paragraph 0.
    is_paragraph_start: bool


@lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    # clean=False keeps the text as written, so sentences stay substrings of the input.
    return pysbd.Segmenter(language="en", clean=False)


def split_paragraphs(generation: str) -> list[str]:
    """Split on single newlines, strip, and drop empty paragraphs (as the reference does)."""
    return [p.strip() for p in generation.split("\n") if p.strip()]


def detect_initials(text: str) -> list[str]:
    """All initials pairs like "J. K." in ``text``, in order of appearance."""
    return _INITIALS_RE.findall(text)


def _merge_split_initials(sentences: list[str], initials: list[str]) -> list[str]:
    """Re-join a sentence pair that the splitter cut inside an initials pair.

    For each initials pair that no sentence contains whole, the first adjacent pair where
    the left sentence ends with the first letter + "." and the right one starts with the
    second letter + "." is merged (only that first match).
    """
    out = list(sentences)
    for initial in initials:
        if any(initial in s for s in out):
            continue
        letters = [part.strip() for part in initial.split(".") if part.strip()]
        first, second = letters[0], letters[1]
        for i in range(len(out) - 1):
            if out[i].endswith(first + ".") and out[i + 1].startswith(second + "."):
                out[i : i + 2] = [out[i] + " " + out[i + 1]]
                break
    return out


def _merge_fragments(sentences: list[str]) -> list[str]:
    """Attach one-word and lowercase-initial pieces to their neighbour.

    Mirrors the reference's second pass, quirks included: a one-word piece at index 0 is
    kept and the next piece is glued onto it; a one-word piece later on is appended to the
    previous sentence but (because of a typo in the reference) does not clear the "glue
    the next one" flag, so after a leading one-word piece a run of one-word pieces plus the
    following sentence all end up in the first sentence.
    """
    out: list[str] = []
    glue_next = False
    for idx, sent in enumerate(sentences):
        if len(sent.split()) <= 1 and idx == 0:
            glue_next = True
            out.append(sent)
        elif len(sent.split()) <= 1:
            out[-1] += " " + sent
        elif (idx > 0 and sent[0].isalpha() and not sent[0].isupper()) or glue_next:
            # A lowercase start continues the previous sentence; so does the piece after
            # a leading one-word piece (glue_next is only ever set at idx 0).
            out[-1] += " " + sent
            glue_next = False
        else:
            out.append(sent)
    return out


def repair_sentences(sentences: list[str], initials: list[str]) -> list[str]:
    """The reference's ``fix_sentence_splitter``: initials merge, then fragment merge."""
    return _merge_fragments(_merge_split_initials(sentences, initials))


def _split_paragraph(paragraph: str) -> list[str]:
    # pysbd cuts an ellipsis into pieces ("Love is..." -> "Love is..", ". "); a piece with
    # no letter or digit goes back onto the previous one as written, so the repairs below
    # do not put a space inside it ("Love is.. .").
    raw: list[str] = []
    for piece in _segmenter().segment(paragraph):
        if raw and not any(ch.isalnum() for ch in piece):
            raw[-1] += piece
        else:
            raw.append(piece)
    stripped = [s.strip() for s in raw]
    return repair_sentences([s for s in stripped if s], detect_initials(paragraph))


# A "sentence" longer than this (an unpunctuated wall of text) is cut into pieces of this
# many words, so that its decomposition prompt fits the LM's context. The longest sentence
# of the labeled dev outputs has 126 words.
MAX_SENTENCE_WORDS = 150


def _pieces(text: str, max_words: int) -> list[str]:
    words = text.split()
    if len(words) <= max_words:
        return [text]
    return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]


def split_sentences(generation: str, max_words: int = MAX_SENTENCE_WORDS) -> list[Sentence]:
    """Split a generation into sentences, keeping track of paragraphs."""
    result: list[Sentence] = []
    for p_idx, paragraph in enumerate(split_paragraphs(generation)):
        texts = [p for t in _split_paragraph(paragraph) for p in _pieces(t, max_words)]
        for s_idx, text in enumerate(texts):
            result.append(Sentence(text=text, paragraph=p_idx, is_paragraph_start=s_idx == 0))
    return result
