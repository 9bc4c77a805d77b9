"""How prompts become token ids, and where a statement's tokens lie in them.

One job: the token side of scoring prompts that share a prefix. Prompts are tokenized as
their shared prefix's ids (tokenized once) followed by the rest's, ordered so that prompts
with the same prefix are adjacent, and a statement's characters are mapped to token
positions. ``PromptTokens`` is a mixin of every LM (``LabelTokens`` adds the label words'
ids and the counters): the in-process engines (``lm/base.py``) and the server
(``lm/server_backend.py``) provide the tokenizer methods it calls (``prompt_ids``,
``continuation_ids``, ``token_piece``, ``fits``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


def answer_words(word: str) -> tuple[str, ...]:
    """The spellings of an answer word whose first token counts for it."""
    return (word, f" {word}", word.lower(), f" {word.lower()}")


TRUE_WORDS = answer_words("True")
FALSE_WORDS = answer_words("False")


@dataclass
class LMStats:
    prompts: int = 0
    prompt_tokens: int = 0  # tokens of all True/False prompts
    evaluated_tokens: int = 0  # tokens actually run through the model (the rest reused)
    generated_tokens: int = 0
    extra: dict = field(default_factory=dict)


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _find(ids: list[int], part: list[int], start: int) -> int:
    """The first index >= start where ``part`` occurs in ``ids``, or -1."""
    n = len(part)
    for i in range(start, len(ids) - n + 1):
        if ids[i : i + n] == part:
            return i
    return -1


def _remembered(memo: dict, key, limit: int, compute):
    """memo[key], computed on first use; the least recently used entry goes once memo
    holds ``limit`` (a page's ids stay while its sentences' prefixes come and go)."""
    if key in memo:
        memo[key] = memo.pop(key)  # now the most recent
    else:
        if len(memo) >= limit:
            memo.pop(next(iter(memo)))
        memo[key] = compute()
    return memo[key]


def prefix_order(encoded: list[list[int]], prefixes: Sequence[str] | None) -> list[int]:
    """The order to evaluate prompts in: grouped by prefix, the groups in the order their
    prefixes first come (callers pass slices of prompts sorted so, and the last prefix of one
    slice, still in the model's cache, is the first of the next), sorted by ids within a
    group. Sorting by ids alone read a prefix again wherever its slice put another first."""
    group: dict[str, int] = {}
    for prefix in prefixes or ():
        group.setdefault(prefix, len(group))
    rank = [group[x] for x in prefixes] if prefixes else [0] * len(encoded)
    return sorted(range(len(encoded)), key=lambda i: (rank[i], encoded[i]))


class PromptTokens:
    """Prompt encoding and statement token spans, mixed into ``LocalLM``."""

    _prefix_ids: dict[str, list[int]]
    _splits: dict[tuple[str, str], bool]

    def _encode(self, prompts: list[str], prefixes: list[str]) -> tuple[list[list[int]], list[int]]:
        """Each prompt's ids and how many of them its prefix (the part other prompts share)
        holds. A prompt is tokenized as its prefix's ids followed by the rest's where the
        tokenizer splits exactly there: checked once per prefix and first word of the rest,
        which settle it for byte-level BPE (it never merges across a word boundary); with
        SentencePiece (which adds a space to a text's start) the check fails and prompts are
        tokenized whole. Either way the ids are those of the whole prompt. Why: llama.cpp's
        tokenizer takes ~16 ms for a 4,000-token prompt, and the prompts of a page share all
        but their last ~20 tokens (docs/benchmarks/verify-pass-counts.md)."""
        encoded, cuts = [], []
        for prompt, prefix in zip(prompts, prefixes, strict=True):
            head = self._ids_of_prefix(prefix)
            rest = prompt[len(prefix) :]
            ids = None
            if prefix and prompt.startswith(prefix) and self._splits_after(prefix, rest):
                tail = self.continuation_ids(rest)
                if tail is not None and self.fits(len(head) + len(tail)):
                    ids = head + tail
            if ids is None:
                ids = self.prompt_ids(prompt)
            encoded.append(ids)
            cuts.append(common_prefix(head, ids))
        return encoded, cuts

    def _ids_of_prefix(self, prefix: str) -> list[int]:
        return _remembered(self._prefix_ids, prefix, 16, lambda: self.prompt_ids(prefix))

    def _splits_after(self, prefix: str, rest: str) -> bool:
        word = rest[: rest.find(" ") + 1] if " " in rest else rest

        def splits() -> bool:
            tail = self.continuation_ids(word)
            head = self._ids_of_prefix(prefix)
            return tail is not None and self.prompt_ids(prefix + word) == head + tail

        return _remembered(self._splits, (prefix, word), 64, splits)

    def _outer_cuts(self, encoded: list[list[int]], bases: list[str] | None) -> list[int]:
        """Where each prompt's outer prefix level ends in its ids (0: none, or where its
        ids do not start with the outer part's own)."""
        cuts = []
        for ids, base in zip(encoded, bases or [""] * len(encoded), strict=True):
            head = self._ids_of_prefix(base) if base else []
            cuts.append(len(head) if head and ids[: len(head)] == head else 0)
        return cuts

    def _token_span(self, prompt: str, ids: list[int], span: tuple[int, int]) -> tuple[int, int]:
        """Token positions [a, b) of prompt[span[0]:span[1]] in ids; (0, 0) when a token
        straddles either end. Read backwards from the prompt's end by each token's bytes
        (only the statement and what follows it), where the backend gives them and they
        spell the prompt; else by tokenizing the prompt cut at each end."""
        raw = prompt.encode("utf-8")
        start, end = (len(prompt[:char].encode("utf-8")) for char in span)  # bytes, not chars
        pos, j = len(raw), len(ids)
        b = j if end == pos else None
        while j > 0 and pos > start:
            piece = self.token_piece(ids[j - 1])
            if not piece or raw[pos - len(piece) : pos] != piece:
                return self._token_span_by_prefix(prompt, ids, span)
            pos, j = pos - len(piece), j - 1
            if pos == end:
                b = j
        if pos != start or b is None:
            return 0, 0
        return j, b

    def _token_span_by_prefix(
        self, prompt: str, ids: list[int], span: tuple[int, int]
    ) -> tuple[int, int]:
        """[a, b) when the prompt's tokens up to each end are those of the prompt cut
        there; else (0, 0)."""
        bounds = []
        for char in span:
            head = self.prompt_ids(prompt[:char])
            if ids[: len(head)] != head:
                return 0, 0
            bounds.append(len(head))
        return bounds[0], bounds[1]


class LabelTokens(PromptTokens):
    """What every LM keeps besides its model: the counters, the label words' first-token
    ids, the prompt-encoding memos, and the hidden states of the last pass that read them
    (``read_states`` is switched on by the result cache for such a pass)."""

    name: str

    def __init__(self) -> None:
        self.stats = LMStats()
        # First-token ids of label words, per tuple of labels (looked up once).
        self._choice_ids: dict[tuple, list[list[int]]] = {}
        # Token ids of recent shared prefixes, and whether the tokenizer splits exactly after
        # a prefix before a given first word (see ``_encode``): a few pages at a time.
        self._prefix_ids: dict[str, list[int]] = {}
        self._splits: dict[tuple[str, str], bool] = {}
        self.read_states = False
        self.last_states: list = []

    def tokenize(self, text: str) -> list[int]:
        raise NotImplementedError

    def prompt_ids(self, prompt: str) -> list[int]:
        """Ids of a whole prompt (a BOS where the model wants one)."""
        return self.tokenize(prompt)

    def continuation_ids(self, text: str) -> list[int] | None:
        """Ids of text as it continues a prompt, special tokens read as ``prompt_ids`` reads
        them; None where the backend cannot tell (prompts are then tokenized whole)."""
        return None

    def token_piece(self, token: int) -> bytes | None:
        """A token's bytes as a prompt holds them; None where the backend cannot tell."""
        return None

    def label_ids(self) -> tuple[list[int], list[int]]:
        """First-token ids of True and False, looked up in the model's own tokenizer."""
        true_ids, false_ids = self.choice_ids((TRUE_WORDS, FALSE_WORDS))
        return true_ids, false_ids

    def choice_ids(self, labels: Sequence[Sequence[str]]) -> list[list[int]]:
        """First-token ids of each label's words; labels must not share a first token."""
        key = tuple(tuple(words) for words in labels)
        if key not in self._choice_ids:
            ids = [sorted({self.tokenize(w)[0] for w in words}) for words in key]
            seen: set[int] = set()
            for words, label_ids in zip(key, ids, strict=True):
                if seen & set(label_ids):
                    raise ValueError(f"{self.name}: label {words[0]!r} shares a first token")
                seen |= set(label_ids)
            self._choice_ids[key] = ids
        return self._choice_ids[key]

    def keep_prefix_states(self, folder, identity: str) -> None:
        """Keep evaluated prefixes in ``folder`` (backends with ``PREFIX_STATES``)."""
        return None
