"""Stopword token ids for NP, derived for any tokenizer.

FActScore skips 211 RoBERTa token ids listed in ``roberta_stopwords.txt`` when it picks the
tokens of a fact to mask. Those ids only mean something in RoBERTa's (fairseq-ordered)
vocabulary, so here the set is re-derived for whatever tokenizer the NP model uses: every word
below and every punctuation mark is tokenized with and without a leading space, and each form
that is a single, non-special token contributes its id. Byte-level BPE gives ``the`` and
``Ġthe``, WordPiece gives ``the`` once, SentencePiece gives ``▁the``.

This is a deviation from the reference: the word list is our own, so the derived set is close
to, not equal to, the 211 ids. Someone with ``roberta_stopwords.txt`` and the real
``facebook/npm-single`` tokenizer gets the exact reference set with :func:`load_stopword_ids`.
Only lower-case forms are used by default: the reference set appears to hold lower-case words
only, so a capitalised ``He`` at the start of a fact stays a content token, as it does there.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

# Common English function words: articles, pronouns, auxiliaries, prepositions, conjunctions,
# determiners and a few adverbs. Negations are included, as in the usual English lists.
STOPWORD_WORDS: tuple[str, ...] = (
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "cannot", "could", "did", "do", "does", "doing", "down", "during",
    "each", "either", "else", "ever", "few", "for", "from", "further", "had", "has", "have",
    "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "however",
    "i", "if", "in", "into", "is", "it", "its", "itself", "just", "may", "me", "might", "more",
    "most", "much", "must", "my", "myself", "neither", "no", "nor", "not", "now", "of", "off",
    "on", "once", "only", "or", "other", "others", "our", "ours", "ourselves", "out", "over",
    "own", "same", "shall", "she", "should", "so", "some", "such", "than", "that", "the",
    "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
    "through", "thus", "to", "too", "under", "until", "up", "upon", "us", "very", "via", "was",
    "we", "were", "what", "when", "where", "whether", "which", "while", "who", "whom", "whose",
    "why", "will", "with", "within", "without", "would", "yet", "you", "your", "yours",
    "yourself", "yourselves",
    # clitics as BPE splits them off ("He's" -> "He", "'s")
    "'s", "'t", "n't", "'re", "'ve", "'ll", "'d", "'m",
)  # fmt: skip

PUNCTUATION: tuple[str, ...] = (
    ".", ",", ";", ":", "!", "?", "'", '"', "(", ")", "[", "]", "{", "}", "-", "--", "–", "—",
    "/", "\\", "&", "%", "$", "#", "@", "*", "+", "=", "<", ">", "`", "~", "_", "|", "^",
    "...", "…", "’", "‘", "“", "”", "''", "``", ").", "),", ".\"", ",\"", "\".", "\",",
)  # fmt: skip


def stopword_forms(
    words: Iterable[str] = STOPWORD_WORDS,
    punctuation: Iterable[str] = PUNCTUATION,
    *,
    case_variants: bool = False,
) -> list[str]:
    """Every surface form to try: each entry bare and with one leading space."""
    bases: list[str] = []
    for word in words:
        bases.append(word)
        if case_variants and word[:1].isalpha():
            bases.append(word[:1].upper() + word[1:])
    bases.extend(punctuation)
    forms: list[str] = []
    for base in bases:
        forms.extend((base, " " + base))
    return forms


def derive_stopword_ids(
    tokenizer: Any,
    words: Iterable[str] = STOPWORD_WORDS,
    punctuation: Iterable[str] = PUNCTUATION,
    *,
    case_variants: bool = False,
) -> set[int]:
    """Ids of the forms that this tokenizer turns into exactly one ordinary token."""
    forms = stopword_forms(words, punctuation, case_variants=case_variants)
    # Special and unknown ids never count: a form the vocabulary lacks must not make <unk> a
    # stopword, and specials are skipped separately anyway.
    excluded = set(tokenizer.all_special_ids)
    encoded = tokenizer(forms, add_special_tokens=False)["input_ids"]
    return {ids[0] for ids in encoded if len(ids) == 1 and ids[0] not in excluded}


def load_stopword_ids(path: str | Path) -> set[int]:
    """Read a stopword id file with one integer per line (FActScore's roberta_stopwords.txt).

    The ids are only valid for the tokenizer they were made with: the reference file fits
    the roberta-large / facebook/npm-single vocabulary, not the packaged GPT-2-ordered one.
    """
    ids: set[int] = set()
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            ids.add(int(line))
        except ValueError as exc:
            raise ValueError(f"{path}:{lineno}: not a token id: {line!r}") from exc
    return ids
