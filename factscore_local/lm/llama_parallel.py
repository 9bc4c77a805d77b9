"""Greedy generation of many prompts at once with llama.cpp: parallel sequences of one
context, one new token of every sequence per forward pass.

On a CPU a single sequence's generation reads all the weights for every token; decoding
16 sequences together reads them once for 16 tokens (on 2 AMD EPYC cores, 42 against 83
tokens/s for the 1.5B model; on real prompts, whose outputs end at different lengths,
1.1-1.4x, `docs/benchmarks/parallel-generation.md`). Prompts share
their common prefix (the instruction and demonstrations), which is evaluated once into
sequence 0 and copied to each slot; a slot that finishes takes the next prompt. Prompts
that share more than that (the decomposition's prompts that retrieved the same
demonstration) share it too: the longer prefix is evaluated once into a group sequence and
copied from there, so each prompt costs its own sentence and its new tokens.

Greedy as ``create_completion(temperature=0, top_k=1)``: the argmax token, stopping at an
end-of-generation token, at ``max_new_tokens``, once a stop string appears, or once a line
is written for the third time (a greedy loop, ``base.loop_end``: the output is cut there
anyway, so the rest need not be generated).

With ``draft`` > 0, each step also proposes up to ``draft`` tokens per sequence by prompt
lookup: the last few tokens written are searched for in the sequence's own prompt (past the
shared prefix) and output, and what followed their latest earlier occurrence is the draft
(atomic facts copy their sentence's words). The pending token and its draft are decoded
together; the draft's tokens are kept while they equal the argmax the model gives before
them, the rest leave the cache. The kept tokens are the greedy ones, so the output is
plain greedy's, decoded in fewer steps (on 2 CPU cores no faster: a step of five tokens
costs about five steps; docs/benchmarks/prompt-lookup.md).

Batching changes llama.cpp's floating-point sums a little, so where two tokens nearly tie
an output can differ from the one-at-a-time generation (a quarter of the 1.5B model's
decompositions differ somewhere; prompt-lookup.md); outputs are cached by prompt, so a
resumed run reuses them.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from factscore_local.lm.base import common_prefix, loop_end


def lookup_draft(context: Sequence[int], size: int, longest: int = 3) -> list[int]:
    """Up to ``size`` tokens that followed the latest earlier occurrence of ``context``'s
    last n tokens (n from ``longest`` down to 1); [] if they occur nowhere before."""
    context = list(context)
    end = len(context)
    for n in range(min(longest, end - 1), 0, -1):
        tail = context[end - n :]
        for i in range(end - n - 1, -1, -1):
            if context[i : i + n] == tail:
                return context[i + n : i + n + size]
    return []


GROUP_SEQUENCES = 8  # group prefixes held at once (least recently used one evicted)
GROUP_MIN_TOKENS = 16  # a shorter extra prefix is evaluated with each prompt instead


def group_lengths(prompts: Sequence[Sequence[int]], shared: int) -> list[int]:
    """For each prompt, how many of its first tokens it shares with another prompt of the
    list (at most its length - 1, so that one token is left to feed); ``shared`` where that
    is less than ``GROUP_MIN_TOKENS`` beyond the prefix all prompts share."""
    order = sorted(range(len(prompts)), key=lambda i: prompts[i])
    best = [shared] * len(prompts)
    for a, b in zip(order, order[1:], strict=False):
        n = common_prefix(prompts[a], prompts[b])
        for i in (a, b):
            best[i] = max(best[i], min(n, len(prompts[i]) - 1))
    return [g if g - shared >= GROUP_MIN_TOKENS else shared for g in best]


@dataclass
class _Slot:
    prompt: int  # index of the prompt it generates for
    pos: int  # position of the last prompt token, then of the pending token
    out: list[int] = field(default_factory=list)
    limit: int = 0  # new tokens allowed


def put_tokens(
    b, at: int, tokens: Sequence[int], first: int, seq: int, logits: Sequence[bool]
) -> int:
    """Write ``tokens`` into the llama_batch ``b`` from slot ``at``: positions from
    ``first``, sequence ``seq``, logits where ``logits`` says. Returns the next free slot."""
    for j, token in enumerate(tokens):
        b.token[at], b.pos[at], b.n_seq_id[at] = token, first + j, 1
        b.seq_id[at][0] = seq
        b.logits[at] = logits[j]
        at += 1
    return at


class ParallelGenerator:
    """A second llama.cpp context on the model of ``llm`` (a ``llama_cpp.Llama``), with
    ``width`` generation slots and sequence 0 holding the shared prefix; ``draft`` tokens
    proposed by prompt lookup per sequence and step (0: none)."""

    def __init__(self, llm, width: int, n_ctx: int, draft: int = 0) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self.lib = llama_cpp
        self.llm = llm
        self.width = width
        self.n_ctx = n_ctx
        self.draft = draft
        # generation batches decoded (one token or more per sequence), draft tokens decoded,
        # and those kept
        self.steps = self.drafted = self.kept = 0
        params = type(llm.context_params).from_buffer_copy(llm.context_params)
        params.n_ctx = n_ctx
        params.n_seq_max = width + 1 + GROUP_SEQUENCES
        params.kv_unified = True  # slots share one cache, sized by what they hold
        self.n_batch = int(params.n_batch)
        self.ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.batch = llama_cpp.llama_batch_init(self.n_batch, 0, width + 1)
        self.memory = llama_cpp.llama_get_memory(self.ctx.ctx)
        self.vocab = llama_cpp.llama_model_get_vocab(llm._model.model)
        self.n_vocab = llm.n_vocab()
        self.prefix: list[int] = []  # what sequence 0 holds
        self.groups: OrderedDict[tuple[int, ...], int] = OrderedDict()  # prefix -> sequence

    def close(self) -> None:
        if self.batch is not None:
            self.lib.llama_batch_free(self.batch)
            self.batch = None
        self.ctx.close()

    def _decode(self, runs: Sequence[tuple[Sequence[int], int, int, int]]) -> list[np.ndarray]:
        """Decode (tokens, first position, sequence, how many last tokens want logits) runs
        in one batch; returns the logits asked for, in order."""
        b, n, wanted = self.batch, 0, []
        for tokens, first, seq, n_logits in runs:
            flags = [j >= len(tokens) - n_logits for j in range(len(tokens))]
            wanted += [n + j for j, flag in enumerate(flags) if flag]
            n = put_tokens(b, n, tokens, first, seq, flags)
        b.n_tokens = n
        if self.lib.llama_decode(self.ctx.ctx, b) != 0:
            raise RuntimeError("llama.cpp could not decode a generation batch (context full?)")
        return [
            np.ctypeslib.as_array(
                self.lib.llama_get_logits_ith(self.ctx.ctx, i), shape=(self.n_vocab,)
            )
            for i in wanted
        ]

    def _feed(self, tokens: Sequence[int], first: int, seq: int) -> np.ndarray | None:
        """Evaluate ``tokens`` into ``seq`` in chunks; the last token's logits."""
        logits = None
        for start in range(0, len(tokens), self.n_batch):
            part = tokens[start : start + self.n_batch]
            last = start + self.n_batch >= len(tokens)
            rows = self._decode([(part, first + start, seq, int(last))])
            logits = rows[0] if rows else logits
        return logits

    def _hold_prefix(self, prefix: list[int]) -> None:
        """Sequence 0 holds exactly ``prefix``, evaluated from an empty sequence."""
        if prefix == self.prefix:
            return
        self.lib.llama_memory_seq_rm(self.memory, 0, -1, -1)
        for seq in self.groups.values():  # built on the old prefix
            self.lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
        self.groups.clear()
        self.prefix = []
        if prefix:
            self._feed(prefix, 0, 0)
        self.prefix = prefix

    def _group_sequence(self, ids: Sequence[int], length: int) -> int:
        """The sequence that holds ``ids[:length]`` (built on sequence 0's prefix, evaluated
        once; the least recently used group gives its sequence up when all are taken)."""
        key = tuple(ids[:length])
        if key in self.groups:
            self.groups.move_to_end(key)
            return self.groups[key]
        if len(self.groups) < GROUP_SEQUENCES:
            seq = self.width + 1 + len(self.groups)
        else:
            _, seq = self.groups.popitem(last=False)
        self.lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
        p = len(self.prefix)
        if p:
            self.lib.llama_memory_seq_cp(self.memory, 0, seq, 0, p)
        self._feed(ids[p:length], p, seq)
        self.groups[key] = seq
        return seq

    def run(
        self,
        prompts: Sequence[list[int]],
        max_new_tokens: int,
        stop: Sequence[str],
        detokenize,
        stop_loops: bool = True,
        on_done: Callable[[int, list[int]], None] | None = None,
    ) -> list[list[int]]:
        """The generated token ids of each prompt (token ids, BOS included where the model
        wants it); ``detokenize`` turns ids into text for the stop strings. ``stop_loops=False``
        generates past a greedy loop (to measure what the loop stop saves). ``on_done(i,
        ids)`` is called as each prompt's output is complete (they end in any order)."""
        if not prompts:
            return []
        shared = min(len(p) for p in prompts) - 1  # every prompt keeps one token to feed
        for p in prompts[1:]:
            shared = min(shared, common_prefix(prompts[0], p))
        self._hold_prefix(list(prompts[0][: max(shared, 0)]))
        grouped = group_lengths(prompts, len(self.prefix))
        # Each slot needs room for its suffix and its new tokens in the shared cache, and
        # the group prefixes for theirs.
        room = max(len(p) - len(self.prefix) + max_new_tokens for p in prompts)
        groups_room = GROUP_SEQUENCES * max(g - len(self.prefix) for g in grouped)
        free = self.n_ctx - len(self.prefix) - groups_room
        width = max(1, min(self.width, free // max(room, 1)))
        results: list[list[int]] = [[] for _ in prompts]
        queue = deque(range(len(prompts)))
        slots: dict[int, _Slot] = {}
        pending: dict[int, int] = {}  # slot -> its next token, not yet decoded

        def take(seq: int, token: int) -> bool:
            """Append ``token`` to the slot's output; False once the slot is done (freed)."""
            slot = slots[seq]
            done = self.lib.llama_vocab_is_eog(self.vocab, token)
            if not done:
                slot.out.append(token)
                text = detokenize(slot.out)
                done = (
                    len(slot.out) >= slot.limit
                    or any(s in text for s in stop)
                    or (stop_loops and loop_end(text) is not None)
                )
            if done:
                results[slot.prompt] = slot.out
                if on_done is not None:
                    on_done(slot.prompt, slot.out)
                del slots[seq]
                pending.pop(seq, None)
                self.lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
            return not done

        def advance(seq: int, rows: Sequence[np.ndarray], draft: Sequence[int]) -> None:
            """Take the greedy tokens of ``rows`` (logits after the pending token and after
            each draft token) while the draft agrees; the first token that differs (or the
            one after the whole draft) becomes the pending one."""
            for j, logits in enumerate(rows):
                token = int(np.argmax(logits))
                if not take(seq, token):
                    return
                if j < len(draft) and token == draft[j]:
                    self.kept += 1
                    continue  # already in the cache, right after the tokens kept so far
                slot = slots[seq]
                slot.pos += j + 1
                if j < len(draft):  # the rest of the draft leaves the cache
                    self.lib.llama_memory_seq_rm(self.memory, seq, slot.pos, -1)
                pending[seq] = token
                return

        while queue or slots:
            for seq in range(1, width + 1):
                if seq in slots or not queue:
                    continue
                i = queue.popleft()
                ids, p = prompts[i], len(self.prefix)
                limit = min(max_new_tokens, self.n_ctx - len(ids) - 1)
                if limit <= 0:  # no room to generate: an empty output
                    if on_done is not None:
                        on_done(i, [])
                    continue
                source = 0
                if grouped[i] > p:
                    source, p = self._group_sequence(ids, grouped[i]), grouped[i]
                self.lib.llama_memory_seq_rm(self.memory, seq, -1, -1)
                if p:
                    self.lib.llama_memory_seq_cp(self.memory, source, seq, 0, p)
                slots[seq] = _Slot(i, len(ids) - 1, limit=limit)
                advance(seq, [self._feed(ids[p:], p, seq)], [])
            if not pending:
                continue
            order = sorted(pending)
            drafts = {s: self._draft_for(prompts[slots[s].prompt], slots[s]) for s in order}
            runs = [([pending[s], *drafts[s]], slots[s].pos, s, 1 + len(drafts[s])) for s in order]
            rows = self._decode(runs)
            self.steps += 1
            self.drafted += sum(map(len, drafts.values()))
            at = 0
            for seq in order:
                n = 1 + len(drafts[seq])
                advance(seq, rows[at : at + n], drafts[seq])
                at += n
        return results

    def _draft_for(self, prompt: Sequence[int], slot: _Slot) -> list[int]:
        """The prompt-lookup draft of a slot, within its token limit."""
        room = slot.limit - len(slot.out)
        if self.draft <= 0 or room <= 0:
            return []
        start = len(self.prefix)
        return lookup_draft([*prompt[start:], *slot.out], min(self.draft, room))
