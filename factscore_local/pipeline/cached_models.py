"""The models' results through the result cache: an LM's generations, its True/False
verdicts (with the statement probability and, when asked, the verdict's hidden state) and
NP's probabilities, each keyed by the model's identity and the exact input
(``runtime/cache.py``), computed in sorted slices so that a killed run loses one slice.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from factscore_local.lm.base import answer_words, cut_loop
from factscore_local.lm.protocol import STREAMED_GENERATION
from factscore_local.runtime.cache import ResultCache, cached_batch, cached_stream, key_of
from factscore_local.runtime.progress import Progress
from factscore_local.runtime.states import decode_state, encode_state

SLICE_GENERATE = 32  # prompts per stored slice of generations (two rounds of parallel slots)
SLICE_TRUE_FALSE = 32  # prompts per stored slice of True/False scores (and of causal NP)


class CachedLM:
    """An LM's generations and True/False logits, cached by model identity and prompt
    (``lm``: an ``LM``, ``lm/protocol.py``)."""

    def __init__(
        self, lm, cache: ResultCache, model_id: str, progress: Progress | None = None
    ) -> None:
        self.lm = lm
        self.cache = cache
        self.model_id = model_id
        self.progress = progress or Progress()
        self._skip: set[int] | None = None  # stopword ids of the statement probability

    def chat(self, user: str) -> str:
        return self.lm.chat(user)

    def generation_key(self, prompt: str, max_new_tokens: int, stop: list[str]) -> str:
        """Where the cache keeps a prompt's generation."""
        return key_of("gen", self.model_id, prompt, max_new_tokens, stop)

    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        keys = [self.generation_key(p, max_new_tokens, stop) for p in prompts]
        if STREAMED_GENERATION in self.lm.capabilities:
            # One call for every missing prompt, stored as the outputs end: the generation
            # slots never wait for a slice's slowest prompt.
            texts = cached_stream(
                self.cache,
                "generate",
                keys,
                prompts,
                lambda part, done: self.lm.generate(part, max_new_tokens, stop, on_done=done),
                SLICE_GENERATE,
                order=str,
                progress=self.progress,
            )
        else:
            texts = cached_batch(
                self.cache,
                "generate",
                keys,
                prompts,
                lambda part: self.lm.generate(part, max_new_tokens, stop),
                SLICE_GENERATE,
                order=str,
                progress=self.progress,
            )
        # A result cached before generation stopped at greedy loops is cut as the backends
        # cut theirs now (the same text either way).
        return [cut_loop(text) for text in texts]

    def true_false(
        self, prompts: list[str], prefixes: list[str] | None = None
    ) -> list[tuple[float, float]]:
        """(true, false) logits per prompt; prefixes[i] is the shared part of prompt i (see
        ``LocalLM.true_false``). The key is the prompt: its prefix is a function of it."""

        def rows(texts: list[str], shared: list[str] | None) -> list[list[float]]:
            return [[float(x.true_logit), float(x.false_logit)]
                    for x in self.lm.true_false(texts, shared)]  # fmt: skip

        keys = [key_of("tf", self.model_id, p) for p in prompts]
        values = self._scored("true_false", keys, prompts, prefixes, rows)
        return [tuple(v) for v in values]

    def judge(
        self,
        prompts: list[str],
        prefixes: list[str],
        statements: list[str],
        answers: tuple[str, str] = ("True", "False"),
        bases: list[str] | None = None,
    ) -> list[tuple[float, float, float]]:
        """(positive logit, negative logit, statement probability) per verification prompt,
        from one forward pass: the statement probability is the mean probability of the
        statement's content tokens as the prompt writes them after its evidence (the
        ``lm-joint`` NP). statements[i] is the text after the prompt's last STATEMENT;
        ``answers``: the words of the positive and negative answer the prompt asks for;
        ``bases``: each prefix's outer level, a function of the prompt (``LocalLM``)."""
        statement_of = dict(zip(prompts, statements, strict=True))
        base_of = dict(zip(prompts, bases or [""] * len(prompts), strict=True))

        def rows(texts: list[str], shared: list[str] | None) -> list[list[float]]:
            return self._judge_rows(texts, shared, statement_of, answers, base_of)

        keys = self._judge_keys(prompts, answers)
        values = self._scored("true_false", keys, prompts, prefixes, rows)
        return [(float(t), float(f), float(p)) for t, f, p in values]

    def _judge_keys(self, prompts: list[str], answers: tuple[str, str]) -> list[str]:
        # Other answer words are part of the key (True / False keys stay as they were).
        tag = () if answers == ("True", "False") else (answers,)
        return [key_of("judge", self.model_id, *tag, p) for p in prompts]

    def _judge_rows(
        self, texts: list[str], shared: list[str] | None, statement_of: dict, answers, base_of
    ) -> list[list[float]]:
        """[positive logit, negative logit, statement probability] of each prompt, from one
        pass (``LocalLM.true_false_with_statement``)."""
        from factscore_local.npm.causal_np import content_probability, skip_ids

        if self._skip is None:
            self._skip = skip_ids(self.lm)
        judged = self.lm.true_false_with_statement(
            texts,
            shared or [""] * len(texts),
            [_statement_span(t, statement_of[t]) for t in texts],
            (answer_words(answers[0]), answer_words(answers[1])),
            [base_of[t] for t in texts],
        )
        return [
            [v.true_logit, v.false_logit, content_probability(ids, lp, self._skip)]
            for v, ids, lp in judged
        ]

    def judge_states(
        self,
        prompts: list[str],
        prefixes: list[str],
        statements: list[str],
        answers: tuple[str, str] = ("True", "False"),
        bases: list[str] | None = None,
    ) -> list[np.ndarray]:
        """The final hidden state at each verification prompt's verdict position (as
        ``judge`` reads its logits), float16, cached beside the judge result. A missing state
        is read in a pass that also yields the judge result, which is stored where the cache
        lacks it (a result cached earlier stays: the pass with states outputs every tail
        token, which moves a margin by < 1e-3)."""
        statement_of = dict(zip(prompts, statements, strict=True))
        base_of = dict(zip(prompts, bases or [""] * len(prompts), strict=True))

        def read(texts: list[str], shared: list[str] | None) -> list[list[float]]:
            return self._judge_rows(texts, shared, statement_of, answers, base_of)

        keys = self._judge_keys(prompts, answers)
        return self._states("true_false", keys, prompts, prefixes, read)

    def choices(
        self,
        prompts: list[str],
        labels: Sequence[Sequence[str]],
        prefixes: list[str] | None = None,
    ) -> list[list[float]]:
        """Each label's logit after each prompt (``LocalLM.choice_logits``), cached by
        model, labels and prompt."""

        def rows(texts: list[str], shared: list[str] | None) -> list[list[float]]:
            return [list(map(float, r)) for r in self.lm.choice_logits(texts, labels, shared)]

        words = [list(w) for w in labels]
        keys = [key_of("choice", self.model_id, words, p) for p in prompts]
        return self._scored("choice", keys, prompts, prefixes, rows)

    def choice_states(
        self,
        prompts: list[str],
        labels: Sequence[Sequence[str]],
        prefixes: list[str] | None = None,
    ) -> list[np.ndarray]:
        """The final hidden state where ``choices`` reads each prompt's label logits,
        float16, cached beside them (the logits are stored too where the cache lacks them)."""
        words = [list(w) for w in labels]
        keys = [key_of("choice", self.model_id, words, p) for p in prompts]

        def read(texts: list[str], shared: list[str] | None) -> list[list[float]]:
            return [list(map(float, r)) for r in self.lm.choice_logits(texts, labels, shared)]

        return self._states("choice", keys, prompts, prefixes, read)

    def _states(self, kind: str, result_keys, prompts, prefixes, read) -> list[np.ndarray]:
        """The states of prompts whose ``kind`` results are kept under ``result_keys``: a
        missing state is read by ``read`` (rows, from a pass with states on), whose rows are
        stored where the cache lacks them (a result cached earlier stays)."""
        key_of_prompt = dict(zip(prompts, result_keys, strict=True))

        def compute(part: list[tuple[str, str | None]]) -> list[str]:
            texts = [p for p, _ in part]
            self.lm.read_states = True
            try:
                rows = read(texts, None if prefixes is None else [x for _, x in part])
                states = self.lm.last_states
            finally:
                self.lm.read_states = False
            fresh = {key_of_prompt[t]: row for t, row in zip(texts, rows, strict=True)}
            self.cache.put_many(kind, {k: v for k, v in fresh.items() if not self.cache.has(k)})
            return [encode_state(s) for s in states]

        pairs = list(zip(prompts, prefixes or [None] * len(prompts), strict=True))
        encoded = cached_batch(
            self.cache, "state", [key_of("state", k) for k in result_keys], pairs, compute,
            SLICE_TRUE_FALSE, order=by_prefix, progress=self.progress,
        )  # fmt: skip
        return [decode_state(e) for e in encoded]

    def _scored(self, kind: str, keys, prompts, prefixes, rows) -> list:
        """Cached rows of one forward pass per prompt, computed in sorted slices."""
        pairs = list(zip(prompts, prefixes or [None] * len(prompts), strict=True))

        def compute(part: list[tuple[str, str | None]]) -> list[list[float]]:
            shared = None if prefixes is None else [x for _, x in part]
            return rows([p for p, _ in part], shared)

        return cached_batch(
            self.cache, kind, keys, pairs, compute, SLICE_TRUE_FALSE, order=by_prefix,
            progress=self.progress,
        )  # fmt: skip


