"""What a scoring run returns: the summary, the rows, the validation, and their JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass

from factscore_local.config import EvalConfig
from factscore_local.pipeline.records.rows import BioRow

SUMMARY_KEYS = (
    "score",
    "init_score",
    "respond_ratio",
    "num_facts_per_response",
    "n_bios",
    "n_facts",
    "n_errors",
)
# The pooled validation figures copied into the summary (--json and the run record).
VALIDATION_KEYS = (
    "human_score",
    "error_rate",
    "f1_micro",
    "f1_micro_ir_excluded",
    "precision",
    "recall",
    "bio_mae",
)


@dataclass(frozen=True)
class EvalResult:
    """What :func:`evaluate` returns.

    Attributes:
        summary: FActScore's aggregates: ``score`` (with the length penalty), ``init_score``
            (without), ``respond_ratio``, ``num_facts_per_response``, ``n_bios``,
            ``n_facts``, ``n_errors`` (lines that could not be scored).
        rows: One row per input line: its facts, each fact's decision and evidence.
        validation: ER, F1 and more against the human labels, pooled and per subject
            file; None when no line carries FActScore's annotations (or ``validate`` is
            off).
        config: The settings the run used, defaults and fitted thresholds resolved.
        record: The run record written beside ``out`` (None without ``out``).
    """

    summary: dict
    rows: list[BioRow]
    validation: dict | None
    config: EvalConfig
    record: dict | None = None

    @property
    def score(self) -> float | None:
        """FActScore with the length penalty (None when no bio responded)."""
        return self.summary["score"]

    @property
    def init_score(self) -> float | None:
        """FActScore without the length penalty."""
        return self.summary["init_score"]

    @property
    def respond_ratio(self) -> float | None:
        """The share of bios that did not abstain."""
        return self.summary["respond_ratio"]

    @property
    def facts_per_response(self) -> float | None:
        """Atomic facts per responding bio."""
        return self.summary["num_facts_per_response"]

    def to_json(self) -> dict:
        """The summary as ``fscore eval --json`` prints it (and the run record keeps it).

        Returns:
            The summary keys, the thresholds the verifier read (with where they came from)
            and, for labeled input, the pooled validation figures, per-subject figures and
            whether the subjects' ranking is kept.

        Example:
            >>> result.to_json()["score"]  # doctest: +SKIP
            0.62
        """
        result = {key: self.summary.get(key) for key in SUMMARY_KEYS}
        result["thresholds"] = thresholds_of(self.config)
        if self.validation:
            pooled = self.validation["pooled"]
            for key in VALIDATION_KEYS:
                result[key] = pooled[key]
            result["subjects"] = self.validation["subjects"]
            result["ranking_kept"] = self.validation["ranking_kept"]
        # Round-trips through JSON, so a re-run compares equal to a record read from disk.
        return json.loads(json.dumps(result))


def thresholds_of(config: EvalConfig) -> dict:
    """The thresholds the config's verifier reads, and where they came from.

    Args:
        config: A run's settings.

    Returns:
        ``{"margin": ..., "np_threshold": ..., "rule_weights": ..., "from": ...}``, with
        only the thresholds the verifier's rule reads.

    Example:
        >>> from pathlib import Path
        >>> thresholds_of(EvalConfig(index=Path("idx")))
        {'margin': 0.0, 'from': 'built-in defaults'}
    """
    from factscore_local.declarations.verifiers import get_verifier

    # Threshold name -> its key in settings files and output.
    keys = {"margin": "margin", "np": "np_threshold", "weights": "rule_weights"}
    verifier = get_verifier(config.verifier)
    shown = {keys[name]: getattr(config.thresholds, name) for name in verifier.thresholds}
    if shown.get("rule_weights"):  # by feature name, as settings files give them
        shown["rule_weights"] = verifier.weights_by_name(shown["rule_weights"])
    return {**shown, "from": config.thresholds_from}
