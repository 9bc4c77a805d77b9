"""What every local LM backend offers the estimator.

Two operations: deterministic (greedy) generation for atomic facts, and True/False
scoring that reads the next-token logits of the label words after one forward pass, with
no generation.

Prompts are scored *canonically*: a prompt's prefix (the evidence, up to the fact) is
evaluated from an empty cache, or reused only where the cache holds exactly that prefix,
and the rest is evaluated from the end of the prefix. llama.cpp's numbers depend on how
tokens are batched (a margin moved by up to ~0.07 with the reuse point), so this makes a
result depend on the prompt alone: not on the prompts before it, the chunk, the order, or
whether a run was resumed. Prompts are sorted so that those with the same prefix are
adjacent, and the prefix is evaluated once for all of them (prompt_tokens.py tokenizes
and orders them).

A prefix may have two levels: an outer one (a page's evidence), evaluated as above, and
the rest of the prefix (a fact's sentence) evaluated as one batch after it. Prompts of
many sentences of a page then read the page once, and a result still depends on the
prompt and its two cut points alone.
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# common_prefix and prefix_order are imported from here by other modules and tests.
from factscore_local.lm.prompt_tokens import FALSE_WORDS as FALSE_WORDS
from factscore_local.lm.prompt_tokens import TRUE_WORDS as TRUE_WORDS
from factscore_local.lm.prompt_tokens import LabelTokens, prefix_order
from factscore_local.lm.prompt_tokens import LMStats as LMStats
from factscore_local.lm.prompt_tokens import answer_words as answer_words
from factscore_local.lm.prompt_tokens import common_prefix as common_prefix
from factscore_local.lm.protocol import IN_PROCESS

# The generation cut-offs, imported from here by the backends and tests.
from factscore_local.lm.stops import LOOP_REPEATS as LOOP_REPEATS
from factscore_local.lm.stops import cut_at_stop as cut_at_stop
from factscore_local.lm.stops import cut_loop as cut_loop
from factscore_local.lm.stops import loop_end as loop_end
from factscore_local.runtime.device import is_gpu


@dataclass(frozen=True)
class TrueFalse:
    true_logit: float
    false_logit: float

    @property
    def margin(self) -> float:
        """log P(True) - log P(False) over the label tokens (softmax shares its normaliser)."""
        return self.true_logit - self.false_logit


def log_normaliser(rows: np.ndarray) -> np.ndarray:
    """log sum exp of each row. The exponentials are taken in float32, which numpy
    vectorises on AVX2 (30 against 13 ms for a statement's ~20 rows over a 152k
    vocabulary); the sum in float64. Values differ from an all-float64 sum by < 1e-6."""
    top = rows.max(axis=1, keepdims=True)
    shifted = (rows - top).astype(np.float32)
    np.exp(shifted, out=shifted)
    return top[:, 0] + np.log(shifted.sum(axis=1, dtype=np.float64))


class LocalLM(LabelTokens, ABC):
    """The prefix engine the in-process backends share (llama.cpp, transformers): the
    canonical evaluation of prompts described in the module docstring, over a backend's
    ``_tail_logits``. It implements the ``LM`` protocol (``lm/protocol.py``)."""

    name: str
    backend: str
    path: Path  # the weights: a GGUF file or a Hugging Face directory
    device: str = "cpu"
    capabilities: frozenset[str] = IN_PROCESS
    default_dtype = True  # False: a precision other than the device's default (transformers)
    dtype: object = None  # the transformers backend's torch dtype
    tail_batch: int = 1  # verification prompts sharing a prefix run as one batch of this many

    def __init__(self) -> None:
        super().__init__()
        # The prefix held canonically in the backend's cache (see the module docstring); it
        # carries over to the next call (the next slice of sorted prompts).
        self._prefix: list[int] | None = None
        # Where the held prefix's outer level ends (0: it was evaluated as one level).
        self._base = 0
        # While a tail is evaluated with ``read_states`` on, the backend appends the final
        # hidden state at each verdict position here (never for a prefix).
        self._capturing = False
        self._captured: list[np.ndarray] = []

    # --- identity -----------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        """The name the fitted defaults know the weights by (an embedded model's name)."""
        return self.path.name.removesuffix(".gguf")

    def describe(self) -> str:
        return f"{self.name} ({self.backend}, on {self.device})"

    def backend_identity(self) -> str:
        """The backend part of the cache identity. A GPU computes with other kernels, and
        by default in bf16: its results are kept apart from the CPU's ("@gpu"), and a
        precision other than the device's default apart again ("@float32"); the CPU's
        default identity stays as it was."""
        gpu = "@gpu" if is_gpu(self.device) else ""
        if self.default_dtype:
            return self.backend + gpu
        return self.backend + gpu + "@" + str(self.dtype).replace("torch.", "")

    def cache_identity(self, cache) -> str:
        """The weights' name, size and sha256, and the backend (``runtime/weights.py``)."""
        from factscore_local.runtime.weights import model_identity

        return model_identity(self.path, self.backend_identity(), cache)

    def fingerprint(self, cache) -> dict:
        """The run record's entry: the weights' name, path, size, sha256, the backend and
        where it ran."""
        from factscore_local.runtime.weights import lm_fingerprint

        return {**lm_fingerprint(self.path, self.backend, cache), "device": str(self.device)}

    def close(self) -> None:
        """Nothing to free: the weights stay loaded for other runs of this process."""
        return None

    # --- tokens -----------------------------------------------------------------------
    @abstractmethod
    def tokenize(self, text: str) -> list[int]:
        """Token ids of text as it continues a prompt (no BOS added)."""

    def fits(self, n_tokens: int) -> bool:
        """Whether a prompt of n tokens is kept whole (``prompt_ids`` cuts longer ones)."""
        return True

    # --- prompts ----------------------------------------------------------------------
    @abstractmethod
    def chat(self, user: str) -> str:
        """The user message wrapped in the model's chat template (if it has one)."""

    # --- the two operations -----------------------------------------------------------
    @abstractmethod
    def generate(self, prompts: list[str], max_new_tokens: int, stop: list[str]) -> list[str]:
        """Greedy continuations, cut at the first stop string."""

    @abstractmethod
    def _tail_logits(
        self, ids: list[int], reuse: int, n: int, keep: Sequence[int] | None = None
    ) -> np.ndarray:
        """Logits (n, vocab) after each of the last ``n`` positions of ``ids`` (only rows
        ``keep`` of them, when given), evaluated as one batch. The backend's cache holds a
        prefix of length >= ``reuse`` (<= len(ids) - n) from the previous call, which it may
        keep; everything after it is evaluated."""

    def _next_token_logits(self, ids: list[int], reuse: int) -> np.ndarray:
        """Logits after ``ids`` (the next token's)."""
        return self._tail_logits(ids, reuse, 1)[0]

    def _holds(self, n: int) -> bool:
        """Whether the backend's cache still holds the first n tokens it last evaluated."""
        return True

    def _load_prefix(self, ids: list[int]) -> bool:
        """Put a stored evaluation of exactly ``ids`` in the cache; False if none."""
        return False

    def _save_prefix(self, ids: list[int]) -> None:
        """Store the cache, which holds exactly ``ids`` evaluated from empty."""
        return None

    def forget(self) -> None:
        """After anything else used the backend's cache (generation, a reset)."""
        self._prefix, self._base = None, 0

    def _tail_logits_batch(
        self, items: list[tuple[list[int], int, Sequence[int] | None]], reuse: int
    ) -> list[np.ndarray]:
        """``_tail_logits`` of several (ids, n, keep) that share their first ``reuse`` ids,
        held in the cache: one after another here; a backend that can runs them as one
        batch (the GPU), leaving the cache holding the shared prefix."""
        return [self._tail_logits(ids, reuse, n, keep) for ids, n, keep in items]

    def _canonical_logits(
        self, ids: list[int], cut: int, n: int, keep: Sequence[int] | None = None, base: int = 0
    ) -> np.ndarray:
        """Logits after the last n positions of ids (rows ``keep`` of them, when given):
        ids[:cut] evaluated canonically (unless the cache holds exactly that, evaluated so),
        then ids[cut:]. With 0 < base < cut the prefix has two levels: ids[:base] from an
        empty cache (or a stored state), then ids[base:cut] as one batch."""
        cut = max(0, min(cut, len(ids) - n))
        base = base if 0 < base < cut else 0
        evaluated = len(ids) - cut + self._hold_prefix(ids, cut, base)
        with self._capture():
            logits = self._tail_logits(ids, cut, n, keep)
        if not cut:
            # evaluated in one go with the rest: not a reusable prefix
            self._prefix, self._base = None, 0
        self.stats.prompt_tokens += len(ids)
        self.stats.evaluated_tokens += evaluated
        return logits

    @contextlib.contextmanager
    def _capture(self):
        """While a tail is evaluated: the backend appends the final hidden state after each
        tail's last token to ``_captured`` when states are asked for."""
        self._capturing = self.read_states
        try:
            yield
        finally:
            self._capturing = False

    def _hold_prefix(self, ids: list[int], cut: int, base: int) -> int:
        """Make the cache hold ids[:cut] evaluated canonically; returns the tokens evaluated."""
        evaluated = 0
        held = self._prefix
        if cut and not (held == ids[:cut] and self._base == base and self._holds(cut)):
            outer = base or cut
            # The outer level is held where the cache holds it evaluated from empty: alone,
            # or as the outer level of another sentence's prefix.
            outer_held = (
                held is not None
                and held[:outer] == ids[:outer]
                and (len(held) == outer and self._base == 0 or self._base == outer)
                and self._holds(outer)
            )
            if not outer_held and not self._load_prefix(ids[:outer]):
                self._tail_logits(ids[:outer], 0, 1)
                self._save_prefix(ids[:outer])
                evaluated += outer
            if base:
                self._tail_logits(ids[:cut], base, 1)
                evaluated += cut - base
            self._prefix, self._base = ids[:cut], base
        return evaluated

    def true_false(self, prompts: list[str], prefixes: list[str] | None = None) -> list[TrueFalse]:
        """Label-word logits after each prompt. prefixes[i] is the part of prompt i that
        other prompts share (the evidence before the fact); without it, each prompt is
        evaluated whole."""
        scores = self.choice_logits(prompts, (TRUE_WORDS, FALSE_WORDS), prefixes)
        return [TrueFalse(float(t), float(f)) for t, f in scores]

    def choice_logits(
        self,
        prompts: list[str],
        labels: Sequence[Sequence[str]],
        prefixes: list[str] | None = None,
    ) -> np.ndarray:
        """(n_prompts, n_labels): the next-token logit of each label after each prompt (the
        highest over the label's words' first tokens), from one forward pass per prompt.
        ``prefixes`` as in ``true_false``. With ``read_states``, ``last_states`` then holds
        each prompt's final hidden state where the labels are read."""
        label_ids = self.choice_ids(labels)
        if prefixes is None:
            encoded, cuts = [self.prompt_ids(p) for p in prompts], [0] * len(prompts)
        else:  # the facts of a block share one prefix, tokenized once
            encoded, cuts = self._encode(prompts, prefixes)
        order = prefix_order(encoded, prefixes)
        out = np.zeros((len(prompts), len(labels)))
        states: list[np.ndarray | None] = [None] * len(prompts)
        for i in order:
            self._captured = []
            logits = self._canonical_logits(encoded[i], cuts[i], 1)[0]
            self.stats.prompts += 1
            out[i] = [max(logits[t] for t in ids) for ids in label_ids]
            if self.read_states:  # the state where the label is read, as for a verdict
                if not self._captured:
                    raise RuntimeError(f"{self.backend}: no hidden state read for a choice")
                states[i] = self._captured[-1]
        self.last_states = states
        return out

    def true_false_with_statement(
        self,
        prompts: list[str],
        prefixes: list[str],
        spans: list[tuple[int, int]],
        labels: tuple[Sequence[str], Sequence[str]] = (TRUE_WORDS, FALSE_WORDS),
        bases: list[str] | None = None,
    ) -> list[tuple[TrueFalse, list[int], np.ndarray]]:
        """``true_false`` plus, from the same forward pass, log P(token | everything before
        it) for each token of the statement that prompt i holds at characters spans[i].
        Returns (label logits, the statement's token ids, their log-probabilities); the
        last two are empty when the statement's tokens cannot be told apart (a tokenizer
        that merges them with their neighbours, a prompt cut to fit the context). ``labels``:
        the words of the positive and the negative answer (e.g. Yes / No). ``bases``: the
        outer level of each prefix ("" for none; see the module docstring).

        Everything after the shared prefix is evaluated as one batch (logits at the
        statement's positions and the last), so the label logits do not depend on where
        the statement starts. With ``read_states``, ``last_states`` then holds each prompt's
        final hidden state at the verdict position (float32, the model's width), read in
        the same pass."""
        true_ids, false_ids = self.choice_ids(labels)
        encoded, cuts = self._encode(prompts, prefixes)
        outer = self._outer_cuts(encoded, bases)
        out: list = [None] * len(prompts)
        plans = {}  # i -> (first, n, keep, base, statement span)
        for i in prefix_order(encoded, prefixes):
            ids, cut = encoded[i], cuts[i]
            a, b = self._token_span(prompts[i], ids, spans[i])
            found = b > a > cut
            # Without a shared prefix, logits start at the statement (not at token 0).
            first = cut if cut > 0 else (a - 1 if found else len(ids) - 1)
            n = len(ids) - first
            keep = (list(range(a - 1 - first, b - 1 - first)) if found else []) + [n - 1]
            plans[i] = (first, n, keep, outer[i] if cut > 0 else 0, (a, b) if found else None)
        states: list[np.ndarray | None] = [None] * len(prompts)
        for group in self._tail_groups(encoded, cuts, plans):
            first, base = plans[group[0]][0], plans[group[0]][3]
            self._captured = []
            if len(group) == 1:
                _, n, keep, _, _ = plans[group[0]]
                tails = [self._canonical_logits(encoded[group[0]], first, n, keep, base)]
            else:
                tails = self._canonical_batch([encoded[i] for i in group], first, base,
                                              [plans[i][1:3] for i in group])  # fmt: skip
            for i, logits in zip(group, tails, strict=True):
                out[i] = self._verdict(np.asarray(logits, np.float64), encoded[i], plans[i][4],
                                       true_ids, false_ids)  # fmt: skip
            if self.read_states:
                if len(self._captured) != len(group):
                    raise RuntimeError(f"{self.backend}: no hidden state read for a verdict")
                for i, state in zip(group, self._captured, strict=True):
                    states[i] = state
        self.last_states = states
        return out

    def _tail_groups(self, encoded, cuts, plans) -> list[list[int]]:
        """Prompts in order, in groups of up to ``tail_batch`` that share a whole prefix."""
        groups: list[list[int]] = []
        for i, (first, *_rest, base, _) in plans.items():
            if groups and cuts[i] > 0 and len(groups[-1]) < self.tail_batch:
                j = groups[-1][0]
                if (cuts[j] > 0 and plans[j][0] == first and plans[j][3] == base
                        and encoded[j][:first] == encoded[i][:first]):  # fmt: skip
                    groups[-1].append(i)
                    continue
            groups.append([i])
        return groups

    def _canonical_batch(self, batch: list[list[int]], cut: int, base: int, tails) -> list:
        """``_canonical_logits`` of prompts sharing ids[:cut], their tails as one batch."""
        evaluated = self._hold_prefix(batch[0], cut, base)
        with self._capture():
            logits = self._tail_logits_batch(
                [(ids, n, keep) for ids, (n, keep) in zip(batch, tails, strict=True)], cut
            )
        self.stats.prompt_tokens += sum(map(len, batch))
        self.stats.evaluated_tokens += evaluated + sum(len(ids) - cut for ids in batch)
        return logits

    def _verdict(self, logits, ids, span, true_ids, false_ids):
        """(label logits, statement ids, their log-probabilities) from a prompt's rows."""
        self.stats.prompts += 1
        last = logits[-1]
        verdict = TrueFalse(float(max(last[t] for t in true_ids)),
                            float(max(last[t] for t in false_ids)))  # fmt: skip
        if span is None:
            self.stats.extra["statement_not_found"] = (
                self.stats.extra.get("statement_not_found", 0) + 1
            )
            return verdict, [], np.zeros(0)
        rows, gold = logits[:-1], ids[span[0] : span[1]]
        return verdict, gold, rows[np.arange(len(gold)), gold] - log_normaliser(rows)

    def token_logprobs(self, pairs: list[tuple[list[int], list[int]]]) -> list[np.ndarray]:
        """For (context ids, continuation ids) pairs: log P(continuation[j] | context,
        continuation[:j]) for every j, from one teacher-forced pass per pair. The context is
        the canonical prefix: pairs are run sorted, and a context shared by many
        continuations is evaluated once."""
        runs = []
        for context, continuation in pairs:
            if not context or not continuation:
                raise ValueError("token_logprobs needs a non-empty context and continuation")
            runs.append(context + continuation[:-1])  # the last token is never input
        order = sorted(range(len(pairs)), key=lambda i: runs[i])
        results: list[np.ndarray | None] = [None] * len(pairs)
        for i in order:
            ids, (context, gold) = runs[i], pairs[i]
            n = len(gold)
            logits = np.asarray(self._canonical_logits(ids, len(context), n), dtype=np.float64)
            results[i] = logits[np.arange(n), gold] - log_normaliser(logits)
        return results  # type: ignore[return-value]