def by_prefix(pair: tuple[str, str | None]) -> tuple[str, str]:
    """Prompts sorted by their shared prefix, then by themselves, so that a prefix's
    prompts are adjacent (``str`` of the pair, as before, split them by how Python quotes
    each prompt)."""
    prompt, prefix = pair
    return (prefix or "", prompt)


def _statement_span(prompt: str, statement: str) -> tuple[int, int]:
    """Characters of the statement in a verification prompt: from the space before it (a
    word-initial token starts there) to its end."""
    from factscore_local.pipeline.signals.verify_prompt import STATEMENT

    start = prompt.rindex(STATEMENT) + len(STATEMENT) - 1
    text = statement.strip()
    if prompt[start + 1 : start + 1 + len(text)] != text:
        raise ValueError(f"the prompt does not hold the statement {text!r} after {STATEMENT!r}")
    return start, start + 1 + len(text)


class CachedNP:
    """NP probabilities of (atom, passages) pairs, cached by scorer identity and input.

    A scorer says how it scores (``scores_batches``): the causal stand-in a batch at once
    (facts of a page share their prefix), a masked-LM ``NPScorer`` one pair at a time."""

    def __init__(
        self, scorer, cache: ResultCache, scorer_id: str, progress: Progress | None = None
    ) -> None:
        self.scorer = scorer
        self.cache = cache
        self.scorer_id = scorer_id
        self.progress = progress or Progress()

    def probabilities(self, items: Sequence[tuple[str, list[str]]]) -> list[float]:
        keys = [key_of("np", self.scorer_id, atom, passages) for atom, passages in items]
        if self.scorer.scores_batches:
            compute, size = self.scorer.probabilities, SLICE_TRUE_FALSE
        else:
            compute, size = (lambda part: [self.scorer.probability(*part[0])]), 1
        values = cached_batch(
            self.cache,
            "np",
            keys,
            list(items),
            lambda part: map(float, compute(part)),
            size,
            progress=self.progress,
        )
        return [float(v) for v in values]
