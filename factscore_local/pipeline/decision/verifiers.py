"""The verifiers: what each one needs per fact and how it decides. One entry per verifier.

A verifier reads *signals*, values the estimator computes and records for every fact:

- ``margin``: logit(True) - logit(False) of the local LM, with the retrieved passages as
  evidence (``margin_context="retrieved"``) or with none (``"none"``);
- ``np``: the nonparametric probability of the fact given the retrieved passages;
- ``coverage``: the share of the fact's content words found in its retrieved passages;
- ``slots``: whether its passages confirm the fact's years, numbers, nationalities and
  occupations (1), give other values of their type (-1, a conflict; -2 when the conflict
  is a number, -3 a year, -4 a nationality the fact gives the topic against its lead
  sentence, -5 a place the passages replace in the fact's frame) or neither (0);
- ``rivals``: how far the margin of the fact's best rival (the fact with a place, person
  or work swapped for another its closest sentences name; ``rivals.py``) exceeds its own;
- ``head``: the log-odds of supported that a state head (``state_head.py``) reads from
  the verdict's hidden state in the margin's pass;
- ``draw``: a uniform number seeded by (seed, topic, fact), for the random baseline.

Its rule turns signal arrays and thresholds into decisions, vectorised, so the same rule
decides a fact in ``fscore eval``, re-decides recorded facts (``--settings``), and is
searched over by calibration. A new verifier, a fitted rule or another evidence mode is one
``register`` call.

``retrieve-lm+np-fitted`` is such a fitted rule: a logistic model over the margin, NP and
their product (``RULE_FEATURES``), fitted on human labels by ``fscore calibrate`` and
applied from its settings file; without fitted weights it decides as the paper's ensemble.
``retrieve-lm+np+coverage-fitted`` adds the coverage, and
``retrieve-lm+np+coverage+slots-fitted`` the slot check too;
``retrieve-lm+np+coverage+slots+number-veto-fitted`` rejects outright a fact whose number
its passages contradict, ``retrieve-lm+np+coverage+slots+number-year-veto-fitted`` one
whose number or year they contradict, and
``retrieve-lm+np+coverage+slots+number-year-place-veto-fitted`` also one whose place they
replace in the fact's own frame (``place_frames.py``; the embedded 1.5B model's default,
with shipped weights in ``data/model-defaults.json``);
``retrieve-lm+np+coverage+slots+slot-veto-fitted`` vetoes a nationality that contradicts
the topic's lead sentence beside numbers and years, and
``retrieve-lm+np+coverage+slots+rivals+number-year-veto-fitted`` weighs the rival lead
beside the default's features (opt-in: each rival costs a tail).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from factscore_local.pipeline.signals.slots import (
    NATIONALITY_CONFLICT,
    NUMBER_CONFLICT,
    PLACE_CONFLICT,
    YEAR_CONFLICT,
)

SIGNALS = ("margin", "np", "coverage", "slots", "rivals", "head", "draw")
THRESHOLD_SIGNAL = {"margin": "margin", "np": "np"}  # threshold name -> the signal it cuts
FITTED = "weights"  # a rule's fitted weights, calibrated as a whole (not a cut of a signal)
MARGIN_CONTEXTS = ("retrieved", "none")


def _conflict_of(*codes: float) -> Callable[[Mapping[str, np.ndarray]], np.ndarray]:
    """A feature: 1 where the slots signal is one of these conflict codes."""
    return lambda s: np.isin(np.asarray(s["slots"]), codes).astype(float)


# What a fitted rule can weigh: name -> its value from the signal arrays.
FEATURES: dict[str, Callable[[Mapping[str, np.ndarray]], np.ndarray]] = {
    "margin": lambda s: s["margin"],
    "np": lambda s: s["np"],
    "margin*np": lambda s: s["margin"] * s["np"],
    "coverage": lambda s: s["coverage"],
    "slot conflict": lambda s: (np.asarray(s["slots"]) < 0).astype(float),
    "slot confirmed": lambda s: (np.asarray(s["slots"]) > 0).astype(float),
    "rival lead": lambda s: s["rivals"],
    "head": lambda s: s["head"],
    "number conflict": _conflict_of(NUMBER_CONFLICT),
    "number or year conflict": _conflict_of(NUMBER_CONFLICT, YEAR_CONFLICT),
    "number, year or nationality conflict": _conflict_of(
        NUMBER_CONFLICT, YEAR_CONFLICT, NATIONALITY_CONFLICT
    ),
    "number, year or place conflict": _conflict_of(NUMBER_CONFLICT, YEAR_CONFLICT, PLACE_CONFLICT),
}
RULE_FEATURES = ("margin", "np", "margin*np")  # retrieve-lm+np-fitted's


@dataclass(frozen=True)
class Thresholds:
    margin: float = 0.0  # supported when margin > this
    np: float = 0.3  # supported when np > this
    # A fitted rule's weights: the bias, then one per RULE_FEATURES entry; supported when
    # bias + sum(weight * feature) > 0. Empty: not fitted.
    weights: tuple[float, ...] = ()


Rule = Callable[[Mapping[str, np.ndarray], Thresholds], np.ndarray | bool]


def rule_score(
    signals: Mapping[str, np.ndarray],
    weights: tuple[float, ...],
    features: tuple[str, ...] = RULE_FEATURES,
) -> np.ndarray:
    """A fitted rule's linear score (the log-odds of supported, shifted by its cutoff)."""
    if len(weights) != 1 + len(features):
        raise ValueError(f"a fitted rule has {1 + len(features)} weights (bias, "
                         f"{', '.join(features)}); got {len(weights)}")  # fmt: skip
    values = [np.asarray(FEATURES[f](signals), float) for f in features]
    return weights[0] + sum(w * x for w, x in zip(weights[1:], values, strict=True))


