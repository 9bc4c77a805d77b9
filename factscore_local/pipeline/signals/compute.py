"""The per-fact signals a verifier reads, computed in batches through the cached models.

- ``margin``: the Retrieve→LM prompt (the topic's page searched with ``topic + fact``, top
  ``k`` passages; without a page, the whole index searched with the fact) or the
  no-context prompt, one forward pass each, label-word logits;
- ``np``: the NP scorer on the page's BM25 top ``np_k`` passages, or, with the ``lm-joint``
  scorer, the probability of the fact's tokens read from the Retrieve→LM pass itself (no
  second pass over the evidence);
- ``coverage``: the share of the fact's content words found in its own top-k passages
  (``lexical.py``; no model);
- ``slots``: the slot check of the fact against the same passages (``slots.py``; no model),
  one flag per outcome (``slot_number``, ``slot_year``, ..., ``slot_confirmed``);
- ``rivals``: how far the margin of the fact's best rival exceeds its own (``rivals.py``):
  the rivals are judged as facts of their own, in the same call (their prompts share the
  page's evidence prefix, so each costs its statement's tokens);
- ``head``: a state head's log-odds of supported (``state_head.py``), from the hidden
  state the margin's pass reads at its verdict (no pass of its own);
- ``draw``: a uniform number seeded by (seed, topic, fact), so a random decision does not
  depend on the order of facts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.npm.defaults import JOINT_NP
from factscore_local.pipeline.components import Components
from factscore_local.pipeline.decision.verifiers import Verifier
from factscore_local.pipeline.evidence.blocks import cheaper_per_page, page_blocks, shared_blocks
from factscore_local.pipeline.records.rows import Evidence
from factscore_local.pipeline.signals.lexical import coverage as lexical_coverage
from factscore_local.pipeline.signals.lexical import words_of
from factscore_local.pipeline.signals.rivals import rival_facts, rival_lead
from factscore_local.pipeline.signals.slots import (
    SLOT_FLAGS,
    PassageSlots,
    read_passages,
    slot_flags,
)
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
from factscore_local.runtime.cache import key_of


class FactQuery(NamedTuple):
    title: str  # the topic's page in the index; "": evidence from the whole index
    topic: str  # as the input names it
    atom: str
    group: str = ""  # facts of one group share blocks in the shared-evidence mode
    tier: int = 0  # 1: uses its group's blocks without growing them (a labeled bio's human facts)
    sentence: str = ""  # the sentence the fact was taken from ("" when unknown)
    # The facts decided together (a chunk of bios): in the auto evidence mode each unit
    # chooses a page's kind of block by its own facts, so that verifying many units in one
    # call decides each of them as a call of its own would.
    unit: str = ""


@dataclass
class Signals:
    """Signal arrays (unrounded) and each fact's evidence: its own top-k, and the block it
    was judged against (shared evidence only); with ``read_states``, the hidden state of
    each fact's margin verdict (rows)."""

    values: dict[str, np.ndarray]
    evidence: list[tuple[Evidence, ...] | None]
    blocks: list[tuple | None]
    states: np.ndarray | None = None


