"""Facts that are not statements: a small LM's decomposition sometimes stops mid-word
("Andre Ag." from "Andre Agassi is a retired tennis player") or returns a phrase with no
verb. Such a fragment cannot be true or false, so it is dropped before verification (a
fragment must never count as supported).

- **cut word**: the fact ends in a capitalised word that is not a word of its sentence
  but the start of a capitalised one at least ``CUT_MIN_MISSING`` characters longer;
- **no verb**: spaCy's tagger finds no verb or auxiliary in the fact, nor any word that it
  tags as one in the fact's sentence, nor in the fact with its leading name replaced by
  "It" (the small tagger mis-reads short facts: "Haddish acts.");
- **loop**: the fact says a phrase of two or more words twice in a row and its sentence
  does not ("... in the 1990s in the 1990s."): greedy decoding caught in a loop, often
  after words the sentence never wrote, so the fact is no claim of the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# "Japan" for "Japanese" is a word of its own; "Ag" for "Agassi" is not.
CUT_MIN_MISSING = 4
VERB_TAGS = {"VERB", "AUX"}
# A phrase of 2 to 8 words followed at once by itself (punctuation between allowed).
_REPEATED_PHRASE = re.compile(r"\b((?:\w+\W+){1,7}?\w+)\W+\1\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def load_tagger() -> Any:
    """spaCy's part-of-speech tagger (the decomposition's model, tagging components only)."""
    import spacy

    from factscore_local.pipeline.decomposition.fact_postprocess import SPACY_MODEL

    return spacy.load(SPACY_MODEL, exclude=["ner", "parser", "lemmatizer"])


def cut_word(fact: str, sentence: str) -> bool:
    """The fact ends in a capitalised word that its sentence does not hold but starts a
    longer capitalised word of it (a name cut short: "Ag" of "Agassi")."""
    words = WORD_RE.findall(fact.rstrip(" .!?\"')"))
    if not words or not words[-1][0].isupper():
        return False
    last = words[-1]
    names = set(WORD_RE.findall(sentence))
    return last not in names and any(
        w[0].isupper() and w.startswith(last) and len(w) >= len(last) + CUT_MIN_MISSING
        for w in names
    )


def looping(fact: str, sentence: str) -> bool:
    """The fact repeats a phrase of two or more words back to back; its sentence does not."""
    return bool(_REPEATED_PHRASE.search(fact)) and not _REPEATED_PHRASE.search(sentence)


def _has_verb(doc, verbs: set[str]) -> bool:
    return any(t.pos_ in VERB_TAGS or t.text.lower() in verbs for t in doc)


def _subject_as_pronoun(doc) -> str:
    """The fact with its leading name replaced by "It" ("Sedgwick married actor Kevin
    Bacon." -> "It married actor Kevin Bacon."): the small tagger reads a verb after a
    pronoun that it takes for part of a name after a name."""
    n = 0
    while n < len(doc) and (doc[n].pos_ in ("PROPN", "CCONJ") or doc[n].text in "&'’-"):
        n += 1
    return "It " + doc[n:].text if 0 < n < len(doc) else ""


def fragment_reasons(facts: Sequence[str], sentences: Sequence[str], tagger: Any = None) -> list:
    """For each (fact, the sentence it came from): "cut word", "loop", "no verb" or None."""
    tagger = tagger or load_tagger()
    unique = list(dict.fromkeys(sentences))
    verbs_of = {
        sentence: {t.text.lower() for t in doc if t.pos_ in VERB_TAGS}
        for sentence, doc in zip(unique, tagger.pipe(unique), strict=True)
    }
    out: list[str | None] = []
    retry: dict[int, str] = {}
    for i, (fact, doc, sentence) in enumerate(
        zip(facts, tagger.pipe(facts), sentences, strict=True)
    ):
        if cut_word(fact, sentence):
            out.append("cut word")
        elif looping(fact, sentence):
            out.append("loop")
        elif _has_verb(doc, verbs_of[sentence]):
            out.append(None)
        else:
            out.append("no verb")
            if rewritten := _subject_as_pronoun(doc):
                retry[i] = rewritten
    for i, doc in zip(retry, tagger.pipe(retry.values()), strict=True):
        if _has_verb(doc, set()):
            out[i] = None
    return out


def drop_fragments(pairs: list[tuple[Any, list[str]]], tagger: Any = None) -> list:
    """[(Sentence, facts)] without the facts that are fragments of their sentence."""
    flat = [(i, fact, sent.text) for i, (sent, facts) in enumerate(pairs) for fact in facts]
    if not flat:
        return pairs
    reasons = fragment_reasons([f for _, f, _ in flat], [s for *_, s in flat], tagger)
    kept: list[list[str]] = [[] for _ in pairs]
    for (i, fact, _), reason in zip(flat, reasons, strict=True):
        if reason is None:
            kept[i].append(fact)
    return [(sent, facts) for (sent, _), facts in zip(pairs, kept, strict=True)]