@dataclass(frozen=True)
class FittedRule:
    """A logistic rule over ``features``; before it is fitted, the paper's ensemble. A fact
    whose ``veto`` feature (a FEATURES name) is 1 is not supported, whatever its score."""

    features: tuple[str, ...]
    veto: str | None = None

    def _vetoed(self, s: Mapping[str, np.ndarray]) -> np.ndarray | bool:
        return False if self.veto is None else np.asarray(FEATURES[self.veto](s)) >= 1

    def score(self, s: Mapping[str, np.ndarray], weights: tuple[float, ...]) -> np.ndarray:
        """The fitted score, -inf where the veto applies: supported where it is above 0
        (analyses that move the cut read it)."""
        return np.where(self._vetoed(s), -np.inf, rule_score(s, weights, self.features))

    def __call__(self, s: Mapping[str, np.ndarray], t: Thresholds) -> np.ndarray:
        if t.weights:
            return self.score(s, t.weights) > 0
        return (s["margin"] > t.margin) & (s["np"] > t.np) & ~np.asarray(self._vetoed(s))


def fitted_rule(features: tuple[str, ...], veto: str | None = None) -> Rule:
    """A FittedRule over ``features``, with a ``veto`` feature or none."""
    return FittedRule(tuple(features), veto)


@dataclass(frozen=True)
class Verifier:
    name: str
    signals: tuple[str, ...]  # what it reads per fact
    rule: Rule
    thresholds: tuple[str, ...] = ()  # the Thresholds fields its rule reads (calibrated)
    margin_context: str = "retrieved"
    description: str = ""
    features: tuple[str, ...] = ()  # a fitted rule's (FEATURES names), in weight order

    def __post_init__(self) -> None:
        unknown = set(self.signals) - set(SIGNALS)
        if unknown:
            raise ValueError(f"verifier {self.name!r}: unknown signal(s) {sorted(unknown)}")
        if set(self.thresholds) - {*THRESHOLD_SIGNAL, FITTED}:
            raise ValueError(f"verifier {self.name!r}: thresholds are margin, np or weights")
        if set(self.features) - set(FEATURES):
            raise ValueError(f"verifier {self.name!r}: features are among {sorted(FEATURES)}")
        if self.margin_context not in MARGIN_CONTEXTS:
            raise ValueError(f"verifier {self.name!r}: margin_context is one of {MARGIN_CONTEXTS}")

    @property
    def uses_margin(self) -> bool:
        return "margin" in self.signals

    @property
    def uses_np(self) -> bool:
        return "np" in self.signals

    @property
    def uses_coverage(self) -> bool:
        return "coverage" in self.signals

    @property
    def uses_slots(self) -> bool:
        return "slots" in self.signals

    @property
    def uses_rivals(self) -> bool:
        return "rivals" in self.signals

    @property
    def uses_head(self) -> bool:
        return "head" in self.signals

    @property
    def needs_evidence(self) -> bool:
        retrieved = self.uses_margin and self.margin_context == "retrieved"
        return self.uses_np or self.uses_coverage or self.uses_slots or retrieved

    def decide(
        self, signals: Mapping[str, np.ndarray], thresholds: Thresholds, n: int
    ) -> np.ndarray:
        """Decisions (True = supported) for n facts from their signal arrays."""
        decided = np.asarray(self.rule(signals, thresholds), dtype=bool)
        return np.broadcast_to(decided, (n,)).copy()