def compute_signals(
    verifier: Verifier, queries: list[FactQuery], parts: Components, config: EvalConfig
) -> Signals:
    values: dict[str, np.ndarray] = {}
    evidence: list[tuple[Evidence, ...] | None] = [None] * len(queries)
    blocks: list[tuple | None] = [None] * len(queries)
    states = None
    if verifier.uses_head and not config.read_states:  # the head reads the margin's states
        config = replace(config, read_states=True)
    joint_np = verifier.uses_np and config.np_model_spec == JOINT_NP
    retrieved_margin = verifier.uses_margin and verifier.margin_context != "none"
    if verifier.uses_margin and not retrieved_margin:
        values["margin"], states = no_context_margins(queries, parts, config)
    lexical = verifier.uses_coverage or verifier.uses_slots
    if retrieved_margin or joint_np or lexical:
        hits = _own_passages(queries, parts, config.k, config.retrieval)
        rivals, owners = rival_queries(queries, hits) if verifier.uses_rivals else ([], [])
        hits += _own_passages(rivals, parts, config.k, config.retrieval)
        margins, statement_p, own_passages, evidence, blocks, states = retrieved_margins(
            queries + rivals, parts, config, lexical, retrieved_margin, joint_np, hits
        )
        n = len(queries)
        if verifier.uses_rivals:
            values["rivals"] = np.asarray(rival_lead(margins[:n], margins[n:], owners))
        # The rivals' own margins, evidence and lexical signals are not the facts'.
        margins, statement_p, evidence, blocks = (
            x[:n] for x in (margins, statement_p, evidence, blocks)
        )
        own_passages = OwnPassages(*(x[:n] for x in own_passages))
        states = None if states is None or not retrieved_margin else states[:n]
        if retrieved_margin:
            values["margin"] = margins
        if joint_np:
            values["np"] = statement_p
        if verifier.uses_coverage:
            values["coverage"] = own_passages.coverage
        if verifier.uses_slots:
            for j, kind in enumerate(SLOT_FLAGS):
                values[f"slot_{kind}"] = own_passages.slots[:, j]
    if verifier.uses_np and not joint_np:
        values["np"] = np_values(queries, parts, config)
    if "draw" in verifier.signals:
        values["draw"] = np.asarray(
            [random.Random(key_of(config.seed, q.topic, q.atom)).random() for q in queries]
        )
    if verifier.uses_head:
        if states is None:
            raise ValueError(f"{verifier.name} reads a head on the LM's margin verdicts")
        values["head"] = parts.head.get().score(states)
    return Signals(values, evidence, blocks, states)


RIVAL_TIER = 2  # rivals join their facts' blocks, but never grow them (see shared_blocks)


def rival_queries(queries: list[FactQuery], hits: list) -> tuple[list[FactQuery], list[int]]:
    """The rivals of each fact as queries of their own (``rivals.py``), from the sentences
    of its own top-k passages (``hits``), and the index of the fact each one is a rival of.
    A rival keeps its fact's group and sentence, so it is asked in the fact's own context."""
    out, owners = [], []
    for i, (q, fact_hits) in enumerate(zip(queries, hits, strict=True)):
        passages = [h.passage.clean_text for h in fact_hits]
        for rival in rival_facts(q.atom, q.topic, passages) if q.topic else ():
            out.append(q._replace(atom=rival.fact, tier=RIVAL_TIER))
            owners.append(i)
    return out, owners


