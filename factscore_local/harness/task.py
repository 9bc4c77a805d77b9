"""The functions ``factscore_local.yaml`` names: load the topics, score a bio, aggregate.

lm-eval calls ``load_topics`` (the task's ``custom_dataset``) with the task's metadata,
which holds ``--metadata`` and the model's arguments; the settings it resolves travel in
every document (``fscore`` column), so ``process_results`` needs no global state beyond
the estimators it keeps loaded. Each bio is scored as ``fscore eval`` scores a line; the
aggregations are FActScore's: means over responding bios, respond ratio over all.

When the topics file is FActScore's labeled JSONL, each line's labeled bio (the ``output``
the humans annotated, not the model under test's) is also scored from its released atomic
facts, and ``error_rate`` and ``f1_micro`` say how far this estimator is from the humans
on these topics (``labels.validation``'s definitions, as fractions).
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from factscore_local.config import build_config
from factscore_local.labels.validation import bio_result, f1_not_supported
from factscore_local.pipeline.estimator import Estimator
from factscore_local.pipeline.records.inputs import Bio, json_objects

log = logging.getLogger(__name__)

# Task settings: a --metadata key, else its environment variable.
SETTING_KEYS = ("fscore_topics", "fscore_index", "fscore_lm", "fscore_settings")
# Loaded estimators by their settings (a run scores every bio with the same ones).
_ESTIMATORS: dict[str, tuple[Estimator, Estimator]] = {}


class TaskSettingsError(ValueError):
    """The task cannot run with the settings it was given; the message says what to set."""


def task_settings(metadata: dict[str, Any]) -> dict[str, Any]:
    """The task's settings from lm-eval's metadata, falling back to the environment.

    Args:
        metadata: The task's metadata (``--metadata``, the YAML's and the model's args).

    Returns:
        ``{"topics": Path, "index": Path, "lm": str | None, "settings": dict}``.

    Raises:
        TaskSettingsError: The topics file or the index is missing or unusable.

    Example:
        >>> task_settings({"fscore_topics": "t.txt", "fscore_index": "idx"})  # doctest: +SKIP
    """
    values = {k: metadata.get(k) or os.environ.get(k.upper()) for k in SETTING_KEYS}
    for key in ("fscore_topics", "fscore_index"):
        if not values[key]:
            raise TaskSettingsError(
                f"the factscore_local task needs {key}: pass --metadata "
                f'\'{{"{key}": "..."}}\' or set {key.upper()}'
            )
    topics, index = Path(values["fscore_topics"]), Path(values["fscore_index"])
    if not topics.is_file():
        raise TaskSettingsError(f"fscore_topics: no such file {topics}")
    if not (index / "manifest.json").is_file():
        raise TaskSettingsError(
            f"fscore_index: {index} is not an index directory (no manifest.json); build one "
            "with 'fscore build-index'"
        )
    extra = values["fscore_settings"] or {}
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except json.JSONDecodeError as exc:
            raise TaskSettingsError(f"fscore_settings is not JSON: {exc}") from exc
    if not isinstance(extra, dict):
        raise TaskSettingsError("fscore_settings must be a JSON object of EvalConfig fields")
    settings = {
        "topics": str(topics.resolve()),
        "index": str(index.resolve()),
        "lm": values["fscore_lm"] or None,
        "settings": extra,
    }
    _estimators(json.dumps(settings, sort_keys=True))  # bad settings fail before generating
    return settings


def read_topics(path: Path) -> list[dict[str, Any]]:
    """The entities of a topics file, with FActScore's labels when the file has them.

    Args:
        path: A text file of one entity per line (blank lines skipped), or a ``.jsonl``
            of objects with ``topic`` (FActScore's files: ``output`` and ``annotations``
            make a line labeled).

    Returns:
        One ``{"topic", "labeled_output", "labels"}`` per entity (``labels``: the JSON
        of the annotations, "" for an unlabeled line).

    Raises:
        TaskSettingsError: A line without a topic, or no topic at all.
    """
    docs = []
    if path.suffix in (".jsonl", ".json"):
        for number, obj in json_objects(path):
            if isinstance(obj, str) or not isinstance(obj.get("topic"), str):
                raise TaskSettingsError(f"{path}, line {number}: no 'topic' string")
            labeled = "annotations" in obj and isinstance(obj.get("output"), str)
            docs.append({
                "topic": obj["topic"].strip(),
                "labeled_output": obj["output"] if labeled else "",
                "labels": json.dumps(obj["annotations"]) if labeled else "",
            })  # fmt: skip
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
        docs = [{"topic": t.strip(), "labeled_output": "", "labels": ""}
                for t in lines if t.strip()]  # fmt: skip
    if not docs:
        raise TaskSettingsError(f"{path} holds no topic")
    return docs


def load_topics(**metadata: Any):
    """lm-eval's ``custom_dataset``: the topics as a test split, checked against the index.

    Args:
        **metadata: The task's metadata (see ``task_settings``).

    Returns:
        A ``datasets.DatasetDict`` with a ``test`` split.

    Raises:
        TaskSettingsError: Bad settings, or a topic the index does not know.
    """
    import datasets

    settings = task_settings(metadata)
    docs = read_topics(Path(settings["topics"]))
    estimator = _estimators(json.dumps(settings, sort_keys=True))[0]
    unknown = []
    for topic in dict.fromkeys(d["topic"] for d in docs):
        resolution = estimator.ks.resolve_title(topic)
        if resolution.title is None:
            hint = ", ".join(resolution.suggestions[:3])
            unknown.append(f"{topic!r}" + (f" (did you mean: {hint}?)" if hint else ""))
    if unknown:
        raise TaskSettingsError(f"topics not in {settings['index']}: " + "; ".join(unknown))
    encoded = json.dumps(settings, sort_keys=True)
    rows = [{**doc, "fscore": encoded} for doc in docs]
    return datasets.DatasetDict({"test": datasets.Dataset.from_list(rows)})


def _estimators(encoded: str) -> tuple[Estimator, Estimator]:
    """(the estimator of generated bios, the one of labeled bios), loaded once."""
    if encoded not in _ESTIMATORS:
        settings = json.loads(encoded)
        extra = dict(settings["settings"])
        validate = bool(extra.pop("validate", True))
        index = Path(settings["index"])
        options = {"cache": index / "eval-cache.db", **extra}
        options.update(index=index, lm=settings["lm"], validate=False)
        try:
            config = build_config(options)
        except ValueError as exc:
            raise TaskSettingsError(f"fscore_settings: {exc}") from exc
        generated = Estimator(config)
        # Labeled bios: FActScore's released atomic facts, the human facts verified too.
        labeled = replace(config, use_atomic_facts=True, validate=validate)
        _ESTIMATORS[encoded] = (generated, Estimator(labeled, generated.components))
    return _ESTIMATORS[encoded]


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    """One bio's per-sample values (lm-eval's ``process_results``).

    Args:
        doc: A document of ``load_topics``.
        results: The model under test's generation (one string).

    Returns:
        ``respond_ratio`` always; ``factscore``, ``factscore_init`` and
        ``facts_per_response`` (None when the bio does not respond); ``error_rate`` and
        ``f1_micro`` items when the document is labeled.

    Raises:
        RuntimeError: The bio could not be scored (the estimator's reason).
    """
    generated, labeled = _estimators(doc["fscore"])
    bio = Bio(1, topic=doc["topic"], output=results[0], source="lm-eval")
    row = generated.run([bio], None, progress=False)[0]
    if not row.ok:
        raise RuntimeError(f"FActScore of the bio of {doc['topic']!r}: {row.error}")
    log.info("FActScore of %r: %s over %d facts", doc["topic"], row.score, row.n_facts)
    out: dict[str, Any] = {
        "factscore": row.score if row.responded else None,
        "factscore_init": row.init_score if row.responded else None,
        "respond_ratio": float(row.responded),
        "facts_per_response": row.n_facts if row.responded else None,
    }
    if doc["labels"] and labeled.config.validate:
        human_bio = Bio(1, topic=doc["topic"], output=doc["labeled_output"],
                        annotations=json.loads(doc["labels"]), has_annotations_key=True,
                        source="lm-eval-labels")  # fmt: skip
        human_row = labeled.run([human_bio], None, progress=False)[0]
        result = bio_result(human_row)
        if result is None:
            raise RuntimeError(f"labels of {doc['topic']!r}: {human_row.error}")
        out["error_rate"] = {"human": result.human, "estimate": result.estimate}
        out["f1_micro"] = [[label, supported] for label, supported in result.facts]
    return out


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def mean_responding(items: list[float | None]) -> float:
    """Mean over the bios that respond (FActScore's and facts-per-response aggregation).

    Args:
        items: One value per bio, None where it does not respond.

    Returns:
        The mean of the values, NaN when no bio responds.
    """
    return _mean([x for x in items if x is not None])


def error_rate(items: list[dict[str, float | None]]) -> float:
    """|estimated - human| FActScore over the labeled bios where both respond (a fraction).

    Args:
        items: ``{"human", "estimate"}`` per labeled bio (None: does not respond).

    Returns:
        The error rate, NaN when no bio responds on both sides.
    """
    both = [i for i in items if i["human"] is not None and i["estimate"] is not None]
    if not both:
        return math.nan
    return abs(_mean([i["estimate"] for i in both]) - _mean([i["human"] for i in both]))


def f1_micro(items: list[list[list]]) -> float:
    """Micro-F1 on not-supported human facts, pooled over the labeled bios (IR as NS).

    Args:
        items: Per labeled bio, ``[human label, estimator says supported]`` per fact.

    Returns:
        F1 as a fraction.
    """
    pairs = [(str(label), bool(supported)) for item in items for label, supported in item]
    return f1_not_supported(pairs, ir_as_ns=True).f1
