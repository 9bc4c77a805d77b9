"""FActScore's NP score ("nonparametric probability", NPM single-mask) with any local masked LM.

What is computed, for an atomic fact and its (BM25 top-3) passages, as FActScore's ``npm.py``:

1. Each passage is stripped and tokenized without the tokenizer's added special tokens (the
   same ids the reference keeps after asserting and cutting ``<s> ... </s>``). The literal
   ``<s>``/``</s>`` section markers inside the text stay in the encoder input, as special
   ids; after the forward pass every special position (bos/cls, eos/sep, pad) is dropped, so
   markers shape the context but can never be retrieved. The last-layer hidden state of every
   remaining token goes into the datastore.
2. The query is ``prefix + atom`` tokenized without special tokens. Its first tokens, those of
   the prefix, are skipped (the reference skips up to RoBERTa's ``:`` id 35; here the count
   comes from tokenizing the prefix), as are special ids and stopword ids.
3. For each remaining position the token is replaced by the mask token, the ids are
   *decoded and re-tokenized* (with special tokens), exactly as the reference does. We keep
   the round trip rather than building ids directly because it is what the reference feeds
   the model, and the two differ whenever decoding is not inverted by tokenizing (clean-up of
   spaces, merges across the removed token). ``requery=False`` builds the ids directly.
   The query vector is the last-layer hidden state at the (first) mask position.
4. ``p = sum_{c: id(c) = gold} exp(s_c) / sum_c exp(s_c)`` with ``s_c = q.h_c / sqrt(d)``,
   ``d`` the hidden size, over all datastore tokens of all passages; ``p = 0`` when the gold
   id is absent. The reference exponentiates raw float32 scores; we take
   ``exp(logsumexp(s[gold]) - logsumexp(s))`` in float64, which is the same quantity without
   overflow.
5. NP = mean of ``p`` over the masked positions; the ensemble compares it with ``> 0.3``.

Hidden states come from the masked LM's encoder (``model.base_model``) called with
``output_hidden_states=True``: its ``hidden_states[-1]`` is the very tensor the masked-LM
wrapper returns, without computing vocabulary logits for every passage token.

Deviations from the reference, all documented where they happen: stopwords are re-derived for
the tokenizer (see :mod:`npm.stopwords`); a fact with no content token returns
``no_content_value`` (0.0) where the reference raises; no passage tokens at all gives 0.0 where
the reference raises; passages longer than the model's positions are encoded in windows where
the reference would fail; padding uses the tokenizer's pad id rather than 0 (the real tokens'
states are unchanged: padding is masked out of attention and, for RoBERTa, position ids only
count non-pad ids).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscore_local.npm.np_model import (
    SECTION_MARKERS as SECTION_MARKERS,  # re-exported: it was defined here
)
from factscore_local.npm.np_model import (
    _load_local,
    _marker_replacements,
    _max_length,
    _special_wrap,
)
from factscore_local.npm.stopwords import derive_stopword_ids

DEFAULT_NP_THRESHOLD = 0.3  # FActScore: supported only if NP > 0.3 (strict), tuned for npm-single
DEFAULT_PREFIX = "Fact: "


@dataclass
class TokenScore:
    """The NP probability of one masked token of the fact."""

    position: int  # index in the fact's token ids (no special tokens)
    token_id: int
    token: str
    probability: float
    occurrences: int  # passage tokens carrying the same id


@dataclass
class NPDetails:
    """Everything behind one NP value, for debugging."""

    atom: str
    probability: float
    tokens: list[TokenScore]
    query_ids: list[int]
    n_prefix_tokens: int
    n_passage_tokens: int
    skipped: list[tuple[int, str, str]]  # (position, token, why: prefix/special/stopword)
    no_content: bool


@dataclass
class NPStats:
    """Running counters over the life of a scorer."""

    facts: int = 0
    masked_tokens: int = 0
    no_content_facts: int = 0  # facts with only prefix/stopword/special tokens
    no_passage_token_facts: int = 0
    forward_passes: int = 0
    passage_cache_hits: int = 0
    passage_cache_misses: int = 0
    requery_fallbacks: int = 0  # re-tokenized query lost the mask; ids were built directly
    passage_windows_split: int = 0


class NPScorer:
    """NP of atomic facts against passages with a local masked-LM encoder."""

    scores_batches = False  # probability() of one pair at a time

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        model: Any = None,
        tokenizer: Any = None,
        device: str = "cpu",
        batch_size: int = 16,
        prefix: str = DEFAULT_PREFIX,
        stopword_ids: set[int] | None = None,
        cache_size: int = 128,
        requery: bool = True,
        no_content_value: float = 0.0,
        max_length: int | None = None,
    ) -> None:
        if model_dir is not None:
            if model is not None or tokenizer is not None:
                raise ValueError("pass either model_dir or model and tokenizer, not both")
            model, tokenizer = _load_local(Path(model_dir).expanduser())
        elif model is None or tokenizer is None:
            raise ValueError("NPScorer needs model_dir, or both model and tokenizer")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if tokenizer.mask_token_id is None:
            raise ValueError("the tokenizer has no mask token; NP needs a masked-LM tokenizer")

        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        # The bare encoder returns the same hidden_states as the masked-LM wrapper around it.
        base = getattr(model, "base_model", None)
        self.encoder = base if isinstance(base, torch.nn.Module) else model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.prefix = prefix
        self.requery = requery
        self.no_content_value = float(no_content_value)
        self.mask_id: int = int(tokenizer.mask_token_id)
        self.pad_id: int = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
        # Dropped from passages and never masked: what the reference's ids 0 and 2 stand for.
        self.special_ids: set[int] = {
            int(i)
            for i in (
                tokenizer.bos_token_id,
                tokenizer.eos_token_id,
                tokenizer.cls_token_id,
                tokenizer.sep_token_id,
                tokenizer.pad_token_id,
            )
            if i is not None
        }
        self.stopword_ids: set[int] = (
            set(stopword_ids) if stopword_ids is not None else derive_stopword_ids(tokenizer)
        )
        self.max_length = max_length or _max_length(model, tokenizer)
        self._head, self._tail = _special_wrap(tokenizer)
        self._marker_map = _marker_replacements(tokenizer, self.special_ids)
        self._cache: OrderedDict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.cache_size = cache_size
        self.stats = NPStats()
        self.last_details: NPDetails | None = None

    # ---- public API ------------------------------------------------------------------------

    def probability(self, atom: str, passages: Sequence[str]) -> float:
        """NP of ``atom`` given ``passages`` (FActScore passes BM25 top-3 of the topic page)."""
        return self.details(atom, passages).probability

    def details(self, atom: str, passages: Sequence[str]) -> NPDetails:
        """Like :meth:`probability`, with the per-token probabilities; also kept in last_details."""
        passage_ids, passage_vecs = self.encode_passages(passages)
        query_text = self.prefix + atom
        query_ids = self._content_ids(query_text)
        n_prefix = self._prefix_length(query_text, query_ids)

        positions: list[int] = []
        skipped: list[tuple[int, str, str]] = []
        for i, tid in enumerate(query_ids):
            why = None
            if i < n_prefix:
                why = "prefix"
            elif tid in self.special_ids or tid == self.mask_id:
                why = "special"
            elif tid in self.stopword_ids:
                why = "stopword"
            if why is None:
                positions.append(i)
            else:
                skipped.append((i, self._token_str(tid), why))

        self.stats.facts += 1
        token_scores: list[TokenScore] = []
        if not positions:
            # The reference fails here (np.stack of nothing). A fact with nothing to check
            # carries no evidence for support, so it gets the low value and is counted.
            self.stats.no_content_facts += 1
            result = self.no_content_value
        else:
            gold = [query_ids[i] for i in positions]
            if len(passage_ids) == 0:
                self.stats.no_passage_token_facts += 1
                probs = [0.0] * len(positions)
            else:
                queries = self._query_vectors(query_ids, positions)
                probs = retrieval_probabilities(queries, gold, passage_ids, passage_vecs)
            self.stats.masked_tokens += len(positions)
            for i, tid, p in zip(positions, gold, probs, strict=True):
                count = int(np.count_nonzero(passage_ids == tid))
                token_scores.append(TokenScore(i, tid, self._token_str(tid), float(p), count))
            result = float(np.mean(probs))

        details = NPDetails(
            atom=atom,
            probability=result,
            tokens=token_scores,
            query_ids=query_ids,
            n_prefix_tokens=n_prefix,
            n_passage_tokens=int(len(passage_ids)),
            skipped=skipped,
            no_content=not positions,
        )
        self.last_details = details
        return details

    def encode_passages(self, passages: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Datastore of the passages: token ids (n,) and last-layer states (n, d), cached LRU."""
        key = tuple(passages)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            self.stats.passage_cache_hits += 1
            return cached
        self.stats.passage_cache_misses += 1

        texts = [self._map_markers(p.strip()) for p in passages]  # npm.py strips each passage
        sequences: list[list[int]] = []
        for ids in self._tokenize(texts, add_special_tokens=False):
            if len(ids) > self.max_length:
                self.stats.passage_windows_split += 1
            for start in range(0, len(ids), self.max_length):
                sequences.append(ids[start : start + self.max_length])

        hidden_size = self._hidden_size()
        token_ids: list[int] = []
        vectors: list[np.ndarray] = []
        for start in range(0, len(sequences), self.batch_size):
            batch = sequences[start : start + self.batch_size]
            states = self._last_hidden(batch)
            for row, ids in zip(states, batch, strict=True):
                keep = [j for j, tid in enumerate(ids) if tid not in self.special_ids]
                token_ids.extend(ids[j] for j in keep)
                vectors.append(row[keep])
        result = (
            np.asarray(token_ids, dtype=np.int64),
            np.concatenate(vectors, 0) if vectors else np.zeros((0, hidden_size), np.float32),
        )
        self._cache[key] = result
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return result

    def clear_cache(self) -> None:
        self._cache.clear()

    # ---- internals -------------------------------------------------------------------------

    def _query_vectors(self, query_ids: list[int], positions: list[int]) -> np.ndarray:
        """Mask each position in turn; all masked queries go through the model in batches."""
        inputs: list[list[int]] = []
        mask_at: list[int] = []
        for i in positions:
            masked = query_ids[:i] + [self.mask_id] + query_ids[i + 1 :]
            ids: list[int] | None = None
            if self.requery:
                text = self.tokenizer.decode(masked)  # default arguments, as npm.py
                ids = self._tokenize([text], add_special_tokens=True)[0]
                if self.mask_id not in ids:
                    self.stats.requery_fallbacks += 1
                    ids = None
            if ids is None:
                ids = self._head + masked + self._tail
            inputs.append(ids)
            mask_at.append(ids.index(self.mask_id))

        out: list[np.ndarray] = []
        for start in range(0, len(inputs), self.batch_size):
            batch = inputs[start : start + self.batch_size]
            states = self._last_hidden(batch)
            for row, j in zip(states, mask_at[start : start + self.batch_size], strict=True):
                out.append(row[j])
        return np.stack(out, 0)

    def _last_hidden(self, batch: list[list[int]]) -> np.ndarray:
        """One forward pass over right-padded ids; returns hidden_states[-1] as float32."""
        torch = self.torch
        width = max(len(ids) for ids in batch)
        input_ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            attention[row, : len(ids)] = 1
        with torch.inference_mode():
            outputs = self.encoder(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                output_hidden_states=True,
                return_dict=True,
            )
        self.stats.forward_passes += 1
        return outputs.hidden_states[-1].float().cpu().numpy()

    def _tokenize(self, texts: list[str], *, add_special_tokens: bool) -> list[list[int]]:
        if not texts:
            return []
        enc = self.tokenizer(
            texts,
            add_special_tokens=add_special_tokens,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        return [list(map(int, ids)) for ids in enc["input_ids"]]

    def _content_ids(self, text: str) -> list[int]:
        # Same as npm.py's "tokenize with specials, cut at the first </s>, drop <s>" except
        # for a literal "</s>" inside the fact, where the reference would truncate.
        return self._tokenize([text], add_special_tokens=False)[0]

    def _prefix_length(self, query_text: str, query_ids: list[int]) -> int:
        """How many leading ids the prefix took (RoBERTa + "Fact: ": "Fact", ":" = 2)."""
        stem = self.prefix.rstrip()  # the trailing space belongs to the atom's first token
        if not stem:
            return 0
        prefix_ids = self._tokenize([stem], add_special_tokens=False)[0]
        if query_ids[: len(prefix_ids)] == prefix_ids:
            return len(prefix_ids)
        # The tokenizer merged the prefix with the atom: count tokens that start in the stem.
        enc = self.tokenizer(query_text, add_special_tokens=False, return_offsets_mapping=True)
        return sum(1 for start, _ in enc["offset_mapping"] if start < len(stem))

    def _map_markers(self, text: str) -> str:
        for marker, replacement in self._marker_map.items():
            text = text.replace(marker, replacement)
        return text

    def _token_str(self, tid: int) -> str:
        return str(self.tokenizer.convert_ids_to_tokens(int(tid)))

    def _hidden_size(self) -> int:
        config = getattr(self.model, "config", None)
        return int(getattr(config, "hidden_size", 0) or 0)


def retrieval_probabilities(
    queries: np.ndarray,
    gold_ids: Sequence[int],
    passage_ids: np.ndarray,
    passage_vectors: np.ndarray,
) -> list[float]:
    """NPM-single token retrieval mass of each gold id, one query vector per gold id.

    Equals ``sum(exp(s)[ids == g]) / sum(exp(s))`` with ``s = q.H / sqrt(d)``, computed as a
    difference of log-sum-exps so large scores cannot overflow.
    """
    q = np.asarray(queries, dtype=np.float64)
    h = np.asarray(passage_vectors, dtype=np.float64)
    scores = q @ h.T / math.sqrt(h.shape[-1])
    log_total = _logsumexp(scores)
    probs: list[float] = []
    for row, gold, total in zip(scores, gold_ids, log_total, strict=True):
        hit = passage_ids == gold
        if not hit.any():
            probs.append(0.0)  # the reference's explicit "not in passage tokens" branch
            continue
        probs.append(float(np.exp(_logsumexp(row[hit][None, :])[0] - total)))
    return probs


def _logsumexp(x: np.ndarray) -> np.ndarray:
    top = x.max(axis=-1, keepdims=True)
    return (top + np.log(np.exp(x - top).sum(axis=-1, keepdims=True)))[..., 0]
