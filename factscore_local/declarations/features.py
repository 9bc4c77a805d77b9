"""What a rule can read of a fact: named features over the signal values.

The signal providers (``pipeline/signals/providers.py``) write per-fact *values* under
the keys declared here (``SIGNAL_KEYS``; ``VALUE_KEYS`` the built-in ones): the margin, NP,
the coverage, one flag per slot-check outcome, the rival lead, the state head's score,
the random draw and the candidates' lead; a provider of a new signal declares its keys
(``declare_signal``). A *feature* is a named function of those values; a rule
(``rules.py``, declared in ``data/rules.json``) weighs features and vetoes on them by name,
and its fitted weights are stored by the same names, so reordering or renaming a feature
cannot silently change a shipped rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

# The slot check's outcomes, each its own flag (1 or 0): a conflict of one kind of value,
# any other conflicting slot, or every slot confirmed (``signals/slots.py: slot_flags``).
SLOT_CONFLICTS = ("number", "year", "nationality", "place", "other")
SLOT_KEYS = tuple(f"slot_{kind}" for kind in (*SLOT_CONFLICTS, "confirmed"))

# Signal name (what a provider computes) -> the value keys it writes.
SIGNAL_KEYS: dict[str, tuple[str, ...]] = {
    "margin": ("margin",),
    "np": ("np",),
    "coverage": ("coverage",),
    "slots": SLOT_KEYS,
    "rivals": ("rivals",),
    "head": ("head",),
    "draw": ("draw",),
    "candidates": ("candidates",),
}
SIGNALS = tuple(SIGNAL_KEYS)  # the built-in signals (a provider may declare more)
VALUE_KEYS = tuple(key for keys in SIGNAL_KEYS.values() for key in keys)


def declare_signal(name: str, keys: tuple[str, ...]) -> None:
    """Declares the value keys a signal's provider writes (``signals/providers.py:
    register``): a new signal's keys join those the rows record and the rules read; a
    known signal must write exactly its declared keys."""
    known = SIGNAL_KEYS.get(name)
    if known is not None and tuple(keys) != known:
        raise ValueError(f"signal {name!r} writes {', '.join(known)}; a provider of it "
                         f"declared {', '.join(keys)}")  # fmt: skip
    taken = {k for signal, ks in SIGNAL_KEYS.items() if signal != name for k in ks}
    if taken & set(keys):
        raise ValueError(f"signal {name!r}: value key(s) {sorted(taken & set(keys))} are "
                         "another signal's")  # fmt: skip
    SIGNAL_KEYS[name] = tuple(keys)


def value_keys() -> tuple[str, ...]:
    """Every value key a row may carry, in the order a row writes them: ``VALUE_KEYS``,
    then those of signals declared since (``declare_signal``)."""
    return tuple(key for keys in SIGNAL_KEYS.values() for key in keys)


Values = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Feature:
    """A named value of a fact that a rule can weigh or veto on."""

    name: str
    reads: tuple[str, ...]  # the signals it needs
    value: Callable[[Values], np.ndarray]
    description: str


def _flag(*kinds: str) -> Callable[[Values], np.ndarray]:
    keys = [f"slot_{kind}" for kind in kinds]
    return lambda v: np.logical_or.reduce([np.asarray(v[k]) >= 1 for k in keys]).astype(float)


_LIST = (
    Feature("margin", ("margin",), lambda v: v["margin"], "logit(True) - logit(False)"),
    Feature("np", ("np",), lambda v: v["np"], "the nonparametric probability of the fact"),
    Feature("margin*np", ("margin", "np"), lambda v: v["margin"] * v["np"], "their product"),
    Feature(
        "coverage",
        ("coverage",),
        lambda v: v["coverage"],
        "the share of the fact's content words in its top-k passages",
    ),
    Feature(
        "slot_conflict",
        ("slots",),
        _flag(*SLOT_CONFLICTS),
        "1 when the passages give another value for any of the fact's slots",
    ),
    Feature(
        "slot_confirmed",
        ("slots",),
        _flag("confirmed"),
        "1 when the passages state every slot of the fact",
    ),
    *(
        Feature(f"{kind}_conflict", ("slots",), _flag(kind), f"1 when its {kind} conflicts")
        for kind in SLOT_CONFLICTS[:4]
    ),
    Feature(
        "rival_lead",
        ("rivals",),
        lambda v: v["rivals"],
        "how far the margin of the fact's best rival exceeds its own",
    ),
    Feature("head", ("head",), lambda v: v["head"], "a state head's log-odds of supported"),
    Feature(
        "candidate_lead",
        ("candidates",),
        lambda v: v["candidates"],
        "how far the margin of the best candidate for one of the fact's slots exceeds its own",
    ),
)
FEATURES: dict[str, Feature] = {f.name: f for f in _LIST}
BIAS = "bias"  # the name of a fitted rule's constant term among its weights


# The one-number summary of the slot check that earlier releases recorded as ``slots``: the
# code of the first flag raised, in this order (``signals/slots.py: slot_code``).
SLOT_CODES = {"number": -2.0, "year": -3.0, "nationality": -4.0, "place": -5.0, "other": -1.0,
              "confirmed": 1.0}  # fmt: skip


def flags_of_code(code: float | np.ndarray) -> dict[str, float | np.ndarray]:
    """The slot flags (``slot_*`` keys) a ``slots`` code stands for: each code raises its one
    flag (an earlier release kept only the first conflict)."""
    code = np.asarray(code, float)
    flags = {f"slot_{kind}": (code == c).astype(float) for kind, c in SLOT_CODES.items()}
    return {k: float(v) for k, v in flags.items()} if code.ndim == 0 else flags


def with_slot_flags(values: Values) -> Values:
    """``values`` with the slot flags, where they hold instead an earlier release's
    one-number ``slots`` code (-2 number, -3 year, -4 nationality, -5 place, -1 another
    conflict, 1 confirmed): each code raises its one flag."""
    if "slots" not in values or "slot_number" in values:
        return values
    flags = flags_of_code(np.asarray(values["slots"], float).reshape(-1))
    return {**{k: v for k, v in values.items() if k != "slots"}, **flags}


def register_feature(name: str, key: str | None = None, description: str = "") -> Feature:
    """A feature that reads one value key as it is (``key``: default ``name``), for rules
    tried with values beyond the signals' (a study's extra columns); kept if present."""
    column = key or name
    feature = Feature(name, (), lambda v: v[column], description or f"the value {column!r}")
    return FEATURES.setdefault(name, feature)


def feature_values(name: str, values: Values) -> np.ndarray:
    """One feature's values, by name.

    Example:
        >>> import numpy as np
        >>> v = {k: np.zeros(2) for k in ("slot_" + s for s in SLOT_CONFLICTS + ("confirmed",))}
        >>> v["slot_place"] = np.array([1.0, 0.0])
        >>> feature_values("slot_conflict", v).tolist()
        [1.0, 0.0]
    """
    try:
        feature = FEATURES[name]
    except KeyError:
        raise ValueError(f"unknown feature {name!r}; known: {', '.join(FEATURES)}") from None
    return np.asarray(feature.value(values), float)
