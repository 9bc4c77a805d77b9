"""The signal providers (``pipeline/signals/providers.py``): a new signal is one class, each
provider writes exactly the keys it declares, and a pass nobody needs is never run. Unit
tests: fake parts, no model and no data."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from factscore_local.config import EvalConfig
from factscore_local.declarations.features import SIGNAL_KEYS
from factscore_local.declarations.verifiers import Thresholds, Verifier, get_verifier
from factscore_local.index.reader import Hit, Passage
from factscore_local.pipeline.records.rows import FactResult
from factscore_local.pipeline.signals.compute import FactQuery, compute_signals
from factscore_local.pipeline.signals.context import SignalContext
from factscore_local.pipeline.signals.providers import PROVIDERS, Provider, register

TOPIC = "Ra Jong-yil"
PAGE = [
    "Ra Jong-yil is a former South Korean diplomat. He studied at the University of Cambridge.",
    "Ra served as the ambassador to the United Kingdom from 2001 and as the ambassador to "
    "Japan from 2003. He lives in Seoul.",
]
FACTS = ["Ra Jong-yil served as the ambassador to Japan.", "Ra Jong-yil is a diplomat."]


class Untouchable:
    """A model that fails the test if anything loads it."""

    def __init__(self, what: str) -> None:
        self.what = what

    def get(self):
        raise AssertionError(f"the {self.what} was loaded, though no provider needs it")


class FakeKnowledge:
    """The page as two passages, every search answering both (best first)."""

    def __init__(self) -> None:
        self.searches = 0
        self.passages = [Passage(i, TOPIC, i, text) for i, text in enumerate(PAGE)]

    def search_page(self, title: str, query: str, k: int, method: str) -> list[Hit]:
        self.searches += 1
        return [Hit(p, 1.0 / (1 + p.idx), p.idx + 1) for p in self.passages[:k]]

    def search(self, query: str, k: int) -> list[Hit]:  # the whole index (no page)
        return self.search_page("", query, k, "bm25")

    search_dense = search

    def get_passages(self, title: str) -> list[Passage]:
        return list(self.passages)


class FakeLM:
    """Judges a prompt by its length: margin 1 for the first, decreasing; records calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.lm = SimpleNamespace(tokenize=lambda text: text.split())

    def chat(self, text: str) -> str:
        return text

    def judge(self, prompts, prefixes, atoms, answers, bases=None):
        self.calls.append(list(atoms))
        return [(1.0 - 0.1 * i, 0.0, 0.5) for i, _ in enumerate(prompts)]

    def judge_states(self, prompts, prefixes, atoms, answers, bases=None):
        return [np.full(3, float(i)) for i, _ in enumerate(prompts)]


def lazy(value):
    return SimpleNamespace(get=lambda: value)


def parts(lm=None, np_scorer=None, head=None, knowledge=None):
    return SimpleNamespace(
        knowledge=knowledge or FakeKnowledge(),
        lm=lazy(lm) if lm else Untouchable("LM"),
        np=lazy(np_scorer) if np_scorer else Untouchable("NP scorer"),
        head=lazy(head) if head else Untouchable("head"),
    )


def queries() -> list[FactQuery]:
    return [FactQuery(TOPIC, TOPIC, fact) for fact in FACTS]


CONFIG = EvalConfig(index=Path("no-index"), evidence="per-fact")


class OwnPassageCount(Provider):
    """A toy signal: how many of the fact's own top-k passages name its first word."""

    name, writes, needs = "toy_count", ("toy_count",), frozenset({"own_passages"})

    def compute(self, context: SignalContext) -> dict[str, np.ndarray]:
        counts = [
            sum(q.atom.split()[0] in h.passage.text for h in hits)
            for q, hits in zip(context.queries, context.own_hits, strict=True)
        ]
        return {"toy_count": np.asarray(counts, float)}


@pytest.fixture
def toy_signal():
    """The toy provider registered for one test (and its signal's keys declared)."""
    provider = register(OwnPassageCount())
    yield provider
    del PROVIDERS[provider.name], SIGNAL_KEYS[provider.name]


def test_a_new_signal_is_one_provider_class(toy_signal):
    rule = Verifier("toy-rule", ("toy_count",), lambda v, t: v["toy_count"] >= 2)
    signals = compute_signals(rule, queries(), parts(), CONFIG)  # no model at all
    assert signals.values["toy_count"].tolist() == [2.0, 2.0]
    assert rule.value_keys == ("toy_count",)
    assert rule.decide(signals.values, Thresholds(), 2).tolist() == [True, True]
    assert signals.evidence[0] and signals.blocks == [None, None]  # own passages, no pass
    # The rows record it like any other value, and read it back.
    fact = FactResult(FACTS[0], True, values={"toy_count": 2.0}, evidence=signals.evidence[0])
    assert fact.to_json()["toy_count"] == 2.0
    assert FactResult.from_json(fact.to_json()) == fact


