"""The numbers behind ``fscore report``, from ``fscore eval --out`` rows.

- per subject LM: the summary (score, score without the length penalty, respond ratio,
  facts per response) and, with human labels, the validation (human score, ER, F1, 95%
  intervals);
- FActScore per entity-frequency class (the paper's Figure 2, left): mean over the
  responding bios of each class;
- the share of supported facts by the position of a fact in its generation, in deciles
  (the paper's Figure 2, right: later facts are less often supported), with the number of
  facts behind each share.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from factscore_local.labels.validation import subject_name, validate_rows
from factscore_local.pipeline.decision.scoring import summarize
from factscore_local.pipeline.records.rows import BioRow
from factscore_local.pipeline.records.run_record import read_record, record_path
from factscore_local.report.generations import generation_texts

# FActScore's frequency classes, rarest first; other class names follow in sorted order.
FREQUENCY_ORDER = ("very rare", "rare", "medium", "freq", "very freq")


class ReportInputError(ValueError):
    """An output file that cannot be reported."""


@dataclass
class Subject:
    """One subject LM's rows, the run records of their files and their generations."""

    name: str
    rows: list[BioRow]
    records: list[dict] = field(default_factory=list)  # run records of its files, if any
    generations: dict[tuple[str, int], str] = field(default_factory=dict)  # (source, line)
    generation_notes: list[str] = field(default_factory=list)  # why some are not shown

    def generation(self, row: BioRow) -> str | None:
        return self.generations.get((row.source, row.line))

    @property
    def gamma(self) -> float | None:
        """The length penalty's gamma the run used: its record's, else read back from a
        penalized row (score = init_score * exp(1 - gamma / n)); None when neither says."""
        recorded = {r["settings"].get("gamma") for r in self.records} - {None}
        if len(recorded) == 1:
            return float(recorded.pop())
        for row in self.rows:
            if row.ok and row.init_score and row.score is not None and row.score < row.init_score:
                return round(row.n_facts * (1 - math.log(row.score / row.init_score)), 6)
        return None


def read_rows(path: Path) -> list[BioRow]:
    if not path.is_file():
        raise ReportInputError(f"no eval output at {path}")
    rows = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(BioRow.from_json(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise ReportInputError(
                f"{path}:{number} is not a line of 'fscore eval --out' ({exc})"
            ) from exc
    if not rows:
        raise ReportInputError(f"{path} holds no rows")
    return rows


def load_subjects(paths: list[Path], inputs: Iterable[Path] = ()) -> list[Subject]:
    """Rows grouped by subject LM (the input file each row came from), in first-seen order;
    each subject keeps the run records of the files it came from, and the generations read
    back from the inputs (those the records name, else ``inputs``, else the rows' source)."""
    subjects: dict[str, Subject] = {}
    for path in paths:
        record_file = record_path(path)
        record = read_record(record_file) if record_file.is_file() else None
        for row in read_rows(path):
            name = subject_name(row.source) or path.stem
            subject = subjects.setdefault(name, Subject(name, []))
            subject.rows.append(row)
            if record is not None and record not in subject.records:
                subject.records.append(record)
    for subject in subjects.values():
        subject.generations, subject.generation_notes = generation_texts(
            subject.rows, subject.records, inputs
        )
    return list(subjects.values())


def read_categories(path: Path) -> dict[str, str]:
    """Topic -> frequency class, from a JSON object or from JSONL lines with ``topic`` and
    ``cat`` ([class, ...]) or ``category`` (FActScore's input files work as they are)."""
    text = path.read_text("utf-8")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if (
        isinstance(whole, dict)
        and "topic" not in whole
        and all(isinstance(v, str) for v in whole.values())
    ):
        return dict(whole)
    out = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportInputError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        value = obj.get("category", obj.get("cat")) if isinstance(obj, dict) else None
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(obj, dict) and isinstance(obj.get("topic"), str) and isinstance(value, str):
            out[obj["topic"]] = value
    if not out:
        raise ReportInputError(f"{path} maps no topic to a class")
    return out


def subject_summary(rows: list[BioRow]) -> dict:
    """FActScore's summary, and the validation against human labels where rows have them
    (None otherwise)."""
    summary = summarize(rows)
    validation = validate_rows(rows)
    if validation:
        name = next(iter(validation["subjects"]))
        summary["validation"] = validation["subjects"][name]
    return summary


def class_order(names: set[str]) -> list[str]:
    known = [c for c in FREQUENCY_ORDER if c in names]
    return known + sorted(names - set(known))


def score_by_category(rows: list[BioRow], categories: dict[str, str] | None = None) -> dict:
    """Class -> {estimated, human, n}: mean FActScore of the responding bios of each class
    (human: the labels' score of the same bios, where labeled)."""
    groups: dict[str, list[BioRow]] = {}
    for row in rows:
        cls = (categories or {}).get(row.topic) or row.category
        if row.ok and row.responded and cls:
            groups.setdefault(cls, []).append(row)
    out = {}
    for cls in class_order(set(groups)):
        members = groups[cls]
        human = [r.human.score for r in members if r.human and r.human.score is not None]
        out[cls] = {
            "estimated": 100 * sum(r.score for r in members) / len(members),
            "human": 100 * sum(human) / len(human) if human else None,
            "n": len(members),
        }
    return out


def support_by_position(rows: list[BioRow], bins: int = 10) -> dict:
    """Share (%) of supported facts by the fact's relative position in its generation, in
    ``bins`` equal slices (fact i of n sits at (i + 0.5) / n), and the facts in each slice
    (``totals``). Human: the share of human atomic facts labeled S, placed the same way
    within their bio."""

    def counts(groups) -> tuple[list[int], list[int]]:
        hits, totals = [0] * bins, [0] * bins
        for flags in groups:
            n = len(flags)
            for i, flag in enumerate(flags):
                b = min(bins - 1, int((i + 0.5) / n * bins))
                hits[b] += flag
                totals[b] += 1
        return hits, totals

    def shares(hits: list[int], totals: list[int]) -> list[float | None]:
        return [100 * h / t if t else None for h, t in zip(hits, totals, strict=True)]

    ok = [r for r in rows if r.ok and r.decisions]
    labeled = [r for r in rows if r.ok and r.human and r.human.facts]
    hits, totals = counts([d.is_supported for d in r.decisions] for r in ok)
    out = {
        "estimated": shares(hits, totals),
        "totals": totals,
        "n_facts": sum(totals),
        "n_bios": len(ok),
        "human": None,
    }
    if labeled:
        human_hits, human_totals = counts([f.label == "S" for f in r.human.facts] for r in labeled)
        out |= {"human": shares(human_hits, human_totals), "human_totals": human_totals,
                "human_n_bios": len(labeled)}  # fmt: skip
    return out
