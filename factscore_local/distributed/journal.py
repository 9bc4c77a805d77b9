"""The journal of a Ray run's finished rows (``OUT.partial.jsonl``), from which a driver
killed mid-run resumes, and the output file written whole from the rows once all are in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from factscore_local.pipeline.records.inputs import Bio
from factscore_local.pipeline.records.rows import BioRow

JOURNAL_FORMAT = "factscore-local ray journal 1"


def journal_path(out: Path) -> Path:
    """Where the rows of an unfinished Ray run of the output ``out`` are kept."""
    return out.with_name(out.name + ".partial.jsonl")


def read_journal(path: Path, run_key: str, bios: Sequence[Bio]) -> dict[int, BioRow]:
    """The finished rows of an interrupted run of the same settings and input, by
    position; empty when there is none (or it belongs to another run). A last line cut
    short by a kill is ignored."""
    if not path.is_file():
        return {}
    rows: dict[int, BioRow] = {}
    with path.open(encoding="utf-8") as f:
        try:
            header = json.loads(f.readline() or "null")
        except json.JSONDecodeError:
            return {}
        if not isinstance(header, dict) or header.get("format") != JOURNAL_FORMAT:
            return {}
        if header.get("run") != run_key:
            return {}
        for line in f:
            try:
                entry = json.loads(line)
                position, row = int(entry["position"]), BioRow.from_json(entry["row"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue
            if 0 <= position < len(bios) and row.line == bios[position].line:
                rows.setdefault(position, row)
    return rows


class Journal:
    """Appends finished rows (one line each, flushed) to the journal of a run."""

    def __init__(self, path: Path | None, run_key: str, kept: dict[int, BioRow]) -> None:
        self.handle = None
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = path.open("w", encoding="utf-8")
        self.handle.write(json.dumps({"format": JOURNAL_FORMAT, "run": run_key}) + "\n")
        for position in sorted(kept):
            self.add(position, kept[position])
        self.handle.flush()

    def add(self, position: int, row: BioRow) -> None:
        if self.handle is not None:
            entry = {"position": position, "row": row.to_json()}
            self.handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.handle.flush()

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def write_rows(out: Path, rows: Sequence[BioRow]) -> None:
    """The output file, whole, in input order (written aside, then renamed)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row.to_json(), ensure_ascii=False) + "\n")
    tmp.replace(out)
