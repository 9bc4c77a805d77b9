"""The rules' declarations, read from ``data/rules.json``: one spec per rule.

A spec names a rule, its kind (``threshold``, ``fitted``, ``constant``, ``random``), what it
reads (the signals it cuts, or the features it weighs and vetoes on, by the names of
``features.py``), a one-line description, whether ``--help`` lists it, and the older names
it answers to. ``verifiers.py`` turns each spec into a :class:`Verifier`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from factscore_local.data import data_file
from factscore_local.declarations.features import FEATURES, SIGNALS

RULES_PATH = data_file("rules.json")
RULES_SCHEMA = 1
KINDS = ("threshold", "fitted", "constant", "random")
MARGIN_CONTEXTS = ("retrieved", "none")
CUTS = {"margin": "margin", "np": "np"}  # a threshold rule's cuts: signal -> threshold


@dataclass(frozen=True)
class RuleSpec:
    """One rule as declared."""

    name: str
    kind: str
    description: str
    cuts: tuple[str, ...] = ()  # threshold: the signals that must each exceed their cut
    features: tuple[str, ...] = ()  # fitted: weighed, in this order after the bias
    vetoes: tuple[str, ...] = ()  # fitted: any of these features at 1 -> not supported
    value: bool = True  # constant: the decision
    margin_context: str = "retrieved"
    listed: bool = True
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = f"rule {self.name!r}"
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind is one of {', '.join(KINDS)}, not {self.kind!r}")
        if set(self.cuts) - set(CUTS):
            raise ValueError(f"{where}: cuts are among {', '.join(CUTS)}")
        unknown = set(self.features + self.vetoes) - set(FEATURES)
        if unknown:
            raise ValueError(f"{where}: unknown feature(s) {sorted(unknown)}")
        if self.margin_context not in MARGIN_CONTEXTS:
            raise ValueError(f"{where}: margin_context is one of {MARGIN_CONTEXTS}")
        if (self.kind == "fitted") != bool(self.features):
            raise ValueError(f"{where}: a fitted rule, and only one, names features")
        if (self.kind == "threshold") != bool(self.cuts):
            raise ValueError(f"{where}: a threshold rule, and only one, names cuts")

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals the rule reads, in SIGNALS order (a fitted rule decides as the
        paper's ensemble before it is fitted, so it reads the margin and NP too)."""
        if self.kind == "random":
            return ("draw",)
        needed = set(self.cuts)
        for name in self.features + self.vetoes:
            needed |= set(FEATURES[name].reads)
        if self.kind == "fitted":
            needed |= {"margin", "np"}
        return tuple(s for s in SIGNALS if s in needed)


def parse_rules(document: dict) -> list[RuleSpec]:
    """The specs of a rules document (``data/rules.json``'s shape), checked.

    Example:
        >>> doc = {"schema": 1, "rules": [{"name": "m", "kind": "threshold",
        ...        "cuts": ["margin"], "description": "the margin"}]}
        >>> parse_rules(doc)[0].signals
        ('margin',)
    """
    if document.get("schema") != RULES_SCHEMA:
        raise ValueError(f"rules file schema {document.get('schema')!r}; this release reads "
                         f"{RULES_SCHEMA}")  # fmt: skip
    specs = []
    for entry in document["rules"]:
        entry = dict(entry)
        for key in ("cuts", "features", "vetoes", "aliases"):
            entry[key] = tuple(entry.get(key, ()))
        specs.append(RuleSpec(**entry))
    names = [n for s in specs for n in (s.name, *s.aliases)]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"rule names declared twice: {', '.join(repeated)}")
    return specs


@lru_cache(maxsize=1)
def declared_rules() -> tuple[RuleSpec, ...]:
    """The package's rules, as ``data/rules.json`` declares them."""
    return tuple(parse_rules(json.loads(RULES_PATH.read_text(encoding="utf-8"))))
