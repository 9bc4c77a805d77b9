"""Factcheck-Bench offline: the stance of a piece of evidence toward a claim, the truth of
a claim with evidence retrieved from the whole index (no topic), and the correction of a
claim judged false, all with the local LM.

- Stance: one forward pass per (claim, evidence); the next-token logits of the four label
  words, after an instruction and four demonstrations of our own that every pair shares
  (their KV cache is evaluated once). The 3-label variant merges the two supports by
  adding their probabilities.
- Verification: global BM25 top-k passages for the claim, then the Retrieve→LM prompt
  without a topic; true when logit(True) - logit(False) > margin.
- Correction: for a claim judged false, a greedy rewrite from the same passages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from factscore_local.methods.factcheck.data import (
    STANCES,
    THREE_LABELS,
    TO_THREE,
    Claim,
    StancePair,
    classification_scores,
    edit_similarity,
)
from factscore_local.pipeline.signals.verify_prompt import open_prompt, passage_block
from factscore_local.prompts import load_demos, load_prompt

# Label words per stance (first tokens must differ; checked by the LM).
STANCE_WORDS = (
    ("Supports", " Supports"),
    ("Partially", " Partially"),
    ("Refutes", " Refutes"),
    ("Irrelevant", " Irrelevant"),
)
# The wording and our own demonstrations, one per label (claim, evidence, label), are in
# prompts/factcheck_*.txt.
STANCE_INSTRUCTION = load_prompt("factcheck_stance")
STANCE_DEMOS: tuple[tuple[str, str, str], ...] = load_demos("factcheck_stance_demos", 3)
CLAIM_MARK = "Claim: "  # where a stance prompt stops being shared
CORRECTION_INSTRUCTION = load_prompt("factcheck_correction")


def stance_prompt(claim: str, evidence: str) -> str:
    demos = "\n\n".join(f"{CLAIM_MARK}{c}\nEvidence: {e}\nAnswer: {a}" for c, e, a in STANCE_DEMOS)
    return (
        f"{STANCE_INSTRUCTION}\n\n{demos}\n\n"
        f"{CLAIM_MARK}{claim.strip()}\nEvidence: {evidence.strip()}\nAnswer:"
    )


def correction_prompt(claim: str, passages: list[tuple[str, str]]) -> str:
    context = "\n\n".join(passage_block(t, x) for t, x in passages)
    return f"{CORRECTION_INSTRUCTION}\n\n{context}\n\nClaim: {claim.strip()}\nCorrected claim:"


def _softmax(rows: np.ndarray) -> np.ndarray:
    shifted = np.exp(rows - rows.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


@dataclass
class StanceResult:
    pair: StancePair
    probabilities: dict[str, float] | None = None  # over the four labels

    @property
    def predicted(self) -> str | None:
        if self.probabilities is None:
            return None
        return max(self.probabilities, key=self.probabilities.__getitem__)

    @property
    def predicted_three(self) -> str | None:
        """The 3-label decision: the supports' probabilities added."""
        if self.probabilities is None:
            return None
        merged: dict[str, float] = {}
        for label, p in self.probabilities.items():
            merged[TO_THREE[label]] = merged.get(TO_THREE[label], 0.0) + p
        return max(merged, key=merged.__getitem__)

    def to_json(self) -> dict:
        pair = self.pair
        if pair.error:
            return {"line": pair.line, "error": pair.error}
        return {
            "line": pair.line,
            "claim": pair.claim,
            "stance": pair.stance,
            "predicted": self.predicted,
            "predicted_3": self.predicted_three,
            "probabilities": self.probabilities,
        }


def run_stance(pairs: list[StancePair], lm) -> list[StanceResult]:
    """``lm``: a ``CachedLM``."""
    ok = [p for p in pairs if not p.error]
    prompts = [lm.chat(stance_prompt(p.claim, p.evidence)) for p in ok]
    prefixes = [p[: p.rindex(CLAIM_MARK)] for p in prompts]
    probabilities = []
    if ok:
        logits = np.asarray(lm.choices(prompts, STANCE_WORDS, prefixes), float)
        probabilities = [
            {s: round(float(v), 4) for s, v in zip(STANCES, row, strict=True)}
            for row in _softmax(logits)
        ]
    found = iter(probabilities)
    return [StanceResult(p, None if p.error else next(found)) for p in pairs]