def _judged(
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


def no_context_margins(
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
    margins, _, states = _judged(parts, texts, [q.atom for q in queries], config)
    return margins, states


def _own_passages(queries: list[FactQuery], parts: Components, k: int, method: str) -> list:
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


def _judged_on(
    queries: list[FactQuery], hits: list, parts: Components, config: EvalConfig, token_len
) -> list[tuple | None]:
    """The passages each fact is judged against, in page order: a shared block, a segment
    of its page (or, in the auto mode, whichever reads fewer tokens for the page), or None
    (its own hits) in the per-fact mode. A fact without a page (global evidence) shares
    blocks with its group in the page and auto modes too."""
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


class OwnPassages(NamedTuple):
    """What each fact's own top-k passages say of it, without a model (NaN when not asked)."""

    coverage: np.ndarray  # the share of its content words they hold
    slots: np.ndarray  # the slot check's flags, one column per SLOT_FLAGS entry


def retrieved_margins(
    queries: list[FactQuery],
    parts: Components,
    config: EvalConfig,
    lexical: bool = False,
    margin: bool = True,
    joint_np: bool = True,
    hits: list | None = None,
) -> tuple[
    np.ndarray,
    np.ndarray,
    OwnPassages,
    list[tuple[Evidence, ...] | None],
    list[tuple | None],
    np.ndarray | None,
]:
    """Margins and statement probabilities of the Retrieve→LM prompts, with ``lexical``
    each fact's coverage and slot check by its own top-k passages, its own top-k and the
    block it was judged against. With ``fact_context="sentence"``
    the margin is read from the prompts that give the fact's sentence (when ``margin``)
    and the statement probability from those that do not (when ``joint_np``): after its
    sentence a statement's tokens are near certain. An array not asked for is NaN. Last,
    with ``read_states``, the hidden states of the margins' verdicts (else None)."""
    lm = parts.lm.get()
    question, demos = config.verify_question, config.verify_demos
    if hits is None:  # each fact's own top-k, unless the caller retrieved them already
        hits = _own_passages(queries, parts, config.k, config.retrieval)
    token_len = passage_token_counter(lm.lm.tokenize)
    blocks = _judged_on(queries, hits, parts, config, token_len)
    texts, with_sentence, evidence, coverage, slots = [], [], [], [], []
    block_words: dict[tuple, set[str]] = {}  # facts with the same top-k share their words
    block_slots: dict[tuple, PassageSlots] = {}
    for q, fact_hits, block in zip(queries, hits, blocks, strict=True):
        evidence.append(
            tuple(
                Evidence(h.passage.passage_id, h.passage.title, h.rank, round(h.score, 4))
                for h in fact_hits
            )
        )
        if block is not None:
            passages = list(reversed(block))  # written in reverse: page order in the prompt
        elif config.passage_order == "page":
            # retrieve_lm_prompt writes them in reverse: reverse page order here.
            passages = [h.passage for h in sorted(fact_hits, key=lambda h: -h.passage.idx)]
        else:
            passages = [h.passage for h in fact_hits]
        pairs = [(p.title, p.text) for p in passages]
        if lexical:
            # By the fact's own top-k, whatever block it is judged on: a long block holds
            # most words of a page (the own top-k separate better: AUC 0.833 vs 0.829).
            own = [h.passage for h in fact_hits]
            ids = tuple((p.title, p.passage_id) for p in own)
            if ids not in block_words:
                block_words[ids] = words_of((p.title, p.text) for p in own)
                block_slots[ids] = read_passages([p.clean_text for p in own])
            coverage.append(lexical_coverage(q.atom, q.topic, block_words[ids]))
            slots.append(list(slot_flags(q.atom, block_slots[ids], q.topic).values()))
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
        margins, statement_p, states = _judged(parts, texts, atoms, config)
    else:  # one call, so that a page is read once for both kinds of prompt
        n = len(queries)
        margins = statement_p = np.full(n, np.nan)
        judged = (with_sentence if margin else []) + (texts if joint_np else [])
        judged_atoms = (atoms if margin else []) + (atoms if joint_np else [])
        values, probabilities, states = _judged(
            parts, judged, judged_atoms, config, with_sentences=True
        )
        if margin:
            margins = values[:n]
        states = None if states is None or not margin else states[:n]
        if joint_np:
            statement_p = probabilities[-n:]
    n = len(queries)
    own_passages = OwnPassages(
        np.asarray(coverage, float) if lexical else np.full(n, np.nan),
        np.asarray(slots, float).reshape(n, len(SLOT_FLAGS))
        if lexical
        else np.full((n, len(SLOT_FLAGS)), np.nan),
    )
    return margins, statement_p, own_passages, evidence, block_ids, states


def np_values(queries: list[FactQuery], parts: Components, config: EvalConfig) -> np.ndarray:
    """NP of each fact against its page's BM25 top np_k passages (best first), or against
    its group's block of them (page order) in the shared mode."""
    hits = _own_passages(queries, parts, config.np_k, "bm25")
    if config.np_model_spec == "lm":
        tokenize = parts.lm.get().lm.tokenize

        def token_len(p) -> int:
            return len(tokenize(p.text.strip())) + 2

    else:  # no causal LM to count with: ~4 characters a token is close enough for a budget

        def token_len(p) -> int:
            return len(p.text) // 4 + 2

    blocks = _judged_on(queries, hits, parts, config, token_len)
    items = []
    for q, fact_hits, block in zip(queries, hits, blocks, strict=True):
        passages = block if block is not None else [h.passage for h in fact_hits]
        items.append((q.atom, [p.text.strip() for p in passages]))
    return np.asarray(parts.np.get().probabilities(items), float)
