"""``fscore calibrate --head``: a state head trained on labeled bios, and a rule that
weighs it fitted beside it.

1. The labeled bios are verified with the verdicts' hidden states read (the verifier's
   signals but the head's); each fact keeps its state in memory (``FactResult.state``).
2. The head is trained on the human atomic facts' states (supported: the humans' S) and
   written to its file.
3. When the verifier weighs the head, each fact's ``head`` signal is the score of a head
   fitted on the other fold of topics (``heads.fold_heads``): the rule is fitted on scores
   like those of bios the head never saw, not on the head's confidence on its own
   training facts. Then the rule is fitted as any other (``calibration.fit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from factscore_local.config import EvalConfig, model_name
from factscore_local.declarations.verifiers import get_verifier, state_pass
from factscore_local.labels.calibration import collect, fit
from factscore_local.labels.heads import fold_heads, held_out_scores
from factscore_local.pipeline.plan import plan_run
from factscore_local.pipeline.records.rows import BioRow, FactResult


def rows_with_states(config: EvalConfig, bios: Sequence, progress: bool = False) -> list[BioRow]:
    """Rows of labeled bios whose facts (estimate and human) carry their states."""
    from factscore_local.pipeline.estimator import Estimator

    verifier = state_pass(get_verifier(config.verifier))
    estimator = Estimator(replace(config, read_states=True, validate=True), verifier=verifier,
                          calibrating=True)  # fmt: skip
    return estimator.run(list(bios), None, progress=progress)


def human_states(rows: Sequence[BioRow]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states, supported, topic) of the rows' human atomic facts."""
    states, supported, topics = [], [], []
    for row in rows:
        if not row.ok or row.human is None:
            continue
        for fact in row.human.facts:
            if fact.state is None:
                raise ValueError("these rows carry no states (verify with read_states)")
            states.append(fact.state)
            supported.append(fact.label == "S")
            topics.append(row.topic)
    if not states:
        raise ValueError("no human atomic facts to train a head on (lines need 'annotations')")
    return np.stack(states), np.asarray(supported, bool), np.asarray(topics)


def with_head_signal(rows: Sequence[BioRow], score) -> list[BioRow]:
    """The rows with each fact's ``head`` signal set to ``score(states, topic)``."""

    def scored(facts: tuple[FactResult, ...], topic: str) -> tuple[FactResult, ...]:
        if not facts:
            return facts
        values = score(np.stack([f.state for f in facts]), [topic] * len(facts))
        pairs = zip(facts, values, strict=True)
        return tuple(replace(f, values={**f.values, "head": round(float(v), 4)}) for f, v in pairs)

    out = []
    for row in rows:
        if row.ok:
            human = row.human and replace(row.human, facts=scored(row.human.facts, row.topic))
            row = replace(row, decisions=scored(row.decisions, row.topic), human=human)
        out.append(row)
    return out


def with_held_out_head(
    rows: Sequence[BioRow],
    states: np.ndarray,
    supported: np.ndarray,
    topics: np.ndarray,
    kind: str = "logistic",
    seed: int = 0,
) -> list[BioRow]:
    """The rows with each fact's ``head`` signal from a head of two folds of topics that did
    not see the fact's topic (``states``, ``supported``, ``topics``: ``human_states(rows)``):
    what a rule weighing the head is fitted on."""
    heads = fold_heads(states, supported, topics, kind, seed)
    return with_head_signal(rows, lambda s, t: held_out_scores(heads, s, t))


def calibrate_with_head(
    config: EvalConfig,
    bios: Sequence,
    head_path: Path,
    kind: str = "logistic",
    objective: str = "er",
    seed: int = 0,
    progress: bool = False,
) -> dict:
    """Trains a head on the bios' human facts (written to ``head_path``) and fits the
    verifier; the settings name the head."""
    from factscore_local.labels.heads import fit_head

    rows = rows_with_states(config, bios, progress)
    states, supported, topics = human_states(rows)
    record = {"model": model_name(config.lm), "verifier_prompt": config.verify_question}
    head = fit_head(states, supported, topics, kind, seed, record)
    head.save(Path(head_path))
    if plan_run(config).head:
        rows = with_held_out_head(rows, states, supported, topics, kind, seed)
    fitted = fit(collect(rows), config.verifier, objective, config.thresholds)
    fitted["head"] = str(Path(head_path).resolve())
    fitted["head_record"] = {"kind": head.kind, **head.record}
    return fitted
