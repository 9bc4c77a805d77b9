"""One call's shared reads: what the signal providers of a verifier need, each computed
once, on first use, and only when some provider declared it (``NEEDS``).

The Retrieve→LM pass judges the facts and, when the rivals are needed, their rivals in the
same call (a rival's prompt shares its fact's evidence prefix, so each costs its
statement's tokens); the pass is then split into the facts' rows and the rivals' rows,
and the providers read each part by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import cached_property

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.pipeline.components import Components
from factscore_local.pipeline.records.rows import Evidence
from factscore_local.pipeline.signals.as_stated import loose_values_stated
from factscore_local.pipeline.signals.candidates import candidate_facts
from factscore_local.pipeline.signals.passes import (
    NO_RIVALS,
    JudgedPass,
    Rivals,
    as_stated_queries,
    judged_pass,
    no_context_pass,
    np_values,
    own_coverage,
    own_evidence,
    own_passages,
    own_readings,
    own_slot_flags,
    rival_queries,
)
from factscore_local.pipeline.signals.query import FactQuery
from factscore_local.pipeline.signals.rivals import rival_facts

# What a provider may declare it needs (``Provider.needs``).
NEEDS = {
    "own_passages": "the facts' own top-k passages (their evidence; the lexical reads)",
    "judged_margins": "the Retrieve→LM pass's margins",
    "statement_p": "the Retrieve→LM pass's probabilities of the statements' tokens",
    "rivals": "the facts' rivals, judged in the same Retrieve→LM pass as the facts",
    "candidates": "the candidates for the facts' slots, judged in the same pass as the facts",
    "no_context": "the no-context pass's margins",
    "states": "the hidden states of the margin's verdicts (the margin's own pass)",
    "np_scorer": "the NP scorer's pass on its own BM25 passages",
}


class SignalContext:
    """The passes of one ``compute_signals`` call over ``queries``, for providers that
    together declared ``needs``; ``margin_context`` names the margin's pass (``retrieved``:
    the Retrieve→LM pass, ``none``: the no-context pass)."""

    def __init__(
        self,
        queries: list[FactQuery],
        parts: Components,
        config: EvalConfig,
        needs: Iterable[str] = (),
        margin_context: str = "retrieved",
    ) -> None:
        self.needs = frozenset(needs)
        unknown = self.needs - set(NEEDS)
        if unknown:
            raise ValueError(f"unknown need(s) {sorted(unknown)}; known: {', '.join(NEEDS)}")
        if "states" in self.needs and not config.read_states:
            config = replace(config, read_states=True)  # the head reads the margin's states
        self.queries, self.parts, self.config = queries, parts, config
        self.margin_context = margin_context

    # --- the facts' own passages ----------------------------------------------------------
    @cached_property
    def own_hits(self) -> list:
        """Each fact's own top-k hits."""
        return own_passages(self.queries, self.parts, self.config.k, self.config.retrieval)

    @cached_property
    def readings(self) -> list:
        """The slot check's reading of each fact's own top-k (shared by equal top-k)."""
        return own_readings(self.own_hits)

    @cached_property
    def read_queries(self) -> list[FactQuery]:
        """The facts as the LM, NP and the coverage read them: with ``values_as_stated``,
        each loose value in the form its passages state it (``as_stated.py``)."""
        if not self.config.values_as_stated:
            return self.queries
        return as_stated_queries(self.queries, self.readings)

    @cached_property
    def read_hits(self) -> list:
        """Each fact's top-k as read: a fact read in another form (``read_queries``) is
        retrieved again by that form, so that a loose value read as its page states it is
        judged on the passages that form finds, as the fact written so would be."""
        read = self.read_queries
        moved = [i for i, (q, r) in enumerate(zip(self.queries, read, strict=True))
                 if q.atom != r.atom]  # fmt: skip
        if not moved:
            return self.own_hits
        again = own_passages([read[i] for i in moved], self.parts, self.config.k,
                             self.config.retrieval)  # fmt: skip
        hits = list(self.own_hits)
        for i, found in zip(moved, again, strict=True):
            hits[i] = found
        return hits

    @cached_property
    def coverage(self) -> np.ndarray:
        """The share of each fact's content words its top-k hold (as read: a loose
        value without a witness is one word, found where its passages state a value
        meeting it, ``as_stated.loose_values_stated``)."""
        if not self.config.values_as_stated:
            return own_coverage(self.queries, self.own_hits)
        read = self.read_queries
        stripped = [loose_values_stated(q.atom, r)
                    for q, r in zip(read, self.readings, strict=True)]  # fmt: skip
        queries = [q._replace(atom=text) for q, (text, _) in zip(read, stripped, strict=True)]
        return own_coverage(queries, self.read_hits, [counted for _, counted in stripped])

    @cached_property
    def slot_flags(self) -> np.ndarray:
        """The slot check by the own top-k (of the fact as written): one column per
        ``SLOT_FLAGS`` entry."""
        return own_slot_flags(self.queries, self.readings)

    # --- the Retrieve→LM pass -------------------------------------------------------------
    @cached_property
    def rivals(self) -> Rivals:
        """The facts' rivals as queries of their own (none unless ``rivals`` is needed)."""
        if "rivals" not in self.needs:
            return NO_RIVALS
        return self._as_queries(rival_facts)

    @cached_property
    def candidates(self) -> Rivals:
        """The candidates for the facts' slots as queries of their own (``candidates.py``;
        none unless ``candidates`` is needed)."""
        if "candidates" not in self.needs:
            return NO_RIVALS
        return self._as_queries(candidate_facts)

    def _as_queries(self, finder) -> Rivals:
        rivals, owners = rival_queries(self.queries, self.own_hits, finder)
        hits = own_passages(rivals, self.parts, self.config.k, self.config.retrieval)
        return Rivals(rivals, owners, hits)

    @cached_property
    def _judged(self) -> tuple[JudgedPass, JudgedPass, JudgedPass]:
        """The Retrieve→LM pass over the facts, then their rivals, then their candidates, in
        one call (a rival's prompt shares its fact's evidence); split in three."""
        rivals, candidates = self.rivals, self.candidates
        reads_margins = bool({"judged_margins", "rivals", "candidates"} & self.needs) or (
            "states" in self.needs and self.margin_context != "none"
        )
        judged = judged_pass(
            self.read_queries + rivals.queries + candidates.queries,
            self.read_hits + rivals.hits + candidates.hits,
            self.parts,
            self.config,
            margin=reads_margins,
            joint_np="statement_p" in self.needs,
        )
        facts, others = judged.split(len(self.queries))
        return (facts, *others.split(len(rivals.queries)))

    @property
    def judged(self) -> JudgedPass:
        """The facts' rows of the Retrieve→LM pass."""
        return self._judged[0]

    @property
    def rivals_judged(self) -> JudgedPass:
        """The rivals' rows of the same pass (``rivals.owners`` names each one's fact)."""
        return self._judged[1]

    @property
    def candidates_judged(self) -> JudgedPass:
        """The candidates' rows of the same pass (``candidates.owners`` names their facts)."""
        return self._judged[2]

    # --- the other passes -----------------------------------------------------------------
    @cached_property
    def no_context(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The no-context pass's margins and (with ``read_states``) states."""
        return no_context_pass(self.queries, self.parts, self.config)

    @cached_property
    def np_scores(self) -> np.ndarray:
        """The NP scorer's probabilities of the facts."""
        return np_values(self.read_queries, self.parts, self.config)

    @property
    def states(self) -> np.ndarray | None:
        """The states of the margin's verdicts, from the margin's own pass (run if not yet)."""
        if self.margin_context == "none":
            return self.no_context[1]
        return self.judged.states

    # --- what the rows record besides the values ------------------------------------------
    def computed_states(self) -> np.ndarray | None:
        """The margin pass's states if that pass ran (None otherwise: nothing is run)."""
        ran = "no_context" if self.margin_context == "none" else "_judged"
        return self.states if ran in self.__dict__ else None

    def evidence(self) -> list[tuple[Evidence, ...] | None]:
        """Each fact's own top-k if they were read (else None)."""
        if "own_hits" not in self.__dict__:
            return [None] * len(self.queries)
        return list(own_evidence(self.own_hits))

    def read_forms(self) -> list[str | None]:
        """Each fact as the LM, NP and the coverage read it where that is not as written
        (``read_queries``), else None; all None if no pass read them."""
        if "read_queries" not in self.__dict__:
            return [None] * len(self.queries)
        return [None if r.atom == q.atom else r.atom
                for q, r in zip(self.queries, self.read_queries, strict=True)]  # fmt: skip

    def blocks(self) -> list[tuple | None]:
        """The passage ids of the block each fact was judged on, if it was (else None)."""
        if "_judged" not in self.__dict__:
            return [None] * len(self.queries)
        return list(self.judged.blocks)