def state_pass(verifier: Verifier) -> Verifier:
    """The verifier's signals less the head's, the margin included, deciding nothing of
    use: the pass that reads the states a head is trained on (``fscore calibrate --head``)."""
    signals = tuple(dict.fromkeys(("margin", *verifier.signals)))
    return Verifier(
        verifier.name, tuple(s for s in signals if s != "head"), lambda s, t: True,
        margin_context=verifier.margin_context,
    )  # fmt: skip


_REGISTRY: dict[str, Verifier] = {}


def register(verifier: Verifier, replace: bool = False) -> Verifier:
    if verifier.name in _REGISTRY and not replace:
        raise ValueError(f"a verifier named {verifier.name!r} is already registered")
    _REGISTRY[verifier.name] = verifier
    return verifier


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def get_verifier(name: str) -> Verifier:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown verifier {name!r}; choose from {', '.join(verifier_names())}"
        ) from None


def verifier_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


# --- the paper's verifiers and baselines ------------------------------------------------
register(
    Verifier(
        "retrieve-lm",
        ("margin",),
        lambda s, t: s["margin"] > t.margin,
        ("margin",),
        description="the LM's True/False on the topic's retrieved passages",
    )
)
register(
    Verifier(
        "no-context-lm",
        ("margin",),
        lambda s, t: s["margin"] > t.margin,
        ("margin",),
        margin_context="none",
        description="the LM's True/False with no evidence",
    )
)
register(
    Verifier(
        "np",
        ("np",),
        lambda s, t: s["np"] > t.np,
        ("np",),
        description="the nonparametric probability of the fact given the passages",
    )
)
register(
    Verifier(
        "retrieve-lm+np",
        ("margin", "np"),
        # The paper's ensemble: supported only if both say so.
        lambda s, t: (s["margin"] > t.margin) & (s["np"] > t.np),
        ("margin", "np"),
        description="retrieve-lm and np must both say supported",
    )
)
register(
    Verifier(
        "retrieve-lm+np-fitted",
        ("margin", "np"),
        fitted_rule(RULE_FEATURES),
        (FITTED,),
        description="a logistic rule over margin and NP fitted by 'fscore calibrate' "
        "(before fitting: as retrieve-lm+np)",
        features=RULE_FEATURES,
    )
)
COVERAGE_RULE_FEATURES = (*RULE_FEATURES, "coverage")
register(
    Verifier(
        "retrieve-lm+np+coverage-fitted",
        ("margin", "np", "coverage"),
        fitted_rule(COVERAGE_RULE_FEATURES),
        (FITTED,),
        description="a logistic rule over margin, NP and the fact's lexical coverage by "
        "its passages, fitted by 'fscore calibrate' (before fitting: as retrieve-lm+np)",
        features=COVERAGE_RULE_FEATURES,
    )
)
SLOTS_RULE_FEATURES = (*COVERAGE_RULE_FEATURES, "slot conflict", "slot confirmed")


