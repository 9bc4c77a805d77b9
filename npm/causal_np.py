"""A stand-in for NP when no masked LM is at hand: the causal LM's probability of the fact's
tokens given the passages.

NPM asks how much of a masked token's retrieval mass falls on passage tokens with the same
id. A causal LM cannot see both sides of a mask, so this stand-in reads each content token
of the fact with its left context only: the passages, a short lead-in, and the fact's
earlier tokens. Per token p = P(token | passages, fact so far); the score is the mean of p
over the fact's content tokens (stopwords and punctuation skipped, as NPM skips them),
thresholded like NP. A token the passages make likely (a name, date or place they contain)
scores high; one they do not support scores low.

Contexts are the same for every fact of a page that retrieves the same passages, and the LM
reuses the KV cache of a shared prefix, so the passages are read once per page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factscore_local.index.chunking import strip_markers
from factscore_local.npm.stopwords import stopword_forms

LEAD_IN = "A statement that the text above supports:"


def causal_context(passages: Sequence[str]) -> str:
    """The passages as plain text, then the lead-in the fact continues."""
    body = "\n\n".join(strip_markers(p).strip() for p in passages if p.strip())
    return f"{body}\n\n{LEAD_IN}" if body else LEAD_IN


def skip_ids(lm) -> set[int]:
    """Ids of stopwords and punctuation that the LM's tokenizer keeps as one token."""
    ids: set[int] = set()
    for form in stopword_forms(case_variants=True):
        tokens = lm.tokenize(form)
        if len(tokens) == 1:
            ids.add(tokens[0])
    return ids


def content_probability(
    ids: Sequence[int], logprobs: np.ndarray, skip: set[int], no_content_value: float = 0.0
) -> float:
    """The mean probability of the tokens that are not in ``skip``."""
    content = [j for j, t in enumerate(ids) if t not in skip]
    if not content:
        return float(no_content_value)
    return float(np.mean(np.exp(np.asarray(logprobs)[content])))


class CausalNPScorer:
    """NP-like probability of atomic facts from a causal LM (an ``LM`` that gives prompt
    log-probabilities)."""

    scores_batches = True  # probabilities() of many pairs at once

    def __init__(self, lm, no_content_value: float = 0.0) -> None:
        self.lm = lm
        self.no_content_value = float(no_content_value)
        self.skip_ids = skip_ids(lm)

    def probabilities(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[float]:
        """items: (atom, passages) -> the mean content-token probability of each atom."""
        pairs = []
        for atom, passages in items:
            context = self.lm.prompt_ids(causal_context(passages))
            pairs.append((context, self.lm.tokenize(" " + atom.strip())))
        todo = [i for i, (_, fact) in enumerate(pairs) if set(fact) - self.skip_ids]
        logprobs = self.lm.token_logprobs([pairs[i] for i in todo]) if todo else []
        out = [self.no_content_value] * len(items)
        for i, lp in zip(todo, logprobs, strict=True):
            out[i] = content_probability(pairs[i][1], lp, self.skip_ids, self.no_content_value)
        return out

    def probability(self, atom: str, passages: Sequence[str]) -> float:
        return self.probabilities([(atom, passages)])[0]