def stance_scores(results: list[StanceResult], crossfit: bool = True) -> dict:
    """Scores of the raw decisions, and (with ``crossfit``) of decisions with a label bias
    fitted on the other claim half."""
    scored = [r for r in results if r.predicted is not None]
    gold = [r.pair.stance for r in scored]
    out = {
        "four_labels": classification_scores(gold, [r.predicted for r in scored], STANCES),
        "three_labels": classification_scores(
            [TO_THREE[g] for g in gold], [r.predicted_three for r in scored], THREE_LABELS
        ),
        "errors": sum(1 for r in results if r.pair.error),
    }
    if crossfit and len({r.pair.claim for r in scored}) > 1:
        fitted, biases = crossfit_stance(scored)
        out["label_bias_crossfitted"] = {
            **stance_scores(fitted, crossfit=False),
            "biases": biases,
            "labels": list(STANCES),
        }
        del out["label_bias_crossfitted"]["errors"]
    return out


@dataclass
class ClaimResult:
    claim: Claim
    margin: float | None = None
    predicted: str | None = None  # "true" / "false"
    evidence: list[dict] | None = None
    revision: str | None = None

    def to_json(self) -> dict:
        c = self.claim
        if c.error:
            return {"line": c.line, "error": c.error}
        out = {
            "line": c.line,
            "claim": c.claim,
            "label": c.label,
            "margin": self.margin,
            "predicted": self.predicted,
            "evidence": self.evidence,
        }
        if self.revision is not None:
            out["revision"] = self.revision
            if c.revised:
                out["similarity_revision"] = round(edit_similarity(self.revision, c.revised), 4)
                out["similarity_unrevised"] = round(edit_similarity(c.claim, c.revised), 4)
        return out


def run_claims(claims: list[Claim], lm, knowledge, k: int, margin: float,
               correct: bool = True) -> list[ClaimResult]:  # fmt: skip
    """Verify each claim against its global top-k passages; rewrite those judged false."""
    ok = [c for c in claims if not c.error]
    hits = [knowledge.search(c.claim, k=k) for c in ok]
    passages = [[(h.passage.title, h.passage.text) for h in fact_hits] for fact_hits in hits]
    prompts = [lm.chat(open_prompt(c.claim, p)) for c, p in zip(ok, passages, strict=True)]
    pairs = lm.true_false(prompts) if ok else []
    results = {}
    for c, fact_hits, (t, f) in zip(ok, hits, pairs, strict=True):
        m = round(float(t - f), 4)
        results[c.line] = ClaimResult(
            c, m, "true" if m > margin else "false",
            [{"title": h.passage.title, "passage_id": h.passage.passage_id,
              "score": round(h.score, 4)} for h in fact_hits],
        )  # fmt: skip
    if correct:
        wrong = [(c, p) for c, p in zip(ok, passages, strict=True)
                 if results[c.line].predicted == "false"]  # fmt: skip
        prompts = [lm.chat(correction_prompt(c.claim, p)) for c, p in wrong]
        for (c, _), text in zip(wrong, lm.generate(prompts, 64, ["\n"]), strict=True):
            results[c.line].revision = text.strip()
    return [results.get(c.line, ClaimResult(c)) for c in claims]


def claim_scores(results: list[ClaimResult]) -> dict:
    """P / R / F1 for true and for false claims (claims labeled true or false; the
    not-enough-evidence ones are counted apart), the trivial baselines, and corrections."""
    scored = [r for r in results if r.predicted is not None and r.claim.label in ("true", "false")]
    gold = [r.claim.label for r in scored]
    out = {
        "system": classification_scores(gold, [r.predicted for r in scored], ("true", "false")),
        "always_true": classification_scores(gold, ["true"] * len(gold), ("true", "false")),
        "always_false": classification_scores(gold, ["false"] * len(gold), ("true", "false")),
        "not_enough_evidence": sum(1 for r in results if r.claim.label == "not_enough_evidence"),
        "errors": sum(1 for r in results if r.claim.error),
    }
    crossfit, margins = crossfit_claim_margin(scored)
    if crossfit:
        out["margin_crossfitted"] = {
            **classification_scores(
                gold, [crossfit[r.claim.line] for r in scored], ("true", "false")
            ),  # fmt: skip
            "margins": margins,
        }
    fixed = [r for r in scored if r.revision is not None and r.claim.label == "false"
             and r.claim.revised]  # fmt: skip
    if fixed:
        revised = [edit_similarity(r.revision, r.claim.revised) for r in fixed]
        unrevised = [edit_similarity(r.claim.claim, r.claim.revised) for r in fixed]
        out["correction"] = {
            "n": len(fixed),
            "similarity_revision": round(float(np.mean(revised)), 4),
            "similarity_unrevised": round(float(np.mean(unrevised)), 4),
            "closer_than_unrevised": round(
                float(np.mean([a > b for a, b in zip(revised, unrevised, strict=True)])), 4
            ),
        }
    return out


