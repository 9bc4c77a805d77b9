"""The verifiers: what each one reads per fact and how it decides.

Each rule is declared as data (``data/rules.json``, read by ``rules.py``): a threshold rule
cuts signals (the margin, NP), a fitted rule weighs named features (``features.py``) with
weights fitted on human labels (``fscore calibrate``; shipped per model, by feature name,
in ``data/model-defaults.json``) and vetoes a fact on any of its veto features; the
baselines decide without evidence. ``default`` is the embedded models' rule; ``paper`` is
FActScore's Retrieve→LM + NP ensemble. The names of earlier releases are aliases.

A rule turns value arrays and thresholds into decisions, vectorised, so the same rule
decides a fact in ``fscore eval``, re-decides recorded facts (``--settings``), and is
searched over by calibration. ``register`` adds one made in code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from factscore_local.declarations.features import (
    BIAS,
    FEATURES,
    SIGNAL_KEYS,
    SIGNALS,
    VALUE_KEYS,
    feature_values,
    with_slot_flags,
)
from factscore_local.declarations.rules import CUTS, MARGIN_CONTEXTS, RuleSpec, declared_rules

THRESHOLD_SIGNAL = CUTS  # threshold name -> the signal it cuts
FITTED = "weights"  # a rule's fitted weights, calibrated as a whole (not a cut of a signal)
DEFAULT_RULE = "default"
__all__ = ["DEFAULT_RULE", "FEATURES", "FITTED", "MARGIN_CONTEXTS", "SIGNALS", "VALUE_KEYS",
           "Thresholds", "Verifier", "get_verifier", "list_rules", "verifier_names"]  # fmt: skip


@dataclass(frozen=True)
class Thresholds:
    margin: float = 0.0  # supported when margin > this
    np: float = 0.3  # supported when np > this
    # A fitted rule's weights: the bias, then one per feature in the rule's order;
    # supported when bias + sum(weight * feature) > 0. Empty: not fitted.
    weights: tuple[float, ...] = ()


Rule = Callable[[Mapping[str, np.ndarray], Thresholds], np.ndarray | bool]


def rule_score(
    values: Mapping[str, np.ndarray], weights: Sequence[float], features: Sequence[str]
) -> np.ndarray:
    """A fitted rule's linear score (the log-odds of supported, shifted by its cutoff)."""
    if len(weights) != 1 + len(features):
        raise ValueError(f"a fitted rule has {1 + len(features)} weights ({BIAS}, "
                         f"{', '.join(features)}); got {len(weights)}")  # fmt: skip
    columns = [feature_values(f, values) for f in features]
    return weights[0] + sum(w * x for w, x in zip(weights[1:], columns, strict=True))


@dataclass(frozen=True)
class FittedRule:
    """A logistic rule over ``features``; before it is fitted, the paper's ensemble. A fact
    any of whose ``vetoes`` features is 1 is not supported, whatever its score."""

    features: tuple[str, ...]
    vetoes: tuple[str, ...] = ()

    def vetoed(self, values: Mapping[str, np.ndarray]) -> np.ndarray | bool:
        if not self.vetoes:
            return False
        values = with_slot_flags(values)
        return np.logical_or.reduce([feature_values(v, values) >= 1 for v in self.vetoes])

    def score(self, values: Mapping[str, np.ndarray], weights: Sequence[float]) -> np.ndarray:
        """The fitted score, -inf where a veto applies: supported where it is above 0
        (analyses that move the cut read it)."""
        values = with_slot_flags(values)
        return np.where(self.vetoed(values), -np.inf, rule_score(values, weights, self.features))

    def __call__(self, values: Mapping[str, np.ndarray], t: Thresholds) -> np.ndarray:
        if t.weights:
            return self.score(values, t.weights) > 0
        vetoed = np.asarray(self.vetoed(values))
        return (values["margin"] > t.margin) & (values["np"] > t.np) & ~vetoed


def fitted_rule(features: Sequence[str], vetoes: Sequence[str] = ()) -> FittedRule:
    """A FittedRule over ``features`` (names of ``features.py``), with veto features."""
    return FittedRule(tuple(features), tuple(vetoes))


def _threshold_rule(cuts: tuple[str, ...]) -> Rule:
    def decide(values: Mapping[str, np.ndarray], t: Thresholds) -> np.ndarray:
        return np.logical_and.reduce([values[c] > getattr(t, CUTS[c]) for c in cuts])

    return decide


