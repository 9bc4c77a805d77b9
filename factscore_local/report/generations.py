"""The generation text behind each row of ``fscore eval --out``, read back from its input.

Rows keep the input line they came from (``source``, ``line``) but not the text, so the
report reads it from the input file: the one the run record names (when its sha256 still
matches), a file given with ``fscore report --input``, or the row's ``source`` path as it
stands. A line is used only when its topic is the row's, so a different file of the same
name never puts another bio's text under a row.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from factscore_local.pipeline.records.inputs import InputError, json_objects
from factscore_local.pipeline.records.rows import BioRow
from factscore_local.runtime.files import file_sha256

Key = tuple[str, int]  # (the row's source, its line)


def _outputs(path: Path) -> dict[int, tuple[str, str]]:
    """Line -> (topic, output) of an eval input (the numbering ``fscore eval`` gives)."""
    out = {}
    try:
        for number, obj in json_objects(path):
            if isinstance(obj, dict) and isinstance(obj.get("output"), str):
                topic = obj.get("topic")
                out[number] = (topic if isinstance(topic, str) else "", obj["output"])
    except (InputError, OSError):
        return {}
    return out


def _candidates(source: str, records: list[dict], given: list[Path]) -> tuple[Path | None, str]:
    """The file to read a source's generations from, or None and why not."""
    for record in records:
        for item in record.get("inputs", ()):
            if source not in (item.get("given"), item.get("path")):
                continue
            path = Path(item["path"])
            if not path.is_file():
                break  # the recorded file is gone: a given file or the source may still do
            if item.get("sha256") and file_sha256(path) != item["sha256"]:
                return None, f"{path} has changed since the run"
            return path, ""
    name = Path(source).name
    for path in given:
        if path.resolve() == Path(source).resolve() or path.name == name:
            return path, ""
    if Path(source).is_file():
        return Path(source), ""
    return None, f"no input file at {source} (give it with --input)"


def generation_texts(
    rows: Iterable[BioRow], records: list[dict], given: Iterable[Path] = ()
) -> tuple[dict[Key, str], list[str]]:
    """The generation of each row that can be found, and one note per source that cannot.

    Args:
        rows: the rows of one subject LM.
        records: the run records of the files the rows came from.
        given: input files named on the command line (``--input``), tried after the
            recorded inputs.

    Returns:
        ``{(source, line): text}`` and the notes, e.g. ``["data/x.jsonl has changed since
        the run"]``.
    """
    given = [Path(p) for p in given]
    texts: dict[Key, str] = {}
    notes: list[str] = []
    by_source: dict[str, list[BioRow]] = {}
    for row in rows:
        by_source.setdefault(row.source, []).append(row)
    for source, members in by_source.items():
        path, why = _candidates(source, records, given)
        if path is None:
            notes.append(why)
            continue
        lines = _outputs(path)
        mismatched = 0
        for row in members:
            found = lines.get(row.line)
            if found is not None and found[0] == row.topic:
                texts[(source, row.line)] = found[1]
            elif row.ok:
                mismatched += 1
        if mismatched:
            notes.append(f"{mismatched} line(s) of {path} do not hold their row's topic")
    return texts, notes