def test_a_provider_of_a_known_signal_writes_its_declared_keys():
    class WrongSlots(OwnPassageCount):
        name = "slots"

    with pytest.raises(ValueError, match="signal 'slots' writes slot_number"):
        register(WrongSlots())
    assert [type(p).__name__ for p in PROVIDERS["slots"]] == ["SlotFlags"]


@pytest.mark.parametrize(
    "provider", [p for variants in PROVIDERS.values() for p in variants], ids=type
)
def test_each_provider_writes_what_it_declares(provider):
    head = SimpleNamespace(score=lambda states: states[:, 0] - 1.0)
    np_scorer = SimpleNamespace(probabilities=lambda items: [0.25] * len(items))
    context_of = "none" if type(provider).__name__ == "NoContextMargin" else "retrieved"
    context = SignalContext(
        queries(), parts(FakeLM(), np_scorer, head), CONFIG, provider.needs, context_of
    )
    written = provider.compute(context)
    assert tuple(written) == provider.writes == SIGNAL_KEYS[provider.name]
    assert all(np.shape(v) == (len(FACTS),) for v in written.values())


def test_coverage_alone_runs_no_model():
    rule = Verifier("coverage-only", ("coverage", "slots"), lambda v, t: v["coverage"] > 0.5)
    signals = compute_signals(rule, queries(), parts(), CONFIG)
    assert set(signals.values) == {"coverage", *SIGNAL_KEYS["slots"]}
    assert signals.values["coverage"].tolist() == [1.0, 1.0]
    assert signals.states is None


def test_the_no_context_margin_reads_no_passages():
    knowledge, lm = FakeKnowledge(), FakeLM()
    signals = compute_signals(
        get_verifier("no-context-lm"), queries(), parts(lm, knowledge=knowledge), CONFIG
    )
    assert knowledge.searches == 0 and len(lm.calls) == 1
    assert signals.values["margin"].tolist() == [1.0, 0.9] and signals.evidence == [None, None]


def test_rivals_are_judged_in_the_facts_pass_and_kept_apart():
    """The margin, NP and the rivals read one Retrieve→LM call over the facts and then
    their rivals; the facts' values and rows hold the facts alone."""
    lm = FakeLM()
    rule = Verifier("rivals", ("margin", "np", "rivals"), lambda v, t: v["margin"] > 0)
    signals = compute_signals(rule, queries(), parts(lm), CONFIG)
    rival = "Ra Jong-yil served as the ambassador to the United Kingdom."
    assert lm.calls == [[*FACTS, rival]]
    assert signals.values["margin"].tolist() == [1.0, 0.9]
    # The rival (margin 0.8) does not beat the first fact (1.0); the second has none.
    assert signals.values["rivals"].tolist() == [0.0, 0.0]
    assert len(signals.evidence) == len(signals.blocks) == 2


def test_the_head_reads_the_states_of_the_margins_pass():
    lm, head = FakeLM(), SimpleNamespace(score=lambda states: states[:, 0] * 2)
    rule = Verifier("head-only", ("margin", "head"), lambda v, t: v["head"] > 0)
    signals = compute_signals(rule, queries(), parts(lm, head=head), CONFIG)
    assert len(lm.calls) == 1  # read_states on: the same pass gives margins and states
    assert signals.values["head"].tolist() == [0.0, 2.0]
    assert signals.states is not None and signals.states.shape == (2, 3)


def test_a_fact_read_in_another_form_is_judged_on_the_hits_of_that_form():
    """A loose value read as its page states it is retrieved again by the read form, so
    the LM reads the passages that form finds (those of the fact written so)."""

    class Recording(FakeKnowledge):
        def __init__(self) -> None:
            super().__init__()
            self.queries: list[str] = []

        def search_page(self, title: str, query: str, k: int, method: str) -> list[Hit]:
            self.queries.append(query)
            return super().search_page(title, query, k, method)

    knowledge, lm = Recording(), FakeLM()
    loose = "Ra Jong-yil served as the ambassador to Japan around 2003."
    rule = Verifier("margin-only", ("margin",), lambda v, t: v["margin"] > 0)
    config = EvalConfig(index=Path("no-index"), evidence="per-fact", values_as_stated=True)
    query = [FactQuery(TOPIC, TOPIC, loose), FactQuery(TOPIC, TOPIC, FACTS[1])]
    signals = compute_signals(rule, query, parts(lm, knowledge=knowledge), config)
    read = "Ra Jong-yil served as the ambassador to Japan in 2003."
    assert signals.read_as == [read, None]
    assert lm.calls == [[read, FACTS[1]]]
    # one search per fact as written, then one more by the read form (the topic first)
    assert knowledge.queries == [f"{TOPIC} {fact}" for fact in (loose, FACTS[1], read)]