@dataclass(frozen=True)
class Verifier:
    name: str
    signals: tuple[str, ...]  # what it reads per fact (providers in pipeline/signals/)
    rule: Rule
    thresholds: tuple[str, ...] = ()  # the Thresholds fields its rule reads (calibrated)
    margin_context: str = "retrieved"
    description: str = ""
    features: tuple[str, ...] = ()  # a fitted rule's feature names, in weight order
    vetoes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    listed: bool = False  # shown in --help

    def __post_init__(self) -> None:
        unknown = set(self.signals) - set(SIGNAL_KEYS)  # a provider may declare more
        if unknown:
            raise ValueError(f"verifier {self.name!r}: unknown signal(s) {sorted(unknown)}")
        if set(self.thresholds) - {*THRESHOLD_SIGNAL, FITTED}:
            raise ValueError(f"verifier {self.name!r}: thresholds are margin, np or weights")
        if set(self.features) - set(FEATURES):
            raise ValueError(f"verifier {self.name!r}: features are among {sorted(FEATURES)}")
        if self.margin_context not in MARGIN_CONTEXTS:
            raise ValueError(f"verifier {self.name!r}: margin_context is one of {MARGIN_CONTEXTS}")

    @classmethod
    def from_spec(cls, spec: RuleSpec) -> Verifier:
        """The verifier a declared rule describes."""
        if spec.kind == "threshold":
            rule: Rule = _threshold_rule(spec.cuts)
            thresholds = spec.cuts
        elif spec.kind == "fitted":
            rule, thresholds = fitted_rule(spec.features, spec.vetoes), (FITTED,)
        elif spec.kind == "constant":
            value = spec.value
            rule, thresholds = (lambda s, t: value), ()
        else:
            rule, thresholds = (lambda s, t: s["draw"] < 0.5), ()
        return cls(spec.name, spec.signals, rule, thresholds, spec.margin_context,
                   spec.description, spec.features, spec.vetoes, spec.aliases,
                   spec.listed)  # fmt: skip

    @property
    def value_keys(self) -> tuple[str, ...]:
        """The per-fact value keys its signals write (``features.SIGNAL_KEYS``)."""
        return tuple(key for s in self.signals for key in SIGNAL_KEYS[s])

    @property
    def judges_passages(self) -> bool:
        """Whether its margin is the LM's judgment of the fact on its retrieved passages."""
        return "margin" in self.signals and self.margin_context == "retrieved"

    @property
    def needs_evidence(self) -> bool:
        """Whether it reads the facts' passages (the run's plan names each pass)."""
        return bool({"np", "coverage", "slots"} & set(self.signals)) or self.judges_passages

    def decide(
        self, values: Mapping[str, np.ndarray], thresholds: Thresholds, n: int
    ) -> np.ndarray:
        """Decisions (True = supported) for n facts from their value arrays."""
        decided = np.asarray(self.rule(with_slot_flags(values), thresholds), dtype=bool)
        return np.broadcast_to(decided, (n,)).copy()

    def weights_by_name(self, weights: Sequence[float]) -> dict[str, float]:
        """A fitted rule's weights as a name -> coefficient map (``bias`` first)."""
        names = (BIAS, *self.features)
        if len(weights) != len(names):
            raise ValueError(f"the weights of rule {self.name!r} hold {len(names)} numbers "
                             f"({', '.join(names)}); got {len(weights)}")  # fmt: skip
        return {name: float(w) for name, w in zip(names, weights, strict=True)}

    def weights_from(self, weights: Mapping[str, float] | Sequence[float]) -> tuple[float, ...]:
        """A fitted rule's weights in its own order, from a map keyed by feature name
        (checked: a missing, extra or renamed feature fails) or, as earlier releases
        wrote them, a list in the rule's order (checked by length)."""
        if not isinstance(weights, Mapping):
            return tuple(self.weights_by_name([float(w) for w in weights]).values())
        names = (BIAS, *self.features)
        if set(weights) != set(names):
            raise ValueError(
                f"the weights name {', '.join(sorted(set(weights) - set(names))) or 'nothing'}"
                f" that rule {self.name!r} does not read and lack "
                f"{', '.join(sorted(set(names) - set(weights))) or 'nothing'}; it weighs "
                f"{', '.join(names)}"
            )
        return tuple(float(weights[name]) for name in names)


