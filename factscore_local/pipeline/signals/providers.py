"""The signal providers: one small class per signal (or per way of computing one), naming
the value keys it writes and the passes it needs (``context.NEEDS``), declared as data.

``compute_signals`` collects the providers of a verifier's signals, builds one
``SignalContext`` for all of them (so each pass runs once, and only when needed) and merges
what they write into one values mapping. Adding a signal is one class registered here
(``register``: its keys join the value keys the rows record) and one test.

Providers run in the order they are registered: the margin's pass, the rivals (judged in
the Retrieve→LM pass), NP, the lexical reads, the draw, and last the head, which reads the
margin pass's states.
"""

from __future__ import annotations

import random
from typing import ClassVar

import numpy as np

from factscore_local.config import EvalConfig
from factscore_local.declarations.features import declare_signal
from factscore_local.declarations.verifiers import Verifier
from factscore_local.npm.defaults import JOINT_NP
from factscore_local.pipeline.signals.context import NEEDS, SignalContext
from factscore_local.pipeline.signals.rivals import rival_lead
from factscore_local.pipeline.signals.slots import SLOT_FLAGS
from factscore_local.runtime.cache import key_of

Written = dict[str, np.ndarray]


class Provider:
    """A signal's provider: ``name`` (the signal the rules read), ``writes`` (the value
    keys ``compute`` returns, exactly) and ``needs`` (what it reads of the context)."""

    name: ClassVar[str]
    writes: ClassVar[tuple[str, ...]]
    needs: ClassVar[frozenset[str]] = frozenset()

    def applies(self, verifier: Verifier, config: EvalConfig) -> bool:
        """Whether this provider computes the signal for a verifier and config (a signal
        with several providers takes the first that applies)."""
        return True

    def compute(self, context: SignalContext) -> Written:
        """The values it writes, one array per key of ``writes``."""
        raise NotImplementedError


class RetrievedMargin(Provider):
    """The margin of the Retrieve→LM prompt (the fact's passages as evidence)."""

    name, writes, needs = "margin", ("margin",), frozenset({"judged_margins"})

    def applies(self, verifier: Verifier, config: EvalConfig) -> bool:
        return verifier.margin_context != "none"

    def compute(self, context: SignalContext) -> Written:
        return {"margin": context.judged.margins}


class NoContextMargin(Provider):
    """The margin of the no-context prompt."""

    name, writes, needs = "margin", ("margin",), frozenset({"no_context"})

    def applies(self, verifier: Verifier, config: EvalConfig) -> bool:
        return verifier.margin_context == "none"

    def compute(self, context: SignalContext) -> Written:
        return {"margin": context.no_context[0]}


class RivalLead(Provider):
    """How far the margin of the fact's best rival exceeds its own (0 when none does)."""

    name, writes = "rivals", ("rivals",)
    needs = frozenset({"judged_margins", "rivals"})

    def compute(self, context: SignalContext) -> Written:
        lead = rival_lead(
            context.judged.margins, context.rivals_judged.margins, context.rivals.owners
        )
        return {"rivals": np.asarray(lead)}


class CandidateLead(Provider):
    """How far the margin of the best candidate for one of the fact's slots exceeds its own
    (0 when none does; ``candidates.py``)."""

    name, writes = "candidates", ("candidates",)
    needs = frozenset({"judged_margins", "candidates"})

    def compute(self, context: SignalContext) -> Written:
        lead = rival_lead(context.judged.margins, context.candidates_judged.margins,
                          context.candidates.owners)  # fmt: skip
        return {"candidates": np.asarray(lead)}


class JointNP(Provider):
    """NP as the probability of the fact's tokens read from the Retrieve→LM pass itself."""

    name, writes, needs = "np", ("np",), frozenset({"statement_p"})

    def applies(self, verifier: Verifier, config: EvalConfig) -> bool:
        return config.np_model_spec == JOINT_NP

    def compute(self, context: SignalContext) -> Written:
        return {"np": context.judged.statement_p}


class ScorerNP(Provider):
    """NP from the NP scorer on the page's BM25 top ``np_k`` passages."""

    name, writes, needs = "np", ("np",), frozenset({"np_scorer"})

    def compute(self, context: SignalContext) -> Written:
        return {"np": context.np_scores}


class Coverage(Provider):
    """The share of the fact's content words found in its own top-k passages."""

    name, writes, needs = "coverage", ("coverage",), frozenset({"own_passages"})

    def compute(self, context: SignalContext) -> Written:
        return {"coverage": context.coverage}


class SlotFlags(Provider):
    """The slot check by the fact's own top-k passages, one flag per outcome."""

    name, needs = "slots", frozenset({"own_passages"})
    writes = tuple(f"slot_{kind}" for kind in SLOT_FLAGS)

    def compute(self, context: SignalContext) -> Written:
        flags = context.slot_flags
        return {key: flags[:, j] for j, key in enumerate(self.writes)}


class Draw(Provider):
    """A uniform number seeded by (seed, topic, fact): independent of the facts' order."""

    name, writes = "draw", ("draw",)

    def compute(self, context: SignalContext) -> Written:
        seed = context.config.seed
        draws = [random.Random(key_of(seed, q.topic, q.atom)).random() for q in context.queries]
        return {"draw": np.asarray(draws)}


class Head(Provider):
    """A state head's log-odds of supported, from the states of the margin's verdicts."""

    name, writes, needs = "head", ("head",), frozenset({"states"})

    def compute(self, context: SignalContext) -> Written:
        states = context.states
        if states is None:
            raise ValueError("the head reads the states of the LM's margin verdicts")
        return {"head": context.parts.head.get().score(states)}


# Signal name -> its providers, in the order they run.
PROVIDERS: dict[str, tuple[Provider, ...]] = {}


def register(provider: Provider) -> Provider:
    """Adds a provider (after the signal's others); a new signal's keys are declared to
    the rules and rows (``features.declare_signal``)."""
    unknown = set(provider.needs) - set(NEEDS)
    if unknown:
        raise ValueError(f"provider of {provider.name!r}: unknown need(s) {sorted(unknown)}")
    declare_signal(provider.name, provider.writes)
    PROVIDERS[provider.name] = (*PROVIDERS.get(provider.name, ()), provider)
    return provider


def providers_for(verifier: Verifier, config: EvalConfig) -> list[Provider]:
    """The providers of a verifier's signals, in registration order."""
    chosen = []
    for name, variants in PROVIDERS.items():
        if name not in verifier.signals:
            continue
        provider = next((p for p in variants if p.applies(verifier, config)), None)
        if provider is None:
            raise ValueError(f"no provider of signal {name!r} applies to {verifier.name!r}")
        chosen.append(provider)
    missing = set(verifier.signals) - set(PROVIDERS)
    if missing:
        raise ValueError(f"verifier {verifier.name!r}: no provider of {sorted(missing)}")
    return chosen


for _provider in (RetrievedMargin(), NoContextMargin(), RivalLead(), JointNP(), ScorerNP(),
                  Coverage(), SlotFlags(), Draw(), Head(), CandidateLead()):  # fmt: skip
    register(_provider)
