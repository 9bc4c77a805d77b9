"""The output schema of ``fscore eval``: typed records, one JSON line per bio.

The estimator writes these; validation, calibration, the CLI and the scripts read them.
``to_json`` / ``from_json`` are exact inverses, and fields that do not apply (a signal a
verifier did not compute, the human side of an unlabeled bio) are left out of the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# value_keys(): the per-fact value keys a row may carry, in the order a row writes them.
from factscore_local.declarations.features import flags_of_code, value_keys


@dataclass(frozen=True)
class Evidence:
    """A passage a fact was judged against."""

    passage_id: Any
    title: str
    rank: int
    score: float

    def to_json(self) -> dict:
        return {
            "passage_id": self.passage_id,
            "title": self.title,
            "rank": self.rank,
            "score": self.score,
        }

    @classmethod
    def from_json(cls, obj: dict) -> Evidence:
        return cls(obj["passage_id"], obj["title"], obj["rank"], obj["score"])


RECORDED_DIGITS = 4  # values are decided on as recorded, to this many decimals


def recorded_value(key: str, value: float) -> float:
    """A value as a row records it (the draw in full, the rest rounded)."""
    return float(value) if key == "draw" else round(float(value), RECORDED_DIGITS)


@dataclass(frozen=True)
class FactResult:
    """One fact's decision, the values its rule read (a mapping keyed by the signals'
    value keys, ``features.value_keys()``: what its verifier's signal providers wrote),
    its reason when not supported, and its evidence."""

    atom: str
    is_supported: bool
    sentence: str | None = None  # the sentence a model fact came from
    label: str | None = None  # the humans' label of a human atomic fact (S, NS, IR)
    evidence: tuple[Evidence, ...] | None = None
    values: dict[str, float] = field(default_factory=dict)
    reason: str | None = None  # why it is not supported (the rule's explanation)
    block: tuple | None = None  # shared evidence: the passage ids of the block it was judged on
    # The fact as the LM, NP and the coverage read it, where its loose values were written
    # as its passages state them ("died in 1946" for "died in the 1940s"); None: as written.
    read_as: str | None = None
    # The verdict's hidden state, in memory only (a run that reads states: calibrate --head
    # trains on it); never written to a row.
    state: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        known = value_keys()
        unknown = set(self.values) - set(known)
        if unknown:
            raise ValueError(f"unknown fact value(s) {sorted(unknown)}; known: {known}")
        # in the keys' declared order, whatever order they were given in
        object.__setattr__(self, "values", {k: self.values[k] for k in known if k in self.values})

    def __hash__(self) -> int:
        return hash((self.atom, self.is_supported, self.sentence, tuple(self.values.items())))

    def signals(self) -> dict[str, float]:
        """The recorded values (what a verifier's rule reads)."""
        return dict(self.values)

    margin = property(lambda self: self.values.get("margin"))
    np = property(lambda self: self.values.get("np"))
    coverage = property(lambda self: self.values.get("coverage"))
    rivals = property(lambda self: self.values.get("rivals"))
    head = property(lambda self: self.values.get("head"))
    draw = property(lambda self: self.values.get("draw"))

    @property
    def slot_flags(self) -> tuple[str, ...]:
        """The slot check's raised flags (``number``, ..., ``confirmed``)."""
        return tuple(k.removeprefix("slot_") for k, v in self.values.items()
                     if k.startswith("slot_") and v >= 1)  # fmt: skip

    def to_json(self) -> dict:
        out: dict[str, Any] = {"atom": self.atom}
        if self.sentence is not None:
            out["sentence"] = self.sentence
        if self.label is not None:
            out["label"] = self.label
        if self.evidence is not None:
            out["evidence"] = [e.to_json() for e in self.evidence]
        if self.block is not None:
            out["block"] = list(self.block)
        if self.read_as is not None:
            out["read_as"] = self.read_as
        out.update(self.values)
        out["is_supported"] = self.is_supported
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_json(cls, obj: dict) -> FactResult:
        evidence = obj.get("evidence")
        return cls(
            atom=obj["atom"],
            is_supported=bool(obj["is_supported"]),
            sentence=obj.get("sentence"),
            label=obj.get("label"),
            evidence=None if evidence is None else tuple(Evidence.from_json(e) for e in evidence),
            values=_recorded_values(obj),
            reason=obj.get("reason"),
            block=None if obj.get("block") is None else tuple(obj["block"]),
            read_as=obj.get("read_as"),
        )


def _recorded_values(obj: dict) -> dict[str, float]:
    """A row's values; an earlier release's one-number slot check (``slots``) becomes
    today's slot flags."""
    values = {k: obj[k] for k in value_keys() if obj.get(k) is not None}
    if obj.get("slots") is not None:
        values.update(flags_of_code(obj["slots"]))
    return values


@dataclass(frozen=True)
class HumanSide:
    """A labeled bio's human FActScore and the estimator's decisions on its human facts."""

    score: float | None  # None: the humans' bio does not respond
    n_facts: int
    facts: tuple[FactResult, ...] = ()

    def to_json(self) -> dict:
        return {
            "score": self.score,
            "n_facts": self.n_facts,
            "facts": [f.to_json() for f in self.facts],
        }

    @classmethod
    def from_json(cls, obj: dict) -> HumanSide:
        facts = tuple(FactResult.from_json(f) for f in obj.get("facts", []))
        return cls(obj.get("score"), obj.get("n_facts", 0), facts)


@dataclass(frozen=True)
class BioRow:
    """One input line's result: its facts and score, or the error that stopped it."""

    line: int
    topic: str
    source: str
    error: str | None = None
    title: str | None = None
    responded: bool = False
    n_facts: int = 0
    init_score: float | None = None  # precision of the facts (no length penalty)
    score: float | None = None  # with the length penalty
    decisions: tuple[FactResult, ...] = ()
    human: HumanSide | None = None
    skipped_sentences: int = 0  # past the response-length limit (--max-sentences)
    category: str | None = None  # the entity's frequency class, when the input gives one
    set_aside: tuple[tuple[str, str], ...] = ()  # own facts that do not stand alone, why

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict:
        out: dict[str, Any] = {"line": self.line, "topic": self.topic, "source": self.source}
        if self.category is not None:
            out["category"] = self.category
        if self.error is not None:
            out["error"] = self.error
            return out
        out.update(
            title=self.title,
            responded=self.responded,
            n_facts=self.n_facts,
            init_score=self.init_score,
            score=self.score,
            decisions=[d.to_json() for d in self.decisions],
        )
        if self.human is not None:
            out["human"] = self.human.to_json()
        if self.skipped_sentences:
            out["skipped_sentences"] = self.skipped_sentences
        if self.set_aside:
            out["set_aside"] = [{"atom": a, "reason": r} for a, r in self.set_aside]
        return out

    @classmethod
    def from_json(cls, obj: dict) -> BioRow:
        common = {
            "line": obj["line"],
            "topic": obj["topic"],
            "source": obj.get("source", ""),
            "category": obj.get("category"),
        }
        if "error" in obj:
            return cls(**common, error=obj["error"])
        human = obj.get("human")
        return cls(
            **common,
            title=obj.get("title"),
            responded=bool(obj["responded"]),
            n_facts=obj["n_facts"],
            init_score=obj["init_score"],
            score=obj["score"],
            decisions=tuple(FactResult.from_json(d) for d in obj.get("decisions", [])),
            human=None if human is None else HumanSide.from_json(human),
            skipped_sentences=obj.get("skipped_sentences", 0),
            set_aside=tuple((d["atom"], d["reason"]) for d in obj.get("set_aside", [])),
        )