def state_pass(verifier: Verifier) -> Verifier:
    """The verifier's signals less the head's, the margin included, deciding nothing of
    use: the pass that reads the states a head is trained on (``fscore calibrate --head``)."""
    signals = tuple(dict.fromkeys(("margin", *verifier.signals)))
    return Verifier(
        verifier.name, tuple(s for s in signals if s != "head"), lambda s, t: True,
        margin_context=verifier.margin_context,
    )  # fmt: skip


_REGISTRY: dict[str, Verifier] = {}
_ALIASES: dict[str, str] = {}  # an older name -> the rule's name


def register(verifier: Verifier, replace: bool = False) -> Verifier:
    """Adds a verifier (and its aliases) to the registry."""
    for name in (verifier.name, *verifier.aliases):
        if (name in _REGISTRY or name in _ALIASES) and not replace:
            raise ValueError(f"a verifier named {name!r} is already registered")
    _REGISTRY[verifier.name] = verifier
    _ALIASES.update({alias: verifier.name for alias in verifier.aliases})
    return verifier


def unregister(name: str) -> None:
    verifier = _REGISTRY.pop(name, None)
    for alias in verifier.aliases if verifier else ():
        _ALIASES.pop(alias, None)


def canonical_name(name: str) -> str:
    """A rule's name for one of its names (an alias of an earlier release, say).

    Example:
        >>> canonical_name("retrieve-lm+np")
        'paper'
    """
    return _ALIASES.get(name, name)


def legacy_name(name: str) -> str:
    """The name an earlier release gave a rule (its first alias; else its name): what the
    benchmarks' records key their figures by.

    Example:
        >>> legacy_name("default")
        'retrieve-lm+np+coverage+slots+number-year-place-veto-fitted'
    """
    verifier = get_verifier(name)
    return verifier.aliases[0] if verifier.aliases else verifier.name


def get_verifier(name: str) -> Verifier:
    """The verifier a name (or an alias) stands for; an unknown name lists the known ones."""
    try:
        return _REGISTRY[canonical_name(name)]
    except KeyError:
        raise ValueError(
            f"unknown verifier {name!r}; choose from {', '.join(verifier_names())} "
            "('fscore verifiers --all' lists the research rules and older names too)"
        ) from None


def list_rules(everything: bool = False) -> tuple[Verifier, ...]:
    """The verifiers ``--help`` shows (the default first), or with ``everything`` all."""
    return tuple(v for v in _REGISTRY.values() if everything or v.listed)


def verifier_names() -> tuple[str, ...]:
    """Every name a verifier answers to: the listed rules first, then the research rules,
    then the older names."""
    listed = [v.name for v in list_rules()]
    rest = [name for name in _REGISTRY if name not in listed]
    return (*listed, *rest, *_ALIASES)


for _spec in declared_rules():
    register(Verifier.from_spec(_spec))

# The earlier releases' names of these rules, which the benchmarks' records key figures by.
NUMBER_VETO_RULE = "retrieve-lm+np+coverage+slots+number-veto-fitted"
NUMBER_YEAR_VETO_RULE = "retrieve-lm+np+coverage+slots+number-year-veto-fitted"
SLOT_VETO_RULE = "retrieve-lm+np+coverage+slots+slot-veto-fitted"
PLACE_VETO_RULE = "retrieve-lm+np+coverage+slots+number-year-place-veto-fitted"
RIVALS_RULE = "retrieve-lm+np+coverage+slots+rivals+number-year-veto-fitted"
HEAD_RULE = "retrieve-lm+np+coverage+slots+head+number-year-place-veto-fitted"
# Issue 74's research rules that weigh the candidates' lead, and the one that reads every
# signal of the rules the benchmarks compare (the rivals' and the candidates' leads).
CANDIDATE_RULES = ("default+candidates", "default+rivals+candidates")
ALL_SIGNALS_RULE = "default+rivals+candidates"
RULE_FEATURES = get_verifier("paper-fitted").features
COVERAGE_RULE_FEATURES = get_verifier("coverage").features
SLOTS_RULE_FEATURES = get_verifier("slots").features
RIVALS_RULE_FEATURES = get_verifier("default+rivals").features
