"""The passes the signal providers read, each over a batch of facts: the facts' own top-k
passages, their rivals as queries of their own, the Retrieve→LM pass (margins, statement
probabilities, states and the blocks the facts were judged on), the no-context pass, the
lexical reads of the own passages (coverage, slot flags) and the NP scorer's pass.

``context.py`` runs each of them once per call, and only when a provider needs it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.pipeline.components import Components
from factscore_local.pipeline.evidence.blocks import cheaper_per_page, page_blocks, shared_blocks
from factscore_local.pipeline.records.rows import Evidence
from factscore_local.pipeline.signals.as_stated import as_stated
from factscore_local.pipeline.signals.lexical import coverage as lexical_coverage
from factscore_local.pipeline.signals.lexical import words_of
from factscore_local.pipeline.signals.query import FactQuery
from factscore_local.pipeline.signals.rivals import rival_facts
from factscore_local.pipeline.signals.slots import SLOT_FLAGS, PassageSlots, read_passages
from factscore_local.pipeline.signals.slots import slot_flags as passage_slot_flags
from factscore_local.pipeline.signals.verify_prompt import (
    PLAIN_ANSWER,
    QUESTIONS,
    STATEMENT,
    no_context_prompt,
    open_prompt,
    passage_token_counter,
    retrieve_lm_prompt,
    sentence_prefix,
)

RIVAL_TIER = 2  # rivals join their facts' blocks, but never grow them (see shared_blocks)


def own_passages(queries: list[FactQuery], parts: Components, k: int, method: str) -> list:
    """Each fact's top-k hits within its page (query: topic + fact), or, for a fact without
    a page, over the whole index (query: the fact)."""
    ks = parts.knowledge
    whole = ks.search_dense if method == "dense" else ks.search
    return [
        ks.search_page(q.title, f"{q.topic} {q.atom}", k=k, method=method)
        if q.title
        else whole(q.atom, k=k)
        for q in queries
    ]


def own_evidence(hits: list) -> list[tuple[Evidence, ...]]:
    """Each fact's own top-k as its row records them."""
    return [
        tuple(
            Evidence(h.passage.passage_id, h.passage.title, h.rank, round(h.score, 4))
            for h in fact_hits
        )
        for fact_hits in hits
    ]


class Rivals(NamedTuple):
    """The facts' rivals as queries of their own: ``owners[j]`` is the index of the fact
    rival ``j`` is a rival of; ``hits`` their own top-k."""

    queries: list[FactQuery]
    owners: list[int]
    hits: list


NO_RIVALS = Rivals([], [], [])


def rival_queries(
    queries: list[FactQuery], hits: list, finder=rival_facts
) -> tuple[list[FactQuery], list[int]]:
    """The rivals of each fact as queries of their own (``finder``: ``rivals.rival_facts``,
    or ``candidates.candidate_facts``), from the sentences of its own top-k passages
    (``hits``), and the index of the fact each one is a rival of. A rival keeps its fact's
    group and sentence, so it is asked in the fact's own context."""
    out, owners = [], []
    for i, (q, fact_hits) in enumerate(zip(queries, hits, strict=True)):
        passages = [h.passage.clean_text for h in fact_hits]
        for rival in finder(q.atom, q.topic, passages) if q.topic else ():
            out.append(q._replace(atom=rival.fact, tier=RIVAL_TIER))
            owners.append(i)
    return out, owners


def judged_on(
    queries: list[FactQuery], hits: list, parts: Components, config: EvalConfig, token_len
) -> list[tuple | None]:
    """The passages each fact is judged against, in page order: a shared block, a segment
    of its page (or, in the auto mode, whichever reads fewer tokens for the page and the
    facts decided with it, ``FactQuery.unit``), or None (its own hits) in the per-fact
    mode. A fact without a page (global evidence) shares blocks with its group in the page
    and auto modes too."""
    if config.evidence == "per-fact":
        return [None] * len(queries)
    own = [[h.passage for h in fact_hits] for fact_hits in hits]
    blocks = shared_blocks(
        [(q.title, q.topic, q.group) for q in queries],
        own,
        token_len,
        config.evidence_budget,
        [q.tier for q in queries],
    )
    if config.evidence in ("page", "auto"):
        on_page = [i for i, q in enumerate(queries) if q.title]
        titles = [queries[i].title for i in on_page]
        segments = page_blocks(
            titles,
            [own[i] for i in on_page],
            parts.knowledge.get_passages,
            token_len,
            config.evidence_budget,
        )
        if config.evidence == "auto":
            pages = [(queries[i].title, queries[i].unit) for i in on_page]
            segments = cheaper_per_page(pages, [blocks[i] for i in on_page], segments, token_len)
        for i, segment in zip(on_page, segments, strict=True):
            blocks[i] = segment
    return blocks