RIVALS_RULE_FEATURES = (*SLOTS_RULE_FEATURES, "rival lead")


def _slots_rule(
    name: str,
    description: str,
    veto: str | None = None,
    rivals: bool = False,
    head: bool = False,
) -> Verifier:
    """A logistic rule over SLOTS_RULE_FEATURES (and the rival lead, or the state head's
    score), with a veto feature or none."""
    features = SLOTS_RULE_FEATURES + ("rival lead",) * rivals + ("head",) * head
    signals = ("margin", "np", "coverage", "slots") + ("rivals",) * rivals + ("head",) * head
    return register(
        Verifier(
            name,
            signals,
            fitted_rule(features, veto=veto),
            (FITTED,),
            description=description,
            features=features,
        )
    )


_slots_rule(
    "retrieve-lm+np+coverage+slots-fitted",
    "the coverage rule plus the slot check (are the fact's years, numbers, nationalities "
    "and occupations stated by its passages, or other values of their type?), fitted by "
    "'fscore calibrate' (before fitting: as retrieve-lm+np)",
)
NUMBER_VETO_RULE = _slots_rule(
    "retrieve-lm+np+coverage+slots+number-veto-fitted",
    "the slots rule, and a fact whose number (an amount or a count) its passages "
    "contradict is not supported whatever its score (the LM lets changed amounts through "
    "most often; the human labels hold too few to weigh them)",
    veto="number conflict",
).name
NUMBER_YEAR_VETO_RULE = _slots_rule(
    "retrieve-lm+np+coverage+slots+number-year-veto-fitted",
    "the number-veto rule, and a fact whose year its passages contradict is not supported "
    "either (a year the page gives another event included)",
    veto="number or year conflict",
).name
SLOT_VETO_RULE = _slots_rule(
    "retrieve-lm+np+coverage+slots+slot-veto-fitted",
    "the number-and-year-veto rule, and a fact that gives the topic a nationality its "
    "passages contradict is not supported either",
    veto="number, year or nationality conflict",
).name
PLACE_VETO_RULE = _slots_rule(
    "retrieve-lm+np+coverage+slots+number-year-place-veto-fitted",
    "the number-and-year-veto rule, and a fact whose place its passages replace in the "
    "fact's own frame ('a lawyer in Illinois' against 'a lawyer in Ohio') is not supported "
    "either",
    veto="number, year or place conflict",
).name
RIVALS_RULE = _slots_rule(
    "retrieve-lm+np+coverage+slots+rivals+number-year-veto-fitted",
    "the number-and-year-veto rule, weighing also how far the LM prefers a rival of the "
    "fact (a place, person or work swapped for another that its closest sentences name)",
    veto="number or year conflict",
    rivals=True,
).name
HEAD_RULE = _slots_rule(
    "retrieve-lm+np+coverage+slots+head+number-year-place-veto-fitted",
    "the default's rule (numbers, years and places vetoed), weighing also a state head's "
    "score (a model over the LM's hidden state at its verdict, trained on human labels; "
    "'fscore calibrate --head')",
    veto="number, year or place conflict",
    head=True,
).name
register(Verifier("always-supported", (), lambda s, t: True, description="baseline"))
register(Verifier("always-not-supported", (), lambda s, t: False, description="baseline"))
register(
    Verifier(
        "random",
        ("draw",),
        lambda s, t: s["draw"] < 0.5,
        description="baseline: a coin seeded by (seed, topic, fact)",
    )
)