def fit_claim_margin(margins: np.ndarray, is_true: np.ndarray) -> float:
    """The margin threshold (true when above it) with the highest macro-F1 over true and
    false claims: a small LM leans to "False" on claims its evidence does not mention."""
    values = np.unique(margins)
    candidates = np.concatenate([[values[0] - 1e-6], (values[1:] + values[:-1]) / 2])
    gold = (~is_true).astype(int)  # label 0: true, 1: false
    scores = [_macro_f1(gold, (margins <= c).astype(int), 2) for c in candidates]
    return float(candidates[int(np.argmax(scores))])


def crossfit_claim_margin(scored: list[ClaimResult]) -> tuple[dict[int, str], list[float]]:
    """Each claim half decided with the margin fitted on the other half (halves by a hash
    of the claim); returns the decisions by line and the two fitted margins."""
    from factscore_local.labels.validation import topic_half

    margins = np.asarray([r.margin for r in scored], float)
    is_true = np.asarray([r.claim.label == "true" for r in scored])
    halves = np.asarray([topic_half(r.claim.claim) for r in scored])
    decided: dict[int, str] = {}
    fitted = []
    for half in (0, 1):
        train, test = halves != half, halves == half
        if not test.any() or len(set(is_true[train])) < 2:
            return {}, []
        cut = fit_claim_margin(margins[train], is_true[train])
        fitted.append(round(cut, 4))
        for i in np.flatnonzero(test):
            decided[scored[i].claim.line] = "true" if margins[i] > cut else "false"
    return decided, fitted


# --- label bias, fitted on labels (cross-fitted over claim halves) -------------------------
BIAS_GRID = np.round(np.arange(-6.0, 6.01, 0.25), 2)


def _macro_f1(gold: np.ndarray, predicted: np.ndarray, n_labels: int) -> float:
    scores = []
    for label in range(n_labels):
        tp = np.sum((predicted == label) & (gold == label))
        fp = np.sum((predicted == label) & (gold != label))
        fn = np.sum((predicted != label) & (gold == label))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def fit_label_bias(log_probs: np.ndarray, gold: np.ndarray, rounds: int = 3) -> np.ndarray:
    """Per-label offsets added to the log-probabilities that maximise macro-F1 (coordinate
    search on a grid, the first label fixed at 0): a small LM's prior for some label words
    (it rarely says "Irrelevant") is corrected from labeled pairs."""
    n_labels = log_probs.shape[1]
    bias = np.zeros(n_labels)
    for _ in range(rounds):
        for label in range(1, n_labels):
            best, best_value = -1.0, bias[label]
            for value in BIAS_GRID:
                bias[label] = value
                f1 = _macro_f1(gold, np.argmax(log_probs + bias, axis=1), n_labels)
                if f1 > best + 1e-12:
                    best, best_value = f1, value
            bias[label] = best_value
    return bias


def crossfit_stance(results: list[StanceResult]) -> tuple[list[StanceResult], list[list[float]]]:
    """Each claim half decided with the label bias fitted on the other half (pairs of one
    claim stay in one half); returns the re-decided results and the two fitted biases."""
    from factscore_local.labels.validation import topic_half

    scored = [r for r in results if r.probabilities is not None]
    log_probs = np.log(np.asarray([[r.probabilities[s] for s in STANCES] for r in scored]) + 1e-9)
    gold = np.asarray([STANCES.index(r.pair.stance) for r in scored])
    halves = np.asarray([topic_half(r.pair.claim) for r in scored])
    out: dict[int, StanceResult] = {}
    biases = []
    for half in (0, 1):
        train, test = halves != half, halves == half
        if not train.any() or not test.any():
            continue
        bias = fit_label_bias(log_probs[train], gold[train])
        biases.append([round(float(b), 2) for b in bias])
        shifted = np.exp(log_probs[test] + bias)
        shifted /= shifted.sum(axis=1, keepdims=True)
        for i, row in zip(np.flatnonzero(test), shifted, strict=True):
            probs = {s: round(float(v), 4) for s, v in zip(STANCES, row, strict=True)}
            out[int(i)] = StanceResult(scored[i].pair, probs)
    return [out[i] for i in sorted(out)], biases