def judge(
    parts: Components,
    texts: list[str],
    atoms: list[str],
    config: EvalConfig,
    with_sentences: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """logit(True) - logit(False) (or of the question's other answer words) per prompt
    text, the probability of its statement's content tokens and, with ``read_states``, the
    hidden state at its verdict (rows; else None), from one pass; the part
    before the statement is the shared prefix, evaluated once for the prompts that have
    it. ``with_sentences``: the texts give their fact's sentence before the statement, and
    the evidence before it is the prefix's outer level, read once for all sentences."""
    lm = parts.lm.get()
    if config.verify_format == "chat":
        prompts = [lm.chat(text) for text in texts]
    else:
        prompts = [text + PLAIN_ANSWER for text in texts]
    prefixes = [p[: p.rindex(STATEMENT)] for p in prompts]
    bases = [sentence_prefix(p) for p in prompts] if with_sentences else None
    answers = QUESTIONS[config.verify_question][1]
    states = None
    if config.read_states:  # first: the pass that reads the states also yields the rows
        states = np.stack(lm.judge_states(prompts, prefixes, atoms, answers, bases))
    rows = lm.judge(prompts, prefixes, atoms, answers, bases)
    margins = np.asarray([t - f for t, f, _ in rows], float)
    return margins, np.asarray([p for *_, p in rows]), states


def no_context_pass(
    queries: list[FactQuery], parts: Components, config: EvalConfig
) -> tuple[np.ndarray, np.ndarray | None]:
    """Margins of the no-context prompts, and their states (with ``read_states``)."""
    question = config.verify_question
    texts = [
        no_context_prompt(q.topic, q.atom, question)
        if q.topic
        else open_prompt(q.atom, [], question)
        for q in queries
    ]
    margins, _, states = judge(parts, texts, [q.atom for q in queries], config)
    return margins, states


class JudgedPass(NamedTuple):
    """What the Retrieve→LM pass gives per fact: the margin and the statement's probability
    (NaN when not read), the passage ids of the block it was judged on (None: its own
    top-k) and, with ``read_states`` and the margins read, the states of their verdicts."""

    margins: np.ndarray
    statement_p: np.ndarray
    blocks: list[tuple | None]
    states: np.ndarray | None

    def split(self, n: int) -> tuple[JudgedPass, JudgedPass]:
        """The first ``n`` facts' part and the rest's (the rivals judged with them)."""
        states = self.states
        return (
            JudgedPass(self.margins[:n], self.statement_p[:n], self.blocks[:n],
                       None if states is None else states[:n]),
            JudgedPass(self.margins[n:], self.statement_p[n:], self.blocks[n:],
                       None if states is None else states[n:]),
        )  # fmt: skip


def judged_pass(
    queries: list[FactQuery],
    hits: list,
    parts: Components,
    config: EvalConfig,
    margin: bool = True,
    joint_np: bool = True,
) -> JudgedPass:
    """The Retrieve→LM prompts of the facts (their own top-k ``hits``, or the block each is
    judged on), judged in one call. With ``fact_context="sentence"`` the margin is read
    from the prompts that give the fact's sentence (when ``margin``) and the statement
    probability from those that do not (when ``joint_np``): after its sentence a
    statement's tokens are near certain."""
    lm = parts.lm.get()
    question, demos = config.verify_question, config.verify_demos
    token_len = passage_token_counter(lm.lm.tokenize)
    blocks = judged_on(queries, hits, parts, config, token_len)
    texts, with_sentence = [], []
    for q, fact_hits, block in zip(queries, hits, blocks, strict=True):
        if block is not None:
            passages = list(reversed(block))  # written in reverse: page order in the prompt
        elif config.passage_order == "page":
            # retrieve_lm_prompt writes them in reverse: reverse page order here.
            passages = [h.passage for h in sorted(fact_hits, key=lambda h: -h.passage.idx)]
        else:
            passages = [h.passage for h in fact_hits]
        pairs = [(p.title, p.text) for p in passages]
        sentence = q.sentence.strip() if q.topic and config.fact_context == "sentence" else ""
        if q.topic:
            texts.append(retrieve_lm_prompt(q.topic, q.atom, pairs, demos, "", question))
        else:
            texts.append(open_prompt(q.atom, pairs, question))
        with_sentence.append(
            retrieve_lm_prompt(q.topic, q.atom, pairs, demos, sentence, question)
            if sentence
            else texts[-1]
        )
    block_ids = [None if b is None else tuple(p.passage_id for p in b) for b in blocks]
    atoms = [q.atom for q in queries]
    if all(a is b for a, b in zip(with_sentence, texts, strict=True)):
        margins, statement_p, states = judge(parts, texts, atoms, config)
        return JudgedPass(margins, statement_p, block_ids, states if margin else None)
    # One call, so that a page is read once for both kinds of prompt.
    n = len(queries)
    margins = statement_p = np.full(n, np.nan)
    judged = (with_sentence if margin else []) + (texts if joint_np else [])
    judged_atoms = (atoms if margin else []) + (atoms if joint_np else [])
    values, probabilities, states = judge(parts, judged, judged_atoms, config, with_sentences=True)
    if margin:
        margins = values[:n]
    states = None if states is None or not margin else states[:n]
    if joint_np:
        statement_p = probabilities[-n:]
    return JudgedPass(margins, statement_p, block_ids, states)


def own_coverage(
    queries: list[FactQuery], hits: list, values: list[tuple[int, int]] | None = None
) -> np.ndarray:
    """The share of each fact's content words its own top-k passages hold (``lexical.py``).
    By the own top-k, whatever block the fact is judged on: a long block holds most words
    of a page (the own top-k separate better: AUC 0.833 vs 0.829). ``values``: each fact's
    values counted as words besides, (found, not found) (``lexical.coverage``)."""
    words: dict[tuple, set[str]] = {}  # facts with the same top-k share their words
    out = []
    values = values or [(0, 0)] * len(queries)
    for q, fact_hits, counted in zip(queries, hits, values, strict=True):
        own = [h.passage for h in fact_hits]
        ids = tuple((p.title, p.passage_id) for p in own)
        if ids not in words:
            words[ids] = words_of((p.title, p.text) for p in own)
        out.append(lexical_coverage(q.atom, q.topic, words[ids], counted))
    return np.asarray(out, float)


def own_readings(hits: list) -> list[PassageSlots]:
    """The slot check's reading of each fact's own top-k passages (``slots.read_passages``),
    read once for the facts with the same top-k."""
    read: dict[tuple, PassageSlots] = {}
    out = []
    for fact_hits in hits:
        own = [h.passage for h in fact_hits]
        ids = tuple((p.title, p.passage_id) for p in own)
        if ids not in read:
            read[ids] = read_passages([p.clean_text for p in own])
        out.append(read[ids])
    return out


def own_slot_flags(queries: list[FactQuery], readings: list[PassageSlots]) -> np.ndarray:
    """The slot check of each fact by its own top-k passages (``slots.py``; ``readings``:
    ``own_readings``): one row per fact, one column per ``SLOT_FLAGS`` entry."""
    out = [list(passage_slot_flags(q.atom, read, q.topic).values())
           for q, read in zip(queries, readings, strict=True)]  # fmt: skip
    return np.asarray(out, float).reshape(len(queries), len(SLOT_FLAGS))


def as_stated_queries(queries: list[FactQuery], readings: list[PassageSlots]) -> list[FactQuery]:
    """The facts with their loose values written as their passages state them
    (``as_stated.py``): the form the LM, NP and the coverage read."""
    return [q._replace(atom=as_stated(q.atom, q.topic, read)) if q.topic else q
            for q, read in zip(queries, readings, strict=True)]  # fmt: skip


def np_values(queries: list[FactQuery], parts: Components, config: EvalConfig) -> np.ndarray:
    """NP of each fact against its page's BM25 top np_k passages (best first), or against
    its group's block of them (page order) in the shared mode."""
    hits = own_passages(queries, parts, config.np_k, "bm25")
    if config.np_model_spec == "lm":
        tokenize = parts.lm.get().lm.tokenize

        def token_len(p) -> int:
            return len(tokenize(p.text.strip())) + 2

    else:  # no causal LM to count with: ~4 characters a token is close enough for a budget

        def token_len(p) -> int:
            return len(p.text) // 4 + 2

    blocks = judged_on(queries, hits, parts, config, token_len)
    items = []
    for q, fact_hits, block in zip(queries, hits, blocks, strict=True):
        passages = block if block is not None else [h.passage for h in fact_hits]
        items.append((q.atom, [p.text.strip() for p in passages]))
    return np.asarray(parts.np.get().probabilities(items), float)
