"""VeriScore's definitions (Song et al., 2024), without a model: the sliding window a claim
is extracted from, the parsing of extracted claims, and F1@K.

- Window: up to 3 sentences before the focused one, the focused sentence marked, up to 1
  after; the paragraph's first sentence goes first when the paragraph has more than 5
  sentences (and is not already in the window); a QA input's question goes first of all.
- F1@K per response: S supported claims out of |C|; P = S / |C|, R@K = min(S / K, 1),
  F1@K = 2PR / (P + R), and 0 when S = 0. K is the median number of claims per response
  within a domain (or given).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

SOS, EOS = "<SOS>", "<EOS>"
BEFORE, AFTER, LONG_PARAGRAPH = 3, 1, 5
NO_CLAIM = "No verifiable claim."


@dataclass(frozen=True)
class Window:
    paragraph: int
    index: int  # of the focused sentence within its paragraph
    sentence: str
    text: str  # the context with the focused sentence marked


def windows(paragraphs: list[list[str]], question: str | None = None) -> list[Window]:
    """One window per sentence; ``paragraphs``: each paragraph's sentences."""
    out = []
    for p, sentences in enumerate(paragraphs):
        for i, sentence in enumerate(sentences):
            start = max(0, i - BEFORE)
            parts = []
            if question:
                parts.append(f"Question: {question.strip()}")
            if len(sentences) > LONG_PARAGRAPH and start > 0:
                parts.append(sentences[0])
            parts += sentences[start:i]
            parts.append(f"{SOS}{sentence}{EOS}")
            parts += sentences[i + 1 : i + 1 + AFTER]
            out.append(Window(p, i, sentence, " ".join(parts)))
    return out


def paragraphs_of(text: str, split) -> list[list[str]]:
    """Paragraphs (split on blank lines or line breaks) cut into sentences by ``split``."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n|\n", text) if b.strip()]
    return [s for s in ([t for t in split(b) if t.strip()] for b in blocks) if s]


_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d{1,3}[.)])\s+")


def parse_claims(output: str) -> list[str]:
    """Claims from the extractor's output: one per bulleted line; none when it says there
    is no verifiable claim (or lists nothing)."""
    claims = []
    for line in output.splitlines():
        if NO_CLAIM.lower().rstrip(".") in line.lower():
            return []
        if _BULLET.match(line):
            claim = _BULLET.sub("", line).strip()
            if claim:
                claims.append(claim)
    return claims


_OPENING_PRONOUN = re.compile(r"^(he|she|they|his|her|their|him|them)\b", re.I)
_WORD = re.compile(r"[\w'-]+")


def opens_with_pronoun(claim: str) -> bool:
    """Whether a claim starts with a personal pronoun: its subject is not named, so it
    cannot be checked alone ("He moved to Paris.")."""
    return bool(_OPENING_PRONOUN.match(claim.strip()))


def _words(text: str) -> list[str]:
    return [w.lower().removesuffix("'s") for w in _WORD.findall(text.replace("’", "'"))]


def accept_rewrite(claim: str, rewrite: str, context: str) -> bool:
    """Whether a rewrite only names the claim's opening pronoun: it no longer opens with
    one, it keeps the rest of the claim's words (one may go, e.g. a verb's number), it
    adds at most a name's length (5 words for the pronoun), and every word it adds is in
    the context (the name comes from the passage, not the model's memory)."""
    rewrite = rewrite.strip()
    if not rewrite or "\n" in rewrite or opens_with_pronoun(rewrite):
        return False
    old, new = _words(claim), _words(rewrite)
    if len(new) > len(old) + 4 or len([w for w in old[1:] if w not in new]) > 1:
        return False
    known = set(_words(context))
    return all(w in known for w in new if w not in old)


def unique(claims: list[str]) -> list[str]:
    """Claims in first-seen order, repeated ones dropped (case and spacing ignored)."""
    seen, out = set(), []
    for claim in claims:
        key = " ".join(claim.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(claim)
    return out


def f1_at_k(supported: int, n_claims: int, k: float) -> dict:
    """P, R@K and F1@K of one response."""
    if k <= 0:
        raise ValueError("K must be positive")
    precision = supported / n_claims if n_claims else 0.0
    recall = min(supported / k, 1.0)
    f1 = 0.0 if supported == 0 else 2 * precision * recall / (precision + recall)
    return {"precision": precision, "recall_at_k": recall, "f1_at_k": f1}


def median_k(n_claims_by_domain: dict[str, list[int]]) -> dict[str, float]:
    """K per domain: the median number of claims per response (at least 1)."""
    return {d: max(1.0, float(statistics.median(ns))) for d, ns in n_claims_by_domain.items() if ns}
